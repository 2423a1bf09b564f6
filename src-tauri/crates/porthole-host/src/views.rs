//! The MCP Apps host in the window: each tool call with a view gets a [`ViewBridge`] (the
//! protocol, in `porthole-apps`), its HTML served once per unguessable token on the `mcpview`
//! scheme, and a sandboxed frame in the tool card. The front end only relays messages between
//! the frame and the bridge; this module turns the turn's events into what the view is told,
//! and the view's requests into what the app does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::BoxFuture;
use porthole_agent::agui::RemoteAgent;
use porthole_agent::{AppTool, AppTools, CallStatus, ModelContext, TurnEvent, ViewReports, ViewState};
use porthole_apps::bridge::{AuditNote, HostServices, ServerList, ViewAction, ViewBridge, ViewConfig};
use porthole_apps::display::{DisplayMode, container_dimensions};
use porthole_apps::download::{self, DownloadFile};
use porthole_apps::host_context::{HostEnvironment, host_context};
use porthole_apps::host_emulation::{HostEmulation, Presentation, presets};
use porthole_apps::partial_json::heal_json;
use porthole_apps::resource::{LoadedView, Permissions};

use crate::remote_agents::RemoteViewServer;
use crate::view_cache::{Source, ViewCache};
use crate::view_origins::ViewOrigins;
use porthole_apps::theme::{Theme, theme_context};
use porthole_apps::tokens::{ServedView, ViewTokens, view_url};
use porthole_apps::view_storage;
use porthole_mcp::{CatalogTool, ServerState, Servers};
use porthole_store::{NewAuditEntry, NewView, Store};
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};
use crate::ports::{Desktop, MAIN_WINDOW, Outbound, Outbox};
use crate::theme::{THEME_SETTING, ThemePreference, WindowTheme};

/// How long a view has to answer `ui/initialize` once its frame is created.
pub const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long `ui/resource-teardown` is waited for.
pub const TEARDOWN_TIMEOUT: Duration = Duration::from_secs(2);
/// Days a view is kept, unless the `viewRetentionDays` setting says otherwise.
pub const DEFAULT_RETENTION_DAYS: i64 = 7;
/// How many views of one server are read ahead when it connects.
const PREFETCH_PER_SERVER: usize = 16;
/// How long read-ahead waits for the main window to say it is ready.
const PREFETCH_WAIT: Duration = Duration::from_secs(10);

/// What becomes of a tool call's view, as its card shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ViewStatus {
    Loading,
    Ready,
    Failed,
    Refused,
    Expired,
    Closed,
    /// The view lives in a window of its own (its card says so).
    PoppedOut,
}

/// What the window is told about views (`view-event`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ViewEvent {
    #[serde(rename_all = "camelCase")]
    Opened {
        conversation_id: String,
        call_id: String,
        view_id: String,
        url: String,
        allow: String,
        prefers_border: Option<bool>,
        /// Display modes the host offers this view.
        display_modes: Vec<DisplayMode>,
        /// CSP entries the resource declared that were refused, each with why.
        csp_dropped: Vec<String>,
        /// The origins the view may contact (connections, resources, frames), as granted.
        reaches: Vec<String>,
        /// The devices the view may use (Permission-Policy names: `camera`, `microphone`,
        /// `geolocation`, `clipboard-write`): what it asked for and its server was granted.
        devices: Vec<String>,
        /// The devices it asked for that its server was not granted (the card offers them).
        devices_asked: Vec<String>,
        /// The host it is presented as, when the workbench emulates one.
        emulating: Option<EmulatedHost>,
    },
    #[serde(rename_all = "camelCase")]
    State {
        conversation_id: String,
        call_id: String,
        view_id: Option<String>,
        state: ViewStatus,
        reason: Option<String>,
    },
    /// A JSON-RPC message to post into the view's frame.
    #[serde(rename_all = "camelCase")]
    Message { view_id: String, message: Value },
    #[serde(rename_all = "camelCase")]
    DisplayMode { view_id: String, mode: DisplayMode },
    #[serde(rename_all = "camelCase")]
    Size {
        view_id: String,
        width: Option<f64>,
        height: Option<f64>,
    },
    #[serde(rename_all = "camelCase")]
    ProposedMessage { view_id: String, text: String },
    #[serde(rename_all = "camelCase")]
    Closed { view_id: String },
    /// A view offers files to save; the window asks the person (`answer_download`).
    #[serde(rename_all = "camelCase")]
    DownloadRequest {
        view_id: String,
        request_id: String,
        tool: String,
        files: Vec<DownloadFile>,
    },
    /// What became of a view's download offer, in words.
    #[serde(rename_all = "camelCase")]
    DownloadResult { view_id: String, message: String },
    /// A view asks the model something (`sampling/createMessage`); the window asks the person
    /// first, showing the whole prompt (`answer_sampling`).
    #[serde(rename_all = "camelCase")]
    SamplingRequest {
        view_id: String,
        #[ts(type = "number")]
        request_id: u64,
        server: String,
        tool: String,
        system_prompt: Option<String>,
        messages: Vec<SampledMessage>,
        #[ts(type = "number")]
        max_tokens: u64,
    },
    /// The sampling request was answered (or gave up waiting): the window stops asking.
    #[serde(rename_all = "camelCase")]
    SamplingSettled {
        view_id: String,
        #[ts(type = "number")]
        request_id: u64,
    },
    /// A view asks to open a link (`ui/open-link`, an `https:` URL): the window asks the person
    /// (`answer_link`); the view hears whether it was opened.
    #[serde(rename_all = "camelCase")]
    LinkRequest {
        view_id: String,
        #[ts(type = "number")]
        request_id: u64,
        server: String,
        tool: String,
        url: String,
    },
    /// The link request was answered (or gave up waiting): the window stops asking.
    #[serde(rename_all = "camelCase")]
    LinkSettled {
        view_id: String,
        #[ts(type = "number")]
        request_id: u64,
    },
}

/// One message of a view's sampling request, as the person is shown it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, TS)]
pub struct SampledMessage {
    /// `user` or `assistant`.
    pub role: String,
    pub text: String,
}

/// How a view's sampling request reaches the configured model (the app sets it: the model
/// settings live there).
pub trait Sampler: Send + Sync {
    /// Whether a model is set up (views are told they may sample only then).
    fn available(&self) -> bool;
    /// The model's text answer to `messages` and the model's name.
    fn complete(
        &self,
        system: Option<String>,
        messages: Vec<SampledMessage>,
        max_tokens: u32,
    ) -> BoxFuture<'static, Result<(String, String), String>>;
}

/// How often an Apps SDK widget's state is written, at most.
const WIDGET_STATE_WRITE_EVERY: Duration = Duration::from_millis(200);

/// How long the person has to answer a view's link request.
pub const LINK_ANSWER_TIME: Duration = Duration::from_secs(300);

/// How long the person has to answer a view's sampling request.
pub const SAMPLING_ANSWER_TIME: Duration = Duration::from_secs(300);

impl ViewEvent {
    /// The view the event is about, when it names one.
    fn view_id(&self) -> Option<&str> {
        match self {
            ViewEvent::Opened { view_id, .. }
            | ViewEvent::Message { view_id, .. }
            | ViewEvent::DisplayMode { view_id, .. }
            | ViewEvent::Size { view_id, .. }
            | ViewEvent::ProposedMessage { view_id, .. }
            | ViewEvent::Closed { view_id }
            | ViewEvent::DownloadRequest { view_id, .. }
            | ViewEvent::DownloadResult { view_id, .. }
            | ViewEvent::SamplingRequest { view_id, .. }
            | ViewEvent::SamplingSettled { view_id, .. }
            | ViewEvent::LinkRequest { view_id, .. }
            | ViewEvent::LinkSettled { view_id, .. } => Some(view_id),
            ViewEvent::State { view_id, .. } => view_id.as_deref(),
        }
    }
}

/// How a view's start ended.
enum Settled {
    Ready,
    Failed(String),
    Refused(String),
}

/// Where a view stands, for the agent loop's question "did it render?".
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Loading,
    Ready,
    Failed(String),
}

/// Where a view stands, for [`Views::view_of_call`].
#[derive(Debug, Clone, PartialEq)]
pub enum ViewProgress {
    Loading,
    Ready,
    Failed(String),
}

struct LiveView {
    view_id: String,
    conversation_id: String,
    call_id: String,
    server: String,
    /// The origin its frame is served on (its server's), once its HTML is served.
    origin: Option<String>,
    tool: String,
    bridge: ViewBridge,
    phase: watch::Sender<Phase>,
    /// The `ui://` URI this view was loaded from.
    tool_uri: String,
    /// The complete arguments, once known (replayed if the view is re-created).
    input: Option<Value>,
    /// Whether the view may be told the call's arguments: once the call is approved (or needs
    /// no approval). Until then a third-party page learns nothing the model asked for.
    input_allowed: bool,
    /// Whether the complete arguments have been sent (`tool-input` goes once).
    input_sent: bool,
    /// The tools the view offers (its own `tools/list`), with the view's names; listed when it
    /// starts and when it says they changed.
    app_tools: Vec<Value>,
    /// The store's row for this view, once both the tool call row and the HTML are known.
    store_id: Option<i64>,
    loaded: Option<(String, String, String)>, // (uri, sha256, csp)
    /// What the view's server says it shows (`_meta.ui.description`, from
    /// `openai/widgetDescription`), for the model.
    description: Option<String>,
    /// The devices its HTML asks for (`_meta.ui.permissions`) and those it was given (what its
    /// server was granted of them), once served.
    devices_asked: Permissions,
    devices: Permissions,
    /// The webview whose frame shows the view: the main window, or a pop-out window.
    webview: String,
    /// The host it is presented as (host emulation), `None` for Porthole itself.
    presented: Option<Presentation>,
    /// The key of the URL its CSP violation reports are posted to (its policy's `report-uri`).
    report_key: String,
    /// Where its server is.
    source: ViewSource,
}

/// A view shown as another host would show it (the workbench's host emulation).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EmulatedHost {
    /// The preset's name, e.g. "ChatGPT" (with "edited" when fields are overridden).
    pub name: String,
    /// The frame's width on the emulated device, in CSS pixels.
    pub width: Option<u32>,
}

/// What is kept of a view between its mounts, for the view inspector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StoredViewState {
    /// An Apps SDK widget's `setWidgetState`, kept with its call.
    pub widget_state: Option<Value>,
    /// The `localStorage` of its server's views (one origin per server), kept across restarts.
    pub local_storage: Map<String, Value>,
}

/// The conversation id of the workbench's view previews (no stored conversation has it).
pub const PREVIEW_CONVERSATION: &str = "workbench-preview";
/// The prefix of a preview's call id.
pub const PREVIEW_PREFIX: &str = "preview-";

/// A view preview the workbench started: where its view events come.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ViewPreview {
    pub conversation_id: String,
    pub call_id: String,
}

/// The setting that holds the workbench's host emulation.
pub const HOST_EMULATION_SETTING: &str = "hostEmulation";

/// The remote agent a name in the config stands for, as the config says now.
pub type AgentsByName = Arc<dyn Fn(&str) -> Option<RemoteAgent> + Send + Sync>;

/// Where a view's server is: one of Porthole's connections, or behind a remote agent.
#[derive(Clone)]
pub enum ViewSource {
    Local,
    Remote(Arc<RemoteViewServer>),
}

/// Which call a live view shows, and where: what re-creating it needs.
struct ViewCall {
    conversation_id: String,
    call_id: String,
    webview: String,
    server: String,
    tool: String,
    source: ViewSource,
}

impl ViewCall {
    fn of(view: &LiveView) -> ViewCall {
        ViewCall {
            conversation_id: view.conversation_id.clone(),
            call_id: view.call_id.clone(),
            webview: view.webview.clone(),
            server: view.server.clone(),
            tool: view.tool.clone(),
            source: view.source.clone(),
        }
    }
}

/// All live views of the window.
#[derive(Clone)]
pub struct Views {
    inner: Arc<Inner>,
}

