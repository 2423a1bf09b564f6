// The open conversation as the transcript shows it: a list of items (messages, tool calls,
// errors, notices) built by a pure reducer over the turn's events (`apply`), or rebuilt from the
// store (`load`). Both paths give the same items for the same conversation.
import type {
  AllowedBy,
  CallStatus,
  Decision,
  JsonValue,
  MessageStatus,
  ModelFacing,
  Part,
  RetryKind,
  ScrollPosition,
  StoredCallStatus,
  StoredConversation,
  ToolCallRecord,
  TurnEvent,
} from "./api";
import { attachmentChips, type AttachmentChip } from "./composerMenu";
import { itemAt, type Offsets } from "./virtualList";

/** Where a tool call is, as shown on its card. */
export type ToolCallStatus =
  /** The model is still writing the call's arguments. */
  | "streaming"
  /** Asked for, not yet approved or running. */
  | "pending"
  | "awaiting-approval"
  | "running"
  | CallStatus
  /** Never finished: the reply was cut short or the app stopped. */
  | "interrupted";

export interface Progress {
  progress: number;
  total: number | null;
  message: string | null;
}

/** The provider is waiting before trying the model request again. */
export interface Retry {
  attempt: number;
  waitMs: number;
  /** What went wrong, for the words the notice uses. */
  kind: RetryKind;
  /** What went wrong, as the provider said it. */
  reason: string;
}

export interface UserItem {
  kind: "user";
  id: number;
  text: string;
  /** Resources (and a prompt's images) sent with the message. */
  attachments: AttachmentChip[];
  /** Sent from this window, not yet echoed back by the turn. */
  pending: boolean;
  /** It never reached the back end (sending failed): sending it again is a new send. */
  unsent: boolean;
}

export interface AssistantItem {
  kind: "assistant";
  id: number;
  text: string;
  /** The model's reasoning ("thinking"), shown collapsed. */
  reasoning: string;
  status: MessageStatus;
  error: string | null;
  /** Transient: shown while the request waits to be retried. */
  retry: Retry | null;
}

export interface ToolCallItem {
  kind: "tool-call";
  id: number;
  callId: string;
  /** The model-facing tool name. */
  name: string;
  /** The MCP server and tool; null when the model named a tool that does not exist. */
  server: string | null;
  tool: string | null;
  arguments: unknown;
  /** The arguments' JSON as far as the model has written it (while streaming). */
  argumentsText: string;
  uiResourceUri: string | null;
  status: ToolCallStatus;
  decision: Decision | null;
  /** How the call came to run (once it did): asked, an earlier "always", the server's config… */
  allowedBy: AllowedBy | null;
  progress: Progress | null;
  durationMs: number | null;
  /** Exactly what the model got. */
  modelResult: ModelFacing | null;
  /** The full CallToolResult, as the tool's view gets it (null: no result). */
  viewResult: unknown;
  error: string | null;
}

/** An error that belongs to no assistant message. */
export interface ErrorItem {
  kind: "error";
  id: number;
  text: string;
}

/** A note from the window itself (not part of the conversation). */
export interface NoticeItem {
  kind: "notice";
  id: number;
  level: "info" | "error";
  text: string;
}

/** The turn waits for servers still starting before it asks the model (their tools would be
 * missing otherwise); the person may send without them. */
export interface WaitingItem {
  kind: "waiting";
  id: number;
  servers: string[];
}

export type Item = UserItem | AssistantItem | ToolCallItem | ErrorItem | NoticeItem | WaitingItem;

export type Role = "user" | "assistant";

/** A user or assistant message, as plain text. */
export interface Message {
  id: number;
  role: Role;
  text: string;
}

export interface Notice {
  id: number;
  kind: "info" | "error";
  text: string;
}

/** Where the transcript offers to run the last turn again: on the last turn's last error (an
 * error item, or a reply's error), else on its last reply. */
export interface RetrySpot {
  index: number;
  /** "error": the error shown at `index` (an error item, or the reply's error); "reply": the reply. */
  on: "error" | "reply";
}

/** What the transcript's windowing needs of an item, kept outside the reactive state (reading
 * thousands of items through it on every update would be slow). Set when the item is added;
 * a tool call's estimate again once it is known to have a view. */
