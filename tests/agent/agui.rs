//! `porthole run --agent` against a real AG-UI agent process: `tests/fixtures/agui-agent.mjs`,
//! a scripted agent built with the published AG-UI packages (`@ag-ui/client`,
//! `@ag-ui/encoder`, and `@ag-ui/mcp-apps-middleware` around it when it has MCP servers),
//! served over HTTP with server-sent events as AG-UI agents are. The real binary, a real
//! profile and its SQLite file.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use porthole_e2e::{
    agui_agent as agent, agui_agent_log as agent_log, agui_clock_run, agui_progress_call, example_over_http,
    porthole_command,
};
use porthole_store::{AllowedBy, MessageRole, Store};
use serde_json::{Value, json};

/// A profile whose config names `agents` (and the demo server is not started: no servers).
fn profile(agents: Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {}, "agents": agents});
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    dir
}

fn run(profile: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd: Command = porthole_command(profile, args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::null()).output().expect("cannot run porthole")
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn inputs(log: &Path) -> Vec<Value> {
    agent_log(log)
        .into_iter()
        .filter(|l| l.get("threadId").is_some())
        .collect()
}

/// A run: the agent's text, a tool call it makes and its result, a state snapshot, more text.
fn weather_run() -> Value {
    json!([
        {"type": "RUN_STARTED", "threadId": "$threadId", "runId": "$runId"},
        {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "Looking up "},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "$lastUserText"},
        {"type": "TEXT_MESSAGE_END", "messageId": "a1"},
        {"type": "TOOL_CALL_START", "toolCallId": "call-1", "toolCallName": "get_weather", "parentMessageId": "a1"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "call-1", "delta": "{\"city\":"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "call-1", "delta": "\"Oslo\"}"},
        {"type": "TOOL_CALL_END", "toolCallId": "call-1"},
        {"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "call-1", "content": "Rain, 7 C", "role": "tool"},
        {"type": "STATE_SNAPSHOT", "snapshot": {"city": "Oslo"}},
        {"type": "TEXT_MESSAGE_START", "messageId": "a2", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a2", "delta": "It rains in Oslo."},
        {"type": "TEXT_MESSAGE_END", "messageId": "a2"},
        {"type": "RUN_FINISHED", "threadId": "$threadId", "runId": "$runId"}
    ])
}

/// A run with a remote agent, as a user runs it: its token from the environment, the agent's
/// text streamed, its tool call and result shown and kept, every AG-UI event printed, the
/// conversation kept; a second run continues the same thread with the whole history.
#[test]
fn a_remote_agents_run_streams_its_text_and_tool_call_and_keeps_the_conversation() {
    let scratch = tempfile::tempdir().unwrap();
    let (_agent, url, log) = agent(scratch.path(), json!({"token": "s3cret", "runs": [weather_run()]}));
    let dir = profile(json!({"helper": {"url": url, "headers": {"Authorization": "Bearer ${env:HELPER_TOKEN}"}}}));
    let env = [("HELPER_TOKEN", "s3cret")];

    let out = run(
        dir.path(),
        &["run", "--agent", "helper", "--prompt", "the weather", "--json"],
        &env,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let events = lines(&out);
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"turn_started"));
    assert_eq!(events[0]["provider"], "ag-ui");
    assert_eq!(events[0]["model"], "helper");
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Looking up the weatherIt rains in Oslo.");
    let started = events.iter().find(|e| e["type"] == "tool_call_started").unwrap();
    assert_eq!(started["name"], "get_weather");
    assert_eq!(started["arguments"], json!({"city": "Oslo"}));
    let finished = events.iter().find(|e| e["type"] == "tool_call_finished").unwrap();
    assert_eq!(
        finished["model"]["content"],
        json!([{"type": "text", "text": "Rain, 7 C"}])
    );
    // Every AG-UI event Porthole keeps no part of is printed whole.
    let passed: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "agent_event")
        .map(|e| &e["event"])
        .collect();
    assert_eq!(passed.len(), 3, "{passed:?}");
    assert_eq!(passed[0]["type"], "RUN_STARTED");
    assert_eq!(
        passed[1],
        &json!({"type": "STATE_SNAPSHOT", "snapshot": {"city": "Oslo"}})
    );
    assert_eq!(passed[2]["type"], "RUN_FINISHED");
    let done = events.last().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["stop_reason"], "end_turn");
    assert_eq!(done["text"], "It rains in Oslo.");

    // What the agent was sent: the conversation as its thread, the person's message.
    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    let conversation = store.list_conversations().unwrap().remove(0);
    let sent = inputs(&log);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["threadId"], conversation.id);
    assert_eq!(
        sent[0]["messages"],
        json!([{"id": "m0", "role": "user", "content": "the weather"}])
    );

    // Kept: the person's message, the agent's step with its call, the result, the answer; the
    // call is the agent's own.
    let messages = store.messages(&conversation.id).unwrap();
    let roles: Vec<MessageRole> = messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            MessageRole::User,
            MessageRole::Assistant,
            MessageRole::Tool,
            MessageRole::Assistant
        ]
    );
    let calls = store.tool_calls(&conversation.id).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].tool, "get_weather");
    assert_eq!(calls[0].allowed_by, Some(AllowedBy::Agent));

    // The next run continues the thread: the whole history goes with it.
    let out = run(
        dir.path(),
        &[
            "run",
            "--agent",
            "helper",
            "--conversation",
            &conversation.id,
            "--prompt",
            "and tomorrow?",
        ],
        &env,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "It rains in Oslo.");
    let sent = inputs(&log);
    assert_eq!(sent[1]["threadId"], conversation.id);
    let history = sent[1]["messages"].as_array().unwrap();
    let roles: Vec<&str> = history.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
    assert_eq!(history[1]["toolCalls"][0]["function"]["name"], "get_weather");
    assert_eq!(history[2]["toolCallId"], "call-1");
    assert_eq!(history[4]["content"], "and tomorrow?");
}

