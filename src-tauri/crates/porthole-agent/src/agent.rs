//! The agent loop: model → tool calls (in parallel, each approved first) → results → model,
//! until the model answers without tools, the step limit is reached, or the turn is cancelled.
//!
//! Each tool call's result is split by [`porthole_mcp::ToolOutcome`] the moment it returns; the
//! model gets the model-facing half unchanged. The only thing the host may add is one note that
//! the tool's view is on screen, and only when the view host says it rendered ([`ViewReports`]):
//! never in headless runs, never when the view failed or was refused.

use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt;
use futures::future::{BoxFuture, join_all};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::context::ModelContext;
use crate::conversation::{Message, Part, Role, ToolSpec, Usage};
use crate::events::{AllowedBy, CallStatus, Decision, EventSink, StopReason, TurnEvent};
use crate::provider::{ModelEvent, ModelRequest, Provider, ProviderError};
use porthole_mcp::{CallError, CallOptions, CatalogTool, ModelFacing, Progress, ServerState, Servers};

/// The note appended to a tool's model-facing result when, and only when, its view rendered.
pub const VIEW_SHOWN_NOTE: &str = "[Porthole: this tool's interactive view is shown to the user in the chat.]";

/// One tool call waiting for the user's decision.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub arguments: Value,
}

/// Decides tool calls: the window's approval prompt, the terminal, or a headless policy.
pub trait Approver: Send + Sync {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'static, Decision>;
}

/// A tool a live view offers (MCP Apps draft, "app-provided tools"): offered to the model while
/// the view is live, under a name of its own, and called through the view. Never stored as a
/// server's tool; a call once the view is gone fails.
#[derive(Debug, Clone, PartialEq)]
pub struct AppTool {
    /// The name the model calls it by (unique among all tools offered).
    pub model_name: String,
    /// The view's own name for it.
    pub name: String,
    pub description: String,
    /// Its JSON Schema for the arguments (an object).
    pub input_schema: Value,
    /// `annotations.readOnlyHint`: such calls are not put to the person.
    pub read_only: bool,
    /// Who offers it, for the card and the approval ("demo's view of system_monitor").
    pub offered_by: String,
}

/// The tools the live views of one conversation offer, and how to call them.
pub trait AppTools: Send + Sync {
    fn tools(&self) -> Vec<AppTool>;
    /// Calls `model_name` with `arguments`; the view's `CallToolResult`, or why not.
    fn call(&self, model_name: &str, arguments: Value) -> BoxFuture<'static, Result<Value, String>>;
}

/// Approves every call (`porthole run --yes`).
pub struct AllowAll;

impl Approver for AllowAll {
    fn decide(&self, _: ApprovalRequest) -> BoxFuture<'static, Decision> {
        async { Decision::AllowOnce }.boxed()
    }
}

/// Refuses every call that is not already allowed (headless without `--yes` and no terminal).
pub struct DenyAll;

impl Approver for DenyAll {
    fn decide(&self, _: ApprovalRequest) -> BoxFuture<'static, Decision> {
        async { Decision::Deny }.boxed()
    }
}

/// Where "always allow this tool" is remembered (the conversation store, in the app).
pub trait RememberedApprovals: Send + Sync {
    fn is_allowed(&self, server: &str, tool: &str) -> bool;
    fn remember(&self, server: &str, tool: &str);
}

/// What became of a tool call's view, as the MCP Apps host reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewState {
    /// No view (headless, MCP Apps off, or the tool has none).
    None,
    /// The view initialized and is on screen; `description` is what its server says the view
    /// shows (`openai/widgetDescription`), for the model, so it need not repeat it.
    Rendered { description: Option<String> },
    /// The view failed to load, was refused, or did not initialize in time.
    Failed(String),
}

/// The MCP Apps host's answer to "did this call's view render?". `settle` is handed the call's
/// view-facing result (the whole `CallToolResult`) as soon as the call returns, so the host can
/// give it to the view at once — a view still starting gets it right after its input — and may
/// then wait a little for a view that is still loading; it must resolve.
pub trait ViewReports: Send + Sync {
    fn settle(&self, call_id: &str, result: &Value) -> BoxFuture<'static, ViewState>;
}

/// No views at all: headless runs.
pub struct NoViews;

impl ViewReports for NoViews {
    fn settle(&self, _: &str, _: &Value) -> BoxFuture<'static, ViewState> {
        async { ViewState::None }.boxed()
    }
}

/// The most of a view's description given to the model, in characters.
pub const MAX_VIEW_DESCRIPTION_CHARS: usize = 1000;

