// Whether a view's card is near enough to the visible part of the transcript to keep its view
// alive. Views far from it are parked (torn down) and re-created when scrolled back to.
//
// The observer comes from a replaceable factory: jsdom has no IntersectionObserver, and tests
// drive a fake one by hand.

/** How far beyond the transcript's visible part (above and below) a view stays alive. */
export const ZONE_MARGIN = "1500px 0px";
/** How long a view must stay out of (or back in) the zone before it is parked (or re-created),
 * so that one hovering at the edge is not closed and reopened over and over (ms). */
export const SETTLE_MS = 500;

/** What ViewFrame needs of an IntersectionObserver. */
export interface ZoneObserver {
  observe(target: Element): void;
  disconnect(): void;
}

export type ZoneObserverFactory = (callback: IntersectionObserverCallback, options: IntersectionObserverInit) => ZoneObserver;

const browserFactory: ZoneObserverFactory = (callback, options) => new IntersectionObserver(callback, options);

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
 * transcript it is in (of the window, outside a transcript), first as soon as the observer
 * knows, then on every change. Without an IntersectionObserver nothing is ever reported (the
 * view stays alive). Returns the function that stops watching. */
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
  return () => observer.disconnect();
}
