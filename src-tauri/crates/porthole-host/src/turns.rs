//! The turn lifecycle: a conversation is claimed while a turn (or a tools-panel run) writes to
//! it, tool calls wait for the person's approval, and a retry or an edit rewinds the
//! conversation to its last user message before running again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use porthole_agent::agui::{AgentThread, RemoteAgent};
use porthole_agent::record::{Recorder, StoredApprovals, load_history, title_from};
use porthole_agent::{
    Agent, ApprovalRequest, Approver, Decision, EventSink, Message, Part, Role, StopReason, TurnEvent,
};
use porthole_store::{ConversationWriter, MessageRole, Store, StoreError};
use serde::Serialize;
use tokio_util::sync::CancellationToken;
use ts_rs::TS;

use crate::attachments::AttachmentRef;
use crate::error::{AppError, AppResult};
use crate::ports::{MAIN_WINDOW, Outbound};
use crate::{Host, HostInner};

/// One event of a conversation's turn, as the window receives it (`chat-event`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChatEvent {
    pub conversation_id: String,
    pub event: TurnEvent,
}

type Pending = Arc<Mutex<HashMap<String, tokio::sync::oneshot::Sender<Decision>>>>;

/// What a running turn can be told: stop, or stop waiting for servers still starting.
struct Running {
    cancel: CancellationToken,
    skip_wait: CancellationToken,
}

/// The turns running, by conversation, and the tool calls waiting for a decision.
#[derive(Default)]
pub struct Turns {
    running: Arc<Mutex<HashMap<String, Running>>>,
    approvals: Pending,
}

/// A conversation held by one turn or run: nothing else starts there while it lives (in this
/// window or in another Porthole: it holds the store's [`ConversationWriter`]), and
/// `stop_turn` cancels it. Dropping it frees the conversation, however the turn ended.
pub struct TurnClaim {
    running: Arc<Mutex<HashMap<String, Running>>>,
    conversation_id: String,
    cancel: CancellationToken,
    skip_wait: CancellationToken,
    _writer: ConversationWriter,
}

impl TurnClaim {
    /// The token `stop_turn` cancels.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// The token `send_without_waiting` cancels.
    pub fn skip_wait_token(&self) -> CancellationToken {
        self.skip_wait.clone()
    }
}

impl Drop for TurnClaim {
    fn drop(&mut self) {
        self.running.lock().unwrap().remove(&self.conversation_id);
    }
}

impl Turns {
    /// Claims `conversation_id` for a turn; refused while another one runs there, in this
    /// window or in another Porthole on the same profile (`porthole run`, another window).
    pub fn claim(&self, store: &Store, conversation_id: &str) -> AppResult<TurnClaim> {
        let cancel = CancellationToken::new();
        let mut running = self.running.lock().unwrap();
        if running.contains_key(conversation_id) {
            return Err(AppError::busy(
                "a reply is still being written in this conversation; stop it first",
            ));
        }
        let writer = store.claim_writer(conversation_id).map_err(|e| match e {
            StoreError::Busy { .. } => AppError::busy(e.to_string()),
            e => AppError::from(e),
        })?;
        let skip_wait = CancellationToken::new();
        running.insert(
            conversation_id.to_string(),
            Running {
                cancel: cancel.clone(),
                skip_wait: skip_wait.clone(),
            },
        );
        Ok(TurnClaim {
            running: self.running.clone(),
            conversation_id: conversation_id.to_string(),
            cancel,
            skip_wait,
            _writer: writer,
        })
    }

    pub fn is_running(&self, conversation_id: &str) -> bool {
        self.running.lock().unwrap().contains_key(conversation_id)
    }

