import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/svelte";
import type { AgentDraft, AgentEntry } from "../../lib/api";

const state = vi.hoisted(() => ({ stored: [] as AgentEntry[] }));
const calls = vi.hoisted(() => ({
  agentSettings: vi.fn(async () => state.stored),
  saveAgent: vi.fn(async (original: string | null, draft: AgentDraft) => {
    if (!draft.url.startsWith("https://")) throw { code: "invalid", message: `url: "${draft.url}" is not an http:// or https:// URL` };
    const entry: AgentEntry = {
      name: draft.name,
      url: draft.url,
      headerNames: draft.headers.map((h) => h.split(":")[0]),
      file: "/profile/config.json",
      editable: true,
    };
    state.stored = [...state.stored.filter((a) => a.name !== original), entry];
    return state.stored;
  }),
  removeAgent: vi.fn(async (name: string) => {
    state.stored = state.stored.filter((a) => a.name !== name);
    return state.stored;
  }),
}));

vi.mock("../../lib/api", async (original) => ({
  ...(await original<typeof import("../../lib/api")>()),
  api: calls,
}));

import AgentSettings from "./AgentSettings.svelte";

afterEach(cleanup);
beforeEach(() => {
  state.stored = [{ name: "shared", url: "https://team.example/agent", headerNames: [], file: "/etc/porthole/team.json", editable: false }];
});

describe("AgentSettings", () => {
  it("adds an agent (a refusal says why and keeps the form), edits it keeping stored headers by name, and removes it", async () => {
    const onChanged = vi.fn();
    const view = render(AgentSettings, { onChanged });
    await waitFor(() => expect(view.getAllByTestId("agent-entry")).toHaveLength(1));
    // An agent of another file is listed, not changed.
    expect(view.getByTestId("agent-entry").textContent).toContain("set in another config file");
    expect(view.queryByTestId("agent-edit")).toBeNull();

    await fireEvent.click(view.getByTestId("agent-add"));
    await fireEvent.input(view.getByTestId("agent-form-name"), { target: { value: "helper" } });
    await fireEvent.input(view.getByTestId("agent-form-url"), { target: { value: "ftp://nope" } });
    await fireEvent.input(view.getByTestId("agent-form-headers"), { target: { value: "Authorization: Bearer ${env:TOKEN}\n\n" } });
    await fireEvent.submit(view.getByTestId("agent-form"));
    expect((await view.findByTestId("agent-form-error")).textContent).toContain("is not an http:// or https:// URL");
    expect(onChanged).not.toHaveBeenCalled();

    await fireEvent.input(view.getByTestId("agent-form-url"), { target: { value: "https://agents.example/helper" } });
    await fireEvent.submit(view.getByTestId("agent-form"));
    await waitFor(() => expect(view.getAllByTestId("agent-entry")).toHaveLength(2));
    expect(calls.saveAgent).toHaveBeenLastCalledWith(null, {
      name: "helper",
      url: "https://agents.example/helper",
      headers: ["Authorization: Bearer ${env:TOKEN}"],
    });
    expect(onChanged).toHaveBeenCalledOnce();
    expect(view.queryByTestId("agent-form")).toBeNull();

    // Editing shows the header by name only; saving it so keeps the stored value.
    await fireEvent.click(view.getByTestId("agent-edit"));
    expect((view.getByTestId("agent-form-headers") as HTMLTextAreaElement).value).toBe("Authorization");
    await fireEvent.submit(view.getByTestId("agent-form"));
    await waitFor(() => expect(calls.saveAgent).toHaveBeenLastCalledWith("helper", { name: "helper", url: "https://agents.example/helper", headers: ["Authorization"] }));

    await fireEvent.click(view.getByTestId("agent-remove"));
    expect(calls.removeAgent).toHaveBeenCalledWith("helper");
    await waitFor(() => expect(view.getAllByTestId("agent-entry")).toHaveLength(1));
    expect(onChanged).toHaveBeenCalledTimes(3);
  });
});
