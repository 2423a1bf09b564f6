//! The view ↔ host protocol of MCP Apps (`io.modelcontextprotocol/ui`): one [`ViewBridge`] per
//! live view, fed with what the view posts ([`ViewBridge::receive`]) and with the tool call's
//! progress ([`ViewBridge::tool_input`], [`ViewBridge::tool_result`], …). It answers the view on
//! one channel (JSON-RPC messages to post into the frame) and asks the app for user-facing things
//! on another ([`ViewAction`]). It does no I/O itself: servers are reached through
//! [`HostServices`], and the front end relays messages (attributing them by `event.source`).
//!
//! What the view may do:
//! - `ui/initialize` is answered with the protocol version (the view's when we support it, else
//!   our latest), truthful host capabilities (no sampling; `listChanged` for the server's tools
//!   and resources, whose changes the host forwards: [`ViewBridge::server_list_changed`]),
//!   `hostInfo` and the host context with `toolInfo`. A second one is
//!   answered again (React StrictMode mounts twice; an Apps SDK shim and a framework speak the
//!   bridge side by side), and its `initialized` gets the tool input and outcome again.
//! - `tools/call` reaches only the view's own server, and only tools whose visibility includes
//!   `"app"`; names are the server's own (a model-facing `server__tool` name is just an unknown
//!   tool) and a `server` param naming another server is refused. Refusals are JSON-RPC errors
//!   (-32000), so the SDK's `callServerTool` rejects; every call is audited.
//! - `resources/read`, `resources/list`, `resources/templates/list`, `prompts/list` are forwarded
//!   to the same server; `tools/list` lists its tools visible to apps (when the app implements
//!   [`HostServices::tools`]; otherwise -32601).
//! - `ui/open-link` (absolute `https:` URLs with a host, no credentials), `ui/message` (user role,
//!   text; the app puts it in the composer, it never reaches the model unseen),
//!   `ui/download-file` (the app confirms), `ui/update-model-context` (the app feeds its model
//!   context: this crate does not depend on the agent), `ui/request-display-mode` (only modes
//!   both the view declared and the host offers), `size-changed` (clamped, rate-limited),
//!   `notifications/message` and its proposed alias `ui/log` become [`ViewAction`]s.
//!
//! Against hostile views: messages over [`MAX_MESSAGE_BYTES`] (compact JSON, measured without
//! serialising) or nested deeper than [`MAX_NESTING`] are refused (-32600 when they have an id);
//! beyond [`MAX_MESSAGES_PER_SECOND`] messages are dropped; at most [`MAX_IN_FLIGHT`] forwarded
//! requests run at once (-32000 "too many calls in flight"). `receive` never panics.
//!
//! Forwarded requests (and late size changes) run as tasks on the tokio runtime current when
//! `receive` is called or, failing that, the one current when the bridge was made; with neither,
//! forwarded requests are answered -32603.
//!
//! Decisions where the spec is silent:
//! - Before `ui/initialize`, only `ui/initialize` and `ping` are answered normally; any other known
//!   request gets -32000 "send ui/initialize first" and notifications other than logging and
//!   `request-teardown` are ignored (including `initialized`). No SDK view does otherwise, and it
//!   keeps a view that has not shown itself from opening links or proposing messages. Between
//!   `ui/initialize` and `initialized` requests are answered normally (responses are not the
//!   "requests or notifications" the spec forbids before `initialized`).
//! - Host → view notifications wait for `initialized` and are then sent in this order: one
//!   `host-context-changed` with what changed since the `ui/initialize` answer, the latest
//!   `tool-input-partial` (only if no `tool-input` came), `tool-input`, then `tool-result` or
//!   `tool-cancelled`. At most one of `tool-result`/`tool-cancelled` is ever sent.
//! - `tool_result` before `tool_input` (a host bug) first sends a `tool-input` with the latest
//!   partial arguments, or `{}`: the spec requires `tool-input` before `tool-result`.
//!   `tool_cancelled` sends no made-up `tool-input` (a call can be cancelled while its arguments
//!   are still streaming). A result that is not an object is sent as `tool-cancelled`.
//! - `host_context_changed` sends only the keys whose value changed; `toolInfo` is never changed.
//! - `ui/request-display-mode` answers with the mode in effect; on a change the
//!   `host-context-changed {displayMode}` notification is posted before the answer, so the view
//!   sees the new context when its request resolves. The host's modes are the host context's
//!   `availableDisplayModes` (just the current mode when absent).
//! - `size-changed` beyond the rate limit is not lost: the latest dropped size is delivered when
//!   the window ends, so the frame never stays at a stale size after a burst.
//! - Requests that prompt the user (`ui/open-link`, `ui/message`, `ui/download-file`) are limited
//!   to [`MAX_PROMPTS`] per [`PROMPT_PERIOD`]; the answer `{}` means "handed to the app", not
//!   "the user agreed" (the view does not learn what the user chose).
//! - `notifications/cancelled` from the view aborts the forwarded call (no answer is sent, as MCP
//!   asks); a request whose id is already in flight is refused with -32600.
//! - Messages that are not JSON-RPC objects, notifications that are malformed and responses we
//!   did not ask for are dropped silently; a request whose `id` has the wrong type is answered
//!   with -32600 and `id: null`, as JSON-RPC prescribes.
//! - `teardown` before `initialized` sends nothing (the spec forbids any request before it) and
//!   returns [`TeardownOutcome::NotInitialized`]. From `teardown` on, host → view notifications
//!   stop; the view's requests are still served until it answers (it may save its state), and
//!   everything is dropped afterwards.
//! - Audit notes are limited to [`MAX_AUDITS_PER_SECOND`] per view; the first one over gets a
//!   `"suppressed"` note. Kinds: `"call"` (outcome `ok`, `error`, `refused` or `cancelled`) and
//!   `"refused"` (links, flood, oversized messages, too many calls or prompts).

mod limits;
mod rpc;
mod validate;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use porthole_mcp::CatalogTool;
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

use limits::{Hit, Window};
use rpc::Incoming;
pub use rpc::{INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, REFUSED};
pub use validate::{MAX_LINK_LEN, MAX_WIDTH};

use crate::display::DisplayMode;

/// `ui/initialize` protocol versions we speak; a view asking for another one gets the first.
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 2] = ["2026-01-26", "2025-11-21"];
/// Our latest protocol version.
pub const LATEST_PROTOCOL_VERSION: &str = SUPPORTED_PROTOCOL_VERSIONS[0];
/// A message whose compact JSON is longer than this is refused.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// A message nested deeper than this (arrays and objects) is refused.
pub const MAX_NESTING: usize = 128;
/// Messages beyond this many in one second from one view are dropped.
pub const MAX_MESSAGES_PER_SECOND: u32 = 500;
/// Forwarded server requests one view may have running at once.
pub const MAX_IN_FLIGHT: usize = 16;
/// `size-changed` notifications acted upon per second (the latest of the rest comes later).
pub const MAX_SIZE_CHANGES_PER_SECOND: u32 = 20;
/// Requests that prompt the user (`ui/open-link`, `ui/message`, `ui/download-file`) per period.
pub const MAX_PROMPTS: u32 = 5;
/// See [`MAX_PROMPTS`].
pub const PROMPT_PERIOD: Duration = Duration::from_secs(10);
/// `sampling/createMessage` requests one view may make per [`SAMPLING_PERIOD`] (each is also put
/// to the person).
pub const MAX_SAMPLES: u32 = 3;
/// See [`MAX_SAMPLES`].
pub const SAMPLING_PERIOD: Duration = Duration::from_secs(60);
/// Audit notes one view may cause per second.
pub const MAX_AUDITS_PER_SECOND: u32 = 50;

