//! Porthole's MCP side, with no Tauri dependency: server configuration, connections, and the
//! tool catalog that the model and the views are offered.
//!
//! [`Servers`] connects to every configured server in parallel (one slow or dead server never
//! holds the others back) and publishes each server's state through a `watch` channel that the
//! desktop shell and the CLI both read.

pub mod catalog;
pub mod config;
pub mod config_file;
pub mod connection;
pub mod http;
pub mod import;
pub mod oauth;
pub mod outcome;
pub mod progress;
pub mod server_log;
pub mod stdio;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub mod traffic;
pub mod uri_template;

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use porthole_secrets::redact;
use rmcp::model::{CallToolRequestParams, CancelledNotificationParam, ClientRequest, Request, ServerResult};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{Mutex, mpsc, watch};
use tokio_util::sync::CancellationToken;

pub use catalog::{Audience, CatalogTool, ViewKind, Widget};
pub use config::{ConfigProblem, LoadedConfig, ServerConfig, Transport};
pub use connection::{
    ClientPolicy, ElicitationAnswer, ElicitationPolicy, ElicitationRequest, MCP_APP_MIME, MCP_APPS_EXTENSION,
    RootsSource, SamplingRequest, ServerChange, Session,
};
pub use outcome::{ModelFacing, ToolOutcome};

/// One progress notification for a call in flight.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Why a call produced no result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("no server named {0:?}")]
    UnknownServer(String),
    #[error("server {server:?} has no tool {tool:?}")]
    UnknownTool { server: String, tool: String },
    #[error("server {server:?} is not connected: {reason}")]
    NotConnected { server: String, reason: String },
    #[error("no result within {0:?}; the call was cancelled")]
    Timeout(Duration),
    #[error("the call was cancelled")]
    Cancelled,
    #[error("the server answered with an error: {0}")]
    Server(String),
    #[error("the connection failed during the call: {0}")]
    Connection(String),
    /// The server broke the connection during the call: it exited, crashed, wrote something
    /// that is not JSON-RPC or answered with the wrong id ("the server exited with status 3: …").
    #[error("the server {0}")]
    Stopped(String),
    #[error("the server asks for sign-in")]
    SignInNeeded(Option<String>),
}

/// What a caller may attach to a call.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Receives each progress notification as it arrives.
    pub progress: Option<mpsc::UnboundedSender<Progress>>,
    /// Cancelling it sends `notifications/cancelled` and ends the call with [`CallError::Cancelled`].
    pub cancel: CancellationToken,
    /// Overrides the server's timeout for this call.
    pub timeout: Option<Duration>,
}

/// What a `completion/complete` request completes an argument of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completing {
    /// A prompt, by name.
    Prompt(String),
    /// A resource template, by its URI template.
    Resource(String),
}

/// A capability a server may declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    Prompts,
    Resources,
    Completions,
}

/// Where a server's connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    Disabled,
    Connecting,
    Connected,
    Failed,
}

/// What the user sees of one server.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
    /// The last error, in words.
    pub error: Option<String>,
    /// `stdio: command args…` or the URL.
    pub endpoint: String,
    /// The server's own name and version, once connected.
    pub server_info: Option<String>,
    /// The MCP protocol revision agreed with the server, once connected.
    pub protocol_version: Option<String>,
    /// Whether Porthole advertised the MCP Apps extension to this server.
    pub mcp_apps: bool,
    pub tools: Vec<CatalogTool>,
    /// Changes each time what the server's resources read may have changed: a new connection,
    /// `notifications/resources/list_changed` or `resources/updated` (for caches of them). Never
    /// the same for two servers or two moments, even of servers removed and added again.
    #[serde(skip)]
    #[ts(skip)]
    pub resources_version: u64,
}

/// What a server said of itself when the session started (`initialize`'s result, or
/// `server/discover`'s).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerDetails {
    pub name: String,
    pub title: Option<String>,
    pub version: String,
    /// The protocol revision agreed.
    pub protocol_version: String,
    /// The capabilities it declared, as it sent them.
    pub capabilities: Value,
    pub instructions: Option<String>,
}

/// Settings that apply to every server.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// The global MCP Apps switch. Off: the extension is advertised to no server.
    pub mcp_apps: bool,
    /// Where each stdio server's stderr is written, as `<name>.log`.
    pub server_log_dir: Option<PathBuf>,
    /// What to do when a server asks the user for input.
    pub elicitation: ElicitationPolicy,
    /// Where servers' `sampling/createMessage` requests go; `None`: sampling is not offered.
    pub sampling: Option<mpsc::Sender<connection::SamplingRequest>>,
    /// The folders servers are given as roots; `None`: roots are not offered.
    pub roots: Option<connection::RootsSource>,
    /// How remote servers that require OAuth are signed in to; `None`: they fail with the reason.
    pub oauth: Option<oauth::OAuth>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            mcp_apps: true,
            server_log_dir: None,
            elicitation: ElicitationPolicy::Decline,
            sampling: None,
            roots: None,
            oauth: None,
        }
    }
}

/// `PORTHOLE_MCP_APPS=off` (or `0`, `false`, `no`) turns MCP Apps off everywhere.
pub fn mcp_apps_enabled_by_env() -> bool {
    !matches!(
        std::env::var("PORTHOLE_MCP_APPS")
            .map(|v| v.to_ascii_lowercase())
            .as_deref(),
        Ok("off" | "0" | "false" | "no")
    )
}

