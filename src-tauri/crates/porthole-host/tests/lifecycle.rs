//! The view lifecycle and the turn lifecycle, with no window: a real [`Host`] over the profile's
//! own store, the demo MCP App server served in this process over Streamable HTTP, and the
//! scripted fake LLM. The test plays the window: it reads the events the host sends, answers
//! approvals, and plays each view's frame (`ui/initialize`, `initialized`, teardown answers).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use porthole_agent::Decision;
use porthole_agent::providers::ProviderKind;
use porthole_demo_server::DemoServer;
use porthole_fake_llm::{FakeLlm, Reply, Script};
use porthole_host::ports::{RecordingDesktop, RecordingOutbox};
use porthole_host::{ErrorCode, Host, HostOptions, MAIN_WINDOW, ModelFlags, Outbound, Setup};
use porthole_mcp::ServerState;
use porthole_mcp::test_support::serve_over_http;
use porthole_mcp::traffic::MessageKind;
use porthole_secrets::{MemorySecrets, SecretError, SecretStore};
use porthole_store::{MessageRole, ToolCallStatus, ViewState};
use serde_json::{Value, json};

/// How long any one thing the test waits for may take.
const PATIENCE: Duration = Duration::from_secs(10);

/// The SHA-256 of "abc", as lowercase hex.
const SHA256_ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

/// A running app and everything the test looks at.
struct App {
    host: Host,
    outbox: Arc<RecordingOutbox>,
    desktop: Arc<RecordingDesktop>,
    llm: FakeLlm,
    /// The frames the test plays for every view, when asked to (`play_frames`).
    frames: Option<tokio::task::JoinHandle<()>>,
    _profile: tempfile::TempDir,
}

impl Drop for App {
    fn drop(&mut self) {
        if let Some(frames) = self.frames.take() {
            frames.abort();
        }
    }
}

/// Starts the demo server, the fake LLM with `replies`, and a host on a new profile that has
/// the demo server (as `demo`) as its only server; returns once the server is connected.
async fn start(replies: Vec<Reply>) -> App {
    start_with(Script::new(replies)).await
}

/// [`start`] with the fake LLM following `script` (a pause between chunks, say).
async fn start_with(script: Script) -> App {
    let url = serve_over_http(DemoServer::new).await;
    let llm = FakeLlm::start(script).await.unwrap();
    let profile = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"demo": {"url": url}}});
    std::fs::write(profile.path().join("config.json"), config.to_string()).unwrap();
    let outbox = Arc::new(RecordingOutbox::default());
    let desktop = Arc::new(RecordingDesktop::default());
    let host = Host::start(
        HostOptions::for_profile(profile.path(), ModelFlags::openai_compatible(llm.base_url(), "m")).unwrap(),
        outbox.clone(),
        desktop.clone(),
        tokio::runtime::Handle::current(),
    );
    let statuses = tokio::time::timeout(PATIENCE, host.servers().settled())
        .await
        .expect("the demo server settles");
    let demo = statuses
        .iter()
        .find(|s| s.name == "demo")
        .expect("the demo server is listed");
    assert_eq!(demo.state, ServerState::Connected, "{demo:?}");
    assert!(demo.mcp_apps, "MCP Apps is on for the demo server");
    App {
        host,
        outbox,
        desktop,
        llm,
        frames: None,
        _profile: profile,
    }
}

