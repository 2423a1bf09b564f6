// Keeps keyboard focus inside a modal dialog while it is open, and gives it back after.

const FOCUSABLE = [
  "a[href]",
  "button:not([disabled])",
  "input:not([disabled])",
  "select:not([disabled])",
  "textarea:not([disabled])",
  "[tabindex]:not([tabindex='-1'])",
].join(",");

/** The controls Tab reaches inside `node`, in order (none inside a hidden part). */
export function focusables(node: HTMLElement): HTMLElement[] {
  return Array.from(node.querySelectorAll<HTMLElement>(FOCUSABLE)).filter(
    (el) => el.tabIndex >= 0 && !el.closest("[hidden]") && !(el instanceof HTMLInputElement && el.type === "hidden"),
  );
}

/** Svelte action for a dialog: focuses its `[data-autofocus]` control (else its first one),
 * wraps Tab and Shift+Tab around its ends, and on removal gives focus back to what had it. */
export function trapFocus(node: HTMLElement) {
  const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  function keydown(e: KeyboardEvent) {
    if (e.key !== "Tab") return;
    const all = focusables(node);
    if (all.length === 0) {
      e.preventDefault();
      return;
    }
    const first = all[0];
    const last = all[all.length - 1];
    const active = document.activeElement;
    const outside = !(active instanceof Node) || !node.contains(active);
    if (e.shiftKey && (active === first || outside)) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && (active === last || outside)) {
      e.preventDefault();
      first.focus();
    }
  }
  node.addEventListener("keydown", keydown);
  const initial = node.querySelector<HTMLElement>("[data-autofocus]") ?? focusables(node)[0] ?? node;
  initial.focus();
  return {
    destroy() {
      node.removeEventListener("keydown", keydown);
      if (before && before.isConnected) before.focus();
    },
  };
}
