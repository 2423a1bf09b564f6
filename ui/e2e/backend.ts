// The fake back end of the Playwright flows: the Rust commands the window invokes, answered from
// memory, and the turn events Rust would emit, sent as `chat-event`s through the mocked event
// plugin. It runs in the page (installed by harness.ts before the app starts).
//
// A turn is scripted by what was sent: a message naming the weather asks for the `get_weather`
// tool (which waits for the person's approval); anything else is answered "Echo: <text>",
// streamed in pieces. What a conversation stores is what the Rust recorder would write for its
// events (src/lib/testing/turns.ts `record`). The settings and the tools panel's Run check their
// input as the Rust commands do and refuse with the same reasons. A command it does not know is
// rejected as Tauri rejects one, and noted for the flow to fail on.
import { emit } from "@tauri-apps/api/event";
import type {
  AppError,
  AppInfo,
  AttachmentRef,
  CatalogTool,
  ChatEvent,
  Conversation,
  Decision,
  ErrorCode,
  JsonValue,
  ModelInfo,
  Part,
  PromptEntry,
  ResourceEntry,
  ScrollPosition,
  SearchHit,
  ServerEntry,
  ServerSettings,
  ServerStatus,
  StoredConversation,
  TemplateEntry,
  TurnEvent,
  ViewEvent,
} from "../src/lib/api";
import { ev, record, textBlock } from "../src/lib/testing/turns";
import { SEEDED, type HarnessControl, type Invocation } from "./control";

type Args = Record<string, unknown>;

/** A command's failure, as the Rust side rejects it: an `AppError` (`{code, message}`). */
class CommandError {
  constructor(
    readonly code: ErrorCode,
    readonly message: string,
  ) {}
}

/** A command Tauri does not know: Tauri itself refuses it, with a plain string. */
class UnknownCommand {
  constructor(readonly message: string) {}
}

function tool(name: string, over: Partial<CatalogTool> = {}): CatalogTool {
  return {
    server: "demo",
    name,
    modelName: name,
    title: null,
    description: null,
    inputSchema: { type: "object", properties: {} },
    uiResourceUri: null,
    visibility: ["model", "app"],
    widget: { kind: "mcp-app", invoking: null, invoked: null },
    metaProblems: [],
    ...over,
  };
}

/** The demo server's prompts (the composer's / menu). */
const PROMPTS: PromptEntry[] = [
  { server: "demo", name: "summarise", title: "Summarise", description: "Sums up the conversation so far", arguments: [] },
  {
    server: "demo",
    name: "weather-report",
    title: "Weather report",
    description: "A weather report for a city",
    arguments: [
      { name: "city", title: "City", description: "Which city", required: true },
      { name: "units", title: null, description: "metric or imperial", required: false },
    ],
  },
];

/** The demo server's resources and templates (the composer's @ picker). */
const RESOURCES: ResourceEntry[] = [
  { server: "demo", uri: "demo://notes/plan.md", name: "plan.md", title: null, description: "The plan", mimeType: "text/markdown" },
  { server: "demo", uri: "demo://files/report.pdf", name: "report.pdf", title: null, description: null, mimeType: "application/pdf" },
];
const TEMPLATES: TemplateEntry[] = [
  { server: "demo", uriTemplate: "demo://city/{name}", name: "city", title: "City facts", description: null, mimeType: "text/plain", variables: ["name"] },
];

/** The servers as they connected (the settings can disable or remove them). */
const CONNECTED: ServerStatus[] = [
  {
    name: "demo",
    state: "connected",
    error: null,
    endpoint: "porthole demo-server",
    serverInfo: "porthole-demo 0.1.0",
    protocolVersion: "2025-06-18",
    mcpApps: true,
    tools: [
      tool("get_weather", {
        title: "Weather",
        description: "The weather in a city now.",
        inputSchema: { type: "object", properties: { city: { type: "string", description: "City name" } }, required: ["city"] },
      }),
      tool("show_forecast", {
        title: "Forecast",
        description: "A week's forecast, as a view.",
        inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        uiResourceUri: "ui://demo/forecast.html",
      }),
      tool("repeat", {
        description: "Repeats a text.",
        inputSchema: {
          type: "object",
          properties: { text: { type: "string" }, times: { type: "integer", minimum: 1, maximum: 5 } },
          required: ["text"],
        },
      }),
    ],
  },
  {
    name: "offline",
    state: "failed",
    error: "spawn porthole-offline-server ENOENT",
    endpoint: "porthole-offline-server",
    serverInfo: null,
    protocolVersion: null,
    mcpApps: true,
    tools: [],
  },
];

/** The profile's config file's entries for those servers. */
function configEntries(): ServerEntry[] {
  const stdio = (name: string, command: string, args: string[]): ServerEntry => ({
    name,
    source: CONFIG_FILE,
    editable: true,
    shadowedBy: null,
    transport: "stdio",
    command,
    args,
    envKeys: [],
    cwd: "",
    url: "",
    headerKeys: [],
    enabled: true,
    mcpApps: true,
    problem: null,
  });
  return [stdio("demo", "porthole", ["demo-server"]), stdio("offline", "porthole-offline-server", [])];
}