/// The model-facing content of a result, with the view note appended only for a rendered view
/// (and the view's description, when its server gave one).
pub fn model_content(model: &ModelFacing, view: &ViewState) -> Vec<Value> {
    let mut content = model.content.clone();
    if let ViewState::Rendered { description } = view {
        content.push(json!({"type": "text", "text": VIEW_SHOWN_NOTE}));
        if let Some(description) = description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
            let description: String = description.chars().take(MAX_VIEW_DESCRIPTION_CHARS).collect();
            content.push(json!({
                "type": "text",
                "text": format!("[Porthole: what the view shows, as its server describes it: {description}]"),
            }));
        }
    }
    content
}

/// What a turn added and how it ended.
#[derive(Debug, Clone)]
pub struct TurnResult {
    /// The user message, then each assistant message and tool-results message, in order.
    pub messages: Vec<Message>,
    pub stop_reason: StopReason,
    /// The text of the last assistant message.
    pub text: String,
    pub usage: Usage,
    /// The error, when `stop_reason` is `Error`.
    pub error: Option<String>,
}

/// A configured agent. Cheap to share; one `run_turn` per user message.
pub struct Agent {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    pub servers: Servers,
    pub system: Option<String>,
    /// Model requests per turn at most.
    pub step_limit: u32,
    pub max_tokens: Option<u32>,
    pub approver: Arc<dyn Approver>,
    pub remembered: Option<Arc<dyn RememberedApprovals>>,
    pub views: Arc<dyn ViewReports>,
    pub context: ModelContext,
    /// Tools the conversation's live views offer (the app; none headless).
    pub app_tools: Option<Arc<dyn AppTools>>,
    /// Cancelled to send without the servers still starting (the person chose not to wait).
    pub skip_wait: CancellationToken,
}

impl Agent {
    pub fn new(provider: Arc<dyn Provider>, model: impl Into<String>, servers: Servers) -> Agent {
        Agent {
            provider,
            model: model.into(),
            servers,
            system: None,
            step_limit: 20,
            max_tokens: None,
            approver: Arc::new(DenyAll),
            remembered: None,
            views: Arc::new(NoViews),
            context: ModelContext::default(),
            app_tools: None,
            skip_wait: CancellationToken::new(),
        }
    }

    /// Holds the first model request back while configured servers are still starting, so the
    /// model is not asked without the person's tools and nothing said: until each has connected
    /// or failed (its connection attempt ends within its own timeout), the turn is stopped, or
    /// [`Agent::skip_wait`] is cancelled. The servers it goes on without are named, with why.
    async fn wait_for_servers(&self, sink: &dyn EventSink, cancel: &CancellationToken) {
        let starting: Vec<String> = self
            .servers
            .statuses()
            .into_iter()
            .filter(|s| s.state == ServerState::Connecting)
            .map(|s| s.name)
            .collect();
        if starting.is_empty() {
            return;
        }
        sink.emit(&TurnEvent::WaitingForServers {
            servers: starting.clone(),
        });
        let mut changes = self.servers.subscribe();
        let settled = changes.wait_for(|all| {
            all.iter()
                .filter(|s| starting.contains(&s.name))
                .all(|s| s.state != ServerState::Connecting)
        });
        tokio::select! {
            _ = settled => {}
            _ = self.skip_wait.cancelled() => {}
            _ = cancel.cancelled() => {}
        }
        let statuses = self.servers.statuses();
        let missing = starting
            .iter()
            .filter_map(|name| {
                let reason = match statuses.iter().find(|s| &s.name == name) {
                    Some(s) => match s.state {
                        ServerState::Connected => return None,
                        ServerState::Connecting => "still starting".to_string(),
                        ServerState::Disabled => "turned off".to_string(),
                        ServerState::Failed => s.error.clone().unwrap_or_else(|| "it failed to start".into()),
                    },
                    None => "removed".to_string(),
                };
                Some(crate::events::MissingServer {
                    name: name.clone(),
                    reason,
                })
            })
            .collect();
        sink.emit(&TurnEvent::ServersWaited { missing });
    }

    fn app_tools(&self) -> Vec<AppTool> {
        self.app_tools.as_ref().map(|a| a.tools()).unwrap_or_default()
    }

    /// Every tool offered to the model now, from every connected server.
    pub fn tools(&self) -> Vec<(CatalogTool, bool)> {
        self.servers
            .statuses()
            .into_iter()
            .filter(|s| s.state == ServerState::Connected)
            .flat_map(|s| {
                let apps = s.mcp_apps;
                s.tools.into_iter().map(move |t| (t, apps))
            })
            .filter(|(t, _)| t.visible_to_model())
            .collect()
    }

