//! Remote AG-UI agents in the app: the config's `agents`, a conversation's agent (chosen when
//! it starts, kept with it), and the MCP servers behind an agent whose views it offers.
//!
//! A remote agent's view is an ordinary view ([`crate::views`]): the same checks, CSP, isolated
//! frame, bridge and audit. Only its server is elsewhere: [`RemoteViewServer`] reaches it through
//! the agent (the MCP Apps middleware's proxied MCP requests), so its HTML is read, and the
//! view's calls are made, by the agent on Porthole's behalf.

use std::sync::{Arc, Mutex};

use porthole_agent::RemoteView;
use porthole_agent::agui::{ProxiedServer, RemoteAgent};
use porthole_apps::resource::{LoadedView, Refusal, load_view_from};
use porthole_mcp::config::AgentConfig;
use porthole_mcp::config_file::{AgentDraft, ConfigFile};
use porthole_mcp::{Audience, CatalogTool, LoadedConfig};
use serde::Serialize;
use serde_json::{Map, Value, json};
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};

/// A remote agent of the config, as the window lists it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentSummary {
    pub name: String,
    /// Its URL, credentials taken out.
    pub url: String,
}

/// A remote agent as the settings list it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentEntry {
    pub name: String,
    /// Its URL as written (placeholders unfilled), credentials taken out.
    pub url: String,
    /// The headers it is sent, by name only (their values may be secrets).
    pub header_names: Vec<String>,
    /// The config file that sets it.
    pub file: String,
    /// Set in the profile's own file, which the settings change (other files are only read).
    pub editable: bool,
}

impl Host {
    /// The remote agents of every config file, as the settings list them (a name set again in
    /// a later file is that file's).
    pub fn agent_settings(&self) -> Vec<AgentEntry> {
        let mut entries: Vec<AgentEntry> = Vec::new();
        for (i, path) in self.inner.config_files.files.iter().enumerate() {
            let Ok(file) = ConfigFile::read(path) else { continue };
            for (name, entry) in file.agents() {
                entries.retain(|e| e.name != name);
                let text = |key: &str| entry.get(key).and_then(serde_json::Value::as_str).unwrap_or_default();
                entries.push(AgentEntry {
                    name: name.to_string(),
                    url: porthole_secrets::redact::url(text("url")),
                    header_names: entry
                        .get("headers")
                        .and_then(serde_json::Value::as_object)
                        .map(|h| h.keys().cloned().collect())
                        .unwrap_or_default(),
                    file: path.display().to_string(),
                    editable: i == 0,
                });
            }
        }
        entries
    }

    /// Adds a remote agent to the profile's config file (`original` absent), or changes one
    /// set there (possibly renaming it). Refused with every reason when the form is invalid.
    pub async fn save_agent(&self, original: Option<&str>, draft: &AgentDraft) -> AppResult<Vec<AgentEntry>> {
        let known = self.agent_settings();
        if let Some(original) = original {
            agent_editable(&known, original)?;
        }
        let taken: Vec<String> = known.into_iter().map(|a| a.name).collect();
        self.change_config(|profile, _| {
            profile.save_agent(original, draft, &taken).map_err(|problems| {
                AppError::invalid(problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))
            })
        })
        .await?;
        Ok(self.agent_settings())
    }

    /// Removes a remote agent from the profile's config file. Its conversations stay; they say
    /// the agent is no longer in the config when a message is sent.
    pub async fn remove_agent(&self, name: &str) -> AppResult<Vec<AgentEntry>> {
        agent_editable(&self.agent_settings(), name)?;
        self.change_config(|profile, _| profile.remove_agent(name).map_err(AppError::invalid))
            .await?;
        Ok(self.agent_settings())
    }

    /// The config's remote agents, as the files say now.
    pub(crate) fn agent_configs(&self) -> Vec<AgentConfig> {
        LoadedConfig::load(&self.inner.config_files.files).agents
    }

    /// The remote AG-UI agents a conversation can be with.
    pub fn list_agents(&self) -> Vec<AgentSummary> {
        self.agent_configs()
            .into_iter()
            .map(|a| AgentSummary {
                url: porthole_secrets::redact::url(&a.url),
                name: a.name,
            })
            .collect()
    }

    /// The agent named `name` in the config.
    pub(crate) fn remote_agent(&self, name: &str) -> AppResult<RemoteAgent> {
        let agents = self.agent_configs();
        let known: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
        agents
            .iter()
            .find(|a| a.name == name)
            .cloned()
            .map(RemoteAgent::new)
            .ok_or_else(|| {
                AppError::not_found(format!(
                    "no agent named {name:?} in the config{}",
                    if known.is_empty() {
                        " (it has no \"agents\")".to_string()
                    } else {
                        format!(" (it has {})", known.join(", "))
                    }
                ))
            })
    }
}

/// Whether agent `name` is set in the profile's own file (the one the settings change).
fn agent_editable(known: &[AgentEntry], name: &str) -> AppResult<()> {
    match known.iter().find(|a| a.name == name) {
        Some(a) if a.editable => Ok(()),
        Some(a) => Err(AppError::forbidden(format!(
            "{name:?} is set in {}, which Porthole does not change; edit that file",
            a.file
        ))),
        None => Err(AppError::not_found(format!("no agent named {name:?}"))),
    }
}

