import { describe, expect, it } from "vitest";
import { ZONE_MARGIN_PX, insideByLayout } from "./viewZone";

/** An element laid out at `top`..`bottom` (px from the window's top), 300 px wide; or not laid out. */
function box(top: number, bottom: number, laidOut = true): Element {
  return {
    getClientRects: () => (laidOut ? [{}] : []),
    getBoundingClientRect: () => ({ top, bottom, left: 0, right: 300, width: 300, height: bottom - top }),
  } as unknown as Element;
}

describe("insideByLayout", () => {
  const transcript = box(100, 700);

  it("says a card within the zone's margin of the transcript's visible part is inside", () => {
    expect(insideByLayout(box(200, 400), transcript)).toBe(true);
    expect(insideByLayout(box(700 + ZONE_MARGIN_PX, 2600), transcript)).toBe(true);
    expect(insideByLayout(box(-2000, 100 - ZONE_MARGIN_PX), transcript)).toBe(true);
  });

  it("says a card beyond the margin is outside, above or below", () => {
    expect(insideByLayout(box(701 + ZONE_MARGIN_PX, 2700), transcript)).toBe(false);
    expect(insideByLayout(box(-3000, 99 - ZONE_MARGIN_PX), transcript)).toBe(false);
  });

  it("cannot tell for a card that is not laid out", () => {
    expect(insideByLayout(box(0, 0, false), transcript)).toBeNull();
  });
});
