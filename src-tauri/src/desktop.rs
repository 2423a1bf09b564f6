//! The desktop shell: one window, a handful of commands, and the security hooks. Everything it
//! does that needs no window lives in the `porthole-*` crates.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use anyhow::{Context, Result};
use futures::FutureExt;
use futures::future::BoxFuture;
use porthole_agent::record::{Recorder, StoredApprovals, load_history, title_from};
use porthole_agent::{
    Agent, ApprovalRequest, Approver, Decision, EventSink, Message, ModelContext, Part, Role, StopReason, TurnEvent,
};
use porthole_mcp::{
    ConfigProblem, ElicitationAnswer, ElicitationPolicy, ElicitationRequest, LoadedConfig, ServerStatus, Servers,
};
use porthole_store::{Conversation, SearchHit, Store, StoredMessage, ToolCallRecord};
use serde::Serialize;
use tauri::webview::{NewWindowResponse, PermissionResponse};
use tauri::{Emitter, Manager, Url, WebviewUrl, WebviewWindowBuilder};
use tokio_util::sync::CancellationToken;

use crate::cli::Setup;
use crate::model_choice::{ModelArgs, ModelChoice};
use crate::views::Views;

/// The label of the app's own webview; the only one granted a capability.
pub const MAIN_WEBVIEW: &str = "main";

/// A server's question waiting for the person's answer in the window.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Question {
    id: u64,
    server: String,
    message: String,
    schema: Option<serde_json::Value>,
    url: Option<String>,
}

#[derive(Default)]
pub(crate) struct Questions {
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, (Question, tokio::sync::oneshot::Sender<ElicitationAnswer>)>>,
}

pub(crate) struct AppState {
    pub(crate) questions: Questions,
    pub(crate) servers: Servers,
    pub(crate) info: Mutex<AppInfo>,
    pub(crate) chat: Chat,
}

/// The chat side of the window: the store, the model flags of this run, the turns running and
/// the tool calls waiting for the person's decision.
pub(crate) struct Chat {
    pub(crate) store: Result<Store, String>,
    pub(crate) model_args: ModelArgs,
    /// The OS keyring for API keys, opened once, on first need.
    pub(crate) keyring: Arc<dyn porthole_secrets::SecretStore>,
    pub(crate) context: ModelContext,
    pub(crate) running: Mutex<HashMap<String, CancellationToken>>,
    pub(crate) approvals: Arc<Mutex<HashMap<String, tokio::sync::oneshot::Sender<Decision>>>>,
}

impl Chat {
    pub(crate) fn store(&self) -> Result<&Store, String> {
        self.store.as_ref().map_err(Clone::clone)
    }
}

/// Tool calls wait for the window's approval prompt.
struct WindowApprover(Arc<Mutex<HashMap<String, tokio::sync::oneshot::Sender<Decision>>>>);

impl Approver for WindowApprover {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'static, Decision> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.0.lock().unwrap().insert(request.call_id, tx);
        async move { rx.await.unwrap_or(Decision::Deny) }.boxed()
    }
}

/// One event of a conversation's turn, as the window receives it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChatEvent {
    pub(crate) conversation_id: String,
    pub(crate) event: TurnEvent,
}

/// Where a conversation's events go, in order: the store (`recorder`), the views (a call with
/// a view gets it) and the window (`chat-event`). A model's turn and a tools-panel run alike.
pub(crate) fn window_sink(
    app: &tauri::AppHandle,
    recorder: Recorder,
    conversation_id: &str,
) -> impl Fn(&TurnEvent) + Send + Sync + 'static {
    let app = app.clone();
    let views = app.state::<Views>().inner().clone();
    let conversation_id = conversation_id.to_string();
    move |event: &TurnEvent| {
        recorder.emit(event);
        views.on_turn_event(&conversation_id, event);
        let _ = app.emit_to(
            MAIN_WEBVIEW,
            "chat-event",
            ChatEvent {
                conversation_id: conversation_id.clone(),
                event: event.clone(),
            },
        );
    }
}

/// The model this run talks to, as far as it is known without asking the provider.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ModelInfo {
    provider: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    key_source: Option<String>,
    /// Why no model can be used, in words (e.g. no API key).
    error: Option<String>,
}

fn model_choice(chat: &Chat) -> Result<ModelChoice, String> {
    let store = chat.store.as_ref().ok();
    ModelChoice::new(&chat.model_args, store, &|| chat.keyring.clone()).map_err(|e| format!("{e:#}"))
}

