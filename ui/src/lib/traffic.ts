// The workbench's traffic log as the window keeps it: a server's JSON-RPC messages, fetched a
// page at a time (lib/api `serverTraffic`), filtered, and shown with their sizes and times.
import type { TrafficEntry } from "./api";

/** The most entries the window keeps per server (as many as Porthole's log does). */
export const KEPT = 5000;

/** `entries` followed by `more`, the oldest dropped past [`KEPT`]. */
export function appended(entries: readonly TrafficEntry[], more: readonly TrafficEntry[]): TrafficEntry[] {
  const all = more.length === 0 ? [...entries] : [...entries, ...more];
  return all.length > KEPT ? all.slice(all.length - KEPT) : all;
}

export interface TrafficFilter {
  /** Matched against the method, the id and the detail, ignoring case. */
  text: string;
  direction: "all" | "in" | "out";
  kind: "all" | TrafficEntry["kind"];
}

export const NO_FILTER: TrafficFilter = { text: "", direction: "all", kind: "all" };

export function matches(entry: TrafficEntry, filter: TrafficFilter): boolean {
  if (filter.direction !== "all" && entry.direction !== filter.direction) return false;
  if (filter.kind !== "all" && entry.kind !== filter.kind) return false;
  const needle = filter.text.trim().toLowerCase();
  if (!needle) return true;
  return [entry.method, entry.id, entry.detail].some((field) => field?.toLowerCase().includes(needle));
}

/** MCP log levels (`notifications/message`), least severe first. */
export const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const;
export type Level = (typeof LEVELS)[number];

/** A server's notifications (what it sent on its own), at `min` or above for log messages. */
export function isNotification(entry: TrafficEntry, min: Level = "debug"): boolean {
  if (entry.direction !== "in" || entry.kind !== "notification") return false;
  if (entry.method !== "notifications/message") return true;
  const level = LEVELS.indexOf((entry.detail ?? "info") as Level);
  return level < 0 || level >= LEVELS.indexOf(min);
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** `HH:MM:SS.mmm`, local time. */
export function formatTime(atMs: number): string {
  const d = new Date(atMs);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return "";
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** How the entry ended, for its row: "error" for an error answer, else its kind. */
export function label(entry: TrafficEntry): string {
  return entry.kind === "error" ? `error: ${entry.detail ?? ""}`.trim() : entry.kind;
}

/** One message between a view and Porthole, as the view inspector lists them. */
export interface ViewMessage {
  atMs: number;
  direction: "to-view" | "from-view";
  method?: string;
  message: { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
}

/** How long each request of a view's conversation waited for its answer (ms), by the
 * request's index: a request one side sent, answered by the first message after it from the
 * other side with the same id. Requests still unanswered have none. */
export function answerTimes(messages: readonly ViewMessage[]): Map<number, number> {
  const times = new Map<number, number>();
  const open = new Map<string, number>();
  messages.forEach((m, i) => {
    const id = m.message?.id;
    if (id === undefined || id === null) return;
    const key = `${m.direction}:${JSON.stringify(id)}`;
    if (typeof m.message.method === "string") {
      open.set(key, i);
      return;
    }
    const asked = `${m.direction === "to-view" ? "from-view" : "to-view"}:${JSON.stringify(id)}`;
    const at = open.get(asked);
    if (at === undefined) return;
    open.delete(asked);
    times.set(at, Math.max(0, m.atMs - messages[at].atMs));
  });
  return times;
}
