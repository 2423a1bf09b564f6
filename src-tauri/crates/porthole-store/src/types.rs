use std::fmt;
use std::str::FromStr;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::error::UnknownStatus;

macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal, { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
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
                f.pad(self.as_str())
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

text_enum!(
    /// How a tool call came to run (kept with the call, shown on its card).
    AllowedBy, "approval", {
        /// The person started it (the tools panel's Run, or a view's call they made).
        Person = "person",
        /// The person allowed this one call.
        Once = "once",
        /// The person answered "Always allow" on this call.
        Always = "always",
        /// An earlier "Always allow" let it run without asking.
        Remembered = "remembered",
        /// Its server's `alwaysAllow` in the config let it run without asking.
        Config = "config",
        /// A view's own tool that declares it only reads: run without asking.
        ReadOnly = "readonly",
        /// A remote agent ran it (AG-UI): Porthole was told of the call, not asked.
        Agent = "agent",
    }
);

impl ToolCallStatus {
    /// Whether the call is over (every status but `pending` and `running`).
    pub fn is_final(self) -> bool {
        !matches!(self, ToolCallStatus::Pending | ToolCallStatus::Running)
    }
}

text_enum!(
    /// Who a message is from.
    MessageRole, "message role", {
        /// The person (or a view's proposed message they sent).
        User = "user",
        /// The model.
        Assistant = "assistant",
        /// Tool results; an empty one holds a tools-panel run (see the agent's `Recorder::for_tool_run`).
        Tool = "tool",
    }
);

text_enum!(
    /// Where an MCP App view is in its life.
    ViewState, "view state", {
        /// Created; its HTML is being read and checked, or the view is starting.
        Loading = "loading",
        /// The view finished its handshake.
        Ready = "ready",
        /// It could not be shown (the reason says why).
        Failed = "failed",
        /// Its resource was refused (MIME, size, CSP…; the reason says why).
        Refused = "refused",
        /// Torn down; it can be shown again from the stored input and result.
        Closed = "closed",
        /// Past its retention; set by the store only (see [`crate::Store::expire_views`]).
        Expired = "expired",
    }
);

impl ViewState {
    /// Whether [`crate::Store::set_view_state`] accepts it: every state but `Expired`, which only
    /// the store sets.
    pub fn is_settable(self) -> bool {
        self != ViewState::Expired
    }
}

/// What an audit log entry records. Stored, printed and serialized as its text (`"csp-dropped"`…).
///
/// The log is kept across versions and outlives what it mentions, so a kind this version does not
/// know (a later one wrote it) reads as [`AuditKind::Other`] with the text as stored, never as an
/// error, and is written back unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
pub enum AuditKind {
    /// A view was shown: its HTML's hash and CSP.
    #[serde(rename = "view")]
    View,
    /// A view's resource, or a request from a view, was refused.
    #[serde(rename = "refused")]
    Refused,
    /// A view called a tool of its server (allowed or not: see the detail's `outcome`).
    #[serde(rename = "call")]
    Call,
    /// An entry of a view's declared CSP was left out of the policy.
    #[serde(rename = "csp-dropped")]
    CspDropped,
    /// A view caused more audit entries in one second than are written; the rest were dropped.
    #[serde(rename = "suppressed")]
    Suppressed,
    /// The person let a server's views use devices, or a view's request for one was decided.
    #[serde(rename = "devices")]
    Devices,
    /// A kind this version does not know, as stored.
    #[serde(untagged)]
    Other(String),
}

impl AuditKind {
    /// Every kind this version writes, in declaration order.
    pub const KNOWN: &'static [AuditKind] = &[
        AuditKind::View,
        AuditKind::Refused,
        AuditKind::Call,
        AuditKind::CspDropped,
        AuditKind::Suppressed,
        AuditKind::Devices,
    ];

    /// The text stored in the database (and used by serde).
    pub fn as_str(&self) -> &str {
        match self {
            AuditKind::View => "view",
            AuditKind::Refused => "refused",
            AuditKind::Call => "call",
            AuditKind::CspDropped => "csp-dropped",
            AuditKind::Suppressed => "suppressed",
            AuditKind::Devices => "devices",
            AuditKind::Other(text) => text,
        }
    }

    /// The kind this text names; text of no known kind is [`AuditKind::Other`].
    pub fn from_text(text: &str) -> AuditKind {
        AuditKind::KNOWN
            .iter()
            .find(|kind| kind.as_str() == text)
            .cloned()
            .unwrap_or_else(|| AuditKind::Other(text.to_owned()))
    }
}

