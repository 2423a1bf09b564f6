import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/svelte";
import type { ModelSettings as Settings, ModelTest, ProviderKind } from "../../lib/api";

const calls = vi.hoisted(() => ({
  modelSettings: vi.fn<() => Promise<Settings>>(),
  saveModelSettings: vi.fn(async (_p: ProviderKind, _u: string, _m: string | null) => {}),
  listProviderModels: vi.fn(async (_p: ProviderKind, _u: string, _k: string | null): Promise<string[]> => []),
  testModel: vi.fn(async (_p: ProviderKind, _u: string, _m: string | null, _k: string | null): Promise<ModelTest> => ({
    ok: true,
    model: "",
    reply: "",
    error: null,
    ms: 0,
  })),
  saveApiKey: vi.fn(async (_p: ProviderKind, _k: string) => {}),
  deleteApiKey: vi.fn(async (_p: ProviderKind) => {}),
}));

vi.mock("../../lib/api", async (original) => ({ ...(await original<typeof import("../../lib/api")>()), api: calls }));

import ModelSettings from "./ModelSettings.svelte";
import { refused } from "../../lib/testing/errors";

function settings(over: Partial<Settings> = {}): Settings {
  return {
    provider: "openai",
    baseUrl: "http://localhost:11434/v1",
    model: "llama3",
    flagsOverride: { provider: null, baseUrl: null, model: null },
    providers: [
      { provider: "openai", defaultBaseUrl: "https://api.openai.com/v1", keyEnvVar: "OPENAI_API_KEY", keyFromEnv: false, keyStored: false },
      { provider: "anthropic", defaultBaseUrl: "https://api.anthropic.com/v1", keyEnvVar: "ANTHROPIC_API_KEY", keyFromEnv: false, keyStored: false },
    ],
    keyringProblem: null,
    ...over,
  };
}

async function setup(loaded: Settings = settings()) {
  calls.modelSettings.mockResolvedValue(loaded);
  const onModelChanged = vi.fn();
  const view = render(ModelSettings, { onModelChanged });
  const baseUrl = (await view.findByTestId("model-base-url")) as HTMLInputElement;
  await waitFor(() => expect(baseUrl.value).toBe(loaded.baseUrl));
  return { ...view, baseUrl, onModelChanged };
}

beforeEach(() => Object.values(calls).forEach((f) => f.mockReset()));
afterEach(cleanup);

