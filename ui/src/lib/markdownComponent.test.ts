// The Markdown renderer is not part of the window's first paint: a reply shown before it has
// loaded is plain text (the whole text, nothing interpreted), then rendered in place.
import { describe, expect, it, vi } from "vitest";
import { flushSync } from "svelte";
import { render } from "@testing-library/svelte";
import AssistantMessage from "../components/AssistantMessage.svelte";
import type { AssistantItem } from "./transcript.svelte";
import { markdown } from "./markdownComponent.svelte";

const item: AssistantItem = {
  kind: "assistant",
  id: 1,
  text: "A **bold** claim <img src=x onerror=alert(1)>",
  reasoning: "",
  status: "complete",
  error: null,
  retry: null,
};

describe("the Markdown renderer on demand", () => {
  it("shows a reply as plain text until the renderer has loaded, then as Markdown", async () => {
    expect(markdown.component).toBeNull();
    const { container } = render(AssistantMessage, { item });
    const plain = container.querySelector("[data-testid=plain-reply]");
    expect(plain?.textContent).toBe(item.text);
    expect(container.querySelector("strong")).toBeNull();
    expect(container.querySelector("img")).toBeNull();

    await vi.waitFor(
      () => {
        flushSync();
        expect(container.querySelector("strong")?.textContent).toBe("bold");
      },
      { timeout: 5000 },
    );
    expect(markdown.component).not.toBeNull();
    expect(container.querySelector("[data-testid=plain-reply]")).toBeNull();
    expect(container.querySelector("img")).toBeNull();
  });
});
