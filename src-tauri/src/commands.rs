//! The window commands: each a few lines handing its arguments to `porthole-host`. Their names,
//! arguments, answers and the windows that may call them are listed once, in
//! `porthole-host/src/command_list.rs`, which also feeds `generate_handler!` here, the ACL
//! manifest in `build.rs`, the capabilities and the front end's typed client.

use std::sync::OnceLock;
use std::time::Instant;

use porthole_host::contract::*;
use porthole_host::{AppError, Host};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tauri::ipc::{CommandArg, CommandItem, InvokeBody, InvokeError};
use tauri::{State, Webview};

include!("../crates/porthole-host/src/command_list.rs");

/// The handler of every command in the list.
pub fn handler() -> impl Fn(tauri::ipc::Invoke) -> bool + Send + Sync + 'static {
    macro_rules! handler {
        (
            main: { $($main:ident: $main_args:ty => $main_result:ty,)* }
            shared: { $($shared:ident: $shared_args:ty => $shared_result:ty,)* }
            pop_out: { $($pop:ident: $pop_args:ty => $pop_result:ty,)* }
        ) => {
            tauri::generate_handler![$($main,)* $($shared,)* $($pop,)*]
        };
    }
    app_command_list!(handler)
}

/// A command's arguments: the whole invoke payload, read as one struct of
/// `porthole_host::contract`.
pub struct Args<T>(T);

impl<'de, R: tauri::Runtime, T: DeserializeOwned> CommandArg<'de, R> for Args<T> {
    fn from_command(command: CommandItem<'de, R>) -> Result<Self, InvokeError> {
        let invalid = |e: String| {
            let error = AppError::invalid(format!("{}: {e}", command.name));
            InvokeError::from(serde_json::to_value(error).unwrap_or(Value::Null))
        };
        match command.message.payload() {
            // `invoke(name)` with no arguments sends nothing: a command taking none reads `{}`.
            InvokeBody::Json(Value::Null) => T::deserialize(&serde_json::json!({}))
                .map(Args)
                .map_err(|e| invalid(e.to_string())),
            InvokeBody::Json(payload) => T::deserialize(payload).map(Args).map_err(|e| invalid(e.to_string())),
            InvokeBody::Raw(_) => Err(invalid("the arguments must be JSON".into())),
        }
    }
}

type Answer<T> = Result<T, AppError>;

static STARTED: OnceLock<Instant> = OnceLock::new();

/// Notes when the app started, for `ui_ready`'s report.
pub fn mark_start() {
    STARTED.get_or_init(Instant::now);
}

#[tauri::command]
fn app_info(host: State<'_, Host>, _: Args<NoArgs>) -> porthole_host::AppInfo {
    host.app_info()
}

#[tauri::command]
fn list_servers(host: State<'_, Host>, _: Args<NoArgs>) -> Vec<porthole_mcp::ServerStatus> {
    host.list_servers()
}

/// Called once by the front end when the composer can take input: the window is shown (it is
/// built hidden; desktop.rs). With `PORTHOLE_REPORT_READY=1` it prints `porthole-ready <ms since
/// start>` on stdout, which is how the start-up benchmark measures.
#[tauri::command]
fn ui_ready(host: State<'_, Host>, window: tauri::WebviewWindow, _: Args<NoArgs>) {
    if let Err(e) = window.show() {
        tracing::warn!("the window cannot be shown: {e}");
    }
    host.ui_ready();
    let ms = STARTED.get().map(|t| t.elapsed().as_millis()).unwrap_or(0);
    tracing::info!(ms, "composer ready");
    if std::env::var_os("PORTHOLE_REPORT_READY").is_some() {
        println!("porthole-ready {ms}");
    }
}

#[tauri::command]
fn answer_elicitation(host: State<'_, Host>, Args(a): Args<AnswerElicitation>) -> Answer<()> {
    host.answer_elicitation(a.id, a.action, a.content)
}

#[tauri::command]
fn list_questions(host: State<'_, Host>, _: Args<NoArgs>) -> Vec<porthole_host::questions::Question> {
    host.list_questions()
}

