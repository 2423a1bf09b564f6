import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render } from "@testing-library/svelte";
import ToolCallCard from "./ToolCallCard.svelte";
import type { ToolCallItem } from "../lib/transcript.svelte";

afterEach(cleanup);

const call = (status: ToolCallItem["status"]): ToolCallItem => ({
  kind: "tool-call",
  id: 1,
  callId: "c1",
  name: "bake",
  server: "pizzaz",
  tool: "bake",
  arguments: {},
  argumentsText: "{}",
  uiResourceUri: null,
  status,
  decision: null,
  progress: null,
  durationMs: null,
  modelResult: null,
  viewResult: null,
  error: null,
});

describe("ToolCallCard", () => {
  it("shows the tool's own words while it runs and once it is done (Apps SDK status lines)", () => {
    const widget = { kind: "openai" as const, invoking: "Baking a pizza", invoked: "Served a pizza" };
    const running = render(ToolCallCard, { call: call("running"), widget });
    expect(running.getByTestId("tool-invocation").textContent).toBe("Baking a pizza");
    cleanup();
    const done = render(ToolCallCard, { call: call("ok"), widget });
    expect(done.getByTestId("tool-invocation").textContent).toBe("Served a pizza");
    cleanup();
    const failed = render(ToolCallCard, { call: call("error"), widget });
    expect(failed.queryByTestId("tool-invocation")).toBeNull();
    cleanup();
    const plain = render(ToolCallCard, { call: call("running") });
    expect(plain.queryByTestId("tool-invocation")).toBeNull();
  });
});
