// Assistant text as Markdown: parsed by marked, sanitised by DOMPurify, code highlighted by
// highlight.js (a handful of common languages), each code block given a copy button.
//
// The model's text is not trusted (a tool result can steer what it writes), so:
// - raw HTML in the text is shown as text, never interpreted;
// - the HTML marked makes is sanitised again with a small allowlist (no scripts, event handlers,
//   styles, frames, forms or inputs);
// - links keep only http(s) and mailto addresses, carry rel="noopener noreferrer" and no target;
//   a click on one never navigates: it copies the address (see `linkAddress`);
// - images are never loaded (a remote image is a way to send data out): each becomes a link to
//   its address, labelled by its alt text.
import DOMPurify from "dompurify";
import { Lexer, Marked, type Token, type TokensList, type Tokens } from "marked";
import type { HLJSApi } from "highlight.js";

/** highlight.js, once loaded (see `loadHighlighter`). */
let hljs: HLJSApi | null = null;
/** Bumped when what a block renders to changes (highlight.js loaded): nothing rendered before
 * is used again. */
let rendering = 0;
let loading: Promise<void> | null = null;
const whenLoaded = new Set<() => void>();

/** Loads highlight.js (once). Code blocks rendered before it is loaded are shown plain; those
 * waiting with `onHighlighterLoaded` are told to render again. */
export function loadHighlighter(): Promise<void> {
  loading ??= import("./highlighter")
    .then((m) => {
      hljs = m.default;
      messages.clear();
      blocks.clear();
      pieces.clear();
      rendering++;
      for (const listener of whenLoaded) listener();
    })
    .catch((e) => {
      loading = null;
      console.warn("code highlighting is not available:", e);
    });
  return loading;
}

/** Whether code blocks are highlighted now. */
export function highlighterLoaded(): boolean {
  return hljs !== null;
}

/** Calls `listener` when highlight.js has loaded; returns the way to stop. */
export function onHighlighterLoaded(listener: () => void): () => void {
  whenLoaded.add(listener);
  return () => whenLoaded.delete(listener);
}

/** The copy button's label, and what it says for a moment after copying. */
export const COPY_LABEL = "Copy";
export const COPIED_LABEL = "Copied";

/** Link addresses kept: http(s) and mailto. Anything else (javascript:, data:, file:, relative)
 * loses its href. */
const SAFE_URL = /^(?:https?:|mailto:)/i;

const ALLOWED_TAGS = [
  "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "ol",
  "p", "pre", "span", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
];
const ALLOWED_ATTR = ["href", "title", "class", "start", "align"];

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The highlight.js language for a fence's info string ("ts", "Python {linenos}"), if known. */
export function codeLanguage(info: string | undefined): string | null {
  const name = (info ?? "").trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  if (!name || !hljs) return null;
  const h = hljs;
  const language = h.getLanguage(name);
  return language ? (h.listLanguages().find((l) => h.getLanguage(l) === language) ?? name) : null;
}

/** Whether `src` may start with a setext heading ("Title" over a line of `=` or `-`): its
 * underline must come before the first blank line. marked's own pattern for it takes WebKit
 * close to a microsecond a character of the paragraph it is tried on (a 90 KB paragraph: 80 ms,
 * against 2 ms in V8), on every block, so most are turned away here first. */
export function maySetextHeading(src: string): boolean {
  const blank = /\n\s*?\n/.exec(src);
  const upToBlank = blank ? src.slice(0, blank.index + 1) : src;
  return /\n {0,3}(?:=+|-+)[ \t]*(?:\n|$)/.test(upToBlank);
}

/** A regex tried at the start of the text only (sticky, from 0): one of marked's rules that can
 * only match there anyway (see `anchorRules`). */
export class AtStart extends RegExp {
  exec(text: string): RegExpExecArray | null {
    this.lastIndex = 0;
    return super.exec(text);
  }
}

/** Whether a regex's source has an alternative (`|`) outside any group or class. */
function alternativeAtTop(source: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (inClass) inClass = c !== "]";
    else if (c === "[") inClass = true;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) return true;
  }
  return false;
}

/** Makes each of marked's rules that is anchored at the start of the text it is tried on (`^`
 * first, no `m`, `g` or `y` flag, no alternative outside a group) an `AtStart`: the same
 * matches, tried at the start only. JavaScriptCore (WebKit's engine) tries a failing anchored
 * regex at every position of the text after it, so every rule tried at a block's start cost a
 * scan of the whole rest of the reply, and a finished reply's lexing grew with its blocks times
 * its length: a 1,500-item list took WebKit 585 ms to lex (14 ms in V8), its `hr` rule, tried
 * at each item, 565 ms of it. The rules are marked's own objects, shared by every lexer of the
 * page. */
