//! MCP App views in the real window: the official example servers from npm, unmodified,
//! render in their sandboxed frames and show the tool result they were sent; refused views say
//! why. Run with `make test` (Xvfb, tauri-driver, WebKitWebDriver).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use porthole_e2e::{App, Session, workspace_root};
use porthole_fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use porthole_store::{AuditKind, Store};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(40);

fn fixtures() -> PathBuf {
    workspace_root().join("tests/fixtures")
}

fn examples() -> Vec<Value> {
    let text = std::fs::read_to_string(fixtures().join("mcp-apps-examples.json")).unwrap();
    serde_json::from_str::<Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// A profile whose only MCP server is `server` (its tool calls allowed without asking), and a
/// fake model that calls `tool` once and then answers "Done.".
struct Chat {
    _runtime: tokio::runtime::Runtime,
    fake: FakeLlm,
    dir: tempfile::TempDir,
}

fn chat(server_name: &str, server: Value, tool: &str, arguments: &Value) -> Result<Chat> {
    scripted_chat(
        server_name,
        server,
        vec![
            Reply::ToolCalls {
                text: None,
                calls: vec![FakeToolCall::new("call_view", tool, arguments.to_string())],
            },
            Reply::text("Done."),
        ],
    )
}

/// A profile whose only MCP server is `server`, and a fake model that gives `replies` in turn.
fn scripted_chat(server_name: &str, server: Value, replies: Vec<Reply>) -> Result<Chat> {
    let runtime = tokio::runtime::Runtime::new()?;
    let fake = runtime.block_on(FakeLlm::start(Script::new(replies)))?;
    let dir = tempfile::Builder::new().prefix("porthole-views-").tempdir()?;
    let config = json!({ "mcpServers": { server_name: server } });
    std::fs::write(dir.path().join("config.json"), config.to_string())?;
    Ok(Chat {
        _runtime: runtime,
        fake,
        dir,
    })
}

impl Chat {
    /// The last message of the model's second request: the tool results it was given.
    fn tool_message(&self) -> Result<Value> {
        let posts: Vec<_> = self
            .fake
            .requests()
            .into_iter()
            .filter(|r| r.method == "POST")
            .collect();
        let request = posts.get(1).context("no second model request")?;
        request.body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .cloned()
            .context("no messages in the model request")
    }
}

fn launch(chat: &Chat) -> Result<App> {
    let url = chat.fake.base_url();
    App::launch(chat.dir.path(), &["--base-url", &url, "--model", "fake-model"], &[])
}

/// [`launch`], with a stand-in browser: the file where each URL it was asked to open is written
/// (absent until something is opened).
fn launch_with_recording_browser(chat: &Chat) -> Result<(App, PathBuf)> {
    let (browser, opened) = porthole_e2e::recording_browser(chat.dir.path())?;
    let url = chat.fake.base_url();
    let browser_env = browser.display().to_string();
    let app = App::launch(
        chat.dir.path(),
        &["--base-url", &url, "--model", "fake-model"],
        &[("BROWSER", browser_env.as_str())],
    )?;
    Ok((app, opened))
}

fn send(s: &Session, text: &str) -> Result<()> {
    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, &format!("{text}\u{E007}"))
}

/// Waits for `server` to be connected, then sends `text`.
fn ask(s: &Session, server: &str, text: &str) -> Result<()> {
    s.wait_for_element(
        &format!("[data-testid=server][data-server-name={server}][data-state=connected]"),
        WAIT,
    )?;
    send(s, text)
}

/// Waits until the last assistant message reads `text`.
fn wait_for_answer(s: &Session, text: &str) -> Result<()> {
    s.wait_for("the final answer", WAIT, |s| {
        let replies = s.find_all("[data-testid=message][data-role=assistant]")?;
        Ok(match replies.last() {
            Some(last) => (s.text(last)? == text).then_some(()),
            None => None,
        })
    })
}

/// The stored view-facing result of the conversation's only tool call.
fn view_facing(profile: &Path) -> Result<Value> {
    let store = Store::open(&profile.join("porthole.db"))?;
    let conversation = store
        .list_conversations()?
        .into_iter()
        .next()
        .context("no conversation")?;
    let call = store
        .tool_calls(&conversation.id)?
        .into_iter()
        .next()
        .context("no tool call")?;
    call.view_facing.context("no view-facing result")
}

fn frame_text(s: &Session) -> Result<String> {
    let body = s.find("body")?;
    Ok(s.property(&body, "textContent")?
        .as_str()
        .unwrap_or_default()
        .to_string())
}

/// Waits until the text of `card`'s view passes `check` (`what` names the wait), and returns it.
fn text_in_view(s: &Session, card: &str, what: &str, check: &dyn Fn(&str) -> bool) -> Result<String> {
    let css = format!("{card} iframe[data-testid=mcp-app-view]");
    s.wait_for_element(&css, WAIT)?;
    // The frame is found again at each look: a view re-created meanwhile (a card that left and
    // came back) has a new one, and the old element would show nothing for ever.
    s.wait_for(what, WAIT, |s| {
        let frame = s.find(&css)?;
        s.switch_to_frame(&frame)?;
        let text = frame_text(s);
        s.switch_to_parent()?;
        let text = text?;
        Ok(check(&text).then_some(text))
    })
}

/// Clicks the element with `data-testid=button` in `card`'s view.
fn click_in_view(s: &Session, card: &str, button: &str) -> Result<()> {
    let frame = s.find(&format!("{card} iframe[data-testid=mcp-app-view]"))?;
    s.switch_to_frame(&frame)?;
    let clicked = s.find(&format!("[data-testid={button}]")).and_then(|b| s.click(&b));
    s.switch_to_parent()?;
    clicked
}

/// Goes to a new chat (the views go) and back to the only conversation, until `card`'s view is
/// ready again.
fn leave_and_reopen(s: &Session, card: &str) -> Result<()> {
    s.click(&s.find("[data-testid=new-chat]")?)?;
    s.wait_for("the view to go", WAIT, |s| {
        Ok(s.find_all("iframe[data-testid=mcp-app-view]")?.is_empty().then_some(()))
    })?;
    s.click(&s.wait_for_element("[data-testid=conversation]", WAIT)?)?;
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    Ok(())
}

/// The widget state kept for the only tool call of the profile's only conversation.
fn kept_widget_state(profile: &Path) -> Result<Option<Value>> {
    let store = Store::open(&profile.join("porthole.db"))?;
    let Some(conversation) = store.list_conversations()?.into_iter().next() else {
        return Ok(None);
    };
    let Some(call) = store.tool_calls(&conversation.id)?.into_iter().next() else {
        return Ok(None);
    };
    Ok(store.widget_state(call.id)?)
}

#[test]
fn official_example_views_render_and_show_their_tool_result() -> Result<()> {
    let fixtures = fixtures();
    let mut failures = Vec::new();
    for example in examples() {
        let name = example["name"].as_str().unwrap();
        let tool = example["tool"].as_str().unwrap();
        let server = json!({
            "command": example["command"],
            "args": example["args"],
            "cwd": fixtures,
            "alwaysAllow": [tool],
        });
        let chat = chat(name, server, tool, &example["arguments"])?;
        let app = launch(&chat)?;
        let s = &app.session;
        ask(s, name, "Show me")?;
        let card = format!("[data-testid=tool-call][data-tool-name={tool}]");
        s.wait_for_element(&format!("{card}[data-status=ok]"), WAIT)?;
        let ready = s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT);
        if let Err(e) = ready {
            let state = s
                .find(&format!("{card} [data-testid=view-state]"))
                .and_then(|el| s.text(&el))
                .unwrap_or_default();
            failures.push(format!("{name}: the view did not get ready ({state}): {e}"));
            continue;
        }
        let frame = s.find(&format!("{card} iframe[data-testid=mcp-app-view]"))?;
        assert_eq!(
            s.attribute(&frame, "sandbox")?.as_deref(),
            Some("allow-scripts allow-same-origin")
        );

        // What the view must show: a value from the result it was sent, or a fixed string.
        let mut expected: Vec<String> = Vec::new();
        if let Some(text) = example["expect_in_view"].as_str() {
            expected.push(text.to_string());
        }
        if let Some(pointer) = example["expect_in_view_from_result"].as_str() {
            let result = view_facing(chat.dir.path())?;
            let value = result.pointer(pointer).cloned().unwrap_or(Value::Null);
            match value {
                Value::String(s) => expected.push(s),
                Value::Null => bail!("{name}: {pointer} is not in the result {result}"),
                other => expected.push(other.to_string()),
            }
        }
        s.switch_to_frame(&frame)?;
        let shown = s.wait_for("the view to show the tool result", WAIT, |s| {
            let text = frame_text(s)?;
            Ok(expected.iter().all(|e| text.contains(e.as_str())).then_some(text))
        });
        s.switch_to_parent()?;
        if let Err(e) = shown {
            failures.push(format!("{name}: expected {expected:?} in the view: {e}"));
        }
        // The model got the tool's own content, with no note replacing it.
        let last = chat.tool_message().ok();
        let content = last
            .as_ref()
            .map(|m| m["content"].as_str().unwrap_or_default().to_string());
        if content
            .as_deref()
            .is_none_or(|c| c.is_empty() || c.contains("rendered to the user"))
        {
            failures.push(format!("{name}: the model's tool result was {content:?}"));
        }
    }
    if !failures.is_empty() {
        bail!("{}", failures.join("\n"));
    }
    Ok(())
}

