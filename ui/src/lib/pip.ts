// Where a picture-in-picture view sits: in a corner of the window above the message box at first,
// then wherever it is dragged (or moved with the arrow keys), always whole inside the window and
// never over the message box (its Send and Stop buttons stay usable).

/** Space kept between the view and the window's edges or the message box (px). */
export const PIP_GAP = 12;
/** How far one arrow key moves the view (px); with Shift, five times as far. */
export const PIP_STEP = 20;

export interface PipPlace {
  left: number;
  top: number;
}

export interface PipBounds {
  /** The window's inner size. */
  width: number;
  height: number;
  /** The top of the message box, which the view may not cover (null: there is none). */
  avoidTop: number | null;
}

/** The lowest the view's bottom edge may go. */
function floor(bounds: PipBounds): number {
  return (bounds.avoidTop ?? bounds.height) - PIP_GAP;
}

/** `place` moved as little as needed so a view of `size` is whole inside the window, above the
 * message box. A view too tall for the room keeps its top edge at the gap. */
export function clampPip(place: PipPlace, size: { width: number; height: number }, bounds: PipBounds): PipPlace {
  const maxLeft = Math.max(PIP_GAP, bounds.width - size.width - PIP_GAP);
  const maxTop = Math.max(PIP_GAP, floor(bounds) - size.height);
  return {
    left: Math.round(Math.min(Math.max(place.left, PIP_GAP), maxLeft)),
    top: Math.round(Math.min(Math.max(place.top, PIP_GAP), maxTop)),
  };
}

/** Where a view of `size` goes when it enters picture in picture: bottom right, above the message box. */
export function firstPipPlace(size: { width: number; height: number }, bounds: PipBounds): PipPlace {
  return clampPip({ left: bounds.width, top: floor(bounds) - size.height }, size, bounds);
}

/** The tallest the view may be (its top at the gap, its bottom above the message box). */
export function pipMaxHeight(bounds: PipBounds): number {
  return Math.max(120, floor(bounds) - PIP_GAP);
}

/** The move an arrow key asks for, or null for any other key. */
export function pipKeyMove(key: string, shift: boolean): PipPlace | null {
  const step = shift ? PIP_STEP * 5 : PIP_STEP;
  switch (key) {
    case "ArrowLeft":
      return { left: -step, top: 0 };
    case "ArrowRight":
      return { left: step, top: 0 };
    case "ArrowUp":
      return { left: 0, top: -step };
    case "ArrowDown":
      return { left: 0, top: step };
    default:
      return null;
  }
}
