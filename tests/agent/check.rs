//! `porthole check` against real servers: our deliberately broken one (every rule must fire),
//! the same server with only its correct tool, the official MCP Apps examples from npm and the
//! built-in demo server (nothing may fire but notes), and one that does not start.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Output, Stdio};

use porthole_e2e::{porthole_command, workspace_root};
use serde_json::{Value, json};

/// Every rule `porthole check` has (the contract CI jobs filter on), but `server-connect`,
/// which a server that does not start shows.
const RULES: [&str; 18] = [
    "tool-name",
    "input-schema",
    "ui-resource-uri",
    "ui-legacy-key",
    "ui-visibility",
    "ui-unknown-key",
    "openai-template",
    "openai-mismatch",
    "resource-read",
    "resource-contents",
    "resource-mime",
    "resource-size",
    "resource-encoding",
    "csp-entry",
    "permissions-unknown",
    "resource-meta",
    "resource-not-listed",
    "capability-gated",
];

fn check(profile: &Path, servers: Value, args: &[&str]) -> Output {
    let config = profile.join("check-servers.json");
    std::fs::write(&config, json!({ "mcpServers": servers }).to_string()).unwrap();
    let mut full = vec!["--mcp-config", config.to_str().unwrap(), "check"];
    full.extend_from_slice(args);
    porthole_command(profile, &full)
        .stdin(Stdio::null())
        .output()
        .expect("cannot run porthole (is it built? `cargo build -p porthole`)")
}

fn broken(args: &[&str]) -> Value {
    json!({"command": env!("CARGO_BIN_EXE_porthole-broken-apps-server"), "args": args})
}

fn report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn findings<'a>(report: &'a Value, server: &str) -> Vec<&'a Value> {
    report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == server)
        .unwrap_or_else(|| panic!("no {server} in {report:#}"))["findings"]
        .as_array()
        .unwrap()
        .iter()
        .collect()
}

#[test]
fn every_rule_fires_on_a_broken_server_and_a_dead_one_fails_to_connect() {
    let profile = tempfile::tempdir().unwrap();
    let junit = profile.path().join("check.xml");
    let out = check(
        profile.path(),
        json!({
            "broken": broken(&[]),
            "dead": {"command": "/nonexistent/porthole-no-such-server"},
        }),
        // The static rules (the live check of these views is the next test's).
        &["--json", "--junit", junit.to_str().unwrap(), "--no-live"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report = report(&out);
    let broken = findings(&report, "broken");
    let fired: BTreeSet<&str> = broken.iter().map(|f| f["rule"].as_str().unwrap()).collect();
    let expected: BTreeSet<&str> = RULES.into_iter().collect();
    assert_eq!(fired, expected, "{report:#}");
    // The correct tool and its view are not named in any finding.
    for f in &broken {
        assert_ne!(f["tool"], "good_view", "{f}");
        assert_ne!(f["resource"], "ui://broken/good.html", "{f}");
        assert!(
            ["error", "warning", "info"].contains(&f["severity"].as_str().unwrap()),
            "{f}"
        );
        assert!(!f["fix"].as_str().unwrap().is_empty(), "{f}");
    }
    let on = |tool: &str, rule: &str| broken.iter().any(|f| f["tool"] == tool && f["rule"] == rule);
    assert!(on("bad name!", "tool-name"));
    assert!(on("apps_only", "capability-gated"));
    let csp = broken.iter().find(|f| f["rule"] == "csp-entry").unwrap();
    assert_eq!(csp["resource"], "ui://broken/csp.html");
    assert_eq!(csp["severity"], "error");
    assert!(
        csp["message"].as_str().unwrap().contains("http://api.broken.example"),
        "{csp}"
    );
    let dead = findings(&report, "dead");
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0]["rule"], "server-connect");
    assert!(
        report["summary"]["errors"].as_u64().unwrap() >= 10,
        "{:#}",
        report["summary"]
    );
    assert_eq!(report["summary"]["passed"], false);

    // JUnit: a suite per server, a case per tool and view, the failing ones with a failure.
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"porthole check\""),
        "{xml}"
    );
    assert!(xml.contains("<testsuite name=\"broken\""), "{xml}");
    assert!(
        xml.contains("<testcase classname=\"broken.tools\" name=\"good_view\"></testcase>"),
        "{xml}"
    );
    assert!(
        xml.contains(
            "<testcase classname=\"broken.views\" name=\"ui://broken/csp.html\">\n      <failure type=\"csp-entry\""
        ),
        "{xml}"
    );
    assert!(
        xml.contains("<testcase classname=\"dead.server\" name=\"connect\">\n      <failure type=\"server-connect\""),
        "{xml}"
    );
    assert_eq!(
        xml.matches("<testsuite ").count(),
        3,
        "broken, dead and the profile's demo server: {xml}"
    );
}

