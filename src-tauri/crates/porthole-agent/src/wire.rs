//! The frozen wire format of `porthole run --json`: one JSON line per turn event. Outside tests
//! and scripts read these lines, so their shape never changes (new events may be added); the
//! window's format ([`TurnEvent`]'s own serialization, camelCase fields) is free to move on.
//!
//! The format: `type` and field names in snake_case, in the order below; messages as the store
//! keeps them ([`Message`]); usage and the model-facing result in camelCase (`inputTokens`,
//! `isError`), as they always were.

use serde::Serialize;
use serde_json::Value;

use crate::conversation::{Message, Usage};
use crate::events::{CallStatus, Decision, MissingServer, StopReason, TurnEvent};
use porthole_mcp::ModelFacing;

/// A turn event as `porthole run --json` prints it, borrowing from the [`TurnEvent`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CliEvent<'a> {
    TurnStarted {
        conversation_id: Option<&'a str>,
        model: &'a str,
        provider: &'a str,
    },
    UserMessage {
        message: &'a Message,
    },
    WaitingForServers {
        servers: &'a [String],
    },
    ServersWaited {
        missing: &'a [MissingServer],
    },
    StepStarted {
        step: u32,
    },
    TextDelta {
        text: &'a str,
    },
    ReasoningDelta {
        text: &'a str,
    },
    ToolCallStreaming {
        call_id: &'a str,
        name: &'a str,
        arguments_text: &'a str,
    },
    /// Without the window's `kind`: the line predates it.
    Retrying {
        attempt: u32,
        wait_ms: u64,
        reason: &'a str,
    },
    AssistantMessage {
        message: &'a Message,
        interrupted: bool,
        usage: &'a Usage,
    },
    ToolCallStarted {
        call_id: &'a str,
        name: &'a str,
        server: Option<&'a str>,
        tool: Option<&'a str>,
        arguments: &'a Value,
        ui_resource_uri: Option<&'a str>,
    },
    ViewAvailable {
        call_id: &'a str,
        server: &'a str,
        tool: &'a str,
        resource_uri: &'a str,
    },
    ApprovalRequested {
        call_id: &'a str,
        server: &'a str,
        tool: &'a str,
        arguments: &'a Value,
    },
    ApprovalResolved {
        call_id: &'a str,
        decision: Decision,
    },
    ToolCallRunning {
        call_id: &'a str,
    },
    ToolCallProgress {
        call_id: &'a str,
        progress: f64,
        total: Option<f64>,
        message: Option<&'a str>,
    },
    ToolCallFinished {
        call_id: &'a str,
        status: CallStatus,
        model: &'a ModelFacing,
        view: &'a Value,
        duration_ms: u64,
        error: Option<&'a str>,
    },
    ToolResults {
        message: &'a Message,
    },
    Error {
        message: &'a str,
    },
    Done {
        stop_reason: StopReason,
        text: &'a str,
        usage: &'a Usage,
    },
    /// A remote agent's AG-UI event, whole.
    AgentEvent {
        event: &'a Value,
    },
    /// A remote agent's MCP App view for a call.
    RemoteView {
        call_id: &'a str,
        server: &'a str,
        tool: &'a str,
        view: &'a crate::events::RemoteView,
    },
}

