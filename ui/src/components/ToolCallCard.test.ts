import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, render } from "@testing-library/svelte";
import ToolCallCard from "./ToolCallCard.svelte";
import type { ToolCallItem } from "../lib/transcript.svelte";
import { views } from "../lib/views.svelte";

vi.mock("../lib/api", async (original) => ({
  ...(await original<typeof import("../lib/api")>()),
  api: {
    answerApproval: async () => {},
    viewMessage: async () => {},
    setViewContainer: async () => {},
    setViewDisplayMode: async () => {},
    closeView: async () => {},
  },
}));

beforeEach(() => views.reset());
afterEach(cleanup);

/** Rust says call `c1` has a view, loading. */
function viewOpened() {
  views.handle({
    type: "opened",
    conversationId: "conv",
    callId: "c1",
    viewId: "v1",
    url: "mcpview://localhost/v1-token",
    allow: "",
    prefersBorder: null,
    displayModes: ["inline", "fullscreen", "pip"],
    cspDropped: [],
    reaches: [],
    devices: [],
    devicesAsked: [],
  });
}

const call = (status: ToolCallItem["status"]): ToolCallItem => ({
  kind: "tool-call",
  id: 1,
  callId: "c1",
  name: "bake",
  server: "pizzaz",
  tool: "bake",
  arguments: {},
  argumentsText: "{}",
  uiResourceUri: null,
  status,
  decision: null,
  progress: null,
  durationMs: null,
  modelResult: null,
  viewResult: null,
  error: null,
});

describe("ToolCallCard", () => {
  it("shows the tool's own words while it runs and once it is done (Apps SDK status lines)", () => {
    const widget = { kind: "openai" as const, invoking: "Baking a pizza", invoked: "Served a pizza" };
    const running = render(ToolCallCard, { call: call("running"), widget });
    expect(running.getByTestId("tool-invocation").textContent).toBe("Baking a pizza");
    cleanup();
    const done = render(ToolCallCard, { call: call("ok"), widget });
    expect(done.getByTestId("tool-invocation").textContent).toBe("Served a pizza");
    cleanup();
    const failed = render(ToolCallCard, { call: call("error"), widget });
    expect(failed.queryByTestId("tool-invocation")).toBeNull();
    cleanup();
    const plain = render(ToolCallCard, { call: call("running") });
    expect(plain.queryByTestId("tool-invocation")).toBeNull();
  });

  it("keeps a call's view out of sight until the call is allowed, and for good when it is denied", () => {
    viewOpened();
    const asking = render(ToolCallCard, { call: call("awaiting-approval") });
    const slot = asking.getByTestId("view-slot");
    expect(slot.hidden).toBe(true);
    // The frame is there (loading), with its controls, but not seen.
    expect(slot.querySelector("iframe[data-testid=mcp-app-view]")).not.toBeNull();
    cleanup();
    const running = render(ToolCallCard, { call: call("running") });
    expect(running.getByTestId("view-slot").hidden).toBe(false);
    cleanup();
    // Denied: out of sight for good (the view still hears that the call was cancelled).
    const denied = render(ToolCallCard, { call: call("denied") });
    expect(denied.getByTestId("view-slot").hidden).toBe(true);
    expect(denied.getByTestId("view-none").textContent).toBe("No view: the call was denied.");
    cleanup();
    views.reset();
    const plain = render(ToolCallCard, { call: call("denied") });
    expect(plain.queryByTestId("view-none")).toBeNull();
  });
});
