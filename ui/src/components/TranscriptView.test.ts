import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/svelte";
import { flushSync } from "svelte";
import type { ScrollPosition, TurnEvent } from "../lib/api";
import { ev, record, textBlock } from "../lib/testing/turns";
import { Transcript } from "../lib/transcript.svelte";
import { views } from "../lib/views.svelte";
import { loadHighlighter } from "../lib/markdown";
import TranscriptView from "./TranscriptView.svelte";
import { refused } from "../lib/testing/errors";

const answerApproval = vi.fn(async (_callId: string, _decision: string) => {});
const reopenViews = vi.fn(async (_conversationId: string, _callId?: string) => {});
const teardownView = vi.fn(async (_viewId: string) => {});
const closeView = vi.fn(async (_viewId: string) => {});
const clipboardWriteRequested = vi.fn(async () => {});
const keepScrollPosition = vi.fn(async (_conversationId: string, _position: ScrollPosition | null) => {});
vi.mock("../lib/api", async (original) => ({
  ...(await original<typeof import("../lib/api")>()),
  api: {
    answerApproval: (callId: string, decision: string) => answerApproval(callId, decision),
    reopenViews: (conversationId: string, callId?: string) => reopenViews(conversationId, callId),
    teardownView: (viewId: string) => teardownView(viewId),
    closeView: (viewId: string) => closeView(viewId),
    setViewContainer: async () => {},
    setViewDisplayMode: async () => {},
    clipboardWriteRequested: () => clipboardWriteRequested(),
    keepScrollPosition: (conversationId: string, position: ScrollPosition | null) => keepScrollPosition(conversationId, position),
  },
}));

afterEach(() => {
  cleanup();
  views.reset();
});
beforeEach(() => {
  for (const f of [answerApproval, reopenViews, teardownView, closeView, clipboardWriteRequested, keepScrollPosition]) f.mockReset();
});

function show(events: TurnEvent[], transcript = new Transcript(), conversationId: string | null = null) {
  for (const e of events) transcript.apply(e);
  const view = render(TranscriptView, { transcript, servers: [], conversationId });
  return { ...view, transcript };
}

const args = { city: "Paris" };
const model = { content: [textBlock("Paris: 18°C")], isError: false };
const view = { content: [textBlock("Paris: 18°C")], structuredContent: { hourly: [17, 18] } };
const awaiting: TurnEvent[] = [
  ev.user("Weather?"),
  ev.step(1),
  ev.text("Checking.\nOne moment."),
  ev.assistant([{ type: "text", text: "Checking.\nOne moment." }, { type: "tool_use", id: "c1", name: "demo__forecast", arguments: args }]),
  ev.callStarted("c1", "demo__forecast", "demo", "forecast", args, "ui://demo/forecast.html"),
  ev.approvalRequested("c1", "demo", "forecast", args),
];

