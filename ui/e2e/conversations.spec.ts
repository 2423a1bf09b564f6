// Conversation flows: reopen one (its view comes back expired), search, rename, delete.
import { SEEDED } from "./control";
import { expect, invocations, test } from "./fixtures";

const { weather: WEATHER, release: RELEASE } = SEEDED;

test("reopening a conversation shows what was said, and its expired view says so", async ({ page }) => {
  await page.locator(`[data-testid="conversation"][data-conversation-id="${WEATHER}"]`).click();
  await expect(page.locator('[data-testid="message"][data-role="user"]')).toHaveText("Show me the forecast for Paris");
  await expect(page.locator('[data-testid="message"][data-role="assistant"]')).toHaveText("It will be sunny in Paris all week.");
  const card = page.getByTestId("tool-call");
  await expect(card).toHaveAttribute("data-status", "ok");
  await expect(card.getByTestId("view-state")).toHaveText("This view expired; the result the model got is still here.");
  // The card asks for its own call's view as it comes into the document, once.
  expect(await invocations(page, "reopen_views")).toEqual([{ conversationId: WEATHER, callId: "call-forecast" }]);
});

test("search shows the store's hits, opens one, and Esc clears it", async ({ page }) => {
  const search = page.getByTestId("conversation-search");
  await expect(search).toHaveAccessibleName("Search conversations");
  await search.fill("changelog");
  const hits = page.getByTestId("search-hit");
  await expect(hits).toHaveCount(1);
  await expect(hits.locator(".hit-title")).toHaveText("Release notes");
  await expect(hits.locator("mark")).toHaveText("changelog");
  await expect(page.getByTestId("conversation")).toHaveCount(0);
  expect((await invocations(page, "search_conversations")).at(-1)).toEqual({ query: "changelog" });

  await hits.click();
  await expect(page.locator('[data-testid="message"][data-role="user"]')).toHaveText("Draft the release notes for 0.3");
  await expect(hits).toHaveAttribute("aria-current", "true");

  // A title matches too; every term must match somewhere.
  await search.fill("paris sunny");
  await expect(hits).toHaveCount(1);
  await expect(hits).toHaveAttribute("data-conversation-id", WEATHER);
  // What a tool returned is searched too (once per conversation, however many messages match).
  await search.fill("21");
  await expect(hits).toHaveCount(1);
  await expect(hits).toHaveAttribute("data-conversation-id", WEATHER);
  await expect(hits.locator(".hit-snippet")).toContainText("Tool result:");
  await expect(hits.locator("mark").first()).toHaveText("21");
  await search.fill("paris zebra");
  await expect(page.getByTestId("search-empty")).toHaveText("No conversation mentions “paris zebra”.");

  await search.press("Escape");
  await expect(search).toHaveValue("");
  await expect(page.getByTestId("conversation")).toHaveText(["Weather in Paris", "Release notes"]);
});

test("New chat, by the button or Ctrl+N, leaves the keyboard in the message box", async ({ page }) => {
  await page.locator(`[data-testid="conversation"][data-conversation-id="${WEATHER}"]`).click();
  await expect(page.locator('[data-testid="message"][data-role="user"]')).toHaveCount(1);
  await page.getByTestId("new-chat").click();
  await expect(page.locator('[data-testid="message"]')).toHaveCount(0);
  await expect(page.getByTestId("composer")).toBeFocused();
  await page.locator(`[data-testid="conversation"][data-conversation-id="${RELEASE}"]`).click();
  await expect(page.locator('[data-testid="message"][data-role="user"]')).toHaveCount(1);
  await page.getByTestId("conversation-search").focus();
  await page.keyboard.press("Control+N");
  await expect(page.locator('[data-testid="message"]')).toHaveCount(0);
  await expect(page.getByTestId("composer")).toBeFocused();
});

test("Ctrl+K goes to the conversation search from anywhere", async ({ page }) => {
  await expect(page.getByTestId("composer")).toBeFocused();
  await page.keyboard.press("Control+K");
  await expect(page.getByTestId("conversation-search")).toBeFocused();
  await page.keyboard.type("release");
  await expect(page.getByTestId("search-hit").first()).toHaveAttribute("data-conversation-id", RELEASE);
});

test("a conversation is renamed in place: Enter saves, Esc cancels, an empty title is refused", async ({ page }) => {
  const row = page.getByRole("listitem").filter({ has: page.locator(`[data-conversation-id="${RELEASE}"]`) });
  await row.getByRole("button", { name: "Rename “Release notes”" }).click();
  const input = page.getByTestId("conversation-title-input");
  await expect(input).toBeFocused();
  await expect(input).toHaveValue("Release notes");

  await input.fill("   ");
  await input.press("Enter");
  await expect(page.getByTestId("conversation-error")).toHaveText("A conversation needs a title.");
  await expect(input).toHaveAttribute("aria-invalid", "true");

  await input.fill("Changelog 0.3");
  await input.press("Escape");
  await expect(input).toBeHidden();
  await expect(page.locator(`[data-testid="conversation"][data-conversation-id="${RELEASE}"]`)).toHaveText("Release notes");
  expect(await invocations(page, "rename_conversation")).toEqual([]);

  await page.getByTestId("conversation-rename").nth(1).click();
  await input.fill("Changelog 0.3");
  await input.press("Enter");
  await expect(page.locator(`[data-testid="conversation"][data-conversation-id="${RELEASE}"]`)).toHaveText("Changelog 0.3");
  expect(await invocations(page, "rename_conversation")).toEqual([{ id: RELEASE, title: "Changelog 0.3" }]);
  // The store has it: search finds the new title.
  await page.getByTestId("conversation-search").fill("changelog 0.3");
  await expect(page.getByTestId("search-hit").first().locator(".hit-title")).toContainText("Changelog 0.3");
});

