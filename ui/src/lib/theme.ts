// The window's theme: the person's preference (system, light or dark) shown as
// <html data-theme="light|dark">, following the system's appearance while the preference is
// "system". The last preference is remembered in the page's storage so the next start paints in
// it at once; the setting itself lives in Rust (api.generalSettings).
import type { ThemePreference } from "./api";
import { pageStorage, type PageStore } from "./pageStorage";

export type Theme = "light" | "dark";

export const themePreferences: readonly ThemePreference[] = ["system", "light", "dark"];

/** The storage key of the remembered preference. */
export const THEME_STORAGE_KEY = "porthole.theme";

export function isThemePreference(value: unknown): value is ThemePreference {
  return typeof value === "string" && (themePreferences as readonly string[]).includes(value);
}

/** The theme a preference comes to while the system is dark (or not). */
export function resolveTheme(preference: ThemePreference, systemDark: boolean): Theme {
  if (preference === "system") return systemDark ? "dark" : "light";
  return preference;
}

/** What the theme is applied to: the document's root, the system's scheme, a storage. */
export interface ThemeHost {
  root: HTMLElement;
  /** `(prefers-color-scheme: dark)`, when the engine has matchMedia. */
  media: MediaQueryList | null;
  storage: PageStore | null;
}

export function browserThemeHost(): ThemeHost {
  return {
    root: document.documentElement,
    media: typeof window.matchMedia === "function" ? window.matchMedia("(prefers-color-scheme: dark)") : null,
    // Storage may be refused; the theme then starts from "system" until the setting arrives.
    storage: pageStorage(),
  };
}

export class WindowTheme {
  #host: ThemeHost;
  #onSystemChange: (dark: boolean) => void;
  #preference: ThemePreference = "system";
  #listener = () => {
    this.#apply();
    this.#onSystemChange(this.systemDark);
  };

  /** `onSystemChange` hears the system's appearance at start and whenever it changes (Rust
   * passes it on to views while the setting is "system"). */
  constructor(host: ThemeHost, onSystemChange: (dark: boolean) => void = () => {}) {
    this.#host = host;
    this.#onSystemChange = onSystemChange;
  }

  get preference(): ThemePreference {
    return this.#preference;
  }

  get systemDark(): boolean {
    return this.#host.media?.matches ?? false;
  }

  /** The theme shown. */
  get shown(): Theme {
    return resolveTheme(this.#preference, this.systemDark);
  }

  /** Applies the remembered preference and follows the system; returns the way to stop. */
  start(): () => void {
    let remembered: string | null = null;
    try {
      remembered = this.#host.storage?.getItem(THEME_STORAGE_KEY) ?? null;
    } catch {
      remembered = null;
    }
    this.#preference = isThemePreference(remembered) ? remembered : "system";
    this.#apply();
    this.#host.media?.addEventListener("change", this.#listener);
    this.#onSystemChange(this.systemDark);
    return () => this.#host.media?.removeEventListener("change", this.#listener);
  }

  /** Shows `preference` at once and remembers it for the next start. */
  set(preference: ThemePreference) {
    this.#preference = preference;
    try {
      this.#host.storage?.setItem(THEME_STORAGE_KEY, preference);
    } catch {
      // Not remembered: the next start shows the system's theme until the setting arrives.
    }
    this.#apply();
  }

  #apply() {
    this.#host.root.dataset.theme = this.shown;
  }
}
