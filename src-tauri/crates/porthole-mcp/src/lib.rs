//! Porthole's MCP side, with no Tauri dependency: server configuration, connections, and the
//! tool catalog that the model and the views are offered.
//!
//! [`Servers`] connects to every configured server in parallel (one slow or dead server never
//! holds the others back) and publishes each server's state through a `watch` channel that the
//! desktop shell and the CLI both read.

pub mod catalog;
pub mod config;
pub mod connection;

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::{Mutex, watch};

pub use catalog::{Audience, CatalogTool};
pub use config::{ConfigProblem, LoadedConfig, ServerConfig, Transport};
pub use connection::{MCP_APP_MIME, MCP_APPS_EXTENSION, Session};

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
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            mcp_apps: true,
            server_log_dir: None,
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

    async fn connect_one(&self, index: usize) {
        let entry = &self.entries[index];
        let config = &entry.config;
        let advertise = self.options.mcp_apps && config.mcp_apps;
        let outcome = async {
            let session = connection::connect(config, advertise, self.options.server_log_dir.as_deref())
                .await
                .map_err(|e| e.to_string())?;
            let info = session
                .peer()
                .peer_info()
                .and_then(|i| i.server_info.as_ref().map(|s| format!("{} {}", s.name, s.version)));
            let tools = tokio::time::timeout(config.timeout, session.list_all_tools())
                .await
                .map_err(|_| format!("tools/list got no answer within {:?}", config.timeout))?
                .map_err(|e| format!("tools/list failed: {e}"))?;
            Ok::<_, String>((session, info, tools))
        }
        .await;
        match outcome {
            Ok((session, info, tools)) => {
                let tools: Vec<CatalogTool> = tools
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
                            input_schema: serde_json::Value::Object((*t.input_schema).clone()),
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
                    .collect();
                tracing::info!(server = %config.name, tools = tools.len(), "connected");
                *entry.session.lock().await = Some(session);
                self.update(index, |s| {
                    s.state = ServerState::Connected;
                    s.error = None;
                    s.server_info = info;
                    s.tools = tools;
                });
            }
            Err(error) => {
                tracing::warn!(server = %config.name, %error, "cannot connect");
                self.update(index, |s| {
                    s.state = ServerState::Failed;
                    s.error = Some(error);
                    s.tools.clear();
                });
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

    /// The tools the model would be offered: connected servers' tools whose visibility includes
    /// `"model"`.
    pub fn model_tools(&self) -> Vec<CatalogTool> {
        self.statuses
            .borrow()
            .iter()
            .flat_map(|s| s.tools.iter().filter(|t| t.visible_to_model()).cloned())
            .collect()
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
