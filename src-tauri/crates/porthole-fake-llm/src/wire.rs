//! The two wire formats: SSE event streams, error bodies and model lists.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use hyper::{Response, StatusCode};
use serde_json::{Value, json};

use crate::{FakeToolCall, Reply};

pub(crate) type Body = UnsyncBoxBody<Bytes, io::Error>;

/// The text of the single delta a [`Reply::Hang`] sends.
const HANG_TEXT: &str = "Hang on";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Api {
    OpenAi,
    Anthropic,
}

pub(crate) struct ReplyContext {
    pub api: Api,
    pub serial: u64,
    pub model: String,
    pub input_tokens: u64,
    pub include_usage: bool,
    pub chunk_delay: Duration,
    pub sse_pending: Arc<AtomicBool>,
}

/// How a stream ends after its events.
enum Ending {
    Done,
    Cut,
    Hang,
}

/// What to stream, independent of the API.
enum Block {
    Text(String),
    /// Text in exactly these deltas.
    Pieces(Vec<String>),
    Thinking(String),
    Tool(FakeToolCall),
}

fn full(status: StatusCode, content_type: &str, body: Vec<u8>) -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_str(content_type).expect("ascii"));
    response
}

fn json_response(status: u16, value: &Value) -> Response<Body> {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    full(status, "application/json", value.to_string().into_bytes())
}

/// An error in the API's format. `param` only shows in OpenAI's.
pub(crate) fn error(
    api: Api,
    status: u16,
    message: &str,
    param: Option<&str>,
    retry_after: Option<u64>,
) -> Response<Body> {
    let code = match status {
        401 => Some("invalid_api_key"),
        429 => Some("rate_limit_exceeded"),
        _ => None,
    };
    error_with_code(api, status, message, param, code, retry_after)
}

