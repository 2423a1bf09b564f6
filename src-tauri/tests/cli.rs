//! The `porthole` binary's command line, run for real: each test spawns the binary with its own
//! profile folder, and the demo server it lists is the real `porthole demo-server` over stdio.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

fn porthole(profile: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_porthole"));
    cmd.arg("--profile")
        .arg(profile)
        .args(args)
        .env_remove("PORTHOLE_HOME")
        .env_remove("PORTHOLE_MCP_APPS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("cannot run porthole")
}

fn tools_json(profile: &Path, args: &[&str], env: &[(&str, &str)]) -> (Vec<Value>, String) {
    let mut all = vec!["tools", "--json"];
    all.extend_from_slice(args);
    let out = porthole(profile, &all, env);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "porthole tools failed: {stderr}");
    let tools: Value = serde_json::from_slice(&out.stdout).expect("tools --json prints JSON");
    (tools.as_array().unwrap().clone(), stderr)
}

fn names(tools: &[Value]) -> Vec<&str> {
    tools.iter().map(|t| t["name"].as_str().unwrap()).collect()
}

fn find<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

#[test]
fn fresh_profile_offers_the_demo_servers_tools_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let (tools, _) = tools_json(dir.path(), &[], &[]);
    assert_eq!(
        names(&tools),
        ["list_directory", "sample_cpu", "sha256", "system_monitor", "weather"]
    );
    let monitor = find(&tools, "system_monitor");
    assert_eq!(monitor["server"], "porthole-demo");
    assert_eq!(monitor["modelName"], "system_monitor");
    assert_eq!(monitor["uiResourceUri"], "ui://porthole-demo/system-monitor.html");
    assert_eq!(find(&tools, "sha256")["visibility"], serde_json::json!(["model"]));
    assert!(
        dir.path().join("config.json").is_file(),
        "the profile was created in --profile DIR"
    );
}

#[test]
fn app_only_tools_are_listed_only_with_all() {
    let dir = tempfile::tempdir().unwrap();
    let (tools, _) = tools_json(dir.path(), &["--all"], &[]);
    let poll = find(&tools, "poll_system_stats");
    assert_eq!(poll["visibility"], serde_json::json!(["app"]));
    assert_eq!(poll["uiResourceUri"], "ui://porthole-demo/system-monitor.html");
}

#[test]
fn mcp_apps_switched_off_offers_every_tool_with_no_views() {
    let dir = tempfile::tempdir().unwrap();
    let (tools, _) = tools_json(dir.path(), &[], &[("PORTHOLE_MCP_APPS", "off")]);
    assert_eq!(tools.len(), 6, "{:?}", names(&tools));
    assert!(
        tools
            .iter()
            .all(|t| t["uiResourceUri"].is_null() && t["visibility"] == serde_json::json!(["model"]))
    );
}

#[test]
fn porthole_home_is_the_same_as_profile() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_porthole"))
        .args(["tools"])
        .env("PORTHOLE_HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.starts_with("SERVER"), "{table}");
    assert!(table.contains("porthole-demo  system_monitor"), "{table}");
    assert!(dir.path().join("config.json").is_file());
    assert!(dir.path().join("logs/servers/porthole-demo.log").is_file());
}

#[test]
fn bad_config_and_dead_or_silent_servers_never_hold_back_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let extra = dir.path().join("extra.json");
    std::fs::write(
        &extra,
        "{\n  \"mcpServers\": {\n    \"ghost\": {\"command\": \"/nonexistent/server\"},\n    \
         \"silent\": {\"command\": \"sleep\", \"args\": [\"30\"], \"timeout\": 1.5},\n    \
         \"typo\": {\"comand\": \"x\"}\n  }\n}\n",
    )
    .unwrap();
    let started = Instant::now();
    let (tools, stderr) = tools_json(dir.path(), &["--mcp-config", extra.to_str().unwrap()], &[]);
    let took = started.elapsed();
    assert!(names(&tools).contains(&"system_monitor"), "the demo still loads");
    assert!(
        stderr.contains("extra.json:5: server \"typo\", field \"comand\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("server ghost: cannot start \"/nonexistent/server\""),
        "{stderr}"
    );
    assert!(stderr.contains("server silent: no answer within 1.5s"), "{stderr}");
    assert!(
        took < Duration::from_secs(20),
        "the silent server's 1.5 s timeout bounds the wait ({took:?})"
    );
}

