import { describe, expect, it } from "vitest";
import { SIDEBAR_LISTS_HEIGHT_KEY, keepHeight, keptHeight } from "./sidebarPlace";

function memoryStorage(): Storage {
  const items = new Map<string, string>();
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    getItem: (k) => items.get(k) ?? null,
    key: (i) => [...items.keys()][i] ?? null,
    removeItem: (k) => void items.delete(k),
    setItem: (k, v) => void items.set(k, String(v)),
  };
}

describe("the sidebar's kept height", () => {
  it("holds nothing on a first start, or without storage", () => {
    expect(keptHeight(memoryStorage())).toBeNull();
    expect(keptHeight(null)).toBeNull();
  });

  it("gives back the height the last start kept, to the fraction of a pixel", () => {
    const storage = memoryStorage();
    keepHeight(storage, 301.125);
    expect(keptHeight(storage)).toBe(301.125);
  });

  it("ignores what is not a height: garbage, zero, a negative number", () => {
    const storage = memoryStorage();
    for (const bad of ["tall", "0", "-40", "NaN", "Infinity"]) {
      storage.setItem(SIDEBAR_LISTS_HEIGHT_KEY, bad);
      expect(keptHeight(storage), bad).toBeNull();
    }
    keepHeight(storage, 120);
    keepHeight(storage, 0); // a sidebar not laid out (hidden) keeps the last real height
    expect(keptHeight(storage)).toBe(120);
  });

  it("does without a storage that refuses to be read or written", () => {
    const refusing = { ...memoryStorage(), getItem: () => { throw new Error("denied"); }, setItem: () => { throw new Error("full"); } } as Storage;
    expect(keptHeight(refusing)).toBeNull();
    expect(() => keepHeight(refusing, 200)).not.toThrow();
  });
});
