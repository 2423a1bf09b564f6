import { describe, expect, it } from "vitest";
import type { CatalogTool, ServerStatus } from "./api";
import { countTools, stateLabel, toolKind } from "./tools";

function tool(over: Partial<CatalogTool> = {}): CatalogTool {
  return {
    server: "s",
    name: "t",
    modelName: "t",
    title: null,
    description: null,
    inputSchema: { type: "object" },
    uiResourceUri: null,
    visibility: ["model", "app"],
    widget: { kind: "mcp-app", invoking: null, invoked: null },
    metaProblems: [],
    ...over,
  };
}

function server(over: Partial<ServerStatus> = {}): ServerStatus {
  return { name: "s", state: "connected", error: null, endpoint: "stdio: x", serverInfo: null, protocolVersion: null, mcpApps: true, tools: [], ...over };
}

describe("toolKind", () => {
  it("marks tools with a view", () => {
    expect(toolKind(tool({ uiResourceUri: "ui://s/v.html" }), true)).toBe("ui");
  });
  it("marks app-only, model-only and hidden tools", () => {
    expect(toolKind(tool({ visibility: ["app"], uiResourceUri: "ui://s/v.html" }), true)).toBe("app-only");
    expect(toolKind(tool({ visibility: ["model"] }), true)).toBe("model-only");
    expect(toolKind(tool({ visibility: [] }), true)).toBe("hidden");
  });
  it("does not call a tool model-only when MCP Apps is off for its server", () => {
    expect(toolKind(tool({ visibility: ["model"] }), false)).toBe("plain");
  });
});

describe("countTools and stateLabel", () => {
  it("counts tools, views and failed servers", () => {
    const servers = [
      server({ tools: [tool(), tool({ name: "u", uiResourceUri: "ui://s/u.html" })] }),
      server({ name: "dead", state: "failed", error: "cannot start" }),
    ];
    expect(countTools(servers)).toEqual({ total: 2, ui: 1, failed: 1 });
  });
  it("says what state a server is in", () => {
    expect(stateLabel(server({ tools: [tool()] }))).toBe("1 tool");
    expect(stateLabel(server({ tools: [tool(), tool()] }))).toBe("2 tools");
    expect(stateLabel(server({ state: "connecting" }))).toBe("connecting…");
    expect(stateLabel(server({ state: "disabled" }))).toBe("off");
    expect(stateLabel(server({ state: "failed" }))).toBe("failed");
  });
});
