//! Remote agents over AG-UI (the Agent–User Interaction protocol): the turn's agent loop runs
//! elsewhere. Porthole POSTs a `RunAgentInput` (the conversation as the thread, its history as
//! the messages) to the agent's URL and reads the server-sent events back, turning them into
//! the same [`TurnEvent`]s a local turn gives — so the store, the window and `porthole run
//! --json` treat a remote turn as they treat a local one:
//!
//! - `TEXT_MESSAGE_*` (and `_CHUNK`) stream as text, `REASONING_MESSAGE_*` as reasoning;
//! - `TOOL_CALL_START` / `_ARGS` / `_END` (and `_CHUNK`) stream a tool call's arguments; at the
//!   first `TOOL_CALL_RESULT` the step's assistant message (its text and calls) is complete, and
//!   each result is the call's model-facing result, as the agent said it;
//! - `RUN_FINISHED` ends the turn, `RUN_ERROR` ends it with the agent's error; a stream that
//!   ends before either is a cut stream (an error, what came is kept);
//! - the run's start and finish, state and message snapshots and deltas, activities, steps,
//!   custom and raw events are passed on whole ([`TurnEvent::AgentEvent`]): the window and
//!   `--json` see every one (custom and raw ones are also in the app's log);
//! - state snapshots and deltas, and messages snapshots, are kept as the agent's view of the
//!   thread ([`AgentThread`]) and sent with its next run;
//! - of those, the MCP Apps middleware's activities also mean something to Porthole: an
//!   `mcp-apps` snapshot is the view of the call whose result came last (or whose arguments it
//!   repeats): [`TurnEvent::RemoteView`]; `mcp-apps-progress` snapshots and their JSON-Patch
//!   deltas are the call's progress ([`TurnEvent::ToolCallProgress`]).
//!
//! A remote agent's view reaches its MCP server through the agent: [`RemoteAgent::proxied`]
//! sends a run whose `forwardedProps.__proxiedMCPRequest` names the server and the request, and
//! the answer comes as `RUN_FINISHED.result`.
//!
//! Tool calls a remote agent makes are its own: Porthole is told, not asked
//! ([`AllowedBy::Agent`]).

use std::time::{Duration, Instant};

use futures::StreamExt;
use porthole_mcp::ModelFacing;
use porthole_mcp::config::AgentConfig;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::agent::TurnResult;
use crate::conversation::{Message, Part, Role, Usage};
use crate::events::{AllowedBy, CallStatus, EventSink, RemoteView, StopReason, TurnEvent};
use crate::providers::sse::SseParser;

/// The provider name a remote turn reports (`TurnStarted.provider`).
pub const PROVIDER: &str = "ag-ui";
/// How long the agent may take to answer the request (its stream may then last any time).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The most of an error response's body quoted.
const BODY_QUOTED: usize = 300;
/// How long a proxied MCP request may take, answer included.
pub const PROXY_TIMEOUT: Duration = Duration::from_secs(60);
/// The MCP Apps middleware's activity types: a call's view, and a call's progress.
const VIEW_ACTIVITY: &str = "mcp-apps";
const PROGRESS_ACTIVITY: &str = "mcp-apps-progress";

/// A remote AG-UI agent.
#[derive(Clone)]
pub struct RemoteAgent {
    pub config: AgentConfig,
    client: reqwest::Client,
}

impl RemoteAgent {
    pub fn new(config: AgentConfig) -> RemoteAgent {
        // One client for the process (each turn makes its agent): building one loads the
        // system's root certificates, tens of milliseconds, and a shared one keeps connections.
        static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
        let client = CLIENT
            .get_or_init(|| {
                reqwest::Client::builder()
                    .connect_timeout(CONNECT_TIMEOUT)
                    .build()
                    .unwrap_or_default()
            })
            .clone();
        RemoteAgent { config, client }
    }

    /// Runs one turn: `user` after `history`, as thread `conversation_id`. Every event goes to
    /// `sink`; `cancel` aborts the request (the agent sees the connection close).
    /// `thread` is what is kept of the agent's view of the thread (see [`AgentThread`]): sent
    /// with the run, and updated by what the run says.
    pub async fn run_turn(
        &self,
        conversation_id: Option<String>,
        history: Vec<Message>,
        user: Message,
        thread: &mut AgentThread,
        sink: &dyn EventSink,
        cancel: CancellationToken,
    ) -> TurnResult {
        sink.emit(&TurnEvent::TurnStarted {
            conversation_id: conversation_id.clone(),
            model: self.config.name.clone(),
            provider: PROVIDER.into(),
        });
        sink.emit(&TurnEvent::UserMessage { message: user.clone() });
        let thread_id = conversation_id.unwrap_or_else(|| format!("thread-{}", random_hex()));
        let run_id = format!("run-{}", random_hex());
        let input = thread.applied_to(run_input(&thread_id, &run_id, &history, &user), &user, &run_id);
        let mut translator = Translator::new(&self.config.name, user);
        translator.state = match &thread.state {
            Value::Null => json!({}),
            state => state.clone(),
        };
        let outcome = tokio::select! {
            outcome = self.stream(&input, &mut translator, sink) => outcome,
            () = cancel.cancelled() => Err(Stop::Cancelled),
        };
        let (state, snapshot) = translator.agent_view();
        let result = match outcome {
            Ok(()) => translator.finish(None, sink),
            Err(Stop::Cancelled) => translator.finish(Some((StopReason::Cancelled, None)), sink),
            Err(Stop::Failed(why)) => translator.finish(Some((StopReason::Error, Some(why))), sink),
        };
        thread.follow(state, snapshot, &result.messages, &run_id);
        if let Some(failure) = sink.failure() {
            return TurnResult {
                stop_reason: StopReason::Error,
                error: Some(failure),
                ..result
            };
        }
        result
    }

