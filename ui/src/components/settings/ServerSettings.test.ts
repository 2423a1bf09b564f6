import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor, within } from "@testing-library/svelte";
import type { ServerDraft, ServerEntry, ServerLog, ServerSettings, ServerStatus } from "../../lib/api";

let serversChanged: ((servers: ServerStatus[]) => void) | null = null;
let settings: ServerSettings;
let statuses: ServerStatus[];
const calls = vi.hoisted(() => ({
  saveServer: vi.fn(async (_original: string | null, _draft: ServerDraft): Promise<ServerSettings> => settings),
  removeServer: vi.fn(async (_name: string): Promise<ServerSettings> => settings),
  setServerEnabled: vi.fn(async (_name: string, _on: boolean): Promise<ServerSettings> => settings),
  setServerMcpApps: vi.fn(async (_name: string, _on: boolean): Promise<ServerSettings> => settings),
  setMcpApps: vi.fn(async (_on: boolean): Promise<ServerSettings> => settings),
  serverLog: vi.fn(
    async (_name: string): Promise<ServerLog> => ({ path: "/logs/servers/fs.log", text: "booted\n", truncated: false }),
  ),
  signInServer: vi.fn(async (_name: string) => {}),
  signOutServer: vi.fn(async (name: string) => `Signed out of ${name}: its stored sign-in was deleted.`),
  clearViewData: vi.fn(async (name: string) => `Cleared what ${name}'s views stored.`),
  importPreview: vi.fn(async (path: string) => ({
    path,
    servers: [
      { name: "fs", endpoint: "stdio: npx fs", importable: true, note: null },
      { name: "legacy", endpoint: "https://h/sse", importable: false, note: "field \"type\": HTTP+SSE is not supported" },
      { name: "github", endpoint: "https://api.example/mcp", importable: true, note: null },
    ],
  })),
  chooseImportFile: vi.fn(async (): Promise<string | null> => null),
  importServers: vi.fn(async (_path: string, names: string[]) => ({
    settings,
    imported: names.map((n) => ({ name: n, importedAs: n === "fs" ? "fs-2" : n })),
  })),
}));

vi.mock("../../lib/api", async (original) => ({
  ...(await original<typeof import("../../lib/api")>()),
  api: {
    onServersChanged: async (handler: (servers: ServerStatus[]) => void) => {
      serversChanged = handler;
      return () => (serversChanged = null);
    },
    listServers: async () => statuses,
    serverSettings: async () => settings,
    importCandidates: async () => [{ client: "Cursor", path: "/home/me/.cursor/mcp.json" }],
    ...Object.fromEntries(Object.entries(calls).map(([name, fn]) => [name, (...args: unknown[]) => (fn as (...a: unknown[]) => unknown)(...args)])),
  },
}));

import ServerSettingsView, { rowState } from "./ServerSettings.svelte";
import { refused } from "../../lib/testing/errors";

const entry = (over: Partial<ServerEntry>): ServerEntry => ({
  name: "fs",
  source: "/p/config.json",
  editable: true,
  shadowedBy: null,
  transport: "stdio",
  command: "npx",
  args: ["-y", "server-filesystem"],
  envKeys: ["API_KEY"],
  cwd: "",
  url: "",
  headerKeys: [],
  enabled: true,
  mcpApps: true,
  problem: null,
  ...over,
});

const status = (over: Partial<ServerStatus>): ServerStatus => ({
  name: "fs",
  state: "connected",
  error: null,
  endpoint: "stdio: npx",
  serverInfo: "fs 1.0",
  protocolVersion: "2025-11-25",
  mcpApps: true,
  tools: [],
  ...over,
});

