//! The real Porthole window under Xvfb, driven by tauri-driver + WebKitWebDriver.
//! Run with `make test` (or `cargo test -p porthole-e2e --features e2e` with a display).

use std::time::Duration;

use anyhow::{Context, Result};
use porthole_e2e::{App, screenshot_dir};
use porthole_fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

fn profile() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("porthole-e2e-").tempdir().unwrap()
}

/// A server that fails to start says why on its row: the line of its stderr that tells (Node's
/// "Cannot find module", not the version line Node ends with). Its log marks each start with the
/// time; once the cause is gone, Reconnect starts it again.
#[test]
fn a_server_that_fails_to_start_says_why_and_reconnects() -> Result<()> {
    let dir = profile();
    let fixed = dir.path().join("fixed");
    let script = format!(
        "if [ -f '{}' ]; then exec '{}'; else exec node /nonexistent/porthole-missing-server.js; fi",
        fixed.display(),
        env!("CARGO_BIN_EXE_porthole-test-server")
    );
    let config = json!({"mcpServers": {"flaky": {"command": "sh", "args": ["-c", script]}}});
    std::fs::write(dir.path().join("config.json"), config.to_string())?;
    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;
    let row = "[data-testid=server][data-server-name=flaky]";
    s.wait_for_element(&format!("{row}[data-state=failed]"), WAIT)?;
    let error = s.text(&s.find(&format!("{row} [data-testid=server-error]"))?)?;
    assert!(
        error.contains("Error: Cannot find module '/nonexistent/porthole-missing-server.js'"),
        "{error}"
    );
    std::fs::write(&fixed, "")?;
    s.click(&s.find(&format!("{row} [data-testid=server-reconnect]"))?)?;
    s.wait_for_element(&format!("{row}[data-state=connected]"), WAIT)?;
    assert!(s.find_all(&format!("{row} [data-testid=server-error]"))?.is_empty());
    assert!(s.find_all(&format!("{row} [data-testid=server-reconnect]"))?.is_empty());
    let log = std::fs::read_to_string(dir.path().join("logs/servers/flaky.log"))?;
    let starts: Vec<&str> = log.lines().filter(|l| l.contains(": the server started")).collect();
    assert_eq!(starts.len(), 2, "{log}");
    assert!(
        starts.iter().all(|l| l.starts_with("---- 20") && l.contains('Z')),
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("Cannot find module") && l.as_bytes()[2] == b':'),
        "each line has its time: {log}"
    );
    Ok(())
}

#[test]
fn window_opens_with_title_sidebar_transcript_and_composer() -> Result<()> {
    let dir = profile();
    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;
    assert_eq!(s.title()?, "Porthole");
    s.find("aside.sidebar")?;
    s.find("[data-testid=transcript]")?;
    let composer = s.find("[data-testid=composer]")?;
    assert_eq!(s.property(&composer, "tagName")?, "TEXTAREA");
    s.find("[data-testid=send]")?;
    // On screen (the window is built hidden and shown once its composer is ready), with the
    // keyboard in the composer.
    s.wait_for(
        "the window on screen, its composer focused",
        Duration::from_secs(5),
        |s| {
            let v = s.execute(
                r#"return document.visibilityState === "visible"
                 && document.activeElement?.dataset.testid === "composer";"#,
                json!([]),
            )?;
            Ok((v == json!(true)).then_some(()))
        },
    )?;
    // A fresh profile was created in the folder we passed with --profile.
    assert!(dir.path().join("config.json").is_file());
    assert!(dir.path().join("logs").is_dir());
    Ok(())
}

#[test]
fn composer_takes_text_and_enter_sends_it() -> Result<()> {
    let dir = profile();
    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;
    let composer = s.find("[data-testid=composer]")?;
    let send = s.find("[data-testid=send]")?;
    assert_eq!(
        s.property(&send, "disabled")?,
        true,
        "send is disabled while the composer is empty"
    );

    // Shift+Enter is a new line, not a send.
    s.send_keys(&composer, "first line\u{E008}\u{E007}\u{E008}second line")?;
    assert_eq!(s.property(&composer, "value")?, "first line\nsecond line");
    assert!(s.find_all("[data-testid=message]")?.is_empty());

    s.send_keys(&composer, "\u{E007}")?;
    let message = s.wait_for_element("[data-testid=message][data-role=user]", WAIT)?;
    assert_eq!(s.text(&message)?, "first line\nsecond line");
    assert_eq!(
        s.property(&composer, "value")?,
        "",
        "the composer is emptied after sending"
    );
    // The turn ends at once, saying why (no model): the window settles before the next send.
    s.wait_for_element("[data-testid=message-error]", WAIT)?;

    // The send button works too, and no assistant reply is invented without a model: the
    // reason is shown where the reply would be.
    s.send_keys(&composer, "via the button")?;
    s.click(&s.find("[data-testid=send]")?)?;
    s.wait_for("two user messages", WAIT, |s| {
        Ok((s.find_all("[data-testid=message][data-role=user]")?.len() == 2).then_some(()))
    })?;
    let error = s.wait_for_element("[data-testid=message-error]", WAIT)?;
    assert!(s.text(&error)?.contains("No model can answer"), "{}", s.text(&error)?);
    assert!(s.find_all("[data-testid=message][data-role=assistant]")?.is_empty());
    Ok(())
}

/// The provider flags given when opening the app apply to its chat: a message goes to the
/// (fake) model, the reply streams in, a tool call waits for approval, runs on the real test
/// server once allowed, and the model gets its result.
#[test]
fn chat_with_a_model_streams_the_reply_and_runs_an_approved_tool_call() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let fake = runtime.block_on(FakeLlm::start(Script {
        replies: vec![
            Reply::ToolCalls {
                text: Some("Let me echo that.".into()),
                calls: vec![FakeToolCall::new("call_w", "echo", r#"{"text":"from the window"}"#)],
            },
            Reply::EchoToolResults,
        ],
        api_key: Some("sk-window-test".into()),
        models: vec![],
        chunk_delay_ms: 20,
    }))?;
    let dir = profile();
    let config = json!({"mcpServers": {"test": {"command": env!("CARGO_BIN_EXE_porthole-test-server")}}});
    std::fs::write(dir.path().join("config.json"), config.to_string())?;
    let url = fake.base_url();
    let app = App::launch(
        dir.path(),
        &["--provider", "openai", "--base-url", &url, "--model", "fake-model"],
        &[("OPENAI_API_KEY", "sk-window-test")],
    )?;
    let s = &app.session;
    let model = s.wait_for_element("[data-testid=model-info]", WAIT)?;
    s.wait_for("the model line", WAIT, |s| {
        Ok(s.text(&model)?.contains("fake-model").then_some(()))
    })?;
    s.wait_for_element(
        "[data-testid=server][data-server-name=test][data-state=connected]",
        WAIT,
    )?;

    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, "Echo something, please\u{E007}")?;
    s.wait_for_element(
        "[data-testid=tool-call][data-tool-name=echo][data-status=awaiting-approval]",
        WAIT,
    )?;
    let first = s.text(&s.find("[data-testid=message][data-role=assistant]")?)?;
    assert_eq!(first, "Let me echo that.");
    s.click(&s.find("[data-testid=approve-once]")?)?;
    s.wait_for_element("[data-testid=tool-call][data-tool-name=echo][data-status=ok]", WAIT)?;
    s.wait_for("the final answer", WAIT, |s| {
        let replies = s.find_all("[data-testid=message][data-role=assistant]")?;
        match replies.last() {
            Some(last) if replies.len() == 2 => Ok((s.text(last)? == "Tool results: from the window").then_some(())),
            _ => Ok(None),
        }
    })?;
    // The model got the tool's result, and the key was sent.
    let posts: Vec<_> = fake.requests().into_iter().filter(|r| r.method == "POST").collect();
    assert_eq!(posts.len(), 2);
    assert_eq!(posts[1].header("authorization"), Some("Bearer sk-window-test"));
    let last = posts[1].body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["content"], "from the window");
    // The conversation is listed, titled by its first message.
    let listed = s.wait_for_element("[data-testid=conversation]", WAIT)?;
    let title = s.property(&listed, "textContent")?;
    assert_eq!(title.as_str().map(str::trim), Some("Echo something, please"), "{title}");
    Ok(())
}

#[test]
fn demo_server_tools_are_listed_with_their_kinds() -> Result<()> {
    let dir = profile();
    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;
    s.wait_for_element(
        "[data-testid=server][data-server-name=porthole-demo][data-state=connected]",
        WAIT,
    )?;
    let kinds = s.execute(
        "return Object.fromEntries([...document.querySelectorAll('[data-testid=tool]')]
           .map(e => [e.dataset.toolName, e.dataset.kind]));",
        json!([]),
    )?;
    assert_eq!(
        kinds,
        json!({
            "list_directory": "ui",
            "poll_system_stats": "app-only",
            "sample_cpu": "plain",
            "sha256": "model-only",
            "system_monitor": "ui",
            "weather": "ui",
        })
    );
    let summary = s.find("[data-testid=tool-summary]")?;
    assert_eq!(s.text(&summary)?, "6 tools, 4 with views");
    // The welcome card offers the UI tools the model can call (not the app-only one).
    let welcome = s.text(&s.find(".welcome")?)?;
    assert!(
        welcome.contains("system_monitor") && !welcome.contains("poll_system_stats"),
        "{welcome}"
    );
    s.screenshot(&screenshot_dir().join("main-window.png"))?;
    Ok(())
}

#[test]
fn a_dead_server_and_a_bad_config_entry_are_shown_and_the_demo_still_loads() -> Result<()> {
    let dir = profile();
    let extra = dir.path().join("extra.json");
    std::fs::write(
        &extra,
        r#"{
  "mcpServers": {
    "ghost": { "command": "/nonexistent/mcp-server" },
    "typo": { "comand": "x" }
  }
}"#,
    )?;
    let app = App::launch(dir.path(), &["--mcp-config", extra.to_str().unwrap()], &[])?;
    let s = &app.session;
    s.wait_for_element(
        "[data-testid=server][data-server-name=porthole-demo][data-state=connected]",
        WAIT,
    )?;
    let ghost = s.wait_for_element("[data-testid=server][data-server-name=ghost][data-state=failed]", WAIT)?;
    assert!(s.text(&ghost)?.contains("cannot start"), "{}", s.text(&ghost)?);
    let problems = s.text(&s.find("[data-testid=config-problems]")?)?;
    assert!(
        problems.contains("extra.json:4") && problems.contains("\"typo\"") && problems.contains("comand"),
        "{problems}"
    );
    Ok(())
}

#[test]
fn the_page_cannot_leave_the_app_open_windows_or_call_undeclared_commands() -> Result<()> {
    let dir = profile();
    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;
    let start = s.url()?;

    // A new window is refused.
    let opened = s.execute("return window.open('http://127.0.0.1:9/') === null;", json!([]))?;
    assert_eq!(opened, true);

    // Navigation away from the app is refused: the page stays and still works.
    s.execute("window.location.href = 'http://127.0.0.1:9/'; return null;", json!([]))?;
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(s.url()?, start);
    s.find("[data-testid=composer]")?;

    // The app's own commands answer; a Tauri core command not in our capability is refused.
    let answers = s.execute_async(
        "const out = {};
         try { out.info = (await window.__TAURI_INTERNALS__.invoke('app_info')).version; } catch (e) { out.info = 'ERR ' + e; }
         try { await window.__TAURI_INTERNALS__.invoke('plugin:window|close', { label: 'main' }); out.close = 'allowed'; }
         catch (e) { out.close = 'refused: ' + e; }
         try { await window.__TAURI_INTERNALS__.invoke('no_such_command'); out.unknown = 'allowed'; }
         catch (e) { out.unknown = 'refused: ' + e; }
         out.geolocation = await new Promise(r => navigator.geolocation.getCurrentPosition(
           () => r('granted'), e => r('error ' + e.code), { timeout: 5000 }));
         return out;",
    )?;
    assert_eq!(answers["info"], env!("CARGO_PKG_VERSION"));
    assert!(answers["close"].as_str().unwrap().starts_with("refused"), "{answers}");
    assert!(answers["unknown"].as_str().unwrap().starts_with("refused"), "{answers}");
    // Device permissions are denied by the shell (1 = PERMISSION_DENIED).
    assert_eq!(answers["geolocation"], "error 1", "{answers}");
    Ok(())
}

#[test]
fn dark_system_theme_gives_a_dark_window() -> Result<()> {
    let dir = profile();
    let light = App::launch(dir.path(), &[], &[("GTK_THEME", "Adwaita")])?;
    let light_bg = background(&light)?;
    light.session.screenshot(&screenshot_dir().join("light.png"))?;
    drop(light);
    let dark = App::launch(dir.path(), &[], &[("GTK_THEME", "Adwaita:dark")])?;
    let dark_bg = background(&dark)?;
    dark.session.screenshot(&screenshot_dir().join("dark.png"))?;
    assert!(luminance(&light_bg) > 200.0, "light background {light_bg}");
    assert!(luminance(&dark_bg) < 60.0, "dark background {dark_bg}");
    Ok(())
}

/// The profile the page shows (named by the shell) and the theme its page keeps for its next
/// start (in WebKit's storage, one for all of the user's profiles), and the theme shown.
fn kept_theme(app: &App) -> Result<(String, Option<String>, String)> {
    let seen = app.session.execute(
        "const d = document.documentElement, p = d.dataset.profile || '';
         return [p, localStorage.getItem('porthole.theme@' + p), d.dataset.theme || ''];",
        json!([]),
    )?;
    Ok((
        seen[0].as_str().unwrap_or("").to_string(),
        seen[1].as_str().map(String::from),
        seen[2].as_str().unwrap_or("").to_string(),
    ))
}

