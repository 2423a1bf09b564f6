import { describe, expect, it } from "vitest";
import { profileStore, type PageStore } from "./pageStorage";

function memory(): PageStore & { items: Map<string, string> } {
  const items = new Map<string, string>();
  return { items, getItem: (k) => items.get(k) ?? null, setItem: (k, v) => void items.set(k, v) };
}

describe("the page's storage, per profile", () => {
  it("keeps each profile's values apart in the one storage the engine has", () => {
    const storage = memory();
    const work = profileStore(storage, "0123456789abcdef");
    const home = profileStore(storage, "fedcba9876543210");
    work.setItem("porthole.theme", "dark");
    expect(work.getItem("porthole.theme")).toBe("dark");
    expect(home.getItem("porthole.theme")).toBeNull();
    home.setItem("porthole.theme", "light");
    expect(work.getItem("porthole.theme")).toBe("dark");
    expect(profileStore(storage, "0123456789abcdef").getItem("porthole.theme")).toBe("dark");
    expect([...storage.items.keys()].sort()).toEqual(["porthole.theme@0123456789abcdef", "porthole.theme@fedcba9876543210"]);
  });

  it("uses the keys as they are in a page no profile was named for", () => {
    const storage = memory();
    profileStore(storage, null).setItem("porthole.theme", "dark");
    expect(storage.items.get("porthole.theme")).toBe("dark");
    expect(profileStore(storage, "0123456789abcdef").getItem("porthole.theme")).toBeNull();
  });
});
