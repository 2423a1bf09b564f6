// What every flow shares: the harness page opened fresh (a fresh fake back end), and checks
// after the flow that the page threw nothing, logged no error, and invoked no command the fake
// back end does not implement.
import { test as base, expect, type Page } from "@playwright/test";
import type { Invocation } from "./control";

export { expect };

export const test = base.extend({
  page: async ({ page }, use) => {
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(`uncaught: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console.error: ${m.text()}`);
    });
    await page.goto("/e2e/harness.html");
    await use(page);
    const unknown = await page.evaluate(() => window.portholeE2E.unknownCommands);
    expect(unknown, "commands the app invoked that e2e/backend.ts does not implement").toEqual([]);
    expect(problems, "errors in the page").toEqual([]);
  },
});

/** The arguments of every invocation of `cmd` so far. */
export async function invocations(page: Page, cmd: string): Promise<Invocation["args"][]> {
  return page.evaluate((cmd) => window.portholeE2E.invocations.filter((i) => i.cmd === cmd).map((i) => i.args), cmd);
}
