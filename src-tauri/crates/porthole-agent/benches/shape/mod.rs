//! One turn of a long conversation, written as a turn writes it (the [`Recorder`]): the
//! person's message, the model's message asking for one tool call (1 KB of arguments), the
//! call's row with both facings — 2 KB of text for the model, and for its view the whole
//! `CallToolResult` with 64 KB of `structuredContent` — the step's tool message, and the
//! model's reply. Shared by the benchmarks that time a long conversation (porthole-agent's
//! `history`, porthole-host's `turn_start`).

use porthole_agent::record::Recorder;
use porthole_agent::{CallStatus, EventSink, Message, Part, Role, StopReason, TurnEvent};
use porthole_mcp::ModelFacing;
use porthole_store::{AllowedBy, Store};
use serde_json::json;

/// Writes turn `i` of `conversation`.
pub fn turn(store: &Store, conversation: &str, i: usize) {
    let recorder = Recorder::new(store.clone(), conversation);
    let text = |t: &str| Message {
        role: Role::User,
        parts: vec![Part::Text { text: t.into() }],
    };
    recorder.emit(&TurnEvent::UserMessage {
        message: text(&format!("Search for item {i}")),
    });
    recorder.emit(&TurnEvent::StepStarted { step: 1 });
    let call_id = format!("call_{i}");
    let arguments = json!({"query": "q".repeat(1024)});
    recorder.emit(&TurnEvent::AssistantMessage {
        message: Message {
            role: Role::Assistant,
            parts: vec![
                Part::Text {
                    text: "Searching.".into(),
                },
                Part::ToolUse {
                    id: call_id.clone(),
                    name: "demo__search".into(),
                    arguments: arguments.clone(),
                },
            ],
        },
        interrupted: false,
        usage: Default::default(),
    });
    recorder.emit(&TurnEvent::ToolCallStarted {
        call_id: call_id.clone(),
        name: "demo__search".into(),
        server: Some("demo".into()),
        tool: Some("search".into()),
        arguments,
        ui_resource_uri: Some("ui://demo/search.html".into()),
    });
    recorder.emit(&TurnEvent::ToolCallRunning {
        call_id: call_id.clone(),
        allowed_by: AllowedBy::Config,
    });
    let content = vec![json!({"type": "text", "text": "r".repeat(2048)})];
    let rows: Vec<_> = (0..512).map(|n| json!({"id": n, "title": "t".repeat(100)})).collect();
    recorder.emit(&TurnEvent::ToolCallFinished {
        call_id: call_id.clone(),
        status: CallStatus::Ok,
        model: ModelFacing {
            content: content.clone(),
            is_error: false,
        },
        view: json!({"content": content, "structuredContent": {"rows": rows}, "_meta": {"ui": {"resourceUri": "ui://demo/search.html"}}}),
        duration_ms: 5,
        error: None,
    });
    recorder.emit(&TurnEvent::ToolResults {
        message: Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult {
                tool_use_id: call_id,
                content,
                is_error: false,
            }],
        },
    });
    recorder.emit(&TurnEvent::StepStarted { step: 2 });
    let reply = Message {
        role: Role::Assistant,
        parts: vec![Part::Text {
            text: "Here is what I found.".into(),
        }],
    };
    recorder.emit(&TurnEvent::AssistantMessage {
        message: reply,
        interrupted: false,
        usage: Default::default(),
    });
    recorder.emit(&TurnEvent::Done {
        stop_reason: StopReason::EndTurn,
        text: "Here is what I found.".into(),
        usage: Default::default(),
    });
}
