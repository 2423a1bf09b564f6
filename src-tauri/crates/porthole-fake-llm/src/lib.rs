//! A scripted fake LLM server for Porthole's tests.
//!
//! [`FakeLlm`] listens on `127.0.0.1` and speaks the real streaming wire formats of
//! the OpenAI Chat Completions API (`POST {base}/chat/completions`) and the Anthropic
//! Messages API (`POST {base}/messages`), plus `GET {base}/models` for both. The base URL
//! is `http://127.0.0.1:PORT/v1`. Every completions/messages request consumes the next
//! [`Reply`] of the [`Script`], whichever API it speaks.
//!
//! Routes are matched on the path's suffix, so `/v1/messages` and `/v1/v1/messages`
//! (what the official Anthropic SDKs send when given a base URL that already ends in `/v1`)
//! both work. `GET …/models` answers in Anthropic's format when the request carries an
//! `anthropic-version` or `x-api-key` header, otherwise in OpenAI's.
//!
//! Requests that are rejected before a reply is chosen (wrong API key, body that is not
//! JSON, `stream` not `true`, unknown model) do not consume a reply.

mod wire;

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// What the fake server answers, in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Script {
    /// Replies consumed one per completions/messages request.
    pub replies: Vec<Reply>,
    /// When set, OpenAI requests need `Authorization: Bearer KEY` and Anthropic requests
    /// `x-api-key: KEY` (or `Authorization: Bearer KEY`, which recent official Anthropic SDKs
    /// send); others get 401 in that API's error format.
    #[serde(alias = "api_key", skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Listed by `GET /models`. When non-empty, a request for any other model gets 404.
    pub models: Vec<String>,
    /// Pause between SSE chunks, in milliseconds.
    #[serde(alias = "chunk_delay_ms")]
    pub chunk_delay_ms: u64,
}

impl Script {
    /// A script with these replies, no API key, no model list and no delay.
    pub fn new(replies: Vec<Reply>) -> Self {
        Script {
            replies,
            ..Script::default()
        }
    }
}

/// One scripted answer. As JSON: `{"kind": "text", "text": "…"}` and so on (kinds in snake_case).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// A text answer, streamed as about four deltas split at char boundaries.
    Text { text: String },
    /// Optional text, then one or more tool calls; arguments are streamed in at least two fragments.
    ToolCalls {
        #[serde(default)]
        text: Option<String>,
        calls: Vec<FakeToolCall>,
    },
    /// Reasoning then text (OpenAI: `delta.reasoning_content`; Anthropic: a signed thinking block).
    Reasoning { thinking: String, text: String },
    /// An HTTP error in the API's error format, with a `retry-after` header when set.
    Status {
        status: u16,
        #[serde(default, alias = "retryAfter")]
        retry_after: Option<u64>,
        message: String,
    },
    /// Streams the first half of the text, then drops the connection without finishing the stream.
    Cut { text: String },
    /// A text answer: `"Tool results: "` followed by the text of the tool results in the
    /// request's final message(s), joined with `"\n"`.
    EchoToolResults,
    /// Sends the headers and one text delta (`"Hang on"`), then never finishes.
    Hang,
    /// A text answer streamed as exactly these deltas, one SSE event each (for benchmarks of
    /// long replies; with the script's `chunkDelayMs`, at that pace).
    Stream { pieces: Vec<String> },
}

impl Reply {
    /// `Reply::Text`.
    pub fn text(text: impl Into<String>) -> Self {
        Reply::Text { text: text.into() }
    }

    /// `Reply::Stream`: a text answer of `count` deltas, each `piece`.
    pub fn stream(piece: &str, count: usize) -> Self {
        Reply::Stream {
            pieces: vec![piece.to_string(); count],
        }
    }

    /// `Reply::ToolCalls` with a single call and no text.
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Reply::ToolCalls {
            text: None,
            calls: vec![FakeToolCall::new(id, name, arguments)],
        }
    }

    /// `Reply::Status` without `retry-after`.
    pub fn status(status: u16, message: impl Into<String>) -> Self {
        Reply::Status {
            status,
            retry_after: None,
            message: message.into(),
        }
    }
}

/// A tool call the fake model makes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FakeToolCall {
    pub id: String,
    pub name: String,
    /// Raw JSON text of the arguments. In a script file this may also be given as a JSON
    /// object, which is then serialized.
    #[serde(deserialize_with = "string_or_json")]
    pub arguments: String,
}

impl FakeToolCall {
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        FakeToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

fn string_or_json<'de, D: Deserializer<'de>>(de: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(de)? {
        Value::String(s) => s,
        other => other.to_string(),
    })
}

/// A request as the fake server received it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    pub method: String,
    /// The URI path, without the query.
    pub path: String,
    /// Header names lowercased; repeated headers joined with `", "`.
    pub headers: BTreeMap<String, String>,
    /// The JSON body; `Null` when empty, a `String` of the raw text when not JSON.
    pub body: Value,
}