    fn tool_specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = self
            .tools()
            .into_iter()
            .map(|(t, _)| ToolSpec {
                name: t.model_name.clone(),
                description: t.description.clone().or(t.title.clone()).unwrap_or_default(),
                input_schema: t.input_schema.clone(),
            })
            .collect();
        for tool in self.app_tools() {
            if specs.iter().any(|s| s.name == tool.model_name) {
                continue;
            }
            specs.push(ToolSpec {
                name: tool.model_name,
                description: format!(
                    "{} (offered by {} while it is shown)",
                    tool.description, tool.offered_by
                ),
                input_schema: tool.input_schema,
            });
        }
        specs
    }

    fn system_prompt(&self) -> Option<String> {
        match (self.system.clone(), self.context.render()) {
            (None, None) => None,
            (Some(s), None) => Some(s),
            (None, Some(c)) => Some(c),
            (Some(s), Some(c)) => Some(format!("{s}\n\n{c}")),
        }
    }

    /// Runs one user turn to completion (or cancellation), emitting every event to `sink`.
    pub async fn run_turn(
        &self,
        conversation_id: Option<String>,
        history: Vec<Message>,
        user: Message,
        sink: &dyn EventSink,
        cancel: CancellationToken,
    ) -> TurnResult {
        sink.emit(&TurnEvent::TurnStarted {
            conversation_id,
            model: self.model.clone(),
            provider: self.provider.kind().to_string(),
        });
        sink.emit(&TurnEvent::UserMessage { message: user.clone() });
        self.wait_for_servers(sink, &cancel).await;
        let mut messages = prepare_history(history);
        messages.push(user.clone());
        let mut added = vec![user];
        let mut usage = Usage::default();
        let mut error = None;
        let mut step = 0;
        let stop_reason = loop {
            if let Some(message) = report_failure(sink) {
                error = Some(message);
                break StopReason::Error;
            }
            if cancel.is_cancelled() {
                break StopReason::Cancelled;
            }
            if step >= self.step_limit {
                let message = format!(
                    "stopped after {} model requests: the model kept calling tools (the step limit)",
                    self.step_limit
                );
                sink.emit(&TurnEvent::Error {
                    message: message.clone(),
                });
                error = Some(message);
                break StopReason::StepLimit;
            }
            step += 1;
            sink.emit(&TurnEvent::StepStarted { step });
            let request = ModelRequest {
                model: self.model.clone(),
                system: self.system_prompt(),
                messages: messages.clone(),
                tools: self.tool_specs(),
                max_tokens: self.max_tokens,
            };
            let reply = self.stream_reply(&request, sink, cancel.clone()).await;
            let (parts, step_usage, failure) = match reply {
                Ok(reply) => (reply.parts, reply.usage, None),
                Err(e) => {
                    let partial = e.partial().cloned().unwrap_or_default();
                    (partial.parts, partial.usage, Some(e))
                }
            };
            usage.add(step_usage);
            let assistant = Message {
                role: Role::Assistant,
                parts,
            };
            let interrupted = failure.is_some();
            if !assistant.parts.is_empty() || failure.is_none() {
                sink.emit(&TurnEvent::AssistantMessage {
                    message: assistant.clone(),
                    interrupted,
                    usage: step_usage,
                });
                messages.push(assistant.clone());
                added.push(assistant.clone());
            }
            // A reply that could not be saved ends the turn here: no tool runs whose call
            // would not be on record. The reply stays in `added` (and on screen) for a retry.
            if let Some(message) = report_failure(sink) {
                error = Some(message);
                break StopReason::Error;
            }
            if let Some(e) = failure {
                if matches!(e, ProviderError::Cancelled { .. }) {
                    break StopReason::Cancelled;
                }
                let message = e.to_string();
                sink.emit(&TurnEvent::Error {
                    message: message.clone(),
                });
                error = Some(message);
                break StopReason::Error;
            }
            let uses: Vec<(String, String, Value)> = assistant
                .tool_uses()
                .map(|(id, name, args)| (id.to_string(), name.to_string(), args.clone()))
                .collect();
            if uses.is_empty() {
                break StopReason::EndTurn;
            }
            let results = join_all(
                uses.into_iter()
                    .map(|(id, name, args)| self.run_tool(id, name, args, sink, cancel.clone())),
            )
            .await;
            let tool_message = Message {
                role: Role::Tool,
                parts: results,
            };
            sink.emit(&TurnEvent::ToolResults {
                message: tool_message.clone(),
            });
            messages.push(tool_message.clone());
            added.push(tool_message);
        };
        let text = added
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(Message::text)
            .unwrap_or_default();
        sink.emit(&TurnEvent::Done {
            stop_reason,
            text: text.clone(),
            usage,
        });
        TurnResult {
            messages: added,
            stop_reason,
            text,
            usage,
            error,
        }
    }

    /// One model request, its streamed events turned into turn events as they arrive.
    async fn stream_reply(
        &self,
        request: &ModelRequest,
        sink: &dyn EventSink,
        cancel: CancellationToken,
    ) -> Result<crate::provider::ModelReply, ProviderError> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let reply = self.provider.stream(request, tx, cancel);
        tokio::pin!(reply);
        let mut calls: Vec<(usize, String, String, String)> = Vec::new();
        let mut forward = |event: ModelEvent| match event {
            ModelEvent::TextDelta { text } => sink.emit(&TurnEvent::TextDelta { text }),
            ModelEvent::ReasoningDelta { text } => sink.emit(&TurnEvent::ReasoningDelta { text }),
            ModelEvent::ToolCallStarted { index, id, name } => {
                sink.emit(&TurnEvent::ToolCallStreaming {
                    call_id: id.clone(),
                    name: name.clone(),
                    arguments_text: String::new(),
                });
                calls.push((index, id, name, String::new()));
            }
            ModelEvent::ToolCallArgumentsDelta { index, fragment } => {
                if let Some((_, id, name, text)) = calls.iter_mut().rev().find(|c| c.0 == index) {
                    text.push_str(&fragment);
                    sink.emit(&TurnEvent::ToolCallStreaming {
                        call_id: id.clone(),
                        name: name.clone(),
                        arguments_text: text.clone(),
                    });
                }
            }
            ModelEvent::Retrying {
                attempt,
                wait_ms,
                kind,
                reason,
            } => sink.emit(&TurnEvent::Retrying {
                attempt,
                wait_ms,
                kind,
                reason,
            }),
        };
        loop {
            tokio::select! {
                biased;
                Some(event) = rx.recv() => forward(event),
                result = &mut reply => {
                    while let Ok(event) = rx.try_recv() {
                        forward(event);
                    }
                    return result;
                }
            }
        }
    }

    fn find_tool(&self, model_name: &str) -> Option<(CatalogTool, bool)> {
        self.tools().into_iter().find(|(t, _)| t.model_name == model_name)
    }

    /// Approves, runs and reports one tool call the model asked for; returns the model's
    /// tool-result part.
    async fn run_tool(
        &self,
        call_id: String,
        name: String,
        arguments: Value,
        sink: &dyn EventSink,
        cancel: CancellationToken,
    ) -> Part {
        let tool = self.find_tool(&name);
        if tool.is_none()
            && let Some(app_tool) = self.app_tools().into_iter().find(|t| t.model_name == name)
        {
            let end = self
                .run_app_tool(call_id.clone(), app_tool, arguments, sink, cancel)
                .await;
            return Part::ToolResult {
                tool_use_id: call_id,
                content: end.model.content,
                is_error: end.model.is_error,
            };
        }
        let call = Call {
            tool,
            id: call_id.clone(),
            name,
            arguments,
        };
        let approval = Approval::Ask {
            approver: self.approver.as_ref(),
            remembered: self.remembered.as_deref(),
        };
        let runner = ToolRunner {
            servers: self.servers.clone(),
            views: self.views.clone(),
        };
        let end = runner.run(call, approval, sink, cancel).await;
        Part::ToolResult {
            tool_use_id: call_id,
            content: end.model.content,
            is_error: end.model.is_error,
        }
    }
}

