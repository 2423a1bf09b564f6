// The front end's one door to Rust. Every command and event the UI uses is declared here, with
// types that mirror the Rust structs (serde camelCase). Nothing else imports @tauri-apps/api.
import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import { getCurrentWebview } from "@tauri-apps/api/webview";

/** Listens for `event` sent to this window: Rust sends each event to the window it concerns
 * (`emit_to` its label; a pop-out window's view events go to it alone), and a plain `listen`
 * would hear every window's. */
function listenHere<T>(event: string, handler: (payload: T) => void): Promise<UnlistenFn> {
  return listen<T>(event, (e) => handler(e.payload), { target: getCurrentWebview().label });
}

export type Audience = "model" | "app";
export type ServerState = "disabled" | "connecting" | "connected" | "failed";

/** porthole_mcp::CatalogTool */
export interface CatalogTool {
  server: string;
  name: string;
  modelName: string;
  title: string | null;
  description: string | null;
  inputSchema: Record<string, unknown>;
  uiResourceUri: string | null;
  visibility: Audience[];
  metaProblems: string[];
}

/** porthole_mcp::ServerStatus */
export interface ServerStatus {
  name: string;
  state: ServerState;
  error: string | null;
  endpoint: string;
  serverInfo: string | null;
  protocolVersion: string | null;
  mcpApps: boolean;
  tools: CatalogTool[];
}

/** desktop::AppInfo */
export interface AppInfo {
  version: string;
  profileDir: string;
  configFile: string;
  configProblems: string[];
  mcpApps: boolean;
}

/** desktop::Question: a server asks the user for input (MCP elicitation). */
export interface Question {
  id: number;
  server: string;
  message: string;
  /** The requested schema (form mode): an object schema of primitive properties. */
  schema: Record<string, unknown> | null;
  /** The page to open (URL mode). */
  url: string | null;
}

export type ElicitationAction = "accept" | "decline" | "cancel";

/** desktop::ModelInfo: the model this run talks to, or why there is none. */
export interface ModelInfo {
  provider: string | null;
  baseUrl: string | null;
  /** Null: the provider's only model is used (known once a message is sent). */
  model: string | null;
  keySource: string | null;
  error: string | null;
}

/** porthole_store::Conversation */
export interface Conversation {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
}

/** porthole_agent::Part (serde tag "type", snake_case fields). */
export type Part =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string; signature?: string; field?: string }
  | { type: "redacted_reasoning"; data: string }
  | { type: "tool_use"; id: string; name: string; arguments: unknown }
  | { type: "tool_result"; tool_use_id: string; content: McpContent[]; is_error: boolean };

/** An MCP content block, as the server sent it. */
export type McpContent = { type: string; text?: string; [key: string]: unknown };

export type MessageRole = "user" | "assistant" | "tool";
export type MessageStatus = "complete" | "streaming" | "interrupted" | "failed";
export type CallStatus = "ok" | "error" | "failed" | "denied" | "cancelled";
export type StoredCallStatus = CallStatus | "pending" | "running" | "interrupted";
export type Decision = "allow_once" | "allow_always" | "deny";

/** porthole_agent::Message */
export interface AgentMessage {
  role: MessageRole;
  parts: Part[];
}

/** porthole_mcp::ModelFacing: exactly what the model got. */
export interface ModelFacing {
  content: McpContent[];
  isError: boolean;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
}

/** porthole_agent::TurnEvent (serde tag "type", snake_case fields). */
export type TurnEvent =
  | { type: "turn_started"; conversation_id: string | null; model: string; provider: string }
  | { type: "user_message"; message: AgentMessage }
  | { type: "step_started"; step: number }
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  | { type: "tool_call_streaming"; call_id: string; name: string; arguments_text: string }
  | { type: "retrying"; attempt: number; wait_ms: number; reason: string }
  | { type: "assistant_message"; message: AgentMessage; interrupted: boolean; usage: Usage }
  | {
      type: "tool_call_started";
      call_id: string;
      name: string;
      server: string | null;
      tool: string | null;
      arguments: unknown;
      ui_resource_uri: string | null;
    }
  | { type: "view_available"; call_id: string; server: string; tool: string; resource_uri: string }
  | { type: "approval_requested"; call_id: string; server: string; tool: string; arguments: unknown }
  | { type: "approval_resolved"; call_id: string; decision: Decision }
  | { type: "tool_call_running"; call_id: string }
  | { type: "tool_call_progress"; call_id: string; progress: number; total: number | null; message: string | null }
  | {
      type: "tool_call_finished";
      call_id: string;
      status: CallStatus;
      model: ModelFacing;
      /** The full CallToolResult for the view; null when there was no result. */
      view: unknown;
      duration_ms: number;
      error: string | null;
    }
  | { type: "tool_results"; message: AgentMessage }
  | { type: "error"; message: string }
  | { type: "done"; stop_reason: "end_turn" | "step_limit" | "cancelled" | "error"; text: string; usage: Usage };