describe("TranscriptView", () => {
  it("shows the welcome screen when there is nothing yet", () => {
    const { container, queryAllByTestId } = render(TranscriptView, { transcript: new Transcript(), servers: [] });
    expect(container.querySelector(".welcome h1")?.textContent).toBe("Porthole");
    expect(queryAllByTestId("message")).toHaveLength(0);
  });

  it("says it is busy while the conversation is being left (its views torn down) and while one is read", () => {
    const transcript = new Transcript();
    transcript.apply(ev.user("Hi"));
    const { getByTestId, rerender } = render(TranscriptView, { transcript, servers: [] });
    const log = getByTestId("transcript");
    expect(log.getAttribute("aria-busy")).toBe("false");
    rerender({ transcript, servers: [], leaving: true });
    flushSync();
    expect(log.getAttribute("aria-busy")).toBe("true");
    // The conversation stays on screen meanwhile.
    expect(getByTestId("message").textContent).toBe("Hi");
    rerender({ transcript, servers: [], leaving: false, loading: true });
    flushSync();
    expect(log.getAttribute("aria-busy")).toBe("true");
  });

  it("renders messages as plain text with their roles", () => {
    const { getAllByTestId, container } = show([...awaiting.slice(0, 2), ev.text("<b>not bold</b>\nline two")]);
    const messages = getAllByTestId("message");
    expect(messages.map((m) => [m.dataset.role, m.textContent])).toEqual([
      ["user", "Weather?"],
      ["assistant", "<b>not bold</b>\nline two"],
    ]);
    expect(container.querySelector("b")).toBeNull();
    expect(messages[1].getAttribute("aria-busy")).toBe("true");
  });

  it("renders a tool call awaiting approval with its three answers, which reach the back end", async () => {
    const { getByTestId } = show(awaiting);
    const card = getByTestId("tool-call");
    expect(card.dataset.toolName).toBe("forecast");
    expect(card.dataset.status).toBe("awaiting-approval");
    expect(card.textContent).toContain("demo");
    expect(getByTestId("tool-arguments").textContent).toBe(JSON.stringify(args, null, 2));
    expect(getByTestId("approve-once").textContent?.trim()).toBe("Allow once");
    expect(getByTestId("approve-always").textContent?.trim()).toBe("Always allow this tool");
    expect(getByTestId("deny").textContent?.trim()).toBe("Deny");

    await fireEvent.click(getByTestId("approve-always"));
    expect(answerApproval).toHaveBeenCalledWith("c1", "allow_always");
    await fireEvent.click(getByTestId("deny"));
    expect(answerApproval).toHaveBeenLastCalledWith("c1", "deny");
    await fireEvent.click(getByTestId("approve-once"));
    expect(answerApproval).toHaveBeenLastCalledWith("c1", "allow_once");
  });

  it("says so when an answer is refused", async () => {
    answerApproval.mockRejectedValueOnce(refused("not_found", "that tool call is no longer waiting for a decision"));
    const { getByTestId, findByRole } = show(awaiting);
    await fireEvent.click(getByTestId("approve-once"));
    const alert = await findByRole("alert");
    expect(alert.textContent).toContain("no longer waiting");
  });

  it("follows the call through progress to both facings of its result", () => {
    const { getByTestId, queryByTestId, transcript, container } = show(awaiting);
    transcript.apply(ev.approvalResolved("c1", "allow_once"));
    transcript.apply(ev.running("c1"));
    transcript.apply(ev.progress("c1", 1, 4, "fetching"));
    flushSync();
    expect(getByTestId("tool-call").dataset.status).toBe("running");
    expect(queryByTestId("approve-once")).toBeNull();
    const bar = container.querySelector("progress")!;
    expect(bar.value).toBe(1);
    expect(bar.max).toBe(4);
    expect(getByTestId("tool-call").textContent).toContain("fetching (25%)");

    transcript.apply(ev.finished("c1", "ok", model, view, 1250));
    flushSync();
    expect(getByTestId("tool-call").dataset.status).toBe("ok");
    expect(container.querySelector("progress")).toBeNull();
    expect(getByTestId("tool-duration").textContent).toBe("1.3 s");
    const result = getByTestId("tool-result");
    expect(result.tagName).toBe("DETAILS");
    expect(result.querySelector("summary")?.textContent).toBe("What the model got / What the view got");
    expect(JSON.parse(getByTestId("model-facing").textContent!)).toEqual(model);
    expect(JSON.parse(getByTestId("view-facing").textContent!)).toEqual(view);
  });

  it("shows errors inline as alerts, and an interrupted reply as interrupted", () => {
    const { getAllByTestId, getByTestId } = show([
      ev.user("a"),
      ev.step(1),
      ev.text("Half"),
      ev.assistant([{ type: "text", text: "Half" }], true),
      ev.error("the connection was cut"),
      ev.done("error"),
      ev.user("b"),
      ev.step(1),
      ev.error("No model can answer: no API key"),
      ev.done("error"),
    ]);
    const errors = getAllByTestId("turn-error");
    expect(errors.map((e) => [e.getAttribute("role"), e.querySelector("[data-testid=message-error]")?.textContent])).toEqual([
      ["alert", "the connection was cut"],
      ["alert", "No model can answer: no API key"],
    ]);
    expect(getAllByTestId("message-error")).toHaveLength(2);
    expect(getByTestId("message-status").textContent).toBe("Interrupted");
    // The failed reply has no bubble of its own.
    expect(getAllByTestId("message").map((m) => m.dataset.role)).toEqual(["user", "assistant", "user"]);
  });

  it("shows the retry notice and collapsed reasoning", () => {
    const { getByTestId } = show([ev.user("a"), ev.step(1), ev.reasoning("hmm"), ev.retrying(2, 3000, "rate_limited", "rate limited (HTTP 429): slow down")]);
    expect(getByTestId("retrying").textContent).toBe("Rate limited; retrying in 3 s (attempt 2)");
    const reasoning = getByTestId("reasoning") as HTMLDetailsElement;
    expect(reasoning.open).toBe(false);
    expect(reasoning.textContent).toContain("hmm");
  });

  it("keeps notices", () => {
    const transcript = new Transcript();
    transcript.addNotice("error", "Could not stop the reply");
    const { getByTestId } = render(TranscriptView, { transcript, servers: [] });
    expect(getByTestId("notice").getAttribute("role")).toBe("alert");
  });
});

