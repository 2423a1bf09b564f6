import { describe, expect, it } from "vitest";
import { MAX_PREVIEW_CHARS, contentOf, viewContent } from "./toolContent";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

describe("viewContent", () => {
  it("shows text, images and audio inline as data URLs of their own types", () => {
    const shown = viewContent([
      { type: "text", text: "Hello\nthere" },
      { type: "image", mimeType: "image/png", data: PNG },
      { type: "audio", mimeType: "audio/wav", data: "UklGRg==" },
    ]);
    expect(shown).toEqual([
      { kind: "text", text: "Hello\nthere" },
      { kind: "image", mimeType: "image/png", src: `data:image/png;base64,${PNG}` },
      { kind: "audio", mimeType: "audio/wav", src: "data:audio/wav;base64,UklGRg==" },
    ]);
  });

  it("refuses to inline what is not an image or audio of a known type, or not base64", () => {
    const shown = viewContent([
      { type: "image", mimeType: "text/html", data: PNG },
      { type: "image", mimeType: "image/png", data: "not base64 <script>" },
      { type: "image", mimeType: "image/png;x=1", data: PNG },
      { type: "audio", mimeType: "video/mp4", data: "AAAA" },
      "a string",
      { type: "widget" },
    ]);
    expect(shown.map((s) => s.kind)).toEqual(["other", "other", "other", "other", "other", "other"]);
    expect(shown[0]).toEqual({ kind: "other", label: "an image Porthole does not show (text/html)" });
    expect(shown[5]).toEqual({ kind: "other", label: "content of type widget" });
  });

  it("offers resource links by title or name, and previews embedded resources", () => {
    const long = "x".repeat(MAX_PREVIEW_CHARS + 5);
    const shown = viewContent([
      { type: "resource_link", uri: "demo://resource/static/document/architecture.md", name: "architecture.md", description: "How it is built", mimeType: "text/markdown" },
      { type: "resource_link", name: "no uri" },
      { type: "resource", resource: { uri: "demo://a.txt", mimeType: "text/plain", text: long } },
      { type: "resource", resource: { uri: "demo://b.png", mimeType: "image/png", blob: PNG } },
      { type: "resource", resource: { uri: "demo://c.bin", mimeType: "application/octet-stream", blob: "AAAA" } },
    ]);
    expect(shown[0]).toEqual({ kind: "link", uri: "demo://resource/static/document/architecture.md", name: "architecture.md", description: "How it is built", mimeType: "text/markdown" });
    expect(shown[1]).toEqual({ kind: "other", label: "a resource link without a URI" });
    expect(shown[2]).toMatchObject({ kind: "resource", uri: "demo://a.txt", truncated: true });
    expect((shown[2] as { text: string }).text).toHaveLength(MAX_PREVIEW_CHARS);
    expect(shown[3]).toMatchObject({ kind: "resource", image: `data:image/png;base64,${PNG}`, bytes: 70 });
    expect(shown[4]).toMatchObject({ kind: "resource", image: null, bytes: 3, text: null });
  });

  it("takes the content of a result, or none", () => {
    expect(contentOf({ content: [{ type: "text", text: "a" }] })).toHaveLength(1);
    expect(contentOf({ structuredContent: {} })).toEqual([]);
    expect(contentOf(null)).toEqual([]);
  });
});
