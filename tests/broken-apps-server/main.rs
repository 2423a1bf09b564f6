//! `porthole-broken-apps-server`: an MCP Apps server (stdio) that gets everything wrong that
//! `porthole check` looks for, one tool or view per mistake, for the tests of `porthole check`
//! (each rule must be seen to fire). `good_view` is the one thing it gets right: a check of it
//! alone finds nothing.
//!
//! | tool | mistake (rule) |
//! |---|---|
//! | `bad name!` | a name providers refuse (`tool-name`) |
//! | `string_schema` | `inputSchema` of type string (`input-schema`) |
//! | `legacy_key` | the flat `ui/resourceUri` key (`ui-legacy-key`) |
//! | `https_view` | `resourceUri` is https:// (`ui-resource-uri`) |
//! | `odd_visibility` | visibility `"model"`, not an array (`ui-visibility`) |
//! | `csp_on_tool` | `csp` on the tool's `_meta.ui` (`ui-unknown-key`) |
//! | `sdk_template` | `openai/outputTemplate` that is no `ui://` URI (`openai-template`) |
//! | `two_views` | `openai/outputTemplate` and `_meta.ui.resourceUri` disagree (`openai-mismatch`) |
//! | `missing_view` | its view cannot be read (`resource-read`) |
//! | `double_view` | two HTML content items (`resource-contents`) |
//! | `plain_html_view` | `text/html` (`resource-mime`, error); `legacy_view`: `text/html+mcp` (warning) |
//! | `huge_view` | 6 MiB of HTML (`resource-size`) |
//! | `blob_view` | a blob that is not base64 (`resource-encoding`) |
//! | `csp_view` | an `http://` connect origin (`csp-entry`) |
//! | `permission_view` | asks for `bluetooth` (`permissions-unknown`) |
//! | `border_view` | `prefersBorder: "yes"` (`resource-meta`) |
//! | `unlisted_view` | its view is not in `resources/list` (`resource-not-listed`) |
//! | `apps_only` | offered only when the client advertises MCP Apps (`capability-gated`) |
//!
//! `--only-good`: just `good_view`. `--only-legacy`: just `good_view`, its view served with the
//! legacy MIME type (one warning, no error).
//!
//! `--only-live`: `good_view` and views that pass every static rule but misbehave once loaded,
//! for the live check:
//!
//! | tool | what its view does (rule) |
//! |---|---|
//! | `silent_view` | never sends `ui/initialize` (`live-initialize`, error) |
//! | `noisy_view` | logs a line and an error, and throws one it does not catch (`live-console-error`; the plain log line is no finding) |
//! | `csp_breaking_view` | loads an image from an origin its CSP does not declare (`live-csp-violation`) |
//! | `asking_view` | asks for a method hosts do not offer (`live-unsupported`) |
//! | `failing_call` | its tool answers `isError` to the sample input (`live-call`) |
//!
//! `good_view`'s view is a real MCP App: it completes the handshake and shows the result's text.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, Implementation,
    ListResourcesResult, ListToolsResult, MetaObject, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

const MIME: &str = "text/html;profile=mcp-app";
const HTML: &str = "<!doctype html><html><body><p>a view</p></body></html>";

/// A view that speaks the bridge: `ui/initialize`, then `ui/notifications/initialized`; it shows
/// the text of the result it gets. `EXTRA` (a script) runs once it is initialized.
fn app_html(extra: &str) -> String {
    format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><style>body{{font:16px sans-serif;margin:12px}}</style></head>
<body><h1>Broken apps</h1><p id="out">waiting</p><script>
let next = 1; const pending = {{}};
function request(method, params) {{
  const id = next++;
  window.parent.postMessage({{jsonrpc: "2.0", id, method, params}}, "*");
  return new Promise((resolve) => (pending[id] = resolve));
}}
window.addEventListener("message", (e) => {{
  const m = e.data;
  if (m && m.id !== undefined && pending[m.id]) {{ pending[m.id](m); delete pending[m.id]; }}
  if (m && m.method === "ui/notifications/tool-result") {{
    const text = (m.params.content || []).map((c) => c.text || "").join(" ");
    document.getElementById("out").textContent = text;
  }}
}});
request("ui/initialize", {{protocolVersion: "2026-01-26", appInfo: {{name: "broken", version: "1"}}, appCapabilities: {{}}}})
  .then(() => {{
    window.parent.postMessage({{jsonrpc: "2.0", method: "ui/notifications/initialized", params: {{}}}}, "*");
    {extra}
  }});
</script></body></html>"#
    )
}

