// A reply being written: a long code block is shown as one block (its bar, its copy button, all
// its code) while only its last piece is replaced as it grows.
import { beforeAll, describe, expect, it, vi } from "vitest";
import { flushSync } from "svelte";
import { render } from "@testing-library/svelte";
import Markdown from "./Markdown.svelte";
import { codeOf, loadHighlighter } from "../lib/markdown";

beforeAll(() => loadHighlighter());

const lines = Array.from({ length: 500 }, (_, i) => `fn f${i}() -> u32 { ${i} }`);
const reply = (n: number) => `Here it is:\n\n\`\`\`rust\n${lines.slice(0, n).join("\n")}`;

describe("a long code block in a reply being written", () => {
  it("is one highlighted block with a copy button, and keeps the nodes of the code already shown", async () => {
    const { container, rerender } = render(Markdown, { text: reply(300), streaming: true });
    flushSync();
    const code = () => container.querySelector<HTMLElement>(".code-block pre code");
    expect(container.querySelectorAll(".code-block")).toHaveLength(1);
    expect(container.querySelector(".code-language")?.textContent).toBe("rust");
    expect(code()?.className).toContain("language-rust");
    expect(code()?.textContent).toBe(lines.slice(0, 300).join("\n"));
    expect(code()?.querySelector(".hljs-keyword")?.textContent).toBe("fn");
    const first = code()?.firstChild;
    expect(first).toBeTruthy();

    await rerender({ text: reply(480), streaming: true });
    await vi.waitFor(() => {
      flushSync();
      expect(code()?.textContent).toBe(lines.slice(0, 480).join("\n"));
    });
    expect(container.querySelectorAll(".code-block")).toHaveLength(1);
    // The first lines' nodes are the ones shown before: not rendered again.
    expect(code()?.firstChild).toBe(first);
    const button = container.querySelector("[data-testid=copy-code]");
    expect(button?.textContent).toBe("Copy");
    expect(codeOf(button!)).toBe(lines.slice(0, 480).join("\n"));

    // Finished, its pieces coloured as the code highlighted whole: the nodes shown are kept.
    await rerender({ text: `${reply(500)}\n\`\`\``, streaming: false });
    flushSync();
    expect(container.querySelectorAll(".code-block")).toHaveLength(1);
    expect(code()?.textContent).toBe(lines.join("\n"));
    expect(code()?.firstChild).toBe(first);
  });

  it("is rendered whole once finished when a comment crosses a piece's end, so it is coloured as one", async () => {
    const commented = [...lines.slice(0, 100), "/* one comment", "", "over a blank line */", ...lines.slice(100, 300)];
    const text = `Here it is:\n\n\`\`\`rust\n${commented.join("\n")}`;
    const { container, rerender } = render(Markdown, { text, streaming: true });
    flushSync();
    const code = () => container.querySelector<HTMLElement>(".code-block pre code");
    const first = code()?.firstChild;
    expect(first).toBeTruthy();
    const comments = () => [...(code()?.querySelectorAll(".hljs-comment") ?? [])].map((c) => c.textContent);
    expect(comments()).not.toContain("/* one comment\n\nover a blank line */");

    await rerender({ text: `${text}\n\`\`\``, streaming: false });
    flushSync();
    expect(comments()).toContain("/* one comment\n\nover a blank line */");
    expect(code()?.textContent).toBe(commented.join("\n"));
    expect(code()?.firstChild).not.toBe(first);
  });
});

describe("a long paragraph in a reply being written", () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => (i % 50 === 7 ? `**w${i}**` : `w${i}`)).join(" ");

  it("is one paragraph whose nodes are kept as it grows, and when finished", async () => {
    const { container, rerender } = render(Markdown, { text: `Intro.\n\n${words(900)}`, streaming: true });
    flushSync();
    const paragraph = () => container.querySelectorAll<HTMLElement>("[data-testid=markdown] > p")[1];
    expect(container.querySelectorAll("[data-testid=markdown] > p")).toHaveLength(2);
    expect(paragraph()?.textContent).toBe(words(900).replaceAll("**", ""));
    expect(paragraph()?.querySelectorAll("strong")).toHaveLength(18);
    const first = paragraph()?.firstChild;

    await rerender({ text: `Intro.\n\n${words(1400)}`, streaming: true });
    await vi.waitFor(() => {
      flushSync();
      expect(paragraph()?.textContent).toBe(words(1400).replaceAll("**", ""));
    });
    expect(paragraph()?.firstChild).toBe(first);
    expect(paragraph()?.querySelectorAll("strong")).toHaveLength(28);

    // Finished, with what came after the last frame: the nodes shown are kept, the text is whole.
    await rerender({ text: `Intro.\n\n${words(1500)}`, streaming: false });
    flushSync();
    expect(container.querySelectorAll("[data-testid=markdown] > p")).toHaveLength(2);
    expect(paragraph()?.textContent).toBe(words(1500).replaceAll("**", ""));
    expect(paragraph()?.firstChild).toBe(first);
    expect(paragraph()?.querySelectorAll("strong")).toHaveLength(30);
  });
});