impl<'a> From<&'a TurnEvent> for CliEvent<'a> {
    fn from(event: &'a TurnEvent) -> CliEvent<'a> {
        match event {
            TurnEvent::TurnStarted {
                conversation_id,
                model,
                provider,
            } => CliEvent::TurnStarted {
                conversation_id: conversation_id.as_deref(),
                model,
                provider,
            },
            TurnEvent::UserMessage { message } => CliEvent::UserMessage { message },
            TurnEvent::WaitingForServers { servers } => CliEvent::WaitingForServers { servers },
            TurnEvent::ServersWaited { missing } => CliEvent::ServersWaited { missing },
            TurnEvent::StepStarted { step } => CliEvent::StepStarted { step: *step },
            TurnEvent::TextDelta { text } => CliEvent::TextDelta { text },
            TurnEvent::ReasoningDelta { text } => CliEvent::ReasoningDelta { text },
            TurnEvent::ToolCallStreaming {
                call_id,
                name,
                arguments_text,
            } => CliEvent::ToolCallStreaming {
                call_id,
                name,
                arguments_text,
            },
            TurnEvent::Retrying {
                attempt,
                wait_ms,
                kind: _,
                reason,
            } => CliEvent::Retrying {
                attempt: *attempt,
                wait_ms: *wait_ms,
                reason,
            },
            TurnEvent::AssistantMessage {
                message,
                interrupted,
                usage,
            } => CliEvent::AssistantMessage {
                message,
                interrupted: *interrupted,
                usage,
            },
            TurnEvent::ToolCallStarted {
                call_id,
                name,
                server,
                tool,
                arguments,
                ui_resource_uri,
            } => CliEvent::ToolCallStarted {
                call_id,
                name,
                server: server.as_deref(),
                tool: tool.as_deref(),
                arguments,
                ui_resource_uri: ui_resource_uri.as_deref(),
            },
            TurnEvent::ViewAvailable {
                call_id,
                server,
                tool,
                resource_uri,
            } => CliEvent::ViewAvailable {
                call_id,
                server,
                tool,
                resource_uri,
            },
            TurnEvent::ApprovalRequested {
                call_id,
                server,
                tool,
                arguments,
            } => CliEvent::ApprovalRequested {
                call_id,
                server,
                tool,
                arguments,
            },
            TurnEvent::ApprovalResolved { call_id, decision } => CliEvent::ApprovalResolved {
                call_id,
                decision: *decision,
            },
            TurnEvent::ToolCallRunning { call_id, .. } => CliEvent::ToolCallRunning { call_id },
            TurnEvent::ToolCallProgress {
                call_id,
                progress,
                total,
                message,
            } => CliEvent::ToolCallProgress {
                call_id,
                progress: *progress,
                total: *total,
                message: message.as_deref(),
            },
            TurnEvent::ToolCallFinished {
                call_id,
                status,
                model,
                view,
                duration_ms,
                error,
            } => CliEvent::ToolCallFinished {
                call_id,
                status: *status,
                model,
                view,
                duration_ms: *duration_ms,
                error: error.as_deref(),
            },
            TurnEvent::ToolResults { message } => CliEvent::ToolResults { message },
            TurnEvent::Error { message } => CliEvent::Error { message },
            TurnEvent::AgentEvent { event } => CliEvent::AgentEvent { event },
            TurnEvent::RemoteView {
                call_id,
                server,
                tool,
                view,
            } => CliEvent::RemoteView {
                call_id,
                server,
                tool,
                view,
            },
            TurnEvent::Done {
                stop_reason,
                text,
                usage,
            } => CliEvent::Done {
                stop_reason: *stop_reason,
                text,
                usage,
            },
        }
    }
}