const CONFIG_FILE = "/tmp/porthole-e2e/config.json";

const APP_INFO: AppInfo = {
  version: "0.0.0-e2e",
  profileDir: "/tmp/porthole-e2e",
  configFile: CONFIG_FILE,
  configProblems: [],
  mcpApps: true,
  storeProblem: null,
};

// The settings commands (src-tauri/src/app_settings.rs), with the same checks and reasons.
type Provider = "openai" | "anthropic";
type Theme = "system" | "light" | "dark";
const PROVIDERS: Record<Provider, { defaultBaseUrl: string; keyEnvVar: string }> = {
  openai: { defaultBaseUrl: "https://api.openai.com/v1", keyEnvVar: "OPENAI_API_KEY" },
  anthropic: { defaultBaseUrl: "https://api.anthropic.com", keyEnvVar: "ANTHROPIC_API_KEY" },
};
const MAX_RETENTION_DAYS = 365;

function checkProvider(provider: unknown): Provider {
  if (provider === "openai" || provider === "anthropic") return provider;
  throw new CommandError("invalid", `unknown provider ${JSON.stringify(provider)} (openai or anthropic)`);
}

function checkBaseUrl(input: string): string {
  const baseUrl = input.trim();
  if (!baseUrl) throw new CommandError("invalid", "the base URL is empty");
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new CommandError("invalid", `the base URL ${JSON.stringify(baseUrl)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new CommandError("invalid", `the base URL must start with http:// or https://, not ${url.protocol}//`);
  }
  if (!url.hostname) throw new CommandError("invalid", `the base URL ${JSON.stringify(baseUrl)} has no host`);
  return baseUrl;
}

function checkRetention(days: unknown): number {
  const range = `from 1 to ${MAX_RETENTION_DAYS}`;
  if (typeof days !== "number" || !Number.isFinite(days)) throw new CommandError("invalid", `view retention must be a number of days ${range}`);
  if (!Number.isInteger(days)) throw new CommandError("invalid", `view retention is a whole number of days (${range}), not ${days}`);
  if (days < 1 || days > MAX_RETENTION_DAYS) throw new CommandError("invalid", `view retention must be ${range} days, not ${days}`);
  return days;
}

function checkTheme(theme: unknown): Theme {
  if (theme === "system" || theme === "light" || theme === "dark") return theme;
  throw new CommandError("invalid", `unknown theme ${JSON.stringify(theme)} (system, light or dark)`);
}

/** One stored conversation: its row, and the events its turns emitted (the store's content is
 * what the recorder makes of them). */
interface Thread {
  conversation: Conversation;
  events: TurnEvent[];
}

const forecast = "Paris: sunny all week, 21 °C";

function seed(): Thread[] {
  const weather: TurnEvent[] = [
    ev.turnStarted(SEEDED.weather),
    ev.user("Show me the forecast for Paris"),
    ev.step(1),
    ev.assistant([{ type: "tool_use", id: "call-forecast", name: "show_forecast", arguments: { city: "Paris" } }]),
    ev.callStarted("call-forecast", "show_forecast", "demo", "show_forecast", { city: "Paris" }, "ui://demo/forecast.html"),
    ev.running("call-forecast"),
    ev.finished("call-forecast", "ok", { content: [textBlock(forecast)], isError: false }, { content: [textBlock(forecast)] }, 420),
    ev.toolResults([{ type: "tool_result", tool_use_id: "call-forecast", content: [textBlock(forecast)], is_error: false }]),
    ev.step(2),
    ev.text("It will be sunny in Paris all week."),
    ev.assistant([{ type: "text", text: "It will be sunny in Paris all week." }]),
    ev.done("end_turn", "It will be sunny in Paris all week."),
  ];
  const release: TurnEvent[] = [
    ev.turnStarted(SEEDED.release),
    ev.user("Draft the release notes for 0.3"),
    ev.step(1),
    ev.text("Here is a changelog draft: faster search and renaming of conversations."),
    ev.assistant([{ type: "text", text: "Here is a changelog draft: faster search and renaming of conversations." }]),
    ev.done("end_turn"),
  ];
  return [
    { conversation: { id: SEEDED.release, title: "Release notes", createdAt: 1_000, updatedAt: 2_000 }, events: release },
    { conversation: { id: SEEDED.weather, title: "Weather in Paris", createdAt: 1_000, updatedAt: 3_000 }, events: weather },
  ];
}

const isTextBlock = (c: unknown): c is { type: "text"; text: string } =>
  typeof c === "object" && c !== null && (c as { type?: unknown }).type === "text" && typeof (c as { text?: unknown }).text === "string";

