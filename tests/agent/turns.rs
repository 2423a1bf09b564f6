//! The agent loop end to end: real MCP servers (Porthole's test server over stdio), a real
//! SQLite store, and the one stand-in allowed, a scripted fake LLM speaking the real OpenAI and
//! Anthropic wire formats on loopback.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use porthole_agent::agent::VIEW_SHOWN_NOTE;
use porthole_agent::providers::{ProviderConfig, ProviderKind, build};
use porthole_agent::record::{Recorder, StoredApprovals, load_history};
use porthole_agent::{
    Agent, AllowAll, ApprovalRequest, Approver, CallEnd, CallStatus, Decision, DenyAll, EventSink, Message,
    RetryPolicy, StopReason, ToolRunner, TurnEvent, TurnResult, ViewReports, ViewState,
};
use porthole_fake_llm::{FakeLlm, FakeToolCall, RecordedRequest, Reply, Script};
use porthole_mcp::{ConnectOptions, ServerConfig, Servers};
use porthole_store::{MessageRole, MessageStatus, Store, ToolCallStatus};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TEST_SERVER: &str = env!("CARGO_BIN_EXE_porthole-test-server");

fn test_server(always_allow: &[&str]) -> ServerConfig {
    ServerConfig::stdio("test", TEST_SERVER)
        .with_timeout(Duration::from_secs(20))
        .with_always_allow(always_allow.iter().copied())
}

/// Everything a turn needs, all real but the model.
struct Bench {
    fake: FakeLlm,
    servers: Servers,
    store: Store,
    conversation: String,
    _dir: tempfile::TempDir,
}

impl Bench {
    async fn start(replies: Vec<Reply>, mcp_apps: bool, always_allow: &[&str]) -> Bench {
        let fake = FakeLlm::start(Script::new(replies)).await.unwrap();
        let options = ConnectOptions {
            mcp_apps,
            ..ConnectOptions::default()
        };
        let servers = Servers::start(vec![test_server(always_allow)], options);
        servers.settled().await;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("porthole.db")).unwrap();
        let conversation = store.create_conversation("test").unwrap().id;
        Bench {
            fake,
            servers,
            store,
            conversation,
            _dir: dir,
        }
    }

    fn agent(&self, kind: ProviderKind) -> Agent {
        let provider = build(ProviderConfig {
            kind,
            base_url: Some(self.fake.base_url()),
            api_key: None,
            retry: RetryPolicy {
                max_attempts: 3,
                base_delay: Duration::from_millis(10),
                max_wait: Duration::from_secs(5),
            },
            max_tokens: None,
        });
        let mut agent = Agent::new(provider, "fake-model", self.servers.clone());
        agent.approver = Arc::new(AllowAll);
        agent.remembered = Some(Arc::new(StoredApprovals(self.store.clone())));
        agent
    }

    /// One turn in the bench's conversation, recorded in the store; returns its events too.
    async fn turn(&self, agent: &Agent, prompt: &str) -> (TurnResult, Vec<TurnEvent>) {
        self.turn_with(agent, prompt, CancellationToken::new(), |_, _| {}).await
    }

    async fn turn_with(
        &self,
        agent: &Agent,
        prompt: &str,
        cancel: CancellationToken,
        watch: impl Fn(&TurnEvent, &CancellationToken) + Send + Sync,
    ) -> (TurnResult, Vec<TurnEvent>) {
        let recorder = Recorder::new(self.store.clone(), self.conversation.clone());
        let events = Mutex::new(Vec::new());
        let token = cancel.clone();
        let sink = |event: &TurnEvent| {
            recorder.emit(event);
            events.lock().unwrap().push(event.clone());
            watch(event, &token);
        };
        let history = load_history(&self.store, &self.conversation).unwrap();
        let result = agent
            .run_turn(
                Some(self.conversation.clone()),
                history,
                Message::user(prompt),
                &sink,
                cancel,
            )
            .await;
        (result, events.into_inner().unwrap())
    }

    fn model_requests(&self) -> Vec<RecordedRequest> {
        self.fake
            .requests()
            .into_iter()
            .filter(|r| r.method == "POST")
            .collect()
    }
}

fn forecast_call(id: &str, city: &str) -> FakeToolCall {
    FakeToolCall::new(id, "forecast", json!({"city": city}).to_string())
}

fn tool_calls(calls: Vec<FakeToolCall>) -> Reply {
    Reply::ToolCalls { text: None, calls }
}