describe("ModelSettings", () => {
  it("shows what the run uses, and a new provider brings its default base URL", async () => {
    const loaded = settings({ baseUrl: "https://api.openai.com/v1", model: null });
    const { getByTestId, baseUrl } = await setup(loaded);
    const select = getByTestId("model-provider") as HTMLSelectElement;
    expect(select.value).toBe("openai");
    expect((getByTestId("model-name") as HTMLInputElement).value).toBe("");
    await fireEvent.change(select, { target: { value: "anthropic" } });
    expect(baseUrl.value).toBe("https://api.anthropic.com/v1");
    expect(getByTestId("model-api-key").closest(".field")?.textContent).toContain("API key for Anthropic");

    // A URL of the person's own is not replaced.
    await fireEvent.input(baseUrl, { target: { value: "http://gpu-box:8000/v1" } });
    await fireEvent.change(select, { target: { value: "openai" } });
    expect(baseUrl.value).toBe("http://gpu-box:8000/v1");
  });

  it("refuses an invalid base URL in the form, with the reason, and stores nothing", async () => {
    const { getByTestId, findByTestId, baseUrl } = await setup();
    await fireEvent.input(baseUrl, { target: { value: "localhost:11434" } });
    await fireEvent.click(getByTestId("model-save"));
    const error = await findByTestId("model-error");
    expect(error.getAttribute("role")).toBe("alert");
    expect(error.textContent).toMatch(/http:\/\/ or https:\/\//);
    expect(baseUrl.getAttribute("aria-invalid")).toBe("true");
    expect(calls.saveModelSettings).not.toHaveBeenCalled();
    await fireEvent.click(getByTestId("model-load-models"));
    await fireEvent.click(getByTestId("model-test"));
    expect(calls.listProviderModels).not.toHaveBeenCalled();
    expect(calls.testModel).not.toHaveBeenCalled();
  });

  it("picks the model from the provider's list, saves, and has the model line reloaded", async () => {
    calls.listProviderModels.mockResolvedValue(["llama3", "qwen2.5"]);
    const { getByTestId, findByTestId, queryByTestId, onModelChanged } = await setup();
    await fireEvent.input(getByTestId("model-api-key"), { target: { value: " sk-typed " } });
    await fireEvent.click(getByTestId("model-load-models"));
    expect(calls.listProviderModels).toHaveBeenCalledWith("openai", "http://localhost:11434/v1", "sk-typed");
    const select = (await findByTestId("model-select")) as HTMLSelectElement;
    expect([...select.options].map((o) => o.value)).toEqual(["llama3", "qwen2.5"]);
    expect(select.value).toBe("llama3");
    expect(queryByTestId("model-name")).toBeNull();
    await fireEvent.change(select, { target: { value: "qwen2.5" } });
    await fireEvent.click(getByTestId("model-save"));
    expect(calls.saveModelSettings).toHaveBeenCalledWith("openai", "http://localhost:11434/v1", "qwen2.5");
    await waitFor(() => expect(onModelChanged).toHaveBeenCalled());
    expect((await findByTestId("model-saved")).textContent).toBe("Saved.");
  });

  it("falls back to typing the name when listing fails, and says why", async () => {
    calls.listProviderModels.mockRejectedValue(refused("provider", "cannot list the models at http://localhost:11434/v1: connection refused"));
    const { getByTestId, findByTestId, queryByTestId } = await setup();
    await fireEvent.click(getByTestId("model-load-models"));
    expect((await findByTestId("model-error")).textContent).toMatch(/connection refused/);
    expect(queryByTestId("model-select")).toBeNull();
    const name = getByTestId("model-name") as HTMLInputElement;
    await fireEvent.input(name, { target: { value: "mistral" } });
    await fireEvent.click(getByTestId("model-save"));
    expect(calls.saveModelSettings).toHaveBeenCalledWith("openai", "http://localhost:11434/v1", "mistral");
  });

  it("an empty model name means the provider's only model", async () => {
    const { getByTestId } = await setup();
    await fireEvent.input(getByTestId("model-name"), { target: { value: "" } });
    await fireEvent.click(getByTestId("model-save"));
    expect(calls.saveModelSettings).toHaveBeenCalledWith("openai", "http://localhost:11434/v1", null);
  });

  it("tests the model and shows the reply or the error", async () => {
    calls.testModel.mockResolvedValueOnce({ ok: true, model: "llama3", reply: "OK", error: null, ms: 420 });
    const { getByTestId, findByTestId } = await setup();
    await fireEvent.click(getByTestId("model-test"));
    expect(calls.testModel).toHaveBeenCalledWith("openai", "http://localhost:11434/v1", "llama3", null);
    const result = await findByTestId("model-test-result");
    expect(result.textContent).toMatch(/llama3 answered in 420 ms: “OK”/);

    calls.testModel.mockResolvedValueOnce({
      ok: false,
      model: "llama3",
      reply: null,
      error: "the provider does not know the model \"llama3\"",
      ms: 12,
    });
    await fireEvent.click(getByTestId("model-test"));
    await waitFor(() => expect(getByTestId("model-test-result").textContent).toMatch(/failed after 12 ms: the provider does not know/));

    // Saving what just failed its test is allowed, and says so.
    await fireEvent.click(getByTestId("model-save"));
    expect((await findByTestId("model-saved")).textContent).toBe(
      "Saved, although the test of these settings failed: the provider does not know the model \"llama3\".",
    );

    // Without a model, the provider's only one is tested (Rust finds it), as a turn would use it.
    calls.testModel.mockResolvedValueOnce({ ok: true, model: "solo", reply: "OK", error: null, ms: 30 });
    await fireEvent.input(getByTestId("model-name"), { target: { value: "" } });
    await fireEvent.click(getByTestId("model-test"));
    expect(calls.testModel).toHaveBeenLastCalledWith("openai", "http://localhost:11434/v1", null, null);
    await waitFor(() => expect(getByTestId("model-test-result").textContent).toMatch(/solo answered in 30 ms/));
    await fireEvent.click(getByTestId("model-save"));
    await waitFor(() => expect(getByTestId("model-saved").textContent).toBe("Saved."));
  });

  it("saves the key in the OS keyring and removes it, saying where it is", async () => {
    const { getByTestId, onModelChanged } = await setup();
    const status = getByTestId("model-key-status");
    expect(status.textContent).toMatch(/No key saved/);
    expect((getByTestId("model-remove-key") as HTMLButtonElement).disabled).toBe(true);
    const stored = settings();
    stored.providers[0].keyStored = true;
    calls.modelSettings.mockResolvedValue(stored);
    const key = getByTestId("model-api-key") as HTMLInputElement;
    expect(key.type).toBe("password");
    await fireEvent.input(key, { target: { value: "sk-new" } });
    await fireEvent.click(getByTestId("model-save-key"));
    expect(calls.saveApiKey).toHaveBeenCalledWith("openai", "sk-new");
    await waitFor(() => expect(status.textContent).toBe("A key is saved in the OS keyring."));
    expect(key.value).toBe("");
    expect(onModelChanged).toHaveBeenCalled();

    calls.modelSettings.mockResolvedValue(settings());
    await fireEvent.click(getByTestId("model-remove-key"));
    expect(calls.deleteApiKey).toHaveBeenCalledWith("openai");
    await waitFor(() => expect(status.textContent).toMatch(/No key saved/));
  });

  it("says when the environment provides the key, and when no keyring can hold one", async () => {
    const loaded = settings({ keyringProblem: "no OS keyring is available (no D-Bus session)" });
    loaded.providers[0].keyFromEnv = true;
    calls.saveApiKey.mockRejectedValue(refused("keyring", "the key was not saved: no OS keyring is available. Set OPENAI_API_KEY in the environment instead"));
    const { getByTestId, findByTestId } = await setup(loaded);
    const status = getByTestId("model-key-status").textContent ?? "";
    expect(status).toMatch(/from OPENAI_API_KEY/);
    expect(status).toMatch(/no D-Bus session/);
    await fireEvent.input(getByTestId("model-api-key"), { target: { value: "sk-x" } });
    await fireEvent.click(getByTestId("model-save-key"));
    expect((await findByTestId("model-error")).textContent).toMatch(/Set OPENAI_API_KEY/);
  });

  it("says it waits for the OS keyring while a save takes long (a locked keyring asks to be unlocked)", async () => {
    let release: () => void = () => {};
    calls.saveApiKey.mockImplementation(() => new Promise<void>((resolve) => (release = resolve)));
    const { getByTestId, queryByTestId, findByTestId } = await setup(settings());
    await fireEvent.input(getByTestId("model-api-key"), { target: { value: "sk-x" } });
    await fireEvent.click(getByTestId("model-save-key"));
    expect(queryByTestId("model-keyring-waiting")).toBeNull();
    expect((await findByTestId("model-keyring-waiting", {}, { timeout: 2000 })).textContent).toMatch(/unlock it/);
    calls.modelSettings.mockResolvedValue(settings());
    release();
    await waitFor(() => expect(queryByTestId("model-keyring-waiting")).toBeNull());
    expect(queryByTestId("model-error")).toBeNull();
  });

  it("shows what the command line fixes read-only", async () => {
    const { getByTestId } = await setup(
      settings({ provider: "anthropic", baseUrl: "http://127.0.0.1:9/v1", flagsOverride: { provider: "anthropic", baseUrl: "http://127.0.0.1:9/v1", model: null } }),
    );
    expect((getByTestId("model-provider") as HTMLSelectElement).disabled).toBe(true);
    expect((getByTestId("model-base-url") as HTMLInputElement).readOnly).toBe(true);
    expect((getByTestId("model-name") as HTMLInputElement).readOnly).toBe(false);
    expect(getByTestId("model-flags").textContent).toMatch(/--provider.*--base-url/);
  });

  it("labels every control", async () => {
    const { container } = await setup();
    for (const control of container.querySelectorAll("input, select")) {
      const labelled = control.closest("label") ?? container.querySelector(`label[for="${control.id}"]`);
      expect(labelled?.textContent?.trim(), control.outerHTML).toBeTruthy();
    }
  });
});