function baseSettings(over: Partial<ServerSettings> = {}): ServerSettings {
  return {
    configFile: "/p/config.json",
    servers: [
      entry({}),
      entry({ name: "remote", transport: "http", command: "", args: [], envKeys: [], url: "https://r.example/mcp", headerKeys: ["Authorization"] }),
      entry({ name: "shared", source: "/etc/extra.json", editable: false }),
    ],
    mcpApps: true,
    mcpAppsEffective: true,
    mcpAppsEnvOff: false,
    mcpAppsSetBy: null,
    problems: [],
    ...over,
  };
}

beforeEach(() => {
  settings = baseSettings();
  statuses = [
    status({}),
    status({ name: "remote", state: "failed", error: "the server requires sign-in (OAuth)", endpoint: "https://r.example/mcp" }),
    status({ name: "shared", state: "connecting" }),
  ];
  for (const fn of Object.values(calls)) fn.mockClear();
});
afterEach(cleanup);

async function setup() {
  const view = render(ServerSettingsView);
  await view.findAllByTestId("server-row");
  return view;
}

const row = (view: Awaited<ReturnType<typeof setup>>, name: string) =>
  view.getAllByTestId("server-row").find((r) => r.dataset.serverName === name)!;

describe("ServerSettings", () => {
  it("shows each server's live state, last error and controls, and follows servers-changed", async () => {
    const view = await setup();
    expect(view.getAllByTestId("server-row").map((r) => [r.dataset.serverName, r.dataset.state])).toEqual([
      ["fs", "connected"],
      ["remote", "failed"],
      ["shared", "connecting"],
    ]);
    const remote = within(row(view, "remote"));
    expect(remote.getByTestId("server-error").textContent).toContain("requires sign-in");
    remote.getByTestId("server-sign-in");
    remote.getByTestId("server-sign-out");
    expect(within(row(view, "fs")).queryByTestId("server-sign-in")).toBeNull();
    // A --mcp-config server is shown, but cannot be changed here.
    const shared = within(row(view, "shared"));
    expect((shared.getByTestId("server-enabled") as HTMLInputElement).disabled).toBe(true);
    expect(shared.queryByTestId("server-remove")).toBeNull();
    expect(shared.getByText(/read-only/)).toBeTruthy();
    // Every control has a name for screen readers.
    expect(within(row(view, "fs")).getByRole("checkbox", { name: "fs: enabled" })).toBeTruthy();
    expect(within(row(view, "fs")).getByRole("button", { name: "Remove fs" })).toBeTruthy();

    serversChanged!([status({ state: "failed", error: "the process exited" }), statuses[1], statuses[2]]);
    await waitFor(() => expect(row(view, "fs").dataset.state).toBe("failed"));
    expect(within(row(view, "fs")).getByTestId("server-error").textContent).toContain("the process exited");
  });

  it("switches a server, the MCP Apps switches, and says what the environment overrides", async () => {
    const view = await setup();
    calls.setServerEnabled.mockImplementationOnce(async () => {
      settings = { ...settings, servers: settings.servers.map((s) => (s.name === "fs" ? { ...s, enabled: false } : s)) };
      return settings;
    });
    await fireEvent.click(within(row(view, "fs")).getByTestId("server-enabled"));
    expect(calls.setServerEnabled).toHaveBeenCalledWith("fs", false);
    await fireEvent.click(within(row(view, "fs")).getByTestId("server-mcp-apps"));
    await waitFor(() => expect(calls.setServerMcpApps).toHaveBeenCalledWith("fs", false));

    calls.setMcpApps.mockImplementationOnce(async () => Promise.reject(refused("io", "cannot write /p/config.json: disk full")));
    const global = view.getByTestId("mcp-apps-global") as HTMLInputElement;
    await waitFor(() => expect(global.disabled).toBe(false));
    await fireEvent.click(global);
    expect(calls.setMcpApps).toHaveBeenCalledWith(false);
    expect((await view.findByTestId("server-settings-error")).textContent).toContain("disk full");
    expect(global.checked).toBe(true);

    cleanup();
    settings = baseSettings({ mcpAppsEnvOff: true, mcpAppsEffective: false });
    const again = await setup();
    expect(again.getByTestId("mcp-apps-env-off").textContent).toContain("PORTHOLE_MCP_APPS=off");
  });

  it("refuses an invalid new server in the form with the reasons, and sends a valid one", async () => {
    const view = await setup();
    await fireEvent.click(view.getByTestId("add-server"));
    const form = within(view.getByTestId("server-form"));
    await fireEvent.input(form.getByTestId("server-form-name"), { target: { value: "fs" } });
    await fireEvent.input(form.getByTestId("server-form-env"), { target: { value: "TOKEN" } });
    await fireEvent.click(form.getByTestId("server-form-save"));
    const error = form.getByTestId("server-form-error");
    expect(error.getAttribute("role")).toBe("alert");
    expect(error.textContent).toContain('Name: a server named "fs" already exists');
    expect(error.textContent).toContain("Command: a stdio server needs a command");
    expect(error.textContent).toContain("Environment: line 1: TOKEN has no value; write TOKEN=value");
    expect(form.getByTestId("server-form-name").getAttribute("aria-invalid")).toBe("true");
    expect(form.getByLabelText("Name")).toBe(form.getByTestId("server-form-name"));
    expect(calls.saveServer).not.toHaveBeenCalled();

    // HTTP: the URL must be http(s).
    await fireEvent.change(form.getByTestId("server-form-transport"), { target: { value: "http" } });
    await fireEvent.input(form.getByTestId("server-form-name"), { target: { value: "docs" } });
    await fireEvent.input(form.getByTestId("server-form-url"), { target: { value: "ftp://docs.example/mcp" } });
    await fireEvent.click(form.getByTestId("server-form-save"));
    expect(form.getByTestId("server-form-error").textContent).toContain("URL:");
    await fireEvent.input(form.getByTestId("server-form-url"), { target: { value: "https://docs.example/mcp" } });
    await fireEvent.input(form.getByTestId("server-form-headers"), { target: { value: "X-Team: docs" } });
    await fireEvent.click(form.getByTestId("server-form-save"));
    expect(calls.saveServer).toHaveBeenCalledWith(null, {
      name: "docs",
      transport: { type: "http", url: "https://docs.example/mcp", headers: ["X-Team: docs"] },
      enabled: true,
      mcpApps: true,
    });
    await waitFor(() => expect(view.queryByTestId("server-form")).toBeNull());
    expect(view.getByTestId("server-settings-note").textContent).toBe("Added docs.");
  });

  it("edits with stored secrets kept by name, and shows Rust's refusal in the form", async () => {
    const view = await setup();
    await fireEvent.click(within(row(view, "fs")).getByTestId("server-edit"));
    const form = within(view.getByTestId("server-form"));
    expect((form.getByTestId("server-form-env") as HTMLTextAreaElement).value).toBe("API_KEY");
    expect((form.getByTestId("server-form-args") as HTMLTextAreaElement).value).toBe("-y\nserver-filesystem");
    calls.saveServer.mockImplementationOnce(async () => Promise.reject(refused("invalid", "cwd: no such folder")));
    await fireEvent.input(form.getByTestId("server-form-command"), { target: { value: "node" } });
    await fireEvent.click(form.getByTestId("server-form-save"));
    expect((await form.findByTestId("server-form-error")).textContent).toContain("cwd: no such folder");
    expect(calls.saveServer).toHaveBeenCalledWith("fs", {
      name: "fs",
      transport: { type: "stdio", command: "node", args: ["-y", "server-filesystem"], env: ["API_KEY"], cwd: "" },
      enabled: true,
      mcpApps: true,
    });
    expect(view.getByTestId("server-form")).toBeTruthy();
  });

  it("removes, shows the log, and signs in and out", async () => {
    const view = await setup();
    await fireEvent.click(within(row(view, "fs")).getByTestId("server-log-button"));
    expect((await view.findByTestId("server-log")).textContent).toBe("booted\n");
    expect(calls.serverLog).toHaveBeenCalledWith("fs");
    calls.serverLog.mockImplementationOnce(async () => ({ path: "/logs/servers/remote.log", text: null, truncated: false }));
    await fireEvent.click(within(row(view, "remote")).getByTestId("server-log-button"));
    await waitFor(() => expect(within(row(view, "remote")).getByTestId("server-log").textContent).toContain("No log yet"));

    await fireEvent.click(within(row(view, "fs")).getByTestId("server-clear-view-data"));
    expect(calls.clearViewData).toHaveBeenCalledWith("fs");
    await waitFor(() => expect(view.getByTestId("server-settings-note").textContent).toContain("Cleared what fs's views stored"));
    calls.clearViewData.mockImplementationOnce(async () => Promise.reject(refused("not_found", "there is no server named \"fs\"")));
    await fireEvent.click(within(row(view, "fs")).getByTestId("server-clear-view-data"));
    expect((await within(row(view, "fs")).findByRole("alert")).textContent).toContain("Clearing its view data failed: there is no server");

    await fireEvent.click(within(row(view, "remote")).getByTestId("server-sign-out"));
    expect(calls.signOutServer).toHaveBeenCalledWith("remote");
    await waitFor(() => expect(view.getByTestId("server-settings-note").textContent).toContain("Signed out of remote"));
    calls.signInServer.mockImplementationOnce(async () => Promise.reject(refused("server", "OAuth discovery: no metadata")));
    await fireEvent.click(within(row(view, "remote")).getByTestId("server-sign-in"));
    expect((await within(row(view, "remote")).findByRole("alert")).textContent).toContain("Sign-in failed: OAuth discovery");

    calls.removeServer.mockImplementationOnce(async () => {
      settings = { ...settings, servers: settings.servers.filter((s) => s.name !== "fs") };
      return settings;
    });
    await fireEvent.click(within(row(view, "fs")).getByTestId("server-remove"));
    await fireEvent.click(within(row(view, "fs")).getByTestId("server-remove-confirm"));
    expect(calls.removeServer).toHaveBeenCalledWith("fs");
    await waitFor(() => expect(view.getAllByTestId("server-row").map((r) => r.dataset.serverName)).toEqual(["remote", "shared"]));
    await waitFor(() => expect(document.activeElement).toBe(view.getByTestId("add-server")));
  });

  it("removes a server only once it is confirmed; Cancel (first in focus) or Esc takes the question back", async () => {
    const view = await setup();
    const fs = within(row(view, "fs"));
    const removeButton = fs.getByTestId("server-remove");
    await fireEvent.click(removeButton);
    expect(calls.removeServer).not.toHaveBeenCalled();
    expect(removeButton.getAttribute("aria-expanded")).toBe("true");
    expect(fs.getByRole("group").textContent).toContain("Remove fs from /p/config.json?");
    expect(document.activeElement).toBe(fs.getByTestId("server-remove-cancel"));

    await fireEvent.click(fs.getByTestId("server-remove-cancel"));
    expect(fs.queryByTestId("server-remove-confirm")).toBeNull();
    expect(removeButton.getAttribute("aria-expanded")).toBe("false");
    await waitFor(() => expect(document.activeElement).toBe(removeButton));

    await fireEvent.click(removeButton);
    const escape = await fireEvent.keyDown(fs.getByTestId("server-remove-confirm"), { key: "Escape" });
    expect(escape).toBe(false); // handled here, not by the Settings dialog
    expect(fs.queryByTestId("server-remove-cancel")).toBeNull();
    await waitFor(() => expect(document.activeElement).toBe(removeButton));
    expect(calls.removeServer).not.toHaveBeenCalled();

    // Refused by the back end: the reason, the row kept, focus back on Remove.
    calls.removeServer.mockImplementationOnce(async () => Promise.reject(refused("invalid", "config.json is read-only")));
    await fireEvent.click(removeButton);
    await fireEvent.click(fs.getByTestId("server-remove-confirm"));
    expect(calls.removeServer).toHaveBeenCalledWith("fs");
    expect((await view.findByTestId("server-settings-error")).textContent).toContain("config.json is read-only");
    await waitFor(() => expect(document.activeElement).toBe(removeButton));
    expect(fs.queryByTestId("server-remove-confirm")).toBeNull();
    expect(view.getAllByTestId("server-row")).toHaveLength(3);
  });

  it("imports the chosen servers of another client's file and says which were renamed", async () => {
    const view = await setup();
    // A suggestion fills the path and lists the file's servers.
    await fireEvent.click(await view.findByText(/Cursor:/));
    expect(calls.importPreview).toHaveBeenCalledWith("/home/me/.cursor/mcp.json");
    const boxes = await view.findAllByTestId("import-server");
    expect(boxes.map((b) => [b.dataset.serverName, (b as HTMLInputElement).checked, (b as HTMLInputElement).disabled])).toEqual([
      ["fs", true, false],
      ["legacy", false, true],
      ["github", true, false],
    ]);
    expect(view.getByText(/HTTP\+SSE is not supported/)).toBeTruthy();
    await fireEvent.click(boxes[2]);
    await fireEvent.click(view.getByTestId("import-confirm"));
    expect(calls.importServers).toHaveBeenCalledWith("/home/me/.cursor/mcp.json", ["fs"]);
    expect((await view.findByTestId("import-note")).textContent).toBe("Imported fs as fs-2 (the name fs was taken).");

    // A file chosen in the desktop's dialog is shown as a typed path would be; a cancelled
    // dialog changes nothing.
    await fireEvent.click(view.getByTestId("import-choose"));
    expect(calls.chooseImportFile).toHaveBeenCalledTimes(1);
    expect(calls.importPreview).toHaveBeenCalledTimes(1);
    calls.chooseImportFile.mockImplementationOnce(async () => "/home/me/.config/Code/User/mcp.json");
    await fireEvent.click(view.getByTestId("import-choose"));
    await waitFor(() => expect(calls.importPreview).toHaveBeenLastCalledWith("/home/me/.config/Code/User/mcp.json"));
    expect(await view.findByText("/home/me/.config/Code/User/mcp.json", { selector: "legend code" })).toBeTruthy();

    // A typed path that cannot be read: the reason, in the import section.
    calls.importPreview.mockImplementationOnce(async () => Promise.reject(refused("invalid", '"mcp.json" is not a full path')));
    await fireEvent.input(view.getByTestId("import-path"), { target: { value: "mcp.json" } });
    await fireEvent.click(view.getByTestId("import-load"));
    expect((await view.findByTestId("import-error")).textContent).toContain("not a full path");
    expect(view.getByTestId("import-path").getAttribute("aria-invalid")).toBe("true");
  });

  it("says why an entry is not running", () => {
    expect(rowState(entry({ problem: 'field "args": invalid type' }), [])).toMatchObject({ state: "failed", error: 'field "args": invalid type' });
    expect(rowState(entry({ shadowedBy: "/etc/extra.json" }), [status({})])).toMatchObject({ state: "disabled", label: "not used" });
    expect(rowState(entry({ enabled: false }), [])).toMatchObject({ state: "disabled" });
    expect(rowState(entry({}), [status({ tools: [] })]).label).toBe("connected · 0 tools");
  });

  it("reports a back end that does not answer", async () => {
    const { api } = await import("../../lib/api");
    const original = api.serverSettings;
    api.serverSettings = async () => Promise.reject("no back end");
    const view = render(ServerSettingsView);
    expect((await view.findByTestId("server-settings-error")).textContent).toContain("could not be read: no back end");
    api.serverSettings = original;
  });
});
