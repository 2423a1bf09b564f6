//! The one stream of events a turn produces. The desktop app, the headless CLI (`--json` prints
//! them as JSON lines) and the conversation store all consume the same events, in order.
//!
//! Serialized, a `TurnEvent` is what the window gets: `type` in snake_case, fields in camelCase
//! like every other type the window gets. The CLI's lines keep their own, frozen format:
//! [`crate::wire`].

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;
use ts_rs::TS;

use crate::conversation::{Message, Usage};
use crate::provider::RetryKind;
use porthole_mcp::ModelFacing;
pub use porthole_store::AllowedBy;

/// A view a remote AG-UI agent offers ([`TurnEvent::RemoteView`]): what the MCP Apps
/// middleware's `mcp-apps` activity snapshot says.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RemoteView {
    /// The view's `ui://` resource on that server.
    pub resource_uri: String,
    /// The middleware's names for the server: its hash of the server's config, and the id it
    /// was configured with, if any. Proxied requests name the server with them.
    pub server_hash: Option<String>,
    pub server_id: Option<String>,
    /// The call's arguments and whole result, as the server gave it.
    pub tool_input: Value,
    pub result: Value,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum CallStatus {
    /// The server returned a result.
    Ok,
    /// The server returned a result with `isError: true`.
    Error,
    /// No result: the server or connection failed, or the model named no such tool.
    Failed,
    /// The user (or the headless policy) refused the call.
    Denied,
    Cancelled,
}

/// What the user decided about one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    AllowOnce,
    AllowAlways,
    Deny,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without asking for more tools.
    EndTurn,
    /// The model kept calling tools past the step limit.
    StepLimit,
    Cancelled,
    Error,
}

/// A server a turn went on without, and why (`failed: …`, still starting, turned off).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MissingServer {
    pub name: String,
    pub reason: String,
}

/// One thing that happened in a turn, as it happened.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum TurnEvent {
    TurnStarted {
        conversation_id: Option<String>,
        model: String,
        provider: String,
    },
    /// The user's message, as it goes into the history.
    UserMessage {
        message: Message,
    },
    /// Servers that are still starting (connecting) hold the first model request back, so the
    /// model is not asked without the person's tools; each ends its attempt within its own
    /// timeout, and the host may send without them sooner.
    WaitingForServers {
        servers: Vec<String>,
    },
    /// The wait for starting servers is over; `missing` are those the turn goes on without.
    ServersWaited {
        missing: Vec<MissingServer>,
    },
    /// A model request is about to be sent (step 1, 2, … of the turn).
    StepStarted {
        step: u32,
    },
    TextDelta {
        text: String,
    },
    ReasoningDelta {
        text: String,
    },
    /// A tool call is being streamed by the model; `arguments_text` is the JSON so far (for a
    /// view's `tool-input-partial`).
    ToolCallStreaming {
        call_id: String,
        name: String,
        arguments_text: String,
    },
    /// The provider is waiting before trying again (rate limit, server error, or no answer);
    /// `reason` is the provider's words, `kind` what they are about.
    Retrying {
        attempt: u32,
        #[ts(type = "number")]
        wait_ms: u64,
        kind: RetryKind,
        reason: String,
    },
    /// The model's message for this step, complete or (`interrupted: true`) cut short.
    AssistantMessage {
        message: Message,
        interrupted: bool,
        usage: Usage,
    },
    /// A tool call the model asked for, resolved to its server and tool.
    ToolCallStarted {
        call_id: String,
        name: String,
        server: Option<String>,
        tool: Option<String>,
        arguments: Value,
        /// The tool's `ui://` view, when MCP Apps is on for its server.
        ui_resource_uri: Option<String>,
    },
    /// The tool has an MCP App view for this call (MCP Apps is on for its server); the host
    /// may show it while the call runs. Whether it rendered is the host's to report.
    ViewAvailable {
        call_id: String,
        server: String,
        tool: String,
        resource_uri: String,
    },
    /// The call waits for the user's decision.
    ApprovalRequested {
        call_id: String,
        server: String,
        tool: String,
        arguments: Value,
    },
    ApprovalResolved {
        call_id: String,
        decision: Decision,
    },
    /// The call is running on its server, and how it came to (asked, remembered, the config…).
    ToolCallRunning {
        call_id: String,
        allowed_by: AllowedBy,
    },
    ToolCallProgress {
        call_id: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// The call ended. `model` is exactly what the model gets; `view` is the full, unmodified
    /// `CallToolResult` for the tool's view (`null` when there was no result).
    ToolCallFinished {
        call_id: String,
        status: CallStatus,
        model: ModelFacing,
        view: Value,
        #[ts(type = "number")]
        duration_ms: u64,
        error: Option<String>,
    },
    /// The tool results of one step, as the model will get them.
    ToolResults {
        message: Message,
    },
    Error {
        message: String,
    },
    /// A remote AG-UI agent's MCP App view for one of its calls (the MCP Apps middleware's
    /// `mcp-apps` activity): the server it ran the call on, the view's `ui://` resource, and
    /// the whole `CallToolResult` the view gets. The call's model-facing result stays what the
    /// agent's `TOOL_CALL_RESULT` said.
    RemoteView {
        call_id: String,
        /// The server as Porthole names it: `<agent>/<server id, or its hash>`.
        server: String,
        /// The tool the call ran.
        tool: String,
        view: RemoteView,
    },
    /// An event of a remote AG-UI agent that Porthole keeps no part of (state and message
    /// snapshots and deltas, activities, steps, custom and raw events), as it came.
    AgentEvent {
        event: Value,
    },
    Done {
        stop_reason: StopReason,
        /// The text of the turn's last assistant message.
        text: String,
        usage: Usage,
    },
}