/** Lower case without diacritics, as the store's tokenizer (unicode61 remove_diacritics 2) reads. */
const fold = (text: string) => text.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
const WORD = /[\p{L}\p{N}]+/gu;

/** The store's full-text search, in small: every term of the query is a prefix of some word
 * (AND), matches are marked between STX and ETX, and a long text is cut around the first match. */
function match(text: string, terms: string[]): { snippet: string; score: number } | null {
  const words = [...text.matchAll(WORD)];
  const hit = (w: string) => terms.some((t) => fold(w).startsWith(t));
  if (!terms.every((t) => words.some((w) => fold(w[0]).startsWith(t)))) return null;
  const marked = words.filter((w) => hit(w[0]));
  let snippet = "";
  let at = 0;
  for (const w of marked) {
    snippet += `${text.slice(at, w.index)}\u0002${w[0]}\u0003`;
    at = w.index + w[0].length;
  }
  snippet += text.slice(at);
  const first = snippet.indexOf("\u0002");
  if (snippet.length > 90) {
    const start = Math.max(0, first - 30);
    snippet = `${start > 0 ? "…" : ""}${snippet.slice(start, start + 90)}…`;
  }
  return { snippet, score: marked.length };
}

const later = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export class FakeBackend {
  #threads = new Map<string, Thread>(seed().map((t) => [t.conversation.id, t]));
  #clock = 10_000;
  #nextId = 0xc0;
  #invocations: Invocation[] = [];
  #unknown: string[] = [];
  #held = new Set<string>();
  #gates = new Map<string, (() => void)[]>();
  /** Tool calls waiting for the person's decision. */
  #approvals = new Map<string, (decision: Decision) => void>();
  /** Tools remembered as always allowed ("server/tool"), and since when. */
  #alwaysAllowed = new Map<string, number>();

  #approvalList() {
    const tools = [...this.#alwaysAllowed].map(([key, since]) => {
      const [server, tool] = key.split("/");
      return { server, tool, source: "remembered" as const, since };
    });
    return { tools, sampling: [] };
  }
  /** Turns running, by conversation: calling the function stops the turn. */
  #running = new Map<string, () => void>();
  #servers: ServerStatus[] = structuredClone(CONNECTED);
  #serverSettings: ServerSettings = {
    configFile: CONFIG_FILE,
    servers: configEntries(),
    mcpApps: true,
    mcpAppsEffective: true,
    mcpAppsEnvOff: false,
    mcpAppsSetBy: null,
    problems: [],
  };
  #model: { provider: Provider; baseUrl: string; model: string | null } = { provider: "openai", baseUrl: "http://127.0.0.1:9/v1", model: "gpt-e2e" };
  #keysStored = new Set<Provider>();
  #general: {
    viewRetentionDays: number;
    theme: Theme;
    viewOriginsAllowed: string[];
    viewOriginsBlocked: string[];
    clientMetadataUrl: string | null;
    roots: string[];
  } = { viewRetentionDays: 7, theme: "system", viewOriginsAllowed: [], viewOriginsBlocked: [], clientMetadataUrl: null, roots: [] };

  readonly control: HarnessControl = {
    invocations: this.#invocations,
    unknownCommands: this.#unknown,
    hold: (kind) => void this.#held.add(kind),
    release: (kind) => {
      this.#held.delete(kind);
      const waiting = this.#gates.get(kind) ?? [];
      this.#gates.delete(kind);
      for (const open of waiting) open();
    },
    waiting: () => [...this.#gates.keys()],
  };

  /** The mocked IPC's handler: resolves with the command's answer, or rejects with its
   * `{code, message}` error (as the Rust commands do). */
  async invoke(cmd: string, args: Args): Promise<unknown> {
    this.#invocations.push({ cmd, args: structuredClone(args) });
    if (this.#held.has(cmd)) await this.#gate(cmd);
    try {
      return await this.#command(cmd, args);
    } catch (e) {
      if (e instanceof CommandError) return Promise.reject({ code: e.code, message: e.message } satisfies AppError);
      if (e instanceof UnknownCommand) return Promise.reject(e.message);
      throw e;
    }
  }

  async #command(cmd: string, args: Args): Promise<unknown> {
    switch (cmd) {
      case "app_info":
        return APP_INFO;
      case "list_servers":
        return this.#servers;
      case "model_info":
        return { ...this.#model, keySource: "env", error: null } satisfies ModelInfo;
      // One remote agent in the config (the real window tests talk to one).
      case "list_agents":
        return [{ name: "helper", url: "https://agents.example/helper" }];
      case "agent_settings":
        return [{ name: "helper", url: "https://agents.example/helper", headerNames: ["Authorization"], file: "/profile/config.json", editable: true }];
      case "ui_ready":
      case "clipboard_write_requested":
      case "close_view":
      case "teardown_view":
      case "allow_view_devices":
      case "send_without_waiting":
      case "teardown_views":
      case "set_view_container":
      case "set_view_display_mode":
      case "view_message":
        return null;
      case "list_questions":
        return [];
      case "server_install_request":
        return null;
      // The workbench: a window with no real servers has no traffic, and views are not watched.
      case "view_inspection_on":
        return this.#inspecting;
      case "set_view_inspection":
        this.#inspecting = Boolean(args.on);
        return null;
      case "view_inspection":
        return null;
      // Two presets are enough for the window's own checks (the real ones are Rust's).
      case "host_emulation":
      case "set_host_emulation": {
        if (cmd === "set_host_emulation") this.#emulation = args.emulation as Record<string, unknown>;
        const preset = (id: string, name: string, displayModes: string[], windowOpenai: boolean) => ({
          id,
          name,
          hostInfo: { name, version: "1" },
          capabilities: { openLinks: {} },
          displayModes,
          platform: "desktop",
          container: null,
          windowOpenai,
          source: `${name}'s test values.`,
        });
        return {
          emulation: this.#emulation,
          presets: [preset("porthole", "Porthole", ["inline", "fullscreen", "pip"], false), preset("chatgpt", "ChatGPT", ["inline"], true)],
        };
      }
      case "server_traffic":
        return [];
      case "server_details": {
        const server = this.#servers.find((s) => s.name === args.name);
        if (!server || server.state !== "connected") throw new CommandError("server", `${String(args.name)} is not connected`);
        return {
          name: `${server.name}-server`,
          title: null,
          version: "1.0.0",
          protocolVersion: "2025-11-25",
          capabilities: { tools: { listChanged: true } },
          instructions: `Tools of ${server.name}.`,
        };
      }
      case "ping_server":
        return 3.25;
      case "list_conversations":
        return this.#conversations();
      case "list_conversation_page": {
        const all = this.#conversations();
        const start = args.after == null ? 0 : all.findIndex((c) => c.id === args.after) + 1;
        if (args.after != null && start === 0) return { conversations: [], more: false };
        const limit = Math.min(Math.max(Number(args.limit), 1), 1000);
        return { conversations: all.slice(start, start + limit), more: start + limit < all.length };
      }
      case "open_conversation":
        return { ...this.#stored(this.#thread(args.id)), scroll: this.#scrolls.get(String(args.id)) ?? null };
      case "keep_scroll_position":
        if (args.position == null) this.#scrolls.delete(String(args.conversationId));
        else this.#scrolls.set(String(args.conversationId), args.position as ScrollPosition);
        return null;
      case "read_resource":
        return { contents: [{ uri: args.uri, mimeType: "text/plain", text: `the text of ${String(args.uri)}` }] };
      case "export_conversation":
        return `/tmp/${this.#thread(args.id).conversation.title}.${args.format === "json" ? "json" : "md"}`;
      case "earlier_messages":
        // Conversations here open whole: nothing precedes what was shown.
        return { ...this.#stored(this.#thread(args.id)), messages: [], toolCalls: [], viewUris: {}, earlier: false };
      case "rename_conversation": {
        const title = String(args.title ?? "").trim();
        if (!title) throw new CommandError("invalid", "a conversation needs a title");
        this.#thread(args.id).conversation.title = title;
        return null;
      }
      case "delete_conversation": {
        const thread = this.#thread(args.id);
        this.#running.get(thread.conversation.id)?.();
        this.#threads.delete(thread.conversation.id);
        return null;
      }
      case "search_conversations":
        return this.#search(String(args.query ?? ""));
      case "send_message":
        return this.#send(args.conversationId as string | null, String(args.text ?? ""), (args.attachments as AttachmentRef[] | undefined) ?? []);
      case "approvals":
        return this.#approvalList();
      case "revoke_tool_approval": {
        const key = `${String(args.server)}/${String(args.tool)}`;
        if (!this.#alwaysAllowed.delete(key)) {
          throw new CommandError("not_found", `${String(args.tool)} of ${String(args.server)} is not remembered as always allowed`);
        }
        return this.#approvalList();
      }
      case "revoke_sampling":
        return { tools: [], sampling: [] };
      case "answer_link":
        // No view here asks to open a link: nothing is ever waiting.
        throw new CommandError("not_found", "that link request is no longer waiting");
      case "answer_server_sampling":
        // No server here samples: nothing is ever waiting.
        throw new CommandError("not_found", "that sampling request is no longer waiting");
      case "list_prompts":
        return { prompts: PROMPTS, problems: [] };
      case "complete_argument": {
        const value = String(args.value ?? "");
        const values = args.argument === "city" ? ["Paris", "Porto", "Prague"].filter((c) => c.startsWith(value)) : [];
        return { values };
      }
      case "send_prompt": {
        const prompt = PROMPTS.find((p) => p.server === args.server && p.name === args.name);
        if (!prompt) throw new CommandError("server", `${String(args.server)} could not give prompt ${String(args.name)}: no such prompt`);
        const given = (args.arguments ?? {}) as Record<string, string>;
        const missing = prompt.arguments.find((a) => a.required && !given[a.name]);
        if (missing) throw new CommandError("server", `${prompt.server} could not give prompt ${prompt.name}: ${missing.name} is required`);
        const text = prompt.name === "weather-report" ? `Tell me about ${given.city}${given.units ? ` in ${given.units}` : ""}` : "Summarise this conversation so far.";
        return this.#send((args.conversationId as string | null) ?? null, text, []);
      }
      case "list_attachable":
        return { resources: RESOURCES, templates: TEMPLATES, problems: [] };
      case "template_uri":
        return String(args.uriTemplate).replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent((args.values as Record<string, string>)[name] ?? ""));
      case "attach_resource": {
        const uri = String(args.uri);
        if (uri.endsWith(".pdf")) {
          throw new CommandError("invalid", `${uri} is binary (application/pdf): a model can be sent text and images (PNG, JPEG, GIF, WebP) only`);
        }
        return { server: String(args.server), uri, mimeType: "text/plain", size: 42 };
      }
      case "stop_turn": {
        const stop = this.#running.get(String(args.conversationId));
        stop?.();
        return stop !== undefined;
      }
      case "answer_approval": {
        const answer = this.#approvals.get(String(args.callId));
        if (!answer) throw new CommandError("not_found", `no tool call ${String(args.callId)} is waiting for approval`);
        this.#approvals.delete(String(args.callId));
        answer(args.decision as Decision);
        return null;
      }
      case "retry_turn":
        this.#rerun(String(args.conversationId), null);
        return null;
      case "edit_and_resend":
        this.#rerun(String(args.conversationId), String(args.text ?? ""));
        return null;
      case "run_tool":
        return this.#runTool((args.conversationId as string | null) ?? null, String(args.server), String(args.tool), args.arguments);
      case "model_settings":
        return this.#modelSettings();
      case "save_model_settings": {
        const provider = checkProvider(args.provider);
        const baseUrl = checkBaseUrl(String(args.baseUrl ?? ""));
        const model = args.model === null || args.model === undefined ? null : String(args.model).trim();
        if (model === "") throw new CommandError("invalid", "the model name is empty");
        this.#model = { provider, baseUrl, model };
        return null;
      }
      case "list_provider_models":
        checkBaseUrl(String(args.baseUrl ?? ""));
        return checkProvider(args.provider) === "openai" ? ["gpt-e2e", "gpt-e2e-mini"] : ["claude-e2e"];
      case "test_model": {
        checkProvider(args.provider);
        checkBaseUrl(String(args.baseUrl ?? ""));
        // An empty model is the provider's only one (this fake provider offers one).
        const model = String(args.model ?? "").trim() || "fake-only";
        return { ok: true, model, reply: "OK", error: null, ms: 42 };
      }
      case "save_api_key": {
        const provider = checkProvider(args.provider);
        if (!String(args.key ?? "").trim()) throw new CommandError("invalid", "the API key is empty");
        this.#keysStored.add(provider);
        return null;
      }
      case "delete_api_key":
        this.#keysStored.delete(checkProvider(args.provider));
        return null;
      case "general_settings":
        return { ...this.#general };
      case "save_general_settings": {
        const days = args.viewRetentionDays === null || args.viewRetentionDays === undefined ? null : checkRetention(args.viewRetentionDays);
        const theme = args.theme === null || args.theme === undefined ? null : checkTheme(args.theme);
        if (days !== null) this.#general.viewRetentionDays = days;
        if (theme !== null) this.#general.theme = theme;
        if (Array.isArray(args.viewOriginsAllowed)) this.#general.viewOriginsAllowed = args.viewOriginsAllowed as string[];
        if (Array.isArray(args.viewOriginsBlocked)) this.#general.viewOriginsBlocked = args.viewOriginsBlocked as string[];
        if (typeof args.clientMetadataUrl === "string") this.#general.clientMetadataUrl = args.clientMetadataUrl || null;
        if (Array.isArray(args.roots)) {
          const bad = (args.roots as string[]).find((r) => !r.startsWith("/"));
          if (bad) throw new CommandError("invalid", `roots: ${bad} is not an absolute path`);
          this.#general.roots = args.roots as string[];
        }
        return { ...this.#general };
      }
      case "system_theme_changed":
        return null;
      case "server_settings":
        return structuredClone(this.#serverSettings);
      case "set_server_enabled":
        this.#entry(args.name).enabled = args.enabled === true;
        return this.#reconfigured();
      case "set_server_mcp_apps":
        this.#entry(args.name).mcpApps = args.enabled === true;
        return this.#reconfigured();
      case "set_mcp_apps":
        this.#serverSettings.mcpApps = this.#serverSettings.mcpAppsEffective = args.enabled === true;
        return this.#reconfigured();
      case "remove_server": {
        const entry = this.#entry(args.name);
        this.#serverSettings.servers = this.#serverSettings.servers.filter((e) => e !== entry);
        return this.#reconfigured();
      }
      case "server_log":
        this.#entry(args.name);
        return { path: `/tmp/porthole-e2e/logs/${String(args.name)}.log`, text: null, truncated: false };
      case "import_candidates":
        return [];
      case "reconnect_server":
        this.#entry(args.name);
        return null;
      case "choose_import_file":
        // The fake desktop's dialog is always cancelled.
        return null;
      case "reopen_views":
        await this.#reopenViews(String(args.conversationId), (args.callId as string | null) ?? null);
        return null;
      default:
        this.#unknown.push(cmd);
        throw new UnknownCommand(`command ${cmd} not found`);
    }
  }

  #entry(name: unknown): ServerEntry {
    const entry = this.#serverSettings.servers.find((e) => e.name === name);
    if (!entry) throw new CommandError("not_found", `there is no server ${JSON.stringify(name)} in ${CONFIG_FILE}`);
    return entry;
  }

  /** The running servers follow the config entries (servers-changed), as Servers::reconfigure does. */
  async #reconfigured(): Promise<ServerSettings> {
    const settings = this.#serverSettings;
    this.#servers = settings.servers.flatMap((entry) => {
      const connected = CONNECTED.find((s) => s.name === entry.name);
      if (!connected) return [];
      const mcpApps = settings.mcpAppsEffective && entry.mcpApps;
      if (!entry.enabled) return [{ ...structuredClone(connected), state: "disabled" as const, error: null, tools: [], mcpApps }];
      return [{ ...structuredClone(connected), mcpApps }];
    });
    await emit("servers-changed", this.#servers);
    return structuredClone(settings);
  }

  #modelSettings() {
    return {
      ...this.#model,
      flagsOverride: { provider: null, baseUrl: null, model: null },
      providers: (Object.keys(PROVIDERS) as Provider[]).map((provider) => ({
        provider,
        ...PROVIDERS[provider],
        keyFromEnv: provider === "openai",
        keyStored: this.#keysStored.has(provider),
      })),
      keyringProblem: null,
    };
  }

  #thread(id: unknown): Thread {
    const thread = this.#threads.get(String(id));
    if (!thread) throw new CommandError("not_found", `no conversation ${String(id)}`);
    return thread;
  }

  /** Most recently updated first. */
  #conversations(): Conversation[] {
    return [...this.#threads.values()].map((t) => ({ ...t.conversation })).sort((a, b) => b.updatedAt - a.updatedAt);
  }

  /** The workbench's view inspector is on. */
  #inspecting = false;
  #emulation: Record<string, unknown> = { preset: "porthole", overrides: {}, inChats: false };

  /** Where the reader left each conversation (`keep_scroll_position`), by id. */
  #scrolls = new Map<string, ScrollPosition>();

  #stored(thread: Thread): StoredConversation {
    const id = thread.conversation.id;
    const stored = record(thread.events, { id, running: this.#running.has(id) });
    return { ...stored, conversation: { ...thread.conversation } };
  }

  #search(query: string): SearchHit[] {
    const terms = (fold(query).match(WORD) ?? []).filter(Boolean);
    if (terms.length === 0) return [];
    const hits: SearchHit[] = [];
    for (const thread of this.#threads.values()) {
      const { conversation } = thread;
      const title = match(conversation.title, terms);
      if (title) hits.push({ conversationId: conversation.id, conversationTitle: conversation.title, messageId: null, role: null, snippet: title.snippet, rank: -title.score });
      for (const message of this.#stored(thread).messages) {
        if (message.status === "streaming") continue;
        const body = (message.parts as Part[])
          .flatMap((p) =>
            p.type === "text" ? [p.text]
            : p.type === "tool_result" ? p.content.flatMap((c) => (isTextBlock(c) && !c.text.startsWith("[Porthole: ") ? [c.text] : []))
            : [],
          )
          .join(" ");
        const found = match(body, terms);
        if (found) {
          hits.push({
            conversationId: conversation.id,
            conversationTitle: conversation.title,
            messageId: message.id,
            role: message.role,
            snippet: found.snippet,
            rank: -found.score,
          });
        }
      }
    }
    // Each conversation once: by its title when that matches, else its best message.
    const listed = new Set<string>();
    return hits
      .sort((a, b) => (a.messageId === null) === (b.messageId === null) ? a.rank - b.rank : a.messageId === null ? -1 : 1)
      .filter((h) => !listed.has(h.conversationId) && listed.add(h.conversationId))
      .slice(0, 50);
  }

  /** Views of a stored conversation come back: the seeded ones are past the retention. */
  async #reopenViews(conversationId: string, callId: string | null) {
    const thread = this.#thread(conversationId);
    for (const e of thread.events) {
      if (e.type !== "tool_call_started" || !e.uiResourceUri) continue;
      if (callId !== null && e.callId !== callId) continue;
      const event: ViewEvent = {
        type: "state",
        conversationId,
        callId: e.callId,
        viewId: null,
        state: "expired",
        reason: "the view's resource is kept for 7 days",
      };
      await emit("view-event", event);
    }
  }

  #newThread(title: string): Thread {
    const id = (this.#nextId++).toString(16).padStart(16, "0");
    const thread = { conversation: { id, title, createdAt: this.#clock, updatedAt: this.#clock }, events: [] };
    this.#threads.set(id, thread);
    return thread;
  }

  #send(conversationId: string | null, text: string, attachments: AttachmentRef[]): string {
    const trimmed = text.trim();
    if (!trimmed && attachments.length === 0) throw new CommandError("invalid", "the message is empty");
    const attached: Part[] = attachments.map((a) => ({
      type: "attachment",
      server: a.server,
      content: { type: "resource", resource: { uri: a.uri, mimeType: "text/plain", text: `the text of ${a.uri}` } },
    }));
    if (conversationId) this.#claimable(this.#thread(conversationId));
    const line = trimmed.split("\n").find((l) => l.trim())?.trim() ?? attachments[0].uri;
    const chars = [...line];
    const thread = conversationId ? this.#thread(conversationId) : this.#newThread(chars.length > 60 ? `${chars.slice(0, 60).join("")}…` : line);
    this.#start(thread, (turn) => this.#reply(turn, trimmed, attached));
    return thread.conversation.id;
  }

  /** Retry (`replacement` null) or edit and resend: the last user message's turn is dropped,
   * and a turn starts again with its text or the replacement. */
  #rerun(conversationId: string, replacement: string | null) {
    if (replacement !== null && !replacement.trim()) throw new CommandError("invalid", "the message is empty");
    const thread = this.#thread(conversationId);
    this.#claimable(thread);
    const last = lastIndex(thread.events, thread.events.length, "user_message");
    const user = thread.events[last];
    if (!user || user.type !== "user_message") throw new CommandError("invalid", "this conversation has no message of yours to send again");
    const text = replacement?.trim() ?? user.message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n");
    // What was attached stays attached.
    const attached = user.message.parts.filter((p) => p.type === "attachment");
    const from = lastIndex(thread.events, last, "turn_started");
    thread.events.splice(from === -1 ? last : from);
    this.#start(thread, (turn) => this.#reply(turn, text, attached));
  }

  /** The tools panel's Run: the call's events as ToolRunner::run_call sends them (no approval),
   * then `done`. */
  #runTool(conversationId: string | null, server: string, toolName: string, args: unknown): { conversationId: string; callId: string } {
    const input = args ?? {};
    if (typeof input !== "object" || Array.isArray(input)) throw new CommandError("invalid", `the arguments must be a JSON object, not ${JSON.stringify(input)}`);
    const status = this.#servers.find((s) => s.name === server);
    if (!status) throw new CommandError("not_found", `there is no server ${JSON.stringify(server)}`);
    if (status.state !== "connected") throw new CommandError("server", `server ${JSON.stringify(server)} is not connected`);
    const found = status.tools.find((t) => t.name === toolName);
    if (!found) throw new CommandError("not_found", `server ${JSON.stringify(server)} has no tool ${JSON.stringify(toolName)}`);
    if (conversationId) this.#claimable(this.#thread(conversationId));
    const thread = conversationId ? this.#thread(conversationId) : this.#newThread(`Run ${toolName}`);
    const callId = `run-${(this.#clock + 1).toString(16).padStart(16, "0")}`;
    const text = toolText(toolName, input as Record<string, unknown>);
    this.#start(thread, async ({ say }) => {
      await say(ev.callStarted(callId, found.modelName, server, toolName, input as JsonValue, null));
      await say(ev.running(callId, "person"));
      await say(ev.finished(callId, "ok", { content: [textBlock(text)], isError: false }, { content: [textBlock(text)] }, 12));
      await say(ev.done("end_turn"));
    });
    return { conversationId: thread.conversation.id, callId };
  }

  /** Refused, as Rust refuses, while a turn runs in the conversation. */
  #claimable(thread: Thread) {
    if (this.#running.has(thread.conversation.id)) {
      throw new CommandError("busy", "a reply is still being written in this conversation; stop it first");
    }
  }

  /** Starts a turn in the background (Rust answers the command at once; the events follow). */
  #start(thread: Thread, run: (turn: Turn) => Promise<void>) {
    this.#claimable(thread);
    const id = thread.conversation.id;
    thread.conversation.updatedAt = ++this.#clock;
    let stopped = false;
    let stop!: () => void;
    const stopping = new Promise<"stopped">((resolve) => (stop = () => ((stopped = true), resolve("stopped"))));
    this.#running.set(id, stop);
    const turn: Turn = {
      id,
      say: async (event) => {
        if (!this.#threads.has(id)) return;
        thread.events.push(event);
        const payload: ChatEvent = { conversationId: id, event };
        await emit("chat-event", payload);
      },
      unlessStopped: (step) => Promise.race([step, stopping]),
      stopped: () => stopped,
    };
    void later()
      .then(() => run(turn))
      .finally(() => this.#running.delete(id));
  }

  /** A model's reply to `text`: the weather tool (with approval) or an echo, streamed. */
  async #reply({ id, say, unlessStopped, stopped }: Turn, text: string, attached: Part[] = []) {
    await say(ev.turnStarted(id));
    const parts: Part[] = text ? [{ type: "text", text }, ...attached] : attached;
    await say({ type: "user_message", message: { role: "user", parts } });
    await say(ev.step(1));
    if (/weather/i.test(text)) {
      const callId = `call-${this.#clock}`;
      const args = { city: "Paris" };
      await say(ev.callStreaming(callId, "get_weather", JSON.stringify(args)));
      await say(ev.assistant([{ type: "tool_use", id: callId, name: "get_weather", arguments: args }]));
      await say(ev.callStarted(callId, "get_weather", "demo", "get_weather", args));
      // As Rust does: a remembered "always" runs the call without asking.
      const remembered = this.#alwaysAllowed.has("demo/get_weather");
      let decision: Decision | "stopped" = "allow_once";
      if (!remembered) {
        const decided = new Promise<Decision>((resolve) => this.#approvals.set(callId, resolve));
        await say(ev.approvalRequested(callId, "demo", "get_weather", args));
        decision = await unlessStopped(decided);
        if (decision === "stopped") {
          this.#approvals.delete(callId);
          await say(ev.finished(callId, "cancelled", { content: [textBlock("The call was cancelled.")], isError: true }, null, 0));
          return say(ev.done("cancelled"));
        }
        await say(ev.approvalResolved(callId, decision));
        if (decision === "allow_always") this.#alwaysAllowed.set("demo/get_weather", this.#clock);
      }
      const denied = decision === "deny";
      const result = denied
        ? { content: [textBlock("The person did not allow this call.")], isError: true }
        : { content: [textBlock("Sunny, 21 °C")], isError: false };
      if (!denied) await say(ev.running(callId, remembered ? "remembered" : decision === "allow_always" ? "always" : "once"));
      await say(ev.finished(callId, denied ? "denied" : "ok", result, denied ? null : { content: result.content }, 35));
      await say(ev.toolResults([{ type: "tool_result", tool_use_id: callId, content: result.content, is_error: result.isError }]));
      await say(ev.step(2));
      const answer = denied ? "I could not look up the weather." : "It is sunny in Paris, 21 °C.";
      await say(ev.text(answer));
      await say(ev.assistant([{ type: "text", text: answer }]));
      return say(ev.done("end_turn", answer));
    }

    const uris = attached.flatMap((p) => (p.type === "attachment" ? [String((p.content as { resource?: { uri?: string } }).resource?.uri)] : []));
    const pieces = ["Echo: ", ...text.split(/(?<=\s)/), ...(uris.length ? [` (attached: ${uris.join(", ")})`] : [])];
    let written = "";
    for (const [i, piece] of pieces.entries()) {
      written += piece;
      await say(ev.text(piece));
      if (i === 0 && this.#held.has("reply")) {
        if ((await unlessStopped(this.#gate("reply"))) === "stopped") break;
      }
      await later();
      if (stopped()) break;
    }
    await say(ev.assistant([{ type: "text", text: written }], stopped()));
    await say(ev.done(stopped() ? "cancelled" : "end_turn", written));
  }

  #gate(kind: string): Promise<void> {
    return new Promise((resolve) => this.#gates.set(kind, [...(this.#gates.get(kind) ?? []), resolve]));
  }
}

/** The index of the last event of `type` before `end`; -1 when there is none. */
function lastIndex(events: TurnEvent[], end: number, type: TurnEvent["type"]): number {
  for (let i = end - 1; i >= 0; i--) if (events[i].type === type) return i;
  return -1;
}

/** A running turn, as its script sees it. */
interface Turn {
  id: string;
  /** Records the event in the conversation and sends it to the window. */
  say: (event: TurnEvent) => Promise<void>;
  /** Waits for `step`, unless the turn is stopped first. */
  unlessStopped: <T>(step: Promise<T>) => Promise<T | "stopped">;
  stopped: () => boolean;
}

/** What the demo server's tools answer. */
function toolText(tool: string, args: Record<string, unknown>): string {
  switch (tool) {
    case "repeat":
      return Array.from({ length: Number(args.times ?? 1) }, () => String(args.text ?? "")).join(" ");
    case "get_weather":
      return `${String(args.city ?? "?")}: sunny, 21 °C`;
    default:
      return forecast;
  }
}
