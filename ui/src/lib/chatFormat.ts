// How the chat says things: tool-call statuses, durations, JSON, retry notices, the model line.
import type { AllowedBy, ModelInfo, RetryKind } from "./api";
import type { Retry, ToolCallItem, ToolCallStatus } from "./transcript.svelte";

const STATUS_LABELS: Record<ToolCallStatus, string> = {
  streaming: "Preparing…",
  pending: "Waiting",
  "awaiting-approval": "Needs your approval",
  running: "Running…",
  ok: "Done",
  error: "Tool reported an error",
  failed: "Failed",
  denied: "Denied",
  cancelled: "Cancelled",
  interrupted: "Interrupted",
};

export function callStatusLabel(status: ToolCallStatus): string {
  return STATUS_LABELS[status];
}

/** The mark a call allowed without being asked (or allowed for good) bears on its card; null
 * for a call the person allowed once, started themselves, or one that only reads. */
export function standingApprovalLabel(allowedBy: AllowedBy | null): string | null {
  switch (allowedBy) {
    case "always":
      return "Always allowed from now on";
    case "remembered":
      return "Allowed: you chose “Always allow”";
    case "config":
      return "Allowed by the server's alwaysAllow";
    case "agent":
      return "Run by the remote agent";
    default:
      return null;
  }
}

/** "850 ms", "1.2 s", "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
}

/** JSON with two-space indents; a string that is not JSON stays as it is. */
export function prettyJson(value: unknown): string {
  if (value === undefined) return "";
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** A tool call's arguments for its card: the parsed arguments, or while the model is still
 * writing them, the JSON so far (pretty once it parses). */
export function callArguments(call: Pick<ToolCallItem, "status" | "arguments" | "argumentsText">): string {
  if (call.status === "streaming" && call.argumentsText) {
    try {
      return prettyJson(JSON.parse(call.argumentsText));
    } catch {
      return call.argumentsText;
    }
  }
  // The model's invalid JSON is kept as the raw string: show it as written.
  if (typeof call.arguments === "string") return call.arguments;
  return prettyJson(call.arguments ?? {});
}

const RETRY_WORDS: Record<RetryKind, string> = {
  rate_limited: "Rate limited",
  server_error: "The model's server had an error",
  unreachable: "Could not reach the model",
};

/** "Rate limited; retrying in 3 s (attempt 2)": the words follow the retry's kind. */
export function retryText(retry: Retry): string {
  const seconds = Math.max(1, Math.ceil(retry.waitMs / 1000));
  const what = RETRY_WORDS[retry.kind] ?? "The model request failed";
  return `${what}; retrying in ${seconds} s (attempt ${retry.attempt})`;
}

/** The sidebar's model line: "provider · model", or why there is no model. */
export function modelLine(info: ModelInfo): { text: string; problem: boolean } {
  if (info.error || !info.provider) return { text: info.error ?? "No model is configured.", problem: true };
  return { text: `${info.provider} · ${info.model ?? "default model"}`, problem: false };
}
