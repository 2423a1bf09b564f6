//! The history a turn sends the model, read back from a long conversation against a short one
//! (prints numbers, asserts nothing): `cargo bench -p porthole-agent --bench history` (part of
//! `make bench`).
//!
//! A store file in a temporary directory; each turn of the conversation is written as a turn
//! writes it (the [`Recorder`]): the person's message, the model's message asking for one tool
//! call (1 KB of arguments), the call's row with both facings — 2 KB of text for the model, and
//! for its view the whole `CallToolResult` with 64 KB of `structuredContent` — the step's tool
//! message, and the model's reply. Timed is [`load_history`], which every turn runs before it
//! asks the model, at 10, 300 and 1,000 turns.

use std::time::Instant;

use porthole_agent::record::{Recorder, load_history};
use porthole_agent::{CallStatus, EventSink, Message, Part, Role, StopReason, TurnEvent};
use porthole_mcp::ModelFacing;
use porthole_store::{AllowedBy, Store};
use serde_json::json;

/// Reads timed at each length.
const RUNS: usize = 30;
/// The conversation's lengths, in turns of one call each.
const LENGTHS: [usize; 3] = [10, 300, 1000];

fn turn(store: &Store, conversation: &str, i: usize) {
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

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    let conversation = store.create_conversation("Long").unwrap().id;
    println!("The history a turn sends, read from a conversation of N turns (one tool call each, 64 KB for its view)");
    let mut medians = Vec::new();
    let mut turns = 0;
    for length in LENGTHS {
        while turns < length {
            turn(&store, &conversation, turns);
            turns += 1;
        }
        let mut ms = Vec::new();
        let mut messages = 0;
        for _ in 0..RUNS {
            let started = Instant::now();
            messages = load_history(&store, &conversation).unwrap().len();
            ms.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        ms.sort_by(f64::total_cmp);
        let (p50, p90, fastest) = (ms[ms.len() / 2], ms[ms.len() * 9 / 10], ms[0]);
        println!(
            "  {length:>5} turns ({messages} messages): p50 {p50:8.3} ms   p90 {p90:8.3} ms   fastest {fastest:8.3} ms   per turn {:.1} µs",
            p50 * 1000.0 / length as f64
        );
        medians.push(p50);
    }
    println!(
        "  per turn (p50): {} turns / {} turns = {:.2}×",
        LENGTHS[LENGTHS.len() - 1],
        LENGTHS[0],
        (medians[medians.len() - 1] / LENGTHS[LENGTHS.len() - 1] as f64) / (medians[0] / LENGTHS[0] as f64)
    );
}