/// The text of every tool result in a recorded request, in either wire format.
fn tool_result_texts(request: &RecordedRequest) -> Vec<String> {
    let mut out = Vec::new();
    for message in request.body["messages"].as_array().unwrap() {
        if message["role"] == "tool" {
            out.push(message["content"].as_str().unwrap_or_default().to_string());
        }
        if let Some(blocks) = message["content"].as_array() {
            for block in blocks.iter().filter(|b| b["type"] == "tool_result") {
                let text: Vec<&str> = match &block["content"] {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
                    _ => vec![],
                };
                out.push(text.join("\n"));
            }
        }
    }
    out
}

fn finished(events: &[TurnEvent]) -> Vec<(String, CallStatus, Value, Value)> {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ToolCallFinished {
                call_id,
                status,
                model,
                view,
                ..
            } => Some((
                call_id.clone(),
                *status,
                serde_json::to_value(model).unwrap(),
                view.clone(),
            )),
            _ => None,
        })
        .collect()
}

/// The kagent reproduction: a UI-linked tool returning the full JSON as text plus
/// `structuredContent`. Whether or not the host advertises MCP Apps (so whether the tool's
/// definition carries `_meta.ui`), the model gets every field of the payload, unchanged, and
/// the view-facing value keeps `structuredContent` and `_meta`.
#[tokio::test]
async fn kagent_case_every_field_of_a_ui_tools_result_reaches_the_model() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let mut model_texts = Vec::new();
        for mcp_apps in [true, false] {
            let bench = Bench::start(
                vec![
                    tool_calls(vec![forecast_call("call_1", "Bergen")]),
                    Reply::EchoToolResults,
                ],
                mcp_apps,
                &[],
            )
            .await;
            let agent = bench.agent(kind);
            let (result, events) = bench.turn(&agent, "What is the weather in Bergen?").await;
            assert_eq!(
                result.stop_reason,
                StopReason::EndTurn,
                "{kind} apps={mcp_apps}: {result:?}"
            );

            let started = events.iter().find_map(|e| match e {
                TurnEvent::ToolCallStarted { ui_resource_uri, .. } => Some(ui_resource_uri.clone()),
                _ => None,
            });
            assert_eq!(
                started,
                Some(mcp_apps.then(|| "ui://test/forecast.html".to_string())),
                "the tool is linked to its view only when MCP Apps is on"
            );
            let available = events.iter().any(|e| {
                matches!(e, TurnEvent::ViewAvailable { resource_uri, server, .. }
                    if resource_uri == "ui://test/forecast.html" && server == "test")
            });
            assert_eq!(available, mcp_apps, "view_available only when a view can be shown");

            let requests = bench.model_requests();
            assert_eq!(requests.len(), 2);
            let texts = tool_result_texts(&requests[1]);
            assert_eq!(texts.len(), 1);
            let payload: Value = serde_json::from_str(&texts[0]).expect("the model got the JSON text unchanged");
            assert_eq!(payload["city"], "Bergen");
            assert_eq!(payload["advisory"], "Ice on the roads before 10:00");
            assert_eq!(payload["days"].as_array().unwrap().len(), 3);
            assert_eq!(payload["days"][0]["sky"], "snow showers");
            assert!(!texts[0].contains("rendered"), "no notice replaces or joins the result");
            model_texts.push(texts[0].clone());

            let (_, status, model, view) = finished(&events).remove(0);
            assert_eq!(status, CallStatus::Ok);
            assert_eq!(model["content"].as_array().unwrap().len(), 1);
            assert_eq!(view["structuredContent"], payload, "the view gets structuredContent");
            assert_eq!(
                view["_meta"]["generatedBy"], "porthole-test-server",
                "and _meta, unmodified"
            );
            assert!(result.text.contains("Ice on the roads before 10:00"));

            // What was stored is what the model got.
            let calls = bench.store.tool_calls(&bench.conversation).unwrap();
            assert_eq!(
                calls[0].model_facing.as_ref().unwrap()["content"][0]["text"],
                texts[0].as_str()
            );
            assert_eq!(calls[0].view_facing.as_ref().unwrap()["structuredContent"], payload);
        }
        assert_eq!(
            model_texts[0], model_texts[1],
            "{kind}: MCP Apps on or off, the model gets the same"
        );
    }
}

