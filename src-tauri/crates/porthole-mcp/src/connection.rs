//! One connection to one MCP server: spawn or dial it, run the MCP handshake (advertising the MCP
//! Apps extension when asked to), and list its tools.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    ErrorData, ExtensionCapabilities, Implementation, ProtocolVersion, ResourceUpdatedNotificationParam,
    RootsCapabilities,
};
// Sampling, roots and logging are deprecated by SEP-2577, but servers of 2025-era revisions use them.
#[allow(deprecated)]
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ListRootsResult, LoggingLevel, LoggingMessageNotificationParam,
    Root,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

use crate::config::{ServerConfig, Transport};
use crate::http::{CheckedClient, CheckedTransport};
use crate::oauth::OAuth;
use crate::progress::{InOrder, ProgressRoutes};
use crate::server_log::{LOG_CAP_BYTES, ServerLog};
use crate::stdio::{ChildTransport, ConnectionEnd, StderrTail};
use rmcp::transport::auth::AuthClient;

/// The extension id of MCP Apps.
pub const MCP_APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an MCP App view.
pub const MCP_APP_MIME: &str = "text/html;profile=mcp-app";
/// The MIME type of an OpenAI Apps SDK widget, named in the capability only for servers whose
/// config asks (`"skybridge": true`).
pub const SKYBRIDGE_MIME: &str = "text/html+skybridge";

/// The client side of one connection: what Porthole tells the server about itself, and where
/// the server's notifications go.
/// What Porthole does when a server asks the user for input (`elicitation/create`).
#[derive(Debug, Clone, Default)]
pub enum ElicitationPolicy {
    /// Decline every request, and do not advertise the capability (headless runs).
    #[default]
    Decline,
    /// Accept with the defaults the requested schema declares (scripted runs, conformance).
    AcceptDefaults,
    /// Hand each request to the UI and wait for the person's answer.
    Ask(mpsc::Sender<ElicitationRequest>),
}

/// A server's question for the user, waiting for an answer.
#[derive(Debug)]
pub struct ElicitationRequest {
    pub server: String,
    pub message: String,
    /// The requested schema (form mode), as JSON.
    pub schema: Option<serde_json::Value>,
    /// The URL to open (URL mode).
    pub url: Option<String>,
    pub respond: tokio::sync::oneshot::Sender<ElicitationAnswer>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    Accept(serde_json::Value),
    Decline,
    Cancel,
}

/// A server's `sampling/createMessage`, waiting for the person (and then the model).
#[derive(Debug)]
pub struct SamplingRequest {
    pub server: String,
    /// The request's params (`CreateMessageRequestParams`) as JSON.
    pub params: serde_json::Value,
    /// The `CreateMessageResult` as JSON, or why there is none (refused, no model, …).
    pub respond: tokio::sync::oneshot::Sender<Result<serde_json::Value, String>>,
}

/// One root: its `file://` URI and its name.
pub type RootEntry = (String, Option<String>);

/// Gives the roots of the server it is called with.
pub type RootsOf = dyn Fn(&str) -> Vec<RootEntry> + Send + Sync;

/// The folders a server is given as its roots (`roots/list`), by server.
#[derive(Clone)]
pub struct RootsSource(pub Arc<RootsOf>);

impl RootsSource {
    /// These folders, whichever server asks.
    pub fn fixed(folders: &[std::path::PathBuf]) -> RootsSource {
        let roots: Vec<RootEntry> = folders.iter().map(|f| root_of(f)).collect();
        RootsSource(Arc::new(move |_: &str| roots.clone()))
    }
}

/// A folder as a root: its `file://` URI and its name (its last component).
pub fn root_of(folder: &Path) -> RootEntry {
    let mut uri = String::from("file://");
    for byte in folder.to_string_lossy().bytes() {
        let c = byte as char;
        if c.is_ascii_alphanumeric() || "/-._~".contains(c) {
            uri.push(c);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    let name = folder.file_name().map(|n| n.to_string_lossy().into_owned());
    (uri, name)
}

impl std::fmt::Debug for RootsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RootsSource")
    }
}

