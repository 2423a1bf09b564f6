import { describe, expect, it } from "vitest";
import { callArguments, callStatusLabel, formatDuration, modelLine, prettyJson, retryText } from "./chatFormat";

describe("chat formatting", () => {
  it("formats durations", () => {
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(1250)).toBe("1.3 s");
    expect(formatDuration(125_000)).toBe("2 min 5 s");
    expect(formatDuration(120_000)).toBe("2 min");
  });

  it("shows arguments as pretty JSON, partial JSON as written, and invalid JSON raw", () => {
    expect(callArguments({ status: "pending", arguments: { a: 1 }, argumentsText: "" })).toBe('{\n  "a": 1\n}');
    expect(callArguments({ status: "streaming", arguments: null, argumentsText: '{"a":' })).toBe('{"a":');
    expect(callArguments({ status: "streaming", arguments: null, argumentsText: '{"a":1}' })).toBe('{\n  "a": 1\n}');
    expect(callArguments({ status: "failed", arguments: "{oops", argumentsText: "" })).toBe("{oops");
    expect(prettyJson(null)).toBe("null");
  });

  it("says why a request is retried", () => {
    expect(retryText({ attempt: 2, waitMs: 400, kind: "rate_limited", reason: "HTTP 429: x" })).toBe("Rate limited; retrying in 1 s (attempt 2)");
    expect(retryText({ attempt: 3, waitMs: 4000, kind: "server_error", reason: "HTTP 529: overloaded" })).toBe(
      "The model's server had an error; retrying in 4 s (attempt 3)",
    );
    expect(retryText({ attempt: 2, waitMs: 1000, kind: "unreachable", reason: "connection refused" })).toBe("Could not reach the model; retrying in 1 s (attempt 2)");
  });

  it("chooses a retry's words by its kind, not by its reason's text", () => {
    expect(retryText({ attempt: 1, waitMs: 2000, kind: "unreachable", reason: "rate limited (HTTP 429)" })).toBe(
      "Could not reach the model; retrying in 2 s (attempt 1)",
    );
  });

  it("writes the model line", () => {
    const base = { baseUrl: null, keySource: null };
    expect(modelLine({ ...base, provider: "openai", model: "gpt-test", error: null })).toEqual({ text: "openai · gpt-test", problem: false });
    expect(modelLine({ ...base, provider: "anthropic", model: null, error: null }).text).toBe("anthropic · default model");
    expect(modelLine({ ...base, provider: null, model: null, error: "no API key" })).toEqual({ text: "no API key", problem: true });
  });

  it("labels every call status", () => {
    expect(callStatusLabel("awaiting-approval")).toBe("Needs your approval");
    expect(callStatusLabel("interrupted")).toBe("Interrupted");
  });
});