/// A window starts in the theme its profile was left in (before its setting comes, from what
/// the page kept), never in another profile's: the shell names each profile for the page.
#[test]
fn each_profile_starts_in_its_own_theme() -> Result<()> {
    let (work, home) = (profile(), profile());
    let app = App::launch(work.path(), &[], &[])?;
    let s = &app.session;
    s.click(&s.wait_for_element("[data-testid=settings-button]", WAIT)?)?;
    s.wait_for_element("[data-testid=settings]", WAIT)?;
    if let Some(tab) = s.find_all("[data-testid=settings-tab-general]")?.first() {
        s.click(tab)?;
    }
    s.click(&s.wait_for_element("[data-testid=theme-dark]", WAIT)?)?;
    let work_key = s.wait_for("the dark theme kept for the next start", WAIT, |_| {
        let (key, kept, _) = kept_theme(&app)?;
        Ok((kept.as_deref() == Some("dark")).then_some(key))
    })?;
    assert_eq!(work_key.len(), 16, "a page key names the profile: {work_key:?}");
    drop(app);

    let app = App::launch(home.path(), &[], &[])?;
    let (home_key, kept, shown) = kept_theme(&app)?;
    assert_ne!(home_key, work_key, "another profile, another page key");
    assert_eq!(home_key.len(), 16);
    // Its own setting ("system"), once it has come; never the other profile's dark.
    assert_ne!(kept.as_deref(), Some("dark"), "the other profile's theme to start from");
    assert_eq!(shown, "light");
    drop(app);

    let app = App::launch(work.path(), &[], &[])?;
    let (again, kept, shown) = kept_theme(&app)?;
    assert_eq!(again, work_key, "the same profile, the same page key");
    assert_eq!(kept.as_deref(), Some("dark"));
    assert_eq!(shown, "dark");
    Ok(())
}

/// The page's text is drawn in the desktop's interface font (GTK's `gtk-font-name`, here from a
/// settings file; a monospace family, so it is neither of the engine's default fonts), which
/// the app names for the page (src-tauri/src/desktop_font.rs).
#[test]
fn the_page_is_in_the_desktops_font() -> Result<()> {
    let dir = profile();
    let gtk = tempfile::tempdir()?;
    std::fs::create_dir_all(gtk.path().join("gtk-3.0"))?;
    std::fs::write(
        gtk.path().join("gtk-3.0/settings.ini"),
        "[Settings]\ngtk-font-name=DejaVu Sans Mono 11\n",
    )?;
    let config_dirs = gtk.path().display().to_string();
    let app = App::launch(dir.path(), &[], &[("XDG_CONFIG_DIRS", config_dirs.as_str())])?;
    // One line of text as wide as the page draws it, and as wide in each named font.
    let widths = app.session.execute(
        r#"const width = (family) => {
             const probe = document.createElement("span");
             probe.textContent = "Porthole draws this in the desktop's font";
             probe.style.whiteSpace = "pre";
             probe.style.position = "absolute";
             if (family) probe.style.fontFamily = family;
             document.querySelector("main.chat").appendChild(probe);
             const w = probe.getBoundingClientRect().width;
             probe.remove();
             return w;
           };
           return [width(null), width('"DejaVu Sans Mono"'), width("sans-serif"), width("serif")];"#,
        json!([]),
    )?;
    let w: Vec<f64> = widths
        .as_array()
        .context("widths")?
        .iter()
        .filter_map(|v| v.as_f64())
        .collect();
    assert_eq!(w.len(), 4, "{widths}");
    assert!(
        (w[0] - w[1]).abs() < 0.5,
        "the page's text is not in DejaVu Sans Mono: {w:?}"
    );
    assert!(
        (w[1] - w[2]).abs() > 5.0 && (w[1] - w[3]).abs() > 5.0,
        "the desktop's font cannot be told from the engine's defaults here: {w:?}"
    );
    // Named by the app, before the page ran: the page's first style does not read GTK's
    // settings itself (`system-ui` would, ~11 ms of start-up).
    let named = app.session.execute(
        r#"return getComputedStyle(document.documentElement).getPropertyValue("--desktop-font").trim();"#,
        json!([]),
    )?;
    assert_eq!(named, json!("\"DejaVu Sans Mono\""));
    Ok(())
}

fn background(app: &App) -> Result<String> {
    app.session
        .wait_for_element("[data-testid=server][data-state=connected]", WAIT)?;
    let v = app.session.execute(
        "return getComputedStyle(document.documentElement).backgroundColor;",
        json!([]),
    )?;
    Ok(v.as_str().unwrap_or("").to_string())
}

fn luminance(css: &str) -> f64 {
    let nums: Vec<f64> = css
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .split(|c: char| !c.is_ascii_digit() && c != '.')
        .filter_map(|n| n.parse().ok())
        .collect();
    match nums.as_slice() {
        [r, g, b, ..] => 0.2126 * r + 0.7152 * g + 0.0722 * b,
        _ => f64::NAN,
    }
}

#[test]
fn a_servers_question_is_answered_in_the_window() -> Result<()> {
    let dir = profile();
    let extra = dir.path().join("asker.json");
    std::fs::write(
        &extra,
        serde_json::to_string(&json!({"mcpServers": {"asker": {
            "command": env!("CARGO_BIN_EXE_porthole-test-server"), "args": ["--elicit-on-start"]
        }}}))?,
    )?;
    let app = App::launch(dir.path(), &["--mcp-config", extra.to_str().unwrap()], &[])?;
    let s = &app.session;
    let dialog = s.wait_for_element("[data-testid=elicitation]", WAIT)?;
    let shown = s.text(&dialog)?;
    assert!(
        shown.contains("asker asks") && shown.contains("Which name should the test server use?"),
        "{shown}"
    );
    // The form starts from the schema's defaults.
    let name = s.find("[data-testid=elicitation] input[name=name]")?;
    assert_eq!(s.property(&name, "value")?, "Ada");
    s.clear(&name)?;
    // A required field left empty is refused in the form, with the reason.
    s.click(&s.find("[data-testid=elicitation-accept]")?)?;
    s.wait_for_element("[data-testid=elicitation] [role=alert]", WAIT)?;
    s.send_keys(&name, "Grace")?;
    s.send_keys(&s.find("[data-testid=elicitation] input[name=age]")?, "85")?;
    s.click(&s.find("[data-testid=elicitation-accept]")?)?;
    s.wait_for("the dialog to close", WAIT, |s| {
        Ok(s.find_all("[data-testid=elicitation]")?.is_empty().then_some(()))
    })?;
    // The server got the answer: it writes it to its stderr, which Porthole files in its log.
    let log = dir.path().join("logs/servers/asker.log");
    let answer = s.wait_for("the answer in the server's log", WAIT, |_| {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        Ok(text
            .lines()
            .find(|l| l.contains("elicitation answer"))
            .map(str::to_string))
    })?;
    assert!(answer.contains(r#""action":"accept""#), "{answer}");
    assert!(
        answer.contains(r#""name":"Grace""#) && answer.contains(r#""age":85"#),
        "{answer}"
    );
    assert!(
        answer.contains(r#""color":"green""#),
        "defaults the user kept are sent: {answer}"
    );
    Ok(())
}

/// Light and dark pictures of the window for the README, taken while a view is on screen
/// (`make screenshots` writes them to `tests/screenshots/`).
fn readme_screenshot(s: &porthole_e2e::Session, name: &str) -> Result<()> {
    s.screenshot(&screenshot_dir().join(name))
}

/// The theme the view inside `frame` applied (its document's `data-theme`, as the MCP Apps SDK
/// sets it from the host context), one of the host's style variables it applied, and the
/// background its body is painted with.
fn view_theme(s: &porthole_e2e::Session, frame: &porthole_e2e::Element) -> Result<(String, String, String)> {
    s.switch_to_frame(frame)?;
    let seen = s.execute(
        "const d = document.documentElement;
         return [d.getAttribute('data-theme') || '',
                 d.style.getPropertyValue('--color-background-primary').trim(),
                 getComputedStyle(document.body).backgroundColor];",
        json!([]),
    );
    s.switch_to_parent()?;
    let seen = seen?;
    let text = |i: usize| seen[i].as_str().unwrap_or("").to_string();
    Ok((text(0), text(1), text(2)))
}

/// The chat product in the real window: the model's reply streams in as Markdown, a UI tool call
/// is approved, its view renders, the model/view panel shows both facings, and switching the
/// theme in Settings reaches the live view (theme and style variables).
#[test]
fn a_chat_streams_markdown_shows_the_view_and_both_facings_and_the_theme_reaches_the_view() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let fake = runtime.block_on(FakeLlm::start(Script {
        replies: vec![
            Reply::ToolCalls {
                text: Some("Here is **this machine** now:\n\n```rust\nfn main() { println!(\"hi\"); }\n```\n".into()),
                calls: vec![FakeToolCall::new("call_monitor", "system_monitor", "{}")],
            },
            Reply::text("The monitor is on screen."),
        ],
        api_key: None,
        models: vec![],
        chunk_delay_ms: 15,
    }))?;
    let dir = profile();
    let url = fake.base_url();
    let app = App::launch(dir.path(), &["--base-url", &url, "--model", "fake-model"], &[])?;
    let s = &app.session;
    s.wait_for_element(
        "[data-testid=server][data-server-name=porthole-demo][data-state=connected]",
        WAIT,
    )?;
    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, "How busy is this machine?\u{E007}")?;

    // Markdown: bold text and a highlighted code block with a copy button.
    let card = "[data-testid=tool-call][data-tool-name=system_monitor]";
    s.wait_for_element(&format!("{card}[data-status=awaiting-approval]"), WAIT)?;
    let strong = s.find("[data-testid=message][data-role=assistant] [data-testid=markdown] strong")?;
    assert_eq!(s.text(&strong)?, "this machine");
    s.find("[data-testid=markdown] pre code.hljs")?;
    s.find("[data-testid=markdown] [data-testid=copy-code]")?;

    // Approve; the view renders.
    s.click(&s.find(&format!("{card} [data-testid=approve-once]"))?)?;
    s.wait_for_element(&format!("{card}[data-status=ok]"), WAIT)?;
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    let frame = s.wait_for_element(&format!("{card} iframe[data-testid=mcp-app-view]"), WAIT)?;

    // The view shows this machine's numbers.
    s.switch_to_frame(&frame)?;
    let shown = s.wait_for("the monitor's numbers", WAIT, |s| {
        let body = s.find("body")?;
        let text = s.property(&body, "textContent")?;
        Ok(text.as_str().is_some_and(|t| t.contains("Process")).then_some(()))
    });
    s.switch_to_parent()?;
    shown?;

    // The theme: light, then dark from Settings, then back; the view follows each switch, with
    // its colours (the host's style variables), not just the word.
    let (first, light_variable, light_body) = view_theme(s, &frame)?;
    assert_eq!(first, "light", "the view started with the window's theme");
    assert!(luminance(&light_body) > 200.0, "a light view: {light_body}");
    readme_screenshot(s, "porthole-light.png")?;
    let set_theme = |theme: &str| -> Result<()> {
        s.click(&s.find("[data-testid=settings-button]")?)?;
        s.wait_for_element("[data-testid=settings]", WAIT)?;
        if let Some(tab) = s.find_all("[data-testid=settings-tab-general]")?.first() {
            s.click(tab)?;
        }
        s.click(&s.wait_for_element(&format!("[data-testid=theme-{theme}]"), WAIT)?)?;
        s.click(&s.find("[data-testid=settings-close]")?)?;
        s.wait_for("the settings to close", WAIT, |s| {
            Ok(s.find_all("[data-testid=settings]")?.is_empty().then_some(()))
        })?;
        Ok(())
    };
    set_theme("dark")?;
    s.wait_for("the window to turn dark", WAIT, |s| {
        let theme = s.execute("return document.documentElement.dataset.theme || '';", json!([]))?;
        Ok((theme == "dark").then_some(()))
    })?;
    let (dark_variable, dark_body) = s.wait_for("the view to turn dark", WAIT, |s| {
        let (theme, variable, body) = view_theme(s, &frame)?;
        Ok((theme == "dark" && luminance(&body) < 80.0).then_some((variable, body)))
    })?;
    assert_ne!(
        dark_variable, light_variable,
        "the view got the dark style variables: {dark_body}"
    );
    // Views that style themselves by the engine's `prefers-color-scheme` (as the official
    // examples do) see the chosen theme too.
    let prefers_dark = |s: &porthole_e2e::Session| -> Result<bool> {
        s.switch_to_frame(&frame)?;
        let dark = s.execute("return matchMedia('(prefers-color-scheme: dark)').matches;", json!([]));
        s.switch_to_parent()?;
        Ok(dark? == json!(true))
    };
    s.wait_for("the view to prefer a dark scheme", WAIT, |s| {
        Ok(prefers_dark(s)?.then_some(()))
    })?;
    readme_screenshot(s, "porthole-dark.png")?;
    set_theme("light")?;
    s.wait_for("the view to turn light again", WAIT, |s| {
        let (theme, _, body) = view_theme(s, &frame)?;
        Ok((theme == "light" && luminance(&body) > 200.0).then_some(()))
    })?;
    s.wait_for("the view to prefer a light scheme", WAIT, |s| {
        Ok((!prefers_dark(s)?).then_some(()))
    })?;

    // The model/view panel: the model got the tool's text; the view got the whole result.
    s.click(&s.find(&format!("{card} [data-testid=tool-result] summary"))?)?;
    let model = s.text(&s.wait_for_element(&format!("{card} [data-testid=model-facing]"), WAIT)?)?;
    let view = s.text(&s.find(&format!("{card} [data-testid=view-facing]"))?)?;
    assert!(model.contains("\"type\": \"text\""), "{model}");
    assert!(!model.contains("structuredContent"), "{model}");
    assert!(view.contains("structuredContent"), "{view}");
    Ok(())
}

/// With no model configured, a demo tool runs from the tools panel: the same card and view
/// appear in the transcript, and a form built from the tool's input schema passes its
/// arguments.
#[test]
fn a_demo_tool_runs_from_the_tools_panel_with_no_model() -> Result<()> {
    let dir = profile();
    // No key anywhere: the hosted provider cannot be used.
    let app = App::launch(dir.path(), &[], &[("OPENAI_API_KEY", ""), ("ANTHROPIC_API_KEY", "")])?;
    let s = &app.session;
    let model = s.wait_for_element("[data-testid=model-info][data-problem=true]", WAIT)?;
    assert!(s.text(&model)?.to_lowercase().contains("key"), "no model is configured");
    s.wait_for_element(
        "[data-testid=server][data-server-name=porthole-demo][data-state=connected]",
        WAIT,
    )?;
    s.click(&s.find("[data-testid=tools-button]")?)?;
    s.wait_for_element("[data-testid=tools-panel]", WAIT)?;

    // A UI tool: its card and view appear in the transcript.
    let entry = s.wait_for_element("[data-testid=tool-entry][data-tool-name=system_monitor]", WAIT)?;
    assert_eq!(s.attribute(&entry, "data-has-view")?.as_deref(), Some("true"));
    s.click(&entry)?;
    s.click(&s.wait_for_element("[data-testid=tool-run]", WAIT)?)?;
    let card = "[data-testid=tool-call][data-tool-name=system_monitor]";
    s.wait_for_element(&format!("{card}[data-status=ok]"), WAIT)?;
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    s.find(&format!("{card} iframe[data-testid=mcp-app-view]"))?;

    // A tool with an argument, filled in through its form.
    s.click(&s.find("[data-testid=tool-entry][data-tool-name=sha256]")?)?;
    let field = s.wait_for_element("[data-testid=tool-field][data-field=text] input, [data-testid=tool-field][data-field=text] textarea, input[data-testid=tool-field][data-field=text], textarea[data-testid=tool-field][data-field=text]", WAIT)?;
    s.send_keys(&field, "abc")?;
    s.click(&s.find("[data-testid=tool-run]")?)?;
    let card = "[data-testid=tool-call][data-tool-name=sha256]";
    s.wait_for_element(&format!("{card}[data-status=ok]"), WAIT)?;
    s.click(&s.find(&format!("{card} [data-testid=tool-result] summary"))?)?;
    let model = s.text(&s.wait_for_element(&format!("{card} [data-testid=model-facing]"), WAIT)?)?;
    assert!(
        model.contains("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        "the SHA-256 of abc: {model}"
    );
    Ok(())
}

/// Settings change the running app: from a first launch with no model, "Set up a model" leads to
/// a model picked from the provider's list (tested, then used by the next message), a bad base URL refused with the reason, an MCP server added (it
/// connects), a server form without a command refused, and a server switched off.
#[test]
fn settings_pick_the_model_and_add_and_switch_off_a_server_in_the_running_app() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let fake = runtime.block_on(FakeLlm::start(Script {
        replies: vec![Reply::text("OK"), Reply::text("Hello from the settings.")],
        api_key: None,
        models: vec!["fake-small".into(), "fake-large".into()],
        chunk_delay_ms: 0,
    }))?;
    let dir = profile();
    let app = App::launch(dir.path(), &[], &[("OPENAI_API_KEY", ""), ("ANTHROPIC_API_KEY", "")])?;
    let s = &app.session;
    // A first launch with no model: the sidebar says so and leads to Settings → Model.
    s.wait_for_element("[data-testid=model-info][data-problem=true]", WAIT)?;
    s.click(&s.wait_for_element("[data-testid=model-setup]", WAIT)?)?;
    s.wait_for_element("[data-testid=settings] [data-testid=model-settings]", WAIT)?;

    // A base URL that is not http(s) is refused in the form, with the reason.
    let base_url = s.wait_for_element("[data-testid=model-base-url]", WAIT)?;
    s.clear(&base_url)?;
    s.send_keys(&base_url, "ftp://models.example")?;
    s.click(&s.find("[data-testid=model-save]")?)?;
    let error = s.wait_for_element("[data-testid=model-error]", WAIT)?;
    assert!(s.text(&error)?.contains("http"), "{}", s.text(&error)?);

    // The fake provider's models are listed; one is picked, tested and saved.
    s.clear(&base_url)?;
    s.send_keys(&base_url, &fake.base_url())?;
    s.click(&s.find("[data-testid=model-load-models]")?)?;
    s.click(&s.wait_for_element("[data-testid=model-select] option[value=fake-large]", WAIT)?)?;
    s.click(&s.find("[data-testid=model-test]")?)?;
    let result = s.wait_for_element("[data-testid=model-test-result]", WAIT)?;
    s.wait_for("the test's answer", WAIT, |s| {
        Ok(s.text(&result)?.contains("OK").then_some(()))
    })?;
    s.click(&s.find("[data-testid=model-save]")?)?;
    s.wait_for_element("[data-testid=model-saved]", WAIT)?;

    // An MCP server is added while the app runs; a form without a command is refused first.
    s.click(&s.find("[data-testid=settings-tab-servers]")?)?;
    s.click(&s.wait_for_element("[data-testid=add-server]", WAIT)?)?;
    s.send_keys(&s.wait_for_element("[data-testid=server-form-name]", WAIT)?, "test")?;
    s.click(&s.find("[data-testid=server-form-save]")?)?;
    let error = s.wait_for_element("[data-testid=server-form-error]", WAIT)?;
    assert!(
        s.text(&error)?.to_lowercase().contains("command"),
        "{}",
        s.text(&error)?
    );
    s.send_keys(
        &s.find("[data-testid=server-form-command]")?,
        env!("CARGO_BIN_EXE_porthole-test-server"),
    )?;
    s.click(&s.find("[data-testid=server-form-save]")?)?;
    let row = "[data-testid=server-row][data-server-name=test]";
    s.wait_for_element(&format!("{row}[data-state=connected]"), WAIT)?;
    s.wait_for_element(
        "[data-testid=server][data-server-name=test][data-state=connected]",
        WAIT,
    )?;

    // Switched off: it disconnects, here and in the sidebar, and the file says so.
    s.click(&s.find(&format!("{row} [data-testid=server-enabled]"))?)?;
    s.wait_for_element(&format!("{row}[data-state=disabled]"), WAIT)?;
    s.wait_for_element("[data-testid=server][data-server-name=test][data-state=disabled]", WAIT)?;
    let config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("config.json"))?)?;
    assert_eq!(config["mcpServers"]["test"]["enabled"], json!(false), "{config}");
    assert_eq!(
        config["mcpServers"]["test"]["command"],
        json!(env!("CARGO_BIN_EXE_porthole-test-server"))
    );
    s.click(&s.find("[data-testid=settings-close]")?)?;

    // The next message goes to the model picked in the settings.
    let model = s.wait_for_element("[data-testid=model-info]", WAIT)?;
    s.wait_for("the model line", WAIT, |s| {
        Ok(s.text(&model)?.contains("fake-large").then_some(()))
    })?;
    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, "Hello?\u{E007}")?;
    s.wait_for("the reply", WAIT, |s| {
        let replies = s.find_all("[data-testid=message][data-role=assistant]")?;
        Ok(match replies.last() {
            Some(last) => (s.text(last)? == "Hello from the settings.").then_some(()),
            None => None,
        })
    })?;
    let posts: Vec<_> = fake.requests().into_iter().filter(|r| r.method == "POST").collect();
    assert_eq!(posts.len(), 2, "the test request and the message");
    assert_eq!(posts[1].body["model"], "fake-large");
    Ok(())
}