/// What Porthole offers servers besides tools, and how it answers their requests.
#[derive(Debug, Clone, Default)]
pub struct ClientPolicy {
    pub elicitation: ElicitationPolicy,
    /// Where `sampling/createMessage` requests go; `None`: sampling is not offered.
    pub sampling: Option<mpsc::Sender<SamplingRequest>>,
    /// Where `roots/list` is answered from; `None`: roots are not offered.
    pub roots: Option<RootsSource>,
    /// The MCP Apps capability also names the Apps SDK's `text/html+skybridge`.
    pub skybridge: bool,
    /// Where the connection's messages are filed (the workbench's traffic log).
    pub traffic: Option<crate::traffic::Traffic>,
}

impl From<ElicitationPolicy> for ClientPolicy {
    fn from(elicitation: ElicitationPolicy) -> Self {
        ClientPolicy {
            elicitation,
            ..Default::default()
        }
    }
}

/// The `default` of each property of a form's requested schema, as the answer's content.
pub fn schema_defaults(schema: &serde_json::Value) -> serde_json::Value {
    let mut content = serde_json::Map::new();
    if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
        for (name, prop) in props {
            if let Some(default) = prop.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    serde_json::Value::Object(content)
}

#[derive(Clone)]
pub struct PortholeClient {
    server: Arc<str>,
    advertise_mcp_apps: bool,
    policy: ClientPolicy,
    /// Routes `notifications/progress` to whoever made the request, in the server's order
    /// (read off the transport: see [`crate::progress`]).
    pub progress: ProgressRoutes,
    /// Told when the server says its tools or resources changed.
    changes: Option<mpsc::UnboundedSender<ServerChange>>,
    /// Why the connection ended (the server exited, wrote garbage, answered an unknown id, …), once it has.
    pub end: ConnectionEnd,
}

impl PortholeClient {
    pub fn new(
        server: &str,
        advertise_mcp_apps: bool,
        policy: ClientPolicy,
        changes: Option<mpsc::UnboundedSender<ServerChange>>,
    ) -> Self {
        PortholeClient {
            server: server.into(),
            advertise_mcp_apps,
            policy,
            progress: ProgressRoutes::default(),
            changes,
            end: ConnectionEnd::default(),
        }
    }
}

/// The capabilities Porthole advertises. The MCP Apps extension is included only when asked:
/// `{"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}`, exactly.
/// Elicitation: both modes when a person answers, form mode only for scripted defaults (a URL
/// needs a person), none when declining. Sampling and roots when the app offers them.
pub fn client_capabilities(advertise_mcp_apps: bool, policy: &ClientPolicy) -> ClientCapabilities {
    let mut caps = ClientCapabilities::default();
    if !matches!(policy.elicitation, ElicitationPolicy::Decline) {
        let mut modes = ElicitationCapability::new();
        modes.form = Some(Default::default());
        if matches!(policy.elicitation, ElicitationPolicy::Ask(_)) {
            modes.url = Some(Default::default());
        }
        caps.elicitation = Some(modes);
    }
    if policy.sampling.is_some() {
        caps.sampling = Some(Default::default());
    }
    if policy.roots.is_some() {
        let mut roots = RootsCapabilities::default();
        roots.list_changed = Some(true);
        caps.roots = Some(roots);
    }
    if advertise_mcp_apps {
        let mut ext = ExtensionCapabilities::new();
        let mime_types = if policy.skybridge {
            serde_json::json!([MCP_APP_MIME, SKYBRIDGE_MIME])
        } else {
            serde_json::json!([MCP_APP_MIME])
        };
        ext.insert(MCP_APPS_EXTENSION.into(), rmcp::object!({ "mimeTypes": mime_types }));
        caps.extensions = Some(ext);
    }
    caps
}

impl ClientHandler for PortholeClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            client_capabilities(self.advertise_mcp_apps, &self.policy),
            Implementation::new("porthole", env!("CARGO_PKG_VERSION")).with_title("Porthole"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (message, schema, url) = match &request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => (message.clone(), serde_json::to_value(requested_schema).ok(), None),
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                (message.clone(), None, Some(url.clone()))
            }
            _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        tracing::info!(server = %self.server, %message, "elicitation request");
        let answer = match &self.policy.elicitation {
            ElicitationPolicy::Decline => ElicitationAnswer::Decline,
            ElicitationPolicy::AcceptDefaults => match &schema {
                Some(schema) => ElicitationAnswer::Accept(schema_defaults(schema)),
                None => ElicitationAnswer::Decline,
            },
            ElicitationPolicy::Ask(tx) => {
                let (respond, answer) = tokio::sync::oneshot::channel();
                let question = ElicitationRequest {
                    server: self.server.to_string(),
                    message,
                    schema,
                    url,
                    respond,
                };
                if tx.send(question).await.is_err() {
                    ElicitationAnswer::Decline
                } else {
                    tokio::select! {
                        a = answer => a.unwrap_or(ElicitationAnswer::Cancel),
                        _ = context.ct.cancelled() => ElicitationAnswer::Cancel,
                    }
                }
            }
        };
        Ok(match answer {
            // URL mode: the person agreed to open the page; there is no content.
            ElicitationAnswer::Accept(content) if content.is_null() => ElicitResult::new(ElicitationAction::Accept),
            ElicitationAnswer::Accept(content) => ElicitResult::new(ElicitationAction::Accept).with_content(content),
            ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(tx) = &self.policy.sampling else {
            return Err(ErrorData::method_not_found::<rmcp::model::CreateMessageRequestMethod>());
        };
        let params = serde_json::to_value(&params).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        tracing::info!(server = %self.server, "sampling request");
        let (respond, answer) = tokio::sync::oneshot::channel();
        let request = SamplingRequest {
            server: self.server.to_string(),
            params,
            respond,
        };
        let refused = |why: String| ErrorData::new(rmcp::model::ErrorCode(-1), why, None);
        if tx.send(request).await.is_err() {
            return Err(refused("Porthole is closing".into()));
        }
        let answer = tokio::select! {
            a = answer => a.unwrap_or_else(|_| Err("nobody answered the sampling request".into())),
            _ = context.ct.cancelled() => Err("the server cancelled the request".into()),
        };
        let value = answer.map_err(refused)?;
        serde_json::from_value(value).map_err(|e| ErrorData::internal_error(format!("the answer: {e}"), None))
    }

    #[allow(deprecated)]
    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        let Some(source) = &self.policy.roots else {
            return Err(ErrorData::method_not_found::<rmcp::model::ListRootsRequestMethod>());
        };
        let roots = (source.0)(&self.server)
            .into_iter()
            .map(|(uri, name)| {
                let root = Root::new(uri);
                match name {
                    Some(name) => root.with_name(name),
                    None => root,
                }
            })
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "tools/list_changed");
        self.tell(ServerChange::Tools);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "resources/list_changed");
        self.tell(ServerChange::Resources);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::debug!(server = %self.server, uri = %params.uri, "resources/updated");
        self.tell(ServerChange::Resources);
    }

    // Logging is deprecated by SEP-2577 but 2025-era servers still send it.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let server = &*self.server;
        let logger = params.logger.as_deref().unwrap_or("");
        let data = &params.data;
        match params.level {
            LoggingLevel::Debug => tracing::debug!(target: "mcp_server", server, logger, %data),
            LoggingLevel::Info | LoggingLevel::Notice => tracing::info!(target: "mcp_server", server, logger, %data),
            LoggingLevel::Warning => tracing::warn!(target: "mcp_server", server, logger, %data),
            _ => tracing::error!(target: "mcp_server", server, logger, %data),
        }
    }
}