struct Entry {
    config: ServerConfig,
    /// Whether this server is told about MCP Apps (the global switch and its own are both on).
    /// Fixed for the entry's life: changing it makes a new entry, and so a new connection.
    advertise: bool,
    session: Mutex<Option<Session>>,
    /// Cancelled when the entry leaves the running set: a connection being made is abandoned,
    /// and nothing connects it again.
    retired: CancellationToken,
}

/// The servers running now, in the order of their statuses.
struct Running {
    entries: Vec<Arc<Entry>>,
    mcp_apps: bool,
}

/// All configured servers and their connections. Clones share everything: a clone sees the
/// changes [`Servers::reconfigure`] makes.
#[derive(Clone)]
pub struct Servers {
    /// Lock order: `running` before `statuses`, never the other way round.
    running: Arc<std::sync::RwLock<Running>>,
    statuses: Arc<watch::Sender<Vec<ServerStatus>>>,
    /// `options.mcp_apps` is the switch at start; the switch now is `running.mcp_apps`.
    options: Arc<ConnectOptions>,
    /// Each server's traffic log, by name, across its connections.
    traffic: Arc<std::sync::Mutex<HashMap<String, traffic::Traffic>>>,
}

/// Where a server is, as shown: `stdio: command args…` or its URL, credentials redacted
/// (`https://host/mcp?token=[redacted]`).
fn endpoint(config: &ServerConfig) -> String {
    match &config.transport {
        Transport::Stdio { command, args, .. } => {
            let mut s = format!("stdio: {command}");
            for a in args {
                s.push(' ');
                s.push_str(a);
            }
            redact::text(&s).into_owned()
        }
        Transport::StreamableHttp { url, .. } => redact::url(url),
    }
}

/// A `resources_version` no server has had yet.
fn next_resources_version() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn first_status(config: &ServerConfig, advertise: bool) -> ServerStatus {
    ServerStatus {
        name: config.name.clone(),
        state: if config.enabled {
            ServerState::Connecting
        } else {
            ServerState::Disabled
        },
        error: None,
        endpoint: endpoint(config),
        server_info: None,
        protocol_version: None,
        mcp_apps: advertise,
        tools: Vec::new(),
        resources_version: next_resources_version(),
    }
}

/// Gives every tool of every server its model-facing name, unique across servers.
fn assign_model_names(all: &mut [ServerStatus]) {
    let mut tools: Vec<CatalogTool> = all.iter_mut().flat_map(|s| s.tools.drain(..)).collect();
    catalog::assign_model_names(&mut tools);
    for tool in tools {
        if let Some(s) = all.iter_mut().find(|s| s.name == tool.server) {
            s.tools.push(tool);
        }
    }
}

fn catalog_tools(entry: &Entry, tools: Vec<rmcp::model::Tool>) -> Vec<CatalogTool> {
    let config = &entry.config;
    let sdk_server = catalog::apps_sdk_server(tools.iter().map(|t| t.meta.as_ref().map(|m| &m.0)));
    tools
        .into_iter()
        .map(|t| {
            let link = catalog::read_tool_meta(t.meta.as_ref().map(|m| &m.0), sdk_server);
            for p in &link.problems {
                tracing::warn!(server = %config.name, tool = %t.name, "{p}");
            }
            CatalogTool {
                server: config.name.clone(),
                name: t.name.to_string(),
                model_name: String::new(),
                title: t.title.clone(),
                description: t.description.as_deref().map(str::to_string),
                input_schema: Value::Object((*t.input_schema).clone()),
                // A server we did not tell about MCP Apps gets no views.
                ui_resource_uri: if entry.advertise { link.resource_uri } else { None },
                visibility: if entry.advertise {
                    link.visibility
                } else {
                    vec![Audience::Model]
                },
                widget: link.widget,
                meta_problems: link.problems,
            }
        })
        .collect()
}

/// Closes an entry's connection, if it has one; stdio servers are asked to exit, then stopped.
async fn close(entry: &Entry) {
    if let Some(session) = entry.session.lock().await.take() {
        end_session(&entry.config.name, session).await;
    }
}

/// Stops a connection's task and waits for it. A task that had already ended badly (it
/// panicked) leaves nothing to close, so that is only logged.
async fn end_session(server: &str, session: Session) {
    if let Err(e) = session.cancel().await {
        tracing::debug!(server, "the connection's task had already ended badly: {e}");
    }
}

impl Servers {
    /// Starts connecting to every enabled server at once and returns immediately; watch
    /// [`Servers::subscribe`] or await [`Servers::settled`] for the outcome.
    pub fn start(configs: Vec<ServerConfig>, options: ConnectOptions) -> Servers {
        let servers = Servers::idle(options);
        let (_, fresh) = servers.install(configs, servers.options.mcp_apps);
        servers.connect_all(fresh);
        servers
    }

