// Builds each demo MCP App view into one self-contained HTML file (the script and style inlined),
// as MCP Apps hosts expect: ui/dist-views/<name>.html. The views use the official
// @modelcontextprotocol/ext-apps SDK, bundled in by esbuild. The Rust demo server embeds them.
import { build } from "esbuild";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "dist-views");
const views = { "system-monitor": "System monitor", directory: "Folder browser", weather: "Weather" };

await mkdir(out, { recursive: true });
const style = await readFile(join(here, "view.css"), "utf8");
const template = await readFile(join(here, "view.html"), "utf8");
for (const [name, title] of Object.entries(views)) {
  const result = await build({
    entryPoints: [join(here, `${name}.ts`)],
    bundle: true,
    format: "iife",
    minify: true,
    target: "es2022",
    write: false,
    legalComments: "none",
  });
  const script = result.outputFiles[0].text.replaceAll("</script", "<\\/script");
  const html = template
    .replace("<!--TITLE-->", title)
    .replace("<!--STYLE-->", () => `<style>${style}</style>`)
    .replace("<!--SCRIPT-->", () => `<script>${script}</script>`);
  await writeFile(join(out, `${name}.html`), html);
  console.log(`demo view ${name}.html: ${(html.length / 1024).toFixed(0)} KiB`);
}
