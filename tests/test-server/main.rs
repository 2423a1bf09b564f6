//! `porthole-test-server`: a small MCP server whose misbehaviour is chosen on the command line,
//! for the MCP connection tests. Real rmcp, real stdio or Streamable HTTP.
//!
//!   porthole-test-server [--http | --legacy-sse] [--garbage] [--protocol VERSION] [--delay-ms N]
//!                        [--elicit-on-start] [--port N] [--tls CERT.pem KEY.pem]
//!
//! - `--http`: serve Streamable HTTP on 127.0.0.1 (a free port), printing `listening <url>`.
//! - `--garbage`: answer `initialize` with bytes that are not JSON.
//! - `--banner`: print a line of plain text on stdout before serving (as careless servers do).
//!
//! Tools: `echo {text}`, `slow {seconds}` (progress every 100 ms, then a result; notices
//! cancellation), `crash` (the process exits mid-call), `hang` (never answers), `add_tool`
//! (adds a tool `extra` and sends `notifications/tools/list_changed`), `headers` (the HTTP headers
//! the server saw, over HTTP), `ask` (an elicitation request; returns the answer), `log` (a log notification),
//! `forecast {city}` (a UI tool, linked to its view only for clients with MCP Apps: text with the
//! full JSON plus `structuredContent`: the kagent case), `big {bytes, delay_ms}` (a text result that
//! long; with `delay_ms`, a progress notification "begun", then the answer that much later),
//! `length {text}` (how many bytes `text` has), `burst {count}` (that many progress notifications
//! back to back, "step N", then a result), `edit_note {topic}` (edits a note: see below), and the broken ones: `abort` (the process aborts
//! mid-call: SIGABRT), `exit_soon` (answers, then exits with status 4), `garbage` (writes a line
//! that is not JSON mid-call, then never answers), `wrong_id` (answers with an id no request has,
//! then never answers); over HTTP these two break the HTTP response instead
//! ([`misbehave_over_http`]).
//!
//! Resources: `test://notes/readme` and the template `test://notes/{topic}` (topics alpha,
//! apricot, banana, suggested by `completion/complete`); `resources/subscribe` is accepted, and
//! `edit_note` tells subscribers the note changed.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult, CompletionInfo,
    ContentBlock, ElicitRequestParams, ErrorData, Implementation, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

#[derive(Clone, Default)]
struct TestServer {
    extra: Arc<AtomicBool>,
    /// How many times `edit_note` ran.
    note_edits: Arc<std::sync::atomic::AtomicU64>,
    /// `--protocol V`: the only protocol version this server speaks.
    only_version: Option<ProtocolVersion>,
}

fn tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    Tool::new(name, description, Arc::new(schema.as_object().unwrap().clone()))
}