const SECOND: Duration = Duration::from_secs(1);

/// What the bridge needs from the app; the desktop implements it over `porthole_mcp::Servers`.
pub trait HostServices: Send + Sync + 'static {
    /// `tools/call` on `server`; the `CallToolResult` JSON, or why the call failed.
    fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<Map<String, Value>>,
    ) -> BoxFuture<'static, Result<Value, String>>;
    /// The tool's catalog entry on that server (`None`: no such tool).
    fn tool(&self, server: &str, tool: &str) -> Option<CatalogTool>;
    /// All the catalog's tools of `server` (the bridge filters them by visibility), for a view's
    /// `tools/list`. `None` (the default): not offered, and `tools/list` gets -32601.
    fn tools(&self, server: &str) -> Option<Vec<CatalogTool>> {
        let _ = server;
        None
    }
    /// `resources/read`: the `ReadResourceResult` JSON.
    fn read_resource(&self, server: &str, uri: &str) -> BoxFuture<'static, Result<Value, String>>;
    /// `resources/list`: `{resources: […]}`.
    fn list_resources(&self, server: &str) -> BoxFuture<'static, Result<Value, String>>;
    /// `resources/templates/list`: `{resourceTemplates: […]}`.
    fn list_resource_templates(&self, server: &str) -> BoxFuture<'static, Result<Value, String>>;
    /// `prompts/list`: `{prompts: […]}`.
    fn list_prompts(&self, server: &str) -> BoxFuture<'static, Result<Value, String>>;
    /// Records a security event (see the module docs for the kinds). Called without any lock
    /// of the bridge held, and before the view is answered.
    fn audit(&self, entry: AuditNote);
    /// Whether views may ask for `sampling/createMessage` (a model is set up); advertised as
    /// `hostCapabilities.sampling` only then.
    fn offers_sampling(&self) -> bool {
        false
    }
    /// `sampling/createMessage` from view `view_id` (params checked: `messages` of
    /// `{role, content: {type: "text", text}}`, `maxTokens`, `systemPrompt`?): the
    /// `CreateMessageResult` once the person approved it and the model answered, or why not.
    fn sample(&self, server: &str, view_id: &str, params: Value) -> BoxFuture<'static, Result<Value, String>> {
        let _ = (server, view_id, params);
        Box::pin(async { Err("sampling is not offered".to_string()) })
    }
    /// `ui/open-link` from view `view_id` (an `https:` URL, checked): `{}` once the person agreed
    /// and the browser opened it, or why not (declined, no browser). The view hears the outcome.
    fn open_link(&self, server: &str, view_id: &str, url: String) -> BoxFuture<'static, Result<Value, String>> {
        let _ = (server, view_id, url);
        Box::pin(async { Err("links are not opened here".to_string()) })
    }
}

/// What an [`AuditNote`] records. Its text (serde, [`AuditKind::as_str`]) is the audit log's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditKind {
    /// The view called a tool of its server: `detail.outcome` is `ok`, `error`, `refused` or
    /// `cancelled`.
    Call,
    /// A request of the view was refused: `detail.reason` says why.
    Refused,
    /// The view caused more notes in one second than are kept; the rest of that second's are dropped.
    Suppressed,
}

impl AuditKind {
    /// The audit log's text for it: `"call"`, `"refused"` or `"suppressed"`.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditKind::Call => "call",
            AuditKind::Refused => "refused",
            AuditKind::Suppressed => "suppressed",
        }
    }
}

/// A security event for the audit log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditNote {
    pub kind: AuditKind,
    pub server: String,
    pub tool: Option<String>,
    /// Always has `view` (the view id; `viewTool` is the view's own tool); `"call"` notes have `outcome` and `reason` or `error`;
    /// `"refused"` notes have `reason`.
    pub detail: Value,
}

/// Something the view asks of the app. The app decides (asks the user, ignores, …); the bridge
/// has already answered the view.
#[derive(Debug, Clone, PartialEq)]
pub enum ViewAction {
    /// Put these text blocks in the composer as a proposed user message.
    ProposeMessage { content: Vec<Value> },
    /// Replace this view's model context: `{content?: text blocks, structuredContent?: object}`;
    /// neither means "clear".
    UpdateModelContext { params: Value },
    /// The view switched to this display mode (already in the host context).
    DisplayMode { mode: String },
    /// The view's content size in CSS pixels (clamped).
    SizeChanged { width: Option<f64>, height: Option<f64> },
    /// Offer these embedded resources / resource links for download (after confirming).
    DownloadFile { contents: Vec<Value> },
    /// A log message (never model context).
    Log {
        level: String,
        logger: Option<String>,
        data: Value,
    },
    /// The view finished its handshake; queued notifications have been posted.
    Initialized,
    /// The view asks to be closed (go through [`ViewBridge::teardown`] if agreeing).
    RequestTeardown,
    /// The view's own tools changed (`notifications/tools/list_changed` from a view that
    /// offers tools): list them again.
    ToolsChanged,
    /// The whole `localStorage` of the view's origin, to keep for its next start (the
    /// host-injected [`crate::view_storage::shim`] reports it when it changed).
    SaveStorage { local_storage: Map<String, Value> },
    /// An Apps SDK widget's `setWidgetState` (checked): kept with the view's tool call.
    SaveWidgetState { state: Value },
    /// Something the view's document reported about itself (an error in its console, an
    /// uncaught exception, a CSP violation): only from a document given
    /// [`crate::diagnostics::shim`].
    Diagnostic(crate::diagnostics::Diagnostic),
    /// The view asked for something the host does not offer (answered -32601).
    Unsupported { method: String },
}

/// Which of its server's lists changed, for [`ViewBridge::server_list_changed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerList {
    Tools,
    Resources,
}

/// What a view is and what the host offers it.
#[derive(Debug, Clone)]
pub struct ViewConfig {
    pub view_id: String,
    /// The server that supplied the view; the only one it can reach.
    pub server: String,
    /// The tool the view belongs to; `hostContext.toolInfo.tool` is its [`tool_definition`].
    pub tool: CatalogTool,
    /// The JSON-RPC id of the host → server `tools/call`, for `hostContext.toolInfo.id`.
    pub tool_call_request_id: Option<Value>,
    /// The initial host context: theme, styles, displayMode, availableDisplayModes,
    /// containerDimensions, locale, timeZone, platform, userAgent…
    pub host_context: Value,
    /// The sandbox actually granted (`{permissions, csp}`), for `hostCapabilities.sandbox`.
    pub granted: Value,
    /// Another host to present Porthole as (the workbench's host emulation): its `hostInfo`
    /// and capabilities in the `ui/initialize` answer, its context over `host_context`, and
    /// requests for capabilities it does not advertise refused. `None`: Porthole itself.
    pub emulating: Option<crate::host_emulation::Presentation>,
}

