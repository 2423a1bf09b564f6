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
        &["--json", "--junit", junit.to_str().unwrap()],
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
        let s = report["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == server)
            .unwrap();
        assert_eq!(s["connected"], true);
        assert!(!s["views"].as_object().unwrap().is_empty(), "{server} has views: {s:#}");
    }
    assert!(findings(&report, "good").is_empty());

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
    assert!(text.contains(": 1 tools, 1 views\n  no findings\n"), "{text}");
    assert!(
        text.trim_end().ends_with("0 errors, 0 warnings, 0 info: passed"),
        "{text}"
    );
}

#[test]
fn a_warning_fails_only_a_strict_check_and_a_missing_server_cannot_be_checked() {
    let profile = tempfile::tempdir().unwrap();
    // One warning (the legacy MIME type), no error: passed, unless strict.
    let legacy = json!({ "legacy": broken(&["--only-legacy"]) });
    let out = check(profile.path(), legacy.clone(), &["--server", "legacy"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("warning  resource-mime"), "{text}");
    assert!(
        text.contains("fix: serve it as \"text/html;profile=mcp-app\""),
        "{text}"
    );
    let out = check(profile.path(), legacy.clone(), &["--server", "legacy", "--strict"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .trim_end()
            .ends_with("0 errors, 1 warning, 0 info: failed")
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
