//! The workbench's server inspector, for people testing a server by hand: what a server said of
//! itself, a ping with its round trip, every JSON-RPC message of its connections (the traffic
//! log: summaries, one message's JSON, all of it as JSON lines to a file), subscribing to a
//! resource, and a prompt's messages shown before they are used. Tools, resources and
//! completion go through the same host paths as the chat's tools panel and composer.

use std::collections::HashMap;

use porthole_mcp::ServerDetails;
use porthole_mcp::traffic::TrafficEntry;
use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};

/// A prompt's messages as the server gave them (`prompts/get`), before they are used.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptPreview {
    pub description: Option<String>,
    /// Each message: `role` and `content` (text, image, audio, resource or resource link).
    pub messages: Vec<Value>,
}

impl Host {
    fn known_server(&self, server: &str) -> AppResult<()> {
        if self.inner.servers.status(server).is_some() {
            Ok(())
        } else {
            Err(AppError::not_found(format!("no server named {server}")))
        }
    }

    /// What `server` said of itself: name, version, the protocol revision agreed, its
    /// capabilities and instructions.
    pub async fn server_details(&self, server: &str) -> AppResult<ServerDetails> {
        self.known_server(server)?;
        self.inner
            .servers
            .details(server)
            .await
            .map_err(|e| AppError::server(format!("{server}: {e}")))
    }

    /// Pings `server`; resolves to the round trip in milliseconds.
    pub async fn ping_server(&self, server: &str) -> AppResult<f64> {
        self.known_server(server)?;
        let took = self
            .inner
            .servers
            .ping(server)
            .await
            .map_err(|e| AppError::server(format!("{server} did not answer the ping: {e}")))?;
        Ok(took.as_secs_f64() * 1000.0)
    }

    /// The messages of `server`'s traffic log after `after` (0: every one kept), oldest first.
    pub fn server_traffic(&self, server: &str, after: u64) -> AppResult<Vec<TrafficEntry>> {
        self.known_server(server)?;
        Ok(self.inner.servers.traffic(server).entries(after))
    }

    /// The JSON of message `seq` of `server`'s traffic log (null when it is too large to keep,
    /// or gone).
    pub fn traffic_message(&self, server: &str, seq: u64) -> AppResult<Option<Value>> {
        self.known_server(server)?;
        Ok(self.inner.servers.traffic(server).message(seq))
    }

    /// Writes `server`'s traffic log as JSON lines to a file the person chooses; resolves to
    /// its path (none: cancelled).
    pub async fn export_server_traffic(&self, server: &str) -> AppResult<Option<String>> {
        self.known_server(server)?;
        let text = self.inner.servers.traffic(server).json_lines();
        let stem = crate::export::safe_file_stem(server).replace(' ', "-");
        let suggested = format!("{}-traffic.jsonl", if stem.is_empty() { "server" } else { &stem });
        let Some(path) = self
            .inner
            .desktop
            .save_file("Export the server's traffic", &suggested)
            .await
        else {
            return Ok(None);
        };
        std::fs::write(&path, text).map_err(|e| AppError::io(format!("cannot write {}: {e}", path.display())))?;
        Ok(Some(path.display().to_string()))
    }

    /// Asks `server` to tell when resource `uri` changes (`resources/subscribe`): its
    /// `notifications/resources/updated` then show in the traffic and notifications. False when
    /// the server does not offer subscriptions.
    pub async fn subscribe_to_resource(&self, server: &str, uri: &str) -> AppResult<bool> {
        self.known_server(server)?;
        Ok(self.inner.servers.subscribe_resource(server, uri).await)
    }

    /// Prompt `name` of `server` with `arguments` (`prompts/get`), not sent anywhere.
    pub async fn preview_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: HashMap<String, String>,
    ) -> AppResult<PromptPreview> {
        self.known_server(server)?;
        let (description, messages) = self.get_prompt(server, name, arguments).await?;
        Ok(PromptPreview { description, messages })
    }
}

/// What the view inspector shows of one view: every bridge message (both ways, with times), what
/// the view reported of itself (console errors and warnings, uncaught exceptions, CSP
/// violations), its log messages, the methods it asked for that Porthole does not offer, the
/// policy its document was served with and, for its violations, what its server could declare.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ViewInspection {
    /// Which view of its call this is (1: the first; more when it was created again).
    pub mount: u32,
    pub csp: Option<String>,
    /// Porthole's answer to its `ui/initialize`: host info, capabilities and context, whole.
    pub initialize_answer: Option<Value>,
    /// Milliseconds from its creation to `ui/notifications/initialized`.
    #[ts(type = "number | null")]
    pub initialized_ms: Option<u64>,
    /// `{kind: console | error | csp, level, message, directive?, blockedUri?}` each.
    pub diagnostics: Vec<Value>,
    pub unsupported: Vec<String>,
    /// Its `notifications/message` params.
    pub logs: Vec<Value>,
    /// `{atMs, direction: to-view | from-view, method?, message}` each (a long one cut).
    pub messages: Vec<Value>,
    pub messages_dropped: usize,
    pub csp_suggestion: porthole_apps::csp::CspSuggestion,
    /// What is kept of the view between its mounts.
    pub stored_state: crate::views::StoredViewState,
}

