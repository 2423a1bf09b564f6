import { describe, expect, it } from "vitest";
import type { TrafficEntry } from "./api";
import { answerTimes, appended, formatBytes, isNotification, KEPT, matches, NO_FILTER } from "./traffic";

const entry = (seq: number, over: Partial<TrafficEntry> = {}): TrafficEntry => ({
  seq,
  atMs: 0,
  direction: "out",
  kind: "request",
  method: "tools/call",
  id: String(seq),
  bytes: 10,
  durationMs: null,
  detail: null,
  kept: true,
  ...over,
});

describe("the traffic log in the window", () => {
  it("keeps the newest entries", () => {
    const many = Array.from({ length: KEPT }, (_, i) => entry(i + 1));
    const next = appended(many, [entry(KEPT + 1), entry(KEPT + 2)]);
    expect(next).toHaveLength(KEPT);
    expect(next[0].seq).toBe(3);
    expect(next.at(-1)?.seq).toBe(KEPT + 2);
  });

  it("filters by text, direction and kind", () => {
    const call = entry(1);
    const answer = entry(2, { direction: "in", kind: "response", id: "1" });
    const failed = entry(3, { direction: "in", kind: "error", method: "resources/read", detail: "no resource x" });
    expect(matches(call, { ...NO_FILTER, text: "TOOLS/" })).toBe(true);
    expect(matches(failed, { ...NO_FILTER, text: "no resource" })).toBe(true);
    expect(matches(call, { ...NO_FILTER, direction: "in" })).toBe(false);
    expect(matches(answer, { ...NO_FILTER, direction: "in", kind: "response" })).toBe(true);
    expect(matches(failed, { ...NO_FILTER, kind: "response" })).toBe(false);
  });

  it("takes a server's notifications, log messages from a level up", () => {
    const log = (level: string) => entry(1, { direction: "in", kind: "notification", method: "notifications/message", detail: level });
    const updated = entry(2, { direction: "in", kind: "notification", method: "notifications/resources/updated" });
    expect(isNotification(updated, "error")).toBe(true);
    expect(isNotification(log("warning"), "info")).toBe(true);
    expect(isNotification(log("info"), "warning")).toBe(false);
    expect(isNotification(entry(3), "debug")).toBe(false);
    expect(isNotification(entry(4, { kind: "notification", method: "notifications/initialized" }))).toBe(false);
  });

  it("writes sizes for people", () => {
    expect(formatBytes(812)).toBe("812 B");
    expect(formatBytes(4200)).toBe("4.1 KB");
    expect(formatBytes(3 * 1024 * 1024)).toBe("3.0 MB");
  });
});

describe("answerTimes", () => {
  it("times each request by the first answer with its id from the other side", () => {
    const times = answerTimes([
      { atMs: 10, direction: "from-view", method: "ui/initialize", message: { id: 1, method: "ui/initialize" } },
      { atMs: 12, direction: "to-view", message: { id: 1, result: {} } },
      { atMs: 20, direction: "from-view", method: "tools/call", message: { id: 2, method: "tools/call" } },
      // The host's own request with the same id is another conversation.
      { atMs: 21, direction: "to-view", method: "ui/resource-teardown", message: { id: 2, method: "ui/resource-teardown" } },
      { atMs: 26, direction: "from-view", message: { id: 2, result: {} } },
      { atMs: 95, direction: "to-view", message: { id: 2, error: { code: -32000 } } },
      { atMs: 99, direction: "from-view", method: "tools/call", message: { id: 3, method: "tools/call" } },
      { atMs: 100, direction: "to-view", method: "ui/notifications/tool-result", message: { method: "ui/notifications/tool-result" } },
    ]);
    expect([...times.entries()]).toEqual([
      [0, 2],
      [3, 5],
      [2, 75],
    ]);
    expect(times.has(6), "still waiting").toBe(false);
  });
});
