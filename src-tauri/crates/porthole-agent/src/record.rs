//! Writes a turn into the conversation store as its events arrive, so that killing the app
//! mid-turn loses at most the tokens in flight, and reads a conversation back as history.
//!
//! A streamed reply is written in batches: the first delta at once, later ones at most every
//! [`STREAM_FLUSH_INTERVAL`] (a background thread writes what is left when the stream pauses),
//! so a reply of 100,000 deltas costs a few dozen writes, not 100,000 rewrites of the whole
//! text, and a crash loses at most that interval of it. Every other event writes at once, after
//! the reply's pending text.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use porthole_store::{MessageRole, MessageStatus, NewToolCall, Store, ToolCallFinish, ToolCallStatus};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::agent::RememberedApprovals;
use crate::conversation::{Message, Part, Role};
use crate::events::{CallStatus, Decision, EventSink, TurnEvent};

/// How long streamed text may wait before it is written: what a crash can lose of a reply.
pub const STREAM_FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// An [`EventSink`] that records one conversation's turn.
///
/// When a write fails (a full disk, a damaged database), the recorder keeps the reason as its
/// [`EventSink::failure`] and writes nothing more for this turn: what was written before stays
/// as it is (a reply left streaming comes back `interrupted` with the text saved so far), and a
/// damaged file is not written to again. The agent loop then stops the turn with that reason.
pub struct Recorder {
    shared: Arc<Shared>,
    /// Writes streamed text the stream left pending; started with the first such text.
    flusher: OnceLock<JoinHandle<()>>,
}

struct Shared {
    store: Store,
    conversation_id: String,
    state: Mutex<State>,
    /// Wakes the flusher: text is pending, or the recorder is gone.
    wake: Condvar,
    /// [`STREAM_FLUSH_INTERVAL`], but in tests.
    interval: Duration,
    failure: OnceLock<String>,
}

#[derive(Default)]
struct State {
    /// The assistant message being streamed, and its text and reasoning so far.
    streaming: Option<i64>,
    text: String,
    reasoning: String,
    /// Streamed text not written yet.
    pending: bool,
    /// When the streamed message was last written.
    written_at: Option<Instant>,
    /// The recorder was dropped: the flusher writes what is pending and ends.
    closed: bool,
    /// The last assistant message (tool calls belong to it).
    assistant: Option<i64>,
    /// Tool-call rows by the model's call id.
    calls: HashMap<String, i64>,
}

impl Recorder {
    pub fn new(store: Store, conversation_id: impl Into<String>) -> Recorder {
        Recorder::with_state(store, conversation_id.into(), State::default())
    }

    fn with_state(store: Store, conversation_id: String, state: State) -> Recorder {
        Recorder {
            shared: Arc::new(Shared {
                store,
                conversation_id,
                state: Mutex::new(state),
                wake: Condvar::new(),
                interval: STREAM_FLUSH_INTERVAL,
                failure: OnceLock::new(),
            }),
            flusher: OnceLock::new(),
        }
    }

    /// A recorder for one call the person runs from the tools panel. A call's row belongs to a
    /// message, and such a call has no assistant message that asked for it: it gets an empty
    /// `tool` message of its own, at its place in the conversation, and its card, both facings
    /// and its view are stored and reopened like any call's. The message holds no result parts,
    /// so the model never gets the call as one it made (see [`load_history`]) and the history
    /// sent to a provider keeps its user / assistant alternation, even in a conversation that
    /// starts with such a run.
    pub fn for_tool_run(store: Store, conversation_id: impl Into<String>) -> porthole_store::Result<Recorder> {
        let conversation_id = conversation_id.into();
        let holder = store.append_message(&conversation_id, MessageRole::Tool, &json!([]), MessageStatus::Complete)?;
        Ok(Recorder::with_state(
            store,
            conversation_id,
            State {
                assistant: Some(holder),
                ..State::default()
            },
        ))
    }

    #[cfg(test)]
    fn with_interval(mut self, interval: Duration) -> Recorder {
        Arc::get_mut(&mut self.shared).expect("a new recorder").interval = interval;
        self
    }

