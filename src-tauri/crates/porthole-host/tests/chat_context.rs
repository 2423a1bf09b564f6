//! Servers' prompts and resources in the chat, with no window: a real [`Host`] over its own
//! store, the published `@modelcontextprotocol/server-everything` over stdio (from
//! `tests/fixtures`, installed by `make deps`), and the scripted fake LLM, which records what
//! the model was sent.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use porthole_agent::providers::ProviderKind;
use porthole_fake_llm::{FakeLlm, Reply, Script};
use porthole_host::attachments::AttachmentRef;
use porthole_host::ports::{RecordingDesktop, RecordingOutbox};
use porthole_host::prompts::CompletionTarget;
use porthole_host::{ErrorCode, Host, HostOptions, ModelFlags, Setup};
use porthole_mcp::ServerState;
use porthole_secrets::MemorySecrets;
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

struct App {
    host: Host,
    outbox: Arc<RecordingOutbox>,
    llm: FakeLlm,
    _profile: tempfile::TempDir,
}

/// A host whose only server is server-everything (as `everything`), connected.
async fn start(replies: Vec<Reply>) -> App {
    let llm = FakeLlm::start(Script::new(replies)).await.unwrap();
    let profile = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"everything": {
        "command": "node", "args": [server_everything(), "stdio"], "timeout": 30000
    }}});
    std::fs::write(profile.path().join("config.json"), config.to_string()).unwrap();
    let outbox = Arc::new(RecordingOutbox::default());
    let host = Host::start(
        HostOptions {
            setup: Setup::new(Some(profile.path()), &[]).unwrap(),
            model_flags: ModelFlags {
                provider: Some(ProviderKind::OpenAi),
                base_url: Some(llm.base_url()),
                model: Some("m".into()),
            },
            keyring: Arc::new(MemorySecrets::default()),
        },
        outbox.clone(),
        Arc::new(RecordingDesktop::default()),
        tokio::runtime::Handle::current(),
    );
    let statuses = tokio::time::timeout(PATIENCE, host.servers().settled()).await.unwrap();
    assert_eq!(statuses[0].state, ServerState::Connected, "{statuses:?}");
    App {
        host,
        outbox,
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
    let app = start(vec![Reply::text("Analysed."), Reply::text("Promoted.")]).await;
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
    let app = start(vec![Reply::text("one"), Reply::text("two"), Reply::text("three")]).await;
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
        .send_message_with(None, "What do these say?", &attachments)
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