struct Inner {
    outbox: Arc<dyn Outbox>,
    desktop: Arc<dyn Desktop>,
    runtime: tokio::runtime::Handle,
    /// The locale and time zone views are told.
    environment: HostEnvironment,
    servers: Servers,
    store: Option<Store>,
    context: ModelContext,
    tokens: ViewTokens,
    /// Live views by view id.
    live: Mutex<HashMap<String, LiveView>>,
    /// View ids by `conversation/call id`.
    by_call: Mutex<HashMap<String, String>>,
    /// How many views each call has had (by [`key`]), for the view inspector's mount count.
    mounts: Mutex<HashMap<String, u32>>,
    /// Calls (`conversation/call id`) found while streaming to have no view.
    without_view: Mutex<std::collections::HashSet<String>>,
    /// Files views offered, waiting for the person's answer, by request id.
    downloads: Mutex<HashMap<String, (String, Vec<DownloadFile>)>>,
    /// The theme preference and the system's theme: what views are told.
    theme: Mutex<WindowTheme>,
    /// Views' HTML already read, by server and URI.
    cache: ViewCache,
    /// The main window's composer can take input: views are read ahead only then, so start-up
    /// does not share the machine with it.
    window_ready: watch::Sender<bool>,
    /// Each server's view origin, and what its views' `localStorage` held.
    origins: ViewOrigins,
    /// Where views' sampling requests go once approved (set by the app).
    sampler: Mutex<Option<Arc<dyn Sampler>>>,
    /// Sampling requests waiting for the person, by request id.
    samples: Mutex<HashMap<u64, tokio::sync::oneshot::Sender<bool>>>,
    /// Link requests waiting for the person, by request id.
    links: Mutex<HashMap<u64, tokio::sync::oneshot::Sender<bool>>>,
    /// Apps SDK widgets' latest states not yet written, by tool call row: written at most every
    /// [`WIDGET_STATE_WRITE_EVERY`], so a widget that calls `setWidgetState` in a loop costs a
    /// few writes a second and its last state is the one kept.
    widget_states: Mutex<HashMap<i64, Value>>,
    /// The next id of a sampling or link request (one counter for both).
    next_request: std::sync::atomic::AtomicU64,
    /// Webviews whose views are watched closely (`porthole check`'s live check and `porthole
    /// snapshot`), with whether their views are made to hold still.
    observed_webviews: Mutex<HashMap<String, bool>>,
    /// What the watched views did, by view id.
    observations: Mutex<HashMap<String, Observation>>,
    /// The workbench's host emulation (kept in the store's settings).
    emulation: Mutex<HostEmulation>,
    /// Remote agents by name (set by the app; see [`Views::set_agents`]).
    agents: Mutex<Option<AgentsByName>>,
}

/// The most bridge messages an observation keeps, and the most characters of each.
const OBSERVED_MESSAGES: usize = 500;
const OBSERVED_MESSAGE_CHARS: usize = 4000;

/// One bridge message of a watched view.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedMessage {
    /// Milliseconds since the view was created.
    pub at_ms: u64,
    /// `"to-view"` or `"from-view"`.
    pub direction: &'static str,
    /// The JSON-RPC method, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The message (its JSON cut to a few thousand characters when longer).
    pub message: Value,
}

/// What a watched view did: when it started and finished starting, what it reported about itself
/// (console errors, uncaught exceptions, CSP violations), what it asked for that Porthole does not
/// offer, the size it asked for, and its bridge traffic.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    #[serde(skip)]
    pub created: std::time::Instant,
    /// Milliseconds from its creation to `ui/notifications/initialized`.
    pub initialized_ms: Option<u64>,
    pub diagnostics: Vec<porthole_apps::diagnostics::Diagnostic>,
    /// Methods it asked for that were answered -32601, in order, each once.
    pub unsupported: Vec<String>,
    /// Its log messages (`notifications/message`).
    pub logs: Vec<Value>,
    /// The last size it reported (`ui/notifications/size-changed`), CSS pixels.
    pub size: Option<(Option<f64>, Option<f64>)>,
    /// When its size or its bridge traffic last changed (ms since creation).
    pub last_change_ms: u64,
    /// Requests it sent that are not answered yet (ids as JSON text).
    #[serde(skip)]
    pub pending: std::collections::HashSet<String>,
    pub messages: Vec<ObservedMessage>,
    /// Messages left out once [`OBSERVED_MESSAGES`] were kept.
    pub messages_dropped: usize,
    /// The Content-Security-Policy its document was served with.
    pub csp: Option<String>,
    /// Porthole's answer to its `ui/initialize`, whole (host info, capabilities and context).
    pub initialize_answer: Option<Value>,
    /// Which view of its call this is: 1 for the first, more each time the call's view was
    /// created again (reopened, scrolled back, reloaded).
    pub mount: u32,
}

impl Observation {
    /// An observation of nothing (a view that was never created).
    pub fn empty() -> Observation {
        Observation::new()
    }

    fn new() -> Observation {
        Observation {
            created: std::time::Instant::now(),
            initialized_ms: None,
            diagnostics: Vec::new(),
            unsupported: Vec::new(),
            logs: Vec::new(),
            size: None,
            last_change_ms: 0,
            pending: Default::default(),
            messages: Vec::new(),
            messages_dropped: 0,
            csp: None,
            initialize_answer: None,
            mount: 0,
        }
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.created.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether it has a request of its own the host has not answered, or the host one it has not.
    pub fn waiting(&self) -> bool {
        !self.pending.is_empty()
    }

    fn record(&mut self, direction: &'static str, message: &Value) {
        let now = self.elapsed_ms();
        if direction == "to-view"
            && self.initialize_answer.is_none()
            && let Some(result) = message.get("result").filter(|r| r.get("hostContext").is_some())
        {
            self.initialize_answer = Some(result.clone());
        }
        self.last_change_ms = now;
        let id = message.get("id").filter(|id| !id.is_null()).map(Value::to_string);
        let method = message.get("method").and_then(Value::as_str).map(String::from);
        // A request opens, its answer (from the other side) closes.
        if let Some(id) = id {
            let tagged = |from: &str| format!("{from}:{id}");
            if method.is_some() {
                self.pending.insert(tagged(direction));
            } else {
                let asker = if direction == "to-view" { "from-view" } else { "to-view" };
                self.pending.remove(&tagged(asker));
            }
        }
        if self.messages.len() >= OBSERVED_MESSAGES {
            self.messages_dropped += 1;
            return;
        }
        let text = message.to_string();
        let kept = if text.chars().count() > OBSERVED_MESSAGE_CHARS {
            // Its id stays whole, so the inspector still pairs a request with its answer.
            let mut cut = json!({"cut": text.chars().take(OBSERVED_MESSAGE_CHARS).collect::<String>()});
            if let Some(id) = message.get("id") {
                cut["id"] = id.clone();
            }
            cut
        } else {
            message.clone()
        };
        self.messages.push(ObservedMessage {
            at_ms: now,
            direction,
            method,
            message: kept,
        });
    }
}

fn key(conversation_id: &str, call_id: &str) -> String {
    format!("{conversation_id}/{call_id}")
}

fn new_view_id() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the OS has randomness");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Views {
    pub fn new(
        servers: Servers,
        store: Option<Store>,
        context: ModelContext,
        outbox: Arc<dyn Outbox>,
        desktop: Arc<dyn Desktop>,
        runtime: tokio::runtime::Handle,
    ) -> Views {
        let stored_theme = store.as_ref().and_then(|s| s.setting(THEME_SETTING).ok().flatten());
        let theme = WindowTheme::new(ThemePreference::from_setting(stored_theme.as_ref()));
        let emulation = store
            .as_ref()
            .and_then(|s| s.setting(HOST_EMULATION_SETTING).ok().flatten())
            .and_then(|v| serde_json::from_value::<HostEmulation>(v).ok())
            .and_then(|e| e.checked().ok())
            .unwrap_or_default();
        Views {
            inner: Arc::new(Inner {
                outbox,
                desktop,
                runtime,
                environment: HostEnvironment::from_system(),
                servers,
                context,
                tokens: ViewTokens::default(),
                live: Mutex::new(HashMap::new()),
                window_ready: watch::channel(false).0,
                by_call: Mutex::new(HashMap::new()),
                mounts: Mutex::new(HashMap::new()),
                without_view: Mutex::new(Default::default()),
                downloads: Mutex::new(HashMap::new()),
                theme: Mutex::new(theme),
                cache: ViewCache::from_env(),
                origins: ViewOrigins::new(store.clone()),
                sampler: Mutex::new(None),
                samples: Mutex::new(HashMap::new()),
                links: Mutex::new(HashMap::new()),
                widget_states: Mutex::new(HashMap::new()),
                next_request: std::sync::atomic::AtomicU64::new(1),
                observed_webviews: Mutex::new(HashMap::new()),
                observations: Mutex::new(HashMap::new()),
                emulation: Mutex::new(emulation),
                agents: Mutex::new(None),
                store,
            }),
        }
    }

    /// Reads each connected server's views into the cache as it connects (and again when its
    /// resources change), so a tool's first view starts without waiting for the server.
    pub fn prefetch_views(&self) {
        if !self.inner.cache.is_enabled() {
            return;
        }
        let this = self.clone();
        let mut statuses = self.inner.servers.subscribe();
        let mut ready = self.inner.window_ready.subscribe();
        self.inner.runtime.spawn(async move {
            // Not while the window starts: once its composer is ready (or after a while, if it
            // never says so). A view opened before then reads its HTML itself.
            let _ = tokio::time::timeout(PREFETCH_WAIT, ready.wait_for(|r| *r)).await;
            let mut done: std::collections::HashSet<(String, u64)> = Default::default();
            loop {
                let due: Vec<(String, Vec<String>)> = statuses
                    .borrow_and_update()
                    .iter()
                    .filter(|s| s.state == ServerState::Connected && s.mcp_apps)
                    .filter(|s| done.insert((s.name.clone(), s.resources_version)))
                    .map(|s| {
                        let mut uris: Vec<String> = s.tools.iter().filter_map(|t| t.ui_resource_uri.clone()).collect();
                        uris.sort();
                        uris.dedup();
                        uris.truncate(PREFETCH_PER_SERVER);
                        (s.name.clone(), uris)
                    })
                    .collect();
                let read_any = due.iter().any(|(_, uris)| !uris.is_empty());
                for (server, uris) in due {
                    for uri in uris {
                        this.inner.cache.prefetch(&this.inner.servers, &server, &uri).await;
                    }
                }
                if read_any {
                    // Reading views (hundreds of KB each, as JSON, then checked) leaves freed
                    // memory behind, just as the app goes idle.
                    crate::memory::give_back_freed_memory_soon(&this.inner.runtime);
                }
                if statuses.changed().await.is_err() {
                    return;
                }
            }
        });
    }

    /// The main window's composer can take input: views may be read ahead now.
    pub fn window_ready(&self) {
        self.inner.window_ready.send_replace(true);
    }

    /// Tells each live view when its server's tools or resources change
    /// (`notifications/tools/list_changed`, `notifications/resources/list_changed`).
    pub fn forward_list_changes(&self) {
        let this = self.clone();
        let mut statuses = self.inner.servers.subscribe();
        self.inner.runtime.spawn(async move {
            // Per server: its tools (name and visibility) and its resources version, as last seen.
            type Seen = (Vec<(String, Vec<String>)>, u64);
            let mut seen: HashMap<String, Seen> = HashMap::new();
            loop {
                let changes: Vec<(String, bool, bool)> = statuses
                    .borrow_and_update()
                    .iter()
                    .filter(|s| s.state == ServerState::Connected)
                    .filter_map(|s| {
                        let tools: Vec<(String, Vec<String>)> = s
                            .tools
                            .iter()
                            .map(|t| (t.name.clone(), t.visibility.iter().map(|v| format!("{v:?}")).collect()))
                            .collect();
                        let now = (tools, s.resources_version);
                        let before = seen.insert(s.name.clone(), now.clone())?;
                        Some((s.name.clone(), before.0 != now.0, before.1 != now.1))
                    })
                    .filter(|(_, tools, resources)| *tools || *resources)
                    .collect();
                for (server, tools, resources) in changes {
                    let bridges: Vec<ViewBridge> = this
                        .inner
                        .live
                        .lock()
                        .unwrap()
                        .values()
                        .filter(|v| v.server == server)
                        .map(|v| v.bridge.clone())
                        .collect();
                    for bridge in bridges {
                        if tools {
                            bridge.server_list_changed(ServerList::Tools);
                        }
                        if resources {
                            bridge.server_list_changed(ServerList::Resources);
                        }
                    }
                }
                if statuses.changed().await.is_err() {
                    return;
                }
            }
        });
    }

    /// Where views' approved sampling requests go.
    pub fn set_sampler(&self, sampler: Arc<dyn Sampler>) {
        *self.inner.sampler.lock().unwrap() = Some(sampler);
    }

    fn sampler(&self) -> Option<Arc<dyn Sampler>> {
        self.inner.sampler.lock().unwrap().clone()
    }

