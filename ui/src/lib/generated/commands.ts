// Generated from the Rust types by `PORTHOLE_BLESS=1 cargo test -p porthole-host --test contract`.
// Do not edit: change the Rust side and generate again.
import { invoke } from "@tauri-apps/api/core";
import type { AgentEntry } from "./AgentEntry";
import type { AgentRef } from "./AgentRef";
import type { AgentSummary } from "./AgentSummary";
import type { AnswerApproval } from "./AnswerApproval";
import type { AnswerDownload } from "./AnswerDownload";
import type { AnswerElicitation } from "./AnswerElicitation";
import type { AnswerLink } from "./AnswerLink";
import type { AnswerSampling } from "./AnswerSampling";
import type { AnswerServerInstall } from "./AnswerServerInstall";
import type { AnswerServerSampling } from "./AnswerServerSampling";
import type { AppInfo } from "./AppInfo";
import type { Approvals } from "./Approvals";
import type { AttachmentInfo } from "./AttachmentInfo";
import type { CompleteArgument } from "./CompleteArgument";
import type { Completions } from "./Completions";
import type { Conversation } from "./Conversation";
import type { ConversationList } from "./ConversationList";
import type { ConversationPage } from "./ConversationPage";
import type { ConversationRef } from "./ConversationRef";
import type { EarlierMessages } from "./EarlierMessages";
import type { EditAndResend } from "./EditAndResend";
import type { ExportConversation } from "./ExportConversation";
import type { GeneralSettings } from "./GeneralSettings";
import type { HostEmulationState } from "./HostEmulationState";
import type { ImportPath } from "./ImportPath";
import type { ImportPreview } from "./ImportPreview";
import type { ImportReport } from "./ImportReport";
import type { ImportServers } from "./ImportServers";
import type { ImportSource } from "./ImportSource";
import type { InConversation } from "./InConversation";
import type { InspectionSwitch } from "./InspectionSwitch";
import type { JsonValue } from "./serde_json/JsonValue";
import type { KeepScrollPosition } from "./KeepScrollPosition";
import type { McpAppsSwitch } from "./McpAppsSwitch";
import type { ModelInfo } from "./ModelInfo";
import type { ModelSettings } from "./ModelSettings";
import type { ModelTest } from "./ModelTest";
import type { PreviewPrompt } from "./PreviewPrompt";
import type { PreviewView } from "./PreviewView";
import type { PromptList } from "./PromptList";
import type { PromptPreview } from "./PromptPreview";
import type { ProviderRef } from "./ProviderRef";
import type { ProviderRequest } from "./ProviderRequest";
import type { Question } from "./Question";
import type { RenameConversation } from "./RenameConversation";
import type { ReopenViews } from "./ReopenViews";
import type { ReplayView } from "./ReplayView";
import type { ResourceList } from "./ResourceList";
import type { ResourceRead } from "./ResourceRead";
import type { ResourceRef } from "./ResourceRef";
import type { RunTool } from "./RunTool";
import type { SaveAgent } from "./SaveAgent";
import type { SaveApiKey } from "./SaveApiKey";
import type { SaveGeneralSettings } from "./SaveGeneralSettings";
import type { SaveModelSettings } from "./SaveModelSettings";
import type { SaveServer } from "./SaveServer";
import type { SearchConversations } from "./SearchConversations";
import type { SearchHit } from "./SearchHit";
import type { SendMessage } from "./SendMessage";
import type { SendPrompt } from "./SendPrompt";
import type { ServerDetails } from "./ServerDetails";
import type { ServerInstallRequest } from "./ServerInstallRequest";
import type { ServerLog } from "./ServerLog";
import type { ServerRef } from "./ServerRef";
import type { ServerSettings } from "./ServerSettings";
import type { ServerStatus } from "./ServerStatus";
import type { ServerSwitch } from "./ServerSwitch";
import type { ServerTraffic } from "./ServerTraffic";
import type { SetHostEmulation } from "./SetHostEmulation";
import type { SetViewContainer } from "./SetViewContainer";
import type { SetViewDisplayMode } from "./SetViewDisplayMode";
import type { StoredConversation } from "./StoredConversation";
import type { SystemThemeChanged } from "./SystemThemeChanged";
import type { TemplateUri } from "./TemplateUri";
import type { TestModel } from "./TestModel";
import type { ToolRef } from "./ToolRef";
import type { ToolRun } from "./ToolRun";
import type { TrafficEntry } from "./TrafficEntry";
import type { TrafficMessage } from "./TrafficMessage";
import type { ViewInspection } from "./ViewInspection";
import type { ViewMessage } from "./ViewMessage";
import type { ViewPreview } from "./ViewPreview";
import type { ViewRef } from "./ViewRef";