function anchorRules() {
  const made = new Map<RegExp, RegExp>();
  for (const sets of [Lexer.rules.block, Lexer.rules.inline]) {
    for (const rules of Object.values(sets) as Record<string, unknown>[]) {
      for (const [name, rule] of Object.entries(rules)) {
        if (!(rule instanceof RegExp) || rule instanceof AtStart) continue;
        if (!rule.source.startsWith("^") || /[gmy]/.test(rule.flags) || alternativeAtTop(rule.source)) continue;
        let anchored = made.get(rule);
        if (!anchored) {
          anchored = new AtStart(rule.source, `${rule.flags}y`);
          made.set(rule, anchored);
        }
        rules[name] = anchored;
      }
    }
  }
}
anchorRules();

const marked = new Marked({ gfm: true, breaks: false, async: false });
marked.use({
  tokenizer: {
    // false: marked's own tokenizer decides; undefined: no setext heading here.
    lheading: (src: string) => (maySetextHeading(src) ? false : undefined),
  },
  renderer: {
    // Raw HTML (a block or an inline tag) is shown as the text it is.
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(text);
    },
    code({ text, lang }: Tokens.Code) {
      if (!hljs && lang?.trim()) void loadHighlighter();
      const language = codeLanguage(lang);
      return `<pre><code class="${codeClass(language)}">${highlight(text, language)}</code></pre>\n`;
    },
    image({ href, title, text }: Tokens.Image) {
      const label = text.trim() ? `Image: ${text}` : "Image";
      const t = title ? ` title="${escapeHtml(title)}"` : "";
      return `<a href="${escapeHtml(href)}"${t}>${escapeHtml(label)}</a>`;
    },
    checkbox({ checked }: Tokens.Checkbox) {
      return checked ? "☑ " : "☐ ";
    },
  },
});

let purifier: ReturnType<typeof DOMPurify> | null = null;

function purify(): ReturnType<typeof DOMPurify> {
  if (purifier) return purifier;
  const p = DOMPurify(window);
  p.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName !== "A") return;
    const href = node.getAttribute("href");
    if (href !== null && !SAFE_URL.test(href.trim())) node.removeAttribute("href");
    node.setAttribute("rel", "noopener noreferrer");
    node.removeAttribute("target");
  });
  purifier = p;
  return p;
}

/** Wraps each code block with a bar holding its language and a copy button. */
function decorate(root: DocumentFragment) {
  const doc = root.ownerDocument ?? document;
  for (const pre of Array.from(root.querySelectorAll("pre"))) {
    const code = pre.querySelector("code");
    const language = code?.className.match(/\blanguage-([\w-]+)/)?.[1] ?? "";
    const block = doc.createElement("div");
    block.className = "code-block";
    const bar = doc.createElement("div");
    bar.className = "code-bar";
    const name = doc.createElement("span");
    name.className = "code-language";
    name.textContent = language;
    const button = doc.createElement("button");
    button.type = "button";
    button.className = "copy-code";
    button.setAttribute("data-testid", "copy-code");
    button.setAttribute("aria-label", "Copy code");
    button.textContent = COPY_LABEL;
    bar.append(name, button);
    pre.replaceWith(block);
    block.append(bar, pre);
  }
}

/** HTML from marked, sanitised (and serialised again, so that one text always makes the same
 * HTML), with the code blocks decorated. */
function finish(raw: string): string {
  return sanitized(raw.trim(), decorate);
}

function sanitized(raw: string, change?: (fragment: DocumentFragment) => void): string {
  const fragment = purify().sanitize(raw, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  });
  change?.(fragment);
  const holder = document.createElement("div");
  holder.append(fragment);
  return holder.innerHTML;
}

/** Markdown to sanitised HTML (a string for `{@html}`), with the code blocks decorated. */
export function markdownToHtml(text: string): string {
  return finish(marked.parse(text) as string);
}

/** A code block's `<code>` classes. */
function codeClass(language: string | null): string {
  return language ? `hljs language-${language}` : "hljs";
}

/** The escaped, highlighted HTML of `code` in `language` (none: plain). */
function highlight(code: string, language: string | null): string {
  return language && hljs ? hljs.highlight(code, { language, ignoreIllegals: true }).value : escapeHtml(code);
}

/** A small least-recently-used map of rendered HTML by source text. */
class Rendered {
  #map = new Map<string, string>();
  constructor(readonly size: number) {}

  clear() {
    this.#map.clear();
  }