#[tauri::command]
async fn model_info(host: State<'_, Host>, _: Args<NoArgs>) -> Answer<porthole_host::model::ModelInfo> {
    Ok(host.model_info())
}

#[tauri::command]
fn list_conversations(host: State<'_, Host>, _: Args<NoArgs>) -> Answer<Vec<porthole_store::Conversation>> {
    host.list_conversations()
}

#[tauri::command]
fn list_conversation_page(
    host: State<'_, Host>,
    Args(a): Args<ConversationPage>,
) -> Answer<porthole_host::conversations::ConversationList> {
    host.list_conversation_page(a.limit, a.after.as_deref())
}

#[tauri::command]
fn open_conversation(
    host: State<'_, Host>,
    Args(a): Args<ConversationRef>,
) -> Answer<porthole_host::conversations::StoredConversation> {
    host.open_conversation(&a.id)
}

#[tauri::command]
fn keep_scroll_position(host: State<'_, Host>, Args(a): Args<KeepScrollPosition>) {
    host.keep_scroll_position(&a.conversation_id, a.position);
}

#[tauri::command]
async fn read_resource(
    host: State<'_, Host>,
    Args(a): Args<ResourceRef>,
) -> Answer<porthole_host::tool_runs::ResourceRead> {
    host.read_resource(&a.server, &a.uri).await
}

#[tauri::command]
async fn export_conversation(host: State<'_, Host>, Args(a): Args<ExportConversation>) -> Answer<Option<String>> {
    host.export_conversation(&a.id, a.format).await
}

#[tauri::command]
fn earlier_messages(
    host: State<'_, Host>,
    Args(a): Args<EarlierMessages>,
) -> Answer<porthole_host::conversations::StoredConversation> {
    host.earlier_messages(&a.id, a.before)
}

#[tauri::command]
fn rename_conversation(host: State<'_, Host>, Args(a): Args<RenameConversation>) -> Answer<()> {
    host.rename_conversation(&a.id, &a.title)
}

#[tauri::command]
fn delete_conversation(host: State<'_, Host>, Args(a): Args<ConversationRef>) -> Answer<()> {
    host.delete_conversation(&a.id)
}

#[tauri::command]
fn search_conversations(
    host: State<'_, Host>,
    Args(a): Args<SearchConversations>,
) -> Answer<Vec<porthole_store::SearchHit>> {
    host.search_conversations(&a.query)
}

#[tauri::command]
async fn send_message(host: State<'_, Host>, Args(a): Args<SendMessage>) -> Answer<String> {
    host.send_message_with(a.conversation_id, &a.text, &a.attachments, a.agent.as_deref())
        .await
}

#[tauri::command]
async fn agent_settings(
    host: State<'_, Host>,
    _: Args<NoArgs>,
) -> Answer<Vec<porthole_host::remote_agents::AgentEntry>> {
    Ok(host.agent_settings())
}

#[tauri::command]
async fn save_agent(
    host: State<'_, Host>,
    Args(a): Args<SaveAgent>,
) -> Answer<Vec<porthole_host::remote_agents::AgentEntry>> {
    host.save_agent(a.original_name.as_deref(), &a.agent).await
}

#[tauri::command]
async fn remove_agent(
    host: State<'_, Host>,
    Args(a): Args<AgentRef>,
) -> Answer<Vec<porthole_host::remote_agents::AgentEntry>> {
    host.remove_agent(&a.name).await
}

#[tauri::command]
async fn list_agents(
    host: State<'_, Host>,
    _: Args<NoArgs>,
) -> Answer<Vec<porthole_host::remote_agents::AgentSummary>> {
    Ok(host.list_agents())
}

#[tauri::command]
async fn list_prompts(host: State<'_, Host>, _: Args<NoArgs>) -> Answer<porthole_host::prompts::PromptList> {
    Ok(host.list_prompts().await)
}

