// Keyboard rules of the composer: Enter sends, Shift+Enter (or composing IME text) does not.
export function isSendKey(e: Pick<KeyboardEvent, "key" | "shiftKey" | "isComposing" | "altKey" | "ctrlKey" | "metaKey">): boolean {
  return e.key === "Enter" && !e.shiftKey && !e.isComposing && !e.altKey;
}
