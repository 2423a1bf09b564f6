import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/svelte";
import { flushSync } from "svelte";
import type { ViewEvent } from "../lib/api";
import { ev } from "../lib/testing/turns";
import { Transcript } from "../lib/transcript.svelte";
import { views } from "../lib/views.svelte";
import TranscriptView from "./TranscriptView.svelte";
import ViewFrame from "./ViewFrame.svelte";

const closeView = vi.fn(async (_viewId: string) => {});
const setViewDisplayMode = vi.fn(async (_viewId: string, _mode: string) => {});
const viewMessage = vi.fn(async (_viewId: string, _message: unknown) => {});
vi.mock("../lib/api", () => ({
  api: {
    closeView: (viewId: string) => closeView(viewId),
    viewMessage: (viewId: string, message: unknown) => viewMessage(viewId, message),
    answerApproval: async () => {},
    setViewDisplayMode: (viewId: string, mode: string) => setViewDisplayMode(viewId, mode),
  },
}));

beforeEach(() => {
  views.reset();
  closeView.mockClear();
  viewMessage.mockClear();
});
afterEach(cleanup);

const opened = (callId: string, viewId: string, over: Partial<Extract<ViewEvent, { type: "opened" }>> = {}): ViewEvent => ({
  type: "opened",
  conversationId: "c1",
  callId,
  viewId,
  url: `mcpview://localhost/${viewId}-token`,
  allow: "clipboard-write",
  prefersBorder: null,
  displayModes: ["inline", "fullscreen", "pip"],
  ...over,
});
const state = (callId: string, viewId: string | null, s: Extract<ViewEvent, { type: "state" }>["state"], reason: string | null = null): ViewEvent => ({
  type: "state",
  conversationId: "c1",
  callId,
  viewId,
  state: s,
  reason,
});

function showView(callId = "call-1", label = "forecast") {
  return render(ViewFrame, { view: views.get(callId)!, label });
}