/// How [`ViewBridge::teardown`] ended. Every outcome means "proceed with removing the view".
#[derive(Debug, Clone, PartialEq)]
pub enum TeardownOutcome {
    /// The view answered with a result.
    Answered,
    /// The view answered with an error (-32601 when it has no teardown handler).
    Errored {
        code: i64,
        message: String,
    },
    TimedOut,
    /// The view never sent `initialized`, so nothing was sent to it.
    NotInitialized,
    /// Teardown had already started or ended.
    AlreadyTornDown,
    /// Nobody reads the messages to the view any more.
    Disconnected,
}

/// The bridge of one live view. Cheap to clone.
#[derive(Clone)]
pub struct ViewBridge {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ViewBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewBridge")
            .field("view_id", &self.inner.view_id)
            .field("server", &self.inner.server)
            .finish_non_exhaustive()
    }
}

/// Where the bridge's messages for the view go.
enum Out {
    Channel(mpsc::UnboundedSender<Value>),
    Sink(Arc<dyn Fn(Value) + Send + Sync>),
}

impl Out {
    /// Sends a message; an error when the view is known to be gone (a closed channel).
    fn send(&self, message: Value) -> Result<(), ()> {
        match self {
            Out::Channel(out) => out.send(message).map_err(drop),
            Out::Sink(sink) => {
                sink(message);
                Ok(())
            }
        }
    }
}

struct Inner {
    view_id: String,
    server: String,
    tool_name: String,
    tool_info: Value,
    capabilities: Value,
    host_info: Value,
    /// Emulating another host: requests for capabilities it lacks are refused.
    emulating: bool,
    host: Arc<dyn HostServices>,
    out: Out,
    actions: mpsc::UnboundedSender<ViewAction>,
    runtime: Option<tokio::runtime::Handle>,
    state: Mutex<State>,
}

struct InFlight {
    serial: u64,
    abort: tokio::task::AbortHandle,
    /// The tool, for a `tools/call` (audited).
    tool: Option<String>,
}

struct State {
    /// `ui/initialize` has been answered.
    /// What the view was granted (`hostCapabilities.sandbox`): set once its resource is read.
    sandbox: Value,
    handshake: bool,
    initialized: bool,
    tearing_down: bool,
    closed: bool,
    /// The view's `appCapabilities.availableDisplayModes`.
    view_modes: Vec<DisplayMode>,
    host_context: Map<String, Value>,
    /// Host-context changes since the last `ui/initialize` answer, before `initialized`.
    pending_context: Map<String, Value>,
    /// The latest partial arguments (`None` until one came).
    latest_partial: Option<Value>,
    /// `latest_partial` still has to be sent at `initialized`.
    partial_unsent: bool,
    pending_input: Option<Value>,
    pending_outcome: Option<Value>,
    /// The tool input and outcome as sent (or to be sent), for a party that initializes later.
    given_input: Option<Value>,
    given_outcome: Option<Value>,
    /// A `ui/initialize` came after `initialized`: the next `initialized` gets the input and
    /// outcome again (a second party in the document, or a remount, missed them).
    initialize_again: bool,
    input_given: bool,
    outcome_given: bool,
    messages: Window,
    sizes: Window,
    size_pending: Option<(Option<f64>, Option<f64>)>,
    size_timer: bool,
    prompts: Window,
    samples: Window,
    audits: Window,
    oversize_audited: bool,
    in_flight: HashMap<String, InFlight>,
    next_serial: u64,
    next_request: u64,
    /// Requests to the view waiting for their answer (teardown, app tools).
    waiting: HashMap<u64, oneshot::Sender<ViewAnswer>>,
    /// The view declared tools of its own (`appCapabilities.tools`).
    offers_tools: bool,
}

/// A view's answer to a host → view request: its result, or its error's code and message.
type ViewAnswer = Result<Value, (i64, String)>;

/// A request forwarded to the view's server (or, for sampling, to the person and the model).
enum Forward {
    Sample {
        params: Value,
    },
    OpenLink {
        url: String,
    },
    CallTool {
        name: String,
        arguments: Option<Map<String, Value>>,
    },
    ReadResource {
        uri: String,
    },
    ListResources,
    ListResourceTemplates,
    ListPrompts,
}

const REQUESTS: [&str; 14] = [
    "ping",
    "sampling/createMessage",
    "ui/initialize",
    "tools/call",
    "tools/list",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "ui/open-link",
    "ui/message",
    "ui/update-model-context",
    "ui/request-display-mode",
    "ui/download-file",
];

/// The `Tool` JSON a view sees for a catalog entry: its own tool (`hostContext.toolInfo.tool`)
/// and the tools `tools/list` lists.
pub fn tool_definition(tool: &CatalogTool) -> Value {
    let mut t = Map::new();
    t.insert("name".into(), json!(tool.name));
    if let Some(title) = &tool.title {
        t.insert("title".into(), json!(title));
    }
    if let Some(description) = &tool.description {
        t.insert("description".into(), json!(description));
    }
    t.insert("inputSchema".into(), tool.input_schema.clone());
    let mut ui = Map::new();
    if let Some(uri) = &tool.ui_resource_uri {
        ui.insert("resourceUri".into(), json!(uri));
    }
    ui.insert("visibility".into(), json!(tool.visibility));
    t.insert("_meta".into(), json!({ "ui": ui }));
    Value::Object(t)
}

