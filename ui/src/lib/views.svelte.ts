// The views (MCP Apps) of the window's tool calls: what Rust says about each (`view-event`),
// by tool call id, and the one relay between the views' sandboxed frames and Rust.
//
// The relay trusts nothing but identity: a message is a view's only when its `event.source` is
// the `contentWindow` of a frame registered for that view (`event.origin`, the view's server's
// origin, is shared by that server's views and is not checked). Everything else posted to the
// window is ignored.
import { api, errorMessage, type ViewEvent, type ViewStatus } from "./api";

/** Messages relayed to Rust per view per second at most: a bound on what a flooding view can put
 * on the channel, a little above Rust's own limit (500), so that Rust is the one that cuts a flood
 * off and writes it in the audit log. */
export const MAX_RELAYED_PER_SECOND = 600;

export type ViewMode = "inline" | "fullscreen" | "pip";

const MODES: ReadonlySet<string> = new Set<ViewMode>(["inline", "fullscreen", "pip"]);

/** Height of a frame before its view reports one (px). */
export const DEFAULT_HEIGHT = 320;
export const MIN_HEIGHT = 40;
export const MAX_HEIGHT = 4000;
/** Largest message a view may post (bytes of its JSON). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Messages kept for a view whose frame does not exist yet. */
const MAX_QUEUED = 256;

/** Where a view stands: as Rust says, or "parked" (the window's own: the view was torn down
 * while its card is far out of sight, and is re-created when the card comes back). */
export type ViewEntryState = ViewStatus | "parked";

/** One tool call's view, as its card shows it. */
export interface ViewEntry {
  callId: string;
  conversationId: string;
  /** Null when the view was never created (expired, or its server is gone). */
  viewId: string | null;
  /** The frame's address; null until the view's HTML is ready. */
  url: string | null;
  allow: string;
  prefersBorder: boolean | null;
  displayModes: ViewMode[];
  state: ViewEntryState;
  reason: string | null;
  mode: ViewMode;
  /** Frame height (px), as the view last asked for. */
  height: number;
  /** Height (px) the card keeps for the view while it has no frame after being parked (parked,
   * then re-created and loading), so the transcript does not jump; null: none kept. */
  reserve: number | null;
  /** A parked view whose teardown (ui/resource-teardown) is under way: its frame stays in the
   * document, unseen, so the view can answer, until Rust is done with it. */
  leaving: boolean;
  /** CSP entries the view's resource declared that were refused ("field: entry (why)"). */
  cspDropped: string[];
  /** The origins the view may contact (granted connections, resources and frames). */
  reaches: string[];
  /** The devices the view may use (`camera`, `microphone`, `geolocation`, `clipboard-write`). */
  devices: string[];
  /** The devices it asks for and its server was not let use; the card offers them. */
  devicesAsked: string[];
  /** The host it is presented as (the workbench's host emulation), and the device's width. */
  emulating: { name: string; width: number | null } | null;
}

/** A message a view proposed for the composer; `id` tells repeated proposals apart. */
export interface Proposal {
  id: number;
  viewId: string;
  text: string;
}

/** What a frame is to the registry: its window, once it is in the document. */
export interface FrameLike {
  readonly contentWindow: Window | null;
}

/** The target origin of messages to a view: "*". A view's origin is a custom scheme's
 * (`mcpview://<origin>`), which a target origin cannot name reliably; the message goes to the
 * frame's window, found by identity. */
const ANY_ORIGIN = "*";

export function clampHeight(height: number): number {
  return Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.round(height)));
}

