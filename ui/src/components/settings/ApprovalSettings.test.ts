import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/svelte";

const state = vi.hoisted(() => ({ stored: null as unknown as import("../../lib/api").Approvals }));
const calls = vi.hoisted(() => ({
  approvals: vi.fn(async () => state.stored),
  revokeToolApproval: vi.fn(async (server: string, tool: string) => {
    state.stored = { ...state.stored, tools: state.stored.tools.filter((t) => !(t.server === server && t.tool === tool && t.source === "remembered")) };
    return state.stored;
  }),
  revokeSampling: vi.fn(async (name: string) => {
    state.stored = { ...state.stored, sampling: state.stored.sampling.filter((s) => s !== name) };
    return state.stored;
  }),
}));

vi.mock("../../lib/api", async (original) => ({
  ...(await original<typeof import("../../lib/api")>()),
  api: calls,
}));

import ApprovalSettings from "./ApprovalSettings.svelte";

afterEach(cleanup);
beforeEach(() => {
  state.stored = {
    tools: [
      { server: "demo", tool: "sha256", source: "remembered", since: 1_700_000_000_000 },
      { server: "demo", tool: "sample_cpu", source: "config", since: null },
    ],
    sampling: ["everything"],
  };
});

describe("ApprovalSettings", () => {
  it("lists what runs without asking and undoes what the window remembered", async () => {
    const view = render(ApprovalSettings);
    await waitFor(() => expect(view.getAllByTestId("approval")).toHaveLength(2));
    const [remembered, config] = view.getAllByTestId("approval");
    expect(remembered.textContent).toContain("sha256");
    expect(config.textContent).toContain("alwaysAllow in the server's config file");
    expect(config.querySelector("[data-testid=approval-revoke]")).toBeNull();
    await fireEvent.click(remembered.querySelector("[data-testid=approval-revoke]")!);
    expect(calls.revokeToolApproval).toHaveBeenCalledWith("demo", "sha256");
    await waitFor(() => expect(view.getAllByTestId("approval")).toHaveLength(1));

    expect(view.getByTestId("sampling-approval").textContent).toContain("everything");
    await fireEvent.click(view.getByTestId("sampling-revoke"));
    expect(calls.revokeSampling).toHaveBeenCalledWith("everything");
    await view.findByTestId("sampling-approvals-none");
  });
});