    /// A view's `sampling/createMessage` (params checked by the bridge): put to the person with
    /// the whole prompt, then, approved, sent to the configured model; its
    /// `CreateMessageResult`. Audited either way.
    async fn sample(&self, view_id: &str, params: Value) -> Result<Value, String> {
        let Some(sampler) = self.sampler().filter(|s| s.available()) else {
            return Err("no model is set up".into());
        };
        let (conversation_id, server, tool) = {
            let live = self.inner.live.lock().unwrap();
            let view = live.get(view_id).ok_or("the view is gone")?;
            (view.conversation_id.clone(), view.server.clone(), view.tool.clone())
        };
        let messages: Vec<SampledMessage> =
            serde_json::from_value(params["messages"].clone()).map_err(|e| format!("messages: {e}"))?;
        let system_prompt = params["systemPrompt"].as_str().map(str::to_string);
        let max_tokens = params["maxTokens"].as_u64().unwrap_or(1024);
        let request_id = self
            .inner
            .next_request
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.inner.samples.lock().unwrap().insert(request_id, tx);
        self.emit(ViewEvent::SamplingRequest {
            view_id: view_id.to_string(),
            request_id,
            server: server.clone(),
            tool: tool.clone(),
            system_prompt: system_prompt.clone(),
            messages: messages.clone(),
            max_tokens,
        });
        let approved = matches!(tokio::time::timeout(SAMPLING_ANSWER_TIME, rx).await, Ok(Ok(true)));
        self.inner.samples.lock().unwrap().remove(&request_id);
        self.emit(ViewEvent::SamplingSettled {
            view_id: view_id.to_string(),
            request_id,
        });
        let audit = |outcome: &str, detail: Value| {
            let mut detail = detail;
            detail["outcome"] = json!(outcome);
            detail["messages"] = json!(messages.len());
            self.audit(
                porthole_store::AuditKind::Other("sampling".into()),
                &conversation_id,
                &server,
                Some(&tool),
                None,
                detail,
            );
        };
        if !approved {
            audit("declined", json!({}));
            return Err("the person declined the sampling request".into());
        }
        let max_tokens = u32::try_from(max_tokens).unwrap_or(4096);
        match sampler.complete(system_prompt, messages.clone(), max_tokens).await {
            Ok((text, model)) => {
                audit("ok", json!({"model": model}));
                Ok(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": text},
                    "model": model,
                    "stopReason": "endTurn",
                }))
            }
            Err(e) => {
                audit("error", json!({"error": e}));
                Err(format!("the model could not answer: {e}"))
            }
        }
    }

    /// A view's `ui/open-link` (an `https:` URL, checked by the bridge): put to the person with
    /// the whole URL; opened in the browser only if they agree. Audited (kind `link`) either
    /// way; the view hears `{}` once it is open, or why not.
    async fn open_link(&self, view_id: &str, url: String) -> Result<Value, String> {
        let (conversation_id, server, tool) = {
            let live = self.inner.live.lock().unwrap();
            let view = live.get(view_id).ok_or("the view is gone")?;
            (view.conversation_id.clone(), view.server.clone(), view.tool.clone())
        };
        let request_id = self
            .inner
            .next_request
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.inner.links.lock().unwrap().insert(request_id, tx);
        self.emit(ViewEvent::LinkRequest {
            view_id: view_id.to_string(),
            request_id,
            server: server.clone(),
            tool: tool.clone(),
            url: url.clone(),
        });
        let open = matches!(tokio::time::timeout(LINK_ANSWER_TIME, rx).await, Ok(Ok(true)));
        self.inner.links.lock().unwrap().remove(&request_id);
        self.emit(ViewEvent::LinkSettled {
            view_id: view_id.to_string(),
            request_id,
        });
        let outcome = if !open {
            Err("the person did not open the link".to_string())
        } else {
            self.inner
                .desktop
                .open_url(&url)
                .map_err(|e| format!("the browser could not be opened: {e}"))
        };
        let detail = match &outcome {
            Ok(()) => json!({"outcome": "opened"}),
            Err(why) if !open => json!({"outcome": "declined", "reason": why}),
            Err(why) => json!({"outcome": "failed", "reason": why}),
        };
        self.audit(
            porthole_store::AuditKind::Other("link".into()),
            &conversation_id,
            &server,
            Some(&tool),
            Some(&url),
            detail,
        );
        outcome.map(|()| json!({}))
    }

    /// The person's answer to a view's link request: open it, or not.
    pub fn answer_link(&self, request_id: u64, open: bool) -> AppResult<()> {
        let waiting = self.inner.links.lock().unwrap().remove(&request_id);
        let respond = waiting.ok_or_else(|| AppError::not_found("that link request is no longer waiting"))?;
        respond
            .send(open)
            .map_err(|_| AppError::expired("the view stopped waiting for this answer"))
    }

    /// The person's answer to a view's sampling request.
    pub fn answer_sampling(&self, request_id: u64, approve: bool) -> AppResult<()> {
        let waiting = self.inner.samples.lock().unwrap().remove(&request_id);
        let respond = waiting.ok_or_else(|| AppError::not_found("that sampling request is no longer waiting"))?;
        respond
            .send(approve)
            .map_err(|_| AppError::expired("the view stopped waiting for this answer"))
    }

    /// Forgets everything of `server`'s views (it was removed): the cached HTML, their origin
    /// and what their storage held.
    pub fn forget_server(&self, server: &str) {
        self.inner.cache.forget_server(server);
        self.inner.origins.forget(server);
    }

    /// Clears `server`'s view data: its views get a new origin (so no storage of the old one is
    /// reachable) and nothing kept. Views of it that are live keep theirs until they close.
    pub fn clear_view_data(&self, server: &str) {
        self.inner.origins.clear(server);
    }

    /// The tokens the `mcpview` scheme handler serves from.
    pub fn tokens(&self) -> &ViewTokens {
        &self.inner.tokens
    }

    /// Tells the webview that shows the event's view (the main window when it has none). What a
    /// view asks of the person — a message for the composer, files to save — always goes to the
    /// main window, which has the composer and the save dialog.
    fn emit(&self, event: ViewEvent) {
        let webview = match event {
            ViewEvent::ProposedMessage { .. }
            | ViewEvent::DownloadRequest { .. }
            | ViewEvent::DownloadResult { .. }
            | ViewEvent::SamplingRequest { .. }
            | ViewEvent::SamplingSettled { .. }
            | ViewEvent::LinkRequest { .. }
            | ViewEvent::LinkSettled { .. } => MAIN_WINDOW.to_string(),
            _ => self.webview_of(event.view_id()),
        };
        self.emit_to(&webview, event);
    }

    fn emit_to(&self, webview: &str, event: ViewEvent) {
        self.inner.outbox.send(webview, Outbound::View(event));
    }

    /// The webview that shows a view (the main window for a view it does not know).
    fn webview_of(&self, view_id: Option<&str>) -> String {
        view_id
            .and_then(|id| self.inner.live.lock().unwrap().get(id).map(|v| v.webview.clone()))
            .unwrap_or_else(|| MAIN_WINDOW.to_string())
    }

    /// Whether `webview` is the one showing `view_id`: only it may speak for the view.
    pub fn shown_in(&self, view_id: &str, webview: &str) -> bool {
        self.inner
            .live
            .lock()
            .unwrap()
            .get(view_id)
            .is_some_and(|v| v.webview == webview)
    }

    fn audit(
        &self,
        kind: porthole_store::AuditKind,
        conversation_id: &str,
        server: &str,
        tool: Option<&str>,
        uri: Option<&str>,
        detail: Value,
    ) {
        if let Some(store) = &self.inner.store {
            let entry = NewAuditEntry {
                kind,
                conversation_id: Some(conversation_id.to_string()),
                server: Some(server.to_string()),
                tool: tool.map(String::from),
                uri: uri.map(String::from),
                detail,
            };
            if let Err(e) = store.audit(&entry) {
                tracing::error!("cannot write the audit log: {e}");
            }
        }
    }

    /// The connected tool a model-facing name stands for, when it has a view to show.
    fn ui_tool(&self, model_name: &str) -> Option<CatalogTool> {
        self.inner
            .servers
            .statuses()
            .into_iter()
            .filter(|s| s.state == ServerState::Connected && s.mcp_apps)
            .flat_map(|s| s.tools)
            .find(|t| t.model_name == model_name && t.ui_resource_uri.is_some())
    }

    fn view_for(&self, conversation_id: &str, call_id: &str) -> Option<String> {
        self.inner
            .by_call
            .lock()
            .unwrap()
            .get(&key(conversation_id, call_id))
            .cloned()
    }

    fn bridge(&self, view_id: &str) -> Option<ViewBridge> {
        self.inner.live.lock().unwrap().get(view_id).map(|v| v.bridge.clone())
    }

    /// Follows a turn: views are created while the call's arguments stream, told the input,
    /// then the unmodified result (or that the call was cancelled).
    pub fn on_turn_event(&self, conversation_id: &str, event: &TurnEvent) {
        match event {
            TurnEvent::ToolCallStreaming {
                call_id,
                name,
                arguments_text,
            } => {
                // The tool is looked up once per call, not on every fragment.
                let call_key = key(conversation_id, call_id);
                let view = match self.view_for(conversation_id, call_id) {
                    Some(v) => Some(v),
                    None if self.inner.without_view.lock().unwrap().contains(&call_key) => None,
                    None => {
                        let opened = self
                            .ui_tool(name)
                            .map(|tool| self.open(conversation_id, call_id, tool, None, MAIN_WINDOW));
                        if opened.is_none() {
                            self.inner.without_view.lock().unwrap().insert(call_key);
                        }
                        opened
                    }
                };
                if let Some(view) = view
                    && self.input_allowed(&view)
                    && let Some(partial) = heal_json(arguments_text)
                    && let Some(bridge) = self.bridge(&view)
                {
                    bridge.tool_input_partial(partial);
                }
            }
            TurnEvent::ToolCallStarted {
                call_id,
                name,
                ui_resource_uri,
                arguments,
                ..
            } => {
                let view = match self.view_for(conversation_id, call_id) {
                    Some(v) => Some(v),
                    None if ui_resource_uri.is_some() => self
                        .ui_tool(name)
                        .map(|tool| self.open(conversation_id, call_id, tool, None, MAIN_WINDOW)),
                    None => None,
                };
                if let Some(view) = view {
                    if let Some(live) = self.inner.live.lock().unwrap().get_mut(&view) {
                        live.input = Some(arguments.clone());
                    }
                    self.send_input(&view);
                    self.try_record(&view);
                }
            }
            // The call waits for the person: nothing more of its input reaches the view.
            TurnEvent::ApprovalRequested { call_id, .. } => {
                if let Some(view) = self.view_for(conversation_id, call_id)
                    && let Some(live) = self.inner.live.lock().unwrap().get_mut(&view)
                {
                    live.input_allowed = false;
                }
            }
            // Approved, or needing no approval: the view is told the complete input now.
            TurnEvent::ToolCallRunning { call_id, .. } => {
                if let Some(view) = self.view_for(conversation_id, call_id) {
                    if let Some(live) = self.inner.live.lock().unwrap().get_mut(&view) {
                        live.input_allowed = true;
                    }
                    self.send_input(&view);
                }
            }
            TurnEvent::ToolCallFinished {
                call_id, status, view, ..
            } => {
                self.inner
                    .without_view
                    .lock()
                    .unwrap()
                    .remove(&key(conversation_id, call_id));
                let Some(view_id) = self.view_for(conversation_id, call_id) else {
                    return;
                };
                // A valid ui:// URI in the result's structuredContent.resourceUri names the view
                // to show instead of the tool's own: the view is re-created with it.
                if matches!(status, CallStatus::Ok | CallStatus::Error)
                    && let Some(replacement) = self.replacement_uri(&view_id, view)
                {
                    self.replace_view(conversation_id, call_id, &view_id, replacement, view.clone());
                    return;
                }
                let Some(bridge) = self.bridge(&view_id) else { return };
                match status {
                    // Usually given when the call returned (`ViewReports::settle`); the bridge
                    // takes only a call's first outcome.
                    CallStatus::Ok | CallStatus::Error => bridge.tool_result(view.clone()),
                    CallStatus::Denied => bridge.tool_cancelled("the user denied the call"),
                    CallStatus::Cancelled => bridge.tool_cancelled("the call was cancelled"),
                    CallStatus::Failed => bridge.tool_cancelled("the call failed without a result"),
                }
            }
            _ => {}
        }
    }

    /// Follows a remote agent's turn: a view the agent offers for a call is shown on the call's
    /// card, its server reached through `agent`. (Its calls ran at the agent: the view gets
    /// their input and result at once.)
    pub fn on_remote_turn_event(&self, conversation_id: &str, event: &TurnEvent, agent: &RemoteAgent) {
        if let TurnEvent::RemoteView {
            call_id,
            server,
            tool,
            view,
        } = event
        {
            let source = RemoteViewServer::of_view(agent.clone(), conversation_id, server, view);
            let tool = source.tool_with_view(tool, &view.resource_uri);
            if let Some(old) = self.view_for(conversation_id, call_id) {
                let this = self.clone();
                self.inner.runtime.spawn(async move { this.close(&old, true).await });
            }
            self.open_from(
                conversation_id,
                call_id,
                tool,
                Some((view.tool_input.clone(), view.result.clone())),
                MAIN_WINDOW,
                ViewSource::Remote(source),
            );
        }
    }

    /// Says where remote agents are found by name (for the views of stored conversations with
    /// one): set by the app.
    pub fn set_agents(&self, agents: AgentsByName) {
        *self.inner.agents.lock().unwrap() = Some(agents);
    }

    /// The stored call's view server, when it is behind the conversation's remote agent (only
    /// a conversation with that agent reaches it).
    fn remote_server(&self, conversation_id: &str, server: &str) -> Option<Arc<RemoteViewServer>> {
        let with = self.inner.store.as_ref()?.conversation(conversation_id).ok()??.agent?;
        let agents = self.inner.agents.lock().unwrap().clone()?;
        RemoteViewServer::of_stored(agents(&with)?, conversation_id, server)
    }

    /// Whether a view may be told its call's arguments yet.
    fn input_allowed(&self, view_id: &str) -> bool {
        self.inner
            .live
            .lock()
            .unwrap()
            .get(view_id)
            .is_some_and(|v| v.input_allowed)
    }

    /// Sends the view its call's complete arguments, once they are known and it may see them.
    fn send_input(&self, view_id: &str) {
        let ready = {
            let mut live = self.inner.live.lock().unwrap();
            let Some(view) = live.get_mut(view_id) else { return };
            match &view.input {
                Some(input) if view.input_allowed && !view.input_sent => {
                    view.input_sent = true;
                    Some((view.bridge.clone(), input.clone()))
                }
                _ => None,
            }
        };
        if let Some((bridge, input)) = ready {
            bridge.tool_input(input);
        }
    }

    /// Whether a call of `server`'s `tool` runs without asking (the config's `alwaysAllow`, or
    /// a remembered "always allow").
    fn needs_no_approval(&self, server: &str, tool: &str) -> bool {
        self.inner.servers.always_allowed(server, tool)
            || self
                .inner
                .store
                .as_ref()
                .is_some_and(|store| store.is_always_allowed(server, tool).unwrap_or(false))
    }

    /// The result's own view URI, when it is valid and differs from the view being shown.
    fn replacement_uri(&self, view_id: &str, result: &Value) -> Option<String> {
        let live = self.inner.live.lock().unwrap();
        let view = live.get(view_id)?;
        let tool_uri = view.tool_uri.clone();
        let chosen = porthole_apps::resource::view_uri(Some(&tool_uri), Some(result))?;
        (chosen != tool_uri).then_some(chosen)
    }

    /// Shows `uri` for the call instead of its current view, replaying the input and result.
    fn replace_view(&self, conversation_id: &str, call_id: &str, old_view: &str, uri: String, result: Value) {
        let found = {
            let live = self.inner.live.lock().unwrap();
            let Some(view) = live.get(old_view) else { return };
            let tool = self
                .inner
                .servers
                .statuses()
                .into_iter()
                .filter(|s| s.name == view.server)
                .flat_map(|s| s.tools)
                .find(|t| t.name == view.tool);
            tool.map(|t| (t, view.input.clone(), view.webview.clone()))
        };
        let Some((mut tool, input, webview)) = found else {
            return;
        };
        let this = self.clone();
        let old = old_view.to_string();
        let (conversation_id, call_id) = (conversation_id.to_string(), call_id.to_string());
        self.inner.runtime.spawn(async move {
            this.close(&old, true).await;
            tool.ui_resource_uri = Some(uri);
            this.open(
                &conversation_id,
                &call_id,
                tool,
                Some((input.unwrap_or(json!({})), result)),
                &webview,
            );
        });
    }

    /// Creates the view of a tool call: its bridge at once (so nothing said to it is lost),
    /// then its HTML, checked, and a token for its frame. Returns the view id.
    fn open(
        &self,
        conversation_id: &str,
        call_id: &str,
        tool: CatalogTool,
        replay: Option<(Value, Value)>,
        webview: &str,
    ) -> String {
        self.open_from(conversation_id, call_id, tool, replay, webview, ViewSource::Local)
    }

    /// [`Views::open`] of a view whose server is `source`.
    fn open_from(
        &self,
        conversation_id: &str,
        call_id: &str,
        tool: CatalogTool,
        replay: Option<(Value, Value)>,
        webview: &str,
        source: ViewSource,
    ) -> String {
        let view_id = new_view_id();
        let presented = self.presentation_for(call_id);
        let host: Arc<dyn HostServices> = match &source {
            ViewSource::Local => Arc::new(AppServices {
                servers: self.inner.servers.clone(),
                views: self.clone(),
                conversation_id: conversation_id.to_string(),
            }),
            ViewSource::Remote(server) => Arc::new(RemoteServices {
                server: server.clone(),
                views: self.clone(),
                conversation_id: conversation_id.to_string(),
            }),
        };
        let config = ViewConfig {
            view_id: view_id.clone(),
            server: tool.server.clone(),
            tool: tool.clone(),
            tool_call_request_id: None,
            host_context: host_context(self.theme(), &self.inner.environment),
            granted: json!({"permissions": {}, "csp": {}}),
            emulating: presented.clone(),
        };
        // What the bridge says to the view goes to its window at once, from the thread that
        // caused it: a tool's result reaches the view before the card hears of it.
        let outbox = self.inner.outbox.clone();
        let (to_webview, for_view) = (webview.to_string(), view_id.clone());
        let observed = self.inner.observed_webviews.lock().unwrap().contains_key(webview);
        let mount = {
            let mut mounts = self.inner.mounts.lock().unwrap();
            let count = mounts.entry(key(conversation_id, call_id)).or_insert(0);
            *count += 1;
            *count
        };
        if observed {
            let mut observation = Observation::new();
            observation.mount = mount;
            self.inner
                .observations
                .lock()
                .unwrap()
                .insert(view_id.clone(), observation);
        }
        let watcher = observed.then(|| self.clone());
        let to_view = Arc::new(move |message: Value| {
            if let Some(views) = &watcher {
                views.observe(&for_view, |o| o.record("to-view", &message));
            }
            outbox.send(
                &to_webview,
                Outbound::View(ViewEvent::Message {
                    view_id: for_view.clone(),
                    message,
                }),
            );
        });
        let (bridge, mut actions) = ViewBridge::with_sink(config, host, to_view);
        let replayed_input = replay.as_ref().map(|(input, _)| input.clone());
        // A call being made now shows its input only once approved; a replayed one was.
        let input_allowed = replay.is_some() || self.needs_no_approval(&tool.server, &tool.name);
        let input_sent = replay.is_some();
        if let Some((input, result)) = replay {
            bridge.tool_input(input);
            if !result.is_null() {
                bridge.tool_result(result);
            }
        }
        let (phase, _) = watch::channel(Phase::Loading);
        self.inner.live.lock().unwrap().insert(
            view_id.clone(),
            LiveView {
                view_id: view_id.clone(),
                conversation_id: conversation_id.to_string(),
                call_id: call_id.to_string(),
                server: tool.server.clone(),
                origin: None,
                tool: tool.name.clone(),
                bridge,
                phase,
                tool_uri: tool.ui_resource_uri.clone().unwrap_or_default(),
                input: replayed_input,
                input_allowed,
                input_sent,
                app_tools: Vec::new(),
                store_id: None,
                loaded: None,
                description: None,
                devices_asked: Permissions::default(),
                devices: Permissions::default(),
                webview: webview.to_string(),
                presented,
                report_key: new_view_id(),
                source: source.clone(),
            },
        );
        self.inner
            .by_call
            .lock()
            .unwrap()
            .insert(key(conversation_id, call_id), view_id.clone());
        self.emit(ViewEvent::State {
            conversation_id: conversation_id.to_string(),
            call_id: call_id.to_string(),
            view_id: Some(view_id.clone()),
            state: ViewStatus::Loading,
            reason: None,
        });

        // What the view asks of the app.
        let this = self.clone();
        let id = view_id.clone();
        self.inner.runtime.spawn(async move {
            while let Some(action) = actions.recv().await {
                this.act(&id, action).await;
            }
        });

        // The HTML.
        let this = self.clone();
        let id = view_id.clone();
        let uri = tool.ui_resource_uri.clone().unwrap_or_default();
        self.inner.runtime.spawn(async move {
            let loaded = match &source {
                ViewSource::Local => this.inner.cache.load(&this.inner.servers, &tool.server, &uri).await,
                // A remote server's HTML is read through its agent each time (nothing says
                // when it changed); the tools it lists come with it.
                ViewSource::Remote(server) => {
                    let (loaded, ()) = tokio::join!(server.load(&uri), server.learn_tools());
                    loaded.map(|view| (view, Source::Server))
                }
            };
            match loaded {
                Ok((loaded, source)) => this.serve(&id, &tool, loaded, source),
                Err(refusal) => {
                    this.audit(
                        porthole_store::AuditKind::Refused,
                        &this.conversation_of(&id),
                        &tool.server,
                        Some(&tool.name),
                        Some(&uri),
                        json!({"reason": refusal.to_string()}),
                    );
                    this.settle(&id, Settled::Refused(refusal.to_string()));
                }
            }
        });
        view_id
    }

    fn conversation_of(&self, view_id: &str) -> String {
        self.inner
            .live
            .lock()
            .unwrap()
            .get(view_id)
            .map(|v| v.conversation_id.clone())
            .unwrap_or_default()
    }

    /// The HTML passed its checks: audit it, mint its token, and give the frame its URL.
    fn serve(&self, view_id: &str, tool: &CatalogTool, loaded: LoadedView, source: Source) {
        let conversation_id = self.conversation_of(view_id);
        // The settings' allow and block lists, over what the resource declared.
        let rules = crate::settings::origin_rules(self.inner.store.as_ref());
        let loaded = LoadedView {
            csp: porthole_apps::csp::apply_rules(&loaded.csp, &rules),
            ..loaded
        };
        for dropped in &loaded.csp.dropped {
            self.audit(
                porthole_store::AuditKind::CspDropped,
                &conversation_id,
                &tool.server,
                Some(&tool.name),
                Some(&loaded.uri),
                json!({"field": dropped.field, "entry": dropped.entry, "reason": dropped.reason}),
            );
        }
        self.audit(
            porthole_store::AuditKind::View,
            &conversation_id,
            &tool.server,
            Some(&tool.name),
            Some(&loaded.uri),
            json!({"sha256": loaded.sha256, "csp": loaded.csp.policy, "source": source.as_str()}),
        );
        let Some(webview) = self.inner.live.lock().unwrap().get(view_id).map(|v| v.webview.clone()) else {
            return;
        };
        // The server's own origin, and its views' localStorage from the last run put back.
        let origin = self.inner.origins.origin(&tool.server, loaded.domain.as_deref());
        let mut shim = view_storage::shim(&self.inner.origins.storage(&origin));
        let openai_global = self
            .inner
            .live
            .lock()
            .unwrap()
            .get(view_id)
            .and_then(|v| v.presented.as_ref())
            .is_some_and(|p| p.window_openai);
        if loaded.kind == porthole_apps::resource::ViewKind::Openai || openai_global {
            // An Apps SDK widget: window.openai, with the state it kept for this call.
            shim.push_str(&porthole_apps::openai_compat::shim(self.widget_state(view_id).as_ref()));
        }
        // A watched view reports its own errors (and holds still for a picture when asked).
        let watched = self
            .inner
            .live
            .lock()
            .unwrap()
            .get(view_id)
            .and_then(|v| self.inner.observed_webviews.lock().unwrap().get(&v.webview).copied());
        if let Some(still) = watched {
            shim.insert_str(0, &porthole_apps::diagnostics::shim(still));
            let policy = loaded.csp.policy.clone();
            self.observe(view_id, |o| o.csp = Some(policy));
        }
        // Devices only as the person allowed them for this server, and only those asked for.
        let devices = loaded.permissions.and(&self.inner.origins.devices(&tool.server));
        // The engine posts the view's CSP violations to the host (not the document's to tell).
        let report_key = self
            .inner
            .live
            .lock()
            .unwrap()
            .get(view_id)
            .map(|v| v.report_key.clone());
        let policy = match report_key {
            Some(key) => format!(
                "{}; report-uri {}",
                loaded.csp.policy,
                porthole_apps::tokens::csp_report_url(&origin, &key)
            ),
            None => loaded.csp.policy.clone(),
        };
        let token = self.inner.tokens.mint(ServedView {
            view_id: view_id.to_string(),
            owner_webview: webview,
            origin: origin.clone(),
            html: loaded.html.clone(),
            script: shim,
            csp: policy,
            devices: devices.feature_names(),
            minted_at: Instant::now(),
        });
        let call_id = {
            let mut live = self.inner.live.lock().unwrap();
            let Some(view) = live.get_mut(view_id) else { return };
            view.loaded = Some((loaded.uri.clone(), loaded.sha256.clone(), loaded.csp.policy.clone()));
            view.description = loaded.meta["description"].as_str().map(String::from);
            view.origin = Some(origin.clone());
            view.devices_asked = loaded.permissions;
            view.devices = devices;
            view.call_id.clone()
        };
        if let Some(bridge) = self.bridge(view_id) {
            bridge.grant(json!({"permissions": devices.to_spec(), "csp": loaded.csp.granted}));
        }
        self.try_record(view_id);
        self.emit(ViewEvent::Opened {
            conversation_id,
            call_id,
            view_id: view_id.to_string(),
            url: view_url(&origin, &token),
            allow: devices.allow_attribute(),
            devices: devices.feature_names(),
            devices_asked: loaded.permissions.without(&devices).feature_names(),
            prefers_border: loaded.prefers_border,
            display_modes: self
                .bridge(view_id)
                .and_then(|b| serde_json::from_value(b.host_context()["availableDisplayModes"].clone()).ok())
                .unwrap_or_else(|| DisplayMode::ALL.to_vec()),
            emulating: self.emulated_host(view_id),
            csp_dropped: loaded
                .csp
                .dropped
                .iter()
                .map(|d| format!("{}: {} ({})", d.field, d.entry, d.reason))
                .collect(),
            reaches: porthole_apps::csp::reachable_origins(&loaded.csp.granted),
        });
        // A view that never initializes is a failure the user sees.
        let this = self.clone();
        let id = view_id.to_string();
        self.inner.runtime.spawn(async move {
            tokio::time::sleep(INITIALIZE_TIMEOUT).await;
            let still_loading = this
                .inner
                .live
                .lock()
                .unwrap()
                .get(&id)
                .is_some_and(|v| *v.phase.borrow() == Phase::Loading);
            if still_loading {
                this.settle(
                    &id,
                    Settled::Failed(format!(
                        "the view did not start within {} s (no ui/initialize)",
                        INITIALIZE_TIMEOUT.as_secs()
                    )),
                );
            }
        });
    }

    /// The stored row id of the view's tool call, once the call is stored.
    fn tool_call_row(&self, view_id: &str) -> Option<i64> {
        let store = self.inner.store.as_ref()?;
        let (conversation_id, call_id) = {
            let live = self.inner.live.lock().unwrap();
            let view = live.get(view_id)?;
            (view.conversation_id.clone(), view.call_id.clone())
        };
        store.tool_call_row_id(&conversation_id, &call_id).ok().flatten()
    }

    /// What is kept of view `view_id` between its mounts: its widget state and its origin's
    /// `localStorage`.
    pub fn stored_state(&self, view_id: &str) -> StoredViewState {
        let origin = self
            .inner
            .live
            .lock()
            .unwrap()
            .get(view_id)
            .and_then(|v| v.origin.clone());
        StoredViewState {
            widget_state: self.widget_state(view_id),
            local_storage: origin.map(|o| self.inner.origins.storage(&o)).unwrap_or_default(),
        }
    }

    /// What an Apps SDK widget kept of itself for the view's tool call (`setWidgetState`).
    fn widget_state(&self, view_id: &str) -> Option<Value> {
        let row = self.tool_call_row(view_id)?;
        if let Some(pending) = self.inner.widget_states.lock().unwrap().get(&row) {
            return Some(pending.clone());
        }
        self.inner.store.as_ref()?.widget_state(row).ok().flatten()
    }

    /// Keeps an Apps SDK widget's state with the view's tool call (not shown to the model):
    /// the latest is written a moment later, with any that follow it meanwhile.
    fn save_widget_state(&self, view_id: &str, state: &Value) -> Result<(), String> {
        let store = self.inner.store.clone().ok_or("there is no conversation store")?;
        let row = self.tool_call_row(view_id).ok_or("its tool call is not stored (yet)")?;
        let first = self
            .inner
            .widget_states
            .lock()
            .unwrap()
            .insert(row, state.clone())
            .is_none();
        if first {
            let inner = self.inner.clone();
            self.inner.runtime.spawn(async move {
                tokio::time::sleep(WIDGET_STATE_WRITE_EVERY).await;
                let latest = inner.widget_states.lock().unwrap().remove(&row);
                if let Some(state) = latest
                    && let Err(e) = store.set_widget_state(row, &state)
                {
                    tracing::warn!(row, "a widget's state is not kept: {e}");
                }
            });
        }
        Ok(())
    }

    /// Writes the view into the store once the tool call's row and the HTML are both known.
    fn try_record(&self, view_id: &str) {
        let Some(store) = &self.inner.store else { return };
        let mut live = self.inner.live.lock().unwrap();
        let Some(view) = live.get_mut(view_id) else { return };
        if view.store_id.is_some() {
            return;
        }
        let Some((uri, sha256, csp)) = view.loaded.clone() else {
            return;
        };
        // The call's row alone: reading every call of the conversation (their results with
        // them) made each new view of a long conversation slower to open than the last.
        let tool_call_id = match store.tool_call_row_id(&view.conversation_id, &view.call_id) {
            Ok(Some(id)) => id,
            Ok(None) => return,
            Err(e) => {
                tracing::error!("cannot find the view's call in the store: {e}");
                return;
            }
        };
        // The retention the settings show (a value out of range counts as the default).
        let days = crate::settings::read_general(Some(store)).view_retention_days;
        match store.insert_view(&NewView {
            tool_call_id,
            server: view.server.clone(),
            tool: view.tool.clone(),
            uri,
            html_sha256: sha256,
            csp,
            expires_at: now_ms() + days * 24 * 3600 * 1000,
        }) {
            Ok(id) => view.store_id = Some(id),
            Err(e) => tracing::error!("cannot record the view: {e}"),
        }
    }

    /// Moves a view to ready, failed or refused, and tells the window and the store.
    fn settle(&self, view_id: &str, settled: Settled) {
        let (status, stored, reason) = match settled {
            Settled::Ready => (ViewStatus::Ready, porthole_store::ViewState::Ready, None),
            Settled::Failed(reason) => (ViewStatus::Failed, porthole_store::ViewState::Failed, Some(reason)),
            Settled::Refused(reason) => (ViewStatus::Refused, porthole_store::ViewState::Refused, Some(reason)),
        };
        let (conversation_id, call_id, store_id) = {
            let live = self.inner.live.lock().unwrap();
            let Some(view) = live.get(view_id) else { return };
            let phase = match &reason {
                None => Phase::Ready,
                Some(reason) => Phase::Failed(reason.clone()),
            };
            view.phase.send_replace(phase);
            (view.conversation_id.clone(), view.call_id.clone(), view.store_id)
        };
        if let (Some(store), Some(id)) = (&self.inner.store, store_id)
            && let Err(e) = store.set_view_state(id, stored, reason.as_deref())
        {
            tracing::error!("cannot record the view's state: {e}");
        }
        self.emit(ViewEvent::State {
            conversation_id,
            call_id,
            view_id: Some(view_id.to_string()),
            state: status,
            reason,
        });
        if status != ViewStatus::Ready {
            self.inner.tokens.revoke(view_id);
        }
    }

    async fn act(&self, view_id: &str, action: ViewAction) {
        match &action {
            ViewAction::Initialized => self.observe(view_id, |o| {
                o.initialized_ms.get_or_insert(o.elapsed_ms());
            }),
            ViewAction::Diagnostic(d) => self.observe(view_id, |o| o.diagnostics.push(d.clone())),
            ViewAction::Unsupported { method } => self.observe(view_id, |o| {
                if !o.unsupported.contains(method) {
                    o.unsupported.push(method.clone());
                }
            }),
            ViewAction::Log { level, logger, data } => self.observe(view_id, |o| {
                if o.logs.len() < OBSERVED_MESSAGES {
                    o.logs.push(json!({"level": level, "logger": logger, "data": data}));
                }
            }),
            ViewAction::SizeChanged { width, height } => self.observe(view_id, |o| {
                o.size = Some((*width, *height));
                o.last_change_ms = o.elapsed_ms();
            }),
            _ => {}
        }
        match action {
            ViewAction::Diagnostic(d) => {
                tracing::info!(target: "mcp_view", view_id, kind = %d.kind, message = %d.message, "view reported");
            }
            ViewAction::Unsupported { method } => {
                tracing::info!(target: "mcp_view", view_id, %method, "view asked for what Porthole does not offer");
            }
            ViewAction::Initialized => {
                self.settle(view_id, Settled::Ready);
                if self.bridge(view_id).is_some_and(|b| b.offers_tools()) {
                    self.list_app_tools(view_id).await;
                }
            }
            ViewAction::ToolsChanged => self.list_app_tools(view_id).await,
            ViewAction::ProposeMessage { content } => {
                let text = content
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n");
                if !text.trim().is_empty() {
                    self.emit(ViewEvent::ProposedMessage {
                        view_id: view_id.to_string(),
                        text,
                    });
                }
            }
            ViewAction::UpdateModelContext { params } => {
                let (server, tool) = {
                    let live = self.inner.live.lock().unwrap();
                    match live.get(view_id) {
                        Some(v) => (v.server.clone(), v.tool.clone()),
                        None => return,
                    }
                };
                self.inner.context.update(view_id, &server, &tool, &params);
            }
            ViewAction::DisplayMode { mode } => match mode.parse::<DisplayMode>() {
                Ok(mode) => self.emit(ViewEvent::DisplayMode {
                    view_id: view_id.to_string(),
                    mode,
                }),
                Err(e) => tracing::warn!(view_id, "the bridge reported a display mode the window lacks: {e}"),
            },
            ViewAction::SizeChanged { width, height } => self.emit(ViewEvent::Size {
                view_id: view_id.to_string(),
                width,
                height,
            }),
            ViewAction::DownloadFile { contents } => self.offer_download(view_id, &contents).await,
            ViewAction::Log { level, logger, data } => {
                tracing::info!(target: "mcp_view", view_id, level, logger, %data, "view log");
            }
            ViewAction::RequestTeardown => self.close(view_id, true).await,
            ViewAction::SaveWidgetState { state } => {
                if let Err(e) = self.save_widget_state(view_id, &state) {
                    tracing::warn!(view_id, "a widget's state is not kept: {e}");
                }
            }
            ViewAction::SaveStorage { local_storage } => {
                let view = self
                    .inner
                    .live
                    .lock()
                    .unwrap()
                    .get(view_id)
                    .map(|v| (v.server.clone(), v.origin.clone()));
                // A view still open on an origin cleared since keeps its storage to itself.
                if let Some((server, Some(origin))) = view
                    && self.inner.origins.is_current(&server, &origin)
                {
                    self.inner.origins.save_storage(&origin, local_storage);
                }
            }
        }
    }

    /// A view offers files: they are read (links from the view's own server), checked, and the
    /// person is asked; nothing is written before they choose where.
    async fn offer_download(&self, view_id: &str, contents: &[Value]) {
        let (server, tool) = {
            let live = self.inner.live.lock().unwrap();
            match live.get(view_id) {
                Some(v) => (v.server.clone(), v.tool.clone()),
                None => return,
            }
        };
        let prepared = async {
            let offer = download::read_offer(contents)?;
            let mut files = offer.files;
            for link in &offer.links {
                let read = self
                    .inner
                    .servers
                    .read_resource(&server, &link.uri)
                    .await
                    .map_err(|e| format!("{}: {e}", link.uri))?;
                let read = serde_json::to_value(read).map_err(|e| e.to_string())?;
                files.push(download::file_from_read(link, &read)?);
            }
            download::check_total(&files)?;
            Ok::<_, String>(files)
        }
        .await;
        match prepared {
            Ok(files) => {
                let request_id = new_view_id();
                self.inner
                    .downloads
                    .lock()
                    .unwrap()
                    .insert(request_id.clone(), (view_id.to_string(), files.clone()));
                self.emit(ViewEvent::DownloadRequest {
                    view_id: view_id.to_string(),
                    request_id,
                    tool,
                    files,
                });
            }
            Err(reason) => {
                tracing::warn!(view_id, "a view's download was refused: {reason}");
                self.emit(ViewEvent::DownloadResult {
                    view_id: view_id.to_string(),
                    message: format!("The view's download was refused: {reason}"),
                });
            }
        }
    }

    /// The person's answer to a download offer: when they accept, each file goes where they
    /// choose in the system's save dialog (a file they cancel there is skipped).
    pub async fn answer_download(&self, request_id: &str, accept: bool) -> AppResult<usize> {
        let (view_id, files) = self
            .inner
            .downloads
            .lock()
            .unwrap()
            .remove(request_id)
            .ok_or_else(|| AppError::expired("that download is no longer waiting"))?;
        if !accept {
            return Ok(0);
        }
        let mut saved = 0;
        for file in files {
            let Some(target) = self
                .inner
                .desktop
                .save_file("Save a file from a view", &file.name)
                .await
            else {
                continue;
            };
            std::fs::write(&target, &file.bytes)
                .map_err(|e| AppError::io(format!("cannot write {}: {e}", target.display())))?;
            saved += 1;
        }
        self.emit(ViewEvent::DownloadResult {
            view_id,
            message: format!("{saved} file(s) saved."),
        });
        Ok(saved)
    }

    /// Tears a view down and forgets its token and context. While its frame is still there
    /// (`frame_alive`), the view is sent `ui/resource-teardown` and the answer is waited for;
    /// when the window already removed the frame there is no one to tell.
    pub async fn close(&self, view_id: &str, frame_alive: bool) {
        // Forget the call's view first, so a conversation reopened meanwhile gets a new one.
        let call_key = self
            .inner
            .live
            .lock()
            .unwrap()
            .get(view_id)
            .map(|v| key(&v.conversation_id, &v.call_id));
        if let Some(call_key) = call_key {
            let mut by_call = self.inner.by_call.lock().unwrap();
            if by_call.get(&call_key).map(String::as_str) == Some(view_id) {
                by_call.remove(&call_key);
            }
        }
        self.inner.tokens.revoke(view_id);
        self.inner.context.remove(view_id);
        if frame_alive && let Some(bridge) = self.bridge(view_id) {
            let outcome = bridge.teardown("the view was closed", TEARDOWN_TIMEOUT).await;
            tracing::debug!(view_id, ?outcome, "view torn down");
        }
        let removed = self.inner.live.lock().unwrap().remove(view_id);
        if let Some(view) = removed {
            if let (Some(store), Some(id)) = (&self.inner.store, view.store_id)
                && *view.phase.borrow() == Phase::Ready
                && let Err(e) = store.set_view_state(id, porthole_store::ViewState::Closed, None)
            {
                tracing::error!(view_id, "cannot record that the view closed: {e}");
            }
            self.emit_to(&view.webview, ViewEvent::Closed { view_id: view.view_id });
        }
    }

    /// The window changed a view's display mode (Esc, its buttons): the view is told.
    pub fn set_display_mode(&self, view_id: &str, mode: DisplayMode) -> AppResult<()> {
        let bridge = self
            .bridge(view_id)
            .ok_or_else(|| AppError::not_found("no such view"))?;
        bridge.host_context_changed(json!({ "displayMode": mode }));
        Ok(())
    }

    /// Watches the views `webview` will show closely: each gets an [`Observation`] and reports
    /// its own errors; with `still`, its animations stop and its clock stands still.
    pub fn observe_webview(&self, webview: &str, still: bool) {
        self.inner
            .observed_webviews
            .lock()
            .unwrap()
            .insert(webview.to_string(), still);
    }

    /// Stops watching the views `webview` will show (those already shown stay watched).
    pub fn unobserve_webview(&self, webview: &str) {
        self.inner.observed_webviews.lock().unwrap().remove(webview);
    }

    /// Whether the views `webview` will show are watched.
    pub fn observes_webview(&self, webview: &str) -> bool {
        self.inner.observed_webviews.lock().unwrap().contains_key(webview)
    }

    /// A CSP violation report the engine posted for the view with report key `key`, from
    /// `webview` on `origin`: kept with the view's observation (when it is watched) and logged.
    /// False when no live view of that webview and origin has the key.
    pub fn csp_report(&self, key: &str, webview: &str, origin: &str, body: &[u8]) -> bool {
        let view_id = self
            .inner
            .live
            .lock()
            .unwrap()
            .values()
            .find(|v| v.report_key == key && v.webview == webview && v.origin.as_deref() == Some(origin))
            .map(|v| v.view_id.clone());
        let Some(view_id) = view_id else { return false };
        let Some(diagnostic) = porthole_apps::diagnostics::from_csp_report(body) else {
            tracing::debug!(view = %view_id, "a CSP report that could not be read");
            return true;
        };
        tracing::info!(target: "mcp_view", view_id, message = %diagnostic.message, "CSP violation");
        self.observe(&view_id, |o| {
            if o.diagnostics.len() < OBSERVED_MESSAGES {
                o.diagnostics.push(diagnostic);
            }
        });
        true
    }

    /// What a watched view did so far.
    pub fn observation(&self, view_id: &str) -> Option<Observation> {
        self.inner.observations.lock().unwrap().get(view_id).cloned()
    }

    fn observe(&self, view_id: &str, change: impl FnOnce(&mut Observation)) {
        if let Some(o) = self.inner.observations.lock().unwrap().get_mut(view_id) {
            change(o);
        }
    }

    /// The view a call has now (in whatever window), and where it stands: loading, ready, or
    /// failed with the reason.
    pub fn view_of_call(&self, conversation_id: &str, call_id: &str) -> Option<(String, ViewProgress)> {
        let view_id = self
            .inner
            .by_call
            .lock()
            .unwrap()
            .get(&key(conversation_id, call_id))
            .cloned()?;
        let live = self.inner.live.lock().unwrap();
        let view = live.get(&view_id)?;
        let progress = match &*view.phase.borrow() {
            Phase::Loading => ViewProgress::Loading,
            Phase::Ready => ViewProgress::Ready,
            Phase::Failed(why) => ViewProgress::Failed(why.clone()),
        };
        Some((view_id, progress))
    }

    /// Creates a call's view in `webview` from the input and result given (not from a stored
    /// view): what `porthole check` and `porthole snapshot` show. Returns the view id.
    pub fn open_with(
        &self,
        conversation_id: &str,
        call_id: &str,
        tool: CatalogTool,
        input: Value,
        result: Value,
        webview: &str,
    ) -> String {
        self.open(conversation_id, call_id, tool, Some((input, result)), webview)
    }

    /// A message the view's frame posted (the front end matched `event.source` to the frame).
    pub fn receive(&self, view_id: &str, message: Value) {
        self.observe(view_id, |o| o.record("from-view", &message));
        if let Some(bridge) = self.bridge(view_id) {
            bridge.receive(message);
        }
    }

    /// Re-creates the views of a stored conversation with their stored input and result, or
    /// says they expired.
    /// `webview` is the one to show them in (the main window, or a pop-out window).
    pub fn reopen(&self, conversation_id: &str, only_call: Option<&str>, webview: &str) -> AppResult<()> {
        let Some(store) = &self.inner.store else { return Ok(()) };
        store.expire_views(now_ms())?;
        // Each call that had a view, with its newest view row (a view re-created after
        // scrolling back gets a row of its own), in the order the views were recorded. One
        // card's view reads that call's rows only; every card's reads the calls that had a view
        // (not every call of the conversation, whole).
        let shown: Vec<(porthole_store::ToolCallRecord, porthole_store::ViewRecord)> = match only_call {
            Some(call_id) => match store.tool_call_by_call_id(conversation_id, call_id)? {
                Some(call) => match store.views_of_call(call.id)?.into_iter().max_by_key(|v| v.id) {
                    Some(view) => vec![(call, view)],
                    None => Vec::new(),
                },
                None => Vec::new(),
            },
            None => {
                let mut latest: HashMap<i64, porthole_store::ViewRecord> = HashMap::new();
                for view in store.views(conversation_id)? {
                    match latest.get(&view.tool_call_id) {
                        Some(seen) if seen.id > view.id => {}
                        _ => {
                            latest.insert(view.tool_call_id, view);
                        }
                    }
                }
                let mut views: Vec<_> = latest.into_values().collect();
                views.sort_by_key(|v| v.id);
                let mut shown = Vec::with_capacity(views.len());
                for view in views {
                    if let Some(call) = store.tool_call(view.tool_call_id)? {
                        shown.push((call, view));
                    }
                }
                shown
            }
        };
        for (call, view) in shown {
            if let Some(live) = self.view_for(conversation_id, &call.call_id) {
                // A view in a pop-out window stays there; the asking window's card says so.
                if self.webview_of(Some(&live)) != webview {
                    self.popped_out(webview, conversation_id, &call.call_id);
                }
                continue;
            }
            if view.expired || view.state == porthole_store::ViewState::Expired {
                self.emit_to(
                    webview,
                    ViewEvent::State {
                        conversation_id: conversation_id.to_string(),
                        call_id: call.call_id.clone(),
                        view_id: None,
                        state: ViewStatus::Expired,
                        reason: None,
                    },
                );
                continue;
            }
            let tool = self
                .inner
                .servers
                .statuses()
                .into_iter()
                .filter(|s| s.name == call.server && s.mcp_apps)
                .flat_map(|s| s.tools)
                .find(|t| t.name == call.tool && t.ui_resource_uri.is_some());
            let replay = (call.arguments.clone(), call.view_facing.clone().unwrap_or(Value::Null));
            let remote = || self.remote_server(conversation_id, &call.server);
            match (tool, remote()) {
                (Some(tool), _) => {
                    self.open(conversation_id, &call.call_id, tool, Some(replay), webview);
                }
                (None, Some(server)) => {
                    let tool = server.tool_with_view(&call.tool, &view.uri);
                    let source = ViewSource::Remote(server);
                    self.open_from(conversation_id, &call.call_id, tool, Some(replay), webview, source);
                }
                (None, None) => self.emit_to(
                    webview,
                    ViewEvent::State {
                        conversation_id: conversation_id.to_string(),
                        call_id: call.call_id.clone(),
                        view_id: None,
                        state: ViewStatus::Failed,
                        reason: Some(format!(
                            "server {:?} is not connected (or no longer offers {:?} with a view)",
                            call.server, call.tool
                        )),
                    },
                ),
            }
        }
        Ok(())
    }

    /// The call's tool as the catalog has it now, when its server is connected with MCP Apps
    /// and still offers it with a view.
    fn tool_with_view(&self, server: &str, tool: &str) -> Option<CatalogTool> {
        self.inner
            .servers
            .statuses()
            .into_iter()
            .filter(|s| s.name == server && s.mcp_apps)
            .flat_map(|s| s.tools)
            .find(|t| t.name == tool && t.ui_resource_uri.is_some())
    }

    /// Shows `server`'s view `uri` with sample `input` and `result` (the workbench's preview of a
    /// `ui://` resource): the server is not called for a result and nothing is stored. The view
    /// is told it belongs to the server's tool that names it, when one does. One preview at a
    /// time: an earlier one is closed.
    pub async fn preview(&self, server: &str, uri: &str, input: Value, result: Value) -> AppResult<ViewPreview> {
        if !result.is_object() {
            return Err(AppError::invalid("a tool result is a JSON object (a CallToolResult)"));
        }
        if !input.is_object() {
            return Err(AppError::invalid("the tool input is a JSON object"));
        }
        if !uri.starts_with("ui://") {
            return Err(AppError::invalid("only ui:// resources are views"));
        }
        let status = self
            .inner
            .servers
            .status(server)
            .ok_or_else(|| AppError::not_found(format!("no server named {server}")))?;
        if !status.mcp_apps {
            return Err(AppError::invalid(format!("MCP Apps are switched off for {server}")));
        }
        let tool = status
            .tools
            .iter()
            .find(|t| t.ui_resource_uri.as_deref() == Some(uri))
            .cloned()
            .unwrap_or_else(|| CatalogTool {
                server: server.to_string(),
                name: "preview".into(),
                model_name: format!("{server}__preview"),
                title: Some(format!("Preview of {uri}")),
                description: None,
                input_schema: json!({"type": "object"}),
                ui_resource_uri: Some(uri.to_string()),
                visibility: vec![porthole_mcp::Audience::App],
                widget: Default::default(),
                meta_problems: Vec::new(),
            });
        let earlier = self.ids_where(|v| v.conversation_id == PREVIEW_CONVERSATION);
        for id in earlier {
            self.close(&id, true).await;
        }
        let call_id = format!("{PREVIEW_PREFIX}{}", new_view_id());
        self.open(PREVIEW_CONVERSATION, &call_id, tool, Some((input, result)), MAIN_WINDOW);
        Ok(ViewPreview {
            conversation_id: PREVIEW_CONVERSATION.into(),
            call_id,
        })
    }

    /// Shows view `view_id`'s call again in a fresh view given `input` and `result` instead of
    /// the call's (the workbench's edit and replay): the server is not called, nothing is
    /// stored, and reopening the conversation shows the call's own again.
    pub async fn replay(&self, view_id: &str, input: Value, result: Value) -> AppResult<()> {
        if !result.is_object() {
            return Err(AppError::invalid("a tool result is a JSON object (a CallToolResult)"));
        }
        let (
            ViewCall {
                conversation_id,
                call_id,
                webview,
                server,
                tool,
                source,
            },
            input_allowed,
            uri,
        ) = self.read_live(view_id, |v| (ViewCall::of(v), v.input_allowed, v.tool_uri.clone()))?;
        if !input_allowed {
            return Err(AppError::invalid("answer the tool call's approval first"));
        }
        let tool = match &source {
            ViewSource::Local => self
                .tool_with_view(&server, &tool)
                .ok_or_else(|| AppError::invalid(format!("{server} no longer offers {tool} with a view")))?,
            ViewSource::Remote(remote) => remote.tool_with_view(&tool, &uri),
        };
        self.close(view_id, true).await;
        self.open_from(
            &conversation_id,
            &call_id,
            tool,
            Some((input, result)),
            &webview,
            source,
        );
        Ok(())
    }

    /// The ids of the live views `keep` picks.
    fn ids_where(&self, keep: impl Fn(&LiveView) -> bool) -> Vec<String> {
        let live = self.inner.live.lock().unwrap();
        live.values().filter(|v| keep(v)).map(|v| v.view_id.clone()).collect()
    }

    /// What `read` takes from live view `view_id` (under the lock), or "no such view".
    fn read_live<T>(&self, view_id: &str, read: impl FnOnce(&LiveView) -> T) -> AppResult<T> {
        let live = self.inner.live.lock().unwrap();
        live.get(view_id)
            .map(read)
            .ok_or_else(|| AppError::not_found("no such view"))
    }

    /// Every live view of `server` re-created as [`Views::reload`] does (hot reload).
    pub async fn reload_server(&self, server: &str) -> usize {
        let ids = self.ids_where(|v| v.server == server);
        let mut done = 0;
        for id in ids {
            match self.reload(&id).await {
                Ok(()) => done += 1,
                Err(e) => tracing::warn!(server, view = %id, "the view was not reloaded: {}", e.message),
            }
        }
        done
    }

    /// Shows view `view_id`'s call in a fresh view with its stored input and result.
    pub async fn recreate(&self, view_id: &str) -> AppResult<()> {
        let ViewCall {
            conversation_id,
            call_id,
            webview,
            ..
        } = self.read_live(view_id, ViewCall::of)?;
        self.close(view_id, true).await;
        self.reopen(&conversation_id, Some(&call_id), &webview)
    }

    /// Reads view `view_id`'s resource again and shows its call in a fresh view with the call's
    /// stored input and result (the workbench's reload).
    pub async fn reload(&self, view_id: &str) -> AppResult<()> {
        let (server, uri) = self.read_live(view_id, |v| (v.server.clone(), v.tool_uri.clone()))?;
        self.inner.cache.forget(&server, &uri);
        self.recreate(view_id).await
    }

    /// The person let the view's server use the devices the view asks for (`_meta.ui.permissions`)
    /// from its card. The grant is kept for the server's views (until its view data is
    /// cleared or it is removed), and the view is loaded again with them (a frame's `allow`
    /// takes effect when it loads).
    pub async fn allow_devices(&self, view_id: &str) -> AppResult<()> {
        let (
            ViewCall {
                conversation_id,
                call_id,
                webview,
                server,
                tool,
                ..
            },
            asked,
            input_allowed,
        ) = self.read_live(view_id, |v| {
            (ViewCall::of(v), v.devices_asked.without(&v.devices), v.input_allowed)
        })?;
        if asked.is_empty() {
            return Err(AppError::invalid("the view asks for no device it does not have"));
        }
        if !input_allowed {
            // Loading it again replays the call's arguments, which it may not see yet.
            return Err(AppError::invalid("answer the tool call's approval first"));
        }
        self.inner.origins.grant_devices(&server, asked);
        self.audit(
            porthole_store::AuditKind::Devices,
            &conversation_id,
            &server,
            Some(&tool),
            None,
            json!({"granted": asked.feature_names(), "by": "person"}),
        );
        self.close(view_id, true).await;
        self.reopen(&conversation_id, Some(&call_id), &webview)?;
        if self.view_for(&conversation_id, &call_id).is_none() {
            self.emit_to(
                &webview,
                ViewEvent::State {
                    conversation_id,
                    call_id,
                    view_id: None,
                    state: ViewStatus::Failed,
                    reason: Some("the view could not be loaded again; its next view gets the devices".into()),
                },
            );
        }
        Ok(())
    }

    /// Whether the engine may give a frame the `device` it asks for: only while a live view
    /// was given it (a frame without it in its `allow` attribute cannot ask at all). A request
    /// allowed is in the audit log, attributed to that view; a refusal is logged.
    pub fn device_request(&self, device: &str) -> bool {
        let holder = self
            .inner
            .live
            .lock()
            .unwrap()
            .values()
            .find(|v| v.devices.feature_names().iter().any(|d| d == device))
            .map(|v| (v.conversation_id.clone(), v.server.clone(), v.tool.clone()));
        match &holder {
            Some((conversation_id, server, tool)) => self.audit(
                porthole_store::AuditKind::Devices,
                conversation_id,
                server,
                Some(tool),
                None,
                json!({"requested": device, "outcome": "allowed"}),
            ),
            None => tracing::warn!(device, "a device request no live view was given is refused"),
        }
        holder.is_some()
    }

    /// The card's room for the view changed (the window was resized): the view is told its
    /// container's width (`host-context-changed`, `containerDimensions`).
    pub fn set_container(&self, view_id: &str, width: f64) -> AppResult<()> {
        if !(width.is_finite() && width > 0.0) {
            return Err(AppError::invalid("the width must be a positive number"));
        }
        let bridge = self
            .bridge(view_id)
            .ok_or_else(|| AppError::not_found("no such view"))?;
        let emulated_container = self
            .inner
            .live
            .lock()
            .unwrap()
            .get(view_id)
            .and_then(|v| v.presented.as_ref())
            .is_some_and(|p| p.context.contains_key("containerDimensions"));
        if emulated_container {
            // The emulated device's container stands, whatever the window's width.
            return Ok(());
        }
        bridge.host_context_changed(json!({
            "containerDimensions": container_dimensions(Some(width))
        }));
        Ok(())
    }

    /// The theme views are shown in: the preference, or the system's theme while it is
    /// "system" (asked of the desktop when nobody said yet).
    pub fn theme(&self) -> Theme {
        if let Some(theme) = self.inner.theme.lock().unwrap().known() {
            return theme;
        }
        let system = self.inner.desktop.system_theme();
        match system {
            Some(system) => {
                self.inner.theme.lock().unwrap().system_changed(system);
                system
            }
            None => Theme::Light,
        }
    }

    /// The theme setting changed: every live view is told the theme it comes to, with its
    /// style variables (`host-context-changed`; a view already showing it is told nothing).
    pub fn set_theme_preference(&self, preference: ThemePreference) {
        self.inner.theme.lock().unwrap().set_preference(preference);
        // The engine's own idea of the theme too: views that style themselves by
        // `prefers-color-scheme` (not the host's variables) follow the setting.
        self.inner.desktop.follow_theme(preference.explicit());
        if !self.inner.live.lock().unwrap().is_empty() {
            self.tell_theme(self.theme());
        }
    }

    /// The theme the person chose in Settings, when it is not the system's: what the windows
    /// are to appear as.
    pub fn chosen_theme(&self) -> Option<Theme> {
        self.inner.theme.lock().unwrap().preference().explicit()
    }

    /// The system's theme changed (`dark` or not): while the preference is "system", every
    /// live view is told; an explicit light or dark preference stays as it is.
    pub fn theme_changed(&self, dark: bool) {
        let changed = self.inner.theme.lock().unwrap().system_changed(Theme::from_dark(dark));
        if let Some(theme) = changed {
            self.tell_theme(theme);
        }
    }

    fn tell_theme(&self, theme: Theme) {
        let emulation = self.inner.emulation.lock().unwrap().clone();
        let bridges: Vec<(ViewBridge, bool)> = self
            .inner
            .live
            .lock()
            .unwrap()
            .values()
            .map(|v| (v.bridge.clone(), v.presented.is_some()))
            .collect();
        for (bridge, emulated) in bridges {
            let mut context = theme_context(theme);
            if emulated {
                // An emulated theme (or its variables) stands over the window's.
                let presentation = emulation.presentation(theme);
                for key in ["theme", "styles"] {
                    if let Some(value) = presentation.context.get(key) {
                        context[key] = value.clone();
                    }
                }
            }
            bridge.host_context_changed(context);
        }
    }

    /// The workbench's host emulation as set.
    pub fn host_emulation(&self) -> HostEmulation {
        self.inner.emulation.lock().unwrap().clone()
    }

    /// The presentation for a view of call `call_id`: the emulated host's, when emulation is on
    /// and applies to it (the workbench's own runs, or every view when the person chose so).
    fn presentation_for(&self, call_id: &str) -> Option<Presentation> {
        let emulation = self.inner.emulation.lock().unwrap().clone();
        let workbench = call_id.starts_with(crate::tool_runs::RUN_PREFIX) || call_id.starts_with(PREVIEW_PREFIX);
        let applies = emulation.is_active() && (emulation.in_chats || workbench);
        applies.then(|| emulation.presentation(self.theme()))
    }

    /// What the card says of the host view `view_id` is presented as.
    fn emulated_host(&self, view_id: &str) -> Option<EmulatedHost> {
        self.inner.live.lock().unwrap().get(view_id)?.presented.as_ref()?;
        let emulation = self.inner.emulation.lock().unwrap().clone();
        let preset = presets().into_iter().find(|p| p.id == emulation.preset)?;
        let edited = emulation.overrides != Default::default();
        Some(EmulatedHost {
            name: if edited {
                format!("{} (edited)", preset.name)
            } else {
                preset.name
            },
            width: porthole_apps::host_emulation::frame_width(&emulation),
        })
    }

    /// Sets the workbench's host emulation, keeps it, and applies it to the live views at once:
    /// a change of context is told to a view (`host-context-changed`); a change of host info,
    /// capabilities or `window.openai` re-creates it with its call's input and result (a view
    /// learns those only when it starts).
    pub async fn set_host_emulation(&self, emulation: HostEmulation) -> AppResult<HostEmulation> {
        let emulation = emulation.checked().map_err(AppError::invalid)?;
        if let Some(store) = &self.inner.store {
            store
                .set_setting(HOST_EMULATION_SETTING, &json!(emulation))
                .map_err(|e| AppError::store(format!("the host emulation is not kept: {e}")))?;
        }
        *self.inner.emulation.lock().unwrap() = emulation.clone();
        let views: Vec<(String, String, Option<Presentation>, ViewBridge)> = self
            .inner
            .live
            .lock()
            .unwrap()
            .values()
            .map(|v| {
                (
                    v.view_id.clone(),
                    v.call_id.clone(),
                    v.presented.clone(),
                    v.bridge.clone(),
                )
            })
            .collect();
        let base = host_context(self.theme(), &self.inner.environment);
        for (view_id, call_id, before, bridge) in views {
            let after = self.presentation_for(&call_id);
            match (&before, &after) {
                (None, None) => {}
                (Some(b), Some(a)) if b.same_document(a) => {
                    let mut context = base.as_object().cloned().unwrap_or_default();
                    context.remove("displayMode");
                    context.remove("containerDimensions");
                    context.extend(a.context.clone());
                    if let Some(view) = self.inner.live.lock().unwrap().get_mut(&view_id) {
                        view.presented = after.clone();
                    }
                    bridge.host_context_changed(Value::Object(context));
                }
                _ => {
                    if let Err(e) = self.recreate(&view_id).await {
                        tracing::warn!(view = %view_id, "the view was not re-created for the host emulation: {}", e.message);
                    }
                }
            }
        }
        Ok(emulation)
    }

    /// Tears down every live view of a conversation while their frames are still on screen
    /// (`ui/resource-teardown`, answered or timed out, in parallel), before the window
    /// switches away from it.
    pub async fn teardown_conversation(&self, conversation_id: &str) {
        self.teardown_where(|v| v.conversation_id == conversation_id).await;
    }

    /// Tears down the live views in the main window of these calls (the model's call ids) of a
    /// conversation, as [`Views::teardown_conversation`] does; its other views stay as they are.
    pub async fn teardown_calls(&self, conversation_id: &str, call_ids: &[String]) {
        self.teardown_where(|v| v.conversation_id == conversation_id && call_ids.contains(&v.call_id))
            .await;
    }

    async fn teardown_where(&self, tear_down: impl Fn(&LiveView) -> bool) {
        let ids = self.ids_where(|v| v.webview == MAIN_WINDOW && tear_down(v));
        futures::future::join_all(ids.iter().map(|id| self.close(id, true))).await;
    }

    /// A view the person wants in a window of its own: where it belongs (conversation, call,
    /// tool). Only a view that is ready in the main window can move.
    pub fn pop_out_source(&self, view_id: &str) -> AppResult<(String, String, String)> {
        let live = self.inner.live.lock().unwrap();
        let view = live
            .get(view_id)
            .ok_or_else(|| AppError::not_found("no such view (it may have been closed)"))?;
        if view.webview != MAIN_WINDOW {
            return Err(AppError::invalid("the view is already in a window of its own"));
        }
        if *view.phase.borrow() != Phase::Ready || view.store_id.is_none() {
            return Err(AppError::invalid(
                "only a view that has finished loading can be popped out",
            ));
        }
        Ok((view.conversation_id.clone(), view.call_id.clone(), view.tool.clone()))
    }

    /// Tells `webview` that a call's view lives in a window of its own.
    pub fn popped_out(&self, webview: &str, conversation_id: &str, call_id: &str) {
        self.emit_to(
            webview,
            ViewEvent::State {
                conversation_id: conversation_id.to_string(),
                call_id: call_id.to_string(),
                view_id: None,
                state: ViewStatus::PoppedOut,
                reason: None,
            },
        );
    }

    /// A pop-out window closed: its views' frames are gone, and so are they.
    pub async fn webview_closed(&self, webview: &str) {
        let gone = self.ids_where(|v| v.webview == webview);
        for view_id in gone {
            self.close(&view_id, false).await;
        }
    }

    /// The agent loop's view of one conversation's views.
    pub fn reports(&self, conversation_id: &str) -> Arc<dyn ViewReports> {
        Arc::new(ConversationViews {
            views: self.clone(),
            conversation_id: conversation_id.to_string(),
        })
    }

    /// The tools the live views of a conversation offer, for its turns.
    pub fn app_tools(&self, conversation_id: &str) -> Arc<dyn AppTools> {
        Arc::new(ConversationViews {
            views: self.clone(),
            conversation_id: conversation_id.to_string(),
        })
    }

    /// Asks a view for its own tools (it offers some) and keeps them for its conversation's
    /// turns; a view that does not answer offers none.
    async fn list_app_tools(&self, view_id: &str) {
        let Some(bridge) = self.bridge(view_id) else { return };
        let tools = match bridge.list_app_tools().await {
            Ok(tools) => tools,
            Err(e) => {
                tracing::warn!(view_id, "the view's own tools could not be listed: {e}");
                Vec::new()
            }
        };
        if let Some(view) = self.inner.live.lock().unwrap().get_mut(view_id) {
            tracing::info!(view_id, tools = tools.len(), "the view offers tools of its own");
            view.app_tools = tools;
        }
    }

    /// The tools a conversation's live views offer, each with its model-facing name
    /// (`<server>_view__<tool>`, `_2`… when two views offer the same), and the view it is on.
    fn offered_tools(&self, conversation_id: &str) -> Vec<(AppTool, String)> {
        let live = self.inner.live.lock().unwrap();
        let mut views: Vec<&LiveView> = live
            .values()
            .filter(|v| v.conversation_id == conversation_id && !v.app_tools.is_empty())
            .collect();
        views.sort_by_key(|v| v.store_id.unwrap_or(i64::MAX));
        let mut out: Vec<(AppTool, String)> = Vec::new();
        for view in views {
            for tool in &view.app_tools {
                let Some(name) = tool.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let base = app_tool_model_name(&view.server, name);
                let mut model_name = base.clone();
                let mut n = 2;
                while out.iter().any(|(t, _)| t.model_name == model_name) {
                    model_name = format!("{}_{n}", &base[..base.len().min(60)]);
                    n += 1;
                }
                out.push((
                    AppTool {
                        model_name,
                        name: name.to_string(),
                        description: tool
                            .get("description")
                            .or_else(|| tool.get("title"))
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        input_schema: tool
                            .get("inputSchema")
                            .cloned()
                            .unwrap_or_else(|| json!({"type": "object"})),
                        read_only: tool["annotations"]["readOnlyHint"] == true,
                        offered_by: format!("{}'s {} view", view.server, view.tool),
                    },
                    view.view_id.clone(),
                ));
            }
        }
        out
    }
}

