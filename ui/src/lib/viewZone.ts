// Whether a view's card is near enough to the visible part of the transcript to keep its view
// alive. Views far from it are parked (torn down) and re-created when scrolled back to.
//
// The observer comes from a replaceable factory: jsdom has no IntersectionObserver, and tests
// drive a fake one by hand.

/** How far beyond the transcript's visible part (above and below) a view stays alive, in px. */
export const ZONE_MARGIN_PX = 1500;
/** The same, as the observer's root margin. */
export const ZONE_MARGIN = `${ZONE_MARGIN_PX}px 0px`;
/** How long a view must stay out of (or back in) the zone before it is parked (or re-created),
 * so that one hovering at the edge is not closed and reopened over and over (ms). */
export const SETTLE_MS = 500;

/** What ViewFrame needs of an IntersectionObserver. `insideNow`, when the observer has it, judges
 * from the layout as it is now what the first callback will say (null: it cannot tell), so that
 * a card already in sight does not wait a frame for that callback to get its view's frame. */
export interface ZoneObserver {
  observe(target: Element): void;
  disconnect(): void;
  insideNow?(target: Element): boolean | null;
}

export type ZoneObserverFactory = (callback: IntersectionObserverCallback, options: IntersectionObserverInit) => ZoneObserver;

const browserFactory: ZoneObserverFactory = (callback, options) => {
  const observer = new IntersectionObserver(callback, options);
  const root = options.root instanceof Element ? options.root : null;
  return {
    observe: (target) => observer.observe(target),
    disconnect: () => observer.disconnect(),
    insideNow: (target) => insideByLayout(target, root),
  };
};

/** Whether `target` is within ZONE_MARGIN_PX of `root`'s box (of the window, without a root),
 * as the layout stands now: the observer's question, asked at once. Null when `target` has no
 * box (not laid out). Reading the boxes lays the page out, as its next frame would. */
export function insideByLayout(target: Element, root: Element | null): boolean | null {
  if (target.getClientRects().length === 0) return null;
  const box = target.getBoundingClientRect();
  const area = root ? root.getBoundingClientRect() : { top: 0, bottom: window.innerHeight, left: 0, right: window.innerWidth };
  return (
    box.bottom >= area.top - ZONE_MARGIN_PX &&
    box.top <= area.bottom + ZONE_MARGIN_PX &&
    box.right >= area.left &&
    box.left <= area.right
  );
}

let factory: ZoneObserverFactory | null = null;

/** Replaces the observer factory (tests); null goes back to the browser's. Returns the previous one. */
export function setZoneObserverFactory(next: ZoneObserverFactory | null): ZoneObserverFactory | null {
  const previous = factory;
  factory = next;
  return previous;
}

function currentFactory(): ZoneObserverFactory | null {
  if (factory) return factory;
  return typeof IntersectionObserver === "function" ? browserFactory : null;
}

/** Whether cards can be watched at all (without an IntersectionObserver, every view stays alive
 * and is shown at once). */
export function zoneWatchable(): boolean {
  return currentFactory() !== null;
}

/** Tells `onChange` whether `target` is within ZONE_MARGIN of the visible part of the
 * transcript it is in (of the window, outside a transcript), first at once when the layout
 * tells (else as soon as the observer knows), then on every change. Without an
 * IntersectionObserver nothing is ever reported (the view stays alive). Returns the function
 * that stops watching. */
export function watchZone(target: Element, onChange: (inside: boolean) => void): () => void {
  const make = currentFactory();
  if (!make) return () => {};
  const root = target.closest("[data-testid=transcript]");
  const observer = make(
    (entries) => {
      const latest = entries.filter((e) => e.target === target).at(-1);
      if (latest) onChange(latest.isIntersecting);
    },
    { root, rootMargin: ZONE_MARGIN, threshold: 0 },
  );
  observer.observe(target);
  const now = observer.insideNow?.(target) ?? null;
  if (now !== null) onChange(now);
  return () => observer.disconnect();
}
