//! A tool's view shown for a check or a picture (`porthole check`'s live check, `porthole
//! snapshot`): the call is made (or its result given), recorded in the store like a tools-panel
//! run, and its view created in a window of its own that runs the app's pop-out page with
//! nothing but the view — the same page, bridge, scheme and checks as a chat's view. The view is
//! watched closely ([`crate::views::Observation`]): when it finished starting, what it reported
//! about itself, what it asked for that Porthole does not offer, its size and its bridge traffic.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use porthole_apps::theme::Theme;
use porthole_mcp::{CallOptions, CatalogTool, ServerState, ToolOutcome};
use porthole_store::{MessageRole, MessageStatus, NewToolCall, ToolCallFinish, ToolCallStatus};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::Host;
use crate::error::{AppError, AppResult};
use crate::pop_outs::PoppedCall;
use crate::ports::POP_OUT_PREFIX;
use crate::theme::ThemePreference;
use crate::views::{Observation, ViewProgress};

/// How long Porthole's own window may take to start and ask for the view it shows (a cold
/// web engine on a loaded machine), before the view's own limit starts.
const WINDOW_START_LIMIT: Duration = Duration::from_secs(30);

/// The label prefix of the windows views are shown in for a check or a picture.
pub const LIVE_PREFIX: &str = "view-live-";

/// Where the view's result comes from.
#[derive(Debug, Clone)]
pub enum LiveResult {
    /// Call the tool with the input.
    Call,
    /// This `CallToolResult` (a file, or a sample made from the tool's output schema).
    Given(Value),
}

/// One view to show.
#[derive(Debug, Clone)]
pub struct LiveRequest {
    pub server: String,
    pub tool: String,
    pub input: Map<String, Value>,
    pub result: LiveResult,
    /// The window's inner size, CSS pixels.
    pub width: u32,
    pub height: u32,
    pub theme: Theme,
    /// Stop animations and the clock, for a picture.
    pub still: bool,
    /// How long the view may take to complete `ui/initialize`.
    pub limit: Duration,
    /// After it started: wait until nothing changed (size, bridge traffic, no request pending)
    /// for `quiet`, at most `most` — then take a picture, when asked.
    pub settle: Option<(Duration, Duration)>,
    pub picture: bool,
}

/// What showing the view found.
#[derive(Debug, Clone)]
pub struct LiveOutcome {
    /// Why the call failed, when it did (the view still got what the server answered, or an
    /// error result).
    pub call_error: Option<String>,
    /// The result the view got.
    pub result: Value,
    /// Where the view ended: ready, still loading when the limit passed, or failed (why).
    pub progress: ViewProgress,
    pub observation: Option<Observation>,
    /// Milliseconds from the window's opening until the view settled (when asked to settle).
    pub settled_ms: Option<u64>,
    /// The picture, as PNG.
    pub png: Option<Vec<u8>>,
}

impl Host {
    /// The UI tool `tool` of the connected `server`, as the app knows it.
    pub fn ui_tool(&self, server: &str, tool: &str) -> AppResult<CatalogTool> {
        let status = self
            .inner
            .servers
            .status(server)
            .ok_or_else(|| AppError::not_found(format!("there is no server {server:?}")))?;
        if status.state != ServerState::Connected {
            let why = status.error.unwrap_or_else(|| "it is not connected".into());
            return Err(AppError::server(format!("server {server:?} is not connected: {why}")));
        }
        let found = status
            .tools
            .into_iter()
            .find(|t| t.name == tool)
            .ok_or_else(|| AppError::not_found(format!("server {server:?} has no tool {tool:?}")))?;
        if found.ui_resource_uri.is_none() {
            return Err(AppError::invalid(format!("tool {tool:?} of {server:?} has no view")));
        }
        Ok(found)
    }

