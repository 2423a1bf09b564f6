//! `porthole-apps-sdk-server`: an MCP server written the way servers for ChatGPT's Apps SDK are
//! (stdio): its tools name their widget with `openai/outputTemplate`, the widget is a
//! `text/html+skybridge` resource, and the widget's script uses only `window.openai` — never the
//! MCP Apps bridge. For the window tests of Porthole's compatibility layer.
//!
//! Tools: `pizza_map {topping}` (the widget; `structuredContent` lists places, the result's
//! `_meta` carries a note only the widget sees; status lines while running and when done;
//! callable from its widget), `pizza_count` (private: offered to no model, callable from the
//! widget only), `secret_recipe` (offered to the model, not callable from the widget), and
//! with `--both`, `both_shapes` (both metadata shapes: an MCP Apps view, `ui://apps/both.html`,
//! and the widget as its `openai/outputTemplate`; the MCP Apps one must win).
//!
//! With `--skybridge-widget PAGE` (the page `tests/skybridge-widget` builds: a widget written with
//! the published skybridge framework), `topping_board {occasion}` shows that widget
//! (`ui://widget/topping-board.html`), and `vote_topping {topping}` (callable from the widget)
//! counts votes.
//!
//! With `--host-report`, `host_report` shows an MCP Apps view (`ui://apps/host-report.html`)
//! that writes what it was told about its host (`hostInfo`, capabilities, platform, display
//! modes, device, `window.openai`) and what a `ui/message` got: for host emulation's tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, Implementation,
    ListResourcesResult, ListToolsResult, MetaObject, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

const WIDGET_URI: &str = "ui://widget/pizza-map.html";
const BOARD_URI: &str = "ui://widget/topping-board.html";
const MCP_APP_URI: &str = "ui://apps/both.html";
const MCP_APP_MIME: &str = "text/html;profile=mcp-app";
const HOST_REPORT_URI: &str = "ui://apps/host-report.html";

/// A view, written by hand against the bridge, that reports its host as it was told.
const HOST_REPORT: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Host report</title></head>
<body>
<p>host: <span data-testid="host-name">?</span></p>
<p>platform: <span data-testid="host-platform">?</span></p>
<p>modes: <span data-testid="host-modes">?</span></p>
<p>touch: <span data-testid="host-touch">?</span></p>
<p>width: <span data-testid="host-width">?</span></p>
<p>theme: <span data-testid="host-theme">?</span></p>
<p>capabilities: <span data-testid="host-capabilities">?</span></p>
<p>openai: <span data-testid="host-openai">?</span></p>
<p>result: <span data-testid="host-result">?</span></p>
<button data-testid="message-button">Propose a message</button>
<p>message: <span data-testid="host-message">?</span></p>
<script>
  var parent = window.parent;
  var context = {};
  function put(id, text) { document.querySelector('[data-testid="' + id + '"]').textContent = text; }
  function show() {
    put("host-platform", String(context.platform));
    put("host-modes", (context.availableDisplayModes || []).join(","));
    put("host-touch", context.deviceCapabilities && context.deviceCapabilities.touch ? "yes" : "no");
    put("host-width", context.containerDimensions && context.containerDimensions.maxWidth ? String(context.containerDimensions.maxWidth) : "any");
    put("host-theme", String(context.theme));
  }
  window.addEventListener("message", function (e) {
    if (e.source !== parent || !e.data || e.data.jsonrpc !== "2.0") return;
    var m = e.data;
    if (m.id === 1 && m.result) {
      put("host-name", m.result.hostInfo ? m.result.hostInfo.name : "none");
      put("host-capabilities", Object.keys(m.result.hostCapabilities || {}).filter(function (k) { return k !== "sandbox"; }).sort().join(","));
      put("host-openai", window.openai ? "yes" : "no");
      context = m.result.hostContext || {};
      show();
      parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/initialized", params: {}}, "*");
    }
    if (m.id === 2) put("host-message", m.error ? "refused" : "proposed");
    if (m.method === "ui/notifications/host-context-changed") {
      for (var k in m.params) context[k] = m.params[k];
      show();
    }
    if (m.method === "ui/notifications/tool-result") put("host-result", m.params.content[0].text);
    if (m.method === "ui/resource-teardown") parent.postMessage({jsonrpc: "2.0", id: m.id, result: {}}, "*");
  });
  document.querySelector('[data-testid="message-button"]').addEventListener("click", function () {
    parent.postMessage({jsonrpc: "2.0", id: 2, method: "ui/message", params: {role: "user", content: [{type: "text", text: "Hello from the report"}]}}, "*");
  });
  parent.postMessage({jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {
    protocolVersion: "2026-01-26", appInfo: {name: "host-report", version: "1"},
    appCapabilities: {availableDisplayModes: ["inline", "fullscreen"]}}}, "*");
