// The `<p>` of a long paragraph being written (lib/markdown.ts's `ParagraphInPieces`), kept up
// to date by appending to it. WebKit lays out again only what was appended to a block; any
// node replaced or removed in it (even a last one of a few words) lays out the whole
// paragraph again: 10 ms a frame at 90 KB, where appending stays at 1 ms.
import type { ParagraphInPieces } from "./markdown";

/** A Svelte action: `<p use:growingParagraph={paragraph}>`. As the paragraph grows, what was
 * added is appended; only when the text after the last piece is rendered otherwise than it
 * began (an emphasis closed, a link completed) are that text's nodes replaced. All HTML given
 * is sanitised (markdown.ts); each change's HTML is what follows well-formed HTML already
 * shown, so parsed on its own it makes the nodes the whole would. */
export function growingParagraph(node: HTMLElement, paragraph: ParagraphInPieces) {
  /** The pieces shown, then the tail's HTML shown after them. */
  let pieces: string[] = [];
  let tail = "";
  /** The last node of the pieces shown (null: none): the tail's nodes follow it. */
  let piecesEnd: Node | null = null;

  const append = (html: string) => {
    if (html) node.insertAdjacentHTML("beforeend", html);
  };
  const dropTail = () => {
    while (node.lastChild && node.lastChild !== piecesEnd) node.lastChild.remove();
  };

  function show(next: ParagraphInPieces) {
    const kept = pieces.length;
    if (next.pieces.length < kept || (kept > 0 && next.pieces[kept - 1] !== pieces[kept - 1])) {
      // Another paragraph: shown from the start.
      node.replaceChildren();
      pieces = [];
      tail = "";
      piecesEnd = null;
    }
    if (next.pieces.length > pieces.length) {
      // The tail shown has become (the start of) the new pieces, most often.
      const added = next.pieces.slice(pieces.length).join("");
      if (added.startsWith(tail)) append(added.slice(tail.length));
      else {
        dropTail();
        append(added);
      }
      pieces = next.pieces;
      piecesEnd = node.lastChild;
      tail = "";
    }
    if (next.tail.startsWith(tail)) append(next.tail.slice(tail.length));
    else {
      dropTail();
      append(next.tail);
    }
    tail = next.tail;
  }

  show(paragraph);
  return { update: show };
}
