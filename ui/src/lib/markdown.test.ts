import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { Lexer, Parser } from "marked";
import highlighter from "./highlighter";
import { LONG_BLOCK, MarkdownStream, PARAGRAPH_PIECE, PIECE_LINES, type ParagraphInPieces, isParagraphInPieces, isTableInPieces, isQuoteInPieces, type ListInPieces, isListInPieces, maySetextHeading, type CodeInPieces, cachedMarkdownToHtml, codeLanguage, codeOf, linkAddress, loadHighlighter, markdownBlocks, markdownToHtml, AtStart } from "./markdown";

/** The same HTML, but for the newlines between tags. */
const tight = (html: string) => html.replace(/\s*\n\s*/g, "");

/** The HTML a renderer shows for a stream's blocks ("code" for code in pieces). */
const shownHtml = (blocks: ReturnType<MarkdownStream["blocks"]>): string =>
  blocks
    .map((b) => {
      if (typeof b === "string") return b;
      if (isQuoteInPieces(b)) return `<blockquote>${shownHtml(b.quote)}</blockquote>`;
      if (isParagraphInPieces(b)) return `<p>${b.pieces.join("")}${b.tail}</p>`;
      if (isListInPieces(b)) return `<${b.tag}${b.start === null ? "" : ` start="${b.start}"`}>${b.items.join("")}</${b.tag}>`;
      if (isTableInPieces(b)) return `<table><thead>${b.head}</thead><tbody>${b.rows.join("")}</tbody></table>`;
      return "code";
    })
    .join("");

// highlight.js loads on demand (see markdownLazy.test.ts); these tests start with it loaded.
beforeAll(() => loadHighlighter());

afterEach(() => {
  vi.restoreAllMocks();
});

/** Counts renders: marked's parser runs once for each text (or block) rendered. */
const countRenders = () => vi.spyOn(Parser, "parse");

function dom(text: string): HTMLElement {
  const div = document.createElement("div");
  div.innerHTML = markdownToHtml(text);
  return div;
}