fn error_with_code(
    api: Api,
    status: u16,
    message: &str,
    param: Option<&str>,
    code: Option<&str>,
    retry_after: Option<u64>,
) -> Response<Body> {
    let value = match api {
        Api::OpenAi => {
            let kind = match status {
                429 => "requests",
                500..=599 => "server_error",
                _ => "invalid_request_error",
            };
            json!({"error": {"message": message, "type": kind, "param": param, "code": code}})
        }
        Api::Anthropic => {
            let kind = match status {
                401 => "authentication_error",
                402 => "billing_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                504 => "timeout_error",
                529 => "overloaded_error",
                500..=599 => "api_error",
                _ => "invalid_request_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
    };
    let mut response = json_response(status, &value);
    if let Some(secs) = retry_after {
        response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

pub(crate) fn unauthorized(api: Api) -> Response<Body> {
    let message = match api {
        Api::OpenAi => "Incorrect API key provided.",
        Api::Anthropic => "invalid x-api-key",
    };
    error(api, 401, message, None, None)
}

pub(crate) fn model_not_found(api: Api, model: &str) -> Response<Body> {
    match api {
        Api::OpenAi => error_with_code(
            api,
            404,
            &format!("The model `{model}` does not exist or you do not have access to it."),
            None,
            Some("model_not_found"),
            None,
        ),
        Api::Anthropic => error(api, 404, &format!("model: {model}"), None, None),
    }
}

pub(crate) fn models(api: Api, models: &[String]) -> Response<Body> {
    let value = match api {
        Api::OpenAi => json!({
            "object": "list",
            "data": models
                .iter()
                .map(|id| json!({"id": id, "object": "model", "created": 1_700_000_000, "owned_by": "porthole-fake-llm"}))
                .collect::<Vec<_>>(),
        }),
        Api::Anthropic => json!({
            "data": models
                .iter()
                .map(|id| json!({"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"}))
                .collect::<Vec<_>>(),
            "has_more": false,
            "first_id": models.first(),
            "last_id": models.last(),
        }),
    };
    json_response(200, &value)
}

/// Splits `text` into at most `n` pieces of about equal length, at char boundaries.
fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let k = n.clamp(1, chars.len());
    (0..k)
        .map(|i| chars[i * chars.len() / k..(i + 1) * chars.len() / k].iter().collect())
        .collect()
}

fn words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

/// The first half (by chars, at least one char) of `text`.
fn first_half(text: &str) -> String {
    let n = text.chars().count();
    text.chars().take(n.div_ceil(2)).collect()
}

/// The text of the tool results in the request's final message(s).
fn tool_results_text(api: Api, body: &Value) -> String {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut texts = Vec::new();
    match api {
        Api::OpenAi => {
            for message in messages.iter().rev() {
                if message.get("role").and_then(Value::as_str) != Some("tool") {
                    break;
                }
                texts.push(content_text(message.get("content")));
            }
            texts.reverse();
        }
        Api::Anthropic => {
            if let Some(last) = messages.last()
                && last.get("role").and_then(Value::as_str) == Some("user")
                && let Some(blocks) = last.get("content").and_then(Value::as_array)
            {
                for block in blocks {
                    if block.get("type").and_then(Value::as_str) == Some("tool_result") {
                        texts.push(content_text(block.get("content")));
                    }
                }
            }
        }
    }
    format!("Tool results: {}", texts.join("\n"))
}

/// Text of a content that is a string or an array of `{"type": "text", "text": …}` parts.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .concat(),
        _ => String::new(),
    }
}

fn signature(thinking: &str) -> String {
    // FNV-1a: deterministic and dependency-free.
    let hash = thinking.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("sig-{hash:016x}")
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The response for a scripted reply.
pub(crate) fn reply(ctx: &ReplyContext, reply: Reply, request: &Value) -> Response<Body> {
    let (blocks, ending) = match reply {
        Reply::Status {
            status,
            retry_after,
            message,
        } => {
            return error(ctx.api, status, &message, None, retry_after);
        }
        Reply::Text { text } => (vec![Block::Text(text)], Ending::Done),
        Reply::ToolCalls { text, calls } => {
            let mut blocks: Vec<Block> = text.filter(|t| !t.is_empty()).map(Block::Text).into_iter().collect();
            blocks.extend(calls.into_iter().map(Block::Tool));
            (blocks, Ending::Done)
        }
        Reply::Reasoning { thinking, text } => (vec![Block::Thinking(thinking), Block::Text(text)], Ending::Done),
        Reply::Cut { text } => (vec![Block::Text(first_half(&text))], Ending::Cut),
        Reply::EchoToolResults => (vec![Block::Text(tool_results_text(ctx.api, request))], Ending::Done),
        Reply::Hang => (vec![Block::Text(HANG_TEXT.to_string())], Ending::Hang),
        Reply::Stream { pieces } => (vec![Block::Pieces(pieces)], Ending::Done),
    };
    let events = match ctx.api {
        Api::OpenAi => openai_events(ctx, &blocks, &ending),
        Api::Anthropic => anthropic_events(ctx, &blocks, &ending),
    };
    sse_response(ctx, events, ending)
}

fn output_tokens(blocks: &[Block]) -> u64 {
    let n: u64 = blocks
        .iter()
        .map(|b| match b {
            Block::Text(t) | Block::Thinking(t) => words(t),
            Block::Pieces(p) => p.iter().map(|t| words(t)).sum(),
            Block::Tool(call) => 1 + words(&call.arguments),
        })
        .sum();
    n.max(1)
}

fn openai_events(ctx: &ReplyContext, blocks: &[Block], ending: &Ending) -> Vec<Bytes> {
    let id = format!("chatcmpl-fake{}", ctx.serial);
    let created = unix_now();
    let chunk = |delta: Value, finish_reason: Option<&str>| {
        let mut value = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": ctx.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
        });
        if ctx.include_usage {
            value["usage"] = Value::Null;
        }
        sse_data(&value)
    };
    let has_text = blocks
        .iter()
        .any(|b| matches!(b, Block::Text(_) | Block::Pieces(_) | Block::Thinking(_)));
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": if has_text { json!("") } else { Value::Null }}),
        None,
    )];
    let mut tool_index = 0;
    for block in blocks {
        match block {
            Block::Text(text) => {
                let n = if matches!(ending, Ending::Hang) { 1 } else { 4 };
                events.extend(pieces(text, n).into_iter().map(|p| chunk(json!({"content": p}), None)));
            }
            Block::Pieces(given) => {
                events.extend(given.iter().map(|p| chunk(json!({"content": p}), None)));
            }
            Block::Thinking(thinking) => {
                events.extend(
                    pieces(thinking, 4)
                        .into_iter()
                        .map(|p| chunk(json!({"reasoning_content": p}), None)),
                );
            }
            Block::Tool(call) => {
                events.push(chunk(
                    json!({"tool_calls": [{
                        "index": tool_index,
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": ""},
                    }]}),
                    None,
                ));
                for fragment in pieces(&call.arguments, 3) {
                    events.push(chunk(
                        json!({"tool_calls": [{"index": tool_index, "function": {"arguments": fragment}}]}),
                        None,
                    ));
                }
                tool_index += 1;
            }
        }
    }
    if matches!(ending, Ending::Done) {
        let finish = if tool_index > 0 { "tool_calls" } else { "stop" };
        events.push(chunk(json!({}), Some(finish)));
        if ctx.include_usage {
            let completion = output_tokens(blocks);
            events.push(sse_data(&json!({
                "id": id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": ctx.model,
                "choices": [],
                "usage": {
                    "prompt_tokens": ctx.input_tokens,
                    "completion_tokens": completion,
                    "total_tokens": ctx.input_tokens + completion,
                },
            })));
        }
        events.push(Bytes::from_static(b"data: [DONE]\n\n"));
    }
    events
}

