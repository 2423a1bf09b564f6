//! The view ↔ host protocol against a fake of the app side (`porthole_apps::test_support`).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use porthole_apps::bridge::{
    AuditKind, MAX_IN_FLIGHT, MAX_MESSAGE_BYTES, MAX_MESSAGES_PER_SECOND, MAX_PROMPTS, MAX_SIZE_CHANGES_PER_SECOND,
    ServerList, TeardownOutcome, ViewAction, ViewBridge, ViewConfig,
};
use porthole_apps::display::MAX_VIEW_HEIGHT;
use porthole_apps::test_support::{FakeHost, HostCall};
use porthole_apps::tool_definition;
use porthole_mcp::{Audience, CatalogTool};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Value, json};
use tokio::sync::mpsc;

const SERVER: &str = "demo";

fn catalog_tool(server: &str, name: &str, visibility: &[Audience]) -> CatalogTool {
    CatalogTool {
        server: server.into(),
        name: name.into(),
        model_name: name.into(),
        title: None,
        description: Some(format!("the {name} tool")),
        input_schema: json!({"type": "object"}),
        ui_resource_uri: None,
        visibility: visibility.to_vec(),
        widget: Default::default(),
        meta_problems: vec![],
    }
}

fn catalog(server: &str) -> Vec<CatalogTool> {
    use Audience::{App, Model};
    match server {
        SERVER => vec![
            catalog_tool(SERVER, "echo", &[Model, App]),
            catalog_tool(SERVER, "fails", &[App]),
            catalog_tool(SERVER, "broken", &[App]),
            catalog_tool(SERVER, "slow", &[App]),
            catalog_tool(SERVER, "model_only", &[Model]),
            catalog_tool(SERVER, "hidden", &[]),
        ],
        "other" => vec![catalog_tool("other", "secret", &[Model, App])],
        _ => vec![],
    }
}

/// The app side: the catalog above; `fails` answers with an error result, `broken` fails, `slow`
/// waits for [`FakeHost::release`]; one resource list and one prompt.
fn fake_host() -> Arc<FakeHost> {
    let host = FakeHost::new([SERVER, "other"].into_iter().flat_map(catalog))
        .with_result(
            "fails",
            Ok(json!({"content": [{"type": "text", "text": "no"}], "isError": true})),
        )
        .with_result("broken", Err("server exploded".into()))
        .with_result("slow", Ok(json!({"content": [], "structuredContent": {"slow": true}})))
        .with_held_tool("slow")
        .with_resource(
            "ui://demo/x.html",
            Ok(json!({"contents": [{"uri": "ui://demo/x.html", "text": "hello"}]})),
        )
        .with_resource("ui://demo/missing", Err("resource not found".into()))
        .with_list(
            "resources/list",
            json!({"resources": [{"uri": "file:///a", "name": "a"}]}),
        )
        .with_list("prompts/list", json!({"prompts": [{"name": "p"}]}));
    Arc::new(host)
}

fn config() -> ViewConfig {
    ViewConfig {
        view_id: "view-1".into(),
        server: SERVER.into(),
        tool: CatalogTool {
            title: Some("Echo".into()),
            ui_resource_uri: Some("ui://demo/echo.html".into()),
            ..catalog_tool(SERVER, "echo", &[Audience::Model, Audience::App])
        },
        tool_call_request_id: Some(json!(42)),
        host_context: json!({
            "theme": "light",
            "styles": {"variables": {"--color-text-primary": "light-dark(#111, #eee)"}},
            "displayMode": "inline",
            "availableDisplayModes": ["inline", "fullscreen"],
            "containerDimensions": {"maxHeight": 800},
            "locale": "en-GB",
            "timeZone": "Europe/London",
            "platform": "desktop",
            "userAgent": "Porthole/test",
            // Never taken from the app: the bridge builds it.
            "toolInfo": {"bogus": true},
        }),
        granted: json!({"permissions": {"clipboardWrite": {}}, "csp": {"connectDomains": []}}),
        emulating: None,
    }
}

struct Harness {
    bridge: ViewBridge,
    out: mpsc::UnboundedReceiver<Value>,
    actions: mpsc::UnboundedReceiver<ViewAction>,
    host: Arc<FakeHost>,
    next_id: i64,
}

impl Harness {
    fn new() -> Harness {
        Harness::with(config())
    }

    fn with(config: ViewConfig) -> Harness {
        let host = fake_host();
        let (bridge, out, actions) = ViewBridge::new(config, host.clone());
        Harness {
            bridge,
            out,
            actions,
            host,
            next_id: 0,
        }
    }

