import { afterEach, describe, expect, it, vi } from "vitest";
import { onShortcut, shortcutOf } from "./shortcuts";

const key = (key: string, mods: Partial<KeyboardEventInit> = {}) => new KeyboardEvent("keydown", { key, cancelable: true, ...mods });

describe("shortcutOf", () => {
  it("knows Ctrl or Cmd with N and K, and Esc", () => {
    expect(shortcutOf(key("n", { ctrlKey: true }))).toBe("new-chat");
    expect(shortcutOf(key("N", { metaKey: true }))).toBe("new-chat");
    expect(shortcutOf(key("k", { ctrlKey: true }))).toBe("search");
    expect(shortcutOf(key("k", { metaKey: true }))).toBe("search");
    expect(shortcutOf(key("Escape"))).toBe("stop");
  });

  it("finds the letters by their place on a non-Latin layout", () => {
    expect(shortcutOf(key("т", { code: "KeyN", ctrlKey: true }))).toBe("new-chat");
    expect(shortcutOf(key("л", { code: "KeyK", ctrlKey: true }))).toBe("search");
    // A Latin layout where the key at N's place is another letter: the letter wins.
    expect(shortcutOf(key("b", { code: "KeyN", ctrlKey: true }))).toBeNull();
  });

  it("ignores other keys, plain letters, extra modifiers and text being composed", () => {
    for (const e of [
      key("n"),
      key("k"),
      key("j", { ctrlKey: true }),
      key("n", { ctrlKey: true, shiftKey: true }),
      key("k", { ctrlKey: true, altKey: true }),
      key("Escape", { shiftKey: true }),
      key("Enter", { ctrlKey: true }),
      key("n", { ctrlKey: true, isComposing: true }),
    ]) {
      expect(shortcutOf(e), `${e.key} ctrl=${e.ctrlKey} shift=${e.shiftKey}`).toBeNull();
    }
  });
});

describe("onShortcut", () => {
  afterEach(() => document.body.replaceChildren());

  function actions(busy = false) {
    return { busy: () => busy, newChat: vi.fn(), stop: vi.fn() };
  }

  it("Ctrl/Cmd+N starts a new chat, and the browser's own Ctrl+N does not happen", () => {
    const a = actions();
    const e = key("n", { ctrlKey: true });
    expect(onShortcut(e, a)).toBe(true);
    expect(a.newChat).toHaveBeenCalledOnce();
    expect(e.defaultPrevented).toBe(true);
  });

  it("Ctrl/Cmd+Shift+Enter allows the first waiting call once, Ctrl/Cmd+Shift+Backspace denies it", () => {
    expect(shortcutOf(key("Enter", { ctrlKey: true, shiftKey: true }))).toBe("approve");
    expect(shortcutOf(key("Backspace", { metaKey: true, shiftKey: true }))).toBe("deny");
    expect(shortcutOf(key("Enter", { ctrlKey: true, shiftKey: true, altKey: true }))).toBeNull();
    document.body.innerHTML = `
      <section><button data-testid="deny">Deny</button><button data-testid="approve-once">Allow once</button></section>
      <section><button data-testid="deny">Deny</button><button data-testid="approve-once">Allow once</button></section>`;
    const clicked: string[] = [];
    document.querySelectorAll("button").forEach((b, i) => b.addEventListener("click", () => clicked.push(`${i}`)));
    expect(onShortcut(key("Enter", { ctrlKey: true, shiftKey: true }), actions())).toBe(true);
    expect(onShortcut(key("Backspace", { ctrlKey: true, shiftKey: true }), actions())).toBe(true);
    expect(clicked).toEqual(["1", "0"]);
    // Nothing waiting: the keys are left alone.
    document.body.innerHTML = '<button data-testid="approve-once" disabled>Allow once</button>';
    const e = key("Enter", { ctrlKey: true, shiftKey: true });
    expect(onShortcut(e, actions())).toBe(false);
    expect(e.defaultPrevented).toBe(false);
  });

  it("Ctrl/Cmd+K focuses the conversation search box and selects its text", () => {
    document.body.innerHTML = '<textarea data-testid="composer"></textarea><input data-testid="conversation-search" value="old query">';
    const composer = document.querySelector("textarea")!;
    composer.focus();
    const e = key("k", { metaKey: true });
    expect(onShortcut(e, actions())).toBe(true);
    const box = document.querySelector<HTMLInputElement>("[data-testid=conversation-search]")!;
    expect(document.activeElement).toBe(box);
    expect([box.selectionStart, box.selectionEnd]).toEqual([0, "old query".length]);
    expect(e.defaultPrevented).toBe(true);
  });

  it("leaves Ctrl+K alone when there is no search box", () => {
    const e = key("k", { ctrlKey: true });
    expect(onShortcut(e, actions())).toBe(false);
    expect(e.defaultPrevented).toBe(false);
  });

  it("Esc stops a reply being written, and only then", () => {
    const idle = actions(false);
    const e1 = key("Escape");
    expect(onShortcut(e1, idle)).toBe(false);
    expect(idle.stop).not.toHaveBeenCalled();
    expect(e1.defaultPrevented).toBe(false);

    const busy = actions(true);
    const e2 = key("Escape");
    expect(onShortcut(e2, busy)).toBe(true);
    expect(busy.stop).toHaveBeenCalledOnce();
    expect(e2.defaultPrevented).toBe(true);
  });

  it("Esc in the composer stops the reply; in another field it is that field's", () => {
    document.body.innerHTML = '<textarea data-testid="composer"></textarea><input data-testid="tools-search">';
    const a = actions(true);
    const fromComposer = new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true });
    document.querySelector("textarea")!.dispatchEvent(fromComposer);
    expect(onShortcut(fromComposer, a)).toBe(true);
    expect(a.stop).toHaveBeenCalledOnce();
    const fromSearch = new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true });
    document.querySelector("input")!.dispatchEvent(fromSearch);
    expect(onShortcut(fromSearch, a)).toBe(false);
    expect(a.stop).toHaveBeenCalledOnce();
    expect(fromSearch.defaultPrevented).toBe(false);
  });

  it("does nothing while a dialog is open, or for a key something else handled", () => {
    const a = actions(true);
    const handled = key("Escape");
    handled.preventDefault();
    expect(onShortcut(handled, a)).toBe(false);

    document.body.innerHTML = '<div role="dialog" aria-label="Settings"></div><input data-testid="conversation-search">';
    for (const e of [key("Escape"), key("n", { ctrlKey: true }), key("k", { ctrlKey: true })]) expect(onShortcut(e, a)).toBe(false);
    expect(a.stop).not.toHaveBeenCalled();
    expect(a.newChat).not.toHaveBeenCalled();
    expect(document.activeElement).toBe(document.body);
  });
});