    /// Cancels the turn running in the conversation; `false` when none is.
    pub fn stop(&self, conversation_id: &str) -> bool {
        match self.running.lock().unwrap().get(conversation_id) {
            Some(running) => {
                running.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// The turn running in the conversation stops waiting for servers still starting and
    /// asks the model without them; `false` when no turn runs there.
    pub fn send_without_waiting(&self, conversation_id: &str) -> bool {
        match self.running.lock().unwrap().get(conversation_id) {
            Some(running) => {
                running.skip_wait.cancel();
                true
            }
            None => false,
        }
    }

    /// The approver for a window's turns: each call waits for [`Turns::answer`].
    fn approver(&self) -> Arc<dyn Approver> {
        Arc::new(WindowApprover(self.approvals.clone()))
    }

    /// The person's decision on a waiting tool call.
    pub fn answer(&self, call_id: &str, decision: Decision) -> AppResult<()> {
        let waiting = self.approvals.lock().unwrap().remove(call_id);
        let respond =
            waiting.ok_or_else(|| AppError::not_found("that tool call is no longer waiting for a decision"))?;
        respond
            .send(decision)
            .map_err(|_| AppError::expired("the turn stopped waiting for this decision"))
    }
}

/// Tool calls wait for the window's approval prompt.
struct WindowApprover(Pending);

impl Approver for WindowApprover {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'static, Decision> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.0.lock().unwrap().insert(request.call_id.clone(), tx);
        // A turn stopped while its call waits drops this future: the question goes with it.
        let waiting = Waiting {
            pending: self.0.clone(),
            call_id: request.call_id,
        };
        async move {
            let _waiting = waiting;
            rx.await.unwrap_or(Decision::Deny)
        }
        .boxed()
    }
}

/// A call's place among the questions waiting for the person, given up when dropped.
struct Waiting {
    pending: Pending,
    call_id: String,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.pending.lock().unwrap().remove(&self.call_id);
    }
}

/// Where a retry or an edit starts from: the conversation's last user message.
#[derive(Debug)]
pub(crate) struct RewindPoint {
    /// The message's store id: it and every later message are dropped.
    pub(crate) message_id: i64,
    /// The message as it was sent (what a retry sends again).
    pub(crate) user: Message,
    /// The dropped tool calls (the model's call ids) that have (or had) a view.
    pub(crate) dropped_views: Vec<String>,
}

pub(crate) fn rewind_point(store: &Store, conversation_id: &str) -> AppResult<RewindPoint> {
    // The last page of one message starts at the last user message: what is dropped, and no
    // more (reading the whole conversation made a retry in a long one slow).
    let (messages, _) = store.messages_page(conversation_id, None, 1)?;
    let last = messages
        .iter()
        .rev()
        .find(|m| m.role == MessageRole::User)
        .ok_or_else(|| AppError::invalid("this conversation has no message of yours to send again"))?;
    let parts: Vec<Part> = serde_json::from_value(last.parts.clone())
        .map_err(|e| AppError::store(format!("your last message could not be read back: {e}")))?;
    let user = Message {
        role: Role::User,
        parts,
    };
    if user.text().trim().is_empty() && user.attachments().next().is_none() {
        return Err(AppError::invalid("your last message has no text to send again"));
    }
    // A tools-panel run made since (held by an empty `tool` message) would go with the rewind.
    let panel_run_since = messages
        .iter()
        .any(|m| m.id > last.id && m.role == MessageRole::Tool && m.parts.as_array().is_some_and(Vec::is_empty));
    if panel_run_since {
        return Err(AppError::invalid(
            "tools-panel runs came after your last message, and sending it again would remove them; send a new message instead",
        ));
    }
    // The dropped messages' calls and views alone.
    let with_views: std::collections::HashSet<i64> = store
        .views_of_messages(conversation_id, last.id, None)?
        .iter()
        .map(|v| v.tool_call_id)
        .collect();
    let dropped_views = if with_views.is_empty() {
        Vec::new()
    } else {
        store
            .tool_calls_of_messages(conversation_id, last.id, None)?
            .into_iter()
            .filter(|c| with_views.contains(&c.id))
            .map(|c| c.call_id)
            .collect()
    };
    Ok(RewindPoint {
        message_id: last.id,
        user,
        dropped_views,
    })
}

impl HostInner {
    /// Where a conversation's events go, in order: the store (`recorder`), the views (a call
    /// with a view gets it) and the main window (`chat-event`). A model's turn and a
    /// tools-panel run alike.
    ///
    /// The conversation's `claim` ends once `done` is recorded, before the window hears it, so
    /// a message sent as soon as the window sees the turn end is taken.
    pub(crate) fn conversation_sink(
        self: &Arc<Self>,
        recorder: Recorder,
        conversation_id: &str,
        claim: TurnClaim,
    ) -> ConversationSink {
        ConversationSink {
            host: self.clone(),
            conversation_id: conversation_id.to_string(),
            recorder,
            claim: Mutex::new(Some(claim)),
            remote: None,
        }
    }
}

/// A conversation's events on their way to the store, the views and the main window
/// ([`HostInner::conversation_sink`]). It fails when the store does: the turn then stops with
/// the reason as its error, which the window shows where the reply is.
pub(crate) struct ConversationSink {
    host: Arc<HostInner>,
    conversation_id: String,
    recorder: Recorder,
    claim: Mutex<Option<TurnClaim>>,
    /// The remote agent running the turn, if one is: its calls are its own, and the views it
    /// offers reach their servers through it.
    remote: Option<RemoteAgent>,
}

impl EventSink for ConversationSink {
    fn emit(&self, event: &TurnEvent) {
        self.recorder.emit(event);
        if matches!(event, TurnEvent::Done { .. }) {
            self.claim.lock().unwrap().take();
        }
        match &self.remote {
            None => self.host.views.on_turn_event(&self.conversation_id, event),
            Some(agent) => self
                .host
                .views
                .on_remote_turn_event(&self.conversation_id, event, agent),
        }
        self.host.outbox.send(
            MAIN_WINDOW,
            Outbound::Chat(ChatEvent {
                conversation_id: self.conversation_id.clone(),
                event: event.clone(),
            }),
        );
    }