#[tauri::command]
async fn model_info(state: tauri::State<'_, AppState>) -> Result<ModelInfo, String> {
    Ok(match model_choice(&state.chat) {
        Ok(choice) => ModelInfo {
            provider: Some(choice.kind.to_string()),
            base_url: Some(choice.base_url.clone()),
            model: choice.model.clone(),
            key_source: choice.key_source.as_ref().map(ToString::to_string),
            error: None,
        },
        Err(error) => ModelInfo {
            provider: None,
            base_url: None,
            model: None,
            key_source: None,
            error: Some(error),
        },
    })
}

#[tauri::command]
fn list_conversations(state: tauri::State<'_, AppState>) -> Result<Vec<Conversation>, String> {
    state.chat.store()?.list_conversations().map_err(|e| e.to_string())
}

/// A stored conversation: its messages and tool calls (both facings).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct StoredConversation {
    conversation: Conversation,
    messages: Vec<StoredMessage>,
    tool_calls: Vec<ToolCallRecord>,
    running: bool,
}

#[tauri::command]
fn open_conversation(state: tauri::State<'_, AppState>, id: String) -> Result<StoredConversation, String> {
    let store = state.chat.store()?;
    let conversation = store
        .conversation(&id)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no conversation {id}"))?;
    Ok(StoredConversation {
        conversation,
        messages: store.messages(&id).map_err(|e| e.to_string())?,
        tool_calls: store.tool_calls(&id).map_err(|e| e.to_string())?,
        running: state.chat.running.lock().unwrap().contains_key(&id),
    })
}

#[tauri::command]
fn rename_conversation(state: tauri::State<'_, AppState>, id: String, title: String) -> Result<(), String> {
    let title = title.trim();
    if title.is_empty() {
        return Err("a conversation needs a title".into());
    }
    state
        .chat
        .store()?
        .rename_conversation(&id, title)
        .map_err(|e| e.to_string())
}

#[tauri::command]
fn delete_conversation(app: tauri::AppHandle, state: tauri::State<'_, AppState>, id: String) -> Result<(), String> {
    if let Some(cancel) = state.chat.running.lock().unwrap().remove(&id) {
        cancel.cancel();
    }
    crate::pop_out::close_for_conversation(&app, &id);
    state.chat.store()?.delete_conversation(&id).map_err(|e| e.to_string())
}

#[tauri::command]
fn search_conversations(state: tauri::State<'_, AppState>, query: String) -> Result<Vec<SearchHit>, String> {
    state.chat.store()?.search(&query, 50).map_err(|e| e.to_string())
}

/// Sends the person's message: starts a turn in `conversation_id` (a new conversation when
/// absent) and returns the conversation's id at once; the turn's events arrive as `chat-event`.
#[tauri::command]
async fn send_message(
    app: tauri::AppHandle,
    state: tauri::State<'_, AppState>,
    conversation_id: Option<String>,
    text: String,
) -> Result<String, String> {
    let text = text.trim().to_string();
    if text.is_empty() {
        return Err("the message is empty".into());
    }
    let chat = &state.chat;
    let store = chat.store()?.clone();
    let id = match conversation_id {
        Some(id) => {
            existing_conversation(&store, &id)?;
            id
        }
        None => {
            store
                .create_conversation(&title_from(&text))
                .map_err(|e| e.to_string())?
                .id
        }
    };
    let cancel = claim_turn(chat, &id)?;
    start_turn(&app, &state, store, id.clone(), Message::user(text), cancel);
    Ok(id)
}

/// Runs the conversation's last user message again: its replies (messages, tool calls and
/// their views) are dropped and a new turn starts with the same message. Refused while a reply
/// is being written. The turn's events arrive as `chat-event`.
#[tauri::command]
async fn retry_turn(
    app: tauri::AppHandle,
    state: tauri::State<'_, AppState>,
    conversation_id: String,
) -> Result<(), String> {
    rerun(&app, &state, conversation_id, None).await
}

/// Replaces the conversation's last user message with `text`, drops everything after it, and
/// starts a turn with the new text. Refused while a reply is being written.
#[tauri::command]
async fn edit_and_resend(
    app: tauri::AppHandle,
    state: tauri::State<'_, AppState>,
    conversation_id: String,
    text: String,
) -> Result<(), String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("the message is empty".into());
    }
    rerun(&app, &state, conversation_id, Some(Message::user(text))).await
}

pub(crate) fn existing_conversation(store: &Store, id: &str) -> Result<Conversation, String> {
    store
        .conversation(id)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no conversation {id}"))
}