/// `{arguments}` params for `tool-input(-partial)`; arguments that are not an object are left out.
fn arguments_params(arguments: Value) -> Value {
    match arguments {
        Value::Object(_) => json!({ "arguments": arguments }),
        Value::Null => json!({}),
        other => {
            tracing::warn!(kind = %json_kind(&other), "tool arguments are not an object; not sent to the view");
            json!({})
        }
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl ViewBridge {
    /// A bridge for one view, the messages to post into it and the actions for the app. Call it
    /// inside a tokio runtime: forwarded requests run as tasks on it.
    pub fn new(
        config: ViewConfig,
        host: Arc<dyn HostServices>,
    ) -> (
        ViewBridge,
        mpsc::UnboundedReceiver<Value>,
        mpsc::UnboundedReceiver<ViewAction>,
    ) {
        let (out, out_rx) = mpsc::unbounded_channel();
        let (bridge, actions_rx) = ViewBridge::build(config, host, Out::Channel(out));
        (bridge, out_rx, actions_rx)
    }

    /// A bridge whose messages for the view go to `sink` at once, in order, on the thread that
    /// caused them (no task in between: a result reaches the window as soon as the call ends).
    /// `sink` must not call back into the bridge.
    pub fn with_sink(
        config: ViewConfig,
        host: Arc<dyn HostServices>,
        sink: Arc<dyn Fn(Value) + Send + Sync>,
    ) -> (ViewBridge, mpsc::UnboundedReceiver<ViewAction>) {
        ViewBridge::build(config, host, Out::Sink(sink))
    }

    fn build(
        config: ViewConfig,
        host: Arc<dyn HostServices>,
        out: Out,
    ) -> (ViewBridge, mpsc::UnboundedReceiver<ViewAction>) {
        let (actions, actions_rx) = mpsc::unbounded_channel();
        let mut host_context = match config.host_context {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        host_context.remove("toolInfo");
        let tool = tool_definition(&config.tool);
        let mut tool_info = Map::new();
        if let Some(id) = config.tool_call_request_id.filter(rpc::is_valid_id) {
            tool_info.insert("id".into(), id);
        }
        tool_info.insert("tool".into(), tool);
        let sandbox = match config.granted {
            granted @ Value::Object(_) => granted,
            _ => json!({}),
        };
        // `sandbox` is added when the view initializes: what was granted by then.
        let emulating = config.emulating.is_some();
        let (host_info, capabilities) = match config.emulating {
            Some(presentation) => {
                host_context.extend(presentation.context);
                host_context.remove("toolInfo");
                (presentation.host_info, presentation.capabilities)
            }
            None => (
                crate::host_emulation::porthole_host_info(),
                crate::host_emulation::porthole_capabilities(),
            ),
        };
        let state = State {
            sandbox,
            handshake: false,
            initialized: false,
            tearing_down: false,
            closed: false,
            view_modes: Vec::new(),
            host_context,
            pending_context: Map::new(),
            latest_partial: None,
            partial_unsent: false,
            pending_input: None,
            pending_outcome: None,
            given_input: None,
            given_outcome: None,
            initialize_again: false,
            input_given: false,
            outcome_given: false,
            messages: Window::new(MAX_MESSAGES_PER_SECOND, SECOND),
            sizes: Window::new(MAX_SIZE_CHANGES_PER_SECOND, SECOND),
            size_pending: None,
            size_timer: false,
            prompts: Window::new(MAX_PROMPTS, PROMPT_PERIOD),
            samples: Window::new(MAX_SAMPLES, SAMPLING_PERIOD),
            audits: Window::new(MAX_AUDITS_PER_SECOND, SECOND),
            oversize_audited: false,
            in_flight: HashMap::new(),
            next_serial: 0,
            next_request: 1,
            waiting: HashMap::new(),
            offers_tools: false,
        };
        let inner = Inner {
            view_id: config.view_id,
            server: config.server,
            tool_name: config.tool.name,
            tool_info: Value::Object(tool_info),
            capabilities,
            host_info,
            emulating,
            host,
            out,
            actions,
            runtime: tokio::runtime::Handle::try_current().ok(),
            state: Mutex::new(state),
        };
        (ViewBridge { inner: Arc::new(inner) }, actions_rx)
    }

    pub fn view_id(&self) -> &str {
        &self.inner.view_id
    }

    /// What the view's frame is granted (`{permissions, csp}` in the spec's shapes), echoed in
    /// `hostCapabilities.sandbox` when it initializes; set once its resource has been read.
    pub fn grant(&self, sandbox: Value) {
        self.inner.lock().sandbox = sandbox;
    }

    /// The server that supplied the view.
    pub fn server(&self) -> &str {
        &self.inner.server
    }

    /// The host context as it stands (without `toolInfo`).
    pub fn host_context(&self) -> Value {
        Value::Object(self.inner.lock().host_context.clone())
    }

    /// The view has sent `ui/notifications/initialized`.
    pub fn is_initialized(&self) -> bool {
        self.inner.lock().initialized
    }

    /// A message the view posted (the front end already checked `event.source`). Never panics,
    /// whatever the input.
    pub fn receive(&self, message: Value) {
        self.inner.receive(message);
    }

    /// Partial (streamed, "healed") tool arguments. Ignored once `tool_input` or an outcome came;
    /// before `initialized` only the latest is kept.
    pub fn tool_input_partial(&self, arguments: Value) {
        let inner = &self.inner;
        let mut st = inner.lock();
        if st.tearing_down || st.closed || st.input_given || st.outcome_given {
            return;
        }
        st.latest_partial = Some(arguments.clone());
        if st.initialized {
            inner.post(notification_partial(arguments));
        } else {
            st.partial_unsent = true;
        }
    }

    /// The complete tool arguments; only the first call counts.
    pub fn tool_input(&self, arguments: Value) {
        let inner = &self.inner;
        let mut st = inner.lock();
        if st.tearing_down || st.closed || st.outcome_given {
            return;
        }
        if st.input_given {
            tracing::warn!(view = %inner.view_id, "tool input given twice; the second is ignored");
            return;
        }
        inner.give_input(&mut st, arguments);
    }

    /// The unmodified `CallToolResult` (also when `isError`). Only the first outcome counts. Called
    /// before [`ViewBridge::tool_input`], a `tool-input` with the latest partial arguments (or `{}`)
    /// is sent first.
    pub fn tool_result(&self, result: Value) {
        let inner = &self.inner;
        let mut st = inner.lock();
        if st.tearing_down || st.closed || st.outcome_given {
            return;
        }
        if !st.input_given {
            tracing::warn!(view = %inner.view_id, "tool result before tool input; sending the input known so far");
            let arguments = st.latest_partial.clone().unwrap_or_else(|| json!({}));
            inner.give_input(&mut st, arguments);
        }
        let message = if result.is_object() {
            rpc::notification("ui/notifications/tool-result", result)
        } else {
            tracing::warn!(view = %inner.view_id, "tool result is not an object; the view is told the call was cancelled");
            rpc::notification(
                "ui/notifications/tool-cancelled",
                json!({"reason": "the tool returned an invalid result"}),
            )
        };
        inner.give_outcome(&mut st, message);
    }

    /// The call was cancelled (by the user, a timeout, an error…). Only the first outcome counts.
    pub fn tool_cancelled(&self, reason: &str) {
        let inner = &self.inner;
        let mut st = inner.lock();
        if st.tearing_down || st.closed || st.outcome_given {
            return;
        }
        let reason = if reason.is_empty() { "cancelled" } else { reason };
        inner.give_outcome(
            &mut st,
            rpc::notification("ui/notifications/tool-cancelled", json!({ "reason": reason })),
        );
    }

    /// Merges `partial` (an object) into the host context; the view is told what changed once it
    /// is initialized.
    pub fn host_context_changed(&self, partial: Value) {
        let Value::Object(mut partial) = partial else {
            tracing::warn!(view = %self.inner.view_id, "host context change is not an object; ignored");
            return;
        };
        partial.remove("toolInfo");
        let inner = &self.inner;
        let mut st = inner.lock();
        if st.closed {
            return;
        }
        partial.retain(|k, v| st.host_context.get(k) != Some(v));
        if partial.is_empty() {
            return;
        }
        for (k, v) in &partial {
            st.host_context.insert(k.clone(), v.clone());
        }
        inner.push_context(&mut st, partial);
    }

    /// Tells an initialized view that its server's tools (`tools`) or resources (`resources`)
    /// changed: `notifications/tools/list_changed` / `notifications/resources/list_changed`.
    /// Before `initialized` there is nothing to say: the view lists them when it starts.
    pub fn server_list_changed(&self, list: ServerList) {
        let inner = &self.inner;
        let st = inner.lock();
        if !st.initialized || st.tearing_down || st.closed {
            return;
        }
        let method = match list {
            ServerList::Tools => "notifications/tools/list_changed",
            ServerList::Resources => "notifications/resources/list_changed",
        };
        inner.post(rpc::notification(method, json!({})));
    }

    /// Sends `ui/resource-teardown {reason}` and waits for the answer or `timeout`. Whatever it
    /// returns, the view may be removed; from then on the bridge drops everything.
    pub async fn teardown(&self, reason: &str, timeout: Duration) -> TeardownOutcome {
        let inner = &self.inner;
        let (id, answer) = {
            let mut st = inner.lock();
            if st.tearing_down || st.closed {
                return TeardownOutcome::AlreadyTornDown;
            }
            st.tearing_down = true;
            if !st.initialized {
                st.closed = true;
                return TeardownOutcome::NotInitialized;
            }
            let id = st.next_request;
            st.next_request += 1;
            let (tx, rx) = oneshot::channel();
            st.waiting.insert(id, tx);
            let request = rpc::request(id, "ui/resource-teardown", json!({ "reason": reason }));
            if inner.out.send(request).is_err() {
                st.waiting.remove(&id);
                st.closed = true;
                return TeardownOutcome::Disconnected;
            }
            (id, rx)
        };
        let _close = CloseOnDrop { inner, id };
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(Ok(_))) => TeardownOutcome::Answered,
            Ok(Ok(Err((code, message)))) => TeardownOutcome::Errored { code, message },
            Ok(Err(_)) => TeardownOutcome::Disconnected,
            Err(_) => TeardownOutcome::TimedOut,
        }
    }

    /// Whether the view declared tools of its own (`appCapabilities.tools` in `ui/initialize`).
    pub fn offers_tools(&self) -> bool {
        self.inner.lock().offers_tools
    }

    /// Asks the initialized view `method` (a host → view request) and waits for its result, at
    /// most `timeout`; why not otherwise.
    async fn ask_view(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, String> {
        let inner = &self.inner;
        let (id, answer) = {
            let mut st = inner.lock();
            if !st.initialized || st.tearing_down || st.closed {
                return Err("the view is not running".into());
            }
            let id = st.next_request;
            st.next_request += 1;
            let (tx, rx) = oneshot::channel();
            st.waiting.insert(id, tx);
            if inner.out.send(rpc::request(id, method, params)).is_err() {
                st.waiting.remove(&id);
                return Err("the view is gone".into());
            }
            (id, rx)
        };
        let outcome = tokio::time::timeout(timeout, answer).await;
        inner.lock().waiting.remove(&id);
        match outcome {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err((code, message)))) => Err(format!("the view answered with an error ({code}): {message}")),
            Ok(Err(_)) => Err("the view is gone".into()),
            Err(_) => Err(format!("the view did not answer within {} s", timeout.as_secs())),
        }
    }

    /// The tools the view offers (`tools/list` to the view): each an object with a string
    /// `name` and an object `inputSchema`; at most [`MAX_APP_TOOLS`], others left out.
    pub async fn list_app_tools(&self) -> Result<Vec<Value>, String> {
        let result = self.ask_view("tools/list", json!({}), APP_TOOL_ANSWER_TIME).await?;
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return Err("its tools/list answer has no tools array".into());
        };
        let valid: Vec<Value> = tools
            .iter()
            .filter(|t| {
                t.get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| !n.is_empty() && n.len() <= 128)
                    && t.get("inputSchema").is_some_and(Value::is_object)
            })
            .take(MAX_APP_TOOLS)
            .cloned()
            .collect();
        if valid.len() < tools.len() {
            tracing::warn!(view = %self.inner.view_id, offered = tools.len(), kept = valid.len(), "some of a view's tools were left out");
        }
        Ok(valid)
    }

    /// Calls the view's own tool `name` (`tools/call` to the view); its `CallToolResult`.
    pub async fn call_app_tool(&self, name: &str, arguments: Value) -> Result<Value, String> {
        let result = self
            .ask_view(
                "tools/call",
                json!({"name": name, "arguments": arguments}),
                APP_TOOL_ANSWER_TIME,
            )
            .await?;
        if !result.is_object() {
            return Err("its answer is not an object".into());
        }
        Ok(result)
    }
}