/// A reply cut mid-stream shows its error inline with Retry; Retry writes the reply again; Edit
/// replaces the last message and sends it again (the model never sees the old one); Ctrl+N
/// opens a new chat.
#[test]
fn an_inline_error_is_retried_and_the_last_message_edited_and_resent() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let fake = runtime.block_on(FakeLlm::start(Script {
        replies: vec![
            Reply::Cut {
                text: "Half an ans".into(),
            },
            Reply::text("The whole answer."),
            Reply::text("An answer to the better question."),
        ],
        api_key: None,
        models: vec![],
        chunk_delay_ms: 0,
    }))?;
    let dir = profile();
    let url = fake.base_url();
    let app = App::launch(dir.path(), &["--base-url", &url, "--model", "fake-model"], &[])?;
    let s = &app.session;
    let last_reply = |s: &porthole_e2e::Session| -> Result<Option<String>> {
        let replies = s.find_all("[data-testid=message][data-role=assistant]")?;
        Ok(match replies.last() {
            Some(last) => Some(s.text(last)?),
            None => None,
        })
    };
    s.send_keys(
        &s.wait_for_element("[data-testid=composer]", WAIT)?,
        "A first question\u{E007}",
    )?;

    // The cut reply: kept, with the error and a Retry beside it.
    let error = s.wait_for_element("[data-testid=turn-error]", WAIT)?;
    assert_eq!(s.attribute(&error, "role")?.as_deref(), Some("alert"));
    s.click(&s.find("[data-testid=turn-error] [data-testid=retry]")?)?;
    s.wait_for("the retried reply", WAIT, |s| {
        Ok((last_reply(s)?.as_deref() == Some("The whole answer.")).then_some(()))
    })?;
    assert!(
        s.find_all("[data-testid=turn-error]")?.is_empty(),
        "the error went with the retry"
    );
    assert_eq!(s.find_all("[data-testid=message][data-role=assistant]")?.len(), 1);

    // Edit and resend the last message.
    s.click(&s.wait_for_element("[data-testid=edit-message]", WAIT)?)?;
    let input = s.wait_for_element("[data-testid=edit-message-input]", WAIT)?;
    s.clear(&input)?;
    s.send_keys(&input, "A better question")?;
    s.click(&s.find("[data-testid=edit-message-send]")?)?;
    s.wait_for("the reply to the edited message", WAIT, |s| {
        Ok((last_reply(s)?.as_deref() == Some("An answer to the better question.")).then_some(()))
    })?;
    let users = s.find_all("[data-testid=message][data-role=user]")?;
    assert_eq!(users.len(), 1);
    assert_eq!(s.text(&users[0])?, "A better question");
    let posts: Vec<_> = fake.requests().into_iter().filter(|r| r.method == "POST").collect();
    assert_eq!(posts.len(), 3);
    let last_request = posts[2].body["messages"].to_string();
    assert!(last_request.contains("A better question"), "{last_request}");
    assert!(!last_request.contains("A first question"), "{last_request}");
    assert!(!last_request.contains("The whole answer."), "{last_request}");

    // Ctrl+N: a new, empty chat; the conversation stays in the list.
    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, "\u{E009}n\u{E009}")?;
    s.wait_for("a new chat", WAIT, |s| {
        Ok(s.find_all("[data-testid=message]")?.is_empty().then_some(()))
    })?;
    assert_eq!(s.find_all("[data-testid=conversation]")?.len(), 1);
    Ok(())
}

/// A long history: the sidebar holds the newest conversations a page at a time (100), and
/// scrolling to the end of its list brings the older ones until all are there.
#[test]
fn a_long_conversation_list_comes_a_page_at_a_time_as_it_is_scrolled() -> Result<()> {
    let dir = profile();
    {
        let store = porthole_store::Store::open(&dir.path().join("porthole.db"))?;
        for i in 0..250 {
            store.create_conversation(&format!("Conversation {i:03}"))?;
        }
    }
    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;
    let shown = |s: &porthole_e2e::Session| -> Result<usize> { Ok(s.find_all("[data-testid=conversation]")?.len()) };
    s.wait_for("the first page", WAIT, |s| Ok((shown(s)? == 100).then_some(())))?;
    let first = s.find("[data-testid=conversation]")?;
    let text = s.property(&first, "textContent")?;
    assert!(text.to_string().contains("Conversation 249"), "newest first: {text}");
    let scroll_to_end = |s: &porthole_e2e::Session| {
        s.execute(
            "document.querySelector('[data-testid=conversations-more]')?.scrollIntoView()",
            json!([]),
        )
    };
    scroll_to_end(s)?;
    s.wait_for("the second page", WAIT, |s| Ok((shown(s)? == 200).then_some(())))?;
    scroll_to_end(s)?;
    s.wait_for("the last page", WAIT, |s| Ok((shown(s)? == 250).then_some(())))?;
    assert!(s.find_all("[data-testid=conversations-more]")?.is_empty());
    let all = s.find_all("[data-testid=conversation]")?;
    let text = s.property(all.last().unwrap(), "textContent")?;
    assert!(text.to_string().contains("Conversation 000"), "oldest last: {text}");
    Ok(())
}

/// The app on profile `dir`, its model the fake one (OpenAI's format).
fn launch_with_model(dir: &std::path::Path, fake: &FakeLlm) -> Result<App> {
    launch_with_model_env(dir, fake, &[])
}

/// [`launch_with_model`], with these environment variables too.
fn launch_with_model_env(dir: &std::path::Path, fake: &FakeLlm, env: &[(&str, &str)]) -> Result<App> {
    let url = fake.base_url();
    let mut env = env.to_vec();
    env.push(("OPENAI_API_KEY", "sk-x"));
    App::launch(
        dir,
        &["--provider", "openai", "--base-url", &url, "--model", "fake-model"],
        &env,
    )
}

/// A profile in `dir` whose one server is server-everything over stdio (`alwaysAllow`: these
/// tools); the app launched with the fake model and `env`, once the server is connected.
fn launch_with_everything(
    dir: &std::path::Path,
    fake: &FakeLlm,
    always_allow: &[&str],
    env: &[(&str, &str)],
) -> Result<App> {
    let entry = porthole_e2e::server_everything_entry();
    let config = json!({"mcpServers": {"everything": {
        "command": "node", "args": [entry, "stdio"], "alwaysAllow": always_allow,
    }}});
    std::fs::write(dir.join("config.json"), config.to_string())?;
    let app = launch_with_model_env(dir, fake, env)?;
    app.session.wait_for_element(
        "[data-testid=server][data-server-name=everything][data-state=connected]",
        WAIT,
    )?;
    Ok(app)
}