/// Marks a turn as running in the conversation (so no other starts there, and `stop_turn` can
/// cancel it) and returns its cancellation token; refused while one is running. The mark goes
/// when the turn ends ([`start_turn`]), or with [`release_turn`] if it never starts.
pub(crate) fn claim_turn(chat: &Chat, conversation_id: &str) -> Result<CancellationToken, String> {
    let cancel = CancellationToken::new();
    let mut running = chat.running.lock().unwrap();
    if running.contains_key(conversation_id) {
        return Err("a reply is still being written in this conversation; stop it first".into());
    }
    running.insert(conversation_id.to_string(), cancel.clone());
    Ok(cancel)
}

pub(crate) fn release_turn(chat: &Chat, conversation_id: &str) {
    chat.running.lock().unwrap().remove(conversation_id);
}

/// Runs a turn, in the background, of a conversation claimed with [`claim_turn`]: the model
/// gets the stored history and then `user`. Every event goes to the store, the views and the
/// window (`chat-event`); without a usable model the message is kept and the reason is shown
/// where the reply would be. The claim ends with the turn.
fn start_turn(
    app: &tauri::AppHandle,
    state: &AppState,
    store: Store,
    conversation_id: String,
    user: Message,
    cancel: CancellationToken,
) {
    let chat = &state.chat;
    let choice = model_choice(chat);
    let servers = state.servers.clone();
    let context = chat.context.clone();
    let approvals = chat.approvals.clone();
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let recorder = Recorder::new(store.clone(), conversation_id.clone());
        let view_reports = app.state::<Views>().reports(&conversation_id);
        let sink = window_sink(&app, recorder, &conversation_id);
        let model = match choice {
            Ok(choice) => choice
                .resolve_model()
                .await
                .map(|m| (choice, m))
                .map_err(|e| format!("{e:#}")),
            Err(e) => Err(e),
        };
        match model {
            Ok((choice, model)) => {
                let history = load_history(&store, &conversation_id).unwrap_or_default();
                let mut agent = Agent::new(choice.provider, model, servers);
                agent.approver = Arc::new(WindowApprover(approvals));
                agent.remembered = Some(Arc::new(StoredApprovals(store.clone())));
                agent.context = context;
                agent.views = view_reports;
                agent
                    .run_turn(Some(conversation_id.clone()), history, user, &sink, cancel)
                    .await;
            }
            Err(error) => {
                // No model: the message is kept, and the reason is shown where the reply would be.
                let message = format!("No model can answer: {error}");
                sink.emit(&TurnEvent::UserMessage { message: user });
                sink.emit(&TurnEvent::StepStarted { step: 1 });
                sink.emit(&TurnEvent::Error { message });
                sink.emit(&TurnEvent::Done {
                    stop_reason: StopReason::Error,
                    text: String::new(),
                    usage: Default::default(),
                });
            }
        }
        release_turn(&app.state::<AppState>().chat, &conversation_id);
    });
}

/// Where a retry or an edit starts from: the conversation's last user message.
#[derive(Debug)]
struct RewindPoint {
    /// The message's store id: it and every later message are dropped.
    message_id: i64,
    /// The message as it was sent (what a retry sends again).
    user: Message,
    /// Whether a tool call among the dropped messages has (or had) a view.
    drops_views: bool,
}

fn rewind_point(store: &Store, conversation_id: &str) -> Result<RewindPoint, String> {
    let messages = store.messages(conversation_id).map_err(|e| e.to_string())?;
    let last = messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .ok_or("this conversation has no message of yours to send again")?;
    let parts: Vec<Part> = serde_json::from_value(last.parts.clone())
        .map_err(|e| format!("your last message could not be read back: {e}"))?;
    let user = Message {
        role: Role::User,
        parts,
    };
    if user.text().trim().is_empty() {
        return Err("your last message has no text to send again".into());
    }
    // A tools-panel run made since (held by an empty `tool` message) would go with the rewind.
    let panel_run_since = messages
        .iter()
        .any(|m| m.id > last.id && m.role == "tool" && m.parts.as_array().is_some_and(Vec::is_empty));
    if panel_run_since {
        return Err(
            "tools-panel runs came after your last message, and sending it again would remove them; send a new message instead"
                .into(),
        );
    }
    let dropped_calls: Vec<i64> = store
        .tool_calls(conversation_id)
        .map_err(|e| e.to_string())?
        .iter()
        .filter(|c| c.message_id >= last.id)
        .map(|c| c.id)
        .collect();
    let drops_views = !dropped_calls.is_empty()
        && store
            .views(conversation_id)
            .map_err(|e| e.to_string())?
            .iter()
            .any(|v| dropped_calls.contains(&v.tool_call_id));
    Ok(RewindPoint {
        message_id: last.id,
        user,
        drops_views,
    })
}