    fn failure(&self) -> Option<String> {
        self.recorder.failure()
    }
}

/// No model or agent can answer: the person's message is kept, and `why` is shown where the
/// reply would be.
fn unanswered(sink: &ConversationSink, user: Message, why: String) {
    sink.emit(&TurnEvent::UserMessage { message: user });
    sink.emit(&TurnEvent::StepStarted { step: 1 });
    sink.emit(&TurnEvent::Error { message: why });
    sink.emit(&TurnEvent::Done {
        stop_reason: StopReason::Error,
        text: String::new(),
        usage: Default::default(),
    });
}

/// A new conversation's title: its first message's text, else what it attached.
fn title_of(message: &Message) -> String {
    let text = message.text();
    if !text.trim().is_empty() {
        return title_from(&text);
    }
    let first = message.attachments().next().map(|(_, content)| {
        content["resource"]["uri"]
            .as_str()
            .unwrap_or("an attachment")
            .to_string()
    });
    title_from(&first.unwrap_or_default())
}

impl Host {
    pub(crate) fn existing_conversation(&self, id: &str) -> AppResult<porthole_store::Conversation> {
        self.store()?
            .conversation(id)?
            .ok_or_else(|| AppError::not_found(format!("no conversation {id}")))
    }

    /// Sends the person's message: starts a turn in `conversation_id` (a new conversation when
    /// absent) and returns the conversation's id at once; the turn's events follow as
    /// `chat-event`.
    pub fn send_message(&self, conversation_id: Option<String>, text: &str) -> AppResult<String> {
        self.send_message_to(conversation_id, text, None)
    }

    /// [`Host::send_message`]; a new conversation is with remote agent `agent` when given.
    pub fn send_message_to(
        &self,
        conversation_id: Option<String>,
        text: &str,
        agent: Option<&str>,
    ) -> AppResult<String> {
        let text = text.trim();
        if text.is_empty() {
            return Err(AppError::invalid("the message is empty"));
        }
        self.send(conversation_id, Message::user(text), agent)
    }

    /// Sends the person's message with resources attached (each read now, and refused with why
    /// when a model cannot take it: then nothing is sent).
    pub async fn send_message_with(
        &self,
        conversation_id: Option<String>,
        text: &str,
        attachments: &[AttachmentRef],
        agent: Option<&str>,
    ) -> AppResult<String> {
        if attachments.is_empty() {
            return self.send_message_to(conversation_id, text, agent);
        }
        let mut message = Message::user(text.trim());
        message
            .parts
            .retain(|p| !matches!(p, Part::Text { text } if text.is_empty()));
        message.parts.extend(self.attachments_of(attachments).await?);
        self.send(conversation_id, message, agent)
    }

    /// Starts a turn with `message` (the person's) in `conversation_id`, or in a new
    /// conversation titled after it (with remote agent `agent`, when given: it must be in the
    /// config); returns the conversation's id.
    pub(crate) fn send(
        &self,
        conversation_id: Option<String>,
        message: Message,
        agent: Option<&str>,
    ) -> AppResult<String> {
        let store = self.store()?;
        let conversation = match conversation_id {
            Some(id) => self.existing_conversation(&id)?,
            None => {
                if let Some(agent) = agent {
                    self.remote_agent(agent)?;
                }
                store.create_conversation_with(&title_of(&message), agent)?
            }
        };
        let claim = self.inner.turns.claim(store, &conversation.id)?;
        self.start_turn(&conversation, message, claim);
        Ok(conversation.id)
    }