/** desktop::ChatEvent */
export interface ChatEvent {
  conversationId: string;
  event: TurnEvent;
}

/** porthole_store::StoredMessage */
export interface StoredMessage {
  id: number;
  conversationId: string;
  role: MessageRole;
  parts: Part[];
  status: MessageStatus;
  error: string | null;
  createdAt: number;
  updatedAt: number;
}

/** porthole_store::ToolCallRecord */
export interface ToolCallRecord {
  id: number;
  conversationId: string;
  messageId: number;
  callId: string;
  server: string;
  tool: string;
  arguments: unknown;
  status: StoredCallStatus;
  modelFacing: ModelFacing | null;
  viewFacing: unknown;
  error: string | null;
  durationMs: number | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
}

/** desktop::StoredConversation */
export interface StoredConversation {
  conversation: Conversation;
  messages: StoredMessage[];
  toolCalls: ToolCallRecord[];
  running: boolean;
}

/** porthole_store::SearchHit */
export interface SearchHit {
  conversationId: string;
  conversationTitle: string;
  messageId: number | null;
  role: MessageRole | null;
  snippet: string;
  rank: number;
}

/** What becomes of a tool call's view (desktop::ViewState). */
/** "popped_out": the view lives in a window of its own (its card says so). */
export type ViewStateName = "loading" | "ready" | "failed" | "refused" | "expired" | "closed" | "popped_out";

/** desktop::ViewEvent: a tool call's view, as the window shows it. */
export type ViewEvent =
  | {
      type: "opened";
      conversationId: string;
      callId: string;
      viewId: string;
      /** The view's unguessable URL on the mcpview scheme (valid for first use for 10 minutes). */
      url: string;
      /** The iframe `allow` attribute: only permissions the resource asked for and the user allows. */
      allow: string;
      prefersBorder: boolean | null;
      /** Display modes the host offers this view. */
      displayModes: ("inline" | "fullscreen" | "pip")[];
      /** CSP entries the resource declared that were refused ("field: entry (why)"). Rust always
       * sends it; optional so that an older shell's event still reads. */
      cspDropped?: string[];
    }
  | { type: "state"; conversationId: string; callId: string; viewId: string | null; state: ViewStateName; reason: string | null }
  /** A JSON-RPC message to post into the view's frame. */
  | { type: "message"; viewId: string; message: unknown }
  | { type: "display_mode"; viewId: string; mode: "inline" | "fullscreen" | "pip" }
  | { type: "size"; viewId: string; width: number | null; height: number | null }
  /** The view proposes a message: it goes to the composer for the user to send, never straight to the model. */
  | { type: "proposed_message"; viewId: string; text: string }
  | { type: "closed"; viewId: string }
  /** A view offers files to save: ask the person (`answerDownload`). */
  | { type: "download_request"; viewId: string; requestId: string; tool: string; files: DownloadOffer[] }
  /** What became of a view's download offer, in words. */
  | { type: "download_result"; viewId: string; message: string };

/** porthole_apps::download::DownloadFile, as the window sees it (no bytes). */
export interface DownloadOffer {
  name: string;
  mime: string | null;
  size: number;
}

// --- model and general settings ---
export type ProviderKind = "openai" | "anthropic";

/** app_settings::ProviderKeys: where a provider's key is (never the key). */
export interface ProviderKeys {
  provider: ProviderKind;
  defaultBaseUrl: string;
  /** e.g. OPENAI_API_KEY; a key there wins over the keyring. */
  keyEnvVar: string;
  keyFromEnv: boolean;
  /** The OS keyring holds a key for this provider. */
  keyStored: boolean;
}

