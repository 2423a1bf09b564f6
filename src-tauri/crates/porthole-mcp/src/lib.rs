//! Porthole's MCP side, with no Tauri dependency: server configuration, connections, and the
//! tool catalog that the model and the views are offered.
//!
//! [`Servers`] connects to every configured server in parallel (one slow or dead server never
//! holds the others back) and publishes each server's state through a `watch` channel that the
//! desktop shell and the CLI both read.

pub mod catalog;
pub mod config;
pub mod connection;
pub mod oauth;
pub mod outcome;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use rmcp::model::{CallToolRequestParams, CancelledNotificationParam, ClientRequest, Request, ServerResult};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{Mutex, mpsc, watch};
use tokio_util::sync::CancellationToken;

pub use catalog::{Audience, CatalogTool};
pub use config::{ConfigProblem, LoadedConfig, ServerConfig, Transport};
pub use connection::{
    ElicitationAnswer, ElicitationPolicy, ElicitationRequest, MCP_APP_MIME, MCP_APPS_EXTENSION, Session,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    Disabled,
    Connecting,
    Connected,
    Failed,
}

/// What the user sees of one server.
#[derive(Debug, Clone, Serialize)]
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
    /// How remote servers that require OAuth are signed in to; `None`: they fail with the reason.
    pub oauth: Option<oauth::OAuth>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            mcp_apps: true,
            server_log_dir: None,
            elicitation: ElicitationPolicy::Decline,
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
    session: Mutex<Option<Session>>,
}

/// All configured servers and their connections.
#[derive(Clone)]
pub struct Servers {
    entries: Arc<Vec<Entry>>,
    statuses: Arc<watch::Sender<Vec<ServerStatus>>>,
    options: ConnectOptions,
}

fn endpoint(config: &ServerConfig) -> String {
    match &config.transport {
        Transport::Stdio { command, args, .. } => {
            let mut s = format!("stdio: {command}");
            for a in args {
                s.push(' ');
                s.push_str(a);
            }
            s
        }
        Transport::StreamableHttp { url, .. } => url.clone(),
    }
}

impl Servers {
    /// Starts connecting to every enabled server at once and returns immediately; watch
    /// [`Servers::subscribe`] or await [`Servers::settled`] for the outcome.
    pub fn start(configs: Vec<ServerConfig>, options: ConnectOptions) -> Servers {
        let initial = configs
            .iter()
            .map(|c| ServerStatus {
                name: c.name.clone(),
                state: if c.enabled {
                    ServerState::Connecting
                } else {
                    ServerState::Disabled
                },
                error: None,
                endpoint: endpoint(c),
                server_info: None,
                protocol_version: None,
                mcp_apps: options.mcp_apps && c.mcp_apps,
                tools: Vec::new(),
            })
            .collect();
        let servers = Servers {
            entries: Arc::new(
                configs
                    .into_iter()
                    .map(|config| Entry {
                        config,
                        session: Mutex::new(None),
                    })
                    .collect(),
            ),
            statuses: Arc::new(watch::channel(initial).0),
            options,
        };
        for index in 0..servers.entries.len() {
            if servers.entries[index].config.enabled {
                let this = servers.clone();
                tokio::spawn(async move { this.connect_one(index).await });
            }
        }
        servers
    }