describe("ViewFrame", () => {
  it("renders the view in a frame sandboxed with exactly allow-scripts", () => {
    views.handle(opened("call-1", "v1"));
    const { getByTestId } = showView();
    const frame = getByTestId("mcp-app-view") as HTMLIFrameElement;
    expect(frame.tagName).toBe("IFRAME");
    expect(frame.getAttribute("sandbox")).toBe("allow-scripts");
    expect(frame.getAttribute("allow")).toBe("clipboard-write");
    expect(frame.getAttribute("src")).toBe("mcpview://localhost/v1-token");
    expect(frame.getAttribute("title")).toBe("View of forecast");
    expect(frame.getAttribute("referrerpolicy")).toBe("no-referrer");
    expect(frame.hasAttribute("srcdoc")).toBe(false);
    const line = getByTestId("view-state");
    expect(line.dataset.state).toBe("loading");
    expect(line.textContent?.trim()).toBe("Loading the view…");
  });

  it("says the view is loading before its frame can be shown", () => {
    views.handle(state("call-1", "v1", "loading"));
    const { getByTestId, queryByTestId } = showView();
    expect(getByTestId("view-state").textContent?.trim()).toBe("Loading the view…");
    expect(queryByTestId("mcp-app-view")).toBeNull();
    views.handle(opened("call-1", "v1"));
    flushSync();
    expect(queryByTestId("mcp-app-view")).not.toBeNull();
  });

  it("follows the view's state: ready, then its height", () => {
    views.handle(opened("call-1", "v1"));
    const { getByTestId } = showView();
    const box = getByTestId("view-frame");
    expect(box.style.getPropertyValue("--view-height")).toBe("320px");
    views.handle(state("call-1", "v1", "ready"));
    views.handle({ type: "size", viewId: "v1", width: 2000, height: 12 });
    flushSync();
    expect(getByTestId("view-state").dataset.state).toBe("ready");
    expect(getByTestId("view-state").classList.contains("visually-hidden")).toBe(true);
    expect(box.style.getPropertyValue("--view-height")).toBe("40px");
    expect(box.style.width).toBe("");
  });

  it.each([
    ["failed", "the view did not start within 10 s (no ui/initialize)", "The view failed: the view did not start within 10 s (no ui/initialize)"],
    ["refused", "the resource is not an MCP App", "The view was refused: the resource is not an MCP App"],
    ["expired", null, "This view expired; the result the model got is still here."],
  ] as const)("shows no frame for a %s view, and says why", (s, reason, text) => {
    views.handle(opened("call-1", "v1"));
    const { getByTestId, queryByTestId } = showView();
    expect(queryByTestId("mcp-app-view")).not.toBeNull();
    views.handle(state("call-1", "v1", s, reason));
    flushSync();
    expect(queryByTestId("mcp-app-view")).toBeNull();
    const line = getByTestId("view-state");
    expect(line.dataset.state).toBe(s);
    expect(line.textContent?.trim()).toBe(text);
  });

  it("says a view expired when it has no view id at all", () => {
    views.handle(state("call-1", null, "expired"));
    const { getByTestId, queryByTestId, unmount } = showView();
    expect(getByTestId("view-state").textContent?.trim()).toBe("This view expired; the result the model got is still here.");
    expect(queryByTestId("mcp-app-view")).toBeNull();
    unmount();
    expect(closeView).not.toHaveBeenCalled();
  });

  it("draws a border as the view prefers: yes, no, or the host's default", () => {
    views.handle(opened("call-1", "v1", { prefersBorder: true }));
    views.handle(opened("call-2", "v2", { prefersBorder: false }));
    views.handle(opened("call-3", "v3", { prefersBorder: null }));
    const borders = ["call-1", "call-2", "call-3"].map((id) => showView(id).getAllByTestId("view-frame").at(-1)!.dataset.border);
    expect(borders).toEqual(["on", "off", "default"]);
  });

  it("registers its frame with the relay, and asks Rust to close the view once when it goes", async () => {
    views.handle(opened("call-1", "v1"));
    const { getByTestId, unmount } = showView();
    const frame = getByTestId("mcp-app-view") as HTMLIFrameElement;
    const message = { jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} };
    views.receive({ source: frame.contentWindow, data: message });
    expect(viewMessage).toHaveBeenCalledExactlyOnceWith("v1", message);

    unmount();
    await Promise.resolve();
    expect(closeView).toHaveBeenCalledExactlyOnceWith("v1");
    expect(views.get("call-1")).toBeUndefined();
    views.receive({ source: frame.contentWindow, data: message });
    expect(viewMessage).toHaveBeenCalledOnce();
  });

  it("goes full screen and back (button or Esc) without reloading the frame", async () => {
    views.handle(opened("call-1", "v1"));
    views.handle(state("call-1", "v1", "ready"));
    const { getByTestId, queryByTestId } = showView();
    const frame = getByTestId("mcp-app-view");
    views.handle({ type: "display_mode", viewId: "v1", mode: "fullscreen" });
    flushSync();
    const box = getByTestId("view-frame");
    expect(box.classList.contains("fullscreen")).toBe(true);
    expect(box.getAttribute("role")).toBe("dialog");
    expect(getByTestId("mcp-app-view")).toBe(frame);

    await fireEvent.click(getByTestId("view-exit-fullscreen"));
    expect(box.classList.contains("inline")).toBe(true);
    expect(setViewDisplayMode).toHaveBeenLastCalledWith("v1", "inline");
    expect(queryByTestId("view-exit-fullscreen")).toBeNull();
    expect(getByTestId("mcp-app-view")).toBe(frame);

    await fireEvent.click(getByTestId("view-enter-fullscreen"));
    expect(views.get("call-1")?.mode).toBe("fullscreen");
    await fireEvent.keyDown(window, { key: "Escape" });
    expect(views.get("call-1")?.mode).toBe("inline");
    expect(getByTestId("mcp-app-view")).toBe(frame);
  });

  it("shows a view in a corner (picture in picture) and back", async () => {
    views.handle(opened("call-1", "v1"));
    views.handle(state("call-1", "v1", "ready"));
    const { getByTestId } = showView();
    await fireEvent.click(getByTestId("view-enter-pip"));
    expect(getByTestId("view-frame").classList.contains("pip")).toBe(true);
    expect(getByTestId("view-elsewhere").textContent).toContain("corner");
    await fireEvent.click(getByTestId("view-exit-pip"));
    expect(getByTestId("view-frame").classList.contains("inline")).toBe(true);
  });

  it("is shown on its tool card, and closed when the transcript is cleared", async () => {
    const transcript = new Transcript();
    for (const e of [
      ev.user("Weather?"),
      ev.step(1),
      ev.callStreaming("call-1", "demo__forecast", "{"),
      ev.callStarted("call-1", "demo__forecast", "demo", "forecast", { city: "Paris" }, "ui://demo/forecast.html"),
    ])
      transcript.apply(e);
    const { getByTestId, queryByTestId } = render(TranscriptView, { transcript, servers: [] });
    expect(queryByTestId("view")).toBeNull();

    views.handle(state("call-1", "v1", "loading"));
    views.handle(opened("call-1", "v1"));
    flushSync();
    const card = getByTestId("tool-call");
    const frame = card.querySelector("[data-testid=mcp-app-view]");
    expect(frame?.getAttribute("title")).toBe("View of forecast");

    // Reopening the call's view gives it a new frame; the old view is closed once.
    views.handle(opened("call-1", "v2"));
    flushSync();
    expect(card.querySelector("[data-testid=mcp-app-view]")).not.toBe(frame);
    expect(closeView).toHaveBeenCalledExactlyOnceWith("v1");

    transcript.clear();
    flushSync();
    expect(queryByTestId("mcp-app-view")).toBeNull();
    expect(closeView).toHaveBeenLastCalledWith("v2");
    expect(closeView).toHaveBeenCalledTimes(2);
    await Promise.resolve();
    expect(views.get("call-1")).toBeUndefined();
  });
});