/** app_settings::ModelSettings: what this run uses (flags, else settings, else defaults). */
export interface ModelSettings {
  provider: ProviderKind;
  baseUrl: string;
  /** Null: the provider's only model. */
  model: string | null;
  /** What the command line / PORTHOLE_* environment fixes for this run (it wins over the settings). */
  flagsOverride: { provider: string | null; baseUrl: string | null; model: string | null };
  providers: ProviderKeys[];
  /** Why keys cannot be kept in an OS keyring, in words (null when they can). */
  keyringProblem: string | null;
}

/** app_settings::ModelTest: the one-prompt test request's outcome. */
export interface ModelTest {
  ok: boolean;
  model: string;
  reply: string | null;
  error: string | null;
  ms: number;
}

export type ThemePreference = "system" | "light" | "dark";

/** app_settings::GeneralSettings */
export interface GeneralSettings {
  viewRetentionDays: number;
  theme: ThemePreference;
}

// --- tools panel ---
/** tool_runs::ToolRun: a tools-panel run that started. */
export interface ToolRun {
  conversationId: string;
  callId: string;
}

// --- MCP server settings ---
/** server_settings::ServerEntry (with config_file::EntryFields): one server entry of one config
 * file, as written. Env and header values are never sent: only their names. */
export interface ServerEntry {
  name: string;
  /** The file it is written in. */
  source: string;
  /** In the profile's own config file (others, from --mcp-config, are read-only). */
  editable: boolean;
  /** A later file has a server of the same name, which is the one that runs. */
  shadowedBy: string | null;
  transport: "stdio" | "http" | "unknown";
  command: string;
  args: string[];
  envKeys: string[];
  cwd: string;
  url: string;
  headerKeys: string[];
  enabled: boolean;
  mcpApps: boolean;
  /** Why the entry cannot be used. */
  problem: string | null;
}

/** server_settings::ServerSettings */
export interface ServerSettings {
  /** The profile's config file, the one these settings change. */
  configFile: string;
  servers: ServerEntry[];
  /** The profile's own MCP Apps switch. */
  mcpApps: boolean;
  /** Whether MCP Apps is on for the servers now. */
  mcpAppsEffective: boolean;
  /** PORTHOLE_MCP_APPS=off is set: MCP Apps is off whatever the switch says. */
  mcpAppsEnvOff: boolean;
  /** A --mcp-config file that sets "mcpApps" itself (it wins over the profile's switch). */
  mcpAppsSetBy: string | null;
  problems: string[];
}

/** config_file::ServerDraft: env lines are `KEY=value`, header lines `Name: value`; a line with
 * the name alone keeps the stored value. */
export interface ServerDraft {
  name: string;
  transport:
    | { type: "stdio"; command: string; args: string[]; env: string[]; cwd: string }
    | { type: "http"; url: string; headers: string[] };
  enabled: boolean;
  mcpApps: boolean;
}

/** import::ImportSource: another client's config file on this machine. */
export interface ImportSource {
  client: string;
  path: string;
}

/** import::FoundServer */
export interface FoundServer {
  name: string;
  endpoint: string;
  importable: boolean;
  note: string | null;
}

export interface ImportPreview {
  path: string;
  servers: FoundServer[];
}

export interface ImportReport {
  settings: ServerSettings;
  /** Each server copied, and the name it got (another when its own was taken). */
  imported: { name: string; importedAs: string }[];
}

/** server_settings::ServerLog: the end of a stdio server's stderr log. */
export interface ServerLog {
  path: string;
  /** Null: there is no log file (yet). */
  text: string | null;
  truncated: boolean;
}

