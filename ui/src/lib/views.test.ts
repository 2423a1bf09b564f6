import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ViewEvent } from "./api";

const viewMessage = vi.fn(async (_viewId: string, _message: unknown) => {});
const closeView = vi.fn(async (_viewId: string) => {});
const reopenViews = vi.fn(async (_conversationId: string, _callId?: string) => {});
/** Teardowns Rust was asked for and has not finished, by view id. */
const teardowns = new Map<string, { resolve: () => void; reject: (e: unknown) => void }>();
const teardownView = vi.fn(
  (viewId: string) => new Promise<void>((resolve, reject) => teardowns.set(viewId, { resolve, reject })),
);
let emitView: (e: ViewEvent) => void = () => {};
const unlistenView = vi.fn();
vi.mock("./api", async (original) => ({
  ...(await original<typeof import("./api")>()),
  api: {
    viewMessage: (viewId: string, message: unknown) => viewMessage(viewId, message),
    closeView: (viewId: string) => closeView(viewId),
    reopenViews: (conversationId: string, callId?: string) => reopenViews(conversationId, callId),
    teardownView: (viewId: string) => teardownView(viewId),
    onViewEvent: async (handler: (e: ViewEvent) => void) => {
      emitView = handler;
      return unlistenView;
    },
  },
}));

import { MAX_MESSAGE_BYTES, ViewRegistry, clampHeight, messageFits } from "./views.svelte";
import { refused } from "./testing/errors";

const opened = (callId: string, viewId: string, over: Partial<Extract<ViewEvent, { type: "opened" }>> = {}): ViewEvent => ({
  type: "opened",
  conversationId: "c1",
  callId,
  viewId,
  url: `mcpview://localhost/${viewId}-token`,
  allow: "clipboard-write",
  prefersBorder: true,
  displayModes: ["inline", "fullscreen", "pip"],
  cspDropped: [],
  reaches: [],
  devices: [],
  devicesAsked: [],
  emulating: null,
  ...over,
});
const state = (callId: string, viewId: string | null, s: Extract<ViewEvent, { type: "state" }>["state"], reason: string | null = null, conversationId = "c1"): ViewEvent => ({
  type: "state",
  conversationId,
  callId,
  viewId,
  state: s,
  reason,
});

/** A real frame in the document, so its contentWindow can be a MessageEvent's source. */
function frameInDocument(): HTMLIFrameElement {
  const frame = document.createElement("iframe");
  document.body.append(frame);
  return frame;
}

function post(source: MessageEventSource | null, data: unknown) {
  window.dispatchEvent(new MessageEvent("message", { data, source, origin: "null" }));
}

/** Rust finishes tearing a view down (the view answered, or its time ran out), or fails to. */
async function endTeardown(viewId: string, error?: unknown) {
  const teardown = teardowns.get(viewId);
  if (!teardown) throw new Error(`no teardown of ${viewId} under way`);
  teardowns.delete(viewId);
  if (error === undefined) teardown.resolve();
  else teardown.reject(error);
  await new Promise((r) => setTimeout(r, 0));
}

let registry: ViewRegistry;
let stop: (() => void) | undefined;

beforeEach(() => {
  viewMessage.mockClear();
  closeView.mockClear();
  reopenViews.mockReset();
  reopenViews.mockImplementation(async () => {});
  teardownView.mockClear();
  teardowns.clear();
  unlistenView.mockClear();
  registry = new ViewRegistry();
});

afterEach(() => {
  stop?.();
  stop = undefined;
  document.body.innerHTML = "";
});

