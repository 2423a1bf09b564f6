/** The page's `localStorage`, when the engine allows it (it may refuse: null). What the window
 * remembers there between starts (its theme, the sidebar's place) is only ever a head start. */
export function pageStorage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}