fn anthropic_events(ctx: &ReplyContext, blocks: &[Block], ending: &Ending) -> Vec<Bytes> {
    let mut events = vec![
        sse_event(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": format!("msg_fake{}", ctx.serial),
                "type": "message",
                "role": "assistant",
                "model": ctx.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {"input_tokens": ctx.input_tokens, "output_tokens": 1},
            }}),
        ),
        sse_event("ping", &json!({"type": "ping"})),
    ];
    let mut has_tool = false;
    for (index, block) in blocks.iter().enumerate() {
        let (start, deltas): (Value, Vec<Value>) = match block {
            Block::Text(text) => {
                let n = if matches!(ending, Ending::Hang) { 1 } else { 4 };
                let deltas = pieces(text, n)
                    .into_iter()
                    .map(|p| json!({"type": "text_delta", "text": p}));
                (json!({"type": "text", "text": ""}), deltas.collect())
            }
            Block::Pieces(given) => {
                let deltas = given.iter().map(|p| json!({"type": "text_delta", "text": p}));
                (json!({"type": "text", "text": ""}), deltas.collect())
            }
            Block::Thinking(thinking) => {
                let mut deltas: Vec<Value> = pieces(thinking, 4)
                    .into_iter()
                    .map(|p| json!({"type": "thinking_delta", "thinking": p}))
                    .collect();
                deltas.push(json!({"type": "signature_delta", "signature": signature(thinking)}));
                (json!({"type": "thinking", "thinking": "", "signature": ""}), deltas)
            }
            Block::Tool(call) => {
                has_tool = true;
                let deltas = pieces(&call.arguments, 3)
                    .into_iter()
                    .map(|p| json!({"type": "input_json_delta", "partial_json": p}));
                (
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
                    deltas.collect(),
                )
            }
        };
        events.push(sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            events.push(sse_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        if !matches!(ending, Ending::Done) {
            // Cut and Hang stop inside their (single) text block.
            return events;
        }
        events.push(sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let stop_reason = if has_tool { "tool_use" } else { "end_turn" };
    events.push(sse_event(
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": output_tokens(blocks)},
        }),
    ));
    events.push(sse_event("message_stop", &json!({"type": "message_stop"})));
    events
}

fn sse_data(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

fn sse_event(name: &str, value: &Value) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {value}\n\n"))
}

struct StreamState {
    events: VecDeque<Bytes>,
    first: bool,
    ending: Option<Ending>,
    delay: Duration,
    /// When the next event is due, when paced.
    next: Option<tokio::time::Instant>,
    sse_pending: Arc<AtomicBool>,
}

fn sse_response(ctx: &ReplyContext, events: Vec<Bytes>, ending: Ending) -> Response<Body> {
    let state = StreamState {
        events: events.into(),
        first: true,
        ending: Some(ending),
        delay: ctx.chunk_delay,
        next: None,
        sse_pending: ctx.sse_pending.clone(),
    };
    let stream = futures::stream::unfold(state, |mut st| async move {
        if let Some(event) = st.events.pop_front() {
            if !st.delay.is_zero() {
                // Paced by deadline, so a long stream keeps its rate (sleeps round up).
                let now = tokio::time::Instant::now();
                let next = match st.next {
                    Some(next) if !st.first => next + st.delay,
                    _ => now,
                };
                st.next = Some(next);
                tokio::time::sleep_until(next).await;
            }
            st.first = false;
            st.sse_pending.store(true, Ordering::Release);
            return Some((Ok(Frame::data(event)), st));
        }
        match st.ending.take()? {
            Ending::Done => None,
            Ending::Cut => {
                // Let hyper flush what was sent, then fail the body: hyper drops the
                // connection without the terminating chunk.
                tokio::time::sleep(st.delay.max(Duration::from_millis(50))).await;
                Some((
                    Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        "fake LLM cut the stream",
                    )),
                    st,
                ))
            }
            Ending::Hang => {
                std::future::pending::<()>().await;
                None
            }
        }
    });
    let mut response = Response::new(StreamBody::new(stream).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    let request_id = match ctx.api {
        Api::OpenAi => ("x-request-id", format!("req_fake{}", ctx.serial)),
        Api::Anthropic => ("request-id", format!("req_fake{}", ctx.serial)),
    };
    headers.insert(request_id.0, HeaderValue::from_str(&request_id.1).expect("ascii"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_split_at_char_boundaries() {
        assert_eq!(pieces("", 4), Vec::<String>::new());
        assert_eq!(pieces("ab", 4), vec!["a", "b"]);
        assert_eq!(pieces("héllo wörld", 4).concat(), "héllo wörld");
        assert_eq!(pieces("héllo wörld", 4).len(), 4);
        assert_eq!(pieces("{\"a\":1}", 3).len(), 3);
        assert_eq!(first_half("abcde"), "abc");
    }
}