#[derive(Clone)]
struct BrokenServer {
    /// Only `good_view`.
    only_good: bool,
    /// Only `good_view` and the views the live check finds fault with.
    only_live: bool,
    /// Its view as `text/html+mcp`.
    legacy: bool,
}

impl BrokenServer {
    fn good_mime(&self) -> &'static str {
        if self.legacy { "text/html+mcp" } else { MIME }
    }
}

/// The views the live check finds fault with (`--only-live`), each served by `<name>_view`.
const LIVE: [&str; 4] = ["silent", "noisy", "csp_breaking", "asking"];

fn tool(name: &str, schema: Value, meta: Value) -> Tool {
    let mut tool = Tool::new(
        name.to_string(),
        "A tool.",
        Arc::new(schema.as_object().cloned().unwrap_or_default()),
    );
    if !meta.is_null() {
        tool.meta = Some(serde_json::from_value::<MetaObject>(meta).unwrap());
    }
    tool
}

fn object() -> Value {
    json!({"type": "object"})
}

fn view(name: &str) -> Value {
    json!({"ui": {"resourceUri": format!("ui://broken/{name}.html")}})
}

/// The listed resources: (name, MIME type); `unlisted` and `missing` are not listed.
fn listed() -> Vec<(&'static str, &'static str)> {
    vec![
        ("good", MIME),
        ("double", MIME),
        ("plain", "text/html"),
        ("legacy", "text/html+mcp"),
        ("huge", MIME),
        ("blob", MIME),
        ("csp", MIME),
        ("permission", MIME),
        ("border", MIME),
        ("mismatch-a", MIME),
        ("mismatch-b", MIME),
        ("legacy-key", MIME),
        ("csp-on-tool", MIME),
        ("odd-visibility", MIME),
        ("apps-only", MIME),
    ]
}