</script></body></html>
"#;

/// A plain MCP App view, written by hand against the bridge: it initializes and shows the text
/// of the result it is given.
const MCP_APP: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Both</title></head>
<body><p data-testid="kind">an MCP Apps view</p><p data-testid="result"></p>
<script>
  var parent = window.parent;
  window.addEventListener("message", function (e) {
    if (e.source !== parent || !e.data || e.data.jsonrpc !== "2.0") return;
    var m = e.data;
    if (m.id === 1 && m.result) parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/initialized", params: {}}, "*");
    if (m.method === "ui/notifications/tool-result") {
      document.querySelector('[data-testid="result"]').textContent = m.params.content[0].text;
    }
    if (m.method === "ui/resource-teardown") parent.postMessage({jsonrpc: "2.0", id: m.id, result: {}}, "*");
  });
  parent.postMessage({jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {
    protocolVersion: "2026-01-26", appInfo: {name: "both", version: "1"}, appCapabilities: {}}}, "*");
</script></body></html>
"#;
const SKYBRIDGE: &str = "text/html+skybridge";

/// The widget: it reads `window.openai` as ChatGPT's widgets do, and writes what it sees into
/// the page (`data-testid`s the window test reads).
const WIDGET: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Pizza map</title>
<style>body{font:14px sans-serif;margin:8px} button{margin-right:6px}</style></head>
<body>
<h3 data-testid="title">Pizza map</h3>
<ul data-testid="places"></ul>
<p>Theme: <span data-testid="theme"></span> · Mode: <span data-testid="mode"></span></p>
<p>Note for the widget: <span data-testid="note"></span></p>
<p>Favourite: <span data-testid="favourite">none</span></p>
<p>Count: <span data-testid="count">?</span> · Secret: <span data-testid="secret">?</span> · Foreign: <span data-testid="foreign">?</span></p>
<p>uploadFile is <span data-testid="upload">?</span></p>
<button data-testid="count-button">Count</button>
<button data-testid="secret-button">Secret</button>
<button data-testid="foreign-button">Another server's tool</button>
<button data-testid="favourite-button">Make the first my favourite</button>
<button data-testid="follow-up-button">Ask for more</button>
<script>
  var openai = window.openai;
  function text(id, value) { document.querySelector('[data-testid="' + id + '"]').textContent = value; }
  function render() {
    var out = openai.toolOutput;
    var list = document.querySelector('[data-testid="places"]');
    list.innerHTML = "";
    ((out && out.places) || []).forEach(function (p) {
      var li = document.createElement("li");
      li.textContent = p.name + " (" + p.topping + ")";
      list.appendChild(li);
    });
    text("theme", openai.theme);
    text("mode", openai.displayMode);
    var meta = openai.toolResponseMetadata;
    text("note", (meta && meta["pizzaz/note"]) || "");
    var state = openai.widgetState;
    text("favourite", (state && state.favourite) || "none");
    document.body.dataset.ready = out ? "yes" : "no";
  }
  text("upload", typeof openai.uploadFile);
  render();
  window.addEventListener("openai:set_globals", render);
  document.querySelector('[data-testid="count-button"]').onclick = function () {
    openai.callTool("pizza_count", {}).then(function (r) {
      text("count", String(r.structuredContent.count));
    }, function (e) { text("count", "refused: " + e.message); });
  };
  document.querySelector('[data-testid="secret-button"]').onclick = function () {
    openai.callTool("secret_recipe", {}).then(function (r) {
      text("secret", "given: " + JSON.stringify(r));
    }, function (e) { text("secret", "refused: " + e.message); });
  };
  document.querySelector('[data-testid="foreign-button"]').onclick = function () {
    openai.callTool("echo", { text: "from the widget" }).then(function (r) {
      text("foreign", "given: " + JSON.stringify(r));
    }, function (e) { text("foreign", "refused: " + e.message); });
  };
  document.querySelector('[data-testid="favourite-button"]').onclick = function () {
    var out = openai.toolOutput;
    var first = out && out.places && out.places[0];
    openai.setWidgetState({ favourite: first ? first.name : "nothing" });
    render();
  };
  document.querySelector('[data-testid="follow-up-button"]').onclick = function () {
    openai.sendFollowUpMessage({ prompt: "Show me more pizza places" });
  };
  openai.notifyIntrinsicHeight(document.body.scrollHeight);