impl Host {
    /// Watches the views the main window and its pop-outs show from now on, for the view
    /// inspector (on), or stops (views already watched stay so until they close).
    pub fn set_view_inspection(&self, on: bool) {
        let views = &self.inner.views;
        let mut windows = self.pop_out_windows();
        windows.push(crate::ports::MAIN_WINDOW.to_string());
        for window in windows {
            if on {
                views.observe_webview(&window, false);
            } else {
                views.unobserve_webview(&window);
            }
        }
    }

    /// Whether the main window's new views are watched.
    pub fn view_inspection_on(&self) -> bool {
        self.inner.views.observes_webview(crate::ports::MAIN_WINDOW)
    }

    /// What the inspector shows of view `view_id`, asked by `window` (which must show it); none
    /// when it is not watched (it was created before inspection was on) or is gone.
    pub fn view_inspection(&self, window: &str, view_id: &str) -> Option<ViewInspection> {
        if !self.inner.views.shown_in(view_id, window) {
            return None;
        }
        let o = self.inner.views.observation(view_id)?;
        let violations: Vec<(String, String)> = o
            .diagnostics
            .iter()
            .filter(|d| d.kind == "csp")
            .map(|d| {
                (
                    d.directive.clone().unwrap_or_default(),
                    d.blocked_uri.clone().unwrap_or_default(),
                )
            })
            .collect();

        Some(ViewInspection {
            mount: o.mount,
            csp: o.csp,
            initialize_answer: o.initialize_answer,
            initialized_ms: o.initialized_ms,
            csp_suggestion: porthole_apps::csp::suggest(&violations),
            diagnostics: to_values(&o.diagnostics),
            unsupported: o.unsupported,
            logs: o.logs,
            messages: to_values(&o.messages),
            messages_dropped: o.messages_dropped,
            stored_state: self.inner.views.stored_state(view_id),
        })
    }
}

fn to_values<T: Serialize>(items: &[T]) -> Vec<Value> {
    items
        .iter()
        .map(|i| serde_json::to_value(i).unwrap_or_default())
        .collect()
}

impl Host {
    /// Shows view `view_id`'s call again in a fresh view given `input` and `result` (edited in
    /// the inspector) instead of the call's: the server is not called and nothing is stored.
    pub async fn replay_view(&self, window: &str, view_id: &str, input: Value, result: Value) -> AppResult<()> {
        self.shows(window, view_id)?;
        self.inner.views.replay(view_id, input, result).await
    }

    /// Reads view `view_id`'s resource again and shows its call in a fresh view.
    pub async fn reload_view(&self, window: &str, view_id: &str) -> AppResult<()> {
        self.shows(window, view_id)?;
        self.inner.views.reload(view_id).await
    }

    fn shows(&self, window: &str, view_id: &str) -> AppResult<()> {
        if self.inner.views.shown_in(view_id, window) {
            Ok(())
        } else {
            Err(AppError::forbidden("no such view in this window"))
        }
    }

    /// Shows `server`'s `ui://` resource `uri` as a view given sample `input` and `result` (the
    /// Resources tab's preview): the server is not called for a result, nothing is stored.
    pub async fn preview_view(
        &self,
        server: &str,
        uri: &str,
        input: Value,
        result: Value,
    ) -> AppResult<crate::views::ViewPreview> {
        self.known_server(server)?;
        self.inner.views.preview(server, uri, input, result).await
    }
}

/// The workbench's host emulation: the setting and the presets it picks from.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HostEmulationState {
    pub emulation: porthole_apps::host_emulation::HostEmulation,
    pub presets: Vec<porthole_apps::host_emulation::HostPreset>,
}

impl Host {
    /// How views of the workbench's runs (or every view, when chosen) are presented.
    pub fn host_emulation(&self) -> HostEmulationState {
        HostEmulationState {
            emulation: self.inner.views.host_emulation(),
            presets: porthole_apps::host_emulation::presets(),
        }
    }

    /// Sets the host emulation, keeps it, and applies it to the live views at once.
    pub async fn set_host_emulation(
        &self,
        emulation: porthole_apps::host_emulation::HostEmulation,
    ) -> AppResult<HostEmulationState> {
        self.inner.views.set_host_emulation(emulation).await?;
        Ok(self.host_emulation())
    }
}