impl Agent {
    /// A call of a tool a view offers: the same events as a server tool's (attributed to the
    /// view), asked of the person unless the tool is read-only (and never remembered), at most
    /// [`APP_TOOL_TIMEOUT`], through the view.
    async fn run_app_tool(
        &self,
        call_id: String,
        tool: AppTool,
        arguments: Value,
        sink: &dyn EventSink,
        cancel: CancellationToken,
    ) -> CallEnd {
        let started = Instant::now();
        sink.emit(&TurnEvent::ToolCallStarted {
            call_id: call_id.clone(),
            name: tool.model_name.clone(),
            server: Some(tool.offered_by.clone()),
            tool: Some(tool.name.clone()),
            arguments: arguments.clone(),
            ui_resource_uri: None,
        });
        let started = std::sync::Mutex::new(started);
        let finish = |status: CallStatus, model: ModelFacing, view: Value, error: Option<String>| {
            finished(sink, &call_id, *started.lock().unwrap(), status, model, view, error)
        };
        let arguments = match arguments {
            Value::Object(map) => Value::Object(map),
            Value::Null => Value::Object(Map::new()),
            other => {
                let text = format!("The tool call's arguments must be a JSON object, not {other}");
                return finish(CallStatus::Failed, host_error(text.clone()), Value::Null, Some(text));
            }
        };
        if !tool.read_only {
            let request = ApprovalRequest {
                call_id: call_id.clone(),
                server: tool.offered_by.clone(),
                tool: tool.name.clone(),
                arguments: arguments.clone(),
            };
            let Some(decision) = ask_person(self.approver.as_ref(), sink, request, &cancel).await else {
                let text = "The tool call was cancelled before it was approved.".to_string();
                return finish(CallStatus::Cancelled, host_error(text.clone()), Value::Null, Some(text));
            };
            if decision == Decision::Deny {
                let text = "The user denied this tool call.".to_string();
                return finish(CallStatus::Denied, host_error(text.clone()), Value::Null, Some(text));
            }
        }
        *started.lock().unwrap() = Instant::now();
        sink.emit(&TurnEvent::ToolCallRunning {
            call_id: call_id.clone(),
            allowed_by: if tool.read_only {
                AllowedBy::ReadOnly
            } else {
                AllowedBy::Once
            },
        });
        let Some(app_tools) = self.app_tools.clone() else {
            let text = "No view offers this tool any more.".to_string();
            return finish(CallStatus::Failed, host_error(text.clone()), Value::Null, Some(text));
        };
        let call = app_tools.call(&tool.model_name, arguments);
        let result = tokio::select! {
            r = tokio::time::timeout(APP_TOOL_TIMEOUT, call) => r,
            _ = cancel.cancelled() => {
                let text = "The tool call was cancelled.".to_string();
                return finish(CallStatus::Cancelled, host_error(text.clone()), Value::Null, Some(text));
            }
        };
        let result = match result {
            Ok(Ok(result)) => result,
            Ok(Err(why)) => {
                let text = format!("The tool call failed: {why}");
                return finish(CallStatus::Failed, host_error(text.clone()), Value::Null, Some(why));
            }
            Err(_) => {
                let why = format!("the view gave no result within {} s", APP_TOOL_TIMEOUT.as_secs());
                let text = format!("The tool call failed: {why}");
                return finish(CallStatus::Failed, host_error(text.clone()), Value::Null, Some(why));
            }
        };
        match porthole_mcp::ToolOutcome::from_json(result) {
            Ok(outcome) => {
                let status = if outcome.model.is_error {
                    CallStatus::Error
                } else {
                    CallStatus::Ok
                };
                finish(status, outcome.model, outcome.view, None)
            }
            Err(e) => {
                let why = format!("the view's answer is {e}");
                let text = format!("The tool call failed: {why}");
                finish(CallStatus::Failed, host_error(text.clone()), Value::Null, Some(why))
            }
        }
    }
}