/// An MCP server behind a remote agent, which a view of the agent's reaches through it.
pub struct RemoteViewServer {
    agent: RemoteAgent,
    /// The conversation (the AG-UI thread) the view belongs to.
    thread_id: String,
    server: ProxiedServer,
    /// Its name in Porthole: `<agent>/<server id or hash>`.
    name: String,
    /// Its tools, when the agent answers a proxied `tools/list` (the published middleware does
    /// not: then only what a call says is known).
    tools: Mutex<Option<Vec<CatalogTool>>>,
}

impl RemoteViewServer {
    fn new(agent: RemoteAgent, thread_id: &str, name: &str, server: ProxiedServer) -> Arc<RemoteViewServer> {
        Arc::new(RemoteViewServer {
            agent,
            thread_id: thread_id.to_string(),
            server,
            name: name.to_string(),
            tools: Mutex::new(None),
        })
    }

    /// The server of a view the agent offers in a turn.
    pub fn of_view(agent: RemoteAgent, thread_id: &str, name: &str, view: &RemoteView) -> Arc<RemoteViewServer> {
        RemoteViewServer::new(agent, thread_id, name, ProxiedServer::of(view))
    }

    /// The server of a stored view: its name is `<agent>/<label>`.
    pub fn of_stored(agent: RemoteAgent, thread_id: &str, name: &str) -> Option<Arc<RemoteViewServer>> {
        let label = name.strip_prefix(&format!("{}/", agent.config.name))?;
        Some(RemoteViewServer::new(
            agent,
            thread_id,
            name,
            ProxiedServer::from_label(label),
        ))
    }

    /// An MCP request to the server, through the agent.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        self.agent.proxied(&self.thread_id, &self.server, method, params).await
    }

    /// The view's HTML, read through the agent and checked as a local server's is.
    pub async fn load(&self, uri: &str) -> Result<LoadedView, Refusal> {
        load_view_from(&self.name, uri, self.request("resources/read", json!({"uri": uri}))).await
    }

    /// Asks the server's tools once (a proxied `tools/list`); an agent that refuses it leaves
    /// them unknown.
    pub async fn learn_tools(&self) {
        if self.tools.lock().unwrap().is_some() {
            return;
        }
        match self.request("tools/list", json!({})).await {
            Ok(listed) => {
                let tools: Vec<CatalogTool> = listed
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|t| self.listed_tool(t))
                    .collect();
                *self.tools.lock().unwrap() = Some(tools);
            }
            Err(e) => tracing::debug!(server = %self.name, "the agent does not list its server's tools: {e}"),
        }
    }

    fn listed_tool(&self, tool: &Value) -> Option<CatalogTool> {
        let name = tool.get("name")?.as_str()?.to_string();
        let link = porthole_mcp::catalog::read_ui_meta(tool.get("_meta").and_then(Value::as_object));
        Some(CatalogTool {
            server: self.name.clone(),
            model_name: name.clone(),
            name,
            title: tool.get("title").and_then(Value::as_str).map(String::from),
            description: tool.get("description").and_then(Value::as_str).map(String::from),
            input_schema: tool
                .get("inputSchema")
                .cloned()
                .unwrap_or_else(|| json!({"type": "object"})),
            ui_resource_uri: link.resource_uri,
            visibility: link.visibility,
            widget: link.widget,
            meta_problems: link.problems,
        })
    }

    /// The tool as far as Porthole knows it: listed, else one a view may call (what the
    /// server would refuse, it refuses).
    pub fn tool(&self, name: &str) -> Option<CatalogTool> {
        match &*self.tools.lock().unwrap() {
            Some(tools) => tools.iter().find(|t| t.name == name).cloned(),
            None => Some(self.unlisted(name)),
        }
    }

    /// A tool not listed: visible to the model (the agent called it) and to views.
    fn unlisted(&self, name: &str) -> CatalogTool {
        CatalogTool {
            server: self.name.clone(),
            name: name.to_string(),
            model_name: name.to_string(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            ui_resource_uri: None,
            visibility: vec![Audience::Model, Audience::App],
            widget: Default::default(),
            meta_problems: Vec::new(),
        }
    }

    /// The tools listed, if the agent listed them.
    pub fn tools(&self) -> Option<Vec<CatalogTool>> {
        self.tools.lock().unwrap().clone()
    }

    /// The tool a view of `uri` belongs to, for the view's `toolInfo`.
    pub fn tool_with_view(&self, name: &str, uri: &str) -> CatalogTool {
        let mut tool = self.tool(name).unwrap_or_else(|| self.unlisted(name));
        tool.ui_resource_uri = Some(uri.to_string());
        tool
    }

    /// `tools/call` through the agent: the whole `CallToolResult`.
    pub async fn call_tool(&self, tool: &str, arguments: Option<Map<String, Value>>) -> Result<Value, String> {
        self.request(
            "tools/call",
            json!({"name": tool, "arguments": arguments.unwrap_or_default()}),
        )
        .await
    }
}