    async fn stream(&self, input: &Value, translator: &mut Translator, sink: &dyn EventSink) -> Result<(), Stop> {
        self.post(input, |data| translator.feed(data, sink)).await
    }

    /// POSTs `input` and hands each event's data to `on_event` until it says the run is over.
    async fn post(&self, input: &Value, mut on_event: impl FnMut(&str) -> bool) -> Result<(), Stop> {
        let mut request = self
            .client
            .post(&self.config.url)
            .header("Accept", "text/event-stream")
            .header("Content-Type", "application/json")
            .body(input.to_string());
        for (name, value) in &self.config.headers {
            request = request.header(name, value);
        }
        let shown = porthole_secrets::redact::url(&self.config.url);
        let response = request.send().await.map_err(|e| {
            Stop::Failed(format!(
                "the agent {} at {shown} cannot be reached: {}",
                self.config.name,
                cause(&e)
            ))
        })?;
        let status = response.status();
        if !status.is_success() {
            let body = response.text().await.unwrap_or_default();
            let quoted: String = body.chars().take(BODY_QUOTED).collect();
            let hint = match status.as_u16() {
                401 | 403 => " (check the agent's \"headers\" in the config: its token)",
                _ => "",
            };
            return Err(Stop::Failed(format!(
                "the agent {} answered HTTP {status}{hint}{}",
                self.config.name,
                if quoted.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", quoted.trim())
                }
            )));
        }
        let mut parser = SseParser::new();
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| {
                Stop::Failed(format!(
                    "the agent's stream was cut before the run finished: {}",
                    cause(&e)
                ))
            })?;
            for event in parser.feed(&chunk) {
                if on_event(&event.data) {
                    return Ok(());
                }
            }
        }
        if let Some(event) = parser.finish()
            && on_event(&event.data)
        {
            return Ok(());
        }
        Err(Stop::Failed(
            "the agent's stream was cut before the run finished (it ended with no RUN_FINISHED)".into(),
        ))
    }

    /// An MCP request of a remote view, sent through the agent (the MCP Apps middleware's
    /// proxied request): `server` names the MCP server as the view's activity did. The answer
    /// is the run's `RUN_FINISHED.result`; an `{"error": …}` result, a run error, a cut stream
    /// or no answer within [`PROXY_TIMEOUT`] fail with the reason.
    pub async fn proxied(
        &self,
        thread_id: &str,
        server: &ProxiedServer,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        let mut request = json!({"method": method, "params": params});
        if let Some(id) = &server.server_id {
            request["serverId"] = json!(id);
        }
        if let Some(hash) = &server.server_hash {
            request["serverHash"] = json!(hash);
        }
        let mut input = run_input(thread_id, &format!("proxy-{}", random_hex()), &[], &Message::user(""));
        input["messages"] = json!([]);
        input["forwardedProps"] = json!({"__proxiedMCPRequest": request});
        let mut answer: Option<Result<Value, String>> = None;
        let run = self.post(&input, |data| {
            let Ok(event) = serde_json::from_str::<Value>(data) else {
                return false;
            };
            match event.get("type").and_then(Value::as_str) {
                Some("RUN_FINISHED") => {
                    let result = event.get("result").cloned().unwrap_or(Value::Null);
                    answer = Some(match result.get("error") {
                        Some(error) if result.as_object().is_some_and(|o| o.len() == 1) => Err(format!(
                            "the agent refused the request: {}",
                            error.as_str().map(String::from).unwrap_or_else(|| error.to_string())
                        )),
                        _ => Ok(result),
                    });
                    true
                }
                Some("RUN_ERROR") => {
                    let message = event
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no reason given");
                    answer = Some(Err(format!("the agent's run failed: {message}")));
                    true
                }
                _ => false,
            }
        });
        match tokio::time::timeout(PROXY_TIMEOUT, run).await {
            Err(_) => Err(format!(
                "the agent did not answer the {method} request within {} s",
                PROXY_TIMEOUT.as_secs()
            )),
            Ok(Err(Stop::Failed(why))) => Err(why),
            Ok(Err(Stop::Cancelled)) => Err("the request was stopped".into()),
            Ok(Ok(())) => answer.unwrap_or_else(|| Err("the agent's run ended without an answer".into())),
        }
    }
}

/// How the MCP Apps middleware names one of its MCP servers (a view's activity says).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProxiedServer {
    pub server_id: Option<String>,
    pub server_hash: Option<String>,
}

impl ProxiedServer {
    pub fn of(view: &RemoteView) -> ProxiedServer {
        ProxiedServer {
            server_id: view.server_id.clone(),
            server_hash: view.server_hash.clone(),
        }
    }

    /// The server's name: its id, else its hash.
    pub fn label(&self) -> String {
        match (&self.server_id, &self.server_hash) {
            (Some(id), _) => id.clone(),
            (None, Some(hash)) => hash.clone(),
            (None, None) => "unnamed server".into(),
        }
    }