export interface Row {
  id: number;
  kind: Item["kind"];
  /** The tool call's id (tool calls only). */
  callId: string | null;
  /** Its height (px) until it is measured, from what it held when added. */
  estimate: number;
  /** The stored message it shows (a tool call: the message that asked for it), when known: items
   * of a conversation opened from the store have it; those of this window's turns do not. */
  messageId: number | null;
}

/** Items that are part of the conversation (the store has them), unlike the window's notes. */
function kept(row: Pick<Row, "kind">): boolean {
  return row.kind === "user" || row.kind === "assistant" || row.kind === "tool-call";
}

/** The place to keep for a reader whose transcript's top is at `scrollTop` (`offsets`: the
 * rows' tops, as lib/virtualList lays them out): the first item of the conversation at or below
 * the top's item, how many follow it, and how far the top is into it. Null when no item is kept. */
export function scrollPositionAt(rows: readonly Row[], offsets: Offsets, scrollTop: number): ScrollPosition | null {
  const top = itemAt(offsets, scrollTop);
  let index = top;
  while (index < rows.length && !kept(rows[index])) index++;
  if (index === rows.length) {
    index = top;
    while (index >= 0 && !kept(rows[index])) index--;
    if (index < 0) return null;
  }
  let fromEnd = 0;
  for (let i = index + 1; i < rows.length; i++) if (kept(rows[i])) fromEnd++;
  return { messageId: rows[index].messageId, fromEnd, within: scrollTop - offsets[index] };
}

/** The row a kept place names: by its stored message (of that message's rows, the one as far
 * from the end as it was, else its first), else by how many items follow it. "earlier": it is
 * among turns not loaded yet (if the conversation has any); null: it is gone. */
export function rowOfScrollPosition(rows: readonly Row[], position: ScrollPosition): number | "earlier" | null {
  const keptRows: number[] = [];
  for (let i = 0; i < rows.length; i++) if (kept(rows[i])) keptRows.push(i);
  const byCount = keptRows.length - 1 - position.fromEnd;
  if (position.messageId !== null) {
    const same = keptRows.filter((i) => rows[i].messageId === position.messageId);
    if (same.length > 0) return byCount >= 0 && same.includes(keptRows[byCount]) ? keptRows[byCount] : same[0];
    const first = keptRows.find((i) => rows[i].messageId !== null);
    // Before the first stored message loaded: in an earlier page. Otherwise it was deleted (a
    // rewound turn): the place by count, if it is still in the conversation.
    if (first !== undefined && (rows[first].messageId ?? 0) > position.messageId) return "earlier";
  }
  if (byCount >= 0) return keptRows[byCount];
  return "earlier";
}

/** Index of the last user message (the one that can be edited or sent again), or -1. */
export function lastUserIndex(items: readonly Pick<Item, "kind">[]): number {
  for (let i = items.length - 1; i >= 0; i--) if (items[i].kind === "user") return i;
  return -1;
}

/** How the tools panel's runs' call ids start (`tool_runs.rs`). */
export const PANEL_RUN_PREFIX = "run-";

/** Whether a tools-panel run comes after the item at `index`: sending the last message again
 * would remove it (Rust drops everything from that message on), so neither Retry nor Edit is
 * offered. */
export function panelRunAfter(rows: readonly Pick<Row, "kind" | "callId">[], index: number): boolean {
  for (let i = rows.length - 1; i > index; i--) {
    const row = rows[i];
    if (row.kind === "tool-call" && row.callId?.startsWith(PANEL_RUN_PREFIX)) return true;
  }
  return false;
}

/** Where Retry goes for the last turn (the items after the last user message), or null when
 * there is nothing to run again. */
export function retrySpot(items: readonly Item[]): RetrySpot | null {
  const user = lastUserIndex(items);
  if (user < 0) return null;
  let reply: number | null = null;
  for (let i = items.length - 1; i > user; i--) {
    const item = items[i];
    if (item.kind === "error" || (item.kind === "assistant" && item.error)) return { index: i, on: "error" };
    if (item.kind === "assistant" && reply === null) reply = i;
  }
  return reply === null ? null : { index: reply, on: "reply" };
}