impl PortholeClient {
    fn tell(&self, change: ServerChange) {
        // A closed channel means the connection is being replaced or closed: nothing to follow.
        if let Some(tx) = &self.changes {
            tx.send(change).ok();
        }
    }
}

/// What a server said changed (`notifications/tools/list_changed`; `resources/list_changed`
/// or `resources/updated`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerChange {
    Tools,
    Resources,
}

pub type Session = RunningService<RoleClient, PortholeClient>;

/// Why a connection could not be made, in words for the user.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot start {command:?}: {source}")]
    Spawn { command: String, source: std::io::Error },
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    /// The server broke the connection: it exited, crashed or wrote something that is not
    /// JSON-RPC (see [`crate::stdio`]).
    #[error("{0}")]
    Stopped(String),
    #[error("no answer within {0:?}")]
    Timeout(std::time::Duration),
    #[error("{0}")]
    BadConfig(String),
    #[error("the server requires sign-in (OAuth), and no sign-in is set up for it")]
    AuthRequired(Option<String>),
    #[error("{0}")]
    Auth(String),
}

/// Resolves the command a stdio entry names. `porthole` means this very executable, so the demo
/// server in a fresh profile works wherever Porthole is installed.
pub fn resolve_command(command: &str) -> PathBuf {
    if command == "porthole"
        && let Ok(exe) = std::env::current_exe()
    {
        return exe;
    }
    PathBuf::from(command)
}