    /// Shows `request`'s view in a window of its own and watches it (see the module's notes).
    pub async fn show_view(&self, request: LiveRequest) -> AppResult<LiveOutcome> {
        let tool = self.ui_tool(&request.server, &request.tool)?;
        let started = Instant::now();
        let (outcome, call_error) = match &request.result {
            LiveResult::Given(result) => (given_outcome(result.clone())?, None),
            LiveResult::Call => {
                let called = self
                    .inner
                    .servers
                    .call_tool(
                        &request.server,
                        &request.tool,
                        Some(request.input.clone()),
                        CallOptions {
                            progress: None,
                            cancel: CancellationToken::new(),
                            timeout: None,
                        },
                    )
                    .await;
                match called {
                    Ok(outcome) if outcome.model.is_error => {
                        let why = error_text(&outcome.view);
                        (outcome, Some(why))
                    }
                    Ok(outcome) => (outcome, None),
                    Err(e) => {
                        let why = e.to_string();
                        let result = json!({"content": [{"type": "text", "text": why}], "isError": true});
                        (given_outcome(result)?, Some(why))
                    }
                }
            }
        };
        let input = Value::Object(request.input.clone());
        let (conversation_id, call_id) = self.record_live_call(&request, &input, &outcome, started)?;

        let pop_outs = &self.inner.pop_outs;
        let label = format!("{LIVE_PREFIX}{}", pop_outs.next.fetch_add(1, Ordering::Relaxed) + 1);
        debug_assert!(label.starts_with(POP_OUT_PREFIX), "a view window has the view commands");
        pop_outs.windows.lock().unwrap().insert(
            label.clone(),
            PoppedCall {
                conversation_id: conversation_id.clone(),
                call_id: call_id.clone(),
                tool: request.tool.clone(),
                ready: false,
                fresh: Some((tool, input, outcome.view.clone())),
            },
        );
        let views = &self.inner.views;
        views.set_theme_preference(match request.theme {
            Theme::Dark => ThemePreference::Dark,
            Theme::Light => ThemePreference::Light,
        });
        views.observe_webview(&label, request.still);
        let opened = Instant::now();
        if let Err(e) =
            self.inner
                .desktop
                .open_view_window(&label, request.width, request.height, request.theme, request.picture)
        {
            pop_outs.windows.lock().unwrap().remove(&label);
            return Err(AppError::io(format!("the view's window could not be opened: {e}")));
        }

        // Until the view is ready or failed, or its limit passed. The limit is the view's own: it
        // runs from when Porthole's window asked for the view, so a slow start of the window (a
        // loaded machine, a cold web engine) is not counted against the view.
        let mut asked: Option<Instant> = None;
        let progress = loop {
            match views.view_of_call(&conversation_id, &call_id) {
                None if opened.elapsed() < WINDOW_START_LIMIT => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                None => {
                    break ViewProgress::Failed(format!(
                        "Porthole's window never asked for the view (within {} s)",
                        WINDOW_START_LIMIT.as_secs()
                    ));
                }
                Some((_, ViewProgress::Loading))
                    if asked.get_or_insert_with(Instant::now).elapsed() < request.limit =>
                {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Some((_, progress)) => break progress,
            }
        };
        let view_id = views.view_of_call(&conversation_id, &call_id).map(|(id, _)| id);
        let mut settled_ms = None;
        if let (ViewProgress::Ready, Some((quiet, most)), Some(id)) = (&progress, request.settle, &view_id) {
            let quiet_ms = u64::try_from(quiet.as_millis()).unwrap_or(u64::MAX);
            let until = Instant::now() + most;
            loop {
                let o = views.observation(id);
                let still = o.as_ref().is_some_and(|o| {
                    !o.waiting() && o.created.elapsed().as_millis() as u64 >= o.last_change_ms + quiet_ms
                });
                if still || Instant::now() >= until {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            settled_ms = Some(u64::try_from(opened.elapsed().as_millis()).unwrap_or(u64::MAX));
        }
        let png = if request.picture && progress == ViewProgress::Ready {
            Some(
                self.inner
                    .desktop
                    .capture(&label)
                    .await
                    .map_err(|e| AppError::io(format!("the picture could not be taken: {e}")))?,
            )
        } else {
            None
        };
        let observation = view_id.as_deref().and_then(|id| views.observation(id));
        // Forgotten first: a closed pop-out's view would go back to a card there is none of.
        pop_outs.windows.lock().unwrap().remove(&label);
        self.inner.desktop.close_window(&label);
        Ok(LiveOutcome {
            call_error,
            result: outcome.view,
            progress,
            observation,
            settled_ms,
            png,
        })
    }

    /// Records the call in the store as a tools-panel run is recorded (a conversation of its own
    /// holding an empty tool message and the call), so its view is kept like any other.
    fn record_live_call(
        &self,
        request: &LiveRequest,
        input: &Value,
        outcome: &ToolOutcome,
        started: Instant,
    ) -> AppResult<(String, String)> {
        let store = self.store()?;
        let conversation = store.create_conversation(&format!("{} · {}", request.server, request.tool))?;
        let holder = store.append_message(&conversation.id, MessageRole::Tool, &json!([]), MessageStatus::Complete)?;
        let call_id = format!("live-{holder}");
        let row = store.insert_tool_call(&NewToolCall {
            conversation_id: conversation.id.clone(),
            message_id: holder,
            call_id: call_id.clone(),
            server: request.server.clone(),
            tool: request.tool.clone(),
            arguments: input.clone(),
            status: ToolCallStatus::Running,
        })?;
        store.finish_tool_call(
            row,
            &ToolCallFinish {
                status: if outcome.model.is_error {
                    ToolCallStatus::Error
                } else {
                    ToolCallStatus::Ok
                },
                model_facing: serde_json::to_value(&outcome.model).ok(),
                view_facing: Some(outcome.view.clone()),
                error: None,
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            },
        )?;
        Ok((conversation.id, call_id))
    }
}

fn given_outcome(result: Value) -> AppResult<ToolOutcome> {
    ToolOutcome::from_json(result)
        .map_err(|why| AppError::invalid(format!("the result is not a CallToolResult: {why}")))
}

/// The text of an error result, for saying why a call failed.
fn error_text(result: &Value) -> String {
    let text: Vec<&str> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect();
    if text.is_empty() {
        "the tool answered isError: true".into()
    } else {
        let joined = text.join(" ");
        joined.chars().take(300).collect()
    }
}

/// Arguments for a tool made from its input schema: each required property gets its default, its
/// first example or enum value, or a plain value of its type.
pub fn sample_arguments(schema: &Value) -> Map<String, Value> {
    match sample_value(schema, 0) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn sample_value(schema: &Value, depth: usize) -> Value {
    if depth > 8 {
        return Value::Null;
    }
    if let Some(v) = schema.get("default").or_else(|| schema.get("const")) {
        return v.clone();
    }
    if let Some(v) = schema.get("examples").and_then(|e| e.get(0)) {
        return v.clone();
    }
    if let Some(v) = schema.get("enum").and_then(|e| e.get(0)) {
        return v.clone();
    }
    if let Some(first) = ["anyOf", "oneOf"]
        .iter()
        .find_map(|k| schema.get(*k).and_then(|a| a.get(0)))
    {
        return sample_value(first, depth + 1);
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    match kind {
        "object" => {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let mut out = Map::new();
            if let Some(properties) = schema["properties"].as_object() {
                for (name, property) in properties {
                    if required.contains(&name.as_str()) {
                        out.insert(name.clone(), sample_value(property, depth + 1));
                    }
                }
            }
            Value::Object(out)
        }
        "array" => {
            let least = schema["minItems"].as_u64().unwrap_or(0).min(3);
            Value::Array((0..least).map(|_| sample_value(&schema["items"], depth + 1)).collect())
        }
        "integer" => json!(schema["minimum"].as_i64().unwrap_or(1)),
        "number" => json!(schema["minimum"].as_f64().unwrap_or(1.0)),
        "boolean" => json!(false),
        "null" => Value::Null,
        _ => {
            let least = schema["minLength"].as_u64().unwrap_or(0) as usize;
            let text = match schema["format"].as_str() {
                Some("uri" | "url") => "https://example.com/".to_string(),
                Some("email") => "someone@example.com".to_string(),
                Some("date") => "2026-01-01".to_string(),
                Some("date-time") => "2026-01-01T12:00:00Z".to_string(),
                _ => "example".to_string(),
            };
            Value::String(if text.len() < least {
                text.repeat(least / text.len() + 1)
            } else {
                text
            })
        }
    }
}

/// A result for a view shown without calling its tool: no content, and a `structuredContent`
/// made from the tool's output schema (`outputSchema`) when it has one.
pub fn sample_result(output_schema: Option<&Value>) -> Value {
    match output_schema {
        Some(schema) => json!({"content": [], "structuredContent": sample_value(schema, 0)}),
        None => json!({"content": []}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_arguments_fill_what_is_required_as_the_schema_suggests() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 3},
                "unit": {"enum": ["c", "f"]},
                "when": {"type": "string", "format": "date"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "detail": {"type": "object", "properties": {"x": {"type": "number", "default": 2.5}}, "required": ["x"]},
                "optional": {"type": "string"},
                "maybe": {"type": ["null", "boolean"]},
            },
            "required": ["city", "days", "unit", "when", "tags", "detail", "maybe"],
        });
        assert_eq!(
            Value::Object(sample_arguments(&schema)),
            json!({"city": "example", "days": 3, "unit": "c", "when": "2026-01-01", "tags": ["example"], "detail": {"x": 2.5}, "maybe": false})
        );
        assert_eq!(sample_arguments(&json!({"type": "object"})), Map::new());
        assert_eq!(sample_arguments(&json!("nonsense")), Map::new());
    }
}
