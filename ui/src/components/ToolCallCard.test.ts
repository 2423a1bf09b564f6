import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/svelte";
import ToolCallCard from "./ToolCallCard.svelte";
import type { ToolCallItem } from "../lib/transcript.svelte";
import { views } from "../lib/views.svelte";
import { settingsDialog } from "../lib/settingsDialog.svelte";

vi.mock("../lib/api", async (original) => ({
  ...(await original<typeof import("../lib/api")>()),
  api: {
    answerApproval: async () => {},
    viewMessage: async () => {},
    setViewContainer: async () => {},
    setViewDisplayMode: async () => {},
    closeView: async () => {},
    clipboardWriteRequested: async () => {},
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
    emulating: null,
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
  allowedBy: null,
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

  it("copies either facing, and explains the note Porthole adds for the model", async () => {
    const writes: string[] = [];
    Object.defineProperty(navigator, "clipboard", {
      configurable: true,
      value: { writeText: async (t: string) => void writes.push(t) },
    });
    const done: ToolCallItem = {
      ...call("ok"),
      modelResult: {
        content: [
          { type: "text", text: "18°C" },
          { type: "text", text: "[Porthole: this tool's interactive view is shown to the user in the chat.]" },
        ],
        isError: false,
      },
      viewResult: { content: [{ type: "text", text: "18°C" }], structuredContent: { c: 18 } },
    };
    const card = render(ToolCallCard, { call: done });
    await fireEvent.click(card.getByTestId("copy-model-facing"));
    await fireEvent.click(card.getByTestId("copy-view-facing"));
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[0]).content[1].text).toContain("[Porthole:");
    expect(JSON.parse(writes[1]).structuredContent).toEqual({ c: 18 });
    expect(await card.findByText("Copied", { selector: "[data-testid=copy-view-facing]" })).toBeTruthy();
    expect(card.getByTestId("view-note-explained").textContent).toContain("tells the model that the view is on screen");
    cleanup();
    const plain = render(ToolCallCard, { call: { ...done, modelResult: { content: [{ type: "text", text: "18°C" }], isError: false } } });
    expect(plain.queryByTestId("view-note-explained")).toBeNull();
  });

  it("marks a call that ran on a standing approval, and leads to where it can be revoked", async () => {
    for (const [allowedBy, text] of [
      ["remembered", "Allowed: you chose “Always allow”"],
      ["config", "Allowed by the server's alwaysAllow"],
      ["always", "Always allowed from now on"],
    ] as const) {
      const card = render(ToolCallCard, { call: { ...call("ok"), allowedBy } });
      expect(card.getByTestId("tool-allowed-by").textContent).toBe(text);
      cleanup();
    }
    for (const allowedBy of ["once", "person", "readonly", null] as const) {
      const card = render(ToolCallCard, { call: { ...call("ok"), allowedBy } });
      expect(card.queryByTestId("tool-allowed-by"), String(allowedBy)).toBeNull();
      cleanup();
    }
    settingsDialog.close();
    const card = render(ToolCallCard, { call: { ...call("ok"), allowedBy: "remembered" } });
    await fireEvent.click(card.getByTestId("tool-allowed-by"));
    expect(settingsDialog.isOpen).toBe(true);
    expect(settingsDialog.tab).toBe("approvals");
    settingsDialog.close();
  });

  it("keeps the keyboard on the card once the approval is answered", async () => {
    const card = render(ToolCallCard, { call: call("awaiting-approval") });
    const allow = card.getByTestId("approve-once");
    allow.focus();
    await fireEvent.click(allow);
    await vi.waitFor(() => expect(document.activeElement).toBe(card.getByTestId("tool-call")));
  });
});
