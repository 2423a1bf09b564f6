//! The tools panel's Run: one tool call the person starts, with no model. It goes through the
//! agent loop's own path for a call ([`ToolRunner::run_call`]), so the window shows the same
//! card and the same view as for a model's call, and the store keeps both facings.
//!
//! In the conversation's history such a run is recorded as a call with no model turn around it
//! ([`Recorder::for_tool_run`]): its card and view come back when the conversation is reopened,
//! but later model turns are not told about it — the model never believes it made the call, and
//! the messages sent to a provider keep their user / assistant alternation, even when the
//! conversation starts with a run.

use porthole_agent::record::Recorder;
use porthole_agent::{CallStatus, StopReason, ToolRunner, TurnEvent};
use porthole_mcp::ServerState;
use serde::Serialize;
use serde_json::Value;
use tauri::Manager;

use crate::desktop::{AppState, claim_turn, existing_conversation, release_turn, window_sink};
use crate::views::Views;

/// A run that started: the conversation it is in (new when none was given) and its call id.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolRun {
    conversation_id: String,
    call_id: String,
}

/// A call id for a person's run, unique within its conversation (a model's ids never start
/// with `run-`).
fn new_call_id() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the OS has randomness");
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("run-{hex}")
}

/// Runs `tool` of `server` with `arguments` (a JSON object) in `conversation_id`, or in a new
/// conversation titled "Run <tool>" when none is given, and returns at once; the call's events
/// arrive as `chat-event`s, like a turn's, ending with `done` (`cancelled` when it was
/// stopped, else `end_turn`: the card says how the call ended). No approval is asked: the
/// person pressed Run. `stop_turn` cancels it; it is refused while a turn runs in that
/// conversation, and a message sent meanwhile is refused the same way.
#[tauri::command]
pub(crate) async fn run_tool(
    app: tauri::AppHandle,
    state: tauri::State<'_, AppState>,
    conversation_id: Option<String>,
    server: String,
    tool: String,
    arguments: Value,
) -> Result<ToolRun, String> {
    let arguments = match arguments {
        Value::Object(_) => arguments,
        Value::Null => Value::Object(Default::default()),
        other => return Err(format!("the arguments must be a JSON object, not {other}")),
    };
    let status = state
        .servers
        .statuses()
        .into_iter()
        .find(|s| s.name == server)
        .ok_or_else(|| format!("there is no server {server:?}"))?;
    if status.state != ServerState::Connected {
        return Err(format!("server {server:?} is not connected"));
    }
    if !status.tools.iter().any(|t| t.name == tool) {
        return Err(format!("server {server:?} has no tool {tool:?}"));
    }

    let chat = &state.chat;
    let store = chat.store()?.clone();
    let id = match conversation_id {
        Some(id) => existing_conversation(&store, &id)?.id,
        None => {
            store
                .create_conversation(&format!("Run {tool}"))
                .map_err(|e| e.to_string())?
                .id
        }
    };
    let cancel = claim_turn(chat, &id)?;
    let recorder = match Recorder::for_tool_run(store, id.clone()) {
        Ok(recorder) => recorder,
        Err(e) => {
            release_turn(chat, &id);
            return Err(e.to_string());
        }
    };

    let call_id = new_call_id();
    let runner = ToolRunner {
        servers: state.servers.clone(),
        views: app.state::<Views>().reports(&id),
    };
    let sink = window_sink(&app, recorder, &id);
    let (conversation, call) = (id.clone(), call_id.clone());
    tauri::async_runtime::spawn(async move {
        let end = runner.run_call(call, &server, &tool, arguments, &sink, cancel).await;
        // Free before `done` reaches the window, so a message sent right after is taken.
        release_turn(&app.state::<AppState>().chat, &conversation);
        sink(&TurnEvent::Done {
            stop_reason: if end.status == CallStatus::Cancelled {
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