/// A message sent right after opening the app, while a server is still starting (it takes
/// several seconds to answer `initialize`, as `npx` servers do), waits for it: the transcript
/// says so, and the model's first request has the server's tools. A server that fails is named.
#[test]
fn a_message_sent_while_a_server_starts_waits_for_it_and_names_one_that_fails() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let fake = runtime.block_on(FakeLlm::start(Script::new(vec![Reply::text("Hello with tools.")])))?;
    let dir = profile();
    let config = json!({"mcpServers": {
        "slow": {"command": env!("CARGO_BIN_EXE_porthole-test-server"), "args": ["--delay-ms", "6000"]},
        "broken": {"command": "sh", "args": ["-c", "sleep 2; echo 'no such module' >&2; exit 3"]},
    }});
    std::fs::write(dir.path().join("config.json"), config.to_string())?;
    let app = launch_with_model(dir.path(), &fake)?;
    let s = &app.session;
    let composer = s.wait_for_element("[data-testid=composer]", WAIT)?;
    s.send_keys(&composer, "Hi\u{E007}")?;
    let waiting = s.wait_for_element("[data-testid=servers-waiting]", WAIT)?;
    let text = s.text(&waiting)?;
    assert!(text.contains("slow") && text.contains("broken"), "{text}");
    assert!(
        fake.requests().iter().all(|r| r.method != "POST"),
        "the model is not asked while the servers start"
    );
    s.wait_for("the reply", WAIT, |s| {
        let replies = s.find_all("[data-testid=message][data-role=assistant]")?;
        Ok(match replies.last() {
            Some(last) => (s.text(last)? == "Hello with tools.").then_some(()),
            None => None,
        })
    })?;
    assert!(s.find_all("[data-testid=servers-waiting]")?.is_empty());
    let notice = s.text(&s.find("[data-testid=notice]")?)?;
    assert!(
        notice.starts_with("Sent without broken (") && notice.contains("status 3"),
        "{notice}"
    );
    let first = fake
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .context("a model request")?;
    let tools = first.body["tools"].to_string();
    assert!(
        tools.contains("\"echo\""),
        "the slow server's tools are offered: {tools}"
    );
    Ok(())
}

/// A tool result's content shows on its card as a person expects: server-everything's tiny
/// image decoded inline, and its resource links readable from the card (`resources/read`).
#[test]
fn a_results_image_shows_inline_and_its_resource_links_can_be_read() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let fake = runtime.block_on(FakeLlm::start(Script::new(vec![
        Reply::ToolCalls {
            text: None,
            calls: vec![
                FakeToolCall::new("i1", "get-tiny-image", "{}"),
                FakeToolCall::new("l1", "get-resource-links", r#"{"count": 2}"#),
            ],
        },
        Reply::text("Here they are."),
    ])))?;
    let dir = profile();
    let app = launch_with_everything(dir.path(), &fake, &["get-tiny-image", "get-resource-links"], &[])?;
    let s = &app.session;
    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, "Show me\u{E007}")?;
    let image = "[data-testid=tool-call][data-tool-name=get-tiny-image] [data-testid=content-image]";
    s.wait_for_element(image, WAIT)?;
    let decoded = s.wait_for("the image to be decoded", WAIT, |s| {
        let width = s.execute(
            "const i = document.querySelector(arguments[0]); return i && i.complete ? i.naturalWidth : 0;",
            json!([image]),
        )?;
        Ok((width.as_f64().unwrap_or(0.0) > 0.0).then_some(width))
    })?;
    assert!(decoded.as_f64().unwrap() > 0.0);
    let links = "[data-testid=tool-call][data-tool-name=get-resource-links] [data-testid=content-link]";
    s.wait_for_element(links, WAIT)?;
    assert_eq!(s.find_all(links)?.len(), 2);
    s.click(&s.find(&format!("{links} [data-testid=content-link-read]"))?)?;
    let read = s.wait_for("the linked resource to be read", WAIT, |s| {
        let shown = s.find_all(&format!(
            "{links} [data-testid=content-link-text], {links} [data-testid=content-link-note], {links} [data-testid=content-link-error]"
        ))?;
        Ok(match shown.first() {
            Some(el) => Some((s.attribute(el, "data-testid")?.unwrap_or_default(), s.text(el)?)),
            None => None,
        })
    })?;
    assert_ne!(read.0, "content-link-error", "{read:?}");
    assert!(!read.1.trim().is_empty(), "{read:?}");
    Ok(())
}

/// The texts of the elements `css` finds.
fn texts(s: &porthole_e2e::Session, css: &str) -> Result<Vec<String>> {
    s.find_all(css)?.iter().map(|el| s.text(el)).collect()
}

/// Waits until the elements `css` finds say exactly `expected`.
fn wait_for_texts(s: &porthole_e2e::Session, what: &str, css: &str, expected: &[&str]) -> Result<()> {
    s.wait_for(what, WAIT, |s| Ok((texts(s, css)? == expected).then_some(())))
}

/// Server-everything's prompts and resources, used as a person would: `/` lists the prompts,
/// the argument form's suggestions come from `completion/complete` (the second argument's
/// depending on the first's value), and the prompt goes to the model as the person's turn;
/// `@` lists resources and templates, a template's variable is asked for, and the resource is
/// attached, shown on the message and sent to the model with it.
#[test]
fn a_servers_prompt_and_resource_are_used_from_the_composer() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let fake = runtime.block_on(FakeLlm::start(Script::new(vec![
        Reply::text("Promoted."),
        Reply::text("It says so."),
    ])))?;
    let dir = profile();
    let app = launch_with_everything(dir.path(), &fake, &[], &[])?;
    let s = &app.session;
    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, "/")?;
    let listed = s.wait_for("the prompt menu", WAIT, |s| {
        let items = s.find_all("[data-testid=prompt-item]")?;
        let mut names = Vec::new();
        for item in &items {
            names.push(s.attribute(item, "data-name")?.unwrap_or_default());
        }
        Ok(names.contains(&"completable-prompt".to_string()).then_some(names))
    })?;
    assert!(listed.contains(&"args-prompt".to_string()), "{listed:?}");
    s.send_keys(&composer, "completable")?;
    s.wait_for("the menu to narrow", WAIT, |s| {
        Ok((s.find_all("[data-testid=prompt-item]")?.len() == 1).then_some(()))
    })?;
    s.send_keys(&composer, "\u{E007}")?;
    let department = s.wait_for_element("[data-testid=argument-input][data-argument=department]", WAIT)?;
    s.send_keys(&department, "S")?;
    let suggestion = "[data-testid=argument-suggestion]";
    wait_for_texts(s, "departments starting with S", suggestion, &["Sales", "Support"])?;
    s.click(&s.find_all(suggestion)?[0])?;
    let name = s.find("[data-testid=argument-input][data-argument=name]")?;
    s.click(&name)?;
    wait_for_texts(s, "the Sales team's names", suggestion, &["David", "Eve", "Frank"])?;
    s.click(&s.find_all(suggestion)?[1])?;
    s.click(&s.find("[data-testid=argument-form-submit]")?)?;
    let user = "[data-testid=message][data-role=user]";
    wait_for_texts(
        s,
        "the prompt as the person's turn",
        user,
        &["Please promote Eve to the head of the Sales team."],
    )?;
    wait_for_texts(
        s,
        "the reply",
        "[data-testid=message][data-role=assistant]",
        &["Promoted."],
    )?;

    // A template's resource, attached from the @ picker.
    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, "@dynamic/text")?;
    let template = s.wait_for_element(
        "[data-testid=resource-item][data-name='demo://resource/dynamic/text/{resourceId}']",
        WAIT,
    )?;
    s.click(&template)?;
    let id = s.wait_for_element("[data-testid=argument-input][data-argument=resourceId]", WAIT)?;
    s.send_keys(&id, "2")?;
    s.click(&s.find("[data-testid=argument-form-submit]")?)?;
    wait_for_texts(s, "the chip", "[data-testid=attachment-chip]", &["2 ×"])?;
    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, "What does it say?\u{E007}")?;
    wait_for_texts(
        s,
        "the attachment on the message",
        "[data-testid=message-attachment]",
        &["2 · everything"],
    )?;
    wait_for_texts(
        s,
        "the second reply",
        "[data-testid=message][data-role=assistant]",
        &["Promoted.", "It says so."],
    )?;

    let sent: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.body["messages"].to_string())
        .collect();
    assert!(
        sent[0].contains("Please promote Eve to the head of the Sales team."),
        "{}",
        sent[0]
    );
    assert!(
        sent[1].contains("[demo://resource/dynamic/text/2 from everything]\\nResource 2: This is a plaintext resource"),
        "{}",
        sent[1]
    );
    Ok(())
}

/// What servers ask of the person, in the real window: folders given as roots in the settings
/// reach a server's `roots/list`; a server's sampling request is allowed in its dialog, and the
/// model's answer reviewed and sent back; a URL question shows its whole address and opens it in
/// the browser only when the person says so.
#[test]
fn roots_sampling_and_a_url_question_are_answered_in_the_window() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let page = "https://example.com/authorize?state=abc";
    let fake = runtime.block_on(FakeLlm::start(Script::new(vec![
        Reply::ToolCalls {
            text: None,
            calls: vec![FakeToolCall::new("r1", "get-roots-list", "{}")],
        },
        Reply::text("Listed."),
        Reply::ToolCalls {
            text: None,
            calls: vec![FakeToolCall::new(
                "s1",
                "trigger-sampling-request",
                r#"{"prompt": "ping"}"#,
            )],
        },
        Reply::text("pong"),
        Reply::text("Sampled."),
        Reply::ToolCalls {
            text: None,
            calls: vec![FakeToolCall::new(
                "u1",
                "trigger-url-elicitation",
                json!({"url": page}).to_string(),
            )],
        },
        Reply::text("Opened."),
    ])))?;
    let dir = profile();
    let (browser, opened) = porthole_e2e::recording_browser(dir.path())?;
    let folder = tempfile::tempdir()?;
    let folder_path = folder.path().to_string_lossy().into_owned();
    let browser_env = browser.display().to_string();
    let app = launch_with_everything(
        dir.path(),
        &fake,
        &["get-roots-list", "trigger-sampling-request", "trigger-url-elicitation"],
        &[("BROWSER", browser_env.as_str())],
    )?;
    let s = &app.session;

    // Roots: a folder given in the settings.
    s.click(&s.find("[data-testid=settings-button]")?)?;
    s.wait_for_element("[data-testid=settings]", WAIT)?;
    // Typed into once the settings can take it (the app's servers are starting meanwhile), on
    // the General tab (chosen again if a click went astray).
    s.wait_for("the roots field to take text", WAIT, |s| {
        let general = s.find("[data-testid=settings-tab-general]")?;
        if s.attribute(&general, "aria-selected")?.as_deref() != Some("true") {
            s.click(&general)?;
            return Ok(None);
        }
        // Read from Rust first (what is typed before would be replaced).
        if s.attribute(&s.find("[data-testid=roots-save]")?, "disabled")?.is_some() {
            return Ok(None);
        }
        let roots = s.find("[data-testid=roots]")?;
        Ok(s.send_keys(&roots, &folder_path).ok())
    })?;
    s.click(&s.find("[data-testid=roots-save]")?)?;
    s.wait_for_element("[data-testid=roots-saved]", WAIT)?;
    s.click(&s.find("[data-testid=settings-close]")?)?;
    s.wait_for("the settings to close", WAIT, |s| {
        Ok(s.find_all("[data-testid=settings]")?.is_empty().then_some(()))
    })?;
    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, "Which folders?\u{E007}")?;
    wait_for_texts(
        s,
        "the first reply",
        "[data-testid=message][data-role=assistant]",
        &["Listed."],
    )?;
    let sent = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .nth(1)
        .context("the second request")?;
    assert!(
        sent.body.to_string().contains(&format!("URI: file://{folder_path}")),
        "the server listed the folder: {}",
        sent.body
    );

    // Sampling: allowed, then the answer reviewed and sent.
    s.send_keys(&composer, "Sample please\u{E007}")?;
    let dialog = s.wait_for_element("[data-testid=server-sampling][data-stage=request]", WAIT)?;
    let shown = s.text(&dialog)?;
    assert!(shown.contains("everything asks the model"), "{shown}");
    assert!(
        shown.contains("Resource trigger-sampling-request context: ping"),
        "{shown}"
    );
    assert!(shown.contains("You are a helpful test server."), "{shown}");
    s.click(&s.find("[data-testid=server-sampling-allow]")?)?;
    let answer = s.wait_for_element("[data-testid=server-sampling-answer]", WAIT)?;
    assert_eq!(s.text(&answer)?, "pong");
    s.click(&s.find("[data-testid=server-sampling-send]")?)?;
    wait_for_texts(
        s,
        "the sampled reply",
        "[data-testid=message][data-role=assistant]",
        &["Listed.", "Sampled."],
    )?;
    let after = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .nth(4)
        .context("the request after sampling")?;
    let tool_result = after.body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "tool"))
        .cloned();
    assert!(
        tool_result
            .as_ref()
            .is_some_and(|m| m["content"].to_string().contains("pong")),
        "the server got the sent answer: {tool_result:?}"
    );

    // A URL question: the whole address, and the browser only once agreed.
    s.send_keys(&composer, "Open the page\u{E007}")?;
    let address = s.wait_for_element("[data-testid=elicitation-url]", WAIT)?;
    assert_eq!(s.text(&address)?, page);
    let origin = s.text(&s.find("[data-testid=elicitation-origin]")?)?;
    assert!(origin.contains("https://example.com"), "{origin}");
    assert!(!opened.exists(), "nothing opens before the person agrees");
    s.click(&s.find("[data-testid=elicitation-accept]")?)?;
    wait_for_texts(
        s,
        "the last reply",
        "[data-testid=message][data-role=assistant]",
        &["Listed.", "Sampled.", "Opened."],
    )?;
    // The browser is its own process: what it was given is read once it has written it.
    let given = s.wait_for("the browser to be given the page", WAIT, |_| {
        Ok(std::fs::read_to_string(&opened)
            .ok()
            .filter(|t| t.ends_with('\n'))
            .map(|t| t.trim().to_string()))
    })?;
    assert_eq!(given, page);
    Ok(())
}