  get(source: string, render: (source: string) => string): string {
    const hit = this.#map.get(source);
    if (hit !== undefined) {
      this.#map.delete(source);
      this.#map.set(source, hit);
      return hit;
    }
    const html = render(source);
    this.#map.set(source, html);
    if (this.#map.size > this.size) this.#map.delete(this.#map.keys().next().value as string);
    return html;
  }
}

/** Finished messages' HTML: the transcript's windowing re-creates a message's view each time
 * it scrolls back, and finished text never changes. */
const messages = new Rendered(500);
/** Finished blocks of streaming messages. */
const blocks = new Rendered(1000);

/** Pieces of long code blocks being written, by language and code. */
const pieces = new Rendered(1000);

/** `markdownToHtml`, remembered for the last 500 texts. Only for finished text: a streaming
 * message changes on every delta (see `markdownBlocks`). */
export function cachedMarkdownToHtml(text: string): string {
  return messages.get(text, markdownToHtml);
}

/** A code block still being written, shown in pieces of lines: each piece is highlighted once
 * it is followed by more lines, so a frame costs the last piece, not the whole block (a 1,500-line
 * block highlighted and laid out whole took WebKit 40 ms a frame). Each piece is highlighted on
 * its own, so a comment or string across a piece's end may be coloured wrongly until the reply
 * is finished and the block highlighted whole (see `MarkdownStream.finished`). The renderer wraps
 * the pieces as `decorate` wraps a block. */
export type CodeInPieces = {
  /** The block's code. */
  code: string;
  /** The highlight.js language ("" when none is known). */
  language: string;
  /** The `<code>` element's classes. */
  cls: string;
  /** The sanitised HTML of each piece: together, the block's code. */
  pieces: string[];
};

/** A long paragraph still being written, shown in pieces of its text: each piece is lexed,
 * rendered and sanitised once, when it is cut from the paragraph's end, so a frame costs the
 * last few hundred characters, not the whole paragraph (a 90 KB paragraph took WebKit 20 ms a
 * frame to lex and sanitise whole). The renderer only appends to the paragraph while it grows
 * (see `growingParagraph`): WebKit lays out only what was appended, where replacing any part
 * of a long paragraph lays it all out again (10 ms a frame at 90 KB). */
export type ParagraphInPieces = {
  /** The sanitised inline HTML of each piece cut from the paragraph, in order. */
  pieces: string[];
  /** The sanitised inline HTML of the text after the last piece. */
  tail: string;
};

/** A long list still being written: each item, once followed by another, is lexed, rendered
 * and sanitised once, so a frame costs the last item, not the whole list (a 1,500-item list
 * re-lexed and replaced whole fell 750 ms behind a stream of 500 words a second). */
export type ListInPieces = {
  /** "ol" or "ul", and the `<ol>`'s first number when not 1. */
  tag: "ol" | "ul";
  start: number | null;
  /** The sanitised HTML of each `<li>`, the last one included. */
  items: string[];
};

/** A long table still being written: each row, once its line is complete, is lexed, rendered
 * and sanitised once, so a frame costs the last row, not the whole table (a 1,500-row table
 * re-lexed and replaced whole fell 200 ms behind a stream of 500 words a second). */
export type TableInPieces = {
  /** The sanitised HTML of the header's `<tr>`. */
  head: string;
  /** The sanitised HTML of each body `<tr>`, the last one included. */
  rows: string[];
};

/** A long quote still being written: its content's blocks, kept as it grows as a reply's are
 * (a long paragraph in it in pieces, and so on), so a frame costs the quote's last blocks, not
 * the whole quote (a 30 KB quote lexed and replaced whole fell 45 ms behind a stream of 500
 * words a second, and more as it grew). */
export type QuoteInPieces = {
  /** The quote's blocks. */
  quote: StreamBlock[];
};

/** A streaming text's top-level block: its sanitised HTML, or a long code block, paragraph,
 * list, table or quote in pieces. */
export type StreamBlock = string | CodeInPieces | ParagraphInPieces | ListInPieces | TableInPieces | QuoteInPieces;

/** Whether `block` is a long paragraph being written (see `ParagraphInPieces`). */
export function isParagraphInPieces(block: StreamBlock): block is ParagraphInPieces {
  return typeof block !== "string" && "tail" in block;
}

/** Whether `block` is a long list being written (see `ListInPieces`). */
export function isListInPieces(block: StreamBlock): block is ListInPieces {
  return typeof block !== "string" && "items" in block;
}

/** Whether `block` is a long table being written (see `TableInPieces`). */
export function isTableInPieces(block: StreamBlock): block is TableInPieces {
  return typeof block !== "string" && "rows" in block;
}

/** Whether `block` is a long quote being written (see `QuoteInPieces`). */
export function isQuoteInPieces(block: StreamBlock): block is QuoteInPieces {
  return typeof block !== "string" && "quote" in block;
}

/** A quote's line: its marker, and the space after it that is not its content. (A tab after
 * the marker counts as spaces, which this does not follow: such a quote is lexed whole.) */
const QUOTE_MARKER = /^ {0,3}>(?!\t)[ \t]?/;

/** Table rows' sanitised HTML, one string (the `<tr>` and a newline) each: `rows` is marked's
 * HTML of one or more rows, sanitised inside a table (a `<tr>` alone is no HTML). */
function tableRows(rows: string, section: "thead" | "tbody"): string[] {
  const out: string[] = [];
  sanitized(`<table><${section}>${rows}</${section}></table>`, (fragment) => {
    for (const tr of Array.from(fragment.querySelectorAll("tr"))) out.push(`${tr.outerHTML}\n`);
  });
  return out;
}

/** The marker that starts a list item ("-", "*", "+", or an ordered list's "." or ")"). */
function bulletOf(item: Tokens.ListItem | undefined): string {
  const marker = /^\s*(?:[-*+]|\d{1,9}[.)])/.exec(item?.raw ?? "")?.[0].trim() ?? "";
  return marker.length > 1 ? marker.slice(-1) : marker;
}

