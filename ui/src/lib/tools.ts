// Pure helpers over the tool catalog, shared by the sidebar and (later) the tools panel.
import type { CatalogTool, ServerStatus } from "./api";

export type ToolKind = "ui" | "app-only" | "model-only" | "hidden" | "plain";

/** How a tool is shown: whether it has a view and who may call it. `mcpApps` is whether the
 * extension was advertised to the tool's server (without it every tool is a plain tool). */
export function toolKind(tool: CatalogTool, mcpApps: boolean): ToolKind {
  const model = tool.visibility.includes("model");
  const app = tool.visibility.includes("app");
  if (!model && !app) return "hidden";
  if (!model) return "app-only";
  if (tool.uiResourceUri) return "ui";
  if (mcpApps && !app) return "model-only";
  return "plain";
}

export function countTools(servers: ServerStatus[]): { total: number; ui: number; failed: number } {
  let total = 0;
  let ui = 0;
  let failed = 0;
  for (const s of servers) {
    if (s.state === "failed") failed++;
    for (const t of s.tools) {
      total++;
      if (t.uiResourceUri) ui++;
    }
  }
  return { total, ui, failed };
}

export function stateLabel(server: ServerStatus): string {
  switch (server.state) {
    case "connected":
      return `${server.tools.length} tool${server.tools.length === 1 ? "" : "s"}`;
    case "connecting":
      return "connecting…";
    case "disabled":
      return "off";
    case "failed":
      return "failed";
  }
}