/// Drops the conversation's last user message and everything after it, then runs a turn with
/// `replacement` (a retry: the same message). When views go with the dropped tool calls, the
/// conversation's views are torn down first, while their frames still show them, and those of
/// the calls that stay are re-created after.
async fn rerun(
    app: &tauri::AppHandle,
    state: &AppState,
    conversation_id: String,
    replacement: Option<Message>,
) -> Result<(), String> {
    let chat = &state.chat;
    let store = chat.store()?.clone();
    existing_conversation(&store, &conversation_id)?;
    let cancel = claim_turn(chat, &conversation_id)?;
    let rewound = async {
        let point = rewind_point(&store, &conversation_id)?;
        let views = app.state::<Views>();
        if point.drops_views {
            // Pop-out windows of the conversation close too (their views may be of dropped calls).
            crate::pop_out::close_for_conversation(app, &conversation_id);
            views.teardown_conversation(&conversation_id).await;
        }
        store
            .delete_messages_from(&conversation_id, point.message_id)
            .map_err(|e| e.to_string())?;
        if point.drops_views
            && let Err(e) = views.reopen(&conversation_id, None, MAIN_WEBVIEW)
        {
            tracing::warn!(conversation_id, "the views that stay could not be re-created: {e}");
        }
        Ok::<Message, String>(replacement.unwrap_or(point.user))
    }
    .await;
    match rewound {
        Ok(user) => {
            start_turn(app, state, store, conversation_id, user, cancel);
            Ok(())
        }
        Err(e) => {
            release_turn(chat, &conversation_id);
            Err(e)
        }
    }
}

/// Stops the reply being written in a conversation (the partial reply is kept).
#[tauri::command]
fn stop_turn(state: tauri::State<'_, AppState>, conversation_id: String) -> bool {
    match state.chat.running.lock().unwrap().get(&conversation_id) {
        Some(cancel) => {
            cancel.cancel();
            true
        }
        None => false,
    }
}

/// A message a view's frame posted; the front end matched `event.source` to the frame.
#[tauri::command]
async fn view_message(
    webview: tauri::Webview,
    views: tauri::State<'_, Views>,
    view_id: String,
    message: serde_json::Value,
) -> Result<(), String> {
    // Async, so the bridge runs the view's requests on the app's runtime.
    owned(&views, &view_id, &webview)?;
    views.receive(&view_id, message);
    Ok(())
}

/// Only the webview showing a view may speak for it (the main window, or its pop-out window).
fn owned(views: &Views, view_id: &str, webview: &tauri::Webview) -> Result<(), String> {
    if views.shown_in(view_id, webview.label()) {
        Ok(())
    } else {
        Err("no such view in this window".into())
    }
}

/// The frame is gone (conversation switched, scrolled away, closed): tear the view down.
#[tauri::command]
async fn close_view(webview: tauri::Webview, views: tauri::State<'_, Views>, view_id: String) -> Result<(), String> {
    owned(&views, &view_id, &webview)?;
    views.close(&view_id, false).await;
    Ok(())
}

/// The window changed a view's display mode (Esc, its buttons); the view is told.
#[tauri::command]
fn set_view_display_mode(
    webview: tauri::Webview,
    views: tauri::State<'_, Views>,
    view_id: String,
    mode: String,
) -> Result<(), String> {
    owned(&views, &view_id, &webview)?;
    views.set_display_mode(&view_id, &mode)
}

/// Re-creates the views of a reopened conversation (or reports them expired).
#[tauri::command]
async fn reopen_views(
    views: tauri::State<'_, Views>,
    conversation_id: String,
    call_id: Option<String>,
) -> Result<(), String> {
    views.reopen(&conversation_id, call_id.as_deref(), MAIN_WEBVIEW)
}

/// The card's room for a view changed; the view is told its container's width.
#[tauri::command]
fn set_view_container(
    webview: tauri::Webview,
    views: tauri::State<'_, Views>,
    view_id: String,
    width: f64,
) -> Result<(), String> {
    owned(&views, &view_id, &webview)?;
    views.set_container(&view_id, width)
}

/// A view is about to leave the screen while its frame is still there (scrolled far away):
/// it gets `ui/resource-teardown`, waited for, and is removed.
#[tauri::command]
async fn teardown_view(webview: tauri::Webview, views: tauri::State<'_, Views>, view_id: String) -> Result<(), String> {
    owned(&views, &view_id, &webview)?;
    views.close(&view_id, true).await;
    Ok(())
}