fn hostile_server() -> Value {
    json!({ "command": env!("CARGO_BIN_EXE_porthole-hostile-server"), "alwaysAllow": [
        "hostile_view", "oversized_view", "wrong_mime_view", "missing_view", "silent_view"
    ] })
}

#[test]
fn refused_views_say_why_and_the_model_still_gets_the_result() -> Result<()> {
    for (tool, reason) in [
        ("oversized_view", "limit"),
        ("wrong_mime_view", "MIME"),
        ("missing_view", "could not read"),
    ] {
        let chat = chat("hostile", hostile_server(), tool, &json!({}))?;
        let app = launch(&chat)?;
        let s = &app.session;
        ask(s, "hostile", "Show me")?;
        let card = format!("[data-testid=tool-call][data-tool-name={tool}]");
        let state = s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=refused]"), WAIT)?;
        let text = s.text(&state)?;
        assert!(text.to_lowercase().contains(&reason.to_lowercase()), "{tool}: {text}");
        assert!(s.find_all(&format!("{card} iframe")).unwrap_or_default().is_empty());
        // The answer still comes, and the model got the tool's text.
        wait_for_answer(s, "Done.")?;
        let last = chat.tool_message()?;
        assert!(last["content"].as_str().unwrap().contains("view"), "{tool}: {last}");
        assert!(
            !last["content"].as_str().unwrap().contains("Porthole:"),
            "no view note for a refused view"
        );
        // And the audit log says why.
        let store = Store::open(&chat.dir.path().join("porthole.db"))?;
        let audit = store.audit_entries(100)?;
        assert!(
            audit
                .iter()
                .any(|e| e.kind == AuditKind::Refused && e.tool.as_deref() == Some(tool)),
            "{tool}: {audit:?}"
        );
    }
    Ok(())
}

