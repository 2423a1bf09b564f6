import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor, within } from "@testing-library/svelte";
import type { SearchHit } from "../lib/api";
import Sidebar from "./Sidebar.svelte";
import { snippetParts } from "./ConversationSearch.svelte";
import { refused } from "../lib/testing/errors";

afterEach(cleanup);

const conversations = [
  { id: "a1", title: "Weather in Paris", createdAt: 1, updatedAt: 3 },
  { id: "b2", title: "Release notes", createdAt: 1, updatedAt: 2 },
];

/** A promise with its resolve/reject, for answering at a chosen moment. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

function setup(over: Record<string, unknown> = {}) {
  const props = {
    servers: [],
    info: null,
    onNewChat: vi.fn(),
    conversations,
    currentId: null as string | null,
    onOpen: vi.fn(),
    onRename: vi.fn(async (_id: string, _title: string) => {}),
    onDelete: vi.fn(async (_id: string) => {}),
    search: vi.fn(async (_query: string): Promise<SearchHit[]> => []),
    onOpenSettings: vi.fn(),
    ...over,
  };
  return { props, ...render(Sidebar, props) };
}

const hit = (over: Partial<SearchHit>): SearchHit => ({
  conversationId: "a1",
  conversationTitle: "Weather in Paris",
  messageId: 7,
  role: "assistant",
  snippet: "…it will \u0002rain\u0003 in Paris…",
  rank: -1,
  ...over,
});

describe("Sidebar", () => {
  it("says there are no conversations only once the list has been read", async () => {
    const { queryByText, rerender } = setup({ conversations: [], listed: false });
    expect(queryByText("No conversations yet.")).toBeNull();
    await rerender({ listed: true });
    expect(queryByText("No conversations yet.")).not.toBeNull();
  });

  it("offers older conversations when more are stored, and asks for them", async () => {
    const onLoadMore = vi.fn();
    const { getByTestId, queryByTestId, rerender } = setup({ moreConversations: true, onLoadMore });
    await fireEvent.click(getByTestId("conversations-more"));
    expect(onLoadMore).toHaveBeenCalledOnce();
    await rerender({ moreConversations: false });
    expect(queryByTestId("conversations-more")).toBeNull();
  });

  it("lists conversations, marks the open one and opens another on click", async () => {
    const { props, getAllByTestId } = setup({ currentId: "b2" });
    const items = getAllByTestId("conversation");
    expect(items.map((i) => i.textContent)).toEqual(["Weather in Paris", "Release notes"]);
    expect(items.map((i) => i.getAttribute("aria-current"))).toEqual([null, "true"]);
    expect(items.map((i) => i.dataset.conversationId)).toEqual(["a1", "b2"]);
    await fireEvent.click(items[0]);
    expect(props.onOpen).toHaveBeenCalledWith("a1");
  });

  it("shows the model, or why there is none as a warning with the way to set one up", async () => {
    const ok = setup({ model: { provider: "anthropic", baseUrl: null, model: "claude-test", keySource: "keyring", error: null } });
    const line = ok.getByTestId("model-info");
    expect(line.textContent?.trim()).toBe("anthropic · claude-test");
    expect(line.classList.contains("warning")).toBe(false);
    cleanup();

    expect(ok.queryByTestId("model-setup")).toBeNull();
    cleanup();

    const bad = setup({ model: { provider: null, baseUrl: null, model: null, keySource: null, error: "no API key for openai" } });
    const warning = bad.getByTestId("model-info");
    expect(warning.textContent?.trim()).toBe("no API key for openai");
    expect(warning.classList.contains("warning")).toBe(true);
    // The way out: Settings → Model, and the tools that need no model.
    expect(bad.getByTestId("model-tools-hint").textContent).toContain("Tools run without a model");
    await fireEvent.click(bad.getByTestId("model-setup"));
    expect(bad.props.onOpenSettings).toHaveBeenCalled();
  });

  it("gives every control a name a screen reader can say", () => {
    const { container, getByTestId, getAllByTestId } = setup({ currentId: "a1" });
    for (const button of container.querySelectorAll("button")) {
      const name = button.getAttribute("aria-label") ?? button.textContent?.trim();
      expect(name, button.outerHTML).toBeTruthy();
    }
    expect(getAllByTestId("conversation-rename").map((b) => b.getAttribute("aria-label"))).toEqual([
      "Rename “Weather in Paris”",
      "Rename “Release notes”",
    ]);
    expect(getAllByTestId("conversation-delete")[1].getAttribute("aria-label")).toBe("Delete “Release notes”");
    const search = getByTestId("conversation-search") as HTMLInputElement;
    expect(container.querySelector(`label[for="${search.id}"]`)?.textContent).toBe("Search conversations");
  });
});

describe("Sidebar: search", () => {
  it("asks the store after typing and shows each hit with its conversation's title and snippet", async () => {
    const search = vi.fn(async (_q: string) => [
      hit({}),
      hit({ conversationId: "b2", conversationTitle: "Rain gear", messageId: null, role: null, snippet: "\u0002Rain\u0003 gear" }),
    ]);
    const { getByTestId, getAllByTestId, queryAllByTestId, props } = setup({ search });
    await fireEvent.input(getByTestId("conversation-search"), { target: { value: " rain " } });
    const hits = await waitFor(() => {
      const found = getAllByTestId("search-hit");
      expect(found).toHaveLength(2);
      return found;
    });
    expect(search).toHaveBeenCalledExactlyOnceWith("rain");
    // The list gives way to the hits while there is a query.
    expect(queryAllByTestId("conversation")).toEqual([]);
    expect(hits[0].querySelector(".hit-title")?.textContent).toBe("Weather in Paris");
    expect(hits[0].querySelector(".hit-snippet")?.textContent?.replace(/\s+/g, " ")).toBe("Reply: …it will rain in Paris…");
    expect([...hits[0].querySelectorAll("mark")].map((m) => m.textContent)).toEqual(["rain"]);
    expect(within(hits[1]).getByText("Rain").tagName).toBe("MARK");
    await fireEvent.click(hits[1]);
    expect(props.onOpen).toHaveBeenCalledWith("b2");
  });

  it("says when nothing matches, and Esc clears the search and brings the list back", async () => {
    const { getByTestId, queryAllByTestId, getAllByTestId } = setup();
    const box = getByTestId("conversation-search") as HTMLInputElement;
    await fireEvent.input(box, { target: { value: "zebra" } });
    await waitFor(() => expect(getByTestId("search-empty").textContent).toBe("No conversation mentions “zebra”."));
    const esc = new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true });
    box.dispatchEvent(esc);
    expect(esc.defaultPrevented).toBe(true);
    await waitFor(() => expect(getAllByTestId("conversation")).toHaveLength(2));
    expect(box.value).toBe("");
    expect(queryAllByTestId("search-empty")).toEqual([]);
  });

  it("says which part to fetch when the pointer or the keyboard reaches the Settings, Tools or Workbench button", async () => {
    const onWarm = vi.fn();
    const onOpenSettings = vi.fn();
    const { getByTestId } = setup({ onWarm, onOpenSettings });
    expect(onWarm).not.toHaveBeenCalled();
    await fireEvent.pointerEnter(getByTestId("settings-button"));
    expect(onWarm).toHaveBeenLastCalledWith("settings");
    await fireEvent.focus(getByTestId("workbench-button"));
    expect(onWarm).toHaveBeenLastCalledWith("workbench");
    await fireEvent.pointerEnter(getByTestId("tools-button"));
    expect(onWarm).toHaveBeenLastCalledWith("workbench");
    expect(onOpenSettings).not.toHaveBeenCalled();
  });

  it("is a search box to a screen reader, and its clear button empties it and gives the box the keyboard", async () => {
    const { getByTestId, queryByTestId, getAllByTestId, getByRole } = setup();
    const box = getByTestId("conversation-search") as HTMLInputElement;
    expect(getByRole("searchbox", { name: "Search conversations" })).toBe(box);
    // A plain text field (WebKitGTK's own search field costs the page its SVG code).
    expect(box.type).toBe("text");
    expect(queryByTestId("conversation-search-clear")).toBeNull();
    await fireEvent.input(box, { target: { value: "zebra" } });
    const clear = getByTestId("conversation-search-clear");
    expect(clear.getAttribute("aria-label")).toBe("Clear the search");
    await fireEvent.click(clear);
    expect(box.value).toBe("");
    expect(document.activeElement).toBe(box);
    await waitFor(() => expect(getAllByTestId("conversation")).toHaveLength(2));
    expect(queryByTestId("conversation-search-clear")).toBeNull();
  });

  it("shows the answer to the latest query, not a slower one to an earlier query", async () => {
    const answers = { ra: deferred<SearchHit[]>(), rain: deferred<SearchHit[]>() };
    const search = vi.fn((q: string) => answers[q as keyof typeof answers].promise);
    const { getByTestId, getAllByTestId } = setup({ search });
    const box = getByTestId("conversation-search");
    await fireEvent.input(box, { target: { value: "ra" } });
    await waitFor(() => expect(search).toHaveBeenCalledWith("ra"));
    await fireEvent.input(box, { target: { value: "rain" } });
    await waitFor(() => expect(search).toHaveBeenCalledWith("rain"));
    answers.rain.resolve([hit({ conversationTitle: "From rain" })]);
    await waitFor(() => expect(getAllByTestId("search-hit")).toHaveLength(1));
    answers.ra.resolve([hit({ conversationTitle: "From ra" }), hit({ conversationId: "b2" })]);
    await new Promise((r) => setTimeout(r, 0));
    expect(getAllByTestId("search-hit").map((h) => h.querySelector(".hit-title")?.textContent)).toEqual(["From rain"]);
  });

  it("says why the search failed", async () => {
    const { getByTestId } = setup({ search: vi.fn(async () => Promise.reject(refused("store", "database is locked"))) });
    await fireEvent.input(getByTestId("conversation-search"), { target: { value: "x" } });
    await waitFor(() => expect(getByTestId("search-error").textContent).toBe("Search failed: database is locked"));
  });
});

describe("Sidebar: rename", () => {
  it("edits the title in place and saves the trimmed title", async () => {
    let resolveRename!: () => void;
    const onRename = vi.fn((_id: string, _title: string) => new Promise<void>((r) => (resolveRename = r)));
    const { getAllByTestId, getByTestId, queryByTestId } = setup({ onRename });
    await fireEvent.click(getAllByTestId("conversation-rename")[1]);
    const input = getByTestId("conversation-title-input") as HTMLInputElement;
    expect(input.value).toBe("Release notes");
    expect(document.activeElement).toBe(input);
    expect(input.labels?.[0]?.textContent).toBe("New title for “Release notes”");
    await fireEvent.input(input, { target: { value: "  Release notes 2.0 " } });
    await fireEvent.submit(input.form!);
    expect(onRename).toHaveBeenCalledExactlyOnceWith("b2", "Release notes 2.0");
    resolveRename();
    await waitFor(() => expect(queryByTestId("conversation-title-input")).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(getAllByTestId("conversation-rename")[1]));
  });

  it("refuses an empty title and says why", async () => {
    const { getAllByTestId, getByTestId, props } = setup();
    await fireEvent.click(getAllByTestId("conversation-rename")[0]);
    const input = getByTestId("conversation-title-input") as HTMLInputElement;
    await fireEvent.input(input, { target: { value: "   " } });
    await fireEvent.submit(input.form!);
    const error = getByTestId("conversation-error");
    expect(error.textContent).toBe("A conversation needs a title.");
    expect(error.getAttribute("role")).toBe("alert");
    expect(input.getAttribute("aria-invalid")).toBe("true");
    expect(input.getAttribute("aria-describedby")).toBe(error.id);
    expect(props.onRename).not.toHaveBeenCalled();
  });

  it("Esc cancels without saving", async () => {
    const { getAllByTestId, getByTestId, queryByTestId, props } = setup();
    await fireEvent.click(getAllByTestId("conversation-rename")[0]);
    const input = getByTestId("conversation-title-input");
    await fireEvent.input(input, { target: { value: "Something else" } });
    await fireEvent.keyDown(input, { key: "Escape" });
    expect(queryByTestId("conversation-title-input")).toBeNull();
    expect(props.onRename).not.toHaveBeenCalled();
    expect(getAllByTestId("conversation")[0].textContent).toBe("Weather in Paris");
  });

  it("keeps the box open with the store's reason when the rename is refused", async () => {
    const onRename = vi.fn(async () => Promise.reject(refused("not_found", "no conversation a1")));
    const { getAllByTestId, getByTestId } = setup({ onRename });
    await fireEvent.click(getAllByTestId("conversation-rename")[0]);
    const input = getByTestId("conversation-title-input") as HTMLInputElement;
    await fireEvent.input(input, { target: { value: "New" } });
    await fireEvent.submit(input.form!);
    await waitFor(() => expect(getByTestId("conversation-error").textContent).toBe("Could not rename: no conversation a1"));
    expect(getByTestId("conversation-title-input")).toBe(input);
  });
});

describe("Sidebar: export", () => {
  it("exports as Markdown or JSON and says where the file went; a cancelled save says nothing", async () => {
    const exportConversation = vi.fn(async (_id: string, format: string) => (format === "json" ? null : "/home/me/Weather in Paris.md"));
    const { getAllByTestId, getByTestId, queryByTestId } = setup({ exportConversation });
    await fireEvent.click(getAllByTestId("conversation-export")[0]);
    expect(document.activeElement).toBe(getByTestId("conversation-export-markdown"));
    await fireEvent.click(getByTestId("conversation-export-markdown"));
    expect(exportConversation).toHaveBeenCalledExactlyOnceWith("a1", "markdown");
    await waitFor(() => expect(getByTestId("conversation-note").textContent).toBe("Exported to /home/me/Weather in Paris.md"));
    expect(queryByTestId("conversation-export-json")).toBeNull();
    await waitFor(() => expect(document.activeElement).toBe(getAllByTestId("conversation-export")[0]));

    await fireEvent.click(getAllByTestId("conversation-export")[0]);
    await fireEvent.click(getByTestId("conversation-export-json"));
    expect(exportConversation).toHaveBeenLastCalledWith("a1", "json");
    await waitFor(() => expect(queryByTestId("conversation-export-json")).toBeNull());
    expect(queryByTestId("conversation-note")).toBeNull();
  });

  it("says why an export failed, and Esc closes the choice", async () => {
    const exportConversation = vi.fn(async () => Promise.reject(refused("io", "cannot write /ro/x.md: read-only file system")));
    const { getAllByTestId, getByTestId, queryByTestId } = setup({ exportConversation });
    await fireEvent.click(getAllByTestId("conversation-export")[1]);
    await fireEvent.keyDown(getByTestId("conversation-export-markdown"), { key: "Escape" });
    expect(queryByTestId("conversation-export-markdown")).toBeNull();
    await fireEvent.click(getAllByTestId("conversation-export")[1]);
    await fireEvent.click(getByTestId("conversation-export-markdown"));
    await waitFor(() =>
      expect(getByTestId("conversation-error").textContent).toBe("Could not export: cannot write /ro/x.md: read-only file system"),
    );
  });
});

describe("Sidebar: delete", () => {
  it("asks first, and deletes only when confirmed", async () => {
    const { getAllByTestId, getByTestId, queryByTestId, props } = setup();
    await fireEvent.click(getAllByTestId("conversation-delete")[0]);
    expect(props.onDelete).not.toHaveBeenCalled();
    expect(getByTestId("conversation-delete-confirm").closest("[role=group]")?.textContent).toContain(
      "Delete “Weather in Paris” and everything in it?",
    );
    // Focus starts on the safe choice.
    expect(document.activeElement).toBe(getByTestId("conversation-delete-cancel"));
    await fireEvent.click(getByTestId("conversation-delete-cancel"));
    expect(queryByTestId("conversation-delete-confirm")).toBeNull();
    expect(props.onDelete).not.toHaveBeenCalled();

    await fireEvent.click(getAllByTestId("conversation-delete")[1]);
    await fireEvent.click(getByTestId("conversation-delete-confirm"));
    expect(props.onDelete).toHaveBeenCalledExactlyOnceWith("b2");
    await waitFor(() => expect(document.activeElement).toBe(getByTestId("conversation-search")));
  });

  it("Esc closes the confirmation", async () => {
    const { getAllByTestId, getByTestId, queryByTestId, props } = setup();
    await fireEvent.click(getAllByTestId("conversation-delete")[0]);
    await fireEvent.keyDown(getByTestId("conversation-delete-cancel"), { key: "Escape" });
    expect(queryByTestId("conversation-delete-confirm")).toBeNull();
    expect(props.onDelete).not.toHaveBeenCalled();
  });

  it("says why a conversation could not be deleted", async () => {
    const { getAllByTestId, getByTestId } = setup({ onDelete: vi.fn(async () => Promise.reject(refused("store", "disk I/O error"))) });
    await fireEvent.click(getAllByTestId("conversation-delete")[0]);
    await fireEvent.click(getByTestId("conversation-delete-confirm"));
    await waitFor(() => expect(getByTestId("conversation-error").textContent).toBe("Could not delete: disk I/O error"));
    expect(getAllByTestId("conversation")).toHaveLength(2);
  });
});

describe("snippetParts", () => {
  const m = (t: string) => `\u0002${t}\u0003`;

  it("marks what the store marked, and keeps the text's own brackets", () => {
    expect(snippetParts(`…see ${m("rain")} in [1] of ${m("Rainfall")}…`)).toEqual([
      { text: "…see ", match: false },
      { text: "rain", match: true },
      { text: " in [1] of ", match: false },
      { text: "Rainfall", match: true },
      { text: "…", match: false },
    ]);
    expect(snippetParts("[unclosed and ]odd[")).toEqual([{ text: "[unclosed and ]odd[", match: false }]);
  });

  it("reads Markdown as plain text", () => {
    const text = (s: string) => snippetParts(s).map((p) => (p.match ? `<${p.text}>` : p.text)).join("");
    expect(text(`## Plan\n- **${m("Deploy")}** on *Friday*, see [the ${m("docs")}](https://x.test/a) and \`make\``)).toBe(
      "Plan <Deploy> on Friday, see the <docs> and make",
    );
    expect(text(`> quoted ${m("rain")}_check stays_snake_case`)).toBe("quoted <rain>_check stays_snake_case");
    expect(text("1. first\n2. ~~second~~ ![chart](c.png)")).toBe("first second chart");
  });
});
