// The workbench: its own sidebar entry, tabs moved between with the arrow keys (focus follows),
// the Tools tab is the tools panel, and the Server tab shows what the server said of itself and
// pings it.
import { expect, invocations, test } from "./fixtures";

test("the workbench opens from the sidebar, its tabs follow the arrow keys, and the Server tab pings", async ({ page }) => {
  const button = page.getByTestId("workbench-button");
  await button.click();
  await expect(button).toHaveAttribute("aria-pressed", "true");
  const workbench = page.getByTestId("workbench");
  await expect(workbench).toBeVisible();

  const tab = (name: string) => workbench.locator(`[data-testid="workbench-tab"][data-tab="${name}"]`);
  await expect(tab("server")).toHaveAttribute("aria-selected", "true");
  await expect(workbench.getByTestId("server-info-name")).toHaveText("demo-server 1.0.0");
  await expect(workbench.getByTestId("server-info-protocol")).toHaveText("2025-11-25");
  await expect(workbench.getByTestId("server-info-instructions")).toHaveText("Tools of demo.");
  await workbench.getByTestId("server-ping").click();
  await expect(workbench.getByTestId("server-ping-result")).toHaveText("Answered in 3.3 ms");
  expect(await invocations(page, "ping_server")).toEqual([{ name: "demo" }]);

  await tab("server").focus();
  await page.keyboard.press("ArrowRight");
  await expect(tab("resources")).toHaveAttribute("aria-selected", "true");
  await expect(tab("resources")).toBeFocused();
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("ArrowLeft");
  await expect(tab("tools")).toBeFocused();
  await expect(workbench.getByTestId("tools-panel")).toBeVisible();
  // Tools in the sidebar shows the same tab, and closes the workbench from there.
  await expect(page.getByTestId("tools-button")).toHaveAttribute("aria-pressed", "true");
  await page.getByTestId("tools-button").click();
  await expect(workbench).toBeHidden();
  // Opened again from its own button: the last tab shown that was not Tools (Server, passed
  // through on the way to Tools).
  await button.click();
  await expect(tab("server")).toHaveAttribute("aria-selected", "true");
});

test("the Host emulation tab picks a preset, names its source, and applies overrides", async ({ page }) => {
  await page.getByTestId("workbench-button").click();
  const workbench = page.getByTestId("workbench");
  await workbench.locator('[data-testid="workbench-tab"][data-tab="host"]').click();
  const pane = workbench.getByTestId("workbench-host-emulation");
  await expect(pane.getByTestId("host-preset")).toHaveValue("porthole");
  await pane.getByTestId("host-preset").selectOption("chatgpt");
  await expect(pane.getByTestId("host-preset-source")).toHaveText("Source: ChatGPT's test values.");
  await expect(pane.getByTestId("host-emulation-status")).toHaveText("Applied: ChatGPT.");
  await pane.getByTestId("host-device").selectOption("mobile");
  await pane.getByTestId("host-capabilities").fill("[1]");
  await pane.getByTestId("host-capabilities").blur();
  await expect(pane.getByTestId("host-emulation-error")).toHaveText("The capabilities field must be a JSON object.");
  const sent = (await invocations(page, "set_host_emulation")) as { emulation: { preset: string; overrides: { device: { kind: string } | null } } }[];
  expect(sent.map((s) => s.emulation.preset)).toEqual(["chatgpt", "chatgpt"]);
  expect(sent[1].emulation.overrides.device?.kind).toBe("mobile");
});