/** A paragraph, list or table being written this long (characters) is shown in pieces. */
export const LONG_BLOCK = 4000;
/** A piece is cut from a long paragraph's end once what follows the last piece is this long. */
export const PARAGRAPH_PIECE = 1500;
/** Past this many characters after the last piece, a piece is cut even where an unclosed `*`,
 * `_`, `` ` `` or `[` before the cut might yet be closed (it would then show as typed until
 * the reply is finished and rendered whole). */
const PARAGRAPH_TAIL_MAX = 12000;

const WORD_START = /[\p{L}\p{N}]/u;
const PUNCTUATION = /[\p{P}\p{S}]/u;
const SPACE = /\s/u;
/** Characters of scripts written without spaces between words: a cut may fall between two. */
const IDEOGRAPHIC = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/** Where `src` (inline Markdown following a cut, or a paragraph's start) may be cut so that
 * what comes before renders alone as it would followed by any text: the last place between
 * two words on one line (after a single space, before a letter or digit; or between two
 * Chinese or Japanese characters) that is inside plain text, with nothing before it (outside a
 * finished span, link or code) that a later character could still close: an emphasis or
 * strikethrough delimiter that can open, a backtick or a bracket. Returns 0 when there is none. With `force`, the unclosed characters are ignored. */
export function paragraphCut(src: string, tokens: Token[], force = false): number {
  let best = 0;
  let at = 0;
  let brackets = 0;
  for (const token of tokens) {
    const start = at;
    at += token.raw.length;
    if (token.type !== "text") continue;
    for (let i = start; i < at; i++) {
      const c = src[i];
      const between =
        i > start &&
        ((src[i - 1] === " " && i >= 2 && !SPACE.test(src[i - 2]) && WORD_START.test(c)) || (IDEOGRAPHIC.test(src[i - 1]) && IDEOGRAPHIC.test(c)));
      if (between && (force || brackets === 0)) best = i;
      if (force) continue;
      if (c === "`") return best;
      // A bracket not closed might yet begin a link.
      if (c === "[") brackets++;
      else if (c === "]" && brackets > 0) brackets--;
      if (c === "*" || c === "_" || c === "~") {
        let end = i;
        while (src[end + 1] === c) end++;
        const before = i > 0 ? src[i - 1] : " ";
        const after = src[end + 1];
        if (after === undefined) return best;
        const leftFlanking = !SPACE.test(after) && (!PUNCTUATION.test(after) || SPACE.test(before) || PUNCTUATION.test(before));
        const rightFlanking = !SPACE.test(before) && (!PUNCTUATION.test(before) || SPACE.test(after) || PUNCTUATION.test(after));
        const opens = c === "_" ? leftFlanking && (!rightFlanking || PUNCTUATION.test(before)) : leftFlanking;
        if (opens) return best;
        i = end;
      }
    }
  }
  return best;
}

/** Lines a piece of a code block being written has at least: it ends at the first blank line
 * after that many (where a highlighter's state is most often clean), or at twice that many. */
export const PIECE_LINES = 100;

/** The long code block being written that `token` is (the reply's last block) in pieces, or
 * null when it is short enough to render whole. Where a piece ends depends only on the lines
 * before it, so a piece, once followed by another, never changes. */
function codeInPieces(token: Tokens.Code): CodeInPieces | null {
  const code = token.text;
  const ends: number[] = [];
  let lines = 0;
  let at = 0;
  for (let nl = code.indexOf("\n"); nl >= 0; nl = code.indexOf("\n", at)) {
    const blank = !/\S/.test(code.slice(at, nl));
    at = nl + 1;
    lines++;
    if ((lines >= PIECE_LINES && blank) || lines >= 2 * PIECE_LINES) {
      ends.push(at);
      lines = 0;
    }
  }
  if (ends.length === 0) return null;
  if (!hljs && token.lang?.trim()) void loadHighlighter();
  const language = codeLanguage(token.lang);
  const out: string[] = [];
  let start = 0;
  for (const end of ends) {
    const text = code.slice(start, end);
    out.push(pieces.get(`${language ?? ""}\n${text}`, () => highlightedPiece(text, language)));
    start = end;
  }
  if (start < code.length) out.push(highlightedPiece(code.slice(start), language));
  return { code, language: language ?? "", cls: codeClass(language), pieces: out };
}