    /// Starts the flusher if it is not running.
    fn start_flusher(&self) {
        self.flusher.get_or_init(|| {
            let shared = self.shared.clone();
            std::thread::Builder::new()
                .name("porthole-recorder".into())
                .spawn(move || shared.flush_until_closed())
                .expect("a thread for the recorder")
        });
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // Text is pending only once the flusher runs; it writes what is left as it ends.
        self.shared.lock_state().closed = true;
        self.shared.wake.notify_all();
        if let Some(flusher) = self.flusher.take() {
            let _ = flusher.join();
        }
    }
}

impl Shared {
    fn lock_state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The flusher's loop: writes pending streamed text once it is [`STREAM_FLUSH_INTERVAL`]
    /// past the last write; on close, writes what is left and ends.
    fn flush_until_closed(&self) {
        let mut state = self.lock_state();
        loop {
            if state.closed {
                self.flush_pending(&mut state);
                return;
            }
            if !state.pending {
                state = self.wake.wait(state).unwrap_or_else(|p| p.into_inner());
                continue;
            }
            let due = state.written_at.map_or(Instant::now(), |at| at + self.interval);
            let now = Instant::now();
            if now >= due {
                self.flush_pending(&mut state);
            } else {
                state = self
                    .wake
                    .wait_timeout(state, due - now)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        }
    }

    /// Writes the streamed message's pending text, if any.
    fn flush_pending(&self, state: &mut State) {
        if !state.pending {
            return;
        }
        state.pending = false;
        if self.failure.get().is_some() {
            return;
        }
        let result = write_streaming(&self.store, state);
        self.check(result);
    }

    fn check(&self, result: porthole_store::Result<()>) {
        if let Err(e) = result {
            let reason = match self.store.path() {
                Some(path) => format!(
                    "the conversation could not be saved to {}: {e} (what was saved before is kept)",
                    path.display()
                ),
                None => format!("the conversation could not be saved: {e}"),
            };
            // Logged, not printed: the turn reports it once, as its error.
            tracing::warn!(conversation_id = %self.conversation_id, "{reason}");
            self.failure.get_or_init(|| reason);
        }
    }
}

/// Writes the streamed message's text and reasoning so far.
fn write_streaming(store: &Store, state: &mut State) -> porthole_store::Result<()> {
    let Some(id) = state.streaming else { return Ok(()) };
    let mut parts = Vec::new();
    if !state.reasoning.is_empty() {
        parts.push(json!({"type": "reasoning", "text": state.reasoning}));
    }
    if !state.text.is_empty() {
        parts.push(json!({"type": "text", "text": state.text}));
    }
    state.written_at = Some(Instant::now());
    store.update_message(id, &Value::Array(parts), MessageStatus::Streaming, None)
}

impl Shared {
    /// Writes `event`; returns whether streamed text is left pending for the flusher.
    fn write(&self, event: &TurnEvent) -> porthole_store::Result<bool> {
        let mut state = self.lock_state();
        let delta = matches!(event, TurnEvent::TextDelta { .. } | TurnEvent::ReasoningDelta { .. });
        let replaces = matches!(event, TurnEvent::AssistantMessage { .. });
        if !delta && state.pending && replaces {
            // The complete message is written in its place.
            state.pending = false;
        }
        if !delta && state.pending {
            // Everything else is written after the reply's text so far.
            state.pending = false;
            write_streaming(&self.store, &mut state)?;
        }
        match event {
            TurnEvent::UserMessage { message } => {
                self.store.append_message(
                    &self.conversation_id,
                    MessageRole::User,
                    &parts_json(message),
                    MessageStatus::Complete,
                )?;
            }
            TurnEvent::StepStarted { .. } => {
                let id = self.store.append_message(
                    &self.conversation_id,
                    MessageRole::Assistant,
                    &json!([]),
                    MessageStatus::Streaming,
                )?;
                state.streaming = Some(id);
                state.assistant = Some(id);
                state.text.clear();
                state.reasoning.clear();
                state.written_at = None;
            }
            TurnEvent::TextDelta { text } | TurnEvent::ReasoningDelta { text } => {
                if state.streaming.is_none() {
                    return Ok(false);
                }
                if matches!(event, TurnEvent::TextDelta { .. }) {
                    state.text.push_str(text);
                } else {
                    state.reasoning.push_str(text);
                }
                let due = state.written_at.is_none_or(|at| at.elapsed() >= self.interval);
                if due {
                    write_streaming(&self.store, &mut state)?;
                } else {
                    state.pending = true;
                    return Ok(true);
                }
            }
            TurnEvent::AssistantMessage {
                message, interrupted, ..
            } => {
                let status = if *interrupted {
                    MessageStatus::Interrupted
                } else {
                    MessageStatus::Complete
                };
                match state.streaming.take() {
                    Some(id) => self.store.update_message(id, &parts_json(message), status, None)?,
                    None => {
                        let id = self.store.append_message(
                            &self.conversation_id,
                            MessageRole::Assistant,
                            &parts_json(message),
                            status,
                        )?;
                        state.assistant = Some(id);
                    }
                }
            }
            TurnEvent::Error { message } => {
                // A request that failed before anything arrived leaves an empty assistant row:
                // it becomes the failed message that carries the error.
                if let Some(id) = state.streaming.take() {
                    self.store
                        .update_message(id, &json!([]), MessageStatus::Failed, Some(message))?;
                } else if let Some(id) = state.assistant
                    && let Some(m) = self.store.message(&self.conversation_id, id)?
                {
                    let status = if m.status == MessageStatus::Complete {
                        MessageStatus::Complete
                    } else {
                        MessageStatus::Interrupted
                    };
                    self.store.update_message(id, &m.parts, status, Some(message))?;
                }
            }
            TurnEvent::ToolCallStarted {
                call_id,
                name,
                server,
                tool,
                arguments,
                ..
            } => {
                let Some(message_id) = state.assistant else {
                    return Ok(false);
                };
                let id = self.store.insert_tool_call(&NewToolCall {
                    conversation_id: self.conversation_id.clone(),
                    message_id,
                    call_id: call_id.clone(),
                    server: server.clone().unwrap_or_default(),
                    tool: tool.clone().unwrap_or_else(|| name.clone()),
                    arguments: arguments.clone(),
                    status: ToolCallStatus::Pending,
                })?;
                state.calls.insert(call_id.clone(), id);
            }
            TurnEvent::ToolCallRunning { call_id, allowed_by } => {
                if let Some(&id) = state.calls.get(call_id) {
                    self.store.set_tool_call_running(id, *allowed_by)?;
                }
            }
            TurnEvent::ApprovalResolved {
                call_id,
                decision: Decision::Deny,
            } => {
                if let Some(&id) = state.calls.get(call_id) {
                    self.store.set_tool_call_status(id, ToolCallStatus::Denied)?;
                }
            }
            TurnEvent::RemoteView {
                call_id, server, view, ..
            } => {
                if let Some(&id) = state.calls.get(call_id) {
                    self.store.set_remote_view_result(id, server, &view.result)?;
                }
            }
            TurnEvent::ToolCallFinished {
                call_id,
                status,
                model,
                view,
                duration_ms,
                error,
            } => {
                if let Some(&id) = state.calls.get(call_id) {
                    self.store.finish_tool_call(
                        id,
                        &ToolCallFinish {
                            status: match status {
                                CallStatus::Ok => ToolCallStatus::Ok,
                                CallStatus::Error => ToolCallStatus::Error,
                                CallStatus::Failed => ToolCallStatus::Failed,
                                CallStatus::Denied => ToolCallStatus::Denied,
                                CallStatus::Cancelled => ToolCallStatus::Cancelled,
                            },
                            model_facing: Some(serde_json::to_value(model).unwrap_or(Value::Null)),
                            view_facing: (!view.is_null()).then(|| view.clone()),
                            error: error.clone(),
                            duration_ms: *duration_ms,
                        },
                    )?;
                }
            }
            TurnEvent::ToolResults { message } => {
                self.store.append_message(
                    &self.conversation_id,
                    MessageRole::Tool,
                    &parts_json(message),
                    MessageStatus::Complete,
                )?;
            }
            _ => {}
        }
        Ok(false)
    }
}

impl EventSink for Recorder {
    fn emit(&self, event: &TurnEvent) {
        if self.shared.failure.get().is_some() {
            return;
        }
        match self.shared.write(event) {
            Ok(true) => {
                self.start_flusher();
                self.shared.wake.notify_all();
            }
            Ok(false) => {}
            Err(e) => self.shared.check(Err(e)),
        }
    }