/// What goes wrong is said, and what came is kept: an agent nobody answers at, a wrong token
/// (401), a run the agent fails, a stream cut mid-reply, an agent the config does not name.
#[test]
fn a_remote_agent_that_fails_says_why_and_keeps_what_came() {
    let scratch = tempfile::tempdir().unwrap();
    let (_agent, url, _log) = agent(
        scratch.path(),
        json!({"token": "right", "runs": [
            [
                {"type": "RUN_STARTED", "threadId": "$threadId", "runId": "$runId"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "Half an answer"},
                {"type": "CUT"}
            ],
            [
                {"type": "RUN_STARTED", "threadId": "$threadId", "runId": "$runId"},
                {"type": "RUN_ERROR", "message": "the model is overloaded"}
            ]
        ]}),
    );
    // Nothing listens on a port just released.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let dir = profile(json!({
        "good": {"url": url, "headers": {"Authorization": "Bearer right"}},
        "wrong_token": {"url": url, "headers": {"Authorization": "Bearer wrong"}},
        "gone": {"url": format!("http://{closed}/")},
    }));

    let out = run(dir.path(), &["run", "--agent", "gone", "--prompt", "hi"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the agent gone at http://127.0.0.1"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("cannot be reached"), "{}", stderr(&out));

    let out = run(dir.path(), &["run", "--agent", "wrong_token", "--prompt", "hi"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("answered HTTP 401"), "{}", stderr(&out));
    assert!(stderr(&out).contains("headers"), "{}", stderr(&out));

    let out = run(
        dir.path(),
        &["run", "--agent", "good", "--prompt", "cut me", "--json"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cut before the run finished"), "{}", stderr(&out));
    let events = lines(&out);
    assert_eq!(events.last().unwrap()["stop_reason"], "error");
    let interrupted = events.iter().find(|e| e["type"] == "assistant_message").unwrap();
    assert_eq!(interrupted["interrupted"], true);
    // The text so far is kept with the conversation.
    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    let cut = store
        .list_conversations()
        .unwrap()
        .into_iter()
        .find(|c| c.title.contains("cut me"))
        .unwrap();
    let kept = store.messages(&cut.id).unwrap();
    assert!(
        kept[1].parts.to_string().contains("Half an answer"),
        "{:?}",
        kept[1].parts
    );

    let out = run(dir.path(), &["run", "--agent", "good", "--prompt", "again"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the agent's run failed: the model is overloaded"),
        "{}",
        stderr(&out)
    );

    let out = run(dir.path(), &["run", "--agent", "nobody", "--prompt", "hi"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no agent named \"nobody\""), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("gone, good, wrong_token") || stderr(&out).contains("good"),
        "{}",
        stderr(&out)
    );
}

/// Ctrl-C stops a remote run: the request is aborted (the agent sees its stream closed), the
/// run exits 130, and the text that came is kept.
#[test]
fn ctrl_c_stops_a_remote_run_and_the_agent_sees_it_go() {
    let scratch = tempfile::tempdir().unwrap();
    let (_agent, url, log) = agent(
        scratch.path(),
        json!({"runs": [[
            {"type": "RUN_STARTED", "threadId": "$threadId", "runId": "$runId"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "Thinking it over"},
            {"type": "WAIT", "ms": 60000},
            {"type": "RUN_FINISHED", "threadId": "$threadId", "runId": "$runId"}
        ]]}),
    );
    let dir = profile(json!({"slow": {"url": url}}));
    let child = porthole_command(dir.path(), &["run", "--agent", "slow", "--prompt", "take your time"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the agent has the request (and a moment for its first text), Ctrl-C.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while inputs(&log).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: a signal to the child this test started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "it stopped at once"
    );
    let run_id = inputs(&log)[0]["runId"].clone();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !agent_log(&log).iter().any(|l| l["closedByClient"] == run_id) {
        assert!(
            std::time::Instant::now() < deadline,
            "the agent never saw the run's stream close"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    let conversation = store.list_conversations().unwrap().remove(0);
    let kept = store.messages(&conversation.id).unwrap();
    assert!(kept[1].parts.to_string().contains("Thinking it over"), "{:?}", kept);
}

/// The published MCP Apps middleware around the agent, with the official basic example server
/// over Streamable HTTP: the agent's call of the example's UI tool is run by the middleware, the
/// model-facing result is what its `TOOL_CALL_RESULT` said (text), and the view comes as a
/// `remote_view` line naming the server and carrying the whole result — kept as the call's
/// view-facing result.
#[test]
fn the_mcp_apps_middleware_gives_a_calls_view_with_its_whole_result() {
    let scratch = tempfile::tempdir().unwrap();
    let (_example, mcp_url) = example_over_http("basic-vanillajs");
    let run_events = agui_clock_run();
    let (_agent, url, log) = agent(
        scratch.path(),
        json!({"runs": [run_events], "mcpServers": [{"type": "http", "url": mcp_url, "serverId": "clock"}]}),
    );
    let dir = profile(json!({"clockwork": {"url": url}}));
    let out = run(
        dir.path(),
        &["run", "--agent", "clockwork", "--prompt", "time?", "--json"],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let events = lines(&out);
    // The middleware offered the example's UI tool to the agent.
    let offered = agent_log(&log)
        .into_iter()
        .find_map(|l| l.get("agentTools").cloned())
        .expect("the agent ran");
    assert!(offered.as_array().unwrap().contains(&json!("get-time")), "{offered:?}");
    let finished = events
        .iter()
        .find(|e| e["type"] == "tool_call_finished")
        .expect("the call ends");
    let model_text = finished["model"]["content"][0]["text"].as_str().unwrap().to_string();
    let view = events
        .iter()
        .find(|e| e["type"] == "remote_view")
        .expect("a remote_view line");
    assert_eq!(view["call_id"], "call-time");
    assert_eq!(view["server"], "clockwork/clock");
    assert_eq!(view["tool"], "get-time");
    assert_eq!(view["view"]["resourceUri"], "ui://get-time/mcp-app.html");
    assert_eq!(view["view"]["serverId"], "clock");
    let time = view["view"]["result"]["structuredContent"]["time"]
        .as_str()
        .expect("the result's time");
    assert!(
        model_text.contains(time),
        "the model got the result's text: {model_text:?} vs {time:?}"
    );
    // The activity itself is passed on whole too.
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "agent_event" && e["event"]["activityType"] == "mcp-apps")
    );

    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    let conversation = store.list_conversations().unwrap().remove(0);
    assert_eq!(
        conversation.agent.as_deref(),
        Some("clockwork"),
        "kept with the agent: the window continues it with the agent"
    );
    let call = store.tool_calls(&conversation.id).unwrap().remove(0);
    assert_eq!(call.server, "clockwork/clock");
    assert_eq!(call.view_facing.unwrap()["structuredContent"]["time"], time);
    assert_eq!(call.model_facing.unwrap()["content"][0]["text"], model_text);
}

/// The progress activity some middleware forks send while a call runs (a snapshot, then
/// JSON-Patch deltas) is the call's progress, in order.
#[test]
fn progress_activities_are_the_calls_progress() {
    let scratch = tempfile::tempdir().unwrap();
    let mut run_events = vec![json!({"type": "RUN_STARTED", "threadId": "$threadId", "runId": "$runId"})];
    run_events.extend(agui_progress_call(0));
    run_events.push(json!({"type": "RUN_FINISHED", "threadId": "$threadId", "runId": "$runId"}));
    let (_agent, url, _log) = agent(scratch.path(), json!({"runs": [run_events]}));
    let dir = profile(json!({"worker": {"url": url}}));
    let out = run(
        dir.path(),
        &["run", "--agent", "worker", "--prompt", "go", "--json"],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let events = lines(&out);
    let progress: Vec<(f64, Option<f64>, Option<String>)> = events
        .iter()
        .filter(|e| e["type"] == "tool_call_progress" && e["call_id"] == "call-slow")
        .map(|e| {
            (
                e["progress"].as_f64().unwrap(),
                e["total"].as_f64(),
                e["message"].as_str().map(String::from),
            )
        })
        .collect();
    assert_eq!(
        progress,
        [(1.0, Some(4.0), None), (3.0, Some(4.0), Some("almost there".into()))]
    );
    // The call runs (started, running) before its progress, and ends after it.
    let at = |kind: &str| events.iter().position(|e| e["type"] == kind).unwrap();
    assert!(at("tool_call_running") < at("tool_call_progress"));
    assert!(at("tool_call_progress") < at("tool_call_finished"));
}

/// The agent's own view of the thread is what it is sent next: its state (a snapshot, then a
/// JSON-Patch delta) and, once it sent a messages snapshot, those messages and what came after
/// them, then the person's new message — not Porthole's rendering of the conversation.
#[test]
fn the_next_run_carries_the_agents_state_and_its_view_of_the_messages() {
    let scratch = tempfile::tempdir().unwrap();
    let first = json!([
        {"type": "RUN_STARTED", "threadId": "$threadId", "runId": "$runId"},
        {"type": "STATE_SNAPSHOT", "snapshot": {"plan": ["shop"], "step": 1}},
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/step", "value": 2}, {"op": "add", "path": "/plan/-", "value": "cook"}]},
        {"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": "s1", "role": "user", "content": "(summary) the person wants dinner"}
        ]},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a1", "delta": "Shopping, then cooking."},
        {"type": "RUN_FINISHED", "threadId": "$threadId", "runId": "$runId"}
    ]);
    let second = json!([
        {"type": "RUN_STARTED", "threadId": "$threadId", "runId": "$runId"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a2", "delta": "Noted."},
        {"type": "RUN_FINISHED", "threadId": "$threadId", "runId": "$runId"}
    ]);
    let (_agent, url, log) = agent(scratch.path(), json!({"runs": [first, second]}));
    let dir = profile(json!({"planner": {"url": url}}));
    let out = run(dir.path(), &["run", "--agent", "planner", "--prompt", "dinner?"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    let conversation = store.list_conversations().unwrap().remove(0);
    let out = run(
        dir.path(),
        &[
            "run",
            "--agent",
            "planner",
            "--conversation",
            &conversation.id,
            "--prompt",
            "and dessert?",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = inputs(&log);
    assert_eq!(sent[0]["state"], json!({}));
    assert_eq!(sent[1]["state"], json!({"plan": ["shop", "cook"], "step": 2}));
    let messages: Vec<(String, String)> = sent[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().into(),
                m["content"].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    assert_eq!(
        messages,
        [
            ("user".into(), "(summary) the person wants dinner".into()),
            ("assistant".into(), "Shopping, then cooking.".into()),
            ("user".into(), "and dessert?".into()),
        ]
    );
    // The transcript itself keeps what was said.
    let kept: Vec<MessageRole> = store
        .messages(&conversation.id)
        .unwrap()
        .iter()
        .map(|m| m.role)
        .collect();
    assert_eq!(
        kept,
        [
            MessageRole::User,
            MessageRole::Assistant,
            MessageRole::User,
            MessageRole::Assistant
        ]
    );
}
