//! `porthole-hostile-server`: an MCP App server (stdio) whose view attacks its host, for the
//! MCP Apps sandbox tests.
//!
//!   porthole-hostile-server
//!
//! Tools (each call is written to stderr, which Porthole keeps in the server's log):
//!
//! | tool                | `_meta.ui`                                          | result                         |
//! |---------------------|-----------------------------------------------------|--------------------------------|
//! | `hostile_view`      | `ui://hostile/attacks.html`, visibility model + app | "hostile result", `{"ok": true}` |
//! | `secret_model_only` | visibility `["model"]`: a view must not call it     | "model-only secret"            |
//! | `app_echo`          | visibility `["app"]`: the view's positive control   | its `text` argument            |
//! | `oversized_view`    | `ui://hostile/too-big.html` (6 MiB: refused)        | "oversized view"               |
//! | `wrong_mime_view`   | `ui://hostile/wrong-mime.html` (`text/html`: refused) | "wrong mime view"            |
//! | `missing_view`      | `ui://hostile/missing.html` (read fails)            | "missing view"                 |
//! | `conformance_view`  | `ui://hostile/conformance.html`: Porthole's host-conformance runner (`tests/e2e/host_conformance.rs`) | "conformance result", `{"ok": true}`, `_meta.marker` |
//! | `conformance_view_ask` | the same view, for a call that is asked about (and denied) | the same |
//! | `conformance_probe` | visibility `["app"]`: echoes `text`                 | its `text`                     |
//! | `model_only_probe`  | visibility `["model"]`                              | "model only"                   |
//! | `hostile_widget`    | no `_meta.ui`: `openai/outputTemplate` = `ui://hostile/widget.html` (`text/html+skybridge`, the same attacks page: with `window.openai` it attacks through it) | "hostile widget" |
//! | `storage_view`      | `ui://hostile/storage.html`: counts its starts in `localStorage` and IndexedDB, shows its origin and what it can read of other views' frames | "storage view" |
//!
//! `ui://hostile/attacks.html` (`attacks.html` next to this file) declares a CSP in which every
//! entry but `https://ok.example` and `wss://ws.example` is one a host must drop. Once loaded it
//! runs its attacks, shows them as JSON in `<pre id="results">`, sets `body[data-done]`, and sends
//! them to the host as a `notifications/message` from logger `hostile`.

