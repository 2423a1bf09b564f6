use std::fmt;
use std::str::FromStr;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::UnknownStatus;

macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal, { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "lowercase")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The lowercase text stored in the database (and used by serde).
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownStatus;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownStatus { what: $what, value: s.to_owned() }),
                }
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::Borrowed(ValueRef::Text(self.as_str().as_bytes())))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                value.as_str()?.parse().map_err(|e| FromSqlError::Other(Box::new(e)))
            }
        }
    };
}

text_enum!(
    /// Where a message is in its life.
    MessageStatus, "message status", {
        /// Fully written.
        Complete = "complete",
        /// Being streamed; not yet searchable.
        Streaming = "streaming",
        /// Streaming stopped before the end (cancelled, or the app died mid-turn); the partial parts are kept.
        Interrupted = "interrupted",
        /// The model request failed; see the message's `error`.
        Failed = "failed",
    }
);

text_enum!(
    /// Where a tool call is in its life.
    ToolCallStatus, "tool call status", {
        /// Awaiting the user's approval.
        Pending = "pending",
        /// Sent to the server, no result yet.
        Running = "running",
        /// The server returned a result.
        Ok = "ok",
        /// The server returned a result with `isError: true`.
        Error = "error",
        /// No result (transport error, timeout, server gone).
        Failed = "failed",
        /// The user refused it.
        Denied = "denied",
        /// Cancelled by the user while running.
        Cancelled = "cancelled",
        /// Left pending or running when the app stopped.
        Interrupted = "interrupted",
    }
);

impl ToolCallStatus {
    /// Whether the call is over (every status but `pending` and `running`).
    pub fn is_final(self) -> bool {
        !matches!(self, ToolCallStatus::Pending | ToolCallStatus::Running)
    }
}

/// The states a view can be set to with [`crate::Store::set_view_state`].
/// The store itself sets `"expired"` (see [`crate::Store::expire_views`]).
pub const VIEW_STATES: &[&str] = &["loading", "ready", "failed", "refused", "closed"];

/// The message roles the store accepts.
pub const ROLES: &[&str] = &["user", "assistant", "tool"];

/// A conversation (its messages are read separately).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Conversation {
    /// 16 lowercase hex characters.
    pub id: String,
    pub title: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds of the creation or of the last appended message.
    pub updated_at: i64,
}

/// A message as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredMessage {
    pub id: i64,
    pub conversation_id: String,
    /// `"user"`, `"assistant"` or `"tool"`.
    pub role: String,
    /// The JSON array of parts, exactly as given.
    pub parts: Value,
    pub status: MessageStatus,
    pub error: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A tool call to record (see [`crate::Store::insert_tool_call`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewToolCall {
    pub conversation_id: String,
    /// The assistant message that asked for the call.
    pub message_id: i64,
    /// The model's tool-call id (unique only within a conversation).
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub arguments: Value,
    pub status: ToolCallStatus,
}

/// The outcome of a tool call (see [`crate::Store::finish_tool_call`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallFinish {
    pub status: ToolCallStatus,
    /// What the model sees.
    pub model_facing: Option<Value>,
    /// What only the view sees.
    pub view_facing: Option<Value>,
    pub error: Option<String>,
    pub duration_ms: u64,
}

/// A tool call as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRecord {
    pub id: i64,
    pub conversation_id: String,
    pub message_id: i64,
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub arguments: Value,
    pub status: ToolCallStatus,
    pub model_facing: Option<Value>,
    pub view_facing: Option<Value>,
    pub error: Option<String>,
    pub duration_ms: Option<u64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub finished_at: Option<i64>,
}

/// An MCP App view to record (see [`crate::Store::insert_view`]). It starts in state `"loading"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewView {
    pub tool_call_id: i64,
    pub server: String,
    pub tool: String,
    pub uri: String,
    pub html_sha256: String,
    pub csp: String,
    /// Unix milliseconds.
    pub expires_at: i64,
}

/// An MCP App view as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewRecord {
    pub id: i64,
    pub tool_call_id: i64,
    pub conversation_id: String,
    pub server: String,
    pub tool: String,
    pub uri: String,
    pub html_sha256: String,
    pub csp: String,
    /// One of [`VIEW_STATES`], or `"expired"`.
    pub state: String,
    pub reason: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub expires_at: i64,
    /// `expires_at` has passed (at the time of reading), or the state is `"expired"`.
    pub expired: bool,
}

/// An MCP Apps host security event to record (see [`crate::Store::audit`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewAuditEntry {
    /// `"view"`, `"refused"`, `"call"`, `"csp-dropped"`, …
    pub kind: String,
    pub conversation_id: Option<String>,
    pub server: Option<String>,
    pub tool: Option<String>,
    pub uri: Option<String>,
    pub detail: Value,
}

/// An audit log entry as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub id: i64,
    /// Unix milliseconds.
    pub at: i64,
    pub kind: String,
    /// May name a conversation that has since been deleted.
    pub conversation_id: Option<String>,
    pub server: Option<String>,
    pub tool: Option<String>,
    pub uri: Option<String>,
    pub detail: Value,
}

/// A tool the user chose to always allow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AlwaysAllowed {
    pub server: String,
    pub tool: String,
    pub created_at: i64,
}

/// One search result: a message, or (when `message_id` is `None`) a conversation title.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub conversation_id: String,
    pub conversation_title: String,
    pub message_id: Option<i64>,
    pub role: Option<String>,
    /// A short excerpt with the matched terms between `[` and `]`.
    pub snippet: String,
    /// FTS5 bm25 rank: lower is better.
    pub rank: f64,
}
