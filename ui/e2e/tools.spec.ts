// Tools panel flows: pick a tool, fill its form, Run: run_tool gets the arguments, and the run
// shows as a card in a new conversation.
import { expect, invocations, test } from "./fixtures";

test("a tool picked in the panel runs with the form's arguments", async ({ page }) => {
  await page.getByTestId("tools-button").click();
  const panel = page.getByTestId("tools-panel");
  await expect(panel).toBeVisible();
  await expect(page.getByTestId("tools-button")).toHaveAttribute("aria-pressed", "true");

  await panel.locator('[data-testid="tool-entry"][data-tool-name="repeat"]').click();
  const form = panel.getByTestId("tool-form");
  await form.locator('[data-testid="tool-field"][data-field="text"]').fill("hip");
  await form.locator('[data-testid="tool-field"][data-field="times"]').fill("3");
  await form.getByTestId("tool-run").click();

  expect(await invocations(page, "run_tool")).toEqual([{ conversationId: null, server: "demo", tool: "repeat", arguments: { text: "hip", times: 3 } }]);
  const card = page.getByTestId("tool-call");
  await expect(card).toHaveAttribute("data-status", "ok");
  await expect(card).toHaveAttribute("data-tool-name", "repeat");
  await card.getByTestId("tool-result").locator("summary").click();
  await expect(card.getByTestId("model-facing")).toContainText("hip hip hip");
  await expect(page.getByTestId("conversation").first()).toHaveText("Run repeat");
  await expect(page.getByTestId("conversation").first()).toHaveAttribute("aria-current", "true");
});

test("a required field left empty is refused before anything runs", async ({ page }) => {
  await page.getByTestId("tools-button").click();
  const panel = page.getByTestId("tools-panel");
  await panel.locator('[data-testid="tool-entry"][data-tool-name="get_weather"]').click();
  await panel.getByTestId("tool-run").click();
  await expect(panel.locator('[data-testid="tool-field"][data-field="city"]')).toHaveAttribute("aria-invalid", "true");
  expect(await invocations(page, "run_tool")).toEqual([]);

  await panel.getByTestId("tools-panel-close").click();
  await expect(panel).toBeHidden();
});
