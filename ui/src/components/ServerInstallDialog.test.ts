import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/svelte";
import type { ServerInstallRequest } from "../lib/generated/ServerInstallRequest";

let handler: ((request: ServerInstallRequest) => void) | null = null;
let pending: ServerInstallRequest | null = null;
const answer = vi.fn(async (_id: number, _add: boolean): Promise<unknown> => null);

vi.mock("../lib/api", async (original) => ({
  ...(await original<typeof import("../lib/api")>()),
  api: {
    onServerInstall: async (h: (request: ServerInstallRequest) => void) => {
      handler = h;
      return () => {};
    },
    serverInstallRequest: async () => pending,
    answerServerInstall: (id: number, add: boolean) => answer(id, add),
  },
}));

import ServerInstallDialog from "./ServerInstallDialog.svelte";

const stdio = (id: number): ServerInstallRequest => ({
  id,
  refusal: null,
  install: {
    name: "files",
    transport: "stdio",
    commandLine: "npx -y @scope/files-server '/home/me/My Documents'",
    cwd: null,
    url: null,
    envNames: ["API_KEY"],
    headerNames: [],
    mcpApps: true,
    enabled: true,
  },
});

afterEach(cleanup);
beforeEach(() => {
  handler = null;
  pending = null;
  answer.mockReset().mockImplementation(async () => null);
});

describe("ServerInstallDialog", () => {
  it("shows what a link's server would run, and adds it only on yes", async () => {
    pending = stdio(1);
    const view = render(ServerInstallDialog);
    const dialog = await view.findByTestId("server-install-dialog");
    expect(view.getByTestId("server-install-name").textContent).toBe("files");
    expect(view.getByTestId("server-install-command").textContent).toBe("npx -y @scope/files-server '/home/me/My Documents'");
    expect(view.getByTestId("server-install-env").textContent?.trim()).toBe("API_KEY (values not shown)");
    expect(view.getByTestId("server-install-apps").textContent).toContain("Asks for it");
    expect(view.queryByTestId("server-install-url")).toBeNull();
    // Focus starts on the safe answer.
    expect(document.activeElement).toBe(view.getByTestId("server-install-cancel"));
    expect(answer).not.toHaveBeenCalled();
    answer.mockImplementation(async () => ({ servers: [] }));
    await fireEvent.click(view.getByTestId("server-install-add"));
    expect(answer).toHaveBeenCalledWith(1, true);
    await waitFor(() => expect(view.queryByTestId("server-install-dialog")).toBeNull());
    expect(view.getByTestId("server-install-note").textContent).toContain("Added the MCP server “files”");
    expect(dialog.isConnected).toBe(false);
  });

  it("Esc declines; a remote server shows its URL and header names", async () => {
    const view = render(ServerInstallDialog);
    await waitFor(() => expect(handler).not.toBeNull());
    handler!({
      id: 2,
      refusal: null,
      install: { ...stdio(2).install!, transport: "http", commandLine: null, url: "https://mcp.example.com/mcp", envNames: [], headerNames: ["Authorization"], mcpApps: false },
    });
    await view.findByTestId("server-install-dialog");
    expect(view.getByTestId("server-install-url").textContent).toBe("https://mcp.example.com/mcp");
    expect(view.getByTestId("server-install-headers").textContent?.trim()).toBe("Authorization (values not shown)");
    expect(view.getByTestId("server-install-apps").textContent?.trim()).toBe("Off");
    await fireEvent.keyDown(window, { key: "Escape" });
    expect(answer).toHaveBeenCalledWith(2, false);
    await waitFor(() => expect(view.queryByTestId("server-install-dialog")).toBeNull());
    expect(view.queryByTestId("server-install-note")).toBeNull();
  });

  it("a refused link says why and offers nothing to add", async () => {
    const view = render(ServerInstallDialog);
    await waitFor(() => expect(handler).not.toBeNull());
    handler!({ id: 3, install: null, refusal: "the install link has no config=" });
    await view.findByTestId("server-install-dialog");
    expect(view.getByTestId("server-install-refusal").textContent).toBe("the install link has no config=");
    expect(view.queryByTestId("server-install-add")).toBeNull();
    await fireEvent.click(view.getByTestId("server-install-cancel"));
    expect(answer).toHaveBeenCalledWith(3, false);
  });

  it("a failed add says nothing was added, and why", async () => {
    pending = stdio(4);
    answer.mockImplementation(async () => {
      throw { code: "invalid", message: "a server named \"files\" is already configured" };
    });
    const view = render(ServerInstallDialog);
    await view.findByTestId("server-install-dialog");
    await fireEvent.click(view.getByTestId("server-install-add"));
    await waitFor(() =>
      expect(view.getByTestId("server-install-note").textContent).toContain("Nothing was added: a server named \"files\" is already configured"),
    );
  });
});
