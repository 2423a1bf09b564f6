// Test fixtures: turn events as the Rust agent emits them, and what the Rust recorder
// (porthole_agent::record) would store for them, so tests can compare live and loaded
// transcripts. Used by tests only.
import type {
  AgentMessage,
  AllowedBy,
  ChatEvent,
  ModelFacing,
  JsonValue,
  Part,
  RetryKind,
  StoredConversation,
  StoredMessage,
  ToolCallRecord,
  TurnEvent,
  Usage,
} from "../api";
import type { Item } from "../transcript.svelte";

const usage: Usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0 };

export const ev = {
  turnStarted: (conversationId = "c1"): TurnEvent => ({ type: "turn_started", conversationId, model: "gpt-test", provider: "openai" }),
  user: (text: string): TurnEvent => ({ type: "user_message", message: { role: "user", parts: [{ type: "text", text }] } }),
  step: (step: number): TurnEvent => ({ type: "step_started", step }),
  text: (text: string): TurnEvent => ({ type: "text_delta", text }),
  reasoning: (text: string): TurnEvent => ({ type: "reasoning_delta", text }),
  callStreaming: (callId: string, name: string, argumentsText: string): TurnEvent => ({
    type: "tool_call_streaming",
    callId,
    name,
    argumentsText,
  }),
  retrying: (attempt: number, waitMs: number, kind: RetryKind, reason: string): TurnEvent => ({ type: "retrying", attempt, waitMs, kind, reason }),
  assistant: (parts: Part[], interrupted = false): TurnEvent => ({
    type: "assistant_message",
    message: { role: "assistant", parts },
    interrupted,
    usage,
  }),
  callStarted: (callId: string, name: string, server: string | null, tool: string | null, args: JsonValue, ui: string | null = null): TurnEvent => ({
    type: "tool_call_started",
    callId,
    name,
    server,
    tool,
    arguments: args,
    uiResourceUri: ui,
  }),
  approvalRequested: (callId: string, server: string, tool: string, args: JsonValue): TurnEvent => ({
    type: "approval_requested",
    callId,
    server,
    tool,
    arguments: args,
  }),
  approvalResolved: (callId: string, decision: "allow_once" | "allow_always" | "deny"): TurnEvent => ({
    type: "approval_resolved",
    callId,
    decision,
  }),
  running: (callId: string, allowedBy: AllowedBy = "once"): TurnEvent => ({ type: "tool_call_running", callId, allowedBy }),
  progress: (callId: string, progress: number, total: number | null, message: string | null = null): TurnEvent => ({
    type: "tool_call_progress",
    callId,
    progress,
    total,
    message,
  }),
  finished: (
    callId: string,
    status: "ok" | "error" | "failed" | "denied" | "cancelled",
    model: ModelFacing,
    view: JsonValue,
    durationMs: number,
    error: string | null = null,
  ): TurnEvent => ({ type: "tool_call_finished", callId, status, model, view, durationMs, error }),
  toolResults: (parts: Part[]): TurnEvent => ({ type: "tool_results", message: { role: "tool", parts } }),
  error: (message: string): TurnEvent => ({ type: "error", message }),
  done: (stopReason: "end_turn" | "step_limit" | "cancelled" | "error", text = ""): TurnEvent => ({
    type: "done",
    stopReason,
    text,
    usage,
  }),
};

export const textBlock = (text: string) => ({ type: "text", text });

export function chatEvents(conversationId: string, events: TurnEvent[]): ChatEvent[] {
  return events.map((event) => ({ conversationId, event }));
}

