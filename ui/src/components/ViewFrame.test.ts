import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/svelte";
import { flushSync } from "svelte";
import type { ViewEvent } from "../lib/api";
import { ev } from "../lib/testing/turns";
import { Transcript } from "../lib/transcript.svelte";
import { views } from "../lib/views.svelte";
import { SETTLE_MS, ZONE_MARGIN } from "../lib/viewZone";
import { FakeZoneObserver, installFakeZone } from "../lib/testing/zone";
import TranscriptView from "./TranscriptView.svelte";
import ViewFrame from "./ViewFrame.svelte";

const closeView = vi.fn(async (_viewId: string) => {});
const setViewDisplayMode = vi.fn(async (_viewId: string, _mode: string) => {});
const viewMessage = vi.fn(async (_viewId: string, _message: unknown) => {});
const reopenViews = vi.fn(async (_conversationId: string, _callId?: string) => {});
vi.mock("../lib/api", () => ({
  api: {
    closeView: (viewId: string) => closeView(viewId),
    viewMessage: (viewId: string, message: unknown) => viewMessage(viewId, message),
    answerApproval: async () => {},
    setViewDisplayMode: (viewId: string, mode: string) => setViewDisplayMode(viewId, mode),
    reopenViews: (conversationId: string, callId?: string) => reopenViews(conversationId, callId),
  },
}));

