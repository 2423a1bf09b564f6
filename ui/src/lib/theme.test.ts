/// <reference types="node" />
import { readFileSync } from "node:fs";
import { URL as NodeURL } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { THEME_STORAGE_KEY, WindowTheme, isThemePreference, resolveTheme, type ThemeHost } from "./theme";

/** A `(prefers-color-scheme: dark)` query whose answer the test changes. */
function systemScheme(dark: boolean) {
  const listeners = new Set<() => void>();
  const media = {
    matches: dark,
    addEventListener: (_: string, l: () => void) => listeners.add(l),
    removeEventListener: (_: string, l: () => void) => listeners.delete(l),
  };
  return {
    media: media as unknown as MediaQueryList,
    listeners,
    set(next: boolean) {
      media.matches = next;
      listeners.forEach((l) => l());
    },
  };
}

function host(dark: boolean, remembered: string | null = null) {
  const scheme = systemScheme(dark);
  const storage = new Map<string, string>();
  if (remembered !== null) storage.set(THEME_STORAGE_KEY, remembered);
  const root = document.createElement("html");
  const themeHost: ThemeHost = {
    root,
    media: scheme.media,
    storage: {
      getItem: (k: string) => storage.get(k) ?? null,
      setItem: (k: string, v: string) => void storage.set(k, v),
    } as Storage,
  };
  return { themeHost, root, scheme, storage };
}

describe("theme", () => {
  it("resolves a preference against the system's appearance", () => {
    expect(resolveTheme("system", true)).toBe("dark");
    expect(resolveTheme("system", false)).toBe("light");
    expect(resolveTheme("light", true)).toBe("light");
    expect(resolveTheme("dark", false)).toBe("dark");
    expect(isThemePreference("dark")).toBe(true);
    expect(isThemePreference("blue")).toBe(false);
    expect(isThemePreference(null)).toBe(false);
  });

  it("follows the system while the preference is system, and tells who listens", () => {
    const { themeHost, root, scheme } = host(true);
    const heard = vi.fn();
    const theme = new WindowTheme(themeHost, heard);
    const stop = theme.start();
    expect(theme.preference).toBe("system");
    expect(root.dataset.theme).toBe("dark");
    expect(heard).toHaveBeenLastCalledWith(true);
    scheme.set(false);
    expect(root.dataset.theme).toBe("light");
    expect(heard).toHaveBeenLastCalledWith(false);
    stop();
    expect(scheme.listeners.size).toBe(0);
  });

  it("keeps an explicit theme whatever the system does, and remembers it for the next start", () => {
    const { themeHost, root, scheme, storage } = host(false);
    const theme = new WindowTheme(themeHost);
    theme.start();
    theme.set("dark");
    expect(root.dataset.theme).toBe("dark");
    expect(storage.get(THEME_STORAGE_KEY)).toBe("dark");
    scheme.set(true);
    scheme.set(false);
    expect(root.dataset.theme).toBe("dark");
    theme.set("system");
    expect(root.dataset.theme).toBe("light");

    const next = host(true, "light");
    new WindowTheme(next.themeHost).start();
    expect(next.root.dataset.theme).toBe("light");
    const garbled = host(true, "purple");
    const restarted = new WindowTheme(garbled.themeHost);
    restarted.start();
    expect(restarted.preference).toBe("system");
    expect(garbled.root.dataset.theme).toBe("dark");
  });

  it("works without matchMedia or storage (light until told otherwise)", () => {
    const root = document.createElement("html");
    const theme = new WindowTheme({ root, media: null, storage: null });
    theme.start();
    expect(root.dataset.theme).toBe("light");
    theme.set("dark");
    expect(root.dataset.theme).toBe("dark");
  });
});

/** The custom properties of the first CSS rule whose selector is exactly `selector`. */
function variables(css: string, selector: string): Record<string, string> {
  const escaped = selector.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const block = new RegExp(`(^|\\n)\\s*${escaped}\\s*\\{([^}]*)\\}`).exec(css);
  if (!block) throw new Error(`no rule for ${selector}`);
  return Object.fromEntries([...block[2].matchAll(/(--[\w-]+):\s*([^;]+);/g)].map((m) => [m[1], m[2].trim()]));
}

function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}

function contrast(a: string, b: string): number {
  const [la, lb] = [luminance(a), luminance(b)];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

describe("styles.css", () => {
  // Read from disk: the test runner hands CSS imports over empty (and jsdom's URL is not Node's).
  const styles = readFileSync(new NodeURL("../styles.css", import.meta.url), "utf8");
  const light = variables(styles, ":root");
  const dark = variables(styles, ':root[data-theme="dark"]');
  const firstPaintDark = variables(styles, ":root:not([data-theme])");

  it("has the same colour roles in both themes, and the system fallback matches dark", () => {
    expect(Object.keys(dark).sort()).toEqual(Object.keys(light).sort());
    expect(firstPaintDark).toEqual(dark);
  });

  it.each([
    ["light", light],
    ["dark", dark],
  ])("keeps text readable in the %s theme (4.5:1 or more)", (_, colours) => {
    const backgrounds = ["--bg", "--bg-elevated", "--bg-sidebar"];
    for (const fg of ["--text", "--text-muted", "--accent", "--error", "--ok"]) {
      for (const bg of [...backgrounds, "--warning-bg"]) {
        const ratio = contrast(colours[fg], colours[bg]);
        expect(ratio, `${fg} ${colours[fg]} on ${bg} ${colours[bg]}`).toBeGreaterThanOrEqual(4.5);
      }
    }
    for (const fg of ["--text", "--text-muted"]) {
      expect(contrast(colours[fg], colours["--user-bubble"]), `${fg} on --user-bubble`).toBeGreaterThanOrEqual(4.5);
    }
    expect(contrast(colours["--accent-text"], colours["--accent"]), "--accent-text on --accent").toBeGreaterThanOrEqual(4.5);
  });
});