</script>
</body></html>
"#;

#[derive(Clone, Default)]
struct AppsSdkServer {
    counted: Arc<AtomicU64>,
    /// `--both`: offer `both_shapes` too (the server is then no longer written only for the SDK).
    both: bool,
    /// `--skybridge-widget PAGE`: the skybridge widget's page, for `topping_board`.
    board: Option<Arc<String>>,
    /// `--host-report`: offer `host_report`.
    host_report: bool,
    votes: Arc<AtomicU64>,
}

fn tool(name: &'static str, description: &'static str, meta: Value) -> Tool {
    let schema = json!({"type": "object", "properties": {"topping": {"type": "string"}}});
    let mut tool = Tool::new(name, description, Arc::new(schema.as_object().unwrap().clone()));
    tool.meta = Some(serde_json::from_value(meta).unwrap());
    tool
}

impl ServerHandler for AppsSdkServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("pizzaz", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = vec![
            tool(
                "pizza_map",
                "Show a map of pizza places.",
                json!({
                    "openai/outputTemplate": WIDGET_URI,
                    "openai/toolInvocation/invoking": "Finding pizza places",
                    "openai/toolInvocation/invoked": "Found pizza places",
                    "openai/widgetAccessible": true,
                }),
            ),
            tool(
                "pizza_count",
                "How many times the widget counted.",
                json!({"openai/visibility": "private", "openai/widgetAccessible": true}),
            ),
            tool("secret_recipe", "The secret recipe (for the model only).", json!({})),
        ];
        if self.both {
            tools.push(tool(
                "both_shapes",
                "A tool with both metadata shapes.",
                json!({"ui": {"resourceUri": MCP_APP_URI}, "openai/outputTemplate": WIDGET_URI}),
            ));
        }
        if self.host_report {
            tools.push(tool(
                "host_report",
                "Show what the view is told about its host.",
                json!({"ui": {"resourceUri": HOST_REPORT_URI}}),
            ));
        }
        if self.board.is_some() {
            let mut board = tool(
                "topping_board",
                "Show a board of pizza toppings to pick from.",
                json!({
                    "openai/outputTemplate": BOARD_URI,
                    "openai/toolInvocation/invoking": "Laying out the toppings",
                    "openai/toolInvocation/invoked": "Toppings laid out",
                }),
            );
            let schema = json!({"type": "object", "properties": {"occasion": {"type": "string"}}});
            board.input_schema = Arc::new(schema.as_object().unwrap().clone());
            tools.push(board);
            tools.push(tool(
                "vote_topping",
                "Vote for a topping.",
                json!({"openai/widgetAccessible": true}),
            ));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.clone().unwrap_or_default();
        let result = match request.name.as_ref() {
            "pizza_map" => {
                let topping = args.get("topping").and_then(Value::as_str).unwrap_or("margherita");
                let places = json!({"topping": topping, "places": [
                    {"name": "Tony's", "topping": topping},
                    {"name": "Luigi's", "topping": topping},
                ]});
                let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
                    "Two places serve {topping}: Tony's and Luigi's."
                ))]);
                result.structured_content = Some(places);
                let mut meta = MetaObject::default();
                meta.0.insert("pizzaz/note".into(), json!("only the widget sees this"));
                result.meta = Some(meta);
                result
            }
            "pizza_count" => {
                let count = self.counted.fetch_add(1, Ordering::SeqCst) + 1;
                let mut result = CallToolResult::success(vec![ContentBlock::text(count.to_string())]);
                result.structured_content = Some(json!({"count": count}));
                result
            }
            "secret_recipe" => CallToolResult::success(vec![ContentBlock::text("tomato, basil, patience")]),
            "host_report" if self.host_report => CallToolResult::success(vec![ContentBlock::text("reported")]),
            "both_shapes" => CallToolResult::success(vec![ContentBlock::text("shown by the MCP Apps view")]),
            "topping_board" if self.board.is_some() => {
                let occasion = args.get("occasion").and_then(Value::as_str).unwrap_or("dinner");
                let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
                    "Toppings for {occasion}: margherita, diavola, funghi."
                ))]);
                result.structured_content = Some(json!({
                    "title": format!("Toppings for {occasion}"),
                    "toppings": ["margherita", "diavola", "funghi"],
                }));
                let mut meta = MetaObject::default();
                meta.0.insert("note".into(), json!("fresh basil today"));
                result.meta = Some(meta);
                result
            }
            "vote_topping" if self.board.is_some() => {
                let topping = args.get("topping").and_then(Value::as_str).unwrap_or("margherita");
                let votes = self.votes.fetch_add(1, Ordering::SeqCst) + 1;
                let mut result =
                    CallToolResult::success(vec![ContentBlock::text(format!("{votes} votes for {topping}"))]);
                result.structured_content = Some(json!({"votes": votes, "topping": topping}));
                result
            }
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut resources = vec![
            Resource::new(WIDGET_URI, "Pizza map").with_mime_type(SKYBRIDGE),
            Resource::new(MCP_APP_URI, "Both").with_mime_type(MCP_APP_MIME),
        ];
        if self.host_report {
            resources.push(Resource::new(HOST_REPORT_URI, "Host report").with_mime_type(MCP_APP_MIME));
        }
        if self.board.is_some() {
            resources.push(Resource::new(BOARD_URI, "Topping board").with_mime_type(SKYBRIDGE));
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri == MCP_APP_URI {
            let contents = ResourceContents::text(MCP_APP, MCP_APP_URI).with_mime_type(MCP_APP_MIME);
            return Ok(ReadResourceResult::new(vec![contents]).into());
        }
        if self.host_report && request.uri == HOST_REPORT_URI {
            let contents = ResourceContents::text(HOST_REPORT, HOST_REPORT_URI).with_mime_type(MCP_APP_MIME);
            return Ok(ReadResourceResult::new(vec![contents]).into());
        }
        if let Some(board) = self.board.as_deref().filter(|_| request.uri == BOARD_URI) {
            let contents = ResourceContents::text(board.as_str(), BOARD_URI).with_mime_type(SKYBRIDGE);
            return Ok(ReadResourceResult::new(vec![contents]).into());
        }
        if request.uri != WIDGET_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        let mut meta = MetaObject::default();
        meta.0.insert(
            "openai/widgetCSP".into(),
            json!({"connect_domains": ["https://api.pizzaz.example"], "resource_domains": ["https://cdn.pizzaz.example"]}),
        );
        meta.0.insert("openai/widgetPrefersBorder".into(), json!(true));
        meta.0
            .insert("openai/widgetDescription".into(), json!("A map of pizza places"));
        let contents = ResourceContents::text(WIDGET, WIDGET_URI)
            .with_mime_type(SKYBRIDGE)
            .with_meta(meta);
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let board = match args.iter().position(|a| a == "--skybridge-widget") {
        Some(i) => {
            let path = args.get(i + 1).context("--skybridge-widget needs the page's path")?;
            let page = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
            Some(Arc::new(page))
        }
        None => None,
    };
    let server = AppsSdkServer {
        both: args.iter().any(|a| a == "--both"),
        host_report: args.iter().any(|a| a == "--host-report"),
        board,
        ..Default::default()
    };
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