describe("view registry: events", () => {
  it("follows a view from loading to ready with its url, allow, border and display modes", () => {
    registry.handle(state("call-1", "v1", "loading"));
    expect(registry.get("call-1")).toMatchObject({ viewId: "v1", url: null, state: "loading", mode: "inline", height: 320 });

    registry.handle(opened("call-1", "v1"));
    expect(registry.get("call-1")).toMatchObject({
      callId: "call-1",
      conversationId: "c1",
      viewId: "v1",
      url: "mcpview://localhost/v1-token",
      allow: "clipboard-write",
      prefersBorder: true,
      displayModes: ["inline", "fullscreen", "pip"],
      state: "loading",
      reason: null,
    });

    registry.handle(state("call-1", "v1", "ready"));
    expect(registry.get("call-1")?.state).toBe("ready");
    expect(registry.byViewId("v1")?.callId).toBe("call-1");
  });

  it("starts a view loading from its opened event alone", () => {
    registry.handle(opened("call-1", "v1", { prefersBorder: null, displayModes: ["inline"] }));
    expect(registry.get("call-1")).toMatchObject({ viewId: "v1", state: "loading", prefersBorder: null, displayModes: ["inline"] });
  });

  it("keeps the content-security entries Rust refused, none when it names none", () => {
    const dropped = ["connectDomains: http://api.example.com (not https)", "resourceDomains: * (wildcard)"];
    registry.handle(opened("call-1", "v1", { cspDropped: dropped }));
    expect(registry.get("call-1")?.cspDropped).toEqual(dropped);
    registry.handle(state("call-2", "v2", "loading"));
    expect(registry.get("call-2")?.cspDropped).toEqual([]);
    registry.handle(opened("call-2", "v2", { cspDropped: undefined }));
    expect(registry.get("call-2")?.cspDropped).toEqual([]);
    registry.handle(opened("call-3", "v3", { cspDropped: ["frameDomains: x (not allowed)", 7 as unknown as string] }));
    expect(registry.get("call-3")?.cspDropped).toEqual(["frameDomains: x (not allowed)"]);
    // A newer view of the call starts with none.
    registry.handle(state("call-1", "v4", "loading"));
    expect(registry.get("call-1")?.cspDropped).toEqual([]);
  });

  it("keeps failed, refused and expired views with their reasons, with or without a view id", () => {
    registry.handle(state("call-1", "v1", "loading"));
    registry.handle(state("call-1", "v1", "failed", "the view did not start within 10 s (no ui/initialize)"));
    registry.handle(state("call-2", "v2", "refused", "the resource is not text/html;profile=mcp-app"));
    registry.handle(state("call-3", null, "expired"));
    registry.handle(state("call-4", null, "failed", "server \"demo\" is not connected"));
    expect(registry.get("call-1")).toMatchObject({ state: "failed", reason: "the view did not start within 10 s (no ui/initialize)" });
    expect(registry.get("call-2")).toMatchObject({ viewId: "v2", state: "refused", reason: "the resource is not text/html;profile=mcp-app" });
    expect(registry.get("call-3")).toMatchObject({ viewId: null, url: null, state: "expired" });
    expect(registry.get("call-4")).toMatchObject({ viewId: null, state: "failed" });
    expect(closeView).not.toHaveBeenCalled();
  });

  it("clamps the height to 40..4000 px and ignores the width", () => {
    registry.handle(opened("call-1", "v1"));
    const size = (width: number | null, height: number | null): ViewEvent => ({ type: "size", viewId: "v1", width, height });
    registry.handle(size(9000, 512.4));
    expect(registry.get("call-1")?.height).toBe(512);
    registry.handle(size(null, 5));
    expect(registry.get("call-1")?.height).toBe(40);
    registry.handle(size(null, 250_000));
    expect(registry.get("call-1")?.height).toBe(4000);
    registry.handle(size(300, null));
    registry.handle(size(300, Number.NaN));
    expect(registry.get("call-1")?.height).toBe(4000);
    expect(registry.get("call-1")).not.toHaveProperty("width");
    // A size for a view nobody knows changes nothing.
    registry.handle({ type: "size", viewId: "nobody", width: null, height: 100 });
    expect(clampHeight(-3)).toBe(40);
  });

  it("follows display modes Rust grants, and ignores ones it does not know", () => {
    registry.handle(opened("call-1", "v1"));
    registry.handle({ type: "display_mode", viewId: "v1", mode: "fullscreen" });
    expect(registry.get("call-1")?.mode).toBe("fullscreen");
    registry.handle({ type: "display_mode", viewId: "v1", mode: "theatre" as "pip" });
    expect(registry.get("call-1")?.mode).toBe("fullscreen");
    registry.handle({ type: "display_mode", viewId: "v1", mode: "pip" });
    expect(registry.get("call-1")?.mode).toBe("pip");
    registry.setMode("v1", "inline");
    expect(registry.get("call-1")?.mode).toBe("inline");
  });

  it("marks a view closed by Rust, without asking Rust to close it again", async () => {
    registry.handle(opened("call-1", "v1"));
    registry.handle({ type: "display_mode", viewId: "v1", mode: "fullscreen" });
    registry.handle({ type: "closed", viewId: "v1" });
    expect(registry.get("call-1")).toMatchObject({ state: "closed", mode: "inline" });
    registry.release("call-1", "v1");
    await Promise.resolve();
    expect(closeView).not.toHaveBeenCalled();
    expect(registry.get("call-1")).toBeUndefined();
    // Late news of the closed view changes nothing.
    registry.handle(state("call-1", "v1", "ready"));
    expect(registry.get("call-1")).toBeUndefined();
  });

  it("closes a view once when its frame goes for good, and forgets it", async () => {
    registry.handle(opened("call-1", "v1"));
    registry.release("call-1", "v1");
    registry.release("call-1", "v1");
    expect(closeView).toHaveBeenCalledExactlyOnceWith("v1");
    // The entry goes once the frame's teardown is over.
    expect(registry.get("call-1")?.viewId).toBe("v1");
    await Promise.resolve();
    expect(registry.get("call-1")).toBeUndefined();
  });

  it("replaces a call's view by a newer one, closing the old one once", async () => {
    registry.handle(opened("call-1", "v1"));
    registry.handle({ type: "size", viewId: "v1", width: null, height: 600 });
    registry.handle(state("call-1", "v2", "loading"));
    expect(registry.get("call-1")).toMatchObject({ viewId: "v2", url: null, height: 320 });
    expect(closeView).toHaveBeenCalledExactlyOnceWith("v1");
    // The old view's frame going away later closes nothing more, and keeps the new view.
    registry.release("call-1", "v1");
    await Promise.resolve();
    expect(closeView).toHaveBeenCalledOnce();
    expect(registry.get("call-1")?.viewId).toBe("v2");
  });

  it("closes at once the views of a conversation that is not on screen", async () => {
    stop = await registry.start({ shown: (id) => id === "c1" });
    emitView(state("call-9", "v9", "loading", null, "c2"));
    emitView(opened("call-9", "v9", { conversationId: "c2" }));
    emitView(state("call-8", null, "expired", null, "c2"));
    expect(registry.get("call-9")).toBeUndefined();
    expect(registry.get("call-8")).toBeUndefined();
    expect(closeView).toHaveBeenCalledExactlyOnceWith("v9");
    emitView(opened("call-1", "v1"));
    expect(registry.get("call-1")?.viewId).toBe("v1");
  });

  it("keeps a view's proposed message for the composer, also from a view in a pop-out window", () => {
    registry.handle(opened("call-1", "v1"));
    // A popped-out view has no frame here; Rust sends its proposals to the main window.
    registry.handle({ type: "proposed_message", viewId: "popped", text: "From the pop-out" });
    expect(registry.proposal).toMatchObject({ viewId: "popped", text: "From the pop-out" });
    registry.handle({ type: "proposed_message", viewId: "v1", text: "Show me Paris tomorrow" });
    expect(registry.proposal).toMatchObject({ viewId: "v1", text: "Show me Paris tomorrow" });
    const first = registry.proposal!.id;
    registry.handle({ type: "proposed_message", viewId: "v1", text: "Show me Paris tomorrow" });
    expect(registry.proposal!.id).toBeGreaterThan(first);
    registry.handle({ type: "proposed_message", viewId: "v1", text: "   " });
    expect(registry.proposal?.text).toBe("Show me Paris tomorrow");
  });

  it("stops listening to Rust and to the window when stopped", async () => {
    const s = await registry.start();
    const frame = frameInDocument();
    registry.handle(opened("call-1", "v1"));
    registry.attach("v1", frame);
    s();
    expect(unlistenView).toHaveBeenCalledOnce();
    post(frame.contentWindow, { jsonrpc: "2.0", method: "ping" });
    expect(viewMessage).not.toHaveBeenCalled();
  });
});

