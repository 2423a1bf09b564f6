// A tool result's content blocks (MCP `ContentBlock`s), checked and turned into what its card
// shows: text, images and audio inline (as data: URLs of an image/audio type only), links to
// resources the person can read, and embedded resources previewed. Anything malformed or
// unknown is named, never rendered as markup.

/** The most of a base64 payload shown inline (characters; about 7.5 MB of data). */
export const MAX_INLINE_BASE64 = 10_000_000;
/** The most of an embedded resource's text previewed on the card. */
export const MAX_PREVIEW_CHARS = 20_000;

export type ContentView =
  | { kind: "text"; text: string }
  | { kind: "image"; src: string; mimeType: string }
  | { kind: "audio"; src: string; mimeType: string }
  | { kind: "link"; uri: string; name: string; description: string | null; mimeType: string | null }
  | { kind: "resource"; uri: string; mimeType: string | null; text: string | null; truncated: boolean; image: string | null; bytes: number | null }
  | { kind: "other"; label: string };

const IMAGE = /^image\/(png|jpeg|gif|webp|bmp|avif|svg\+xml)$/;
const AUDIO = /^audio\/[a-z0-9.+-]{1,40}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

/** A data: URL for `data` (base64) of `mimeType`, when both are acceptable. */
function dataUrl(mimeType: string | null, data: string | null, allowed: RegExp): string | null {
  if (!mimeType || !data || !allowed.test(mimeType)) return null;
  if (data.length > MAX_INLINE_BASE64 || !BASE64.test(data)) return null;
  return `data:${mimeType};base64,${data}`;
}

/** A data: URL for an image (base64 `data` of an image `mimeType`), when both are acceptable. */
export function imageDataUrl(mimeType: string | null, data: string | null): string | null {
  return dataUrl(mimeType, data, IMAGE);
}

/** Roughly how many bytes a base64 string holds. */
export function base64Bytes(data: string): number {
  return Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
}

/** The content blocks of a `CallToolResult` (`content`), or none. */
export function contentOf(result: unknown): unknown[] {
  if (result && typeof result === "object" && Array.isArray((result as { content?: unknown }).content)) {
    return (result as { content: unknown[] }).content;
  }
  return [];
}

export function viewContent(blocks: unknown[]): ContentView[] {
  return blocks.map((block): ContentView => {
    if (!block || typeof block !== "object") return { kind: "other", label: "content that is not an object" };
    const b = block as Record<string, unknown>;
    const type = str(b.type) ?? "?";
    switch (type) {
      case "text":
        return { kind: "text", text: str(b.text) ?? "" };
      case "image": {
        const mimeType = str(b.mimeType);
        const src = dataUrl(mimeType, str(b.data), IMAGE);
        return src && mimeType ? { kind: "image", src, mimeType } : { kind: "other", label: `an image Porthole does not show (${mimeType ?? "no type"})` };
      }
      case "audio": {
        const mimeType = str(b.mimeType);
        const src = dataUrl(mimeType, str(b.data), AUDIO);
        return src && mimeType ? { kind: "audio", src, mimeType } : { kind: "other", label: `audio Porthole does not play (${mimeType ?? "no type"})` };
      }
      case "resource_link": {
        const uri = str(b.uri);
        if (!uri) return { kind: "other", label: "a resource link without a URI" };
        return { kind: "link", uri, name: str(b.title) ?? str(b.name) ?? uri, description: str(b.description), mimeType: str(b.mimeType) };
      }
      case "resource": {
        const r = (b.resource && typeof b.resource === "object" ? b.resource : {}) as Record<string, unknown>;
        const uri = str(r.uri) ?? "(no URI)";
        const mimeType = str(r.mimeType);
        const text = str(r.text);
        const blob = str(r.blob);
        return {
          kind: "resource",
          uri,
          mimeType,
          text: text === null ? null : text.slice(0, MAX_PREVIEW_CHARS),
          truncated: text !== null && text.length > MAX_PREVIEW_CHARS,
          image: blob === null ? null : dataUrl(mimeType, blob, IMAGE),
          bytes: blob === null ? null : base64Bytes(blob),
        };
      }
      default:
        return { kind: "other", label: `content of type ${type}` };
    }
  });
}
