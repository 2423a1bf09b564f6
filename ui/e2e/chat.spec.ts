// Chat flows: the window comes up, a reply streams in, a tool call waits for approval, and the
// composer's keys.
import { expect, invocations, test } from "./fixtures";

test("the window comes up with the sidebar, the servers and the composer", async ({ page }) => {
  await expect(page.getByRole("complementary", { name: "Sidebar" })).toBeVisible();
  await expect(page.getByTestId("model-info")).toHaveText("openai · gpt-e2e");
  await expect(page.getByTestId("tool-summary")).toHaveText("3 tools, 1 with views, 1 server failed");
  await expect(page.getByTestId("server-error")).toHaveText("spawn porthole-offline-server ENOENT");
  await expect(page.getByTestId("conversation")).toHaveText(["Weather in Paris", "Release notes"]);
  await expect(page.getByTestId("composer")).toBeFocused();
  await expect(page.getByTestId("send")).toBeDisabled();
  // The window told the shell it can take input.
  await expect.poll(() => invocations(page, "ui_ready")).toHaveLength(1);
});

test("a message is sent and its reply streams in", async ({ page }) => {
  await page.evaluate(() => window.portholeE2E.hold("reply"));
  await page.getByTestId("composer").fill("hello there");
  await page.getByTestId("send").click();

  await expect(page.getByTestId("composer")).toHaveValue("");
  const user = page.locator('[data-testid="message"][data-role="user"]');
  await expect(user).toHaveText("hello there");
  // The reply is on screen while it is being written, and Stop is offered.
  const reply = page.locator('[data-testid="message"][data-role="assistant"]');
  await expect(reply).toHaveAttribute("data-status", "streaming");
  await expect(reply).toHaveText("Echo:");
  await expect(page.getByTestId("stop")).toBeVisible();
  await expect.poll(() => page.evaluate(() => window.portholeE2E.waiting())).toEqual(["reply"]);

  await page.evaluate(() => window.portholeE2E.release("reply"));
  await expect(reply).toHaveText("Echo: hello there");
  await expect(reply).toHaveAttribute("data-status", "complete");
  await expect(page.getByTestId("stop")).toBeHidden();
  expect(await invocations(page, "send_message")).toEqual([{ conversationId: null, text: "hello there", attachments: [] }]);

  // The new conversation is listed first and open; the next message goes to it.
  const first = page.getByTestId("conversation").first();
  await expect(first).toHaveText("hello there");
  await expect(first).toHaveAttribute("aria-current", "true");
  const id = await first.getAttribute("data-conversation-id");
  await page.getByTestId("composer").fill("again");
  await page.getByTestId("composer").press("Enter");
  await expect(reply.nth(1)).toHaveText("Echo: again");
  expect((await invocations(page, "send_message")).at(-1)).toEqual({ conversationId: id, text: "again", attachments: [] });
});

test("a tool call waits for approval, and Allow once lets it run", async ({ page }) => {
  await page.getByTestId("composer").fill("What is the weather in Paris?");
  await page.getByTestId("composer").press("Enter");

  const card = page.getByTestId("tool-call");
  await expect(card).toHaveAttribute("data-status", "awaiting-approval");
  await expect(card).toHaveAttribute("data-tool-name", "get_weather");
  await expect(card.getByTestId("tool-arguments")).toContainText('"city": "Paris"');
  const callId = await card.getAttribute("data-call-id");

  await card.getByTestId("approve-once").click();
  await expect(card).toHaveAttribute("data-status", "ok");
  await expect(card.getByTestId("approve-once")).toBeHidden();
  expect(await invocations(page, "answer_approval")).toEqual([{ callId, decision: "allow_once" }]);
  await expect(page.locator('[data-testid="message"][data-role="assistant"]').last()).toHaveText("It is sunny in Paris, 21 °C.");

  await card.getByTestId("tool-result").locator("summary").click();
  await expect(card.getByTestId("model-facing")).toContainText("Sunny, 21 °C");
});

test("Always allow marks the calls it lets run, and Settings revokes it from the mark", async ({ page }) => {
  const composer = page.getByTestId("composer");
  const cards = page.getByTestId("tool-call");
  await composer.fill("What is the weather in Paris?");
  await composer.press("Enter");
  await cards.first().getByTestId("approve-always").click();
  await expect(cards.first().getByTestId("tool-allowed-by")).toHaveText("Always allowed from now on");
  // The next call is not asked about: its card says why.
  await composer.fill("The weather again?");
  await composer.press("Enter");
  await expect(cards.nth(1)).toHaveAttribute("data-status", "ok");
  await expect(cards.nth(1).getByTestId("approve-once")).toHaveCount(0);
  await expect(cards.nth(1).getByTestId("tool-allowed-by")).toHaveAttribute("data-allowed-by", "remembered");

  // The mark leads to Settings › Approvals, where it is revoked: the next call is asked again.
  await cards.nth(1).getByTestId("tool-allowed-by").click();
  await expect(page.getByTestId("settings-tab-approvals")).toHaveAttribute("aria-selected", "true");
  const approval = page.locator('[data-testid="approval"][data-server="demo"][data-tool="get_weather"]');
  await approval.getByTestId("approval-revoke").click();
  await expect(page.getByTestId("approvals-none")).toBeVisible();
  await page.getByTestId("settings-close").click();
  await composer.fill("And the weather tomorrow?");
  await composer.press("Enter");
  await expect(cards.nth(2)).toHaveAttribute("data-status", "awaiting-approval");
});