/// Emits the end of a call (`ToolCallFinished`) and returns it.
fn finished(
    sink: &dyn EventSink,
    call_id: &str,
    started: Instant,
    status: CallStatus,
    model: ModelFacing,
    view: Value,
    error: Option<String>,
) -> CallEnd {
    sink.emit(&TurnEvent::ToolCallFinished {
        call_id: call_id.to_string(),
        status,
        model: model.clone(),
        view: view.clone(),
        duration_ms: started.elapsed().as_millis() as u64,
        error: error.clone(),
    });
    CallEnd {
        status,
        model,
        view,
        error,
    }
}

/// What the model gets when the host ends a call itself: `text`, as an error.
fn host_error(text: String) -> ModelFacing {
    ModelFacing {
        content: vec![json!({"type": "text", "text": text})],
        is_error: true,
    }
}

/// Puts a call to the person (`ApprovalRequested`, the approver's decision, `ApprovalResolved`);
/// `None` when the turn was cancelled while it waited.
async fn ask_person(
    approver: &dyn Approver,
    sink: &dyn EventSink,
    request: ApprovalRequest,
    cancel: &CancellationToken,
) -> Option<Decision> {
    let call_id = request.call_id.clone();
    sink.emit(&TurnEvent::ApprovalRequested {
        call_id: call_id.clone(),
        server: request.server.clone(),
        tool: request.tool.clone(),
        arguments: request.arguments.clone(),
    });
    let decision = tokio::select! {
        d = approver.decide(request) => d,
        _ = cancel.cancelled() => return None,
    };
    sink.emit(&TurnEvent::ApprovalResolved { call_id, decision });
    Some(decision)
}

