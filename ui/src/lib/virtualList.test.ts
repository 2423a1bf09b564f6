import { describe, expect, it } from "vitest";
import { anchorAt, anchoredScrollTop, endScrollTop, itemAt, layout, plan, totalHeight, visibleRange, type Segment } from "./virtualList";

const hundred = layout(Array.from({ length: 100 }, () => 100));

describe("layout and itemAt", () => {
  it("gives each item's top and the total", () => {
    const offsets = layout([10, 0, 30, -5, 20]);
    expect(Array.from(offsets)).toEqual([0, 10, 10, 40, 40, 60]);
    expect(totalHeight(offsets)).toBe(60);
    expect(totalHeight(layout([]))).toBe(0);
  });

  it("finds the item at a height (a zero-height item is never the answer in the middle)", () => {
    const offsets = layout([10, 0, 30, 20]);
    expect([0, 9.5, 10, 39, 40, 59, 60, 1000, -3].map((y) => itemAt(offsets, y))).toEqual([0, 0, 2, 2, 3, 3, 3, 3, 0]);
    expect(itemAt(layout([]), 10)).toBe(0);
  });
});

describe("visibleRange", () => {
  it("covers the viewport and the overscan on both sides", () => {
    expect(visibleRange(hundred, 5000, 400, 0)).toEqual({ start: 50, end: 54 });
    expect(visibleRange(hundred, 5050, 400, 0)).toEqual({ start: 50, end: 55 });
    expect(visibleRange(hundred, 5000, 400, 250)).toEqual({ start: 47, end: 57 });
  });

  it("stops at the ends", () => {
    expect(visibleRange(hundred, 0, 400, 1000)).toEqual({ start: 0, end: 14 });
    expect(visibleRange(hundred, 9600, 400, 1000)).toEqual({ start: 86, end: 100 });
    expect(visibleRange(hundred, 50_000, 400, 0)).toEqual({ start: 99, end: 100 });
    expect(visibleRange(layout([]), 0, 400, 100)).toEqual({ start: 0, end: 0 });
  });

  it("renders everything when it all fits, even with no viewport measured yet", () => {
    expect(visibleRange(layout([20, 20, 20]), 0, 0, 800)).toEqual({ start: 0, end: 3 });
  });

  it("includes zero-height items inside the band, not those just past its bottom", () => {
    expect(visibleRange(layout([100, 0, 0, 100]), 0, 150, 0)).toEqual({ start: 0, end: 4 });
    expect(visibleRange(layout([100, 100, 0, 0, 100]), 0, 200, 0)).toEqual({ start: 0, end: 2 });
    // An empty band still shows the item it is in.
    expect(visibleRange(hundred, 250, 0, 0)).toEqual({ start: 2, end: 3 });
  });
});

describe("endScrollTop", () => {
  it("shows the end, or the top of a list shorter than the viewport", () => {
    expect(endScrollTop(hundred, 400)).toBe(9600);
    expect(endScrollTop(layout([50]), 400)).toBe(0);
  });
});

describe("plan", () => {
  const sizes = layout([10, 20, 30, 40, 50, 60]);
  const describePlan = (segments: Segment[]) =>
    segments.map((s) => (s.kind === "item" ? s.index : `gap ${s.from}-${s.to}: ${s.height}`));

  it("puts spacers of the exact heights around the range", () => {
    expect(describePlan(plan(sizes, { start: 2, end: 4 }))).toEqual(["gap 0-2: 30", 2, 3, "gap 4-6: 110"]);
    expect(describePlan(plan(sizes, { start: 0, end: 6 }))).toEqual([0, 1, 2, 3, 4, 5]);
    expect(describePlan(plan(layout([]), { start: 0, end: 0 }))).toEqual([]);
  });

  it("keeps pinned items in place, in order, with the spacers split around them", () => {
    expect(describePlan(plan(sizes, { start: 3, end: 4 }, [5, 0, 3, 5, 42, -1]))).toEqual([0, "gap 1-3: 50", 3, "gap 4-5: 50", 5]);
    expect(describePlan(plan(sizes, { start: 2, end: 3 }, [1]))).toEqual(["gap 0-1: 10", 1, 2, "gap 3-6: 150"]);
  });

  it("keeps the total height whatever is rendered", () => {
    for (const [range, pinned] of [
      [{ start: 0, end: 1 }, []],
      [{ start: 2, end: 5 }, [0]],
      [{ start: 5, end: 6 }, [1, 3]],
    ] as const) {
      const total = plan(sizes, range, pinned).reduce(
        (sum, s) => sum + (s.kind === "gap" ? s.height : sizes[s.index + 1] - sizes[s.index]),
        0,
      );
      expect(total).toBe(totalHeight(sizes));
    }
  });

  it("clamps a range that is out of date (the list got shorter)", () => {
    expect(describePlan(plan(layout([10, 10]), { start: 5, end: 9 }))).toEqual(["gap 0-2: 20"]);
  });
});

describe("anchoring", () => {
  it("keeps what the reader sees in place when an item above grows or shrinks", () => {
    const before = layout([100, 100, 100, 100]);
    const anchor = anchorAt(before, 250);
    expect(anchor).toEqual({ index: 2, within: 50 });
    // Item 0 was measured taller (an estimate replaced), item 1 shrank.
    expect(anchoredScrollTop(layout([180, 70, 100, 100]), anchor)).toBe(300);
  });

  it("does not move when only the anchor item or items below it change", () => {
    const anchor = anchorAt(layout([100, 100, 100]), 120);
    expect(anchoredScrollTop(layout([100, 400, 900]), anchor)).toBe(120);
  });

  it("copes with a list that lost items", () => {
    expect(anchoredScrollTop(layout([50]), { index: 3, within: 10 })).toBe(10);
    expect(anchoredScrollTop(layout([]), { index: 0, within: 10 })).toBe(0);
  });
});