impl ServerHandler for TestServer {
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        match &self.only_version {
            Some(v) => std::borrow::Cow::Owned(vec![v.clone()]),
            None => std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
        }
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_completions()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("porthole-test-server", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let object = json!({"type": "object"});
        let mut tools = vec![
            tool(
                "echo",
                "Echo the text back.",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
            tool(
                "slow",
                "Take a while.",
                json!({"type": "object", "properties": {"seconds": {"type": "number"}}}),
            ),
            tool("crash", "Exit mid-call.", object.clone()),
            tool("abort", "Abort mid-call (SIGABRT).", object.clone()),
            tool(
                "exit_soon",
                "Answer, then exit with status 4 while idle.",
                object.clone(),
            ),
            tool(
                "garbage",
                "Write a line that is not JSON, then never answer.",
                object.clone(),
            ),
            tool(
                "wrong_id",
                "Answer with the wrong id, then never answer.",
                object.clone(),
            ),
            tool(
                "big",
                "A text result of the given number of bytes.",
                json!({"type": "object", "properties": {"bytes": {"type": "integer"}, "delay_ms": {"type": "integer"}}}),
            ),
            tool(
                "length",
                "The number of bytes of the given text.",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
            tool(
                "burst",
                "Send the given number of progress notifications back to back, then answer.",
                json!({"type": "object", "properties": {"count": {"type": "integer"}}}),
            ),
            tool("hang", "Never answer.", object.clone()),
            tool("add_tool", "Add the tool `extra`.", object.clone()),
            tool(
                "edit_note",
                "Edit the note about a topic (its subscribers are told).",
                json!({"type": "object", "properties": {"topic": {"type": "string"}}}),
            ),
            tool("headers", "The HTTP request headers seen.", object.clone()),
            tool(
                "ask",
                "Ask the user for a name and an age (elicitation).",
                object.clone(),
            ),
            tool(
                "log",
                "Send a log notification with the given text.",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
        ];
        // The kagent reproduction: a UI tool whose definition links its view only for clients
        // that advertise the MCP Apps extension.
        let mut forecast = tool(
            "forecast",
            "The weather forecast for a city.",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        );
        if client_has_mcp_apps(&context) {
            let meta = json!({"ui": {"resourceUri": "ui://test/forecast.html"}});
            forecast.meta = Some(serde_json::from_value(meta).unwrap());
        }
        tools.push(forecast);
        if self.extra.load(Ordering::SeqCst) {
            tools.push(tool("extra", "Added at run time.", object));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await.map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new("test://notes/readme", "readme")
                .with_mime_type("text/plain")
                .with_description("What the notes are."),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(NOTE_TEMPLATE, "note").with_description("A note about a topic."),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let edits = self.note_edits.load(Ordering::SeqCst);
        let text = match request.uri.strip_prefix("test://notes/") {
            Some("readme") => format!("Notes about topics: test://notes/{{topic}} ({edits} edits so far)."),
            Some(topic) if NOTE_TOPICS.contains(&topic) => format!("A note about {topic} (edited {edits} times)."),
            _ => {
                return Err(ErrorData::resource_not_found(
                    format!("no resource {}", request.uri),
                    None,
                ));
            }
        };
        let contents = ResourceContents::text(text, request.uri).with_mime_type("text/plain");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let values = match request.r#ref.as_resource_uri() {
            Some(NOTE_TEMPLATE) if request.argument.name == "topic" => NOTE_TOPICS
                .iter()
                .filter(|t| t.starts_with(&request.argument.value))
                .map(|t| t.to_string())
                .collect(),
            _ => Vec::new(),
        };
        let info = CompletionInfo::new(values).map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CompleteResult::new(info))
    }
}

/// The template of the notes (`test://notes/{topic}`), completed from [`NOTE_TOPICS`].
const NOTE_TEMPLATE: &str = "test://notes/{topic}";
const NOTE_TOPICS: [&str; 3] = ["alpha", "apricot", "banana"];

impl TestServer {
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = request.arguments.clone().unwrap_or_default();
        match request.name.as_ref() {
            "echo" => Ok(CallToolResult::success(vec![ContentBlock::text(
                args.get("text").and_then(Value::as_str).unwrap_or("").to_string(),
            )])),
            "slow" => {
                let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(1.0);
                let steps = (seconds * 10.0).ceil() as u32;
                let token = context.meta.get_progress_token();
                for step in 1..=steps {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                        _ = context.ct.cancelled() => {
                            eprintln!("slow: cancelled at step {step}");
                            return Err(ErrorData::internal_error("cancelled", None));
                        }
                    }
                    if let Some(token) = &token {
                        let progress = context
                            .peer
                            .notify_progress(
                                ProgressNotificationParam::new(token.clone(), step as f64).with_total(steps as f64),
                            )
                            .await;
                        // The steps go on regardless; a test that wanted the progress sees it missing.
                        if let Err(e) = progress {
                            eprintln!("slow: progress at step {step} not sent: {e}");
                        }
                    }
                }
                Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                    "done after {steps} steps"
                ))]))
            }
            "crash" => {
                eprintln!("crash: exiting mid-call");
                std::process::exit(3);
            }
            "exit_soon" => {
                tokio::spawn(async {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    eprintln!("exit_soon: exiting while idle");
                    std::process::exit(4);
                });
                Ok(CallToolResult::success(vec![ContentBlock::text("exiting soon")]))
            }
            "abort" => {
                eprintln!("abort: aborting mid-call");
                std::process::abort();
            }
            "garbage" | "wrong_id" => {
                let line: &[u8] = if request.name == "garbage" {
                    b"{\"jsonrpc\": \"2.0\", \"result\": this is not json\n"
                } else {
                    b"{\"jsonrpc\": \"2.0\", \"id\": 987654321, \"result\": {\"content\": []}}\n"
                };
                // Nothing else is written while a call runs, so the line goes out whole.
                let written = {
                    let mut out = std::io::stdout().lock();
                    out.write_all(line).and_then(|()| out.flush())
                };
                written.map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                context.ct.cancelled().await;
                Err(ErrorData::internal_error("cancelled", None))
            }
            "big" => {
                let bytes = args.get("bytes").and_then(Value::as_u64).unwrap_or(0) as usize;
                // `delay_ms`: it says it has begun (a progress notification), then answers so
                // much later, whatever happens meanwhile (the client closing, say).
                if let Some(ms) = args.get("delay_ms").and_then(Value::as_u64) {
                    // Not awaited here: rmcp's notification resolves only once its server loop
                    // has noted it written, which a closing stdin may pre-empt; the answer would
                    // then never come.
                    if let Some(token) = context.meta.get_progress_token() {
                        let begun = ProgressNotificationParam::new(token, 0.0).with_message("begun");
                        let peer = context.peer.clone();
                        tokio::spawn(async move { peer.notify_progress(begun).await });
                    }
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                }
                Ok(CallToolResult::success(vec![ContentBlock::text("x".repeat(bytes))]))
            }
            "length" => {
                let text = args.get("text").and_then(Value::as_str).unwrap_or("");
                Ok(CallToolResult::success(vec![ContentBlock::text(
                    text.len().to_string(),
                )]))
            }
            "burst" => {
                let count = args.get("count").and_then(Value::as_u64).unwrap_or(100);
                if let Some(token) = context.meta.get_progress_token() {
                    for step in 1..=count {
                        let p = ProgressNotificationParam::new(token.clone(), step as f64)
                            .with_total(count as f64)
                            .with_message(format!("step {step}"));
                        if let Err(e) = context.peer.notify_progress(p).await {
                            eprintln!("burst: progress at step {step} not sent: {e}");
                        }
                    }
                }
                Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                    "sent {count}"
                ))]))
            }
            "hang" => {
                context.ct.cancelled().await;
                eprintln!("hang: cancelled");
                Err(ErrorData::internal_error("cancelled", None))
            }
            "edit_note" => {
                // Edits the note about `topic`: subscribers hear `notifications/resources/updated`.
                let topic = args.get("topic").and_then(Value::as_str).unwrap_or("alpha").to_string();
                self.note_edits.fetch_add(1, Ordering::SeqCst);
                let uri = format!("test://notes/{topic}");
                let update = rmcp::model::ResourceUpdatedNotificationParam::new(uri.clone());
                if let Err(e) = context.peer.notify_resource_updated(update).await {
                    eprintln!("edit_note: resources/updated not sent: {e}");
                }
                Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                    "edited {uri}"
                ))]))
            }
            "add_tool" => {
                self.extra.store(true, Ordering::SeqCst);
                if let Err(e) = context.peer.notify_tool_list_changed().await {
                    eprintln!("add_tool: tools/list_changed not sent: {e}");
                }
                Ok(CallToolResult::success(vec![ContentBlock::text("added extra")]))
            }
            "headers" => {
                let headers = context
                    .extensions
                    .get::<http::request::Parts>()
                    .map(|parts| {
                        parts
                            .headers
                            .iter()
                            .map(|(k, v)| (k.to_string(), json!(v.to_str().unwrap_or(""))))
                            .collect::<serde_json::Map<_, _>>()
                    })
                    .unwrap_or_default();
                let mut result = CallToolResult::success(vec![ContentBlock::text("headers")]);
                result.structured_content = Some(Value::Object(headers));
                Ok(result)
            }
            "log" => {
                let text = args.get("text").and_then(Value::as_str).unwrap_or("").to_string();
                #[allow(deprecated)]
                let message =
                    rmcp::model::LoggingMessageNotificationParam::new(rmcp::model::LoggingLevel::Warning, json!(text))
                        .with_logger("test-server");
                #[allow(deprecated)]
                let sent = context.peer.notify_logging_message(message).await;
                sent.map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                Ok(CallToolResult::success(vec![ContentBlock::text("logged")]))
            }
            "ask" => {
                let params: ElicitRequestParams = serde_json::from_value(json!({
                    "message": "Who are you?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "default": "Ada"},
                            "age": {"type": "integer", "default": 36}
                        }
                    }
                }))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                let answer = context
                    .peer
                    .create_elicitation(params)
                    .await
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                let mut result = CallToolResult::success(vec![ContentBlock::text(format!("{:?}", answer.action))]);
                result.structured_content = Some(serde_json::to_value(&answer).unwrap_or_default());
                Ok(result)
            }
            "forecast" => {
                let city = args.get("city").and_then(Value::as_str).unwrap_or("Oslo");
                let payload = forecast_payload(city);
                let mut result = CallToolResult::success(vec![ContentBlock::text(payload.to_string())]);
                result.structured_content = Some(payload);
                let meta =
                    json!({"ui": {"resourceUri": "ui://test/forecast.html"}, "generatedBy": "porthole-test-server"});
                result.meta = Some(serde_json::from_value(meta).unwrap());
                Ok(result)
            }
            "extra" if self.extra.load(Ordering::SeqCst) => {
                Ok(CallToolResult::success(vec![ContentBlock::text("extra!")]))
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

fn client_has_mcp_apps(context: &RequestContext<RoleServer>) -> bool {
    context.peer.peer_info().is_some_and(|info| {
        info.capabilities
            .extensions
            .as_ref()
            .is_some_and(|e| e.contains_key("io.modelcontextprotocol/ui"))
    })
}

/// Every field here must reach the model (the kagent case).
fn forecast_payload(city: &str) -> Value {
    json!({
        "city": city,
        "units": "celsius",
        "days": [
            {"day": "Mon", "high": 3, "low": -2, "sky": "snow showers"},
            {"day": "Tue", "high": 5, "low": 0, "sky": "overcast"},
            {"day": "Wed", "high": 7, "low": 1, "sky": "clear"}
        ],
        "advisory": "Ice on the roads before 10:00"
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--garbage") {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
        let mut out = std::io::stdout();
        out.write_all(b"{\"jsonrpc\": \"2.0\", \"id\": this is not json\n")?;
        out.flush()?;
        tokio::time::sleep(Duration::from_secs(30)).await;
        return Ok(());
    }
    if args.iter().any(|a| a == "--legacy-sse") {
        // Only the opening of a 2024-11-05 HTTP+SSE server: GET /sse announces the POST endpoint.
        let router = axum::Router::new().route(
            "/sse",
            axum::routing::get(|| async {
                (
                    [("content-type", "text/event-stream")],
                    "event: endpoint\ndata: /messages?sessionId=1\n\n",
                )
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        println!("listening http://{}/sse", listener.local_addr()?);
        std::io::stdout().flush()?;
        axum::serve(listener, router).await?;
        return Ok(());
    }
    if args.iter().any(|a| a == "--http") {
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        };
        let service = StreamableHttpService::new(
            || Ok(TestServer::default()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        let router = axum::Router::new()
            .nest_service("/mcp", service)
            .layer(axum::middleware::from_fn(misbehave_over_http));
        // `--port N` (default: any free port), so a test can restart the server where it was.
        let port: u16 = match args.iter().position(|a| a == "--port").and_then(|i| args.get(i + 1)) {
            Some(p) => p.parse()?,
            None => 0,
        };
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        // `--tls CERT.pem KEY.pem`: HTTPS with that certificate (for `localhost`).
        if let Some(i) = args.iter().position(|a| a == "--tls") {
            let (cert, key) = (std::fs::read(&args[i + 1])?, std::fs::read(&args[i + 2])?);
            let identity = tokio_native_tls::native_tls::Identity::from_pkcs8(&cert, &key)?;
            let acceptor =
                tokio_native_tls::TlsAcceptor::from(tokio_native_tls::native_tls::TlsAcceptor::new(identity)?);
            println!("listening https://localhost:{}/mcp", listener.local_addr()?.port());
            std::io::stdout().flush()?;
            loop {
                let (tcp, _) = listener.accept().await?;
                let _ = tcp.set_nodelay(true);
                let (acceptor, router) = (acceptor.clone(), router.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    let service = hyper_util::service::TowerToHyperService::new(router);
                    // A client that hangs up ends its connection with an error; nothing to do.
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await
                        .ok();
                });
            }
        }
        println!("listening http://{}/mcp", listener.local_addr()?);
        std::io::stdout().flush()?;
        // Each answer at once, as servers built for use send it (see porthole_mcp::test_support).
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, router).await?;
        return Ok(());
    }
    let only_version = args
        .iter()
        .position(|a| a == "--protocol")
        .and_then(|i| args.get(i + 1))
        .map(|v| serde_json::from_value::<ProtocolVersion>(json!(v)))
        .transpose()?;
    // `--delay-ms N`: a slow starter, for the parallel-connect benchmark.
    if let Some(ms) = args
        .iter()
        .position(|a| a == "--delay-ms")
        .and_then(|i| args.get(i + 1))
    {
        tokio::time::sleep(Duration::from_millis(ms.parse()?)).await;
    }
    if args.iter().any(|a| a == "--banner") {
        println!("porthole-test-server starting (this line is not JSON-RPC)");
    }
    let server = TestServer {
        only_version,
        ..Default::default()
    };
    let running = server.serve(rmcp::transport::stdio()).await?;
    // `--elicit-on-start`: ask the user something as soon as the session is up (as 2025-era
    // servers may), and write the answer to stderr.
    if args.iter().any(|a| a == "--elicit-on-start") {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "message": "Which name should the test server use?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "title": "Name", "default": "Ada"},
                    "age": {"type": "integer", "title": "Age"},
                    "color": {"type": "string", "enum": ["red", "green"], "default": "green"},
                    "subscribe": {"type": "boolean", "title": "Subscribe", "default": false}
                },
                "required": ["name"]
            }
        }))?;
        let answer = running.peer().create_elicitation(params).await;
        match answer {
            Ok(answer) => eprintln!("elicitation answer: {}", serde_json::to_string(&answer)?),
            Err(e) => eprintln!("elicitation failed: {e}"),
        }
    }
    running.waiting().await?;
    Ok(())
}