/// A long conversation opens with its last turns; earlier ones load by themselves up to a
/// point, and scrolling up brings the rest, a page at a time, until its first message.
#[test]
fn a_long_conversation_opens_at_its_end_and_loads_earlier_turns_as_it_is_scrolled_up() -> Result<()> {
    use porthole_store::{MessageRole, MessageStatus};
    let dir = profile();
    {
        let store = porthole_store::Store::open(&dir.path().join("porthole.db"))?;
        let conversation = store.create_conversation("Long")?;
        for i in 0..2000 {
            let text = |t: String| json!([{ "type": "text", "text": t }]);
            store.append_message(
                &conversation.id,
                MessageRole::User,
                &text(format!("question {i}")),
                MessageStatus::Complete,
            )?;
            store.append_message(
                &conversation.id,
                MessageRole::Assistant,
                &text(format!("answer {i}")),
                MessageStatus::Complete,
            )?;
        }
    }
    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;
    // Clicked as the window starts, made sure the click reached it: CI once clicked it and
    // nothing opened (likely the list moving down as the model's line came; it now waits for it).
    s.wait_for_element("[data-testid=conversation]", WAIT)?;
    s.click_when_still("[data-testid=conversation]")?;
    let earlier = |s: &porthole_e2e::Session| -> Result<String> {
        Ok(s.attribute(&s.find("[data-testid=transcript]")?, "data-earlier")?
            .unwrap_or_default())
    };
    s.wait_for("the last answer", WAIT, |s| {
        let messages = s.find_all("[data-testid=message]")?;
        Ok(match messages.last() {
            Some(last) => (s.text(last)? == "answer 1999").then_some(()),
            None => None,
        })
    })?;
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        earlier(s)?,
        "true",
        "a 4,000-message conversation is not read whole by itself"
    );
    // Scrolled to the top again and again: the first question comes, and nothing is earlier.
    s.wait_for("the first question", WAIT, |s| {
        s.execute(
            "document.querySelector('[data-testid=transcript]').scrollTop = 0;",
            json!([]),
        )?;
        let first = s.find_all("[data-testid=message]")?;
        Ok(match first.first() {
            Some(el) => (s.text(el)? == "question 0").then_some(()),
            None => None,
        })
    })?;
    assert_eq!(earlier(s)?, "false");
    Ok(())
}

/// SIGTERM (a session ending, `kill`) closes the app as its close button does: it ends at once,
/// successfully, with its store recorded as left sound, so the next start need not read every page.
/// The signal comes as the window gets ready, while the demo server connects and its views are
/// read ahead: the app once waited there for the server to be signalled 3 s on (its answer
/// unread, it could not see its stdin close), and sometimes hung for good (a worker of the async
/// runtime waiting on the windows' thread while that thread waited for the servers to stop).
#[test]
fn a_terminated_app_closes_cleanly_and_leaves_its_store_sound() -> Result<()> {
    use std::io::{BufRead, BufReader};
    let dir = profile();
    // Killed when dropped, should the test fail before it ends.
    let mut app = porthole_e2e::Spawned(
        porthole_e2e::porthole_command(dir.path(), &[])
            .env("PORTHOLE_REPORT_READY", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()?,
    );
    let child = &mut app.0;
    let stdout = child.stdout.take().unwrap();
    let ready = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line.starts_with("porthole-ready"));
    assert!(ready, "the app did not get ready");
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    // Under the 3 s a server is given to exit after its stdin closes: a server left to be
    // signalled shows.
    let deadline = std::time::Instant::now() + Duration::from_millis(2500);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if std::time::Instant::now() > deadline {
            anyhow::bail!("still running 2.5 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    let store = porthole_store::Store::open(&dir.path().join("porthole.db"))?;
    assert!(!store.checked_on_open(), "the store was not recorded as left sound");
    Ok(())
}

/// An install link the app is launched with (`porthole porthole://install-server?…`, as the OS
/// hands it over) asks before adding anything: the dialog shows the command line and the names
/// of the environment variables, never their values; yes adds the server to `config.json` and
/// starts it. A malformed link is refused, saying why, and adds nothing.
#[test]
fn an_install_link_adds_a_server_only_after_the_person_says_yes() -> Result<()> {
    use base64::Engine;
    let dir = profile();
    let entry = json!({
        "command": env!("CARGO_BIN_EXE_porthole-test-server"),
        "env": {"TEST_TOKEN": "token-value-4711"},
    });
    let config = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(entry.to_string());
    let link = format!("porthole://install-server?name=linked&config={config}");
    let app = App::launch(dir.path(), &[&link], &[])?;
    let s = &app.session;
    s.wait_for_element("[data-testid=server-install-dialog]", WAIT)?;
    assert_eq!(s.text(&s.find("[data-testid=server-install-name]")?)?, "linked");
    assert_eq!(
        s.text(&s.find("[data-testid=server-install-command]")?)?,
        env!("CARGO_BIN_EXE_porthole-test-server")
    );
    assert_eq!(
        s.text(&s.find("[data-testid=server-install-env]")?)?.trim(),
        "TEST_TOKEN (values not shown)"
    );
    let shown = s.text(&s.find("[data-testid=server-install-dialog]")?)?;
    assert!(!shown.contains("token-value-4711"), "{shown}");
    let config_file = dir.path().join("config.json");
    assert!(!std::fs::read_to_string(&config_file)?.contains("linked"));
    s.click(&s.find("[data-testid=server-install-add]")?)?;
    s.wait_for_element(
        "[data-testid=server][data-server-name=linked][data-state=connected]",
        WAIT,
    )?;
    s.wait_for_element("[data-testid=server-install-note]", WAIT)?;
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&config_file)?)?;
    assert_eq!(written["mcpServers"]["linked"], entry);
    drop(app);

    let before = std::fs::read_to_string(&config_file)?;
    let app = App::launch(dir.path(), &["porthole://install-server?name=broken&config=%%%"], &[])?;
    let s = &app.session;
    s.wait_for_element("[data-testid=server-install-refusal]", WAIT)?;
    let refusal = s.text(&s.find("[data-testid=server-install-refusal]")?)?;
    assert!(refusal.contains("not base64url"), "{refusal}");
    assert!(s.find_all("[data-testid=server-install-add]")?.is_empty());
    s.click(&s.find("[data-testid=server-install-cancel]")?)?;
    s.wait_for("the dialog to close", WAIT, |s| {
        Ok(s.find_all("[data-testid=server-install-dialog]")?
            .is_empty()
            .then_some(()))
    })?;
    assert_eq!(std::fs::read_to_string(&config_file)?, before);
    Ok(())
}

/// The main window keeps its place: moved and resized, it is kept (`window.json` in the
/// profile, from the window's own move and resize events); the next start opens it at that
/// size and place; a place no screen shows any more (a monitor unplugged) opens on screen.
#[test]
fn the_window_comes_back_where_it_was_and_always_on_a_screen() -> Result<()> {
    let dir = profile();
    let kept = dir.path().join("window.json");
    let read = || -> Option<serde_json::Value> { serde_json::from_str(&std::fs::read_to_string(&kept).ok()?).ok() };
    let app = App::launch(dir.path(), &[], &[])?;
    app.session.wait_for_element("[data-testid=composer]", WAIT)?;
    // Moved and resized as the person would: the app keeps the new place.
    app.session.set_window_rect(70, 40, 1000, 700)?;
    app.session.wait_for("window.json to be written", WAIT, |_| {
        Ok(read().filter(|p| p["width"] == 1000 && p["height"] == 700))
    })?;
    drop(app);

    let placed = |x: i32, y: i32| -> Result<(i64, i64, i64, i64)> {
        std::fs::write(
            &kept,
            json!({"x": x, "y": y, "width": 900, "height": 640, "maximized": false}).to_string(),
        )?;
        let app = App::launch(dir.path(), &[], &[])?;
        app.session.wait_for_element("[data-testid=composer]", WAIT)?;
        let at = app.session.execute(
            "return [window.screenX, window.screenY, window.innerWidth, window.innerHeight];",
            json!([]),
        )?;
        let n = |i: usize| at[i].as_i64().unwrap_or(-1);
        Ok((n(0), n(1), n(2), n(3)))
    };
    // Where it was kept (Xvfb's screen is 1280×900 and has no window manager to move it).
    let app = App::launch(dir.path(), &[], &[])?;
    app.session.wait_for_element("[data-testid=composer]", WAIT)?;
    let at = app.session.execute(
        "return [window.screenX, window.screenY, window.innerWidth, window.innerHeight];",
        json!([]),
    )?;
    assert_eq!(at, json!([70, 40, 1000, 700]));
    drop(app);
    assert_eq!(placed(130, 90)?, (130, 90, 900, 640));
    // A place off every screen: brought onto the screen, centred, at its size.
    assert_eq!(placed(5000, 4000)?, (190, 130, 900, 640));
    Ok(())
}

/// Maximized comes back maximized, with a window manager as a desktop has (Openbox, on this
/// test's display for this test only), and the size from before is kept for un-maximizing;
/// un-maximized, the next start is not maximized.
#[test]
fn a_maximized_window_comes_back_maximized() -> Result<()> {
    let wm = std::process::Command::new("openbox")
        .arg("--sm-disable")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("openbox is missing: make deps installs it")?;
    let _wm = porthole_e2e::Spawned(wm);
    std::thread::sleep(Duration::from_millis(500));
    let dir = profile();
    let kept = dir.path().join("window.json");
    let read = || -> Option<serde_json::Value> { serde_json::from_str(&std::fs::read_to_string(&kept).ok()?).ok() };
    let size = |app: &App| -> Result<serde_json::Value> {
        app.session.execute(
            "return [window.outerWidth, window.outerHeight, screen.availWidth, screen.availHeight];",
            json!([]),
        )
    };
    let app = App::launch(dir.path(), &[], &[])?;
    app.session.set_window_rect(100, 80, 900, 640)?;
    app.session.wait_for("the place to be kept", WAIT, |_| {
        Ok(read().filter(|p| p["width"] == 900 && p["maximized"] == false))
    })?;
    app.session.maximize_window()?;
    app.session.wait_for("maximized to be kept", WAIT, |_| {
        Ok(read().filter(|p| p["maximized"] == true))
    })?;
    assert_eq!(
        read().map(|p| p["width"].clone()),
        Some(json!(900)),
        "the normal size stays"
    );
    drop(app);

    let app = App::launch(dir.path(), &[], &[])?;
    let at = app.session.wait_for("the window to open maximized", WAIT, |_| {
        let at = size(&app)?;
        let n = |i: usize| at[i].as_i64().unwrap_or(0);
        Ok((n(0) >= n(2) - 2 && n(1) >= n(3) - 40).then_some(at))
    })?;
    assert!(at[0].as_i64() > Some(1000), "{at}");
    // Un-maximized (WebDriver's Set Window Rect restores it first), it starts so next time.
    app.session.set_window_rect(100, 80, 900, 640)?;
    app.session.wait_for("un-maximized to be kept", WAIT, |_| {
        Ok(read().filter(|p| p["maximized"] == false && p["width"] == 900))
    })?;
    drop(app);
    let app = App::launch(dir.path(), &[], &[])?;
    let at = size(&app)?;
    assert!(at[0].as_i64() < Some(1000), "{at}");
    Ok(())
}

/// The text of `element` (its `textContent`: whether or not it is scrolled into sight) in the
/// first view frame matched by `frame`; none while there is no such frame or element. Read from
/// the top-level context each time: a view re-created meanwhile removes the frame looked into,
/// and its context with it.
fn text_in_frame(s: &porthole_e2e::Session, frame: &str, element: &str) -> Result<Option<String>> {
    s.switch_to_top()?;
    let Some(found) = s.find_all(frame)?.into_iter().next() else {
        return Ok(None);
    };
    s.switch_to_frame(&found)?;
    let text = s
        .find_all(element)
        .and_then(|all| all.first().map(|el| s.property(el, "textContent")).transpose());
    s.switch_to_top()?;
    Ok(text?.map(|v| match v {
        serde_json::Value::String(text) => text,
        other => other.to_string(),
    }))
}

/// What the tool card `card` shows of its view and inspector, for a failure's message: each
/// view's id and state, the frames in it, the inspector's summary and any replay problem.
fn card_state(s: &porthole_e2e::Session, card: &str) -> String {
    let script = r#"
        const card = document.querySelector(arguments[0]);
        if (!card) return 'the card is gone';
        const text = (sel) => [...card.querySelectorAll(sel)].map((e) => (e.innerText || e.textContent || '').replace(/\s+/g, ' ').slice(0, 120));
        const views = [...card.querySelectorAll('[data-testid=view]')].map((v) => `${v.dataset.viewId}:${v.dataset.state}`);
        const replay = card.querySelector('[data-testid=inspect-replay]');
        return [
          `views ${views.join(', ') || 'none'}`,
          `frames ${card.querySelectorAll('iframe[data-testid=mcp-app-view]').length}`,
          `view state ${text('[data-testid=view-state]').join(' | ')}`,
          `summary ${text('[data-testid=inspect-summary]').join(' | ')}`,
          `replay button ${replay ? (replay.disabled ? 'disabled' : 'enabled') : 'absent'}`,
          `replay problem ${text('[data-testid=inspect-replay-error]').join(' | ') || 'none'}`,
        ].join('; ');
    "#;
    let _ = s.switch_to_top();
    match s.execute(script, json!([card])) {
        Ok(serde_json::Value::String(state)) => format!("the card: {state}"),
        Ok(other) => format!("the card: {other}"),
        Err(e) => format!("the card could not be described: {e:#}"),
    }
}