impl RecordedRequest {
    /// A header's value by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }
}

type Observer = Box<dyn Fn(&RecordedRequest) + Send + Sync>;

struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    last_chunk: Mutex<Option<Instant>>,
    api_key: Option<String>,
    models: Vec<String>,
    chunk_delay: Duration,
    observer: Option<Observer>,
    counter: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running fake LLM server. Dropping it (or [`FakeLlm::shutdown`]) stops it and closes
/// every open connection.
pub struct FakeLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for FakeLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeLlm")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl FakeLlm {
    /// Binds `127.0.0.1:0` and starts serving `script`.
    pub async fn start(script: Script) -> io::Result<FakeLlm> {
        Self::start_inner(script, 0, None).await
    }

    /// Like [`FakeLlm::start`], on a given port (0 = any), calling `observer` with each
    /// request as soon as it is recorded.
    pub async fn start_with_observer(
        script: Script,
        port: u16,
        observer: impl Fn(&RecordedRequest) + Send + Sync + 'static,
    ) -> io::Result<FakeLlm> {
        Self::start_inner(script, port, Some(Box::new(observer))).await
    }

    async fn start_inner(script: Script, port: u16, observer: Option<Observer>) -> io::Result<FakeLlm> {
        let listener = TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            replies: Mutex::new(script.replies.into()),
            requests: Mutex::new(Vec::new()),
            last_chunk: Mutex::new(None),
            api_key: script.api_key,
            models: script.models,
            chunk_delay: Duration::from_millis(script.chunk_delay_ms),
            observer,
            counter: AtomicU64::new(0),
        });
        let task = tokio::spawn(accept_loop(listener, shared.clone()));
        Ok(FakeLlm {
            addr,
            shared,
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Appends a reply to the script.
    pub fn push(&self, reply: Reply) {
        lock(&self.shared.replies).push_back(reply);
    }

    /// Replies not consumed yet.
    pub fn remaining_replies(&self) -> usize {
        lock(&self.shared.replies).len()
    }

    /// When the most recently streamed SSE chunk was written to the socket and flushed
    /// (after a complete stream: its final `[DONE]` / `message_stop` event).
    pub fn last_chunk_sent_at(&self) -> Option<Instant> {
        *lock(&self.shared.last_chunk)
    }

    /// Stops the server and closes its connections; the port is free when this returns.
    pub async fn shutdown(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            // Waiting only for the task to be gone; aborted, it ends in the expected "cancelled".
            task.await.ok();
        }
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    // Connections live in this JoinSet, so aborting this task closes them all.
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // Only latency: without it small chunks may wait to be sent together; the bytes are the same.
                    stream.set_nodelay(true).ok();
                    conns.spawn(serve_connection(stream, shared.clone()));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let sse_pending = Arc::new(AtomicBool::new(false));
    let io = TokioIo::new(WatchedStream {
        inner: stream,
        sse_pending: sse_pending.clone(),
        shared: shared.clone(),
    });
    let service = service_fn(move |req: Request<Incoming>| {
        let shared = shared.clone();
        let sse_pending = sse_pending.clone();
        async move { Ok::<_, Infallible>(handle(shared, sse_pending, req).await) }
    });
    // A client that hangs up mid-stream (a cancelled turn) ends the connection with an error;
    // that is part of what the fake is for, and it has no one to report it to.
    http1::Builder::new().serve_connection(io, service).await.ok();
}

/// The connection's socket; notes when a flush completes after an SSE chunk was handed to hyper.
struct WatchedStream {
    inner: TcpStream,
    sse_pending: Arc<AtomicBool>,
    shared: Arc<Shared>,
}

impl AsyncRead for WatchedStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for WatchedStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let result = Pin::new(&mut self.inner).poll_flush(cx);
        // hyper writes out its whole buffer before flushing the socket, so a completed
        // flush after a chunk was queued means that chunk is on the wire.
        if matches!(result, Poll::Ready(Ok(()))) && self.sse_pending.swap(false, Ordering::AcqRel) {
            *lock(&self.shared.last_chunk) = Some(Instant::now());
        }
        result
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

async fn handle(shared: Arc<Shared>, sse_pending: Arc<AtomicBool>, req: Request<Incoming>) -> Response<wire::Body> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let mut headers = BTreeMap::<String, String>::new();
    for (name, value) in req.headers() {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        headers
            .entry(name.as_str().to_ascii_lowercase())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let raw = match req.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let (body, body_is_json) = if raw.is_empty() {
        (Value::Null, true)
    } else {
        match serde_json::from_slice::<Value>(&raw) {
            Ok(v) => (v, true),
            Err(_) => (Value::String(String::from_utf8_lossy(&raw).into_owned()), false),
        }
    };
    let recorded = RecordedRequest {
        method: method.to_string(),
        path,
        headers,
        body,
    };
    lock(&shared.requests).push(recorded.clone());
    if let Some(observer) = &shared.observer {
        observer(&recorded);
    }

    let route = recorded.path.trim_end_matches('/');
    let anthropic_headers =
        recorded.headers.contains_key("anthropic-version") || recorded.headers.contains_key("x-api-key");
    let api = if route.ends_with("/messages") || (!route.ends_with("/chat/completions") && anthropic_headers) {
        wire::Api::Anthropic
    } else {
        wire::Api::OpenAi
    };
    let is_models = route.ends_with("/models");
    let is_generate = route.ends_with("/chat/completions") || route.ends_with("/messages");

    if !is_models && !is_generate {
        return wire::error(
            api,
            404,
            &format!("no route for {} {}", recorded.method, recorded.path),
            None,
            None,
        );
    }
    let expected_method = if is_models {
        hyper::Method::GET
    } else {
        hyper::Method::POST
    };
    if method != expected_method {
        let message = format!("method {} not allowed for {}", recorded.method, recorded.path);
        return wire::error(api, 405, &message, None, None);
    }
    if let Some(key) = &shared.api_key
        && !api_key_ok(api, &recorded, key)
    {
        return wire::unauthorized(api);
    }
    if is_models {
        return wire::models(api, &shared.models);
    }
    if !body_is_json || !recorded.body.is_object() {
        return wire::error(api, 400, "request body must be a JSON object", None, None);
    }
    if recorded.body.get("stream").and_then(Value::as_bool) != Some(true) {
        return wire::error(
            api,
            400,
            "this fake LLM only streams: set \"stream\": true",
            Some("stream"),
            None,
        );
    }
    let model = recorded.body.get("model").and_then(Value::as_str).unwrap_or("");
    if !shared.models.is_empty() && !shared.models.iter().any(|m| m == model) {
        return wire::model_not_found(api, model);
    }
    let Some(reply) = lock(&shared.replies).pop_front() else {
        return wire::error(api, 500, "fake LLM script exhausted", None, None);
    };
    let serial = shared.counter.fetch_add(1, Ordering::Relaxed) + 1;
    let ctx = wire::ReplyContext {
        api,
        serial,
        model: if model.is_empty() {
            "fake-model".to_string()
        } else {
            model.to_string()
        },
        input_tokens: (raw.len() as u64 / 4).max(1),
        include_usage: recorded
            .body
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        chunk_delay: shared.chunk_delay,
        sse_pending,
    };
    wire::reply(&ctx, reply, &recorded.body)
}

/// OpenAI: `Authorization: Bearer KEY`. Anthropic: `x-api-key: KEY`, or `Authorization: Bearer KEY`
/// as recent official Anthropic SDKs send.
fn api_key_ok(api: wire::Api, request: &RecordedRequest, key: &str) -> bool {
    let bearer = request
        .header("authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|v| v.trim() == key);
    match api {
        wire::Api::OpenAi => bearer,
        wire::Api::Anthropic => bearer || request.header("x-api-key") == Some(key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_format_parses() {
        let script: Script = serde_json::from_str(
            r#"{
                "replies": [
                    {"kind": "text", "text": "hi"},
                    {"kind": "tool_calls", "calls": [
                        {"id": "c1", "name": "echo", "arguments": "{\"a\":1}"},
                        {"id": "c2", "name": "echo", "arguments": {"b": 2}}
                    ]},
                    {"kind": "reasoning", "thinking": "hmm", "text": "ok"},
                    {"kind": "status", "status": 429, "retry_after": 3, "message": "slow down"},
                    {"kind": "cut", "text": "partial"},
                    {"kind": "echo_tool_results"},
                    {"kind": "hang"}
                ],
                "apiKey": "k",
                "models": ["m1"],
                "chunkDelayMs": 5
            }"#,
        )
        .unwrap();
        assert_eq!(script.replies.len(), 7);
        assert_eq!(script.api_key.as_deref(), Some("k"));
        assert_eq!(script.models, vec!["m1".to_string()]);
        assert_eq!(script.chunk_delay_ms, 5);
        let Reply::ToolCalls { text, calls } = &script.replies[1] else {
            panic!("not tool calls")
        };
        assert_eq!(*text, None);
        assert_eq!(calls[0].arguments, r#"{"a":1}"#);
        assert_eq!(calls[1].arguments, r#"{"b":2}"#);
        assert_eq!(
            script.replies[3],
            Reply::Status {
                status: 429,
                retry_after: Some(3),
                message: "slow down".into()
            }
        );
        let round_trip: Script = serde_json::from_value(serde_json::to_value(&script).unwrap()).unwrap();
        assert_eq!(round_trip, script);
        let empty: Script = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, Script::default());
    }
}