    /// As [`Servers::start`], but the connections start once `go` completes (the app's window
    /// is up, say: a stdio server's process then starts beside the page instead of competing
    /// with it for the processor). Until then every enabled server shows as connecting; a call
    /// or reconnect that comes first connects its server itself, and is not connected again.
    pub fn start_after(
        configs: Vec<ServerConfig>,
        options: ConnectOptions,
        go: impl Future<Output = ()> + Send + 'static,
    ) -> Servers {
        let servers = Servers::idle(options);
        let (_, fresh) = servers.install(configs, servers.options.mcp_apps);
        let this = servers.clone();
        tokio::spawn(async move {
            go.await;
            for entry in fresh {
                let this = this.clone();
                tokio::spawn(async move {
                    let mut slot = entry.session.lock().await;
                    if slot.is_none() {
                        this.connect_locked(&entry, &mut slot, connection::SignIn::IfStored)
                            .await;
                    }
                });
            }
        });
        servers
    }

    fn idle(options: ConnectOptions) -> Servers {
        Servers {
            running: Arc::new(std::sync::RwLock::new(Running {
                entries: Vec::new(),
                mcp_apps: options.mcp_apps,
            })),
            statuses: Arc::new(watch::channel(Vec::new()).0),
            traffic: Arc::default(),
            options: Arc::new(options),
        }
    }

    /// Changes the running set while it runs: servers whose config (and MCP Apps switch) is
    /// unchanged keep their connection; removed ones are closed; changed, added and enabled ones
    /// connect anew; disabled ones are closed and shown `disabled`. `mcp_apps` is the global MCP
    /// Apps switch: servers it changes for reconnect, so the capability is (or is no longer)
    /// advertised. Returns once the removed connections are closed, without waiting for the new
    /// ones (see [`Servers::settled`]). Every clone of this `Servers` sees the change, and the
    /// statuses change on the same channel.
    pub async fn reconfigure(&self, configs: Vec<ServerConfig>, mcp_apps: bool) {
        let (retired, fresh) = self.install(configs, mcp_apps);
        futures::future::join_all(retired.iter().map(|e| close(e))).await;
        for entry in &retired {
            tracing::info!(server = %entry.config.name, "closed (settings changed)");
        }
        self.connect_all(fresh);
    }

    /// The global MCP Apps switch now.
    pub fn mcp_apps(&self) -> bool {
        self.running.read().unwrap().mcp_apps
    }

    /// Where a stdio server's stderr is written, if this run keeps server logs.
    pub fn log_file(&self, server: &str) -> Option<PathBuf> {
        let dir = self.options.server_log_dir.as_ref()?;
        Some(dir.join(connection::log_file_name(server)))
    }

    /// The URL and OAuth settings of a remote server, for signing in or out.
    fn remote(&self, server: &str) -> Result<(Arc<Entry>, String, &oauth::OAuth), String> {
        let entry = self
            .entry_named(server)
            .ok_or_else(|| format!("no server named {server:?}"))?;
        let Transport::StreamableHttp { url, .. } = &entry.config.transport else {
            return Err(format!(
                "{server:?} is a stdio server; only remote (HTTP) servers sign in"
            ));
        };
        let url = url.clone();
        let oauth = self
            .options
            .oauth
            .as_ref()
            .ok_or_else(|| "signing in (OAuth) is not set up in this run".to_string())?;
        Ok((entry, url, oauth))
    }

    /// Signs in to a remote server (OAuth, through the configured authorizer) and reconnects
    /// it with the new tokens. When signing in fails, the connection it had is left alone.
    pub async fn sign_in(&self, server: &str) -> Result<(), String> {
        let (entry, url, oauth) = self.remote(server)?;
        if !entry.config.enabled {
            return Err(format!("{server:?} is disabled; enable it first"));
        }
        tokio::select! {
            signed_in = oauth.sign_in(&url, None) => { signed_in?; }
            _ = entry.retired.cancelled() => return Err("the server's settings changed meanwhile".into()),
        }
        tracing::info!(server, "signed in");
        let mut slot = entry.session.lock().await;
        if self
            .connect_locked(&entry, &mut slot, connection::SignIn::IfStored)
            .await
        {
            Ok(())
        } else {
            Err(self
                .status_of(&entry)
                .and_then(|s| s.error)
                .unwrap_or_else(|| "the server's settings changed meanwhile".into()))
        }
    }

    /// Connects `server` anew, as at start: its session, if any, is closed first (a stdio
    /// server's process is ended and started again). The status says how it went; `Err` only
    /// when there is no such server or it is disabled.
    pub async fn reconnect(&self, server: &str) -> Result<(), String> {
        let entry = self
            .entry_named(server)
            .ok_or_else(|| format!("no server named {server:?}"))?;
        if !entry.config.enabled {
            return Err(format!("{server:?} is disabled; enable it first"));
        }
        tracing::info!(server, "reconnecting, as asked");
        let mut slot = entry.session.lock().await;
        self.connect_locked(&entry, &mut slot, connection::SignIn::IfStored)
            .await;
        Ok(())
    }