/// A model-facing name for a view's own tool `name` of `server`: `<server>_view__<name>`, with
/// every character other than ASCII letters, digits, `_` and `-` written `_`, at most 64 long.
fn app_tool_model_name(server: &str, name: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut model_name = format!("{}_view__{}", clean(server), clean(name));
    model_name.truncate(64);
    model_name
}

impl AppTools for ConversationViews {
    fn tools(&self) -> Vec<AppTool> {
        self.views
            .offered_tools(&self.conversation_id)
            .into_iter()
            .map(|(tool, _)| tool)
            .collect()
    }

    fn call(&self, model_name: &str, arguments: Value) -> BoxFuture<'static, Result<Value, String>> {
        let found = self
            .views
            .offered_tools(&self.conversation_id)
            .into_iter()
            .find(|(t, _)| t.model_name == model_name);
        let bridge = found.as_ref().and_then(|(_, view_id)| self.views.bridge(view_id));
        async move {
            let (Some((tool, _)), Some(bridge)) = (found, bridge) else {
                return Err("the view that offered this tool is no longer shown".to_string());
            };
            bridge.call_app_tool(&tool.name, arguments).await
        }
        .boxed()
    }
}

// ---- What the windows ask of the views ----------------------------------------------------------

impl Host {
    /// Only the window showing a view may speak for it (the main window, or its pop-out).
    fn owned(&self, window: &str, view_id: &str) -> AppResult<()> {
        if self.inner.views.shown_in(view_id, window) {
            Ok(())
        } else {
            Err(AppError::forbidden("no such view in this window"))
        }
    }

