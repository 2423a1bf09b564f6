import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/svelte";
import type { GeneralSettings as Stored, ThemePreference } from "../../lib/api";
import { WindowTheme } from "../../lib/theme";

const calls = vi.hoisted(() => ({
  generalSettings: vi.fn<() => Promise<Stored>>(),
  saveGeneralSettings: vi.fn<(s: { viewRetentionDays?: number; theme?: ThemePreference }) => Promise<Stored>>(),
}));

vi.mock("../../lib/api", async (original) => ({ ...(await original<typeof import("../../lib/api")>()), api: calls }));

import GeneralSettings from "./GeneralSettings.svelte";
import { refused } from "../../lib/testing/errors";

let stored: Stored;

async function setup() {
  const root = document.createElement("html");
  const theme = new WindowTheme({ root, media: null, storage: null });
  theme.start();
  const view = render(GeneralSettings, { theme });
  const days = (await view.findByTestId("retention-days")) as HTMLInputElement;
  await waitFor(() => expect(days.value).toBe(String(stored.viewRetentionDays)));
  return { ...view, days, root, theme };
}

beforeEach(() => {
  stored = { viewRetentionDays: 7, theme: "light" };
  calls.generalSettings.mockReset().mockImplementation(async () => ({ ...stored }));
  calls.saveGeneralSettings.mockReset().mockImplementation(async (s) => {
    stored = { ...stored, ...s };
    return { ...stored };
  });
});
afterEach(cleanup);

describe("GeneralSettings", () => {
  it("shows the stored retention and theme", async () => {
    const { getByTestId } = await setup();
    expect((getByTestId("theme-light") as HTMLInputElement).checked).toBe(true);
    expect((getByTestId("theme-system") as HTMLInputElement).checked).toBe(false);
  });

  it("applies a theme at once and stores it", async () => {
    const { getByTestId, root, theme } = await setup();
    await fireEvent.click(getByTestId("theme-dark"));
    expect(root.dataset.theme).toBe("dark");
    expect(theme.preference).toBe("dark");
    expect(calls.saveGeneralSettings).toHaveBeenCalledWith({ theme: "dark" });
    expect((getByTestId("theme-dark") as HTMLInputElement).checked).toBe(true);
  });

  it("puts the theme back when it cannot be stored, and says why", async () => {
    const { getByTestId, findByTestId, root } = await setup();
    await fireEvent.click(getByTestId("theme-light"));
    calls.saveGeneralSettings.mockRejectedValueOnce(refused("store", "the conversation store cannot be opened"));
    await fireEvent.click(getByTestId("theme-dark"));
    const error = await findByTestId("general-error");
    expect(error.getAttribute("role")).toBe("alert");
    expect(error.textContent).toMatch(/store cannot be opened/);
    expect(root.dataset.theme).toBe("light");
    await waitFor(() => expect((getByTestId("theme-light") as HTMLInputElement).checked).toBe(true));
  });

  it("refuses a retention outside 1 to 365 days with the reason, and stores a good one", async () => {
    const { getByTestId, findByTestId, days } = await setup();
    for (const [bad, why] of [
      ["0", /not 0/],
      ["400", /not 400/],
      ["1.5", /whole number/],
      ["", /Enter a number/],
    ] as const) {
      await fireEvent.input(days, { target: { value: bad } });
      await fireEvent.click(getByTestId("general-save"));
      expect((await findByTestId("general-error")).textContent, bad).toMatch(why);
      expect(days.getAttribute("aria-invalid")).toBe("true");
    }
    expect(calls.saveGeneralSettings).not.toHaveBeenCalled();
    await fireEvent.input(days, { target: { value: "30" } });
    await fireEvent.click(getByTestId("general-save"));
    expect(calls.saveGeneralSettings).toHaveBeenCalledWith({ viewRetentionDays: 30 });
    expect((await findByTestId("general-saved")).textContent).toMatch(/30 days/);
    expect(days.getAttribute("aria-invalid")).toBe("false");
  });

  it("shows what Rust refuses", async () => {
    calls.saveGeneralSettings.mockRejectedValueOnce(refused("invalid", "view retention must be from 1 to 365 days, not 500"));
    const { getByTestId, findByTestId, days } = await setup();
    await fireEvent.input(days, { target: { value: "12" } });
    await fireEvent.click(getByTestId("general-save"));
    expect((await findByTestId("general-error")).textContent).toMatch(/not 500/);
  });
});