    /// Forgets a remote server's stored tokens and reconnects it without signing in (a server
    /// that requires sign-in then shows as failed, saying so). Returns whether any tokens were
    /// stored.
    pub async fn sign_out(&self, server: &str) -> Result<bool, String> {
        let (entry, url, oauth) = self.remote(server)?;
        let store = oauth.tokens.credential_store(&url);
        let had_tokens = store
            .load()
            .await
            .map_err(|e| format!("cannot read the stored sign-in: {e}"))?
            .is_some();
        store
            .clear()
            .await
            .map_err(|e| format!("cannot delete the stored sign-in: {e}"))?;
        tracing::info!(server, had_tokens, "signed out");
        let mut slot = entry.session.lock().await;
        if entry.config.enabled {
            self.connect_locked(&entry, &mut slot, connection::SignIn::Never).await;
        }
        Ok(had_tokens)
    }

    /// Replaces the running set with `configs` and publishes the statuses; returns the entries
    /// that left it (already marked retired) and the new ones to connect.
    fn install(&self, configs: Vec<ServerConfig>, mcp_apps: bool) -> (Vec<Arc<Entry>>, Vec<Arc<Entry>>) {
        let mut running = self.running.write().unwrap();
        let old_statuses = self.statuses.borrow().clone();
        let mut entries = Vec::with_capacity(configs.len());
        let mut statuses = Vec::with_capacity(configs.len());
        let mut fresh = Vec::new();
        for config in configs {
            let advertise = mcp_apps && config.mcp_apps;
            let same = running.entries.iter().position(|e| {
                e.config == config && e.advertise == advertise && !entries.iter().any(|k| Arc::ptr_eq(k, e))
            });
            match same {
                Some(i) => {
                    entries.push(running.entries[i].clone());
                    statuses.push(old_statuses[i].clone());
                }
                None => {
                    statuses.push(first_status(&config, advertise));
                    let entry = Arc::new(Entry {
                        config,
                        advertise,
                        session: Mutex::new(None),
                        retired: CancellationToken::new(),
                    });
                    if entry.config.enabled {
                        fresh.push(entry.clone());
                    }
                    entries.push(entry);
                }
            }
        }
        let retired: Vec<Arc<Entry>> = running
            .entries
            .iter()
            .filter(|e| !entries.iter().any(|k| Arc::ptr_eq(k, e)))
            .cloned()
            .collect();
        for entry in &retired {
            entry.retired.cancel();
        }
        running.entries = entries;
        running.mcp_apps = mcp_apps;
        assign_model_names(&mut statuses);
        self.statuses.send_replace(statuses);
        (retired, fresh)
    }

    fn connect_all(&self, entries: Vec<Arc<Entry>>) {
        for entry in entries {
            let this = self.clone();
            tokio::spawn(async move { this.connect_one(&entry).await });
        }
    }

    /// Connects (or reconnects) one server, lists its tools and publishes the result.
    /// Returns whether it is connected. The caller holds the server's session lock.
    async fn connect_locked(
        &self,
        entry: &Arc<Entry>,
        slot: &mut Option<Session>,
        sign_in: connection::SignIn,
    ) -> bool {
        let config = &entry.config;
        if let Some(old) = slot.take() {
            end_session(&config.name, old).await;
        }
        if entry.retired.is_cancelled() {
            return false;
        }
        let (changed_tx, changed_rx) = mpsc::unbounded_channel();
        let attempt = async {
            let mut sign_in = sign_in;
            loop {
                let session = connection::connect(
                    config,
                    entry.advertise,
                    self.options.server_log_dir.as_deref(),
                    connection::ClientPolicy {
                        elicitation: self.options.elicitation.clone(),
                        sampling: self.options.sampling.clone(),
                        // A server's own roots (its config's `roots`) replace the app's.
                        roots: self.options.roots.clone().map(|app| match &config.roots {
                            Some(own) => connection::RootsSource::fixed(own),
                            None => app,
                        }),
                        skybridge: config.skybridge,
                        traffic: Some(self.traffic(&config.name)),
                    },
                    Some(changed_tx.clone()),
                    self.options.oauth.as_ref(),
                    sign_in.clone(),
                )
                .await
                .map_err(|e| e.to_string())?;
                let peer_info = session.peer().peer_info();
                let info = peer_info
                    .as_ref()
                    .and_then(|i| i.server_info.as_ref().map(|s| format!("{} {}", s.name, s.version)));
                let version = peer_info.as_ref().map(|i| i.protocol_version.to_string());
                let tools = tokio::time::timeout(config.timeout, session.list_all_tools())
                    .await
                    .map_err(|_| format!("tools/list got no answer within {:?}", config.timeout))?;
                match tools {
                    Ok(tools) => return Ok::<_, String>((session, (info, version), tools)),
                    // Some servers let anyone initialize and ask for sign-in on the first request.
                    Err(e)
                        if (e.is_authorization_required() || e.auth_challenge().is_some())
                            && self.options.oauth.is_some()
                            && sign_in == connection::SignIn::IfStored =>
                    {
                        sign_in = connection::SignIn::Now(e.auth_challenge().map(str::to_string));
                        end_session(&config.name, session).await;
                    }
                    Err(e) => return Err(format!("tools/list failed: {e}")),
                }
            }
        };
        // A server removed or changed meanwhile is abandoned (its process goes with the attempt).
        let outcome = tokio::select! {
            outcome = attempt => outcome,
            _ = entry.retired.cancelled() => return false,
        };
        match outcome {
            Ok((session, _, _)) if entry.retired.is_cancelled() => {
                end_session(&config.name, session).await;
                false
            }
            Ok((session, (info, version), tools)) => {
                let tools = catalog_tools(entry, tools);
                tracing::info!(server = %config.name, tools = tools.len(), "connected");
                *slot = Some(session);
                self.update(entry, |s| {
                    s.state = ServerState::Connected;
                    s.error = None;
                    s.server_info = info;
                    s.protocol_version = version;
                    s.tools = tools;
                    // A new session: what was read from the old one may be stale.
                    s.resources_version = next_resources_version();
                });
                // A connection that breaks while idle is told (a stdio server that exits, an HTTP
                // server that sends garbage on its event stream).
                let end = slot.as_ref().map(|s| s.service().end.clone());
                let this = self.clone();
                let entry = entry.clone();
                if let Some(end) = end {
                    let (this, entry) = (this.clone(), entry.clone());
                    tokio::spawn(async move { this.report_end(&entry, end).await });
                }
                tokio::spawn(async move { this.follow_changes(&entry, changed_rx).await });
                true
            }
            Err(error) => {
                let error = redact::text(&error).into_owned();
                tracing::warn!(server = %config.name, %error, "cannot connect");
                self.update(entry, |s| {
                    s.state = ServerState::Failed;
                    s.error = Some(error);
                    s.tools.clear();
                });
                false
            }
        }
    }