/// Picks `value` in the `<select>` matched by `css` (as a person choosing from the list would).
fn choose(s: &porthole_e2e::Session, css: &str, value: &str) -> Result<()> {
    s.execute(
        "const el = document.querySelector(arguments[0]);
         el.value = arguments[1];
         el.dispatchEvent(new Event('change', { bubbles: true }));",
        json!([css, value]),
    )?;
    Ok(())
}

fn tab(s: &porthole_e2e::Session, name: &str) -> Result<()> {
    s.click(&s.find(&format!("[data-testid=workbench-tab][data-tab={name}]"))?)
}

/// The workbench's server inspector, on a real server (Porthole's test server, and the published
/// server-everything for prompts): what the server said of itself and a ping; a tool run from the
/// Tools tab appears in the traffic as its request and its answer, whose JSON opens; a template
/// resource is read with an argument the server completed; a subscribed resource's update (made
/// by a tool run) is counted, read again and listed in the notifications; a prompt is fetched with
/// completed arguments, its messages shown, and used in the chat.
#[test]
fn the_workbench_inspects_a_servers_traffic_resources_and_prompts() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let fake = runtime.block_on(FakeLlm::start(Script::new(vec![Reply::text("Promoted.")])))?;
    let dir = profile();
    let config = json!({"mcpServers": {
        "test": {"command": env!("CARGO_BIN_EXE_porthole-test-server")},
        "everything": {"command": "node", "args": [porthole_e2e::server_everything_entry(), "stdio"]},
    }});
    std::fs::write(dir.path().join("config.json"), config.to_string())?;
    let app = launch_with_model(dir.path(), &fake)?;
    let s = &app.session;
    for server in ["test", "everything"] {
        s.wait_for_element(
            &format!("[data-testid=server][data-server-name={server}][data-state=connected]"),
            WAIT,
        )?;
    }
    s.click(&s.find("[data-testid=workbench-button]")?)?;
    s.wait_for_element("[data-testid=workbench]", WAIT)?;
    choose(s, "[data-testid=workbench-server]", "test")?;

    // What the server said of itself, and a ping.
    let name = s.wait_for_element("[data-testid=server-info-name]", WAIT)?;
    assert_eq!(s.text(&name)?, "porthole-test-server 1.0.0");
    let capabilities = s.text(&s.find("[data-testid=server-info-capabilities]")?)?;
    assert!(capabilities.contains("\"subscribe\": true"), "{capabilities}");
    s.click(&s.find("[data-testid=server-ping]")?)?;
    let ping = s.wait_for_element("[data-testid=server-ping-result]", WAIT)?;
    assert!(s.text(&ping)?.starts_with("Answered in"), "{}", s.text(&ping)?);

    // A template resource read with a completed argument; the readme subscribed to and read.
    tab(s, "resources")?;
    s.click(&s.wait_for_element("[data-testid=workbench-template] [data-testid=template-read]", WAIT)?)?;
    let topic = s.wait_for_element("[data-testid=argument-input][data-argument=topic]", WAIT)?;
    s.send_keys(&topic, "a")?;
    let suggestion = "[data-testid=argument-suggestion]";
    wait_for_texts(s, "topics starting with a", suggestion, &["alpha", "apricot"])?;
    s.click(&s.find_all(suggestion)?[1])?;
    s.click(&s.find("[data-testid=argument-form-submit]")?)?;
    let read = s.wait_for_element("[data-testid=resource-contents][data-uri='test://notes/apricot']", WAIT)?;
    assert_eq!(
        s.text(&s.find("[data-testid=resource-text]")?)?,
        "A note about apricot (edited 0 times).",
        "{}",
        s.text(&read)?
    );
    let readme = "[data-testid=workbench-resource][data-uri='test://notes/readme']";
    s.click(&s.find(&format!("{readme} [data-testid=resource-subscribe]"))?)?;
    s.wait_for_element(&format!("{readme} [data-testid=resource-updates]"), WAIT)?;
    s.click(&s.find(&format!("{readme} [data-testid=resource-read]"))?)?;
    s.wait_for_element("[data-testid=resource-contents][data-uri='test://notes/readme']", WAIT)?;

    // A tool run from the Tools tab: it edits the readme (its subscribers are told).
    tab(s, "tools")?;
    s.send_keys(&s.find("[data-testid=tools-search]")?, "edit_note")?;
    s.click(&s.wait_for_element(
        "[data-testid=tool-entry][data-server=test][data-tool-name=edit_note]",
        WAIT,
    )?)?;
    let field = s.wait_for_element(
        "input[data-testid=tool-field][data-field=topic], [data-testid=tool-field][data-field=topic] input",
        WAIT,
    )?;
    s.send_keys(&field, "readme")?;
    s.click(&s.find("[data-testid=tool-run]")?)?;
    s.wait_for_element(
        "[data-testid=tool-call][data-tool-name=edit_note][data-status=ok]",
        WAIT,
    )?;
    tab(s, "notifications")?;
    s.wait_for_element(
        "[data-testid=workbench-notifications] [data-testid=traffic-entry][data-method='notifications/resources/updated']",
        WAIT,
    )?;
    tab(s, "resources")?;
    s.wait_for("the update to be counted and read", WAIT, |s| {
        let count = s.text(&s.find(&format!("{readme} [data-testid=resource-updates]"))?)?;
        let text = s.text(&s.find("[data-testid=resource-text]")?)?;
        Ok((count.contains("1 update") && text.contains("(1 edits so far)")).then_some(()))
    })?;

    // The traffic: the run's request and its answer, whose JSON opens.
    tab(s, "traffic")?;
    let filter = s.find("[data-testid=workbench-traffic] [data-testid=traffic-filter]")?;
    s.send_keys(&filter, "tools/call")?;
    let traffic = "[data-testid=workbench-traffic] [data-testid=traffic-entry][data-method='tools/call']";
    s.wait_for_element(&format!("{traffic}[data-direction=out][data-kind=request]"), WAIT)?;
    let answer = s.wait_for_element(&format!("{traffic}[data-direction=in][data-kind=response]"), WAIT)?;
    s.click(&s.find(&format!("{traffic}[data-direction=in][data-kind=response] button"))?)?;
    let json = s.wait_for("the answer's JSON", WAIT, |s| {
        let found = s.find_all("[data-testid=workbench-traffic] [data-testid=traffic-json]")?;
        Ok(match found.first() {
            Some(el) => Some(s.text(el)?).filter(|t| t.contains("edited test://notes/readme")),
            None => None,
        })
    })?;
    assert!(json.contains("\"jsonrpc\": \"2.0\""), "{json}");
    let _ = answer;
    readme_screenshot(s, "workbench-traffic.png")?;
    s.clear(&filter)?;
    s.send_keys(&filter, "resources/read")?;
    s.wait_for("only resources/read in the traffic", WAIT, |s| {
        let shown = s.find_all("[data-testid=workbench-traffic] [data-testid=traffic-entry]")?;
        let mut methods = Vec::new();
        for el in &shown {
            methods.push(s.attribute(el, "data-method")?.unwrap_or_default());
        }
        Ok((!methods.is_empty() && methods.iter().all(|m| m == "resources/read")).then_some(()))
    })?;

    // A prompt of server-everything, its arguments completed, its messages shown, used in chat.
    tab(s, "prompts")?;
    choose(s, "[data-testid=workbench-server]", "everything")?;
    let prompt = "[data-testid=workbench-prompt][data-name=completable-prompt] [data-testid=prompt-get]";
    s.click(&s.wait_for_element(prompt, WAIT)?)?;
    let department = s.wait_for_element("[data-testid=argument-input][data-argument=department]", WAIT)?;
    s.send_keys(&department, "S")?;
    wait_for_texts(s, "departments starting with S", suggestion, &["Sales", "Support"])?;
    s.click(&s.find_all(suggestion)?[0])?;
    let name = s.find("[data-testid=argument-input][data-argument=name]")?;
    s.click(&name)?;
    wait_for_texts(s, "the Sales team's names", suggestion, &["David", "Eve", "Frank"])?;
    s.click(&s.find_all(suggestion)?[1])?;
    s.click(&s.find("[data-testid=argument-form-submit]")?)?;
    let message = s.wait_for_element(
        "[data-testid=prompt-preview] [data-testid=prompt-message][data-role=user]",
        WAIT,
    )?;
    assert!(
        s.text(&message)?
            .contains("Please promote Eve to the head of the Sales team."),
        "{}",
        s.text(&message)?
    );
    assert!(
        fake.requests().iter().all(|r| r.method != "POST"),
        "nothing was sent yet"
    );
    s.click(&s.find("[data-testid=prompt-use]")?)?;
    wait_for_texts(
        s,
        "the prompt as the person's turn",
        "[data-testid=message][data-role=user]",
        &["Please promote Eve to the head of the Sales team."],
    )?;
    wait_for_texts(
        s,
        "the reply",
        "[data-testid=message][data-role=assistant]",
        &["Promoted."],
    )?;
    Ok(())
}

/// Opens the view inspector on `card` (again, when a click landed on the view while it was still
/// growing under the button).
fn open_inspector(s: &porthole_e2e::Session, card: &str) -> Result<()> {
    let toggle = format!("{card} [data-testid=view-inspect-toggle]");
    s.wait_for("the view inspector", WAIT, |s| {
        let el = s.wait_for_element(&toggle, WAIT)?;
        if s.attribute(&el, "aria-expanded")?.as_deref() == Some("true") {
            return Ok(Some(()));
        }
        let _ = s.click(&el);
        Ok(None)
    })
}

