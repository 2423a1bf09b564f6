// A fake IntersectionObserver for the view zone (jsdom has none), driven by hand: `move` says a
// target entered or left its observer's zone. Used by tests only.
import { setZoneObserverFactory, type ZoneObserver } from "../viewZone";

export class FakeZoneObserver implements ZoneObserver {
  static all: FakeZoneObserver[] = [];
  /** What every fake's `insideNow` says: the layout's word before the first callback (null:
   * none, so only `move` tells). */
  static layout: boolean | null = null;
  targets: Element[] = [];
  disconnected = false;

  constructor(
    readonly callback: IntersectionObserverCallback,
    readonly options: IntersectionObserverInit,
  ) {
    FakeZoneObserver.all.push(this);
  }

  observe(target: Element) {
    this.targets.push(target);
  }

  disconnect() {
    this.disconnected = true;
  }

  insideNow(): boolean | null {
    return FakeZoneObserver.layout;
  }

  /** The live observers watching `target`. */
  static of(target: Element): FakeZoneObserver[] {
    return FakeZoneObserver.all.filter((o) => !o.disconnected && o.targets.includes(target));
  }

  /** `target` is now inside (or outside) the zone of every live observer watching it. */
  static move(target: Element, inside: boolean) {
    for (const observer of FakeZoneObserver.of(target)) {
      const entry = { target, isIntersecting: inside } as IntersectionObserverEntry;
      observer.callback([entry], observer as unknown as IntersectionObserver);
    }
  }
}

/** Installs the fake; returns the function that puts the previous factory back. */
export function installFakeZone(): () => void {
  FakeZoneObserver.all = [];
  FakeZoneObserver.layout = null;
  const previous = setZoneObserverFactory((callback, options) => new FakeZoneObserver(callback, options));
  return () => {
    setZoneObserverFactory(previous);
    FakeZoneObserver.all = [];
    FakeZoneObserver.layout = null;
  };
}