describe("markdownToHtml", () => {
  it("renders Markdown: emphasis, lists, tables, quotes, inline code", () => {
    const root = dom("Some **bold** and *em* and `x < y`.\n\n- one\n- two\n\n> quoted\n\n| a | b |\n|---|:-:|\n| 1 | 2 |");
    expect(root.querySelector("strong")?.textContent).toBe("bold");
    expect(root.querySelector("em")?.textContent).toBe("em");
    expect(root.querySelector("p code")?.textContent).toBe("x < y");
    expect(Array.from(root.querySelectorAll("li")).map((l) => l.textContent)).toEqual(["one", "two"]);
    expect(root.querySelector("blockquote")?.textContent?.trim()).toBe("quoted");
    expect(root.querySelectorAll("table td")).toHaveLength(2);
    expect(root.querySelector("th[align=center]")?.textContent).toBe("b");
  });

  it("shows raw HTML as text: scripts, event handlers, iframes, forms and styles never become elements", () => {
    const hostile = [
      "<script>window.pwned = 1</script>",
      'Look: <img src="x" onerror="window.pwned = 1">',
      '<iframe src="https://evil.example/"></iframe>',
      '<form action="https://evil.example/"><input name="q"></form>',
      "<style>body { display: none }</style>",
      '<a href="https://evil.example/" onclick="window.pwned = 1">click</a>',
      '<svg><script>window.pwned = 1</script></svg>',
      "<b>not bold</b>",
    ].join("\n\n");
    const root = dom(hostile);
    for (const tag of ["script", "img", "iframe", "form", "input", "style", "svg", "b"]) {
      expect(root.querySelector(tag), tag).toBeNull();
    }
    for (const el of Array.from(root.querySelectorAll("*"))) {
      for (const attr of Array.from(el.attributes)) expect(attr.name.startsWith("on"), `${el.tagName} ${attr.name}`).toBe(false);
    }
    // What was written is still there to read, as text.
    expect(root.textContent).toContain("<script>window.pwned = 1</script>");
    expect(root.textContent).toContain('<img src="x" onerror="window.pwned = 1">');
    expect(root.textContent).toContain("<b>not bold</b>");
    expect((window as { pwned?: number }).pwned).toBeUndefined();
  });

  it("keeps only http(s) and mailto link addresses, with rel=noopener and no target", () => {
    const root = dom(
      [
        "[safe](https://example.com/a?b=1)",
        "[mail](mailto:someone@example.com)",
        "[js](javascript:alert(1))",
        "[js2](JaVaScRiPt:alert(1))",
        "[data](data:text/html,<script>alert(1)</script>)",
        "[file](file:///etc/passwd)",
        "<https://auto.example/>",
      ].join(" "),
    );
    const links = Array.from(root.querySelectorAll("a")).map((a) => [a.textContent, a.getAttribute("href")]);
    expect(links).toEqual([
      ["safe", "https://example.com/a?b=1"],
      ["mail", "mailto:someone@example.com"],
      ["js", null],
      ["js2", null],
      ["data", null],
      ["file", null],
      ["https://auto.example/", "https://auto.example/"],
    ]);
    for (const a of Array.from(root.querySelectorAll("a"))) {
      expect(a.getAttribute("rel")).toBe("noopener noreferrer");
      expect(a.hasAttribute("target")).toBe(false);
    }
  });

  it("never loads an image: it becomes a link named by its alt text", () => {
    const root = dom('![a chart](https://evil.example/leak?secret=1 "Chart") and ![](javascript:alert(1))');
    expect(root.querySelector("img")).toBeNull();
    const links = Array.from(root.querySelectorAll("a"));
    expect(links.map((a) => [a.textContent, a.getAttribute("href"), a.getAttribute("title")])).toEqual([
      ["Image: a chart", "https://evil.example/leak?secret=1", "Chart"],
      ["Image", null, null],
    ]);
  });

  it("highlights code in a known language and gives every block a labelled copy button", () => {
    const root = dom('```ts\nconst x: number = 1; // one\n```\n\n```\nplain <text>\n```');
    const blocks = root.querySelectorAll(".code-block");
    expect(blocks).toHaveLength(2);
    const ts = blocks[0].querySelector("pre code")!;
    expect(ts.className).toBe("hljs language-typescript");
    expect(ts.querySelector(".hljs-keyword")?.textContent).toBe("const");
    expect(ts.querySelector(".hljs-comment")?.textContent).toBe("// one");
    expect(ts.textContent).toBe("const x: number = 1; // one");
    expect(blocks[0].querySelector(".code-language")?.textContent).toBe("typescript");
    const plain = blocks[1].querySelector("pre code")!;
    expect(plain.querySelector("span")).toBeNull();
    expect(plain.textContent).toBe("plain <text>");
    const buttons = root.querySelectorAll("[data-testid=copy-code]");
    expect(buttons).toHaveLength(2);
    for (const button of Array.from(buttons)) {
      expect(button.tagName).toBe("BUTTON");
      expect(button.getAttribute("type")).toBe("button");
      expect(button.getAttribute("aria-label")).toBe("Copy code");
    }
    expect(codeOf(buttons[0])).toBe("const x: number = 1; // one");
    expect(codeOf(buttons[1])).toBe("plain <text>");
  });

  it("knows the common languages by their usual names", () => {
    const names = ["js", "ts", "json", "py", "python", "rust", "rs", "bash", "sh", "html", "css", "sql", "yaml", "yml", "go"];
    expect(names.map(codeLanguage)).toEqual([
      "javascript", "typescript", "json", "python", "python", "rust", "rust", "bash", "bash", "xml", "css", "sql", "yaml", "yaml", "go",
    ]);
    expect(codeLanguage("cobol")).toBeNull();
    expect(codeLanguage("")).toBeNull();
    expect(codeLanguage("Python {linenos}")).toBe("python");
  });

  it("renders an unfinished code fence (mid-stream) as code up to the end, highlighted", () => {
    const root = dom("Here:\n\n```python\ndef f(x):\n    return x +");
    expect(root.querySelector("p")?.textContent).toBe("Here:");
    const code = root.querySelector(".code-block pre code")!;
    expect(code.className).toContain("language-python");
    expect(code.textContent).toBe("def f(x):\n    return x +");
    expect(code.querySelector(".hljs-keyword")?.textContent).toBe("def");
  });

  it("keeps a soft line break as a newline in the text", () => {
    expect(dom("first\nsecond").querySelector("p")?.textContent).toBe("first\nsecond");
  });

  it("renders task lists without form inputs", () => {
    const root = dom("- [x] done\n- [ ] to do");
    expect(root.querySelector("input")).toBeNull();
    expect(Array.from(root.querySelectorAll("li")).map((l) => l.textContent?.trim())).toEqual(["☑ done", "☐ to do"]);
  });

  it("caches finished text: rendered once, however often it is asked for", () => {
    const renders = countRenders();
    const text = "cached **text** " + Math.random();
    const first = cachedMarkdownToHtml(text);
    expect(renders).toHaveBeenCalledOnce();
    expect(cachedMarkdownToHtml(text)).toBe(first);
    expect(cachedMarkdownToHtml(text)).toBe(first);
    expect(renders).toHaveBeenCalledOnce();
    expect(first).toBe(markdownToHtml(text));
    expect(renders).toHaveBeenCalledTimes(2);
  });
});

describe("linkAddress", () => {
  it("gives the address of the link clicked (or inside it), and null elsewhere", () => {
    const root = dom("[**bold link**](https://example.com/) and [bad](javascript:alert(1)) and text");
    expect(linkAddress(root.querySelector("strong")!)).toBe("https://example.com/");
    expect(linkAddress(root.querySelectorAll("a")[1])).toBeNull();
    expect(linkAddress(root.querySelector("p")!)).toBeNull();
  });
});

describe("setext headings", () => {
  it("are still headings, under one line or several", () => {
    const root = dom("Title\n===\n\nTwo\nlines\n---\n\n- a\n- b\n\ntext\n\n---");
    expect([...root.querySelectorAll("h1, h2")].map((h) => `${h.tagName} ${h.textContent}`)).toEqual(["H1 Title", "H2 Two\nlines"]);
    expect(root.querySelectorAll("li")).toHaveLength(2);
    expect(root.querySelector("hr")).not.toBeNull();
  });

  it("are never turned away by the quick check when marked's own pattern finds one", () => {
    const pattern = Lexer.rules.block.gfm.lheading;
    const parts = ["Title", "\n", "===", "---", "-", "=", " ", "   ", "    ", "\t", "- a", "> q", "\n\n", "\n \n", "text", "# h", "```", "| a |"];
    let seed = 7;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return (seed >>> 8) % n;
    };
    let found = 0;
    for (let i = 0; i < 50000; i++) {
      const src = Array.from({ length: 1 + random(8) }, () => parts[random(parts.length)]).join("");
      if (pattern.test(src)) {
        found++;
        expect(maySetextHeading(src), JSON.stringify(src)).toBe(true);
      }
    }
    expect(found).toBeGreaterThan(200);
  });
});