    fn notify(&self, method: &str, params: Value) {
        self.bridge
            .receive(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its answer (the next message to the view must be it).
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.bridge
            .receive(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = self.next().await;
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    async fn next(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(5), self.out.recv())
            .await
            .expect("a message to the view")
            .expect("channel open")
    }

    /// What has been posted to the view so far, after letting tasks run.
    async fn drain(&mut self) -> Vec<Value> {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        let mut all = vec![];
        while let Ok(m) = self.out.try_recv() {
            all.push(m);
        }
        all
    }

    fn drain_actions(&mut self) -> Vec<ViewAction> {
        let mut all = vec![];
        while let Ok(a) = self.actions.try_recv() {
            all.push(a);
        }
        all
    }

    async fn initialize_with(&mut self, params: Value) -> Value {
        let answer = self.request("ui/initialize", params).await;
        assert!(answer.get("result").is_some(), "{answer}");
        answer["result"].clone()
    }

    /// `ui/initialize` (declaring all display modes) and `initialized`; returns the initialize result.
    async fn handshake(&mut self) -> Value {
        let result = self
            .initialize_with(json!({
                "protocolVersion": "2026-01-26",
                "appInfo": {"name": "test-view", "version": "1"},
                "appCapabilities": {"availableDisplayModes": ["inline", "fullscreen", "pip"]},
            }))
            .await;
        self.notify("ui/notifications/initialized", json!({}));
        result
    }
}

fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {answer}"))
}

fn method_of(message: &Value) -> &str {
    message["method"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_sent_before_initialized_and_the_queue_flushes_in_order() {
    let mut h = Harness::new();
    h.bridge.tool_input_partial(json!({"q": "a"}));
    h.bridge.tool_input_partial(json!({"q": "ab"}));
    h.bridge.host_context_changed(json!({"theme": "dark"}));
    h.bridge.tool_input(json!({"q": "abc"}));
    h.bridge.tool_input_partial(json!({"q": "late"}));
    let result =
        json!({"content": [{"type": "text", "text": "done"}], "structuredContent": {"n": 1}, "_meta": {"x": 1}});
    h.bridge.tool_result(result.clone());
    h.bridge.tool_cancelled("too late");
    assert!(h.drain().await.is_empty(), "nothing before the view speaks");
    assert!(!h.bridge.is_initialized());

    // ui/initialize: only its answer, which carries the context changed so far.
    let init = h.initialize_with(json!({"protocolVersion": "2026-01-26"})).await;
    assert_eq!(init["hostContext"]["theme"], "dark");
    h.bridge
        .host_context_changed(json!({"theme": "light", "locale": "en-GB"}));
    assert!(h.drain().await.is_empty(), "nothing before initialized");
    assert!(h.drain_actions().is_empty());

    h.notify("ui/notifications/initialized", json!({}));
    assert!(h.bridge.is_initialized());
    let sent = h.drain().await;
    let methods: Vec<&str> = sent.iter().map(method_of).collect();
    assert_eq!(
        methods,
        [
            "ui/notifications/host-context-changed",
            "ui/notifications/tool-input",
            "ui/notifications/tool-result",
        ]
    );
    // Only what changed since the initialize answer (locale was already en-GB).
    assert_eq!(sent[0]["params"], json!({"theme": "light"}));
    assert_eq!(sent[1]["params"], json!({"arguments": {"q": "abc"}}));
    assert_eq!(sent[2]["params"], result, "the result is forwarded unmodified");
    assert!(sent.iter().all(|m| m["jsonrpc"] == "2.0" && m.get("id").is_none()));
    assert_eq!(h.drain_actions(), [ViewAction::Initialized]);

    // A second initialized flushes nothing again.
    h.notify("ui/notifications/initialized", json!({}));
    assert!(h.drain().await.is_empty());
    assert!(h.drain_actions().is_empty());

    // After initialized, changes go out at once, and only the keys that changed.
    h.bridge
        .host_context_changed(json!({"theme": "dark", "platform": "desktop", "toolInfo": {"x": 1}}));
    let sent = h.drain().await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["method"], "ui/notifications/host-context-changed");
    assert_eq!(sent[0]["params"], json!({"theme": "dark"}));
    h.bridge.host_context_changed(json!({"theme": "dark"}));
    h.bridge.host_context_changed(json!("not an object"));
    assert!(h.drain().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_latest_partial_input_is_flushed_when_no_input_came_and_partials_stop_after_input() {
    let mut h = Harness::new();
    h.bridge.tool_input_partial(json!({"q": "a"}));
    h.bridge.tool_input_partial(json!({"q": "ab"}));
    h.handshake().await;
    let sent = h.drain().await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["method"], "ui/notifications/tool-input-partial");
    assert_eq!(sent[0]["params"], json!({"arguments": {"q": "ab"}}));

    h.bridge.tool_input_partial(json!({"q": "abc"}));
    h.bridge.tool_input(json!({"q": "abcd"}));
    h.bridge.tool_input(json!({"q": "again"}));
    h.bridge.tool_input_partial(json!({"q": "after"}));
    h.bridge.tool_cancelled("");
    h.bridge.tool_result(json!({"content": []}));
    let sent = h.drain().await;
    let methods: Vec<&str> = sent.iter().map(method_of).collect();
    assert_eq!(
        methods,
        [
            "ui/notifications/tool-input-partial",
            "ui/notifications/tool-input",
            "ui/notifications/tool-cancelled",
        ]
    );
    assert_eq!(sent[1]["params"], json!({"arguments": {"q": "abcd"}}));
    assert_eq!(sent[2]["params"], json!({"reason": "cancelled"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_before_the_input_sends_the_input_known_so_far_first() {
    let mut h = Harness::new();
    h.handshake().await;
    h.bridge.tool_input_partial(json!({"q": "par"}));
    h.bridge.tool_result(json!({"content": []}));
    h.bridge.tool_input(json!({"q": "too late"}));
    let methods: Vec<String> = h
        .drain()
        .await
        .iter()
        .map(|m| format!("{} {}", m["method"], m["params"]))
        .collect();
    assert_eq!(
        methods,
        [
            r#""ui/notifications/tool-input-partial" {"arguments":{"q":"par"}}"#,
            r#""ui/notifications/tool-input" {"arguments":{"q":"par"}}"#,
            r#""ui/notifications/tool-result" {"content":[]}"#,
        ]
    );

    // No partial at all: the input is {}. A result that is not an object becomes a cancellation.
    let mut h = Harness::new();
    h.bridge.tool_result(json!("nonsense"));
    h.handshake().await;
    let sent = h.drain().await;
    assert_eq!(sent[0]["method"], "ui/notifications/tool-input");
    assert_eq!(sent[0]["params"], json!({"arguments": {}}));
    assert_eq!(sent[1]["method"], "ui/notifications/tool-cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_views_own_tools_are_listed_and_called_through_it() {
    let mut h = Harness::new();
    assert_eq!(
        h.bridge.list_app_tools().await.unwrap_err(),
        "the view is not running",
        "nothing is asked before it starts"
    );
    h.initialize_with(json!({"protocolVersion": "2026-01-26", "appCapabilities": {"tools": {}}}))
        .await;
    h.notify("ui/notifications/initialized", json!({}));
    assert!(h.bridge.offers_tools());
    h.drain().await;
    let bridge = h.bridge.clone();
    let listing = tokio::spawn(async move { bridge.list_app_tools().await });
    let request = h.next().await;
    assert_eq!(method_of(&request), "tools/list");
    let mut tools: Vec<Value> = (0..60)
        .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
        .collect();
    tools.insert(0, json!({"name": 7, "inputSchema": {}}));
    tools.insert(1, json!({"name": "no_schema"}));
    h.bridge
        .receive(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": tools}}));
    let listed = listing.await.unwrap().unwrap();
    assert_eq!(
        listed.len(),
        porthole_apps::bridge::MAX_APP_TOOLS,
        "at most 50, the malformed left out"
    );
    assert_eq!(listed[0]["name"], "t0");

    let bridge = h.bridge.clone();
    let calling = tokio::spawn(async move { bridge.call_app_tool("t0", json!({"x": 1})).await });
    let request = h.next().await;
    assert_eq!(request["params"], json!({"name": "t0", "arguments": {"x": 1}}));
    h.bridge
        .receive(json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32000, "message": "nope"}}));
    assert_eq!(
        calling.await.unwrap().unwrap_err(),
        "the view answered with an error (-32000): nope"
    );
    // The view says its tools changed: the host is told to list them again.
    h.drain_actions();
    h.notify("notifications/tools/list_changed", json!({}));
    h.drain().await;
    assert!(matches!(h.drain_actions().as_slice(), [ViewAction::ToolsChanged]));
}

/// Two parties speaking the bridge in one document (an Apps SDK shim beside skybridge): the one
/// that declares tools may initialize second, after the view is initialized. Its tools are
/// listed then, and a later initialize that declares none does not take them back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_declared_by_a_second_initialize_are_listed() {
    let mut h = Harness::new();
    h.initialize_with(json!({"protocolVersion": "2026-01-26", "appCapabilities": {}}))
        .await;
    h.notify("ui/notifications/initialized", json!({}));
    h.drain().await;
    h.drain_actions();
    assert!(!h.bridge.offers_tools());
    h.initialize_with(json!({"protocolVersion": "2026-01-26", "appCapabilities": {"tools": {}}}))
        .await;
    h.drain().await;
    assert!(h.bridge.offers_tools());
    assert!(
        h.drain_actions().iter().any(|a| matches!(a, ViewAction::ToolsChanged)),
        "the host is told to list the tools"
    );
    h.initialize_with(json!({"protocolVersion": "2026-01-26", "appCapabilities": {}}))
        .await;
    h.drain().await;
    assert!(h.bridge.offers_tools(), "still offered");
    assert!(!h.drain_actions().iter().any(|a| matches!(a, ViewAction::ToolsChanged)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changes_of_the_server_reach_an_initialized_view_only() {
    let mut h = Harness::new();
    h.bridge.server_list_changed(ServerList::Tools);
    h.handshake().await;
    assert!(
        h.drain().await.iter().all(|m| !method_of(m).contains("list_changed")),
        "nothing before it starts"
    );
    h.bridge.server_list_changed(ServerList::Tools);
    h.bridge.server_list_changed(ServerList::Resources);
    let methods: Vec<String> = h.drain().await.iter().map(|m| method_of(m).to_string()).collect();
    assert_eq!(
        methods,
        [
            "notifications/tools/list_changed",
            "notifications/resources/list_changed"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_answers_truthfully_with_tool_info_and_host_context() {
    let mut h = Harness::new();
    let result = h.handshake().await;
    assert_eq!(result["protocolVersion"], "2026-01-26");
    assert_eq!(
        result["hostCapabilities"],
        json!({
            "openLinks": {},
            "serverTools": {"listChanged": true},
            "serverResources": {"listChanged": true},
            "logging": {},
            "updateModelContext": {"text": {}, "structuredContent": {}},
            "message": {"text": {}},
            "downloadFile": {},
            "sandbox": {"permissions": {"clipboardWrite": {}}, "csp": {"connectDomains": []}},
        })
    );
    assert!(result["hostCapabilities"].get("sampling").is_none());
    assert_eq!(
        result["hostInfo"],
        json!({"name": "Porthole", "version": env!("CARGO_PKG_VERSION")})
    );
    let context = &result["hostContext"];
    let tool = json!({
        "name": "echo",
        "title": "Echo",
        "description": "the echo tool",
        "inputSchema": {"type": "object"},
        "_meta": {"ui": {"resourceUri": "ui://demo/echo.html", "visibility": ["model", "app"]}},
    });
    assert_eq!(context["toolInfo"], json!({"id": 42, "tool": tool}));
    assert_eq!(tool_definition(&config().tool), tool);
    assert_eq!(context["theme"], "light");
    assert_eq!(context["platform"], "desktop");
    assert_eq!(context["displayMode"], "inline");
    assert_eq!(context["availableDisplayModes"], json!(["inline", "fullscreen"]));
    assert_eq!(context["containerDimensions"], json!({"maxHeight": 800}));
    assert_eq!(context["locale"], "en-GB");
    assert_eq!(context["timeZone"], "Europe/London");
    assert_eq!(context["userAgent"], "Porthole/test");
    assert_eq!(
        context["styles"]["variables"]["--color-text-primary"],
        "light-dark(#111, #eee)"
    );
    assert_eq!(h.bridge.host_context().get("toolInfo"), None);

    // Versions: an older supported one is echoed; unknown or missing ones get our latest.
    for (asked, answered) in [
        (json!({"protocolVersion": "2025-11-21"}), "2025-11-21"),
        (json!({"protocolVersion": "1999-01-01"}), "2026-01-26"),
        (json!({"protocolVersion": 20260126}), "2026-01-26"),
        (json!({}), "2026-01-26"),
    ] {
        let mut h = Harness::new();
        assert_eq!(h.initialize_with(asked).await["protocolVersion"], answered);
    }

    // Without a call id, toolInfo has only the tool; the view's context and sandbox are never
    // anything but objects.
    let mut plain = config();
    plain.tool = catalog_tool(SERVER, "echo", &[Audience::App]);
    plain.tool_call_request_id = None;
    plain.host_context = json!("not an object");
    plain.granted = Value::Null;
    let mut h = Harness::with(plain);
    let result = h.initialize_with(json!({})).await;
    assert_eq!(
        result["hostContext"]["toolInfo"],
        json!({"tool": {
            "name": "echo",
            "description": "the echo tool",
            "inputSchema": {"type": "object"},
            "_meta": {"ui": {"visibility": ["app"]}},
        }})
    );
    assert_eq!(result["hostCapabilities"]["sandbox"], json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_initialize_is_answered_again() {
    let mut h = Harness::new();
    let first = h.handshake().await;
    h.bridge.host_context_changed(json!({"theme": "dark"}));
    assert_eq!(h.drain().await.len(), 1);
    let second = h.initialize_with(json!({"protocolVersion": "2025-11-21"})).await;
    assert_eq!(second["protocolVersion"], "2025-11-21");
    assert_eq!(second["hostCapabilities"], first["hostCapabilities"]);
    assert_eq!(second["hostContext"]["theme"], "dark");
    assert!(h.bridge.is_initialized());
    h.notify("ui/notifications/initialized", json!(null));
    assert!(h.drain().await.is_empty());
}

/// Emulating another host (the workbench): the view is told that host's info, capabilities
/// and context, and what the host does not advertise is refused as that host would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emulated_host_presents_itself_and_offers_only_what_it_advertises() {
    use porthole_apps::host_emulation::HostEmulation;
    use porthole_apps::theme::Theme;
    let goose = HostEmulation {
        preset: "goose".into(),
        ..Default::default()
    };
    let mut h = Harness::with(ViewConfig {
        emulating: Some(goose.presentation(Theme::Light)),
        ..config()
    });
    let answer = h.handshake().await;
    assert_eq!(answer["hostInfo"], json!({"name": "MCP-UI Host", "version": "1.38.0"}));
    assert!(answer["hostCapabilities"].get("serverTools").is_none());
    assert!(
        answer["hostCapabilities"].get("sandbox").is_some(),
        "the grant is still echoed"
    );
    assert_eq!(
        answer["hostContext"]["availableDisplayModes"],
        json!(["inline", "fullscreen", "pip"])
    );
    assert_eq!(answer["hostContext"]["userAgent"], "MCP-UI Host/1.38.0");
    assert!(answer["hostContext"]["toolInfo"].is_object());
    let refused = h.request("tools/call", json!({"name": "echo", "arguments": {}})).await;
    assert_eq!(error_code(&refused), -32601);
    assert!(
        refused["error"]["message"].as_str().unwrap().contains("serverTools"),
        "{refused}"
    );
    let refused = h
        .request(
            "ui/message",
            json!({"role": "user", "content": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    assert_eq!(error_code(&refused), -32601);
    // What it does advertise still works.
    let link = h.request("ui/open-link", json!({"url": "https://example.com"})).await;
    assert!(link.get("result").is_some(), "{link}");

    // Porthole itself answers as before.
    let mut own = Harness::new();
    let answer = own.handshake().await;
    assert_eq!(answer["hostInfo"]["name"], "Porthole");
    assert!(answer["hostCapabilities"]["serverTools"].is_object());
}

/// Two parties in one document (an Apps SDK shim and skybridge's own App) or a remount: the one
/// that initializes second still gets the tool input and result, which went out at the first
/// `initialized`, possibly before it listened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_party_that_initializes_second_gets_the_input_and_result_too() {
    let mut h = Harness::new();
    h.bridge.tool_input(json!({"q": "abc"}));
    let result = json!({"content": [{"type": "text", "text": "r"}], "structuredContent": {"n": 1}});
    h.bridge.tool_result(result.clone());
    h.handshake().await;
    let first: Vec<Value> = h.drain().await;
    assert_eq!(h.drain_actions(), [ViewAction::Initialized]);
    assert_eq!(
        first.iter().map(method_of).collect::<Vec<_>>(),
        ["ui/notifications/tool-input", "ui/notifications/tool-result"]
    );

    h.initialize_with(json!({"protocolVersion": "2026-01-26"})).await;
    assert!(
        h.drain().await.is_empty(),
        "nothing before the second party's initialized"
    );
    h.notify("ui/notifications/initialized", json!({}));
    let again = h.drain().await;
    assert_eq!(again, first, "the same input and result, again");
    assert_eq!(again[1]["params"], result);
    assert!(h.drain_actions().is_empty(), "ready once");

    // An initialized without a new initialize repeats nothing.
    h.notify("ui/notifications/initialized", json!({}));
    assert!(h.drain().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_is_answered_before_and_after_the_handshake() {
    let mut h = Harness::new();
    assert_eq!(h.request("ping", json!({})).await["result"], json!({}));
    h.bridge.receive(json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}));
    assert_eq!(h.next().await, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    h.handshake().await;
    assert_eq!(h.request("ping", json!({})).await["result"], json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_before_initialize_are_refused_and_reach_no_server() {
    let mut h = Harness::new();
    let answer = h.request("tools/call", json!({"name": "echo"})).await;
    assert_eq!(error_code(&answer), -32000);
    assert_eq!(answer["error"]["message"], "send ui/initialize first");
    let answer = h.request("ui/open-link", json!({"url": "https://example.com"})).await;
    assert_eq!(error_code(&answer), -32000);
    // Unknown methods are still "not found".
    assert_eq!(error_code(&h.request("nope", json!({})).await), -32601);
    // initialized before ui/initialize is ignored; size changes too; logging is kept.
    h.notify("ui/notifications/initialized", json!({}));
    h.notify("ui/notifications/size-changed", json!({"height": 10}));
    h.notify("notifications/message", json!({"level": "info", "data": "early"}));
    assert!(!h.bridge.is_initialized());
    // The unknown method is reported as unsupported (what `porthole check` lists).
    assert_eq!(
        h.drain_actions(),
        [
            ViewAction::Unsupported { method: "nope".into() },
            ViewAction::Log {
                level: "info".into(),
                logger: None,
                data: json!("early")
            }
        ]
    );
    assert!(h.host.calls().is_empty());
    let audits = h.host.audits();
    assert_eq!(audits.len(), 1);
    assert_eq!(audits[0].kind, AuditKind::Call);
    assert_eq!(audits[0].detail["outcome"], "refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_call_reaches_app_visible_tools_of_the_same_server() {
    let mut h = Harness::new();
    h.handshake().await;
    let answer = h
        .request("tools/call", json!({"name": "echo", "arguments": {"a": 1}}))
        .await;
    assert_eq!(answer["result"]["structuredContent"], json!({"arguments": {"a": 1}}));
    assert_eq!(answer["result"]["_meta"], json!({"fakeHost": true}));
    // Naming the own server is fine.
    let answer = h
        .request("tools/call", json!({"name": "fails", "server": SERVER}))
        .await;
    assert_eq!(answer["result"]["isError"], true);
    let answer = h.request("tools/call", json!({"name": "broken"})).await;
    assert_eq!(error_code(&answer), -32000);
    assert_eq!(answer["error"]["message"], "server exploded");

    assert_eq!(
        h.host.calls(),
        [
            HostCall {
                method: "tools/call",
                server: SERVER.into(),
                detail: json!({"name": "echo", "arguments": {"a": 1}})
            },
            HostCall {
                method: "tools/call",
                server: SERVER.into(),
                detail: json!({"name": "fails", "arguments": null})
            },
            HostCall {
                method: "tools/call",
                server: SERVER.into(),
                detail: json!({"name": "broken", "arguments": null})
            },
        ]
    );
    let audits = h.host.audits();
    let outcomes: Vec<(&str, Option<&str>, &Value)> = audits
        .iter()
        .map(|a| (a.kind.as_str(), a.tool.as_deref(), &a.detail["outcome"]))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("call", Some("echo"), &json!("ok")),
            ("call", Some("fails"), &json!("error")),
            ("call", Some("broken"), &json!("error")),
        ]
    );
    assert!(
        audits
            .iter()
            .all(|a| a.server == SERVER && a.detail["view"] == "view-1")
    );
    assert_eq!(audits[2].detail["error"], "server exploded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_call_is_refused_for_model_only_unknown_and_other_server_tools() {
    let mut h = Harness::new();
    h.handshake().await;
    for (params, message_part) in [
        (json!({"name": "model_only"}), "visibility"),
        (json!({"name": "hidden"}), "visibility"),
        (json!({"name": "nope"}), "no tool"),
        (json!({"name": "secret"}), "no tool"),
        (json!({"name": "other__secret"}), "no tool"),
        (json!({"name": "demo__echo"}), "no tool"),
        (json!({"name": "secret", "server": "other"}), "own server"),
        (json!({"name": "echo", "server": "other"}), "own server"),
        (json!({"name": "echo", "server": 7}), "own server"),
    ] {
        let answer = h.request("tools/call", params.clone()).await;
        assert_eq!(error_code(&answer), -32000, "{params}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(message_part), "{params}: {message}");
    }
    for params in [json!({}), json!({"name": 3}), json!({"name": "echo", "arguments": [1]})] {
        assert_eq!(error_code(&h.request("tools/call", params).await), -32602);
    }
    assert!(h.host.calls().is_empty(), "no refused call reaches a server");
    let audits = h.host.audits();
    assert_eq!(audits.len(), 12);
    assert!(
        audits
            .iter()
            .all(|a| a.kind == AuditKind::Call && a.detail["outcome"] == "refused")
    );
    assert_eq!(audits[0].tool.as_deref(), Some("model_only"));
    assert!(audits[0].detail["reason"].as_str().unwrap().contains("visibility"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_prompts_and_tools_lists_go_to_the_same_server() {
    let mut h = Harness::new();
    h.handshake().await;
    let answer = h
        .request("resources/read", json!({"uri": "ui://demo/x.html", "server": "other"}))
        .await;
    assert_eq!(
        answer["result"],
        json!({"contents": [{"uri": "ui://demo/x.html", "text": "hello"}]})
    );
    let answer = h.request("resources/read", json!({"uri": "ui://demo/missing"})).await;
    assert_eq!(error_code(&answer), -32000);
    assert_eq!(answer["error"]["message"], "resource not found");
    assert_eq!(error_code(&h.request("resources/read", json!({})).await), -32602);
    assert_eq!(
        h.request("resources/list", json!({"cursor": "x"})).await["result"]["resources"][0]["name"],
        "a"
    );
    assert_eq!(
        h.request("resources/templates/list", json!({})).await["result"],
        json!({"resourceTemplates": []})
    );
    assert_eq!(
        h.request("prompts/list", json!(null)).await["result"]["prompts"][0]["name"],
        "p"
    );
    let methods: Vec<(&str, String)> = h.host.calls().iter().map(|c| (c.method, c.server.clone())).collect();
    assert_eq!(
        methods,
        [
            ("resources/read", SERVER.to_string()),
            ("resources/read", SERVER.to_string()),
            ("resources/list", SERVER.to_string()),
            ("resources/templates/list", SERVER.to_string()),
            ("prompts/list", SERVER.to_string()),
        ]
    );

    let tools = h.request("tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "fails", "broken", "slow"]);
    assert_eq!(tools["result"]["tools"][0]["inputSchema"], json!({"type": "object"}));
    assert_eq!(tools["result"]["tools"][1]["_meta"]["ui"]["visibility"], json!(["app"]));

    // An app that does not offer the tool list: tools/list is "not found", tools/call still works.
    h.host.set_lists_tools(false);
    assert_eq!(error_code(&h.request("tools/list", json!({})).await), -32601);
    assert!(
        h.request("tools/call", json!({"name": "echo"}))
            .await
            .get("result")
            .is_some()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_link_allows_only_https() {
    let mut h = Harness::new();
    h.handshake().await;
    h.drain_actions();
    let answer = h
        .request("ui/open-link", json!({"url": "https://example.com/docs?x=1"}))
        .await;
    assert_eq!(answer["result"], json!({}));
    let opened: Vec<Value> = h
        .host
        .calls()
        .into_iter()
        .filter(|c| c.method == "open_link")
        .map(|c| c.detail)
        .collect();
    assert_eq!(opened, [json!("https://example.com/docs?x=1")]);
    let refused = [
        "http://example.com/",
        "javascript:alert(document.cookie)",
        "file:///etc/passwd",
        "data:text/html;base64,PHNjcmlwdD4=",
        "/relative",
        "relative/path",
        "mcpview://localhost/view/1",
    ];
    for url in refused {
        let answer = h.request("ui/open-link", json!({ "url": url })).await;
        assert_eq!(error_code(&answer), -32000, "{url}");
        assert_eq!(answer["error"]["message"], "only https links can be opened", "{url}");
    }
    assert_eq!(error_code(&h.request("ui/open-link", json!({"url": 5})).await), -32000);
    assert!(h.drain_actions().is_empty());
    let audits = h.host.audits();
    assert_eq!(audits.len(), refused.len() + 1);
    assert!(audits.iter().all(|a| a.kind == AuditKind::Refused));
    assert_eq!(audits[1].detail["url"], "javascript:alert(document.cookie)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_facing_requests_are_rate_limited() {
    let mut h = Harness::new();
    h.handshake().await;
    for i in 0..MAX_PROMPTS {
        let answer = h
            .request("ui/open-link", json!({"url": format!("https://example.com/{i}")}))
            .await;
        assert_eq!(answer["result"], json!({}));
    }
    let answer = h
        .request(
            "ui/message",
            json!({"role": "user", "content": [{"type": "text", "text": "x"}]}),
        )
        .await;
    assert_eq!(error_code(&answer), -32000);
    // The links went to the host (the person is asked there); the refused message nowhere.
    let opened = h.host.calls().iter().filter(|c| c.method == "open_link").count();
    assert_eq!(opened, MAX_PROMPTS as usize);
    assert!(
        !h.drain_actions()
            .iter()
            .any(|a| matches!(a, ViewAction::ProposeMessage { .. })),
        "the message over the limit is not proposed"
    );
    assert_eq!(h.host.audits().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_message_accepts_an_array_or_a_single_block_from_the_user_only() {
    let mut h = Harness::new();
    h.handshake().await;
    h.drain_actions();
    let block = json!({"type": "text", "text": "What about Paris?"});
    let answer = h
        .request("ui/message", json!({"role": "user", "content": [block]}))
        .await;
    assert_eq!(answer["result"], json!({}));
    let answer = h.request("ui/message", json!({"role": "user", "content": block})).await;
    assert_eq!(answer["result"], json!({}));
    assert_eq!(
        h.drain_actions(),
        [
            ViewAction::ProposeMessage {
                content: vec![block.clone()]
            },
            ViewAction::ProposeMessage {
                content: vec![block.clone()]
            },
        ]
    );
    for params in [
        json!({"role": "assistant", "content": [block]}),
        json!({"content": [block]}),
        json!({"role": "user"}),
        json!({"role": "user", "content": "text"}),
        json!({"role": "user", "content": [{"type": "image", "data": "", "mimeType": "image/png"}]}),
    ] {
        assert_eq!(error_code(&h.request("ui/message", params).await), -32602);
    }
    assert!(h.drain_actions().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_context_download_logging_and_teardown_requests_reach_the_app() {
    let mut h = Harness::new();
    h.handshake().await;
    h.drain_actions();
    let answer = h
        .request(
            "ui/update-model-context",
            json!({"content": [{"type": "text", "text": "selected: Paris"}], "structuredContent": {"city": "Paris"}}),
        )
        .await;
    assert_eq!(answer["result"], json!({}));
    assert_eq!(
        error_code(
            &h.request("ui/update-model-context", json!({"structuredContent": "x"}))
                .await
        ),
        -32602
    );
    let file =
        json!({"type": "resource", "resource": {"uri": "file:///report.csv", "mimeType": "text/csv", "text": "a,b"}});
    assert_eq!(
        h.request("ui/download-file", json!({"contents": [file]})).await["result"],
        json!({})
    );
    assert_eq!(
        error_code(&h.request("ui/download-file", json!({"contents": []})).await),
        -32602
    );
    h.notify(
        "notifications/message",
        json!({"level": "warning", "logger": "map", "data": {"n": 1}}),
    );
    h.notify("ui/log", json!({"data": "alias"}));
    h.notify("ui/notifications/request-teardown", json!({}));
    assert_eq!(
        h.drain_actions(),
        [
            ViewAction::UpdateModelContext {
                params: json!({"content": [{"type": "text", "text": "selected: Paris"}], "structuredContent": {"city": "Paris"}})
            },
            ViewAction::DownloadFile { contents: vec![file] },
            ViewAction::Log {
                level: "warning".into(),
                logger: Some("map".into()),
                data: json!({"n": 1})
            },
            ViewAction::Log {
                level: "info".into(),
                logger: None,
                data: json!("alias")
            },
            ViewAction::RequestTeardown,
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn display_mode_honours_only_modes_declared_by_both_sides() {
    let mut h = Harness::new();
    h.handshake().await;
    h.drain_actions();
    // pip: declared by the view, not offered by the host.
    let answer = h.request("ui/request-display-mode", json!({"mode": "pip"})).await;
    assert_eq!(answer["result"], json!({"mode": "inline"}));
    assert!(h.drain().await.is_empty());
    // fullscreen: the context change comes first, then the answer.
    h.bridge.receive(
        json!({"jsonrpc": "2.0", "id": "fs", "method": "ui/request-display-mode", "params": {"mode": "fullscreen"}}),
    );
    let change = h.next().await;
    assert_eq!(change["method"], "ui/notifications/host-context-changed");
    assert_eq!(change["params"], json!({"displayMode": "fullscreen"}));
    assert_eq!(
        h.next().await,
        json!({"jsonrpc": "2.0", "id": "fs", "result": {"mode": "fullscreen"}})
    );
    assert_eq!(
        h.drain_actions(),
        [ViewAction::DisplayMode {
            mode: "fullscreen".into()
        }]
    );
    assert_eq!(h.bridge.host_context()["displayMode"], "fullscreen");
    // Asking for the mode in effect changes nothing.
    let answer = h
        .request("ui/request-display-mode", json!({"mode": "fullscreen"}))
        .await;
    assert_eq!(answer["result"], json!({"mode": "fullscreen"}));
    assert!(h.drain().await.is_empty());
    assert!(h.drain_actions().is_empty());
    assert_eq!(
        error_code(&h.request("ui/request-display-mode", json!({"mode": 1})).await),
        -32602
    );

    // A view that declared no modes stays where it is.
    let mut h = Harness::new();
    h.initialize_with(json!({"appCapabilities": {}})).await;
    h.notify("ui/notifications/initialized", json!({}));
    let answer = h
        .request("ui/request-display-mode", json!({"mode": "fullscreen"}))
        .await;
    assert_eq!(answer["result"], json!({"mode": "inline"}));
    assert_eq!(h.drain_actions(), [ViewAction::Initialized]);

    // A change between ui/initialize and initialized is posted at initialized.
    let mut h = Harness::new();
    h.initialize_with(json!({"appCapabilities": {"availableDisplayModes": ["fullscreen"]}}))
        .await;
    let answer = h
        .request("ui/request-display-mode", json!({"mode": "fullscreen"}))
        .await;
    assert_eq!(answer["result"], json!({"mode": "fullscreen"}));
    h.notify("ui/notifications/initialized", json!({}));
    let sent = h.drain().await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["params"], json!({"displayMode": "fullscreen"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn size_changes_are_clamped_rate_limited_and_the_last_one_is_kept() {
    let mut h = Harness::new();
    h.handshake().await;
    h.drain_actions();
    h.notify("ui/notifications/size-changed", json!({"width": -20, "height": 99999}));
    h.notify("ui/notifications/size-changed", json!({"height": 300}));
    h.notify("ui/notifications/size-changed", json!({"width": "wide"}));
    assert_eq!(
        h.drain_actions(),
        [
            ViewAction::SizeChanged {
                width: Some(0.0),
                height: Some(f64::from(MAX_VIEW_HEIGHT))
            },
            ViewAction::SizeChanged {
                width: None,
                height: Some(300.0)
            },
        ]
    );
    for i in 0..40 {
        h.notify("ui/notifications/size-changed", json!({"height": 1000 + i}));
    }
    let now = h.drain_actions();
    assert_eq!(now.len(), MAX_SIZE_CHANGES_PER_SECOND as usize - 2);
    let late = tokio::time::timeout(Duration::from_secs(3), h.actions.recv())
        .await
        .expect("the last size arrives when the window ends")
        .unwrap();
    assert_eq!(
        late,
        ViewAction::SizeChanged {
            width: None,
            height: Some(1039.0)
        }
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(h.drain_actions().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_methods_are_not_found_and_unknown_notifications_ignored() {
    let mut h = Harness::new();
    h.handshake().await;
    for method in [
        "sampling/createMessage",
        "ui/resource-teardown",
        "prompts/get",
        "",
        "x".repeat(10_000).as_str(),
    ] {
        let answer = h.request(method, json!({})).await;
        assert_eq!(error_code(&answer), -32601, "{method}");
        assert!(answer["error"]["message"].as_str().unwrap().len() < 200);
    }
    h.notify("notifications/whatever", json!({}));
    h.notify("ui/notifications/sandbox-proxy-ready", json!({}));
    assert!(h.drain().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_requests_get_invalid_request() {
    let mut h = Harness::new();
    h.handshake().await;
    let cases = [
        (json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}), json!(1), -32600),
        (json!({"id": 2, "method": "ping"}), json!(2), -32600),
        (json!({"jsonrpc": "2.0", "id": 3, "method": 3}), json!(3), -32600),
        (
            json!({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": "x"}),
            json!(4),
            -32600,
        ),
        (json!({"jsonrpc": "2.0", "id": 5}), json!(5), -32600),
        (
            json!({"jsonrpc": "2.0", "id": "six", "method": "ping", "params": [1]}),
            json!("six"),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            Value::Null,
            -32600,
        ),
        (
            json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
            Value::Null,
            -32600,
        ),
        (
            json!({"jsonrpc": "2.0", "id": [7], "method": "ping"}),
            Value::Null,
            -32600,
        ),
        (
            json!({"jsonrpc": "2.0", "id": true, "method": "ping"}),
            Value::Null,
            -32600,
        ),
        (json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}), json!(1.5), 0),
        (
            json!({"jsonrpc": "2.0", "id": -9007199254740993i64, "method": "ping"}),
            json!(-9007199254740993i64),
            0,
        ),
    ];
    for (message, id, code) in cases {
        h.bridge.receive(message.clone());
        let answer = h.next().await;
        assert_eq!(answer["id"], id, "{message}");
        assert_eq!(answer["jsonrpc"], "2.0");
        if code == 0 {
            assert_eq!(answer["result"], json!({}), "{message}");
        } else {
            assert_eq!(error_code(&answer), code, "{message}");
        }
    }
    // Nothing answerable: dropped.
    for message in [
        json!(null),
        json!("ping"),
        json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
        json!({"jsonrpc": "2.0", "method": 5}),
        json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": 3}),
        json!({"jsonrpc": "2.0", "id": 77, "result": {}}),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": 1}}),
    ] {
        h.bridge.receive(message);
    }
    assert!(h.drain().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teardown_is_answered() {
    let mut h = Harness::new();
    h.handshake().await;
    let bridge = h.bridge.clone();
    let teardown = tokio::spawn(async move {
        bridge
            .teardown("the conversation was closed", Duration::from_secs(5))
            .await
    });
    let request = h.next().await;
    assert_eq!(request["method"], "ui/resource-teardown");
    assert_eq!(request["params"], json!({"reason": "the conversation was closed"}));
    // The view may still call its server while saving its state.
    assert_eq!(
        h.request("tools/call", json!({"name": "echo"})).await["result"]["content"][0]["text"],
        "echo"
    );
    h.bridge
        .receive(json!({"jsonrpc": "2.0", "id": request["id"], "result": {}}));
    assert_eq!(teardown.await.unwrap(), TeardownOutcome::Answered);
    // Afterwards everything is dropped.
    h.bridge.receive(json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}));
    h.bridge.tool_result(json!({"content": []}));
    assert!(h.drain().await.is_empty());
    assert_eq!(
        h.bridge.teardown("again", Duration::from_secs(1)).await,
        TeardownOutcome::AlreadyTornDown
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teardown_counts_method_not_found_as_done() {
    let mut h = Harness::new();
    h.handshake().await;
    let bridge = h.bridge.clone();
    let teardown = tokio::spawn(async move { bridge.teardown("closed", Duration::from_secs(5)).await });
    let request = h.next().await;
    // Requests from the host are not fed back as view requests.
    h.bridge
        .receive(json!({"jsonrpc": "2.0", "id": 12345, "error": {"code": -32601, "message": "nope"}}));
    h.bridge.receive(
        json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not found"}}),
    );
    assert_eq!(
        teardown.await.unwrap(),
        TeardownOutcome::Errored {
            code: -32601,
            message: "Method not found".into()
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teardown_times_out_and_needs_an_initialized_view() {
    let mut h = Harness::new();
    h.handshake().await;
    let started = std::time::Instant::now();
    assert_eq!(
        h.bridge.teardown("closed", Duration::from_millis(100)).await,
        TeardownOutcome::TimedOut
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(h.next().await["method"], "ui/resource-teardown");

    let mut h = Harness::new();
    h.initialize_with(json!({})).await;
    assert_eq!(
        h.bridge.teardown("closed", Duration::from_secs(1)).await,
        TeardownOutcome::NotInitialized
    );
    assert!(h.drain().await.is_empty(), "no request before initialized");

    let mut h = Harness::new();
    h.handshake().await;
    let Harness { bridge, out, .. } = h;
    drop(out);
    assert_eq!(
        bridge.teardown("closed", Duration::from_secs(1)).await,
        TeardownOutcome::Disconnected
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_is_cut_off_and_audited_once() {
    let mut h = Harness::new();
    h.handshake().await; // two messages
    for i in 0..(MAX_MESSAGES_PER_SECOND + 200) {
        h.bridge
            .receive(json!({"jsonrpc": "2.0", "id": i + 1000, "method": "ping"}));
    }
    let answered = h.drain().await.len();
    assert_eq!(answered, MAX_MESSAGES_PER_SECOND as usize - 2);
    let audits = h.host.audits();
    assert_eq!(audits.len(), 1);
    assert_eq!(audits[0].kind, AuditKind::Refused);
    assert!(audits[0].detail["reason"].as_str().unwrap().starts_with("flood"));
    // The next second is served again.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(h.request("ping", json!({})).await["result"], json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_and_too_deep_messages_are_refused() {
    let mut h = Harness::new();
    h.handshake().await;
    let huge = "x".repeat(MAX_MESSAGE_BYTES);
    for _ in 0..2 {
        h.bridge.receive(json!({"jsonrpc": "2.0", "id": "big", "method": "tools/call", "params": {"name": "echo", "arguments": {"pad": huge}}}));
        let answer = h.next().await;
        assert_eq!(answer["id"], "big");
        assert_eq!(error_code(&answer), -32600);
        assert_eq!(answer["error"]["message"], "message too large");
    }
    // Without an id there is nothing to answer.
    h.bridge
        .receive(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": huge}}));
    let mut deep = json!(1);
    for _ in 0..500 {
        deep = json!([deep]);
    }
    h.bridge
        .receive(json!({"jsonrpc": "2.0", "id": 5, "method": "ui/update-model-context", "params": {"structuredContent": {"d": deep}}}));
    let answer = h.next().await;
    assert_eq!(error_code(&answer), -32600);
    assert_eq!(answer["error"]["message"], "message nested too deeply");
    assert!(h.drain().await.is_empty());
    assert!(h.host.calls().is_empty());
    assert!(
        h.drain_actions()
            .iter()
            .all(|a| !matches!(a, ViewAction::Log { .. } | ViewAction::UpdateModelContext { .. }))
    );
    let audits = h.host.audits();
    assert_eq!(audits.len(), 1, "audited once per view");
    assert_eq!(audits[0].detail["reason"], "message too large");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_in_flight_are_limited_and_cancellable() {
    let mut h = Harness::new();
    h.handshake().await;
    for i in 0..MAX_IN_FLIGHT {
        h.bridge
            .receive(json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "slow"}}));
    }
    // One over the limit, and one reusing an id in flight.
    h.bridge
        .receive(json!({"jsonrpc": "2.0", "id": "extra", "method": "resources/list"}));
    let answer = h.next().await;
    assert_eq!(answer["id"], "extra");
    assert_eq!(answer["error"]["message"], "too many calls in flight");
    h.bridge
        .receive(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "slow"}}));
    let answer = h.next().await;
    assert_eq!(answer["id"], 3);
    assert_eq!(error_code(&answer), -32600);
    // The view cancels call 0: it is never answered.
    h.notify(
        "notifications/cancelled",
        json!({"requestId": 0, "reason": "user left"}),
    );
    h.notify("notifications/cancelled", json!({"requestId": 0}));
    // A slot is free again.
    h.bridge
        .receive(json!({"jsonrpc": "2.0", "id": "again", "method": "prompts/list"}));
    assert_eq!(h.next().await["id"], "again");
    h.host.release();
    let mut ids = vec![];
    for _ in 1..MAX_IN_FLIGHT {
        let answer = h.next().await;
        assert_eq!(answer["result"]["structuredContent"], json!({"slow": true}));
        ids.push(answer["id"].as_u64().unwrap());
    }
    ids.sort();
    assert_eq!(ids, (1..MAX_IN_FLIGHT as u64).collect::<Vec<_>>());
    assert!(h.drain().await.is_empty());
    let audits = h.host.audits();
    let outcomes: Vec<&str> = audits.iter().filter_map(|a| a.detail["outcome"].as_str()).collect();
    assert_eq!(outcomes.iter().filter(|o| **o == "refused").count(), 1);
    assert_eq!(outcomes.iter().filter(|o| **o == "cancelled").count(), 1);
    assert_eq!(outcomes.iter().filter(|o| **o == "ok").count(), MAX_IN_FLIGHT - 1);
    assert!(
        audits
            .iter()
            .any(|a| a.kind == AuditKind::Refused && a.detail["reason"] == "too many calls in flight")
    );
}

#[test]
fn receive_works_without_a_runtime() {
    let host = fake_host();
    let (bridge, mut out, _actions) = ViewBridge::new(config(), host.clone());
    bridge.receive(json!({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {}}));
    bridge.receive(json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized"}));
    bridge.receive(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}}));
    assert!(out.try_recv().unwrap()["result"]["protocolVersion"].is_string());
    assert_eq!(error_code(&out.try_recv().unwrap()), -32603);
    assert!(host.calls().is_empty());
}

// ---- fuzzing ----

const METHODS: &[&str] = &[
    "ping",
    "ui/initialize",
    "ui/notifications/initialized",
    "tools/call",
    "tools/list",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "ui/open-link",
    "ui/message",
    "ui/update-model-context",
    "ui/request-display-mode",
    "ui/download-file",
    "ui/notifications/size-changed",
    "ui/notifications/request-teardown",
    "notifications/message",
    "notifications/cancelled",
    "ui/log",
    "sampling/createMessage",
    "ui/resource-teardown",
];

const KEYS: &[&str] = &[
    "jsonrpc",
    "id",
    "method",
    "params",
    "result",
    "error",
    "name",
    "arguments",
    "server",
    "uri",
    "url",
    "mode",
    "width",
    "height",
    "role",
    "content",
    "type",
    "text",
    "structuredContent",
    "contents",
    "protocolVersion",
    "appCapabilities",
    "availableDisplayModes",
    "requestId",
    "level",
    "data",
];

const STRINGS: &[&str] = &[
    "2.0",
    "echo",
    "model_only",
    "hidden",
    "secret",
    "other",
    "other__secret",
    "demo",
    "slow",
    "https://example.com/",
    "javascript:alert(1)",
    "user",
    "assistant",
    "text",
    "fullscreen",
    "pip",
    "inline",
    "resource",
    "resource_link",
    "2025-11-21",
];

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(STRINGS).prop_map(String::from),
        prop::sample::select(METHODS).prop_map(String::from),
        ".{0,12}",
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Value::Number)),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 48, 6, |inner| {
        let key = prop_oneof![prop::sample::select(KEYS).prop_map(String::from), "[a-z]{0,5}"];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..6).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn templates() -> Vec<Value> {
    let text = json!({"type": "text", "text": "hi"});
    let request =
        |id: i64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let note = |method: &str, params: Value| json!({"jsonrpc": "2.0", "method": method, "params": params});
    vec![
        request(
            1,
            "ui/initialize",
            json!({"protocolVersion": "2026-01-26", "appInfo": {"name": "v", "version": "1"}, "appCapabilities": {"availableDisplayModes": ["inline", "fullscreen"]}}),
        ),
        note("ui/notifications/initialized", json!({})),
        request(2, "ping", json!({})),
        request(
            3,
            "tools/call",
            json!({"name": "echo", "arguments": {"a": [1, 2, {"b": "c"}]}}),
        ),
        request(4, "tools/call", json!({"name": "model_only", "arguments": {}})),
        request(5, "tools/call", json!({"name": "secret", "server": "other"})),
        request(6, "resources/read", json!({"uri": "ui://demo/x.html"})),
        request(7, "resources/list", json!({})),
        request(8, "tools/list", json!({})),
        request(9, "ui/open-link", json!({"url": "https://example.com/a"})),
        request(10, "ui/message", json!({"role": "user", "content": [text]})),
        request(11, "ui/message", json!({"role": "user", "content": text})),
        request(
            12,
            "ui/update-model-context",
            json!({"content": [text], "structuredContent": {"k": 1}}),
        ),
        request(13, "ui/request-display-mode", json!({"mode": "fullscreen"})),
        request(
            14,
            "ui/download-file",
            json!({"contents": [{"type": "resource_link", "uri": "file:///a", "name": "a"}]}),
        ),
        note("ui/notifications/size-changed", json!({"width": 100, "height": 200})),
        note("notifications/message", json!({"level": "info", "data": {"x": 1}})),
        note("notifications/cancelled", json!({"requestId": 3})),
        note("ui/notifications/request-teardown", json!({})),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    Remove(usize),
    Replace(usize, Value),
    HugeNumber(usize, bool),
    Nest(usize, usize),
    Huge(usize),
}

fn arb_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => any::<usize>().prop_map(Mutation::Remove),
        6 => (any::<usize>(), arb_json()).prop_map(|(p, v)| Mutation::Replace(p, v)),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(p, neg)| Mutation::HugeNumber(p, neg)),
        2 => (any::<usize>(), 100usize..300).prop_map(|(p, d)| Mutation::Nest(p, d)),
        1 => any::<usize>().prop_map(Mutation::Huge),
    ]
}

/// Every path to a value in `v` (object keys and array indices), the root first.
fn paths(v: &Value) -> Vec<Vec<Value>> {
    let mut out = vec![vec![]];
    fn walk(v: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    at.push(json!(k));
                    out.push(at.clone());
                    walk(child, at, out);
                    at.pop();
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    at.push(json!(i));
                    out.push(at.clone());
                    walk(child, at, out);
                    at.pop();
                }
            }
            _ => {}
        }
    }
    walk(v, &mut vec![], &mut out);
    out
}

fn at_path<'a>(v: &'a mut Value, path: &[Value]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, seg| match seg {
        Value::String(k) => v.get_mut(k.as_str()),
        Value::Number(i) => v.get_mut(i.as_u64()? as usize),
        _ => None,
    })
}

fn mutate(mut v: Value, mutations: &[Mutation]) -> Value {
    for m in mutations {
        let all = paths(&v);
        let pick = |p: usize| all[p % all.len()].clone();
        match m {
            Mutation::Remove(p) => {
                let path = pick(*p);
                if let Some((last, parent)) = path.split_last()
                    && let Some(parent) = at_path(&mut v, parent)
                {
                    match (parent, last) {
                        (Value::Object(map), Value::String(k)) => {
                            map.remove(k);
                        }
                        (Value::Array(items), Value::Number(i)) => {
                            items.remove(i.as_u64().unwrap() as usize);
                        }
                        _ => {}
                    }
                }
            }
            Mutation::Replace(p, new) => {
                if let Some(slot) = at_path(&mut v, &pick(*p)) {
                    *slot = new.clone();
                }
            }
            Mutation::HugeNumber(p, negative) => {
                if let Some(slot) = at_path(&mut v, &pick(*p)) {
                    *slot = if *negative { json!(i64::MIN) } else { json!(u64::MAX) };
                }
            }
            Mutation::Nest(p, depth) => {
                if let Some(slot) = at_path(&mut v, &pick(*p)) {
                    let mut nested = slot.take();
                    for i in 0..*depth {
                        nested = if i % 2 == 0 {
                            json!([nested])
                        } else {
                            json!({ "a": nested })
                        };
                    }
                    *slot = nested;
                }
            }
            Mutation::Huge(p) => {
                if let Some(slot) = at_path(&mut v, &pick(*p)) {
                    *slot = json!("x".repeat(MAX_MESSAGE_BYTES + 1));
                }
            }
        }
    }
    v
}

/// The kept corpus of hostile sessions (`tests/corpus/bridge/`, from `tests/hostile-server`'s
/// attacks and more): per file, its name, whether the view shakes hands first, and its messages.
fn corpus() -> &'static [(String, bool, Vec<Value>)] {
    static CORPUS: OnceLock<Vec<(String, bool, Vec<Value>)>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/bridge");
        let mut sessions: Vec<(String, bool, Vec<Value>)> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| {
                let path = entry.unwrap().path();
                let session: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                let handshake = session["handshake"].as_bool().expect("handshake");
                let messages = session["messages"].as_array().expect("messages").clone();
                (name, handshake, messages)
            })
            .collect();
        sessions.sort_by(|a, b| a.0.cmp(&b.0));
        assert!(sessions.len() >= 5, "the bridge corpus is missing: {}", dir.display());
        sessions
    })
}

/// What the fuzz mutates: the templates and every message of the corpus.
fn seeds() -> &'static [Value] {
    static SEEDS: OnceLock<Vec<Value>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seeds = templates();
        seeds.extend(corpus().iter().flat_map(|(_, _, messages)| messages.iter().cloned()));
        seeds
    })
}

fn arb_message() -> impl Strategy<Value = Value> {
    let n = seeds().len();
    prop_oneof![
        2 => arb_json(),
        2 => (
            prop_oneof![any::<i64>().prop_map(|i| json!(i)), arb_string().prop_map(Value::String), arb_json()],
            prop::sample::select(METHODS),
            arb_json(),
        )
            .prop_map(|(id, method, params)| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})),
        5 => (0..n, prop::collection::vec(arb_mutation(), 0..4))
            .prop_map(|(i, mutations)| mutate(seeds()[i].clone(), &mutations)),
    ]
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The id the bridge must answer `message` with, if it must answer at all.
fn expected_answer(message: &Value) -> Option<Value> {
    let obj = message.as_object()?;
    let valid_id = obj.get("id").filter(|id| id.is_string() || id.is_number()).cloned();
    let oversized = depth(message) > 128 || serde_json::to_vec(message).unwrap().len() > MAX_MESSAGE_BYTES;
    if obj.contains_key("method") {
        match obj.get("id") {
            None => None,
            Some(_) if oversized => valid_id,
            Some(_) => Some(valid_id.unwrap_or(Value::Null)),
        }
    } else if obj.contains_key("result") || obj.contains_key("error") || oversized {
        None
    } else {
        valid_id
    }
}

fn assert_valid_jsonrpc(message: &Value) {
    let obj = message.as_object().expect("an object");
    assert_eq!(obj.get("jsonrpc"), Some(&json!("2.0")), "{message}");
    if let Some(method) = obj.get("method") {
        assert!(method.is_string(), "{message}");
        assert!(
            !obj.contains_key("id"),
            "the bridge sends no request in the fuzz: {message}"
        );
        assert!(obj.get("params").is_none_or(Value::is_object), "{message}");
    } else {
        let id = obj.get("id").expect("responses have an id");
        assert!(id.is_string() || id.is_number() || id.is_null(), "{message}");
        assert!(obj.contains_key("result") != obj.contains_key("error"), "{message}");
        if let Some(error) = obj.get("error") {
            assert!(error["code"].is_i64(), "{message}");
            assert!(error["message"].is_string(), "{message}");
        }
    }
}

fn fuzz_runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    })
}

async fn fuzz_case(handshake: bool, messages: Vec<Value>) {
    let mut h = Harness::new();
    if handshake {
        h.handshake().await;
    }
    h.host.release();
    for message in messages {
        let expected = expected_answer(&message);
        let calls_before = h.host.calls().len();
        let shown: String = message.to_string().chars().take(300).collect();
        h.bridge.receive(message);
        let mut sent = vec![];
        if let Some(id) = &expected {
            // Notifications (a display-mode change) may come before the answer.
            loop {
                let m = h.next().await;
                assert_valid_jsonrpc(&m);
                let is_answer = m.get("method").is_none();
                sent.push(m);
                if is_answer {
                    break;
                }
            }
            let answer = sent.last().unwrap();
            assert_eq!(&answer["id"], id, "{shown}");
            // The host's own failures (the fake's `broken` tool, its missing resource) come back
            // as errors after reaching it; every other error is the bridge refusing.
            let host_failed =
                ["server exploded", "resource not found"].contains(&answer["error"]["message"].as_str().unwrap_or(""));
            if answer.get("error").is_some() && !host_failed {
                assert_eq!(
                    h.host.calls().len(),
                    calls_before,
                    "a refused request reached the host: {shown}"
                );
            }
        }
        let rest = h.drain().await;
        for m in &rest {
            assert_valid_jsonrpc(m);
            assert!(m.get("method").is_some(), "an unexpected answer {m} to {shown}");
        }
    }
    for call in h.host.calls() {
        assert_eq!(call.server, SERVER);
        if call.method == "tools/call" {
            let name = call.detail["name"].as_str().unwrap();
            assert!(["echo", "fails", "broken", "slow"].contains(&name), "{name}");
        }
    }
}

#[test]
fn the_hostile_corpus_gets_one_answer_per_request_and_none_per_notification() {
    for (name, handshake, messages) in corpus() {
        eprintln!("corpus: {name}");
        fuzz_runtime().block_on(fuzz_case(*handshake, messages.clone()));
    }
}

proptest! {
    // Failures are kept in proptest-regressions/bridge.txt (committed) and replayed first; 256
    // cases unless PROPTEST_CASES says otherwise.
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/bridge.txt"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn fuzz_receive_never_panics_and_answers_every_request_once(
        handshake in any::<bool>(),
        messages in prop::collection::vec(arb_message(), 1..6),
    ) {
        fuzz_runtime().block_on(fuzz_case(handshake, messages));
    }
}
