import { describe, expect, it } from "vitest";
import { growingParagraph } from "./growingParagraph";
import { MarkdownStream, type ParagraphInPieces } from "./markdown";

/** The `<p>` the action keeps, and every node removed from it since it began. */
function paragraph(first: ParagraphInPieces) {
  const p = document.createElement("p");
  document.body.append(p);
  const action = growingParagraph(p, first);
  const observer = new MutationObserver(() => {});
  observer.observe(p, { childList: true, characterData: true, subtree: true });
  const removed = () => observer.takeRecords().flatMap((r) => Array.from(r.removedNodes));
  return { p, update: action.update, removed };
}

/** What the pieces and tail make when parsed whole. */
function whole(block: ParagraphInPieces): string {
  const p = document.createElement("p");
  p.innerHTML = block.pieces.join("") + block.tail;
  return p.innerHTML;
}

describe("growingParagraph", () => {
  const words = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `w${from + i} `).join("");

  it("only appends while the paragraph grows, also when the tail becomes a piece", () => {
    const { p, update, removed } = paragraph({ pieces: [], tail: "w0 w1" });
    const first = p.firstChild;
    update({ pieces: [], tail: "w0 w1 w2 <em>it</em>" });
    update({ pieces: ["w0 w1 w2 <em>it</em> w3 "], tail: "w4" });
    update({ pieces: ["w0 w1 w2 <em>it</em> w3 "], tail: "w4 w5 &amp; w6" });
    expect(removed()).toEqual([]);
    expect(p.firstChild).toBe(first);
    expect(p.innerHTML).toBe("w0 w1 w2 <em>it</em> w3 w4 w5 &amp; w6");
  });

  it("replaces only the tail's nodes when the tail is rendered otherwise than it began", () => {
    const { p, update, removed } = paragraph({ pieces: ["w0 w1 "], tail: "w2 **bo" });
    const first = p.firstChild;
    const block = { pieces: ["w0 w1 "], tail: "w2 <strong>bold</strong>" };
    update(block);
    expect(removed().map((n) => n.textContent)).toEqual(["w2 **bo"]);
    expect(p.firstChild).toBe(first);
    expect(p.innerHTML).toBe(whole(block));
    expect(p.querySelector("strong")?.textContent).toBe("bold");
  });

  it("shows another paragraph from the start", () => {
    const { p, update } = paragraph({ pieces: ["a b ", "c d "], tail: "e" });
    update({ pieces: ["x y "], tail: "z" });
    expect(p.innerHTML).toBe("x y z");
  });

  it("shows a long paragraph streamed word by word as the whole of its HTML", () => {
    const stream = new MarkdownStream();
    let text = "";
    let shown: ReturnType<typeof paragraph> | null = null;
    for (let i = 0; i < 1500; i += 7) {
      text += words(i, i + 7) + (i % 140 === 0 ? "*some emphasis* and `code` " : "");
      const block = stream.blocks(text).at(-1)!;
      if (typeof block === "string" || !("tail" in block)) continue;
      if (!shown) shown = paragraph(block);
      else shown.update(block);
      expect(shown.p.innerHTML).toBe(whole(block));
    }
    expect(shown).not.toBeNull();
    expect(shown!.removed()).toEqual([]);
    expect(shown!.p.textContent).toBe(text.replaceAll("*", "").replaceAll("`", ""));
  });
});
