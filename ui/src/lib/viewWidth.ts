// The width of a view's container on its card, as the view is told it (host context
// `containerDimensions`): measured by a ResizeObserver, reported in whole pixels, and sent to
// Rust a little after it settles.
//
// The observer comes from a replaceable factory: jsdom has no ResizeObserver, and tests drive a
// fake one by hand.

/** How long a container's width must stay put before the view is told (ms). */
export const WIDTH_DEBOUNCE_MS = 150;

/** What ViewFrame needs of a ResizeObserver. */
export interface WidthObserver {
  observe(target: Element): void;
  disconnect(): void;
}

export type WidthObserverFactory = (callback: ResizeObserverCallback) => WidthObserver;

const browserFactory: WidthObserverFactory = (callback) => new ResizeObserver(callback);

let factory: WidthObserverFactory | null = null;

/** Replaces the observer factory (tests); null goes back to the browser's. Returns the previous one. */
export function setWidthObserverFactory(next: WidthObserverFactory | null): WidthObserverFactory | null {
  const previous = factory;
  factory = next;
  return previous;
}

function currentFactory(): WidthObserverFactory | null {
  if (factory) return factory;
  return typeof ResizeObserver === "function" ? browserFactory : null;
}

/** The content-box width of an observed element (px), as the entry tells it. */
function contentWidth(entry: ResizeObserverEntry): number {
  const box = entry.contentBoxSize as ResizeObserverSize[] | ResizeObserverSize | undefined;
  const size = Array.isArray(box) ? box[0] : box;
  if (size && typeof size.inlineSize === "number") return size.inlineSize;
  return entry.contentRect?.width ?? Number.NaN;
}

/** Tells `onWidth` the content width of `target` in whole pixels: at its first measurement, then
 * whenever it changed by a pixel or more. A width that is not positive (an element not laid
 * out) is not told. Without a ResizeObserver nothing is ever told. Returns the function that
 * stops watching. */
export function watchWidth(target: Element, onWidth: (width: number) => void): () => void {
  const make = currentFactory();
  if (!make) return () => {};
  let last: number | null = null;
  const observer = make((entries) => {
    const latest = entries.filter((e) => e.target === target).at(-1);
    if (!latest) return;
    const width = Math.round(contentWidth(latest));
    if (!Number.isFinite(width) || width <= 0 || width === last) return;
    last = width;
    onWidth(width);
  });
  observer.observe(target);
  return () => observer.disconnect();
}