impl ServerHandler for BrokenServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("porthole-broken-apps-server", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let good = tool(
            "good_view",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            json!({"ui": {"resourceUri": "ui://broken/good.html", "visibility": ["model", "app"]}}),
        );
        if self.only_good {
            return Ok(ListToolsResult::with_all_items(vec![good]));
        }
        if self.only_live {
            let mut tools = vec![good];
            for name in LIVE {
                tools.push(tool(&format!("{name}_view"), object(), view(name)));
            }
            tools.push(tool(
                "failing_call",
                json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
                view("good"),
            ));
            return Ok(ListToolsResult::with_all_items(tools));
        }
        let advertised = context.peer.peer_info().is_some_and(|info| {
            serde_json::to_value(&info.capabilities)
                .ok()
                .and_then(|c| c.pointer("/extensions/io.modelcontextprotocol~1ui").cloned())
                .is_some()
        });
        let mut tools = vec![
            good,
            tool("bad name!", object(), Value::Null),
            tool("string_schema", json!({"type": "string"}), Value::Null),
            tool(
                "legacy_key",
                object(),
                json!({"ui/resourceUri": "ui://broken/legacy-key.html"}),
            ),
            tool(
                "https_view",
                object(),
                json!({"ui": {"resourceUri": "https://broken.example/view.html"}}),
            ),
            tool(
                "odd_visibility",
                object(),
                json!({"ui": {"resourceUri": "ui://broken/odd-visibility.html", "visibility": "model"}}),
            ),
            tool(
                "csp_on_tool",
                object(),
                json!({"ui": {"resourceUri": "ui://broken/csp-on-tool.html", "csp": {"connectDomains": ["https://a.example"]}}}),
            ),
            tool(
                "sdk_template",
                object(),
                json!({"openai/outputTemplate": "widget.html"}),
            ),
            tool(
                "two_views",
                object(),
                json!({"ui": {"resourceUri": "ui://broken/mismatch-a.html"}, "openai/outputTemplate": "ui://broken/mismatch-b.html"}),
            ),
            tool("missing_view", object(), view("missing")),
            tool("double_view", object(), view("double")),
            tool("plain_html_view", object(), view("plain")),
            tool("legacy_view", object(), view("legacy")),
            tool("huge_view", object(), view("huge")),
            tool("blob_view", object(), view("blob")),
            tool("csp_view", object(), view("csp")),
            tool("permission_view", object(), view("permission")),
            tool("border_view", object(), view("border")),
            tool("unlisted_view", object(), view("unlisted")),
        ];
        if advertised {
            tools.push(tool("apps_only", object(), view("apps-only")));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == "failing_call" {
            return Ok(CallToolResult::error(vec![ContentBlock::text("no such city: example")]).into());
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("{} ran", request.name))]).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let live = LIVE.iter().map(|name| (*name, MIME));
        let resources = listed()
            .into_iter()
            .chain(live)
            .filter(|(name, _)| {
                if self.only_live {
                    *name == "good" || LIVE.contains(name)
                } else {
                    (!self.only_good || *name == "good") && !LIVE.contains(name)
                }
            })
            .map(|(name, mime)| {
                let mime = if name == "good" { self.good_mime() } else { mime };
                Resource::new(format!("ui://broken/{name}.html"), name).with_mime_type(mime)
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let name = uri
            .strip_prefix("ui://broken/")
            .and_then(|n| n.strip_suffix(".html"))
            .unwrap_or("");
        let text = |mime: &str, html: &str, meta: Value| {
            let mut item = ResourceContents::text(html.to_string(), uri.to_string()).with_mime_type(mime.to_string());
            if !meta.is_null() {
                item = item.with_meta(serde_json::from_value::<MetaObject>(meta).unwrap());
            }
            item
        };
        let contents = match name {
            "missing" => {
                return Err(ErrorData::resource_not_found(
                    format!("{uri} is gone (on purpose)"),
                    None,
                ));
            }
            "double" => vec![
                text(MIME, HTML, Value::Null),
                ResourceContents::text(HTML.to_string(), "ui://broken/double-2.html".to_string())
                    .with_mime_type(MIME.to_string()),
            ],
            "plain" => vec![text("text/html", HTML, Value::Null)],
            "legacy" => vec![text("text/html+mcp", HTML, Value::Null)],
            "huge" => vec![text(MIME, &"x".repeat(6 * 1024 * 1024), Value::Null)],
            "blob" => vec![
                ResourceContents::blob("%%% not base64 %%%".to_string(), uri.to_string())
                    .with_mime_type(MIME.to_string()),
            ],
            "csp" => vec![text(
                MIME,
                HTML,
                json!({"ui": {"csp": {"connectDomains": ["http://api.broken.example", "https://ok.broken.example"]}}}),
            )],
            "permission" => vec![text(MIME, HTML, json!({"ui": {"permissions": {"bluetooth": {}}}}))],
            "border" => vec![text(MIME, HTML, json!({"ui": {"prefersBorder": "yes"}}))],
            "good" => vec![text(self.good_mime(), &app_html(""), Value::Null)],
            "silent" => vec![text(MIME, HTML, Value::Null)],
            "noisy" => vec![text(
                MIME,
                &app_html(
                    r#"console.log("drawing 3 bars"); console.error("the chart data is missing"); setTimeout(() => { throw new Error("cannot read x of undefined"); }, 0);"#,
                ),
                Value::Null,
            )],
            "csp_breaking" => vec![text(
                MIME,
                &app_html(
                    r#"const img = new Image(); img.src = "https://images.undeclared.example/logo.png"; document.body.append(img);"#,
                ),
                Value::Null,
            )],
            "asking" => vec![text(MIME, &app_html(r#"request("ui/unheard-of", {});"#), Value::Null)],
            _ => vec![text(MIME, HTML, Value::Null)],
        };
        Ok(ReadResourceResult::new(contents).into())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let legacy = std::env::args().any(|a| a == "--only-legacy");
    let server = BrokenServer {
        only_good: legacy || std::env::args().any(|a| a == "--only-good"),
        only_live: std::env::args().any(|a| a == "--only-live"),
        legacy,
    };
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
