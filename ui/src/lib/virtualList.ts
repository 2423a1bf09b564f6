// The windowing math of the transcript: which items to render for a scroll position, the
// spacers that stand for the others, and where to scroll so that what the reader sees stays put
// when heights change above it. Pure: heights in, numbers out.

/** Offsets of a list's items: `offsets[i]` is the top of item i, `offsets[n]` the total height. */
export type Offsets = Float64Array;

/** The tops of items of these heights, and the total (last entry). */
export function layout(heights: ArrayLike<number>): Offsets {
  const offsets = new Float64Array(heights.length + 1);
  for (let i = 0; i < heights.length; i++) offsets[i + 1] = offsets[i] + Math.max(0, heights[i]);
  return offsets;
}

export function totalHeight(offsets: Offsets): number {
  return offsets[offsets.length - 1];
}

/** The item at `y` (the last one for y at or past the end; 0 for an empty list). */
export function itemAt(offsets: Offsets, y: number): number {
  const count = offsets.length - 1;
  if (count <= 0) return 0;
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid] <= y) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Items `start` (inclusive) to `end` (exclusive). */
export interface Range {
  start: number;
  end: number;
}

/** The items that overlap the viewport (`scrollTop`, `viewport` px tall) grown by `overscan` px
 * above and below: every item whose top is above the band's bottom and whose bottom is below
 * its top (at least one item when the list is not empty). */
export function visibleRange(offsets: Offsets, scrollTop: number, viewport: number, overscan: number): Range {
  const count = offsets.length - 1;
  if (count <= 0) return { start: 0, end: 0 };
  const top = Math.max(0, scrollTop - overscan);
  const bottom = Math.max(top, scrollTop + Math.max(0, viewport) + overscan);
  if (top >= totalHeight(offsets)) return { start: count - 1, end: count };
  const start = itemAt(offsets, top);
  // The first item whose top is at or below the band's bottom ends the range.
  let lo = start + 1;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (offsets[mid] >= bottom) hi = mid;
    else lo = mid + 1;
  }
  return { start, end: lo };
}

/** The scroll position that shows the end of the list. */
export function endScrollTop(offsets: Offsets, viewport: number): number {
  return Math.max(0, totalHeight(offsets) - Math.max(0, viewport));
}

/** One piece of what is rendered: an item, or a spacer standing for the items it covers. */
export type Segment =
  | { kind: "item"; index: number }
  | { kind: "gap"; from: number; to: number; height: number };

/** What to render: the items of `range`, plus `pinned` items outside it (items that must stay
 * in the document, like a card whose live view has not been torn down yet), in order, with
 * spacers of the exact heights of the items between them. */
export function plan(offsets: Offsets, range: Range, pinned: Iterable<number> = []): Segment[] {
  const count = offsets.length - 1;
  const start = Math.max(0, Math.min(range.start, count));
  const end = Math.max(start, Math.min(range.end, count));
  const extra = [...new Set(pinned)].filter((i) => Number.isInteger(i) && i >= 0 && i < count && (i < start || i >= end));
  const shown = [...extra.filter((i) => i < start), ...rangeOf(start, end), ...extra.filter((i) => i >= end)].sort((a, b) => a - b);
  const segments: Segment[] = [];
  let next = 0;
  for (const index of shown) {
    if (index > next) segments.push({ kind: "gap", from: next, to: index, height: offsets[index] - offsets[next] });
    segments.push({ kind: "item", index });
    next = index + 1;
  }
  if (next < count) segments.push({ kind: "gap", from: next, to: count, height: offsets[count] - offsets[next] });
  return segments;
}

function rangeOf(start: number, end: number): number[] {
  const out: number[] = [];
  for (let i = start; i < end; i++) out.push(i);
  return out;
}

/** What the reader is looking at: an item, and how far into it the viewport's top is. */
export interface Anchor {
  index: number;
  within: number;
}

export function anchorAt(offsets: Offsets, scrollTop: number): Anchor {
  const index = itemAt(offsets, scrollTop);
  return { index, within: scrollTop - (offsets[index] ?? 0) };
}

/** Where to scroll so that the anchor's item is where it was after heights changed (the list
 * has the same items; only heights differ). */
export function anchoredScrollTop(offsets: Offsets, anchor: Anchor): number {
  const count = offsets.length - 1;
  if (count <= 0) return 0;
  const index = Math.min(anchor.index, count - 1);
  return Math.max(0, offsets[index] + anchor.within);
}