/// Over HTTP, `garbage` and `wrong_id` break the protocol in the HTTP response itself (rmcp's
/// server cannot be made to): a `tools/call` of `garbage` is answered with a JSON body that is
/// not JSON, of `wrong_id` with a response whose id no request has; with `{"stream": true}`,
/// the same goes out as an event of an SSE response that is then kept open. Everything else
/// goes on to the MCP service.
async fn misbehave_over_http(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if request.method() != http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return http::StatusCode::BAD_REQUEST.into_response();
    };
    let message: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let tool = (message["method"] == "tools/call")
        .then(|| message["params"]["name"].as_str())
        .flatten();
    let payload = match tool {
        Some("garbage") => "{\"jsonrpc\": \"2.0\", \"result\": this is not json",
        Some("wrong_id") => "{\"jsonrpc\": \"2.0\", \"id\": 987654321, \"result\": {\"content\": []}}",
        _ => {
            return next
                .run(axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes)))
                .await;
        }
    };
    if message["params"]["arguments"]["stream"] != true {
        return ([("content-type", "application/json")], payload).into_response();
    }
    let event = format!("event: message\ndata: {payload}\n\n");
    use futures::StreamExt;
    let stream = futures::stream::once(async move { Ok::<_, std::convert::Infallible>(event) })
        .chain(futures::stream::pending());
    (
        [("content-type", "text/event-stream")],
        axum::body::Body::from_stream(stream),
    )
        .into_response()
}