/// The view inspector: with "Inspect views" on in the workbench, a view's card shows what the
/// view and Porthole said to each other, the host context it was given, how many times it was
/// mounted, its console errors and uncaught exceptions, and each CSP violation with the
/// `_meta.ui.csp` that would allow it (views from Porthole's broken-apps test server).
#[test]
fn the_view_inspector_shows_a_views_messages_errors_and_csp_violations() -> Result<()> {
    let dir = profile();
    let config = json!({"mcpServers": {"broken": {
        "command": env!("CARGO_BIN_EXE_porthole-broken-apps-server"), "args": ["--only-live"],
    }}});
    std::fs::write(dir.path().join("config.json"), config.to_string())?;
    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;
    s.wait_for_element(
        "[data-testid=server][data-server-name=broken][data-state=connected]",
        WAIT,
    )?;
    s.click(&s.find("[data-testid=tools-button]")?)?;
    s.wait_for_element("[data-testid=workbench]", WAIT)?;
    let switch = s.find("[data-testid=inspect-views]")?;
    s.click(&switch)?;
    s.wait_for("the inspector to be on", WAIT, |s| {
        Ok(s.property(&s.find("[data-testid=inspect-views]")?, "checked")?
            .as_bool()
            .filter(|on| *on))
    })?;

    let run = |tool: &str| -> Result<String> {
        let search = s.find("[data-testid=tools-search]")?;
        s.clear(&search)?;
        s.send_keys(&search, tool)?;
        s.click(&s.wait_for_element(&format!("[data-testid=tool-entry][data-tool-name={tool}]"), WAIT)?)?;
        // good_view asks for a city.
        let city = "input[data-testid=tool-field][data-field=city], [data-testid=tool-field][data-field=city] input";
        if let Some(field) = s.find_all(city)?.first() {
            s.send_keys(field, "Oslo")?;
        }
        s.click(&s.wait_for_element("[data-testid=tool-run]", WAIT)?)?;
        let card = format!("[data-testid=tool-call][data-tool-name={tool}]");
        s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
        open_inspector(s, &card)?;
        s.wait_for_element(&format!("{card} [data-testid=inspect-summary]"), WAIT)?;
        Ok(card)
    };

    let card = run("csp_breaking_view")?;
    let violation = s.wait_for_element(&format!("{card} [data-testid=inspect-csp-violation]"), WAIT)?;
    let said = s.text(&violation)?;
    assert!(
        said.starts_with("img-src") && said.contains("https://images.undeclared.example/logo.png"),
        "{said}"
    );
    let patch: serde_json::Value =
        serde_json::from_str(&s.text(&s.find(&format!("{card} [data-testid=inspect-csp-patch]"))?)?)?;
    assert_eq!(
        patch,
        json!({"_meta": {"ui": {"csp": {"resourceDomains": ["https://images.undeclared.example"]}}}})
    );
    let policy = s.text(&s.find(&format!("{card} [data-testid=inspect-csp-policy]"))?)?;
    assert!(policy.starts_with("default-src 'none'"), "{policy}");
    s.execute(
        "document.querySelector(arguments[0]).scrollIntoView({ block: 'center' })",
        json!([format!("{card} [data-testid=inspect-csp-patch]")]),
    )?;
    readme_screenshot(s, "workbench-view-inspector.png")?;
    let summary = s.text(&s.find(&format!("{card} [data-testid=inspect-summary]"))?)?;
    assert!(
        summary.starts_with("Mounted 1 time for this call · ready after"),
        "{summary}"
    );
    let initialize =
        format!("{card} [data-testid=inspect-message][data-direction=from-view][data-method='ui/initialize']");
    s.wait_for_element(&initialize, WAIT)?;
    // Each request says how long its answer took.
    let took = s.text(&s.find(&format!("{initialize} [data-testid=inspect-message-duration]"))?)?;
    assert!(took.starts_with("answered in ") && took.ends_with(" ms"), "{took}");
    s.find(&format!(
        "{card} [data-testid=inspect-message][data-direction=to-view][data-method='ui/notifications/tool-result']"
    ))?;
    s.click(&s.find(&format!("{card} [data-testid=inspect-host-context] summary"))?)?;
    let context = s.text(&s.find(&format!("{card} [data-testid=inspect-host-context] pre"))?)?;
    assert!(
        context.contains("\"theme\"") && context.contains("\"hostCapabilities\""),
        "{context}"
    );

    let card = run("noisy_view")?;
    wait_for_texts(
        s,
        "the view's console log line, error and uncaught exception",
        &format!("{card} [data-testid=inspect-console-line]"),
        &[
            "log drawing 3 bars",
            "error the chart data is missing",
            "uncaught Error: cannot read x of undefined",
        ],
    )?;
    assert!(
        s.find_all(&format!("{card} [data-testid=inspect-csp-violation]"))?
            .is_empty()
    );

    // Edit and replay: another result in a fresh view, without calling the server; then reload.
    let card = run("good_view")?;
    let shown = |what: &str, wanted: &'static str| -> Result<()> {
        let css = format!("{card} iframe[data-testid=mcp-app-view]");
        s.wait_for(what, WAIT, |s| {
            Ok(text_in_frame(s, &css, "body")?
                .filter(|t| t.contains(wanted))
                .map(|_| ()))
        })
    };
    shown("the call's result in the view", "good_view ran")?;
    s.click_when_still(&format!("{card} [data-testid=inspect-edit]"))?;
    s.wait_for_element(&format!("{card} [data-testid=inspect-replay-result]"), WAIT)?;
    // The edited result put in as typing would (typed key by key, a long text moves the layout
    // under WebDriver's next click), and the button brought into sight before it is pressed.
    s.execute(
        "const el = document.querySelector(arguments[0]);
         el.value = arguments[1];
         el.dispatchEvent(new Event('input', { bubbles: true }));
         document.querySelector(arguments[2]).scrollIntoView({ block: 'center' });",
        json!([
            format!("{card} [data-testid=inspect-replay-result]"),
            r#"{"content": [{"type": "text", "text": "Replayed, no server asked"}]}"#,
            format!("{card} [data-testid=inspect-replay]"),
        ]),
    )?;
    s.click_when_still(&format!("{card} [data-testid=inspect-replay]"))?;
    shown("the edited result in a fresh view", "Replayed, no server asked")
        .map_err(|e| e.context(card_state(s, &card)))?;
    let mounted = |n: &'static str| -> Result<()> {
        let css = format!("{card} [data-testid=inspect-summary]");
        s.wait_for(&format!("mounted {n}"), WAIT, |s| {
            Ok(s.text(&s.find(&css)?)?
                .starts_with(&format!("Mounted {n} for this call"))
                .then_some(()))
        })
    };
    mounted("2 times")?;
    // The server's traffic has the three runs' tools/call, and no other.
    tab(s, "traffic")?;
    choose(s, "[data-testid=workbench-server]", "broken")?;
    let filter = s.wait_for_element("[data-testid=workbench-traffic] [data-testid=traffic-filter]", WAIT)?;
    s.send_keys(&filter, "tools/call")?;
    let sent = |method: &str| -> Result<usize> {
        let css = format!(
            "[data-testid=workbench-traffic] [data-testid=traffic-entry][data-method='{method}'][data-direction=out]"
        );
        Ok(s.find_all(&css)?.len())
    };
    s.wait_for("the runs' calls in the traffic", WAIT, |_| {
        Ok((sent("tools/call")? == 3).then_some(()))
    })?;
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(sent("tools/call")?, 3, "the replay called the server");
    s.clear(&filter)?;
    s.send_keys(&filter, "resources/read")?;
    let before = sent("resources/read")?;
    s.execute(
        "document.querySelector(arguments[0]).scrollIntoView({ block: 'center' });",
        json!([format!("{card} [data-testid=inspect-reload]")]),
    )?;
    s.click_when_still(&format!("{card} [data-testid=inspect-reload]"))?;
    shown("the call's own result again", "good_view ran")?;
    mounted("3 times")?;
    s.wait_for("the view's resource read again", WAIT, |_| {
        Ok((sent("resources/read")? > before).then_some(()))
    })?;

    // In its pop-out window the view is inspected too, and replayed there with what it was
    // given (the pop-out has no card to take them from).
    let main = s.window_handle()?;
    s.execute(
        "document.querySelector(arguments[0]).scrollIntoView({ block: 'center' });",
        json!([format!("{card} [data-testid=view-pop-out]")]),
    )?;
    s.click_when_still(&format!("{card} [data-testid=view-pop-out]"))?;
    let pop_out = s.wait_for("the pop-out window", WAIT, |s| {
        Ok(s.window_handles()?.into_iter().find(|h| *h != main))
    })?;
    s.switch_to_window(&pop_out)?;
    s.wait_for_element("[data-testid=view][data-state=ready]", WAIT)?;
    s.click(&s.wait_for_element("[data-testid=view-inspect-toggle]", WAIT)?)?;
    let summary = s.wait_for("the pop-out's inspector", WAIT, |s| {
        let found = s.find_all("[data-testid=inspect-summary]")?;
        Ok(match found.first() {
            Some(el) => Some(s.text(el)?).filter(|t| t.starts_with("Mounted 4 times for this call")),
            None => None,
        })
    })?;
    assert!(summary.contains("ready after"), "{summary}");
    s.find("[data-testid=inspect-message][data-direction=to-view][data-method='ui/notifications/tool-result']")?;
    s.click(&s.find("[data-testid=inspect-edit]")?)?;
    let given = s.wait_for_element("[data-testid=inspect-replay-result]", WAIT)?;
    let given = s.property(&given, "value")?;
    assert!(
        given.as_str().is_some_and(|t| t.contains("good_view ran")),
        "the result it was given: {given}"
    );
    s.execute(
        "const el = document.querySelector(arguments[0]);
         el.value = arguments[1];
         el.dispatchEvent(new Event('input', { bubbles: true }));
         document.querySelector(arguments[2]).scrollIntoView({ block: 'center' });",
        json!([
            "[data-testid=inspect-replay-result]",
            r#"{"content": [{"type": "text", "text": "Replayed in the pop-out"}]}"#,
            "[data-testid=inspect-replay]",
        ]),
    )?;
    s.click(&s.find("[data-testid=inspect-replay]")?)?;
    s.wait_for("the replayed result in the pop-out's view", WAIT, |s| {
        Ok(text_in_frame(s, "iframe[data-testid=mcp-app-view]", "body")?
            .filter(|t| t.contains("Replayed in the pop-out"))
            .map(|_| ()))
    })?;
    let _ = s.send_keys(&s.find("[data-testid=view-pop-in]")?, "\u{E00C}");
    s.switch_to_window(&main)?;
    Ok(())
}

/// Hot reload: a server entry's `watch` names a file; saving it restarts the server and
/// re-creates its open view with the call's input and result (its resource read again). Prints
/// how long from the save to the re-created view.
#[test]
fn saving_a_watched_file_restarts_the_server_and_recreates_its_views() -> Result<()> {
    let dir = profile();
    let watched = dir.path().join("view-source.html");
    std::fs::write(&watched, "<p>one</p>")?;
    let config = json!({"mcpServers": {"broken": {
        "command": env!("CARGO_BIN_EXE_porthole-broken-apps-server"), "args": ["--only-live"],
        "watch": [watched.display().to_string()],
    }}});
    std::fs::write(dir.path().join("config.json"), config.to_string())?;
    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;
    s.wait_for_element(
        "[data-testid=server][data-server-name=broken][data-state=connected]",
        WAIT,
    )?;
    s.click(&s.find("[data-testid=tools-button]")?)?;
    s.click(&s.wait_for_element("[data-testid=inspect-views]", WAIT)?)?;
    s.send_keys(&s.find("[data-testid=tools-search]")?, "good_view")?;
    s.click(&s.wait_for_element("[data-testid=tool-entry][data-tool-name=good_view]", WAIT)?)?;
    let city = s.wait_for_element(
        "input[data-testid=tool-field][data-field=city], [data-testid=tool-field][data-field=city] input",
        WAIT,
    )?;
    s.send_keys(&city, "Oslo")?;
    s.click(&s.find("[data-testid=tool-run]")?)?;
    let card = "[data-testid=tool-call][data-tool-name=good_view]";
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    open_inspector(s, card)?;
    let summary = format!("{card} [data-testid=inspect-summary]");
    let mounted = |n: &str| -> Result<bool> {
        Ok(s.find_all(&summary)?
            .first()
            .map(|el| s.text(el))
            .transpose()?
            .is_some_and(|t| t.starts_with(&format!("Mounted {n} for this call"))))
    };
    s.wait_for("the first view", WAIT, |_| Ok(mounted("1 time")?.then_some(())))?;

    let saved = std::time::Instant::now();
    std::fs::write(&watched, "<p>two, a little longer</p>")?;
    s.wait_for("the view re-created", WAIT, |_| Ok(mounted("2 times")?.then_some(())))?;
    s.wait_for_element(&format!("{card} [data-testid=view-state][data-state=ready]"), WAIT)?;
    eprintln!(
        "hot reload: saved file to re-created view in {} ms",
        saved.elapsed().as_millis()
    );
    // The server was started again: a second initialize in its traffic.
    s.click(&s.find("[data-testid=workbench-tab][data-tab=traffic]")?)?;
    s.send_keys(
        &s.wait_for_element("[data-testid=workbench-traffic] [data-testid=traffic-filter]", WAIT)?,
        "initialize",
    )?;
    s.wait_for("two handshakes in the traffic", WAIT, |s| {
        let css =
            "[data-testid=workbench-traffic] [data-testid=traffic-entry][data-method=initialize][data-direction=out]";
        Ok((s.find_all(css)?.len() == 2).then_some(()))
    })?;
    // Left alone, it is not restarted again.
    std::thread::sleep(Duration::from_secs(1));
    assert!(mounted("2 times")?, "re-created again without a change");
    Ok(())
}

/// The message at the top of the transcript and how far its top is below the transcript's top
/// (px), or None while no message is there.
fn top_message(s: &porthole_e2e::Session) -> Result<Option<(String, f64)>> {
    let found = s.execute(
        "const t = document.querySelector('[data-testid=transcript]');
         if (!t) return null;
         const top = t.getBoundingClientRect().top;
         for (const m of t.querySelectorAll('[data-testid=message]')) {
           const r = m.getBoundingClientRect();
           if (r.bottom > top + 1) return [m.textContent.trim(), r.top - top];
         }
         return null;",
        json!([]),
    )?;
    Ok(found.as_array().map(|a| {
        (
            a[0].as_str().unwrap_or_default().to_string(),
            a[1].as_f64().unwrap_or(f64::NAN),
        )
    }))
}

/// Each conversation's scroll position comes back: on going back to it, and after a restart
/// (with the place in turns that load only as earlier pages); one read to its end opens at its end.
#[test]
fn each_conversation_opens_where_it_was_left_even_after_a_restart() -> Result<()> {
    use porthole_store::{MessageRole, MessageStatus};
    let dir = profile();
    {
        let store = porthole_store::Store::open(&dir.path().join("porthole.db"))?;
        for (title, pairs) in [("Long", 600), ("Short", 40), ("Read", 40)] {
            let conversation = store.create_conversation(title)?;
            for i in 0..pairs {
                let text = |t: String| json!([{ "type": "text", "text": t }]);
                store.append_message(
                    &conversation.id,
                    MessageRole::User,
                    &text(format!("{title} question {i}")),
                    MessageStatus::Complete,
                )?;
                store.append_message(
                    &conversation.id,
                    MessageRole::Assistant,
                    &text(format!(
                        "{title} answer {i}\n\nA second paragraph, so answers are taller than questions."
                    )),
                    MessageStatus::Complete,
                )?;
            }
        }
    }
    let open = |s: &porthole_e2e::Session, title: &str| -> Result<()> {
        let css = "[data-testid=conversation]";
        s.wait_for(&format!("the conversation {title}"), WAIT, |s| {
            for el in s.find_all(css)? {
                if s.attribute(&el, "title")?.as_deref() == Some(title) {
                    return Ok(Some(el));
                }
            }
            Ok(None)
        })
        .and_then(|el| s.click(&el))
    };
    let scroll_to = |s: &porthole_e2e::Session, fraction: f64| -> Result<(String, f64)> {
        s.execute(
            "const t = document.querySelector('[data-testid=transcript]');
             t.scrollTop = (t.scrollHeight - t.clientHeight) * arguments[0];",
            json!([fraction]),
        )?;
        // Left still: the place is kept (after 0.4 s in the window, 0.5 s more to the file).
        std::thread::sleep(Duration::from_millis(1500));
        s.wait_for("a message at the top", WAIT, top_message)
    };
    let comes_back = |s: &porthole_e2e::Session, place: &(String, f64)| -> Result<()> {
        let found = s.wait_for(&format!("{:?} at the top", place.0), WAIT, |s| {
            Ok(top_message(s)?.filter(|(text, _)| *text == place.0))
        })?;
        std::thread::sleep(Duration::from_millis(500));
        let settled = top_message(s)?.unwrap_or(found);
        assert_eq!(settled.0, place.0);
        assert!(
            (settled.1 - place.1).abs() <= 4.0,
            "{} is {} px below the top, not {}",
            place.0,
            settled.1,
            place.1
        );
        Ok(())
    };
    let at_end = |s: &porthole_e2e::Session, last: &str| -> Result<()> {
        s.wait_for(&format!("{last} at the end"), WAIT, |s| {
            let gap = s.execute(
                "const t = document.querySelector('[data-testid=transcript]');
                 const m = [...t.querySelectorAll('[data-testid=message]')].pop();
                 return m && m.textContent.trim().startsWith(arguments[0])
                   ? t.scrollHeight - t.scrollTop - t.clientHeight : null;",
                json!([last]),
            )?;
            Ok(gap.as_f64().filter(|gap| *gap < 50.0))
        })
        .map(|_| ())
    };

    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;
    open(s, "Long")?;
    // Every earlier page loaded by itself (1,200 messages), then a place a third of the way down.
    s.wait_for("the whole conversation", Duration::from_secs(60), |s| {
        let earlier = s.attribute(&s.find("[data-testid=transcript]")?, "data-earlier")?;
        Ok((earlier.as_deref() == Some("false")).then_some(()))
    })?;
    let long = scroll_to(s, 0.3)?;
    assert!(long.0.starts_with("Long "), "{long:?}");
    open(s, "Short")?;
    at_end(s, "Short answer 39")?;
    let short = scroll_to(s, 0.5)?;
    open(s, "Read")?;
    at_end(s, "Read answer 39")?;
    scroll_to(s, 0.2)?;
    // Read to its end again: it opens at its end.
    scroll_to(s, 1.0)?;
    open(s, "Long")?;
    comes_back(s, &long)?;
    drop(app);

    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;
    open(s, "Long")?;
    comes_back(s, &long)?;
    open(s, "Short")?;
    comes_back(s, &short)?;
    open(s, "Read")?;
    at_end(s, "Read answer 39")?;
    Ok(())
}