/// The person's answer to a view's download offer; returns how many files were saved.
#[tauri::command]
async fn answer_download(views: tauri::State<'_, Views>, request_id: String, accept: bool) -> Result<usize, String> {
    views.answer_download(&request_id, accept).await
}

/// Before the window leaves a conversation: its views are told `ui/resource-teardown` while
/// their frames are still there, and removed.
#[tauri::command]
async fn teardown_views(views: tauri::State<'_, Views>, conversation_id: String) -> Result<(), String> {
    views.teardown_conversation(&conversation_id).await;
    Ok(())
}

/// The app's page is about to write the clipboard because the person asked (a Copy button,
/// pressed with a click or from the keyboard): the clipboard guard keeps that write.
#[tauri::command]
fn clipboard_write_requested() {
    #[cfg(target_os = "linux")]
    crate::clipboard_guard::note_user_action();
}

/// The person's decision on a tool call: `allow_once`, `allow_always` or `deny`.
#[tauri::command]
fn answer_approval(state: tauri::State<'_, AppState>, call_id: String, decision: Decision) -> Result<(), String> {
    let waiting = state.chat.approvals.lock().unwrap().remove(&call_id);
    let respond = waiting.ok_or("that tool call is no longer waiting for a decision")?;
    respond
        .send(decision)
        .map_err(|_| "the turn stopped waiting for this decision".to_string())
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AppInfo {
    version: &'static str,
    profile_dir: String,
    config_file: String,
    /// Problems found in config files, one line each (file:line: server, field: message).
    config_problems: Vec<String>,
    mcp_apps: bool,
}

impl AppInfo {
    /// The config files changed (in the settings): their problems and the MCP Apps switch now.
    pub(crate) fn config_changed(&mut self, problems: &[ConfigProblem], mcp_apps: bool) {
        self.config_problems = problems.iter().map(ConfigProblem::to_string).collect();
        self.mcp_apps = mcp_apps;
    }
}

#[tauri::command]
fn app_info(state: tauri::State<'_, AppState>) -> AppInfo {
    state.info.lock().unwrap().clone()
}

/// The person's answer to a server's question: `accept` (with `content`), `decline` or `cancel`.
#[tauri::command]
fn answer_elicitation(
    state: tauri::State<'_, AppState>,
    id: u64,
    action: String,
    content: Option<serde_json::Value>,
) -> Result<(), String> {
    let answer = match (action.as_str(), content) {
        ("accept", Some(content)) if content.is_object() => ElicitationAnswer::Accept(content),
        ("accept", _) => return Err("accept needs the answer as an object".into()),
        ("decline", _) => ElicitationAnswer::Decline,
        ("cancel", _) => ElicitationAnswer::Cancel,
        (other, _) => return Err(format!("unknown action {other:?}")),
    };
    let waiting = state.questions.waiting.lock().unwrap().remove(&id);
    let (_, respond) = waiting.ok_or("that question was already answered")?;
    respond
        .send(answer)
        .map_err(|_| "the server stopped waiting for this answer".to_string())
}

/// Questions asked before the window was listening, or still unanswered.
#[tauri::command]
fn list_questions(state: tauri::State<'_, AppState>) -> Vec<Question> {
    let mut all: Vec<Question> = state
        .questions
        .waiting
        .lock()
        .unwrap()
        .values()
        .map(|(q, _)| q.clone())
        .collect();
    all.sort_by_key(|q| q.id);
    all
}

#[tauri::command]
fn list_servers(state: tauri::State<'_, AppState>) -> Vec<ServerStatus> {
    state.servers.statuses()
}

static STARTED: OnceLock<Instant> = OnceLock::new();

/// Called once by the front end when the composer can take input. With
/// `PORTHOLE_REPORT_READY=1` it prints `porthole-ready <ms since start>` on stdout, which is how
/// the start-up benchmark measures.
#[tauri::command]
fn ui_ready() {
    let ms = STARTED.get().map(|t| t.elapsed().as_millis()).unwrap_or(0);
    tracing::info!(ms, "composer ready");
    if std::env::var_os("PORTHOLE_REPORT_READY").is_some() {
        println!("porthole-ready {ms}");
    }
}

/// Whether the main webview may navigate to `url`: only the app's own pages.
fn navigation_allowed(url: &Url) -> bool {
    match url.scheme() {
        "tauri" => url.host_str() == Some("localhost"),
        // Views' frames (WebKitGTK asks about frame navigations too); the scheme handler serves
        // only minted tokens, and only to this window.
        "mcpview" => url.host_str() == Some("localhost") && url.path().starts_with("/view/"),
        "http" if url.host_str() == Some("mcpview.localhost") => url.path().starts_with("/view/"),
        "http" | "https" => url.host_str() == Some("tauri.localhost"),
        "about" => url.as_str() == "about:blank" || url.as_str() == "about:srcdoc",
        _ => false,
    }
}

/// The app's rules for any of its windows: no navigation away from its own pages, no new
/// windows, no downloads, no device permissions.
pub(crate) fn guarded<'a, R: tauri::Runtime, M: Manager<R>>(
    builder: WebviewWindowBuilder<'a, R, M>,
) -> WebviewWindowBuilder<'a, R, M> {
    builder
        .on_navigation(|url| {
            let ok = navigation_allowed(url);
            if !ok {
                tracing::warn!(%url, "navigation refused");
            }
            ok
        })
        .on_new_window(|url, _| {
            tracing::warn!(%url, "new window refused");
            NewWindowResponse::Deny
        })
        .on_download(|_, _| {
            tracing::warn!("download refused");
            false
        })
        .on_permission_request(|_, kind| {
            tracing::warn!(?kind, "permission request refused");
            PermissionResponse::Deny
        })
}