/// Something that takes a turn's events as they happen. Called in order, on the turn's task;
/// keep it quick (a store write, a channel send).
pub trait EventSink: Send + Sync {
    fn emit(&self, event: &TurnEvent);

    /// Why this sink can no longer keep the turn, once that has happened (the store refused a
    /// write: the disk is full, the database is damaged). The agent loop checks it between
    /// steps and stops the turn with it as the error, before any further model request or tool
    /// call. A sink that only shows or forwards events never fails.
    fn failure(&self) -> Option<String> {
        None
    }
}

/// Forwards events into a channel (for async consumers: the CLI printer, tests, benchmarks).
pub struct ChannelSink(pub mpsc::UnboundedSender<TurnEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: &TurnEvent) {
        // The consumer may have stopped listening (a printer that quit, a test that has what it
        // wanted); the turn goes on and the event has no one to go to.
        self.0.send(event.clone()).ok();
    }
}

impl<F: Fn(&TurnEvent) + Send + Sync> EventSink for F {
    fn emit(&self, event: &TurnEvent) {
        self(event)
    }
}

#[cfg(test)]
mod tests {
    use ts_rs::{Config, TS};

    use super::*;
    use crate::conversation::{Part, Role};

    /// The TypeScript the window's types come out as, with ts-rs's default config (so a `u64`
    /// left without `#[ts(type = "number")]` would show up as `bigint`).
    fn decls() -> String {
        let cfg = Config::new();
        [
            TurnEvent::decl(&cfg),
            RetryKind::decl(&cfg),
            CallStatus::decl(&cfg),
            Decision::decl(&cfg),
            StopReason::decl(&cfg),
            Message::decl(&cfg),
            Role::decl(&cfg),
            Part::decl(&cfg),
            Usage::decl(&cfg),
        ]
        .join("\n")
    }

    #[test]
    fn typescript_follows_the_serde_attributes() {
        let ts = decls();
        // The tag and its snake_case values; camelCase fields (rename_all_fields).
        assert!(ts.contains(r#""type": "tool_call_finished""#), "{ts}");
        assert!(ts.contains("callId: string"), "{ts}");
        assert!(ts.contains("durationMs: number"), "{ts}");
        assert!(ts.contains("waitMs: number"), "{ts}");
        assert!(ts.contains("kind: RetryKind"), "{ts}");
        assert!(
            ts.contains(r#""rate_limited" | "server_error" | "unreachable""#),
            "{ts}"
        );
        assert!(ts.contains("conversationId: string | null"), "{ts}");
        assert!(!ts.contains("duration_ms") && !ts.contains("call_id"), "{ts}");
        // Nested types keep their own casing: the stored message's parts stay snake_case.
        assert!(ts.contains("tool_use_id: string"), "{ts}");
        assert!(ts.contains("inputTokens: number"), "{ts}");
        // skip_serializing_if: absent, never null.
        assert!(ts.contains("signature?: string, field?: string, }"), "{ts}");
        assert!(!ts.contains("bigint"), "{ts}");
    }
}