describe("markdownBlocks (streaming)", () => {
  it("renders the same as the whole text, block by block", () => {
    const text = "# Title\n\nSome *text* with [a link](https://example.com/).\n\n- a\n- b\n\n```rust\nfn main() {}\n```\n\n> quote\n\n<script>x()</script>";
    const blocks = markdownBlocks(text);
    expect(blocks).toHaveLength(6);
    expect(tight(blocks.join(""))).toBe(tight(markdownToHtml(text)));
  });

  it("renders finished blocks once: only the last block is rendered again while it grows", () => {
    const renders = countRenders();
    const intro = `Intro ${Math.random()}.`;
    const first = markdownBlocks(`${intro}\n\n\`\`\`py\nx = 1`);
    expect(renders).toHaveBeenCalledTimes(2);
    renders.mockClear();
    // The intro is not rendered again; the code block, finished now, is, and the new last block.
    const later = markdownBlocks(`${intro}\n\n\`\`\`py\nx = 1\ny = 2\n\`\`\`\n\nAnd then`);
    expect(renders).toHaveBeenCalledTimes(2);
    expect(later[0]).toBe(first[0]);
    expect(later[1]).not.toBe(first[1]);
    expect(later[1]).toContain("y");
    expect(later[2]).toBe("<p>And then</p>");
    renders.mockClear();
    // Only the last block, each time it grows.
    const again = markdownBlocks(`${intro}\n\n\`\`\`py\nx = 1\ny = 2\n\`\`\`\n\nAnd then some`);
    expect(renders).toHaveBeenCalledOnce();
    expect(again.slice(0, 2)).toEqual(later.slice(0, 2));
    expect(again[2]).toBe("<p>And then some</p>");
  });

  it("shows a growing text, fed to one stream a few characters at a time, as the text lexed whole", () => {
    const documents = [
      "Intro paragraph\nwith a lazy line.\n\nA heading\n===\n\nText\n---\n\n- one\n- two\n\n  continued\n- three\n\nAfter the list.",
      "| a | b |\n| - | - |\n| 1 | 2 |\n| 3 | 4 |\n\nBelow the table.\n\n    indented code\n    more\n\n> quoted\nlazy\n\n> again",
      "```ts\nconst x = 1;\n\nconst y = 2;\n```\n\n~~~\nunclosed fence\n\nstill code",
      "1. first\n2. second\n\n   para in item\n\n3. third\n\n<div>\nraw html\n</div>\n\n<!-- a comment\n\nstill the comment -->\n\n***\n\nend",
      "Windows\r\nline ends\r\n\r\n- a\r\n- b\r\n\r\nlast",
    ];
    for (const doc of documents) {
      const stream = new MarkdownStream();
      for (let end = 1; end <= doc.length; end += 3) {
        const text = doc.slice(0, end);
        expect(stream.blocks(text), JSON.stringify(text)).toEqual(markdownBlocks(text));
      }
      expect(stream.blocks(doc)).toEqual(markdownBlocks(doc));
    }
  });

  it("lexes only the end of a long growing text", () => {
    const stream = new MarkdownStream();
    const paragraphs = Array.from({ length: 50 }, (_, i) => `Paragraph ${i} ${Math.random()}.`);
    stream.blocks(paragraphs.join("\n\n"));
    const lexed = vi.spyOn(Lexer.prototype, "lex");
    const shown = stream.blocks(`${paragraphs.join("\n\n")} More`);
    expect(shown).toHaveLength(50);
    expect(shown[49]).toContain("More");
    const source = lexed.mock.calls[0][0];
    expect(source.length).toBeLessThan(100);
    lexed.mockRestore();
  });

  it("starts again when the text is not the last one grown", () => {
    const stream = new MarkdownStream();
    stream.blocks("First\n\nSecond\n\nThird\n\nFourth");
    expect(stream.blocks("Other\n\nText")).toEqual(markdownBlocks("Other\n\nText"));
  });

  it("sanitises each block", () => {
    const html = markdownBlocks("[x](javascript:alert(1))\n\n<iframe src=https://evil.example/></iframe>").join("");
    const root = document.createElement("div");
    root.innerHTML = html;
    expect(root.querySelector("iframe")).toBeNull();
    expect(root.querySelector("a")?.hasAttribute("href")).toBe(false);
  });
});