/** A rough height (px) of an item not measured yet, for the transcript's windowing. */
export function estimatedHeight(item: Item): number {
  const lines = (text: string) => text.split("\n").reduce((n, line) => n + 1 + Math.floor(line.length / 90), 0);
  switch (item.kind) {
    case "user":
      return 28 + 21 * lines(item.text);
    case "assistant":
      return item.text || item.status === "streaming" ? 40 + 21 * lines(item.text) : 24;
    case "tool-call":
      return item.uiResourceUri ? 420 : 110;
    default:
      return 36;
  }
}

const FINAL: ReadonlySet<ToolCallStatus> = new Set(["ok", "error", "failed", "denied", "cancelled", "interrupted"]);

/** Whether a tool call is over. */
export function isFinal(status: ToolCallStatus): boolean {
  return FINAL.has(status);
}

/** Whether an assistant message has a bubble to show (a tool-only step has none; a failed
 * request shows only its error). */
export function hasBubble(item: AssistantItem): boolean {
  return item.text.length > 0 || item.status === "streaming";
}

/** The text parts of a message, joined. */
export function textOf(parts: unknown): string {
  return partsOf(parts)
    .map((p) => (p.type === "text" ? p.text : ""))
    .join("");
}

function reasoningOf(parts: Part[]): string {
  return parts.map((p) => (p.type === "reasoning" ? p.text : "")).join("");
}

function partsOf(parts: unknown): Part[] {
  return Array.isArray(parts) ? (parts.filter((p) => p && typeof p === "object" && "type" in p) as Part[]) : [];
}

function toolUses(parts: Part[]): Extract<Part, { type: "tool_use" }>[] {
  return parts.filter((p): p is Extract<Part, { type: "tool_use" }> => p.type === "tool_use");
}

/** A stored model facing, checked: `{content: [...], isError}` or null. */
function modelFacingOf(value: unknown): ModelFacing | null {
  if (!value || typeof value !== "object") return null;
  const v = value as { content?: unknown; isError?: unknown };
  return { content: Array.isArray(v.content) ? (v.content as JsonValue[]) : [], isError: v.isError === true };
}

function storedStatus(status: StoredCallStatus, running: boolean, awaitingApproval: boolean): ToolCallStatus {
  switch (status) {
    case "pending":
      if (!running) return "interrupted";
      return awaitingApproval ? "awaiting-approval" : "pending";
    case "running":
      return running ? "running" : "interrupted";
    default:
      return status;
  }
}

let nextId = 1;

export class Transcript {
  items = $state<Item[]>([]);
  /** Bumped when items are added or removed, or a row's estimate changes (not when an item
   * otherwise changes). */
  listRevision = $state(0);
  /** True from sending a message until its turn is done. */
  busy = $state(false);
  /** Bumped on every change, for followers (scrolling) that cannot watch deep state cheaply. */
  revision = $state(0);

  /** Earlier turns of the conversation are in the store, not loaded yet (see `prepend`). */
  earlier = $state(false);
  /** The store's id of the first message loaded: earlier turns are those before it. */
  firstMessageId: number | null = null;
  /** Where the reader left the conversation when it was last open (null: at its end); the
   * transcript view scrolls there once, then sets it back to null. */
  scroll: ScrollPosition | null = null;

  /** `items` as rows, in the same order. */
  #rows: Row[] = [];
  /** Index of the user message sent from this window and not yet confirmed by its turn. */
  #pending: number | null = null;
  /** Index of the assistant message being streamed. */
  #streaming: number | null = null;
  /** Index of the current turn's last assistant message (turn errors attach to it). */
  #turnAssistant: number | null = null;
  /** Index of each tool call of the current turn (all calls, after `load`), by call id. */
  #calls = new Map<string, number>();

  /** The items as the windowing sees them (plain objects; read it again after `listRevision` changes). */
  get rows(): readonly Row[] {
    void this.listRevision;
    return this.#rows;
  }

  /** The user and assistant messages, in order. */
  get messages(): Message[] {
    const out: Message[] = [];
    for (const item of this.items) {
      if (item.kind === "user" || item.kind === "assistant") out.push({ id: item.id, role: item.kind, text: item.text });
    }
    return out;
  }