/// What the hostile page reports once its attacks are done. It reports in a log notification,
/// which lands in the app's log: the test never enters the frame while the attacks run, since
/// WebDriver's own scripts there would count as user activation and could let clipboard writes
/// through.
fn hostile_results(s: &Session, profile: &Path) -> Result<Value> {
    let logs = profile.join("logs");
    s.wait_for("the attacks to finish", Duration::from_secs(120), |_| {
        for entry in std::fs::read_dir(&logs)? {
            let path = entry?.path();
            if !path.is_file() {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for line in text.lines().filter(|l| l.contains("logger=\"hostile\"")) {
                if let Some(json) = line.split_once(" data=").map(|(_, d)| d.trim())
                    && let Ok(value @ Value::Array(_)) = serde_json::from_str::<Value>(json)
                {
                    return Ok(Some(value));
                }
            }
        }
        Ok(None)
    })
}

/// The hostile page served as an Apps SDK widget (`text/html+skybridge`) attacks through
/// `window.openai`: a model-only tool, another server's tool, links that are not https, an
/// oversized state, a flood of states past the layer's coalescing, a flood of follow-ups. The
/// compatibility layer refuses each as the bridge does, and the refusals are audited.
#[test]
fn a_hostile_widget_is_contained_through_window_openai() -> Result<()> {
    let mut server = hostile_server();
    server["alwaysAllow"] = json!(["hostile_widget"]);
    let chat = chat("hostile", server.clone(), "hostile_widget", &json!({}))?;
    // Another server, whose `echo` the widget must not reach.
    let config = json!({"mcpServers": {
        "hostile": server,
        "test": {"command": env!("CARGO_BIN_EXE_porthole-test-server")},
    }});
    std::fs::write(chat.dir.path().join("config.json"), config.to_string())?;
    let (app, opened) = launch_with_recording_browser(&chat)?;
    let s = &app.session;
    ask(s, "hostile", "Show me")?;
    let card = "[data-testid=tool-call][data-tool-name=hostile_widget]";
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    let results = hostile_results(s, chat.dir.path())?;
    let attacks = results.as_array().context("results are an array")?;
    let mut escaped = Vec::new();
    let mut counted = 0;
    for attack in attacks {
        let name = attack["name"].as_str().unwrap_or("?");
        if attack["expected_allowed"] == true || name == "handshake" {
            continue;
        }
        assert_eq!(
            attack["openai"], true,
            "only the attacks through window.openai run: {attack}"
        );
        counted += 1;
        match &attack["blocked"] {
            Value::Bool(true) => {}
            // Judged below, from the host's side.
            Value::Null if name == "openai_oversized_widget_state" || name == "openai_widget_state_flood" => {}
            other => escaped.push(format!("{name}: blocked={other} {}", attack["detail"])),
        }
    }
    assert_eq!(counted, 6, "the widget ran {counted} attacks: {results}");
    assert!(
        escaped.is_empty(),
        "attacks that were not blocked:\n{}",
        escaped.join("\n")
    );
    let control = attacks
        .iter()
        .find(|a| a["name"] == "openai_call_app_tool_allowed")
        .context("no positive control")?;
    assert_eq!(
        control["blocked"], false,
        "window.openai works for allowed calls: {control}"
    );

    // Host side: every refusal is audited; nothing reached the other server or the browser.
    let store = Store::open(&chat.dir.path().join("porthole.db"))?;
    let audit = store.audit_entries(1000)?;
    let reasons: Vec<String> = audit
        .iter()
        .filter_map(|e| e.detail["reason"].as_str().map(String::from))
        .collect();
    for (what, found) in [
        (
            "the model-only tool",
            audit.iter().any(|e| {
                e.kind == AuditKind::Call
                    && e.tool.as_deref() == Some("secret_model_only")
                    && e.detail["outcome"] == "refused"
            }),
        ),
        (
            "the other server's tool",
            audit.iter().any(|e| {
                e.kind == AuditKind::Call && e.tool.as_deref() == Some("echo") && e.detail["outcome"] == "refused"
            }),
        ),
        (
            "a non-https link",
            reasons.iter().any(|r| r == "only https links can be opened"),
        ),
        (
            "the oversized state",
            reasons.iter().any(|r| r.starts_with("setWidgetState: ")),
        ),
        ("the flood of states", reasons.iter().any(|r| r.starts_with("flood: "))),
        (
            "the flood of follow-ups",
            reasons.iter().any(|r| r == "too many requests to the user"),
        ),
    ] {
        assert!(found, "{what} is refused and audited: {audit:#?}");
    }
    let kept = kept_widget_state(chat.dir.path())?.unwrap_or(Value::Null);
    assert!(kept.get("pad").is_none(), "the oversized state is not kept");
    let log = std::fs::read_to_string(chat.dir.path().join("logs/servers/hostile.log")).unwrap_or_default();
    assert!(
        log.contains("tools/call app_echo"),
        "the server logs the calls it gets: {log}"
    );
    assert!(!log.contains("tools/call secret_model_only"), "{log}");
    assert!(
        !opened.exists(),
        "a widget got a link opened: {:?}",
        std::fs::read_to_string(&opened)
    );
    Ok(())
}

/// The hostile view runs 33 attacks on its host from inside its frame; every one must be
/// blocked, and the host-side traces (audit log, the server's own log, the conversations, the
/// browser) must show that nothing got through.
#[test]
fn a_hostile_view_is_contained() -> Result<()> {
    // The view's WebSocket attack aims here: any connection that arrives got past the CSP.
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let ws_port = listener.local_addr()?.port();
    let mut server = hostile_server();
    server["env"] = json!({ "HOSTILE_WS_PORT": ws_port.to_string() });
    let chat = chat("hostile", server, "hostile_view", &json!({}))?;
    let (app, opened) = launch_with_recording_browser(&chat)?;
    let s = &app.session;
    let main_url = s.url()?;
    ask(s, "hostile", "Show me")?;
    let card = "[data-testid=tool-call][data-tool-name=hostile_view]";
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    let results = hostile_results(s, chat.dir.path())?;
    // What the frame shows agrees with what it sent.
    let frame = s.find(&format!("{card} iframe[data-testid=mcp-app-view]"))?;
    s.switch_to_frame(&frame)?;
    let shown = s.property(&s.find("#results")?, "textContent")?;
    s.switch_to_parent()?;
    let shown: Value = serde_json::from_str(shown.as_str().unwrap_or("[]"))?;
    assert_eq!(shown, results, "the frame's #results and its log notification differ");

    let attacks = results.as_array().context("results are an array")?;
    let mut escaped = Vec::new();
    let mut counted = 0;
    for attack in attacks {
        let name = attack["name"].as_str().unwrap_or("?");
        if attack["expected_allowed"] == true || name == "handshake" {
            continue;
        }
        counted += 1;
        match &attack["blocked"] {
            Value::Bool(true) => {}
            // Only observable from the host: checked below.
            Value::Null if name == "webkit_ipc_message_handler" => {}
            // Judged at the TCP level below: whether anything reached the port it aimed at.
            _ if name == "websocket" => {}
            // Judged below: whether the text reached the system clipboard.
            _ if name == "clipboard_write" && attack["clipboard_text"].is_string() => {}
            other => escaped.push(format!("{name}: blocked={other} {}", attack["detail"])),
        }
    }
    assert!(counted >= 28, "the hostile view ran {counted} attacks: {results}");
    assert!(
        escaped.is_empty(),
        "attacks that were not blocked:\n{}",
        escaped.join("\n")
    );
    let control = attacks
        .iter()
        .find(|a| a["name"] == "app_echo_allowed")
        .context("no positive control")?;
    assert_eq!(
        control["blocked"], false,
        "the bridge works for allowed calls: {control}"
    );

    // A clipboard write the engine let through must not have reached the system clipboard.
    if let Some(text) = attacks
        .iter()
        .find(|a| a["name"] == "clipboard_write")
        .and_then(|a| a["clipboard_text"].as_str())
    {
        let clipboard = system_clipboard_text();
        eprintln!("clipboard after the attack: {clipboard:?}");
        assert_ne!(clipboard.as_deref(), Some(text), "a view wrote to the system clipboard");
    }
    let reached = listener.accept().is_ok();
    assert!(!reached, "the view's WebSocket reached 127.0.0.1:{ws_port}");

    // Host side: the page never left, no forged command ran, no link was opened.
    assert_eq!(s.url()?, main_url);
    let store = Store::open(&chat.dir.path().join("porthole.db"))?;
    let conversations = store.list_conversations()?;
    assert_eq!(
        conversations.len(),
        1,
        "a view could not create a conversation: {conversations:?}"
    );
    assert!(
        !opened.exists(),
        "a view got a link opened: {:?}",
        std::fs::read_to_string(&opened)
    );
    // The model-only tool never reached the server, and the refusal is in the audit log.
    let server_log = std::fs::read_to_string(chat.dir.path().join("logs/servers/hostile.log")).unwrap_or_default();
    assert!(!server_log.contains("tools/call secret_model_only"), "{server_log}");
    let audit = store.audit_entries(1000)?;
    assert!(
        audit
            .iter()
            .any(|e| e.kind == AuditKind::Call && e.tool.as_deref() == Some("secret_model_only")),
        "the refused call is audited"
    );
    assert!(
        audit
            .iter()
            .any(|e| e.detail["reason"].as_str().is_some_and(|r| r.starts_with("flood: "))),
        "the message flood is cut off and audited"
    );
    let dropped: Vec<String> = audit
        .iter()
        .filter(|e| e.kind == AuditKind::CspDropped)
        .map(|e| e.detail["entry"].as_str().unwrap_or_default().to_string())
        .collect();
    for entry in [
        "https://ok.example; script-src *",
        "'unsafe-eval'",
        "*",
        "http://insecure.example",
        "data:",
        "mcpview:",
    ] {
        assert!(
            dropped.iter().any(|d| d == entry),
            "{entry} dropped and audited: {dropped:?}"
        );
    }
    // The view rendered, so (and only so) the model's result carries the host's note after the
    // tool's own content.
    let tool_message = chat.tool_message()?;
    let content = tool_message["content"].as_str().unwrap_or_default();
    assert!(content.starts_with("hostile result"), "{content}");
    assert!(content.contains("interactive view is shown"), "{content}");
    // `porthole audit --json` prints the same log, one entry per line.
    let out = std::process::Command::new(porthole_e2e::porthole_binary())
        .args(["--profile", &chat.dir.path().display().to_string(), "audit", "--json"])
        .output()?;
    assert!(out.status.success());
    let printed: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    assert_eq!(printed.len(), audit.len());
    assert!(
        printed
            .iter()
            .any(|e| e["kind"] == "csp-dropped" && e["detail"]["entry"] == "*")
    );
    let view = audit
        .iter()
        .find(|e| e.kind == AuditKind::View)
        .context("the view is audited")?;
    let csp = view.detail["csp"].as_str().unwrap_or_default();
    assert!(csp.contains("connect-src https://ok.example wss://ws.example"), "{csp}");
    assert!(!csp.contains("unsafe-eval") && !csp.contains("insecure"), "{csp}");
    Ok(())
}

/// What the storage view shows: its count in localStorage and IndexedDB, its origin, and what
/// it could read of the window's other view frames.
#[derive(Debug)]
struct StorageView {
    count: String,
    idb: String,
    origin: String,
    reach: Value,
    src: String,
}

/// Sends `text` (the model then shows one more storage view) and reads the newest view.
fn next_storage_view(s: &Session, text: &str, answer: &str) -> Result<StorageView> {
    let before = s.find_all("iframe[data-testid=mcp-app-view]")?.len();
    send(s, text)?;
    wait_for_answer(s, answer)?;
    let frame = s.wait_for("the new view", WAIT, |s| {
        let frames = s.find_all("[data-testid=view][data-state=ready] iframe[data-testid=mcp-app-view]")?;
        Ok((frames.len() > before).then(|| frames.last().cloned()).flatten())
    })?;
    let src = s.attribute(&frame, "src")?.unwrap_or_default();
    assert_eq!(
        s.attribute(&frame, "sandbox")?.as_deref(),
        Some("allow-scripts allow-same-origin")
    );
    s.switch_to_frame(&frame)?;
    let read = (|| -> Result<StorageView> {
        let idb = s.wait_for("the view's IndexedDB count", WAIT, |s| {
            let text = s.text(&s.find("#idb")?)?;
            Ok(text.parse::<u32>().is_ok().then_some(text))
        })?;
        Ok(StorageView {
            count: s.text(&s.find("#count")?)?,
            idb,
            origin: s.text(&s.find("#origin")?)?,
            reach: serde_json::from_str(&s.text(&s.find("#reach")?)?)?,
            src: src.clone(),
        })
    })();
    s.switch_to_parent()?;
    read
}

/// Each server's views run on an origin of their own, stable across restarts: their
/// `localStorage` lasts (the host keeps it), IndexedDB lasts the session, another server's views
/// cannot read them, and clearing a server's view data starts it afresh on a new origin.
#[test]
fn a_servers_views_keep_their_storage_on_an_origin_of_their_own() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let mut replies = Vec::new();
    for (i, tool) in [
        "keeper__storage_view",
        "keeper__storage_view",
        "other__storage_view",
        "keeper__storage_view",
        "keeper__storage_view",
    ]
    .iter()
    .enumerate()
    {
        replies.push(Reply::ToolCalls {
            text: None,
            calls: vec![FakeToolCall::new(format!("call_{i}"), *tool, "{}")],
        });
        replies.push(Reply::text(format!("Done {i}.")));
    }
    let fake = runtime.block_on(FakeLlm::start(Script::new(replies)))?;
    let dir = tempfile::Builder::new().prefix("porthole-views-").tempdir()?;
    let server = json!({ "command": env!("CARGO_BIN_EXE_porthole-hostile-server"), "alwaysAllow": ["storage_view"] });
    let config = json!({ "mcpServers": { "keeper": server.clone(), "other": server } });
    std::fs::write(dir.path().join("config.json"), config.to_string())?;
    let url = fake.base_url();
    let args = ["--base-url", url.as_str(), "--model", "fake-model"];

    let app = App::launch(dir.path(), &args, &[])?;
    let s = &app.session;
    for name in ["keeper", "other"] {
        s.wait_for_element(
            &format!("[data-testid=server][data-server-name={name}][data-state=connected]"),
            WAIT,
        )?;
    }
    let first = next_storage_view(s, "one", "Done 0.")?;
    assert_eq!((first.count.as_str(), first.idb.as_str()), ("1", "1"), "{first:?}");
    let origin = first.origin.clone();
    assert!(
        origin.starts_with("mcpview://") && origin != "mcpview://localhost",
        "{first:?}"
    );
    assert!(first.src.starts_with(&format!("{origin}/view/")), "{first:?}");
    // The same server's next view: the same origin, its storage, and its sibling frame.
    let second = next_storage_view(s, "two", "Done 1.")?;
    assert_eq!((second.count.as_str(), second.idb.as_str()), ("2", "2"), "{second:?}");
    assert_eq!(second.origin, origin);
    assert_eq!(
        second.reach,
        json!([origin]),
        "its own server's other view is its own origin"
    );
    // Another server: another origin, none of the first's storage, and its frames out of reach.
    let other = next_storage_view(s, "three", "Done 2.")?;
    assert_eq!((other.count.as_str(), other.idb.as_str()), ("1", "1"), "{other:?}");
    assert_ne!(other.origin, origin);
    assert_eq!(other.reach, json!(["blocked", "blocked"]), "{other:?}");

    // The host keeps the first server's localStorage (reported within a second or so).
    let origin_host = origin.trim_start_matches("mcpview://").to_string();
    let key = format!("view_storage:{origin_host}");
    s.wait_for("the view's storage to be kept", WAIT, |_| {
        let kept = Store::open(&dir.path().join("porthole.db"))?.setting(&key)?;
        Ok(kept.filter(|v| v["count"] == "2").map(drop))
    })?;
    drop(app);

    // After a restart: the same origin, and its localStorage back.
    let app = App::launch(dir.path(), &args, &[])?;
    let s = &app.session;
    s.wait_for_element(
        "[data-testid=server][data-server-name=keeper][data-state=connected]",
        WAIT,
    )?;
    let again = next_storage_view(s, "four", "Done 3.")?;
    assert_eq!(again.origin, origin, "the origin is the same after a restart");
    assert_eq!(again.count, "3", "localStorage lasted across the restart: {again:?}");

    // Cleared in the server's settings: a new origin, nothing kept.
    s.click(&s.find("[data-testid=settings-button]")?)?;
    s.wait_for_element("[data-testid=settings]", WAIT)?;
    s.click(&s.find("[data-testid=settings-tab-servers]")?)?;
    let row = "[data-testid=server-row][data-server-name=keeper]";
    s.click(&s.wait_for_element(&format!("{row} [data-testid=server-clear-view-data]"), WAIT)?)?;
    let note = s.wait_for_element("[data-testid=server-settings-note]", WAIT)?;
    assert!(s.text(&note)?.contains("Cleared"), "{}", s.text(&note)?);
    s.click(&s.find("[data-testid=settings-close]")?)?;
    let cleared = next_storage_view(s, "five", "Done 4.")?;
    assert_ne!(cleared.origin, origin, "{cleared:?}");
    assert_eq!(cleared.count, "1", "nothing kept after clearing: {cleared:?}");
    let kept = Store::open(&dir.path().join("porthole.db"))?.setting(&key)?;
    assert!(kept.is_none(), "the old origin's storage is forgotten: {kept:?}");
    Ok(())
}