/** Plain JSON-like objects only: no arrays, strings, or class instances. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** UTF-8 length of a string, without encoding it. */
function utf8Length(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Whether a message fits: serializable, and at most MAX_MESSAGE_BYTES of JSON. */
export function messageFits(data: unknown): boolean {
  let json: string;
  try {
    json = JSON.stringify(data);
  } catch {
    return false; // cycles, BigInt
  }
  if (json === undefined) return false;
  if (json.length > MAX_MESSAGE_BYTES) return false;
  // Each UTF-16 unit is at most 3 bytes: count exactly only when it could matter.
  return json.length * 3 <= MAX_MESSAGE_BYTES || utf8Length(json) <= MAX_MESSAGE_BYTES;
}

/** The conversation id of the workbench's view previews: always shown (in the workbench). */
export const PREVIEW_CONVERSATION = "workbench-preview";

export class ViewRegistry {
  /** Views by tool call id. */
  entries = $state<Record<string, ViewEntry>>({});
  /** The latest message a view proposed (for the composer). */
  proposal = $state<Proposal | null>(null);

  /** Tool call id of each view id. */
  #calls = new Map<string, string>();
  /** The registered frames: their window → view id, and view id → frame. */
  #byWindow = new Map<Window, string>();
  #frames = new Map<string, FrameLike>();
  /** Messages for views whose frame does not exist yet. */
  #queued = new Map<string, unknown[]>();
  /** Views closed (by Rust, or asked to close by us): nothing more goes to or from them. */
  #closed = new Set<string>();
  /** Parked views (by their old view id) whose call's view Rust was asked to re-create. */
  #waking = new Set<string>();
  /** Parked views being torn down by Rust (ui/resource-teardown): Rust closes them itself, so
   * they are never asked to close; their frames speak for them until the teardown is over. */
  #tearing = new Set<string>();
  #proposals = 0;
  #shown: (conversationId: string) => boolean = () => true;

  /** The view of a tool call, if it has one. */
  get(callId: string): ViewEntry | undefined {
    return this.entries[callId];
  }

  /** The view with this id. */
  byViewId(viewId: string): ViewEntry | undefined {
    const callId = this.#calls.get(viewId);
    const entry = callId === undefined ? undefined : this.entries[callId];
    return entry?.viewId === viewId ? entry : undefined;
  }

  /** Listens for Rust's view events and for the frames' messages. `shown` says whether a
   * conversation is the one on screen: views of others are closed as soon as they open (no
   * frame would show them; reopening the conversation re-creates them). Returns the function
   * that stops listening. */
  async start(options: { shown?: (conversationId: string) => boolean } = {}): Promise<() => void> {
    if (options.shown) this.#shown = options.shown;
    const relay = (event: MessageEvent) => this.receive(event);
    window.addEventListener("message", relay);
    let unlisten: (() => void) | undefined;
    try {
      unlisten = await api.onViewEvent((event) => this.handle(event));
    } catch (e) {
      window.removeEventListener("message", relay);
      throw e;
    }
    return () => {
      window.removeEventListener("message", relay);
      unlisten?.();
    };
  }

  /** One view event from Rust. */
  handle(event: ViewEvent) {
    switch (event.type) {
      case "opened": {
        if (this.#closed.has(event.viewId) || this.#isParked(event.viewId)) return;
        if (!this.#shown(event.conversationId)) return this.#close(event.viewId);
        const entry = this.#entry(event.conversationId, event.callId, event.viewId);
        entry.url = event.url;
        entry.allow = event.allow;
        entry.prefersBorder = event.prefersBorder;
        entry.displayModes = (event.displayModes ?? []).filter((m) => MODES.has(m));
        entry.cspDropped = Array.isArray(event.cspDropped) ? event.cspDropped.filter((d) => typeof d === "string") : [];
        entry.reaches = Array.isArray(event.reaches) ? event.reaches.filter((d) => typeof d === "string") : [];
        entry.devices = Array.isArray(event.devices) ? event.devices.filter((d) => typeof d === "string") : [];
        entry.devicesAsked = Array.isArray(event.devicesAsked) ? event.devicesAsked.filter((d) => typeof d === "string") : [];
        entry.emulating =
          event.emulating && typeof event.emulating.name === "string"
            ? { name: event.emulating.name, width: typeof event.emulating.width === "number" ? event.emulating.width : null }
            : null;
        break;
      }
      case "state": {
        const viewId = event.viewId;
        if (viewId !== null && this.#closed.has(viewId)) return;
        // A parked view stays parked whatever Rust says of it while it is torn down; its closing
        // ends the teardown.
        if (viewId !== null && this.#isParked(viewId)) {
          if (event.state === "closed") this.#endLeaving(viewId);
          return;
        }
        if (!this.#shown(event.conversationId)) {
          if (viewId !== null) this.#close(viewId);
          return;
        }
        const entry = this.#entry(event.conversationId, event.callId, viewId);
        entry.state = event.state;
        entry.reason = event.reason;
        if (event.state === "closed") {
          entry.mode = "inline";
          if (viewId !== null) this.#forgetFrame(viewId, true);
        }
        break;
      }
      case "message":
        this.#post(event.viewId, event.message);
        break;
      case "display_mode": {
        const entry = this.byViewId(event.viewId);
        if (entry && entry.state !== "parked" && MODES.has(event.mode)) entry.mode = event.mode;
        break;
      }
      case "size": {
        const entry = this.byViewId(event.viewId);
        if (entry && typeof event.height === "number" && Number.isFinite(event.height)) entry.height = clampHeight(event.height);
        break;
      }
      case "proposed_message": {
        const entry = this.byViewId(event.viewId);
        // Not from a view on its way out (parked): nobody sees it any more. A view in a pop-out
        // window has no entry here; Rust sends its proposals to this window, which has the composer.
        if (entry?.state === "parked" || this.#closed.has(event.viewId)) return;
        if (typeof event.text !== "string" || !event.text.trim()) return;
        this.proposal = { id: ++this.#proposals, viewId: event.viewId, text: event.text };
        break;
      }
      case "closed": {
        this.#forgetFrame(event.viewId, true);
        // A parked view's own closing (the end of its teardown) leaves it parked.
        this.#endLeaving(event.viewId);
        const entry = this.byViewId(event.viewId);
        if (entry && entry.state !== "parked") {
          entry.state = "closed";
          entry.mode = "inline";
        }
        break;
      }
    }
  }

  /** One `message` event posted to the window: relayed to Rust when, and only when, it comes
   * from a registered frame's window and is a plain object of reasonable size. */
  receive(event: Pick<MessageEvent, "source" | "data">) {
    const source = event.source;
    if (!source) return;
    const viewId = this.#byWindow.get(source as Window);
    if (viewId === undefined || this.#closed.has(viewId)) return;
    const data: unknown = event.data;
    if (!isPlainObject(data) || !messageFits(data)) return;
    // A flood beyond even Rust's limit is cut off here, before it can clog the channel to Rust:
    // the rest of that second's messages are dropped.
    if (!this.#withinRate(viewId)) return;
    api.viewMessage(viewId, data).catch((e) => console.warn(`view ${viewId}: message not relayed:`, e));
  }

  #rate = new Map<string, { windowStart: number; count: number }>();

  #withinRate(viewId: string, now = Date.now()): boolean {
    const rate = this.#rate.get(viewId);
    if (!rate || now - rate.windowStart >= 1000) {
      this.#rate.set(viewId, { windowStart: now, count: 1 });
      return true;
    }
    rate.count += 1;
    return rate.count <= MAX_RELAYED_PER_SECOND;
  }

  /** A view's frame is in the document: its window now speaks for the view, and what was
   * waiting for it is posted. */
  attach(viewId: string, frame: FrameLike) {
    const win = frame.contentWindow;
    if (!win || this.#closed.has(viewId)) return;
    this.detach(viewId);
    this.#frames.set(viewId, frame);
    this.#byWindow.set(win, viewId);
    const queued = this.#queued.get(viewId);
    this.#queued.delete(viewId);
    for (const message of queued ?? []) this.#deliver(frame, message);
  }

  /** The frame left the document (the view lives on: another frame may attach). */
  detach(viewId: string, frame?: FrameLike) {
    const current = this.#frames.get(viewId);
    if (!current || (frame && frame !== current)) return;
    this.#frames.delete(viewId);
    for (const [win, id] of this.#byWindow) if (id === viewId) this.#byWindow.delete(win);
  }

  /** The view's frame is gone for good (card destroyed, conversation switched, transcript
   * cleared): Rust tears the view down, once, and the call forgets it. */
  release(callId: string, viewId: string | null) {
    if (viewId !== null) {
      this.#close(viewId);
      this.#waking.delete(viewId);
    }
    // After the frame's teardown is over: the card may still be reading the entry.
    queueMicrotask(() => {
      const entry = this.entries[callId];
      if (entry && entry.viewId === viewId) delete this.entries[callId];
    });
  }

  /** The view's card went far out of sight: the view is torn down but the call keeps its entry,
   * "parked", holding `reserve` px of the card. Rust is asked once to tear it down: it sends
   * ui/resource-teardown to the view, whose frame stays (unseen, `leaving`) and relayed for
   * until Rust is done with it (answered, or ~2 s), then forgets it; so does the window, without
   * asking Rust to close it. Only a loading or ready view shown inline is parked (not one full
   * screen or in a corner, which is still on screen). A view whose frame was never shown
   * (`shown` false: its card was far out of sight from the start) has nothing to tell: Rust
   * closes it without a teardown, and nothing stays. Returns whether it was parked. */
  park(viewId: string, reserve: number | null = null, shown = true): boolean {
    const entry = this.byViewId(viewId);
    if (!entry || entry.mode !== "inline" || (entry.state !== "loading" && entry.state !== "ready")) return false;
    if (this.#closed.has(viewId) || this.#tearing.has(viewId)) return false;
    entry.state = "parked";
    entry.leaving = shown;
    entry.reason = null;
    entry.reserve = reserve !== null && Number.isFinite(reserve) && reserve > 0 ? Math.round(reserve) : null;
    this.#tearing.add(viewId);
    let teardown: Promise<void>;
    try {
      teardown = shown ? api.teardownView(viewId) : api.closeView(viewId);
    } catch (e) {
      teardown = Promise.reject(e);
    }
    teardown.then(
      () => this.#endLeaving(viewId),
      (e) => {
        console.warn(`view ${viewId}: teardown failed:`, e);
        this.#endLeaving(viewId);
      },
    );
    return true;
  }

  /** The parked view's card came back near sight: Rust re-creates the call's view from its
   * stored input and result, once (its events bring a new view id for the call, which
   * replaces the parked entry). Not while the parked view is still being torn down (its card
   * asks again once it is over). A failed request leaves it parked, saying why, to be tried
   * again the next time the card comes back. */
  wake(viewId: string) {
    const entry = this.byViewId(viewId);
    if (!entry || entry.state !== "parked" || entry.leaving || this.#waking.has(viewId)) return;
    this.#waking.add(viewId);
    const { conversationId, callId } = entry;
    api.reopenViews(conversationId, callId).catch((e) => {
      this.#waking.delete(viewId);
      const still = this.byViewId(viewId);
      if (still?.state === "parked") still.reason = errorMessage(e);
    });
  }

  /** Shows a view inline, full screen or in a corner (locally: Rust is not told). */
  setMode(viewId: string, mode: ViewMode) {
    const entry = this.byViewId(viewId);
    if (entry) entry.mode = mode;
  }

  /** Forgets everything (tests). */
  reset() {
    this.entries = {};
    this.proposal = null;
    this.#calls.clear();
    this.#byWindow.clear();
    this.#frames.clear();
    this.#queued.clear();
    this.#closed.clear();
    this.#waking.clear();
    this.#tearing.clear();
    this.#shown = () => true;
  }

  /** The entry of a call for this view (null: a view that does not exist, as when it expired),
   * created loading when the call had none or had another view (which is closed). */
  #entry(conversationId: string, callId: string, viewId: string | null): ViewEntry {
    if (viewId !== null) this.#calls.set(viewId, callId);
    const current = this.entries[callId];
    if (current && current.viewId === viewId) return current;
    if (current?.viewId) this.#close(current.viewId);
    // A parked view coming back keeps its place on the card until it tells its size.
    const back = current?.state === "parked" ? current : undefined;
    this.entries[callId] = {
      callId,
      conversationId,
      viewId,
      url: null,
      allow: "",
      prefersBorder: null,
      displayModes: [],
      state: "loading",
      reason: null,
      mode: "inline",
      height: back?.height ?? DEFAULT_HEIGHT,
      reserve: back?.reserve ?? null,
      leaving: false,
      cspDropped: [],
      reaches: [],
      devices: [],
      devicesAsked: [],
      emulating: null,
    };
    return this.entries[callId];
  }

  #post(viewId: string, message: unknown) {
    if (this.#closed.has(viewId)) return;
    const frame = this.#frames.get(viewId);
    if (frame) return this.#deliver(frame, message);
    const queue = this.#queued.get(viewId) ?? [];
    if (queue.length >= MAX_QUEUED) {
      console.warn(`view ${viewId}: too many messages before its frame exists; dropping one`);
      return;
    }
    queue.push(message);
    this.#queued.set(viewId, queue);
  }

  #deliver(frame: FrameLike, message: unknown) {
    try {
      frame.contentWindow?.postMessage(message, ANY_ORIGIN);
    } catch (e) {
      console.warn("a message could not be posted to a view:", e);
    }
  }

  /** Nothing more to or from this view; its frame (if any) no longer speaks for it. */
  #forgetFrame(viewId: string, closed: boolean) {
    this.detach(viewId);
    this.#queued.delete(viewId);
    if (closed) this.#closed.add(viewId);
  }

  /** Asks Rust to tear a view down, once per view; not when Rust closed it already, nor when
   * it is tearing a parked view down (and closes it itself). */
  #close(viewId: string) {
    if (this.#closed.has(viewId)) return;
    this.#forgetFrame(viewId, true);
    if (this.#tearing.has(viewId)) return;
    api.closeView(viewId).catch((e) => console.warn(`view ${viewId}: could not be closed:`, e));
  }

  /** Whether this view id is a parked call's view. */
  #isParked(viewId: string): boolean {
    return this.byViewId(viewId)?.state === "parked";
  }

  /** A parked view's teardown is over (Rust answered, or said the view is closed): nothing more
   * to or from it, and its frame may go. */
  #endLeaving(viewId: string) {
    if (!this.#tearing.delete(viewId)) return;
    this.#forgetFrame(viewId, true);
    const entry = this.byViewId(viewId);
    if (entry?.leaving) entry.leaving = false;
  }
}

/** The window's views. */
export const views = new ViewRegistry();
