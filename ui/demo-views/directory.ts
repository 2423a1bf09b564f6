// Folder browser view: renders list_directory's structuredContent; clicking a folder calls
// list_directory again through the host (a tool visible to both the model and the app).
import { connect, createApp, el, showError } from "./shared";

interface Entry { name: string; kind: string; size: number | null; modifiedUnix: number | null }
interface Listing { path: string; parent: string | null; total: number; entries: Entry[] }

const root = document.getElementById("root")!;
const app = createApp("porthole-folder-browser");

const join = (dir: string, name: string) => (dir.endsWith("/") || dir.endsWith("\\") ? dir + name : `${dir}/${name}`);

function formatSize(size: number | null) {
  if (size == null) return "";
  if (size < 1024) return `${size} B`;
  if (size < 1048576) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / 1048576).toFixed(1)} MiB`;
}

function render(listing: Listing) {
  const rows = listing.entries.map((e) => {
    const name = e.kind === "folder"
      ? el("button", { type: "button", className: "link", textContent: `${e.name}/`, onclick: () => void open(join(listing.path, e.name)) })
      : e.name;
    return el("tr", {},
      el("td", {}, name),
      el("td", {}, e.kind),
      el("td", { className: "num" }, formatSize(e.size)),
      el("td", {}, e.modifiedUnix ? new Date(e.modifiedUnix * 1000).toLocaleString() : ""));
  });
  const up = listing.parent
    ? el("button", { type: "button", textContent: "Up", onclick: () => void open(listing.parent!) })
    : "";
  root.replaceChildren(
    el("div", { className: "row" }, el("h1", {}, listing.path), up),
    el("p", { className: "muted" }, `${listing.total} entries${listing.total > listing.entries.length ? `, first ${listing.entries.length} shown` : ""}`),
    el("table", {},
      el("thead", {}, el("tr", {}, el("th", {}, "Name"), el("th", {}, "Kind"), el("th", { className: "num" }, "Size"), el("th", {}, "Modified"))),
      el("tbody", {}, ...rows)),
  );
}

async function open(path: string) {
  try {
    const result = await app.callServerTool({ name: "list_directory", arguments: { path } });
    if (result.isError) {
      const text = result.content?.map((c) => ("text" in c ? c.text : "")).join(" ");
      throw new Error(text || "the tool failed");
    }
    render(result.structuredContent as unknown as Listing);
  } catch (e) {
    showError(root, `Cannot open ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

app.ontoolresult = (result) => {
  if (result.isError || !result.structuredContent) {
    const text = result.content?.map((c) => ("text" in c ? c.text : "")).join(" ");
    showError(root, text || "list_directory returned no listing.");
    return;
  }
  render(result.structuredContent as unknown as Listing);
};

connect(app).catch((e) => showError(root, `Could not connect to the host: ${String(e)}`));