beforeEach(() => {
  views.reset();
  closeView.mockClear();
  viewMessage.mockClear();
  reopenViews.mockClear();
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

describe("ViewFrame far from sight", () => {
  let uninstall: () => void;
  beforeEach(() => {
    vi.useFakeTimers();
    uninstall = installFakeZone();
  });
  afterEach(() => {
    uninstall();
    vi.useRealTimers();
  });

  /** A transcript with call-1's card, its view v1 ready on it. */
  function cardWithView() {
    const transcript = new Transcript();
    for (const e of [
      ev.user("Weather?"),
      ev.step(1),
      ev.callStarted("call-1", "demo__forecast", "demo", "forecast", { city: "Paris" }, "ui://demo/forecast.html"),
    ])
      transcript.apply(e);
    const utils = render(TranscriptView, { transcript, servers: [] });
    views.handle(opened("call-1", "v1"));
    views.handle(state("call-1", "v1", "ready"));
    flushSync();
    const container = () => utils.getByTestId("view");
    const frame = () => utils.queryByTestId("mcp-app-view") as HTMLIFrameElement | null;
    const stateLine = () => utils.getByTestId("view-state");
    /** The card leaves (false) or enters (true) the zone, and `ms` pass. */
    const move = (inside: boolean, ms = 0) => {
      FakeZoneObserver.move(container(), inside);
      flushSync();
      wait(ms);
    };
    const wait = (ms: number) => {
      vi.advanceTimersByTime(ms);
      flushSync();
    };
    return { ...utils, container, frame, stateLine, move, wait };
  }

  it("watches its card against the transcript, with a wide margin", () => {
    const { container, getByTestId } = cardWithView();
    const [observer, ...others] = FakeZoneObserver.of(container());
    expect(others).toEqual([]);
    expect(observer.options.root).toBe(getByTestId("transcript"));
    expect(observer.options.rootMargin).toBe(ZONE_MARGIN);
  });

  it("parks a view out of the zone for 500 ms: its frame goes, its place stays, Rust closes it once", () => {
    const { container, frame, stateLine, move, wait } = cardWithView();
    const first = frame();
    expect(first).not.toBeNull();
    vi.spyOn(container(), "getBoundingClientRect").mockReturnValue({ height: 412 } as DOMRect);

    move(false, SETTLE_MS - 1);
    expect(frame()).toBe(first);
    expect(closeView).not.toHaveBeenCalled();

    wait(1);
    expect(frame()).toBeNull();
    expect(stateLine().dataset.state).toBe("parked");
    expect(stateLine().textContent?.trim()).toBe("The view is paused while out of sight.");
    expect(stateLine().classList.contains("visually-hidden")).toBe(false);
    expect(container().style.minHeight).toBe("412px");
    expect(closeView).toHaveBeenCalledExactlyOnceWith("v1");
    expect(views.get("call-1")).toMatchObject({ viewId: "v1", state: "parked" });

    // Rust's word that the view is closed leaves it parked; nothing more is asked of Rust.
    views.handle({ type: "closed", viewId: "v1" });
    flushSync();
    expect(stateLine().dataset.state).toBe("parked");
    wait(10 * SETTLE_MS);
    expect(closeView).toHaveBeenCalledOnce();
    expect(reopenViews).not.toHaveBeenCalled();
  });

  it("does not park a view that comes back within 500 ms, however often it hovers at the edge", () => {
    const { frame, move, wait } = cardWithView();
    const first = frame();
    for (let i = 0; i < 5; i++) {
      move(false, SETTLE_MS - 100);
      move(true, SETTLE_MS - 100);
    }
    wait(10 * SETTLE_MS);
    expect(frame()).toBe(first);
    expect(closeView).not.toHaveBeenCalled();
    expect(reopenViews).not.toHaveBeenCalled();
  });

  it("re-creates a parked view once it is back for 500 ms, and shows the new view's frame", async () => {
    const { frame, stateLine, move, wait, getByTestId } = cardWithView();
    const first = frame();
    move(false, SETTLE_MS);
    expect(frame()).toBeNull();

    // Back, but not for long: nothing is asked.
    move(true, SETTLE_MS - 1);
    move(false, SETTLE_MS);
    expect(reopenViews).not.toHaveBeenCalled();

    move(true, SETTLE_MS - 1);
    expect(reopenViews).not.toHaveBeenCalled();
    wait(1);
    expect(reopenViews).toHaveBeenCalledExactlyOnceWith("c1", "call-1");
    // Asked once, however it moves before Rust answers.
    move(false, 100);
    move(true, 10 * SETTLE_MS);
    expect(reopenViews).toHaveBeenCalledOnce();

    // Rust re-creates the call's view: a new view id for the same call.
    views.handle(state("call-1", "v2", "loading"));
    flushSync();
    expect(stateLine().dataset.state).toBe("loading");
    views.handle(opened("call-1", "v2"));
    views.handle(state("call-1", "v2", "ready"));
    flushSync();
    const second = frame();
    expect(second).not.toBeNull();
    expect(second).not.toBe(first);
    expect(second?.getAttribute("src")).toBe("mcpview://localhost/v2-token");
    expect(getByTestId("view").dataset.viewId).toBe("v2");
    await Promise.resolve();
    expect(views.get("call-1")?.viewId).toBe("v2");
    expect(closeView).toHaveBeenCalledExactlyOnceWith("v1");

    // The new view is watched in turn, and can be parked again.
    move(false, SETTLE_MS);
    expect(frame()).toBeNull();
    expect(closeView).toHaveBeenLastCalledWith("v2");
    expect(closeView).toHaveBeenCalledTimes(2);
  });

  it.each(["fullscreen", "pip"] as const)("never parks a view shown %s, but parks it once back on its far card", (mode) => {
    const { frame, move, wait } = cardWithView();
    views.handle({ type: "display_mode", viewId: "v1", mode });
    flushSync();
    move(false, 10 * SETTLE_MS);
    expect(frame()).not.toBeNull();
    expect(views.get("call-1")?.state).toBe("ready");
    expect(closeView).not.toHaveBeenCalled();

    views.setMode("v1", "inline");
    flushSync();
    wait(SETTLE_MS);
    expect(frame()).toBeNull();
    expect(views.get("call-1")?.state).toBe("parked");
    expect(closeView).toHaveBeenCalledExactlyOnceWith("v1");
  });

  it("parks a view still loading, but not one that failed", () => {
    const { frame, move, stateLine } = cardWithView();
    views.handle(state("call-1", "v1", "failed", "no ui/initialize"));
    flushSync();
    move(false, 10 * SETTLE_MS);
    expect(stateLine().dataset.state).toBe("failed");
    expect(closeView).not.toHaveBeenCalled();

    // A new view for the call (the failed one is closed as it is replaced), still loading.
    views.handle(state("call-1", "v3", "loading"));
    views.handle(opened("call-1", "v3"));
    flushSync();
    expect(closeView).toHaveBeenCalledExactlyOnceWith("v1");
    expect(frame()).not.toBeNull();
    move(false, SETTLE_MS);
    expect(frame()).toBeNull();
    expect(stateLine().dataset.state).toBe("parked");
    expect(closeView).toHaveBeenLastCalledWith("v3");
    expect(closeView).toHaveBeenCalledTimes(2);
  });

  it("stops watching, and forgets its timers, when the card goes", () => {
    const { container, move, unmount } = cardWithView();
    const el = container();
    const [observer] = FakeZoneObserver.of(el);
    move(false, SETTLE_MS - 1);
    unmount();
    expect(observer.disconnected).toBe(true);
    vi.advanceTimersByTime(10 * SETTLE_MS);
    // Closed once, for the frame going; never parked.
    expect(closeView).toHaveBeenCalledExactlyOnceWith("v1");
    expect(reopenViews).not.toHaveBeenCalled();
  });
});

describe("ViewFrame of a parked view", () => {
  it("says the view is paused, and why it could not come back", () => {
    views.handle(opened("call-1", "v1"));
    views.park("v1");
    const { getByTestId, queryByTestId } = showView();
    expect(queryByTestId("mcp-app-view")).toBeNull();
    expect(getByTestId("view-state").textContent?.trim()).toBe("The view is paused while out of sight.");
    views.get("call-1")!.reason = "the store is locked";
    flushSync();
    expect(getByTestId("view-state").textContent?.trim()).toBe(
      "The view is paused while out of sight; it could not be re-created: the store is locked",
    );
  });
});

describe("ViewFrame after Rust closed its view", () => {
  it("does not ask Rust to close it again when the frame goes", async () => {
    views.handle(opened("call-1", "v1"));
    const { unmount, getByTestId } = showView();
    views.handle({ type: "closed", viewId: "v1" });
    flushSync();
    expect(getByTestId("view-state").dataset.state).toBe("closed");
    unmount();
    await Promise.resolve();
    expect(closeView).not.toHaveBeenCalled();
  });
});