test("the keyboard answers an approval: Ctrl+Shift+Enter allows once, Ctrl+Shift+Backspace denies", async ({ page }) => {
  const composer = page.getByTestId("composer");
  const cards = page.getByTestId("tool-call");
  await composer.fill("What is the weather in Paris?");
  await composer.press("Enter");
  await expect(cards.first()).toHaveAttribute("data-status", "awaiting-approval");
  await composer.press("Control+Shift+Enter");
  await expect(cards.first()).toHaveAttribute("data-status", "ok");
  await expect(composer).toBeFocused();
  await composer.fill("The weather again?");
  await composer.press("Enter");
  await expect(cards.nth(1)).toHaveAttribute("data-status", "awaiting-approval");
  // From the card itself: the keyboard stays on the card once its buttons go.
  await cards.nth(1).getByTestId("deny").focus();
  await page.keyboard.press("Control+Shift+Backspace");
  await expect(cards.nth(1)).toHaveAttribute("data-status", "denied");
  await expect(cards.nth(1)).toBeFocused();
});

test("a denied tool call is not run, and the reply says so", async ({ page }) => {
  await page.getByTestId("composer").fill("weather?");
  await page.getByTestId("send").click();
  const card = page.getByTestId("tool-call");
  await card.getByTestId("deny").click();
  await expect(card).toHaveAttribute("data-status", "denied");
  expect(await invocations(page, "answer_approval")).toEqual([{ callId: await card.getAttribute("data-call-id"), decision: "deny" }]);
  await expect(page.locator('[data-testid="message"][data-role="assistant"]').last()).toHaveText("I could not look up the weather.");
});

test("Enter sends, Shift+Enter starts a new line", async ({ page }) => {
  const composer = page.getByTestId("composer");
  await composer.pressSequentially("first line");
  await composer.press("Shift+Enter");
  await composer.pressSequentially("second line");
  await expect(composer).toHaveValue("first line\nsecond line");
  expect(await invocations(page, "send_message")).toEqual([]);

  await composer.press("Enter");
  await expect(composer).toHaveValue("");
  await expect(page.locator('[data-testid="message"][data-role="user"]')).toHaveText("first line\nsecond line");
  expect(await invocations(page, "send_message")).toEqual([{ conversationId: null, text: "first line\nsecond line", attachments: [] }]);
});

test("Esc stops a reply being written", async ({ page }) => {
  await page.evaluate(() => window.portholeE2E.hold("reply"));
  await page.getByTestId("composer").fill("a long story");
  await page.getByTestId("composer").press("Enter");
  const reply = page.locator('[data-testid="message"][data-role="assistant"]');
  await expect(reply).toHaveText("Echo:");
  await page.keyboard.press("Escape");
  await expect(reply).toHaveAttribute("data-status", "interrupted");
  await expect(page.getByTestId("stop")).toBeHidden();
  const id = await page.getByTestId("conversation").first().getAttribute("data-conversation-id");
  expect(await invocations(page, "stop_turn")).toEqual([{ conversationId: id }]);
});

test("Retry writes the last reply again; Edit replaces the last message and resends it", async ({ page }) => {
  const composer = page.getByTestId("composer");
  await composer.fill("first try");
  await composer.press("Enter");
  const reply = page.locator('[data-testid="message"][data-role="assistant"]');
  await expect(reply).toHaveText("Echo: first try");
  const id = await page.getByTestId("conversation").first().getAttribute("data-conversation-id");

  await page.getByTestId("retry").click();
  await expect.poll(() => invocations(page, "retry_turn")).toEqual([{ conversationId: id }]);
  await expect(reply).toHaveText("Echo: first try");
  await expect(reply).toHaveAttribute("data-status", "complete");
  await expect(page.locator('[data-testid="message"][data-role="user"]')).toHaveCount(1);

  await page.getByTestId("edit-message").click();
  const edit = page.getByTestId("edit-message-input");
  await expect(edit).toBeFocused();
  await edit.fill("second try");
  await edit.press("Enter");
  await expect(page.locator('[data-testid="message"][data-role="user"]')).toHaveText("second try");
  await expect(reply).toHaveText("Echo: second try");
  expect(await invocations(page, "edit_and_resend")).toEqual([{ conversationId: id, text: "second try" }]);
});
