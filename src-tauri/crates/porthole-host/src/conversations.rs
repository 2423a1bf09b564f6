//! The conversations in the store: listed, opened (with their tool calls, both facings),
//! renamed, deleted and searched.

use porthole_store::{Conversation, SearchHit, StoredMessage, ToolCallRecord};
use serde::Serialize;
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};

/// A stored conversation: its messages and tool calls (both facings).
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StoredConversation {
    pub conversation: Conversation,
    pub messages: Vec<StoredMessage>,
    pub tool_calls: Vec<ToolCallRecord>,
    /// A turn is writing to it now.
    pub running: bool,
    /// The view (`ui://` URI) each call that had one showed, by call id: its card is re-created
    /// with the view when it comes near sight.
    pub view_uris: std::collections::BTreeMap<String, String>,
}

/// A page of the conversation list (the sidebar loads the list a page at a time).
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConversationList {
    /// Most recently updated first.
    pub conversations: Vec<Conversation>,
    /// More follow the last one.
    pub more: bool,
}

/// How many hits a search returns at most.
const SEARCH_LIMIT: usize = 50;

/// The most conversations one page holds.
pub const MAX_PAGE: u32 = 1000;

impl Host {
    pub fn list_conversations(&self) -> AppResult<Vec<Conversation>> {
        Ok(self.store()?.list_conversations()?)
    }

    /// Up to `limit` (at most [`MAX_PAGE`]) conversations, most recently updated first, after the
    /// one with id `after`; `more` says whether others follow.
    pub fn list_conversation_page(&self, limit: u32, after: Option<&str>) -> AppResult<ConversationList> {
        let limit = limit.clamp(1, MAX_PAGE) as usize;
        let mut conversations = self.store()?.list_conversations_page(limit + 1, after)?;
        let more = conversations.len() > limit;
        conversations.truncate(limit);
        Ok(ConversationList { conversations, more })
    }

    pub fn open_conversation(&self, id: &str) -> AppResult<StoredConversation> {
        let store = self.store()?;
        let conversation = self.existing_conversation(id)?;
        let tool_calls = store.tool_calls(id)?;
        let call_ids: std::collections::HashMap<i64, &str> =
            tool_calls.iter().map(|c| (c.id, c.call_id.as_str())).collect();
        let view_uris = store
            .views(id)?
            .into_iter()
            .filter_map(|v| call_ids.get(&v.tool_call_id).map(|call| (call.to_string(), v.uri)))
            .collect();
        Ok(StoredConversation {
            conversation,
            messages: store.messages(id)?,
            tool_calls,
            running: self.inner.turns.is_running(id),
            view_uris,
        })
    }

    pub fn rename_conversation(&self, id: &str, title: &str) -> AppResult<()> {
        let title = title.trim();
        if title.is_empty() {
            return Err(AppError::invalid("a conversation needs a title"));
        }
        Ok(self.store()?.rename_conversation(id, title)?)
    }

    /// Deletes a conversation; a turn running in it is stopped and its pop-out windows close.
    pub fn delete_conversation(&self, id: &str) -> AppResult<()> {
        self.inner.turns.stop(id);
        self.close_pop_outs_of(id);
        Ok(self.store()?.delete_conversation(id)?)
    }

    pub fn search_conversations(&self, query: &str) -> AppResult<Vec<SearchHit>> {
        Ok(self.store()?.search(query, SEARCH_LIMIT)?)
    }
}
