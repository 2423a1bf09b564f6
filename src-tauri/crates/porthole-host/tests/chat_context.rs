//! Servers' prompts and resources in the chat, with no window: a real [`Host`] over its own
//! store, the published `@modelcontextprotocol/server-everything` over stdio (from
//! `tests/fixtures`, installed by `make deps`), and the scripted fake LLM, which records what
//! the model was sent.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use porthole_fake_llm::{FakeLlm, Reply, Script};
use porthole_host::attachments::AttachmentRef;
use porthole_host::contract::SaveGeneralSettings;
use porthole_host::ports::{RecordingDesktop, RecordingOutbox};
use porthole_host::prompts::CompletionTarget;
use porthole_host::questions::ElicitationAction;
use porthole_host::sampling::{SamplingDecision, ServerSampling};
use porthole_host::{ErrorCode, Host, HostOptions, ModelFlags, Outbound};
use porthole_mcp::ServerState;
use porthole_store::MessageRole;
use serde_json::{Value, json};

const PATIENCE: Duration = Duration::from_secs(30);

fn server_everything() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../tests/fixtures/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.is_file(),
        "run `make deps`: tests/fixtures has no server-everything"
    );
    path
}

/// How the test reaches server-everything.
#[derive(Clone, Copy)]
enum Over {
    Stdio,
    /// Streamable HTTP, the server started by the test (`streamableHttp`, on a free port).
    Http,
}

/// A process the test started, killed when dropped.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts server-everything over Streamable HTTP; its URL, once it listens.
async fn everything_over_http() -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new("node")
        .arg(server_everything())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("node runs server-everything");
    let child = Child(child);
    let deadline = Instant::now() + PATIENCE;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "server-everything did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

struct App {
    host: Host,
    _server: Option<Child>,
    outbox: Arc<RecordingOutbox>,
    desktop: Arc<RecordingDesktop>,
    llm: FakeLlm,
    _profile: tempfile::TempDir,
}

/// A host whose only server is server-everything (as `everything`) over stdio, connected.
async fn start(replies: Vec<Reply>) -> App {
    start_over(Over::Stdio, replies).await
}

/// [`start`], with server-everything reached `over` stdio or Streamable HTTP.
async fn start_over(over: Over, replies: Vec<Reply>) -> App {
    let llm = FakeLlm::start(Script::new(replies)).await.unwrap();
    let profile = tempfile::tempdir().unwrap();
    let (server, config) = match over {
        Over::Stdio => (
            None,
            json!({"mcpServers": {"everything": {
                "command": "node", "args": [server_everything(), "stdio"], "timeout": 30000
            }}}),
        ),
        Over::Http => {
            let (child, url) = everything_over_http().await;
            (
                Some(child),
                json!({"mcpServers": {"everything": {"url": url, "timeout": 30000}}}),
            )
        }
    };
    std::fs::write(profile.path().join("config.json"), config.to_string()).unwrap();
    let outbox = Arc::new(RecordingOutbox::default());
    let desktop = Arc::new(RecordingDesktop::default());
    let host = Host::start(
        HostOptions::for_profile(profile.path(), ModelFlags::openai_compatible(llm.base_url(), "m")).unwrap(),
        outbox.clone(),
        desktop.clone(),
        tokio::runtime::Handle::current(),
    );
    let statuses = tokio::time::timeout(PATIENCE, host.servers().settled()).await.unwrap();
    assert_eq!(statuses[0].state, ServerState::Connected, "{statuses:?}");
    App {
        host,
        _server: server,
        outbox,
        desktop,
        llm,
        _profile: profile,
    }
}