impl fmt::Display for AuditKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl ToSql for AuditKind {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(ValueRef::Text(self.as_str().as_bytes())))
    }
}

impl FromSql for AuditKind {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        Ok(AuditKind::from_text(value.as_str()?))
    }
}

/// A conversation (its messages are read separately).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Conversation {
    /// 16 lowercase hex characters.
    pub id: String,
    pub title: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds of the creation or of the last appended message.
    pub updated_at: i64,
    /// The remote AG-UI agent the conversation is with (its name in the config); `None`: the
    /// local model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<String>,
}

/// A message as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StoredMessage {
    pub id: i64,
    pub conversation_id: String,
    pub role: MessageRole,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
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
    /// How it came to run; `None` before it ran, for a call that never ran, and for calls
    /// recorded before schema version 3.
    pub allowed_by: Option<AllowedBy>,
}

/// An MCP App view to record (see [`crate::Store::insert_view`]). It starts in [`ViewState::Loading`].
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
    pub state: ViewState,
    pub reason: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub expires_at: i64,
    /// `expires_at` has passed (at the time of reading), or the state is [`ViewState::Expired`].
    pub expired: bool,
}

/// An MCP Apps host security event to record (see [`crate::Store::audit`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewAuditEntry {
    pub kind: AuditKind,
    pub conversation_id: Option<String>,
    pub server: Option<String>,
    pub tool: Option<String>,
    pub uri: Option<String>,
    pub detail: Value,
}

/// An audit log entry as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub id: i64,
    /// Unix milliseconds.
    pub at: i64,
    pub kind: AuditKind,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub conversation_id: String,
    pub conversation_title: String,
    pub message_id: Option<i64>,
    pub role: Option<MessageRole>,
    /// A short excerpt with each matched term between [`SNIPPET_OPEN`] and [`SNIPPET_CLOSE`]
    /// (control characters, so no text of the message can be mistaken for a mark).
    pub snippet: String,
    /// Lower comes first: a title's FTS5 bm25 rank (negative), a message's place in the
    /// newest-first order (0, 1, 2…).
    pub rank: f64,
}

/// Marks the start of a matched term in a [`SearchHit`]'s snippet (STX).
pub const SNIPPET_OPEN: char = '\u{2}';
/// Marks the end of a matched term in a [`SearchHit`]'s snippet (ETX).
pub const SNIPPET_CLOSE: char = '\u{3}';

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_and_the_database_use_the_same_text() {
        fn check<T: Serialize + for<'de> Deserialize<'de> + fmt::Display + PartialEq + fmt::Debug>(
            value: T,
            text: &str,
        ) {
            assert_eq!(serde_json::to_value(&value).unwrap(), text);
            assert_eq!(value.to_string(), text);
            assert_eq!(serde_json::from_value::<T>(Value::from(text)).unwrap(), value);
        }
        for role in MessageRole::ALL {
            check(*role, role.as_str());
            assert_eq!(role.as_str().parse::<MessageRole>().unwrap(), *role);
        }
        for state in ViewState::ALL {
            check(*state, state.as_str());
        }
        for allowed in AllowedBy::ALL {
            check(*allowed, allowed.as_str());
            assert_eq!(allowed.as_str().parse::<AllowedBy>().unwrap(), *allowed);
        }
        for kind in AuditKind::KNOWN {
            check(kind.clone(), kind.as_str());
            assert_eq!(AuditKind::from_text(kind.as_str()), *kind);
        }
        check(AuditKind::Other("later-kind".into()), "later-kind");
        assert_eq!(AuditKind::from_text("csp-dropped"), AuditKind::CspDropped);
        assert_eq!(
            AuditKind::from_text("CSP-DROPPED"),
            AuditKind::Other("CSP-DROPPED".into())
        );
        assert!(matches!(
            "system".parse::<MessageRole>(),
            Err(UnknownStatus {
                what: "message role",
                ..
            })
        ));
    }

    #[test]
    fn only_expired_is_left_to_the_store() {
        let settable: Vec<&str> = ViewState::ALL
            .iter()
            .filter(|s| s.is_settable())
            .map(|s| s.as_str())
            .collect();
        assert_eq!(settable, ["loading", "ready", "failed", "refused", "closed"]);
    }
}