pub fn run(setup: Setup, model_args: ModelArgs) -> Result<()> {
    STARTED.get_or_init(Instant::now);
    let loaded = LoadedConfig::load(&setup.config_files);
    for problem in &loaded.problems {
        tracing::warn!("config: {problem}");
    }
    let mcp_apps = loaded.mcp_apps_enabled();
    let info = AppInfo {
        version: env!("CARGO_PKG_VERSION"),
        profile_dir: setup.profile.data_dir().display().to_string(),
        config_file: setup.profile.config_file().display().to_string(),
        config_problems: loaded.problems.iter().map(ConfigProblem::to_string).collect(),
        mcp_apps,
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    tauri::async_runtime::set(runtime.handle().clone());
    let (questions_tx, mut questions_rx) = tokio::sync::mpsc::channel::<ElicitationRequest>(8);
    let options = setup.connect_options(mcp_apps, ElicitationPolicy::Ask(questions_tx));
    let servers = runtime.block_on(async { Servers::start(loaded.servers, options) });
    let store = Store::open(&setup.profile.database_file()).map_err(|e| {
        tracing::error!("{e}");
        format!("the conversation store cannot be opened: {e}")
    });

    let servers_for_views = servers.clone();
    let app = tauri::Builder::default()
        .manage(AppState {
            questions: Questions::default(),
            servers: servers.clone(),
            info: Mutex::new(info),
            chat: Chat {
                store,
                model_args,
                keyring: Arc::new(porthole_secrets::LazyKeyring::new("Porthole")),
                context: ModelContext::default(),
                running: Mutex::new(HashMap::new()),
                approvals: Arc::new(Mutex::new(HashMap::new())),
            },
        })
        .manage(crate::server_settings::ServerConfigFiles::new(
            setup.config_files.clone(),
        ))
        .invoke_handler(tauri::generate_handler![
            app_info,
            list_servers,
            ui_ready,
            answer_elicitation,
            list_questions,
            model_info,
            list_conversations,
            open_conversation,
            rename_conversation,
            delete_conversation,
            search_conversations,
            send_message,
            retry_turn,
            edit_and_resend,
            stop_turn,
            answer_approval,
            view_message,
            close_view,
            reopen_views,
            set_view_display_mode,
            teardown_views,
            answer_download,
            set_view_container,
            teardown_view,
            crate::pop_out::pop_out_view,
            crate::pop_out::pop_out_ready,
            crate::pop_out::pop_in_view,
            clipboard_write_requested,
            crate::tool_runs::run_tool,
            crate::app_settings::model_settings,
            crate::app_settings::save_model_settings,
            crate::app_settings::list_provider_models,
            crate::app_settings::test_model,
            crate::app_settings::save_api_key,
            crate::app_settings::delete_api_key,
            crate::app_settings::general_settings,
            crate::app_settings::save_general_settings,
            crate::app_settings::system_theme_changed,
            crate::server_settings::server_settings,
            crate::server_settings::save_server,
            crate::server_settings::remove_server,
            crate::server_settings::set_server_enabled,
            crate::server_settings::set_server_mcp_apps,
            crate::server_settings::set_mcp_apps,
            crate::server_settings::import_candidates,
            crate::server_settings::import_preview,
            crate::server_settings::import_servers,
            crate::server_settings::server_log,
            crate::server_settings::sign_in_server,
            crate::server_settings::sign_out_server
        ])
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::Destroyed = event {
                crate::pop_out::window_closed(window);
            }
            // Views follow the system theme, as the window does.
            if let tauri::WindowEvent::ThemeChanged(theme) = event {
                window
                    .app_handle()
                    .state::<Views>()
                    .theme_changed(*theme == tauri::Theme::Dark);
            }
        })
        .register_asynchronous_uri_scheme_protocol("mcpview", |ctx, request, responder| {
            // Each view's document, once per unguessable token, only to the window that owns it.
            let label = ctx.webview_label().to_string();
            let views = ctx.app_handle().state::<Views>();
            let token = request
                .uri()
                .path()
                .strip_prefix("/view/")
                .map(|t| t.trim_end_matches('/').to_string())
                .unwrap_or_default();
            let served = if matches!(*request.method(), http::Method::GET | http::Method::HEAD) {
                views.tokens().serve(&token, &label, Instant::now())
            } else {
                Err(porthole_apps::tokens::NotServed::Unknown)
            };
            if let Err(refused) = &served {
                tracing::warn!(webview = %label, ?refused, "a view URL was refused");
            }
            let (status, headers, body) = porthole_apps::tokens::response(&served);
            let mut response = http::Response::builder().status(status);
            for (name, value) in headers {
                response = response.header(name, value);
            }
            responder.respond(response.body(body).unwrap_or_default());
        })
        .manage(crate::pop_out::PopOuts::default())
        .setup(move |app| {
            let store = app.state::<AppState>().chat.store.as_ref().ok().cloned();
            let context = app.state::<AppState>().chat.context.clone();
            app.manage(Views::new(
                app.handle().clone(),
                servers_for_views.clone(),
                store,
                context,
            ));
            let window = guarded(WebviewWindowBuilder::new(
                app,
                MAIN_WEBVIEW,
                WebviewUrl::App("index.html".into()),
            ))
            .title("Porthole")
            .inner_size(1180.0, 800.0)
            .min_inner_size(640.0, 480.0)
            .build()?;
            #[cfg(target_os = "linux")]
            crate::clipboard_guard::install(&window.gtk_window()?);
            #[cfg(not(target_os = "linux"))]
            let _ = window;

            // Every change of a server's state reaches the front end as one event.
            // Each server question is held until the window answers it.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                while let Some(request) = questions_rx.recv().await {
                    let state = handle.state::<AppState>();
                    let id = state.questions.next.fetch_add(1, Ordering::Relaxed);
                    let question = Question {
                        id,
                        server: request.server,
                        message: request.message,
                        schema: request.schema,
                        url: request.url,
                    };
                    state
                        .questions
                        .waiting
                        .lock()
                        .unwrap()
                        .insert(id, (question.clone(), request.respond));
                    tracing::info!(id, server = %question.server, "asking the user");
                    let _ = handle.emit_to(MAIN_WEBVIEW, "elicitation-requested", question);
                }
            });

            let handle = app.handle().clone();
            let mut changes = servers.subscribe();
            tauri::async_runtime::spawn(async move {
                while changes.changed().await.is_ok() {
                    let statuses = changes.borrow_and_update().clone();
                    let _ = handle.emit_to(MAIN_WEBVIEW, "servers-changed", statuses);
                }
            });
            Ok(())
        })
        .build(tauri::generate_context!())
        .context("cannot start the window")?;

    app.run(|handle, event| {
        if let tauri::RunEvent::Exit = event {
            let state = handle.state::<AppState>();
            tauri::async_runtime::block_on(state.servers.shutdown());
        }
    });
    drop(runtime);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(message: &Message) -> serde_json::Value {
        serde_json::to_value(&message.parts).unwrap()
    }

    fn call(conversation_id: &str, message_id: i64, call_id: &str) -> porthole_store::NewToolCall {
        porthole_store::NewToolCall {
            conversation_id: conversation_id.into(),
            message_id,
            call_id: call_id.into(),
            server: "demo".into(),
            tool: "chart".into(),
            arguments: serde_json::json!({}),
            status: porthole_store::ToolCallStatus::Ok,
        }
    }

    fn view(tool_call_id: i64) -> porthole_store::NewView {
        porthole_store::NewView {
            tool_call_id,
            server: "demo".into(),
            tool: "chart".into(),
            uri: "ui://demo/chart.html".into(),
            html_sha256: "ab".repeat(32),
            csp: "default-src 'none'".into(),
            expires_at: i64::MAX,
        }
    }

    /// A conversation of two turns; the first turn's call has a view, and so does the second's
    /// when `second_view`. Returns the store, the conversation id and the message ids.
    fn two_turns(second_view: bool) -> (Store, String, Vec<i64>) {
        use porthole_store::MessageStatus::Complete;
        let store = Store::open_in_memory().unwrap();
        let id = store.create_conversation("chart").unwrap().id;
        let add = |role: &str, parts: serde_json::Value| store.append_message(&id, role, &parts, Complete).unwrap();
        let answer = |text: &str| serde_json::json!([{"type": "text", "text": text}]);
        let ids = vec![
            add("user", parts(&Message::user("one"))),
            add("assistant", answer("first")),
            add("user", parts(&Message::user("two"))),
            add("assistant", answer("second")),
            add(
                "tool",
                serde_json::json!([{"type": "tool_result", "tool_use_id": "c2", "content": [], "is_error": false}]),
            ),
        ];
        let first = store.insert_tool_call(&call(&id, ids[1], "c1")).unwrap();
        store.insert_view(&view(first)).unwrap();
        let second = store.insert_tool_call(&call(&id, ids[3], "c2")).unwrap();
        if second_view {
            store.insert_view(&view(second)).unwrap();
        }
        (store, id, ids)
    }

    #[test]
    fn a_rerun_starts_from_the_last_user_message_and_knows_whether_views_go_with_it() {
        let (store, id, ids) = two_turns(true);
        let point = rewind_point(&store, &id).unwrap();
        assert_eq!(point.message_id, ids[2]);
        assert_eq!(point.user, Message::user("two"));
        assert!(point.drops_views);

        // Only the first turn's call has a view: nothing of the second turn's needs tearing down.
        let (store, id, _) = two_turns(false);
        assert!(!rewind_point(&store, &id).unwrap().drops_views);
    }

    #[test]
    fn dropping_from_the_rewind_point_leaves_the_earlier_turn_its_call_and_view() {
        let (store, id, ids) = two_turns(true);
        let point = rewind_point(&store, &id).unwrap();
        store.delete_messages_from(&id, point.message_id).unwrap();
        let left: Vec<i64> = store.messages(&id).unwrap().iter().map(|m| m.id).collect();
        assert_eq!(left, &ids[..2]);
        let calls = store.tool_calls(&id).unwrap();
        assert_eq!(calls.iter().map(|c| c.call_id.as_str()).collect::<Vec<_>>(), ["c1"]);
        assert_eq!(store.views(&id).unwrap().len(), 1);
        // The history the model gets next ends with the first reply; the next point is "one".
        let history = load_history(&store, &id).unwrap();
        assert_eq!(history.last().map(Message::text).as_deref(), Some("first"));
        assert_eq!(rewind_point(&store, &id).unwrap().user, Message::user("one"));
    }

    #[test]
    fn a_tools_panel_run_made_since_the_last_message_is_not_rewound_away() {
        let (store, id, _) = two_turns(false);
        let holder = store
            .append_message(
                &id,
                "tool",
                &serde_json::json!([]),
                porthole_store::MessageStatus::Complete,
            )
            .unwrap();
        store
            .insert_tool_call(&call(&id, holder, "run-0123456789abcdef"))
            .unwrap();
        let refused = rewind_point(&store, &id).unwrap_err();
        assert!(refused.contains("tools-panel runs"), "{refused}");
    }

    #[test]
    fn there_is_no_rerun_without_a_user_message() {
        let store = Store::open_in_memory().unwrap();
        let id = store.create_conversation("empty").unwrap().id;
        assert!(rewind_point(&store, &id).unwrap_err().contains("no message of yours"));
        let tool_only = serde_json::json!([]);
        store
            .append_message(&id, "tool", &tool_only, porthole_store::MessageStatus::Complete)
            .unwrap();
        assert!(rewind_point(&store, &id).is_err());
    }

    #[test]
    fn only_the_apps_own_pages_are_navigable() {
        for ok in ["tauri://localhost/index.html", "http://tauri.localhost/"] {
            assert!(navigation_allowed(&Url::parse(ok).unwrap()), "{ok}");
        }
        for bad in [
            "https://evil.example/",
            "http://localhost:1420/",
            "tauri://evil/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "data:text/html,hi",
            "http://tauri.localhost.evil.example/",
        ] {
            assert!(!navigation_allowed(&Url::parse(bad).unwrap()), "{bad}");
        }
    }
}
