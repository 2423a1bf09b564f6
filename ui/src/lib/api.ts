// The front end's one door to Rust. The commands and events, and the types they carry, are
// generated from the Rust types into ./generated (`PORTHOLE_BLESS=1 cargo test -p porthole-host
// --test contract`); this file gives them the names and call shapes the components use.
// Nothing else imports @tauri-apps/api.
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import { getCurrentWebview } from "@tauri-apps/api/webview";
import type { AppError } from "./generated/AppError";
import type { AttachmentRef } from "./generated/AttachmentRef";
import type { CompletionTarget } from "./generated/CompletionTarget";
import type { SamplingDecision } from "./generated/SamplingDecision";
import type { ScrollPosition } from "./generated/ScrollPosition";
import type { DisplayMode } from "./generated/DisplayMode";
import type { Decision } from "./generated/Decision";
import type { ElicitationAction } from "./generated/ElicitationAction";
import type { ExportFormat } from "./generated/ExportFormat";
import type { ProviderKind } from "./generated/ProviderKind";
import type { AgentDraft } from "./generated/AgentDraft";
import type { ServerDraft } from "./generated/ServerDraft";
import type { ThemePreference } from "./generated/ThemePreference";
import type { JsonValue } from "./generated/serde_json/JsonValue";
import type { HostEmulation } from "./generated/HostEmulation";
import { commands } from "./generated/commands";
import type { AppEvents } from "./generated/events";

export type { AgentDraft } from "./generated/AgentDraft";
export type { AgentEntry } from "./generated/AgentEntry";
export type { AgentSummary } from "./generated/AgentSummary";
export type { AllowedBy } from "./generated/AllowedBy";
export type { EmulationOverrides } from "./generated/EmulationOverrides";
export type { HostEmulation } from "./generated/HostEmulation";
export type { HostEmulationState } from "./generated/HostEmulationState";
export type { HostPreset } from "./generated/HostPreset";
export type { AppError } from "./generated/AppError";
export type { AppInfo } from "./generated/AppInfo";
export type { Approvals } from "./generated/Approvals";
export type { AttachmentInfo } from "./generated/AttachmentInfo";
export type { AttachmentRef } from "./generated/AttachmentRef";
export type { CompletionTarget } from "./generated/CompletionTarget";
export type { PromptEntry } from "./generated/PromptEntry";
export type { PromptList } from "./generated/PromptList";
export type { PromptPreview } from "./generated/PromptPreview";
export type { ResourceEntry } from "./generated/ResourceEntry";
export type { ResourceList } from "./generated/ResourceList";
export type { SampledMessage } from "./generated/SampledMessage";
export type { ScrollPosition } from "./generated/ScrollPosition";
export type { SamplingDecision } from "./generated/SamplingDecision";
export type { ServerSampling } from "./generated/ServerSampling";
export type { TemplateEntry } from "./generated/TemplateEntry";
export type { TrafficEntry } from "./generated/TrafficEntry";
export type { ViewInspection } from "./generated/ViewInspection";
export type { Audience } from "./generated/Audience";
export type { CallStatus } from "./generated/CallStatus";
export type { CatalogTool } from "./generated/CatalogTool";
export type { ChatEvent } from "./generated/ChatEvent";
export type { Conversation } from "./generated/Conversation";
export type { ConversationList } from "./generated/ConversationList";
export type { Decision } from "./generated/Decision";
export type { DisplayMode } from "./generated/DisplayMode";
export type { ExportFormat } from "./generated/ExportFormat";
export type { DownloadFile } from "./generated/DownloadFile";
export type { ElicitationAction } from "./generated/ElicitationAction";
export type { ErrorCode } from "./generated/ErrorCode";
export type { FoundServer } from "./generated/FoundServer";
export type { GeneralSettings } from "./generated/GeneralSettings";
export type { ImportPreview } from "./generated/ImportPreview";
export type { ImportReport } from "./generated/ImportReport";
export type { ImportSource } from "./generated/ImportSource";
export type { JsonValue } from "./generated/serde_json/JsonValue";
/** A message of a turn (porthole_agent::Message, stored format: snake_case part fields). */
export type { Message as AgentMessage } from "./generated/Message";
export type { MessageRole } from "./generated/MessageRole";
export type { MessageStatus } from "./generated/MessageStatus";
export type { ModelFacing } from "./generated/ModelFacing";
export type { ModelInfo } from "./generated/ModelInfo";
export type { ModelSettings } from "./generated/ModelSettings";
export type { ModelTest } from "./generated/ModelTest";
export type { Part } from "./generated/Part";
export type { ProviderKeys } from "./generated/ProviderKeys";
export type { ProviderKind } from "./generated/ProviderKind";
export type { Question } from "./generated/Question";
export type { RetryKind } from "./generated/RetryKind";
export type { SearchHit } from "./generated/SearchHit";
export type { ServerDetails } from "./generated/ServerDetails";
export type { ServerDraft } from "./generated/ServerDraft";
export type { ServerEntry } from "./generated/ServerEntry";
export type { ServerLog } from "./generated/ServerLog";
export type { ServerSettings } from "./generated/ServerSettings";
export type { ServerState } from "./generated/ServerState";
export type { ServerStatus } from "./generated/ServerStatus";
export type { StopReason } from "./generated/StopReason";
export type { StoredConversation } from "./generated/StoredConversation";
export type { StoredMessage } from "./generated/StoredMessage";
export type { ThemePreference } from "./generated/ThemePreference";
/** Where a stored tool call is in its life (the transcript has its own `ToolCallStatus`). */
export type { ToolCallStatus as StoredCallStatus } from "./generated/ToolCallStatus";
export type { ToolCallRecord } from "./generated/ToolCallRecord";
export type { ToolRun } from "./generated/ToolRun";
export type { TurnEvent } from "./generated/TurnEvent";
export type { Usage } from "./generated/Usage";
export type { ViewEvent } from "./generated/ViewEvent";
export type { ViewStatus } from "./generated/ViewStatus";
export type { Widget } from "./generated/Widget";
export type { AppEvents } from "./generated/events";