describe("view registry: relay", () => {
  beforeEach(async () => {
    stop = await registry.start();
  });

  it("relays only messages whose source is a registered frame's window", () => {
    const mine = frameInDocument();
    const stranger = frameInDocument();
    registry.handle(opened("call-1", "v1"));
    registry.attach("v1", mine);
    const hello = { jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} };

    post(stranger.contentWindow, hello);
    post(window, hello);
    post(null, hello);
    expect(viewMessage).not.toHaveBeenCalled();

    post(mine.contentWindow, hello);
    expect(viewMessage).toHaveBeenCalledExactlyOnceWith("v1", hello);
  });

  it("does not believe the origin: a stranger claiming the view's origin is ignored", () => {
    const mine = frameInDocument();
    const stranger = frameInDocument();
    registry.handle(opened("call-1", "v1"));
    registry.attach("v1", mine);
    window.dispatchEvent(new MessageEvent("message", { data: { jsonrpc: "2.0", method: "x" }, source: stranger.contentWindow, origin: "mcpview://localhost" }));
    expect(viewMessage).not.toHaveBeenCalled();
  });

  it("drops messages that are not plain objects or are larger than 4 MiB", () => {
    const mine = frameInDocument();
    registry.handle(opened("call-1", "v1"));
    registry.attach("v1", mine);
    for (const data of ["a string", 42, null, undefined, [1, 2], new Date(0), new Map()]) post(mine.contentWindow, data);
    post(mine.contentWindow, { jsonrpc: "2.0", method: "big", params: { blob: "x".repeat(MAX_MESSAGE_BYTES) } });
    // Under 4 Mi characters, over 4 MiB of UTF-8.
    post(mine.contentWindow, { jsonrpc: "2.0", method: "wide", params: { text: "é".repeat(MAX_MESSAGE_BYTES / 2) } });
    expect(viewMessage).not.toHaveBeenCalled();

    const fits = { jsonrpc: "2.0", method: "fits", params: { blob: "x".repeat(MAX_MESSAGE_BYTES - 100) } };
    post(mine.contentWindow, fits);
    expect(viewMessage).toHaveBeenCalledExactlyOnceWith("v1", fits);

    const cyclic: Record<string, unknown> = { jsonrpc: "2.0" };
    cyclic.self = cyclic;
    expect(messageFits(cyclic)).toBe(false);
    expect(messageFits({ n: 1n })).toBe(false);
  });

  it("forgets a frame's window once the frame detaches or its view closes", () => {
    const a = frameInDocument();
    const b = frameInDocument();
    registry.handle(opened("call-1", "v1"));
    registry.handle(opened("call-2", "v2"));
    registry.attach("v1", a);
    registry.attach("v2", b);
    registry.detach("v1", a);
    registry.handle({ type: "closed", viewId: "v2" });
    post(a.contentWindow, { jsonrpc: "2.0", method: "ping" });
    post(b.contentWindow, { jsonrpc: "2.0", method: "ping" });
    expect(viewMessage).not.toHaveBeenCalled();
  });

  it("posts messages into the view's frame with target origin *, queueing those that come before the frame", () => {
    const frame = frameInDocument();
    const postMessage = vi.spyOn(frame.contentWindow!, "postMessage").mockImplementation(() => {});
    registry.handle(state("call-1", "v1", "loading"));
    const early = { jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { city: "Paris" } } };
    const second = { jsonrpc: "2.0", method: "ui/notifications/tool-result", params: { content: [] } };
    emitView({ type: "message", viewId: "v1", message: early });
    emitView({ type: "message", viewId: "v1", message: second });
    expect(postMessage).not.toHaveBeenCalled();

    registry.attach("v1", frame);
    expect(postMessage.mock.calls).toEqual([
      [early, "*"],
      [second, "*"],
    ]);

    const later = { jsonrpc: "2.0", id: 1, result: {} };
    emitView({ type: "message", viewId: "v1", message: later });
    expect(postMessage).toHaveBeenLastCalledWith(later, "*");
    expect(postMessage).toHaveBeenCalledTimes(3);
  });

  it("posts nothing to a view that was closed, and drops what was waiting for it", () => {
    const frame = frameInDocument();
    const postMessage = vi.spyOn(frame.contentWindow!, "postMessage").mockImplementation(() => {});
    registry.handle(opened("call-1", "v1"));
    emitView({ type: "message", viewId: "v1", message: { jsonrpc: "2.0", method: "early" } });
    registry.release("call-1", "v1");
    registry.attach("v1", frame);
    emitView({ type: "message", viewId: "v1", message: { jsonrpc: "2.0", method: "late" } });
    expect(postMessage).not.toHaveBeenCalled();
  });
});