  get notices(): Notice[] {
    const out: Notice[] = [];
    for (const item of this.items) if (item.kind === "notice") out.push({ id: item.id, kind: item.level, text: item.text });
    return out;
  }

  /** Adds the user's message; returns false (and adds nothing) for blank input. */
  addUserMessage(text: string): boolean {
    const trimmed = text.trim();
    if (!trimmed) return false;
    this.#push({ kind: "user", id: nextId++, text: trimmed, attachments: [], pending: false, unsent: false });
    return true;
  }

  /** Shows the message being sent at once and marks the transcript busy until the turn's
   * `done`. The turn's `user_message` confirms it rather than adding it twice. */
  beginTurn(text: string, attachments: AttachmentChip[] = []): boolean {
    const trimmed = text.trim();
    if (!trimmed && attachments.length === 0) return false;
    this.#pending = this.#push({ kind: "user", id: nextId++, text: trimmed, attachments, pending: true, unsent: false });
    this.busy = true;
    this.#touch();
    return true;
  }

  /** The message could not be sent: says why, and the composer is free again. */
  failTurn(message: string) {
    const pending = this.#takePending();
    if (pending) pending.unsent = true;
    this.#push({ kind: "error", id: nextId++, text: message });
    this.busy = false;
    this.#touch();
  }

  /** The last turn is about to be run again (retry, edit): busy until it is, or until
   * `rewind` / `cancelRewind`; the items stay as they are meanwhile. */
  holdForRewind() {
    this.busy = true;
    this.#touch();
  }

