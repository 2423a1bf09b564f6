// The Markdown renderer (components/Markdown.svelte with marked, DOMPurify and lib/markdown.ts)
// is not part of the window's first paint: building marked's grammar alone is tens of
// milliseconds of the start-up, and holding it costs the page 2.4 MiB (BENCHMARKS.md). The
// window fetches it when it is first needed: the person writes in the composer, or a reply is
// shown (a conversation opened, a prompt sent). A reply shown before it is there is shown as
// plain text, then rendered in place.
import type { Component } from "svelte";

type MarkdownProps = { text: string; streaming?: boolean };

let loaded = $state<Component<MarkdownProps> | null>(null);
let loading: Promise<void> | null = null;

/** Loads the Markdown renderer (once; again after a failure). */
export function loadMarkdown(): Promise<void> {
  loading ??= import("../components/Markdown.svelte")
    .then((m) => {
      loaded = m.default;
    })
    .catch((e) => {
      loading = null;
      console.warn("the Markdown renderer is not available:", e);
    });
  return loading;
}

/** The renderer once loaded (`null` until then); reading it in a template re-renders on load. */
export const markdown = {
  get component(): Component<MarkdownProps> | null {
    return loaded;
  },
};
