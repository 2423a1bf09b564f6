// highlight.js is not part of the window's first paint: the first code block fetches it, is
// shown plain meanwhile, and every message waiting for it renders again once it is there.
import { describe, expect, it, vi } from "vitest";
import { flushSync } from "svelte";
import { render } from "@testing-library/svelte";
import { highlighterLoaded, markdownToHtml } from "./markdown";
import Markdown from "../components/Markdown.svelte";

describe("code highlighting on demand", () => {
  it("shows code plain until highlight.js has loaded, then highlights it in place", async () => {
    expect(highlighterLoaded()).toBe(false);
    const text = "```js\nconst a = 1;\n```";
    // Plain text with no highlighting is rendered at once, and needs no highlighter.
    expect(markdownToHtml("Just words.")).toContain("Just words.");
    expect(highlighterLoaded()).toBe(false);

    const { container } = render(Markdown, { text });
    const code = () => container.querySelector("pre code")!;
    expect(code().textContent).toBe("const a = 1;");
    expect(code().querySelector(".hljs-keyword")).toBeNull();
    // A message still being written, its code block settled (blocks after it): the same.
    const streaming = render(Markdown, { text: `${text}\n\nOne.\n\nTwo.\n\nThree`, streaming: true });
    const streamedCode = () => streaming.container.querySelector("pre code")!;
    expect(streamedCode().textContent).toBe("const a = 1;");
    expect(streamedCode().querySelector(".hljs-keyword")).toBeNull();
    // The code block asked for highlight.js; once it is loaded the messages render again.
    await vi.waitFor(
      () => {
        flushSync();
        expect(code().querySelector(".hljs-keyword")?.textContent).toBe("const");
        expect(streamedCode().querySelector(".hljs-keyword")?.textContent).toBe("const");
      },
      { timeout: 5000 },
    );
    expect(highlighterLoaded()).toBe(true);
    expect(container.querySelector(".code-language")?.textContent).toBe("javascript");
  });
});
