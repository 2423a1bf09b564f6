//! `porthole-bench-view-server`: an MCP App server (stdio) for the views benchmark
//! (`tests/benches/views.rs`).
//!
//!   porthole-bench-view-server
//!
//! Two UI tools, `stamp {delay_ms?}` and `stamp_sdk {delay_ms?}`, the same but for their views:
//! `ui://bench/stamp.html` (`stamp.html` next to this file: a small plain-JS MCP Apps client) and
//! `ui://bench/stamp-sdk.html` (the demo folder view, built with React and the official ext-apps
//! SDK), each with `stamps.js` recording when things reach it (`porthole_e2e::bench::stamp_view`
//! and `sdk_stamp_view`). Times are wall clock milliseconds since the Unix epoch
//! with a fractional part, the clock the view reads as `performance.timeOrigin + performance.now()`:
//!
//! - `resources/read` of a view stamps the HTML with when it was served (`readAt`);
//! - the tool waits `delay_ms` (default 0), then returns the text `"<ms>"` stamped just before
//!   returning, and `structuredContent` `{"receivedAt": ms, "returnedAt": ms}`.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

const STAMP_URI: &str = "ui://bench/stamp.html";
const SDK_URI: &str = "ui://bench/stamp-sdk.html";

/// Wall clock milliseconds since the Unix epoch, with a fractional part.
fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

fn meta(value: Value) -> MetaObject {
    serde_json::from_value(value).expect("a JSON object")
}

#[derive(Clone)]
struct BenchViewServer {
    /// The plain-JS view (`__READ_AT__` still in it: replaced with when it was served).
    stamp_html: Arc<str>,
    /// The SDK-built view (the same), or why it could not be made.
    sdk_html: Arc<Result<String, String>>,
}

impl ServerHandler for BenchViewServer {
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
        .with_server_info(Implementation::new("porthole-bench-view-server", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = Arc::new(
            json!({"type": "object", "properties": {"delay_ms": {"type": "number"}}})
                .as_object()
                .unwrap()
                .clone(),
        );
        let tool = |name: &'static str, uri: &str, description: &'static str| {
            let mut tool = Tool::new(name, description, schema.clone());
            tool.meta = Some(meta(json!({ "ui": { "resourceUri": uri } })));
            tool
        };
        Ok(ListToolsResult::with_all_items(vec![
            tool(
                "stamp",
                STAMP_URI,
                "Return the server's wall clock, after `delay_ms`, in a view that records when it got it.",
            ),
            tool(
                "stamp_sdk",
                SDK_URI,
                "The same as `stamp`, in an SDK-built view (about 600 KB) that records when it got it.",
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let received_at = now_ms();
        if !matches!(request.name.as_ref(), "stamp" | "stamp_sdk") {
            return Err(ErrorData::invalid_params(format!("no tool {}", request.name), None));
        }
        let delay = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("delay_ms"))
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        if delay > 0.0 {
            tokio::time::sleep(Duration::from_secs_f64(delay / 1000.0)).await;
        }
        let returned_at = now_ms();
        let mut result = CallToolResult::success(vec![ContentBlock::text(format!("{returned_at:.3}"))]);
        result.structured_content = Some(json!({ "receivedAt": received_at, "returnedAt": returned_at }));
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(STAMP_URI, "stamp").with_mime_type(MCP_APP_MIME),
            Resource::new(SDK_URI, "stamp-sdk").with_mime_type(MCP_APP_MIME),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let template = match request.uri.as_str() {
            STAMP_URI => &*self.stamp_html,
            SDK_URI => self
                .sdk_html
                .as_deref()
                .map_err(|e| ErrorData::internal_error(e.clone(), None))?,
            _ => {
                return Err(ErrorData::resource_not_found(
                    format!("no resource {}", request.uri),
                    None,
                ));
            }
        };
        let html = template.replace("__READ_AT__", &format!("{:.3}", now_ms()));
        let contents = ResourceContents::text(html, request.uri.as_str()).with_mime_type(MCP_APP_MIME);
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let sdk_html = porthole_e2e::bench::sdk_stamp_view().map_err(|e| format!("{e:#}"));
    let server = BenchViewServer {
        stamp_html: porthole_e2e::bench::stamp_view()?.into(),
        sdk_html: Arc::new(sdk_html),
    };
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