describe("a long code block being written", () => {
  /** `n` lines of Rust, each its own (a blank line every `blankEvery`th, when given). */
  const rust = (n: number, blankEvery = 0) =>
    Array.from({ length: n }, (_, i) => (blankEvery && i % blankEvery === blankEvery - 1 ? "" : `let v${i} = "a < ${i}"; // ${Math.random()}`)).join("\n");
  const codeOfPieces = (block: CodeInPieces) => {
    const el = document.createElement("code");
    el.innerHTML = block.pieces.join("");
    return el;
  };

  it("is shown in highlighted pieces that together are its code", () => {
    const code = rust(450);
    const blocks = markdownBlocks(`Intro.\n\n\`\`\`rust\n${code}`);
    expect(blocks[0]).toBe("<p>Intro.</p>");
    const block = blocks[1] as CodeInPieces;
    expect(block.language).toBe("rust");
    expect(block.cls).toBe("hljs language-rust");
    // No blank line: a piece ends at twice PIECE_LINES lines.
    expect(block.pieces).toHaveLength(Math.ceil(450 / (2 * PIECE_LINES)));
    const el = codeOfPieces(block);
    expect(el.textContent).toBe(code);
    expect(el.querySelector(".hljs-keyword")?.textContent).toBe("let");
    expect(Array.from(el.querySelectorAll("*")).every((e) => e.tagName === "SPAN")).toBe(true);
  });

  it("ends a piece at the first blank line after PIECE_LINES lines", () => {
    const code = rust(350, 30);
    const block = markdownBlocks(`\`\`\`rust\n${code}`)[0] as CodeInPieces;
    // Blank lines are lines 30, 60, … (1-based): the first at or after line 100 is line 120.
    const first = document.createElement("code");
    first.innerHTML = block.pieces[0];
    expect(first.textContent).toBe(code.split("\n").slice(0, 120).join("\n") + "\n");
    expect(codeOfPieces(block).textContent).toBe(code);
  });

  it("is rendered whole while short, and once its fence is closed", () => {
    const short = markdownBlocks(`\`\`\`rust\n${rust(PIECE_LINES - 1)}`);
    expect(typeof short[0]).toBe("string");
    expect(short[0]).toContain('class="code-block"');
    const code = rust(450);
    const closed = markdownBlocks(`\`\`\`rust\n${code}\n\`\`\`\n\nAfter.`);
    expect(typeof closed[0]).toBe("string");
    const root = document.createElement("div");
    root.innerHTML = closed[0] as string;
    expect(root.querySelector("pre code")?.textContent).toBe(code);
  });

  it("highlights only its last piece as it grows; the others never change", () => {
    const lines = rust(600).split("\n");
    const stream = new MarkdownStream();
    const highlights = vi.spyOn(highlighter, "highlight");
    let before: string[] = [];
    for (let n = 2 * PIECE_LINES + 1; n <= 600; n += 7) {
      highlights.mockClear();
      const block = stream.blocks(`\`\`\`rust\n${lines.slice(0, n).join("\n")}`)[0] as CodeInPieces;
      const settled = before.slice(0, -1);
      expect(block.pieces.slice(0, settled.length)).toEqual(settled);
      // Only the pieces not settled before: the last, and the one it has just followed.
      expect(highlights.mock.calls.length).toBe(block.pieces.length - settled.length);
      expect(highlights.mock.calls.length).toBeLessThanOrEqual(2);
      for (const [code] of highlights.mock.calls) expect(code.split("\n").length).toBeLessThanOrEqual(2 * PIECE_LINES + 1);
      before = block.pieces;
    }
    expect(before.length).toBe(3);
  });

  it("shows hostile code as text", () => {
    const hostile = `${rust(250)}\n<img src=x onerror="window.pwned = 1"><script>window.pwned = 1</script>\n${rust(10)}`;
    for (const fence of ["```rust", "```", "```nosuchlanguage"]) {
      const block = markdownBlocks(`${fence}\n${hostile}`)[0] as CodeInPieces;
      const el = codeOfPieces(block);
      expect(el.querySelector("img, script")).toBeNull();
      expect(el.textContent).toBe(hostile);
    }
  });
});

