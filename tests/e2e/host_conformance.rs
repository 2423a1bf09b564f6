//! The MCP Apps host requirements, by their catalogue IDs (`tests/host-conformance/catalogue.json`),
//! checked in the real window: Porthole's own runner view (`tests/hostile-server/conformance.html`,
//! served by `porthole-hostile-server`) checks what it can see from inside its frame and reports
//! it; this test checks the rest from the host's side (the frame's attributes, the audit log, the
//! fake model's recorded requests, the server's log, the browser that was opened) and drives the
//! window where a person would (sending the proposed message, denying a call, switching the
//! theme, leaving the conversation). It fails when a requirement marked verified does not hold.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use porthole_e2e::{App, Session, workspace_root};
use porthole_fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use porthole_store::{AuditKind, Store};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(40);
const CARD: &str = "[data-testid=tool-call][data-tool-name=conformance_view]";

fn catalogue() -> Vec<Value> {
    let path = workspace_root().join("tests/host-conformance/catalogue.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn verified_ids() -> Vec<String> {
    catalogue()
        .iter()
        .filter(|e| e["status"] == "verified")
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect()
}

/// Every JSON value the view logged as `logger` (in the app's log files), in order.
fn logged(profile: &Path, logger: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(profile.join("logs")) else {
        return out;
    };
    let mut files: Vec<_> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let needle = format!("logger=\"{logger}\"");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for line in text.lines().filter(|l| l.contains(&needle)) {
            if let Some((_, data)) = line.split_once(" data=")
                && let Ok(value) = serde_json::from_str::<Value>(data.trim())
            {
                out.push(value);
            }
        }
    }
    out
}

/// Clicks `css` once it can be clicked (a dialog may still be opening).
fn click(s: &Session, css: &str) -> Result<()> {
    s.wait_for(&format!("{css} to take a click"), WAIT, |s| {
        Ok(match s.find_all(css)?.first() {
            Some(el) => s.click(el).ok(),
            None => None,
        })
    })
}

fn wait_for_event(s: &Session, profile: &Path, event: &str, extra: impl Fn(&Value) -> bool) -> Result<Value> {
    s.wait_for(&format!("the view's {event} event"), WAIT, |_| {
        Ok(logged(profile, "conformance-event")
            .into_iter()
            .find(|e| e["event"] == event && extra(e)))
    })
}

#[test]
fn the_catalogue_has_the_45_requirements_and_the_readme_says_how_many_are_verified() {
    let catalogue = catalogue();
    assert_eq!(catalogue.len(), 45);
    let mut ids: Vec<&str> = catalogue.iter().map(|e| e["id"].as_str().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 45, "IDs are unique");
    for entry in &catalogue {
        let status = entry["status"].as_str().unwrap();
        assert!(
            ["verified", "not applicable", "not verified"].contains(&status),
            "{entry}"
        );
        assert!(
            entry["check"].as_str().is_some_and(|c| c.len() > 20),
            "each says how it is checked, or why not: {entry}"
        );
    }
    let verified = verified_ids().len();
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let line = format!("{verified} of 45 host requirements verified");
    assert!(readme.contains(&line), "README.md must say \"{line}\"");
}