    fn failure(&self) -> Option<String> {
        self.shared.failure.get().cloned()
    }
}

fn parts_json(message: &Message) -> Value {
    serde_json::to_value(&message.parts).unwrap_or_else(|_| json!([]))
}

/// A stored conversation as history for the next turn: failed messages are left out; a reply
/// interrupted mid-stream keeps what arrived. The empty `tool` message of a tools-panel run
/// ([`Recorder::for_tool_run`]) is left out too: the person's call is not the model's.
///
/// A step's results are stored as one `tool` message once all its calls have finished; a
/// process killed before then leaves none, but each call that did finish has its outcome in its
/// own row. Those outcomes are given back as the step's results, so the model gets each call's
/// real result; only a call that never finished is left without one (and
/// [`crate::agent::prepare_history`] says it was interrupted). The calls' rows are read only for
/// such a step: the others' results are in their messages, and a row holds the call's arguments
/// and its whole view-facing result as well.
pub fn load_history(store: &Store, conversation_id: &str) -> porthole_store::Result<Vec<Message>> {
    let mut loaded = Vec::new();
    for stored in store.messages(conversation_id)? {
        if stored.status == MessageStatus::Failed {
            continue;
        }
        let holds_a_tool_run = stored.role == MessageRole::Tool && stored.parts.as_array().is_some_and(Vec::is_empty);
        if holds_a_tool_run {
            continue;
        }
        let role = match stored.role {
            MessageRole::User => Role::User,
            MessageRole::Assistant => Role::Assistant,
            MessageRole::Tool => Role::Tool,
        };
        let parts: Vec<Part> = stored
            .parts
            .as_array()
            .map(|parts| {
                parts
                    .iter()
                    .filter_map(|p| match Part::deserialize(p) {
                        Ok(part) => Some(part),
                        Err(e) => {
                            tracing::warn!("skipping an unreadable stored part: {e}");
                            None
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        loaded.push((stored.id, Message { role, parts }));
    }
    let mut history = Vec::with_capacity(loaded.len());
    let mut messages = loaded.into_iter().peekable();
    while let Some((id, message)) = messages.next() {
        let uses: Vec<String> = message.tool_uses().map(|(use_id, _, _)| use_id.to_owned()).collect();
        let asks_for_calls = message.role == Role::Assistant && !uses.is_empty();
        history.push(message);
        if !asks_for_calls {
            continue;
        }
        let mut results = match messages.next_if(|(_, next)| next.role == Role::Tool) {
            Some((_, results)) => results,
            None => Message {
                role: Role::Tool,
                parts: Vec::new(),
            },
        };
        let answered = |results: &Message, use_id: &str| {
            results
                .parts
                .iter()
                .any(|p| matches!(p, Part::ToolResult { tool_use_id, .. } if tool_use_id == use_id))
        };
        if uses.iter().any(|use_id| !answered(&results, use_id)) {
            let mut outcomes = finished_outcomes(store, conversation_id, id)?;
            for use_id in uses {
                if answered(&results, &use_id) {
                    continue;
                }
                if let Some(part) = outcomes.remove(&use_id) {
                    results.parts.push(part);
                }
            }
        }
        if !results.parts.is_empty() {
            history.push(results);
        }
    }
    Ok(history)
}

/// The model-facing result of every call that message `message_id` asked for and that
/// finished, by the call's id.
fn finished_outcomes(
    store: &Store,
    conversation_id: &str,
    message_id: i64,
) -> porthole_store::Result<HashMap<String, Part>> {
    let mut outcomes = HashMap::new();
    for call in store.tool_calls_of_message(conversation_id, message_id)? {
        if !call.status.is_final() || call.status == ToolCallStatus::Interrupted {
            continue;
        }
        let Some(model) = call.model_facing else { continue };
        let Some(content) = model.get("content").and_then(Value::as_array) else {
            tracing::warn!(call = call.id, "skipping a stored result without content");
            continue;
        };
        let part = Part::ToolResult {
            tool_use_id: call.call_id.clone(),
            content: content.clone(),
            is_error: model.get("isError").and_then(Value::as_bool).unwrap_or(false),
        };
        outcomes.insert(call.call_id, part);
    }
    Ok(outcomes)
}

/// "Always allow this tool", remembered in the store.
pub struct StoredApprovals(pub Store);

impl RememberedApprovals for StoredApprovals {
    fn is_allowed(&self, server: &str, tool: &str) -> bool {
        self.0.is_always_allowed(server, tool).unwrap_or(false)
    }

    fn remember(&self, server: &str, tool: &str) {
        if let Err(e) = self.0.set_always_allowed(server, tool, true) {
            tracing::error!("could not remember the approval of {server}/{tool}: {e}");
        }
    }
}

/// A title for a new conversation: the start of its first message.
pub fn title_from(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title.push('…');
    }
    if title.is_empty() {
        "New conversation".to_string()
    } else {
        title
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored_text(store: &Store, conversation: &str) -> (String, MessageStatus) {
        let messages = store.messages(conversation).unwrap();
        let last = messages.last().unwrap();
        let text = last
            .parts
            .as_array()
            .and_then(|parts| parts.iter().find(|p| p["type"] == "text"))
            .and_then(|p| p["text"].as_str())
            .unwrap_or_default()
            .to_string();
        (text, last.status)
    }

    /// A store, a conversation, and a recorder (writing at most every `interval`) whose reply
    /// has started.
    fn streaming(interval: Duration) -> (Store, String, Recorder) {
        let store = Store::open_in_memory().unwrap();
        let conversation = store.create_conversation("Streaming").unwrap().id;
        let recorder = Recorder::new(store.clone(), conversation.clone()).with_interval(interval);
        recorder.emit(&TurnEvent::StepStarted { step: 1 });
        (store, conversation, recorder)
    }

    /// A streamed reply is written at once, then in batches: text that arrives within the
    /// interval waits, and the complete message replaces it.
    #[test]
    fn a_streamed_reply_is_written_in_batches() {
        let (store, conversation, recorder) = streaming(Duration::from_secs(600));
        recorder.emit(&TurnEvent::TextDelta { text: "One".into() });
        assert_eq!(
            stored_text(&store, &conversation).0,
            "One",
            "the first delta is written at once"
        );
        for _ in 0..1000 {
            recorder.emit(&TurnEvent::TextDelta { text: " more".into() });
        }
        assert_eq!(
            stored_text(&store, &conversation),
            ("One".to_string(), MessageStatus::Streaming),
            "quick deltas wait for the interval"
        );
        recorder.emit(&TurnEvent::AssistantMessage {
            message: Message {
                role: Role::Assistant,
                parts: vec![Part::Text { text: "Final".into() }],
            },
            interrupted: false,
            usage: Default::default(),
        });
        assert_eq!(
            stored_text(&store, &conversation),
            ("Final".to_string(), MessageStatus::Complete)
        );
    }

    /// When the stream pauses, what is pending is written within the interval; an event that
    /// follows is written after the text.
    #[test]
    fn pending_text_is_written_within_the_interval_when_the_stream_pauses() {
        let (store, conversation, recorder) = streaming(Duration::from_millis(200));
        recorder.emit(&TurnEvent::TextDelta { text: "a".into() });
        let written = Instant::now();
        recorder.emit(&TurnEvent::TextDelta { text: "b".into() });
        if written.elapsed() < Duration::from_millis(150) {
            assert_eq!(stored_text(&store, &conversation).0, "a");
        }
        while stored_text(&store, &conversation).0 != "ab" {
            assert!(
                written.elapsed() < Duration::from_secs(5),
                "the pending text was not written while the stream paused"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            written.elapsed() >= Duration::from_millis(190),
            "written before the interval"
        );
        recorder.emit(&TurnEvent::TextDelta { text: "c".into() });
        recorder.emit(&TurnEvent::ToolResults {
            message: Message {
                role: Role::Tool,
                parts: vec![],
            },
        });
        let messages = store.messages(&conversation).unwrap();
        assert_eq!(messages[messages.len() - 2].parts[0]["text"], "abc");
    }

    /// A recorder dropped with text pending (the turn ended without its complete message)
    /// writes it first.
    #[test]
    fn a_recorder_dropped_mid_stream_writes_what_is_pending() {
        let (store, conversation, recorder) = streaming(Duration::from_secs(600));
        recorder.emit(&TurnEvent::TextDelta { text: "a".into() });
        recorder.emit(&TurnEvent::TextDelta { text: "b".into() });
        assert_eq!(stored_text(&store, &conversation).0, "a");
        drop(recorder);
        assert_eq!(stored_text(&store, &conversation).0, "ab");
    }
}