/// The text on the X11 CLIPBOARD selection of this display, read with GTK.
#[cfg(target_os = "linux")]
fn system_clipboard_text() -> Option<String> {
    std::thread::spawn(|| {
        gtk::init().ok()?;
        let clipboard = gtk::Clipboard::get(&gtk::gdk::SELECTION_CLIPBOARD);
        clipboard.wait_for_text().map(|t| t.to_string())
    })
    .join()
    .ok()
    .flatten()
}

#[cfg(not(target_os = "linux"))]
fn system_clipboard_text() -> Option<String> {
    None
}

/// The official basic-vanillajs example's view on its card, ready: its card's and ready state's
/// selectors, and the time its tool returned (which the view shows).
struct TimeView {
    card: String,
    ready: String,
    time: String,
}

fn time_view() -> Result<(Chat, App, TimeView)> {
    let example = examples()
        .into_iter()
        .find(|e| e["name"] == "basic-vanillajs")
        .context("the basic-vanillajs example")?;
    let tool = example["tool"].as_str().unwrap();
    let server = json!({
        "command": example["command"],
        "args": example["args"],
        "cwd": fixtures(),
        "alwaysAllow": [tool],
    });
    let chat = chat("basic", server, tool, &example["arguments"])?;
    let app = launch(&chat)?;
    let s = &app.session;
    ask(s, "basic", "What time is it?")?;
    let card = format!("[data-testid=tool-call][data-tool-name={tool}]");
    let ready = format!("{card} [data-testid=view-state][data-state=ready]");
    s.wait_for_element(&ready, WAIT)?;
    let time = view_facing(chat.dir.path())?["structuredContent"]["time"]
        .as_str()
        .context("the result's time")?
        .to_string();
    Ok((chat, app, TimeView { card, ready, time }))
}

/// Leaving a conversation tears its views down; coming back re-creates them from the stored
/// input and result (no new tool call), and once the retention has passed the card says the
/// view expired while the model-facing result stays.
#[test]
fn a_reopened_conversation_shows_its_view_again_until_it_expires() -> Result<()> {
    let (chat, app, TimeView { card, ready, time }) = time_view()?;
    let s = &app.session;

    let shows_time = |s: &Session| -> Result<()> {
        let frame = s.wait_for_element(&format!("{card} iframe[data-testid=mcp-app-view]"), WAIT)?;
        s.switch_to_frame(&frame)?;
        let shown = s.wait_for("the stored result in the view", WAIT, |s| {
            Ok(frame_text(s)?.contains(time.as_str()).then_some(()))
        });
        s.switch_to_parent()?;
        shown
    };
    shows_time(s)?;

    // Away and back: the view is torn down, then re-created with the stored result.
    s.click(&s.find("[data-testid=new-chat]")?)?;
    s.wait_for("the view to go", WAIT, |s| {
        Ok(s.find_all("iframe[data-testid=mcp-app-view]")?.is_empty().then_some(()))
    })?;
    s.click(&s.wait_for_element("[data-testid=conversation]", WAIT)?)?;
    s.wait_for_element(&ready, WAIT)?;
    shows_time(s)?;
    let posts = chat.fake.requests().into_iter().filter(|r| r.method == "POST").count();
    assert_eq!(posts, 2, "reopening asked the model nothing");

    // Eight days later (the retention is seven): the card says the view expired.
    s.click(&s.find("[data-testid=new-chat]")?)?;
    s.wait_for("the view to go", WAIT, |s| {
        Ok(s.find_all("iframe[data-testid=mcp-app-view]")?.is_empty().then_some(()))
    })?;
    let eight_days_on = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis() as i64
        + 8 * 24 * 3600 * 1000;
    Store::open(&chat.dir.path().join("porthole.db"))?.expire_views(eight_days_on)?;
    s.click(&s.wait_for_element("[data-testid=conversation]", WAIT)?)?;
    let expired = s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=expired]"), WAIT)?;
    assert!(s.text(&expired)?.contains("expired"));
    assert!(s.find_all(&format!("{card} iframe")).unwrap_or_default().is_empty());
    s.find(&format!("{card}[data-status=ok]"))?;
    Ok(())
}

/// A view that loads but never initializes fails visibly after the timeout, and the model is
/// not told that it rendered.
#[test]
fn a_view_that_never_starts_fails_visibly_and_the_model_is_not_told_it_rendered() -> Result<()> {
    let chat = chat("hostile", hostile_server(), "silent_view", &json!({}))?;
    let app = launch(&chat)?;
    let s = &app.session;
    ask(s, "hostile", "Show me")?;
    let card = "[data-testid=tool-call][data-tool-name=silent_view]";
    let state = s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=failed]"), WAIT)?;
    assert!(s.text(&state)?.contains("did not start"), "{}", s.text(&state)?);
    wait_for_answer(s, "Done.")?;
    let last = chat.tool_message()?;
    assert_eq!(last["content"], "silent view", "the tool's content, and no note");
    Ok(())
}

