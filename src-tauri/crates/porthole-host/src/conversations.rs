//! The conversations in the store: listed, opened (with their tool calls, both facings),
//! renamed, deleted and searched.

use porthole_store::{Conversation, SearchHit, StoredMessage, ToolCallRecord};
use serde::Serialize;
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};

/// A stored conversation, or a page of it: its messages (whole turns, from its end when it is
/// opened) and their tool calls (both facings).
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StoredConversation {
    pub conversation: Conversation,
    pub messages: Vec<StoredMessage>,
    pub tool_calls: Vec<ToolCallRecord>,
    /// Earlier messages precede these: the window asks for them (`earlier_messages`, before the
    /// first of these) when the reader nears the top, or by itself while the transcript is idle.
    pub earlier: bool,
    /// A turn is writing to it now.
    pub running: bool,
    /// The view (`ui://` URI) each call that had one showed, by call id: its card is re-created
    /// with the view when it comes near sight.
    pub view_uris: std::collections::BTreeMap<String, String>,
    /// Where the reader left it (when opened, and not left at its end).
    pub scroll: Option<crate::scroll_positions::ScrollPosition>,
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

/// Messages a conversation opens with, at least (whole turns: a long last turn is all there).
pub const OPEN_PAGE: usize = 100;

/// Messages each earlier page holds, at least.
pub const EARLIER_PAGE: usize = 500;

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

    /// A conversation as the window opens it: its last turns (at least [`OPEN_PAGE`] messages
    /// when it has that many), the rest a page at a time as the reader scrolls up.
    pub fn open_conversation(&self, id: &str) -> AppResult<StoredConversation> {
        self.conversation_page(id, None, OPEN_PAGE)
    }

    /// The turns before message `before` (at least [`EARLIER_PAGE`] messages when there are).
    pub fn earlier_messages(&self, id: &str, before: i64) -> AppResult<StoredConversation> {
        self.conversation_page(id, Some(before), EARLIER_PAGE)
    }

    fn conversation_page(&self, id: &str, before: Option<i64>, at_least: usize) -> AppResult<StoredConversation> {
        let store = self.store()?;
        let conversation = self.existing_conversation(id)?;
        let (messages, earlier) = store.messages_page(id, before, at_least)?;
        let (tool_calls, views) = match messages.first() {
            Some(first) => (
                store.tool_calls_of_messages(id, first.id, before)?,
                store.views_of_messages(id, first.id, before)?,
            ),
            None => Default::default(),
        };
        let call_ids: std::collections::HashMap<i64, &str> =
            tool_calls.iter().map(|c| (c.id, c.call_id.as_str())).collect();
        // In the order they were recorded: a call's newest view is the one its card shows.
        let view_uris = views
            .into_iter()
            .filter_map(|v| call_ids.get(&v.tool_call_id).map(|call| (call.to_string(), v.uri)))
            .collect();
        Ok(StoredConversation {
            conversation,
            messages,
            tool_calls,
            earlier,
            // Only the end is being written.
            running: before.is_none() && self.inner.turns.is_running(id),
            view_uris,
            scroll: before.is_none().then(|| self.scroll_position(id)).flatten(),
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
        self.store()?.delete_conversation(id)?;
        self.keep_scroll_position(id, None);
        Ok(())
    }

    pub fn search_conversations(&self, query: &str) -> AppResult<Vec<SearchHit>> {
        Ok(self.store()?.search(query, SEARCH_LIMIT)?)
    }
}