describe("a long paragraph being written", () => {
  /** Words of a paragraph: plain, and every kind of inline Markdown closed where it opens. */
  const vocabulary = [
    "word", "other", "**bold words**", "*emphasis*", "_under_", "`code span`", "[a link](https://example.com/a_b)",
    "snake_case", "5 * 3", "a<b", "Tom & Jerry", "www.example.com", "mail@example.com", "~~struck~~", "x\\*y",
    "end.\nNew line", "<span>raw</span>", "![an image](https://example.com/i.png)", "__strong__", "[ref]", "#hash",
  ];
  /** `n` words picked from the vocabulary by a fixed sequence. */
  const paragraph = (n: number) => Array.from({ length: n }, (_, i) => vocabulary[(i * 7 + (i >> 3)) % vocabulary.length]).join(" ");
  /** The paragraph's HTML as shown: its pieces, then its tail. */
  const joined = (block: ParagraphInPieces) => `<p>${block.pieces.join("")}${block.tail}</p>`;

  it("is shown in pieces that together render as the paragraph lexed whole, at every length", () => {
    const text = `Intro.\n\n${paragraph(1800)}`;
    expect(text.length).toBeGreaterThan(5 * LONG_BLOCK);
    const stream = new MarkdownStream();
    let inPieces = 0;
    for (let end = 1000; end <= text.length; end += 401) {
      const shown = stream.blocks(text.slice(0, end));
      const whole = markdownToHtml(text.slice(0, end));
      const last = shown.at(-1)!;
      if (isParagraphInPieces(last)) {
        inPieces++;
        expect(shown[0]).toBe("<p>Intro.</p>");
        expect(`${shown[0]}\n${joined(last)}`, JSON.stringify(text.slice(end - 40, end))).toBe(whole);
      } else {
        expect(end).toBeLessThan(LONG_BLOCK + 200);
      }
    }
    expect(inPieces).toBeGreaterThan(40);
  }, 60_000);

  it("renders only the end of the paragraph as it grows: the pieces, once cut, never change", () => {
    const text = paragraph(3000);
    const stream = new MarkdownStream();
    let before: string[] = [];
    const lexed = vi.spyOn(Lexer.prototype, "inlineTokens");
    for (let end = LONG_BLOCK + 10; end <= text.length; end += 97) {
      lexed.mockClear();
      const block = stream.blocks(text.slice(0, end)).at(-1) as ParagraphInPieces;
      expect(block.pieces.slice(0, before.length)).toEqual(before);
      // The text lexed is the end of the paragraph, not the whole.
      const longest = Math.max(...lexed.mock.calls.map(([src]) => src.length));
      if (before.length > 0) expect(longest).toBeLessThan(3 * PARAGRAPH_PIECE);
      expect(block.tail.length).toBeLessThan(3 * PARAGRAPH_PIECE);
      before = block.pieces;
    }
    expect(before.length).toBeGreaterThan(text.length / (3 * PARAGRAPH_PIECE));
  }, 60_000);

  it("is settled whole once it ends, and what follows is shown as blocks", () => {
    const long = paragraph(500);
    expect(long.length).toBeGreaterThan(LONG_BLOCK);
    const stream = new MarkdownStream();
    expect(isParagraphInPieces(stream.blocks(long).at(-1)!)).toBe(true);
    for (const next of ["\n\nAfter *it*.", "\n\n- a\n- b", "\n| a | b |\n| - | - |\n| 1 | 2 |", "\n# Heading"]) {
      const again = new MarkdownStream();
      again.blocks(long);
      for (let end = 1; end <= next.length; end++) {
        const text = long + next.slice(0, end);
        const shown = again.blocks(text);
        const html = shown.map((b) => (typeof b === "string" ? b : isParagraphInPieces(b) ? joined(b) : "code")).join("\n");
        expect(html, JSON.stringify(next.slice(0, end))).toBe(markdownToHtml(text));
      }
    }
  }, 30_000);

  it("stays in pieces over lines of its own, indented ones too, as the text lexed whole", () => {
    const lines = Array.from({ length: 400 }, (_, i) => `${i % 5 === 4 ? "     " : ""}line ${i} of *the* paragraph`).join("\n");
    const stream = new MarkdownStream();
    const lexed = vi.spyOn(Lexer.prototype, "lex");
    let inPieces = 0;
    for (let end = LONG_BLOCK + 10; end <= lines.length; end += 151) {
      lexed.mockClear();
      const shown = stream.blocks(lines.slice(0, end));
      const sources = lexed.mock.calls.map(([src]) => src);
      const last = shown.at(-1)!;
      expect(shown).toHaveLength(1);
      if (!isParagraphInPieces(last)) continue;
      expect(joined(last)).toBe(markdownToHtml(lines.slice(0, end)));
      // Once in pieces, only the end is lexed again: the line the last piece ends on and what follows.
      if (inPieces++ > 0) for (const src of sources) expect(src.length).toBeLessThan(3 * PARAGRAPH_PIECE);
    }
    expect(inPieces).toBeGreaterThan(30);
    lexed.mockRestore();
  }, 30_000);

  it("is cut into pieces also when written without spaces", () => {
    const sentence = "这是一个很长的段落，其中有**强调**和`代码`。日本語の文章もここにあります。";
    const text = sentence.repeat(400);
    const stream = new MarkdownStream();
    let before: string[] = [];
    for (let end = LONG_BLOCK + 10; end <= text.length; end += 211) {
      const block = stream.blocks(text.slice(0, end)).at(-1) as ParagraphInPieces;
      expect(block.pieces.slice(0, before.length)).toEqual(before);
      expect(block.tail.length).toBeLessThan(3 * PARAGRAPH_PIECE);
      before = block.pieces;
    }
    const block = stream.blocks(text).at(-1) as ParagraphInPieces;
    expect(joined(block)).toBe(markdownToHtml(text));
    expect(block.pieces.length).toBeGreaterThan(5);
  });

  it("becomes a heading when underlined, as the text lexed whole", () => {
    const long = paragraph(1200).replaceAll("\n", " ");
    const stream = new MarkdownStream();
    stream.blocks(long);
    const shown = stream.blocks(`${long}\n===`);
    expect(shown).toHaveLength(1);
    expect(shown[0]).toBe(markdownToHtml(`${long}\n===`));
    expect(shown[0]).toMatch(/^<h1>/);
  });

  it("still cuts pieces after a delimiter that is never closed, past a bound", () => {
    const text = `*${paragraph(4000).replace(/[*_`~[\]]/g, "")}`;
    const block = new MarkdownStream().blocks(text).at(-1) as ParagraphInPieces;
    expect(block.pieces.length).toBeGreaterThan(0);
    expect(block.tail.length).toBeLessThan(12000);
    const root = document.createElement("p");
    root.innerHTML = block.pieces.join("") + block.tail;
    expect(root.textContent).toBe(text.replaceAll("&", "&"));
  });

  it("sanitises each piece", () => {
    const hostile = `${paragraph(1000)} [x](javascript:alert(1)) <img src=x onerror="window.pwned = 1"> ${paragraph(300)}`;
    const block = new MarkdownStream().blocks(hostile).at(-1) as ParagraphInPieces;
    const root = document.createElement("p");
    root.innerHTML = block.pieces.join("") + block.tail;
    expect(root.querySelector("img, script, [onerror]")).toBeNull();
    for (const a of root.querySelectorAll("a")) expect(a.getAttribute("href") ?? "").toMatch(/^(https?:|mailto:|$)/);
  });
});

describe("a long list being written", () => {
  const item = (i: number) => `item ${i} with *some* \`code\` and [a link](https://example.com/${i})`;

  for (const [name, list, after] of [
    ["a bulleted list", Array.from({ length: 90 }, (_, i) => `- ${item(i)}`).join("\n"), "\n\nAfter the list."],
    ["a numbered list from 3", Array.from({ length: 90 }, (_, i) => `${i + 3}. ${item(i)}`).join("\n"), "\n\n- another list"],
    ["a loose list", Array.from({ length: 90 }, (_, i) => `- ${item(i)}`).join("\n\n"), "\n\nAfter."],
    ["a list with nested items and code", Array.from({ length: 50 }, (_, i) => `- ${item(i)}\n  - nested ${i}\n\n    \`\`\`\n    code ${i}\n    \`\`\``).join("\n"), "\n\nEnd."],
  ] as const) {
    it(`shows ${name} in items, as the text lexed whole, at every length`, () => {
      const text = `Intro.\n\n${list}${after}`;
      const stream = new MarkdownStream();
      let inPieces = 0;
      let before: string[] = [];
      for (let end = 10; end <= text.length; end += 131) {
        const shown = stream.blocks(text.slice(0, end));
        const last = shown.at(-1)!;
        if (isListInPieces(last)) {
          inPieces++;
          // Items once settled never change.
          const settled = Math.max(0, before.length - 1);
          expect(last.items.slice(0, settled)).toEqual(before.slice(0, settled));
          before = last.items;
        }
        expect(tight(shownHtml(shown)), JSON.stringify(text.slice(end - 30, end))).toBe(tight(markdownToHtml(text.slice(0, end))));
      }
      expect(tight(shownHtml(stream.blocks(text)))).toBe(tight(markdownToHtml(text)));
      expect(inPieces).toBeGreaterThan(5);
    }, 60_000);
  }

  it("lexes only its last items as it grows", () => {
    const list = Array.from({ length: 300 }, (_, i) => `- ${item(i)}`).join("\n");
    const stream = new MarkdownStream();
    stream.blocks(list.slice(0, 5000));
    const lexed = vi.spyOn(Lexer.prototype, "lex");
    for (let end = 5100; end < list.length; end += 100) {
      lexed.mockClear();
      expect(isListInPieces(stream.blocks(list.slice(0, end)).at(-1)!)).toBe(true);
      for (const [src] of lexed.mock.calls) expect(src.length).toBeLessThan(300);
    }
    lexed.mockRestore();
  });
});