    /// A message a view's frame posted; the window matched `event.source` to the frame.
    pub fn view_message(&self, window: &str, view_id: &str, message: Value) -> AppResult<()> {
        self.owned(window, view_id)?;
        self.inner.views.receive(view_id, message);
        Ok(())
    }

    /// The frame is gone (conversation switched, scrolled away, closed): tear the view down.
    pub async fn close_view(&self, window: &str, view_id: &str) -> AppResult<()> {
        self.owned(window, view_id)?;
        self.inner.views.close(view_id, false).await;
        Ok(())
    }

    /// A view is about to leave the screen while its frame is still there (scrolled far
    /// away): it gets `ui/resource-teardown`, waited for, and is removed.
    pub async fn teardown_view(&self, window: &str, view_id: &str) -> AppResult<()> {
        self.owned(window, view_id)?;
        self.inner.views.close(view_id, true).await;
        Ok(())
    }

    /// The window changed a view's display mode (Esc, its buttons); the view is told.
    pub fn set_view_display_mode(&self, window: &str, view_id: &str, mode: DisplayMode) -> AppResult<()> {
        self.owned(window, view_id)?;
        self.inner.views.set_display_mode(view_id, mode)
    }

    /// The person let the view's server use the devices the view asks for; it is loaded again.
    pub async fn allow_view_devices(&self, window: &str, view_id: &str) -> AppResult<()> {
        self.owned(window, view_id)?;
        self.inner.views.allow_devices(view_id).await
    }