/// A view popped out of its card runs in a window of its own, with the call's result; closing
/// that window brings it back to the card.
#[test]
fn a_popped_out_view_gets_its_own_window_and_comes_back_when_it_closes() -> Result<()> {
    let (chat, app, TimeView { card, ready, time }) = time_view()?;
    let s = &app.session;
    let main = s.window_handle()?;
    // The server's alwaysAllow let the call run: its card says so.
    let mark = s.find(&format!("{card} [data-testid=tool-allowed-by]"))?;
    assert_eq!(s.attribute(&mark, "data-allowed-by")?.as_deref(), Some("config"));

    s.click(&s.wait_for_element(&format!("{card} [data-testid=view-pop-out]"), WAIT)?)?;
    let moved = s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=popped_out]"), WAIT)?;
    assert!(s.text(&moved)?.contains("window of its own"));
    assert!(
        s.find_all(&format!("{card} iframe")).unwrap_or_default().is_empty(),
        "the card no longer holds the frame"
    );
    let pop_out = s.wait_for("the pop-out window", WAIT, |s| {
        Ok(s.window_handles()?.into_iter().find(|h| *h != main))
    })?;
    // Built hidden, the window is shown once its page asks for the view: within 2 s, before the
    // 3 s after which a page that never asks is shown all the same. (Asked of the X server:
    // WebDriver's switch to a window shows it.)
    s.wait_for("the pop-out window on screen", Duration::from_secs(2), |_| {
        Ok(porthole_e2e::x_window_on_screen(" — Porthole")?.then_some(()))
    })?;
    s.switch_to_window(&pop_out)?;
    let frame = s.wait_for_element(
        "[data-testid=view][data-state=ready] iframe[data-testid=mcp-app-view]",
        WAIT,
    )?;
    assert_eq!(
        s.attribute(&frame, "sandbox")?.as_deref(),
        Some("allow-scripts allow-same-origin")
    );
    s.switch_to_frame(&frame)?;
    s.wait_for("the result in the popped-out view", WAIT, |s| {
        Ok(frame_text(s)?.contains(time.as_str()).then_some(()))
    })?;
    s.switch_to_parent()?;

    // Meanwhile the card only says where the view went: the pop-out's view events are its own.
    s.switch_to_window(&main)?;
    s.find(&format!("{card} [data-testid=view-state][data-state=popped_out]"))?;
    assert!(s.find_all(&format!("{card} iframe")).unwrap_or_default().is_empty());
    s.switch_to_window(&pop_out)?;

    // Esc (as "Back to the card" does) closes the window the way its close button does.
    // (WebDriver may report the window gone before it answers.)
    let _ = s.send_keys(&s.find("[data-testid=view-pop-in]")?, "\u{E00C}");
    s.switch_to_window(&main)?;
    s.wait_for("the pop-out window to close", WAIT, |s| {
        Ok((s.window_handles()?.len() == 1).then_some(()))
    })?;
    s.wait_for_element(&ready, WAIT)?;
    let frame = s.wait_for_element(&format!("{card} iframe[data-testid=mcp-app-view]"), WAIT)?;
    s.switch_to_frame(&frame)?;
    s.wait_for("the result back on the card", WAIT, |s| {
        Ok(frame_text(s)?.contains(time.as_str()).then_some(()))
    })?;
    s.switch_to_parent()?;
    let posts = chat.fake.requests().into_iter().filter(|r| r.method == "POST").count();
    assert_eq!(posts, 2, "moving the view asked the model nothing");
    Ok(())
}

/// Presses `keys` until `wanted` has the keyboard (at most `most` times), and fails if the
/// keyboard is ever lost to the page's body on the way. Returns what had it, in order.
fn press_until(s: &Session, keys: &str, wanted: &str, most: usize) -> Result<Vec<String>> {
    let mut seen = Vec::new();
    for _ in 0..most {
        s.press(keys)?;
        let now = s.focused()?;
        seen.push(now.clone());
        anyhow::ensure!(now != "body", "the keyboard was lost to the page: {seen:?}");
        if now == wanted {
            return Ok(seen);
        }
    }
    anyhow::bail!("{wanted} never had the keyboard: {seen:?}")
}

/// Waits until `wanted` has the keyboard.
fn wait_for_focus(s: &Session, wanted: &str) -> Result<()> {
    s.wait_for(&format!("{wanted} to have the keyboard"), WAIT, |s| {
        Ok((s.focused()? == wanted).then_some(()))
    })
}

/// The keyboard alone: a call is allowed with Ctrl+Shift+Enter; its view goes full screen and
/// back, into the corner (above the message box, moved with the arrow keys) and back, out to a
/// window of its own (named for its tool) and back. The keyboard is always where a person
/// expects it, never lost to the page, and Tab leaves the view for the card's own buttons.
#[test]
fn the_keyboard_alone_allows_a_call_and_takes_its_view_everywhere_and_back() -> Result<()> {
    let example = examples()
        .into_iter()
        .find(|e| e["name"] == "basic-vanillajs")
        .context("the basic-vanillajs example")?;
    let tool = example["tool"].as_str().unwrap();
    let server = json!({ "command": example["command"], "args": example["args"], "cwd": fixtures() });
    let chat = chat("basic", server, tool, &example["arguments"])?;
    let app = launch(&chat)?;
    let s = &app.session;
    ask(s, "basic", "What time is it?")?;
    let card = format!("[data-testid=tool-call][data-tool-name={tool}]");
    s.wait_for_element(&format!("{card}[data-status=awaiting-approval]"), WAIT)?;
    assert_eq!(s.focused()?, "composer");

    // Ctrl+Shift+Enter allows it once; typed from the composer, the keyboard stays there.
    s.press("\u{E009}\u{E008}\u{E007}")?;
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    assert_eq!(s.focused()?, "composer");
    assert!(
        s.find_all(&format!("{card} [data-testid=tool-allowed-by]"))?.is_empty(),
        "allowed once: no standing approval to mark"
    );

    // Back from the composer to the view's Full screen button; full screen and back (Esc).
    press_until(s, "\u{E008}\u{E004}", "view-enter-fullscreen", 15)?;
    s.press("\u{E007}")?;
    s.wait_for_element(&format!("{card} [data-testid=view-frame].fullscreen"), WAIT)?;
    wait_for_focus(s, "view-exit-fullscreen")?;
    s.press("\u{E00C}")?;
    s.wait_for_element(&format!("{card} [data-testid=view-frame].inline"), WAIT)?;
    wait_for_focus(s, "view-enter-fullscreen")?;

    // Into the view (its own buttons), and out again forward: the card's buttons come next.
    press_until(s, "\u{E008}\u{E004}", "mcp-app-view", 4)?;
    let out = press_until(s, "\u{E004}", "view-pop-out", 12)?;
    assert!(
        out.iter().all(|f| f == "mcp-app-view" || f == "view-pop-out"),
        "Tab out of the view went elsewhere first: {out:?}"
    );

    // Picture in picture: above the message box, moved by the arrow keys, back with Esc.
    press_until(s, "\u{E004}", "view-enter-pip", 3)?;
    s.press("\u{E007}")?;
    let pip = s.wait_for_element(&format!("{card} [data-testid=view-frame].pip"), WAIT)?;
    wait_for_focus(s, "view-exit-pip")?;
    let composer = s.find("form.composer")?;
    let (box_at, composer_at) = (s.rect(&pip)?, s.rect(&composer)?);
    let bottom = box_at["y"].as_f64().unwrap_or(0.0) + box_at["height"].as_f64().unwrap_or(0.0);
    assert!(
        bottom <= composer_at["y"].as_f64().unwrap_or(0.0),
        "the view covers the message box: {box_at} over {composer_at}"
    );
    press_until(s, "\u{E008}\u{E004}", "view-pip-handle", 3)?;
    s.press("\u{E012}\u{E012}\u{E012}\u{E013}")?;
    let moved = s.rect(&pip)?;
    assert_eq!(
        moved["x"].as_f64(),
        box_at["x"].as_f64().map(|x| x - 60.0),
        "three steps left: {moved}"
    );
    assert_eq!(
        moved["y"].as_f64(),
        box_at["y"].as_f64().map(|y| y - 20.0),
        "one step up: {moved}"
    );
    s.press("\u{E00C}")?;
    s.wait_for_element(&format!("{card} [data-testid=view-frame].inline"), WAIT)?;
    wait_for_focus(s, "view-enter-pip")?;

    // Out to a window of its own, named for its tool; the keyboard stays on the card meanwhile,
    // and is on Pop out again once the view is back.
    let main = s.window_handle()?;
    press_until(s, "\u{E008}\u{E004}", "view-pop-out", 3)?;
    s.press("\u{E007}")?;
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=popped_out]"), WAIT)?;
    wait_for_focus(s, "tool-call")?;
    let pop_out = s.wait_for("the pop-out window", WAIT, |s| {
        Ok(s.window_handles()?.into_iter().find(|h| *h != main))
    })?;
    s.switch_to_window(&pop_out)?;
    s.wait_for_element("[data-testid=view][data-state=ready]", WAIT)?;
    s.wait_for("the pop-out's title", WAIT, |s| {
        Ok((s.title()? == format!("{tool} — Porthole")).then_some(()))
    })?;
    let _ = s.press("\u{E00C}");
    s.switch_to_window(&main)?;
    s.wait_for("the pop-out window to close", WAIT, |s| {
        Ok((s.window_handles()?.len() == 1).then_some(()))
    })?;
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    wait_for_focus(s, "view-pop-out")?;
    Ok(())
}