    /// The server a name from [`ProxiedServer::label`] stands for (as a stored view's server
    /// keeps it): sent as both its id and its hash, the middleware finds it by either.
    pub fn from_label(label: &str) -> ProxiedServer {
        ProxiedServer {
            server_id: Some(label.to_string()),
            server_hash: Some(label.to_string()),
        }
    }
}

enum Stop {
    Cancelled,
    Failed(String),
}

fn cause(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        bytes = (now.as_nanos() as u64).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What Porthole keeps of an agent's own view of a thread between its runs: its state (the
/// last `STATE_SNAPSHOT` with the `STATE_DELTA`s after it applied) and, once the agent sent a
/// `MESSAGES_SNAPSHOT`, its messages (that snapshot and what came after it). The next run is
/// sent these instead of Porthole's own rendering of the conversation, so the conversation
/// follows the agent's view of its history.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AgentThread {
    #[serde(default)]
    pub state: Value,
    #[serde(default)]
    pub messages: Option<Vec<Value>>,
}

impl AgentThread {
    /// What the store keeps of the conversation's agent's view of its thread (nothing yet: an
    /// empty thread).
    pub fn load(store: &porthole_store::Store, conversation_id: &str) -> AgentThread {
        match store.agent_thread(conversation_id) {
            Ok(Some(kept)) => serde_json::from_value(kept).unwrap_or_default(),
            Ok(None) => AgentThread::default(),
            Err(e) => {
                tracing::warn!(conversation_id, "the agent's view of the thread could not be read: {e}");
                AgentThread::default()
            }
        }
    }

    /// Keeps it with the conversation.
    pub fn save(&self, store: &porthole_store::Store, conversation_id: &str) {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Err(e) = store.set_agent_thread(conversation_id, Some(&value)) {
            tracing::warn!(conversation_id, "the agent's view of the thread could not be kept: {e}");
        }
    }

    /// The `RunAgentInput` of a run of this thread: `input` (from the conversation), with the
    /// agent's state and, when it sent its own messages, those with `user` after them.
    fn applied_to(&self, mut input: Value, user: &Message, run_id: &str) -> Value {
        if !self.state.is_null() {
            input["state"] = self.state.clone();
        }
        if let Some(messages) = &self.messages {
            let mut messages = messages.clone();
            messages.extend(agui_messages(&format!("{run_id}-user"), user));
            input["messages"] = Value::Array(messages);
        }
        input
    }

    /// What a run said: its last `state`, and its last messages snapshot with how many of the
    /// run's own messages came before it; `run` is the run's messages (the person's first).
    fn follow(&mut self, state: Value, snapshot: Option<(Vec<Value>, usize)>, run: &[Message], run_id: &str) {
        self.state = state;
        let (base, after) = match (snapshot, self.messages.take()) {
            (Some((snapshot, before)), _) => (snapshot, run.get(1 + before..).unwrap_or_default()),
            (None, Some(mut kept)) => {
                kept.extend(agui_messages(&format!("{run_id}-user"), &run[0]));
                (kept, run.get(1..).unwrap_or_default())
            }
            (None, None) => return,
        };
        let mut messages = base;
        for (i, message) in after.iter().enumerate() {
            messages.extend(agui_messages(&format!("{run_id}-{i}"), message));
        }
        self.messages = Some(messages);
    }
}

/// The `RunAgentInput` of a turn: the thread, a run id, the conversation as AG-UI messages (the
/// user's message last), no state, no tools of Porthole's own, nothing forwarded.
pub fn run_input(thread_id: &str, run_id: &str, history: &[Message], user: &Message) -> Value {
    let mut messages = Vec::new();
    for (i, message) in history.iter().chain(std::iter::once(user)).enumerate() {
        messages.extend(agui_messages(&format!("m{i}"), message));
    }
    json!({
        "threadId": thread_id,
        "runId": run_id,
        "state": {},
        "messages": messages,
        "tools": [],
        "context": [],
        "forwardedProps": {},
    })
}

/// One stored message as AG-UI messages: a user or assistant message (with its tool calls), or
/// one tool message per result.
fn agui_messages(id: &str, message: &Message) -> Vec<Value> {
    let text: String = message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    match message.role {
        Role::User => vec![json!({"id": id, "role": "user", "content": text})],
        Role::Assistant => {
            let calls: Vec<Value> = message
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::ToolUse { id, name, arguments } => Some(json!({
                        "id": id,
                        "type": "function",
                        "function": {"name": name, "arguments": match arguments {
                            Value::String(raw) => raw.clone(),
                            other => other.to_string(),
                        }},
                    })),
                    _ => None,
                })
                .collect();
            let mut m = json!({"id": id, "role": "assistant", "content": text});
            if !calls.is_empty() {
                m["toolCalls"] = Value::Array(calls);
            }
            vec![m]
        }
        Role::Tool => message
            .parts
            .iter()
            .enumerate()
            .filter_map(|(j, p)| match p {
                Part::ToolResult {
                    tool_use_id, content, ..
                } => Some(json!({
                    "id": format!("{id}-{j}"),
                    "role": "tool",
                    "toolCallId": tool_use_id,
                    "content": content_text(content),
                })),
                _ => None,
            })
            .collect(),
    }
}