impl App {
    /// Waits (bounded) until `look` finds something; on timeout, fails showing every event sent.
    async fn wait_for<T>(&self, what: &str, mut look: impl FnMut(&App) -> Option<T>) -> T {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(found) = look(self) {
                return found;
            }
            if Instant::now() > deadline {
                let sent: Vec<Value> = self
                    .outbox
                    .sent()
                    .iter()
                    .map(|(window, event)| json!({"window": window, "event": event}))
                    .collect();
                panic!(
                    "timed out waiting for {what}; events sent:\n{}",
                    serde_json::to_string_pretty(&sent).unwrap()
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The turn events of a conversation, as the window gets them (`type` and camelCase fields).
    fn chat(&self, conversation_id: &str) -> Vec<Value> {
        self.outbox
            .chat_events()
            .into_iter()
            .filter(|e| e.conversation_id == conversation_id)
            .map(|e| serde_json::to_value(&e.event).unwrap())
            .collect()
    }

    /// The chat events of a conversation of one `type`.
    fn chat_of(&self, conversation_id: &str, kind: &str) -> Vec<Value> {
        self.chat(conversation_id)
            .into_iter()
            .filter(|e| e["type"] == kind)
            .collect()
    }

    /// The view events sent to `window`, as JSON.
    fn views(&self, window: &str) -> Vec<Value> {
        self.outbox
            .view_events(window)
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect()
    }

    /// The JSON-RPC messages posted into a view's frame, in order.
    fn frame_messages(&self, window: &str, view_id: &str) -> Vec<Value> {
        self.views(window)
            .into_iter()
            .filter(|e| e["type"] == "message" && e["viewId"] == view_id)
            .map(|e| e["message"].clone())
            .collect()
    }

    /// The methods of the notifications posted into a view's frame, in order.
    fn frame_methods(&self, window: &str, view_id: &str) -> Vec<String> {
        self.frame_messages(window, view_id)
            .iter()
            .filter_map(|m| m["method"].as_str().map(String::from))
            .collect()
    }

    /// Waits for the `n`th (from 1) end of a turn in the conversation; returns its `done` event.
    async fn turn_end(&self, conversation_id: &str, n: usize) -> Value {
        self.wait_for(&format!("turn {n} of {conversation_id} to end"), |app| {
            app.chat_of(conversation_id, "done").get(n - 1).cloned()
        })
        .await
    }

    /// Waits until no turn holds the conversation any more.
    async fn idle(&self, conversation_id: &str) {
        self.wait_for("the conversation to be free", |app| {
            (!app.host.open_conversation(conversation_id).unwrap().running).then_some(())
        })
        .await
    }

    /// Waits for the tool call to ask for approval; returns its event.
    async fn approval_asked(&self, conversation_id: &str, call_id: &str) -> Value {
        self.wait_for(&format!("approval of {call_id}"), |app| {
            app.chat_of(conversation_id, "approval_requested")
                .into_iter()
                .find(|e| e["callId"] == call_id)
        })
        .await
    }

    /// Waits for a view of the call to be opened in `window`, other than those in `seen`;
    /// returns its view id.
    async fn opened(&self, window: &str, call_id: &str, seen: &[&str]) -> String {
        self.wait_for(&format!("a view of {call_id} to open in {window}"), |app| {
            app.views(window)
                .into_iter()
                .filter(|e| e["type"] == "opened" && e["callId"] == call_id)
                .filter_map(|e| e["viewId"].as_str().map(String::from))
                .find(|id| !seen.contains(&id.as_str()))
        })
        .await
    }

    /// Waits for the host's answer to the view's `ui/initialize` (the frames being played).
    async fn initialize_answer(&self, window: &str, view_id: &str) -> Value {
        self.wait_for(&format!("view {view_id} to be initialized"), |app| {
            app.frame_messages(window, view_id)
                .into_iter()
                .find(|m| m["result"]["hostInfo"].is_object())
        })
        .await
    }

    /// Waits until the frame of a view has been posted a notification `method`; returns its
    /// params.
    async fn frame_told(&self, window: &str, view_id: &str, method: &str) -> Value {
        self.wait_for(&format!("{method} to reach view {view_id} in {window}"), |app| {
            app.frame_messages(window, view_id)
                .into_iter()
                .find(|m| m["method"] == method)
                .map(|m| m["params"].clone())
        })
        .await
    }

    /// Plays every view's frame from now on, in whichever window it opens: each view is
    /// initialized, and each `ui/resource-teardown` is answered.
    fn play_frames(&mut self) {
        let host = self.host.clone();
        let outbox = self.outbox.clone();
        self.frames = Some(tokio::spawn(async move {
            let mut initialized = HashSet::new();
            let mut answered = HashSet::new();
            loop {
                for (window, event) in outbox.sent() {
                    let Outbound::View(event) = event else { continue };
                    let event = serde_json::to_value(&event).unwrap();
                    let Some(view_id) = event["viewId"].as_str() else {
                        continue;
                    };
                    if event["type"] == "opened" && initialized.insert(view_id.to_string()) {
                        let _ = host.view_message(&window, view_id, initialize_request());
                        let _ = host.view_message(&window, view_id, initialized_notification());
                    }
                    let message = &event["message"];
                    if event["type"] == "message"
                        && message["method"] == "ui/resource-teardown"
                        && answered.insert((view_id.to_string(), message["id"].to_string()))
                    {
                        let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {}});
                        let _ = host.view_message(&window, view_id, answer);
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }

    /// The bodies of the model requests the fake LLM got (its chat completions).
    fn model_requests(&self) -> Vec<Value> {
        self.llm
            .requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
            .map(|r| r.body)
            .collect()
    }

    /// Runs a turn in the conversation whose one tool call (`call_id`, `system_monitor`) is
    /// allowed once, and waits for its end (the `n`th turn). The frames must be played.
    async fn monitor_turn(&self, conversation_id: Option<String>, call_id: &str, n: usize) -> String {
        let id = self
            .host
            .send_message(conversation_id, "show the system monitor")
            .unwrap();
        self.approval_asked(&id, call_id).await;
        self.host.answer_approval(call_id, Decision::AllowOnce).unwrap();
        let done = self.turn_end(&id, n).await;
        assert_eq!(done["stopReason"], "end_turn", "{done}");
        id
    }
}

fn initialize_request() -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "ui/initialize",
        "params": {"protocolVersion": "2026-01-26"}
    })
}

fn initialized_notification() -> Value {
    json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}})
}

/// Every string anywhere in `value`.
fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        Value::Object(map) => map.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

/// Whether any string in `value` contains `needle`.
fn mentions(value: &Value, needle: &str) -> bool {
    strings(value).iter().any(|s| s.contains(needle))
}

/// The text of a tool result's first content block.
fn first_text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_call_shows_its_view_and_the_model_gets_the_result() {
    let app = start(vec![
        Reply::tool_call("call_1", "system_monitor", "{}"),
        Reply::text("The monitor is up."),
    ])
    .await;
    let host = &app.host;
    let id = host.send_message(None, "show the system monitor").unwrap();

    let asked = app.approval_asked(&id, "call_1").await;
    assert_eq!(asked["server"], "demo");
    assert_eq!(asked["tool"], "system_monitor");
    host.answer_approval("call_1", Decision::AllowOnce).unwrap();
    app.wait_for("the call to run", |app| {
        (!app.chat_of(&id, "tool_call_running").is_empty()).then_some(())
    })
    .await;

    // The view opens while the call runs; the turn waits for it to start. The call returns
    // meanwhile, and the view is still told nothing of it.
    let view_id = app.opened(MAIN_WINDOW, "call_1", &[]).await;
    app.wait_for("the server to answer tools/call", |app| {
        let traffic = app.host.server_traffic("demo", 0).unwrap();
        traffic
            .iter()
            .any(|e| e.method.as_deref() == Some("tools/call") && e.kind == MessageKind::Response)
            .then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(app.chat_of(&id, "done").is_empty(), "the turn waits for the view");
    let early = app.frame_methods(MAIN_WINDOW, &view_id);
    assert!(
        early.iter().all(|m| !m.starts_with("ui/notifications/tool-")),
        "nothing about the call reaches a view before it is initialized: {early:?}"
    );

    // The frame starts: the bridge answers `ui/initialize`, and still says nothing of the call.
    host.view_message(MAIN_WINDOW, &view_id, initialize_request()).unwrap();
    let answer = app
        .wait_for("the answer to ui/initialize", |app| {
            app.frame_messages(MAIN_WINDOW, &view_id)
                .into_iter()
                .find(|m| m["id"] == 1)
        })
        .await;
    assert_eq!(answer["result"]["protocolVersion"], "2026-01-26", "{answer}");
    assert_eq!(answer["result"]["hostInfo"]["name"], "Porthole", "{answer}");
    let before_initialized = app.frame_methods(MAIN_WINDOW, &view_id);
    assert!(
        before_initialized
            .iter()
            .all(|m| !m.starts_with("ui/notifications/tool-")),
        "{before_initialized:?}"
    );
    host.view_message(MAIN_WINDOW, &view_id, initialized_notification())
        .unwrap();

    // Then it is told the input, then the full result.
    let result = app
        .frame_told(MAIN_WINDOW, &view_id, "ui/notifications/tool-result")
        .await;
    let methods = app.frame_methods(MAIN_WINDOW, &view_id);
    let input_at = methods.iter().position(|m| m == "ui/notifications/tool-input");
    let result_at = methods.iter().position(|m| m == "ui/notifications/tool-result");
    assert!(input_at.is_some() && input_at < result_at, "{methods:?}");
    assert!(
        result["structuredContent"].is_object(),
        "the view gets the full result: {result}"
    );
    let summary = first_text(&result);
    assert!(!summary.is_empty(), "{result}");
    // The view is told its result before the card hears the call ended: the window delivers
    // the view's message first instead of after re-rendering the transcript.
    app.wait_for("the card to hear the call ended", |app| {
        (!app.chat_of(&id, "tool_call_finished").is_empty()).then_some(())
    })
    .await;
    let sent: Vec<Value> = app
        .outbox
        .sent()
        .into_iter()
        .map(|(_, event)| serde_json::to_value(&event).unwrap())
        .collect();
    let told_view = sent
        .iter()
        .position(|e| e["viewId"] == view_id.as_str() && e["message"]["method"] == "ui/notifications/tool-result");
    let told_card = sent
        .iter()
        .position(|e| e["event"]["type"] == "tool_call_finished" && e["event"]["callId"] == "call_1");
    assert!(
        told_view.is_some() && told_card.is_some() && told_view < told_card,
        "view told at {told_view:?}, card at {told_card:?}"
    );
    // A view that started after its call returned gets the input and the result one after the
    // other, as soon as it has initialized, and only then does the card hear it is ready (the
    // window's re-render for that would otherwise hold the result back).
    let to_view: Vec<String> = sent
        .iter()
        .filter(|e| e["viewId"] == view_id.as_str())
        .filter_map(|e| match e["type"].as_str() {
            Some("state") => e["state"].as_str().map(|s| format!("state {s}")),
            _ => e["message"]["method"].as_str().map(str::to_string),
        })
        .filter(|m| m.starts_with("state") || m.starts_with("ui/notifications/tool-"))
        .collect();
    assert_eq!(
        to_view,
        [
            "state loading",
            "ui/notifications/tool-input",
            "ui/notifications/tool-result",
            "state ready"
        ],
        "what the window heard of the view, in order"
    );

    let done = app.turn_end(&id, 1).await;
    assert_eq!(done["stopReason"], "end_turn", "{done}");
    assert_eq!(done["text"], "The monitor is up.");

    // The model's second request carries what the tool said.
    let requests = app.model_requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let tool_messages: Vec<&Value> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert!(
        tool_messages.iter().any(|m| mentions(m, &summary)),
        "the model gets the tool's content {summary:?}: {tool_messages:?}"
    );

    // The store has the call, ended well, with both facings, and its view, ready.
    let store = host.store().unwrap();
    let calls = store.tool_calls(&id).unwrap();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].call_id, "call_1");
    assert_eq!(calls[0].status, ToolCallStatus::Ok);
    assert!(
        calls[0]
            .view_facing
            .as_ref()
            .is_some_and(|v| v["structuredContent"].is_object())
    );
    assert!(calls[0].model_facing.as_ref().is_some_and(|m| mentions(m, &summary)));
    let views = store.views(&id).unwrap();
    assert_eq!(views.len(), 1, "{views:?}");
    assert_eq!(views[0].state, ViewState::Ready);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_call_cancels_its_view_and_an_always_allowed_tool_is_not_asked_again() {
    let mut app = start(vec![
        Reply::tool_call("c1", "system_monitor", "{}"),
        Reply::EchoToolResults,
        Reply::tool_call("c2", "system_monitor", "{}"),
        Reply::text("allowed"),
        Reply::tool_call("c3", "system_monitor", "{}"),
        Reply::text("not asked"),
    ])
    .await;
    app.play_frames();
    let host = app.host.clone();

    // Denied: the view is told the call was cancelled, and the model that it was denied.
    let id = host.send_message(None, "show the system monitor").unwrap();
    app.approval_asked(&id, "c1").await;
    host.answer_approval("c1", Decision::Deny).unwrap();
    let done = app.turn_end(&id, 1).await;
    assert!(
        mentions(&done["text"], "denied"),
        "the model hears of the denial: {done}"
    );
    let denied_view = app.opened(MAIN_WINDOW, "c1", &[]).await;
    let cancelled = app
        .frame_told(MAIN_WINDOW, &denied_view, "ui/notifications/tool-cancelled")
        .await;
    assert!(mentions(&cancelled, "denied"), "{cancelled}");
    assert!(
        !app.frame_methods(MAIN_WINDOW, &denied_view)
            .contains(&"ui/notifications/tool-result".to_string())
    );
    let requests = app.model_requests();
    assert!(mentions(&requests[1]["messages"], "denied"), "{}", requests[1]);
    let calls = host.store().unwrap().tool_calls(&id).unwrap();
    assert_eq!(calls[0].status, ToolCallStatus::Denied);

    // Allowed always: asked once, then remembered for the next turn.
    app.idle(&id).await;
    host.send_message(Some(id.clone()), "again").unwrap();
    app.approval_asked(&id, "c2").await;
    host.answer_approval("c2", Decision::AllowAlways).unwrap();
    assert_eq!(app.turn_end(&id, 2).await["text"], "allowed");
    app.idle(&id).await;
    host.send_message(Some(id.clone()), "and again").unwrap();
    let done = app.turn_end(&id, 3).await;
    assert_eq!(done["text"], "not asked", "{done}");
    let asked: Vec<Value> = app.chat_of(&id, "approval_requested");
    assert!(asked.iter().all(|e| e["callId"] != "c3"), "c3 was asked: {asked:?}");
    let calls = host.store().unwrap().tool_calls(&id).unwrap();
    let c3 = calls.iter().find(|c| c.call_id == "c3").unwrap();
    assert_eq!(c3.status, ToolCallStatus::Ok);
}

/// A view of a call waiting for approval learns nothing of the call's arguments: no
/// `tool-input-partial`, no `tool-input`. Denied, it is told only that the call was cancelled;
/// approved, it gets the complete input, then the result. A tool that needs no approval
/// streams its partial input as before.
#[tokio::test(flavor = "multi_thread")]
async fn approval_gates_what_a_view_learns_of_the_call() {
    const SECRET: &str = "private-place-4711";
    let arguments = json!({"latitude": 52.52, "longitude": 13.41, "place": SECRET}).to_string();
    // Chunks 150 ms apart: the view opens on the first fragment of the arguments and is
    // initialized before the next, which it would be told of if it were allowed to.
    let mut app = start_with(Script {
        chunk_delay_ms: 150,
        ..Script::new(vec![
            Reply::tool_call("c1", "weather", arguments.clone()),
            Reply::text("denied"),
            Reply::tool_call("c2", "weather", arguments.clone()),
            Reply::text("allowed"),
            Reply::tool_call("c3", "weather", arguments.clone()),
            Reply::text("not asked"),
        ])
    })
    .await;
    app.play_frames();
    let host = app.host.clone();
    let mentions_secret = |messages: &[Value]| messages.iter().any(|m| mentions(m, SECRET));

    // Waiting: the view is open and initialized, and has heard nothing of the call.
    let id = host.send_message(None, "the weather, please").unwrap();
    app.approval_asked(&id, "c1").await;
    let view = app.opened(MAIN_WINDOW, "c1", &[]).await;
    let initialized = app.initialize_answer(MAIN_WINDOW, &view).await;
    // It is told what it was granted: the origin its resource declared, and no device.
    assert_eq!(
        initialized["result"]["hostCapabilities"]["sandbox"],
        json!({"permissions": {}, "csp": {"connectDomains": ["https://api.open-meteo.com"]}}),
        "{initialized}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let waiting = app.frame_messages(MAIN_WINDOW, &view);
    assert!(
        !app.frame_methods(MAIN_WINDOW, &view)
            .iter()
            .any(|m| m.starts_with("ui/notifications/tool-input")),
        "{waiting:?}"
    );
    assert!(
        !mentions_secret(&waiting),
        "the arguments reached the view: {waiting:?}"
    );

    // Denied: tool-cancelled, and nothing else about the call, ever.
    host.answer_approval("c1", Decision::Deny).unwrap();
    app.turn_end(&id, 1).await;
    app.frame_told(MAIN_WINDOW, &view, "ui/notifications/tool-cancelled")
        .await;
    let told: Vec<String> = app
        .frame_methods(MAIN_WINDOW, &view)
        .into_iter()
        .filter(|m| m.starts_with("ui/notifications/tool-"))
        .collect();
    assert_eq!(told, ["ui/notifications/tool-cancelled"]);
    assert!(!mentions_secret(&app.frame_messages(MAIN_WINDOW, &view)));

    // Approved: the complete input once, then the result.
    app.idle(&id).await;
    host.send_message(Some(id.clone()), "again").unwrap();
    app.approval_asked(&id, "c2").await;
    let view = app.opened(MAIN_WINDOW, "c2", &[]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!mentions_secret(&app.frame_messages(MAIN_WINDOW, &view)));
    host.answer_approval("c2", Decision::AllowAlways).unwrap();
    let input = app.frame_told(MAIN_WINDOW, &view, "ui/notifications/tool-input").await;
    assert_eq!(input["arguments"]["place"], SECRET, "{input}");
    app.frame_told(MAIN_WINDOW, &view, "ui/notifications/tool-result").await;
    let told: Vec<String> = app
        .frame_methods(MAIN_WINDOW, &view)
        .into_iter()
        .filter(|m| m.starts_with("ui/notifications/tool-"))
        .collect();
    assert_eq!(told, ["ui/notifications/tool-input", "ui/notifications/tool-result"]);
    assert_eq!(app.turn_end(&id, 2).await["text"], "allowed");

    // Always allowed now: not asked, and the view sees the input stream in as before.
    app.idle(&id).await;
    host.send_message(Some(id.clone()), "and again").unwrap();
    assert_eq!(app.turn_end(&id, 3).await["text"], "not asked");
    let view = app.opened(MAIN_WINDOW, "c3", &[]).await;
    app.frame_told(MAIN_WINDOW, &view, "ui/notifications/tool-result").await;
    let methods = app.frame_methods(MAIN_WINDOW, &view);
    let partial_at = methods.iter().position(|m| m == "ui/notifications/tool-input-partial");
    let input_at = methods.iter().position(|m| m == "ui/notifications/tool-input");
    assert!(
        partial_at.is_some() && partial_at < input_at,
        "partial input, then the complete input: {methods:?}"
    );
}

/// The settings' origin lists apply over what every view declares: invalid entries are refused
/// with the line, a blocked origin is taken from the view's CSP (audited as csp-dropped, gone
/// from what the card says it may contact and from what the view is told it was granted).
#[tokio::test(flavor = "multi_thread")]
async fn the_settings_block_list_takes_an_origin_from_every_view() {
    let mut app = start(vec![
        Reply::tool_call(
            "c1",
            "weather",
            json!({"latitude": 48.85, "longitude": 2.35, "place": "Paris"}).to_string(),
        ),
        Reply::text("done"),
    ])
    .await;
    app.play_frames();
    let host = app.host.clone();
    let save = |request: Value| host.save_general_settings(&serde_json::from_value(request).unwrap());
    let refused = save(json!({"viewOriginsBlocked": ["https://ok.example", "http://api.open-meteo.com"]})).unwrap_err();
    assert_eq!(refused.code, ErrorCode::Invalid);
    assert!(
        refused.message.contains("line 2") && refused.message.contains("http://"),
        "{refused:?}"
    );
    let stored = save(
        json!({"viewOriginsBlocked": ["https://api.open-meteo.com"], "clientMetadataUrl": "https://me.example/c.json"}),
    )
    .unwrap();
    assert_eq!(stored.view_origins_blocked, ["https://api.open-meteo.com"]);
    assert_eq!(stored.client_metadata_url.as_deref(), Some("https://me.example/c.json"));
    assert!(save(json!({"clientMetadataUrl": "http://me.example/c.json"})).is_err());

    let id = host.send_message(None, "the weather in Paris").unwrap();
    app.approval_asked(&id, "c1").await;
    host.answer_approval("c1", Decision::AllowOnce).unwrap();
    let view = app.opened(MAIN_WINDOW, "c1", &[]).await;
    let opened = app
        .views(MAIN_WINDOW)
        .into_iter()
        .find(|e| e["type"] == "opened" && e["viewId"] == view)
        .unwrap();
    assert_eq!(opened["reaches"], json!([]), "{opened}");
    assert!(
        mentions(&opened["cspDropped"], "https://api.open-meteo.com") && mentions(&opened["cspDropped"], "block list"),
        "{opened}"
    );
    let initialized = app.initialize_answer(MAIN_WINDOW, &view).await;
    assert_eq!(initialized["result"]["hostCapabilities"]["sandbox"]["csp"], json!({}));
    // It asks for no device, so none is offered, none can be allowed, and the engine's device
    // prompt is refused.
    assert_eq!(opened["allow"], "", "{opened}");
    assert_eq!(opened["devicesAsked"], json!([]), "{opened}");
    assert_eq!(
        initialized["result"]["hostCapabilities"]["sandbox"]["permissions"],
        json!({})
    );
    let none = host.allow_view_devices(MAIN_WINDOW, &view).await.unwrap_err();
    assert_eq!(none.code, ErrorCode::Invalid, "{none:?}");
    assert!(!host.device_request("camera") && !host.device_request("microphone"));
    let audit = host.store().unwrap().audit_entries(100).unwrap();
    assert!(
        audit.iter().any(|e| e.kind == porthole_store::AuditKind::CspDropped
            && e.detail["entry"] == "https://api.open-meteo.com"
            && mentions(&e.detail["reason"], "block list")),
        "{audit:?}"
    );
    let served = audit
        .iter()
        .find(|e| e.kind == porthole_store::AuditKind::View)
        .unwrap();
    assert!(
        served.detail["csp"].as_str().unwrap().contains("connect-src 'none'"),
        "{}",
        served.detail
    );
}

/// A live view hears when its server's resources change (here: the server is connected anew).
#[tokio::test(flavor = "multi_thread")]
async fn a_live_view_hears_that_its_servers_resources_changed() {
    let mut app = start(vec![
        Reply::tool_call("c1", "system_monitor", "{}"),
        Reply::text("done"),
    ])
    .await;
    app.play_frames();
    let host = app.host.clone();
    let id = host.send_message(None, "show the system monitor").unwrap();
    app.approval_asked(&id, "c1").await;
    host.answer_approval("c1", Decision::AllowOnce).unwrap();
    let view = app.opened(MAIN_WINDOW, "c1", &[]).await;
    app.frame_told(MAIN_WINDOW, &view, "ui/notifications/tool-result").await;
    let initialized = app.initialize_answer(MAIN_WINDOW, &view).await;
    assert_eq!(
        initialized["result"]["hostCapabilities"]["serverResources"],
        json!({"listChanged": true})
    );
    assert!(
        !app.frame_methods(MAIN_WINDOW, &view)
            .iter()
            .any(|m| m.contains("list_changed"))
    );
    // The demo server's settings change: it is connected anew, and what it serves may differ.
    let url = host.servers().statuses()[0].endpoint.clone();
    let config = porthole_mcp::ServerConfig::http("demo", &url).with_timeout(Duration::from_secs(29));
    host.servers().reconfigure(vec![config], true).await;
    app.frame_told(MAIN_WINDOW, &view, "notifications/resources/list_changed")
        .await;
    assert!(
        !app.frame_methods(MAIN_WINDOW, &view)
            .contains(&"notifications/tools/list_changed".to_string()),
        "its tools did not change"
    );
}

/// A view that declares tools of its own offers them to the model while it is shown: listed
/// when it starts, named after its server, called through the view (a read-only one without
/// asking, another after approval), and gone with the view.
#[tokio::test(flavor = "multi_thread")]
async fn a_views_own_tools_are_offered_to_the_model_while_it_is_shown() {
    let app = start(vec![
        Reply::tool_call("c1", "system_monitor", "{}"),
        Reply::text("The monitor is up."),
        Reply::tool_call("c2", "demo_view__pick_color", "{}"),
        Reply::EchoToolResults,
        Reply::tool_call("c3", "demo_view__erase", json!({"all": true}).to_string()),
        Reply::EchoToolResults,
        Reply::tool_call("c4", "demo_view__pick_color", "{}"),
        Reply::EchoToolResults,
    ])
    .await;
    let host = app.host.clone();
    // Answers the `nth` (from 1) request with `method` the host sends the view, with `result`.
    let answer = |method: &'static str, nth: usize, result: Value, view: String| {
        let app = &app;
        async move {
            let request = app
                .wait_for(&format!("{method} #{nth} sent to the view"), |app| {
                    app.frame_messages(MAIN_WINDOW, &view)
                        .into_iter()
                        .filter(|m| m["method"] == method && m.get("id").is_some())
                        .nth(nth - 1)
                })
                .await;
            let reply = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
            app.host.view_message(MAIN_WINDOW, &view, reply).unwrap();
            request
        }
    };

    let id = host.send_message(None, "show the system monitor").unwrap();
    app.approval_asked(&id, "c1").await;
    host.answer_approval("c1", Decision::AllowOnce).unwrap();
    let view = app.opened(MAIN_WINDOW, "c1", &[]).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
        "params": {"protocolVersion": "2026-01-26", "appCapabilities": {"tools": {"listChanged": true}}}});
    host.view_message(MAIN_WINDOW, &view, initialize).unwrap();
    host.view_message(MAIN_WINDOW, &view, initialized_notification())
        .unwrap();
    let tools = json!({"tools": [
        {"name": "pick_color", "description": "The colour picked in the view.", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": true}},
        {"name": "erase", "description": "Erases the drawing.", "inputSchema": {"type": "object"}},
        {"name": "", "inputSchema": {"type": "object"}},
    ]});
    answer("tools/list", 1, tools, view.clone()).await;
    assert_eq!(app.turn_end(&id, 1).await["text"], "The monitor is up.");
    let requests = app.model_requests();
    assert!(
        !mentions(&requests[0]["tools"], "demo_view__"),
        "no view yet: {}",
        requests[0]["tools"]
    );

    // Offered from the next turn on; a read-only one runs without asking, through the view.
    app.idle(&id).await;
    host.send_message(Some(id.clone()), "which colour?").unwrap();
    let call = answer(
        "tools/call",
        1,
        json!({"content": [{"type": "text", "text": "crimson"}]}),
        view.clone(),
    )
    .await;
    assert_eq!(call["params"], json!({"name": "pick_color", "arguments": {}}));
    let done = app.turn_end(&id, 2).await;
    assert!(mentions(&done["text"], "crimson"), "{done}");
    let requests = app.model_requests();
    let offered = &requests[2]["tools"];
    assert!(
        mentions(offered, "demo_view__pick_color") && mentions(offered, "demo_view__erase"),
        "{offered}"
    );
    assert!(
        mentions(offered, "system_monitor view"),
        "attributed to the view: {offered}"
    );
    let asked: Vec<Value> = app.chat_of(&id, "approval_requested");
    assert!(asked.iter().all(|e| e["callId"] != "c2"), "{asked:?}");
    let started = app
        .chat_of(&id, "tool_call_started")
        .into_iter()
        .find(|e| e["callId"] == "c2")
        .unwrap();
    assert_eq!(started["server"], "demo's system_monitor view", "{started}");

    // Another is asked about first.
    app.idle(&id).await;
    host.send_message(Some(id.clone()), "erase it").unwrap();
    let asked = app.approval_asked(&id, "c3").await;
    assert_eq!(asked["tool"], "erase");
    host.answer_approval("c3", Decision::AllowOnce).unwrap();
    let call = answer(
        "tools/call",
        2,
        json!({"content": [{"type": "text", "text": "erased"}]}),
        view.clone(),
    )
    .await;
    assert_eq!(call["params"]["arguments"], json!({"all": true}));
    assert!(mentions(&app.turn_end(&id, 3).await["text"], "erased"));

    // The view closes: its tools go with it, and a call of one fails.
    host.close_view(MAIN_WINDOW, &view).await.unwrap();
    app.idle(&id).await;
    host.send_message(Some(id.clone()), "again").unwrap();
    let done = app.turn_end(&id, 4).await;
    assert!(mentions(&done["text"], "no tool named"), "{done}");
    let requests = app.model_requests();
    assert!(!mentions(&requests.last().unwrap()["tools"], "demo_view__"));
}

/// A view may ask the model something (`sampling/createMessage`) only after the person saw the
/// whole prompt and approved it; declined, the view gets an error and the model nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_views_sampling_request_reaches_the_model_only_once_approved() {
    let mut app = start(vec![
        Reply::tool_call("c1", "system_monitor", "{}"),
        Reply::text("The monitor is up."),
        Reply::text("Sampled: the CPU is fine."),
    ])
    .await;
    app.play_frames();
    let host = app.host.clone();
    let id = host.send_message(None, "show the system monitor").unwrap();
    app.approval_asked(&id, "c1").await;
    host.answer_approval("c1", Decision::AllowOnce).unwrap();
    let view = app.opened(MAIN_WINDOW, "c1", &[]).await;
    let initialized = app.initialize_answer(MAIN_WINDOW, &view).await;
    assert_eq!(
        initialized["result"]["hostCapabilities"]["sampling"],
        json!({}),
        "a model is set up"
    );
    app.turn_end(&id, 1).await;