/** Whether `e` is the `{code, message}` a failed command rejects with. */
export function isAppError(e: unknown): e is AppError {
  return (
    typeof e === "object" &&
    e !== null &&
    typeof (e as { code?: unknown }).code === "string" &&
    typeof (e as { message?: unknown }).message === "string"
  );
}

/** A failed command's error, in words for the person: an `AppError`'s message, a plain string
 * (Tauri's own refusals, e.g. a command the window may not call), or an `Error`'s message. */
export function errorMessage(e: unknown): string {
  if (isAppError(e)) return e.message;
  if (e instanceof Error) return e.message;
  if (typeof e === "string") return e;
  return JSON.stringify(e) ?? String(e);
}

/** Listens for `name` sent to this window: Rust sends each event to the window it concerns
 * (`emit_to` its label; a pop-out window's view events go to it alone), and a plain `listen`
 * would hear every window's. */
function listenHere<K extends keyof AppEvents>(name: K, handler: (payload: AppEvents[K]) => void): Promise<UnlistenFn> {
  return listen<AppEvents[K]>(name, (e) => handler(e.payload), { target: getCurrentWebview().label });
}

/** Calls `handler` with each payload in order, but in a task of its own after whatever the
 * page already queued. The chat's events re-render the transcript (a long task); a view's
 * message posted just before (its tool result, sent by Rust first) is then delivered to the
 * view's frame first, instead of waiting for that re-render. */
export function afterQueuedTasks<T>(handler: (payload: T) => void): (payload: T) => void {
  const queue: T[] = [];
  let scheduled = false;
  const channel = typeof MessageChannel === "function" ? new MessageChannel() : null;
  const drain = () => {
    scheduled = false;
    for (const payload of queue.splice(0)) {
      // One event's failure is its own: the ones after it are still handled.
      try {
        handler(payload);
      } catch (e) {
        console.error("an event could not be handled:", e);
      }
    }
  };
  if (channel) channel.port1.onmessage = drain;
  return (payload: T) => {
    queue.push(payload);
    if (scheduled) return;
    scheduled = true;
    if (channel) channel.port2.postMessage(null);
    else setTimeout(drain, 0);
  };
}