export const api = {
  appInfo: () => invoke<AppInfo>("app_info"),
  listServers: () => invoke<ServerStatus[]>("list_servers"),
  /** Tells the shell the composer can take input (start-up benchmark, logs). */
  uiReady: () => invoke<void>("ui_ready"),
  onServersChanged: (handler: (servers: ServerStatus[]) => void): Promise<UnlistenFn> =>
    listenHere<ServerStatus[]>("servers-changed", handler),
  /** Questions still waiting for an answer (asked before the window was listening, too). */
  listQuestions: () => invoke<Question[]>("list_questions"),
  onQuestion: (handler: (question: Question) => void): Promise<UnlistenFn> =>
    listenHere<Question>("elicitation-requested", handler),
  answerQuestion: (id: number, action: ElicitationAction, content?: Record<string, unknown>) =>
    invoke<void>("answer_elicitation", { id, action, content: content ?? null }),

  modelInfo: () => invoke<ModelInfo>("model_info"),
  listConversations: () => invoke<Conversation[]>("list_conversations"),
  openConversation: (id: string) => invoke<StoredConversation>("open_conversation", { id }),
  renameConversation: (id: string, title: string) => invoke<void>("rename_conversation", { id, title }),
  deleteConversation: (id: string) => invoke<void>("delete_conversation", { id }),
  searchConversations: (query: string) => invoke<SearchHit[]>("search_conversations", { query }),
  /** Starts a turn; resolves to the conversation's id at once. Events follow as chat-event. */
  sendMessage: (conversationId: string | null, text: string) =>
    invoke<string>("send_message", { conversationId, text }),
  stopTurn: (conversationId: string) => invoke<boolean>("stop_turn", { conversationId }),
  answerApproval: (callId: string, decision: Decision) => invoke<void>("answer_approval", { callId, decision }),
  onChatEvent: (handler: (event: ChatEvent) => void): Promise<UnlistenFn> =>
    listenHere<ChatEvent>("chat-event", handler),

  /** Relays one message a view's frame posted (the caller matched event.source to the frame). */
  viewMessage: (viewId: string, message: unknown) => invoke<void>("view_message", { viewId, message }),
  /** The frame is gone (conversation switched, scrolled far away, closed): tear the view down. */
  closeView: (viewId: string) => invoke<void>("close_view", { viewId }),
  /** The window changed a view's display mode (Esc, its buttons): the view is told. */
  setViewDisplayMode: (viewId: string, mode: "inline" | "fullscreen" | "pip") =>
    invoke<void>("set_view_display_mode", { viewId, mode }),
  /** Views of a stored conversation, re-created with their stored input and result (or expired). */
  reopenViews: (conversationId: string, callId?: string) =>
    invoke<void>("reopen_views", { conversationId, callId: callId ?? null }),
  /** Before leaving a conversation: its views get ui/resource-teardown while their frames are
   * still on screen (resolves when every view answered or timed out, at most ~2 s). */
  teardownViews: (conversationId: string) => invoke<void>("teardown_views", { conversationId }),
  /** The card's room for a view changed: the view is told its container's width. */
  setViewContainer: (viewId: string, width: number) => invoke<void>("set_view_container", { viewId, width }),
  /** A view about to leave the screen while its frame is still there gets ui/resource-teardown
   * (resolves once it answered or timed out, ~2 s at most); Rust then forgets it. */
  teardownView: (viewId: string) => invoke<void>("teardown_view", { viewId }),
  /** The person's answer to a view's download offer; resolves to the number of files saved
   * (each through the system's save dialog). */
  answerDownload: (requestId: string, accept: boolean) => invoke<number>("answer_download", { requestId, accept }),
  /** Moves a ready view from its card into a window of its own; resolves to the window's label.
   * Closing that window brings the view back to its card. */
  popOutView: (viewId: string) => invoke<string>("pop_out_view", { viewId }),
  /** A pop-out window's front end is listening: Rust re-creates its view in it; resolves to the
   * tool's name. */
  popOutReady: () => invoke<string>("pop_out_ready"),
  /** The person asked for a copy: said just before the page writes the clipboard, so the
   * clipboard guard (Linux) keeps the write. */
  clipboardWriteRequested: () => invoke<void>("clipboard_write_requested"),
  /** From a pop-out window: close it and send its view back to its card. */
  popInView: () => invoke<void>("pop_in_view"),
  onViewEvent: (handler: (event: ViewEvent) => void): Promise<UnlistenFn> =>
    listenHere<ViewEvent>("view-event", handler),
  // --- retry and edit ---
  /** Runs the conversation's last user message again: its replies (messages, tool calls, views)
   * are dropped and a new turn starts; its events follow as chat-event. Refused while a reply
   * is being written. */
  retryTurn: (conversationId: string) => invoke<void>("retry_turn", { conversationId }),
  /** Replaces the conversation's last user message with `text`, drops everything after it and
   * starts a turn with it; its events follow as chat-event. Refused while a reply is being written. */
  editAndResend: (conversationId: string, text: string) => invoke<void>("edit_and_resend", { conversationId, text }),
  // --- model and general settings ---
  modelSettings: () => invoke<ModelSettings>("model_settings"),
  /** Stores the provider, base URL and model (null: the provider's only model); refused with the reason when invalid. */
  saveModelSettings: (provider: ProviderKind, baseUrl: string, model: string | null) =>
    invoke<void>("save_model_settings", { provider, baseUrl, model }),
  /** The provider's models, with `apiKey` if given, else the environment's or the keyring's key. */
  listProviderModels: (provider: ProviderKind, baseUrl: string, apiKey: string | null) =>
    invoke<string[]>("list_provider_models", { provider, baseUrl, apiKey }),
  /** Sends a one-line prompt through the provider's streaming API. */
  testModel: (provider: ProviderKind, baseUrl: string, model: string | null, apiKey: string | null) =>
    invoke<ModelTest>("test_model", { provider, baseUrl, model, apiKey }),
  /** Puts the key in the OS keyring (refused when there is none). */
  saveApiKey: (provider: ProviderKind, key: string) => invoke<void>("save_api_key", { provider, key }),
  deleteApiKey: (provider: ProviderKind) => invoke<void>("delete_api_key", { provider }),
  generalSettings: () => invoke<GeneralSettings>("general_settings"),
  /** Stores what is given; a new theme reaches every live view at once. Resolves to what is stored. */
  saveGeneralSettings: (settings: { viewRetentionDays?: number; theme?: ThemePreference }) =>
    invoke<GeneralSettings>("save_general_settings", {
      viewRetentionDays: settings.viewRetentionDays ?? null,
      theme: settings.theme ?? null,
    }),
  /** The page saw the system's light/dark appearance (at start and on change). */
  systemThemeChanged: (dark: boolean) => invoke<void>("system_theme_changed", { dark }),
  // --- tools panel ---
  /** Runs one tool with these arguments, no model and no approval prompt (the person pressed
   * Run), in the conversation (a new one titled "Run <tool>" when null); resolves at once. Its
   * events follow as chat-event — the same card and view as a model's call — ending with
   * `done`; stopTurn cancels it. Refused while a reply is being written in that conversation. */
  runTool: (conversationId: string | null, server: string, tool: string, args: Record<string, unknown>) =>
    invoke<ToolRun>("run_tool", { conversationId, server, tool, arguments: args }),
  // --- MCP server settings ---
  /** The servers of every config file, the MCP Apps switch, and the files' problems. */
  serverSettings: () => invoke<ServerSettings>("server_settings"),
  /** Adds a server (originalName null) or changes one (maybe renaming it); refused with the
   * reasons when invalid. The running servers follow (unchanged ones keep their connection). */
  saveServer: (originalName: string | null, server: ServerDraft) =>
    invoke<ServerSettings>("save_server", { originalName, server }),
  removeServer: (name: string) => invoke<ServerSettings>("remove_server", { name }),
  setServerEnabled: (name: string, enabled: boolean) =>
    invoke<ServerSettings>("set_server_enabled", { name, enabled }),
  /** Whether MCP Apps is advertised to this server (it reconnects). */
  setServerMcpApps: (name: string, enabled: boolean) =>
    invoke<ServerSettings>("set_server_mcp_apps", { name, enabled }),
  /** The global MCP Apps switch (servers reconnect with or without the capability). */
  setMcpApps: (enabled: boolean) => invoke<ServerSettings>("set_mcp_apps", { enabled }),
  /** Claude Desktop's, Cursor's and VS Code's config files, where this machine has them. */
  importCandidates: () => invoke<ImportSource[]>("import_candidates"),
  /** The servers in another client's config file (a full path, or ~/…). */
  importPreview: (path: string) => invoke<ImportPreview>("import_preview", { path }),
  importServers: (path: string, names: string[]) => invoke<ImportReport>("import_servers", { path, names }),
  serverLog: (name: string) => invoke<ServerLog>("server_log", { name }),
  /** OAuth in the system browser; resolves once signed in and reconnected. */
  signInServer: (name: string) => invoke<void>("sign_in_server", { name }),
  /** Deletes the stored sign-in and reconnects without one; resolves to what happened, in words. */
  signOutServer: (name: string) => invoke<string>("sign_out_server", { name }),
};
