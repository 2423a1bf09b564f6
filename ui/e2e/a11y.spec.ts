// Accessibility, checked by axe-core (WCAG 2.0/2.1 A and AA rules) on the real front end in both
// themes: the main window with a conversation (a streamed Markdown reply and a tool card), the
// settings dialog on each tab, the tools panel with a tool picked, and the conversation search
// with hits. A serious or critical violation fails the flow (every control has a name for screen
// readers; text keeps its contrast); each one found is printed with its rule, impact, targets and
// summary.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AxeResults, Result } from "axe-core";
import type { Page } from "@playwright/test";
import { SEEDED } from "./control";
import { expect, test } from "./fixtures";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

declare global {
  interface Window {
    axe: { run(context: unknown, options: unknown): Promise<AxeResults> };
  }
}

function describe(v: Result): string {
  const nodes = v.nodes.map((n) => `    ${n.target.join(" ")}\n      ${(n.failureSummary ?? "").replace(/\n/g, "\n      ")}`);
  return `${v.id} (${v.impact}): ${v.help}\n${nodes.join("\n")}`;
}

/** Runs axe on the page as it is now; fails on any serious or critical violation. */
async function audit(page: Page, what: string) {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: AXE_SOURCE });
  const results = await page.evaluate(
    (tags) =>
      window.axe.run(
        // A view is the MCP server's own page in a sandboxed iframe (its contents are not
        // Porthole's to fix); the frame itself, and everything around it, is still checked.
        { include: [document], exclude: [["iframe[data-testid=mcp-app-view]"]] },
        { runOnly: { type: "tag", values: tags }, iframes: false, resultTypes: ["violations"] },
      ),
    TAGS,
  );
  const theme = await page.evaluate(() => document.documentElement.dataset.theme);
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  const minor = results.violations.filter((v) => !serious.includes(v));
  if (minor.length > 0) console.log(`[${theme}] ${what}: lesser violations:\n${minor.map(describe).join("\n")}`);
  expect(serious.map(describe), `serious or critical accessibility violations: ${what} (${theme} theme)`).toEqual([]);
}

async function openSettings(page: Page) {
  await page.getByTestId("settings-button").click();
  await expect(page.getByTestId("settings")).toBeVisible();
}

/** Picks the theme in Settings › General and closes the dialog. */
async function useTheme(page: Page, theme: "light" | "dark") {
  await openSettings(page);
  await page.getByTestId("settings-tab-general").click();
  await page.getByTestId(`theme-${theme}`).check();
  await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
  await page.getByTestId("settings-close").click();
  await expect(page.getByTestId("settings")).toBeHidden();
}

const MARKDOWN = [
  "# Notes",
  "",
  "Some **bold** and *slanted* text, `inline code` and a [link](https://example.com/docs).",
  "",
  "- first",
  "- second",
  "",
  "> a quote",
  "",
  "| Name | Value |",
  "| ---- | ----- |",
  "| a    | 1     |",
  "",
  "```ts",
  'const greeting: string = "hello"; // a comment',
  "export function twice(n: number) { return n * 2; }",
  "```",
].join("\n");