    /// Whether a frame's request for `device` (`camera`, `microphone`, `geolocation`) is
    /// allowed: only while a live view was given it.
    pub fn device_request(&self, device: &str) -> bool {
        self.inner.views.device_request(device)
    }

    /// The card's room for a view changed; the view is told its container's width.
    pub fn set_view_container(&self, window: &str, view_id: &str, width: f64) -> AppResult<()> {
        self.owned(window, view_id)?;
        self.inner.views.set_container(view_id, width)
    }

    /// Re-creates the views of a reopened conversation in the main window (or reports them
    /// expired).
    pub fn reopen_views(&self, conversation_id: &str, call_id: Option<&str>) -> AppResult<()> {
        self.inner.views.reopen(conversation_id, call_id, MAIN_WINDOW)
    }

    /// Before the window leaves a conversation: its views are told `ui/resource-teardown` while
    /// their frames are still there, and removed.
    pub async fn teardown_views(&self, conversation_id: &str) {
        self.inner.views.teardown_conversation(conversation_id).await;
    }

    /// The person's answer to a view's download offer; returns how many files were saved.
    pub async fn answer_download(&self, request_id: &str, accept: bool) -> AppResult<usize> {
        self.inner.views.answer_download(request_id, accept).await
    }

    /// The person's answer to a view's sampling request: approved, it goes to the model.
    pub fn answer_sampling(&self, request_id: u64, approve: bool) -> AppResult<()> {
        self.inner.views.answer_sampling(request_id, approve)
    }