describe("a long table being written", () => {
  const row = (i: number) => `| ${i} | *item* ${i} with \`code\` | [a link](https://example.com/${i}) \\| a pipe |`;
  const table = (rows: number) => ["| n | what | where |", "|---:|:---|:-:|", ...Array.from({ length: rows }, (_, i) => row(i))].join("\n");

  for (const [name, after] of [
    ["followed by a paragraph", "\n\nAfter the table."],
    ["followed at once by a heading", "\n# A heading\n\nText."],
    ["whose last row starts as a heading would, then a rule", "\n#1 | the last row |\n---\n\nEnd."],
  ] as const) {
    it(`shows a table ${name} row by row, as the text lexed whole, at every length`, () => {
      const text = `Intro.\n\n${table(70)}${after}`;
      const stream = new MarkdownStream();
      let inPieces = 0;
      let before: string[] = [];
      const check = (end: number) => {
        const shown = stream.blocks(text.slice(0, end));
        const table = shown.find(isTableInPieces);
        if (table) {
          inPieces++;
          // Rows once settled never change.
          const settled = Math.max(0, before.length - 1);
          expect(table.rows.slice(0, settled)).toEqual(before.slice(0, settled));
          before = table.rows;
        }
        expect(tight(shownHtml(shown)), JSON.stringify(text.slice(end - 30, end))).toBe(tight(markdownToHtml(text.slice(0, end))));
      };
      for (let end = 10; end <= text.length; end += 199) check(end);
      // Every length of its end, where the table ends and what follows begins.
      for (let end = text.length - after.length - 8; end <= text.length; end++) check(end);
      expect(inPieces).toBeGreaterThan(5);
    }, 60_000);
  }

  it("lexes only its last rows as it grows", () => {
    const text = table(300);
    const stream = new MarkdownStream();
    stream.blocks(text.slice(0, 5000));
    const lexed = vi.spyOn(Lexer.prototype, "lex");
    for (let end = 5100; end < text.length; end += 100) {
      lexed.mockClear();
      expect(isTableInPieces(stream.blocks(text.slice(0, end)).at(-1)!)).toBe(true);
      for (const [src] of lexed.mock.calls) expect(src.length).toBeLessThan(300);
    }
    lexed.mockRestore();
  });

  it("sanitises its rows as the whole table's", () => {
    const evil = "| <img src=x onerror=alert(1)> | [x](javascript:alert(1)) |";
    const text = ["| a | b |", "|---|---|", ...Array.from({ length: 100 }, () => evil)].join("\n");
    const shown = new MarkdownStream().blocks(text).at(-1)!;
    expect(isTableInPieces(shown)).toBe(true);
    const html = shownHtml([shown]);
    expect(html).not.toMatch(/<img|href="javascript/);
    expect(tight(html)).toBe(tight(markdownToHtml(text)));
  });
});

describe("a long quote being written", () => {
  const words = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `w${i + from}${i % 9 === 4 ? " *em*" : ""}`).join(" ");
  const lines = (n: number, width = 10) => Array.from({ length: n }, (_, i) => `> ${words(width, i * width)}`).join("\n");

  for (const [name, quote, after] of [
    ["one long paragraph", lines(100), "\n\nAfter the quote."],
    ["paragraphs, a list and a heading", `${lines(50)}\n>\n> # A heading\n>\n${Array.from({ length: 20 }, (_, i) => `> - item ${i}`).join("\n")}\n>\n${lines(50)}`, "\n\n- a list after"],
    ["lines without a marker: one its paragraph's, one after its code", `${lines(100)}\nlazy continuation\n> more\n> \`\`\`\n> code`, "\nnot in the quote\n\nEnd."],
  ] as const) {
    it(`shows a quote of ${name} as the text lexed whole, at every length`, () => {
      const text = `Intro.\n\n${quote}${after}`;
      const stream = new MarkdownStream();
      let inPieces = 0;
      const check = (end: number) => {
        const shown = stream.blocks(text.slice(0, end));
        if (shown.some(isQuoteInPieces)) inPieces++;
        expect(tight(shownHtml(shown)), JSON.stringify(text.slice(end - 30, end))).toBe(tight(markdownToHtml(text.slice(0, end))));
      };
      for (let end = 10; end <= text.length; end += 173) check(end);
      for (let end = text.length - after.length - 8; end <= text.length; end++) check(end);
      expect(inPieces).toBeGreaterThan(3);
    }, 60_000);
  }

  it("is lexed whole again once a line without a marker has come, though it came whole in one frame", () => {
    for (const [quote, more] of [
      [`${lines(100)}\n> \`\`\`\n> code`, "\nnot in the quote\n> more"],
      [lines(100), "\nlazy continuation\n> more"],
    ]) {
      const stream = new MarkdownStream();
      expect(isQuoteInPieces(stream.blocks(quote).at(-1)!)).toBe(true);
      expect(tight(shownHtml(stream.blocks(quote + more)))).toBe(tight(markdownToHtml(quote + more)));
    }
  });

  it("lexes only its last lines as it grows, its long paragraph in pieces", () => {
    const text = lines(200);
    const stream = new MarkdownStream();
    stream.blocks(text.slice(0, 5000));
    const lexed = vi.spyOn(Lexer.prototype, "lex");
    for (let end = 5100; end < text.length; end += 100) {
      lexed.mockClear();
      const last = stream.blocks(text.slice(0, end)).at(-1)!;
      expect(isQuoteInPieces(last) && isParagraphInPieces(last.quote.at(-1)!)).toBe(true);
      for (const [src] of lexed.mock.calls) expect(src.length).toBeLessThan(2000);
    }
    lexed.mockRestore();
  });
});