test("deleting asks first; deleting the open conversation goes to a new chat", async ({ page }) => {
  await page.locator(`[data-testid="conversation"][data-conversation-id="${WEATHER}"]`).click();
  await expect(page.getByTestId("tool-call")).toBeVisible();

  // Cancelled: nothing happens.
  await page.getByRole("button", { name: "Delete “Weather in Paris”" }).click();
  await expect(page.getByTestId("conversation-delete-cancel")).toBeFocused();
  await page.getByTestId("conversation-delete-cancel").click();
  await expect(page.getByTestId("conversation-delete-confirm")).toBeHidden();
  expect(await invocations(page, "delete_conversation")).toEqual([]);

  await page.getByRole("button", { name: "Delete “Weather in Paris”" }).click();
  await page.getByTestId("conversation-delete-confirm").click();
  await expect(page.getByTestId("conversation")).toHaveText(["Release notes"]);
  await expect(page.getByTestId("tool-call")).toHaveCount(0);
  await expect(page.getByTestId("message")).toHaveCount(0);
  await expect(page.getByTestId("conversation-search")).toBeFocused();
  expect(await invocations(page, "delete_conversation")).toEqual([{ id: WEATHER }]);
  // The views were torn down before the conversation went.
  const order = await page.evaluate(() =>
    window.portholeE2E.invocations.map((i) => i.cmd).filter((c) => c === "teardown_views" || c === "delete_conversation"),
  );
  expect(order).toEqual(["teardown_views", "delete_conversation"]);

  // The next message starts a new conversation.
  await page.getByTestId("composer").fill("fresh start");
  await page.getByTestId("composer").press("Enter");
  await expect(page.getByTestId("conversation").first()).toHaveText("fresh start");
  expect((await invocations(page, "send_message")).at(-1)).toEqual({ conversationId: null, text: "fresh start", attachments: [] });
});

test("the sidebar keeps its place as the app's state comes in, so a click as it starts lands where it was aimed", async ({ page }) => {
  // The model's line (from the keyring) and the app's details come after the store's list.
  await page.goto("/e2e/harness.html?hold=model_info&hold=app_info");
  const box = (testid: string) => page.getByTestId(testid).first().boundingBox();
  const conversation = page.locator(`[data-testid="conversation"][data-conversation-id="${WEATHER}"]`);
  await expect.poll(async () => (await invocations(page, "list_conversation_page")).length).toBe(1);
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
  // The list waits for the line above it (for half a second at most), and does not say meanwhile
  // that there are none.
  await expect(page.getByTestId("conversation")).toHaveCount(0);
  await expect(page.getByText("No conversations yet.")).toHaveCount(0);
  const tools = await box("tools-button");
  const settings = await box("settings-button");
  expect(tools).not.toBeNull();

  await page.evaluate(() => window.portholeE2E.release("model_info"));
  await expect(page.getByTestId("model-info")).toBeVisible();
  await expect(conversation).toBeVisible();
  const listed = await conversation.boundingBox();

  await page.evaluate(() => window.portholeE2E.release("app_info"));
  await expect(page.locator("aside footer")).toContainText("Porthole 0.0.0-e2e");
  expect(await conversation.boundingBox()).toEqual(listed);
  expect(await box("tools-button")).toEqual(tools);
  expect(await box("settings-button")).toEqual(settings);
});

test("the MCP servers section keeps its place as the model's line and the conversations come in", async ({ page }) => {
  const section = page.getByTestId("servers-section");
  // A first start: the line and the list above the servers come, and their height is kept.
  await expect(page.getByTestId("conversation").first()).toBeVisible();
  await expect.poll(() => page.evaluate(() => localStorage.getItem("porthole.sidebarListsHeight"))).not.toBeNull();
  const settled = await section.boundingBox();

  // The next start: both come late; the servers are where they will be from the first frame on.
  await page.goto("/e2e/harness.html?hold=model_info&hold=list_conversation_page");
  await page.evaluate(() => {
    const tops: number[] = [];
    (window as unknown as { serverTops: number[] }).serverTops = tops;
    const record = () => {
      const el = document.querySelector<HTMLElement>('[data-testid="servers-section"]');
      if (el) tops.push(el.getBoundingClientRect().top);
      requestAnimationFrame(record);
    };
    requestAnimationFrame(record);
  });
  await expect.poll(async () => (await invocations(page, "list_conversation_page")).length).toBe(1);
  await expect(page.getByTestId("server").first()).toBeVisible();
  await expect(page.getByTestId("model-info")).toHaveCount(0);
  await page.evaluate(() => window.portholeE2E.release("model_info"));
  await expect(page.getByTestId("model-info")).toBeVisible();
  await page.evaluate(() => window.portholeE2E.release("list_conversation_page"));
  await expect(page.getByTestId("conversation").first()).toBeVisible();
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  const tops = await page.evaluate(() => (window as unknown as { serverTops: number[] }).serverTops);
  expect(tops.length).toBeGreaterThan(0);
  expect(new Set(tops)).toEqual(new Set([settled?.y]));
});
