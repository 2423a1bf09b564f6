// Servers' prompts and resources in the composer: `/` opens the prompt menu, `@` (or the attach
// button) the resource picker; arguments get suggestions; attached resources show as chips and
// go with the message.
import { expect, invocations, test } from "./fixtures";

test("a prompt is chosen from the / menu, its argument completed, and sent as the person's turn", async ({ page }) => {
  const box = page.getByTestId("composer");
  await box.pressSequentially("/");
  const items = page.getByTestId("prompt-item");
  await expect(items).toHaveCount(2);
  await expect(items.first()).toContainText("/summarise");
  await expect(items.first()).toContainText("demo");
  // Filtered as it is typed; the keyboard works the list.
  await box.pressSequentially("wea");
  await expect(items).toHaveCount(1);
  await expect(items.first()).toHaveAttribute("aria-selected", "true");
  await box.press("Enter");

  const form = page.getByTestId("argument-form");
  await expect(form).toBeVisible();
  await expect(form).toContainText("Weather report");
  const city = form.locator('[data-argument="city"]');
  await expect(city).toBeFocused();
  // A required argument must be given.
  await form.getByTestId("argument-form-submit").click();
  await expect(form.getByTestId("argument-form-error")).toHaveText("Fill in City.");
  await city.pressSequentially("P");
  const suggestions = form.getByTestId("argument-suggestion");
  await expect(suggestions).toHaveText(["Paris", "Porto", "Prague"]);
  await city.pressSequentially("o");
  await expect(suggestions).toHaveText(["Porto"]);
  await suggestions.first().click();
  await expect(city).toHaveValue("Porto");
  await form.getByTestId("argument-form-submit").click();

  await expect(form).toBeHidden();
  await expect(box).toHaveValue("");
  const user = page.locator('[data-testid="message"][data-role="user"]');
  await expect(user).toHaveText("Tell me about Porto");
  await expect(page.locator('[data-testid="message"][data-role="assistant"]')).toContainText("Echo: Tell me about Porto");
  expect(await invocations(page, "send_prompt")).toEqual([
    { conversationId: null, server: "demo", name: "weather-report", arguments: { city: "Porto" } },
  ]);
});

test("Esc closes the menu, and a prompt without arguments is sent at once", async ({ page }) => {
  const box = page.getByTestId("composer");
  await box.pressSequentially("/");
  await expect(page.getByTestId("prompt-menu")).toBeVisible();
  await box.press("Escape");
  await expect(page.getByTestId("prompt-menu")).toBeHidden();
  await expect(box).toHaveValue("/");
  await box.press("Backspace");
  await box.pressSequentially("/sum");
  await page.getByTestId("prompt-item").click();
  await expect(page.locator('[data-testid="message"][data-role="user"]')).toHaveText("Summarise this conversation so far.");
});

test("resources are attached from the @ picker, a binary one is refused, and chips go with the message", async ({ page }) => {
  const box = page.getByTestId("composer");
  await box.pressSequentially("Compare ");
  await page.getByTestId("attach-button").click();
  await expect(box).toHaveValue("Compare @");
  const items = page.getByTestId("resource-item");
  await expect(items).toHaveCount(3);
  await box.pressSequentially("plan");
  await expect(items).toHaveCount(1);
  await box.press("Enter");
  const chips = page.getByTestId("attachment-chip");
  await expect(chips).toHaveText(["plan.md ×"]);
  await expect(box).toHaveValue("Compare ");

  // A PDF cannot go to a model: said, and nothing attached.
  await box.pressSequentially("@report");
  await box.press("Enter");
  await expect(page.getByTestId("attach-error")).toContainText("report.pdf is binary (application/pdf)");
  await expect(chips).toHaveCount(1);
  await box.fill("Compare ");

  // A template asks for its variable, then attaches what it makes.
  await box.pressSequentially("@city");
  await box.press("Enter");
  const form = page.getByTestId("argument-form");
  await form.locator('[data-argument="name"]').fill("Oslo");
  await form.getByTestId("argument-form-submit").click();
  await expect(chips).toHaveText(["plan.md ×", "Oslo ×"]);
  await expect(page.getByTestId("attach-error")).toBeHidden();

  await box.pressSequentially("these");
  await box.press("Enter");
  await expect(chips).toHaveCount(0);
  const attached = page.getByTestId("message-attachment");
  await expect(attached).toHaveText(["plan.md · demo", "Oslo · demo"]);
  await expect(page.locator('[data-testid="message"][data-role="assistant"]')).toContainText(
    "(attached: demo://notes/plan.md, demo://city/Oslo)",
  );
  expect(await invocations(page, "send_message")).toEqual([
    {
      conversationId: null,
      text: "Compare these",
      attachments: [
        { server: "demo", uri: "demo://notes/plan.md" },
        { server: "demo", uri: "demo://city/Oslo" },
      ],
    },
  ]);

  // Retry keeps them.
  await page.getByTestId("retry").click();
  await expect(page.locator('[data-testid="message"][data-role="assistant"]')).toContainText("(attached: demo://notes/plan.md, demo://city/Oslo)");
  await expect(attached).toHaveText(["plan.md · demo", "Oslo · demo"]);
});
