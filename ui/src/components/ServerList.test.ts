import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/svelte";
import type { ServerStatus } from "../lib/api";

const reconnectServer = vi.hoisted(() => vi.fn(async (_name: string) => {}));
vi.mock("../lib/api", async (original) => ({
  ...(await original<typeof import("../lib/api")>()),
  api: { reconnectServer: (name: string) => reconnectServer(name) },
}));

import ServerList from "./ServerList.svelte";

afterEach(cleanup);

const server = (name: string, over: Partial<ServerStatus> = {}): ServerStatus => ({
  name,
  state: "connected",
  error: null,
  endpoint: `stdio: ${name}`,
  serverInfo: null,
  protocolVersion: null,
  mcpApps: true,
  tools: [
    {
      server: name,
      name: "echo",
      modelName: `${name}__echo`,
      title: null,
      description: null,
      inputSchema: { type: "object" },
      uiResourceUri: null,
      visibility: ["model", "app"],
      widget: { kind: "mcp-app", invoking: null, invoked: null },
      metaProblems: [],
    },
  ],
  ...over,
});

describe("ServerList", () => {
  it("folds the tool lists of several servers, shows the only one's, and opens a failed one", () => {
    const one = render(ServerList, { servers: [server("demo")] });
    expect((one.container.querySelector("details") as HTMLDetailsElement).open).toBe(true);
    cleanup();
    const several = render(ServerList, {
      servers: [server("a"), server("b"), server("c", { state: "failed", error: "exited with status 1: Error: boom", tools: [] })],
    });
    const open = [...several.container.querySelectorAll("details")].map((d) => (d as HTMLDetailsElement).open);
    expect(open).toEqual([false, false, true]);
  });

  it("offers Reconnect for a failed server, and says why it could not", async () => {
    const view = render(ServerList, { servers: [server("c", { state: "failed", error: "exited with status 1", tools: [] })] });
    await fireEvent.click(view.getByTestId("server-reconnect"));
    expect(reconnectServer).toHaveBeenCalledWith("c");
    reconnectServer.mockImplementationOnce(async () => Promise.reject({ code: "invalid", message: '"c" is disabled; enable it first' }));
    await fireEvent.click(view.getByTestId("server-reconnect"));
    await waitFor(() => expect(view.getByRole("alert").textContent).toContain("disabled"));
    cleanup();
    const fine = render(ServerList, { servers: [server("a")] });
    expect(fine.queryByTestId("server-reconnect")).toBeNull();
  });
});