/// A widget written for ChatGPT's Apps SDK (`openai/outputTemplate`, `text/html+skybridge`,
/// only `window.openai`) runs in Porthole: it gets the call's `structuredContent` and the
/// result's `_meta`, the theme and display mode; calls a tool offered to it (and is refused one
/// that is not); keeps its state across reopening the conversation; methods Porthole does not
/// offer are undefined; the card shows the tool's own status line; the model never sees the
/// private tool.
#[test]
fn a_widget_written_for_the_apps_sdk_runs_through_window_openai() -> Result<()> {
    let server = json!({
        "command": env!("CARGO_BIN_EXE_porthole-apps-sdk-server"),
        "alwaysAllow": ["pizza_map"],
    });
    let chat = chat("pizzaz", server.clone(), "pizza_map", &json!({"topping": "diavola"}))?;
    // Another server, whose tool the widget must not reach.
    let config = json!({"mcpServers": {
        "pizzaz": server,
        "other": {"command": env!("CARGO_BIN_EXE_porthole-test-server")},
    }});
    std::fs::write(chat.dir.path().join("config.json"), config.to_string())?;
    let app = launch(&chat)?;
    let s = &app.session;
    ask(s, "pizzaz", "Where can I get pizza?")?;
    wait_for_answer(s, "Done.")?;
    let card = "[data-testid=tool-call][data-tool-name=pizza_map]";
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    let status = s.text(&s.find(&format!("{card} [data-testid=tool-invocation]"))?)?;
    assert_eq!(status, "Found pizza places");
    let offered = chat
        .fake
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .context("a model request")?;
    let tools = offered.body["tools"].to_string();
    assert!(
        tools.contains("pizza_map") && tools.contains("secret_recipe"),
        "{tools}"
    );
    assert!(
        !tools.contains("pizza_count"),
        "a private tool is offered to no model: {tools}"
    );
    // The model hears that the widget is shown, and what it shows (`openai/widgetDescription`).
    let result = chat.tool_message()?.to_string();
    assert!(result.contains("Two places serve diavola"), "{result}");
    assert!(
        result.contains("what the view shows, as its server describes it: A map of pizza places"),
        "{result}"
    );

    let in_frame = |s: &Session, what: &str, check: &dyn Fn(&str) -> bool| text_in_view(s, card, what, check);
    let click_in_frame = |s: &Session, button: &str| click_in_view(s, card, button);
    let shown = in_frame(s, "the widget to render its toolOutput", &|t| {
        t.contains("Tony's (diavola)")
    })?;
    assert!(shown.contains("Luigi's (diavola)"), "{shown}");
    assert!(
        shown.contains("Note for the widget: only the widget sees this"),
        "{shown}"
    );
    assert!(
        shown.contains("Theme: light") && shown.contains("Mode: inline"),
        "{shown}"
    );
    assert!(shown.contains("uploadFile is undefined"), "{shown}");
    assert!(shown.contains("Favourite: none"), "{shown}");

    // A tool offered to the widget, and one that is not.
    click_in_frame(s, "count-button")?;
    in_frame(s, "the private tool's answer", &|t| t.contains("Count: 1"))?;
    click_in_frame(s, "secret-button")?;
    let refused = in_frame(s, "the model-only tool's answer", &|t| !t.contains("Secret: ?"))?;
    assert!(refused.contains("Secret: refused"), "{refused}");
    assert!(!refused.contains("patience"), "{refused}");
    click_in_frame(s, "foreign-button")?;
    let foreign = in_frame(s, "another server's tool's answer", &|t| !t.contains("Foreign: ?"))?;
    assert!(foreign.contains("Foreign: refused"), "{foreign}");
    assert!(!foreign.contains("Foreign: given"), "{foreign}");
    let audited = Store::open(&chat.dir.path().join("porthole.db"))?.audit_entries(200)?;
    let refusals: Vec<&Value> = audited
        .iter()
        .filter(|e| e.server.as_deref() == Some("pizzaz") && e.detail["outcome"] == "refused")
        .map(|e| &e.detail)
        .collect();
    assert!(refusals.len() >= 2, "both refused calls are audited: {audited:?}");

    // A follow-up lands in the composer for the person to send, as a view's ui/message does.
    click_in_frame(s, "follow-up-button")?;
    s.wait_for_element("[data-testid=composer-suggestion]", WAIT)?;
    let composer = s.find("[data-testid=composer]")?;
    assert_eq!(s.property(&composer, "value")?, json!("Show me more pizza places"));

    // Its state lasts: saved, then given back when the conversation is opened again.
    click_in_frame(s, "favourite-button")?;
    in_frame(s, "the favourite", &|t| t.contains("Favourite: Tony's"))?;
    let stored_state = || kept_widget_state(chat.dir.path());
    s.wait_for("the state to be kept", WAIT, |_| {
        Ok(stored_state()?.filter(|v| v["favourite"] == "Tony's").map(|_| ()))
    })?;

    // What the compatibility layer refuses, as the bridge would: a state over the limit (the
    // kept state unchanged, audited) and a non-https link; a flood of states keeps only the last.
    s.switch_to_frame(&s.find(&format!("{card} iframe[data-testid=mcp-app-view]"))?)?;
    let refused_link = s.execute_async(
        "window.openai.setWidgetState({favourite: 'x'.repeat(300000)});
         return await window.openai.openExternal({href: 'http://insecure.example/'}).then(() => 'opened', (e) => 'refused: ' + e.message);",
    );
    s.switch_to_parent()?;
    assert_eq!(refused_link?, json!("refused: only https links can be opened"));
    s.wait_for(
        "the oversized state and the link to be refused and audited",
        WAIT,
        |_| {
            let store = Store::open(&chat.dir.path().join("porthole.db"))?;
            let refused: Vec<String> = store
                .audit_entries(200)?
                .into_iter()
                .filter_map(|e| e.detail["reason"].as_str().map(String::from))
                .collect();
            let state = refused.iter().any(|r| r.starts_with("setWidgetState: "));
            let link = refused.iter().any(|r| r == "only https links can be opened");
            Ok((state && link).then_some(()))
        },
    )?;
    assert_eq!(stored_state()?.map(|v| v["favourite"].clone()), Some(json!("Tony's")));
    s.switch_to_frame(&s.find(&format!("{card} iframe[data-testid=mcp-app-view]"))?)?;
    let flooded = s.execute(
        "for (let i = 0; i < 2000; i++) window.openai.setWidgetState({favourite: \"Luigi's\", n: i}); return true;",
        json!([]),
    );
    s.switch_to_parent()?;
    flooded?;
    s.wait_for("the last of the flood to be kept", WAIT, |_| {
        Ok(stored_state()?.filter(|v| v["n"] == 1999).map(|_| ()))
    })?;

    leave_and_reopen(s, card)?;
    let again = in_frame(s, "the kept state", &|t| {
        t.contains("Favourite: Luigi's") && t.contains("Tony's (diavola)")
    })?;
    assert!(
        again.contains("Count: ?"),
        "a fresh widget, with its kept state: {again}"
    );
    let posts = chat.fake.requests().into_iter().filter(|r| r.method == "POST").count();
    assert_eq!(posts, 2, "the widget's state never went to the model");
    Ok(())
}

