import { describe, expect, it, vi } from "vitest";
import { afterQueuedTasks, errorMessage, isAppError, windowEvents, type EventSource } from "./api";
import type { Outbound } from "./generated/Outbound";

describe("errorMessage", () => {
  it("shows a command's AppError by its message, not its code", () => {
    expect(errorMessage({ code: "busy", message: "a reply is still being written" })).toBe("a reply is still being written");
  });

  it("shows Tauri's own plain-string refusals and thrown Errors as they are", () => {
    expect(errorMessage("command not_a_command not found")).toBe("command not_a_command not found");
    expect(errorMessage(new Error("the page went away"))).toBe("the page went away");
  });

  it("still says something about anything else", () => {
    expect(errorMessage({ reason: 7 })).toBe('{"reason":7}');
    expect(errorMessage(undefined)).toBe("undefined");
  });
});

describe("isAppError", () => {
  it("knows the {code, message} shape", () => {
    expect(isAppError({ code: "not_found", message: "no conversation c1" })).toBe(true);
    expect(isAppError({ message: "no code" })).toBe(false);
    expect(isAppError("not_found")).toBe(false);
    expect(isAppError(null)).toBe(false);
  });
});

describe("afterQueuedTasks", () => {
  it("hands over each event in order, in a later task, never in the caller's", async () => {
    const seen: number[] = [];
    const deliver = afterQueuedTasks((n: number) => seen.push(n));
    deliver(1);
    deliver(2);
    // Not in the caller's task: what the page already queued (a view's message) goes first.
    expect(seen).toEqual([]);
    await vi.waitFor(() => expect(seen).toEqual([1, 2]));
    deliver(3);
    expect(seen).toEqual([1, 2]);
    await vi.waitFor(() => expect(seen).toEqual([1, 2, 3]));
  });
});

/** A stand-in for Rust's `window_events`: batches handed to the page's open request. */
function scriptedSource() {
  const requests: Array<{ generation: number; answer: (batch: Outbound[] | null) => void; fail: (e: unknown) => void }> = [];
  let opens = 0;
  const source: EventSource = {
    open: async () => ++opens,
    next: (generation) => new Promise((answer, fail) => requests.push({ generation, answer, fail })),
  };
  const settled = () => new Promise((resolve) => setTimeout(resolve, 0));
  return { source, requests, opens: () => opens, settled };
}

const settledEvent = (id: number): Outbound => ({ event: "sampling-settled", payload: { id } });

describe("windowEvents", () => {
  it("hands each batch's events, in order, to the handlers of their names, asking for the next batch first", async () => {
    const { source, requests, opens, settled } = scriptedSource();
    const events = windowEvents(source);
    const seen: string[] = [];
    await events.listen("sampling-settled", (s) => seen.push(`settled ${s.id}`));
    await events.listen("servers-changed", (servers) => seen.push(`servers ${servers.length}`));
    expect(opens()).toBe(1);
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    expect(requests[0].generation).toBe(1);
    requests[0].answer([settledEvent(1), { event: "servers-changed", payload: [] }, settledEvent(2)]);
    await settled();
    expect(seen).toEqual(["settled 1", "servers 0", "settled 2"]);
    // One request open at a time, sent again as soon as the batch came.
    expect(requests).toHaveLength(2);
  });

  it("goes on past a handler that throws, and stops handing events to one that unlistened", async () => {
    const { source, requests, settled } = scriptedSource();
    const events = windowEvents(source);
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const seen: number[] = [];
    await events.listen("sampling-settled", () => {
      throw new Error("broken handler");
    });
    const unlisten = await events.listen("sampling-settled", (s) => seen.push(s.id));
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    requests[0].answer([settledEvent(1), settledEvent(2)]);
    await settled();
    expect(seen).toEqual([1, 2]);
    expect(error).toHaveBeenCalledTimes(2);
    unlisten();
    requests[1].answer([settledEvent(3)]);
    await settled();
    expect(seen).toEqual([1, 2]);
    error.mockRestore();
  });

  it("asks again after a failed request, and stops once Rust says another page listens", async () => {
    vi.useFakeTimers();
    try {
      const { source, requests } = scriptedSource();
      const events = windowEvents(source);
      const error = vi.spyOn(console, "error").mockImplementation(() => {});
      const seen: number[] = [];
      await events.listen("sampling-settled", (s) => seen.push(s.id));
      await vi.waitFor(() => expect(requests).toHaveLength(1));
      requests[0].fail("the IPC broke");
      await vi.advanceTimersByTimeAsync(1000);
      expect(requests).toHaveLength(2);
      requests[1].answer([settledEvent(5)]);
      await vi.advanceTimersByTimeAsync(0);
      expect(seen).toEqual([5]);
      expect(requests).toHaveLength(3);
      requests[2].answer(null);
      await vi.advanceTimersByTimeAsync(1000);
      expect(requests).toHaveLength(3);
      error.mockRestore();
    } finally {
      vi.useRealTimers();
    }
  });
});