  /** The back end dropped the last user message and what followed: so does the transcript, and
   * `text` is shown as the message being sent (the turn's `user_message` confirms it). */
  rewind(text: string) {
    const index = lastUserIndex(this.#rows);
    const attachments = index < 0 ? [] : (this.items[index] as UserItem).attachments;
    this.dropLastTurn();
    this.#pending = this.#push({ kind: "user", id: nextId++, text: text.trim(), attachments, pending: true, unsent: false });
    this.busy = true;
    this.#touch();
  }

  /** Running the last turn again failed before it started: nothing changed; says why. */
  cancelRewind(message: string) {
    this.busy = false;
    this.addNotice("error", message);
  }

  /** Removes the last user message and everything after it; returns its text (null when there
   * is no user message). */
  dropLastTurn(): string | null {
    const index = lastUserIndex(this.#rows);
    if (index < 0) return null;
    const text = (this.items[index] as UserItem).text;
    this.items.splice(index);
    this.#rows.splice(index);
    this.listRevision++;
    if (this.#pending !== null && this.#pending >= index) this.#pending = null;
    this.#streaming = null;
    this.#turnAssistant = null;
    this.#calls.clear();
    this.#touch();
    return text;
  }

  addNotice(kind: Notice["kind"], text: string) {
    this.#push({ kind: "notice", id: nextId++, level: kind, text });
  }

  clear() {
    this.items = [];
    this.#rows = [];
    this.earlier = false;
    this.firstMessageId = null;
    this.scroll = null;
    this.listRevision++;
    this.#pending = null;
    this.busy = false;
    this.#streaming = null;
    this.#turnAssistant = null;
    this.#calls.clear();
    this.#touch();
  }

  /** Ends the turn without its `done` event (the back end says nothing is running). */
  settle() {
    if (this.busy) this.#finishTurn(false);
  }

  /** Applies one event of the open conversation's turn. */
  apply(event: TurnEvent) {
    switch (event.type) {
      case "turn_started":
        this.busy = true;
        break;
      case "user_message": {
        this.busy = true;
        this.#streaming = null;
        this.#turnAssistant = null;
        this.#calls.clear();
        const text = textOf(event.message.parts);
        const attachments = attachmentChips(event.message.parts);
        const pending = this.#takePending();
        if (pending) {
          pending.text = text;
          pending.attachments = attachments;
        } else {
          this.#push({ kind: "user", id: nextId++, text, attachments, pending: false, unsent: false });
        }
        break;
      }
      case "step_started":
        this.busy = true;
        this.#startAssistant();
        break;
      case "text_delta": {
        const a = this.#streamingAssistant();
        a.text += event.text;
        a.retry = null;
        break;
      }
      case "reasoning_delta": {
        const a = this.#streamingAssistant();
        a.reasoning += event.text;
        a.retry = null;
        break;
      }
      case "tool_call_streaming": {
        if (this.#streaming !== null) this.#assistantAt(this.#streaming).retry = null;
        const call = this.#call(event.callId, event.name);
        if (call.status === "streaming") {
          call.name = event.name;
          call.argumentsText = event.argumentsText;
        }
        break;
      }
      case "retrying":
        this.#streamingAssistant().retry = { attempt: event.attempt, waitMs: event.waitMs, kind: event.kind, reason: event.reason };
        break;
      case "assistant_message": {
        const parts = partsOf(event.message.parts);
        const a = this.#streaming !== null ? this.#assistantAt(this.#streaming) : this.#startAssistant();
        a.text = textOf(parts);
        a.reasoning = reasoningOf(parts) || a.reasoning;
        a.status = event.interrupted ? "interrupted" : "complete";
        a.retry = null;
        this.#streaming = null;
        for (const use of toolUses(parts)) {
          const call = this.#call(use.id, use.name);
          if (call.status === "streaming") {
            call.arguments = use.arguments;
            call.argumentsText = "";
          }
        }
        break;
      }
      case "tool_call_started": {
        const call = this.#call(event.callId, event.name);
        call.name = event.name;
        call.server = event.server;
        call.tool = event.tool;
        call.arguments = event.arguments;
        call.argumentsText = "";
        call.uiResourceUri = event.uiResourceUri;
        if (call.status === "streaming") call.status = "pending";
        // Its row was estimated when it was added, before the view was known (a streaming call).
        this.#reestimate(event.callId);
        break;
      }
      case "approval_requested": {
        const call = this.#call(event.callId, event.tool);
        call.server ??= event.server;
        call.tool ??= event.tool;
        if (!isFinal(call.status)) call.status = "awaiting-approval";
        break;
      }
      case "approval_resolved": {
        const call = this.#call(event.callId, "");
        call.decision = event.decision;
        if (call.status === "awaiting-approval") call.status = event.decision === "deny" ? "denied" : "pending";
        break;
      }
      case "tool_call_running": {
        const call = this.#call(event.callId, "");
        call.allowedBy = event.allowedBy;
        if (!isFinal(call.status)) call.status = "running";
        break;
      }
      case "tool_call_progress": {
        const call = this.#call(event.callId, "");
        if (!isFinal(call.status)) call.progress = { progress: event.progress, total: event.total, message: event.message };
        break;
      }
      case "tool_call_finished": {
        const call = this.#call(event.callId, "");
        call.status = event.status;
        call.modelResult = event.model;
        call.viewResult = event.view ?? null;
        call.durationMs = event.durationMs;
        call.error = event.error;
        break;
      }
      case "remote_view": {
        // A remote agent's view: its server, and the whole result the view gets.
        const call = this.#call(event.callId, event.tool);
        call.server = event.server;
        call.uiResourceUri = event.view.resourceUri;
        call.viewResult = event.view.result;
        break;
      }
      case "tool_results":
        // Shown on the tool cards already.
        break;
      case "error":
        this.#error(event.message);
        break;
      case "done":
        this.#finishTurn(event.stopReason === "end_turn" || event.stopReason === "step_limit");
        break;
      case "waiting_for_servers":
        this.#push({ kind: "waiting", id: nextId++, servers: [...event.servers] });
        break;
      case "servers_waited":
        this.#endWait(event.missing);
        break;
    }
    this.#touch();
  }

  /** The wait for starting servers is over: its item goes, or says which servers the turn went
   * on without, and why. */
  #endWait(missing: { name: string; reason: string }[]) {
    let index = this.items.length - 1;
    while (index >= 0 && this.items[index].kind !== "waiting") index--;
    const text =
      missing.length === 0 ? null : `Sent without ${missing.map((m) => `${m.name} (${m.reason})`).join(", ")}.`;
    const level = missing.some((m) => m.reason !== "still starting") ? "error" : "info";
    if (index < 0) {
      if (text) this.addNotice(level, text);
      return;
    }
    if (text === null && index === this.items.length - 1) {
      this.items.pop();
      this.#rows.pop();
      this.listRevision++;
      return;
    }
    const notice: NoticeItem = { kind: "notice", id: this.items[index].id, level, text: text ?? "Every server started." };
    this.items[index] = notice;
    this.#rows[index] = { ...this.#rows[index], kind: "notice", estimate: estimatedHeight(notice) };
    this.listRevision++;
  }

  /** Rebuilds the items of a stored conversation. `awaitingApproval`: call ids known (from this
   * window's events) to be waiting for the user's decision, when the turn is still running. */
  load(stored: StoredConversation, awaitingApproval: Iterable<string> = []) {
    this.clear();
    const waiting = new Set(awaitingApproval);
    const running = stored.running;
    const byMessage = new Map<number, ToolCallRecord[]>();
    for (const record of stored.toolCalls) {
      const list = byMessage.get(record.messageId) ?? [];
      list.push(record);
      byMessage.set(record.messageId, list);
    }
    let lastAssistant = -1;
    stored.messages.forEach((m, n) => {
      if (m.role === "assistant") lastAssistant = n;
    });
    const placed = new Set<ToolCallRecord>();

    stored.messages.forEach((message, n) => {
      const parts = partsOf(message.parts);
      if (message.role === "user") {
        this.#push({ kind: "user", id: nextId++, text: textOf(parts), attachments: attachmentChips(parts), pending: false, unsent: false }, message.id);
        return;
      }
      if (message.role === "tool") {
        // A tools-panel run: its call belongs to an empty tool message of its own, here.
        for (const record of byMessage.get(message.id) ?? []) {
          placed.add(record);
          this.#pushRecord(record, record.tool, running, waiting, stored.viewUris);
        }
        return;
      }
      if (message.role !== "assistant") return; // tool results: shown on the tool cards
      const live = running && n === lastAssistant && message.status === "streaming";
      const index = this.#push({
        kind: "assistant",
        id: nextId++,
        text: textOf(parts),
        reasoning: reasoningOf(parts),
        status: message.status === "streaming" && !live ? "interrupted" : message.status,
        error: message.error,
        retry: null,
      }, message.id);
      this.#turnAssistant = index;
      if (live) this.#streaming = index;

      const records = byMessage.get(message.id) ?? [];
      for (const use of toolUses(parts)) {
        const record = records.find((r) => r.callId === use.id && !placed.has(r));
        if (record) {
          placed.add(record);
          this.#pushRecord(record, use.name, running, waiting, stored.viewUris);
        } else {
          const call = this.#newCall(use.id, use.name);
          call.arguments = use.arguments;
          call.status = live ? "streaming" : "interrupted";
          this.#calls.set(use.id, this.#push(call, message.id));
        }
      }
      for (const record of records) if (!placed.has(record)) {
        placed.add(record);
        this.#pushRecord(record, record.tool, running, waiting, stored.viewUris);
      }
    });
    for (const record of stored.toolCalls) if (!placed.has(record)) this.#pushRecord(record, record.tool, running, waiting, stored.viewUris);

    this.busy = running;
    this.earlier = stored.earlier ?? false;
    this.firstMessageId = stored.messages[0]?.id ?? null;
    this.scroll = stored.scroll ?? null;
    this.#touch();
  }

  /** Puts the turns before the first loaded message (a page the store gave) in front of what is
   * shown; returns how many items were added. A turn under way at the end is not disturbed. */
  prepend(stored: StoredConversation): number {
    const page = new Transcript();
    page.load({ ...stored, running: false });
    const added = page.items.length;
    this.earlier = stored.earlier ?? false;
    if (stored.messages.length > 0) this.firstMessageId = stored.messages[0].id;
    if (added === 0) return 0;
    this.items.unshift(...page.items);
    this.#rows.unshift(...page.#rows);
    const shift = (index: number | null) => (index === null ? null : index + added);
    this.#pending = shift(this.#pending);
    this.#streaming = shift(this.#streaming);
    this.#turnAssistant = shift(this.#turnAssistant);
    const calls = new Map(page.#calls);
    for (const [callId, index] of this.#calls) calls.set(callId, index + added);
    this.#calls = calls;
    this.listRevision++;
    this.#touch();
    return added;
  }

  #pushRecord(record: ToolCallRecord, name: string, running: boolean, waiting: Set<string>, viewUris: Partial<Record<string, string>> = {}) {
    const call = this.#newCall(record.callId, name);
    call.uiResourceUri = viewUris[record.callId] ?? null;
    call.server = record.server || null;
    call.tool = record.tool || null;
    call.arguments = record.arguments;
    call.status = storedStatus(record.status, running, waiting.has(record.callId));
    call.modelResult = modelFacingOf(record.modelFacing);
    call.viewResult = record.viewFacing ?? null;
    call.durationMs = record.durationMs;
    call.allowedBy = record.allowedBy;
    call.error = record.error;
    this.#calls.set(record.callId, this.#push(call, record.messageId));
  }

  #push(item: Item, messageId: number | null = null): number {
    this.#rows.push({ id: item.id, kind: item.kind, callId: item.kind === "tool-call" ? item.callId : null, estimate: estimatedHeight(item), messageId });
    this.listRevision++;
    this.items.push(item);
    this.#touch();
    return this.items.length - 1;
  }

  /** The row of a tool call estimated again from what its item holds now. */
  #reestimate(callId: string) {
    const index = this.#calls.get(callId);
    if (index === undefined) return;
    const estimate = estimatedHeight(this.items[index]);
    if (this.#rows[index].estimate === estimate) return;
    this.#rows[index].estimate = estimate;
    this.listRevision++;
  }

  #touch() {
    this.revision++;
  }