#[tokio::test]
async fn several_tool_calls_in_one_reply_run_in_parallel_with_progress() {
    let bench = Bench::start(
        vec![
            tool_calls(vec![
                FakeToolCall::new("a", "slow", r#"{"seconds": 0.5}"#),
                FakeToolCall::new("b", "slow", r#"{"seconds": 0.5}"#),
                FakeToolCall::new("c", "echo", r#"{"text": "third"}"#),
            ]),
            Reply::EchoToolResults,
        ],
        true,
        &[],
    )
    .await;
    let agent = bench.agent(ProviderKind::OpenAi);
    let (result, events) = bench.turn(&agent, "go").await;
    assert_eq!(result.stop_reason, StopReason::EndTurn);
    let first_finish = events
        .iter()
        .position(|e| matches!(e, TurnEvent::ToolCallFinished { .. }))
        .unwrap();
    let running: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, TurnEvent::ToolCallRunning { .. }))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(running.len(), 3);
    assert!(
        running.iter().all(|&i| i < first_finish),
        "all three run before any finishes"
    );
    let progress = events
        .iter()
        .filter(|e| matches!(e, TurnEvent::ToolCallProgress { call_id, .. } if call_id == "a"))
        .count();
    assert!(progress >= 3, "progress notifications become events ({progress})");

    // Each result goes back with its own call id, in the order the model asked.
    let request = &bench.model_requests()[1];
    let ids: Vec<&str> = request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert_eq!(tool_result_texts(request)[2], "third");
}

/// Counts how often it is asked, and answers with `decision`.
struct Counting {
    asked: AtomicU32,
    decision: Decision,
}

impl Approver for Counting {
    fn decide(&self, _: ApprovalRequest) -> BoxFuture<'static, Decision> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let d = self.decision;
        async move { d }.boxed()
    }
}

/// Answers "allow once" after the person took `after` to decide.
struct Slow {
    after: Duration,
}

impl Approver for Slow {
    fn decide(&self, _: ApprovalRequest) -> BoxFuture<'static, Decision> {
        let after = self.after;
        async move {
            tokio::time::sleep(after).await;
            Decision::AllowOnce
        }
        .boxed()
    }
}