/// The program a stdio entry starts, and its arguments. `porthole demo-server` is started as the
/// `porthole-demo-server` installed beside Porthole when there is one: the same server, without
/// the window's libraries (WebKitGTK, GTK: 27 MiB of memory against 6, BENCHMARKS.md) loaded into
/// its process for nothing; else as `porthole demo-server`.
pub fn resolve_program(command: &str, args: &[String]) -> (PathBuf, Vec<String>) {
    program_beside(std::env::current_exe().ok(), command, args)
}

/// [`resolve_program`] for Porthole installed as `exe`.
fn program_beside(exe: Option<PathBuf>, command: &str, args: &[String]) -> (PathBuf, Vec<String>) {
    let Some(exe) = exe.filter(|_| command == "porthole") else {
        return (PathBuf::from(command), args.to_vec());
    };
    if args.first().map(String::as_str) == Some("demo-server") {
        let sibling = exe.with_file_name(format!("porthole-demo-server{}", std::env::consts::EXE_SUFFIX));
        if sibling.is_file() {
            return (sibling, args[1..].to_vec());
        }
    }
    (exe, args.to_vec())
}

/// Connects to one server and completes the handshake, within the server's timeout.
/// `server_log_dir`, when given, receives the server's stderr as `<dir>/<name>.log`.
pub async fn connect(
    config: &ServerConfig,
    advertise_mcp_apps: bool,
    server_log_dir: Option<&Path>,
    policy: ClientPolicy,
    changes: Option<mpsc::UnboundedSender<ServerChange>>,
    oauth: Option<&OAuth>,
    sign_in: SignIn,
) -> Result<Session, ConnectError> {
    let client = PortholeClient::new(&config.name, advertise_mcp_apps, policy, changes);
    let first = connect_with(
        config,
        client.clone(),
        server_log_dir,
        oauth,
        sign_in.clone(),
        Lifecycle::Initialize,
    )
    .await;
    match first {
        // A server that speaks only 2026-07-28 refuses `initialize` (-32022, listing what it
        // supports); that revision starts with `server/discover` instead.
        Err(ConnectError::Handshake(message)) if message.contains("-32022") && message.contains("2026-07-28") => {
            tracing::info!(server = %config.name, "the server speaks only 2026-07-28; connecting with server/discover");
            connect_with(config, client, server_log_dir, oauth, sign_in, Lifecycle::Discover).await
        }
        other => other,
    }
}

/// How the MCP session starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifecycle {
    /// `initialize` / `notifications/initialized`, protocol 2025-11-25 (older servers answer
    /// with their own version, such as 2025-06-18).
    Initialize,
    /// `server/discover` with per-request metadata, protocol 2026-07-28.
    Discover,
}