#[tauri::command]
async fn complete_argument(
    host: State<'_, Host>,
    Args(a): Args<CompleteArgument>,
) -> Answer<porthole_host::prompts::Completions> {
    host.complete_argument(&a.server, a.target, &a.argument, &a.value, a.context)
        .await
}

#[tauri::command]
async fn send_prompt(host: State<'_, Host>, Args(a): Args<SendPrompt>) -> Answer<String> {
    host.send_prompt(a.conversation_id, &a.server, &a.name, a.arguments)
        .await
}

#[tauri::command]
async fn list_attachable(host: State<'_, Host>, _: Args<NoArgs>) -> Answer<porthole_host::attachments::ResourceList> {
    Ok(host.list_attachable().await)
}

#[tauri::command]
async fn template_uri(host: State<'_, Host>, Args(a): Args<TemplateUri>) -> Answer<String> {
    Ok(host.template_uri(&a.uri_template, &a.values))
}

#[tauri::command]
async fn attach_resource(
    host: State<'_, Host>,
    Args(a): Args<ResourceRef>,
) -> Answer<porthole_host::attachments::AttachmentInfo> {
    host.attach_resource(&a.server, &a.uri).await
}

#[tauri::command]
async fn retry_turn(host: State<'_, Host>, Args(a): Args<InConversation>) -> Answer<()> {
    host.retry_turn(&a.conversation_id).await
}

#[tauri::command]
async fn edit_and_resend(host: State<'_, Host>, Args(a): Args<EditAndResend>) -> Answer<()> {
    host.edit_and_resend(&a.conversation_id, &a.text).await
}

#[tauri::command]
fn stop_turn(host: State<'_, Host>, Args(a): Args<InConversation>) -> bool {
    host.stop_turn(&a.conversation_id)
}

#[tauri::command]
fn send_without_waiting(host: State<'_, Host>, Args(a): Args<InConversation>) -> bool {
    host.send_without_waiting(&a.conversation_id)
}

#[tauri::command]
fn answer_approval(host: State<'_, Host>, Args(a): Args<AnswerApproval>) -> Answer<()> {
    host.answer_approval(&a.call_id, a.decision)
}

// Not async: Tauri runs synchronous commands one after another as they arrive, so a view's
// messages reach the bridge in the order the view sent them (async commands run concurrently and
// could reorder a notification and the answer after it). The bridge runs the view's requests on
// the runtime it was made on.
#[tauri::command]
fn view_message(host: State<'_, Host>, webview: Webview, Args(a): Args<ViewMessage>) -> Answer<()> {
    host.view_message(webview.label(), &a.view_id, a.message)
}

#[tauri::command]
async fn close_view(host: State<'_, Host>, webview: Webview, Args(a): Args<ViewRef>) -> Answer<()> {
    host.close_view(webview.label(), &a.view_id).await
}

#[tauri::command]
fn reopen_views(host: State<'_, Host>, Args(a): Args<ReopenViews>) -> Answer<()> {
    host.reopen_views(&a.conversation_id, a.call_id.as_deref())
}

#[tauri::command]
fn set_view_display_mode(host: State<'_, Host>, webview: Webview, Args(a): Args<SetViewDisplayMode>) -> Answer<()> {
    host.set_view_display_mode(webview.label(), &a.view_id, a.mode)
}

#[tauri::command]
async fn teardown_views(host: State<'_, Host>, Args(a): Args<InConversation>) -> Answer<()> {
    host.teardown_views(&a.conversation_id).await;
    Ok(())
}

#[tauri::command]
fn answer_sampling(host: State<'_, Host>, Args(a): Args<AnswerSampling>) -> Answer<()> {
    host.answer_sampling(a.request_id, a.approve)
}

#[tauri::command]
fn approvals(host: State<'_, Host>, _: Args<NoArgs>) -> Answer<porthole_host::approvals::Approvals> {
    host.approvals()
}

#[tauri::command]
fn revoke_tool_approval(host: State<'_, Host>, Args(a): Args<ToolRef>) -> Answer<porthole_host::approvals::Approvals> {
    host.revoke_tool_approval(&a.server, &a.tool)
}