    /// The person's answer to a view's request to open a link.
    pub fn answer_link(&self, request_id: u64, open: bool) -> AppResult<()> {
        self.inner.views.answer_link(request_id, open)
    }
}

/// Answers "did this call's view render?" for the agent loop: waits (bounded) for a view that
/// is still loading; no view, or one that failed, is never reported as rendered.
struct ConversationViews {
    views: Views,
    conversation_id: String,
}

impl ViewReports for ConversationViews {
    fn settle(&self, call_id: &str, result: &Value) -> BoxFuture<'static, ViewState> {
        let view_id = self.views.view_for(&self.conversation_id, call_id);
        // The view has its result now, not once it has started: the bridge holds it with the
        // input until `initialized`, then sends both before the card hears the view is ready (its
        // re-render would otherwise come between them). A result naming another view is given to
        // that one when the call's end replaces the view.
        if let Some(id) = &view_id
            && self.views.replacement_uri(id, result).is_none()
            && let Some(bridge) = self.views.bridge(id)
        {
            bridge.tool_result(result.clone());
        }
        let phase = view_id.and_then(|id| {
            self.views
                .inner
                .live
                .lock()
                .unwrap()
                .get(&id)
                .map(|v| v.phase.subscribe())
        });
        let views = self.views.clone();
        let conversation_id = self.conversation_id.clone();
        let call_id = call_id.to_string();
        // Read when the view is ready: it is known once the view has been served.
        let description = move || {
            let id = views.view_for(&conversation_id, &call_id)?;
            views.inner.live.lock().unwrap().get(&id)?.description.clone()
        };
        async move {
            let Some(mut phase) = phase else { return ViewState::None };
            let settled = tokio::time::timeout(
                INITIALIZE_TIMEOUT + Duration::from_secs(2),
                phase.wait_for(|p| *p != Phase::Loading),
            )
            .await;
            match settled {
                Ok(Ok(p)) => match &*p {
                    Phase::Ready => ViewState::Rendered {
                        description: description(),
                    },
                    Phase::Failed(reason) => ViewState::Failed(reason.clone()),
                    Phase::Loading => ViewState::Failed("still loading".into()),
                },
                Ok(Err(_)) => ViewState::Failed("the view was closed".into()),
                Err(_) => ViewState::Failed("the view did not start in time".into()),
            }
        }
        .boxed()
    }
}