#[test]
fn the_host_requirements_hold_in_the_real_window() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    // Arguments stream in chunks 120 ms apart, so the view sees them arrive.
    let fake = runtime.block_on(FakeLlm::start(Script {
        chunk_delay_ms: 120,
        ..Script::new(vec![
            Reply::ToolCalls {
                text: None,
                calls: vec![FakeToolCall::new(
                    "c1",
                    "conformance_view",
                    json!({"case": "main", "padding": "x".repeat(40)}).to_string(),
                )],
            },
            Reply::text("Shown."),
            Reply::text("Noted."),
            Reply::ToolCalls {
                text: None,
                calls: vec![FakeToolCall::new(
                    "c2",
                    "conformance_view_ask",
                    json!({"case": "cancel"}).to_string(),
                )],
            },
            Reply::text("Denied."),
        ])
    }))?;
    let dir = tempfile::Builder::new().prefix("porthole-conformance-").tempdir()?;
    let profile = dir.path();
    let server = json!({"command": env!("CARGO_BIN_EXE_porthole-hostile-server"), "alwaysAllow": ["conformance_view"]});
    std::fs::write(
        profile.join("config.json"),
        json!({"mcpServers": {"conf": server}}).to_string(),
    )?;
    // The settings' block list (security/global-allowlist).
    Store::open(&profile.join("porthole.db"))?
        .set_setting("viewOriginsBlocked", &json!(["https://blocked.example"]))?;
    let (browser, opened) = porthole_e2e::recording_browser(profile)?;
    let url = fake.base_url();
    let browser_env = browser.display().to_string();
    let app = App::launch(
        profile,
        &["--base-url", &url, "--model", "fake-model"],
        &[("BROWSER", browser_env.as_str())],
    )?;
    let s = &app.session;
    s.wait_for_element(
        "[data-testid=server][data-server-name=conf][data-state=connected]",
        WAIT,
    )?;
    // Read ahead: the view's HTML is read once the server connects, before anything is asked.
    let server_log_file = profile.join("logs/servers/conf.log");
    let prefetched = s.wait_for("the view to be read ahead", Duration::from_secs(10), |_| {
        Ok(std::fs::read_to_string(&server_log_file)
            .ok()
            .filter(|l| l.contains("resources/read ui://hostile/conformance.html")))
    });
    let prefetched = prefetched.is_ok() && fake.requests().is_empty();
    let composer = s
        .find("[data-testid=composer]")
        .with_context(|| format!("finding {}", "[data-testid=composer]"))?;
    s.send_keys(&composer, "show the runner\u{E007}")?;

    // What the view checked from inside.
    let in_view = s.wait_for("the runner's results", Duration::from_secs(90), |_| {
        Ok(logged(profile, "conformance").into_iter().next())
    })?;
    let mut outcome: BTreeMap<String, (bool, String)> = BTreeMap::new();
    for r in in_view.as_array().context("results are an array")? {
        outcome.insert(
            r["id"].as_str().unwrap_or("?").to_string(),
            (r["ok"] == true, r["detail"].as_str().unwrap_or("").to_string()),
        );
    }
    let mut host = |id: &str, pass: bool, detail: String| {
        let entry = outcome.entry(id.to_string()).or_insert((true, String::new()));
        entry.0 &= pass;
        if !entry.1.is_empty() {
            entry.1.push_str("; ");
        }
        entry.1.push_str(&detail);
    };

    // The frame, from the window's document.
    let frame = s
        .find(&format!("{CARD} iframe[data-testid=mcp-app-view]"))
        .with_context(|| format!("finding {}", &format!("{CARD} iframe[data-testid=mcp-app-view]")))?;
    let sandbox = s.attribute(&frame, "sandbox")?.unwrap_or_default();
    host(
        "security/iframe-sandboxed",
        !sandbox.is_empty(),
        format!("sandbox=\"{sandbox}\""),
    );
    host(
        "security/sandbox-permissions",
        sandbox == "allow-scripts allow-same-origin",
        format!("sandbox=\"{sandbox}\""),
    );
    // The devices the view asks for (camera, clipboard): nothing until the person allows them.
    let allow_before = s.attribute(&frame, "allow")?.unwrap_or_default();
    let asked = s.text(
        &s.find(&format!("{CARD} [data-testid=view-devices-ask]"))
            .context("the card offers the devices the view asks for")?,
    )?;
    let granted_before = wait_for_event(s, profile, "granted", |e| e["case"] == "main");
    let src = s.attribute(&frame, "src")?.unwrap_or_default();
    let window_url = s.url()?;
    host(
        "security/sandbox-distinct-origin",
        src.starts_with("mcpview://") && !src.starts_with("mcpview://localhost") && !window_url.starts_with("mcpview:"),
        format!("frame {src}, window {window_url}"),
    );
    let reaches = s.text(
        &s.find(&format!("{CARD} [data-testid=view-reaches]"))
            .with_context(|| format!("finding {}", &format!("{CARD} [data-testid=view-reaches]")))?,
    )?;
    host(
        "security/external-domain-warning",
        reaches.contains("https://ok.example") && !reaches.contains("blocked.example"),
        format!("the card says: {reaches}"),
    );
    let height = s.wait_for("the frame to take the view's height", WAIT, |s| {
        let h = s.rect(&frame)?["height"].as_f64().unwrap_or(0.0);
        Ok(((h - 432.0).abs() < 1.0).then_some(h))
    });
    host(
        "dimensions/listen-size-changed",
        height.is_ok(),
        format!("frame height after size-changed 432: {height:?}"),
    );

    // The audit log and the CSP the view was served with.
    let store = Store::open(&profile.join("porthole.db"))?;
    let audit = store.audit_entries(1000)?;
    let served = audit
        .iter()
        .find(|e| e.kind == AuditKind::View && e.uri.as_deref() == Some("ui://hostile/conformance.html"))
        .context("the runner view is audited")?;
    let csp = served.detail["csp"].as_str().unwrap_or_default().to_string();
    host(
        "security/csp-construct-from-domains",
        csp.contains("connect-src https://ok.example"),
        format!("CSP: {csp}"),
    );
    host(
        "security/csp-default-deny",
        csp.starts_with("default-src 'none'") && !csp.contains("blocked.example") && !csp.contains('*'),
        "default-src 'none', nothing undeclared".into(),
    );
    let dropped = audit.iter().any(|e| {
        e.kind == AuditKind::CspDropped
            && e.detail["entry"] == "https://blocked.example"
            && e.detail["reason"].as_str().is_some_and(|r| r.contains("block list"))
    });
    host(
        "security/csp-audit-log",
        dropped,
        "the view and its dropped entry are audited".into(),
    );
    host(
        "security/global-allowlist",
        dropped,
        "the blocked origin is audited as csp-dropped".into(),
    );

    // What the model was offered and told.
    let posts = || -> Vec<Value> {
        fake.requests()
            .into_iter()
            .filter(|r| r.method == "POST")
            .map(|r| r.body)
            .collect()
    };
    let first = posts().first().cloned().context("a model request")?;
    host(
        "visibility/app-tool-hidden",
        !first["tools"].to_string().contains("conformance_probe")
            && first["tools"].to_string().contains("conformance_view"),
        "the model's tools have conformance_view, not the app-only conformance_probe".into(),
    );

    // The server's side: the view was read ahead, and the client advertised MCP Apps.
    let server_log = std::fs::read_to_string(profile.join("logs/servers/conf.log")).unwrap_or_default();
    host(
        "resources/prefetch",
        prefetched,
        "the server's log has the view's resources/read before any message was sent".into(),
    );
    let capabilities = server_log
        .lines()
        .find(|l| l.contains("client capabilities"))
        .unwrap_or_default()
        .to_string();
    host(
        "capabilities/mimetypes-required",
        capabilities.contains("io.modelcontextprotocol/ui") && capabilities.contains("text/html;profile=mcp-app"),
        capabilities.clone(),
    );

    // ui/open-link is put to the person, whole, and goes to the browser once they agree.
    let link_asked = s
        .wait_for_element("[data-testid=link-dialog] [data-testid=link-url]", WAIT)
        .and_then(|url| s.text(&url));
    let link_was_shown = link_asked
        .as_ref()
        .is_ok_and(|u| u == "https://modelcontextprotocol.io/conformance-link");
    let opened_before_asked = std::fs::read_to_string(&opened).is_ok_and(|t| t.contains("conformance-link"));
    if link_asked.is_ok() {
        s.click(&s.find("[data-testid=link-open]")?)?;
    }
    let link = s.wait_for("the link to open", WAIT, |_| {
        Ok(std::fs::read_to_string(&opened)
            .ok()
            .filter(|t| t.contains("conformance-link")))
    });
    host(
        "links/open-external",
        link.is_ok() && link_was_shown && !opened_before_asked,
        format!("asked about {link_asked:?}; the browser got {link:?} only after Open"),
    );

    // ui/message: proposed in the composer; nothing reaches the model until the person sends it.
    let proposed = s.wait_for("the proposed message", WAIT, |s| {
        let value = s.property(
            &s.find("[data-testid=composer]")
                .with_context(|| format!("finding {}", "[data-testid=composer]"))?,
            "value",
        )?;
        Ok((value == "conformance-msg-5c1d").then_some(value))
    });
    let asked_before = posts().len();
    std::thread::sleep(Duration::from_millis(500));
    host(
        "messages/consent",
        proposed.is_ok() && posts().len() == asked_before && asked_before == 2,
        format!(
            "composer {proposed:?}; model requests while proposed: {}",
            posts().len()
        ),
    );
    click(s, "[data-testid=send]")?;
    s.wait_for("the answer to the sent message", WAIT, |s| {
        let replies = s.find_all("[data-testid=message][data-role=assistant]")?;
        Ok(match replies.last() {
            Some(last) => (s.text(last)? == "Noted.").then_some(()),
            None => None,
        })
    })?;
    let third = posts().get(2).cloned().unwrap_or_default();
    let sent = third["messages"].to_string();
    host(
        "messages/add-to-conversation",
        sent.contains("conformance-msg-5c1d"),
        "the proposed message reached the model as the person's".into(),
    );
    host(
        "model-context/provide-future-turns",
        sent.contains("LAST-2222"),
        "the view's context is in the next request".into(),
    );
    host(
        "model-context/last-wins",
        sent.contains("LAST-2222") && !sent.contains("FIRST-1111"),
        "only the last update".into(),
    );
    // Three updates (the last two the same) asked the model nothing by themselves, and the next
    // request carries the last, once.
    host(
        "model-context/overwrite-defer-dedupe-display",
        asked_before == 2 && sent.matches("LAST-2222").count() == 1 && !sent.contains("FIRST-1111"),
        format!(
            "LAST-2222 appears {} time(s) in the next request",
            sent.matches("LAST-2222").count()
        ),
    );

    // The theme switched in the settings reaches the view.
    click(s, "[data-testid=settings-button]")?;
    s.wait_for_element("[data-testid=settings]", WAIT)?;
    if !s.find_all("[data-testid=settings-tab-general]")?.is_empty() {
        click(s, "[data-testid=settings-tab-general]")?;
    }
    click(s, "[data-testid=theme-dark]")?;
    let changed = wait_for_event(s, profile, "host-context-changed", |e| e["theme"] == "dark");
    host("context/context-changed", changed.is_ok(), format!("{changed:?}"));
    click(s, "[data-testid=settings-close]")?;
    s.wait_for("the settings to close", WAIT, |s| {
        Ok(s.find_all("[data-testid=settings]")?.is_empty().then_some(()))
    })?;

    // A call the person denies: its view is told it was cancelled.
    let composer = s.find("[data-testid=composer]")?;
    // Sent with the button: twice in CI (1 run in ~30), right after the theme changed, the
    // Enter typed by WebKitWebDriver left the text in the composer (no reply being written, no
    // dialog open). Enter sending is the window tests' business; this step is about denying.
    s.send_keys(&composer, "once more")?;
    click(s, "[data-testid=send]")?;
    let taken = |s: &Session| -> Result<Option<()>> {
        let value = s.property(&s.find("[data-testid=composer]")?, "value")?;
        let users = s.find_all("[data-testid=message][data-role=user]")?;
        let sent = match users.last() {
            Some(last) => s.text(last)?.contains("once more"),
            None => false,
        };
        Ok((value == "" && sent).then_some(()))
    };
    // About 1 run in 12 here (and never in the window tests), the first Send after the theme
    // change leaves the text in the composer with nothing said. Until the cause is found, the
    // test says so on its output and sends again, as a person would; a second miss fails.
    if s.wait_for("the message to be taken", Duration::from_secs(5), taken)
        .is_err()
    {
        eprintln!("host conformance: the first Send did nothing; {}", s.describe());
        click(s, "[data-testid=send]")?;
        s.wait_for("the message to be taken", WAIT, taken)?;
    }
    s.wait_for("the call to be asked about", WAIT, |s| {
        // The transcript stops following its end once a view has grown it, and it keeps only
        // the cards near what is shown: scrolled to the end, as a reader would.
        s.execute(
            "const t = document.querySelector('[data-testid=transcript]'); if (t) t.scrollTop = t.scrollHeight;",
            json!([]),
        )?;
        Ok((!s.find_all("[data-testid=deny]")?.is_empty()).then_some(()))
    })
    .with_context(|| format!("the model was asked {} time(s)", posts().len()))?;
    click(s, "[data-testid=deny]")?;
    let cancelled = wait_for_event(s, profile, "tool-cancelled", |_| true);
    host("lifecycle/tool-cancelled", cancelled.is_ok(), format!("{cancelled:?}"));

    // Leaving the conversation tears the views down, awaiting their answer.
    click(s, "[data-testid=new-chat]")?;
    let received = wait_for_event(s, profile, "teardown-received", |e| e["case"] == "main");
    host("lifecycle/teardown-notify", received.is_ok(), format!("{received:?}"));
    let answered = wait_for_event(s, profile, "teardown-answered", |e| e["case"] == "main");
    host(
        "lifecycle/teardown-await",
        answered.is_ok(),
        format!("the note posted 150 ms after the request arrived: {answered:?}"),
    );

    // Back in the conversation, the person allows the devices the view asks for: it is loaded
    // again with them in its frame's `allow`, and told so (`hostCapabilities.sandbox`).
    click(s, "[data-testid=conversation]")?;
    // Clicked once the re-created view is ready at its own height: a card still growing under
    // the pointer (the view's size-changed) can take the click elsewhere.
    s.wait_for("the view to offer its devices again, ready", WAIT, |s| {
        s.execute(
            "const c = document.querySelector(arguments[0]); if (c) c.scrollIntoView();",
            json!([CARD]),
        )?;
        let offered = !s
            .find_all(&format!("{CARD} [data-testid=view-devices-allow]"))?
            .is_empty();
        let ready = !s
            .find_all(&format!("{CARD} [data-testid=view-state][data-state=ready]"))?
            .is_empty();
        let settled = match s.find_all(&format!("{CARD} iframe[data-testid=mcp-app-view]"))?.first() {
            Some(frame) => (s.rect(frame)?["height"].as_f64().unwrap_or(0.0) - 432.0).abs() < 1.0,
            None => false,
        };
        Ok((offered && ready && settled).then_some(()))
    })?;
    std::thread::sleep(Duration::from_millis(300));
    let grants_before = logged(profile, "conformance-event")
        .iter()
        .filter(|e| e["event"] == "granted")
        .count();
    click(s, &format!("{CARD} [data-testid=view-devices-allow]"))?;
    let allow_after = s
        .wait_for("the view to be loaded again with its devices", WAIT, |s| {
            Ok(
                match s.find_all(&format!("{CARD} iframe[data-testid=mcp-app-view]"))?.first() {
                    Some(frame) => s.attribute(frame, "allow")?.filter(|a| a.contains("camera")),
                    None => None,
                },
            )
        })
        .map_err(|e| {
            let said = s
                .find_all(&format!(
                    "{CARD} [data-testid=view-devices-error], {CARD} [data-testid=view-state]"
                ))
                .unwrap_or_default()
                .iter()
                .filter_map(|el| s.text(el).ok())
                .collect::<Vec<_>>()
                .join(" | ");
            let cards = s.find_all(CARD).unwrap_or_default();
            let card = cards
                .first()
                .and_then(|c| s.property(c, "textContent").ok())
                .map(|t| t.to_string().chars().take(300).collect::<String>());
            anyhow::anyhow!("{e}; the card says: {said}; {} card(s): {card:?}", cards.len())
        });
    // The view loaded again says what it was given (a view re-created before the click may
    // still report its own, empty, grant meanwhile).
    let granted_after = s.wait_for("the reloaded view to say what it was granted", WAIT, |_| {
        Ok(logged(profile, "conformance-event")
            .into_iter()
            .filter(|e| e["event"] == "granted")
            .skip(grants_before)
            .find(|e| e["permissions"] != json!({})))
    });
    let audited = Store::open(&profile.join("porthole.db"))?
        .audit_entries(1000)?
        .iter()
        .any(|e| e.kind == AuditKind::Devices && e.detail["granted"] == json!(["camera", "clipboard-write"]));
    host(
        "security/permissions-allow-attr",
        allow_before.is_empty()
            && asked.contains("your camera and the clipboard")
            && granted_before.as_ref().is_ok_and(|e| e["permissions"] == json!({}))
            && allow_after.as_deref().is_ok_and(|a| a == "camera; clipboard-write")
            && granted_after
                .as_ref()
                .is_ok_and(|e| e["permissions"] == json!({"camera": {}, "clipboardWrite": {}}))
            && audited,
        format!(
            "asked for camera and clipboardWrite; before the person allowed them: allow=\"{allow_before}\", \
             granted {:?}, the card says \"{asked}\"; after: allow={allow_after:?}, granted {:?}, audited: {audited}",
            granted_before.map(|e| e["permissions"].clone()),
            granted_after.map(|e| e["permissions"].clone()),
        ),
    );

    // The report.
    let verified = verified_ids();
    let mut failed = Vec::new();
    println!("host conformance (tests/host-conformance/catalogue.json):");
    for entry in catalogue() {
        let id = entry["id"].as_str().unwrap();
        let status = entry["status"].as_str().unwrap();
        let line = match (status, outcome.get(id)) {
            ("verified", Some((true, detail))) => format!("PASS  {id}: {detail}"),
            ("verified", Some((false, detail))) => {
                failed.push(id.to_string());
                format!("FAIL  {id}: {detail}")
            }
            ("verified", None) => {
                failed.push(id.to_string());
                format!("FAIL  {id}: not checked")
            }
            (other, _) => format!("----  {id}: {other}"),
        };
        println!("  {line}");
    }
    println!(
        "host conformance: {} of 45 host requirements verified",
        verified.len() - failed.len()
    );
    assert!(failed.is_empty(), "host requirements that do not hold: {failed:?}");
    Ok(())
}