async fn connect_with(
    config: &ServerConfig,
    client: PortholeClient,
    server_log_dir: Option<&Path>,
    oauth: Option<&OAuth>,
    sign_in: SignIn,
    lifecycle: Lifecycle,
) -> Result<Session, ConnectError> {
    match &config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let (program, args) = resolve_program(command, args);
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(args).envs(env);
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            // This connection's own end (a client cloned from an earlier attempt shares its end).
            let mut client = client;
            client.end = ConnectionEnd::default();
            let tail = StderrTail::default();
            let (transport, stderr) = ChildTransport::spawn(&config.name, cmd, client.end.clone(), tail.clone())
                .map_err(|source| ConnectError::Spawn {
                    command: command.clone(),
                    source,
                })?;
            if let Some(stderr) = stderr {
                tokio::spawn(forward_stderr(
                    config.name.clone(),
                    stderr,
                    server_log_dir.map(Path::to_path_buf),
                    tail,
                ));
            }
            handshake(client, transport, config, lifecycle).await
        }
        Transport::StreamableHttp { url, headers } => {
            let transport_config = || -> Result<StreamableHttpClientTransportConfig, ConnectError> {
                let mut custom = std::collections::HashMap::new();
                for (name, value) in headers {
                    let header = http::HeaderName::try_from(name.as_str())
                        .map_err(|_| ConnectError::BadConfig(format!("{name:?} is not a valid HTTP header name")))?;
                    let mut value = http::HeaderValue::try_from(value.as_str())
                        .map_err(|_| ConnectError::BadConfig(format!("the value of header {name:?} is not valid")))?;
                    value.set_sensitive(true);
                    custom.insert(header, value);
                }
                // Reconnects of the event stream back off from 1 s to at most 30 s, and give up after 8.
                let mut backoff = ExponentialBackoff::default();
                backoff.max_times = Some(8);
                backoff.max_delay = Some(std::time::Duration::from_secs(30));
                let mut c = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                c.custom_headers = custom;
                c.retry_config = Arc::new(backoff);
                // Large tool results (50 MB and more) arrive whole, over JSON or SSE.
                c.max_json_response_size = crate::stdio::MAX_MESSAGE_BYTES;
                c.max_sse_event_size = crate::stdio::MAX_MESSAGE_BYTES;
                Ok(c)
            };
            let signed_in = match (oauth, &sign_in) {
                (None, _) | (Some(_), SignIn::Never) => None,
                (Some(oauth), SignIn::Now(challenge)) => Some(
                    oauth
                        .sign_in(url, challenge.as_deref())
                        .await
                        .map_err(ConnectError::Auth)?,
                ),
                (Some(oauth), SignIn::IfStored) => oauth.stored(url).await.unwrap_or_else(|e| {
                    tracing::warn!(server = %config.name, "{e}");
                    None
                }),
            };
            // Each attempt is a connection of its own, with its own end.
            let checked = || {
                let mut client = client.clone();
                client.end = ConnectionEnd::default();
                let http_client = CheckedClient::new(reqwest::Client::default(), client.end.clone());
                let transport = StreamableHttpClientTransport::with_client(http_client, transport_config()?);
                let transport = CheckedTransport::new(transport, client.end.clone());
                Ok::<_, ConnectError>((client, transport))
            };
            let checked_authorized = |manager| {
                let mut client = client.clone();
                client.end = ConnectionEnd::default();
                let http_client =
                    CheckedClient::new(AuthClient::new(reqwest::Client::default(), manager), client.end.clone());
                let transport = StreamableHttpClientTransport::with_client(http_client, transport_config()?);
                let transport = CheckedTransport::new(transport, client.end.clone());
                Ok::<_, ConnectError>((client, transport))
            };
            if let Some(manager) = signed_in {
                let (client, transport) = checked_authorized(manager)?;
                return handshake(client, transport, config, lifecycle).await;
            }
            let (first, transport) = checked()?;
            match handshake(first, transport, config, lifecycle).await {
                Err(ConnectError::AuthRequired(_)) if sign_in == SignIn::Never => Err(ConnectError::Auth(
                    "signed out, and the server requires sign-in: sign in to connect".into(),
                )),
                Err(ConnectError::AuthRequired(challenge)) if oauth.is_some() => {
                    let manager = oauth
                        .unwrap()
                        .sign_in(url, challenge.as_deref())
                        .await
                        .map_err(ConnectError::Auth)?;
                    let (client, transport) = checked_authorized(manager)?;
                    handshake(client, transport, config, lifecycle).await
                }
                Err(e @ (ConnectError::Handshake(_) | ConnectError::Stopped(_))) => {
                    if is_legacy_sse(url).await {
                        Err(ConnectError::BadConfig(format!(
                            "{url} is a legacy HTTP+SSE server (the 2024-11-05 transport), which Porthole does not \
                             speak; use the server's Streamable HTTP endpoint (often /mcp) or run it over stdio"
                        )))
                    } else {
                        Err(e)
                    }
                }
                other => other,
            }
        }
    }
}

