// The window's keyboard shortcuts: Ctrl/Cmd+N a new chat, Ctrl/Cmd+K the conversation search,
// Esc stops the reply being written, Ctrl/Cmd+Shift+Enter allows the first call waiting for
// approval once and Ctrl/Cmd+Shift+Backspace denies it. None acts while a dialog is open (it has the keyboard), nor
// on a key something else already handled. The composer's own keys (Enter sends, Shift+Enter is
// a new line) are in composer.ts; Esc leaving full screen is the view frame's.

export type Shortcut = "new-chat" | "search" | "stop" | "approve" | "deny";

type Keys = Pick<KeyboardEvent, "key" | "code" | "ctrlKey" | "metaKey" | "shiftKey" | "altKey" | "isComposing">;

/** The shortcut a key press stands for, if any. Ctrl and Cmd (meta) both count, so that the
 * same keys work on every system; a letter is known by its key or, on other layouts, its place. */
export function shortcutOf(e: Keys): Shortcut | null {
  if (e.isComposing) return null;
  if (e.key === "Escape") return e.ctrlKey || e.metaKey || e.shiftKey || e.altKey ? null : "stop";
  if ((e.ctrlKey || e.metaKey) && e.shiftKey && !e.altKey) {
    if (e.key === "Enter") return "approve";
    if (e.key === "Backspace") return "deny";
    return null;
  }
  if (!(e.ctrlKey || e.metaKey) || e.shiftKey || e.altKey) return null;
  const letter = e.key.toLowerCase();
  const latin = /^[a-z]$/.test(letter);
  const is = (wanted: string, code: string) => (latin ? letter === wanted : e.code === code);
  if (is("n", "KeyN")) return "new-chat";
  if (is("k", "KeyK")) return "search";
  return null;
}

export interface ShortcutActions {
  /** A reply is being written (Esc stops it). */
  busy: () => boolean;
  newChat: () => void;
  stop: () => void;
}

/** The conversation search box (the sidebar's). */
export const SEARCH_BOX = "[data-testid=conversation-search]";

/** The first call's approval buttons (the oldest call waiting is the first in the transcript). */
export const APPROVE_ONCE = "[data-testid=approve-once]:not(:disabled)";
export const DENY = "[data-testid=deny]:not(:disabled)";

/** The composer (where Esc stops the reply being written). */
export const COMPOSER = "[data-testid=composer]";

function typingElsewhere(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement) || target.matches(COMPOSER)) return false;
  return target.isContentEditable || target.matches("input, textarea, select");
}

/** Acts on a key press of the window; returns whether it was a shortcut that acted (its default
 * is then prevented). */
export function onShortcut(e: KeyboardEvent, actions: ShortcutActions, doc: Document = document): boolean {
  if (e.defaultPrevented) return false;
  const shortcut = shortcutOf(e);
  if (!shortcut || doc.querySelector("[role=dialog]")) return false;
  switch (shortcut) {
    case "new-chat":
      actions.newChat();
      break;
    case "search": {
      const box = doc.querySelector<HTMLElement>(SEARCH_BOX);
      if (!box) return false;
      box.focus();
      if (box instanceof HTMLInputElement) box.select();
      break;
    }
    case "approve":
    case "deny": {
      const button = doc.querySelector<HTMLElement>(shortcut === "approve" ? APPROVE_ONCE : DENY);
      if (!button) return false;
      button.click();
      break;
    }
    case "stop":
      // Esc in another field (the tools panel's search or JSON, an edited message) is that
      // field's; in the composer or elsewhere it stops the reply.
      if (!actions.busy() || typingElsewhere(e.target)) return false;
      actions.stop();
      break;
  }
  e.preventDefault();
  return true;
}