    async fn connect_one(&self, entry: &Arc<Entry>) {
        let mut slot = entry.session.lock().await;
        self.connect_locked(entry, &mut slot, connection::SignIn::IfStored)
            .await;
    }

    /// Shows a server as failed, with the reason, when its connection ends by itself (a stdio
    /// server that exits while idle, say) and is still the entry's connection; the next call
    /// starts it again.
    async fn report_end(&self, entry: &Arc<Entry>, end: stdio::ConnectionEnd) {
        let reason = tokio::select! {
            ended = end.ended() => match ended {
                Some(reason) => reason,
                None => return,
            },
            _ = entry.retired.cancelled() => return,
        };
        let slot = entry.session.lock().await;
        if slot.as_ref().is_some_and(|s| s.service().end.is(&end)) {
            self.update(entry, |s| {
                s.state = ServerState::Failed;
                s.error = Some(reason);
            });
        }
    }

    /// Re-lists a server's tools each time it sends `notifications/tools/list_changed`, and
    /// moves its `resources_version` on when it says its resources changed, until that
    /// connection ends.
    async fn follow_changes(&self, entry: &Arc<Entry>, mut changed: mpsc::UnboundedReceiver<ServerChange>) {
        while let Some(first) = changed.recv().await {
            let (mut tools, mut resources) = (false, false);
            for change in std::iter::once(first).chain(std::iter::from_fn(|| changed.try_recv().ok())) {
                match change {
                    ServerChange::Tools => tools = true,
                    ServerChange::Resources => resources = true,
                }
            }
            if resources {
                self.update(entry, |s| s.resources_version = next_resources_version());
            }
            if !tools {
                continue;
            }
            let slot = entry.session.lock().await;
            let Some(session) = slot.as_ref() else { return };
            match tokio::time::timeout(entry.config.timeout, session.list_all_tools()).await {
                Ok(Ok(tools)) => {
                    let tools = catalog_tools(entry, tools);
                    tracing::info!(server = %entry.config.name, tools = tools.len(), "tool list changed");
                    self.update(entry, |s| s.tools = tools);
                }
                Ok(Err(e)) => tracing::warn!(server = %entry.config.name, "re-listing tools failed: {e}"),
                Err(_) => tracing::warn!(server = %entry.config.name, "re-listing tools timed out"),
            }
        }
    }

    fn entry_named(&self, server: &str) -> Option<Arc<Entry>> {
        let running = self.running.read().unwrap();
        running.entries.iter().find(|e| e.config.name == server).cloned()
    }

    /// The status of `entry`, while it is in the running set.
    fn status_of(&self, entry: &Entry) -> Option<ServerStatus> {
        let running = self.running.read().unwrap();
        let index = running.entries.iter().position(|e| std::ptr::eq(&**e, entry))?;
        Some(self.statuses.borrow()[index].clone())
    }

    /// Whether the config says calls to `tool` on `server` need no approval (`alwaysAllow`).
    pub fn always_allowed(&self, server: &str, tool: &str) -> bool {
        let running = self.running.read().unwrap();
        running
            .entries
            .iter()
            .any(|e| e.config.name == server && e.config.always_allow.iter().any(|t| t == tool))
    }