/// Whether `url` answers a GET with the legacy HTTP+SSE transport's opening `endpoint` event.
async fn is_legacy_sse(url: &str) -> bool {
    let probe = async {
        let client = reqwest::Client::builder().build().ok()?;
        let mut response = client
            .get(url)
            .header("accept", "text/event-stream")
            .send()
            .await
            .ok()?;
        let is_stream = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !response.status().is_success() || !is_stream {
            return Some(false);
        }
        let mut seen = String::new();
        while seen.len() < 4096 {
            let chunk = response.chunk().await.ok()??;
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains("\n\n") || seen.contains("\r\n\r\n") {
                break;
            }
        }
        Some(
            seen.lines()
                .any(|l| l.trim() == "event: endpoint" || l.trim() == "event:endpoint"),
        )
    };
    tokio::time::timeout(std::time::Duration::from_secs(3), probe)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}

/// Whether to sign in before connecting to a remote server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignIn {
    /// Use stored tokens if there are any; otherwise connect without and sign in if challenged.
    IfStored,
    /// Sign in first, answering this `WWW-Authenticate` challenge (if any).
    Now(Option<String>),
    /// Connect without tokens and never sign in (just signed out): a server that requires
    /// sign-in fails with the reason.
    Never,
}

async fn handshake<T, E, A>(
    client: PortholeClient,
    transport: T,
    config: &ServerConfig,
    lifecycle: Lifecycle,
) -> Result<Session, ConnectError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let end = client.end.clone();
    let transport = InOrder::new(
        transport.into_transport(),
        client.progress.clone(),
        client.policy.traffic.clone(),
    );
    let serve = async {
        match lifecycle {
            Lifecycle::Initialize => client.serve(transport).await,
            Lifecycle::Discover => {
                let mode = ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                };
                client.serve_with_lifecycle(transport, mode).await
            }
        }
    };
    match tokio::time::timeout(config.timeout, serve).await {
        Ok(Ok(session)) => Ok(session),
        Ok(Err(e)) if e.is_authorization_required() || e.auth_challenge().is_some() => {
            Err(ConnectError::AuthRequired(e.auth_challenge().map(str::to_string)))
        }
        Ok(Err(e)) => {
            // A server that exits closes its stdout a moment before its exit status and last
            // stderr lines are known: for a closed connection, that reason is waited for.
            let closed = e.to_string().contains("connection closed");
            let reason = match end.reason() {
                Some(reason) => Some(reason),
                None if closed => tokio::time::timeout(std::time::Duration::from_secs(1), end.ended())
                    .await
                    .ok()
                    .flatten(),
                None => None,
            };
            match reason {
                Some(reason) => Err(ConnectError::Stopped(reason)),
                None => Err(ConnectError::Handshake(e.to_string())),
            }
        }
        Err(_) => Err(ConnectError::Timeout(config.timeout)),
    }
}

/// The name of a stdio server's log file in the server log folder: `<name>.log`, with every
/// character other than ASCII letters, digits, `-`, `_` and `.` written as `_`.
pub fn log_file_name(server: &str) -> String {
    let safe: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.log")
}