/// MCP content blocks as the text an AG-UI tool message carries.
fn content_text(content: &[Value]) -> String {
    content
        .iter()
        .map(|c| match c.get("text").and_then(Value::as_str) {
            Some(text) => text.to_string(),
            None => c.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A tool call the agent is making.
struct Call {
    id: String,
    name: String,
    arguments_text: String,
    ended: bool,
    started: Instant,
}

/// AG-UI events in, turn events out (see the module's notes). Pure: no I/O.
pub struct Translator {
    /// The agent's name in the config (it names the servers of its views).
    agent: String,
    user: Message,
    messages: Vec<Message>,
    step: u32,
    /// The step's assistant message is being written (text, reasoning, calls).
    text: String,
    reasoning: String,
    calls: Vec<Call>,
    /// The step's assistant message has been given (its calls are running).
    given: bool,
    /// The results of the step's calls so far.
    results: Vec<Part>,
    last_text: String,
    finished: bool,
    error: Option<String>,
    /// Calls with a result and no view yet, the latest last, with their arguments: an
    /// `mcp-apps` activity is the view of one of them.
    awaiting_view: Vec<(String, String, Value)>,
    /// `mcp-apps-progress` activities by message id: the call and its progress so far.
    progress: std::collections::HashMap<String, (String, Value)>,
    /// The agent's state (snapshots and deltas applied), from the thread's kept state.
    pub state: Value,
    /// The agent's last `MESSAGES_SNAPSHOT`, and how many of this run's messages were given
    /// before it.
    snapshot: Option<(Vec<Value>, usize)>,
}

impl Translator {
    pub fn new(agent: &str, user: Message) -> Translator {
        Translator {
            agent: agent.to_string(),
            user,
            messages: Vec::new(),
            step: 0,
            text: String::new(),
            reasoning: String::new(),
            calls: Vec::new(),
            given: false,
            results: Vec::new(),
            last_text: String::new(),
            finished: false,
            error: None,
            awaiting_view: Vec::new(),
            progress: Default::default(),
            state: json!({}),
            snapshot: None,
        }
    }

    /// What the run said of the agent's view of the thread so far (see [`AgentThread`]).
    fn agent_view(&self) -> (Value, Option<(Vec<Value>, usize)>) {
        (self.state.clone(), self.snapshot.clone())
    }

    /// One event's JSON (an SSE `data`); true once the run is over (finished or failed).
    pub fn feed(&mut self, data: &str, sink: &dyn EventSink) -> bool {
        let Ok(event) = serde_json::from_str::<Value>(data) else {
            tracing::debug!("an AG-UI event that is not JSON is skipped");
            return false;
        };
        let kind = event.get("type").and_then(Value::as_str).unwrap_or_default();
        let text = |key: &str| event.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        match kind {
            "TEXT_MESSAGE_START" => self.writing(sink),
            "TEXT_MESSAGE_CONTENT" | "TEXT_MESSAGE_CHUNK" => {
                self.writing(sink);
                let delta = text("delta");
                if !delta.is_empty() {
                    self.text.push_str(&delta);
                    sink.emit(&TurnEvent::TextDelta { text: delta });
                }
            }
            "TEXT_MESSAGE_END"
            | "REASONING_START"
            | "REASONING_END"
            | "REASONING_MESSAGE_START"
            | "REASONING_MESSAGE_END" => {}
            "REASONING_MESSAGE_CONTENT" | "REASONING_MESSAGE_CHUNK" => {
                self.writing(sink);
                let delta = text("delta");
                if !delta.is_empty() {
                    self.reasoning.push_str(&delta);
                    sink.emit(&TurnEvent::ReasoningDelta { text: delta });
                }
            }
            "TOOL_CALL_START" | "TOOL_CALL_ARGS" | "TOOL_CALL_CHUNK" => {
                let id = text("toolCallId");
                let known = self.calls.iter().any(|c| c.id == id);
                if !known {
                    if id.is_empty() {
                        return false;
                    }
                    self.writing(sink);
                    self.calls.push(Call {
                        id: id.clone(),
                        name: text("toolCallName"),
                        arguments_text: String::new(),
                        ended: false,
                        started: Instant::now(),
                    });
                }
                let call = self.calls.iter_mut().find(|c| c.id == id).expect("just found or added");
                call.arguments_text.push_str(&text("delta"));
                sink.emit(&TurnEvent::ToolCallStreaming {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    arguments_text: call.arguments_text.clone(),
                });
            }
            "TOOL_CALL_END" => {
                if let Some(call) = self.calls.iter_mut().find(|c| c.id == text("toolCallId")) {
                    call.ended = true;
                }
            }
            "TOOL_CALL_RESULT" => {
                let id = text("toolCallId");
                self.give_message(sink, false);
                let Some(call) = self.calls.iter().find(|c| c.id == id) else {
                    tracing::debug!(%id, "a result for a tool call the agent did not announce");
                    return false;
                };
                let content = vec![json!({"type": "text", "text": text("content")})];
                sink.emit(&TurnEvent::ToolCallFinished {
                    call_id: id.clone(),
                    status: CallStatus::Ok,
                    model: ModelFacing {
                        content: content.clone(),
                        is_error: false,
                    },
                    view: Value::Null,
                    duration_ms: call.started.elapsed().as_millis() as u64,
                    error: None,
                });
                self.awaiting_view
                    .push((id.clone(), call.name.clone(), parsed_arguments(&call.arguments_text)));
                self.results.push(Part::ToolResult {
                    tool_use_id: id,
                    content,
                    is_error: false,
                });
            }
            "STATE_SNAPSHOT" => {
                if let Some(snapshot) = event.get("snapshot") {
                    self.state = snapshot.clone();
                }
                sink.emit(&TurnEvent::AgentEvent { event });
            }
            "STATE_DELTA" => {
                let patch = event
                    .get("delta")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                if let Err(e) = apply_patch(&mut self.state, &patch) {
                    tracing::warn!("the agent's state delta does not apply to its state: {e}");
                }
                sink.emit(&TurnEvent::AgentEvent { event });
            }
            "MESSAGES_SNAPSHOT" => {
                if let Some(messages) = event.get("messages").and_then(Value::as_array) {
                    // The step being written is the agent's to include; what is given after counts as after.
                    self.snapshot = Some((messages.clone(), self.messages.len()));
                }
                sink.emit(&TurnEvent::AgentEvent { event });
            }
            "CUSTOM" | "RAW" => {
                let name = event.get("name").and_then(Value::as_str).unwrap_or_default();
                tracing::info!(kind, name, "the agent sent an event of its own");
                sink.emit(&TurnEvent::AgentEvent { event });
            }
            "ACTIVITY_SNAPSHOT" | "ACTIVITY_DELTA" => {
                let meaning = self.activity(kind, &event);
                if matches!(meaning, Some(TurnEvent::ToolCallProgress { .. })) {
                    // A call making progress runs: the step's message (and its calls) is given.
                    self.give_message(sink, false);
                }
                sink.emit(&TurnEvent::AgentEvent { event });
                if let Some(meaning) = meaning {
                    sink.emit(&meaning);
                }
            }
            "RUN_FINISHED" => {
                self.finished = true;
                sink.emit(&TurnEvent::AgentEvent { event });
                return true;
            }
            "RUN_ERROR" => {
                let message = text("message");
                self.error = Some(if message.is_empty() {
                    "the agent's run failed".into()
                } else {
                    format!("the agent's run failed: {message}")
                });
                return true;
            }
            _ => sink.emit(&TurnEvent::AgentEvent { event }),
        }
        false
    }

    /// What an activity means to Porthole: an `mcp-apps` snapshot is a call's view, an
    /// `mcp-apps-progress` snapshot or delta its progress. Others mean nothing more.
    fn activity(&mut self, kind: &str, event: &Value) -> Option<TurnEvent> {
        let activity = event.get("activityType").and_then(Value::as_str);
        let message_id = event.get("messageId").and_then(Value::as_str).unwrap_or_default();
        match (kind, activity) {
            ("ACTIVITY_SNAPSHOT", Some(VIEW_ACTIVITY)) => {
                let content = event.get("content")?;
                let text = |key: &str| content.get(key).and_then(Value::as_str).map(String::from);
                let view = RemoteView {
                    resource_uri: text("resourceUri")?,
                    server_hash: text("serverHash"),
                    server_id: text("serverId"),
                    tool_input: content.get("toolInput").cloned().unwrap_or_else(|| json!({})),
                    result: content.get("result").cloned().unwrap_or(Value::Null),
                };
                // The call whose arguments it repeats, else the latest result without a view.
                let index = self
                    .awaiting_view
                    .iter()
                    .rposition(|(_, _, arguments)| *arguments == view.tool_input)
                    .or_else(|| self.awaiting_view.len().checked_sub(1))?;
                let (call_id, tool, _) = self.awaiting_view.remove(index);
                let server = format!("{}/{}", self.agent, ProxiedServer::of(&view).label());
                Some(TurnEvent::RemoteView {
                    call_id,
                    server,
                    tool,
                    view,
                })
            }
            ("ACTIVITY_SNAPSHOT", Some(PROGRESS_ACTIVITY)) => {
                let content = event.get("content")?.clone();
                let call_id = content.get("toolCallId").and_then(Value::as_str)?.to_string();
                self.progress
                    .insert(message_id.to_string(), (call_id.clone(), content.clone()));
                progress_event(call_id, &content)
            }
            ("ACTIVITY_DELTA", _) => {
                let (call_id, content) = self.progress.get_mut(message_id)?;
                let patch = event.get("patch").and_then(Value::as_array)?;
                if let Err(e) = apply_patch(content, patch) {
                    tracing::debug!(message_id, "a progress delta that does not apply: {e}");
                    return None;
                }
                progress_event(call_id.clone(), content)
            }
            _ => None,
        }
    }

    /// Text, reasoning or a call is coming: a step starts if none is open (the first, or the
    /// one after a step's tool results).
    fn writing(&mut self, sink: &dyn EventSink) {
        if self.step > 0 && !self.given {
            return;
        }
        self.end_step(sink);
        self.step += 1;
        self.given = false;
        sink.emit(&TurnEvent::StepStarted { step: self.step });
    }

    /// The step's assistant message, once: its text, reasoning and calls; then its calls run.
    /// `interrupted`: the turn stopped first; the calls, never run, are left out.
    fn give_message(&mut self, sink: &dyn EventSink, interrupted: bool) {
        if self.given || self.step == 0 {
            return;
        }
        self.given = true;
        if interrupted {
            self.calls.clear();
        }
        let mut parts = Vec::new();
        if !self.reasoning.is_empty() {
            parts.push(Part::Reasoning {
                text: std::mem::take(&mut self.reasoning),
                signature: None,
                field: None,
            });
        }
        if !self.text.is_empty() {
            self.last_text = self.text.clone();
            parts.push(Part::Text {
                text: std::mem::take(&mut self.text),
            });
        }
        for call in &self.calls {
            parts.push(Part::ToolUse {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: parsed_arguments(&call.arguments_text),
            });
        }
        let message = Message {
            role: Role::Assistant,
            parts,
        };
        self.messages.push(message.clone());
        sink.emit(&TurnEvent::AssistantMessage {
            message,
            interrupted,
            usage: Usage::default(),
        });
        for call in &self.calls {
            sink.emit(&TurnEvent::ToolCallStarted {
                call_id: call.id.clone(),
                name: call.name.clone(),
                server: None,
                tool: Some(call.name.clone()),
                arguments: parsed_arguments(&call.arguments_text),
                ui_resource_uri: None,
            });
            sink.emit(&TurnEvent::ToolCallRunning {
                call_id: call.id.clone(),
                allowed_by: AllowedBy::Agent,
            });
        }
    }

    /// Ends the open step: its message given, its results as one tool message.
    fn end_step(&mut self, sink: &dyn EventSink) {
        if self.step == 0 {
            return;
        }
        self.give_message(sink, false);
        if !self.results.is_empty() {
            let message = Message {
                role: Role::Tool,
                parts: std::mem::take(&mut self.results),
            };
            self.messages.push(message.clone());
            sink.emit(&TurnEvent::ToolResults { message });
        }
        self.calls.clear();
    }

    /// The turn is over: `stopped` says how when the stream did not end it (a cancel, a
    /// failure). Calls left without a result end as cancelled or failed.
    pub fn finish(mut self, stopped: Option<(StopReason, Option<String>)>, sink: &dyn EventSink) -> TurnResult {
        let (stop_reason, error) = match (stopped, self.error.take()) {
            (Some(stopped), _) => stopped,
            (None, Some(error)) => (StopReason::Error, Some(error)),
            (None, None) => (StopReason::EndTurn, None),
        };
        // What came of an open step is kept, marked as cut short when the turn stopped.
        self.give_message(sink, stop_reason != StopReason::EndTurn);
        // Calls the agent never gave a result for end so, and the history keeps them paired.
        let (status, why) = match stop_reason {
            StopReason::EndTurn | StopReason::StepLimit => {
                (CallStatus::Failed, "the agent ended its run without this call's result")
            }
            StopReason::Cancelled => (CallStatus::Cancelled, "the run was stopped before this call's result"),
            StopReason::Error => (CallStatus::Failed, "the run failed before this call's result"),
        };
        let unanswered: Vec<(String, Instant)> = self
            .calls
            .iter()
            .filter(|c| {
                !self
                    .results
                    .iter()
                    .any(|r| matches!(r, Part::ToolResult { tool_use_id, .. } if *tool_use_id == c.id))
            })
            .map(|c| (c.id.clone(), c.started))
            .collect();
        for (id, started) in unanswered {
            let content = vec![json!({"type": "text", "text": why})];
            sink.emit(&TurnEvent::ToolCallFinished {
                call_id: id.clone(),
                status,
                model: ModelFacing {
                    content: content.clone(),
                    is_error: true,
                },
                view: Value::Null,
                duration_ms: started.elapsed().as_millis() as u64,
                error: Some(why.into()),
            });
            self.results.push(Part::ToolResult {
                tool_use_id: id,
                content,
                is_error: true,
            });
        }
        self.end_step(sink);
        if let Some(error) = &error {
            sink.emit(&TurnEvent::Error { message: error.clone() });
        }
        sink.emit(&TurnEvent::Done {
            stop_reason,
            text: self.last_text.clone(),
            usage: Usage::default(),
        });
        let mut messages = vec![self.user];
        messages.extend(self.messages);
        TurnResult {
            messages,
            stop_reason,
            text: self.last_text,
            usage: Usage::default(),
            error,
        }
    }
}

/// An `mcp-apps-progress` activity's content as the call's progress.
fn progress_event(call_id: String, content: &Value) -> Option<TurnEvent> {
    Some(TurnEvent::ToolCallProgress {
        call_id,
        progress: content.get("progress").and_then(Value::as_f64)?,
        total: content.get("total").and_then(Value::as_f64),
        message: content.get("message").and_then(Value::as_str).map(String::from),
    })
}

/// Applies an RFC 6902 JSON Patch's `add`, `replace` and `remove` operations (what activity
/// deltas use) to `doc`; another operation, or a path that is not there, is an error and
/// leaves the operations before it applied.
pub fn apply_patch(doc: &mut Value, patch: &[Value]) -> Result<(), String> {
    for op in patch {
        let kind = op.get("op").and_then(Value::as_str).unwrap_or_default();
        let path = op
            .get("path")
            .and_then(Value::as_str)
            .ok_or("an operation without a path")?;
        let (parent_path, last) = match path.rfind('/') {
            Some(i) => (&path[..i], path[i + 1..].replace("~1", "/").replace("~0", "~")),
            None if path.is_empty() => {
                // The whole document.
                match kind {
                    "add" | "replace" => *doc = op.get("value").cloned().unwrap_or(Value::Null),
                    _ => return Err(format!("{kind} of the whole document")),
                }
                continue;
            }
            None => return Err(format!("{path:?} is not a JSON pointer")),
        };
        let parent = doc
            .pointer_mut(parent_path)
            .ok_or_else(|| format!("{parent_path:?} is not in the document"))?;
        let value = || {
            op.get("value")
                .cloned()
                .ok_or_else(|| format!("{kind} without a value"))
        };
        match (kind, parent) {
            ("add" | "replace", Value::Object(map)) => {
                if kind == "replace" && !map.contains_key(&last) {
                    return Err(format!("{path:?} is not in the document"));
                }
                map.insert(last, value()?);
            }
            ("remove", Value::Object(map)) => {
                map.remove(&last)
                    .ok_or_else(|| format!("{path:?} is not in the document"))?;
            }
            (_, Value::Array(items)) => {
                let index = if last == "-" {
                    items.len()
                } else {
                    last.parse().map_err(|_| format!("{path:?}: not an index"))?
                };
                match kind {
                    "add" if index <= items.len() => items.insert(index, value()?),
                    "replace" if index < items.len() => items[index] = value()?,
                    "remove" if index < items.len() => {
                        items.remove(index);
                    }
                    _ => return Err(format!("{kind} at {path:?}: no such index")),
                }
            }
            (other, _) => return Err(format!("{other:?} at {path:?} is not applied")),
        }
    }
    Ok(())
}

/// A call's arguments: the JSON object, or the raw text when it is not JSON.
fn parsed_arguments(text: &str) -> Value {
    if text.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[derive(Default)]
    struct Seen(Mutex<Vec<TurnEvent>>);

    impl EventSink for Seen {
        fn emit(&self, event: &TurnEvent) {
            self.0.lock().unwrap().push(event.clone());
        }
    }

    fn names(events: &[TurnEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| {
                serde_json::to_value(e).unwrap()["type"]
                    .as_str()
                    .unwrap_or("?")
                    .to_string()
            })
            .collect()
    }

    fn feed_all(events: &[Value]) -> (Vec<TurnEvent>, TurnResult) {
        let seen = Seen::default();
        let mut t = Translator::new("remote", Message::user("hi"));
        let mut ended = false;
        for e in events {
            ended = t.feed(&e.to_string(), &seen);
        }
        let stopped = (!ended).then(|| (StopReason::Error, Some("cut".to_string())));
        let result = t.finish(stopped, &seen);
        (seen.0.into_inner().unwrap(), result)
    }

    #[test]
    fn text_then_a_tool_call_then_more_text_are_two_steps() {
        let (events, result) = feed_all(&[
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
            json!({"type": "TEXT_MESSAGE_START", "messageId": "a", "role": "assistant"}),
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "Let me look"}),
            json!({"type": "TEXT_MESSAGE_END", "messageId": "a"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "weather"}),
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{\"city\":"}),
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "\"Oslo\"}"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
            json!({"type": "TOOL_CALL_RESULT", "toolCallId": "c1", "messageId": "t1", "content": "Rain", "role": "tool"}),
            json!({"type": "STATE_SNAPSHOT", "snapshot": {"city": "Oslo"}}),
            json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "b", "delta": "It rains."}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
        ]);
        assert_eq!(
            names(&events),
            [
                "agent_event",
                "step_started",
                "text_delta",
                "tool_call_streaming",
                "tool_call_streaming",
                "tool_call_streaming",
                "assistant_message",
                "tool_call_started",
                "tool_call_running",
                "tool_call_finished",
                "agent_event",
                "tool_results",
                "step_started",
                "text_delta",
                "agent_event",
                "assistant_message",
                "done",
            ]
        );
        assert_eq!(result.stop_reason, StopReason::EndTurn);
        assert_eq!(result.text, "It rains.");
        let TurnEvent::ToolCallStarted { arguments, .. } = &events[7] else {
            panic!()
        };
        assert_eq!(arguments, &json!({"city": "Oslo"}));
        let TurnEvent::ToolCallRunning { allowed_by, .. } = &events[8] else {
            panic!()
        };
        assert_eq!(*allowed_by, AllowedBy::Agent);
        let TurnEvent::ToolCallFinished { model, .. } = &events[9] else {
            panic!()
        };
        assert_eq!(model.content, vec![json!({"type": "text", "text": "Rain"})]);
        // The user's message, the call's step, its results, the answer.
        assert_eq!(result.messages.len(), 4);
    }

    #[test]
    fn a_run_error_and_a_cut_stream_end_the_turn_with_the_reason_and_keep_the_text() {
        let (events, result) = feed_all(&[
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "Half"}),
            json!({"type": "RUN_ERROR", "message": "model overloaded"}),
        ]);
        assert_eq!(result.stop_reason, StopReason::Error);
        assert_eq!(
            result.error.as_deref(),
            Some("the agent's run failed: model overloaded")
        );
        assert_eq!(result.text, "Half");
        assert!(
            names(&events).ends_with(&["assistant_message".into(), "error".into(), "done".into()]),
            "{:?}",
            names(&events)
        );
        let TurnEvent::AssistantMessage { interrupted, .. } = &events[2] else {
            panic!("{events:?}")
        };
        assert!(*interrupted);

        let (_, cut) = feed_all(&[json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "So far"})]);
        assert_eq!(cut.stop_reason, StopReason::Error);
        assert_eq!(cut.text, "So far");
    }

    #[test]
    fn a_call_the_agent_leaves_without_a_result_ends_failed_and_stays_paired() {
        let (events, result) = feed_all(&[
            json!({"type": "TOOL_CALL_START", "toolCallId": "c9", "toolCallName": "ask_user"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "c9"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
        ]);
        assert_eq!(result.stop_reason, StopReason::EndTurn);
        let finished = events
            .iter()
            .find_map(|e| match e {
                TurnEvent::ToolCallFinished { status, error, .. } => Some((*status, error.clone())),
                _ => None,
            })
            .expect("the call ends");
        assert_eq!(finished.0, CallStatus::Failed);
        assert!(finished.1.unwrap().contains("without this call's result"));
        let last = result.messages.last().unwrap();
        assert_eq!(last.role, Role::Tool, "the call is answered in the history");
    }

    /// The MCP Apps middleware's activities: a view for the call whose arguments it repeats
    /// (not merely the latest), and progress from a snapshot and its JSON-Patch deltas.
    #[test]
    fn mcp_apps_activities_become_a_calls_view_and_its_progress() {
        let call = |id: &str, args: &str| {
            [
                json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": "get-time"}),
                json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": args}),
                json!({"type": "TOOL_CALL_END", "toolCallId": id}),
            ]
        };
        let mut events: Vec<Value> = Vec::new();
        events.extend(call("c1", "{\"zone\":\"UTC\"}"));
        events.extend(call("c2", "{\"zone\":\"CET\"}"));
        events.extend([
            json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "mcp-apps-progress:c1", "activityType": "mcp-apps-progress",
                   "content": {"progress": 1, "total": 4, "toolCallId": "c1", "toolName": "get-time", "serverHash": "h"}, "replace": false}),
            json!({"type": "ACTIVITY_DELTA", "messageId": "mcp-apps-progress:c1", "activityType": "mcp-apps-progress",
                   "patch": [{"op": "replace", "path": "/progress", "value": 3}, {"op": "add", "path": "/message", "value": "almost"}]}),
            json!({"type": "TOOL_CALL_RESULT", "toolCallId": "c1", "messageId": "r1", "content": "12:00"}),
            json!({"type": "TOOL_CALL_RESULT", "toolCallId": "c2", "messageId": "r2", "content": "13:00"}),
            json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "v", "activityType": "mcp-apps", "replace": true,
                   "content": {"result": {"content": [{"type": "text", "text": "12:00"}], "structuredContent": {"time": "12:00"}},
                               "resourceUri": "ui://get-time/mcp-app.html", "serverHash": "0123456789abcdef0123", "toolInput": {"zone": "UTC"}}}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
        ]);
        let (seen, _) = feed_all(&events);
        let progress: Vec<(String, f64, Option<f64>, Option<String>)> = seen
            .iter()
            .filter_map(|e| match e {
                TurnEvent::ToolCallProgress {
                    call_id,
                    progress,
                    total,
                    message,
                } => Some((call_id.clone(), *progress, *total, message.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            progress,
            [
                ("c1".into(), 1.0, Some(4.0), None),
                ("c1".into(), 3.0, Some(4.0), Some("almost".into()))
            ]
        );
        let views: Vec<_> = seen
            .iter()
            .filter_map(|e| match e {
                TurnEvent::RemoteView {
                    call_id, server, view, ..
                } => Some((call_id.clone(), server.clone(), view.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(views.len(), 1);
        assert_eq!(
            views[0].0, "c1",
            "the call whose arguments the activity repeats, not the latest"
        );
        assert_eq!(views[0].1, "remote/0123456789abcdef0123");
        assert_eq!(views[0].2.resource_uri, "ui://get-time/mcp-app.html");
        assert_eq!(views[0].2.result["structuredContent"]["time"], "12:00");
        // Each activity is still passed on whole.
        assert_eq!(names(&seen).iter().filter(|n| *n == "agent_event").count(), 4);
    }

    #[test]
    fn json_patches_apply_add_replace_and_remove_and_refuse_the_rest() {
        let mut doc = json!({"progress": 1, "list": [1, 2]});
        apply_patch(
            &mut doc,
            &[
                json!({"op": "replace", "path": "/progress", "value": 2}),
                json!({"op": "add", "path": "/message", "value": "a/b"}),
                json!({"op": "add", "path": "/list/-", "value": 3}),
                json!({"op": "remove", "path": "/list/0"}),
            ],
        )
        .unwrap();
        assert_eq!(doc, json!({"progress": 2, "message": "a/b", "list": [2, 3]}));
        assert!(apply_patch(&mut doc, &[json!({"op": "replace", "path": "/total", "value": 1})]).is_err());
        assert!(apply_patch(&mut doc, &[json!({"op": "move", "from": "/a", "path": "/progress"})]).is_err());
    }

    #[test]
    fn the_run_input_carries_the_thread_and_the_history_in_agui_shapes() {
        let history = vec![
            Message::user("What's the weather?"),
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolUse {
                    id: "c1".into(),
                    name: "weather".into(),
                    arguments: json!({"city": "Oslo"}),
                }],
            },
            Message {
                role: Role::Tool,
                parts: vec![Part::ToolResult {
                    tool_use_id: "c1".into(),
                    content: vec![json!({"type": "text", "text": "Rain"})],
                    is_error: false,
                }],
            },
        ];
        let input = run_input("conv-1", "run-1", &history, &Message::user("And tomorrow?"));
        assert_eq!(input["threadId"], "conv-1");
        let messages = input["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 4);
        assert_eq!(
            messages[1]["toolCalls"][0]["function"]["arguments"],
            "{\"city\":\"Oslo\"}"
        );
        assert_eq!(
            messages[2],
            json!({"id": "m2-0", "role": "tool", "toolCallId": "c1", "content": "Rain"})
        );
        assert_eq!(
            messages[3],
            json!({"id": "m3", "role": "user", "content": "And tomorrow?"})
        );
    }
}