    /// Runs the conversation's last user message again: its replies (messages, tool calls and
    /// their views) are dropped and a new turn starts with the same message.
    pub async fn retry_turn(&self, conversation_id: &str) -> AppResult<()> {
        self.rerun(conversation_id, None).await
    }

    /// Replaces the conversation's last user message with `text`, drops everything after it,
    /// and starts a turn with the new text.
    pub async fn edit_and_resend(&self, conversation_id: &str, text: &str) -> AppResult<()> {
        let text = text.trim();
        if text.is_empty() {
            return Err(AppError::invalid("the message is empty"));
        }
        self.rerun(conversation_id, Some(text.to_string())).await
    }

    /// Drops the conversation's last user message and everything after it, then runs a turn
    /// with `replacement` (a retry: the same message). The views of the dropped tool calls are
    /// torn down first, while their frames still show them (a pop-out window of one closes);
    /// the views of the calls that stay are left as they are.
    async fn rerun(&self, conversation_id: &str, replacement: Option<String>) -> AppResult<()> {
        let store = self.store()?.clone();
        let conversation = self.existing_conversation(conversation_id)?;
        // Released on any error below, as the claim is dropped.
        let claim = self.inner.turns.claim(&store, conversation_id)?;
        let point = rewind_point(&store, conversation_id)?;
        let views = &self.inner.views;
        if !point.dropped_views.is_empty() {
            self.close_pop_outs_of_calls(conversation_id, &point.dropped_views);
            views.teardown_calls(conversation_id, &point.dropped_views).await;
        }
        store.delete_messages_from(conversation_id, point.message_id)?;
        // What a remote agent said of the thread included what is gone: it starts again from
        // the conversation as it now is.
        store.set_agent_thread(conversation_id, None)?;
        let mut user = point.user;
        if let Some(text) = replacement {
            // The new text takes the old text's place; what was attached stays attached.
            user.parts.retain(|p| !matches!(p, Part::Text { .. }));
            user.parts.insert(0, Part::Text { text });
        }
        self.start_turn(&conversation, user, claim);
        Ok(())
    }

    /// Runs a turn, in the background, of a claimed conversation: the model gets the stored
    /// history and then `user`. Without a usable model the message is kept and the reason is
    /// shown where the reply would be. The claim ends with the turn.
    fn start_turn(&self, conversation: &porthole_store::Conversation, user: Message, claim: TurnClaim) {
        let conversation_id = conversation.id.clone();
        if let Some(name) = &conversation.agent {
            let agent = self.remote_agent(name).map_err(|e| e.message);
            self.start_remote_turn(conversation_id, user, claim, agent);
            return;
        }
        let choice = self.model_choice();
        let inner = self.inner.clone();
        self.inner.runtime.spawn(async move {
            let store = match inner.store.as_ref() {
                Ok(store) => store.clone(),
                Err(_) => return,
            };
            let recorder = Recorder::new(store.clone(), conversation_id.clone());
            let cancel = claim.cancel_token();
            let skip_wait = claim.skip_wait_token();
            let sink = inner.conversation_sink(recorder, &conversation_id, claim);
            let model = match choice {
                Ok(choice) => choice
                    .resolve_model()
                    .await
                    .map(|m| (choice, m))
                    .map_err(|e| format!("{e:#}")),
                Err(e) => Err(e.message),
            };
            match model {
                Ok((choice, model)) => {
                    let history = match load_history(&store, &conversation_id) {
                        Ok(history) => history,
                        Err(e) => {
                            tracing::error!(conversation_id, "the history could not be read: {e}");
                            Vec::new()
                        }
                    };
                    let mut agent = Agent::new(choice.provider, model, inner.servers.clone());
                    agent.approver = inner.turns.approver();
                    agent.remembered = Some(Arc::new(StoredApprovals(store.clone())));
                    agent.context = inner.context.clone();
                    agent.views = inner.views.reports(&conversation_id);
                    agent.app_tools = Some(inner.views.app_tools(&conversation_id));
                    agent.skip_wait = skip_wait;
                    agent
                        .run_turn(Some(conversation_id.clone()), history, user, &sink, cancel)
                        .await;
                }
                Err(error) => unanswered(&sink, user, format!("No model can answer: {error}")),
            }
            crate::memory::give_back_freed_memory_soon(&inner.runtime);
        });
    }