/// A widget built with a published Apps SDK framework (skybridge 2.0, from npm; its own hooks
/// only): it renders its `toolOutput`, calls a tool, keeps its state across a reopen, proposes a
/// follow-up and a link — skybridge speaks the MCP Apps bridge and `window.openai` at once, in one
/// frame, and both must work.
#[test]
fn a_widget_built_with_skybridge_runs_in_porthole() -> Result<()> {
    let scratch = tempfile::tempdir()?;
    let page = porthole_e2e::skybridge_widget(scratch.path())?;
    let server = json!({
        "command": env!("CARGO_BIN_EXE_porthole-apps-sdk-server"),
        "args": ["--skybridge-widget", page.display().to_string()],
        "alwaysAllow": ["topping_board"],
    });
    let chat = scripted_chat(
        "pizzaz",
        server,
        vec![
            Reply::ToolCalls {
                text: None,
                calls: vec![FakeToolCall::new(
                    "call_board",
                    "topping_board",
                    json!({"occasion": "a party"}).to_string(),
                )],
            },
            Reply::text("Done."),
            // The board offers a tool of its own (skybridge's useRegisterViewTool).
            Reply::ToolCalls {
                text: None,
                calls: vec![FakeToolCall::new("call_pick", "pizzaz_view__current_pick", "{}")],
            },
            Reply::text("You picked diavola."),
        ],
    )?;
    let app = launch(&chat)?;
    let s = &app.session;
    ask(s, "pizzaz", "What toppings are there?")?;
    wait_for_answer(s, "Done.")?;
    let card = "[data-testid=tool-call][data-tool-name=topping_board]";
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    let status = s.text(&s.find(&format!("{card} [data-testid=tool-invocation]"))?)?;
    assert_eq!(status, "Toppings laid out");
    let in_frame = |s: &Session, what: &str, check: &dyn Fn(&str) -> bool| text_in_view(s, card, what, check);
    let click_in_frame = |s: &Session, button: &str| click_in_view(s, card, button);
    let shown = in_frame(s, "the widget to render its toolOutput", &|t| {
        t.contains("Toppings for a party")
    })?;
    for expected in [
        "Occasion: a party",
        "diavola",
        "Note: fresh basil today",
        "Favourite: none",
        "Theme: light; Mode: inline",
    ] {
        assert!(shown.contains(expected), "{expected:?} in {shown}");
    }

    // Its state (skybridge keeps it in window.openai's widgetState) is saved with the call.
    click_in_frame(s, "pick-diavola")?;
    in_frame(s, "the pick", &|t| t.contains("Favourite: diavola"))?;
    s.wait_for("the state to be kept", WAIT, |_| {
        Ok(kept_widget_state(chat.dir.path())?
            .filter(|v| v["modelContent"]["favourite"] == "diavola")
            .map(|_| ()))
    })?;

    // A tool the widget may call (through skybridge's useCallTool), and one it may not.
    click_in_frame(s, "vote-button")?;
    in_frame(s, "the vote", &|t| t.contains("Votes: 1 for diavola"))?;
    click_in_frame(s, "secret-button")?;
    let refused = in_frame(s, "the model-only tool's answer", &|t| !t.contains("Secret: ?"))?;
    assert!(refused.contains("Secret: refused"), "{refused}");

    // The model calls the board's own tool, which answers from the board's live state.
    send(s, "Which topping did I pick?")?;
    wait_for_answer(s, "You picked diavola.")?;
    let posts: Vec<_> = chat
        .fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    let offered = posts.get(2).context("a third model request")?.body["tools"].to_string();
    assert!(offered.contains("pizzaz_view__current_pick"), "{offered}");
    let answered = posts.get(3).context("a fourth model request")?.body["messages"].to_string();
    assert!(answered.contains("The person picked diavola."), "{answered}");

    // A follow-up lands in the composer; a link is shown to the person before it opens.
    click_in_frame(s, "follow-up-button")?;
    s.wait_for_element("[data-testid=composer-suggestion]", WAIT)?;
    let composer = s.find("[data-testid=composer]")?;
    assert_eq!(s.property(&composer, "value")?, json!("Order a pizza with diavola"));
    click_in_frame(s, "link-button")?;
    let url = s.wait_for_element("[data-testid=link-url]", WAIT)?;
    assert_eq!(s.text(&url)?, "https://example.com/toppings");
    s.click(&s.find("[data-testid=link-cancel]")?)?;

    // Opened again: the same board, with the kept pick.
    leave_and_reopen(s, card)?;
    let again = in_frame(s, "the kept pick", &|t| {
        t.contains("Favourite: diavola") && t.contains("Toppings for a party")
    })?;
    assert!(
        again.contains("Votes: ?"),
        "a fresh widget, with its kept state: {again}"
    );
    let posts = chat.fake.requests().into_iter().filter(|r| r.method == "POST").count();
    assert_eq!(posts, 4, "the board asked the model nothing");
    let requests = chat.fake.requests();
    assert!(
        requests.iter().all(|r| !r.body.to_string().contains("modelContent")),
        "the widget's state never went to the model"
    );
    Ok(())
}

/// A tool that declares its view both ways (MCP Apps `_meta.ui.resourceUri` and the Apps SDK's
/// `openai/outputTemplate`) shows the MCP Apps one.
#[test]
fn with_both_metadata_shapes_the_mcp_apps_view_is_shown() -> Result<()> {
    let server = json!({
        "command": env!("CARGO_BIN_EXE_porthole-apps-sdk-server"),
        "args": ["--both"],
        "alwaysAllow": ["both_shapes"],
    });
    let chat = chat("pizzaz", server, "both_shapes", &json!({}))?;
    let app = launch(&chat)?;
    let s = &app.session;
    ask(s, "pizzaz", "Show both")?;
    wait_for_answer(s, "Done.")?;
    let card = "[data-testid=tool-call][data-tool-name=both_shapes]";
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    let frame = s.find(&format!("{card} iframe[data-testid=mcp-app-view]"))?;
    s.switch_to_frame(&frame)?;
    let shown = s.wait_for("the MCP Apps view's result", WAIT, |s| {
        let text = frame_text(s)?;
        Ok(text.contains("shown by the MCP Apps view").then_some(text))
    });
    let openai = s.execute("return typeof window.openai;", json!([]));
    s.switch_to_parent()?;
    let shown = shown?;
    assert!(shown.contains("an MCP Apps view"), "{shown}");
    assert_eq!(openai?, json!("undefined"), "an MCP Apps view gets no window.openai");
    Ok(())
}