/** What porthole_agent::record::Recorder writes to the store for these events. */
export function record(events: TurnEvent[], opts: { id?: string; running?: boolean } = {}): StoredConversation {
  const conversationId = opts.id ?? "c1";
  const messages: StoredMessage[] = [];
  const toolCalls: ToolCallRecord[] = [];
  let streaming: StoredMessage | null = null;
  let assistant: StoredMessage | null = null;
  let text = "";
  let reasoning = "";
  const calls = new Map<string, ToolCallRecord>();
  const viewUris: Record<string, string> = {};
  let nextId = 1;
  const append = (role: StoredMessage["role"], parts: Part[], status: StoredMessage["status"]): StoredMessage => {
    const m: StoredMessage = { id: nextId++, conversationId, role, parts, status, error: null, createdAt: 0, updatedAt: 0 };
    messages.push(m);
    return m;
  };
  const partsOf = (m: AgentMessage) => structuredClone(m.parts);
  for (const e of events) {
    switch (e.type) {
      case "user_message":
        append("user", partsOf(e.message), "complete");
        break;
      case "step_started":
        streaming = assistant = append("assistant", [], "streaming");
        text = reasoning = "";
        break;
      case "text_delta":
      case "reasoning_delta":
        if (!streaming) break;
        if (e.type === "text_delta") text += e.text;
        else reasoning += e.text;
        streaming.parts = [
          ...(reasoning ? [{ type: "reasoning" as const, text: reasoning }] : []),
          ...(text ? [{ type: "text" as const, text }] : []),
        ];
        break;
      case "assistant_message": {
        const status = e.interrupted ? "interrupted" : "complete";
        if (streaming) {
          streaming.parts = partsOf(e.message);
          streaming.status = status;
          streaming = null;
        } else {
          assistant = append("assistant", partsOf(e.message), status);
        }
        break;
      }
      case "error":
        if (streaming) {
          streaming.parts = [];
          streaming.status = "failed";
          streaming.error = e.message;
          streaming = null;
        } else if (assistant) {
          if (assistant.status !== "complete") assistant.status = "interrupted";
          assistant.error = e.message;
        }
        break;
      case "tool_call_started": {
        if (!assistant) break;
        // The window opened its view: Rust keeps a row for it.
        if (e.uiResourceUri) viewUris[e.callId] = e.uiResourceUri;
        const r: ToolCallRecord = {
          id: nextId++,
          conversationId,
          messageId: assistant.id,
          callId: e.callId,
          server: e.server ?? "",
          tool: e.tool ?? e.name,
          arguments: e.arguments,
          status: "pending",
          modelFacing: null,
          viewFacing: null,
          error: null,
          durationMs: null,
          createdAt: 0,
          updatedAt: 0,
          finishedAt: null,
          allowedBy: null,
        };
        toolCalls.push(r);
        calls.set(e.callId, r);
        break;
      }
      case "tool_call_running": {
        const r = calls.get(e.callId);
        if (r) {
          r.status = "running";
          r.allowedBy = e.allowedBy;
        }
        break;
      }
      case "approval_resolved": {
        const r = calls.get(e.callId);
        if (r && e.decision === "deny") r.status = "denied";
        break;
      }
      case "tool_call_finished": {
        const r = calls.get(e.callId);
        if (!r) break;
        r.status = e.status;
        r.modelFacing = structuredClone(e.model);
        r.viewFacing = e.view === null ? null : structuredClone(e.view);
        r.error = e.error;
        r.durationMs = e.durationMs;
        r.finishedAt = 0;
        break;
      }
      case "tool_results":
        append("tool", partsOf(e.message), "complete");
        break;
    }
  }
  return {
    conversation: { id: conversationId, title: "Test", createdAt: 0, updatedAt: 0 },
    messages,
    toolCalls,
    running: opts.running ?? false,
    viewUris,
    earlier: false,
    scroll: null,
  };
}

/** The items as a reader sees them (no ids, nothing transient), for comparing live and loaded. */
export function shown(items: Item[]): unknown[] {
  return items.map((item) => {
    switch (item.kind) {
      case "user":
        return { kind: "user", text: item.text };
      case "assistant":
        return { kind: "assistant", text: item.text, reasoning: item.reasoning, status: item.status, error: item.error };
      case "tool-call":
        return {
          kind: "tool-call",
          callId: item.callId,
          name: item.name,
          label: item.tool ?? item.name,
          server: item.server,
          arguments: item.arguments,
          status: item.status,
          modelResult: item.modelResult,
          viewResult: item.viewResult,
          durationMs: item.durationMs,
          error: item.error,
        };
      case "error":
        return { kind: "error", text: item.text };
      case "notice":
        return { kind: "notice", text: item.text };
      case "waiting":
        return { kind: "waiting", servers: item.servers };
    }
  });
}