    /// Runs a turn of a conversation with a remote agent: the agent gets the stored history and
    /// then `user`; its events are kept and shown as a local turn's. When the agent is no
    /// longer in the config, the message is kept and the reason shown where the reply would be.
    fn start_remote_turn(
        &self,
        conversation_id: String,
        user: Message,
        claim: TurnClaim,
        agent: Result<RemoteAgent, String>,
    ) {
        let inner = self.inner.clone();
        self.inner.runtime.spawn(async move {
            let Ok(store) = inner.store.clone() else {
                return;
            };
            let recorder = Recorder::new(store.clone(), conversation_id.clone());
            let cancel = claim.cancel_token();
            let mut sink = inner.conversation_sink(recorder, &conversation_id, claim);
            match agent {
                Ok(agent) => {
                    let history = load_history(&store, &conversation_id).unwrap_or_else(|e| {
                        tracing::error!(conversation_id, "the history could not be read: {e}");
                        Vec::new()
                    });
                    sink.remote = Some(agent.clone());
                    let mut thread = AgentThread::load(&store, &conversation_id);
                    agent
                        .run_turn(Some(conversation_id.clone()), history, user, &mut thread, &sink, cancel)
                        .await;
                    thread.save(&store, &conversation_id);
                }
                Err(error) => unanswered(&sink, user, format!("The agent cannot answer: {error}")),
            }
            crate::memory::give_back_freed_memory_soon(&inner.runtime);
        });
    }

    /// Stops the reply being written in a conversation (the partial reply is kept).
    pub fn stop_turn(&self, conversation_id: &str) -> bool {
        self.inner.turns.stop(conversation_id)
    }

    /// The conversation's turn asks the model now, without the servers still starting.
    pub fn send_without_waiting(&self, conversation_id: &str) -> bool {
        self.inner.turns.send_without_waiting(conversation_id)
    }