describe("view registry: parking views far from sight", () => {
  it("parks a loading or ready inline view: Rust tears it down once, the call keeps it parked, never closed by the window", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    registry.handle(opened("call-1", "v1"));
    registry.handle(state("call-2", "v2", "loading"));
    expect(registry.park("v1", 411.6)).toBe(true);
    expect(registry.park("v2")).toBe(true);
    expect(registry.park("v1", 500)).toBe(false);
    expect(teardownView.mock.calls).toEqual([["v1"], ["v2"]]);
    expect(registry.get("call-1")).toMatchObject({ viewId: "v1", state: "parked", leaving: true, reserve: 412 });
    expect(registry.get("call-2")).toMatchObject({ viewId: "v2", state: "parked", leaving: true, reserve: null });

    // The frames go once the teardowns are over, whether they went well or not.
    await endTeardown("v1");
    expect(registry.get("call-1")).toMatchObject({ state: "parked", leaving: false });
    expect(registry.get("call-2")?.leaving).toBe(true);
    await endTeardown("v2", "the view did not answer");
    expect(registry.get("call-2")).toMatchObject({ state: "parked", leaving: false });
    expect(warn).toHaveBeenCalledOnce();
    warn.mockRestore();

    // Rust's closing of it, and late news of it, leave it parked; its frame is not relayed for.
    registry.handle({ type: "closed", viewId: "v1" });
    registry.handle(state("call-1", "v1", "ready"));
    registry.handle({ type: "proposed_message", viewId: "v1", text: "hi" });
    expect(registry.get("call-1")?.state).toBe("parked");
    expect(registry.proposal).toBeNull();
    stop = await registry.start();
    const frame = frameInDocument();
    registry.attach("v1", frame);
    post(frame.contentWindow, { jsonrpc: "2.0", method: "ping" });
    expect(viewMessage).not.toHaveBeenCalled();

    // Its card going for good asks nothing more of Rust either.
    registry.release("call-1", "v1");
    registry.release("call-2", "v2");
    await Promise.resolve();
    expect(closeView).not.toHaveBeenCalled();
    expect(teardownView).toHaveBeenCalledTimes(2);
  });

  it("keeps relaying to and from a leaving view's frame until its teardown is over", async () => {
    stop = await registry.start();
    const frame = frameInDocument();
    const postMessage = vi.spyOn(frame.contentWindow!, "postMessage").mockImplementation(() => {});
    registry.handle(opened("call-1", "v1"));
    registry.handle(state("call-1", "v1", "ready"));
    registry.attach("v1", frame);
    expect(registry.park("v1")).toBe(true);

    // Rust asks the view to tear down, through the frame still in the document; it answers.
    const teardown = { jsonrpc: "2.0", id: 7, method: "ui/resource-teardown", params: {} };
    emitView({ type: "message", viewId: "v1", message: teardown });
    expect(postMessage).toHaveBeenCalledExactlyOnceWith(teardown, "*");
    const answer = { jsonrpc: "2.0", id: 7, result: {} };
    post(frame.contentWindow, answer);
    expect(viewMessage).toHaveBeenCalledExactlyOnceWith("v1", answer);

    // Meanwhile it stays parked, shown nowhere else, proposing nothing.
    emitView(state("call-1", "v1", "ready"));
    emitView({ type: "display_mode", viewId: "v1", mode: "fullscreen" });
    emitView({ type: "proposed_message", viewId: "v1", text: "one more thing" });
    expect(registry.get("call-1")).toMatchObject({ state: "parked", leaving: true, mode: "inline" });
    expect(registry.proposal).toBeNull();

    // Once it is over, nothing more goes to or from the frame.
    await endTeardown("v1");
    expect(registry.get("call-1")?.leaving).toBe(false);
    emitView({ type: "message", viewId: "v1", message: { jsonrpc: "2.0", method: "late" } });
    post(frame.contentWindow, { jsonrpc: "2.0", method: "late" });
    expect(postMessage).toHaveBeenCalledOnce();
    expect(viewMessage).toHaveBeenCalledOnce();
    expect(closeView).not.toHaveBeenCalled();
    expect(teardownView).toHaveBeenCalledExactlyOnceWith("v1");
  });

  it("ends a leaving view's teardown when Rust says the view is closed", async () => {
    stop = await registry.start();
    const frame = frameInDocument();
    registry.handle(opened("call-1", "v1"));
    registry.attach("v1", frame);
    registry.park("v1");
    emitView({ type: "closed", viewId: "v1" });
    expect(registry.get("call-1")).toMatchObject({ state: "parked", leaving: false });
    post(frame.contentWindow, { jsonrpc: "2.0", method: "ping" });
    expect(viewMessage).not.toHaveBeenCalled();
    // The answer to the request comes later, and changes nothing.
    await endTeardown("v1");
    expect(registry.get("call-1")).toMatchObject({ state: "parked", leaving: false });
    expect(closeView).not.toHaveBeenCalled();
  });

  it("does not ask Rust to close a view whose card goes while it is torn down", async () => {
    registry.handle(opened("call-1", "v1"));
    registry.park("v1");
    registry.release("call-1", "v1");
    await Promise.resolve();
    expect(registry.get("call-1")).toBeUndefined();
    await endTeardown("v1");
    expect(closeView).not.toHaveBeenCalled();
    expect(teardownView).toHaveBeenCalledOnce();
  });

  it.each([
    ["fullscreen", () => registry.handle({ type: "display_mode", viewId: "v1", mode: "fullscreen" })],
    ["pip", () => registry.setMode("v1", "pip")],
    ["failed", () => registry.handle(state("call-1", "v1", "failed", "boom"))],
    ["closed by Rust", () => registry.handle({ type: "closed", viewId: "v1" })],
  ])("does not park a view %s", (_what, make) => {
    registry.handle(opened("call-1", "v1"));
    make();
    expect(registry.park("v1")).toBe(false);
    expect(registry.get("call-1")?.state).not.toBe("parked");
    expect(closeView).not.toHaveBeenCalled();
    expect(teardownView).not.toHaveBeenCalled();
  });

  it("asks Rust once to re-create a parked view's call, once torn down, and the new view takes its place and size", async () => {
    registry.handle(opened("call-1", "v1"));
    registry.handle({ type: "size", viewId: "v1", width: null, height: 600 });
    registry.wake("v1"); // not parked: nothing to re-create
    expect(reopenViews).not.toHaveBeenCalled();
    registry.park("v1", 650);
    registry.wake("v1"); // still being torn down
    expect(reopenViews).not.toHaveBeenCalled();
    await endTeardown("v1");
    registry.wake("v1");
    registry.wake("v1");
    expect(reopenViews).toHaveBeenCalledExactlyOnceWith("c1", "call-1");

    registry.handle(state("call-1", "v2", "loading"));
    expect(registry.get("call-1")).toMatchObject({ viewId: "v2", state: "loading", url: null, height: 600, reserve: 650, leaving: false });
    registry.handle(opened("call-1", "v2"));
    expect(registry.get("call-1")).toMatchObject({ viewId: "v2", url: "mcpview://localhost/v2-token" });
    expect(closeView).not.toHaveBeenCalled();
    expect(teardownView).toHaveBeenCalledExactlyOnceWith("v1");
  });

  it("keeps a view parked, saying why, when it cannot be re-created, and tries again next time", async () => {
    reopenViews.mockImplementationOnce(async () => Promise.reject(refused("store", "the store is locked")));
    registry.handle(opened("call-1", "v1"));
    registry.park("v1");
    await endTeardown("v1");
    registry.wake("v1");
    await new Promise((r) => setTimeout(r, 0));
    expect(registry.get("call-1")).toMatchObject({ state: "parked", reason: "the store is locked" });
    registry.wake("v1");
    expect(reopenViews).toHaveBeenCalledTimes(2);
  });
});
