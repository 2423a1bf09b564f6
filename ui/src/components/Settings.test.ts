import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/svelte";
import { WindowTheme } from "../lib/theme";

// The sections' own calls; anything else (the MCP servers section) is refused, not missing.
vi.mock("../lib/api", async (original) => {
  const known: Record<string, unknown> = {
    modelSettings: async () => ({
      provider: "openai",
      baseUrl: "http://localhost:11434/v1",
      model: null,
      flagsOverride: { provider: null, baseUrl: null, model: null },
      providers: [],
      keyringProblem: null,
    }),
    generalSettings: async () => ({
      viewRetentionDays: 7,
      theme: "system",
      viewOriginsAllowed: [],
      viewOriginsBlocked: [],
      clientMetadataUrl: null,
    }),
  };
  const api = new Proxy(known, {
    get: (target, name: string) => target[name] ?? (async () => Promise.reject(new Error(`${name} is not part of this test`))),
  });
  return { ...(await original<typeof import("../lib/api")>()), api };
});

import Settings from "./Settings.svelte";

afterEach(cleanup);

function setup() {
  const opener = document.createElement("button");
  opener.textContent = "Settings";
  document.body.append(opener);
  opener.focus();
  const onClose = vi.fn();
  const theme = new WindowTheme({ root: document.createElement("html"), media: null, storage: null });
  const view = render(Settings, { onClose, theme });
  return { ...view, onClose, opener };
}

describe("Settings", () => {
  it("is a modal dialog with a tab per section, all mounted, one shown", async () => {
    const { getByTestId, getByRole } = setup();
    const dialog = getByTestId("settings");
    expect(dialog.getAttribute("role")).toBe("dialog");
    expect(dialog.getAttribute("aria-modal")).toBe("true");
    expect(getByRole("dialog", { name: "Settings" })).toBe(dialog);
    const panel = (id: string) => getByTestId(id).closest("[role=tabpanel]") as HTMLElement;
    expect(panel("model-settings").hidden).toBe(false);
    expect(panel("server-settings").hidden).toBe(true);
    expect(panel("general-settings").hidden).toBe(true);

    await fireEvent.click(getByTestId("settings-tab-servers"));
    expect(getByTestId("settings-tab-servers").getAttribute("aria-selected")).toBe("true");
    expect(panel("server-settings").hidden).toBe(false);
    expect(panel("model-settings").hidden).toBe(true);

    // Arrow keys move between tabs.
    await fireEvent.keyDown(getByTestId("settings-tab-servers"), { key: "ArrowRight" });
    expect(getByTestId("settings-tab-agents").getAttribute("aria-selected")).toBe("true");
    await fireEvent.keyDown(getByTestId("settings-tab-agents"), { key: "ArrowRight" });
    expect(getByTestId("settings-tab-approvals").getAttribute("aria-selected")).toBe("true");
    await fireEvent.keyDown(getByTestId("settings-tab-approvals"), { key: "ArrowRight" });
    expect(panel("general-settings").hidden).toBe(false);
    expect(document.activeElement).toBe(getByTestId("settings-tab-general"));
    await fireEvent.keyDown(getByTestId("settings-tab-general"), { key: "ArrowRight" });
    expect(document.activeElement).toBe(getByTestId("settings-tab-model"));
  });

  it("closes on Esc and on its button", async () => {
    const { getByTestId, onClose } = setup();
    await fireEvent.keyDown(getByTestId("model-base-url"), { key: "Escape" });
    expect(onClose).toHaveBeenCalledTimes(1);
    await fireEvent.click(getByTestId("settings-close"));
    expect(onClose).toHaveBeenCalledTimes(2);
  });

  it("keeps Tab inside and gives focus back to what opened it", async () => {
    const { getByTestId, unmount, opener } = setup();
    const dialog = getByTestId("settings");
    expect(document.activeElement).toBe(getByTestId("settings-tab-model"));
    // Once the model settings are read, Save is the last control.
    await waitFor(() => expect((getByTestId("model-save") as HTMLButtonElement).disabled).toBe(false));
    const close = getByTestId("settings-close");
    close.focus();
    await fireEvent.keyDown(close, { key: "Tab", shiftKey: true });
    expect(dialog.contains(document.activeElement)).toBe(true);
    expect(document.activeElement).not.toBe(close);
    const last = document.activeElement as HTMLElement;
    expect(last.dataset.testid).toBe("model-save");
    await fireEvent.keyDown(last, { key: "Tab" });
    expect(document.activeElement).toBe(close);
    unmount();
    expect(document.activeElement).toBe(opener);
    opener.remove();
  });
});
