/** What the window remembers between starts (its theme, the sidebar's place): only ever a head
 * start, kept in the page's `localStorage`. */
export interface PageStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** The page's storage, under the profile the window shows, when the engine allows it (it may
 * refuse: null). WebKit keeps one storage for all of a user's profiles: the app's shell names the
 * profile on the page's root element (`data-profile`, src-tauri/src/windows.rs) before the page's
 * code runs, and each profile's page keeps its own. */
export function pageStorage(): PageStore | null {
  let storage: Storage | null;
  try {
    storage = window.localStorage;
  } catch {
    return null;
  }
  return storage ? profileStore(storage, document.documentElement.dataset.profile ?? null) : null;
}

/** `storage` as the page of `profile` keeps it: its keys with `@profile` after them (as they are,
 * without a profile: a page the shell did not name one for). */
export function profileStore(storage: PageStore, profile: string | null): PageStore {
  const named = (key: string) => (profile ? `${key}@${profile}` : key);
  return {
    getItem: (key) => storage.getItem(named(key)),
    setItem: (key, value) => storage.setItem(named(key), value),
  };
}
