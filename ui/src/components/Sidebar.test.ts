import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/svelte";
import Sidebar from "./Sidebar.svelte";

afterEach(cleanup);

const conversations = [
  { id: "a1", title: "Weather in Paris", createdAt: 1, updatedAt: 3 },
  { id: "b2", title: "Release notes", createdAt: 1, updatedAt: 2 },
];

describe("Sidebar", () => {
  it("lists conversations, marks the open one and opens another on click", async () => {
    const onOpen = vi.fn();
    const { getAllByTestId } = render(Sidebar, { servers: [], info: null, onNewChat: () => {}, conversations, currentId: "b2", onOpen });
    const items = getAllByTestId("conversation");
    expect(items.map((i) => i.textContent)).toEqual(["Weather in Paris", "Release notes"]);
    expect(items.map((i) => i.getAttribute("aria-current"))).toEqual([null, "true"]);
    await fireEvent.click(items[0]);
    expect(onOpen).toHaveBeenCalledWith("a1");
  });

  it("shows the model, or why there is none as a warning", () => {
    const ok = render(Sidebar, {
      servers: [],
      info: null,
      onNewChat: () => {},
      model: { provider: "anthropic", baseUrl: null, model: "claude-test", keySource: "keyring", error: null },
    });
    const line = ok.getByTestId("model-info");
    expect(line.textContent?.trim()).toBe("anthropic · claude-test");
    expect(line.classList.contains("warning")).toBe(false);
    cleanup();

    const bad = render(Sidebar, {
      servers: [],
      info: null,
      onNewChat: () => {},
      model: { provider: null, baseUrl: null, model: null, keySource: null, error: "no API key for openai" },
    });
    const warning = bad.getByTestId("model-info");
    expect(warning.textContent?.trim()).toBe("no API key for openai");
    expect(warning.classList.contains("warning")).toBe(true);
  });
});