/** Every window command, by its camelCase name; a failed command rejects with an `AppError`. */
export const commands = {
  appInfo: () => invoke<AppInfo>("app_info"),
  listServers: () => invoke<Array<ServerStatus>>("list_servers"),
  uiReady: () => invoke<void>("ui_ready"),
  answerElicitation: (args: AnswerElicitation) => invoke<void>("answer_elicitation", args),
  listQuestions: () => invoke<Array<Question>>("list_questions"),
  modelInfo: () => invoke<ModelInfo>("model_info"),
  listConversations: () => invoke<Array<Conversation>>("list_conversations"),
  listConversationPage: (args: ConversationPage) => invoke<ConversationList>("list_conversation_page", args),
  openConversation: (args: ConversationRef) => invoke<StoredConversation>("open_conversation", args),
  earlierMessages: (args: EarlierMessages) => invoke<StoredConversation>("earlier_messages", args),
  keepScrollPosition: (args: KeepScrollPosition) => invoke<void>("keep_scroll_position", args),
  renameConversation: (args: RenameConversation) => invoke<void>("rename_conversation", args),
  deleteConversation: (args: ConversationRef) => invoke<void>("delete_conversation", args),
  exportConversation: (args: ExportConversation) => invoke<string | null>("export_conversation", args),
  searchConversations: (args: SearchConversations) => invoke<Array<SearchHit>>("search_conversations", args),
  sendMessage: (args: SendMessage) => invoke<string>("send_message", args),
  listAgents: () => invoke<Array<AgentSummary>>("list_agents"),
  agentSettings: () => invoke<Array<AgentEntry>>("agent_settings"),
  saveAgent: (args: SaveAgent) => invoke<Array<AgentEntry>>("save_agent", args),
  removeAgent: (args: AgentRef) => invoke<Array<AgentEntry>>("remove_agent", args),
  listPrompts: () => invoke<PromptList>("list_prompts"),
  completeArgument: (args: CompleteArgument) => invoke<Completions>("complete_argument", args),
  sendPrompt: (args: SendPrompt) => invoke<string>("send_prompt", args),
  listAttachable: () => invoke<ResourceList>("list_attachable"),
  templateUri: (args: TemplateUri) => invoke<string>("template_uri", args),
  attachResource: (args: ResourceRef) => invoke<AttachmentInfo>("attach_resource", args),
  retryTurn: (args: InConversation) => invoke<void>("retry_turn", args),
  editAndResend: (args: EditAndResend) => invoke<void>("edit_and_resend", args),
  stopTurn: (args: InConversation) => invoke<boolean>("stop_turn", args),
  sendWithoutWaiting: (args: InConversation) => invoke<boolean>("send_without_waiting", args),
  answerApproval: (args: AnswerApproval) => invoke<void>("answer_approval", args),
  approvals: () => invoke<Approvals>("approvals"),
  revokeToolApproval: (args: ToolRef) => invoke<Approvals>("revoke_tool_approval", args),
  revokeSampling: (args: ServerRef) => invoke<Approvals>("revoke_sampling", args),
  reopenViews: (args: ReopenViews) => invoke<void>("reopen_views", args),
  teardownViews: (args: InConversation) => invoke<void>("teardown_views", args),
  answerDownload: (args: AnswerDownload) => invoke<number>("answer_download", args),
  answerSampling: (args: AnswerSampling) => invoke<void>("answer_sampling", args),
  answerLink: (args: AnswerLink) => invoke<void>("answer_link", args),
  answerServerSampling: (args: AnswerServerSampling) => invoke<void>("answer_server_sampling", args),
  popOutView: (args: ViewRef) => invoke<string>("pop_out_view", args),
  clipboardWriteRequested: () => invoke<void>("clipboard_write_requested"),
  runTool: (args: RunTool) => invoke<ToolRun>("run_tool", args),
  readResource: (args: ResourceRef) => invoke<ResourceRead>("read_resource", args),
  modelSettings: () => invoke<ModelSettings>("model_settings"),
  saveModelSettings: (args: SaveModelSettings) => invoke<void>("save_model_settings", args),
  listProviderModels: (args: ProviderRequest) => invoke<Array<string>>("list_provider_models", args),
  testModel: (args: TestModel) => invoke<ModelTest>("test_model", args),
  saveApiKey: (args: SaveApiKey) => invoke<void>("save_api_key", args),
  deleteApiKey: (args: ProviderRef) => invoke<void>("delete_api_key", args),
  generalSettings: () => invoke<GeneralSettings>("general_settings"),
  saveGeneralSettings: (args: SaveGeneralSettings) => invoke<GeneralSettings>("save_general_settings", args),
  systemThemeChanged: (args: SystemThemeChanged) => invoke<void>("system_theme_changed", args),
  serverSettings: () => invoke<ServerSettings>("server_settings"),
  saveServer: (args: SaveServer) => invoke<ServerSettings>("save_server", args),
  removeServer: (args: ServerRef) => invoke<ServerSettings>("remove_server", args),
  setServerEnabled: (args: ServerSwitch) => invoke<ServerSettings>("set_server_enabled", args),
  setServerMcpApps: (args: ServerSwitch) => invoke<ServerSettings>("set_server_mcp_apps", args),
  setMcpApps: (args: McpAppsSwitch) => invoke<ServerSettings>("set_mcp_apps", args),
  importCandidates: () => invoke<Array<ImportSource>>("import_candidates"),
  importPreview: (args: ImportPath) => invoke<ImportPreview>("import_preview", args),
  chooseImportFile: () => invoke<string | null>("choose_import_file"),
  importServers: (args: ImportServers) => invoke<ImportReport>("import_servers", args),
  serverInstallRequest: () => invoke<ServerInstallRequest | null>("server_install_request"),
  answerServerInstall: (args: AnswerServerInstall) => invoke<ServerSettings | null>("answer_server_install", args),
  serverLog: (args: ServerRef) => invoke<ServerLog>("server_log", args),
  signInServer: (args: ServerRef) => invoke<void>("sign_in_server", args),
  reconnectServer: (args: ServerRef) => invoke<void>("reconnect_server", args),
  signOutServer: (args: ServerRef) => invoke<string>("sign_out_server", args),
  clearViewData: (args: ServerRef) => invoke<string>("clear_view_data", args),
  recoverStore: () => invoke<string>("recover_store"),
  serverDetails: (args: ServerRef) => invoke<ServerDetails>("server_details", args),
  pingServer: (args: ServerRef) => invoke<number>("ping_server", args),
  serverTraffic: (args: ServerTraffic) => invoke<Array<TrafficEntry>>("server_traffic", args),
  trafficMessage: (args: TrafficMessage) => invoke<JsonValue | null>("traffic_message", args),
  exportServerTraffic: (args: ServerRef) => invoke<string | null>("export_server_traffic", args),
  subscribeResource: (args: ResourceRef) => invoke<boolean>("subscribe_resource", args),
  previewPrompt: (args: PreviewPrompt) => invoke<PromptPreview>("preview_prompt", args),
  setViewInspection: (args: InspectionSwitch) => invoke<void>("set_view_inspection", args),
  previewView: (args: PreviewView) => invoke<ViewPreview>("preview_view", args),
  hostEmulation: () => invoke<HostEmulationState>("host_emulation"),
  setHostEmulation: (args: SetHostEmulation) => invoke<HostEmulationState>("set_host_emulation", args),
  viewMessage: (args: ViewMessage) => invoke<void>("view_message", args),
  closeView: (args: ViewRef) => invoke<void>("close_view", args),
  setViewDisplayMode: (args: SetViewDisplayMode) => invoke<void>("set_view_display_mode", args),
  setViewContainer: (args: SetViewContainer) => invoke<void>("set_view_container", args),
  teardownView: (args: ViewRef) => invoke<void>("teardown_view", args),
  allowViewDevices: (args: ViewRef) => invoke<void>("allow_view_devices", args),
  viewInspectionOn: () => invoke<boolean>("view_inspection_on"),
  viewInspection: (args: ViewRef) => invoke<ViewInspection | null>("view_inspection", args),
  replayView: (args: ReplayView) => invoke<void>("replay_view", args),
  reloadView: (args: ViewRef) => invoke<void>("reload_view", args),
  popOutReady: () => invoke<string>("pop_out_ready"),
  popInView: () => invoke<void>("pop_in_view"),
};