/** `code` highlighted and sanitised as a piece of a code block in pieces is. */
function highlightedPiece(code: string, language: string | null): string {
  return purify().sanitize(highlight(code, language), { ALLOWED_TAGS: ["span"], ALLOWED_ATTR: ["class"] }) as string;
}

/** Whether `block`'s pieces, each highlighted on its own, are its code highlighted whole: no
 * comment, string or other span crosses a piece's end. */
function piecesAreWhole(block: CodeInPieces): boolean {
  return highlightedPiece(block.code, block.language || null) === block.pieces.join("");
}

/** Blocks at the end of streaming text that are lexed again as the text grows: text appended
 * can change the last block (a paragraph becomes a heading or a table, a list or a fence grows),
 * never one before it; one more is kept for safety. */
const OPEN_BLOCKS = 2;

/** Text still being written, as the sanitised HTML of each top-level block (paragraph, list,
 * code block…), kept for one message as it grows. Only the last blocks can still change: the
 * others are lexed and rendered once and remembered, so each frame of a long reply costs its
 * last blocks, not the whole text (lexing the whole of a 75 KB reply takes WebKit a quarter of
 * a second). A renderer that keeps one node per block replaces only the last one. A reference
 * link defined after its use may show unresolved until the message is finished. */
export class MarkdownStream {
  /** The text last rendered (with its line breaks normalised). */
  #text = "";
  /** The blocks that can no longer change: their HTML, or a long list, table or paragraph in
   * pieces kept as it was shown while written (so its nodes are kept when it ends). */
  #settled: StreamBlock[] = [];
  /** Where the blocks that may still change start in `#text`. */
  #open = 0;
  /** Reference links defined so far. */
  #links: TokensList["links"] = Object.create(null);
  /** `rendering` when the settled blocks were rendered. */
  #rendering = rendering;
  /** The long paragraph being written, when the text ends in one: where it starts in `#text`,
   * where its last piece ends, and its pieces' HTML. */
  #long: { start: number; cut: number; pieces: string[] } | null = null;
  /** Set while the text is lexed again after a long paragraph or list could not be shown in pieces. */
  #noLong = false;
  /** The long list being written, when the text ends in one: where its items not yet settled
   * start in `#text`, the settled items' HTML, and what every later item must share with them. */
  #list: { cut: number; items: string[]; tag: "ol" | "ul"; start: number | null; bullet: string; loose: boolean; tasks: boolean } | null = null;
  /** The long table being written, when the text ends in one: its header and delimiter lines,
   * its number of columns, where its rows not yet settled start in `#text`, and the header's
   * and the settled rows' HTML. */
  #table: { prefix: string; columns: number; cut: number; head: string; rows: string[] } | null = null;
  /** The long quote being written, when the text ends in one: where it starts in `#text`, where
   * its lines not yet read start, its content so far (its complete lines without their markers),
   * and the stream that keeps its blocks. */
  #quote: { start: number; cut: number; content: string; stream: MarkdownStream } | null = null;

  /** The blocks while the text ends in a long quote (`#quote`), or null when a line follows
   * that is not one of its own: a blank line ends it (then settled, its blocks kept); any
   * other (a lazy continuation of its paragraph, which this does not follow) has it lexed
   * whole again. */
  #quoteBlocks(text: string): StreamBlock[] | null {
    const quote = this.#quote!;
    let at = quote.cut;
    for (let nl = text.indexOf("\n", at); nl >= 0; nl = text.indexOf("\n", at)) {
      const line = text.slice(at, nl);
      const marker = QUOTE_MARKER.exec(line);
      if (!marker) {
        if (/\S/.test(line)) return null;
        const token = marked.lexer(text.slice(quote.start, at))[0];
        if (token?.type !== "blockquote") return null;
        this.#settled.push({ quote: quote.stream.blocks(quote.content) });
        this.#open = at;
        this.#quote = null;
        return null;
      }
      quote.content += `${line.slice(marker[0].length)}\n`;
      at = nl + 1;
    }
    quote.cut = at;
    // The line being written: the quote's, or not yet known to be another's (up to 3 spaces).
    const partial = text.slice(at);
    const marker = QUOTE_MARKER.exec(partial);
    if (!marker && !/^ {0,3}$/.test(partial)) return null;
    const content = marker ? quote.content + partial.slice(marker[0].length) : quote.content;
    return [...this.#settled, { quote: quote.stream.blocks(content) }];
  }

