// Settings flows: the theme applies at once (and follows the system on "System"), and a view
// retention out of range is refused with the reason.
import { expect, invocations, test } from "./fixtures";

test.beforeEach(async ({ page }) => {
  await page.getByTestId("settings-button").click();
  await expect(page.getByTestId("settings")).toBeVisible();
  await page.getByTestId("settings-tab-general").click();
});

test("picking a theme applies it at once and stores it; System follows the system", async ({ page }) => {
  const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
  await page.emulateMedia({ colorScheme: "light" });
  await expect.poll(theme).toBe("light");

  await page.getByTestId("theme-dark").check();
  await expect.poll(theme).toBe("dark");
  expect(await invocations(page, "save_general_settings")).toEqual([{ viewRetentionDays: null, theme: "dark", viewOriginsAllowed: null, viewOriginsBlocked: null, clientMetadataUrl: null, roots: null }]);

  await page.getByTestId("theme-system").check();
  await expect.poll(theme).toBe("light");
  await page.emulateMedia({ colorScheme: "dark" });
  await expect.poll(theme).toBe("dark");
  expect((await invocations(page, "save_general_settings")).at(-1)).toEqual({ viewRetentionDays: null, theme: "system", viewOriginsAllowed: null, viewOriginsBlocked: null, clientMetadataUrl: null, roots: null });

  await page.getByTestId("settings-close").click();
  await expect(page.getByTestId("settings")).toBeHidden();
  await expect.poll(theme).toBe("dark");
});

test("a view retention out of range is refused with the reason; a good one is stored", async ({ page }) => {
  const days = page.getByTestId("retention-days");
  await expect(days).toHaveValue("7");
  await days.fill("0");
  await page.getByTestId("general-save").click();
  await expect(page.getByTestId("general-error")).toHaveText("View retention must be from 1 to 365 days, not 0.");
  await expect(days).toHaveAttribute("aria-invalid", "true");
  expect(await invocations(page, "save_general_settings")).toEqual([]);

  await days.fill("30");
  await page.getByTestId("general-save").click();
  await expect(page.getByTestId("general-saved")).toHaveText("Views are kept for 30 days from now on.");
  await expect(days).toHaveAttribute("aria-invalid", "false");
  expect(await invocations(page, "save_general_settings")).toEqual([{ viewRetentionDays: 30, theme: null, viewOriginsAllowed: null, viewOriginsBlocked: null, clientMetadataUrl: null, roots: null }]);
});

test("each profile's window starts in the theme it was left in, not in another profile's", async ({ page }) => {
  // The engine's storage is one for all of a user's profiles; the shell names the profile.
  const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/e2e/harness.html?profile=0123456789abcdef");
  await page.getByTestId("settings-button").click();
  await page.getByTestId("settings-tab-general").click();
  await page.getByTestId("theme-dark").check();
  await expect.poll(theme).toBe("dark");

  // Another profile's window, before its own setting has come: the system's theme, not dark.
  await page.goto("/e2e/harness.html?profile=fedcba9876543210&hold=general_settings");
  await expect(page.getByTestId("composer")).toBeVisible();
  await expect.poll(() => page.evaluate(() => window.portholeE2E.waiting())).toContain("general_settings");
  expect(await theme()).toBe("light");

  // The first profile's window again, its setting held too: dark from the start.
  await page.goto("/e2e/harness.html?profile=0123456789abcdef&hold=general_settings");
  await expect(page.getByTestId("composer")).toBeVisible();
  await expect.poll(() => page.evaluate(() => window.portholeE2E.waiting())).toContain("general_settings");
  expect(await theme()).toBe("dark");
});
