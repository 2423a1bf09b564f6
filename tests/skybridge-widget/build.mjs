// Builds widget.tsx into one self-contained HTML page (the script inline, as an MCP server
// serves a widget): node build.mjs [OUT], OUT defaulting to dist/widget.html.
import { build } from "esbuild";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? `${here}/dist/widget.html`);
const result = await build({
  entryPoints: [`${here}/widget.tsx`],
  bundle: true,
  write: false,
  format: "iife",
  platform: "browser",
  target: "es2022",
  minify: true,
  jsx: "automatic",
  define: { "process.env.NODE_ENV": '"production"', "import.meta.env.DEV": "false" },
  logLevel: "warning",
});
// No text in the bundle may end the script element it is inlined in.
const script = result.outputFiles[0].text.replaceAll("</script", "<\\/script");
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `<!doctype html>\n<html><head><meta charset="utf-8"><title>Topping board</title></head>` +
    `<body><div id="root"></div><script>${script}</script></body></html>\n`,
);
console.log(`${out}: ${Math.round(Buffer.byteLength(script) / 1024)} KiB of script`);