#[tauri::command]
fn revoke_sampling(host: State<'_, Host>, Args(a): Args<ServerRef>) -> Answer<porthole_host::approvals::Approvals> {
    host.revoke_sampling(&a.name)
}

#[tauri::command]
fn answer_link(host: State<'_, Host>, Args(a): Args<AnswerLink>) -> Answer<()> {
    host.answer_link(a.request_id, a.open)
}

#[tauri::command]
fn answer_server_sampling(host: State<'_, Host>, Args(a): Args<AnswerServerSampling>) -> Answer<()> {
    host.answer_server_sampling(a.id, a.decision)
}

#[tauri::command]
async fn answer_download(host: State<'_, Host>, Args(a): Args<AnswerDownload>) -> Answer<usize> {
    host.answer_download(&a.request_id, a.accept).await
}

#[tauri::command]
fn set_view_container(host: State<'_, Host>, webview: Webview, Args(a): Args<SetViewContainer>) -> Answer<()> {
    host.set_view_container(webview.label(), &a.view_id, a.width)
}

#[tauri::command]
async fn teardown_view(host: State<'_, Host>, webview: Webview, Args(a): Args<ViewRef>) -> Answer<()> {
    host.teardown_view(webview.label(), &a.view_id).await
}

#[tauri::command]
async fn allow_view_devices(host: State<'_, Host>, webview: Webview, Args(a): Args<ViewRef>) -> Answer<()> {
    host.allow_view_devices(webview.label(), &a.view_id).await
}

#[tauri::command]
async fn pop_out_view(host: State<'_, Host>, webview: Webview, Args(a): Args<ViewRef>) -> Answer<String> {
    host.pop_out_view(webview.label(), &a.view_id).await
}

/// A view window's page asks for its view. A pop-out, built hidden (windows.rs), is shown now;
/// the windows of a check or a picture stay as they were made (shown only when asked to be).
#[tauri::command]
fn pop_out_ready(host: State<'_, Host>, webview: Webview, _: Args<NoArgs>) -> Answer<String> {
    let tool = host.pop_out_ready(webview.label())?;
    if !webview.label().starts_with(porthole_host::live::LIVE_PREFIX)
        && let Err(e) = webview.window().show()
    {
        tracing::warn!("the pop-out cannot be shown: {e}");
    }
    Ok(tool)
}

#[tauri::command]
fn pop_in_view(host: State<'_, Host>, webview: Webview, _: Args<NoArgs>) -> Answer<()> {
    host.pop_in_view(webview.label())
}

/// The app's page is about to write the clipboard because the person asked (a Copy button,
/// pressed with a click or from the keyboard): the clipboard guard keeps that write.
#[tauri::command]
fn clipboard_write_requested(_: Args<NoArgs>) {
    #[cfg(target_os = "linux")]
    crate::clipboard_guard::note_user_action();
}

#[tauri::command]
async fn run_tool(host: State<'_, Host>, Args(a): Args<RunTool>) -> Answer<porthole_host::tool_runs::ToolRun> {
    host.run_tool(a.conversation_id, &a.server, &a.tool, a.arguments)
}

#[tauri::command]
async fn model_settings(host: State<'_, Host>, _: Args<NoArgs>) -> Answer<porthole_host::settings::ModelSettings> {
    host.model_settings().await
}

#[tauri::command]
fn save_model_settings(host: State<'_, Host>, Args(a): Args<SaveModelSettings>) -> Answer<()> {
    host.save_model_settings(a.provider, &a.base_url, a.model.as_deref())
}

#[tauri::command]
async fn list_provider_models(host: State<'_, Host>, Args(a): Args<ProviderRequest>) -> Answer<Vec<String>> {
    host.list_provider_models(a.provider, &a.base_url, a.api_key).await
}

#[tauri::command]
async fn test_model(host: State<'_, Host>, Args(a): Args<TestModel>) -> Answer<porthole_host::settings::ModelTest> {
    host.test_model(a.provider, &a.base_url, a.model.as_deref(), a.api_key)
        .await
}

