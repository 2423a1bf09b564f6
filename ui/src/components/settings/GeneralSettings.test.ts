import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/svelte";
import type { GeneralSettings as Stored, ThemePreference } from "../../lib/api";
import { WindowTheme } from "../../lib/theme";

const calls = vi.hoisted(() => ({
  generalSettings: vi.fn<() => Promise<Stored>>(),
  saveGeneralSettings: vi.fn<
    (s: {
      viewRetentionDays?: number;
      theme?: ThemePreference;
      viewOriginsAllowed?: string[];
      viewOriginsBlocked?: string[];
      clientMetadataUrl?: string;
    }) => Promise<Stored>
  >(),
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
  stored = {
    viewRetentionDays: 7,
    theme: "light",
    viewOriginsAllowed: [],
    viewOriginsBlocked: ["https://tracker.example"],
    clientMetadataUrl: null,
    roots: ["/home/me/notes"],
  };
  calls.generalSettings.mockReset().mockImplementation(async () => ({ ...stored }));
  calls.saveGeneralSettings.mockReset().mockImplementation(async (s) => {
    stored = {
      ...stored,
      ...s,
      clientMetadataUrl: s.clientMetadataUrl === undefined ? stored.clientMetadataUrl : s.clientMetadataUrl || null,
    };
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

  it("edits the view origin lists and the client metadata URL, one origin per line", async () => {
    const { getByTestId, findByTestId } = await setup();
    const allowed = getByTestId("view-origins-allowed") as HTMLTextAreaElement;
    const blocked = getByTestId("view-origins-blocked") as HTMLTextAreaElement;
    await waitFor(() => expect(blocked.value).toBe("https://tracker.example"));
    await fireEvent.input(allowed, { target: { value: " https://api.example.com\n\nhttps://*.cdn.example\n" } });
    await fireEvent.input(getByTestId("client-metadata-url"), { target: { value: "https://me.example/client.json" } });
    await fireEvent.click(getByTestId("view-access-save"));
    expect(calls.saveGeneralSettings).toHaveBeenCalledWith({
      viewOriginsAllowed: ["https://api.example.com", "https://*.cdn.example"],
      viewOriginsBlocked: ["https://tracker.example"],
      clientMetadataUrl: "https://me.example/client.json",
    });
    expect((await findByTestId("view-access-saved")).textContent).toMatch(/views opened from now on/);
    expect(allowed.value).toBe("https://api.example.com\nhttps://*.cdn.example");

    calls.saveGeneralSettings.mockRejectedValueOnce(
      refused("invalid", 'the block list of view origins: line 1: "http://x.example": the http:// scheme is not accepted'),
    );
    await fireEvent.input(blocked, { target: { value: "http://x.example" } });
    await fireEvent.click(getByTestId("view-access-save"));
    expect((await findByTestId("view-access-error")).textContent).toMatch(/line 1.*http:\/\/ scheme/);
  });

  it("edits the folders servers may use, one per line", async () => {
    const { getByTestId, findByTestId } = await setup();
    const roots = getByTestId("roots") as HTMLTextAreaElement;
    await waitFor(() => expect(roots.value).toBe("/home/me/notes"));
    await fireEvent.input(roots, { target: { value: "/home/me/notes\n\n /srv/data \n" } });
    await fireEvent.click(getByTestId("roots-save"));
    expect(calls.saveGeneralSettings).toHaveBeenCalledWith({ roots: ["/home/me/notes", "/srv/data"] });
    expect((await findByTestId("roots-saved")).textContent).toMatch(/these 2 folders/);

    calls.saveGeneralSettings.mockRejectedValueOnce(refused("invalid", "roots: notes is not an absolute path"));
    await fireEvent.input(roots, { target: { value: "notes" } });
    await fireEvent.click(getByTestId("roots-save"));
    expect((await findByTestId("roots-error")).textContent).toBe("roots: notes is not an absolute path");
  });

  it("shows what Rust refuses", async () => {
    calls.saveGeneralSettings.mockRejectedValueOnce(refused("invalid", "view retention must be from 1 to 365 days, not 500"));
    const { getByTestId, findByTestId, days } = await setup();
    await fireEvent.input(days, { target: { value: "12" } });
    await fireEvent.click(getByTestId("general-save"));
    expect((await findByTestId("general-error")).textContent).toMatch(/not 500/);
  });
});
