import { describe, expect, it } from "vitest";
import { PIP_GAP, clampPip, firstPipPlace, pipKeyMove, pipMaxHeight } from "./pip";

const bounds = { width: 1280, height: 900, avoidTop: 780 };
const size = { width: 380, height: 300 };

describe("picture in picture placement", () => {
  it("starts bottom right, just above the message box", () => {
    expect(firstPipPlace(size, bounds)).toEqual({ left: 1280 - 380 - PIP_GAP, top: 780 - PIP_GAP - 300 });
  });

  it("never goes over the message box or out of the window", () => {
    expect(clampPip({ left: 2000, top: 2000 }, size, bounds)).toEqual({ left: 1280 - 380 - PIP_GAP, top: 780 - PIP_GAP - 300 });
    expect(clampPip({ left: -50, top: -50 }, size, bounds)).toEqual({ left: PIP_GAP, top: PIP_GAP });
    expect(clampPip({ left: 300, top: 200 }, size, bounds)).toEqual({ left: 300, top: 200 });
  });

  it("keeps a view too big for the room at the top left gap", () => {
    expect(clampPip({ left: 500, top: 500 }, { width: 2000, height: 2000 }, bounds)).toEqual({ left: PIP_GAP, top: PIP_GAP });
    expect(pipMaxHeight(bounds)).toBe(780 - 2 * PIP_GAP);
    expect(pipMaxHeight({ ...bounds, avoidTop: null })).toBe(900 - 2 * PIP_GAP);
  });

  it("moves with the arrow keys, further with Shift", () => {
    expect(pipKeyMove("ArrowLeft", false)).toEqual({ left: -20, top: 0 });
    expect(pipKeyMove("ArrowDown", true)).toEqual({ left: 0, top: 100 });
    expect(pipKeyMove("Enter", false)).toBeNull();
  });
});