describe("a long list in a reply being written", () => {
  const items = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `${i + from}. item ${i} with *emphasis*`).join("\n");

  it("is one list whose items already shown are kept as it grows, and when it ends the reply", async () => {
    const { container, rerender } = render(Markdown, { text: items(200, 5), streaming: true });
    flushSync();
    const list = () => container.querySelector<HTMLOListElement>("[data-testid=markdown] > ol");
    expect(list()?.getAttribute("start")).toBe("5");
    expect(list()?.children).toHaveLength(200);
    const first = list()?.firstElementChild;

    await rerender({ text: items(300, 5), streaming: true });
    await vi.waitFor(() => {
      flushSync();
      expect(list()?.children).toHaveLength(300);
    });
    expect(list()?.firstElementChild).toBe(first);
    expect(list()?.querySelectorAll("em")).toHaveLength(300);

    await rerender({ text: `${items(310, 5)}\n\nAfter.`, streaming: false });
    flushSync();
    expect(container.querySelectorAll("[data-testid=markdown] > ol")).toHaveLength(1);
    expect(list()?.children).toHaveLength(310);
    expect(list()?.firstElementChild).toBe(first);
    expect(list()?.getAttribute("start")).toBe("5");
    expect(container.querySelector("[data-testid=markdown] > p")?.textContent).toBe("After.");
  });
});

describe("a long table in a reply being written", () => {
  const table = (n: number) =>
    ["| n | what |", "|--:|---|", ...Array.from({ length: n }, (_, i) => `| ${i} | row ${i} with *emphasis* and more words |`)].join("\n");

  it("is one table whose rows already shown are kept as it grows, and when it ends the reply", async () => {
    const { container, rerender } = render(Markdown, { text: table(150), streaming: true });
    flushSync();
    const rows = () => container.querySelectorAll<HTMLTableRowElement>("[data-testid=markdown] > table > tbody > tr");
    const head = () => container.querySelectorAll("[data-testid=markdown] > table > thead > tr > th");
    expect(rows()).toHaveLength(150);
    expect(Array.from(head(), (th) => [th.textContent, th.getAttribute("align")])).toEqual([
      ["n", "right"],
      ["what", null],
    ]);
    const first = rows()[0];

    await rerender({ text: table(250), streaming: true });
    await vi.waitFor(() => {
      flushSync();
      expect(rows()).toHaveLength(250);
    });
    expect(rows()[0]).toBe(first);
    expect(rows()[249].textContent).toContain("row 249 with emphasis");
    expect(container.querySelectorAll("[data-testid=markdown] em")).toHaveLength(250);

    await rerender({ text: `${table(260)}\n\nAfter.`, streaming: false });
    flushSync();
    expect(container.querySelectorAll("[data-testid=markdown] > table")).toHaveLength(1);
    expect(rows()).toHaveLength(260);
    expect(head()).toHaveLength(2);
    expect(rows()[0]).toBe(first);
    expect(rows()[259].textContent).toContain("row 259 with emphasis");
  });
});

describe("a long quote in a reply being written", () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `> line ${i} of the quote, with *emphasis* and more words`).join("\n");

  it("is one quote whose paragraph is only appended to as it grows, and kept when it ends the reply", async () => {
    const { container, rerender } = render(Markdown, { text: lines(150), streaming: true });
    flushSync();
    const quote = () => container.querySelector("[data-testid=markdown] > blockquote");
    const paragraph = () => quote()?.querySelector("p");
    expect(paragraph()?.classList.contains("growing-paragraph")).toBe(true);
    const first = paragraph()?.firstChild;

    await rerender({ text: lines(250), streaming: true });
    await vi.waitFor(() => {
      flushSync();
      expect(paragraph()?.textContent).toContain("line 249 of the quote, with emphasis");
    });
    expect(paragraph()?.firstChild).toBe(first);
    expect(quote()?.querySelectorAll("em")).toHaveLength(250);

    await rerender({ text: `${lines(260)}\n\nAfter.`, streaming: false });
    flushSync();
    expect(container.querySelectorAll("[data-testid=markdown] > blockquote")).toHaveLength(1);
    expect(paragraph()?.firstChild).toBe(first);
    expect(quote()?.querySelectorAll("em")).toHaveLength(260);
    expect(quote()?.textContent).toContain("line 259 of the quote");
    expect(container.querySelector("[data-testid=markdown] > p")?.textContent).toBe("After.");
  });
});

describe("a reply finished after it was written here", () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

  it("is rendered whole when it defines a reference link, so a use before the definition is a link", async () => {
    const { container, rerender } = render(Markdown, { text: `${words(900)} [the docs][docs] ${words(10)}`, streaming: true });
    flushSync();
    const link = () => container.querySelector<HTMLAnchorElement>("[data-testid=markdown] a");
    expect(link()).toBeNull();
    await rerender({ text: `${words(900)} [the docs][docs] ${words(10)}\n\n[docs]: https://example.com/docs`, streaming: false });
    flushSync();
    expect(link()?.getAttribute("href")).toBe("https://example.com/docs");
    expect(link()?.textContent).toBe("the docs");
  });

  it("is rendered whole when it was not written here", () => {
    const { container } = render(Markdown, { text: `Intro.\n\n${words(900)}`, streaming: false });
    flushSync();
    const paragraphs = container.querySelectorAll("[data-testid=markdown] > p");
    expect(paragraphs).toHaveLength(2);
    expect(paragraphs[1].classList.contains("growing-paragraph")).toBe(false);
  });
});