describe("a text finished after it was streamed", () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => (i % 11 === 3 ? `*w${i}*` : `w${i}`)).join(" ");
  const long = {
    paragraph: words(1200),
    list: Array.from({ length: 300 }, (_, i) => `${i + 2}. item ${i} with \`code\``).join("\n"),
    table: ["| a | b |", "|---|:-:|", ...Array.from({ length: 300 }, (_, i) => `| ${i} | *cell* ${i} |`)].join("\n"),
    quote: Array.from({ length: 150 }, (_, i) => `> ${words(8)} ${i}`).join("\n"),
  };

  it("keeps the blocks it was shown in, long ones ended or not, which render it as it renders whole", () => {
    for (const [name, block] of Object.entries(long)) {
      for (const after of ["", "\n\nAfter it.", "\n\n- a\n- b\n\nEnd."]) {
        const text = `Intro.\n\n${block}${after}`;
        const stream = new MarkdownStream();
        for (let end = 100; end < text.length; end += 997) stream.blocks(text.slice(0, end));
        const shown = stream.blocks(text.slice(0, text.length - 3));
        const finished = stream.finished(text);
        expect(finished, `${name} + ${JSON.stringify(after)}`).not.toBeNull();
        // The long block is the one shown while it was written: in pieces, its first ones the same.
        const inPieces = (list: typeof shown) => list.find((b) => typeof b !== "string");
        expect(inPieces(finished!), name).toBeDefined();
        expect(JSON.stringify(inPieces(finished!)).slice(0, 200)).toBe(JSON.stringify(inPieces(shown)).slice(0, 200));
        expect(tight(shownHtml(finished!)), `${name} + ${JSON.stringify(after)}`).toBe(tight(markdownToHtml(text)));
      }
    }
  }, 60_000);

  it("keeps a long code block's pieces when they are its code highlighted whole", () => {
    const lines = Array.from({ length: 450 }, (_, i) => (i % 120 === 110 ? "" : `let x${i} = "s${i}"; // note ${i}`));
    for (const after of ["", "\n```", "\n```\n\nAfter it."]) {
      const text = `Intro.\n\n\`\`\`rust\n${lines.join("\n")}${after}`;
      const stream = new MarkdownStream();
      for (let end = 100; end < text.length; end += 2999) stream.blocks(text.slice(0, end));
      stream.blocks(text.slice(0, text.length - 3));
      const finished = stream.finished(text);
      if (after.includes("After")) {
        // Followed by text, the block was settled whole as a string once the text went past it.
        expect(finished!.every((b) => typeof b === "string")).toBe(true);
        continue;
      }
      expect(finished, JSON.stringify(after)).not.toBeNull();
      const code = finished!.find((b): b is CodeInPieces => typeof b !== "string" && "cls" in b)!;
      expect(code.pieces.length).toBeGreaterThan(2);
      // What the pieces show together is what the reply rendered whole shows in its code block.
      const whole = markdownToHtml(text).match(/<code[^>]*>([\s\S]*)<\/code>/)![1];
      expect(code.pieces.join("")).toBe(whole);
      expect(code.pieces.join("")).toContain('<span class="hljs-string">"s449"</span>');
    }
  });

  it("is not kept as shown when it defines a reference link, ends in code coloured otherwise in pieces, or was not followed", () => {
    const stream = new MarkdownStream();
    const text = `${long.paragraph} [docs] more\n\n[docs]: https://example.com`;
    stream.blocks(text.slice(0, text.length - 40));
    expect(stream.finished(text)).toBeNull();
    // A comment open across the blank line where the first piece ends: in pieces, its second half
    // is read as code.
    const lines = Array.from({ length: 300 }, (_, i) => `let x${i} = ${i};`);
    lines.splice(PIECE_LINES, 0, "/* a comment", "", "still the comment */");
    const code = `\`\`\`rust\n${lines.join("\n")}`;
    const again = new MarkdownStream();
    const shown = again.blocks(code.slice(0, -20))[0] as CodeInPieces;
    expect(shown.pieces[1]).not.toContain("hljs-comment");
    expect(again.finished(code)).toBeNull();
    expect(markdownToHtml(code)).toContain('<span class="hljs-comment">/* a comment\n\nstill the comment */</span>');
    expect(new MarkdownStream().finished(long.table)).toBeNull();
    const other = new MarkdownStream();
    other.blocks(long.table);
    expect(other.finished(`Another text. ${long.table}`)).toBeNull();
  });
});

