import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/svelte";
import { flushSync } from "svelte";
import type { ViewEvent } from "../lib/api";
import { ev } from "../lib/testing/turns";
import { Transcript } from "../lib/transcript.svelte";
import { views } from "../lib/views.svelte";
import { SETTLE_MS, ZONE_MARGIN } from "../lib/viewZone";
import { FakeZoneObserver, installFakeZone } from "../lib/testing/zone";
import { FakeWidthObserver, installFakeWidth } from "../lib/testing/width";
import { WIDTH_DEBOUNCE_MS } from "../lib/viewWidth";
import TranscriptView from "./TranscriptView.svelte";
import ViewFrame from "./ViewFrame.svelte";
import { refused } from "../lib/testing/errors";

const closeView = vi.fn(async (_viewId: string) => {});
const setViewDisplayMode = vi.fn(async (_viewId: string, _mode: string) => {});
const viewMessage = vi.fn(async (_viewId: string, _message: unknown) => {});
const reopenViews = vi.fn(async (_conversationId: string, _callId?: string) => {});
const setViewContainer = vi.fn(async (_viewId: string, _width: number) => {});
const popOutView = vi.fn(async (_viewId: string) => "view-1");
const allowViewDevices = vi.fn(async (_viewId: string) => {});
/** Teardowns Rust was asked for and has not finished, by view id. */
const teardowns = new Map<string, { resolve: () => void; reject: (e: unknown) => void }>();
const teardownView = vi.fn(
  (viewId: string) => new Promise<void>((resolve, reject) => teardowns.set(viewId, { resolve, reject })),
);
vi.mock("../lib/api", async (original) => ({
  ...(await original<typeof import("../lib/api")>()),
  api: {
    closeView: (viewId: string) => closeView(viewId),
    viewMessage: (viewId: string, message: unknown) => viewMessage(viewId, message),
    answerApproval: async () => {},
    setViewDisplayMode: (viewId: string, mode: string) => setViewDisplayMode(viewId, mode),
    reopenViews: (conversationId: string, callId?: string) => reopenViews(conversationId, callId),
    setViewContainer: (viewId: string, width: number) => setViewContainer(viewId, width),
    teardownView: (viewId: string) => teardownView(viewId),
    popOutView: (viewId: string) => popOutView(viewId),
    allowViewDevices: (viewId: string) => allowViewDevices(viewId),
  },
}));

beforeEach(() => {
  views.reset();
  closeView.mockClear();
  viewMessage.mockClear();
  reopenViews.mockClear();
  setViewContainer.mockReset();
  setViewContainer.mockImplementation(async () => {});
  teardownView.mockClear();
  popOutView.mockClear();
  teardowns.clear();
});
afterEach(cleanup);

/** Rust finishes tearing a view down (the view answered, or its time ran out), or fails to. */
async function endTeardown(viewId: string, error?: unknown) {
  const teardown = teardowns.get(viewId);
  if (!teardown) throw new Error(`no teardown of ${viewId} under way`);
  teardowns.delete(viewId);
  if (error === undefined) teardown.resolve();
  else teardown.reject(error);
  for (let i = 0; i < 3; i++) await Promise.resolve();
  flushSync();
}

