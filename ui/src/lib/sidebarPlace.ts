// What the sidebar shows above its MCP servers (the model's line and the conversation list) comes
// from Rust after the first paint, and the servers' section under it would move down as it came,
// under a pointer already on its way there. The height it took when the last start was over is
// kept in the page's storage and held from the first paint until it has come, so a start moves
// nothing unless that height changed since (the first start, a window of another size, a model
// set up).

import type { PageStore } from "./pageStorage";

/** The storage key of the height kept. */
export const SIDEBAR_LISTS_HEIGHT_KEY = "porthole.sidebarListsHeight";

/** The height kept by the last start, in CSS pixels (null: none, or unreadable). */
export function keptHeight(storage: PageStore | null): number | null {
  try {
    const px = Number(storage?.getItem(SIDEBAR_LISTS_HEIGHT_KEY) ?? "");
    return Number.isFinite(px) && px > 0 ? px : null;
  } catch {
    return null;
  }
}

/** Keeps `px` for the next start (a storage that refuses it is no loss: the start moves once). */
export function keepHeight(storage: PageStore | null, px: number): void {
  if (!(px > 0)) return;
  try {
    storage?.setItem(SIDEBAR_LISTS_HEIGHT_KEY, String(px));
  } catch {
    // Full or refused: nothing kept.
  }
}
