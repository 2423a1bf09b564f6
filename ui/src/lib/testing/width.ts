// A fake ResizeObserver for views' containers (jsdom has none), driven by hand: `resize` says a
// target's content box is now this wide. Used by tests only.
import { setWidthObserverFactory, type WidthObserver } from "../viewWidth";

export class FakeWidthObserver implements WidthObserver {
  static all: FakeWidthObserver[] = [];
  targets: Element[] = [];
  disconnected = false;

  constructor(readonly callback: ResizeObserverCallback) {
    FakeWidthObserver.all.push(this);
  }

  observe(target: Element) {
    this.targets.push(target);
  }

  disconnect() {
    this.disconnected = true;
  }

  /** The live observers watching `target`. */
  static of(target: Element): FakeWidthObserver[] {
    return FakeWidthObserver.all.filter((o) => !o.disconnected && o.targets.includes(target));
  }

  /** `target`'s content box is now `width` px wide, for every live observer watching it. */
  static resize(target: Element, width: number, height = 100) {
    for (const observer of FakeWidthObserver.of(target)) {
      const entry = {
        target,
        contentRect: { width, height } as DOMRectReadOnly,
        contentBoxSize: [{ inlineSize: width, blockSize: height }],
        borderBoxSize: [{ inlineSize: width, blockSize: height }],
        devicePixelContentBoxSize: [],
      } as unknown as ResizeObserverEntry;
      observer.callback([entry], observer as unknown as ResizeObserver);
    }
  }
}

/** Installs the fake; returns the function that puts the previous factory back. */
export function installFakeWidth(): () => void {
  FakeWidthObserver.all = [];
  const previous = setWidthObserverFactory((callback) => new FakeWidthObserver(callback));
  return () => {
    setWidthObserverFactory(previous);
    FakeWidthObserver.all = [];
  };
}