/// The command line writes beside the running app on its profile, into the same store: a
/// `porthole run` of its own conversation completes while the window's reply is still being
/// written, and one aimed at the window's conversation is refused (one writer per conversation),
/// naming the app's process, without touching it.
#[test]
fn the_command_line_writes_beside_the_app_and_a_busy_conversation_keeps_one_writer() -> Result<()> {
    use porthole_store::{MessageRole, MessageStatus};
    let runtime = tokio::runtime::Runtime::new()?;
    let fake = runtime.block_on(FakeLlm::start(Script::new(vec![
        Reply::Hang,
        Reply::text("Written from the terminal."),
    ])))?;
    let dir = profile();
    let app = launch_with_model(dir.path(), &fake)?;
    let s = &app.session;
    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, "Take your time\u{E007}")?;
    s.wait_for("the reply to start", WAIT, |s| {
        let replies = s.find_all("[data-testid=message][data-role=assistant]")?;
        Ok(match replies.last() {
            Some(last) => s.text(last)?.contains("Hang on").then_some(()),
            None => None,
        })
    })?;
    let listed = s.wait_for_element("[data-testid=conversation][aria-current=true]", WAIT)?;
    let busy = s
        .attribute(&listed, "data-conversation-id")?
        .context("the open conversation has no id")?;
    let app_pid = porthole_e2e::apps_on(dir.path());
    assert_eq!(app_pid.len(), 1, "{app_pid:?}");

    let url = fake.base_url();
    let run = |extra: &[&str]| -> Result<std::process::Output> {
        let mut args = vec![
            "run",
            "--yes",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            &url,
            "--model",
            "m",
        ];
        args.extend_from_slice(extra);
        Ok(porthole_e2e::porthole_command(dir.path(), &args)
            .env("OPENAI_API_KEY", "sk-x")
            .stdin(std::process::Stdio::null())
            .output()?)
    };
    let refused = run(&["--conversation", &busy, "--prompt", "Me too"])?;
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "conversation {busy} is busy in another Porthole (pid {})",
            app_pid[0]
        )),
        "{said}"
    );
    let beside = run(&["--prompt", "From the terminal"])?;
    assert!(beside.status.success(), "{}", String::from_utf8_lossy(&beside.stderr));
    assert!(String::from_utf8_lossy(&beside.stdout).contains("Written from the terminal."));
    // The window's reply is still being written, untouched.
    assert!(!s.find_all("[data-testid=stop]")?.is_empty(), "the window's turn ended");
    s.click(&s.find("[data-testid=stop]")?)?;
    s.wait_for("the turn to stop", WAIT, |s| {
        Ok(s.find_all("[data-testid=stop]")?.is_empty().then_some(()))
    })?;
    drop(app);

    let store = porthole_store::Store::open_read_only(&dir.path().join("porthole.db"))?;
    let conversations = store.list_conversations()?;
    assert_eq!(conversations.len(), 2, "{conversations:?}");
    let window: Vec<_> = store.messages(&busy)?.iter().map(|m| m.role).collect();
    assert_eq!(window, [MessageRole::User, MessageRole::Assistant]);
    let other = conversations
        .iter()
        .find(|c| c.id != busy)
        .context("the terminal's conversation")?;
    let terminal: Vec<_> = store.messages(&other.id)?.iter().map(|m| (m.role, m.status)).collect();
    assert_eq!(
        terminal,
        [
            (MessageRole::User, MessageStatus::Complete),
            (MessageRole::Assistant, MessageStatus::Complete)
        ]
    );
    Ok(())
}

/// One app per profile: Porthole launched again on a profile whose app runs brings that window
/// forward and hands it the new launch's install link, and ends at once; the command-line tools
/// still run beside the app on that profile; another profile starts an app of its own.
#[test]
fn a_second_launch_on_the_same_profile_is_handed_to_the_running_app() -> Result<()> {
    use base64::Engine;
    use std::process::{Command, Stdio};
    let dir = profile();
    let app = App::launch(dir.path(), &[], &[])?;
    let s = &app.session;
    s.wait_for_element("[data-testid=composer]", WAIT)?;
    let entry = json!({"command": env!("CARGO_BIN_EXE_porthole-test-server")});
    let config = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(entry.to_string());
    let link = format!("porthole://install-server?name=handed&config={config}");
    let binary = porthole_e2e::porthole_binary();
    let again = Command::new(&binary)
        .arg("--profile")
        .arg(dir.path())
        .arg(&link)
        .stdin(Stdio::null())
        .output()?;
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{said}");
    assert!(said.contains("already open on this profile"), "{said}");
    s.wait_for_element("[data-testid=server-install-dialog]", WAIT)?;
    assert_eq!(s.text(&s.find("[data-testid=server-install-name]")?)?, "handed");

    // The command line beside the running app, on the same profile.
    let tools = Command::new(&binary)
        .arg("--profile")
        .arg(dir.path())
        .args(["tools", "--json"])
        .output()?;
    assert!(tools.status.success(), "{}", String::from_utf8_lossy(&tools.stderr));
    assert!(String::from_utf8_lossy(&tools.stdout).contains("system_monitor"));

    // Another profile: an app of its own, which keeps running.
    let other = profile();
    let mut own = Command::new(&binary)
        .arg("--profile")
        .arg(other.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let deadline = std::time::Instant::now() + WAIT;
    while !other.path().join("app.sock").exists() && std::time::Instant::now() < deadline {
        assert!(own.try_wait()?.is_none(), "the other profile's app ended");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        other.path().join("app.sock").exists(),
        "the other profile's app listens"
    );
    assert!(own.try_wait()?.is_none(), "the other profile's app runs on its own");
    own.kill()?;
    own.wait()?;
    Ok(())
}

/// Host emulation in the workbench: a view of a workbench run is told it runs in the host picked
/// (hostInfo, capabilities, display modes, platform, window.openai), a host that does not
/// advertise `message` refuses the view's `ui/message`, a device change reaches the live view as
/// a context change, and the model's own view in the same chat stays Porthole's throughout.
#[test]
fn a_preset_changes_what_the_view_reports_about_its_host() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let fake = runtime.block_on(FakeLlm::start(Script::new(vec![
        Reply::ToolCalls {
            text: None,
            calls: vec![FakeToolCall::new("call_report", "host_report", "{}")],
        },
        Reply::text("Reported."),
    ])))?;
    let dir = profile();
    let config = json!({"mcpServers": {"pizzaz": {
        "command": env!("CARGO_BIN_EXE_porthole-apps-sdk-server"),
        "args": ["--host-report"],
        "alwaysAllow": ["host_report"],
    }}});
    std::fs::write(dir.path().join("config.json"), config.to_string())?;
    let app = launch_with_model(dir.path(), &fake)?;
    let s = &app.session;
    s.wait_for_element(
        "[data-testid=server][data-server-name=pizzaz][data-state=connected]",
        WAIT,
    )?;
    // The model's call: a view in an ordinary chat.
    s.send_keys(&s.find("[data-testid=composer]")?, "Report the host\u{E007}")?;
    let chat_card = "[data-testid=tool-call][data-call-id=call_report]";
    s.wait_for_element(&format!("{chat_card} [data-testid=view-state][data-state=ready]"), WAIT)?;

    // The same tool run from the workbench.
    s.click(&s.find("[data-testid=tools-button]")?)?;
    s.wait_for_element("[data-testid=workbench]", WAIT)?;
    let search = s.find("[data-testid=tools-search]")?;
    s.send_keys(&search, "host_report")?;
    s.click(&s.wait_for_element("[data-testid=tool-entry][data-tool-name=host_report]", WAIT)?)?;
    s.click(&s.wait_for_element("[data-testid=tool-run]", WAIT)?)?;
    let run_card = "[data-testid=tool-call][data-tool-name=host_report]:not([data-call-id=call_report])";
    s.wait_for_element(&format!("{run_card} [data-testid=view-state][data-state=ready]"), WAIT)?;

    // What a view reports, read from its frame.
    let report = |card: &str, id: &str, wanted: &str| -> Result<()> {
        let css = format!("{card} iframe[data-testid=mcp-app-view]");
        let mut seen = String::new();
        let found = s.wait_for(&format!("{id} = {wanted} in {card}"), WAIT, |s| {
            seen = text_in_frame(s, &css, &format!("[data-testid={id}]"))?
                .unwrap_or_else(|| "(no such frame or element yet)".into());
            Ok((seen == wanted).then_some(()))
        });
        found.with_context(|| format!("{id} was {seen:?}"))
    };
    report(run_card, "host-name", "Porthole")?;
    report(run_card, "host-result", "reported")?;

    // Goose: its hostInfo, no serverTools or message; the view is re-created with its result.
    tab(s, "host")?;
    // The tab reads the setting before it shows its form.
    s.wait_for_element("[data-testid=host-preset]", WAIT)?;
    choose(s, "[data-testid=host-preset]", "goose")?;
    s.wait_for_element("[data-testid=host-emulation-status]", WAIT)?;
    report(run_card, "host-name", "MCP-UI Host")?;
    report(run_card, "host-capabilities", "logging,openLinks,serverResources")?;
    report(run_card, "host-modes", "inline,fullscreen,pip")?;
    report(run_card, "host-result", "reported")?;
    let badge = s.wait_for_element(&format!("{run_card} [data-testid=view-emulation]"), WAIT)?;
    assert!(
        s.text(&badge)?.starts_with("Shown as Goose presents views"),
        "{}",
        s.text(&badge)?
    );
    readme_screenshot(s, "workbench-host-emulation.png")?;
    s.switch_to_top()?;
    let frame = s.find(&format!("{run_card} iframe[data-testid=mcp-app-view]"))?;
    s.switch_to_frame(&frame)?;
    let clicked = s.find("[data-testid=message-button]").and_then(|b| s.click(&b));
    s.switch_to_top()?;
    clicked?;
    report(run_card, "host-message", "refused")?;

    // ChatGPT: window.openai in the view's document, the web platform, its modes.
    choose(s, "[data-testid=host-preset]", "chatgpt")?;
    report(run_card, "host-name", "ChatGPT")?;
    report(run_card, "host-openai", "yes")?;
    report(run_card, "host-platform", "web")?;
    report(run_card, "host-modes", "inline,fullscreen,pip")?;
    // A device is a context change: the live view is told (mobile, touch, 430 px).
    choose(s, "[data-testid=host-device]", "mobile")?;
    report(run_card, "host-platform", "mobile")?;
    report(run_card, "host-touch", "yes")?;
    report(run_card, "host-width", "430")?;
    let width = s.execute(
        "return document.querySelector(arguments[0]).getBoundingClientRect().width",
        json!([format!("{run_card} iframe[data-testid=mcp-app-view]")]),
    )?;
    assert!(
        width.as_f64().is_some_and(|w| w <= 430.5),
        "the frame is the device's width: {width}"
    );

    // The model's view in the chat was never emulated.
    report(chat_card, "host-name", "Porthole")?;
    report(chat_card, "host-openai", "no")?;
    assert!(
        s.find_all(&format!("{chat_card} [data-testid=view-emulation]"))?
            .is_empty()
    );

    // Back to Porthole: the run's view is itself again.
    s.click(&s.find("[data-testid=host-emulation-reset]")?)?;
    report(run_card, "host-name", "Porthole")?;
    report(run_card, "host-openai", "no")?;

    // The view's resource previewed from the Resources tab with a sample result the server
    // never gives (it answers "reported"), under an emulated host.
    choose(s, "[data-testid=host-preset]", "claude")?;
    report(run_card, "host-name", "Claude")?;
    tab(s, "resources")?;
    let resource = "[data-testid=workbench-resource][data-uri='ui://apps/host-report.html']";
    let preview_button = format!("{resource} [data-testid=resource-preview]");
    s.wait_for_element(&preview_button, WAIT)?;
    // The sample result written into the preview form; the button brought into sight and
    // pressed (again, if a click missed: the tab's list scrolls) until the form is there.
    s.wait_for("the preview form with the sample result", WAIT, |s| {
        let filled = s.execute(
            "const el = document.querySelector(arguments[0]);
             if (!el) return false;
             el.value = arguments[1];
             el.dispatchEvent(new Event('input', { bubbles: true }));
             return true;",
            json!([
                "[data-testid=preview-result]",
                r#"{"content": [{"type": "text", "text": "a sample result"}]}"#
            ]),
        )?;
        if filled == json!(true) {
            return Ok(Some(()));
        }
        s.execute(
            "document.querySelector(arguments[0]).scrollIntoView({ block: 'center' })",
            json!([preview_button]),
        )?;
        s.click(&s.find(&preview_button)?)?;
        Ok(None)
    })?;
    s.click(&s.find("[data-testid=preview-show]")?)?;
    let preview = "[data-testid=view-preview]";
    s.wait_for_element(&format!("{preview} [data-testid=view-state][data-state=ready]"), WAIT)?;
    report(preview, "host-result", "a sample result")?;
    report(preview, "host-name", "Claude")?;
    report(preview, "host-modes", "inline,fullscreen")?;
    s.execute(
        "document.querySelector(arguments[0]).scrollIntoView({ block: 'end' })",
        json!(["[data-testid=view-preview] [data-testid=view-frame]"]),
    )?;
    readme_screenshot(s, "workbench-view-preview.png")?;
    Ok(())
}