const opened = (callId: string, viewId: string, over: Partial<Extract<ViewEvent, { type: "opened" }>> = {}): ViewEvent => ({
  type: "opened",
  conversationId: "c1",
  callId,
  viewId,
  url: `mcpview://localhost/${viewId}-token`,
  allow: "clipboard-write",
  prefersBorder: null,
  displayModes: ["inline", "fullscreen", "pip"],
  cspDropped: [],
  reaches: [],
  devices: [],
  devicesAsked: [],
  emulating: null,
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
  it("renders the view in a frame sandboxed with exactly allow-scripts allow-same-origin", () => {
    views.handle(opened("call-1", "v1"));
    const { getByTestId } = showView();
    const frame = getByTestId("mcp-app-view") as HTMLIFrameElement;
    expect(frame.tagName).toBe("IFRAME");
    expect(frame.getAttribute("sandbox")).toBe("allow-scripts allow-same-origin");
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

    // Picture in picture too.
    views.handle({ type: "display_mode", viewId: "v1", mode: "pip" });
    flushSync();
    expect(box.classList.contains("pip")).toBe(true);
    await fireEvent.keyDown(window, { key: "Escape" });
    expect(views.get("call-1")?.mode).toBe("inline");
    expect(setViewDisplayMode).toHaveBeenLastCalledWith("v1", "inline");
    expect(getByTestId("mcp-app-view")).toBe(frame);
  });

  it("keeps the keyboard with the view: on the way out of full screen or the corner, then on the button that took it there", async () => {
    views.handle(opened("call-1", "v1"));
    views.handle(state("call-1", "v1", "ready"));
    const { getByTestId } = showView();
    await fireEvent.click(getByTestId("view-enter-fullscreen"));
    await vi.waitFor(() => expect(document.activeElement).toBe(getByTestId("view-exit-fullscreen")));
    await fireEvent.keyDown(window, { key: "Escape" });
    await vi.waitFor(() => expect(document.activeElement).toBe(getByTestId("view-enter-fullscreen")));
    await fireEvent.click(getByTestId("view-enter-pip"));
    await vi.waitFor(() => expect(document.activeElement).toBe(getByTestId("view-exit-pip")));
    await fireEvent.click(getByTestId("view-exit-pip"));
    await vi.waitFor(() => expect(document.activeElement).toBe(getByTestId("view-enter-pip")));
  });

  it("puts picture in picture above the message box, and moves it with the arrow keys, never over it", async () => {
    const form = document.createElement("form");
    form.innerHTML = '<textarea data-testid="composer"></textarea>';
    document.body.append(form);
    form.getBoundingClientRect = () => ({ top: 700, bottom: 768, left: 0, right: 1024, width: 1024, height: 68, x: 0, y: 700, toJSON: () => ({}) });
    try {
      views.handle(opened("call-1", "v1"));
      views.handle(state("call-1", "v1", "ready"));
      const { getByTestId } = showView();
      const box = getByTestId("view-frame");
      box.getBoundingClientRect = () => ({ top: 0, bottom: 300, left: 0, right: 380, width: 380, height: 300, x: 0, y: 0, toJSON: () => ({}) });
      await fireEvent.click(getByTestId("view-enter-pip"));
      flushSync();
      // jsdom's window is 1024 × 768: bottom right, 12 px above the message box.
      expect(box.style.left).toBe(`${1024 - 380 - 12}px`);
      expect(box.style.top).toBe(`${700 - 12 - 300}px`);
      const handle = getByTestId("view-pip-handle");
      await fireEvent.keyDown(handle, { key: "ArrowLeft" });
      await fireEvent.keyDown(handle, { key: "ArrowUp", shiftKey: true });
      expect(box.style.left).toBe(`${1024 - 380 - 12 - 20}px`);
      expect(box.style.top).toBe(`${700 - 12 - 300 - 100}px`);
      // Down as far as it goes: it stops above the message box.
      for (let i = 0; i < 10; i++) await fireEvent.keyDown(handle, { key: "ArrowDown" });
      expect(box.style.top).toBe(`${700 - 12 - 300}px`);
    } finally {
      form.remove();
    }
  });

  it("offers Pop out for a ready view, even one that declares only the inline mode", async () => {
    views.handle(opened("call-1", "v1", { displayModes: ["inline"] }));
    const { getByTestId, queryByTestId } = showView();
    expect(queryByTestId("view-pop-out")).toBeNull(); // still loading
    views.handle(state("call-1", "v1", "ready"));
    flushSync();
    expect(queryByTestId("view-enter-fullscreen")).toBeNull();
    await fireEvent.click(getByTestId("view-pop-out"));
    expect(popOutView).toHaveBeenCalledExactlyOnceWith("v1");
  });

  it("offers no Pop out, nor other modes, in a pop-out window of its own", () => {
    views.handle(opened("call-1", "v1"));
    views.handle(state("call-1", "v1", "ready"));
    const { queryByTestId } = render(ViewFrame, { view: views.get("call-1")!, label: "forecast", standalone: true });
    expect(queryByTestId("mcp-app-view")).not.toBeNull();
    expect(queryByTestId("view-pop-out")).toBeNull();
    expect(queryByTestId("view-enter-fullscreen")).toBeNull();
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

  /** A transcript with call-1's card, its view v1 ready on it (and its card near sight, unless
   * `near` is false: then the observer has said nothing yet). */
  function cardWithView(near = true) {
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
    // The observer's first word: the card is near sight.
    if (near) {
      FakeZoneObserver.move(container(), true);
      flushSync();
    }
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

  it("parks a view out of the zone for 500 ms: Rust tears it down once, its frame goes after, its place stays", async () => {
    const { container, frame, stateLine, move, wait, getByTestId } = cardWithView();
    const first = frame();
    expect(first).not.toBeNull();
    vi.spyOn(container(), "getBoundingClientRect").mockReturnValue({ height: 412 } as DOMRect);

    move(false, SETTLE_MS - 1);
    expect(frame()).toBe(first);
    expect(teardownView).not.toHaveBeenCalled();

    wait(1);
    expect(teardownView).toHaveBeenCalledExactlyOnceWith("v1");
    // While the view answers its teardown, its frame stays where it was, unseen.
    expect(frame()).toBe(first);
    const box = getByTestId("view-frame");
    expect(box.dataset.leaving).toBe("true");
    expect(box.style.visibility).toBe("hidden");
    expect(box.style.position).toBe("absolute");
    expect(stateLine().dataset.state).toBe("parked");
    expect(stateLine().textContent?.trim()).toBe("The view is paused while out of sight.");
    expect(stateLine().classList.contains("visually-hidden")).toBe(false);
    expect(container().style.minHeight).toBe("412px");
    expect(views.get("call-1")).toMatchObject({ viewId: "v1", state: "parked", leaving: true });

    await endTeardown("v1");
    expect(frame()).toBeNull();
    expect(stateLine().dataset.state).toBe("parked");
    expect(container().style.minHeight).toBe("412px");
    expect(views.get("call-1")).toMatchObject({ viewId: "v1", state: "parked", leaving: false });

    // Rust's word that the view is closed leaves it parked; nothing more is asked of Rust.
    views.handle({ type: "closed", viewId: "v1" });
    flushSync();
    expect(stateLine().dataset.state).toBe("parked");
    wait(10 * SETTLE_MS);
    expect(teardownView).toHaveBeenCalledOnce();
    expect(closeView).not.toHaveBeenCalled();
    expect(reopenViews).not.toHaveBeenCalled();
  });

  it("delivers Rust's teardown request to the leaving frame, and relays its answer, until the teardown is over", async () => {
    const { frame, move } = cardWithView();
    const first = frame()!;
    const postMessage = vi.spyOn(first.contentWindow!, "postMessage").mockImplementation(() => {});
    move(false, SETTLE_MS);
    expect(views.get("call-1")).toMatchObject({ state: "parked", leaving: true });

    const request = { jsonrpc: "2.0", id: 3, method: "ui/resource-teardown", params: {} };
    views.handle({ type: "message", viewId: "v1", message: request });
    expect(postMessage).toHaveBeenCalledExactlyOnceWith(request, "*");
    const answer = { jsonrpc: "2.0", id: 3, result: {} };
    views.receive({ source: first.contentWindow, data: answer });
    expect(viewMessage).toHaveBeenCalledExactlyOnceWith("v1", answer);

    await endTeardown("v1");
    expect(frame()).toBeNull();
    views.handle({ type: "message", viewId: "v1", message: { jsonrpc: "2.0", method: "late" } });
    views.receive({ source: first.contentWindow, data: { jsonrpc: "2.0", method: "late" } });
    expect(postMessage).toHaveBeenCalledOnce();
    expect(viewMessage).toHaveBeenCalledOnce();
  });

  it("lets the frame go when the teardown fails, too", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { frame, move } = cardWithView();
    move(false, SETTLE_MS);
    expect(frame()).not.toBeNull();
    await endTeardown("v1", "the view is gone");
    expect(frame()).toBeNull();
    expect(views.get("call-1")).toMatchObject({ state: "parked", leaving: false });
    expect(warn).toHaveBeenCalled();
    expect(closeView).not.toHaveBeenCalled();
    warn.mockRestore();
  });

  it("asks Rust nothing more when the card goes while its view is torn down", async () => {
    const { move, unmount } = cardWithView();
    move(false, SETTLE_MS);
    unmount();
    await endTeardown("v1");
    expect(teardownView).toHaveBeenCalledExactlyOnceWith("v1");
    expect(closeView).not.toHaveBeenCalled();
    expect(views.get("call-1")).toBeUndefined();
  });

  it("re-creates a view back in the zone during its teardown only once the teardown is over", async () => {
    const { frame, move, wait } = cardWithView();
    move(false, SETTLE_MS);
    move(true, 10 * SETTLE_MS);
    expect(frame()).not.toBeNull();
    expect(reopenViews).not.toHaveBeenCalled();
    await endTeardown("v1");
    expect(frame()).toBeNull();
    wait(SETTLE_MS - 1);
    expect(reopenViews).not.toHaveBeenCalled();
    wait(1);
    expect(reopenViews).toHaveBeenCalledExactlyOnceWith("c1", "call-1");
  });

  it("gives a view whose card the layout puts in sight its frame at once, before the observer's first word", () => {
    FakeZoneObserver.layout = true;
    const { frame } = cardWithView(false);
    expect(frame()?.getAttribute("src")).toBe("mcpview://localhost/v1-token");
  });

  it("waits for the observer when the layout puts the card far out of sight, or cannot tell", () => {
    for (const layout of [false, null]) {
      FakeZoneObserver.layout = layout;
      const { frame, move, unmount } = cardWithView(false);
      expect(frame()).toBeNull();
      move(true);
      expect(frame()?.getAttribute("src")).toBe("mcpview://localhost/v1-token");
      unmount();
    }
  });

  it("gives a view its frame only once its card has been near sight", () => {
    const { frame, move, stateLine, wait, queryByTestId } = cardWithView(false);
    expect(frame()).toBeNull();
    expect(stateLine().dataset.state).toBe("ready");
    // Its place is held, as tall as the frame will be.
    expect(queryByTestId("view-waiting")?.style.getPropertyValue("--view-height")).toBe("320px");
    wait(SETTLE_MS - 1);
    expect(frame()).toBeNull();
    move(true);
    expect(queryByTestId("view-waiting")).toBeNull();
    const first = frame();
    expect(first?.getAttribute("src")).toBe("mcpview://localhost/v1-token");
    // Once shown, it stays while the card hovers at the edge.
    move(false, SETTLE_MS - 1);
    expect(frame()).toBe(first);
    expect(teardownView).not.toHaveBeenCalled();
    expect(closeView).not.toHaveBeenCalled();
  });

  it("never loads a view whose card was far out of sight from the start: closes it without a teardown, keeps its place, and makes it when the card comes near", async () => {
    const { frame, move, wait, stateLine, queryByTestId } = cardWithView(false);
    move(false, SETTLE_MS - 1);
    expect(frame()).toBeNull();
    expect(queryByTestId("view-waiting")).not.toBeNull();
    expect(closeView).not.toHaveBeenCalled();
    wait(1);
    // Parked with nothing to tell: Rust closes it, no frame is ever made, no teardown is asked.
    expect(closeView).toHaveBeenCalledExactlyOnceWith("v1");
    expect(teardownView).not.toHaveBeenCalled();
    expect(views.get("call-1")).toMatchObject({ viewId: "v1", state: "parked", leaving: false });
    expect(stateLine().dataset.state).toBe("parked");
    expect(frame()).toBeNull();
    expect(queryByTestId("view-waiting")).toBeNull();
    for (let i = 0; i < 3; i++) await Promise.resolve();
    flushSync();
    // Rust's word that it is closed leaves it parked.
    views.handle({ type: "closed", viewId: "v1" });
    flushSync();
    expect(stateLine().dataset.state).toBe("parked");
    expect(frame()).toBeNull();

    // The card comes near: the call's view is made, and shown.
    move(true, SETTLE_MS);
    expect(reopenViews).toHaveBeenCalledExactlyOnceWith("c1", "call-1");
    views.handle(state("call-1", "v2", "loading"));
    views.handle(opened("call-1", "v2"));
    flushSync();
    move(true);
    expect(frame()?.getAttribute("src")).toBe("mcpview://localhost/v2-token");
    expect(closeView).toHaveBeenCalledOnce();
    expect(teardownView).not.toHaveBeenCalled();
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
    await endTeardown("v1");
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
    // The new view's card is watched afresh: its frame comes with the observer's first word.
    expect(frame()).toBeNull();
    move(true);
    const second = frame();
    expect(second).not.toBeNull();
    expect(second).not.toBe(first);
    expect(second?.getAttribute("src")).toBe("mcpview://localhost/v2-token");
    expect(getByTestId("view").dataset.viewId).toBe("v2");
    await Promise.resolve();
    expect(views.get("call-1")?.viewId).toBe("v2");
    expect(closeView).not.toHaveBeenCalled();

    // The new view is watched in turn, and can be parked again.
    move(false, SETTLE_MS);
    expect(teardownView).toHaveBeenLastCalledWith("v2");
    await endTeardown("v2");
    expect(frame()).toBeNull();
    expect(teardownView).toHaveBeenCalledTimes(2);
    expect(closeView).not.toHaveBeenCalled();
  });

  it.each(["fullscreen", "pip"] as const)("never parks a view shown %s, but parks it once back on its far card", async (mode) => {
    const { frame, move, wait } = cardWithView();
    views.handle({ type: "display_mode", viewId: "v1", mode });
    flushSync();
    move(false, 10 * SETTLE_MS);
    expect(frame()).not.toBeNull();
    expect(views.get("call-1")?.state).toBe("ready");
    expect(teardownView).not.toHaveBeenCalled();

    views.setMode("v1", "inline");
    flushSync();
    wait(SETTLE_MS);
    expect(views.get("call-1")?.state).toBe("parked");
    expect(teardownView).toHaveBeenCalledExactlyOnceWith("v1");
    await endTeardown("v1");
    expect(frame()).toBeNull();
    expect(closeView).not.toHaveBeenCalled();
  });

  it("parks a view still loading, but not one that failed", async () => {
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
    move(true);
    expect(frame()).not.toBeNull();
    move(false, SETTLE_MS);
    expect(stateLine().dataset.state).toBe("parked");
    expect(teardownView).toHaveBeenCalledExactlyOnceWith("v3");
    await endTeardown("v3");
    expect(frame()).toBeNull();
    expect(closeView).toHaveBeenCalledExactlyOnceWith("v1");
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
  it("says the view is paused, and why it could not come back", async () => {
    views.handle(opened("call-1", "v1"));
    views.park("v1");
    const { getByTestId, queryByTestId } = showView();
    expect(getByTestId("view-frame").dataset.leaving).toBe("true");
    expect(getByTestId("view-state").textContent?.trim()).toBe("The view is paused while out of sight.");
    await endTeardown("v1");
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

describe("ViewFrame's content-security warning", () => {
  const dropped = ["connectDomains: http://api.example.com (not https)", "resourceDomains: * (wildcard)"];

  it("says which origins a view may contact, and says nothing when it may contact none", () => {
    views.handle(opened("call-1", "v1", { reaches: ["https://api.open-meteo.com", "https://cdn.example.com", "wss://live.example.com"] }));
    views.handle(opened("call-2", "v2"));
    const first = showView("call-1");
    views.handle(state("call-1", "v1", "ready"));
    flushSync();
    expect(first.getByTestId("view-reaches").textContent?.replace(/\s+/g, " ").trim()).toBe(
      "This view may contact https://api.open-meteo.com, https://cdn.example.com and wss://live.example.com.",
    );
    expect(showView("call-2").container.querySelector("[data-testid=view-reaches]")).toBeNull();
    views.handle(state("call-1", "v1", "refused", "no"));
    flushSync();
    expect(first.container.querySelector("[data-testid=view-reaches]")).toBeNull();
  });

  it("offers the devices a view asks for, and says which it may use once they are allowed", async () => {
    allowViewDevices.mockReset();
    views.handle(opened("call-1", "v1", { allow: "", devicesAsked: ["camera", "clipboard-write"] }));
    const first = showView("call-1");
    expect(first.getByTestId("mcp-app-view").getAttribute("allow")).toBe("");
    expect(first.getByTestId("view-devices-ask").textContent?.replace(/\s+/g, " ").trim()).toBe(
      "This view asks to use your camera and the clipboard (to copy into it). Nothing is shared until you allow it. Allow for this server",
    );
    expect(first.container.querySelector("[data-testid=view-devices]")).toBeNull();
    await fireEvent.click(first.getByTestId("view-devices-allow"));
    expect(allowViewDevices).toHaveBeenCalledExactlyOnceWith("v1");
    cleanup();
    // Rust loads it again with them: a new view for the call.
    views.handle({ type: "closed", viewId: "v1" });
    views.handle(opened("call-1", "v2", { allow: "camera; clipboard-write", devices: ["camera", "clipboard-write"] }));
    const again = showView("call-1");
    expect(again.getByTestId("mcp-app-view").getAttribute("allow")).toBe("camera; clipboard-write");
    expect(again.container.querySelector("[data-testid=view-devices-ask]")).toBeNull();
    expect(again.getByTestId("view-devices").textContent).toContain("This view may use your camera and the clipboard (to copy into it)");
  });

  it("says why the devices could not be allowed", async () => {
    allowViewDevices.mockReset();
    allowViewDevices.mockRejectedValueOnce(refused("invalid", "answer the tool call's approval first"));
    views.handle(opened("call-1", "v1", { devicesAsked: ["microphone"] }));
    const { getByTestId } = showView("call-1");
    await fireEvent.click(getByTestId("view-devices-allow"));
    await vi.waitFor(() =>
      expect(getByTestId("view-devices-error").textContent).toBe(
        "The devices could not be allowed: answer the tool call's approval first",
      ),
    );
  });

  it("says how many content-security entries Porthole refused, and lists them", () => {
    views.handle(opened("call-1", "v1", { cspDropped: dropped }));
    const { getByTestId } = showView();
    const warning = getByTestId("view-csp-dropped");
    expect(warning.querySelector("p")?.textContent).toBe(
      "The server declared 2 content-security entries Porthole refused; the view may miss some content.",
    );
    const details = warning.querySelector("details")!;
    expect(details.open).toBe(false);
    expect(Array.from(details.querySelectorAll("li")).map((li) => li.textContent)).toEqual(dropped);
    // Still said once the view is ready.
    views.handle(state("call-1", "v1", "ready"));
    flushSync();
    expect(getByTestId("view-csp-dropped")).toBe(warning);
  });

  it("says one entry in the singular", () => {
    views.handle(opened("call-1", "v1", { cspDropped: [dropped[0]] }));
    const { getByTestId } = showView();
    expect(getByTestId("view-csp-dropped").querySelector("p")?.textContent).toBe(
      "The server declared 1 content-security entry Porthole refused; the view may miss some content.",
    );
  });

  it("says nothing when nothing was refused", () => {
    views.handle(opened("call-1", "v1"));
    views.handle(opened("call-2", "v2", { cspDropped: [] }));
    expect(showView("call-1").queryByTestId("view-csp-dropped")).toBeNull();
    expect(showView("call-2").queryByTestId("view-csp-dropped")).toBeNull();
  });

  it.each(["failed", "refused", "expired"] as const)("says nothing of it once the view %s", (s) => {
    views.handle(opened("call-1", "v1", { cspDropped: dropped }));
    const { queryByTestId } = showView();
    expect(queryByTestId("view-csp-dropped")).not.toBeNull();
    views.handle(state("call-1", "v1", s, "no"));
    flushSync();
    expect(queryByTestId("view-csp-dropped")).toBeNull();
  });
});

describe("ViewFrame's container width", () => {
  let uninstall: () => void;
  beforeEach(() => {
    vi.useFakeTimers();
    uninstall = installFakeWidth();
  });
  afterEach(() => {
    uninstall();
    vi.useRealTimers();
  });

  function resize(el: HTMLElement, width: number, ms = 0) {
    FakeWidthObserver.resize(el, width);
    vi.advanceTimersByTime(ms);
  }

  it("tells the view its container's width, 150 ms after the first measurement", () => {
    views.handle(opened("call-1", "v1"));
    const { getByTestId } = showView();
    const container = getByTestId("view");
    expect(FakeWidthObserver.of(container)).toHaveLength(1);
    resize(container, 612.4, WIDTH_DEBOUNCE_MS - 1);
    expect(setViewContainer).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(setViewContainer).toHaveBeenCalledExactlyOnceWith("v1", 612);
  });

  it("tells it again when the width changed by a pixel or more, once it settled", () => {
    views.handle(opened("call-1", "v1"));
    views.handle(state("call-1", "v1", "ready"));
    const { getByTestId } = showView();
    const container = getByTestId("view");
    resize(container, 600, WIDTH_DEBOUNCE_MS);
    expect(setViewContainer).toHaveBeenCalledExactlyOnceWith("v1", 600);

    // Less than a pixel: nothing.
    resize(container, 600.3, WIDTH_DEBOUNCE_MS);
    resize(container, 599.6, WIDTH_DEBOUNCE_MS);
    expect(setViewContainer).toHaveBeenCalledOnce();

    // A drag: only where it settles is told.
    resize(container, 580, 50);
    resize(container, 540, 50);
    resize(container, 500.6, 50);
    expect(setViewContainer).toHaveBeenCalledOnce();
    vi.advanceTimersByTime(WIDTH_DEBOUNCE_MS);
    expect(setViewContainer).toHaveBeenCalledTimes(2);
    expect(setViewContainer).toHaveBeenLastCalledWith("v1", 501);

    // Away and back before it settled: nothing new to tell.
    resize(container, 700, 50);
    resize(container, 501, WIDTH_DEBOUNCE_MS);
    expect(setViewContainer).toHaveBeenCalledTimes(2);
  });

  it("tells nothing of a view that is not loading or ready, nor of one without a view id", () => {
    views.handle(state("call-1", null, "expired"));
    const first = showView();
    expect(FakeWidthObserver.of(first.getByTestId("view"))).toEqual([]);
    first.unmount();

    views.handle(opened("call-2", "v2"));
    const { getByTestId } = showView("call-2");
    const container = getByTestId("view");
    resize(container, 600, 50);
    views.handle(state("call-2", "v2", "failed", "no ui/initialize"));
    flushSync();
    expect(FakeWidthObserver.of(container)).toEqual([]);
    vi.advanceTimersByTime(10 * WIDTH_DEBOUNCE_MS);
    expect(setViewContainer).not.toHaveBeenCalled();
  });

  it("stops telling the width once the view is parked", async () => {
    views.handle(opened("call-1", "v1"));
    const { getByTestId } = showView();
    const container = getByTestId("view");
    resize(container, 600, WIDTH_DEBOUNCE_MS);
    expect(setViewContainer).toHaveBeenCalledOnce();
    views.park("v1");
    flushSync();
    expect(FakeWidthObserver.of(container)).toEqual([]);
    await endTeardown("v1");
    expect(setViewContainer).toHaveBeenCalledOnce();
  });

  it("shrugs off a width Rust could not take", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    setViewContainer.mockImplementation(async () => Promise.reject(refused("not_found", "no such view")));
    views.handle(opened("call-1", "v1"));
    const { getByTestId } = showView();
    const container = getByTestId("view");
    resize(container, 600, WIDTH_DEBOUNCE_MS);
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(setViewContainer).toHaveBeenCalledExactlyOnceWith("v1", 600);
    expect(warn).toHaveBeenCalledOnce();
    // It goes on telling later changes.
    resize(container, 640, WIDTH_DEBOUNCE_MS);
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(setViewContainer).toHaveBeenLastCalledWith("v1", 640);
    expect(warn).toHaveBeenCalledTimes(2);
    warn.mockRestore();
  });
});