use std::sync::{Arc, LazyLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, Implementation,
    ListResourcesResult, ListToolsResult, MetaObject, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// The MIME type of an MCP App view resource.
const MCP_APP_MIME: &str = "text/html;profile=mcp-app";

const ATTACKS_URI: &str = "ui://hostile/attacks.html";
const TOO_BIG_URI: &str = "ui://hostile/too-big.html";
const WRONG_MIME_URI: &str = "ui://hostile/wrong-mime.html";
const MISSING_URI: &str = "ui://hostile/missing.html";
const SILENT_URI: &str = "ui://hostile/silent.html";
const STORAGE_URI: &str = "ui://hostile/storage.html";
const CONFORMANCE_URI: &str = "ui://hostile/conformance.html";
const WIDGET_URI: &str = "ui://hostile/widget.html";
/// The MIME type of an OpenAI Apps SDK widget.
const SKYBRIDGE_MIME: &str = "text/html+skybridge";

/// Porthole's host-conformance runner (`conformance.html` next to this file).
const CONFORMANCE_HTML: &str = include_str!("conformance.html");

/// The view that counts its starts in its storage (`storage.html` next to this file).
const STORAGE_HTML: &str = include_str!("storage.html");

/// A view that loads but never speaks: no `ui/initialize`, so the host must give up on it.
const SILENT_HTML: &str = "<!doctype html><html><body><p id=\"silent\">This view never starts.</p></body></html>";

/// The attacking view.
const ATTACKS_HTML: &str = include_str!("attacks.html");

/// Over any sane limit for one view document (Porthole's is 5 MiB).
const TOO_BIG_BYTES: usize = 6 * 1024 * 1024;

/// A well-formed HTML document of exactly [`TOO_BIG_BYTES`] bytes.
static TOO_BIG_HTML: LazyLock<String> = LazyLock::new(|| {
    let head = "<!doctype html><html><head><meta charset=\"utf-8\"><title>too big</title></head>\
                <body><p id=\"too-big\">This view is 6 MiB; a host must refuse it.</p><!--";
    let tail = "--></body></html>";
    let mut html = String::with_capacity(TOO_BIG_BYTES);
    html.push_str(head);
    html.push_str(&"x".repeat(TOO_BIG_BYTES - head.len() - tail.len()));
    html.push_str(tail);
    html
});

const WRONG_MIME_HTML: &str = "<!doctype html><html><body><p id=\"wrong-mime\">served as plain text/html: \
                               a host must refuse it</p><script>window.parent.postMessage({jsonrpc: \"2.0\", \
                               id: 1, method: \"ui/initialize\", params: {protocolVersion: \"2026-01-26\", \
                               appInfo: {name: \"wrong-mime\", version: \"1\"}, appCapabilities: {}}}, \"*\");\
                               </script></body></html>";

/// The CSP `attacks.html` declares: everything but `https://ok.example` and `wss://ws.example`
/// must be dropped (and audited) by the host.
fn attacks_csp() -> Value {
    json!({
        "connectDomains": [
            "https://ok.example",
            "https://ok.example; script-src *",
            "'unsafe-eval'",
            "*",
            "http://insecure.example",
            "https://x.example 'unsafe-inline'",
            "javascript:alert(1)",
            "wss://ws.example"
        ],
        "resourceDomains": ["data:", "https://cdn.example/path/x.js"],
        "frameDomains": ["*"],
        "baseUriDomains": ["mcpview:"]
    })
}

fn meta(value: Value) -> MetaObject {
    serde_json::from_value(value).expect("a JSON object")
}

fn tool(name: &'static str, description: &'static str, schema: Value, ui: Value) -> Tool {
    let mut tool = Tool::new(name, description, Arc::new(schema.as_object().unwrap().clone()));
    tool.meta = Some(meta(json!({ "ui": ui })));
    tool
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

/// A resource this server lists: where it is, what it claims to be, and its `_meta`.
struct View {
    uri: &'static str,
    name: &'static str,
    mime: &'static str,
    meta: Option<Value>,
}

fn views() -> Vec<View> {
    vec![
        View {
            uri: ATTACKS_URI,
            name: "attacks",
            mime: MCP_APP_MIME,
            meta: Some(json!({ "ui": { "csp": attacks_csp() } })),
        },
        View {
            uri: WIDGET_URI,
            name: "widget",
            mime: SKYBRIDGE_MIME,
            meta: None,
        },
        View {
            uri: TOO_BIG_URI,
            name: "too-big",
            mime: MCP_APP_MIME,
            meta: None,
        },
        View {
            uri: WRONG_MIME_URI,
            name: "wrong-mime",
            mime: "text/html",
            meta: None,
        },
        View {
            uri: SILENT_URI,
            name: "silent",
            mime: MCP_APP_MIME,
            meta: None,
        },
        View {
            uri: CONFORMANCE_URI,
            name: "conformance",
            mime: MCP_APP_MIME,
            meta: Some(json!({ "ui": {
                    "csp": { "connectDomains": ["https://ok.example", "https://blocked.example"] },
                    "permissions": { "camera": {}, "clipboardWrite": {} },
                } })),
        },
        View {
            uri: STORAGE_URI,
            name: "storage",
            mime: MCP_APP_MIME,
            meta: None,
        },
        View {
            uri: MISSING_URI,
            name: "missing",
            mime: MCP_APP_MIME,
            meta: None,
        },
    ]
}

#[derive(Clone, Default)]
struct HostileServer;

impl ServerHandler for HostileServer {
    fn get_info(&self) -> ServerConfig {
        let mut extensions = rmcp::model::ExtensionCapabilities::new();
        extensions.insert(
            "io.modelcontextprotocol/ui".into(),
            rmcp::object!({ "mimeTypes": [MCP_APP_MIME] }),
        );
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_extensions_with(extensions)
                .build(),
        )
        .with_server_info(Implementation::new("porthole-hostile-server", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // What the client said it supports (the host-conformance test reads it in the log).
        if let Some(info) = context.peer.peer_info() {
            eprintln!(
                "hostile-server: client capabilities {}",
                serde_json::to_string(&info.capabilities).unwrap_or_default()
            );
        }
        let object = json!({"type": "object"});
        let text_schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        Ok(ListToolsResult::with_all_items(vec![
            tool(
                "hostile_view",
                "Show the hostile view, which attacks its host's sandbox.",
                object.clone(),
                json!({"resourceUri": ATTACKS_URI, "visibility": ["model", "app"]}),
            ),
            {
                // Written the Apps SDK's way: a template, no MCP Apps metadata.
                let mut widget = tool(
                    "hostile_widget",
                    "Show the hostile view as an Apps SDK widget: it attacks through window.openai.",
                    object.clone(),
                    json!({}),
                );
                widget.meta = Some(meta(json!({ "openai/outputTemplate": WIDGET_URI })));
                widget
            },
            tool(
                "secret_model_only",
                "A model-only tool: a view must not be able to call it.",
                object.clone(),
                json!({"visibility": ["model"]}),
            ),
            tool(
                "app_echo",
                "An app-only tool: echoes `text` (the view's proof that the bridge works).",
                text_schema,
                json!({"visibility": ["app"]}),
            ),
            tool(
                "oversized_view",
                "A UI tool whose view is 6 MiB (the host must refuse it).",
                object.clone(),
                json!({"resourceUri": TOO_BIG_URI}),
            ),
            tool(
                "wrong_mime_view",
                "A UI tool whose view is served as text/html without the MCP App profile.",
                object.clone(),
                json!({"resourceUri": WRONG_MIME_URI}),
            ),
            tool(
                "missing_view",
                "A UI tool whose view cannot be read.",
                object.clone(),
                json!({"resourceUri": MISSING_URI}),
            ),
            tool(
                "silent_view",
                "A UI tool whose view never initializes.",
                object.clone(),
                json!({"resourceUri": SILENT_URI}),
            ),
            tool(
                "conformance_view",
                "Porthole's host-conformance runner.",
                json!({"type": "object", "properties": {"case": {"type": "string"}}}),
                json!({"resourceUri": CONFORMANCE_URI, "visibility": ["model", "app"]}),
            ),
            tool(
                "conformance_view_ask",
                "The host-conformance runner again, for a call that is asked about.",
                json!({"type": "object", "properties": {"case": {"type": "string"}}}),
                json!({"resourceUri": CONFORMANCE_URI}),
            ),
            tool(
                "conformance_probe",
                "An app-only echo for the conformance runner.",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
                json!({"visibility": ["app"]}),
            ),
            tool(
                "model_only_probe",
                "A model-only tool the conformance runner must not be able to call.",
                object.clone(),
                json!({"visibility": ["model"]}),
            ),
            tool(
                "storage_view",
                "A UI tool whose view counts its starts in its own storage.",
                object,
                json!({"resourceUri": STORAGE_URI}),
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        eprintln!(
            "hostile-server: tools/call {} {}",
            request.name,
            Value::Object(request.arguments.clone().unwrap_or_default())
        );
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "hostile_view" => {
                let mut result = text("hostile result");
                result.structured_content = Some(json!({"ok": true}));
                result
            }
            "hostile_widget" => text("hostile widget"),
            "secret_model_only" => text("model-only secret"),
            "app_echo" => text(args.get("text").and_then(Value::as_str).unwrap_or("")),
            "oversized_view" => text("oversized view"),
            "wrong_mime_view" => text("wrong mime view"),
            "missing_view" => text("missing view"),
            "silent_view" => text("silent view"),
            "storage_view" => text("storage view"),
            "conformance_view" | "conformance_view_ask" => {
                let mut result = text("conformance result");
                result.structured_content = Some(json!({"ok": true}));
                result.meta = Some(meta(json!({"marker": "conformance-meta"})));
                result
            }
            "conformance_probe" => text(args.get("text").and_then(Value::as_str).unwrap_or("")),
            "model_only_probe" => text("model only"),
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            views()
                .into_iter()
                .map(|v| {
                    let resource = Resource::new(v.uri, v.name).with_mime_type(v.mime);
                    match v.meta {
                        Some(m) => resource.with_meta(meta(m)),
                        None => resource,
                    }
                })
                .collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        eprintln!("hostile-server: resources/read {}", request.uri);
        // The WebSocket attack aims at the port the test listens on (HOSTILE_WS_PORT).
        let attacks = match std::env::var("HOSTILE_WS_PORT") {
            Ok(port) if port.parse::<u16>().is_ok() => {
                ATTACKS_HTML.replace("ws://127.0.0.1:47613/", &format!("ws://127.0.0.1:{port}/"))
            }
            _ => ATTACKS_HTML.to_string(),
        };
        let html: &str = match request.uri.as_str() {
            ATTACKS_URI | WIDGET_URI => attacks.as_str(),
            TOO_BIG_URI => TOO_BIG_HTML.as_str(),
            WRONG_MIME_URI => WRONG_MIME_HTML,
            SILENT_URI => SILENT_HTML,
            STORAGE_URI => STORAGE_HTML,
            CONFORMANCE_URI => CONFORMANCE_HTML,
            MISSING_URI => {
                return Err(ErrorData::resource_not_found(
                    format!("{MISSING_URI} is gone (on purpose)"),
                    None,
                ));
            }
            other => return Err(ErrorData::resource_not_found(format!("no resource {other}"), None)),
        };
        let view = views().into_iter().find(|v| v.uri == request.uri).expect("listed");
        let mut contents = ResourceContents::text(html, view.uri).with_mime_type(view.mime);
        if let Some(m) = view.meta {
            contents = contents.with_meta(meta(m));
        }
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let running = HostileServer.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
