import { afterEach, describe, expect, it, vi, beforeEach } from "vitest";
import { cleanup, render, fireEvent, waitFor } from "@testing-library/svelte";
import type { ViewEvent } from "../lib/api";

let handler: ((event: ViewEvent) => void) | null = null;
const answerSampling = vi.fn(async (_id: number, _approve: boolean) => {});

vi.mock("../lib/api", async (original) => ({
  ...(await original<typeof import("../lib/api")>()),
  api: {
    onViewEvent: async (h: (event: ViewEvent) => void) => {
      handler = h;
      return () => {};
    },
    answerSampling: (id: number, approve: boolean) => answerSampling(id, approve),
  },
}));

import SamplingDialog from "./SamplingDialog.svelte";
import { refused } from "../lib/testing/errors";

const request = (requestId: number, text: string): ViewEvent => ({
  type: "sampling_request",
  viewId: "v1",
  requestId,
  server: "demo",
  tool: "system_monitor",
  systemPrompt: "Answer in one line.",
  messages: [
    { role: "user", text },
    { role: "assistant", text: "Earlier answer." },
  ],
  maxTokens: 100,
});

afterEach(cleanup);

beforeEach(() => {
  handler = null;
  answerSampling.mockReset().mockImplementation(async () => {});
});

describe("SamplingDialog", () => {
  it("shows the whole prompt and sends it only when the person approves, one request at a time", async () => {
    const view = render(SamplingDialog);
    await waitFor(() => expect(handler).not.toBeNull());
    expect(view.queryByTestId("sampling-dialog")).toBeNull();
    handler!(request(1, "Is the CPU busy?"));
    handler!(request(2, "And the memory?"));
    const dialog = await view.findByTestId("sampling-dialog");
    expect(dialog.textContent).toContain("The system_monitor view of demo asks the model");
    expect(view.getByTestId("sampling-system").textContent).toBe("Answer in one line.");
    const messages = view.getByTestId("sampling-messages").textContent ?? "";
    expect(messages).toContain("User:");
    expect(messages).toContain("Is the CPU busy?");
    expect(messages).toContain("Assistant:");
    expect(view.getByTestId("sampling-summary").textContent?.replace(/\s+/g, " ")).toContain("at most 100 tokens");
    await fireEvent.click(view.getByTestId("sampling-decline"));
    expect(answerSampling).toHaveBeenCalledWith(1, false);
    await waitFor(() => expect(view.getByTestId("sampling-messages").textContent).toContain("And the memory?"));
    await fireEvent.click(view.getByTestId("sampling-approve"));
    expect(answerSampling).toHaveBeenLastCalledWith(2, true);
    await waitFor(() => expect(view.queryByTestId("sampling-dialog")).toBeNull());
  });

  it("stops asking once the request is settled elsewhere, and says when an answer did not arrive", async () => {
    const view = render(SamplingDialog);
    await waitFor(() => expect(handler).not.toBeNull());
    handler!(request(7, "Hello?"));
    await view.findByTestId("sampling-dialog");
    handler!({ type: "sampling_settled", viewId: "v1", requestId: 7 });
    await waitFor(() => expect(view.queryByTestId("sampling-dialog")).toBeNull());

    handler!(request(8, "Again?"));
    answerSampling.mockRejectedValueOnce(refused("not_found", "that sampling request is no longer waiting"));
    await fireEvent.click(await view.findByTestId("sampling-approve"));
    expect((await view.findByTestId("sampling-note")).textContent).toContain("no longer waiting");
  });
});
