//! A conversation as one JSON document, and back: everything the store keeps of it (its
//! messages, tool calls with both facings, view records and Apps SDK widget states), for `porthole export --format
//! json` and `porthole import`. Imported, it is a new conversation (a new id) with the same
//! contents and times; what was being written when it was exported comes back interrupted.

use rusqlite::{TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};
use crate::types::{Conversation, MessageStatus, StoredMessage, ToolCallRecord, ToolCallStatus, ViewRecord, ViewState};
use crate::{Store, to_json_text};

/// What `format` says in an exported conversation.
pub const EXPORT_FORMAT: &str = "porthole.conversation";

/// The version of the exported shape this build writes and reads.
pub const EXPORT_VERSION: u32 = 1;

/// One conversation, whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedConversation {
    /// Always [`EXPORT_FORMAT`].
    pub format: String,
    /// [`EXPORT_VERSION`] when written by this build.
    pub version: u32,
    pub conversation: Conversation,
    pub messages: Vec<StoredMessage>,
    pub tool_calls: Vec<ToolCallRecord>,
    pub views: Vec<ViewRecord>,
    /// The state Apps SDK widgets kept (`setWidgetState`), by tool call. Absent in files from
    /// before widget states were kept, and when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub widget_states: Vec<ExportedWidgetState>,
}

/// One widget's kept state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedWidgetState {
    /// The tool call's `id` in this file's `toolCalls`.
    pub tool_call_id: i64,
    pub state: serde_json::Value,
}

impl Store {
    /// Everything the store keeps of conversation `id`.
    pub fn export_conversation(&self, id: &str) -> Result<ExportedConversation> {
        let conversation = self
            .conversation(id)?
            .ok_or_else(|| StoreError::not_found("conversation", id))?;
        let tool_calls = self.tool_calls(id)?;
        let mut widget_states = Vec::new();
        for call in &tool_calls {
            if let Some(state) = self.widget_state(call.id)? {
                widget_states.push(ExportedWidgetState {
                    tool_call_id: call.id,
                    state,
                });
            }
        }
        Ok(ExportedConversation {
            format: EXPORT_FORMAT.into(),
            version: EXPORT_VERSION,
            conversation,
            messages: self.messages(id)?,
            tool_calls,
            views: self.views(id)?,
            widget_states,
        })
    }

    /// Adds an exported conversation as a new one (a new id; the same title, contents and
    /// times), in one transaction: all of it or nothing. A message or call that was still being
    /// written comes back interrupted.
    pub fn import_conversation(&self, exported: &ExportedConversation) -> Result<Conversation> {
        if exported.format != EXPORT_FORMAT {
            return Err(StoreError::invalid(
                "exported conversation",
                format!(
                    "this is not an exported Porthole conversation (its format is {:?}, not {EXPORT_FORMAT:?})",
                    exported.format
                ),
            ));
        }
        if exported.version > EXPORT_VERSION {
            return Err(StoreError::invalid(
                "exported conversation",
                format!(
                    "this conversation was exported by a newer Porthole (format version {}; this one reads {EXPORT_VERSION})",
                    exported.version
                ),
            ));
        }
        let title = exported.conversation.title.trim();
        let title = if title.is_empty() {
            "Imported conversation"
        } else {
            title
        };
        let mut inner = self.lock();
        let tx = inner.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let id = loop {
            let id = crate::new_conversation_id()?;
            let inserted = tx
                .prepare_cached(
                    "INSERT INTO conversations (id, title, created_at, updated_at, agent) VALUES (?1, ?2, ?3, ?4, ?5) \
                     ON CONFLICT (id) DO NOTHING",
                )?
                .execute(params![
                    id,
                    title,
                    exported.conversation.created_at,
                    exported.conversation.updated_at,
                    exported.conversation.agent
                ])?;
            if inserted == 1 {
                break id;
            }
        };
        let mut message_ids = std::collections::HashMap::new();
        for m in &exported.messages {
            let status = match m.status {
                MessageStatus::Streaming => MessageStatus::Interrupted,
                other => other,
            };
            tx.prepare_cached(
                "INSERT INTO messages (conversation_id, role, parts, status, error, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                id,
                m.role,
                to_json_text(&m.parts)?,
                status,
                m.error,
                m.created_at,
                m.updated_at
            ])?;
            message_ids.insert(m.id, tx.last_insert_rowid());
        }
        let mut call_ids = std::collections::HashMap::new();
        for c in &exported.tool_calls {
            let Some(message_id) = message_ids.get(&c.message_id) else {
                return Err(StoreError::invalid(
                    "exported conversation",
                    format!(
                        "tool call {:?} belongs to message {}, which is not in the file",
                        c.call_id, c.message_id
                    ),
                ));
            };
            let status = match c.status {
                ToolCallStatus::Pending | ToolCallStatus::Running => ToolCallStatus::Interrupted,
                other => other,
            };
            let facing = |v: &Option<serde_json::Value>| v.as_ref().map(to_json_text).transpose();
            tx.prepare_cached(
                "INSERT INTO tool_calls (conversation_id, message_id, call_id, server, tool, arguments, status, \
                 model_facing, view_facing, error, duration_ms, created_at, updated_at, finished_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?
            .execute(params![
                id,
                message_id,
                c.call_id,
                c.server,
                c.tool,
                to_json_text(&c.arguments)?,
                status,
                facing(&c.model_facing)?,
                facing(&c.view_facing)?,
                c.error,
                c.duration_ms.map(|d| d as i64),
                c.created_at,
                c.updated_at,
                c.finished_at
            ])?;
            call_ids.insert(c.id, tx.last_insert_rowid());
        }
        for v in &exported.views {
            let Some(tool_call_id) = call_ids.get(&v.tool_call_id) else {
                return Err(StoreError::invalid(
                    "exported conversation",
                    format!(
                        "a view belongs to tool call {}, which is not in the file",
                        v.tool_call_id
                    ),
                ));
            };
            // A view that was live when exported is one to show again: closed.
            let state = match v.state {
                ViewState::Loading | ViewState::Ready => ViewState::Closed,
                other => other,
            };
            tx.prepare_cached(
                "INSERT INTO views (tool_call_id, server, tool, uri, html_sha256, csp, state, reason, created_at, \
                 updated_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?
            .execute(params![
                tool_call_id,
                v.server,
                v.tool,
                v.uri,
                v.html_sha256,
                v.csp,
                state,
                v.reason,
                v.created_at,
                v.updated_at,
                v.expires_at
            ])?;
        }
        for w in &exported.widget_states {
            let Some(tool_call_id) = call_ids.get(&w.tool_call_id) else {
                return Err(StoreError::invalid(
                    "exported conversation",
                    format!(
                        "a widget state belongs to tool call {}, which is not in the file",
                        w.tool_call_id
                    ),
                ));
            };
            tx.prepare_cached("INSERT INTO widget_states (tool_call_id, state, updated_at) VALUES (?1, ?2, ?3)")?
                .execute(params![
                    tool_call_id,
                    w.state.to_string(),
                    exported.conversation.updated_at
                ])?;
        }
        tx.commit()?;
        Ok(Conversation {
            id,
            title: title.to_owned(),
            created_at: exported.conversation.created_at,
            updated_at: exported.conversation.updated_at,
            agent: exported.conversation.agent.clone(),
        })
    }
}
