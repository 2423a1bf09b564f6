import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, within } from "@testing-library/svelte";
import type { CatalogTool, ServerStatus } from "../lib/api";
import ToolsPanel from "./ToolsPanel.svelte";

afterEach(cleanup);

function tool(name: string, over: Partial<CatalogTool> = {}): CatalogTool {
  return {
    server: "demo",
    name,
    modelName: name,
    title: null,
    description: null,
    inputSchema: { type: "object" },
    uiResourceUri: null,
    visibility: ["model", "app"],
    widget: { kind: "mcp-app", invoking: null, invoked: null },
    metaProblems: [],
    ...over,
  };
}

const forecast = tool("forecast", {
  description: "The weather forecast for a city.",
  uiResourceUri: "ui://demo/forecast.html",
  inputSchema: {
    type: "object",
    properties: {
      city: { type: "string", description: "Which city" },
      days: { type: "integer", minimum: 1, maximum: 7, default: 3 },
      unit: { type: "string", enum: ["celsius", "fahrenheit"] },
      detailed: { type: "boolean" },
      tags: { type: "array", items: { type: "string" } },
      where: { type: "object", properties: { lat: { type: "number" } } },
    },
    required: ["city"],
  },
});
const poll = tool("poll_stats", { visibility: ["app"], uiResourceUri: "ui://demo/monitor.html" });
const sha = tool("sha256", { visibility: ["model"], inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } });
const odd = tool("odd", { server: "other", inputSchema: { type: "object", properties: { pick: { oneOf: [{ type: "string" }, { type: "number" }] } } } });

function server(name: string, tools: CatalogTool[], over: Partial<ServerStatus> = {}): ServerStatus {
  return {
    name,
    state: "connected",
    error: null,
    endpoint: "stdio",
    serverInfo: null,
    protocolVersion: null,
    mcpApps: true,
    tools,
    ...over,
  };
}

const servers = [server("demo", [forecast, poll, sha]), server("other", [odd]), server("down", [], { state: "failed", error: "exited with 1" })];

function open(props: Partial<{ servers: ServerStatus[]; busy: boolean; inConversation: boolean; onRun: ReturnType<typeof vi.fn> }> = {}) {
  const onRun = props.onRun ?? vi.fn(async () => null);
  const onClose = vi.fn();
  const view = render(ToolsPanel, { servers, onClose, ...props, onRun: onRun as never });
  return { ...view, onRun, onClose };
}

const entry = (root: HTMLElement, name: string) => root.querySelector(`[data-testid=tool-entry][data-tool-name="${name}"]`) as HTMLElement;
/** The error a field's description points to. */
const fieldError = (control: HTMLElement) =>
  (control.getAttribute("aria-describedby") ?? "")
    .split(" ")
    .map((id) => document.getElementById(id))
    .find((el) => el?.classList.contains("error"))?.textContent ?? null;
const field = (root: HTMLElement, name: string) => root.querySelector(`[data-testid=tool-field][data-field="${name}"]`) as HTMLInputElement;