/// How long a view has to answer a call of a tool it offers.
pub const APP_TOOL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// When `sink` can no longer keep the turn ([`EventSink::failure`]), says so with an `Error`
/// event and returns the reason.
fn report_failure(sink: &dyn EventSink) -> Option<String> {
    let message = sink.failure()?;
    sink.emit(&TurnEvent::Error {
        message: message.clone(),
    });
    Some(message)
}

/// How one tool call ended: what its `ToolCallFinished` event said.
#[derive(Debug, Clone, PartialEq)]
pub struct CallEnd {
    pub status: CallStatus,
    /// What the model gets (for a call the person started: what a model would have got).
    pub model: ModelFacing,
    /// The full, unmodified `CallToolResult` for the view (`null`: no result).
    pub view: Value,
    pub error: Option<String>,
}

/// Runs tool calls on the servers and emits each call's events. The agent loop runs every call
/// a model asks for through it, and the tools panel a call the person starts
/// ([`ToolRunner::run_call`]); both take the same path, so a call's events, its
/// model-facing / view-facing split and its view report are the same whoever started it. Only
/// the approval differs: a person's own call is not put to them again.
#[derive(Clone)]
pub struct ToolRunner {
    pub servers: Servers,
    pub views: Arc<dyn ViewReports>,
}

/// Who decides whether a call may run.
enum Approval<'a> {
    /// A model's call: the config's `alwaysAllow` or a remembered "always", else the approver.
    Ask {
        approver: &'a dyn Approver,
        remembered: Option<&'a dyn RememberedApprovals>,
    },
    /// The person started the call (the tools panel's Run).
    Given,
}

/// One call to run: its id, the name it was asked for by, the tool that name stands for (and
/// whether MCP Apps is on for its server), and its arguments as given.
struct Call {
    id: String,
    name: String,
    tool: Option<(CatalogTool, bool)>,
    arguments: Value,
}

impl ToolRunner {
    /// Runs a call the person started from the tools panel: `tool` of the connected `server`.
    /// Any tool that server lists may be run, app-only ones too (the person is the host's user,
    /// and app-only means "not offered to the model"). There is no approval prompt — the person
    /// pressed Run — so the events are a model's call's without `ApprovalRequested` /
    /// `ApprovalResolved`: `ToolCallStarted` (with the tool's model-facing name), then
    /// `ViewAvailable` when it has a view, `ToolCallRunning`, `ToolCallProgress`…, and
    /// `ToolCallFinished` with both facings.
    pub async fn run_call(
        &self,
        call_id: impl Into<String>,
        server: &str,
        tool: &str,
        arguments: Value,
        sink: &dyn EventSink,
        cancel: CancellationToken,
    ) -> CallEnd {
        let found = self
            .servers
            .statuses()
            .into_iter()
            .filter(|s| s.name == server && s.state == ServerState::Connected)
            .find_map(|s| {
                let apps = s.mcp_apps;
                s.tools.into_iter().find(|t| t.name == tool).map(|t| (t, apps))
            });
        let call = Call {
            id: call_id.into(),
            name: found
                .as_ref()
                .map(|(t, _)| t.model_name.clone())
                .unwrap_or_else(|| tool.to_string()),
            tool: found,
            arguments,
        };
        self.run(call, Approval::Given, sink, cancel).await
    }