    /// The person's decision on a tool call.
    pub fn answer_approval(&self, call_id: &str, decision: Decision) -> AppResult<()> {
        self.inner.turns.answer(call_id, decision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porthole_store::MessageStatus::Complete;

    fn parts(message: &Message) -> serde_json::Value {
        serde_json::to_value(&message.parts).unwrap()
    }

    fn call(conversation_id: &str, message_id: i64, call_id: &str) -> porthole_store::NewToolCall {
        porthole_store::NewToolCall {
            conversation_id: conversation_id.into(),
            message_id,
            call_id: call_id.into(),
            server: "demo".into(),
            tool: "chart".into(),
            arguments: serde_json::json!({}),
            status: porthole_store::ToolCallStatus::Ok,
        }
    }

    fn view(tool_call_id: i64) -> porthole_store::NewView {
        porthole_store::NewView {
            tool_call_id,
            server: "demo".into(),
            tool: "chart".into(),
            uri: "ui://demo/chart.html".into(),
            html_sha256: "ab".repeat(32),
            csp: "default-src 'none'".into(),
            expires_at: i64::MAX,
        }
    }

    /// A conversation of two turns; the first turn's call has a view, and so does the second's
    /// when `second_view`. Returns the store, the conversation id and the message ids.
    fn two_turns(second_view: bool) -> (Store, String, Vec<i64>) {
        let store = Store::open_in_memory().unwrap();
        let id = store.create_conversation("chart").unwrap().id;
        let add =
            |role: MessageRole, parts: serde_json::Value| store.append_message(&id, role, &parts, Complete).unwrap();
        let answer = |text: &str| serde_json::json!([{"type": "text", "text": text}]);
        let ids = vec![
            add(MessageRole::User, parts(&Message::user("one"))),
            add(MessageRole::Assistant, answer("first")),
            add(MessageRole::User, parts(&Message::user("two"))),
            add(MessageRole::Assistant, answer("second")),
            add(
                MessageRole::Tool,
                serde_json::json!([{"type": "tool_result", "tool_use_id": "c2", "content": [], "is_error": false}]),
            ),
        ];
        let first = store.insert_tool_call(&call(&id, ids[1], "c1")).unwrap();
        store.insert_view(&view(first)).unwrap();
        let second = store.insert_tool_call(&call(&id, ids[3], "c2")).unwrap();
        if second_view {
            store.insert_view(&view(second)).unwrap();
        }
        (store, id, ids)
    }

    #[test]
    fn a_claim_holds_the_conversation_until_it_is_dropped() {
        let turns = Turns::default();
        let store = Store::open_in_memory().unwrap();
        let claim = turns.claim(&store, "c").unwrap();
        assert!(turns.is_running("c"));
        assert_eq!(turns.claim(&store, "c").err().unwrap().code, crate::ErrorCode::Busy);
        assert!(turns.claim(&store, "other").is_ok(), "other conversations are free");
        assert!(turns.stop("c"));
        assert!(claim.cancel_token().is_cancelled());
        drop(claim);
        assert!(!turns.is_running("c"));
        assert!(!turns.stop("c"));
        assert!(turns.claim(&store, "c").is_ok());
    }

    #[test]
    fn a_conversation_another_porthole_writes_is_refused_as_busy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("porthole.db");
        let (window, other) = (Store::open(&path).unwrap(), Store::open(&path).unwrap());
        let id = window.create_conversation("shared").unwrap().id;
        let held = other.claim_writer(&id).unwrap();
        let turns = Turns::default();
        let refused = turns.claim(&window, &id).err().unwrap();
        assert_eq!(refused.code, crate::ErrorCode::Busy);
        assert!(
            refused.message.contains(&format!("conversation {id} is busy")),
            "{refused}"
        );
        assert!(!turns.is_running(&id), "a refused claim leaves nothing behind");
        drop(held);
        assert!(turns.claim(&window, &id).is_ok());
    }

    #[test]
    fn a_rerun_starts_from_the_last_user_message_and_knows_whether_views_go_with_it() {
        let (store, id, ids) = two_turns(true);
        let point = rewind_point(&store, &id).unwrap();
        assert_eq!(point.message_id, ids[2]);
        assert_eq!(point.user, Message::user("two"));
        assert_eq!(point.dropped_views, ["c2"]);

        // Only the first turn's call has a view: nothing of the second turn's needs tearing down.
        let (store, id, _) = two_turns(false);
        assert!(rewind_point(&store, &id).unwrap().dropped_views.is_empty());
    }

    #[test]
    fn dropping_from_the_rewind_point_leaves_the_earlier_turn_its_call_and_view() {
        let (store, id, ids) = two_turns(true);
        let point = rewind_point(&store, &id).unwrap();
        store.delete_messages_from(&id, point.message_id).unwrap();
        let left: Vec<i64> = store.messages(&id).unwrap().iter().map(|m| m.id).collect();
        assert_eq!(left, &ids[..2]);
        let calls = store.tool_calls(&id).unwrap();
        assert_eq!(calls.iter().map(|c| c.call_id.as_str()).collect::<Vec<_>>(), ["c1"]);
        assert_eq!(store.views(&id).unwrap().len(), 1);
        // The history the model gets next ends with the first reply; the next point is "one".
        let history = load_history(&store, &id).unwrap();
        assert_eq!(history.last().map(Message::text).as_deref(), Some("first"));
        assert_eq!(rewind_point(&store, &id).unwrap().user, Message::user("one"));
    }

    #[test]
    fn a_tools_panel_run_made_since_the_last_message_is_not_rewound_away() {
        let (store, id, _) = two_turns(false);
        let holder = store
            .append_message(&id, MessageRole::Tool, &serde_json::json!([]), Complete)
            .unwrap();
        store
            .insert_tool_call(&call(&id, holder, "run-0123456789abcdef"))
            .unwrap();
        let refused = rewind_point(&store, &id).unwrap_err();
        assert!(refused.message.contains("tools-panel runs"), "{refused}");
    }

    #[test]
    fn there_is_no_rerun_without_a_user_message() {
        let store = Store::open_in_memory().unwrap();
        let id = store.create_conversation("empty").unwrap().id;
        assert!(
            rewind_point(&store, &id)
                .unwrap_err()
                .message
                .contains("no message of yours")
        );
        store
            .append_message(&id, MessageRole::Tool, &serde_json::json!([]), Complete)
            .unwrap();
        assert!(rewind_point(&store, &id).is_err());
    }
}