  /** The message waiting for its turn's confirmation, no longer pending. */
  #takePending(): UserItem | null {
    if (this.#pending === null) return null;
    const item = this.items[this.#pending] as UserItem;
    this.#pending = null;
    item.pending = false;
    return item;
  }

  #assistantAt(index: number): AssistantItem {
    return this.items[index] as AssistantItem;
  }

  #startAssistant(): AssistantItem {
    if (this.#streaming !== null) this.#settleStreaming(false);
    const index = this.#push({ kind: "assistant", id: nextId++, text: "", reasoning: "", status: "streaming", error: null, retry: null });
    this.#streaming = index;
    this.#turnAssistant = index;
    return this.#assistantAt(index);
  }

  /** The message being streamed; a delta without a step (joined mid-turn) starts one. */
  #streamingAssistant(): AssistantItem {
    return this.#streaming !== null ? this.#assistantAt(this.#streaming) : this.#startAssistant();
  }

  #newCall(callId: string, name: string): ToolCallItem {
    return {
      kind: "tool-call",
      id: nextId++,
      callId,
      name,
      server: null,
      tool: null,
      arguments: null,
      argumentsText: "",
      uiResourceUri: null,
      status: "streaming",
      decision: null,
      allowedBy: null,
      progress: null,
      durationMs: null,
      modelResult: null,
      viewResult: null,
      error: null,
    };
  }

  /** The tool call with this id, created (as streaming) when it is not known yet. */
  #call(callId: string, name: string): ToolCallItem {
    const index = this.#calls.get(callId);
    if (index !== undefined) return this.items[index] as ToolCallItem;
    const created = this.#push(this.#newCall(callId, name));
    this.#calls.set(callId, created);
    return this.items[created] as ToolCallItem;
  }

  #error(message: string) {
    if (this.#streaming !== null) {
      // The request failed before the step's message was complete.
      const a = this.#assistantAt(this.#streaming);
      a.status = "failed";
      a.error = message;
      a.retry = null;
      this.#streaming = null;
    } else if (this.#turnAssistant !== null) {
      const a = this.#assistantAt(this.#turnAssistant);
      a.error = message;
      if (a.status !== "complete") a.status = "interrupted";
    } else {
      this.#push({ kind: "error", id: nextId++, text: message });
    }
  }

  /** A message still streaming when its turn ends is complete if the turn ended normally. */
  #settleStreaming(normal: boolean) {
    if (this.#streaming === null) return;
    const a = this.#assistantAt(this.#streaming);
    a.status = normal && a.text ? "complete" : "interrupted";
    a.retry = null;
    this.#streaming = null;
  }

  #finishTurn(normal: boolean) {
    this.#settleStreaming(normal);
    for (const index of this.#calls.values()) {
      const call = this.items[index] as ToolCallItem;
      if (!isFinal(call.status)) call.status = "interrupted";
    }
    this.#takePending();
    this.busy = false;
  }
}
