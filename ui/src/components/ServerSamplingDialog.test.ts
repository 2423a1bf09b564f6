import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/svelte";
import type { SamplingDecision, ServerSampling } from "../lib/api";

let shown: ((request: ServerSampling) => void) | null = null;
let settled: ((s: { id: number }) => void) | null = null;
const answerServerSampling = vi.fn(async (_id: number, _decision: SamplingDecision) => {});

vi.mock("../lib/api", async (original) => ({
  ...(await original<typeof import("../lib/api")>()),
  api: {
    onServerSampling: async (h: (request: ServerSampling) => void) => {
      shown = h;
      return () => {};
    },
    onServerSamplingSettled: async (h: (s: { id: number }) => void) => {
      settled = h;
      return () => {};
    },
    answerServerSampling: (id: number, decision: SamplingDecision) => answerServerSampling(id, decision),
  },
}));

import ServerSamplingDialog from "./ServerSamplingDialog.svelte";

const request = (id: number, answer: ServerSampling["answer"] = null): ServerSampling => ({
  id,
  server: "everything",
  systemPrompt: "You are a helpful test server.",
  messages: [{ role: "user", text: "Resource context: hello" }],
  maxTokens: 50,
  modelHints: ["claude-3-sonnet"],
  answer,
});

afterEach(cleanup);
beforeEach(() => {
  shown = null;
  settled = null;
  answerServerSampling.mockReset().mockImplementation(async () => {});
});

describe("ServerSamplingDialog", () => {
  it("asks first, waits for the model, then shows the answer to send or refuse", async () => {
    const view = render(ServerSamplingDialog);
    await waitFor(() => expect(shown).not.toBeNull());
    shown!(request(4));
    const dialog = await view.findByTestId("server-sampling");
    expect(dialog.dataset.stage).toBe("request");
    expect(dialog.textContent).toContain("everything asks the model");
    expect(view.getByTestId("server-sampling-system").textContent).toBe("You are a helpful test server.");
    expect(view.getByTestId("server-sampling-messages").textContent).toContain("Resource context: hello");
    const summary = view.getByTestId("server-sampling-summary").textContent?.replace(/\s+/g, " ");
    expect(summary).toContain("at most 50 tokens");
    expect(summary).toContain("prefers claude-3-sonnet");

    await fireEvent.click(view.getByTestId("server-sampling-allow"));
    expect(answerServerSampling).toHaveBeenCalledWith(4, "allow_once");
    await view.findByTestId("server-sampling-waiting");

    shown!(request(4, { text: "Hello back", model: "gpt-e2e" }));
    await waitFor(() => expect(view.getByTestId("server-sampling").dataset.stage).toBe("answer"));
    expect(view.getByTestId("server-sampling-answer").textContent).toBe("Hello back");
    await fireEvent.click(view.getByTestId("server-sampling-send"));
    expect(answerServerSampling).toHaveBeenLastCalledWith(4, "send");
    await waitFor(() => expect(view.queryByTestId("server-sampling")).toBeNull());
  });

  it("stops asking once the request is settled elsewhere (given up, or declined)", async () => {
    const view = render(ServerSamplingDialog);
    await waitFor(() => expect(settled).not.toBeNull());
    shown!(request(7));
    await view.findByTestId("server-sampling");
    settled!({ id: 7 });
    await waitFor(() => expect(view.queryByTestId("server-sampling")).toBeNull());
  });
});