/// A remote AG-UI agent's views (issue 20), against real parts: the scripted agent on the
/// published AG-UI packages wrapped in the published `@ag-ui/mcp-apps-middleware`, and the
/// official basic example server over Streamable HTTP. The agent is added in the settings; the
/// new chat is with it (chosen in its header, and said there after); the agent's call of the example's UI tool shows the
/// example's own HTML on the call's card, read through the agent; the view's button makes a
/// tool call that goes through the agent to the server, and the audit log records it. Then the
/// agent's progress activities move the next call's progress bar, and a view naming a server
/// the middleware does not know fails visibly with the middleware's reason; a request the agent
/// does not proxy fails in the view; Stop closes the run's stream; a cut stream is shown and
/// retried.
#[test]
fn a_remote_agents_view_renders_and_its_calls_go_through_the_agent() -> Result<()> {
    let scratch = tempfile::tempdir()?;
    let (_example, mcp_url) = porthole_e2e::example_over_http("basic-vanillajs");
    let clock_run = porthole_e2e::agui_clock_run();
    let mut later_run = vec![json!({"type": "RUN_STARTED", "threadId": "$threadId", "runId": "$runId"})];
    later_run.extend(porthole_e2e::agui_progress_call(1500));
    later_run.extend(json!([
        {"type": "TOOL_CALL_START", "toolCallId": "call-lost", "toolCallName": "lost_view"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "call-lost", "delta": "{\"n\":1}"},
        {"type": "TOOL_CALL_END", "toolCallId": "call-lost"},
        {"type": "TOOL_CALL_RESULT", "messageId": "t2", "toolCallId": "call-lost", "content": "shown elsewhere", "role": "tool"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "v2", "activityType": "mcp-apps", "replace": true,
         "content": {"result": {"content": [{"type": "text", "text": "shown elsewhere"}]}, "resourceUri": "ui://get-time/mcp-app.html",
                     "serverHash": "0000", "serverId": "nope", "toolInput": {"n": 1}}},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a3", "delta": "All done."},
        {"type": "RUN_FINISHED", "threadId": "$threadId", "runId": "$runId"}
    ]).as_array().cloned().unwrap_or_default());
    let slow_run = json!([
        {"type": "RUN_STARTED", "threadId": "$threadId", "runId": "$runId"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a6", "delta": "Thinking it over"},
        {"type": "WAIT", "ms": 30000},
        {"type": "RUN_FINISHED", "threadId": "$threadId", "runId": "$runId"}
    ]);
    let cut_run = json!([
        {"type": "RUN_STARTED", "threadId": "$threadId", "runId": "$runId"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a4", "delta": "Half a"},
        {"type": "CUT"}
    ]);
    let retried_run = json!([
        {"type": "RUN_STARTED", "threadId": "$threadId", "runId": "$runId"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a5", "delta": "The whole answer."},
        {"type": "RUN_FINISHED", "threadId": "$threadId", "runId": "$runId"}
    ]);
    let (_agent, agent_url, log) = porthole_e2e::agui_agent(
        scratch.path(),
        json!({
            "runs": [clock_run, later_run, slow_run, cut_run, retried_run],
            "mcpServers": [{"type": "http", "url": mcp_url, "serverId": "clock"}]
        }),
    );
    let dir = tempfile::Builder::new().prefix("porthole-views-").tempdir()?;
    std::fs::write(dir.path().join("config.json"), json!({"mcpServers": {}}).to_string())?;
    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;

    // The agent is added in the settings (a URL that is not HTTP is refused first)…
    s.click(&s.wait_for_element("[data-testid=settings-button]", WAIT)?)?;
    s.click(&s.wait_for_element("[data-testid=settings-tab-agents]", WAIT)?)?;
    s.click(&s.wait_for_element("[data-testid=agent-add]", WAIT)?)?;
    s.send_keys(&s.wait_for_element("[data-testid=agent-form-name]", WAIT)?, "clockwork")?;
    let url_field = s.find("[data-testid=agent-form-url]")?;
    s.send_keys(&url_field, "ftp://nowhere")?;
    s.click(&s.find("[data-testid=agent-form-save]")?)?;
    let refusal = s.wait_for_element("[data-testid=agent-form-error]", WAIT)?;
    assert!(s.text(&refusal)?.contains("http"), "{}", s.text(&refusal)?);
    s.clear(&url_field)?;
    s.send_keys(&url_field, &agent_url)?;
    s.click(&s.find("[data-testid=agent-form-save]")?)?;
    s.wait_for_element("[data-testid=agent-entry][data-agent=clockwork]", WAIT)?;
    s.click(&s.find("[data-testid=settings-close]")?)?;
    let written: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("config.json"))?)?;
    assert_eq!(written["agents"]["clockwork"]["url"], agent_url);

    // …then a new chat chooses who replies; the conversation then says who it is with.
    s.click(&s.wait_for_element("[data-testid=agent-choice] option[value=clockwork]", WAIT)?)?;
    send(s, "What time is it?")?;
    let header = s.wait_for_element("[data-testid=conversation-agent]", WAIT)?;
    assert!(s.text(&header)?.contains("clockwork"), "{}", s.text(&header)?);

    // The view renders the example's own HTML with the result the server gave the agent.
    let card = "[data-testid=tool-call][data-tool-name=get-time]";
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    let made_by = s.find(&format!("{card} [data-testid=tool-allowed-by]"))?;
    assert_eq!(s.text(&made_by)?, "Run by the remote agent");
    let first_time = view_facing(dir.path())?["structuredContent"]["time"]
        .as_str()
        .context("the view-facing result's time")?
        .to_string();
    text_in_view(s, card, "the result in the remote view", &|t| {
        t.contains(first_time.as_str())
    })?;
    let proxied = |method: &str| {
        porthole_e2e::agui_agent_log(&log)
            .into_iter()
            .filter_map(|l| l["forwardedProps"]["__proxiedMCPRequest"].as_object().cloned())
            .filter(|r| r["method"] == method)
            .collect::<Vec<_>>()
    };
    let reads = proxied("resources/read");
    assert!(
        reads
            .iter()
            .any(|r| r["params"]["uri"] == "ui://get-time/mcp-app.html" && r["serverId"] == "clock"),
        "the HTML was read through the agent: {reads:?}"
    );

    // The view's button: a tool call through the agent to the server, answered in the view.
    let frame = s.find(&format!("{card} iframe[data-testid=mcp-app-view]"))?;
    s.switch_to_frame(&frame)?;
    let clicked = s.find("#get-time-btn").and_then(|b| s.click(&b));
    s.switch_to_parent()?;
    clicked?;
    s.wait_for("the view's call through the agent", WAIT, |_| {
        Ok(proxied("tools/call")
            .into_iter()
            .find(|r| r["params"]["name"] == "get-time"))
    })?;
    text_in_view(s, card, "the new time in the view", &|t| {
        !t.contains(first_time.as_str())
    })?;
    let store = Store::open(&dir.path().join("porthole.db"))?;
    let audit = store.audit_entries(100)?;
    assert!(
        audit.iter().any(|e| e.kind == AuditKind::Call
            && e.server.as_deref() == Some("clockwork/clock")
            && e.tool.as_deref() == Some("get-time")
            && e.detail["outcome"] == "ok"),
        "the view's call is in the audit log: {audit:?}"
    );

    // A request the agent does not proxy (the published middleware proxies no resources/list)
    // fails in the view with the agent's reason.
    let frame = s.find(&format!("{card} iframe[data-testid=mcp-app-view]"))?;
    s.switch_to_frame(&frame)?;
    let answer = s.execute_async(
        "return await new Promise((resolve) => {
           addEventListener('message', (e) => {
             if (e.data && e.data.id === 4242) resolve(e.data.error ? 'refused: ' + e.data.error.message : 'answered');
           });
           parent.postMessage({jsonrpc: '2.0', id: 4242, method: 'resources/list', params: {}}, '*');
           setTimeout(() => resolve('no answer'), 20000);
         });",
    );
    s.switch_to_parent()?;
    let answer = answer?;
    let answer = answer.as_str().unwrap_or_default();
    assert!(
        answer.starts_with("refused: ") && answer.contains("not allowed"),
        "{answer}"
    );

    // Away and back: the stored view is shown again, its HTML read through the agent again.
    leave_and_reopen(s, card)?;
    text_in_view(s, card, "the stored result in the re-created view", &|t| {
        t.contains(first_time.as_str())
    })?;
    assert_eq!(proxied("resources/read").len(), reads.len() + 1);
    assert!(
        s.text(&s.find("[data-testid=conversation-agent]")?)?
            .contains("clockwork")
    );

    // Progress from the agent's activities, then a view of a server the middleware does not know.
    send(s, "Now the slow one")?;
    let slow = "[data-testid=tool-call][data-tool-name=slow_task]";
    s.wait_for("the progress bar at 75%", WAIT, |s| {
        Ok(match s.find_all(&format!("{slow} .tool-progress"))?.first() {
            Some(bar) => s.text(bar)?.contains("75%").then_some(()),
            None => None,
        })
    })?;
    let lost = "[data-testid=tool-call][data-tool-name=lost_view]";
    let state = s.wait_for_element(&format!("{lost} [data-testid=view-state][data-state=refused]"), WAIT)?;
    let reason = s.text(&state)?;
    assert!(reason.contains("Unknown server: nope"), "{reason}");
    wait_for_answer(s, "All done.")?;

    // Stop aborts the run: the agent sees its stream closed, and what came is kept.
    send(s, "Take your time")?;
    s.wait_for("the slow reply's start", WAIT, |s| {
        Ok(match s.find_all("[data-testid=message][data-role=assistant]")?.last() {
            Some(last) => s.text(last)?.contains("Thinking it over").then_some(()),
            None => None,
        })
    })?;
    s.click(&s.find("[data-testid=stop]")?)?;
    s.wait_for("the agent to see the run stopped", WAIT, |_| {
        Ok(porthole_e2e::agui_agent_log(&log)
            .iter()
            .any(|l| l.get("closedByClient").is_some())
            .then_some(()))
    })?;
    s.wait_for("the composer to take a message again", WAIT, |s| {
        Ok(s.find_all("[data-testid=stop]")?.is_empty().then_some(()))
    })?;

    // A stream cut mid-reply is shown with what came, and Retry runs the message again.
    send(s, "One more")?;
    let error = s.wait_for_element("[data-testid=turn-error]", WAIT)?;
    assert!(s.text(&error)?.contains("cut"), "{}", s.text(&error)?);
    s.click(&s.find("[data-testid=turn-error] [data-testid=retry]")?)?;
    wait_for_answer(s, "The whole answer.")?;
    Ok(())
}