#[test]
fn no_subcommand_help_lists_the_cli() {
    let out = Command::new(env!("CARGO_BIN_EXE_porthole"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for word in ["demo-server", "tools", "--profile", "--mcp-config", "PORTHOLE_HOME"] {
        assert!(help.contains(word), "help lacks {word}: {help}");
    }
}

#[test]
fn logs_go_to_the_profile_and_never_hold_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let extra = dir.path().join("secret.json");
    std::fs::write(
        &extra,
        r#"{"mcpServers": {
             "keyed": {"command": "/nonexistent/keyed-server", "env": {"API_KEY": "sk-very-secret-1234"}},
             "remote": {"url": "https://mcp.example.invalid/mcp", "headers": {"Authorization": "Bearer tok-very-secret-5678"}}
           }}"#,
    )
    .unwrap();
    let out = porthole(
        dir.path(),
        &["tools", "--mcp-config", extra.to_str().unwrap()],
        &[("PORTHOLE_LOG", "trace")],
    );
    assert!(out.status.success());
    let logs = dir.path().join("logs");
    let mut all = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut cli_log_lines = 0;
    for entry in walk(&logs) {
        let text = std::fs::read_to_string(&entry).unwrap();
        if entry
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("porthole-cli.")
        {
            cli_log_lines += text.lines().count();
        }
        all.push_str(&text);
    }
    assert!(cli_log_lines > 0, "the CLI wrote no log file in {}", logs.display());
    assert!(all.contains("keyed"), "the failing server is logged");
    assert!(
        !all.contains("sk-very-secret") && !all.contains("tok-very-secret"),
        "a secret reached a log"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `porthole call` on the demo server: `--tool TOOL [--args ARGS] [EXTRA…]`.
fn demo_call(profile: &Path, tool: &str, args: Option<&str>, extra: &[&str]) -> Output {
    let mut all = vec!["call", "--server", "porthole-demo", "--tool", tool];
    if let Some(a) = args {
        all.extend(["--args", a]);
    }
    all.extend_from_slice(extra);
    porthole(profile, &all, &[])
}

#[test]
fn call_prints_what_the_model_gets_and_what_the_view_gets() {
    let dir = tempfile::tempdir().unwrap();
    let args = format!("{{\"path\": {:?}}}", dir.path());
    let out = demo_call(dir.path(), "list_directory", Some(&args), &["--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let model_text = v["model"]["content"][0]["text"].as_str().unwrap();
    assert!(model_text.contains("config.json"), "{model_text}");
    assert_eq!(v["model"]["isError"], false);
    assert!(
        v["model"].get("structuredContent").is_none(),
        "the model never gets structuredContent beside content"
    );
    assert_eq!(v["view"]["content"], v["model"]["content"]);
    let entries = v["view"]["structuredContent"]["entries"].as_array().unwrap();
    assert!(entries.iter().any(|e| e["name"] == "config.json"));

    let table = demo_call(dir.path(), "sha256", Some(r#"{"text":"abc"}"#), &[]);
    let shown = String::from_utf8_lossy(&table.stdout);
    assert!(
        shown.starts_with(
            "== What the model gets ==\nba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n"
        ),
        "{shown}"
    );
    assert!(shown.contains("== What the view gets =="), "{shown}");
}

#[test]
fn call_exit_codes_tell_tool_errors_from_no_result() {
    let dir = tempfile::tempdir().unwrap();
    let tool_error = demo_call(dir.path(), "list_directory", Some(r#"{"path": "/nonexistent/x"}"#), &[]);
    assert_eq!(tool_error.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&tool_error.stdout).contains("(isError: true)"));

    let unknown = demo_call(dir.path(), "nope", None, &[]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("has no tool \"nope\""));

    let bad_args = demo_call(dir.path(), "sha256", Some("[1]"), &[]);
    assert!(!bad_args.status.success());
    assert!(String::from_utf8_lossy(&bad_args.stderr).contains("--args must be a JSON object"));

    let no_server = porthole(dir.path(), &["call", "--server", "ghost", "--tool", "x"], &[]);
    assert!(String::from_utf8_lossy(&no_server.stderr).contains("no server named \"ghost\""));
}

#[test]
fn call_reports_progress_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let out = demo_call(dir.path(), "sample_cpu", Some(r#"{"seconds": 1}"#), &[]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("progress 1/2: CPU") && stderr.contains("progress 2/2: CPU"),
        "{stderr}"
    );
}

#[test]
fn mcp_apps_switched_off_in_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        r#"{"mcpApps": false, "mcpServers": {"porthole-demo": {"command": "porthole", "args": ["demo-server"]}}}"#,
    )
    .unwrap();
    let (tools, _) = tools_json(dir.path(), &[], &[]);
    assert_eq!(tools.len(), 6);
    assert!(tools.iter().all(|t| t["uiResourceUri"].is_null()));
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = Command::new(env!("CARGO_BIN_EXE_porthole"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // Built from a clone, the commit is git's short hash of HEAD; from elsewhere, "unknown".
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    assert_eq!(
        version,
        format!("porthole {} (commit {head})", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn add_server_shows_what_would_run_and_adds_it_only_when_told() {
    let dir = tempfile::tempdir().unwrap();
    let entry = serde_json::json!({
        "command": env!("CARGO_BIN_EXE_porthole"),
        "args": ["demo-server"],
        "env": {"DEMO_API_KEY": "secret-value-4711"},
    })
    .to_string();
    let add = |extra: &[&str]| {
        let mut args = vec!["add-server", "--name", "second demo", "--json", entry.as_str()];
        args.extend_from_slice(extra);
        porthole(dir.path(), &args, &[])
    };
    let config = || std::fs::read_to_string(dir.path().join("config.json")).unwrap();

    // No terminal to ask on and no --yes: shown, not added.
    let refused = add(&[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("runs:        {} demo-server", env!("CARGO_BIN_EXE_porthole"))),
        "{stderr}"
    );
    assert!(
        stderr.contains("environment: DEMO_API_KEY (values not shown)"),
        "{stderr}"
    );
    assert!(stderr.contains("MCP Apps:    asks for it"), "{stderr}");
    assert!(stderr.contains("pass --yes"), "{stderr}");
    assert!(!stderr.contains("secret-value-4711"), "{stderr}");
    assert!(!config().contains("second demo"));

    // --yes: added as given, and its tools are offered.
    let added = add(&["--yes"]);
    assert_eq!(
        added.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let written: Value = serde_json::from_str(&config()).unwrap();
    assert_eq!(
        written["mcpServers"]["second demo"]["env"]["DEMO_API_KEY"],
        "secret-value-4711"
    );
    let (tools, _) = tools_json(dir.path(), &[], &[]);
    assert!(
        tools
            .iter()
            .any(|t| t["server"] == "second demo" && t["name"] == "system_monitor"),
        "{tools:?}"
    );

    // The same name again, or a config that cannot be used: refused, the file as it was.
    let before = config();
    let again = add(&["--yes"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already configured"));
    for (bad, why) in [
        ("{\"command\": ", "not valid JSON"),
        ("{\"comand\": \"x\"}", "cannot be used"),
        ("[\"npx\"]", "must be a JSON object"),
    ] {
        let out = porthole(
            dir.path(),
            &["add-server", "--name", "bad", "--json", bad, "--yes"],
            &[],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains(why), "{bad}: {stderr}");
    }
    assert_eq!(config(), before);
}

#[test]
fn doctor_checks_each_server_and_fails_on_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    // A fresh profile: the demo server connects; nothing required is missing.
    let out = porthole(dir.path(), &["doctor", "--json"], &[("OPENAI_API_KEY", "sk-test-4711")]);
    let findings: Vec<Value> = serde_json::from_slice(&out.stdout).expect("doctor --json prints JSON");
    let finding = |findings: &[Value], check: &str| {
        findings
            .iter()
            .find(|f| f["check"] == check)
            .unwrap_or_else(|| panic!("no finding {check}: {findings:?}"))
            .clone()
    };
    assert_eq!(out.status.code(), Some(0), "{findings:?}");
    assert_eq!(finding(&findings, "server \"porthole-demo\"")["status"], "ok");
    assert!(
        finding(&findings, "web engine")["detail"]
            .as_str()
            .unwrap()
            .starts_with("WebKitGTK 2.")
    );
    for check in [
        "Secret Service",
        "model API key",
        "config",
        "conversation store",
        "display",
    ] {
        let f = finding(&findings, check);
        assert!(f["status"] != "fail", "{f}");
    }
    let key = finding(&findings, "model API key");
    assert_eq!(key["status"], "ok", "{key}");
    assert!(key["detail"].as_str().unwrap().contains("OPENAI_API_KEY"), "{key}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("sk-test-4711"));

    // A model server of one's own is asked for its models; one that does not answer is a
    // warning with a fix (the app still works: its tools, and other models).
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime
        .block_on(porthole_fake_llm::FakeLlm::start(porthole_fake_llm::Script {
            models: vec!["fake-model".into(), "other-model".into()],
            ..porthole_fake_llm::Script::new(vec![])
        }))
        .unwrap();
    let base_url = fake.base_url();
    let local = |args: &[&str]| -> Value {
        let mut all = vec!["--base-url"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["doctor", "--json"]);
        let out = porthole(dir.path(), &all, &[]);
        let findings: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        finding(&findings, "model server")
    };
    let ok = local(&[&base_url, "--model", "fake-model"]);
    assert_eq!(ok["status"], "ok", "{ok}");
    assert!(
        ok["detail"]
            .as_str()
            .unwrap()
            .contains("fake-model, other-model; using fake-model"),
        "{ok}"
    );
    let wrong = local(&[&base_url, "--model", "no-such-model"]);
    assert_eq!(wrong["status"], "warn", "{wrong}");
    assert!(
        wrong["detail"]
            .as_str()
            .unwrap()
            .contains("does not list the chosen model"),
        "{wrong}"
    );
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", listener.local_addr().unwrap())
    };
    let down = local(&[&dead]);
    assert_eq!(down["status"], "warn", "{down}");
    assert!(down["fix"].as_str().unwrap().contains("Settings → Model"), "{down}");
    drop(fake);

    // A server whose program is not installed, and one that cannot start: exit 1, with fixes.
    let extra = dir.path().join("extra.json");
    std::fs::write(
        &extra,
        r#"{"mcpServers": {"needs-node": {"command": "no-such-npx-4711", "args": ["-y", "x"]},
                          "off": {"command": "also-missing", "disabled": true}}}"#,
    )
    .unwrap();
    let out = porthole(dir.path(), &["--mcp-config", extra.to_str().unwrap(), "doctor"], &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL  program no-such-npx-4711: not found on PATH; needed by needs-node"),
        "{text}"
    );
    assert!(text.contains("FAIL  server \"needs-node\""), "{text}");
    assert!(text.contains("ok    server \"porthole-demo\""), "{text}");
    assert!(text.contains("disabled servers: not started: off"), "{text}");
    assert!(
        !text.contains("also-missing"),
        "a disabled server's program is not asked for: {text}"
    );
    assert!(
        text.lines().filter(|l| l.trim_start().starts_with("fix: ")).count() >= 2,
        "{text}"
    );
}