    let ask = |request_id: i64, text: &str| {
        json!({"jsonrpc": "2.0", "id": request_id, "method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            "systemPrompt": "Answer in one line.", "maxTokens": 100}})
    };
    let sampling_requests = |app: &App| -> Vec<Value> {
        app.views(MAIN_WINDOW)
            .into_iter()
            .filter(|e| e["type"] == "sampling_request")
            .collect()
    };
    // Declined: the view gets an error, the model nothing.
    host.view_message(MAIN_WINDOW, &view, ask(41, "Is the CPU busy?"))
        .unwrap();
    let asked = app
        .wait_for("the person to be asked", |app| sampling_requests(app).first().cloned())
        .await;
    assert_eq!(
        asked["messages"],
        json!([{"role": "user", "text": "Is the CPU busy?"}]),
        "{asked}"
    );
    assert_eq!(asked["systemPrompt"], "Answer in one line.");
    assert_eq!(asked["server"], "demo");
    let before = app.model_requests().len();
    host.answer_sampling(asked["requestId"].as_u64().unwrap(), false)
        .unwrap();
    let answer = app
        .wait_for("the view's answer", |app| {
            app.frame_messages(MAIN_WINDOW, &view)
                .into_iter()
                .find(|m| m["id"] == 41)
        })
        .await;
    assert!(mentions(&answer["error"], "declined"), "{answer}");
    assert_eq!(app.model_requests().len(), before, "the model was asked nothing");

    // Approved: the model gets the prompt, the view its answer.
    host.view_message(MAIN_WINDOW, &view, ask(42, "How is the CPU?"))
        .unwrap();
    let asked = app
        .wait_for("the second question", |app| sampling_requests(app).get(1).cloned())
        .await;
    host.answer_sampling(asked["requestId"].as_u64().unwrap(), true)
        .unwrap();
    let answer = app
        .wait_for("the view's answer", |app| {
            app.frame_messages(MAIN_WINDOW, &view)
                .into_iter()
                .find(|m| m["id"] == 42)
        })
        .await;
    assert_eq!(answer["result"]["role"], "assistant", "{answer}");
    assert_eq!(answer["result"]["content"]["text"], "Sampled: the CPU is fine.");
    assert_eq!(answer["result"]["model"], "m");
    let sent = app.model_requests().last().cloned().unwrap();
    assert!(mentions(&sent["messages"], "How is the CPU?"), "{sent}");
    assert!(
        mentions(&sent["messages"], "Answer in one line."),
        "the system prompt goes too: {sent}"
    );
    assert!(
        sent.get("tools").is_none_or(|t| t.as_array().is_none_or(Vec::is_empty)),
        "no tools: {sent}"
    );
    // An answer no request waits for is refused.
    assert_eq!(host.answer_sampling(999, true).unwrap_err().code, ErrorCode::NotFound);
    let audit = host.store().unwrap().audit_entries(100).unwrap();
    let sampled: Vec<&Value> = audit
        .iter()
        .filter(|e| e.kind == porthole_store::AuditKind::Other("sampling".into()))
        .map(|e| &e.detail["outcome"])
        .collect();
    assert_eq!(sampled.len(), 2, "{audit:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_turn_frees_its_conversation_and_a_running_one_refuses_a_second_message() {
    let mut app = start(vec![
        Reply::tool_call("c1", "system_monitor", "{}"),
        Reply::text("after the stop"),
    ])
    .await;
    app.play_frames();
    let host = app.host.clone();
    let id = host.send_message(None, "show the system monitor").unwrap();
    app.approval_asked(&id, "c1").await;

    let refused = host.send_message(Some(id.clone()), "hurry up").unwrap_err();
    assert_eq!(refused.code, ErrorCode::Busy, "{refused:?}");

    assert!(host.stop_turn(&id));
    let done = app.turn_end(&id, 1).await;
    assert_eq!(done["stopReason"], "cancelled", "{done}");
    let finished = app.chat_of(&id, "tool_call_finished");
    assert_eq!(finished.len(), 1, "{finished:?}");
    assert_eq!(finished[0]["status"], "cancelled");
    let late = host.answer_approval("c1", Decision::AllowOnce).unwrap_err();
    assert_eq!(
        late.code,
        ErrorCode::NotFound,
        "a stopped turn's question is gone, not left waiting: {late:?}"
    );
    assert_eq!(app.model_requests().len(), 1, "the stop sent nothing to the model");

    app.idle(&id).await;
    host.send_message(Some(id.clone()), "go on").unwrap();
    let done = app.turn_end(&id, 2).await;
    assert_eq!(done["stopReason"], "end_turn", "{done}");
    assert_eq!(done["text"], "after the stop");
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_runs_the_same_message_again_and_edit_sends_the_new_text_alone() {
    let app = start(vec![
        Reply::text("first answer"),
        Reply::text("second answer"),
        Reply::text("third answer"),
    ])
    .await;
    let host = &app.host;
    let store = host.store().unwrap();
    let texts = |id: &str| -> Vec<(MessageRole, Value)> {
        store
            .messages(id)
            .unwrap()
            .into_iter()
            .map(|m| (m.role, m.parts))
            .collect()
    };

    let id = host.send_message(None, "what is the time").unwrap();
    assert_eq!(app.turn_end(&id, 1).await["text"], "first answer");
    app.idle(&id).await;

    host.retry_turn(&id).await.unwrap();
    assert_eq!(app.turn_end(&id, 2).await["text"], "second answer");
    let stored = texts(&id);
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert_eq!(stored[0].0, MessageRole::User);
    assert!(mentions(&stored[0].1, "what is the time"));
    assert!(mentions(&stored[1].1, "second answer"));
    assert!(
        !stored.iter().any(|(_, parts)| mentions(parts, "first answer")),
        "{stored:?}"
    );
    let requests = app.model_requests();
    let retried = &requests[1]["messages"];
    let asked = strings(retried)
        .iter()
        .filter(|s| s.contains("what is the time"))
        .count();
    assert_eq!(asked, 1, "the question is sent once: {retried}");
    assert!(!mentions(retried, "first answer"), "{retried}");

    app.idle(&id).await;
    host.edit_and_resend(&id, "what is the date").await.unwrap();
    assert_eq!(app.turn_end(&id, 3).await["text"], "third answer");
    let requests = app.model_requests();
    assert_eq!(requests.len(), 3);
    let edited = &requests[2]["messages"];
    assert!(mentions(edited, "what is the date"), "{edited}");
    assert!(
        !mentions(edited, "what is the time"),
        "the old question is gone: {edited}"
    );
    assert!(!mentions(edited, "second answer"), "the old answer is gone: {edited}");
    let stored = texts(&id);
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert!(mentions(&stored[0].1, "what is the date"));
    assert!(mentions(&stored[1].1, "third answer"));
}

/// A retry drops the last turn's views and leaves the earlier turns' as they are: one in its
/// card is not torn down nor loaded again, one in a pop-out window stays there.
#[tokio::test(flavor = "multi_thread")]
async fn a_retry_tears_down_the_dropped_turns_views_alone() {
    let monitor = |id: &str| porthole_fake_llm::FakeToolCall::new(id, "system_monitor", "{}");
    let mut app = start(vec![
        Reply::tool_call("c1", "system_monitor", "{}"),
        Reply::text("shown"),
        Reply::tool_call("c2", "system_monitor", "{}"),
        Reply::text("shown again"),
        Reply::ToolCalls {
            text: None,
            calls: vec![monitor("c3"), monitor("c4")],
        },
        Reply::text("two more"),
        Reply::text("no view this time"),
    ])
    .await;
    app.play_frames();
    let host = app.host.clone();
    let ready = |app: &App, view: &str| {
        app.views(MAIN_WINDOW)
            .iter()
            .any(|e| e["type"] == "state" && e["viewId"] == view && e["state"] == "ready")
            .then_some(())
    };
    // c1 stays in its card; c2 goes to a window of its own.
    let id = app.monitor_turn(None, "c1", 1).await;
    let kept = app.opened(MAIN_WINDOW, "c1", &[]).await;
    app.frame_told(MAIN_WINDOW, &kept, "ui/notifications/tool-result").await;
    app.monitor_turn(Some(id.clone()), "c2", 2).await;
    let second = app.opened(MAIN_WINDOW, "c2", &[]).await;
    app.wait_for("c2's view to be ready", |app| ready(app, &second)).await;
    host.pop_out_view(MAIN_WINDOW, &second).await.unwrap();
    // The last turn: c3 stays in its card; c4 goes to a window of its own.
    host.send_message(Some(id.clone()), "two monitors").unwrap();
    for call in ["c3", "c4"] {
        app.approval_asked(&id, call).await;
        host.answer_approval(call, Decision::AllowOnce).unwrap();
    }
    app.turn_end(&id, 3).await;
    app.idle(&id).await;
    let dropped = app.opened(MAIN_WINDOW, "c3", &[]).await;
    app.frame_told(MAIN_WINDOW, &dropped, "ui/notifications/tool-result")
        .await;
    let fourth = app.opened(MAIN_WINDOW, "c4", &[]).await;
    app.wait_for("c4's view to be ready", |app| ready(app, &fourth)).await;
    let dropped_window = host.pop_out_view(MAIN_WINDOW, &fourth).await.unwrap();

    host.retry_turn(&id).await.unwrap();
    assert_eq!(app.turn_end(&id, 4).await["text"], "no view this time");
    assert_eq!(
        *app.desktop.closed_windows.lock().unwrap(),
        [dropped_window],
        "the dropped call's pop-out window closes, the kept one's stays"
    );
    let closed = |view: &str| {
        app.views(MAIN_WINDOW)
            .iter()
            .any(|e| e["type"] == "closed" && e["viewId"] == view)
    };
    assert!(closed(&dropped), "the dropped call's view is closed");
    assert!(
        app.frame_methods(MAIN_WINDOW, &dropped)
            .contains(&"ui/resource-teardown".to_string()),
        "the dropped view was told it is going"
    );
    assert!(!closed(&kept), "the earlier view stays in its card");
    assert!(
        !app.frame_methods(MAIN_WINDOW, &kept)
            .contains(&"ui/resource-teardown".to_string())
    );
    let opened_c1 = app
        .views(MAIN_WINDOW)
        .iter()
        .filter(|e| e["type"] == "opened" && e["callId"] == "c1")
        .count();
    assert_eq!(opened_c1, 1, "the earlier view is not loaded again");
    let reopened = host.open_conversation(&id).unwrap();
    assert_eq!(reopened.view_uris.keys().collect::<Vec<_>>(), ["c1", "c2"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn views_are_torn_down_reopened_from_the_store_and_expire() {
    let mut app = start(vec![
        Reply::tool_call("c1", "system_monitor", "{}"),
        Reply::text("shown"),
    ])
    .await;
    app.play_frames();
    let host = app.host.clone();
    let id = app.monitor_turn(None, "c1", 1).await;
    let first = app.opened(MAIN_WINDOW, "c1", &[]).await;
    let result = app
        .frame_told(MAIN_WINDOW, &first, "ui/notifications/tool-result")
        .await;
    let store = host.store().unwrap();
    let latest_view_state = || store.views(&id).unwrap().last().map(|v| v.state);

    // Leaving the conversation closes its views, in the window and in the store.
    host.teardown_views(&id).await;
    let closed = app.views(MAIN_WINDOW);
    assert!(
        closed
            .iter()
            .any(|e| e["type"] == "closed" && e["viewId"] == first.as_str()),
        "{closed:?}"
    );
    assert!(
        app.frame_methods(MAIN_WINDOW, &first)
            .contains(&"ui/resource-teardown".to_string()),
        "the view was told it is going"
    );
    assert_eq!(latest_view_state(), Some(ViewState::Closed));

    // Opened again, the conversation tells the card which view it showed.
    let uri = store.views(&id).unwrap()[0].uri.clone();
    assert!(uri.starts_with("ui://"), "{uri}");
    let reopened = host.open_conversation(&id).unwrap();
    assert_eq!(
        reopened.view_uris,
        std::collections::BTreeMap::from([("c1".to_string(), uri)])
    );

    // Coming back re-creates it from the stored input and result, asking the model nothing.
    let requests = app.model_requests().len();
    host.reopen_views(&id, None).unwrap();
    let second = app.opened(MAIN_WINDOW, "c1", &[&first]).await;
    let input = app
        .frame_told(MAIN_WINDOW, &second, "ui/notifications/tool-input")
        .await;
    assert_eq!(input["arguments"], json!({}), "{input}");
    let replayed = app
        .frame_told(MAIN_WINDOW, &second, "ui/notifications/tool-result")
        .await;
    assert_eq!(replayed, result, "the same result is replayed");
    assert_eq!(app.model_requests().len(), requests, "no model request");

    // Past its retention it is not shown again, and what the model got stays.
    host.teardown_views(&id).await;
    assert!(
        app.views(MAIN_WINDOW)
            .iter()
            .any(|e| e["type"] == "closed" && e["viewId"] == second.as_str())
    );
    assert!(store.expire_views(i64::MAX).unwrap() > 0);
    let opened_before = app.views(MAIN_WINDOW).iter().filter(|e| e["type"] == "opened").count();
    host.reopen_views(&id, None).unwrap();
    let expired = app
        .wait_for("the view to be reported expired", |app| {
            app.views(MAIN_WINDOW)
                .into_iter()
                .find(|e| e["type"] == "state" && e["callId"] == "c1" && e["state"] == "expired")
        })
        .await;
    assert!(expired["viewId"].is_null(), "{expired}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let opened_after = app.views(MAIN_WINDOW).iter().filter(|e| e["type"] == "opened").count();
    assert_eq!(opened_after, opened_before, "an expired view is not re-created");
    let calls = store.tool_calls(&id).unwrap();
    assert!(
        calls[0]
            .model_facing
            .as_ref()
            .is_some_and(|m| mentions(m, &first_text(&result))),
        "{calls:?}"
    );
    assert_eq!(latest_view_state(), Some(ViewState::Expired));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_view_pops_out_into_its_own_window_and_comes_back_when_it_closes() {
    let mut app = start(vec![
        Reply::tool_call("c1", "system_monitor", "{}"),
        Reply::text("shown"),
    ])
    .await;
    app.play_frames();
    let host = app.host.clone();
    app.monitor_turn(None, "c1", 1).await;
    let card = app.opened(MAIN_WINDOW, "c1", &[]).await;
    app.wait_for("the view to be ready", |app| {
        app.views(MAIN_WINDOW)
            .into_iter()
            .find(|e| e["type"] == "state" && e["viewId"] == card.as_str() && e["state"] == "ready")
    })
    .await;

    // Out: a window of its own opens, and the card says where the view went.
    let label = host.pop_out_view(MAIN_WINDOW, &card).await.unwrap();
    assert_eq!(label, "view-1");
    let windows = app.desktop.opened_windows.lock().unwrap().clone();
    assert_eq!(windows.len(), 1, "{windows:?}");
    assert_eq!(windows[0].0, "view-1");
    let main = app.views(MAIN_WINDOW);
    assert!(
        main.iter()
            .any(|e| e["type"] == "closed" && e["viewId"] == card.as_str()),
        "{main:?}"
    );
    assert!(
        main.iter()
            .any(|e| e["type"] == "state" && e["callId"] == "c1" && e["state"] == "popped_out"),
        "{main:?}"
    );
    assert_eq!(host.pop_out_windows(), vec!["view-1".to_string()]);

    // The pop-out's page asks for the view: it is re-created there, and only there.
    assert_eq!(host.pop_out_ready("view-1").unwrap(), "system_monitor");
    let popped = app.opened("view-1", "c1", &[]).await;
    let result = app.frame_told("view-1", &popped, "ui/notifications/tool-result").await;
    assert!(result["structuredContent"].is_object(), "{result}");
    assert!(
        app.views(MAIN_WINDOW).iter().all(|e| e["viewId"] != popped.as_str()),
        "nothing of the popped-out view goes to the main window"
    );
    let refused = host
        .view_message(
            MAIN_WINDOW,
            &popped,
            json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
        )
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::Forbidden, "{refused:?}");
    let refused = host.close_view(MAIN_WINDOW, &popped).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::Forbidden, "{refused:?}");
    assert_eq!(
        host.pop_out_ready("view-1").unwrap_err().code,
        ErrorCode::Invalid,
        "the view is asked for once"
    );

    // Back: the window closes, and the view returns to its card.
    host.pop_out_closed("view-1").await;
    assert!(
        app.views("view-1")
            .iter()
            .any(|e| e["type"] == "closed" && e["viewId"] == popped.as_str())
    );
    let back = app.opened(MAIN_WINDOW, "c1", &[&card]).await;
    assert_ne!(back, popped);
    app.frame_told(MAIN_WINDOW, &back, "ui/notifications/tool-result").await;
    assert!(host.pop_out_windows().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tools_panel_run_calls_the_tool_without_the_model() {
    let app = start(Vec::new()).await;
    let host = &app.host;
    let run = host.run_tool(None, "demo", "sha256", json!({"text": "abc"})).unwrap();
    assert!(run.call_id.starts_with("run-"), "{}", run.call_id);
    let id = run.conversation_id;
    let done = app.turn_end(&id, 1).await;
    assert_eq!(done["stopReason"], "end_turn", "{done}");
    let events = app.chat(&id);
    assert_eq!(events.last(), Some(&done), "done is the last event");
    assert!(
        app.chat_of(&id, "approval_requested").is_empty(),
        "the person pressed Run"
    );
    let finished = app.chat_of(&id, "tool_call_finished");
    assert_eq!(finished.len(), 1, "{finished:?}");
    assert_eq!(finished[0]["status"], "ok");
    assert_eq!(
        finished[0]["model"]["content"][0]["text"], SHA256_ABC,
        "{}",
        finished[0]
    );
    assert!(app.llm.requests().is_empty(), "no model request");

    let conversation = host.open_conversation(&id).unwrap();
    assert_eq!(conversation.conversation.title, "Run sha256");
    assert_eq!(conversation.tool_calls.len(), 1);
    assert_eq!(conversation.tool_calls[0].status, ToolCallStatus::Ok);
    assert!(
        conversation.tool_calls[0]
            .model_facing
            .as_ref()
            .is_some_and(|m| mentions(m, SHA256_ABC))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_sent_as_soon_as_the_turn_ends_is_taken() {
    const TURNS: usize = 10;
    let app = start((0..=TURNS).map(|n| Reply::text(format!("answer {n}"))).collect()).await;
    let host = &app.host;
    let id = host.send_message(None, "first").unwrap();
    for n in 1..=TURNS {
        // The window sends the next message the moment it sees the turn end.
        let deadline = Instant::now() + PATIENCE;
        while app.chat_of(&id, "done").len() < n {
            assert!(Instant::now() < deadline, "turn {n} did not end");
            tokio::task::yield_now().await;
        }
        let next = host.send_message(Some(id.clone()), &format!("message {n}"));
        assert!(next.is_ok(), "after turn {n} ended: {next:?}");
    }
    app.turn_end(&id, TURNS + 1).await;
}

/// The workbench's host emulation is checked, kept with the profile, and back after a restart;
/// a bad one is refused and changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn the_host_emulation_is_kept_with_the_profile() {
    use porthole_apps::host_emulation::{Device, DeviceKind, HostEmulation};
    let app = start(vec![]).await;
    assert_eq!(app.host.host_emulation().emulation, HostEmulation::default());
    let names: Vec<_> = app
        .host
        .host_emulation()
        .presets
        .iter()
        .map(|p| p.name.clone())
        .collect();
    assert_eq!(names, ["Porthole", "Claude", "ChatGPT", "VS Code", "Goose"]);
    let mut goose = HostEmulation {
        preset: "goose".into(),
        in_chats: true,
        ..Default::default()
    };
    goose.overrides.device = Some(Device {
        kind: DeviceKind::Tablet,
        width: None,
        height: None,
    });
    let set = app.host.set_host_emulation(goose.clone()).await.unwrap();
    assert_eq!(set.emulation, goose);
    let bad = HostEmulation {
        preset: "netscape".into(),
        ..Default::default()
    };
    let refused = app.host.set_host_emulation(bad).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::Invalid, "{refused:?}");
    assert!(refused.message.contains("netscape"), "{refused:?}");
    assert_eq!(
        app.host.host_emulation().emulation,
        goose,
        "the refused one changed nothing"
    );

    // The next start on the same profile has it.
    let again = Host::start(
        HostOptions::for_profile(app._profile.path(), ModelFlags::default()).unwrap(),
        Arc::new(RecordingOutbox::default()),
        Arc::new(RecordingDesktop::default()),
        tokio::runtime::Handle::current(),
    );
    assert_eq!(again.host_emulation().emulation, goose);
}

/// A host whose servers wait for the window (as the app's are), on the demo server over HTTP.
async fn host_waiting_for_the_window() -> (Host, tempfile::TempDir) {
    host_waiting_for_the_window_with(Arc::new(MemorySecrets::default())).await
}

async fn host_waiting_for_the_window_with(keyring: Arc<dyn SecretStore>) -> (Host, tempfile::TempDir) {
    let url = serve_over_http(DemoServer::new).await;
    let profile = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"demo": {"url": url}}});
    std::fs::write(profile.path().join("config.json"), config.to_string()).unwrap();
    let host = Host::start(
        HostOptions {
            setup: Setup::new(Some(profile.path()), &[]).unwrap(),
            model_flags: ModelFlags {
                provider: Some(ProviderKind::OpenAi),
                ..ModelFlags::default()
            },
            keyring,
            start_after_window: true,
        },
        Arc::new(RecordingOutbox::default()),
        Arc::new(RecordingDesktop::default()),
        tokio::runtime::Handle::current(),
    );
    (host, profile)
}

/// How many sessions the host has started with `server` (its `initialize` requests).
fn sessions_started(host: &Host, server: &str) -> usize {
    host.servers()
        .traffic(server)
        .entries(0)
        .iter()
        .filter(|e| e.method.as_deref() == Some("initialize") && e.kind == porthole_mcp::traffic::MessageKind::Request)
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_apps_servers_connect_once_its_window_is_ready() {
    let (host, _profile) = host_waiting_for_the_window().await;
    // The in-process HTTP server connects in a few milliseconds: not before the window is ready.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let demo = host.list_servers().into_iter().find(|s| s.name == "demo").unwrap();
    assert_eq!(demo.state, ServerState::Connecting, "{demo:?}");
    assert_eq!(sessions_started(&host, "demo"), 0);

    host.ui_ready();
    let statuses = tokio::time::timeout(PATIENCE, host.servers().settled()).await.unwrap();
    assert_eq!(statuses[0].state, ServerState::Connected, "{statuses:?}");
    assert_eq!(sessions_started(&host, "demo"), 1);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_before_the_window_is_ready_connects_its_server_once() {
    let (host, _profile) = host_waiting_for_the_window().await;
    let outcome = host
        .servers()
        .call_tool(
            "demo",
            "sha256",
            json!({"text": "abc"}).as_object().cloned(),
            Default::default(),
        )
        .await
        .expect("the call connects the server itself");
    assert!(
        serde_json::to_string(&outcome.model.content)
            .unwrap()
            .contains("ba7816bf"),
        "{:?}",
        outcome.model
    );
    host.ui_ready();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        sessions_started(&host, "demo"),
        1,
        "the window's readiness does not connect it again"
    );
    assert_eq!(host.list_servers()[0].state, ServerState::Connected);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn servers_connect_anyway_when_the_window_never_says_it_is_ready() {
    let (host, _profile) = host_waiting_for_the_window().await;
    let started = Instant::now();
    let statuses = tokio::time::timeout(PATIENCE, host.servers().settled()).await.unwrap();
    assert_eq!(statuses[0].state, ServerState::Connected, "{statuses:?}");
    assert!(
        started.elapsed() >= porthole_host::WINDOW_WAIT_AT_MOST - Duration::from_millis(100),
        "connected after {:?}, before the wait was over",
        started.elapsed()
    );
    host.shutdown().await;
}

/// A keyring that counts the keys read from it.
#[derive(Default)]
struct CountingKeyring {
    reads: std::sync::atomic::AtomicUsize,
}

impl SecretStore for CountingKeyring {
    fn get(&self, _key: &str) -> Result<Option<String>, SecretError> {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(None)
    }
    fn set(&self, _key: &str, _value: &str) -> Result<(), SecretError> {
        Ok(())
    }
    fn delete(&self, _key: &str) -> Result<(), SecretError> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_keyring_is_not_opened_before_the_window_is_ready() {
    let keyring = Arc::new(CountingKeyring::default());
    let (host, _profile) = host_waiting_for_the_window_with(keyring.clone()).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let reads = || keyring.reads.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(reads(), 0, "nothing read the keyring while the page loads");
    host.ui_ready();
    // Whether a model is set up (for views' sampling) is then found, which reads the API key.
    let deadline = Instant::now() + PATIENCE;
    while reads() == 0 {
        assert!(
            Instant::now() < deadline,
            "the keyring was never read after the window was ready"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    host.shutdown().await;
}