/// The line `porthole run --json` prints for `event` (without the newline).
pub fn cli_line(event: &TurnEvent) -> String {
    // Cannot fail: every map in an event has string keys (JSON values, and structs).
    serde_json::to_string(&CliEvent::from(event)).expect("a turn event always serializes")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::conversation::{Part, Role};
    use crate::events::AllowedBy;
    use crate::provider::RetryKind;

    fn usage() -> Usage {
        Usage {
            input_tokens: 12,
            output_tokens: 34,
            cache_read_tokens: 5,
        }
    }

    fn assistant() -> Message {
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Reasoning {
                    text: "hm".into(),
                    signature: Some("sig".into()),
                    field: None,
                },
                Part::RedactedReasoning { data: "xx".into() },
                Part::Text { text: "Sure.".into() },
                Part::ToolUse {
                    id: "c1".into(),
                    name: "test__forecast".into(),
                    arguments: json!({"city": "Oslo"}),
                },
            ],
        }
    }

    fn samples() -> Vec<(&'static str, TurnEvent)> {
        vec![
            (
                "turn_started",
                TurnEvent::TurnStarted {
                    conversation_id: Some("conv-1".into()),
                    model: "m".into(),
                    provider: "openai".into(),
                },
            ),
            (
                "turn_started_new",
                TurnEvent::TurnStarted {
                    conversation_id: None,
                    model: "m".into(),
                    provider: "anthropic".into(),
                },
            ),
            (
                "user_message",
                TurnEvent::UserMessage {
                    message: Message::user("Hi \"there\"\n"),
                },
            ),
            (
                "waiting_for_servers",
                TurnEvent::WaitingForServers {
                    servers: vec!["jira".into(), "github".into()],
                },
            ),
            (
                "servers_waited",
                TurnEvent::ServersWaited {
                    missing: vec![crate::events::MissingServer {
                        name: "jira".into(),
                        reason: "exited with status 1".into(),
                    }],
                },
            ),
            ("step_started", TurnEvent::StepStarted { step: 2 }),
            ("text_delta", TurnEvent::TextDelta { text: "Hel".into() }),
            ("reasoning_delta", TurnEvent::ReasoningDelta { text: "think".into() }),
            (
                "tool_call_streaming",
                TurnEvent::ToolCallStreaming {
                    call_id: "c1".into(),
                    name: "test__forecast".into(),
                    arguments_text: "{\"ci".into(),
                },
            ),
            (
                "retrying",
                TurnEvent::Retrying {
                    attempt: 2,
                    wait_ms: 1500,
                    kind: RetryKind::RateLimited,
                    reason: "rate limited (HTTP 429): slow down".into(),
                },
            ),
            (
                "assistant_message",
                TurnEvent::AssistantMessage {
                    message: assistant(),
                    interrupted: false,
                    usage: usage(),
                },
            ),
            (
                "tool_call_started",
                TurnEvent::ToolCallStarted {
                    call_id: "c1".into(),
                    name: "test__forecast".into(),
                    server: Some("test".into()),
                    tool: Some("forecast".into()),
                    arguments: json!({"city": "Oslo"}),
                    ui_resource_uri: Some("ui://test/forecast.html".into()),
                },
            ),
            (
                "tool_call_started_unknown",
                TurnEvent::ToolCallStarted {
                    call_id: "c2".into(),
                    name: "nope".into(),
                    server: None,
                    tool: None,
                    arguments: json!("{bad"),
                    ui_resource_uri: None,
                },
            ),
            (
                "view_available",
                TurnEvent::ViewAvailable {
                    call_id: "c1".into(),
                    server: "test".into(),
                    tool: "forecast".into(),
                    resource_uri: "ui://test/forecast.html".into(),
                },
            ),
            (
                "approval_requested",
                TurnEvent::ApprovalRequested {
                    call_id: "c1".into(),
                    server: "test".into(),
                    tool: "forecast".into(),
                    arguments: json!({"city": "Oslo"}),
                },
            ),
            (
                "approval_resolved",
                TurnEvent::ApprovalResolved {
                    call_id: "c1".into(),
                    decision: Decision::AllowAlways,
                },
            ),
            (
                "tool_call_running",
                TurnEvent::ToolCallRunning {
                    call_id: "c1".into(),
                    allowed_by: AllowedBy::Remembered,
                },
            ),
            (
                "tool_call_progress",
                TurnEvent::ToolCallProgress {
                    call_id: "c1".into(),
                    progress: 0.5,
                    total: Some(2.0),
                    message: Some("half".into()),
                },
            ),
            (
                "tool_call_progress_bare",
                TurnEvent::ToolCallProgress {
                    call_id: "c1".into(),
                    progress: 3.0,
                    total: None,
                    message: None,
                },
            ),
            (
                "tool_call_finished",
                TurnEvent::ToolCallFinished {
                    call_id: "c1".into(),
                    status: CallStatus::Ok,
                    model: ModelFacing {
                        content: vec![json!({"type": "text", "text": "3 C"})],
                        is_error: false,
                    },
                    view: json!({"content": [{"type": "text", "text": "3 C"}], "structuredContent": {"high": 3}}),
                    duration_ms: 42,
                    error: None,
                },
            ),
            (
                "tool_call_finished_failed",
                TurnEvent::ToolCallFinished {
                    call_id: "c2".into(),
                    status: CallStatus::Failed,
                    model: ModelFacing {
                        content: vec![json!({"type": "text", "text": "no such tool"})],
                        is_error: true,
                    },
                    view: serde_json::Value::Null,
                    duration_ms: 0,
                    error: Some("no such tool: nope".into()),
                },
            ),
            (
                "tool_results",
                TurnEvent::ToolResults {
                    message: Message {
                        role: Role::Tool,
                        parts: vec![Part::ToolResult {
                            tool_use_id: "c1".into(),
                            content: vec![json!({"type": "text", "text": "3 C"})],
                            is_error: false,
                        }],
                    },
                },
            ),
            (
                "error",
                TurnEvent::Error {
                    message: "model API: unauthorized".into(),
                },
            ),
            (
                "done",
                TurnEvent::Done {
                    stop_reason: StopReason::EndTurn,
                    text: "It is 3 C.".into(),
                    usage: usage(),
                },
            ),
            (
                "done_step_limit",
                TurnEvent::Done {
                    stop_reason: StopReason::StepLimit,
                    text: String::new(),
                    usage: Usage::default(),
                },
            ),
            (
                "agent_event",
                TurnEvent::AgentEvent {
                    event: json!({"type": "STATE_SNAPSHOT", "snapshot": {"city": "Oslo"}}),
                },
            ),
            (
                "remote_view",
                TurnEvent::RemoteView {
                    call_id: "c1".into(),
                    server: "remote/time".into(),
                    tool: "get-time".into(),
                    view: crate::events::RemoteView {
                        resource_uri: "ui://time/view.html".into(),
                        server_hash: Some("abc".into()),
                        server_id: Some("time".into()),
                        tool_input: json!({}),
                        result: json!({"content": [{"type": "text", "text": "12:00"}]}),
                    },
                },
            ),
        ]
    }

    /// Today's lines, written down from the CLI's output before the window's format changed;
    /// one per variant (and per `null`/value choice). They must never change.
    const LINES: &[(&str, &str)] = &[
        (
            "turn_started",
            r#"{"type":"turn_started","conversation_id":"conv-1","model":"m","provider":"openai"}"#,
        ),
        (
            "turn_started_new",
            r#"{"type":"turn_started","conversation_id":null,"model":"m","provider":"anthropic"}"#,
        ),
        (
            "user_message",
            r#"{"type":"user_message","message":{"role":"user","parts":[{"type":"text","text":"Hi \"there\"\n"}]}}"#,
        ),
        (
            "waiting_for_servers",
            r#"{"type":"waiting_for_servers","servers":["jira","github"]}"#,
        ),
        (
            "servers_waited",
            r#"{"type":"servers_waited","missing":[{"name":"jira","reason":"exited with status 1"}]}"#,
        ),
        ("step_started", r#"{"type":"step_started","step":2}"#),
        ("text_delta", r#"{"type":"text_delta","text":"Hel"}"#),
        ("reasoning_delta", r#"{"type":"reasoning_delta","text":"think"}"#),
        (
            "tool_call_streaming",
            r#"{"type":"tool_call_streaming","call_id":"c1","name":"test__forecast","arguments_text":"{\"ci"}"#,
        ),
        (
            "retrying",
            r#"{"type":"retrying","attempt":2,"wait_ms":1500,"reason":"rate limited (HTTP 429): slow down"}"#,
        ),
        (
            "assistant_message",
            r#"{"type":"assistant_message","message":{"role":"assistant","parts":[{"type":"reasoning","text":"hm","signature":"sig"},{"type":"redacted_reasoning","data":"xx"},{"type":"text","text":"Sure."},{"type":"tool_use","id":"c1","name":"test__forecast","arguments":{"city":"Oslo"}}]},"interrupted":false,"usage":{"inputTokens":12,"outputTokens":34,"cacheReadTokens":5}}"#,
        ),
        (
            "tool_call_started",
            r#"{"type":"tool_call_started","call_id":"c1","name":"test__forecast","server":"test","tool":"forecast","arguments":{"city":"Oslo"},"ui_resource_uri":"ui://test/forecast.html"}"#,
        ),
        (
            "tool_call_started_unknown",
            r#"{"type":"tool_call_started","call_id":"c2","name":"nope","server":null,"tool":null,"arguments":"{bad","ui_resource_uri":null}"#,
        ),
        (
            "view_available",
            r#"{"type":"view_available","call_id":"c1","server":"test","tool":"forecast","resource_uri":"ui://test/forecast.html"}"#,
        ),
        (
            "approval_requested",
            r#"{"type":"approval_requested","call_id":"c1","server":"test","tool":"forecast","arguments":{"city":"Oslo"}}"#,
        ),
        (
            "approval_resolved",
            r#"{"type":"approval_resolved","call_id":"c1","decision":"allow_always"}"#,
        ),
        ("tool_call_running", r#"{"type":"tool_call_running","call_id":"c1"}"#),
        (
            "tool_call_progress",
            r#"{"type":"tool_call_progress","call_id":"c1","progress":0.5,"total":2.0,"message":"half"}"#,
        ),
        (
            "tool_call_progress_bare",
            r#"{"type":"tool_call_progress","call_id":"c1","progress":3.0,"total":null,"message":null}"#,
        ),
        (
            "tool_call_finished",
            r#"{"type":"tool_call_finished","call_id":"c1","status":"ok","model":{"content":[{"type":"text","text":"3 C"}],"isError":false},"view":{"content":[{"type":"text","text":"3 C"}],"structuredContent":{"high":3}},"duration_ms":42,"error":null}"#,
        ),
        (
            "tool_call_finished_failed",
            r#"{"type":"tool_call_finished","call_id":"c2","status":"failed","model":{"content":[{"type":"text","text":"no such tool"}],"isError":true},"view":null,"duration_ms":0,"error":"no such tool: nope"}"#,
        ),
        (
            "tool_results",
            r#"{"type":"tool_results","message":{"role":"tool","parts":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"3 C"}],"is_error":false}]}}"#,
        ),
        ("error", r#"{"type":"error","message":"model API: unauthorized"}"#),
        (
            "done",
            r#"{"type":"done","stop_reason":"end_turn","text":"It is 3 C.","usage":{"inputTokens":12,"outputTokens":34,"cacheReadTokens":5}}"#,
        ),
        (
            "done_step_limit",
            r#"{"type":"done","stop_reason":"step_limit","text":"","usage":{"inputTokens":0,"outputTokens":0,"cacheReadTokens":0}}"#,
        ),
        (
            "agent_event",
            r#"{"type":"agent_event","event":{"type":"STATE_SNAPSHOT","snapshot":{"city":"Oslo"}}}"#,
        ),
        (
            "remote_view",
            r#"{"type":"remote_view","call_id":"c1","server":"remote/time","tool":"get-time","view":{"resourceUri":"ui://time/view.html","serverHash":"abc","serverId":"time","toolInput":{},"result":{"content":[{"type":"text","text":"12:00"}]}}}"#,
        ),
    ];

    /// Which variant an event is; the match makes a new variant fail to compile here until it
    /// has a sample and a line.
    fn variant(event: &TurnEvent) -> usize {
        match event {
            TurnEvent::TurnStarted { .. } => 0,
            TurnEvent::UserMessage { .. } => 1,
            TurnEvent::StepStarted { .. } => 2,
            TurnEvent::TextDelta { .. } => 3,
            TurnEvent::ReasoningDelta { .. } => 4,
            TurnEvent::ToolCallStreaming { .. } => 5,
            TurnEvent::Retrying { .. } => 6,
            TurnEvent::AssistantMessage { .. } => 7,
            TurnEvent::ToolCallStarted { .. } => 8,
            TurnEvent::ViewAvailable { .. } => 9,
            TurnEvent::ApprovalRequested { .. } => 10,
            TurnEvent::ApprovalResolved { .. } => 11,
            TurnEvent::ToolCallRunning { .. } => 12,
            TurnEvent::ToolCallProgress { .. } => 13,
            TurnEvent::ToolCallFinished { .. } => 14,
            TurnEvent::ToolResults { .. } => 15,
            TurnEvent::Error { .. } => 16,
            TurnEvent::Done { .. } => 17,
            TurnEvent::WaitingForServers { .. } => 18,
            TurnEvent::ServersWaited { .. } => 19,
            TurnEvent::AgentEvent { .. } => 20,
            TurnEvent::RemoteView { .. } => 21,
        }
    }
    const VARIANTS: usize = 22;

    #[test]
    fn every_event_prints_todays_line() {
        let samples = samples();
        assert_eq!(
            samples.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
            LINES.iter().map(|(name, _)| *name).collect::<Vec<_>>()
        );
        let mut changed = Vec::new();
        for ((name, event), (_, line)) in samples.iter().zip(LINES) {
            let printed = cli_line(event);
            if printed != *line {
                changed.push(format!("{name}:\n  was {line}\n  now {printed}"));
            }
        }
        assert!(changed.is_empty(), "the --json lines changed:\n{}", changed.join("\n"));
    }

    #[test]
    fn every_variant_has_a_line() {
        let mut seen = [false; VARIANTS];
        for (_, event) in samples() {
            seen[variant(&event)] = true;
        }
        let missing: Vec<usize> = (0..VARIANTS).filter(|v| !seen[*v]).collect();
        assert!(missing.is_empty(), "variants without a pinned line: {missing:?}");
    }

    #[test]
    fn the_window_gets_camel_case_and_the_retry_kind_the_cli_does_not() {
        let samples = samples();
        let event = |name: &str| &samples.iter().find(|(n, _)| *n == name).unwrap().1;

        let window = serde_json::to_value(event("tool_call_finished")).unwrap();
        assert_eq!(window["type"], "tool_call_finished");
        assert_eq!(window["callId"], "c1");
        assert_eq!(window["durationMs"], 42);
        assert!(window.get("duration_ms").is_none());
        assert!(cli_line(event("tool_call_finished")).contains(r#""duration_ms":42"#));

        let window = serde_json::to_value(event("retrying")).unwrap();
        assert_eq!(window["waitMs"], 1500);
        assert_eq!(window["kind"], "rate_limited");
        assert!(!cli_line(event("retrying")).contains("kind"));

        // Nested types keep their own format in both: the stored message, camelCase usage.
        let window = serde_json::to_value(event("tool_results")).unwrap();
        assert_eq!(window["message"]["parts"][0]["tool_use_id"], "c1");
        let window = serde_json::to_value(event("done")).unwrap();
        assert_eq!(window["stopReason"], "end_turn");
        assert_eq!(window["usage"]["inputTokens"], 12);
    }
}