for (const theme of ["light", "dark"] as const) {
  test.describe(`${theme} theme`, () => {
    test.beforeEach(async ({ page }) => {
      // The other scheme for the system, so the theme shown is the one picked.
      await page.emulateMedia({ colorScheme: theme === "light" ? "dark" : "light", reducedMotion: "reduce" });
      await useTheme(page, theme);
    });

    test("the main window with a streamed Markdown reply and a tool card", async ({ page }) => {
      await audit(page, "empty chat");

      await page.evaluate(() => window.portholeE2E.hold("reply"));
      await page.getByTestId("composer").fill(MARKDOWN);
      await page.getByTestId("send").click();
      const reply = page.locator('[data-testid="message"][data-role="assistant"]');
      await expect(reply).toHaveAttribute("data-status", "streaming");
      await expect(page.getByTestId("stop")).toBeVisible();
      await audit(page, "reply streaming");

      await page.evaluate(() => window.portholeE2E.release("reply"));
      await expect(reply).toHaveAttribute("data-status", "complete");
      await expect(reply.locator("pre code")).toBeVisible();
      await expect(reply.locator("table")).toBeVisible();

      await page.getByTestId("composer").fill("And the weather in Paris?");
      await page.getByTestId("composer").press("Enter");
      const card = page.getByTestId("tool-call");
      await expect(card).toHaveAttribute("data-status", "awaiting-approval");
      await audit(page, "Markdown reply, tool call awaiting approval");

      await card.getByTestId("approve-once").click();
      await expect(card).toHaveAttribute("data-status", "ok");
      await expect(reply.last()).toHaveText("It is sunny in Paris, 21 °C.");
      await card.getByTestId("tool-result").locator("summary").click();
      await expect(card.getByTestId("model-facing")).toBeVisible();
      await audit(page, "Markdown reply, tool call done with its result open");

      // "Always allow", then a call that runs on it: both cards are marked.
      await page.getByTestId("composer").fill("The weather again?");
      await page.getByTestId("composer").press("Enter");
      await page.getByTestId("approve-always").click();
      await expect(card.nth(1).getByTestId("tool-allowed-by")).toHaveAttribute("data-allowed-by", "always");
      await page.getByTestId("composer").fill("And the weather tomorrow?");
      await page.getByTestId("composer").press("Enter");
      await expect(card.nth(2).getByTestId("tool-allowed-by")).toHaveAttribute("data-allowed-by", "remembered");
      await audit(page, "calls marked as allowed by a standing approval");

      // Revoked in Settings › Approvals (the mark leads there), then a call denied.
      await card.nth(2).getByTestId("tool-allowed-by").click();
      await expect(page.getByTestId("approval")).toHaveCount(1);
      await audit(page, "settings, approvals tab with a remembered tool");
      await page.getByTestId("approval-revoke").click();
      await page.getByTestId("settings-close").click();
      await page.getByTestId("composer").fill("Weather once more?");
      await page.getByTestId("composer").press("Enter");
      await card.nth(3).getByTestId("deny").click();
      await expect(card.nth(3)).toHaveAttribute("data-status", "denied");
      await audit(page, "a denied call");
    });

    test("the settings dialog, every tab", async ({ page }) => {
      await openSettings(page);
      for (const tab of ["model", "servers", "agents", "approvals", "general"]) {
        await page.getByTestId(`settings-tab-${tab}`).click();
        await expect(page.getByTestId(`settings-tab-${tab}`)).toHaveAttribute("aria-selected", "true");
        await audit(page, `settings, ${tab} tab`);
      }
      // The agents tab's form, too.
      await page.getByTestId("settings-tab-agents").click();
      await page.getByTestId("agent-add").click();
      await expect(page.getByTestId("agent-form")).toBeVisible();
      await audit(page, "settings, agents tab with its form");
    });

    test("the tools panel with a tool picked", async ({ page }) => {
      await page.getByTestId("tools-button").click();
      const panel = page.getByTestId("tools-panel");
      await expect(panel).toBeVisible();
      await panel.locator('[data-testid="tool-entry"][data-tool-name="repeat"]').click();
      await expect(panel.getByTestId("tool-form")).toBeVisible();
      await audit(page, "tools panel, repeat picked");

      // A required field left empty: the form says so.
      await panel.locator('[data-testid="tool-entry"][data-tool-name="get_weather"]').click();
      await panel.getByTestId("tool-run").click();
      await expect(panel.locator('[data-testid="tool-field"][data-field="city"]')).toHaveAttribute("aria-invalid", "true");
      await audit(page, "tools panel, get_weather refused");
    });

    test("the workbench, its server, traffic and host emulation tabs", async ({ page }) => {
      await page.getByTestId("workbench-button").click();
      await expect(page.getByTestId("server-info-name")).toBeVisible();
      await audit(page, "workbench, server tab");
      await page.locator('[data-testid="workbench-tab"][data-tab="traffic"]').click();
      await expect(page.getByTestId("traffic-empty")).toBeVisible();
      await audit(page, "workbench, traffic tab");
      await page.locator('[data-testid="workbench-tab"][data-tab="host"]').click();
      await expect(page.getByTestId("host-preset")).toBeVisible();
      await audit(page, "workbench, host emulation tab");
    });

    test("the conversation search with hits, and a stored conversation opened", async ({ page }) => {
      await page.getByTestId("conversation-search").fill("paris");
      await expect(page.getByTestId("search-hit")).not.toHaveCount(0);
      await audit(page, "search hits");

      await page.locator(`[data-testid="search-hit"][data-conversation-id="${SEEDED.weather}"]`).first().click();
      await expect(page.getByTestId("tool-call").getByTestId("view-state")).toBeVisible();
      await audit(page, "stored conversation with an expired view");
    });
  });
}