describe("marked's rules anchored at the start", () => {
  const rules = () =>
    [Lexer.rules.block, Lexer.rules.inline].flatMap((sets) =>
      Object.values(sets).flatMap((set) => Object.entries(set as Record<string, unknown>).filter((e): e is [string, RegExp] => e[1] instanceof RegExp)),
    );

  it("are tried at the start only, and match there as before", () => {
    const anchored = rules().filter(([, rule]) => rule instanceof AtStart);
    // Every block rule the lexer tries at a block's start, and the inline ones.
    for (const name of ["hr", "fences", "heading", "blockquote", "list", "html", "def", "table", "lheading", "paragraph", "code", "escape", "link", "del"]) {
      expect(anchored.map(([n]) => n), name).toContain(name);
    }
    const samples = [
      "---\n\nafter", "text\n---\n", "- item\n- item", "text then - item", "```js\ncode\n```", "> quote\n> more",
      "# Heading\ntext", "| a | b |\n|---|---|\n| 1 | 2 |", "[ref]: https://example.com\n", "<div>\nhtml\n</div>",
      "    indented code", "Setext\n===", "~~gone~~ text", "\\* escaped", "[a link](https://example.com) then", "",
      "plain text, and later --- and # and > and - and ``` and | a | and ~~x~~",
    ];
    for (const [name, rule] of anchored) {
      const plain = new RegExp(rule.source, rule.flags.replace("y", ""));
      for (const text of samples) {
        // Twice, as marked reuses its rules: the first match must not move the second's start.
        for (let i = 0; i < 2; i++) {
          const [a, b] = [rule.exec(text), plain.exec(text)];
          expect(a && [...a], `${name} on ${JSON.stringify(text)}`).toEqual(b && [...b]);
          expect(rule.test(text)).toBe(plain.test(text));
        }
      }
    }
  });

  it("leaves alone the rules that may match elsewhere: global ones, and ones with an alternative outside a group", () => {
    const inline = Lexer.rules.inline as unknown as Record<string, Record<string, RegExp>>;
    for (const [set, name] of [["gfm", "url"], ["normal", "tag"], ["normal", "blockSkip"], ["normal", "emStrongRDelimAst"]]) {
      expect(inline[set][name], name).toBeInstanceOf(RegExp);
      expect(inline[set][name], name).not.toBeInstanceOf(AtStart);
    }
  });
});