    /// Connects (or reconnects) server `index`, lists its tools and publishes the result.
    /// Returns whether it is connected. The caller holds the server's session lock.
    async fn connect_locked(&self, index: usize, slot: &mut Option<Session>, sign_in: connection::SignIn) -> bool {
        let entry = &self.entries[index];
        let config = &entry.config;
        let advertise = self.advertises_mcp_apps(index);
        if let Some(old) = slot.take() {
            let _ = old.cancel().await;
        }
        let (changed_tx, changed_rx) = mpsc::unbounded_channel();
        let outcome = async {
            let mut sign_in = sign_in;
            loop {
                let session = connection::connect(
                    config,
                    advertise,
                    self.options.server_log_dir.as_deref(),
                    self.options.elicitation.clone(),
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
                        let _ = session.cancel().await;
                    }
                    Err(e) => return Err(format!("tools/list failed: {e}")),
                }
            }
        }
        .await;
        match outcome {
            Ok((session, (info, version), tools)) => {
                let tools = self.catalog_tools(index, tools);
                tracing::info!(server = %config.name, tools = tools.len(), "connected");
                *slot = Some(session);
                self.update(index, |s| {
                    s.state = ServerState::Connected;
                    s.error = None;
                    s.server_info = info;
                    s.protocol_version = version;
                    s.tools = tools;
                });
                let this = self.clone();
                tokio::spawn(async move { this.follow_tool_changes(index, changed_rx).await });
                true
            }
            Err(error) => {
                tracing::warn!(server = %config.name, %error, "cannot connect");
                self.update(index, |s| {
                    s.state = ServerState::Failed;
                    s.error = Some(error);
                    s.tools.clear();
                });
                false
            }
        }
    }

    /// Whether server `index` is told about MCP Apps: the global switch and its own are both on.
    fn advertises_mcp_apps(&self, index: usize) -> bool {
        self.options.mcp_apps && self.entries[index].config.mcp_apps
    }

    async fn connect_one(&self, index: usize) {
        let mut slot = self.entries[index].session.lock().await;
        self.connect_locked(index, &mut slot, connection::SignIn::IfStored)
            .await;
    }

    fn catalog_tools(&self, index: usize, tools: Vec<rmcp::model::Tool>) -> Vec<CatalogTool> {
        let config = &self.entries[index].config;
        let advertise = self.advertises_mcp_apps(index);
        tools
            .into_iter()
            .map(|t| {
                let link = catalog::read_ui_meta(t.meta.as_ref().map(|m| &m.0));
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
                    ui_resource_uri: if advertise { link.resource_uri } else { None },
                    visibility: if advertise {
                        link.visibility
                    } else {
                        vec![Audience::Model]
                    },
                    meta_problems: link.problems,
                }
            })
            .collect()
    }

    /// Re-lists a server's tools each time it sends `notifications/tools/list_changed`, until
    /// that connection ends.
    async fn follow_tool_changes(&self, index: usize, mut changed: mpsc::UnboundedReceiver<()>) {
        let entry = &self.entries[index];
        while changed.recv().await.is_some() {
            while changed.try_recv().is_ok() {}
            let slot = entry.session.lock().await;
            let Some(session) = slot.as_ref() else { return };
            match tokio::time::timeout(entry.config.timeout, session.list_all_tools()).await {
                Ok(Ok(tools)) => {
                    let tools = self.catalog_tools(index, tools);
                    tracing::info!(server = %entry.config.name, tools = tools.len(), "tool list changed");
                    self.update(index, |s| s.tools = tools);
                }
                Ok(Err(e)) => tracing::warn!(server = %entry.config.name, "re-listing tools failed: {e}"),
                Err(_) => tracing::warn!(server = %entry.config.name, "re-listing tools timed out"),
            }
        }
    }

    fn index_of(&self, server: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.config.name == server)
    }

    /// Whether the config says calls to `tool` on `server` need no approval (`alwaysAllow`).
    pub fn always_allowed(&self, server: &str, tool: &str) -> bool {
        self.entries
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

    /// The peer and progress dispatcher of server `index`, connecting first when the connection
    /// is gone (a crashed stdio server is started again) or when asked to sign in again.
    async fn live_session(
        &self,
        index: usize,
        sign_in_again: Option<Option<String>>,
    ) -> Result<
        (
            rmcp::Peer<rmcp::RoleClient>,
            rmcp::handler::client::progress::ProgressDispatcher,
        ),
        CallError,
    > {
        let entry = &self.entries[index];
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
            && !self.connect_locked(index, &mut slot, sign_in).await
        {
            let reason = self.statuses.borrow()[index].error.clone().unwrap_or_default();
            return Err(CallError::NotConnected {
                server: server.into(),
                reason,
            });
        }
        let session = slot.as_ref().expect("connected above");
        Ok((session.peer().clone(), session.service().progress.clone()))
    }

    async fn peer_of(&self, server: &str) -> Result<(rmcp::Peer<rmcp::RoleClient>, Duration), CallError> {
        let index = self
            .index_of(server)
            .ok_or_else(|| CallError::UnknownServer(server.into()))?;
        let (peer, _) = self.live_session(index, None).await?;
        Ok((peer, self.entries[index].config.timeout))
    }

    /// `resources/read` on one server (for views: their HTML, and what they read themselves).
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<rmcp::model::ReadResourceResult, CallError> {
        let (peer, timeout) = self.peer_of(server).await?;
        let request = peer.read_resource(rmcp::model::ReadResourceRequestParams::new(uri.to_string()));
        request_result(timeout, request).await
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

    async fn call_tool_once(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<Map<String, Value>>,
        options: &CallOptions,
        sign_in_again: Option<Option<String>>,
    ) -> Result<ToolOutcome, CallError> {
        let index = self
            .index_of(server)
            .ok_or_else(|| CallError::UnknownServer(server.into()))?;
        let timeout = options.timeout.unwrap_or(self.entries[index].config.timeout);
        let (peer, dispatcher) = self.live_session(index, sign_in_again).await?;
        if !self.statuses.borrow()[index].tools.iter().any(|t| t.name == tool) {
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
            .map_err(|e| CallError::Connection(e.to_string()))?;
        let request_id = handle.id.clone();
        let token = handle.progress_token.clone();
        // Only a caller that wants progress gets a subscription (and pays for draining it).
        let progress_seen = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let relay = match options.progress.clone() {
            Some(forward) => {
                let mut progress = dispatcher.subscribe(token.clone()).await;
                let seen = progress_seen.clone();
                Some(tokio::spawn(async move {
                    while let Some(p) = progress.next().await {
                        seen.store(true, std::sync::atomic::Ordering::Relaxed);
                        let _ = forward.send(Progress {
                            progress: p.progress,
                            total: p.total,
                            message: p.message.clone(),
                        });
                    }
                }))
            }
            None => None,
        };
        let response = tokio::select! {
            r = handle.await_response() => Some(r),
            _ = options.cancel.cancelled() => None,
        };
        if let Some(mut relay) = relay {
            // rmcp runs notification handlers on their own tasks, so a progress notification sent
            // just before the result may still be on its way: when the server has been sending
            // progress, give it a moment, then close the subscription and let the relay drain
            // what arrived. (A call that reported no progress pays nothing.)
            if progress_seen.load(std::sync::atomic::Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(2)).await;
            } else {
                tokio::task::yield_now().await;
            }
            dispatcher.unsubscribe(&token).await;
            if tokio::time::timeout(Duration::from_millis(200), &mut relay)
                .await
                .is_err()
            {
                relay.abort();
            }
        }
        match response {
            None => {
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(request_id),
                        Some("cancelled by the user".into()),
                    ))
                    .await;
                Err(CallError::Cancelled)
            }
            Some(Ok(ServerResult::CallToolResult(result))) => {
                // A server marked failed by an earlier call (an HTTP server that restarted, say,
                // and that the transport re-initialized) is plainly back.
                if self.statuses.borrow()[index].state == ServerState::Failed {
                    self.update(index, |s| {
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
                let reason = format!("{e}");
                self.update(index, |s| {
                    s.state = ServerState::Failed;
                    s.error = Some(format!("the connection was lost: {reason}"));
                });
                Err(CallError::Connection(reason))
            }
        }
    }

    fn update(&self, index: usize, change: impl FnOnce(&mut ServerStatus)) {
        self.statuses.send_modify(|all| {
            change(&mut all[index]);
            let mut tools: Vec<CatalogTool> = all.iter_mut().flat_map(|s| s.tools.drain(..)).collect();
            catalog::assign_model_names(&mut tools);
            for tool in tools {
                if let Some(s) = all.iter_mut().find(|s| s.name == tool.server) {
                    s.tools.push(tool);
                }
            }
        });
    }

    /// Each server's state now.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.statuses.borrow().clone()
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
        for entry in self.entries.iter() {
            if let Some(session) = entry.session.lock().await.take() {
                let _ = session.cancel().await;
            }
        }
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