    /// Calls one tool and splits its result into the model-facing and view-facing values.
    ///
    /// A stdio server whose process has died is started again first. The call is bounded by
    /// the server's timeout (reset while progress arrives, capped at ten times the timeout);
    /// on timeout or cancellation the server is sent `notifications/cancelled`. A remote server
    /// that answers with an OAuth challenge (expired tokens, or a scope the call needs) is
    /// signed in to again and the call is made once more.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<Map<String, Value>>,
        options: CallOptions,
    ) -> Result<ToolOutcome, CallError> {
        match self
            .call_tool_once(server, tool, arguments.clone(), &options, None)
            .await
        {
            Err(CallError::SignInNeeded(challenge)) => {
                let again = self
                    .call_tool_once(server, tool, arguments, &options, Some(challenge))
                    .await;
                match again {
                    Err(CallError::SignInNeeded(_)) => Err(CallError::Server(
                        "the server still refuses the call after signing in again".into(),
                    )),
                    other => other,
                }
            }
            other => other,
        }
    }

    /// The peer and progress dispatcher of a server, connecting first when the connection
    /// is gone (a crashed stdio server is started again) or when asked to sign in again.
    async fn live_session(
        &self,
        entry: &Arc<Entry>,
        sign_in_again: Option<Option<String>>,
    ) -> Result<
        (
            rmcp::Peer<rmcp::RoleClient>,
            progress::ProgressRoutes,
            stdio::ConnectionEnd,
        ),
        CallError,
    > {
        let server = entry.config.name.as_str();
        if !entry.config.enabled {
            return Err(CallError::NotConnected {
                server: server.into(),
                reason: "it is disabled".into(),
            });
        }
        let mut slot = entry.session.lock().await;
        let alive = slot.as_ref().is_some_and(|s| !s.peer().is_transport_closed());
        let sign_in = match sign_in_again {
            Some(challenge) => Some(connection::SignIn::Now(challenge)),
            None if !alive => {
                if slot.is_some() {
                    tracing::warn!(server, "the connection was lost; reconnecting");
                }
                Some(connection::SignIn::IfStored)
            }
            None => None,
        };
        if let Some(sign_in) = sign_in
            && !self.connect_locked(entry, &mut slot, sign_in).await
        {
            let reason = match self.status_of(entry) {
                Some(status) => status.error.unwrap_or_default(),
                None => "its settings changed meanwhile".into(),
            };
            return Err(CallError::NotConnected {
                server: server.into(),
                reason,
            });
        }
        let session = slot.as_ref().expect("connected above");
        Ok((
            session.peer().clone(),
            session.service().progress.clone(),
            session.service().end.clone(),
        ))
    }

    async fn peer_of(&self, server: &str) -> Result<(rmcp::Peer<rmcp::RoleClient>, Duration), CallError> {
        let entry = self
            .entry_named(server)
            .ok_or_else(|| CallError::UnknownServer(server.into()))?;
        let (peer, _, _) = self.live_session(&entry, None).await?;
        Ok((peer, entry.config.timeout))
    }

    /// `resources/read` on one server (for views: their HTML, and what they read themselves).
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<rmcp::model::ReadResourceResult, CallError> {
        let (peer, timeout) = self.peer_of(server).await?;
        let request = peer.read_resource(rmcp::model::ReadResourceRequestParams::new(uri.to_string()));
        request_result(timeout, request).await
    }

    /// Asks `server` to send `notifications/resources/updated` when `uri` changes, when it
    /// offers that (`resources.subscribe`); `false` when it does not or refused.
    pub async fn subscribe_resource(&self, server: &str, uri: &str) -> bool {
        let Ok((peer, timeout)) = self.peer_of(server).await else {
            return false;
        };
        let offers = peer
            .peer_info()
            .and_then(|info| info.capabilities.resources.as_ref().and_then(|r| r.subscribe))
            .unwrap_or(false);
        if !offers {
            return false;
        }
        // Servers of 2025-era revisions subscribe this way (2026-07-28 ones offer no `subscribe`).
        #[allow(deprecated)]
        let request = peer.subscribe(rmcp::model::SubscribeRequestParams::new(uri.to_string()));
        matches!(tokio::time::timeout(timeout, request).await, Ok(Ok(_)))
    }

    /// The enabled servers that name files or folders to watch (hot reload), with them.
    pub fn watched(&self) -> Vec<(String, Vec<PathBuf>)> {
        let running = self.running.read().unwrap();
        running
            .entries
            .iter()
            .filter(|e| e.config.enabled && !e.config.watch.is_empty())
            .map(|e| (e.config.name.clone(), e.config.watch.clone()))
            .collect()
    }

    /// `server`'s traffic log (made the first time; kept across its connections).
    pub fn traffic(&self, server: &str) -> traffic::Traffic {
        let mut all = self.traffic.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        all.entry(server.to_string()).or_default().clone()
    }

    /// What a connected server said of itself when the session started.
    pub async fn details(&self, server: &str) -> Result<ServerDetails, CallError> {
        let (peer, _) = self.peer_of(server).await?;
        let info = peer.peer_info().ok_or_else(|| CallError::NotConnected {
            server: server.to_string(),
            reason: "it has not finished starting".into(),
        })?;
        let server_info = info.server_info.as_ref();
        Ok(ServerDetails {
            name: server_info.map(|i| i.name.clone()).unwrap_or_default(),
            title: server_info.and_then(|i| i.title.clone()),
            version: server_info.map(|i| i.version.clone()).unwrap_or_default(),
            protocol_version: info.protocol_version.to_string(),
            capabilities: serde_json::to_value(&info.capabilities).unwrap_or_default(),
            instructions: info.instructions.clone(),
        })
    }

    /// `ping`, and how long the answer took.
    pub async fn ping(&self, server: &str) -> Result<std::time::Duration, CallError> {
        let (peer, timeout) = self.peer_of(server).await?;
        let started = std::time::Instant::now();
        let request = peer.send_request(rmcp::model::ClientRequest::PingRequest(Default::default()));
        request_result(timeout, request).await?;
        Ok(started.elapsed())
    }

    /// The `resources_version` of `server` (see [`ServerStatus`]), while it is configured.
    pub fn resources_version(&self, server: &str) -> Option<u64> {
        self.statuses
            .borrow()
            .iter()
            .find(|s| s.name == server)
            .map(|s| s.resources_version)
    }

    /// `tools/list`, all pages, as the server sent them (the catalog keeps its own reading).
    pub async fn list_tools(&self, server: &str) -> Result<Vec<rmcp::model::Tool>, CallError> {
        let (peer, timeout) = self.peer_of(server).await?;
        request_result(timeout, peer.list_all_tools()).await
    }

    /// `resources/list`, all pages.
    pub async fn list_resources(&self, server: &str) -> Result<Vec<rmcp::model::Resource>, CallError> {
        let (peer, timeout) = self.peer_of(server).await?;
        request_result(timeout, peer.list_all_resources()).await
    }

    /// `resources/templates/list`, all pages.
    pub async fn list_resource_templates(&self, server: &str) -> Result<Vec<rmcp::model::ResourceTemplate>, CallError> {
        let (peer, timeout) = self.peer_of(server).await?;
        request_result(timeout, peer.list_all_resource_templates()).await
    }

    /// `prompts/list`, all pages.
    pub async fn list_prompts(&self, server: &str) -> Result<Vec<rmcp::model::Prompt>, CallError> {
        let (peer, timeout) = self.peer_of(server).await?;
        request_result(timeout, peer.list_all_prompts()).await
    }

    /// `prompts/get`.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<rmcp::model::GetPromptResult, CallError> {
        let (peer, timeout) = self.peer_of(server).await?;
        let mut params = rmcp::model::GetPromptRequestParams::new(name.to_string());
        params.arguments = arguments;
        request_result(timeout, peer.get_prompt(params)).await
    }

    /// `completion/complete`: suggestions for one argument of a prompt (`Completing::Prompt`)
    /// or of a resource template (`Completing::Resource`), given the other arguments so far.
    /// A server that does not offer completions gives none.
    pub async fn complete(
        &self,
        server: &str,
        completing: Completing,
        argument: &str,
        value: &str,
        context: std::collections::HashMap<String, String>,
    ) -> Result<Vec<String>, CallError> {
        if !self.offers(server, Offer::Completions).await {
            return Ok(Vec::new());
        }
        let (peer, timeout) = self.peer_of(server).await?;
        let reference = match completing {
            Completing::Prompt(name) => rmcp::model::Reference::for_prompt(name),
            Completing::Resource(template) => rmcp::model::Reference::for_resource(template),
        };
        let mut params =
            rmcp::model::CompleteRequestParams::new(reference, rmcp::model::ArgumentInfo::new(argument, value));
        if !context.is_empty() {
            params = params.with_context(rmcp::model::CompletionContext::with_arguments(context));
        }
        let result = request_result(timeout, peer.complete(params)).await?;
        Ok(result.completion.values)
    }

    /// Whether a connected server offers `what` (from the capabilities it declared).
    pub async fn offers(&self, server: &str, what: Offer) -> bool {
        let Some(entry) = self.entry_named(server) else {
            return false;
        };
        // A server still connecting holds its session's lock: it offers nothing yet.
        if self.status_of(&entry).is_none_or(|s| s.state != ServerState::Connected) {
            return false;
        }
        let session = entry.session.lock().await;
        let Some(caps) = session
            .as_ref()
            .and_then(|s| s.peer().peer_info().map(|info| info.capabilities.clone()))
        else {
            return false;
        };
        match what {
            Offer::Prompts => caps.prompts.is_some(),
            Offer::Resources => caps.resources.is_some(),
            Offer::Completions => caps.completions.is_some(),
        }
    }

    async fn call_tool_once(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<Map<String, Value>>,
        options: &CallOptions,
        sign_in_again: Option<Option<String>>,
    ) -> Result<ToolOutcome, CallError> {
        let entry = self
            .entry_named(server)
            .ok_or_else(|| CallError::UnknownServer(server.into()))?;
        let timeout = options.timeout.unwrap_or(entry.config.timeout);
        let (peer, dispatcher, end) = self.live_session(&entry, sign_in_again).await?;
        let has_tool = self
            .status_of(&entry)
            .is_some_and(|s| s.tools.iter().any(|t| t.name == tool));
        if !has_tool {
            return Err(CallError::UnknownTool {
                server: server.into(),
                tool: tool.into(),
            });
        }

        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = arguments;
        let request_options = PeerRequestOptions::with_timeout(timeout)
            .reset_timeout_on_progress()
            .with_max_total_timeout(timeout * 10);
        let handle = peer
            .send_cancellable_request(ClientRequest::CallToolRequest(Request::new(params)), request_options)
            .await
            .map_err(|e| match end.reason() {
                Some(reason) => CallError::Stopped(reason),
                None => CallError::Connection(e.to_string()),
            })?;
        let request_id = handle.id.clone();
        // Progress goes straight to the caller's channel as the connection reads it, so when
        // the result is here every notification sent before it already is too, in order.
        let subscription = options
            .progress
            .clone()
            .map(|to| dispatcher.subscribe(handle.progress_token.clone(), to));
        let response = tokio::select! {
            r = handle.await_response() => Some(r),
            _ = options.cancel.cancelled() => None,
        };
        drop(subscription);
        match response {
            None => {
                let notified = peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(request_id),
                        Some("cancelled by the user".into()),
                    ))
                    .await;
                // The call is over for us either way; a server we cannot tell may finish the
                // work and its answer is dropped.
                if let Err(e) = notified {
                    tracing::debug!(server, tool, "could not tell the server the call was cancelled: {e}");
                }
                Err(CallError::Cancelled)
            }
            Some(Ok(ServerResult::CallToolResult(result))) => {
                // A server marked failed by an earlier call (an HTTP server that restarted, say,
                // and that the transport re-initialized) is plainly back.
                if self.status_of(&entry).is_some_and(|s| s.state == ServerState::Failed) {
                    self.update(&entry, |s| {
                        s.state = ServerState::Connected;
                        s.error = None;
                    });
                }
                Ok(ToolOutcome::split(&result))
            }
            Some(Ok(other)) => Err(CallError::Server(format!("unexpected answer to tools/call: {other:?}"))),
            Some(Err(ServiceError::Timeout { timeout })) => Err(CallError::Timeout(timeout)),
            Some(Err(ServiceError::McpError(e))) => Err(CallError::Server(e.message.to_string())),
            Some(Err(e))
                if (e.is_authorization_required() || e.auth_challenge().is_some()) && self.options.oauth.is_some() =>
            {
                Err(CallError::SignInNeeded(e.auth_challenge().map(str::to_string)))
            }
            Some(Err(e)) => {
                // A stdio server that broke the connection says how (it exited, crashed, …).
                if let Some(reason) = end.reason() {
                    self.update(&entry, |s| {
                        s.state = ServerState::Failed;
                        s.error = Some(reason.clone());
                    });
                    return Err(CallError::Stopped(reason));
                }
                let reason = redact::text(&e.to_string()).into_owned();
                self.update(&entry, |s| {
                    s.state = ServerState::Failed;
                    s.error = Some(format!("the connection was lost: {reason}"));
                });
                Err(CallError::Connection(reason))
            }
        }
    }

    /// Changes the status of `entry`; nothing happens when it has left the running set. The
    /// error it is left with has its credentials redacted (it is shown and logged).
    fn update(&self, entry: &Entry, change: impl FnOnce(&mut ServerStatus)) {
        let running = self.running.read().unwrap();
        let Some(index) = running.entries.iter().position(|e| std::ptr::eq(&**e, entry)) else {
            return;
        };
        self.statuses.send_modify(|all| {
            let status = &mut all[index];
            change(status);
            if let Some(error) = &mut status.error
                && let Cow::Owned(redacted) = redact::text(error)
            {
                *error = redacted;
            }
            assign_model_names(all);
        });
    }

    /// The roots changed: every connected server is told (`notifications/roots/list_changed`)
    /// and asks again when it wants them.
    pub async fn roots_changed(&self) {
        let entries = self.running.read().unwrap().entries.clone();
        for entry in entries {
            let peer = entry.session.lock().await.as_ref().map(|s| s.peer().clone());
            if let Some(peer) = peer
                && let Err(e) = peer.notify_roots_list_changed().await
            {
                tracing::debug!(server = %entry.config.name, "could not tell the server its roots changed: {e}");
            }
        }
    }

    /// Each server's state now.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.statuses.borrow().clone()
    }

    /// The state of server `name` now, if there is one so named.
    pub fn status(&self, name: &str) -> Option<ServerStatus> {
        self.statuses.borrow().iter().find(|s| s.name == name).cloned()
    }

    /// A receiver that sees every change of state.
    pub fn subscribe(&self) -> watch::Receiver<Vec<ServerStatus>> {
        self.statuses.subscribe()
    }

    /// Waits until no server is still connecting, and returns the states.
    pub async fn settled(&self) -> Vec<ServerStatus> {
        let mut rx = self.subscribe();
        let result = rx
            .wait_for(|all| all.iter().all(|s| s.state != ServerState::Connecting))
            .await
            .map(|all| all.clone());
        result.unwrap_or_else(|_| self.statuses())
    }

    /// Closes every connection; stdio servers are asked to exit, then stopped.
    pub async fn shutdown(&self) {
        let entries = self.running.read().unwrap().entries.clone();
        // A server still starting is abandoned now, not waited for (its attempt holds the
        // session until it connects or times out: a minute, for a slow `npx` server).
        for entry in &entries {
            entry.retired.cancel();
        }
        // All at once: a server slow to exit holds no other back.
        futures::future::join_all(entries.iter().map(|e| close(e))).await;
    }
}

/// Awaits one request with a time limit, in the words of [`CallError`].
async fn request_result<T>(
    timeout: Duration,
    request: impl std::future::Future<Output = Result<T, ServiceError>>,
) -> Result<T, CallError> {
    match tokio::time::timeout(timeout, request).await {
        Err(_) => Err(CallError::Timeout(timeout)),
        Ok(Ok(value)) => Ok(value),
        Ok(Err(ServiceError::McpError(e))) => Err(CallError::Server(e.message.to_string())),
        Ok(Err(e)) => Err(CallError::Connection(e.to_string())),
    }
}