describe("TranscriptView: servers still starting", () => {
  it("says which servers the turn waits for, and offers to send without them", async () => {
    const onSendWithoutWaiting = vi.fn();
    const transcript = new Transcript();
    for (const e of [ev.user("Hi"), { type: "waiting_for_servers", servers: ["jira", "github"] } as TurnEvent]) transcript.apply(e);
    const { getByTestId, queryByTestId } = render(TranscriptView, { transcript, servers: [], onSendWithoutWaiting });
    const waiting = getByTestId("servers-waiting");
    expect(waiting.textContent?.replace(/\s+/g, " ").trim()).toBe(
      "Waiting for jira and github to start, so the model gets their tools… Send without them",
    );
    await fireEvent.click(getByTestId("send-without-waiting"));
    expect(onSendWithoutWaiting).toHaveBeenCalledOnce();
    transcript.apply({ type: "servers_waited", missing: [{ name: "jira", reason: "still starting" }, { name: "github", reason: "still starting" }] });
    flushSync();
    expect(queryByTestId("servers-waiting")).toBeNull();
    expect(getByTestId("notice").textContent).toBe("Sent without jira (still starting), github (still starting).");
  });
});

describe("TranscriptView following the end", () => {
  it("keeps following the end when a card grows (a view's frame), but not once the reader scrolled up", () => {
    const callbacks: ResizeObserverCallback[] = [];
    class FakeResizeObserver {
      constructor(cb: ResizeObserverCallback) {
        callbacks.push(cb);
      }
      observe() {}
      disconnect() {}
      unobserve() {}
    }
    vi.stubGlobal("ResizeObserver", FakeResizeObserver);
    try {
      const { getByTestId, transcript } = show([ev.user("Show me the chart"), ev.step(1)]);
      const log = getByTestId("transcript");
      let height = 1000;
      Object.defineProperty(log, "scrollHeight", { get: () => height, configurable: true });
      Object.defineProperty(log, "clientHeight", { get: () => 400, configurable: true });
      log.scrollTop = 600;
      fireEvent.scroll(log);
      // A view grows by 300 px: the log follows.
      height = 1300;
      callbacks.at(-1)!([], {} as ResizeObserver);
      expect(log.scrollTop).toBe(1300);
      fireEvent.scroll(log);
      // Content grows while nobody scrolls and nothing reports a resize (a spacer re-measured,
      // or the scroll event arriving after more growth); then a new card arrives: still followed.
      height = 2000;
      fireEvent.scroll(log);
      transcript.apply(ev.text("More."));
      flushSync();
      expect(log.scrollTop).toBe(2000);
      // The reader scrolls up; growth no longer moves them.
      log.scrollTop = 100;
      fireEvent.scroll(log);
      height = 2300;
      callbacks.at(-1)!([], {} as ResizeObserver);
      transcript.apply(ev.text(" Even more."));
      flushSync();
      expect(log.scrollTop).toBe(100);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

describe("TranscriptView: Markdown replies", () => {
  // Code is shown plain until highlight.js has loaded (on demand), then highlighted.
  beforeAll(() => loadHighlighter());

  function stubClipboard() {
    const writeText = vi.fn(async (_text: string) => {});
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    return writeText;
  }

  it("renders the reply as sanitised Markdown, with highlighted code and a copy button that copies it", async () => {
    const writeText = stubClipboard();
    const text = "Here is **code**:\n\n```js\nconst a = 1;\n```\n\n<script>window.bad = 1</script>";
    const { getByTestId } = show([ev.user("Code?"), ev.step(1), ev.text(text), ev.assistant([{ type: "text", text }]), ev.done("end_turn")]);
    const reply = getByTestId("assistant-message");
    const markdown = reply.querySelector("[data-testid=markdown]")!;
    expect(markdown.querySelector("strong")?.textContent).toBe("code");
    expect(markdown.querySelector("code.language-javascript .hljs-keyword")?.textContent).toBe("const");
    expect(markdown.querySelector("script")).toBeNull();
    expect(markdown.textContent).toContain("<script>window.bad = 1</script>");

    const copy = markdown.querySelector<HTMLButtonElement>("[data-testid=copy-code]")!;
    expect(copy.getAttribute("aria-label")).toBe("Copy code");
    await fireEvent.click(copy);
    await vi.waitFor(() => expect(writeText).toHaveBeenCalledExactlyOnceWith("const a = 1;"));
    // The clipboard guard was told first that the person asked for this copy.
    expect(clipboardWriteRequested).toHaveBeenCalledOnce();
    await vi.waitFor(() => expect(copy.textContent).toBe("Copied"));
  });

  it("never follows a link: a click copies its address and says so", async () => {
    const writeText = stubClipboard();
    const text = "See [the docs](https://example.com/docs).";
    const { getByTestId, findByTestId } = show([ev.user("Docs?"), ev.step(1), ev.assistant([{ type: "text", text }]), ev.done("end_turn")]);
    const link = getByTestId("markdown").querySelector("a")!;
    expect(link.getAttribute("rel")).toBe("noopener noreferrer");
    const click = new MouseEvent("click", { bubbles: true, cancelable: true });
    link.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true);
    await vi.waitFor(() => expect(writeText).toHaveBeenCalledExactlyOnceWith("https://example.com/docs"));
    expect((await findByTestId("link-note")).textContent).toBe("Link address copied: https://example.com/docs");
  });

  it("keeps user messages plain text", () => {
    const { getByTestId } = show([ev.user("**not bold** and <i>not italic</i>")]);
    const message = getByTestId("message");
    expect(message.textContent).toBe("**not bold** and <i>not italic</i>");
    expect(message.querySelector("strong, i, [data-testid=markdown]")).toBeNull();
  });

  it("renders streamed text at most once per animation frame, with the latest text", () => {
    const frames: FrameRequestCallback[] = [];
    vi.stubGlobal("requestAnimationFrame", (cb: FrameRequestCallback) => frames.push(cb));
    vi.stubGlobal("cancelAnimationFrame", () => {});
    try {
      const { getByTestId, transcript } = show([ev.user("Go"), ev.step(1), ev.text("**He")]);
      const markdown = () => getByTestId("markdown");
      // The first text shows at once.
      expect(markdown().textContent).toBe("**He");
      transcript.apply(ev.text("llo**"));
      transcript.apply(ev.text(" and\n\n```py\nprint("));
      flushSync();
      expect(markdown().textContent).toBe("**He");
      expect(frames).toHaveLength(1);
      frames.shift()!(0);
      flushSync();
      expect(markdown().querySelector("strong")?.textContent).toBe("Hello");
      // The unfinished code fence renders as code so far.
      expect(markdown().querySelector("pre code.language-python")?.textContent).toBe("print(");
      // The finished message renders at once, without waiting for a frame.
      transcript.apply(ev.text(")\n```"));
      transcript.apply(ev.assistant([{ type: "text", text: "**Hello** and\n\n```py\nprint()\n```" }]));
      flushSync();
      expect(markdown().querySelector("pre code")?.textContent).toBe("print()");
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

describe("TranscriptView: retry and edit", () => {
  const turn: TurnEvent[] = [ev.user("first"), ev.step(1), ev.assistant([{ type: "text", text: "one" }]), ev.done("end_turn"), ev.user("second"), ev.step(1), ev.assistant([{ type: "text", text: "two" }]), ev.done("end_turn")];

  function showWith(events: TurnEvent[], props: Record<string, unknown>) {
    const transcript = new Transcript();
    for (const e of events) transcript.apply(e);
    return { ...render(TranscriptView, { transcript, servers: [], ...props }), transcript };
  }

  it("offers Retry on the last reply only, and Edit on the last message only", async () => {
    const onRetry = vi.fn();
    const { getAllByTestId, getByTestId } = showWith(turn, { canRewind: true, onRetry });
    const retry = getAllByTestId("retry");
    expect(retry).toHaveLength(1);
    const replies = getAllByTestId("assistant-message");
    expect(replies[1].contains(retry[0])).toBe(true);
    expect(retry[0].getAttribute("aria-label")).toMatch(/^Retry/);
    await fireEvent.click(retry[0]);
    expect(onRetry).toHaveBeenCalledOnce();

    const edit = getByTestId("edit-message");
    expect(edit.getAttribute("aria-label")).toMatch(/^Edit/);
    // It belongs to the last user message, and is not part of the message's text.
    const users = getAllByTestId("message").filter((m) => m.dataset.role === "user");
    expect(users[1].parentElement!.contains(edit)).toBe(true);
    expect(users.map((u) => u.textContent)).toEqual(["first", "second"]);
  });

  it("offers neither while a reply is being written", () => {
    const { queryByTestId } = showWith([...turn, ev.user("third"), ev.step(1), ev.text("thr")], { canRewind: false });
    expect(queryByTestId("retry")).toBeNull();
    expect(queryByTestId("edit-message")).toBeNull();
  });

  it("puts Retry on the error that ended the last turn", async () => {
    const onRetry = vi.fn();
    const { getAllByTestId } = showWith([...turn, ev.user("third"), ev.step(1), ev.error("rate limited"), ev.done("error")], { canRewind: true, onRetry });
    const errors = getAllByTestId("turn-error");
    const retry = getAllByTestId("retry");
    expect(retry).toHaveLength(1);
    expect(errors.at(-1)!.contains(retry[0])).toBe(true);
    expect(errors.at(-1)!.getAttribute("role")).toBe("alert");
    await fireEvent.click(retry[0]);
    expect(onRetry).toHaveBeenCalledOnce();
  });

  it("edits the last message in place: Send gives the new text, Cancel and Esc leave it as it was", async () => {
    const onEdit = vi.fn((_text: string) => true);
    const { getByTestId, queryByTestId } = showWith(turn, { canRewind: true, onEdit });
    await fireEvent.click(getByTestId("edit-message"));
    const input = getByTestId("edit-message-input") as HTMLTextAreaElement;
    expect(input.value).toBe("second");
    expect(document.activeElement).toBe(input);
    expect(input.labels?.[0]?.textContent).toBe("Your message");
    expect(queryByTestId("edit-message")).toBeNull();

    await fireEvent.click(getByTestId("edit-message-cancel"));
    expect(queryByTestId("edit-message-input")).toBeNull();
    expect(onEdit).not.toHaveBeenCalled();

    await fireEvent.click(getByTestId("edit-message"));
    const escape = new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true });
    getByTestId("edit-message-input").dispatchEvent(escape);
    flushSync();
    expect(escape.defaultPrevented).toBe(true);
    expect(queryByTestId("edit-message-input")).toBeNull();

    await fireEvent.click(getByTestId("edit-message"));
    await fireEvent.input(getByTestId("edit-message-input"), { target: { value: "  " } });
    expect((getByTestId("edit-message-send") as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.input(getByTestId("edit-message-input"), { target: { value: "second, better" } });
    await fireEvent.click(getByTestId("edit-message-send"));
    expect(onEdit).toHaveBeenCalledExactlyOnceWith("second, better");
    expect(queryByTestId("edit-message-input")).toBeNull();
  });

  it("sends the edit on Enter and keeps Shift+Enter as a new line", async () => {
    const onEdit = vi.fn((_text: string) => true);
    const { getByTestId } = showWith(turn, { canRewind: true, onEdit });
    await fireEvent.click(getByTestId("edit-message"));
    const input = getByTestId("edit-message-input");
    await fireEvent.keyDown(input, { key: "Enter", shiftKey: true });
    expect(onEdit).not.toHaveBeenCalled();
    await fireEvent.keyDown(input, { key: "Enter" });
    expect(onEdit).toHaveBeenCalledExactlyOnceWith("second");
  });
});

describe("TranscriptView: long transcripts", () => {
  /** A transcript of `n` exchanges, shown in a log of 800 px whose scroll height follows the
   * spacers and rows (jsdom lays nothing out: rows are taken at their estimated heights). */
  /** Exchanges `from` to `to` (exclusive): a question, its answer. */
  const exchanges = (from: number, to: number): TurnEvent[] =>
    Array.from({ length: to - from }, (_, k) => [ev.user(`question ${from + k}`), ev.step(1), ev.assistant([{ type: "text", text: `answer ${from + k}` }]), ev.done("end_turn")]).flat();

  /** Gives the rendered log a height of 800 px and a scroll height that follows its spacers
   * and rows; returns a way to scroll it as a reader would. */
  function sized(log: HTMLElement) {
    Object.defineProperty(log, "clientHeight", { get: () => 800, configurable: true });
    Object.defineProperty(log, "scrollHeight", {
      get: () => Array.from(log.querySelectorAll<HTMLElement>("[data-testid=transcript-gap]")).reduce((sum, g) => sum + parseFloat(g.style.height), 0) + log.querySelectorAll(".row").length * 50,
      configurable: true,
    });
    return (top: number) => {
      log.scrollTop = top;
      fireEvent.scroll(log);
      flushSync();
    };
  }

  function long(n: number, before: TurnEvent[] = [], conversationId: string | null = null) {
    const view = show([...before, ...exchanges(0, n)], new Transcript(), conversationId);
    const log = view.getByTestId("transcript");
    const scrollTo = sized(log);
    // Where a browser has it once laid out: at the end, which the transcript follows.
    scrollTo(log.scrollHeight - 800);
    const texts = () => view.getAllByTestId("message").map((m) => m.textContent);
    return { ...view, log, scrollTo, texts };
  }

  it("renders only the items near what is visible, with spacers for the rest, and follows the end", () => {
    const { texts, getAllByTestId } = long(1000);
    const shown = texts();
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.length).toBeLessThan(120);
    expect(shown.at(-1)).toBe("answer 999");
    expect(shown).not.toContain("question 0");
    const gaps = getAllByTestId("transcript-gap");
    expect(gaps).toHaveLength(1);
    expect(parseFloat(gaps[0].style.height)).toBeGreaterThan(10_000);
  });

  it("loads the earlier turns when the reader nears the top, keeping in place what they see", async () => {
    const all = record(exchanges(0, 160));
    const cut = all.messages.filter((m) => m.role === "user")[100].id;
    const end = { ...all, messages: all.messages.filter((m) => m.id >= cut), earlier: true };
    const before = { ...all, messages: all.messages.filter((m) => m.id < cut), earlier: false };
    const transcript = new Transcript();
    transcript.load(end);
    const onEarlier = vi.fn(async () => transcript.prepend(before));
    const view = render(TranscriptView, { transcript, servers: [], conversationId: "c1", onEarlier });
    const log = view.getByTestId("transcript");
    const scrollTo = sized(log);
    scrollTo(log.scrollHeight - 800);
    expect(log.dataset.earlier).toBe("true");
    // At the end, far from the top: nothing is asked for.
    expect(onEarlier).not.toHaveBeenCalled();
    scrollTo(0);
    await vi.waitFor(() => expect(onEarlier).toHaveBeenCalledOnce());
    await vi.waitFor(() => expect(log.dataset.earlier).toBe("false"));
    await vi.waitFor(() => expect(log.scrollTop).toBeGreaterThan(5000));
    // The reader still sees question 100 at the top, with 100 earlier turns above it now.
    const top = view.getAllByTestId("message").find((m) => {
      const row = m.closest<HTMLElement>(".row")!;
      return Number(row.dataset.index) === 200;
    });
    expect(top?.textContent).toBe("question 100");
    expect(transcript.items).toHaveLength(320);
    scrollTo(0);
    await new Promise((r) => setTimeout(r, 0));
    expect(onEarlier).toHaveBeenCalledOnce();
    expect(view.getAllByTestId("message")[0].textContent).toBe("question 0");
  });

  it("keeps the reader's place once they stop scrolling, and opens there, loading earlier turns first", async () => {
    const all = record(exchanges(0, 160));
    const first = new Transcript();
    first.load(all);
    const view = render(TranscriptView, { transcript: first, servers: [], conversationId: "c1" });
    const log = view.getByTestId("transcript");
    const scrollTo = sized(log);
    scrollTo(log.scrollHeight - 800);
    // Scrolled up to somewhere in the first 100 turns, then left still.
    scrollTo(4000);
    await vi.waitFor(() => expect(keepScrollPosition).toHaveBeenCalledOnce(), { timeout: 2000 });
    const [id, place] = keepScrollPosition.mock.calls[0];
    expect(id).toBe("c1");
    expect(place).not.toBeNull();
    const topRow = first.rows.length - 1 - place!.fromEnd;
    const topText = (first.items[topRow] as { text: string }).text;
    view.unmount();

    // Opened again with its last 60 turns: the place is in the earlier ones.
    const cut = all.messages.filter((m) => m.role === "user")[100].id;
    const transcript = new Transcript();
    transcript.load({ ...all, messages: all.messages.filter((m) => m.id >= cut), earlier: true, scroll: place });
    const onEarlier = vi.fn(async () => transcript.prepend({ ...all, messages: all.messages.filter((m) => m.id < cut), earlier: false }));
    const again = render(TranscriptView, { transcript, servers: [], conversationId: "c1", onEarlier });
    const log2 = again.getByTestId("transcript");
    const scrollAgain = sized(log2);
    await vi.waitFor(() => expect(onEarlier).toHaveBeenCalledOnce());
    await vi.waitFor(() => expect(Math.round(log2.scrollTop)).toBe(4000));
    const row = again.getAllByTestId("message").find((m) => Number(m.closest<HTMLElement>(".row")!.dataset.index) === topRow);
    expect(row?.textContent).toBe(topText);
    expect(transcript.scroll).toBeNull();
    // Read to its end: that is kept too (the place is forgotten).
    scrollAgain(log2.scrollHeight - 800);
    await vi.waitFor(() => expect(keepScrollPosition).toHaveBeenLastCalledWith("c1", null), { timeout: 2000 });
  });

  it("loads the earlier turns by itself while left still, and stays at the end", async () => {
    const all = record(exchanges(0, 160));
    const cut = all.messages.filter((m) => m.role === "user")[100].id;
    const transcript = new Transcript();
    transcript.load({ ...all, messages: all.messages.filter((m) => m.id >= cut), earlier: true });
    const onEarlier = vi.fn(async () => transcript.prepend({ ...all, messages: all.messages.filter((m) => m.id < cut), earlier: false }));
    const view = render(TranscriptView, { transcript, servers: [], conversationId: "c1", onEarlier });
    const log = view.getByTestId("transcript");
    expect(log.getAttribute("aria-busy")).toBe("false");
    await vi.waitFor(() => expect(onEarlier).toHaveBeenCalledOnce());
    await vi.waitFor(() => expect(log.dataset.earlier).toBe("false"));
    expect(transcript.items).toHaveLength(320);
    expect(view.getAllByTestId("message").at(-1)?.textContent).toBe("answer 159");
  });

  it("renders the start when the reader scrolls there, and a new reply does not pull them back", () => {
    const { texts, scrollTo, transcript } = long(1000);
    scrollTo(0);
    expect(texts()[0]).toBe("question 0");
    expect(texts()).not.toContain("answer 999");
    transcript.apply(ev.user("one more"));
    flushSync();
    expect(texts()[0]).toBe("question 0");
    expect(texts()).not.toContain("one more");
  });

  it("keeps what the reader sees in place when a row above it turns out taller or shorter than estimated", () => {
    const observed: Element[] = [];
    let callback: ResizeObserverCallback = () => {};
    vi.stubGlobal(
      "ResizeObserver",
      class {
        constructor(cb: ResizeObserverCallback) {
          callback = cb;
        }
        observe(el: Element) {
          observed.push(el);
        }
        unobserve() {}
        disconnect() {}
      },
    );
    try {
      const { log, scrollTo, container } = long(300);
      scrollTo(8000);
      const rows = Array.from(container.querySelectorAll<HTMLElement>(".row"));
      expect(rows.every((r) => observed.includes(r))).toBe(true);
      const measure = (row: HTMLElement, height: number) =>
        callback([{ target: row, borderBoxSize: [{ blockSize: height, inlineSize: 600 }] } as unknown as ResizeObserverEntry], {} as ResizeObserver);
      // The first rendered row is above the visible part (the overscan): it measures 100 px taller
      // than estimated (49 px for a short question), and the reader's view moves with it.
      const above = rows.slice(0, 4).find((r) => r.querySelector("[data-role=user]"))!;
      measure(above, 149);
      flushSync();
      expect(log.scrollTop).toBe(8100);
      // The same row shrinking brings it back.
      measure(above, 49);
      flushSync();
      expect(log.scrollTop).toBe(8000);
      // A row below the visible part changing moves nothing.
      measure(rows.at(-1)!, 400);
      flushSync();
      expect(log.scrollTop).toBe(8000);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("keeps a card whose view is alive in the document however far away, and lets it go once the view is parked", async () => {
    const callTurn: TurnEvent[] = [
      ev.user("chart"),
      ev.step(1),
      ev.assistant([{ type: "tool_use", id: "t1", name: "demo__chart", arguments: {} }]),
      ev.callStarted("t1", "demo__chart", "demo", "chart", {}, "ui://demo/chart.html"),
      ev.finished("t1", "ok", { content: [], isError: false }, { content: [] }, 4),
      ev.done("end_turn"),
    ];
    // The call comes first, 600 exchanges above the end the transcript shows.
    const { queryByTestId, scrollTo, texts } = long(600, callTurn);
    expect(queryByTestId("tool-call")).toBeNull();

    // Its view opens (as when a conversation is reopened): the card comes in, far away as it is,
    // without its neighbours.
    views.handle({
      type: "opened",
      conversationId: "c1",
      callId: "t1",
      viewId: "v1",
      url: "mcpview://localhost/view/token",
      allow: "",
      prefersBorder: null,
      displayModes: ["inline"],
      cspDropped: [],
      reaches: [],
      devices: [],
      devicesAsked: [],
      emulating: null,
    });
    flushSync();
    expect(queryByTestId("tool-call")?.dataset.callId).toBe("t1");
    expect(queryByTestId("mcp-app-view")).not.toBeNull();
    expect(texts()).not.toContain("chart");

    // Parked (as its zone does when it stays out of sight): the card stays while the view answers
    // its teardown, with its frame, then goes, without the view being closed a second time.
    let answered!: () => void;
    teardownView.mockImplementation(() => new Promise<void>((resolve) => (answered = resolve)));
    expect(views.park("v1", 300)).toBe(true);
    flushSync();
    expect(teardownView).toHaveBeenCalledExactlyOnceWith("v1");
    expect(queryByTestId("tool-call")).not.toBeNull();
    answered();
    await new Promise((r) => setTimeout(r, 0));
    flushSync();
    expect(queryByTestId("tool-call")).toBeNull();
    expect(closeView).not.toHaveBeenCalled();
    expect(reopenViews).not.toHaveBeenCalled();

    // Scrolled back to: the card returns and its view is re-created.
    scrollTo(0);
    expect(queryByTestId("tool-call")?.dataset.callId).toBe("t1");
    expect(reopenViews).toHaveBeenCalledExactlyOnceWith("c1", "t1");
  });

  it("re-creates a stored call's view only when its card comes near sight, and says once when it cannot", async () => {
    // A finished call of a tool with a view (t1) and one without (t2), 600 exchanges above the end.
    const turn: TurnEvent[] = [
      ev.user("chart"),
      ev.step(1),
      ev.assistant([
        { type: "tool_use", id: "t1", name: "demo__chart", arguments: {} },
        { type: "tool_use", id: "t2", name: "demo__sum", arguments: {} },
      ]),
      ev.callStarted("t1", "demo__chart", "demo", "chart", {}, "ui://demo/chart.html"),
      ev.finished("t1", "ok", { content: [], isError: false }, { content: [] }, 4),
      ev.callStarted("t2", "demo__sum", "demo", "sum", {}, null),
      ev.finished("t2", "ok", { content: [], isError: false }, { content: [] }, 4),
      ev.done("end_turn"),
    ];
    reopenViews.mockImplementation(async () => Promise.reject(refused("store", "the store is locked")));
    const { scrollTo, log, transcript } = long(600, turn, "c9");
    expect(reopenViews).not.toHaveBeenCalled();
    scrollTo(0);
    expect(reopenViews).toHaveBeenCalledExactlyOnceWith("c9", "t1");
    await new Promise((r) => setTimeout(r, 0));
    // Away and back: asked again; the failure is said once.
    scrollTo(log.scrollHeight - 800);
    scrollTo(0);
    expect(reopenViews).toHaveBeenCalledTimes(2);
    await new Promise((r) => setTimeout(r, 0));
    expect(transcript.notices.map((n) => n.text)).toEqual(["Could not reopen the views: the store is locked"]);
  });
});