#[tauri::command]
async fn save_api_key(host: State<'_, Host>, Args(a): Args<SaveApiKey>) -> Answer<()> {
    host.save_api_key(a.provider, a.key).await
}

#[tauri::command]
async fn delete_api_key(host: State<'_, Host>, Args(a): Args<ProviderRef>) -> Answer<()> {
    host.delete_api_key(a.provider).await
}

#[tauri::command]
fn general_settings(host: State<'_, Host>, _: Args<NoArgs>) -> porthole_host::settings::GeneralSettings {
    host.general_settings()
}

#[tauri::command]
fn save_general_settings(
    host: State<'_, Host>,
    Args(a): Args<SaveGeneralSettings>,
) -> Answer<porthole_host::settings::GeneralSettings> {
    host.save_general_settings(&a)
}

#[tauri::command]
fn system_theme_changed(host: State<'_, Host>, Args(a): Args<SystemThemeChanged>) {
    host.system_theme_changed(a.dark);
}

#[tauri::command]
fn server_settings(host: State<'_, Host>, _: Args<NoArgs>) -> porthole_host::server_settings::ServerSettings {
    host.server_settings()
}

type Servers = Answer<porthole_host::server_settings::ServerSettings>;

#[tauri::command]
async fn save_server(host: State<'_, Host>, Args(a): Args<SaveServer>) -> Servers {
    host.save_server(a.original_name.as_deref(), &a.server).await
}

#[tauri::command]
async fn remove_server(host: State<'_, Host>, Args(a): Args<ServerRef>) -> Servers {
    host.remove_server(&a.name).await
}

#[tauri::command]
async fn set_server_enabled(host: State<'_, Host>, Args(a): Args<ServerSwitch>) -> Servers {
    host.set_server_enabled(&a.name, a.enabled).await
}

#[tauri::command]
async fn set_server_mcp_apps(host: State<'_, Host>, Args(a): Args<ServerSwitch>) -> Servers {
    host.set_server_mcp_apps(&a.name, a.enabled).await
}

#[tauri::command]
async fn set_mcp_apps(host: State<'_, Host>, Args(a): Args<McpAppsSwitch>) -> Servers {
    host.set_mcp_apps(a.enabled).await
}

#[tauri::command]
fn import_candidates(host: State<'_, Host>, _: Args<NoArgs>) -> Vec<porthole_mcp::import::ImportSource> {
    host.import_candidates()
}

#[tauri::command]
fn import_preview(
    host: State<'_, Host>,
    Args(a): Args<ImportPath>,
) -> Answer<porthole_host::server_settings::ImportPreview> {
    host.import_preview(&a.path)
}

#[tauri::command]
async fn choose_import_file(host: State<'_, Host>, _: Args<NoArgs>) -> Answer<Option<String>> {
    host.choose_import_file().await
}

#[tauri::command]
fn server_install_request(
    host: State<'_, Host>,
    _: Args<NoArgs>,
) -> Option<porthole_host::server_install::ServerInstallRequest> {
    host.server_install_request()
}

#[tauri::command]
async fn answer_server_install(
    host: State<'_, Host>,
    Args(a): Args<AnswerServerInstall>,
) -> Answer<Option<porthole_host::server_settings::ServerSettings>> {
    host.answer_server_install(a.id, a.add).await
}

#[tauri::command]
async fn import_servers(
    host: State<'_, Host>,
    Args(a): Args<ImportServers>,
) -> Answer<porthole_host::server_settings::ImportReport> {
    host.import_servers(&a.path, &a.names).await
}

#[tauri::command]
fn server_log(host: State<'_, Host>, Args(a): Args<ServerRef>) -> Answer<porthole_host::server_settings::ServerLog> {
    host.server_log(&a.name)
}

#[tauri::command]
async fn sign_in_server(host: State<'_, Host>, Args(a): Args<ServerRef>) -> Answer<()> {
    host.sign_in_server(&a.name).await
}

#[tauri::command]
async fn reconnect_server(host: State<'_, Host>, Args(a): Args<ServerRef>) -> Answer<()> {
    host.reconnect_server(&a.name).await
}