/// Every line the server writes to stderr goes to `tracing` (target `mcp_server`) and, when a
/// folder is given, to that server's own log file (size-capped: [`ServerLog`]). The last line is
/// kept in `tail`, for the reason given when the server exits.
async fn forward_stderr(
    server: String,
    stderr: tokio::process::ChildStderr,
    log_dir: Option<PathBuf>,
    tail: StderrTail,
) {
    let mut file = match log_dir {
        Some(dir) => match ServerLog::open(&dir, &server, LOG_CAP_BYTES).await {
            Ok(log) => Some(log),
            Err(e) => {
                tracing::warn!(server = %server, dir = %dir.display(), "server log file cannot be opened; its stderr goes to the app log only: {e}");
                None
            }
        },
        None => None,
    };
    // Each start is marked, so an old run's crash is never taken for this one's; each line has
    // its time (UTC).
    if let Some(f) = file.as_mut() {
        let started = crate::server_log::utc_date_time(std::time::SystemTime::now());
        if let Err(e) = f.write_line(&format!("---- {started}: the server started")).await {
            tracing::warn!(server = %server, "server log file write failed: {e}");
        }
    }
    let mut lines = BufReader::new(stderr).lines();
    let mut write_failed = false;
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(target: "mcp_server", server = %server, "{line}");
        tail.line(&line);
        if let Some(f) = file.as_mut() {
            let stamped = format!("{} {line}", crate::server_log::utc_time(std::time::SystemTime::now()));
            // A full disk, say: the line is still in the app log above. Said once, not per line.
            if let Err(e) = f.write_line(&stamped).await
                && !write_failed
            {
                write_failed = true;
                tracing::warn!(server = %server, "server log file write failed; lines may be missing from it: {e}");
            }
        }
    }
    tail.closed();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_mcp_apps_capability_is_advertised_exactly_and_only_when_asked() {
        let on = serde_json::to_value(client_capabilities(true, &ClientPolicy::default())).unwrap();
        assert_eq!(
            on,
            json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
        );
        let off = serde_json::to_value(client_capabilities(false, &ClientPolicy::default())).unwrap();
        assert_eq!(off, json!({}));
        let scripted = ClientPolicy::from(ElicitationPolicy::AcceptDefaults);
        let scripted = serde_json::to_value(client_capabilities(false, &scripted)).unwrap();
        assert_eq!(scripted, json!({"elicitation": {"form": {}}}), "a URL needs a person");
        let skybridge = ClientPolicy {
            skybridge: true,
            ..Default::default()
        };
        let on = serde_json::to_value(client_capabilities(true, &skybridge)).unwrap();
        assert_eq!(
            on["extensions"]["io.modelcontextprotocol/ui"]["mimeTypes"],
            json!(["text/html;profile=mcp-app", "text/html+skybridge"])
        );
    }

    #[test]
    fn a_person_at_the_window_is_offered_to_servers_in_every_way_they_may_ask() {
        let (questions, _) = mpsc::channel(1);
        let (samples, _) = mpsc::channel(1);
        let policy = ClientPolicy {
            elicitation: ElicitationPolicy::Ask(questions),
            sampling: Some(samples),
            roots: Some(RootsSource(Arc::new(|_: &str| Vec::new()))),
            skybridge: false,
            traffic: None,
        };
        let caps = serde_json::to_value(client_capabilities(false, &policy)).unwrap();
        assert_eq!(
            caps,
            json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {"listChanged": true}})
        );
    }

    #[test]
    fn a_folder_is_given_as_a_file_uri_and_its_name() {
        assert_eq!(
            root_of(Path::new("/home/me/My notes")),
            ("file:///home/me/My%20notes".to_string(), Some("My notes".to_string()))
        );
    }

    #[test]
    fn schema_defaults_become_the_answer() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string", "default": "x"}, "b": {"type": "integer"}}});
        assert_eq!(schema_defaults(&schema), json!({"a": "x"}));
    }

    #[test]
    fn porthole_means_this_executable() {
        assert_eq!(resolve_command("porthole"), std::env::current_exe().unwrap());
        assert_eq!(resolve_command("npx"), PathBuf::from("npx"));
    }

    #[test]
    fn the_demo_server_is_started_as_its_own_program_when_installed_beside_porthole() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("porthole");
        let sibling = dir
            .path()
            .join(format!("porthole-demo-server{}", std::env::consts::EXE_SUFFIX));
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let demo = args(&["demo-server", "--flag"]);
        // Not installed beside it: Porthole's own subcommand.
        assert_eq!(
            program_beside(Some(exe.clone()), "porthole", &demo),
            (exe.clone(), demo.clone())
        );
        std::fs::write(&sibling, "").unwrap();
        assert_eq!(
            program_beside(Some(exe.clone()), "porthole", &demo),
            (sibling, args(&["--flag"]))
        );
        // Other subcommands and other programs are left as they are.
        assert_eq!(
            program_beside(Some(exe.clone()), "porthole", &args(&["tools"])),
            (exe, args(&["tools"]))
        );
        assert_eq!(program_beside(None, "npx", &demo), ("npx".into(), demo.clone()));
    }
}