/// A call's duration is how long it ran, not how long the person took to approve it.
#[tokio::test(flavor = "multi_thread")]
async fn a_calls_duration_leaves_out_the_wait_for_approval() {
    let bench = Bench::start(
        vec![
            tool_calls(vec![FakeToolCall::new("e", "echo", r#"{"text":"hi"}"#)]),
            Reply::text("done"),
        ],
        true,
        &[],
    )
    .await;
    let mut agent = bench.agent(ProviderKind::OpenAi);
    agent.approver = Arc::new(Slow {
        after: Duration::from_millis(1500),
    });
    let (_, events) = bench.turn(&agent, "echo hi").await;
    let duration = events
        .iter()
        .find_map(|e| match e {
            TurnEvent::ToolCallFinished { duration_ms, .. } => Some(*duration_ms),
            _ => None,
        })
        .unwrap();
    assert!(
        duration < 1000,
        "an echo that waited 1.5 s for approval took {duration} ms"
    );
}

#[tokio::test]
async fn a_denied_call_never_runs_and_the_model_is_told() {
    let bench = Bench::start(
        vec![
            tool_calls(vec![FakeToolCall::new("x", "add_tool", "{}")]),
            Reply::EchoToolResults,
        ],
        true,
        &[],
    )
    .await;
    let mut agent = bench.agent(ProviderKind::Anthropic);
    agent.approver = Arc::new(DenyAll);
    let (result, events) = bench.turn(&agent, "add a tool").await;
    assert_eq!(result.stop_reason, StopReason::EndTurn);
    assert!(!events.iter().any(|e| matches!(e, TurnEvent::ToolCallRunning { .. })));
    let (_, status, model, view) = finished(&events).remove(0);
    assert_eq!(status, CallStatus::Denied);
    assert_eq!(model["isError"], true);
    assert_eq!(view, Value::Null);
    let request = &bench.model_requests()[1];
    let last = request.body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["content"][0]["is_error"], true);
    assert!(tool_result_texts(request)[0].contains("denied"));
    // The tool never ran: it would have added `extra` to the server's tools.
    let tools: Vec<String> = bench.servers.statuses()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert!(!tools.contains(&"extra".to_string()), "{tools:?}");
    assert_eq!(
        bench.store.tool_calls(&bench.conversation).unwrap()[0]
            .status
            .to_string(),
        "denied"
    );
}

#[tokio::test]
async fn always_allow_is_asked_once_and_remembered_and_config_always_allow_is_never_asked() {
    let bench = Bench::start(
        vec![
            tool_calls(vec![FakeToolCall::new("1", "echo", r#"{"text":"a"}"#)]),
            Reply::text("ok"),
            tool_calls(vec![FakeToolCall::new("2", "echo", r#"{"text":"b"}"#)]),
            Reply::text("ok again"),
        ],
        true,
        &[],
    )
    .await;
    let mut agent = bench.agent(ProviderKind::OpenAi);
    let counting = Arc::new(Counting {
        asked: AtomicU32::new(0),
        decision: Decision::AllowAlways,
    });
    agent.approver = counting.clone();
    bench.turn(&agent, "one").await;
    let (result, _) = bench.turn(&agent, "two").await;
    assert_eq!(result.text, "ok again");
    assert_eq!(counting.asked.load(Ordering::SeqCst), 1);
    assert!(bench.store.is_always_allowed("test", "echo").unwrap());

    let bench = Bench::start(
        vec![
            tool_calls(vec![FakeToolCall::new("1", "echo", r#"{"text":"a"}"#)]),
            Reply::text("fine"),
        ],
        true,
        &["echo"],
    )
    .await;
    let mut agent = bench.agent(ProviderKind::OpenAi);
    let counting = Arc::new(Counting {
        asked: AtomicU32::new(0),
        decision: Decision::Deny,
    });
    agent.approver = counting.clone();
    let (_, events) = bench.turn(&agent, "one").await;
    assert_eq!(counting.asked.load(Ordering::SeqCst), 0);
    assert_eq!(finished(&events)[0].1, CallStatus::Ok);
}

#[tokio::test]
async fn a_stream_cut_mid_reply_keeps_the_partial_reply_marked_interrupted() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let bench = Bench::start(
            vec![Reply::Cut {
                text: "The first half arrives and then the connection drops".into(),
            }],
            true,
            &[],
        )
        .await;
        let agent = bench.agent(kind);
        let (result, events) = bench.turn(&agent, "tell me").await;
        assert_eq!(result.stop_reason, StopReason::Error);
        assert!(
            result.error.as_deref().unwrap().contains("cut off"),
            "{:?}",
            result.error
        );
        assert!(
            events
                .iter()
                .any(|e| matches!(e, TurnEvent::AssistantMessage { interrupted: true, .. }))
        );
        let messages = bench.store.messages(&bench.conversation).unwrap();
        let reply = messages.last().unwrap();
        assert_eq!(reply.role, MessageRole::Assistant);
        assert_eq!(reply.status, MessageStatus::Interrupted);
        let text = reply.parts[0]["text"].as_str().unwrap();
        assert!(text.starts_with("The first"), "{kind}: {text:?}");
        assert!(reply.error.as_deref().unwrap().contains("cut off"));
    }
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_within_bounds() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let bench = Bench::start(
            vec![
                Reply::Status {
                    status: 429,
                    retry_after: Some(1),
                    message: "slow down".into(),
                },
                Reply::status(500, "oops"),
                Reply::text("made it"),
            ],
            true,
            &[],
        )
        .await;
        let agent = bench.agent(kind);
        let (result, events) = bench.turn(&agent, "hi").await;
        assert_eq!(result.text, "made it", "{kind}");
        let waits: Vec<u64> = events
            .iter()
            .filter_map(|e| match e {
                TurnEvent::Retrying { wait_ms, .. } => Some(*wait_ms),
                _ => None,
            })
            .collect();
        assert_eq!(waits.len(), 2, "{kind}: {waits:?}");
        assert_eq!(waits[0], 1000, "retry-after: 1 is honoured");

        // Past the bound, the error is reported, not retried forever.
        let bench = Bench::start(
            vec![
                Reply::status(503, "down"),
                Reply::status(503, "down"),
                Reply::status(503, "down"),
            ],
            true,
            &[],
        )
        .await;
        let (result, _) = bench.turn(&bench.agent(kind), "hi").await;
        assert_eq!(result.stop_reason, StopReason::Error);
        assert!(result.error.unwrap().contains("503"));
        assert_eq!(bench.model_requests().len(), 3);
    }
}

#[tokio::test]
async fn stopping_mid_stream_keeps_what_arrived() {
    let bench = Bench::start(vec![Reply::Hang], true, &[]).await;
    let agent = bench.agent(ProviderKind::OpenAi);
    let (result, _) = bench
        .turn_with(&agent, "hang", CancellationToken::new(), |event, cancel| {
            if matches!(event, TurnEvent::TextDelta { .. }) {
                cancel.cancel();
            }
        })
        .await;
    assert_eq!(result.stop_reason, StopReason::Cancelled);
    let messages = bench.store.messages(&bench.conversation).unwrap();
    let reply = messages.last().unwrap();
    assert_eq!(reply.status, MessageStatus::Interrupted);
    assert_eq!(reply.parts[0]["text"], "Hang on");
}

#[tokio::test]
async fn a_slow_tool_call_is_cancelled_with_the_turn() {
    let bench = Bench::start(
        vec![tool_calls(vec![FakeToolCall::new("s", "slow", r#"{"seconds": 30}"#)])],
        true,
        &[],
    )
    .await;
    let agent = bench.agent(ProviderKind::OpenAi);
    let (result, events) = bench
        .turn_with(&agent, "wait", CancellationToken::new(), |event, cancel| {
            if matches!(event, TurnEvent::ToolCallProgress { .. }) {
                cancel.cancel();
            }
        })
        .await;
    assert_eq!(result.stop_reason, StopReason::Cancelled);
    assert_eq!(finished(&events)[0].1, CallStatus::Cancelled);
    assert_eq!(
        bench.model_requests().len(),
        1,
        "no further model request after stopping"
    );
}

#[tokio::test]
async fn a_model_that_keeps_calling_tools_is_stopped_at_the_step_limit() {
    let replies = (0..5)
        .map(|i| tool_calls(vec![FakeToolCall::new(format!("c{i}"), "echo", r#"{"text":"again"}"#)]))
        .collect();
    let bench = Bench::start(replies, true, &[]).await;
    let mut agent = bench.agent(ProviderKind::OpenAi);
    agent.step_limit = 3;
    let (result, _) = bench.turn(&agent, "loop").await;
    assert_eq!(result.stop_reason, StopReason::StepLimit);
    assert!(result.error.unwrap().contains("step limit"));
    assert_eq!(bench.model_requests().len(), 3);
}

#[tokio::test]
async fn unknown_tools_bad_arguments_and_tool_errors_reach_the_model_as_errors() {
    let bench = Bench::start(
        vec![
            tool_calls(vec![
                FakeToolCall::new("u", "no_such_tool", "{}"),
                FakeToolCall::new("j", "echo", "{not json"),
                FakeToolCall::new("s", "slow", r#"{"seconds": "many"}"#),
            ]),
            Reply::text("noted"),
        ],
        true,
        &[],
    )
    .await;
    let agent = bench.agent(ProviderKind::Anthropic);
    let (result, events) = bench.turn(&agent, "try").await;
    assert_eq!(result.text, "noted");
    let statuses: Vec<CallStatus> = finished(&events).iter().map(|f| f.1).collect();
    assert_eq!(statuses[0], CallStatus::Failed);
    assert_eq!(statuses[1], CallStatus::Failed);
    let texts = tool_result_texts(&bench.model_requests()[1]);
    assert!(texts[0].contains("no tool named"), "{texts:?}");
    assert!(texts[1].contains("not valid JSON"), "{texts:?}");
    let blocks = bench.model_requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .clone();
    assert_eq!(blocks[0]["is_error"], true);
    assert_eq!(blocks[1]["is_error"], true);
}

#[tokio::test]
async fn a_conversation_continues_with_its_history_and_thinking_goes_back_byte_for_byte() {
    let bench = Bench::start(
        vec![
            Reply::Reasoning {
                thinking: "The user greets me; greet back.".into(),
                text: "Hello!".into(),
            },
            Reply::text("You said hi."),
        ],
        true,
        &[],
    )
    .await;
    let agent = bench.agent(ProviderKind::Anthropic);
    bench.turn(&agent, "hi").await;
    let (result, _) = bench.turn(&agent, "what did I say?").await;
    assert_eq!(result.text, "You said hi.");
    let stored = bench.store.messages(&bench.conversation).unwrap();
    let reasoning = stored[1].parts[0].clone();
    assert_eq!(reasoning["type"], "reasoning");
    let signature = reasoning["signature"].as_str().unwrap();
    assert!(!signature.is_empty());

    let second = &bench.model_requests()[1];
    let messages = second.body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[0]["content"][0]["text"], "hi");
    let thinking = &messages[1]["content"][0];
    assert_eq!(thinking["type"], "thinking");
    assert_eq!(thinking["thinking"], "The user greets me; greet back.");
    assert_eq!(thinking["signature"], signature);
    assert_eq!(messages[1]["content"][1]["text"], "Hello!");
}

#[tokio::test]
async fn view_context_reaches_the_next_request_and_leaves_when_the_view_closes() {
    let bench = Bench::start(vec![Reply::text("one"), Reply::text("two")], true, &[]).await;
    let agent = bench.agent(ProviderKind::OpenAi);
    agent.context.update(
        "view-1",
        "test",
        "forecast",
        &json!({"content": [{"type": "text", "text": "The user selected Wednesday."}]}),
    );
    bench.turn(&agent, "first").await;
    agent.context.remove("view-1");
    bench.turn(&agent, "second").await;
    let requests = bench.model_requests();
    let system = |r: &RecordedRequest| {
        r.body["messages"][0]
            .clone()
            .as_object()
            .filter(|m| m["role"] == "system")
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
    };
    let first = system(&requests[0]).expect("a system message carries the view's context");
    assert!(first.contains("<view-context view=\"view-1\" server=\"test\" tool=\"forecast\">"));
    assert!(first.contains("The user selected Wednesday."));
    assert!(system(&requests[1]).is_none_or(|s| !s.contains("Wednesday")));
}

/// The view host of a window where every view renders.
struct EveryViewRenders;

impl ViewReports for EveryViewRenders {
    fn settle(&self, _: &str, _: &Value) -> BoxFuture<'static, ViewState> {
        async { ViewState::Rendered { description: None } }.boxed()
    }
}

impl Bench {
    /// A call the person runs from the tools panel, recorded in the bench's conversation.
    async fn person_runs(
        &self,
        call_id: &str,
        tool: &str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> (CallEnd, Vec<TurnEvent>) {
        let runner = ToolRunner {
            servers: self.servers.clone(),
            views: Arc::new(EveryViewRenders),
        };
        let recorder = Recorder::for_tool_run(self.store.clone(), self.conversation.clone()).unwrap();
        let events = Mutex::new(Vec::new());
        let token = cancel.clone();
        let sink = |event: &TurnEvent| {
            recorder.emit(event);
            events.lock().unwrap().push(event.clone());
            if matches!(event, TurnEvent::ToolCallRunning { .. }) && tool == "hang" {
                token.cancel();
            }
        };
        let end = runner.run_call(call_id, "test", tool, arguments, &sink, cancel).await;
        (end, events.into_inner().unwrap())
    }
}

/// The tools panel's Run: the call takes the agent loop's path without a model and without an
/// approval prompt, its view opens as for a model's call, progress arrives, and both facings
/// are reported and stored — the model-facing one exactly as a model would get it.
#[tokio::test]
async fn a_call_the_person_runs_has_a_models_call_events_and_both_facings() {
    let bench = Bench::start(vec![], true, &[]).await;

    let (end, events) = bench
        .person_runs("run-1", "forecast", json!({"city": "Bergen"}), CancellationToken::new())
        .await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            TurnEvent::ToolCallStarted { .. } => "started",
            TurnEvent::ViewAvailable { .. } => "view",
            TurnEvent::ToolCallRunning { .. } => "running",
            TurnEvent::ToolCallFinished { .. } => "finished",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        ["started", "view", "running", "finished"],
        "no approval: the person pressed Run"
    );
    let TurnEvent::ToolCallStarted {
        call_id,
        name,
        server,
        tool,
        arguments,
        ui_resource_uri,
    } = &events[0]
    else {
        unreachable!()
    };
    assert_eq!(call_id, "run-1");
    let model_name = bench.servers.statuses()[0]
        .tools
        .iter()
        .find(|t| t.name == "forecast")
        .unwrap()
        .model_name
        .clone();
    assert_eq!(
        name, &model_name,
        "named as a model would name it, so the view host finds it"
    );
    assert_eq!((server.as_deref(), tool.as_deref()), (Some("test"), Some("forecast")));
    assert_eq!(arguments, &json!({"city": "Bergen"}));
    assert_eq!(ui_resource_uri.as_deref(), Some("ui://test/forecast.html"));

    assert_eq!(end.status, CallStatus::Ok);
    let payload = &end.view["structuredContent"];
    assert_eq!(payload["city"], "Bergen");
    assert_eq!(
        end.view["_meta"]["generatedBy"], "porthole-test-server",
        "the view gets the whole result"
    );
    assert_eq!(end.model.content.len(), 2);
    let model_text: Value = serde_json::from_str(end.model.content[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        &model_text, payload,
        "the model-facing content is the server's, unchanged"
    );
    assert_eq!(
        end.model.content[1]["text"], VIEW_SHOWN_NOTE,
        "with the note a rendered view earns, as for a model's call"
    );
    assert_eq!(finished(&events)[0].2, serde_json::to_value(&end.model).unwrap());

    // Stored like any call, on an empty tool message of its own.
    let calls = bench.store.tool_calls(&bench.conversation).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].call_id, "run-1");
    assert_eq!(calls[0].status, ToolCallStatus::Ok);
    assert_eq!(
        calls[0].model_facing.as_ref().unwrap()["content"][1]["text"],
        VIEW_SHOWN_NOTE
    );
    assert_eq!(calls[0].view_facing.as_ref().unwrap()["structuredContent"], *payload);
    let messages = bench.store.messages(&bench.conversation).unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(
        (messages[0].id, messages[0].role),
        (calls[0].message_id, MessageRole::Tool)
    );
    assert_eq!(messages[0].parts, json!([]));

    // Progress reaches the events; the call is cancellable.
    let (end, events) = bench
        .person_runs("run-2", "slow", json!({"seconds": 0.4}), CancellationToken::new())
        .await;
    assert_eq!(end.status, CallStatus::Ok, "{end:?}");
    let progress: Vec<(f64, Option<f64>)> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ToolCallProgress {
                call_id,
                progress,
                total,
                ..
            } if call_id == "run-2" => Some((*progress, *total)),
            _ => None,
        })
        .collect();
    assert!(
        progress.len() >= 3,
        "progress notifications become events: {progress:?}"
    );
    assert_eq!(progress.last(), Some(&(4.0, Some(4.0))));

    let (end, _) = bench
        .person_runs("run-3", "hang", json!({}), CancellationToken::new())
        .await;
    assert_eq!(end.status, CallStatus::Cancelled);
    assert!(end.view.is_null());

    let (end, events) = bench
        .person_runs("run-4", "no_such_tool", json!({}), CancellationToken::new())
        .await;
    assert_eq!(end.status, CallStatus::Failed);
    assert!(!events.iter().any(|e| matches!(e, TurnEvent::ToolCallRunning { .. })));
    let statuses: Vec<ToolCallStatus> = bench
        .store
        .tool_calls(&bench.conversation)
        .unwrap()
        .iter()
        .map(|c| c.status)
        .collect();
    assert_eq!(
        statuses,
        [
            ToolCallStatus::Ok,
            ToolCallStatus::Ok,
            ToolCallStatus::Cancelled,
            ToolCallStatus::Failed
        ]
    );
}

/// A conversation may start with a person's run, and runs may come between turns: the model is
/// never given them as calls it made, and the history it gets keeps alternating.
#[tokio::test]
async fn a_call_the_person_ran_is_not_sent_to_the_model_as_its_own() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let bench = Bench::start(vec![Reply::text("one"), Reply::text("two")], true, &[]).await;
        let agent = bench.agent(kind);
        let run = |id: &'static str, text: &'static str| {
            bench.person_runs(id, "echo", json!({ "text": text }), CancellationToken::new())
        };
        run("run-1", "first run").await;
        bench.turn(&agent, "hello").await;
        run("run-2", "second run").await;
        run("run-3", "third run").await;
        let (result, _) = bench.turn(&agent, "again").await;
        assert_eq!(result.stop_reason, StopReason::EndTurn, "{kind}: {result:?}");

        let requests = bench.model_requests();
        let roles = |r: &RecordedRequest| -> Vec<String> {
            r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["role"].as_str().unwrap().to_string())
                .filter(|role| role != "system")
                .collect()
        };
        assert_eq!(roles(&requests[0]), ["user"], "{kind}");
        assert_eq!(roles(&requests[1]), ["user", "assistant", "user"], "{kind}");
        for request in &requests {
            let body = request.body.to_string();
            assert!(!body.contains("run-"), "{kind}: no call id of a run: {body}");
            for text in ["first run", "second run", "third run"] {
                assert!(!body.contains(text), "{kind}: no result of a run: {body}");
            }
            assert!(tool_result_texts(request).is_empty(), "{kind}");
        }
        // The runs stay in the store, in their place.
        let roles: Vec<&str> = bench
            .store
            .messages(&bench.conversation)
            .unwrap()
            .into_iter()
            .map(|m| m.role.as_str())
            .collect();
        assert_eq!(
            roles,
            ["tool", "user", "assistant", "tool", "tool", "user", "assistant"]
        );
        assert_eq!(bench.store.tool_calls(&bench.conversation).unwrap().len(), 3);
    }
}

/// A message sent while servers are still starting waits for them before the model is asked,
/// so the first request has their tools; a server that fails is named; and the person may send
/// without one that is still starting.
#[tokio::test(flavor = "multi_thread")]
async fn a_turn_waits_for_servers_still_starting_and_names_those_it_goes_without() {
    let fake = FakeLlm::start(Script::new(vec![Reply::text("one"), Reply::text("two")]))
        .await
        .unwrap();
    let slow = ServerConfig::stdio("slow", TEST_SERVER)
        .with_args(["--delay-ms", "2500"])
        .with_timeout(Duration::from_secs(20));
    let broken = ServerConfig::stdio("broken", "sh")
        .with_args(["-c", "sleep 1; echo 'no such module' >&2; exit 3"])
        .with_timeout(Duration::from_secs(20));
    let servers = Servers::start(vec![slow, broken], ConnectOptions::default());
    let provider = build(ProviderConfig {
        kind: ProviderKind::OpenAi,
        base_url: Some(fake.base_url()),
        api_key: None,
        retry: RetryPolicy::default(),
        max_tokens: None,
    });
    let agent = Agent::new(provider.clone(), "fake-model", servers.clone());
    let events = Mutex::new(Vec::new());
    let sink = |e: &TurnEvent| events.lock().unwrap().push(e.clone());
    let started = std::time::Instant::now();
    agent
        .run_turn(None, Vec::new(), Message::user("hi"), &sink, CancellationToken::new())
        .await;
    let waited = started.elapsed();
    let events = events.into_inner().unwrap();
    let kinds: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap()["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        &kinds[..4],
        ["turn_started", "user_message", "waiting_for_servers", "servers_waited"],
        "{kinds:?}"
    );
    let json = serde_json::to_value(&events[2]).unwrap();
    let mut waiting: Vec<&str> = json["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    waiting.sort();
    assert_eq!(waiting, ["broken", "slow"]);
    let missing = serde_json::to_value(&events[3]).unwrap()["missing"].clone();
    assert_eq!(missing.as_array().unwrap().len(), 1, "{missing}");
    assert_eq!(missing[0]["name"], "broken");
    assert!(missing[0]["reason"].as_str().unwrap().contains("status 3"), "{missing}");
    assert!(
        waited >= Duration::from_millis(2000),
        "waited for the slow one: {waited:?}"
    );
    // The first request has the slow server's tools.
    let first = fake.requests().into_iter().find(|r| r.method == "POST").unwrap();
    let names: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");

    // A server that would take a while: the person sends without it.
    let hanging = ServerConfig::stdio("hanging", TEST_SERVER)
        .with_args(["--delay-ms", "8000"])
        .with_timeout(Duration::from_secs(30));
    let servers = Servers::start(vec![hanging], ConnectOptions::default());
    let mut agent = Agent::new(provider, "fake-model", servers.clone());
    let skip = CancellationToken::new();
    agent.skip_wait = skip.clone();
    let events = Mutex::new(Vec::new());
    let sink = |e: &TurnEvent| {
        if matches!(e, TurnEvent::WaitingForServers { .. }) {
            skip.cancel();
        }
        events.lock().unwrap().push(e.clone());
    };
    let started = std::time::Instant::now();
    let result = agent
        .run_turn(
            None,
            Vec::new(),
            Message::user("again"),
            &sink,
            CancellationToken::new(),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(result.text, "two");
    let events = events.into_inner().unwrap();
    let missing = events
        .iter()
        .find_map(|e| match e {
            TurnEvent::ServersWaited { missing } => Some(missing.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(missing.len(), 1);
    assert_eq!(
        (missing[0].name.as_str(), missing[0].reason.as_str()),
        ("hanging", "still starting")
    );
    // Closing while it still starts does not wait for it.
    let closing = std::time::Instant::now();
    servers.shutdown().await;
    assert!(closing.elapsed() < Duration::from_secs(3), "{:?}", closing.elapsed());
}