  /** The blocks while the text ends in a long table (`#table`), or null when what follows its
   * settled rows is no longer more of it (then lexed again with its blocks; a table that has
   * ended is settled whole). */
  #tableBlocks(text: string): StreamBlock[] | null {
    const table = this.#table!;
    const from = table.cut;
    // The rows are lexed after the header and delimiter lines, which make them a table's.
    const tokens = marked.lexer(table.prefix + text.slice(from));
    const rest = tokens[0] as Tokens.Table | undefined;
    if (rest?.type !== "table" || rest.header.length !== table.columns || !rest.raw.startsWith(table.prefix)) return null;
    const parser = new marked.Parser(marked.defaults);
    const rendered = (rows: Tokens.TableCell[][]) =>
      rows.map((cells) => parser.renderer.tablerow({ text: cells.map((cell) => parser.renderer.tablecell(cell)).join("") })).join("");
    // A row whose line is complete can no longer change: a row is its line alone.
    const lines = rest.raw.slice(table.prefix.length).split("\n");
    const complete = Math.min(rest.rows.length, lines.length - 1);
    if (complete > 0) {
      table.rows.push(...tableRows(rendered(rest.rows.slice(0, complete)), "tbody"));
      for (let i = 0; i < complete; i++) table.cut += lines[i].length + 1;
    }
    // It has ended once a line after it is complete and none of its rows.
    const after = tokens.slice(1).filter((t) => t.type !== "space");
    if (after.length > 0 && rest.raw.length < table.prefix.length + text.length - from) {
      const next = text.slice(from + rest.raw.length - table.prefix.length);
      if (next.includes("\n") && complete === rest.rows.length) {
        this.#settled.push({ head: table.head, rows: table.rows });
        this.#open = from + rest.raw.length - table.prefix.length;
        this.#table = null;
        return null;
      }
    }
    const last = complete < rest.rows.length ? tableRows(rendered(rest.rows.slice(complete)), "tbody") : [];
    const shown: StreamBlock[] = [...this.#settled, { head: table.head, rows: [...table.rows, ...last] }];
    // A line after it still being written (a heading or a list about to start) shows as such.
    for (const token of after) shown.push(finish(marked.parser(Object.assign([token], { links: this.#links }) as TokensList)));
    return shown;
  }

  /** The blocks while the text ends in a long list (`#list`), or null when what follows its
   * settled items is no longer more of it alike (then lexed again with its blocks; a list
   * that has ended is settled whole). */
  #listBlocks(text: string): StreamBlock[] | null {
    const list = this.#list!;
    const tokens = marked.lexer(text.slice(list.cut));
    const rest = tokens[0] as Tokens.List | undefined;
    if (rest?.type !== "list" || (rest.ordered ? "ol" : "ul") !== list.tag || bulletOf(rest.items[0]) !== list.bullet) return null;
    if (rest.loose !== list.loose) {
      // A list loose so far stays loose (its last items alone may not show it); one tight so
      // far that turns loose is rendered again whole.
      if (!list.loose || list.tasks || rest.items.some((item) => item.task)) return null;
      for (const item of rest.items) {
        item.loose = true;
        for (const token of item.tokens) if (token.type === "text") (token as Token).type = "paragraph";
      }
    }
    const parser = new marked.Parser(marked.defaults);
    const item = (token: Tokens.ListItem) => sanitized(parser.renderer.listitem(token), decorate);
    const from = list.cut;
    const ended = tokens.slice(1).some((t) => t.type !== "space");
    const settle = ended ? rest.items.length : rest.items.length - 1;
    for (let i = 0; i < settle; i++) {
      const token = rest.items[i];
      // A blank line after an item makes the whole list loose.
      if (!list.loose && !ended && /\n[ \t]*\n\s*$/.test(token.raw)) return null;
      list.items.push(item(token));
      list.cut += token.raw.length;
    }
    if (ended) {
      this.#settled.push({ tag: list.tag, start: list.start, items: list.items });
      this.#open = from + rest.raw.length;
      this.#list = null;
      return null;
    }
    return [...this.#settled, { tag: list.tag, start: list.start, items: [...list.items, item(rest.items.at(-1)!)] }];
  }

  /** Inline Markdown to sanitised HTML, with the reference links defined so far. */
  #inline(src: string): string {
    return sanitized(marked.Parser.parseInline(this.#inlineTokens(src), marked.defaults));
  }

  #inlineTokens(src: string): Token[] {
    const lexer = new marked.Lexer(marked.defaults);
    lexer.tokens.links = this.#links;
    return lexer.inlineTokens(src);
  }

  /** The blocks while the text ends in a long paragraph (`#long`): the settled ones and the
   * paragraph in pieces; or null when the text after the last piece no longer continues it
   * on one line or a few (the paragraph is then settled when it has ended, or lexed again
   * with its blocks). */
  #longBlocks(text: string): StreamBlock[] | null {
    const long = this.#long!;
    let rest = text.slice(long.cut);
    if (rest.includes("\n")) {
      // Its lines must still be the paragraph's: lexed with the line the last piece ends on
      // (a table's header row, a setext heading's text), or a stand-in when that is long,
      // after a stand-in first line when it is not the paragraph's first (an indented line
      // goes on a paragraph, where alone it would be code).
      const lineStart = Math.max(long.start, text.lastIndexOf("\n", long.cut - 1) + 1);
      const line = long.cut - lineStart > 1000 ? "x " : text.slice(lineStart, long.cut);
      const before = lineStart > long.start ? `x\n${line}` : line;
      const tokens = marked.lexer(before + rest);
      if (tokens[0]?.type !== "paragraph") return null;
      if (tokens.length > 1) {
        // It has ended: settled whole, and what follows is lexed as before.
        const end = long.cut + tokens[0].raw.length - before.length;
        const last = this.#inline(text.slice(long.cut, end).replace(/\n$/, ""));
        this.#settled.push({ pieces: [...long.pieces, last], tail: "" });
        this.#open = end;
        this.#long = null;
        return null;
      }
    }
    if (rest.length >= PARAGRAPH_PIECE) {
      const tokens = this.#inlineTokens(rest);
      const cut = paragraphCut(rest, tokens) || (rest.length >= PARAGRAPH_TAIL_MAX ? paragraphCut(rest, tokens, true) : 0);
      if (cut > 0) {
        long.pieces.push(this.#inline(rest.slice(0, cut)));
        long.cut += cut;
        rest = rest.slice(cut);
      }
    }
    return [...this.#settled, { pieces: long.pieces.slice(), tail: this.#inline(rest.replace(/\n$/, "")) }];
  }

  /** `blocks` of `text` with no long paragraph or list in pieces: what is not settled is lexed
   * again, when a long block found could not be shown in pieces after all. */
  #blocksNotInPieces(text: string): StreamBlock[] {
    this.#noLong = true;
    try {
      return this.blocks(text);
    } finally {
      this.#noLong = false;
    }
  }

  blocks(source: string): StreamBlock[] {
    const text = source.includes("\r") ? source.replace(/\r\n?/g, "\n") : source;
    // Anything but more text at the end (an edit, a new message), or code blocks to highlight
    // now, starts again.
    if (!text.startsWith(this.#text) || this.#rendering !== rendering) {
      this.#rendering = rendering;
      this.#settled = [];
      this.#open = 0;
      this.#links = Object.create(null);
      this.#long = null;
      this.#list = null;
      this.#table = null;
      this.#quote = null;
    }
    this.#text = text;
    if (this.#long) {
      const shown = this.#longBlocks(text);
      if (shown) return shown;
      this.#long = null;
    }
    if (this.#list) {
      const shown = this.#listBlocks(text);
      if (shown) return shown;
      this.#list = null;
    }
    if (this.#table) {
      const shown = this.#tableBlocks(text);
      if (shown) return shown;
      this.#table = null;
    }
    if (this.#quote) {
      const shown = this.#quoteBlocks(text);
      if (shown) return shown;
      this.#quote = null;
    }
    const tokens = marked.lexer(text.slice(this.#open));
    // The first definition of a reference wins, as when the text is lexed whole.
    for (const [label, link] of Object.entries(tokens.links)) if (!(label in this.#links)) this.#links[label] = link;
    const one = (token: Token) => finish(marked.parser(Object.assign([token], { links: this.#links }) as TokensList));
    // Each token's `raw` is what it took of the text; should they not add up, nothing settles.
    const whole = tokens.reduce((n, t) => n + t.raw.length, 0) === text.length - this.#open;
    const content = whole ? tokens.filter((t) => t.type !== "space").length : Infinity;
    const open: StreamBlock[] = [];
    let seen = 0;
    for (const token of tokens) {
      if (token.type !== "space") {
        seen++;
        if (seen <= content - OPEN_BLOCKS) {
          // Followed by enough blocks to be final: rendered once, lexed no more.
          this.#settled.push(blocks.get(token.raw, () => one(token)));
          this.#open += token.raw.length;
          continue;
        }
        if (token === tokens.at(-1) && token.type === "code") {
          const inPieces = codeInPieces(token as Tokens.Code);
          if (inPieces) {
            open.push(inPieces);
            continue;
          }
        }
        if (whole && !this.#noLong && token === tokens.at(-1) && token.type === "paragraph" && token.raw.length >= LONG_BLOCK) {
          // A long paragraph being written: the blocks before it can no longer change (text
          // appended changes the last block only); it is shown in pieces from now on.
          this.#settled.push(...open);
          this.#open = text.length - token.raw.length;
          this.#long = { start: this.#open, cut: this.#open, pieces: [] };
          const shown = this.#longBlocks(text);
          if (shown) return shown;
          // (Not reached: the paragraph is the text's last block.)
          this.#long = null;
          return this.#blocksNotInPieces(text);
        }
        if (!this.#noLong && token === tokens.at(-1) && token.type === "list" && token.raw.length >= LONG_BLOCK) {
          // A long list being written: shown item by item from now on.
          const before = tokens.slice(0, -1).reduce((n, t) => n + t.raw.length, 0);
          // (A list's `raw` is trimmed at its end: only its start is checked.)
          if (text.startsWith((token as Tokens.List).items[0]?.raw ?? "\0", this.#open + before)) {
            const list = token as Tokens.List;
            this.#settled.push(...open);
            this.#open += before;
            this.#list = {
              cut: this.#open,
              items: [],
              tag: list.ordered ? "ol" : "ul",
              start: list.ordered && list.start !== 1 && list.start !== "" ? Number(list.start) : null,
              bullet: bulletOf(list.items[0]),
              loose: list.loose,
              tasks: list.items.some((item) => item.task),
            };
            const shown = this.#listBlocks(text);
            if (shown) return shown;
            this.#list = null;
            return this.#blocksNotInPieces(text);
          }
        }
        if (!this.#noLong && token === tokens.at(-1) && token.type === "table" && token.raw.length >= LONG_BLOCK) {
          // A long table being written: shown row by row from now on.
          const before = tokens.slice(0, -1).reduce((n, t) => n + t.raw.length, 0);
          const header = /^[^\n]*\n[^\n]*\n/.exec(token.raw)?.[0];
          const first = (token as Tokens.Table).header;
          if (header && text.startsWith(header, this.#open + before)) {
            this.#settled.push(...open);
            this.#open += before;
            const parser = new marked.Parser(marked.defaults);
            const head = parser.renderer.tablerow({ text: first.map((cell) => parser.renderer.tablecell(cell)).join("") });
            this.#table = {
              prefix: header,
              columns: first.length,
              cut: this.#open + header.length,
              head: tableRows(head, "thead")[0] ?? "",
              rows: [],
            };
            const shown = this.#tableBlocks(text);
            if (shown) return shown;
            this.#table = null;
            return this.#blocksNotInPieces(text);
          }
        }
        if (!this.#noLong && token === tokens.at(-1) && token.type === "blockquote" && token.raw.length >= LONG_BLOCK) {
          // A long quote being written, each of its lines a quote's (none a lazy continuation):
          // its content kept as a reply's from now on.
          const before = tokens.slice(0, -1).reduce((n, t) => n + t.raw.length, 0);
          if (text.startsWith(token.raw, this.#open + before) && token.raw.split("\n").every((line) => QUOTE_MARKER.test(line))) {
            this.#settled.push(...open);
            this.#open += before;
            this.#quote = { start: this.#open, cut: this.#open, content: "", stream: new MarkdownStream() };
            const shown = this.#quoteBlocks(text);
            if (shown) return shown;
            this.#quote = null;
            return this.#blocksNotInPieces(text);
          }
        }
        open.push(seen === content || token === tokens.at(-1) ? one(token) : blocks.get(token.raw, () => one(token)));
      } else if (seen <= content - OPEN_BLOCKS) {
        this.#open += token.raw.length;
      }
    }
    return [...this.#settled, ...open];
  }

  /** The blocks of `source` once it is finished, as this stream showed it while it was written
   * (only its end lexed again), so a renderer keeps the nodes it has; or null when the text
   * lexed whole could be rendered otherwise: this stream has not followed it, it may define a
   * reference link (a use shown before its definition came stays unresolved here), or it ends
   * in code in pieces highlighted otherwise than whole (a comment or string across a piece's
   * end). Rendered whole again, a finished 1,500-line code block made an 86–131 ms frame; kept,
   * 20–26 ms (BENCHMARKS.md, session 36). */
  finished(source: string): StreamBlock[] | null {
    const text = source.includes("\r") ? source.replace(/\r\n?/g, "\n") : source;
    if (this.#text === "" || !text.startsWith(this.#text) || this.#rendering !== rendering || text.includes("]:")) return null;
    const shown = this.blocks(text);
    const whole = (list: StreamBlock[]): boolean =>
      list.every((b) => typeof b === "string" || ("cls" in b ? piecesAreWhole(b) : !isQuoteInPieces(b) || whole(b.quote)));
    return whole(shown) ? shown : null;
  }
}

/** Text still being written, as the sanitised HTML of each top-level block (see
 * `MarkdownStream`, which keeps what it did for the next, longer text). */
export function markdownBlocks(text: string): StreamBlock[] {
  return new MarkdownStream().blocks(text);
}

/** The code a copy button stands for. */
export function codeOf(button: Element): string | null {
  return button.closest(".code-block")?.querySelector("pre code")?.textContent ?? null;
}

/** The address a click on a rendered link would go to, or null when it is no link of ours. */
export function linkAddress(target: Element): string | null {
  const link = target.closest("a");
  return link?.getAttribute("href") ?? null;
}