    /// Approves (unless given), runs and reports one call.
    async fn run(
        &self,
        call: Call,
        approval: Approval<'_>,
        sink: &dyn EventSink,
        cancel: CancellationToken,
    ) -> CallEnd {
        let started = Instant::now();
        let Call {
            id: call_id,
            name,
            tool,
            arguments,
        } = call;
        let ui_resource_uri = tool
            .as_ref()
            .and_then(|(t, apps)| if *apps { t.ui_resource_uri.clone() } else { None });
        sink.emit(&TurnEvent::ToolCallStarted {
            call_id: call_id.clone(),
            name: name.clone(),
            server: tool.as_ref().map(|(t, _)| t.server.clone()),
            tool: tool.as_ref().map(|(t, _)| t.name.clone()),
            arguments: arguments.clone(),
            ui_resource_uri: ui_resource_uri.clone(),
        });
        if let (Some((t, _)), Some(resource_uri)) = (&tool, ui_resource_uri) {
            sink.emit(&TurnEvent::ViewAvailable {
                call_id: call_id.clone(),
                server: t.server.clone(),
                tool: t.name.clone(),
                resource_uri,
            });
        }
        // A call's duration is its run, from the moment it was approved: not the person's time.
        let started = std::sync::Mutex::new(started);
        let finish = |status: CallStatus, model: ModelFacing, view: Value, error: Option<String>| {
            finished(sink, &call_id, *started.lock().unwrap(), status, model, view, error)
        };
        let Some((tool, _)) = tool else {
            let text = format!("There is no tool named {name:?}.");
            return finish(CallStatus::Failed, host_error(text.clone()), Value::Null, Some(text));
        };
        let arguments: Map<String, Value> = match arguments {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            Value::String(raw) => {
                let text = format!("The tool call's arguments were not valid JSON: {raw}");
                return finish(CallStatus::Failed, host_error(text.clone()), Value::Null, Some(text));
            }
            other => {
                let text = format!("The tool call's arguments must be a JSON object, not {other}");
                return finish(CallStatus::Failed, host_error(text.clone()), Value::Null, Some(text));
            }
        };

        let allowed_by = match approval {
            Approval::Given => AllowedBy::Person,
            Approval::Ask { .. } if self.servers.always_allowed(&tool.server, &tool.name) => AllowedBy::Config,
            Approval::Ask { remembered, .. } if remembered.is_some_and(|r| r.is_allowed(&tool.server, &tool.name)) => {
                AllowedBy::Remembered
            }
            Approval::Ask { approver, remembered } => {
                let request = ApprovalRequest {
                    call_id: call_id.clone(),
                    server: tool.server.clone(),
                    tool: tool.name.clone(),
                    arguments: Value::Object(arguments.clone()),
                };
                let Some(decision) = ask_person(approver, sink, request, &cancel).await else {
                    let text = "The tool call was cancelled before it was approved.".to_string();
                    return finish(CallStatus::Cancelled, host_error(text.clone()), Value::Null, Some(text));
                };
                match decision {
                    Decision::Deny => {
                        let text = "The user denied this tool call.".to_string();
                        return finish(CallStatus::Denied, host_error(text.clone()), Value::Null, Some(text));
                    }
                    Decision::AllowAlways => {
                        if let Some(r) = remembered {
                            r.remember(&tool.server, &tool.name);
                        }
                        AllowedBy::Always
                    }
                    Decision::AllowOnce => AllowedBy::Once,
                }
            }
        };

        *started.lock().unwrap() = Instant::now();
        sink.emit(&TurnEvent::ToolCallRunning {
            call_id: call_id.clone(),
            allowed_by,
        });
        let (progress_tx, mut progress_rx) = mpsc::unbounded_channel::<Progress>();
        let call = self.servers.call_tool(
            &tool.server,
            &tool.name,
            Some(arguments),
            CallOptions {
                progress: Some(progress_tx),
                cancel: cancel.child_token(),
                timeout: None,
            },
        );
        tokio::pin!(call);
        let result = loop {
            tokio::select! {
                biased;
                Some(p) = progress_rx.recv() => sink.emit(&TurnEvent::ToolCallProgress {
                    call_id: call_id.clone(),
                    progress: p.progress,
                    total: p.total,
                    message: p.message,
                }),
                result = &mut call => break result,
            }
        };
        match result {
            Ok(outcome) => {
                let view_state = self.views.settle(&call_id, &outcome.view).await;
                let model = ModelFacing {
                    content: model_content(&outcome.model, &view_state),
                    is_error: outcome.model.is_error,
                };
                let status = if model.is_error {
                    CallStatus::Error
                } else {
                    CallStatus::Ok
                };
                finish(status, model, outcome.view, None)
            }
            Err(CallError::Cancelled) => {
                let text = "The tool call was cancelled.".to_string();
                finish(CallStatus::Cancelled, host_error(text.clone()), Value::Null, Some(text))
            }
            Err(e) => {
                let text = format!("The tool call failed: {e}");
                finish(
                    CallStatus::Failed,
                    host_error(text.clone()),
                    Value::Null,
                    Some(e.to_string()),
                )
            }
        }
    }
}