describe("ToolsPanel", () => {
  it("lists every server's tools, marking views and app-only tools, and filters them", async () => {
    const { getAllByTestId, getByTestId, container, queryByText, onClose } = open();
    const entries = getAllByTestId("tool-entry");
    expect(entries.map((e) => [e.dataset.server, e.dataset.toolName, e.dataset.hasView])).toEqual([
      ["demo", "forecast", "true"],
      ["demo", "poll_stats", "true"],
      ["demo", "sha256", "false"],
      ["other", "odd", "false"],
    ]);
    expect(within(entry(container, "forecast")).getByText("view")).toBeTruthy();
    expect(within(entry(container, "poll_stats")).getByText("app only")).toBeTruthy();
    expect(within(entry(container, "sha256")).getByText("model only")).toBeTruthy();
    expect(within(entry(container, "forecast")).queryByText("model only")).toBeNull();
    expect(queryByText("exited with 1")).toBeTruthy();

    await fireEvent.input(getByTestId("tools-search"), { target: { value: "WEATHER" } });
    expect(getAllByTestId("tool-entry").map((e) => e.dataset.toolName)).toEqual(["forecast"]);
    await fireEvent.input(getByTestId("tools-search"), { target: { value: "nothing like it" } });
    expect(queryByText(/No tool matches/)).toBeTruthy();
    // The search box's own clear button (not WebKitGTK's `type="search"` one) shows every tool again.
    expect((getByTestId("tools-search") as HTMLInputElement).type).toBe("text");
    await fireEvent.click(getByTestId("tools-search-clear"));
    expect(queryByText(/No tool matches/)).toBeNull();
    expect(getAllByTestId("tool-entry").length).toBeGreaterThan(1);

    await fireEvent.click(getByTestId("tools-panel-close"));
    expect(onClose).toHaveBeenCalledOnce();
  });

  it("a view is marked only where MCP Apps is on for the server", () => {
    const { getAllByTestId } = open({ servers: [server("demo", [forecast], { mcpApps: false })] });
    expect(getAllByTestId("tool-entry")[0].dataset.hasView).toBe("false");
  });

  it("shows the selected tool's form from its schema, with defaults, and runs it with typed arguments", async () => {
    const { container, getByTestId, queryByTestId, onRun, getByText, getByLabelText } = open({ inConversation: true });
    await fireEvent.click(entry(container, "forecast"));
    expect(entry(container, "forecast").getAttribute("aria-pressed")).toBe("true");
    expect(getByText("The weather forecast for a city.")).toBeTruthy();
    expect(getByText("Runs in the open conversation.")).toBeTruthy();
    const form = getByTestId("tool-form");
    const names = [...form.querySelectorAll<HTMLElement>("[data-testid=tool-field]")].map((f) => f.dataset.field);
    expect(names).toEqual(["city", "days", "unit", "detailed", "tags", "lat"]);
    expect(field(container, "days").value).toBe("3");
    expect(field(container, "days").type).toBe("number");
    expect([field(container, "days").min, field(container, "days").max]).toEqual(["1", "7"]);
    expect(field(container, "unit").tagName).toBe("SELECT");
    expect(field(container, "detailed").type).toBe("checkbox");
    expect(field(container, "tags").tagName).toBe("TEXTAREA");
    expect(field(container, "city").required).toBe(true);
    // Every control is labelled.
    expect(getByLabelText(/city/)).toBe(field(container, "city"));
    expect(getByLabelText(/tags/)).toBe(field(container, "tags"));
    expect(getByLabelText(/lat/)).toBe(field(container, "lat"));
    expect(getByLabelText("Search tools")).toBe(getByTestId("tools-search"));

    // A required field left empty stops the run and says so.
    await fireEvent.click(getByTestId("tool-run"));
    expect(onRun).not.toHaveBeenCalled();
    expect(getByTestId("tool-form-error").textContent).toBe("Fix the marked field: city.");
    expect(field(container, "city").getAttribute("aria-invalid")).toBe("true");
    expect(fieldError(field(container, "city"))).toBe("city is required");
    expect(document.activeElement).toBe(field(container, "city"));

    await fireEvent.input(field(container, "city"), { target: { value: "Bergen" } });
    expect(queryByTestId("tool-form-error")).toBeNull();
    await fireEvent.input(field(container, "days"), { target: { value: "5" } });
    await fireEvent.change(field(container, "unit"), { target: { value: '"fahrenheit"' } });
    await fireEvent.click(field(container, "detailed"));
    await fireEvent.input(field(container, "tags"), { target: { value: "a\nb\n" } });
    await fireEvent.input(field(container, "lat"), { target: { value: "60.39" } });
    await fireEvent.click(getByTestId("tool-run"));
    expect(onRun).toHaveBeenCalledWith("demo", "forecast", {
      city: "Bergen",
      days: 5,
      unit: "fahrenheit",
      detailed: true,
      tags: ["a", "b"],
      where: { lat: 60.39 },
    });
  });

  it("a whole number field refuses a fraction", async () => {
    const { container, getByTestId, onRun } = open();
    await fireEvent.click(entry(container, "forecast"));
    await fireEvent.input(field(container, "city"), { target: { value: "Oslo" } });
    await fireEvent.input(field(container, "days"), { target: { value: "2.5" } });
    await fireEvent.click(getByTestId("tool-run"));
    expect(onRun).not.toHaveBeenCalled();
    expect(getByTestId("tool-form-error").textContent).toBe("Fix the marked field: days.");
    expect(fieldError(field(container, "days"))).toBe('days must be a whole number (not "2.5")');

    await fireEvent.input(field(container, "city"), { target: { value: "" } });
    await fireEvent.input(field(container, "days"), { target: { value: "9" } });
    await fireEvent.click(getByTestId("tool-run"));
    expect(getByTestId("tool-form-error").textContent).toBe("Fix the marked fields: city, days.");
    expect(fieldError(field(container, "days"))).toBe("days must be at most 7");
    expect(onRun).not.toHaveBeenCalled();
  });

  it("a number field holding text that is not a number says so and holds Run", async () => {
    const { container, getByTestId, onRun } = open();
    await fireEvent.click(entry(container, "forecast"));
    await fireEvent.input(field(container, "city"), { target: { value: "Oslo" } });
    // "1e" or "--2" in an <input type=number>: the browser reports "" and validity.badInput.
    const typed = (input: HTMLInputElement, badInput: boolean) => {
      Object.defineProperty(input, "validity", { configurable: true, get: () => ({ badInput }) });
      return fireEvent.input(input, { target: { value: "" } });
    };
    await typed(field(container, "lat"), true);
    await typed(field(container, "days"), true);
    await fireEvent.click(getByTestId("tool-run"));
    expect(onRun).not.toHaveBeenCalled();
    expect(getByTestId("tool-form-error").textContent).toBe("Fix the marked fields: days, lat.");
    expect(fieldError(field(container, "days"))).toBe("days must be a number");
    expect(fieldError(field(container, "lat"))).toBe("lat must be a number");

    // Cleared (or fixed), the fields are readable again.
    await typed(field(container, "lat"), false);
    await typed(field(container, "days"), false);
    await fireEvent.click(getByTestId("tool-run"));
    expect(onRun).toHaveBeenCalledWith("demo", "forecast", { city: "Oslo" });
  });

  it("edits the arguments as JSON, with parse errors shown as typed, and back to the form", async () => {
    const { container, getByTestId, queryByTestId, onRun } = open();
    await fireEvent.click(entry(container, "forecast"));
    await fireEvent.input(field(container, "city"), { target: { value: "Oslo" } });
    await fireEvent.click(getByTestId("tool-json-toggle"));
    const json = getByTestId("tool-json") as HTMLTextAreaElement;
    expect(JSON.parse(json.value)).toEqual({ city: "Oslo", days: 3 });
    expect(getByTestId("tool-json-toggle").getAttribute("aria-pressed")).toBe("true");
    expect(queryByTestId("tool-form")?.querySelector("[data-testid=tool-field]")).toBeNull();

    await fireEvent.input(json, { target: { value: '{"city": ' } });
    expect(getByTestId("tool-form-error").textContent).toMatch(/^Not valid JSON/);
    await fireEvent.click(getByTestId("tool-run"));
    expect(onRun).not.toHaveBeenCalled();
    await fireEvent.input(json, { target: { value: '{"days": 2}' } });
    expect(getByTestId("tool-form-error").textContent).toBe("Missing required property: city");

    await fireEvent.input(json, { target: { value: '{"city": "Tromsø", "days": 2}' } });
    expect(queryByTestId("tool-form-error")).toBeNull();
    await fireEvent.click(getByTestId("tool-json-toggle"));
    expect(field(container, "city").value).toBe("Tromsø");
    expect(field(container, "days").value).toBe("2");

    await fireEvent.click(getByTestId("tool-json-toggle"));
    await fireEvent.input(getByTestId("tool-json"), { target: { value: '{"city": "Oslo", "extra": [1, 2]}' } });
    await fireEvent.click(getByTestId("tool-json-toggle"));
    expect(getByTestId("tool-form-error").textContent).toContain("extra is not one of the form's fields");
    await fireEvent.click(getByTestId("tool-run"));
    expect(onRun).toHaveBeenCalledWith("demo", "forecast", { city: "Oslo", extra: [1, 2] });
  });

  it("a schema the form cannot express goes straight to the JSON editor", async () => {
    const { container, getByTestId, getByText, onRun } = open();
    await fireEvent.click(entry(container, "odd"));
    expect(getByTestId("tool-json")).toBeTruthy();
    expect((getByTestId("tool-json-toggle") as HTMLButtonElement).disabled).toBe(true);
    expect(getByText(/pick uses "oneOf"/)).toBeTruthy();
    await fireEvent.input(getByTestId("tool-json"), { target: { value: '{"pick": 4}' } });
    await fireEvent.click(getByTestId("tool-run"));
    expect(onRun).toHaveBeenCalledWith("other", "odd", { pick: 4 });
  });

  it("runs an app-only tool too, and says the model is never offered it", async () => {
    const { container, getByTestId, getByText, onRun } = open();
    await fireEvent.click(entry(container, "poll_stats"));
    expect(getByText(/never offered to the model/)).toBeTruthy();
    expect(getByText("This tool takes no arguments.")).toBeTruthy();
    expect(getByText("Runs in a new conversation.")).toBeTruthy();
    await fireEvent.click(getByTestId("tool-run"));
    expect(onRun).toHaveBeenCalledWith("demo", "poll_stats", {});
  });

  it("says why a run could not start, and holds Run while a reply is being written", async () => {
    const onRun = vi.fn(async () => "a reply is still being written in this conversation; stop it first");
    const first = open({ onRun });
    await fireEvent.click(entry(first.container, "sha256"));
    await fireEvent.input(field(first.container, "text"), { target: { value: "abc" } });
    await fireEvent.click(first.getByTestId("tool-run"));
    expect(onRun).toHaveBeenCalledWith("demo", "sha256", { text: "abc" });
    expect(first.getByTestId("tool-form-error").textContent).toBe(
      "Could not run sha256: a reply is still being written in this conversation; stop it first",
    );
    cleanup();

    const second = open({ busy: true });
    await fireEvent.click(entry(second.container, "sha256"));
    expect((second.getByTestId("tool-run") as HTMLButtonElement).disabled).toBe(true);
    expect(second.getByText("Wait until the reply in this conversation ends.")).toBeTruthy();
  });

  it("keeps what was typed when the servers' list is sent again", async () => {
    const { container, rerender } = open();
    await fireEvent.click(entry(container, "forecast"));
    await fireEvent.input(field(container, "city"), { target: { value: "Bergen" } });
    await rerender({ servers: structuredClone(servers) });
    expect(field(container, "city").value).toBe("Bergen");
  });
});
