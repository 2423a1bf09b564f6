import { describe, expect, it, vi } from "vitest";
import { afterQueuedTasks, errorMessage, isAppError } from "./api";

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