/// The most tools one view may offer.
pub const MAX_APP_TOOLS: usize = 50;
/// How long a view has to answer `tools/list` or `tools/call` of its own tools.
pub const APP_TOOL_ANSWER_TIME: Duration = Duration::from_secs(30);

/// Ends a teardown however its future ends (also when the caller drops it).
struct CloseOnDrop<'a> {
    inner: &'a Inner,
    id: u64,
}

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        let mut st = self.inner.lock();
        st.waiting.remove(&self.id);
        st.closed = true;
        st.size_pending = None;
    }
}

fn notification_partial(arguments: Value) -> Value {
    rpc::notification("ui/notifications/tool-input-partial", arguments_params(arguments))
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Posts a message into the view (a closed channel means the view is gone: nothing to do).
    fn post(&self, message: Value) {
        if self.out.send(message).is_err() {
            tracing::trace!(view = %self.view_id, "view is gone; message to it dropped");
        }
    }

    /// Hands an action to the host (a closed channel means the host stopped listening to this
    /// view, which is closing: the action has no one to act on it).
    fn act(&self, action: ViewAction) {
        if self.actions.send(action).is_err() {
            tracing::trace!(view = %self.view_id, "host no longer takes this view's actions; action dropped");
        }
    }

    fn give_input(&self, st: &mut State, arguments: Value) {
        st.input_given = true;
        st.partial_unsent = false;
        let message = rpc::notification("ui/notifications/tool-input", arguments_params(arguments));
        st.given_input = Some(message.clone());
        if st.initialized {
            self.post(message);
        } else {
            st.pending_input = Some(message);
        }
    }

    fn give_outcome(&self, st: &mut State, message: Value) {
        st.outcome_given = true;
        st.given_outcome = Some(message.clone());
        if st.initialized {
            self.post(message);
        } else {
            st.pending_outcome = Some(message);
        }
    }

    /// Tells the view about a host-context change (already merged into the state), now or at
    /// `initialized`; before the `ui/initialize` answer there is nothing to do: it will carry it.
    fn push_context(&self, st: &mut State, partial: Map<String, Value>) {
        if st.tearing_down || st.closed {
            return;
        }
        if st.initialized {
            self.post(rpc::notification(
                "ui/notifications/host-context-changed",
                Value::Object(partial),
            ));
        } else if st.handshake {
            st.pending_context.extend(partial);
        }
    }

    fn audit(&self, kind: AuditKind, tool: Option<String>, mut detail: Map<String, Value>) {
        let hit = self.lock().audits.hit(Instant::now());
        let note = match hit {
            Hit::Allowed => {
                detail.insert("view".into(), json!(self.view_id));
                detail.insert("viewTool".into(), json!(self.tool_name));
                AuditNote {
                    kind,
                    server: self.server.clone(),
                    tool,
                    detail: Value::Object(detail),
                }
            }
            Hit::FirstRefused => AuditNote {
                kind: AuditKind::Suppressed,
                server: self.server.clone(),
                tool: None,
                detail: json!({
                    "view": self.view_id,
                    "reason": format!("more than {MAX_AUDITS_PER_SECOND} audit notes in one second; the rest of this second's are dropped"),
                }),
            },
            Hit::Refused => return,
        };
        self.host.audit(note);
    }

    fn audit_call(&self, tool: Option<String>, outcome: &str, key: &str, why: String) {
        let mut detail = Map::new();
        detail.insert("outcome".into(), json!(outcome));
        if !why.is_empty() {
            detail.insert(key.into(), json!(why));
        }
        self.audit(AuditKind::Call, tool, detail);
    }

    fn audit_refused(&self, reason: &str, extra: Option<(&str, Value)>) {
        let mut detail = Map::new();
        detail.insert("reason".into(), json!(reason));
        if let Some((k, v)) = extra {
            detail.insert(k.into(), v);
        }
        self.audit(AuditKind::Refused, None, detail);
    }

    fn receive(self: &Arc<Self>, message: Value) {
        let hit = {
            let mut st = self.lock();
            if st.closed {
                drop(st);
                rpc::dismantle(message);
                return;
            }
            st.messages.hit(Instant::now())
        };
        match hit {
            Hit::Allowed => {}
            Hit::FirstRefused => {
                rpc::dismantle(message);
                tracing::warn!(view = %self.view_id, "view floods the bridge; dropping messages");
                self.audit_refused(
                    "flood: more than the allowed messages in one second; the rest of this second's are dropped",
                    Some(("limit", json!(MAX_MESSAGES_PER_SECOND))),
                );
                return;
            }
            Hit::Refused => {
                rpc::dismantle(message);
                return;
            }
        }
        if let Err(too_big) = rpc::measure(&message, MAX_MESSAGE_BYTES, MAX_NESTING) {
            let id = rpc::answerable_id(&message);
            rpc::dismantle(message);
            let reason = match too_big {
                rpc::TooBig::Large => "message too large",
                rpc::TooBig::Deep => "message nested too deeply",
            };
            let first = !std::mem::replace(&mut self.lock().oversize_audited, true);
            if first {
                self.audit_refused(
                    reason,
                    Some(("limits", json!({"bytes": MAX_MESSAGE_BYTES, "nesting": MAX_NESTING}))),
                );
            }
            if let Some(id) = id {
                self.post(rpc::error(id, INVALID_REQUEST, reason));
            }
            return;
        }
        match rpc::classify(message) {
            Incoming::Request { id, method, params } => self.request(id, method, params),
            Incoming::Notification { method, params } => self.notification(&method, params),
            Incoming::Response { id, outcome } => self.response(id, outcome),
            Incoming::Invalid { id, code, message } => self.post(rpc::error(id, code, message)),
            Incoming::Ignored => {}
        }
    }

    fn response(&self, id: Value, outcome: Result<Value, (i64, String)>) {
        let Some(waiter) = id.as_u64().and_then(|id| self.lock().waiting.remove(&id)) else {
            return;
        };
        // The request that asked may have timed out and stopped waiting: the answer is moot.
        waiter.send(outcome).ok();
    }

    fn request(self: &Arc<Self>, id: Value, method: String, mut params: Map<String, Value>) {
        if !REQUESTS.contains(&method.as_str()) {
            let method = rpc::truncate(&method, 100);
            self.post(rpc::error(id, METHOD_NOT_FOUND, format!("method not found: {method}")));
            self.act(ViewAction::Unsupported { method });
            return;
        }
        if !matches!(method.as_str(), "ping" | "ui/initialize") && !self.lock().handshake {
            if method == "tools/call" {
                let tool = params
                    .get("name")
                    .and_then(Value::as_str)
                    .map(|n| rpc::truncate(n, 200));
                self.audit_call(tool, "refused", "reason", "before ui/initialize".into());
            }
            self.post(rpc::error(id, REFUSED, "send ui/initialize first"));
            return;
        }
        if let Some(capability) = self.unadvertised(&method) {
            let shown = rpc::truncate(&method, 100);
            self.post(rpc::error(
                id,
                METHOD_NOT_FOUND,
                format!("{shown}: the host does not offer {capability} (host emulation)"),
            ));
            return;
        }
        match method.as_str() {
            "ping" => self.post(rpc::result(id, json!({}))),
            "ui/initialize" => self.initialize(id, &params),
            "tools/call" => self.tools_call(id, params),
            "tools/list" => match self.host.tools(&self.server) {
                Some(tools) => {
                    let tools: Vec<Value> = tools
                        .iter()
                        .filter(|t| t.visible_to_app())
                        .map(tool_definition)
                        .collect();
                    self.post(rpc::result(id, json!({ "tools": tools })));
                }
                None => {
                    self.post(rpc::error(id, METHOD_NOT_FOUND, "method not found: tools/list"));
                    self.act(ViewAction::Unsupported {
                        method: "tools/list".into(),
                    });
                }
            },
            "resources/read" => match params.remove("uri") {
                Some(Value::String(uri)) => self.forward(id, Forward::ReadResource { uri }),
                _ => self.post(rpc::error(id, INVALID_PARAMS, "uri must be a string")),
            },
            "resources/list" => self.forward(id, Forward::ListResources),
            "resources/templates/list" => self.forward(id, Forward::ListResourceTemplates),
            "prompts/list" => self.forward(id, Forward::ListPrompts),
            "ui/open-link" => self.open_link(id, &params),
            "ui/message" => match validate::message(&mut params) {
                Ok(content) => self.prompt(id, ViewAction::ProposeMessage { content }),
                Err(e) => self.post(rpc::error(id, INVALID_PARAMS, e)),
            },
            "ui/download-file" => match validate::download(&mut params) {
                Ok(contents) => self.prompt(id, ViewAction::DownloadFile { contents }),
                Err(e) => self.post(rpc::error(id, INVALID_PARAMS, e)),
            },
            "ui/update-model-context" => match validate::model_context(&mut params) {
                Ok(params) => {
                    self.act(ViewAction::UpdateModelContext { params });
                    self.post(rpc::result(id, json!({})));
                }
                Err(e) => self.post(rpc::error(id, INVALID_PARAMS, e)),
            },
            "ui/request-display-mode" => self.display_mode(id, &params),
            "sampling/createMessage" if !self.host.offers_sampling() => self.post(rpc::error(
                id,
                METHOD_NOT_FOUND,
                "sampling is not offered: no model is set up",
            )),
            "sampling/createMessage" => {
                if self.lock().samples.hit(Instant::now()) != Hit::Allowed {
                    self.audit_refused(
                        "too many sampling requests",
                        Some((
                            "limit",
                            json!({"requests": MAX_SAMPLES, "seconds": SAMPLING_PERIOD.as_secs()}),
                        )),
                    );
                    self.post(rpc::error(id, REFUSED, "too many sampling requests; try again later"));
                    return;
                }
                match validate::sampling(&params) {
                    Ok(params) => self.forward(id, Forward::Sample { params }),
                    Err(e) => self.post(rpc::error(id, INVALID_PARAMS, e)),
                }
            }
            _ => self.post(rpc::error(id, METHOD_NOT_FOUND, "method not found")),
        }
    }

    fn initialize(&self, id: Value, params: &Map<String, Value>) {
        let version = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .and_then(|v| SUPPORTED_PROTOCOL_VERSIONS.into_iter().find(|s| *s == v))
            .unwrap_or(LATEST_PROTOCOL_VERSION);
        let view_modes = validate::display_modes(
            params
                .get("appCapabilities")
                .and_then(|c| c.get("availableDisplayModes")),
        );
        let mut st = self.lock();
        if st.handshake {
            tracing::info!(view = %self.view_id, "ui/initialize again; answering again");
        }
        st.initialize_again |= st.initialized;
        st.handshake = true;
        st.view_modes = view_modes;
        // A document where two parties speak the bridge (an Apps SDK shim beside a framework
        // such as skybridge) may initialize twice, in either order: once any of them declares
        // tools the view offers them, and if it says so only after the view was initialized,
        // the host is told to list them (the `initialized` that would have is already spent).
        let declares_tools = params
            .get("appCapabilities")
            .and_then(|c| c.get("tools"))
            .is_some_and(Value::is_object);
        let tools_came_late = declares_tools && !st.offers_tools && st.initialized;
        st.offers_tools |= declares_tools;
        st.pending_context.clear();
        let mut context = st.host_context.clone();
        context.insert("toolInfo".into(), self.tool_info.clone());
        let mut capabilities = self.capabilities.clone();
        capabilities["sandbox"] = st.sandbox.clone();
        // An emulated host advertises sampling only when its capabilities say so.
        if self.host.offers_sampling() && !self.emulating {
            capabilities["sampling"] = json!({});
        }
        self.post(rpc::result(
            id,
            json!({
                "protocolVersion": version,
                "hostCapabilities": capabilities,
                "hostInfo": self.host_info,
                "hostContext": context,
            }),
        ));
        if tools_came_late {
            self.act(ViewAction::ToolsChanged);
        }
    }

    fn tools_call(self: &Arc<Self>, id: Value, mut params: Map<String, Value>) {
        let name = match params.remove("name") {
            Some(Value::String(name)) => name,
            _ => {
                self.audit_call(None, "refused", "reason", "name is not a string".into());
                self.post(rpc::error(id, INVALID_PARAMS, "name must be a string"));
                return;
            }
        };
        let shown = rpc::truncate(&name, 200);
        let refuse = |reason: String| {
            self.audit_call(Some(shown.clone()), "refused", "reason", reason.clone());
            self.post(rpc::error(id.clone(), REFUSED, reason));
        };
        if let Some(server) = params.get("server")
            && server.as_str() != Some(self.server.as_str())
        {
            return refuse("a view can only call tools of its own server".into());
        }
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => None,
            Some(Value::Object(arguments)) => Some(arguments),
            Some(_) => {
                self.audit_call(Some(shown), "refused", "reason", "arguments are not an object".into());
                self.post(rpc::error(id, INVALID_PARAMS, "arguments must be an object"));
                return;
            }
        };
        match self.host.tool(&self.server, &name) {
            None => refuse(format!("no tool {shown:?} on server {:?}", self.server)),
            Some(tool) if !tool.visible_to_app() => refuse(format!(
                "tool {shown:?} cannot be called from a view (its visibility does not include \"app\")"
            )),
            Some(_) => self.forward(id, Forward::CallTool { name, arguments }),
        }
    }

    /// Runs a server request on a task and answers when it ends, within the in-flight limit.
    fn forward(self: &Arc<Self>, id: Value, forward: Forward) {
        let tool = match &forward {
            Forward::CallTool { name, .. } => Some(rpc::truncate(name, 200)),
            _ => None,
        };
        let key = id.to_string();
        let (code, message) = {
            let mut st = self.lock();
            let runtime = tokio::runtime::Handle::try_current()
                .ok()
                .or_else(|| self.runtime.clone());
            if st.in_flight.contains_key(&key) {
                (INVALID_REQUEST, "a request with this id is still in flight")
            } else if st.in_flight.len() >= MAX_IN_FLIGHT {
                (REFUSED, "too many calls in flight")
            } else if let Some(runtime) = runtime {
                let serial = st.next_serial;
                st.next_serial += 1;
                let this = Arc::clone(self);
                let (task_key, task_tool) = (key.clone(), tool.clone());
                // Spawned with the lock held, so the task cannot finish before it is registered.
                let task = runtime.spawn(async move {
                    let outcome = this.run(forward).await;
                    this.finish(task_key, serial, id, task_tool, outcome);
                });
                let abort = task.abort_handle();
                st.in_flight.insert(key, InFlight { serial, abort, tool });
                return;
            } else {
                (INTERNAL_ERROR, "no async runtime to run the request on")
            }
        };
        match &tool {
            Some(_) => self.audit_call(tool, "refused", "reason", message.into()),
            None if code == REFUSED => self.audit_refused(message, None),
            None => {}
        }
        self.post(rpc::error(id, code, message));
    }

    async fn run(&self, forward: Forward) -> Result<Value, String> {
        let host = &self.host;
        let server = self.server.as_str();
        match forward {
            Forward::CallTool { name, arguments } => host.call_tool(server, &name, arguments).await,
            Forward::ReadResource { uri } => host.read_resource(server, &uri).await,
            Forward::ListResources => host.list_resources(server).await,
            Forward::ListResourceTemplates => host.list_resource_templates(server).await,
            Forward::ListPrompts => host.list_prompts(server).await,
            Forward::Sample { params } => host.sample(server, &self.view_id, params).await,
            Forward::OpenLink { url } => host.open_link(server, &self.view_id, url).await,
        }
    }

    fn finish(&self, key: String, serial: u64, id: Value, tool: Option<String>, outcome: Result<Value, String>) {
        {
            let mut st = self.lock();
            match st.in_flight.get(&key) {
                Some(f) if f.serial == serial => {
                    st.in_flight.remove(&key);
                }
                // Cancelled by the view meanwhile: no answer.
                _ => return,
            }
        }
        let audit = match &outcome {
            Ok(result) if result.get("isError").and_then(Value::as_bool) == Some(true) => ("error", String::new()),
            Ok(_) => ("ok", String::new()),
            Err(e) => ("error", e.clone()),
        };
        // Audited before answered: the log is complete by the time the view sees the outcome.
        if tool.is_some() {
            self.audit_call(tool, audit.0, "error", audit.1);
        }
        self.post(match outcome {
            Ok(result) => rpc::result(id, result),
            Err(e) => rpc::error(id, REFUSED, e),
        });
    }

    fn cancel(&self, params: &Map<String, Value>) {
        let Some(id) = params.get("requestId").filter(|id| rpc::is_valid_id(id)) else {
            return;
        };
        let Some(entry) = self.lock().in_flight.remove(&id.to_string()) else {
            return;
        };
        entry.abort.abort();
        if entry.tool.is_some() {
            let reason = params
                .get("reason")
                .and_then(Value::as_str)
                .map(|r| rpc::truncate(r, 200))
                .unwrap_or_default();
            self.audit_call(entry.tool, "cancelled", "reason", reason);
        }
    }

    fn open_link(self: &Arc<Self>, id: Value, params: &Map<String, Value>) {
        match validate::open_link(params) {
            // Answered once the person decided (and the browser opened it, or not).
            Ok(url) => {
                if self.within_prompt_limit(&id) {
                    self.forward(id, Forward::OpenLink { url });
                }
            }
            Err(refusal) => {
                let url = match params.get("url") {
                    Some(Value::String(u)) => json!(rpc::truncate(u, 200)),
                    _ => Value::Null,
                };
                self.audit_refused(refusal.message(), Some(("url", url)));
                self.post(rpc::error(id, REFUSED, refusal.message()));
            }
        }
    }

    /// Hands a user-facing request to the app, within the prompt limit.
    fn prompt(&self, id: Value, action: ViewAction) {
        if self.within_prompt_limit(&id) {
            self.act(action);
            self.post(rpc::result(id, json!({})));
        }
    }

    /// Whether a user-facing request is within the prompt limit; when it is not, the view is
    /// told so (and the first refusal of a period is audited).
    fn within_prompt_limit(&self, id: &Value) -> bool {
        let hit = self.lock().prompts.hit(Instant::now());
        if hit == Hit::Allowed {
            return true;
        }
        if hit == Hit::FirstRefused {
            self.audit_refused(
                "too many requests to the user",
                Some((
                    "limit",
                    json!({"requests": MAX_PROMPTS, "seconds": PROMPT_PERIOD.as_secs()}),
                )),
            );
        }
        self.post(rpc::error(
            id.clone(),
            REFUSED,
            "too many requests to the user; try again later",
        ));
        false
    }

    fn display_mode(&self, id: Value, params: &Map<String, Value>) {
        let Some(requested) = params.get("mode").and_then(Value::as_str) else {
            self.post(rpc::error(id, INVALID_PARAMS, "mode must be a string"));
            return;
        };
        // A mode the spec does not define is never allowed: the answer is the current one.
        let requested = requested.parse::<DisplayMode>().ok();
        let mut st = self.lock();
        let current = current_mode(&st.host_context);
        let mut host_modes = validate::display_modes(st.host_context.get("availableDisplayModes"));
        if host_modes.is_empty() {
            host_modes.push(current);
        }
        let mode = match requested {
            Some(mode) if mode != current && st.view_modes.contains(&mode) && host_modes.contains(&mode) => {
                st.host_context.insert("displayMode".into(), json!(mode));
                self.act(ViewAction::DisplayMode {
                    mode: mode.as_str().into(),
                });
                let mut change = Map::new();
                change.insert("displayMode".into(), json!(mode));
                self.push_context(&mut st, change);
                mode
            }
            _ => current,
        };
        self.post(rpc::result(id, json!({ "mode": mode })));
    }

    fn notification(self: &Arc<Self>, method: &str, params: Map<String, Value>) {
        match method {
            "notifications/message" | "ui/log" => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .map(|l| rpc::truncate(l, 20))
                    .unwrap_or_else(|| "info".into());
                let logger = params
                    .get("logger")
                    .and_then(Value::as_str)
                    .map(|l| rpc::truncate(l, 100));
                let data = params.get("data").cloned().unwrap_or(Value::Null);
                self.act(ViewAction::Log { level, logger, data });
            }
            "ui/notifications/request-teardown" => {
                let st = self.lock();
                if !st.tearing_down && !st.closed {
                    self.act(ViewAction::RequestTeardown);
                }
            }
            // (Before the handshake too: a view may fail before it ever starts it.)
            crate::diagnostics::DIAGNOSTIC_METHOD => match crate::diagnostics::checked_report(&params) {
                Ok(diagnostic) => self.act(ViewAction::Diagnostic(diagnostic)),
                Err(why) => tracing::debug!(view = %self.view_id, "a diagnostic report was not one: {why}"),
            },
            _ if !self.lock().handshake => {
                tracing::debug!(view = %self.view_id, method = %rpc::truncate(method, 100), "notification before ui/initialize ignored");
            }
            "ui/notifications/initialized" => self.initialized(),
            "notifications/tools/list_changed" if self.lock().offers_tools => self.act(ViewAction::ToolsChanged),
            crate::view_storage::STORAGE_METHOD => match crate::view_storage::checked_report(&params) {
                Ok(local_storage) => self.act(ViewAction::SaveStorage { local_storage }),
                Err(why) => tracing::warn!(view = %self.view_id, "a view's storage is not kept: {why}"),
            },
            crate::openai_compat::WIDGET_STATE_METHOD => match crate::openai_compat::checked_state(&params) {
                Ok(state) => self.act(ViewAction::SaveWidgetState { state }),
                Err(why) => {
                    tracing::warn!(view = %self.view_id, "a widget's state is not kept: {why}");
                    let mut detail = Map::new();
                    detail.insert("reason".into(), json!(format!("setWidgetState: {why}")));
                    self.audit(AuditKind::Refused, None, detail);
                }
            },
            "ui/notifications/size-changed" => self.size_changed(&params),
            "notifications/cancelled" => self.cancel(&params),
            _ => {}
        }
    }

    /// The capability `method` needs, when an emulated host does not advertise it.
    fn unadvertised(&self, method: &str) -> Option<&'static str> {
        if !self.emulating {
            return None;
        }
        let needs = match method {
            "tools/call" | "tools/list" => "serverTools",
            "resources/read" | "resources/list" | "resources/templates/list" => "serverResources",
            "ui/open-link" => "openLinks",
            "ui/message" => "message",
            "ui/update-model-context" => "updateModelContext",
            "ui/download-file" => "downloadFile",
            "sampling/createMessage" => "sampling",
            _ => return None,
        };
        self.capabilities.get(needs).is_none().then_some(needs)
    }

    fn initialized(&self) {
        let mut st = self.lock();
        if st.initialized {
            // A party that initialized after the first (an Apps SDK shim and a framework such as
            // skybridge in one document, or a remount) gets the input and outcome too: the first
            // `initialized` may have delivered them before it listened.
            if std::mem::take(&mut st.initialize_again) && !st.tearing_down && !st.closed {
                for message in [st.given_input.clone(), st.given_outcome.clone()].into_iter().flatten() {
                    self.post(message);
                }
            }
            return;
        }
        st.initialized = true;
        if !st.tearing_down && !st.closed {
            let context = std::mem::take(&mut st.pending_context);
            if !context.is_empty() {
                self.post(rpc::notification(
                    "ui/notifications/host-context-changed",
                    Value::Object(context),
                ));
            }
            if st.partial_unsent {
                st.partial_unsent = false;
                if let Some(arguments) = st.latest_partial.clone() {
                    self.post(notification_partial(arguments));
                }
            }
            for message in [st.pending_input.take(), st.pending_outcome.take()]
                .into_iter()
                .flatten()
            {
                self.post(message);
            }
        }
        self.act(ViewAction::Initialized);
    }

    fn size_changed(self: &Arc<Self>, params: &Map<String, Value>) {
        let Some((width, height)) = validate::size(params) else {
            return;
        };
        let mut st = self.lock();
        if st.sizes.hit(Instant::now()) == Hit::Allowed {
            st.size_pending = None;
            self.act(ViewAction::SizeChanged { width, height });
            return;
        }
        st.size_pending = Some((width, height));
        if st.size_timer {
            return;
        }
        let (Some(runtime), Some(at)) = (
            tokio::runtime::Handle::try_current()
                .ok()
                .or_else(|| self.runtime.clone()),
            st.sizes.ends_at(),
        ) else {
            return;
        };
        st.size_timer = true;
        let this = Arc::clone(self);
        runtime.spawn(async move {
            tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
            this.late_size();
        });
    }

    /// Delivers the latest size dropped by the rate limit, once its window has ended.
    fn late_size(&self) {
        let mut st = self.lock();
        st.size_timer = false;
        if st.closed {
            return;
        }
        if let Some((width, height)) = st.size_pending.take() {
            st.sizes.hit(Instant::now());
            self.act(ViewAction::SizeChanged { width, height });
        }
    }
}

/// The host context's `displayMode`; inline when it names none the spec defines.
fn current_mode(context: &Map<String, Value>) -> DisplayMode {
    context
        .get("displayMode")
        .and_then(Value::as_str)
        .and_then(|mode| mode.parse().ok())
        .unwrap_or(DisplayMode::Inline)
}
