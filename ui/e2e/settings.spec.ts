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