/// What a view may reach through the bridge: its own server, and the audit log.
struct AppServices {
    servers: Servers,
    views: Views,
    conversation_id: String,
}

fn to_json<T: Serialize>(result: Result<T, porthole_mcp::CallError>) -> Result<Value, String> {
    result
        .map_err(|e| e.to_string())
        .and_then(|v| serde_json::to_value(v).map_err(|e| e.to_string()))
}

impl HostServices for AppServices {
    fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<Map<String, Value>>,
    ) -> BoxFuture<'static, Result<Value, String>> {
        let servers = self.servers.clone();
        let (server, tool) = (server.to_string(), tool.to_string());
        async move {
            servers
                .call_tool(&server, &tool, arguments, Default::default())
                .await
                .map(|outcome| outcome.view)
                .map_err(|e| e.to_string())
        }
        .boxed()
    }

    fn tool(&self, server: &str, tool: &str) -> Option<CatalogTool> {
        self.servers
            .statuses()
            .into_iter()
            .filter(|s| s.name == server)
            .flat_map(|s| s.tools)
            .find(|t| t.name == tool)
    }

    fn tools(&self, server: &str) -> Option<Vec<CatalogTool>> {
        self.servers.status(server).map(|s| s.tools)
    }

    fn read_resource(&self, server: &str, uri: &str) -> BoxFuture<'static, Result<Value, String>> {
        let servers = self.servers.clone();
        let (server, uri) = (server.to_string(), uri.to_string());
        async move { to_json(servers.read_resource(&server, &uri).await) }.boxed()
    }

    fn list_resources(&self, server: &str) -> BoxFuture<'static, Result<Value, String>> {
        let servers = self.servers.clone();
        let server = server.to_string();
        async move { to_json(servers.list_resources(&server).await).map(|r| json!({"resources": r})) }.boxed()
    }

    fn list_resource_templates(&self, server: &str) -> BoxFuture<'static, Result<Value, String>> {
        let servers = self.servers.clone();
        let server = server.to_string();
        async move { to_json(servers.list_resource_templates(&server).await).map(|r| json!({"resourceTemplates": r})) }
            .boxed()
    }

    fn list_prompts(&self, server: &str) -> BoxFuture<'static, Result<Value, String>> {
        let servers = self.servers.clone();
        let server = server.to_string();
        async move { to_json(servers.list_prompts(&server).await).map(|r| json!({"prompts": r})) }.boxed()
    }

    fn audit(&self, entry: AuditNote) {
        audit_note(&self.views, &self.conversation_id, entry);
    }

    fn offers_sampling(&self) -> bool {
        self.views.sampler().is_some_and(|s| s.available())
    }

    fn sample(&self, _server: &str, view_id: &str, params: Value) -> BoxFuture<'static, Result<Value, String>> {
        let views = self.views.clone();
        let view_id = view_id.to_string();
        async move { views.sample(&view_id, params).await }.boxed()
    }

    fn open_link(&self, _server: &str, view_id: &str, url: String) -> BoxFuture<'static, Result<Value, String>> {
        link_for(&self.views, view_id, url)
    }
}

/// What a remote agent's view asks of its server goes through the agent ([`RemoteViewServer`]);
/// what it asks of the person (links, sampling) and the audit are the app's, as for any view.
struct RemoteServices {
    server: Arc<RemoteViewServer>,
    views: Views,
    conversation_id: String,
}

impl RemoteServices {
    fn request(&self, method: &'static str, params: Value) -> BoxFuture<'static, Result<Value, String>> {
        let server = self.server.clone();
        async move { server.request(method, params).await }.boxed()
    }
}

impl HostServices for RemoteServices {
    fn call_tool(
        &self,
        _server: &str,
        tool: &str,
        arguments: Option<Map<String, Value>>,
    ) -> BoxFuture<'static, Result<Value, String>> {
        let server = self.server.clone();
        let tool = tool.to_string();
        async move { server.call_tool(&tool, arguments).await }.boxed()
    }

    fn tool(&self, _server: &str, tool: &str) -> Option<CatalogTool> {
        self.server.tool(tool)
    }

    fn tools(&self, _server: &str) -> Option<Vec<CatalogTool>> {
        self.server.tools()
    }

    fn read_resource(&self, _server: &str, uri: &str) -> BoxFuture<'static, Result<Value, String>> {
        self.request("resources/read", json!({"uri": uri}))
    }

    fn list_resources(&self, _server: &str) -> BoxFuture<'static, Result<Value, String>> {
        self.request("resources/list", json!({}))
    }

    fn list_resource_templates(&self, _server: &str) -> BoxFuture<'static, Result<Value, String>> {
        self.request("resources/templates/list", json!({}))
    }

    fn list_prompts(&self, _server: &str) -> BoxFuture<'static, Result<Value, String>> {
        self.request("prompts/list", json!({}))
    }

    fn audit(&self, entry: AuditNote) {
        audit_note(&self.views, &self.conversation_id, entry);
    }

    fn open_link(&self, _server: &str, view_id: &str, url: String) -> BoxFuture<'static, Result<Value, String>> {
        link_for(&self.views, view_id, url)
    }
}

/// A view's `ui/open-link`, asked of the person (local and remote views alike).
fn link_for(views: &Views, view_id: &str, url: String) -> BoxFuture<'static, Result<Value, String>> {
    let views = views.clone();
    let view_id = view_id.to_string();
    async move { views.open_link(&view_id, url).await }.boxed()
}

/// A bridge's audit note in the audit log.
fn audit_note(views: &Views, conversation_id: &str, entry: AuditNote) {
    views.audit(
        porthole_store::AuditKind::from_text(entry.kind.as_str()),
        conversation_id,
        &entry.server,
        entry.tool.as_deref(),
        None,
        entry.detail,
    );
}
