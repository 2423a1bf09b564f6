// The page the Playwright flows open: Tauri's IPC and event plugin mocked with
// @tauri-apps/api/mocks, answered by the in-memory back end, then the real app (src/main.ts).
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import { FakeBackend } from "./backend";
import type { Held } from "./control";

mockWindows("main");
// The profile the app's shell names on the page's root before the page's code runs.
const profile = new URLSearchParams(location.search).get("profile");
if (profile) document.documentElement.dataset.profile = profile;
const backend = new FakeBackend();
mockIPC((cmd, args) => backend.invoke(cmd, (args ?? {}) as Record<string, unknown>), { shouldMockEvents: true });
window.portholeE2E = backend.control;
for (const held of new URLSearchParams(location.search).getAll("hold")) backend.control.hold(held as Held);

// Imported only now: the app asks the back end for its state as soon as it is mounted.
await import("../src/main");