#[test]
fn correct_servers_pass_even_when_strict() {
    let fixtures = workspace_root().join("tests/fixtures");
    let examples: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join("mcp-apps-examples.json")).unwrap()).unwrap();
    let mut servers = json!({ "good": broken(&["--only-good"]) });
    for name in ["basic-react", "basic-vanillajs"] {
        let example = examples.iter().find(|e| e["name"] == name).unwrap();
        servers[name] = json!({
            "command": "node",
            "args": example["args"],
            "cwd": fixtures.display().to_string(),
        });
    }
    let profile = tempfile::tempdir().unwrap();
    let out = check(profile.path(), servers, &["--json", "--strict"]);
    let report = report(&out);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["summary"]["passed"], true);
    assert_eq!(report["summary"]["strict"], true);
    for server in ["good", "basic-react", "basic-vanillajs", "porthole-demo"] {
        let serious: Vec<_> = findings(&report, server)
            .into_iter()
            .filter(|f| f["severity"] != "info")
            .collect();
        assert!(serious.is_empty(), "{server}: {serious:#?}");
        // Each view was loaded live, and started.
        let started = findings(&report, server)
            .into_iter()
            .filter(|f| f["rule"] == "live-initialize")
            .count();
        assert!(started >= 1, "{server}: {report:#}");
        let s = report["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == server)
            .unwrap();
        assert_eq!(s["connected"], true);
        assert!(!s["views"].as_object().unwrap().is_empty(), "{server} has views: {s:#}");
    }
    let good = findings(&report, "good");
    assert_eq!(good.len(), 1, "{good:#?}");
    assert_eq!(good[0]["rule"], "live-initialize");
    assert_eq!(good[0]["tool"], "good_view");

    // The same as text: each server, then the summary.
    let out = check(
        profile.path(),
        json!({ "good": broken(&["--only-good"]) }),
        &["--server", "good"],
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("good (porthole-broken-apps-server 1.0.0, protocol "),
        "{text}"
    );
    assert!(
        text.contains(": 1 tools, 1 views\n  info     live-initialize"),
        "{text}"
    );
    assert!(
        text.trim_end().ends_with("0 errors, 0 warnings, 1 info: passed"),
        "{text}"
    );
    // Without the live check: nothing at all.
    let out = check(
        profile.path(),
        json!({ "good": broken(&["--only-good"]) }),
        &["--server", "good", "--no-live"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(": 1 tools, 1 views\n  no findings\n"), "{text}");
}

#[test]
fn a_warning_fails_only_a_strict_check_and_a_missing_server_cannot_be_checked() {
    let profile = tempfile::tempdir().unwrap();
    // One warning (the legacy MIME type), no error (the live check adds a note of the time its
    // view took to start): passed, unless strict.
    // Disabled in its config: `--server` checks it all the same, its view included.
    let mut server = broken(&["--only-legacy"]);
    server["disabled"] = json!(true);
    let legacy = json!({ "legacy": server });
    let out = check(profile.path(), legacy.clone(), &["--server", "legacy"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("warning  resource-mime"), "{text}");
    assert!(
        text.contains("info     live-initialize      tool good_view: the view completed ui/initialize"),
        "{text}"
    );
    assert!(
        text.contains("fix: serve it as \"text/html;profile=mcp-app\""),
        "{text}"
    );
    let out = check(profile.path(), legacy.clone(), &["--server", "legacy", "--strict"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .trim_end()
            .ends_with("0 errors, 1 warning, 1 info: failed")
    );

    let out = check(profile.path(), legacy, &["--server", "nobody"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no server named \"nobody\""));

    let out = check(
        profile.path(),
        json!({}),
        &["--server", "porthole-demo", "--junit", "/nonexistent/dir/x.xml"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write /nonexistent/dir/x.xml"));
}

/// The live check loads each UI tool's view in a real, hidden Porthole webview: every live rule
/// fires on the view that breaks it, and the correct view gets only the time it took to start.
#[test]
fn the_live_check_loads_each_view_and_says_what_it_did() {
    let profile = tempfile::tempdir().unwrap();
    let servers = json!({ "live": broken(&["--only-live"]) });
    let started = std::time::Instant::now();
    let out = check(
        profile.path(),
        servers.clone(),
        &["--server", "live", "--json", "--view-timeout", "3"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let found = report(&out);
    let live = findings(&found, "live");
    let on = |tool: &str, rule: &str, severity: &str| -> Vec<&Value> {
        live.iter()
            .copied()
            .filter(|f| f["tool"] == tool && f["rule"] == rule && f["severity"] == severity)
            .collect()
    };
    assert_eq!(on("silent_view", "live-initialize", "error").len(), 1, "{found:#}");
    assert!(
        on("silent_view", "live-initialize", "error")[0]["message"]
            .as_str()
            .unwrap()
            .contains("within 3000 ms")
    );
    let noisy: Vec<String> = on("noisy_view", "live-console-error", "warning")
        .iter()
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        noisy,
        [
            "the view logged: the chart data is missing",
            "the view threw: Error: cannot read x of undefined"
        ],
        "{found:#}"
    );
    let csp = on("csp_breaking_view", "live-csp-violation", "warning");
    assert_eq!(csp.len(), 1, "{found:#}");
    assert_eq!(
        csp[0]["fix"],
        "add \"https://images.undeclared.example\" to _meta.ui.csp.resourceDomains of the view's resource"
    );
    assert_eq!(csp[0]["resource"], "ui://broken/csp_breaking.html");
    let asked = on("asking_view", "live-unsupported", "warning");
    assert_eq!(asked.len(), 1, "{found:#}");
    assert!(asked[0]["message"].as_str().unwrap().contains("ui/unheard-of"));
    let failed = on("failing_call", "live-call", "warning");
    assert!(
        failed[0]["message"].as_str().unwrap().contains("no such city: example"),
        "{found:#}"
    );
    // The correct view: started, nothing else.
    let good: Vec<_> = live.iter().filter(|f| f["tool"] == "good_view").collect();
    assert_eq!(good.len(), 1, "{good:#?}");
    assert_eq!(good[0]["rule"], "live-initialize");
    assert_eq!(good[0]["severity"], "info");
    // Each view that started is said to have.
    for tool in ["noisy_view", "csp_breaking_view", "asking_view", "failing_call"] {
        assert_eq!(on(tool, "live-initialize", "info").len(), 1, "{tool}: {found:#}");
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "six views, one of them timing out at 3 s: {:?}",
        started.elapsed()
    );

    // --no-call: the views get a sample result; the tool is not called, so it cannot fail.
    let out = check(
        profile.path(),
        servers.clone(),
        &["--server", "live", "--json", "--view-timeout", "3", "--no-call"],
    );
    let found = report(&out);
    assert!(
        findings(&found, "live").iter().all(|f| f["rule"] != "live-call"),
        "{found:#}"
    );
    // --args: the arguments given are the ones the tool is called with.
    let out = check(
        profile.path(),
        servers,
        &[
            "--server",
            "live",
            "--json",
            "--view-timeout",
            "3",
            "--args",
            r#"{"city": "Paris"}"#,
        ],
    );
    let found = report(&out);
    let live_call: Vec<_> = findings(&found, "live")
        .into_iter()
        .filter(|f| f["rule"] == "live-call")
        .collect();
    assert_eq!(
        live_call.len(),
        1,
        "the broken tool fails whatever it is given: {found:#}"
    );
}

/// `porthole snapshot`: a PNG of the view and a JSON sidecar; the same input gives the same
/// picture; the theme and the size are the ones asked for; a view that never starts gives no
/// picture and a sidecar that says why.
#[test]
fn a_snapshot_is_a_picture_of_the_view_and_the_same_input_gives_the_same_one() {
    let profile = tempfile::tempdir().unwrap();
    let dir = profile.path();
    let config = dir.join("snapshot-servers.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "live": broken(&["--only-live"]) } }).to_string(),
    )
    .unwrap();
    let result = dir.join("result.json");
    std::fs::write(
        &result,
        json!({"content": [{"type": "text", "text": "Sunny in Paris, 21 °C"}]}).to_string(),
    )
    .unwrap();
    let snapshot = |tool: &str, name: &str, extra: &[&str]| -> (Output, std::path::PathBuf) {
        let out_png = dir.join(name);
        let mut args = vec![
            "--mcp-config",
            config.to_str().unwrap(),
            "snapshot",
            "--server",
            "live",
            "--tool",
            tool,
            "--out",
            out_png.to_str().unwrap(),
            "--view-timeout",
            "3",
        ];
        args.extend_from_slice(extra);
        let out = porthole_command(dir, &args).stdin(Stdio::null()).output().unwrap();
        (out, out_png)
    };
    let given = ["--result", result.to_str().unwrap()];
    let (out, first) = snapshot("good_view", "first.png", &given);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, second) = snapshot("good_view", "second.png", &given);
    let png = std::fs::read(&first).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let size = |png: &[u8]| {
        let at = |i: usize| u32::from_be_bytes(png[i..i + 4].try_into().unwrap());
        (at(16), at(20))
    };
    assert_eq!(size(&png), (720, 560), "the default size");
    assert_eq!(png, std::fs::read(&second).unwrap(), "the same input, the same picture");

    // The sidecar: what the view did.
    let sidecar: Value = serde_json::from_slice(&std::fs::read(dir.join("first.json")).unwrap()).unwrap();
    assert_eq!(sidecar["state"], "ready", "{sidecar:#}");
    assert_eq!(sidecar["result"]["content"][0]["text"], "Sunny in Paris, 21 °C");
    assert!(sidecar["timings"]["initializedMs"].as_u64().is_some(), "{sidecar:#}");
    assert!(sidecar["timings"]["settledMs"].as_u64().is_some(), "{sidecar:#}");
    let methods: Vec<&str> = sidecar["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect();
    for expected in [
        "ui/initialize",
        "ui/notifications/initialized",
        "ui/notifications/tool-result",
    ] {
        assert!(methods.contains(&expected), "{expected} in {methods:?}");
    }
    assert_eq!(sidecar["console"], json!([]));
    assert_eq!(sidecar["cspViolations"], json!([]));

    // Dark, and the mobile size: another picture.
    let (out, dark) = snapshot(
        "good_view",
        "dark.png",
        &[&given[..], &["--theme", "dark", "--preset", "mobile"]].concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let dark = std::fs::read(dark).unwrap();
    assert_eq!(size(&dark), (390, 844));
    let sidecar: Value = serde_json::from_slice(&std::fs::read(dir.join("dark.json")).unwrap()).unwrap();
    assert_eq!(sidecar["theme"], "dark");

    // What the view broke is in the sidecar.
    let (out, _) = snapshot("csp_breaking_view", "csp.png", &given);
    assert_eq!(out.status.code(), Some(0));
    let sidecar: Value = serde_json::from_slice(&std::fs::read(dir.join("csp.json")).unwrap()).unwrap();
    assert_eq!(sidecar["cspViolations"][0]["directive"], "img-src", "{sidecar:#}");

    // A view that never starts: no picture, and the sidecar says why.
    let (out, silent) = snapshot("silent_view", "silent.png", &given);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did not complete ui/initialize"));
    assert!(!silent.exists());
    let sidecar: Value = serde_json::from_slice(&std::fs::read(dir.join("silent.json")).unwrap()).unwrap();
    assert_eq!(sidecar["state"], "not-initialized");

    // A tool without a view cannot be pictured.
    let (out, _) = snapshot("nothing_here", "none.png", &given);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no tool \"nothing_here\""));
}

/// `porthole snapshot` against an official example server from npm: the view built on the
/// official SDK starts in the bare page, a given result gives the same picture twice (its clock
/// held still), and without a result the tool is called and its answer is what the view got.
#[test]
fn a_snapshot_of_an_official_example_is_the_same_each_time() {
    let fixtures = workspace_root().join("tests/fixtures");
    let examples: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join("mcp-apps-examples.json")).unwrap()).unwrap();
    let example = examples.iter().find(|e| e["name"] == "basic-vanillajs").unwrap();
    let profile = tempfile::tempdir().unwrap();
    let dir = profile.path();
    let config = dir.join("servers.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "example": {
            "command": "node",
            "args": example["args"],
            "cwd": fixtures.display().to_string(),
        }}})
        .to_string(),
    )
    .unwrap();
    let result = dir.join("result.json");
    std::fs::write(
        &result,
        json!({
            "content": [{"type": "text", "text": "2026-01-01T12:00:00.000Z"}],
            "structuredContent": {"time": "2026-01-01T12:00:00.000Z"}
        })
        .to_string(),
    )
    .unwrap();
    let snapshot = |name: &str, extra: &[&str]| -> (Output, Value) {
        let out_png = dir.join(format!("{name}.png"));
        let mut args = vec![
            "--mcp-config",
            config.to_str().unwrap(),
            "snapshot",
            "--server",
            "example",
            "--tool",
            example["tool"].as_str().unwrap(),
            "--out",
            out_png.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let out = porthole_command(dir, &args).stdin(Stdio::null()).output().unwrap();
        let sidecar = std::fs::read(dir.join(format!("{name}.json")))
            .map(|bytes| serde_json::from_slice(&bytes).unwrap())
            .unwrap_or(Value::Null);
        (out, sidecar)
    };
    let given = ["--result", result.to_str().unwrap(), "--preset", "tablet"];
    let (out, sidecar) = snapshot("first", &given);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(sidecar["state"], "ready", "{sidecar:#}");
    assert_eq!(sidecar["console"], json!([]), "{sidecar:#}");
    assert_eq!(sidecar["cspViolations"], json!([]), "{sidecar:#}");
    let (out, _) = snapshot("second", &given);
    assert_eq!(out.status.code(), Some(0));
    let first = std::fs::read(dir.join("first.png")).unwrap();
    assert_eq!(&first[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(
        first,
        std::fs::read(dir.join("second.png")).unwrap(),
        "the same input, the same picture"
    );
    // A picture of a view is not a blank page: a page of one colour compresses to a few hundred bytes.
    assert!(first.len() > 2_000, "{} bytes", first.len());

    // No result given: the tool is called, and the view got its answer.
    let (out, sidecar) = snapshot("called", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        sidecar["result"]["structuredContent"]["time"].is_string(),
        "{sidecar:#}"
    );
    assert!(
        sidecar["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["method"] == "ui/notifications/tool-result"),
        "{sidecar:#}"
    );
}
