// The front end's flows in headless Chromium: the real app on a mocked Tauri IPC (e2e/harness.ts).
// The browser is the system's Chromium (Playwright downloads none): $PORTHOLE_CHROMIUM, else
// /usr/bin/chromium, else chromium or chromium-browser on PATH (.ci/install-deps installs one).
import { existsSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { delimiter, join } from "node:path";
import { defineConfig } from "@playwright/test";

function chromium(): string {
  const chosen = process.env.PORTHOLE_CHROMIUM;
  if (chosen) {
    if (!existsSync(chosen)) throw new Error(`PORTHOLE_CHROMIUM is ${chosen}, which does not exist`);
    return chosen;
  }
  if (existsSync("/usr/bin/chromium")) return "/usr/bin/chromium";
  for (const name of ["chromium", "chromium-browser"]) {
    for (const dir of (process.env.PATH ?? "").split(delimiter)) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  throw new Error("No Chromium found: set PORTHOLE_CHROMIUM to its executable, or run .ci/install-deps");
}

/** A port nothing listens on now: the flows' server never collides with another run's. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

// Chosen once, in the runner; its workers inherit it through the environment.
process.env.PORTHOLE_E2E_PORT ??= String(await freePort());
const port = Number(process.env.PORTHOLE_E2E_PORT);

export default defineConfig({
  testDir: "e2e",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: "list",
  timeout: 20_000,
  expect: { timeout: 5_000 },
  outputDir: "test-results",
  use: {
    browserName: "chromium",
    headless: true,
    launchOptions: { executablePath: chromium() },
    baseURL: `http://127.0.0.1:${port}`,
    viewport: { width: 1280, height: 860 },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  webServer: {
    command: `npx vite build -c vite.e2e.config.ts --logLevel warn && npx vite preview -c vite.e2e.config.ts --port ${port}`,
    url: `http://127.0.0.1:${port}/e2e/harness.html`,
    reuseExistingServer: false,
    timeout: 120_000,
  },
});