export const api = {
  appInfo: () => commands.appInfo(),
  listServers: () => commands.listServers(),
  /** Tells the shell the composer can take input (start-up benchmark, logs). */
  uiReady: () => commands.uiReady(),
  onServersChanged: (handler: (servers: AppEvents["servers-changed"]) => void): Promise<UnlistenFn> =>
    listenHere("servers-changed", handler),
  /** Questions still waiting for an answer (asked before the window was listening, too). */
  listQuestions: () => commands.listQuestions(),
  onQuestion: (handler: (question: AppEvents["elicitation-requested"]) => void): Promise<UnlistenFn> =>
    listenHere("elicitation-requested", handler),
  /** A server asks the model something (sampling/createMessage): first to be allowed, then
   * again with the model's answer, to be sent back or refused. */
  onServerSampling: (handler: (request: AppEvents["sampling-requested"]) => void): Promise<UnlistenFn> =>
    listenHere("sampling-requested", handler),
  /** A server's sampling request is over (answered, or given up): stop asking. */
  onServerSamplingSettled: (handler: (settled: AppEvents["sampling-settled"]) => void): Promise<UnlistenFn> =>
    listenHere("sampling-settled", handler),
  answerServerSampling: (id: number, decision: SamplingDecision) => commands.answerServerSampling({ id, decision }),
  answerQuestion: (id: number, action: ElicitationAction, content?: Record<string, JsonValue>) =>
    commands.answerElicitation({ id, action, content: content ?? null }),

  modelInfo: () => commands.modelInfo(),
  listConversations: () => commands.listConversations(),
  /** Up to `limit` conversations, most recently updated first, after the one with id `after`. */
  listConversationPage: (limit: number, after: string | null) => commands.listConversationPage({ limit, after }),
  /** A stored conversation's last turns (`earlier` says whether more precede them). */
  openConversation: (id: string) => commands.openConversation({ id }),
  /** The turns of conversation `id` before its message `before` (the first one loaded). */
  earlierMessages: (id: string, before: number) => commands.earlierMessages({ id, before }),
  /** Where the reader stopped scrolling in conversation `id` (null: at its end), for next time. */
  keepScrollPosition: (conversationId: string, position: ScrollPosition | null) => commands.keepScrollPosition({ conversationId, position }),
  renameConversation: (id: string, title: string) => commands.renameConversation({ id, title }),
  deleteConversation: (id: string) => commands.deleteConversation({ id }),
  /** Exports a conversation to a file the person chooses; resolves to its path (null: cancelled). */
  exportConversation: (id: string, format: ExportFormat) => commands.exportConversation({ id, format }),
  /** Reads resource `uri` of `server` (a tool result's link): its `contents`, each cut at 1 MB. */
  readResource: (server: string, uri: string) => commands.readResource({ server, uri }),
  searchConversations: (query: string) => commands.searchConversations({ query }),
  /** Starts a turn; resolves to the conversation's id at once. Events follow as chat-event. */
  sendMessage: (conversationId: string | null, text: string, attachments: AttachmentRef[] = [], agent: string | null = null) =>
    commands.sendMessage({ conversationId, text, attachments, ...(agent ? { agent } : {}) }),
  listAgents: () => commands.listAgents(),
  agentSettings: () => commands.agentSettings(),
  saveAgent: (originalName: string | null, agent: AgentDraft) => commands.saveAgent({ originalName, agent }),
  removeAgent: (name: string) => commands.removeAgent({ name }),
  // --- prompts and resources in the chat ---
  /** Every connected server's prompts (the composer's / menu), and servers that could not list theirs. */
  listPrompts: () => commands.listPrompts(),
  /** Suggestions (completion/complete) for an argument of a prompt or resource template,
   * typed so far as `value`, knowing the other arguments' values. */
  completeArgument: (server: string, target: CompletionTarget, argument: string, value: string, context: Record<string, string>) =>
    commands.completeArgument({ server, target, argument, value, context }),
  /** Sends a server's prompt (its messages) as the person's turn; resolves to the conversation's id. */
  sendPrompt: (conversationId: string | null, server: string, name: string, args: Record<string, string>) =>
    commands.sendPrompt({ conversationId, server, name, arguments: args }),
  /** Every connected server's resources and resource templates (the composer's @ picker). */
  listAttachable: () => commands.listAttachable(),
  /** The URI a resource template makes with these values. */
  templateUri: (uriTemplate: string, values: Record<string, string>) => commands.templateUri({ uriTemplate, values }),
  // --- the workbench's server inspector ---
  /** What a connected server said of itself: name, version, protocol, capabilities, instructions. */
  serverDetails: (server: string) => commands.serverDetails({ name: server }),
  /** Pings a server; resolves to the round trip (ms). */
  pingServer: (server: string) => commands.pingServer({ name: server }),
  /** The messages of a server's traffic log after entry `after` (0: all kept), oldest first. */
  serverTraffic: (server: string, after: number) => commands.serverTraffic({ server, after }),
  /** One message's JSON (null: too large to keep, or gone). */
  trafficMessage: (server: string, seq: number) => commands.trafficMessage({ server, seq }),
  /** Writes a server's traffic log as JSON lines to a file the person chooses (null: cancelled). */
  exportServerTraffic: (server: string) => commands.exportServerTraffic({ name: server }),
  /** Subscribes to a resource's updates (false: the server does not offer that). */
  subscribeResource: (server: string, uri: string) => commands.subscribeResource({ server, uri }),
  // --- the workbench's view inspector ---
  /** Watches the views the window shows from now on (on), or stops. */
  setViewInspection: (on: boolean) => commands.setViewInspection({ on }),
  viewInspectionOn: () => commands.viewInspectionOn(),
  /** What the inspector shows of a view (null: not watched, or gone). */
  viewInspection: (viewId: string) => commands.viewInspection({ viewId }),
  /** Shows the view's call again in a fresh view with this input and result; the server is not called. */
  replayView: (viewId: string, input: JsonValue, result: JsonValue) => commands.replayView({ viewId, input, result }),
  /** Reads the view's resource again and shows its call in a fresh view. */
  reloadView: (viewId: string) => commands.reloadView({ viewId }),
  /** Shows a server's ui:// resource as a view with this sample input and result (the server gives only the HTML). */
  previewView: (server: string, uri: string, input: JsonValue, result: JsonValue) => commands.previewView({ server, uri, input, result }),
  // --- the workbench's host emulation ---
  /** The host emulation as set, and the presets. */
  hostEmulation: () => commands.hostEmulation(),
  /** Sets the host emulation; live views get it at once. */
  setHostEmulation: (emulation: HostEmulation) => commands.setHostEmulation({ emulation }),
  /** A prompt's messages with these arguments, not sent anywhere. */
  previewPrompt: (server: string, name: string, args: Record<string, string>) => commands.previewPrompt({ server, name, arguments: args }),
  /** Reads a resource and checks a model can take it: its chip, or why it cannot be attached. */
  attachResource: (server: string, uri: string) => commands.attachResource({ server, uri }),
  stopTurn: (conversationId: string) => commands.stopTurn({ conversationId }),
  /** The turn asks the model now, without the servers still starting; false when none runs. */
  sendWithoutWaiting: (conversationId: string) => commands.sendWithoutWaiting({ conversationId }),
  answerApproval: (callId: string, decision: Decision) => commands.answerApproval({ callId, decision }),
  /** Everything allowed for good: tools that run without asking (remembered, or the config's
   * alwaysAllow) and servers whose requests to the model are not asked about. */
  approvals: () => commands.approvals(),
  /** The tool's calls are asked about again (a remembered "Always allow" is forgotten). */
  revokeToolApproval: (server: string, tool: string) => commands.revokeToolApproval({ server, tool }),
  /** The server's requests to the model are asked about again. */
  revokeSampling: (name: string) => commands.revokeSampling({ name }),
  onChatEvent: (handler: (event: AppEvents["chat-event"]) => void): Promise<UnlistenFn> =>
    listenHere("chat-event", afterQueuedTasks(handler)),

  /** Relays one message a view's frame posted (the caller matched event.source to the frame). */
  viewMessage: (viewId: string, message: unknown) => commands.viewMessage({ viewId, message: message as JsonValue }),
  /** The frame is gone (conversation switched, scrolled far away, closed): tear the view down. */
  closeView: (viewId: string) => commands.closeView({ viewId }),
  /** The window changed a view's display mode (Esc, its buttons): the view is told. */
  setViewDisplayMode: (viewId: string, mode: DisplayMode) => commands.setViewDisplayMode({ viewId, mode }),
  /** Views of a stored conversation, re-created with their stored input and result (or expired). */
  reopenViews: (conversationId: string, callId?: string) => commands.reopenViews({ conversationId, callId: callId ?? null }),
  /** Before leaving a conversation: its views get ui/resource-teardown while their frames are
   * still on screen (resolves when every view answered or timed out, at most ~2 s). */
  teardownViews: (conversationId: string) => commands.teardownViews({ conversationId }),
  /** The card's room for a view changed: the view is told its container's width. */
  setViewContainer: (viewId: string, width: number) => commands.setViewContainer({ viewId, width }),
  /** A view about to leave the screen while its frame is still there gets ui/resource-teardown
   * (resolves once it answered or timed out, ~2 s at most); Rust then forgets it. */
  teardownView: (viewId: string) => commands.teardownView({ viewId }),
  /** Lets the view's server use the devices the view asks for (kept for its views until its
   * view data is cleared); the view is loaded again with them. */
  allowViewDevices: (viewId: string) => commands.allowViewDevices({ viewId }),
  /** The person's answer to a view's download offer; resolves to the number of files saved
   * (each through the system's save dialog). */
  answerDownload: (requestId: string, accept: boolean) => commands.answerDownload({ requestId, accept }),
  /** The person's answer to a view's request to open a link (open: the browser opens it). */
  answerLink: (requestId: number, open: boolean) => commands.answerLink({ requestId, open }),
  /** The person's answer to a view's sampling request (approved: the prompt goes to the model). */
  answerSampling: (requestId: number, approve: boolean) => commands.answerSampling({ requestId, approve }),
  /** Moves a ready view from its card into a window of its own; resolves to the window's label.
   * Closing that window brings the view back to its card. */
  popOutView: (viewId: string) => commands.popOutView({ viewId }),
  /** A pop-out window's front end is listening: Rust re-creates its view in it; resolves to the
   * tool's name. */
  popOutReady: () => commands.popOutReady(),
  /** The person asked for a copy: said just before the page writes the clipboard, so the
   * clipboard guard (Linux) keeps the write. */
  clipboardWriteRequested: () => commands.clipboardWriteRequested(),
  /** From a pop-out window: close it and send its view back to its card. */
  popInView: () => commands.popInView(),
  onViewEvent: (handler: (event: AppEvents["view-event"]) => void): Promise<UnlistenFn> =>
    listenHere("view-event", handler),
  // --- retry and edit ---
  /** Runs the conversation's last user message again: its replies (messages, tool calls, views)
   * are dropped and a new turn starts; its events follow as chat-event. Refused while a reply
   * is being written. */
  retryTurn: (conversationId: string) => commands.retryTurn({ conversationId }),
  /** Replaces the conversation's last user message with `text`, drops everything after it and
   * starts a turn with it; its events follow as chat-event. Refused while a reply is being written. */
  editAndResend: (conversationId: string, text: string) => commands.editAndResend({ conversationId, text }),
  // --- model and general settings ---
  modelSettings: () => commands.modelSettings(),
  /** Stores the provider, base URL and model (null: the provider's only model); refused with the reason when invalid. */
  saveModelSettings: (provider: ProviderKind, baseUrl: string, model: string | null) =>
    commands.saveModelSettings({ provider, baseUrl, model }),
  /** The provider's models, with `apiKey` if given, else the environment's or the keyring's key. */
  listProviderModels: (provider: ProviderKind, baseUrl: string, apiKey: string | null) =>
    commands.listProviderModels({ provider, baseUrl, apiKey }),
  /** Sends a one-line prompt through the provider's streaming API. */
  testModel: (provider: ProviderKind, baseUrl: string, model: string | null, apiKey: string | null) =>
    commands.testModel({ provider, baseUrl, model, apiKey }),
  /** Puts the key in the OS keyring (refused when there is none). */
  saveApiKey: (provider: ProviderKind, key: string) => commands.saveApiKey({ provider, key }),
  deleteApiKey: (provider: ProviderKind) => commands.deleteApiKey({ provider }),
  generalSettings: () => commands.generalSettings(),
  /** Stores what is given (checked in Rust: origin lists are https:// or wss:// origins, an
   * empty client metadata URL clears it); a new theme reaches every live view at once, origin
   * lists apply to views opened from now on. Resolves to what is stored. */
  saveGeneralSettings: (settings: {
    viewRetentionDays?: number;
    theme?: ThemePreference;
    viewOriginsAllowed?: string[];
    viewOriginsBlocked?: string[];
    clientMetadataUrl?: string;
    roots?: string[];
  }) =>
    commands.saveGeneralSettings({
      viewRetentionDays: settings.viewRetentionDays ?? null,
      theme: settings.theme ?? null,
      viewOriginsAllowed: settings.viewOriginsAllowed ?? null,
      viewOriginsBlocked: settings.viewOriginsBlocked ?? null,
      clientMetadataUrl: settings.clientMetadataUrl ?? null,
      roots: settings.roots ?? null,
    }),
  /** The page saw the system's light/dark appearance (at start and on change). */
  systemThemeChanged: (dark: boolean) => commands.systemThemeChanged({ dark }),
  // --- tools panel ---
  /** Runs one tool with these arguments, no model and no approval prompt (the person pressed
   * Run), in the conversation (a new one titled "Run <tool>" when null); resolves at once. Its
   * events follow as chat-event — the same card and view as a model's call — ending with
   * `done`; stopTurn cancels it. Refused while a reply is being written in that conversation. */
  runTool: (conversationId: string | null, server: string, tool: string, args: Record<string, unknown>) =>
    commands.runTool({ conversationId, server, tool, arguments: args as JsonValue }),
  // --- MCP server settings ---
  /** The servers of every config file, the MCP Apps switch, and the files' problems. */
  serverSettings: () => commands.serverSettings(),
  /** Adds a server (originalName null) or changes one (maybe renaming it); refused with the
   * reasons when invalid. The running servers follow (unchanged ones keep their connection). */
  saveServer: (originalName: string | null, server: ServerDraft) => commands.saveServer({ originalName, server }),
  removeServer: (name: string) => commands.removeServer({ name }),
  setServerEnabled: (name: string, enabled: boolean) => commands.setServerEnabled({ name, enabled }),
  /** Whether MCP Apps is advertised to this server (it reconnects). */
  setServerMcpApps: (name: string, enabled: boolean) => commands.setServerMcpApps({ name, enabled }),
  /** The global MCP Apps switch (servers reconnect with or without the capability). */
  setMcpApps: (enabled: boolean) => commands.setMcpApps({ enabled }),
  /** Claude Desktop's, Cursor's and VS Code's config files, where this machine has them. */
  importCandidates: () => commands.importCandidates(),
  /** The servers in another client's config file (a full path, or ~/…). */
  importPreview: (path: string) => commands.importPreview({ path }),
  /** Asks for another client's config file in a dialog: its path, or null when cancelled. */
  chooseImportFile: () => commands.chooseImportFile(),
  importServers: (path: string, names: string[]) => commands.importServers({ path, names }),
  /** The install link (porthole://install-server?…) waiting for the person's answer, if any
   * (opened before the window was listening, too). */
  serverInstallRequest: () => commands.serverInstallRequest(),
  onServerInstall: (handler: (request: AppEvents["server-install-requested"]) => void): Promise<UnlistenFn> =>
    listenHere("server-install-requested", handler),
  /** Adds the link's server (add) or not; resolves to the servers' settings when it was added. */
  answerServerInstall: (id: number, add: boolean) => commands.answerServerInstall({ id, add }),
  serverLog: (name: string) => commands.serverLog({ name }),
  /** OAuth in the system browser; resolves once signed in and reconnected. */
  signInServer: (name: string) => commands.signInServer({ name }),
  /** Connects a server anew (a stdio server is restarted); its status says how it went. */
  reconnectServer: (name: string) => commands.reconnectServer({ name }),
  /** Deletes the stored sign-in and reconnects without one; resolves to what happened, in words. */
  signOutServer: (name: string) => commands.signOutServer({ name }),
  /** Forgets what the server's views stored (localStorage, IndexedDB): its next view starts
   * on a new origin with nothing kept; resolves to what happened, in words. */
  clearViewData: (name: string) => commands.clearViewData({ name }),
  /** Moves a damaged conversation store aside (kept, renamed) and restarts Porthole with a
   * fresh one; resolves to where the old file went, in words. */
  recoverStore: () => commands.recoverStore(),
};
