// npm package view: its resource declares connectDomains ["https://registry.npmjs.org"], so the
// host's CSP lets it fetch the registry and nothing else. It shows both outcomes honestly.
import { connect, createApp, el, showError } from "./shared";

const root = document.getElementById("root")!;
const app = createApp("porthole-npm-package");

async function lookUp(name: string, registryUrl: string) {
  root.replaceChildren(el("h1", {}, name), el("p", { className: "muted" }, `Fetching ${registryUrl} …`));
  try {
    const response = await fetch(registryUrl, { headers: { accept: "application/vnd.npm.install-v1+json" } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const doc = await response.json();
    const latest = doc["dist-tags"]?.latest ?? "unknown";
    const versions = Object.keys(doc.versions ?? {}).length;
    root.replaceChildren(
      el("h1", {}, name),
      el("p", {}, `Latest version: `, el("strong", {}, latest)),
      el("p", { className: "muted" }, `${versions} versions published · fetched live from the registry`),
    );
  } catch (e) {
    showError(root, `Could not reach the npm registry for ${name} (${e instanceof Error ? e.message : String(e)}). ` +
      "The view may only connect to https://registry.npmjs.org, as its CSP declares.");
  }
}

app.ontoolresult = (result) => {
  const data = result.structuredContent as { name?: string; registryUrl?: string } | undefined;
  if (result.isError || !data?.name || !data.registryUrl) {
    showError(root, "npm_package returned no package name.");
    return;
  }
  void lookUp(data.name, data.registryUrl);
};

connect(app).catch((e) => showError(root, `Could not connect to the host: ${String(e)}`));
