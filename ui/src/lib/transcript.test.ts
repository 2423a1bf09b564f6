import { describe, expect, it } from "vitest";
import { Transcript } from "./transcript.svelte";
import { isSendKey } from "./composer";

describe("Transcript", () => {
  it("keeps trimmed user messages and refuses blank ones", () => {
    const t = new Transcript();
    expect(t.addUserMessage("  hello \n")).toBe(true);
    expect(t.addUserMessage("   \n ")).toBe(false);
    expect(t.messages.map((m) => [m.role, m.text])).toEqual([["user", "hello"]]);
  });
  it("clears messages and notices for a new chat", () => {
    const t = new Transcript();
    t.addUserMessage("a");
    t.addNotice("info", "n");
    t.clear();
    expect(t.messages).toEqual([]);
    expect(t.notices).toEqual([]);
  });
});

describe("isSendKey", () => {
  const key = (over: Partial<KeyboardEvent>) =>
    ({ key: "Enter", shiftKey: false, isComposing: false, altKey: false, ctrlKey: false, metaKey: false, ...over }) as KeyboardEvent;
  it("sends on Enter only", () => {
    expect(isSendKey(key({}))).toBe(true);
    expect(isSendKey(key({ shiftKey: true }))).toBe(false);
    expect(isSendKey(key({ isComposing: true }))).toBe(false);
    expect(isSendKey(key({ key: "a" }))).toBe(false);
  });
});