/// Makes a stored history safe to send: every tool use gets a result (a call the app never
/// finished — it was killed mid-turn — gets an error result saying so), results without a
/// matching use are dropped, and empty messages are left out.
pub fn prepare_history(history: Vec<Message>) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(history.len());
    let mut iter = history.into_iter().peekable();
    while let Some(message) = iter.next() {
        match message.role {
            Role::Assistant => {
                let uses: Vec<String> = message.tool_uses().map(|(id, _, _)| id.to_string()).collect();
                if message.parts.is_empty() {
                    continue;
                }
                out.push(message);
                if uses.is_empty() {
                    continue;
                }
                let mut results: Vec<Part> = Vec::new();
                if iter.peek().is_some_and(|m| m.role == Role::Tool) {
                    results = iter.next().unwrap().parts;
                }
                let mut parts = Vec::with_capacity(uses.len());
                for id in uses {
                    let found = results
                        .iter()
                        .position(|p| matches!(p, Part::ToolResult { tool_use_id, .. } if *tool_use_id == id));
                    match found {
                        Some(i) => parts.push(results.remove(i)),
                        None => parts.push(Part::ToolResult {
                            tool_use_id: id,
                            content: vec![json!({
                                "type": "text",
                                "text": "No result: the call was interrupted before it finished."
                            })],
                            is_error: true,
                        }),
                    }
                }
                out.push(Message {
                    role: Role::Tool,
                    parts,
                });
            }
            Role::Tool => {} // orphaned results: their tool use is gone
            Role::User => {
                if !message.parts.is_empty() {
                    out.push(message);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(content: Vec<Value>, is_error: bool) -> ModelFacing {
        ModelFacing { content, is_error }
    }

    #[test]
    fn the_view_note_is_added_only_when_the_view_rendered() {
        let text = json!({"type": "text", "text": "{\"city\":\"Oslo\",\"high\":3}"});
        let facing = model(vec![text.clone()], false);
        assert_eq!(model_content(&facing, &ViewState::None), vec![text.clone()]);
        assert_eq!(
            model_content(&facing, &ViewState::Failed("CSP refused".into())),
            vec![text.clone()]
        );
        let rendered = model_content(&facing, &ViewState::Rendered { description: None });
        assert_eq!(rendered[0], text, "the server's content comes first, unchanged");
        assert_eq!(rendered[1]["text"], VIEW_SHOWN_NOTE);
        assert_eq!(rendered.len(), 2);
        let described = ViewState::Rendered {
            description: Some(format!("A map of pizza places{}", " and more".repeat(200))),
        };
        let rendered = model_content(&facing, &described);
        assert_eq!(rendered.len(), 3);
        let note = rendered[2]["text"].as_str().unwrap();
        assert!(
            note.starts_with(
                "[Porthole: what the view shows, as its server describes it: A map of pizza places and more"
            ),
            "{note}"
        );
        assert!(
            note.chars().count() < MAX_VIEW_DESCRIPTION_CHARS + 80,
            "bounded: {note}"
        );
        let blank = ViewState::Rendered {
            description: Some("  ".into()),
        };
        assert_eq!(
            model_content(&facing, &blank).len(),
            2,
            "a blank description adds nothing"
        );
    }

    #[test]
    fn an_error_result_stays_an_error_with_its_content() {
        let facing = model(vec![json!({"type": "text", "text": "boom"})], true);
        assert_eq!(model_content(&facing, &ViewState::None), facing.content);
    }

    fn use_part(id: &str) -> Part {
        Part::ToolUse {
            id: id.into(),
            name: "t".into(),
            arguments: json!({}),
        }
    }

    fn result_part(id: &str) -> Part {
        Part::ToolResult {
            tool_use_id: id.into(),
            content: vec![json!({"type": "text", "text": format!("result {id}")})],
            is_error: false,
        }
    }

    #[test]
    fn a_history_cut_mid_call_gets_an_honest_result_for_the_missing_call() {
        let history = vec![
            Message::user("hi"),
            Message {
                role: Role::Assistant,
                parts: vec![use_part("a"), use_part("b")],
            },
            Message {
                role: Role::Tool,
                parts: vec![result_part("a")],
            },
            Message {
                role: Role::Assistant,
                parts: vec![],
            },
            Message::user("again"),
        ];
        let prepared = prepare_history(history);
        assert_eq!(prepared.len(), 4);
        let Part::ToolResult {
            tool_use_id, is_error, ..
        } = &prepared[2].parts[1]
        else {
            panic!()
        };
        assert_eq!(tool_use_id, "b");
        assert!(is_error);
        assert_eq!(prepared[2].parts[0], result_part("a"));
        assert_eq!(prepared[3], Message::user("again"));
    }

    #[test]
    fn orphaned_results_are_dropped() {
        let prepared = prepare_history(vec![
            Message {
                role: Role::Tool,
                parts: vec![result_part("x")],
            },
            Message::user("hi"),
        ]);
        assert_eq!(prepared, vec![Message::user("hi")]);
    }
}