#[tauri::command]
async fn sign_out_server(host: State<'_, Host>, Args(a): Args<ServerRef>) -> Answer<String> {
    host.sign_out_server(&a.name).await
}

#[tauri::command]
fn clear_view_data(host: State<'_, Host>, Args(a): Args<ServerRef>) -> Answer<String> {
    host.clear_view_data(&a.name)
}

/// Moves a damaged conversation store aside and restarts the app with a fresh one.
#[tauri::command]
fn recover_store(host: State<'_, Host>, _: Args<NoArgs>) -> Answer<String> {
    host.recover_store()
}

// ---- the workbench's server inspector ----

#[tauri::command]
async fn server_details(host: State<'_, Host>, Args(a): Args<ServerRef>) -> Answer<porthole_mcp::ServerDetails> {
    host.server_details(&a.name).await
}

#[tauri::command]
async fn ping_server(host: State<'_, Host>, Args(a): Args<ServerRef>) -> Answer<f64> {
    host.ping_server(&a.name).await
}

#[tauri::command]
fn server_traffic(
    host: State<'_, Host>,
    Args(a): Args<ServerTraffic>,
) -> Answer<Vec<porthole_mcp::traffic::TrafficEntry>> {
    host.server_traffic(&a.server, a.after)
}

#[tauri::command]
fn traffic_message(host: State<'_, Host>, Args(a): Args<TrafficMessage>) -> Answer<Option<Value>> {
    host.traffic_message(&a.server, a.seq)
}

#[tauri::command]
async fn export_server_traffic(host: State<'_, Host>, Args(a): Args<ServerRef>) -> Answer<Option<String>> {
    host.export_server_traffic(&a.name).await
}

#[tauri::command]
async fn subscribe_resource(host: State<'_, Host>, Args(a): Args<ResourceRef>) -> Answer<bool> {
    host.subscribe_to_resource(&a.server, &a.uri).await
}

#[tauri::command]
async fn preview_prompt(
    host: State<'_, Host>,
    Args(a): Args<PreviewPrompt>,
) -> Answer<porthole_host::workbench::PromptPreview> {
    host.preview_prompt(&a.server, &a.name, a.arguments).await
}

// ---- the workbench's view inspector ----

#[tauri::command]
fn set_view_inspection(host: State<'_, Host>, Args(a): Args<InspectionSwitch>) {
    host.set_view_inspection(a.on);
}

#[tauri::command]
fn view_inspection_on(host: State<'_, Host>, _: Args<NoArgs>) -> bool {
    host.view_inspection_on()
}

#[tauri::command]
fn view_inspection(
    host: State<'_, Host>,
    webview: Webview,
    Args(a): Args<ViewRef>,
) -> Option<porthole_host::workbench::ViewInspection> {
    host.view_inspection(webview.label(), &a.view_id)
}

#[tauri::command]
fn host_emulation(host: State<'_, Host>, _: Args<NoArgs>) -> porthole_host::workbench::HostEmulationState {
    host.host_emulation()
}

#[tauri::command]
async fn set_host_emulation(
    host: State<'_, Host>,
    Args(a): Args<SetHostEmulation>,
) -> Answer<porthole_host::workbench::HostEmulationState> {
    host.set_host_emulation(a.emulation).await
}

#[tauri::command]
async fn preview_view(host: State<'_, Host>, Args(a): Args<PreviewView>) -> Answer<porthole_host::views::ViewPreview> {
    host.preview_view(&a.server, &a.uri, a.input, a.result).await
}

#[tauri::command]
async fn replay_view(host: State<'_, Host>, webview: Webview, Args(a): Args<ReplayView>) -> Answer<()> {
    host.replay_view(webview.label(), &a.view_id, a.input, a.result).await
}

#[tauri::command]
async fn reload_view(host: State<'_, Host>, webview: Webview, Args(a): Args<ViewRef>) -> Answer<()> {
    host.reload_view(webview.label(), &a.view_id).await
}
