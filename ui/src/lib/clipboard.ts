// Writing text to the clipboard from the window: Rust is told first (its guard lets the
// window's own copy through, never a view's), then the browser's clipboard API writes it.
import { api } from "./api";

/** Copies `value`; false (and a console warning) when it could not. */
export async function copyText(value: string): Promise<boolean> {
  try {
    await api.clipboardWriteRequested().catch(() => {});
    await navigator.clipboard.writeText(value);
    return true;
  } catch (e) {
    console.warn("could not copy:", e);
    return false;
  }
}