impl App {
    /// Waits for the `n`th (from 1) end of a turn in the conversation.
    async fn turn_end(&self, conversation_id: &str, n: usize) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let done: Vec<Value> = self
                .outbox
                .chat_events()
                .into_iter()
                .filter(|e| e.conversation_id == conversation_id)
                .map(|e| serde_json::to_value(&e.event).unwrap())
                .filter(|e| e["type"] == "done")
                .collect();
            if let Some(end) = done.get(n - 1) {
                return end.clone();
            }
            assert!(Instant::now() < deadline, "turn {n} of {conversation_id} did not end");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn idle(&self, conversation_id: &str) {
        let deadline = Instant::now() + PATIENCE;
        while self.host.open_conversation(conversation_id).unwrap().running {
            assert!(Instant::now() < deadline, "the conversation stays busy");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until `look` finds something among the events sent to the main window.
    async fn wait_for<T>(&self, what: &str, mut look: impl FnMut(&[Outbound]) -> Option<T>) -> T {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let sent: Vec<Outbound> = self.outbox.sent().into_iter().map(|(_, e)| e).collect();
            if let Some(found) = look(&sent) {
                return found;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits for the sampling request `n` (from 0) to be shown, at the step given by whether
    /// `answered` (the model's answer is there to review).
    async fn sampling(&self, n: u64, answered: bool) -> ServerSampling {
        self.wait_for(&format!("sampling request {n}"), |sent| {
            sent.iter().find_map(|e| match e {
                Outbound::Sampling(s) if s.id == n && s.answer.is_some() == answered => Some(s.clone()),
                _ => None,
            })
        })
        .await
    }

    /// Starts `tool` of server-everything from the tools panel (it returns at once); the run's
    /// conversation.
    fn start_run(&self, tool: &str, arguments: Value) -> String {
        self.host
            .run_tool(None, "everything", tool, arguments)
            .unwrap()
            .conversation_id
    }

    /// Waits for the run in `conversation_id` to end; what the model got of its result.
    async fn result_of(&self, conversation_id: &str) -> Value {
        self.turn_end(conversation_id, 1).await;
        let finished = self
            .outbox
            .chat_events()
            .into_iter()
            .filter(|e| e.conversation_id == conversation_id)
            .map(|e| serde_json::to_value(&e.event).unwrap())
            .find(|e| e["type"] == "tool_call_finished")
            .expect("the call finished");
        finished["model"].clone()
    }

    /// Runs `tool` of server-everything from the tools panel; its model-facing result once done.
    async fn run(&self, tool: &str, arguments: Value) -> Value {
        let id = self.start_run(tool, arguments);
        self.result_of(&id).await
    }

    /// The audit log's entries of `kind`, oldest first.
    fn audited(&self, kind: &str) -> Vec<Value> {
        self.host
            .store()
            .unwrap()
            .audit_entries(100)
            .unwrap()
            .into_iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .filter(|e| e["kind"] == kind)
            .collect()
    }

    /// The `messages` of each model request the fake LLM got.
    fn sent(&self) -> Vec<Value> {
        self.llm
            .requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
            .map(|r| r.body["messages"].clone())
            .collect()
    }

    /// The parts of the conversation's stored user messages.
    fn stored_user_parts(&self, conversation_id: &str) -> Vec<Value> {
        let store = self.host.store().unwrap();
        store
            .messages(conversation_id)
            .unwrap()
            .into_iter()
            .filter(|m| m.role == MessageRole::User)
            .map(|m| m.parts)
            .collect()
    }
}

/// The user message the model was last sent, as its content parts.
fn last_user_content(messages: &Value) -> Vec<Value> {
    let user = messages
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .expect("a user message was sent");
    match &user["content"] {
        Value::Array(parts) => parts.clone(),
        text => vec![json!({"type": "text", "text": text})],
    }
}

fn texts(parts: &[Value]) -> Vec<String> {
    parts
        .iter()
        .filter_map(|p| p["text"].as_str().map(String::from))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_prompt_with_completed_arguments_becomes_the_persons_turn() {
    a_servers_prompt_with_completed_arguments_becomes_the_persons_turn_over(Over::Stdio).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_prompt_with_completed_arguments_becomes_the_persons_turn_over_http() {
    a_servers_prompt_with_completed_arguments_becomes_the_persons_turn_over(Over::Http).await;
}

async fn a_servers_prompt_with_completed_arguments_becomes_the_persons_turn_over(over: Over) {
    let app = start_over(over, vec![Reply::text("Analysed."), Reply::text("Promoted.")]).await;
    let host = &app.host;

    let list = host.list_prompts().await;
    assert!(list.problems.is_empty(), "{:?}", list.problems);
    let names: Vec<&str> = list.prompts.iter().map(|p| p.name.as_str()).collect();
    for name in ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"] {
        assert!(names.contains(&name), "{name} is listed: {names:?}");
    }
    let args = list.prompts.iter().find(|p| p.name == "args-prompt").unwrap();
    assert_eq!(args.server, "everything");
    let required: Vec<(&str, bool)> = args.arguments.iter().map(|a| (a.name.as_str(), a.required)).collect();
    assert_eq!(required, [("city", true), ("state", false)]);

    // Suggestions: the first argument's, then the second's, which depend on the first.
    let prompt = || CompletionTarget::Prompt {
        name: "completable-prompt".into(),
    };
    let departments = host
        .complete_argument("everything", prompt(), "department", "S", HashMap::new())
        .await
        .unwrap();
    assert_eq!(departments.values, ["Sales", "Support"]);
    let context = HashMap::from([("department".to_string(), "Sales".to_string())]);
    let names = host
        .complete_argument("everything", prompt(), "name", "", context)
        .await
        .unwrap();
    assert_eq!(names.values, ["David", "Eve", "Frank"]);

    // A prompt with an embedded resource: its text and the resource go to the model as the
    // person's turn, and are stored as such.
    let arguments = HashMap::from([
        ("resourceType".to_string(), "Text".to_string()),
        ("resourceId".to_string(), "3".to_string()),
    ]);
    let id = host
        .send_prompt(None, "everything", "resource-prompt", arguments)
        .await
        .unwrap();
    assert_eq!(app.turn_end(&id, 1).await["text"], "Analysed.");
    let sent = texts(&last_user_content(&app.sent()[0]));
    assert!(
        sent[0].starts_with("This prompt includes the Text resource with id: 3"),
        "{sent:?}"
    );
    assert!(
        sent[1]
            .starts_with("[demo://resource/dynamic/text/3 from everything]\nResource 3: This is a plaintext resource"),
        "{sent:?}"
    );
    let stored = app.stored_user_parts(&id);
    assert_eq!(stored[0][1]["type"], "attachment", "{stored:?}");
    assert_eq!(
        stored[0][1]["content"]["resource"]["uri"],
        "demo://resource/dynamic/text/3"
    );
    assert_eq!(
        host.list_conversations().unwrap()[0].title,
        "This prompt includes the Text resource with id: 3. Please an…"
    );

    // A prompt's own error is the server's words, and nothing is sent.
    app.idle(&id).await;
    let bad = HashMap::from([
        ("resourceType".to_string(), "Video".to_string()),
        ("resourceId".to_string(), "1".to_string()),
    ]);
    let e = host
        .send_prompt(Some(id.clone()), "everything", "resource-prompt", bad)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Server);
    assert!(e.message.contains("Invalid resourceType: Video"), "{}", e.message);
    assert_eq!(app.sent().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn attached_resources_go_to_the_model_and_stay_with_the_message_through_retry_and_edit() {
    attached_resources_go_to_the_model_and_stay_with_the_message_through_retry_and_edit_over(Over::Stdio).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn attached_resources_go_to_the_model_and_stay_with_the_message_through_retry_and_edit_over_http() {
    attached_resources_go_to_the_model_and_stay_with_the_message_through_retry_and_edit_over(Over::Http).await;
}

async fn attached_resources_go_to_the_model_and_stay_with_the_message_through_retry_and_edit_over(over: Over) {
    let app = start_over(over, vec![Reply::text("one"), Reply::text("two"), Reply::text("three")]).await;
    let host = &app.host;

    let list = host.list_attachable().await;
    assert!(list.problems.is_empty(), "{:?}", list.problems);
    assert!(
        list.resources
            .iter()
            .any(|r| r.uri.starts_with("demo://resource/static/document/")),
        "{:?}",
        list.resources
    );
    let template = list
        .templates
        .iter()
        .find(|t| t.uri_template == "demo://resource/dynamic/text/{resourceId}")
        .expect("the dynamic text template is listed");
    assert_eq!(template.variables, ["resourceId"]);
    // The template's variable gets the server's suggestions too (completion/complete, ref/resource).
    let target = CompletionTarget::Resource {
        uri_template: template.uri_template.clone(),
    };
    let suggested = host
        .complete_argument("everything", target, "resourceId", "7", HashMap::new())
        .await
        .unwrap();
    assert_eq!(suggested.values, ["7"]);
    let values = HashMap::from([("resourceId".to_string(), "7".to_string())]);
    let uri = host.template_uri(&template.uri_template, &values);
    assert_eq!(uri, "demo://resource/dynamic/text/7");

    // The chip: what was read. Text sent as a blob is attached as its text.
    let chip = host.attach_resource("everything", &uri).await.unwrap();
    assert_eq!(chip.mime_type.as_deref(), Some("text/plain"));
    assert!(chip.size > 20, "{chip:?}");
    let blob = host
        .attach_resource("everything", "demo://resource/dynamic/blob/2")
        .await
        .unwrap();
    assert_eq!(blob.mime_type.as_deref(), Some("text/plain"));
    let missing = host
        .attach_resource("everything", "demo://resource/dynamic/text/zero")
        .await
        .unwrap_err();
    assert_eq!(missing.code, ErrorCode::Server);

    let attachments = [
        AttachmentRef {
            server: "everything".into(),
            uri: uri.clone(),
        },
        AttachmentRef {
            server: "everything".into(),
            uri: "demo://resource/dynamic/blob/2".into(),
        },
    ];
    let id = host
        .send_message_with(None, "What do these say?", &attachments, None)
        .await
        .unwrap();
    assert_eq!(app.turn_end(&id, 1).await["text"], "one");
    let first = texts(&last_user_content(&app.sent()[0]));
    assert_eq!(first[0], "What do these say?");
    assert!(
        first[1].starts_with("[demo://resource/dynamic/text/7 from everything]\nResource 7:"),
        "{first:?}"
    );
    assert!(
        first[2].starts_with("[demo://resource/dynamic/blob/2 from everything]\nResource 2: This is a base64 blob"),
        "{first:?}"
    );

    // Retry sends the same message, attachments and all.
    app.idle(&id).await;
    host.retry_turn(&id).await.unwrap();
    assert_eq!(app.turn_end(&id, 2).await["text"], "two");
    assert_eq!(texts(&last_user_content(&app.sent()[1])), first);

    // Edit changes the text; what was attached stays attached (and stored).
    app.idle(&id).await;
    host.edit_and_resend(&id, "Compare them.").await.unwrap();
    assert_eq!(app.turn_end(&id, 3).await["text"], "three");
    let edited = texts(&last_user_content(&app.sent()[2]));
    assert_eq!(edited[0], "Compare them.");
    assert_eq!(edited[1..], first[1..]);
    let stored = app.stored_user_parts(&id);
    assert_eq!(stored.len(), 1);
    let kinds: Vec<&str> = stored[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "attachment", "attachment"]);

    // Reopened, the message still has them.
    let reopened = host.open_conversation(&id).unwrap();
    let json = serde_json::to_value(&reopened).unwrap();
    assert!(json.to_string().contains("demo://resource/dynamic/blob/2"), "{json}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_sampling_request_runs_only_once_allowed_and_its_answer_is_reviewed() {
    a_servers_sampling_request_runs_only_once_allowed_and_its_answer_is_reviewed_over(Over::Stdio).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_sampling_request_runs_only_once_allowed_and_its_answer_is_reviewed_over_http() {
    a_servers_sampling_request_runs_only_once_allowed_and_its_answer_is_reviewed_over(Over::Http).await;
}

async fn a_servers_sampling_request_runs_only_once_allowed_and_its_answer_is_reviewed_over(over: Over) {
    let app = start_over(
        over,
        vec![
            Reply::text("Sampled: hello back"),
            Reply::text("Never sent"),
            Reply::text("Third"),
        ],
    )
    .await;
    let host = &app.host;
    let text = |result: &Value| result["content"][0]["text"].as_str().unwrap_or("").to_string();

    // Allowed once, then the answer sent back.
    let first = app.start_run("trigger-sampling-request", json!({"prompt": "hello", "maxTokens": 50}));
    let asked = app.sampling(0, false).await;
    assert_eq!(asked.server, "everything");
    assert_eq!(asked.system_prompt.as_deref(), Some("You are a helpful test server."));
    assert_eq!(asked.max_tokens, 50);
    assert_eq!(
        asked.messages[0].text,
        "Resource trigger-sampling-request context: hello"
    );
    assert!(
        app.llm.requests().is_empty(),
        "nothing reaches the model before it is allowed"
    );
    host.answer_server_sampling(0, SamplingDecision::AllowOnce).unwrap();
    let review = app.sampling(0, true).await;
    assert_eq!(review.answer.as_ref().unwrap().text, "Sampled: hello back");
    assert_eq!(review.answer.as_ref().unwrap().model, "m");
    let sent = &app.sent()[0];
    assert_eq!(
        sent[0],
        json!({"role": "system", "content": "You are a helpful test server."})
    );
    host.answer_server_sampling(0, SamplingDecision::Send).unwrap();
    let finished = app.result_of(&first).await;
    assert!(text(&finished).contains("Sampled: hello back"), "{finished}");

    // Declined: nothing reaches the model, and the server is told.
    let declined = app.start_run("trigger-sampling-request", json!({"prompt": "again"}));
    app.sampling(1, false).await;
    host.answer_server_sampling(1, SamplingDecision::Decline).unwrap();
    app.result_of(&declined).await;
    assert_eq!(app.sent().len(), 1, "the declined request reached no model");

    // Allowed always: the next request goes to the model at once, and its answer can be refused.
    let always = app.start_run("trigger-sampling-request", json!({"prompt": "three"}));
    app.sampling(2, false).await;
    host.answer_server_sampling(2, SamplingDecision::AllowAlways).unwrap();
    app.sampling(2, true).await;
    host.answer_server_sampling(2, SamplingDecision::Send).unwrap();
    app.result_of(&always).await;
    let fourth = app.start_run("trigger-sampling-request", json!({"prompt": "four"}));
    let review = app.sampling(3, true).await;
    assert_eq!(review.answer.unwrap().text, "Third");
    assert!(
        !app.outbox
            .sent()
            .iter()
            .any(|(_, e)| matches!(e, Outbound::Sampling(s) if s.id == 3 && s.answer.is_none())),
        "an always-allowed server is not asked again"
    );
    host.answer_server_sampling(3, SamplingDecision::Refuse).unwrap();
    let refused = app.result_of(&fourth).await;
    assert!(
        !text(&refused).contains("Third"),
        "a refused answer never reaches the server: {refused}"
    );

    // The standing approval is listed, and revoked: the next request is asked about again.
    assert_eq!(host.approvals().unwrap().sampling, ["everything"]);
    assert!(host.revoke_sampling("everything").unwrap().sampling.is_empty());
    let fifth = app.start_run("trigger-sampling-request", json!({"prompt": "five"}));
    app.sampling(4, false).await;
    host.answer_server_sampling(4, SamplingDecision::Decline).unwrap();
    app.result_of(&fifth).await;

    let outcomes: Vec<Value> = app
        .audited("sampling")
        .iter()
        .map(|e| e["detail"]["outcome"].clone())
        .collect();
    assert_eq!(
        outcomes,
        [
            json!("ok"),
            json!("declined"),
            json!("ok"),
            json!("refused"),
            json!("declined")
        ]
    );
    assert!(app.audited("sampling").iter().all(|e| e["server"] == "everything"));
}

#[tokio::test(flavor = "multi_thread")]
async fn roots_are_the_settings_folders_and_servers_hear_when_they_change() {
    let app = start(Vec::new()).await;
    let text = |result: Value| result["content"][0]["text"].as_str().unwrap_or("").to_string();
    let before = text(app.run("get-roots-list", json!({})).await);
    assert!(before.contains("no roots are currently configured"), "{before}");

    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().to_string_lossy().into_owned();
    let saved = app
        .host
        .save_general_settings(&SaveGeneralSettings {
            view_retention_days: None,
            theme: None,
            view_origins_allowed: None,
            view_origins_blocked: None,
            client_metadata_url: None,
            roots: Some(vec![path.clone()]),
        })
        .unwrap();
    assert_eq!(saved.roots, [path.as_str()]);
    let deadline = Instant::now() + PATIENCE;
    loop {
        let listed = text(app.run("get-roots-list", json!({})).await);
        if listed.contains(&format!("URI: file://{path}")) {
            break;
        }
        assert!(Instant::now() < deadline, "the server never saw the new root: {listed}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let refused = app
        .host
        .save_general_settings(&SaveGeneralSettings {
            view_retention_days: None,
            theme: None,
            view_origins_allowed: None,
            view_origins_blocked: None,
            client_metadata_url: None,
            roots: Some(vec!["relative/notes".into()]),
        })
        .unwrap_err();
    assert_eq!(refused.message, "roots: relative/notes is not an absolute path");
}

#[tokio::test(flavor = "multi_thread")]
async fn questions_in_both_modes_a_page_opened_only_once_agreed_and_a_form() {
    questions_in_both_modes_a_page_opened_only_once_agreed_and_a_form_over(Over::Stdio).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn questions_in_both_modes_a_page_opened_only_once_agreed_and_a_form_over_http() {
    questions_in_both_modes_a_page_opened_only_once_agreed_and_a_form_over(Over::Http).await;
}

async fn questions_in_both_modes_a_page_opened_only_once_agreed_and_a_form_over(over: Over) {
    let app = start_over(over, Vec::new()).await;
    let host = &app.host;
    let question = |url: &str| app.start_run("trigger-url-elicitation", json!({"url": url}));
    let asked = |n: usize| {
        app.wait_for("a URL question", move |sent| {
            sent.iter()
                .filter_map(|e| match e {
                    Outbound::Question(q) => Some(q.clone()),
                    _ => None,
                })
                .nth(n)
        })
    };

    let run = question("https://example.com/authorize?state=abc");
    let q = asked(0).await;
    assert_eq!(q.server, "everything");
    assert_eq!(q.url.as_deref(), Some("https://example.com/authorize?state=abc"));
    assert!(q.schema.is_none());
    assert!(
        app.desktop.opened_urls.lock().unwrap().is_empty(),
        "nothing opens before the person agrees"
    );
    host.answer_elicitation(q.id, ElicitationAction::Accept, None).unwrap();
    assert_eq!(
        *app.desktop.opened_urls.lock().unwrap(),
        ["https://example.com/authorize?state=abc"]
    );
    app.result_of(&run).await;
    let opened = app.audited("elicitation-url");
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0]["uri"], "https://example.com/authorize?state=abc");

    // Not a web page: refused, never opened; the person can still decline.
    let run = question("file:///etc/passwd");
    let q = asked(1).await;
    let e = host
        .answer_elicitation(q.id, ElicitationAction::Accept, None)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Invalid);
    host.answer_elicitation(q.id, ElicitationAction::Decline, None).unwrap();
    app.result_of(&run).await;
    assert_eq!(app.desktop.opened_urls.lock().unwrap().len(), 1);

    // A form question (the other mode): the person's answers reach the server.
    let form = app.start_run("trigger-elicitation-request", json!({}));
    let q = asked(2).await;
    assert!(q.url.is_none());
    let schema = q.schema.clone().expect("a form has a schema");
    assert_eq!(schema["properties"]["name"]["description"], "Your full, legal name");
    host.answer_elicitation(
        q.id,
        ElicitationAction::Accept,
        Some(json!({"name": "Ada Lovelace", "check": true, "integer": 7})),
    )
    .unwrap();
    let result: Vec<String> = app.result_of(&form).await["content"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|c| c["text"].as_str().map(String::from))
        .collect();
    let said = result.join("\n");
    assert!(said.contains("- Name: Ada Lovelace"), "{said}");
    assert!(said.contains("- Favorite Integer: 7"), "{said}");
}

/// `@modelcontextprotocol/server-filesystem`, started with no folders of its own, keeps to the
/// roots it is given: the settings' folders (and, on change, the new ones), or a server's own.
#[tokio::test(flavor = "multi_thread")]
async fn the_filesystem_server_keeps_to_the_roots_it_is_given() {
    let entry = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../tests/fixtures/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        entry.is_file(),
        "run `make deps`: tests/fixtures has no server-filesystem"
    );
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Canonical paths: the server compares real paths (a temp folder may be behind a link).
    let (a_path, b_path) = (a.path().canonicalize().unwrap(), b.path().canonicalize().unwrap());
    std::fs::write(a_path.join("a.txt"), "in A").unwrap();
    std::fs::write(b_path.join("b.txt"), "in B").unwrap();
    let profile = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {
        "fs": {"command": "node", "args": [entry], "timeout": 30000},
        "fs-own": {"command": "node", "args": [entry], "timeout": 30000, "roots": [b_path]},
    }});
    std::fs::write(profile.path().join("config.json"), config.to_string()).unwrap();
    let options = HostOptions::for_profile(profile.path(), ModelFlags::default()).unwrap();
    {
        let store = porthole_store::Store::open(&options.setup.profile.database_file()).unwrap();
        store.set_setting("roots", &json!([a_path])).unwrap();
    }
    let outbox = Arc::new(RecordingOutbox::default());
    let host = Host::start(
        options,
        outbox.clone(),
        Arc::new(RecordingDesktop::default()),
        tokio::runtime::Handle::current(),
    );
    let statuses = tokio::time::timeout(PATIENCE, host.servers().settled()).await.unwrap();
    assert!(
        statuses.iter().all(|s| s.state == ServerState::Connected),
        "{statuses:?}"
    );
    let call = |server: &'static str, tool: &'static str, arguments: Value| {
        let servers = host.servers().clone();
        async move {
            let args = arguments.as_object().cloned();
            let outcome = servers.call_tool(server, tool, args, Default::default()).await.unwrap();
            let text = outcome.model.content[0]["text"].as_str().unwrap_or("").to_string();
            (outcome.model.is_error, text)
        }
    };
    let read = |server: &'static str, path: PathBuf| call(server, "read_text_file", json!({"path": path}));

    // The filesystem server asks for its roots once initialized; wait until it has them.
    let deadline = Instant::now() + PATIENCE;
    while !call("fs", "list_allowed_directories", json!({}))
        .await
        .1
        .contains(&*a_path.to_string_lossy())
    {
        assert!(Instant::now() < deadline, "the server never took its roots");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(read("fs", a_path.join("a.txt")).await, (false, "in A".to_string()));
    let (denied, why) = read("fs", b_path.join("b.txt")).await;
    assert!(denied, "outside its roots: {why}");
    // A server with roots of its own keeps to those.
    assert_eq!(read("fs-own", b_path.join("b.txt")).await, (false, "in B".to_string()));
    assert!(read("fs-own", a_path.join("a.txt")).await.0);

    // The settings change: the server hears it, asks again, and keeps to the new folder.
    let roots = vec![b_path.to_string_lossy().into_owned()];
    host.save_general_settings(&SaveGeneralSettings {
        view_retention_days: None,
        theme: None,
        view_origins_allowed: None,
        view_origins_blocked: None,
        client_metadata_url: None,
        roots: Some(roots),
    })
    .unwrap();
    let deadline = Instant::now() + PATIENCE;
    while read("fs", b_path.join("b.txt")).await.0 {
        assert!(Instant::now() < deadline, "the server never took its new roots");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(read("fs", a_path.join("a.txt")).await.0, "the old root is gone");
    host.servers().shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn standing_tool_approvals_are_listed_and_revoked() {
    let app = start(Vec::new()).await;
    let host = &app.host;
    assert!(host.approvals().unwrap().tools.is_empty());
    let store = host.store().unwrap();
    store.set_always_allowed("everything", "echo", true).unwrap();
    store.set_always_allowed("everything", "get-sum", true).unwrap();
    let listed: Vec<(String, String)> = host
        .approvals()
        .unwrap()
        .tools
        .into_iter()
        .map(|a| (a.tool, format!("{:?}", a.source)))
        .collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(listed.iter().all(|(_, source)| source == "Remembered"), "{listed:?}");
    let left = host.revoke_tool_approval("everything", "echo").unwrap();
    assert_eq!(
        left.tools.iter().map(|a| a.tool.as_str()).collect::<Vec<_>>(),
        ["get-sum"]
    );
    let again = host.revoke_tool_approval("everything", "echo").unwrap_err();
    assert_eq!(again.code, ErrorCode::NotFound);
}
