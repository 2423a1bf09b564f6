//! The tools panel's Run: one tool call the person starts, with no model; and reading a resource
//! a result links to (the card's Read). It goes through the
//! agent loop's own path for a call ([`ToolRunner::run_call`]), so the window shows the same
//! card and the same view as for a model's call, and the store keeps both facings.
//!
//! In the conversation's history such a run is recorded as a call with no model turn around it
//! ([`Recorder::for_tool_run`]): its card and view come back when the conversation is reopened,
//! but later model turns are not told about it — the model never believes it made the call, and
//! the messages sent to a provider keep their user / assistant alternation, even when the
//! conversation starts with a run.

use porthole_agent::record::Recorder;
use porthole_agent::{CallStatus, EventSink, StopReason, ToolRunner, TurnEvent};
use porthole_mcp::ServerState;
use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};

/// The prefix of a tools-panel run's call id (a model's ids never start with it).
pub const RUN_PREFIX: &str = "run-";

/// A run that started: the conversation it is in (new when none was given) and its call id.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolRun {
    pub conversation_id: String,
    pub call_id: String,
}

/// A call id for a person's run, unique within its conversation.
fn new_call_id() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the OS has randomness");
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{RUN_PREFIX}{hex}")
}

/// The most of a resource's contents the window is sent (the rest is cut, and it says so).
pub const MAX_READ_BYTES: usize = 1024 * 1024;

/// A resource as `resources/read` gave it: each of its contents (`uri`, `mimeType`, `text` or
/// `blob`, and `truncated: true` when cut at [`MAX_READ_BYTES`]).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRead {
    pub contents: Vec<Value>,
}

impl Host {
    /// Reads resource `uri` of `server` (a result's `resource_link`, opened from its card):
    /// its `contents`, each text or blob cut to [`MAX_READ_BYTES`] with `truncated: true`.
    pub async fn read_resource(&self, server: &str, uri: &str) -> AppResult<ResourceRead> {
        let result = self
            .inner
            .servers
            .read_resource(server, uri)
            .await
            .map_err(|e| AppError::server(format!("{server} could not read {uri}: {e}")))?;
        let value = serde_json::to_value(result).map_err(|e| AppError::server(e.to_string()))?;
        let mut contents = match value.get("contents") {
            Some(Value::Array(items)) => items.clone(),
            _ => Vec::new(),
        };
        {
            for item in contents.iter_mut() {
                for key in ["text", "blob"] {
                    if let Some(Value::String(s)) = item.get_mut(key)
                        && s.len() > MAX_READ_BYTES
                    {
                        let mut end = MAX_READ_BYTES;
                        while !s.is_char_boundary(end) {
                            end -= 1;
                        }
                        s.truncate(end);
                        item["truncated"] = Value::Bool(true);
                    }
                }
            }
        }
        Ok(ResourceRead { contents })
    }

    /// Runs `tool` of `server` with `arguments` (a JSON object) in `conversation_id`, or in a
    /// new conversation titled "Run <tool>" when none is given, and returns at once; the call's
    /// events arrive as `chat-event`s, like a turn's, ending with `done` (`cancelled` when it
    /// was stopped, else `end_turn`: the card says how the call ended). No approval is asked:
    /// the person pressed Run. `stop_turn` cancels it; it is refused while a turn runs in that
    /// conversation, and a message sent meanwhile is refused the same way.
    pub fn run_tool(
        &self,
        conversation_id: Option<String>,
        server: &str,
        tool: &str,
        arguments: Value,
    ) -> AppResult<ToolRun> {
        let arguments = match arguments {
            Value::Object(_) => arguments,
            Value::Null => Value::Object(Default::default()),
            other => {
                return Err(AppError::invalid(format!(
                    "the arguments must be a JSON object, not {other}"
                )));
            }
        };
        let status = self
            .inner
            .servers
            .status(server)
            .ok_or_else(|| AppError::not_found(format!("there is no server {server:?}")))?;
        if status.state != ServerState::Connected {
            return Err(AppError::server(format!("server {server:?} is not connected")));
        }
        if !status.tools.iter().any(|t| t.name == tool) {
            return Err(AppError::not_found(format!("server {server:?} has no tool {tool:?}")));
        }

        let store = self.store()?.clone();
        let id = match conversation_id {
            Some(id) => self.existing_conversation(&id)?.id,
            None => store.create_conversation(&format!("Run {tool}"))?.id,
        };
        let claim = self.inner.turns.claim(&store, &id)?;
        let recorder = Recorder::for_tool_run(store, id.clone())?;

        let call_id = new_call_id();
        let runner = ToolRunner {
            servers: self.inner.servers.clone(),
            views: self.inner.views.reports(&id),
        };
        let cancel = claim.cancel_token();
        let sink = self.inner.conversation_sink(recorder, &id, claim);
        let (server, tool, call) = (server.to_string(), tool.to_string(), call_id.clone());
        self.inner.runtime.spawn(async move {
            let end = runner.run_call(call, &server, &tool, arguments, &sink, cancel).await;
            // A call the store could not keep is shown as failed to save, as a turn's would be.
            let failure = sink.failure();
            if let Some(message) = &failure {
                sink.emit(&TurnEvent::Error {
                    message: message.clone(),
                });
            }
            // The conversation is free once `done` is recorded, before the window hears it.
            sink.emit(&TurnEvent::Done {
                stop_reason: if failure.is_some() {
                    StopReason::Error
                } else if end.status == CallStatus::Cancelled {
                    StopReason::Cancelled
                } else {
                    StopReason::EndTurn
                },
                text: String::new(),
                usage: Default::default(),
            });
        });
        Ok(ToolRun {
            conversation_id: id,
            call_id,
        })
    }
}
