// The Playwright flows' page (e2e/harness.html: the real app over a mocked Tauri IPC), built
// like the app and served by `vite preview` (see playwright.config.ts).
import { defineConfig, mergeConfig } from "vite";
import app from "./vite.config.ts";

export default mergeConfig(
  app,
  defineConfig({
    build: {
      outDir: "dist-e2e",
      emptyOutDir: true,
      rolldownOptions: { input: "e2e/harness.html" },
    },
    preview: { host: "127.0.0.1", strictPort: true },
  }),
);
