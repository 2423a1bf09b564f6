// The composer's menus: `/` at the start of the box lists servers' prompts, `@` at the start of
// a word lists their resources and resource templates. What the text asks for, the entries a
// query keeps (best first), and the text once the chosen entry is taken out of it.
import type { JsonValue, Part, PromptEntry, ResourceList } from "./api";
import { imageDataUrl } from "./toolContent";

export interface MenuTrigger {
  kind: "prompt" | "resource";
  /** What was typed after the `/` or `@`. */
  query: string;
  /** Where the `/` or `@` is, and where the query ends (the caret). */
  start: number;
  end: number;
}

/** What the text before the caret asks for, if anything: `/query` as all of it (prompts), or
 * `@query` starting a word (resources). The query has no spaces. */
export function menuTrigger(text: string, caret: number): MenuTrigger | null {
  const before = text.slice(0, caret);
  const slash = /^\/([^\s/]*)$/.exec(before);
  if (slash) return { kind: "prompt", query: slash[1], start: 0, end: caret };
  const at = /(^|\s)@([^\s@]*)$/.exec(before);
  if (at) return { kind: "resource", query: at[2], start: caret - at[2].length - 1, end: caret };
  return null;
}

/** The text with the trigger (`@query`, `/query`) taken out. */
export function withoutTrigger(text: string, trigger: MenuTrigger): string {
  return text.slice(0, trigger.start) + text.slice(trigger.end);
}

export type MenuEntry =
  | { kind: "prompt"; key: string; label: string; server: string; detail: string; prompt: PromptEntry }
  | { kind: "resource"; key: string; label: string; server: string; detail: string; uri: string }
  | {
      kind: "template";
      key: string;
      label: string;
      server: string;
      detail: string;
      template: ResourceList["templates"][number];
    };

/** How well `query` matches `fields` (lower is better; null: not at all). A field that starts
 * with it beats one that contains it; earlier fields beat later ones. */
function rank(query: string, fields: (string | null | undefined)[]): number | null {
  if (!query) return 0;
  const q = query.toLowerCase();
  let best: number | null = null;
  fields.forEach((field, i) => {
    const f = (field ?? "").toLowerCase();
    const at = f.indexOf(q);
    if (at < 0) return;
    const score = (at === 0 ? 0 : 100) + i;
    if (best === null || score < best) best = score;
  });
  return best;
}

/** The most entries a menu shows (typing narrows it). */
export const MENU_LIMIT = 50;

function ranked<T extends { label: string }>(scored: { entry: T; score: number | null }[]): T[] {
  return scored
    .filter((s): s is { entry: T; score: number } => s.score !== null)
    .sort((a, b) => a.score - b.score || a.entry.label.localeCompare(b.entry.label))
    .slice(0, MENU_LIMIT)
    .map((s) => s.entry);
}

export function promptEntries(prompts: PromptEntry[], query: string): MenuEntry[] {
  return ranked(
    prompts.map((prompt) => ({
      entry: {
        kind: "prompt" as const,
        key: `${prompt.server}/${prompt.name}`,
        label: prompt.name,
        server: prompt.server,
        detail: prompt.title && prompt.title !== prompt.name ? `${prompt.title} — ${prompt.description ?? ""}` : prompt.description ?? "",
        prompt,
      },
      score: rank(query, [prompt.name, prompt.title, prompt.server, prompt.description]),
    })),
  );
}

export function resourceEntries(list: ResourceList, query: string): MenuEntry[] {
  const resources = list.resources.map((r) => ({
    entry: {
      kind: "resource" as const,
      key: `${r.server} ${r.uri}`,
      label: r.title ?? r.name,
      server: r.server,
      detail: r.uri,
      uri: r.uri,
    },
    score: rank(query, [r.name, r.title, r.uri, r.server, r.description]),
  }));
  const templates = list.templates.map((t) => ({
    entry: {
      kind: "template" as const,
      key: `${t.server} ${t.uriTemplate}`,
      label: t.title ?? t.name,
      server: t.server,
      detail: t.uriTemplate,
      template: t,
    },
    score: rank(query, [t.name, t.title, t.uriTemplate, t.server, t.description]),
  }));
  return ranked<MenuEntry>([...resources, ...templates]);
}

/** One attachment of a message, as its chip shows it. */
export interface AttachmentChip {
  server: string;
  /** The resource's URI; null for a prompt's image or audio. */
  uri: string | null;
  /** What the chip says: the resource's last path segment, or the content's kind. */
  label: string;
  mimeType: string | null;
  /** The image itself, as a data: URL, when the attachment is one (a prompt's image, say). */
  image?: string | null;
}

/** A resource URI's short name: its last non-empty path segment, else the whole URI. */
export function uriLabel(uri: string): string {
  const segments = uri.split(/[/\\]/).filter(Boolean);
  const last = segments[segments.length - 1] ?? uri;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** The chips of a message's attachment parts. */
export function attachmentChips(parts: Part[]): AttachmentChip[] {
  const chips: AttachmentChip[] = [];
  for (const part of parts) {
    if (part.type !== "attachment") continue;
    const content = (part.content ?? {}) as { [key: string]: JsonValue | undefined };
    const resource = content.resource as { [key: string]: JsonValue | undefined } | undefined;
    const text = (v: JsonValue | undefined) => (typeof v === "string" ? v : null);
    if (content.type === "resource" && resource && typeof resource.uri === "string") {
      const mime = text(resource.mimeType);
      const image = imageDataUrl(mime, text(resource.blob));
      chips.push({ server: part.server, uri: resource.uri, label: uriLabel(resource.uri), mimeType: mime, ...(image ? { image } : {}) });
    } else {
      const mime = text(content.mimeType);
      const uri = text(content.uri);
      const image = content.type === "image" ? imageDataUrl(mime, text(content.data)) : null;
      chips.push({
        server: part.server,
        uri,
        label: uri ? uriLabel(uri) : String(content.type ?? "content"),
        mimeType: mime,
        ...(image ? { image } : {}),
      });
    }
  }
  return chips;
}
