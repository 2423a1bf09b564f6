//! OpenAI Chat Completions, streamed, and the servers compatible with it: Ollama `/v1`,
//! llama.cpp's server, LM Studio, vLLM, OpenRouter, ...

use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::content::{self, Block};
use super::http::{self, Decoder};
use super::sse::SseEvent;
use super::{ProviderConfig, ProviderKind, parse_arguments};
use crate::conversation::{Message, Part, Role, ToolSpec, Usage};
use crate::provider::{ModelEvent, ModelReply, ModelRequest, Provider, ProviderError};

#[derive(Debug)]
pub struct OpenAiProvider {
    endpoint: http::Endpoint,
    /// The server refused `stream_options`: it is not sent again (usage is then whatever the
    /// server reports unasked, often nothing).
    no_stream_options: AtomicBool,
}

impl OpenAiProvider {
    /// (`config.kind` is not looked at.)
    pub fn new(config: ProviderConfig) -> OpenAiProvider {
        OpenAiProvider {
            endpoint: http::Endpoint::new(config, ProviderKind::OpenAi),
            no_stream_options: AtomicBool::new(false),
        }
    }

    pub fn base_url(&self) -> &str {
        &self.endpoint.base_url
    }

    fn authorization(&self) -> Result<Option<HeaderValue>, ProviderError> {
        self.endpoint
            .api_key
            .as_deref()
            .map(|key| http::secret_header(&format!("Bearer {key}")))
            .transpose()
    }

    async fn stream_once(
        &self,
        request: &ModelRequest,
        include_usage: bool,
        events: &mpsc::UnboundedSender<ModelEvent>,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ProviderError> {
        let url = http::join_url(&self.endpoint.base_url, "chat/completions");
        let body = request_body(request, self.endpoint.max_tokens, include_usage);
        let body = Bytes::from(serde_json::to_vec(&body).unwrap_or_default());
        let authorization = self.authorization()?;
        let make = || {
            let builder = self.endpoint.post_sse(&url, &body);
            match &authorization {
                Some(value) => builder.header(AUTHORIZATION, value.clone()),
                None => builder,
            }
        };
        let response = http::send(&make, &url, Some(&request.model), &self.endpoint.retry, events, cancel).await?;
        http::read_stream(response, ChatDecoder::default(), events, cancel).await
    }
}

/// A refusal of `stream_options` (servers that do not know it).
fn refuses_stream_options(error: &ProviderError) -> bool {
    matches!(error, ProviderError::Rejected { status: 400 | 422, message }
        if message.to_lowercase().contains("stream_options"))
}

impl Provider for OpenAiProvider {
    fn kind(&self) -> &'static str {
        "openai"
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        events: mpsc::UnboundedSender<ModelEvent>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<ModelReply, ProviderError>> {
        Box::pin(async move {
            let include_usage = !self.no_stream_options.load(Ordering::Relaxed);
            match self.stream_once(request, include_usage, &events, &cancel).await {
                Err(e) if include_usage && refuses_stream_options(&e) => {
                    let base_url = porthole_secrets::redact::url(&self.endpoint.base_url);
                    tracing::info!(%base_url, "the server refused stream_options; asking without it");
                    self.no_stream_options.store(true, Ordering::Relaxed);
                    self.stream_once(request, false, &events, &cancel).await
                }
                other => other,
            }
        })
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(async move {
            let url = http::join_url(&self.endpoint.base_url, "models");
            let authorization = self.authorization()?;
            let make = || {
                let builder = self.endpoint.client.get(&url);
                match &authorization {
                    Some(value) => builder.header(AUTHORIZATION, value.clone()),
                    None => builder,
                }
            };
            let (events, _) = mpsc::unbounded_channel();
            let response = http::send(
                &make,
                &url,
                None,
                &self.endpoint.retry,
                &events,
                &CancellationToken::new(),
            )
            .await?;
            let body = response.bytes().await.map_err(|e| {
                ProviderError::BadResponse(format!("reading the model list: {}", http::error_chain(&e)))
            })?;
            model_ids(&body)
        })
    }
}

/// The ids in a `/models` answer: `{"data": [{"id"}]}`, or llama.cpp's `{"models": [...]}`.
fn model_ids(body: &[u8]) -> Result<Vec<String>, ProviderError> {
    let json: Value = serde_json::from_slice(body)
        .map_err(|e| ProviderError::BadResponse(format!("the model list is not JSON: {e}")))?;
    let list = json
        .get("data")
        .or_else(|| json.get("models"))
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::BadResponse("the model list has no \"data\" array".into()))?;
    Ok(list
        .iter()
        .filter_map(|m| ["id", "model", "name"].iter().find_map(|k| m.get(*k)?.as_str()))
        .map(str::to_string)
        .collect())
}

// ---- The request -----------------------------------------------------------------------------

/// The Chat Completions request body. `default_max_tokens` applies when the request sets none;
/// `include_usage` asks for the usage chunk (`stream_options`).
pub fn request_body(request: &ModelRequest, default_max_tokens: Option<u32>, include_usage: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert(
        "messages".into(),
        Value::Array(messages(request.system.as_deref(), &request.messages)),
    );
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Array(request.tools.iter().map(tool).collect()));
    }
    body.insert("stream".into(), json!(true));
    if include_usage {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if let Some(max_tokens) = request.max_tokens.or(default_max_tokens) {
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    Value::Object(body)
}

fn tool(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.input_schema,
        }
    })
}

/// The conversation as Chat Completions messages, the system prompt first.
pub fn messages(system: Option<&str>, conversation: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(system) = system.filter(|s| !s.is_empty()) {
        out.push(json!({"role": "system", "content": system}));
    }
    for message in conversation {
        match message.role {
            Role::Assistant => out.extend(assistant(message)),
            Role::User | Role::Tool => {
                tool_results(message, &mut out);
                if message.attachments().next().is_some() {
                    out.push(json!({"role": "user", "content": user_content(message)}));
                } else if message.parts.iter().any(|p| matches!(p, Part::Text { .. })) {
                    out.push(json!({"role": "user", "content": message.text()}));
                }
            }
        }
    }
    out
}

/// A user message with attachments, as content parts: its text, then each attachment's text
/// and images.
fn user_content(message: &Message) -> Vec<Value> {
    let mut content = Vec::new();
    for part in &message.parts {
        let blocks = match part {
            Part::Text { text } if !text.is_empty() => vec![Block::Text(text.clone())],
            Part::Attachment { server, content } => content::attachment(server, content),
            _ => continue,
        };
        for block in blocks {
            content.push(match block {
                Block::Text(text) => json!({"type": "text", "text": text}),
                Block::Image { media_type, data } => json!({
                    "type": "image_url",
                    "image_url": {"url": format!("data:{media_type};base64,{data}")},
                }),
            });
        }
    }
    content
}

fn assistant(message: &Message) -> Option<Value> {
    let text = message.text();
    let mut reasoning: Option<(&str, String)> = None;
    let mut tool_calls = Vec::new();
    for part in &message.parts {
        match part {
            Part::Reasoning {
                text,
                field: Some(field),
                ..
            } if !field.is_empty() => match &mut reasoning {
                Some((_, all)) => all.push_str(text),
                None => reasoning = Some((field, text.clone())),
            },
            Part::ToolUse { id, name, arguments } => tool_calls.push(json!({
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": arguments_string(arguments)},
            })),
            _ => {}
        }
    }
    if text.is_empty() && tool_calls.is_empty() && reasoning.is_none() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    let content = if text.is_empty() && !tool_calls.is_empty() {
        Value::Null
    } else {
        Value::String(text)
    };
    out.insert("content".into(), content);
    if let Some((field, text)) = reasoning {
        out.insert(field.to_string(), Value::String(text));
    }
    if !tool_calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(tool_calls));
    }
    Some(Value::Object(out))
}

/// Arguments as the JSON string the API wants; arguments that were invalid JSON go back as the
/// model sent them.
fn arguments_string(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

/// One `tool` message per result (its text), then, if any result had images, one `user`
/// message carrying them (a tool message cannot).
fn tool_results(message: &Message, out: &mut Vec<Value>) {
    let mut images = Vec::new();
    for part in &message.parts {
        let Part::ToolResult {
            tool_use_id,
            content,
            is_error,
        } = part
        else {
            continue;
        };
        let mut lines = Vec::new();
        if *is_error {
            lines.push("[the tool reported an error]".to_string());
        }
        let mut first_image = true;
        for block in content::blocks(content) {
            match block {
                Block::Text(text) => lines.push(text),
                Block::Image { media_type, data } => {
                    lines.push(format!("[image {media_type} attached below]"));
                    if first_image {
                        first_image = false;
                        images.push(json!({"type": "text", "text": format!("Images from tool call {tool_use_id}:")}));
                    }
                    images.push(json!({
                        "type": "image_url",
                        "image_url": {"url": format!("data:{media_type};base64,{data}")},
                    }));
                }
            }
        }
        out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": lines.join("\n")}));
    }
    if !images.is_empty() {
        out.push(json!({"role": "user", "content": images}));
    }
}

// ---- The stream ------------------------------------------------------------------------------

/// Reads Chat Completions chunks into a reply.
#[derive(Debug, Default)]
pub(crate) struct ChatDecoder {
    text: String,
    reasoning: String,
    /// The field reasoning came in (`reasoning_content` or `reasoning`).
    reasoning_field: Option<&'static str>,
    calls: Vec<Call>,
    finish_reason: Option<String>,
    usage: Usage,
}

#[derive(Debug, Default)]
struct Call {
    /// The `index` the server gave it, if any.
    server_index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
    /// `ToolCallStarted` was emitted (once the name is known).
    started: bool,
}

impl Call {
    /// The arguments are a complete JSON value (more fragments cannot follow).
    fn arguments_complete(&self) -> bool {
        serde_json::from_str::<Value>(&self.arguments).is_ok()
    }
}

impl ChatDecoder {
    /// Which call a tool-call delta belongs to: by `index`; else by `id`; else the open call.
    fn call_for(&mut self, index: Option<u64>, id: Option<&str>, name: Option<&str>) -> usize {
        if let Some(index) = index
            && let Some(at) = self.calls.iter().rposition(|c| c.server_index == Some(index))
        {
            let call = &self.calls[at];
            // Some servers reuse one index for parallel calls; a different id is a new call.
            let other_id = id.is_some_and(|id| !call.id.is_empty() && call.id != id);
            if !other_id {
                return at;
            }
        }
        if let Some(id) = id {
            if let Some(at) = self.calls.iter().position(|c| c.id == id) {
                return at;
            }
        } else if index.is_none()
            && let Some(last) = self.calls.last()
        {
            // No index, no id: the open call, unless a name starts another after it finished.
            let starts_another = name.is_some() && !last.name.is_empty() && last.arguments_complete();
            if !starts_another {
                return self.calls.len() - 1;
            }
        }
        self.calls.push(Call {
            server_index: index,
            id: id.unwrap_or_default().to_string(),
            ..Call::default()
        });
        self.calls.len() - 1
    }

    fn tool_call_delta(&mut self, delta: &Value, out: &mut Vec<ModelEvent>) {
        fn non_empty(v: Option<&Value>) -> Option<&str> {
            v.and_then(Value::as_str).filter(|s| !s.is_empty())
        }
        let function = delta.get("function");
        let index = delta.get("index").and_then(Value::as_u64);
        let id = non_empty(delta.get("id"));
        let name = non_empty(function.and_then(|f| f.get("name")));
        let fragment = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            // A few servers send the arguments as an object.
            Some(other) => other.to_string(),
        };
        let at = self.call_for(index, id, name);
        let ordinal = at;
        let call = &mut self.calls[at];
        if call.id.is_empty()
            && let Some(id) = id
        {
            call.id = id.to_string();
        }
        if call.name.is_empty()
            && let Some(name) = name
        {
            call.name = name.to_string();
        }
        if !call.started && !call.name.is_empty() {
            call.started = true;
            if call.id.is_empty() {
                call.id = format!("call_{ordinal}");
            }
            out.push(ModelEvent::ToolCallStarted {
                index: ordinal,
                id: call.id.clone(),
                name: call.name.clone(),
            });
            if !call.arguments.is_empty() {
                out.push(ModelEvent::ToolCallArgumentsDelta {
                    index: ordinal,
                    fragment: call.arguments.clone(),
                });
            }
        }
        if !fragment.is_empty() {
            call.arguments.push_str(&fragment);
            if call.started {
                out.push(ModelEvent::ToolCallArgumentsDelta {
                    index: ordinal,
                    fragment,
                });
            }
        }
    }

    fn delta(&mut self, delta: &Value, out: &mut Vec<ModelEvent>) {
        if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            self.text.push_str(text);
            out.push(ModelEvent::TextDelta { text: text.to_string() });
        }
        let reasoning = ["reasoning_content", "reasoning"].into_iter().find_map(|field| {
            let text = delta.get(field)?.as_str().filter(|t| !t.is_empty())?;
            Some((field, text))
        });
        if let Some((field, text)) = reasoning {
            self.reasoning_field.get_or_insert(field);
            self.reasoning.push_str(text);
            out.push(ModelEvent::ReasoningDelta { text: text.to_string() });
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                self.tool_call_delta(call, out);
            }
        }
    }

    /// The reply's parts (reasoning, text, tool uses); `complete_only` keeps only the tool calls
    /// whose arguments are complete, and counts the others.
    fn parts(&self, complete_only: bool) -> (Vec<Part>, usize) {
        let mut parts = Vec::new();
        if !self.reasoning.is_empty() {
            parts.push(Part::Reasoning {
                text: self.reasoning.clone(),
                signature: None,
                field: self.reasoning_field.map(str::to_string),
            });
        }
        if !self.text.is_empty() {
            parts.push(Part::Text {
                text: self.text.clone(),
            });
        }
        let mut dropped = 0;
        for call in &self.calls {
            if !call.started {
                // Its name never came: it cannot be called.
                if complete_only {
                    dropped += 1;
                } else {
                    tracing::warn!("a tool call without a name was dropped from the reply");
                }
                continue;
            }
            let arguments = parse_arguments(&call.arguments);
            if complete_only && (call.arguments.trim().is_empty() || !arguments.is_object()) {
                dropped += 1;
                continue;
            }
            parts.push(Part::ToolUse {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments,
            });
        }
        (parts, dropped)
    }
}

fn usage(value: &Value) -> Usage {
    let number = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: number(value.get("prompt_tokens")),
        output_tokens: number(value.get("completion_tokens")),
        cache_read_tokens: number(value.pointer("/prompt_tokens_details/cached_tokens")),
    }
}

impl Decoder for ChatDecoder {
    const END: &'static str = "[DONE]";

    fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<bool, String> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Value = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(e) => {
                tracing::warn!("skipped an unreadable stream chunk: {e}");
                return Ok(false);
            }
        };
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            let error = http::parse_api_error(StatusCode::OK, data.as_bytes());
            return Err(format!("the server reported an error mid-stream: {}", error.message));
        }
        if let Some(value) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = usage(value);
        }
        for choice in chunk.get("choices").and_then(Value::as_array).into_iter().flatten() {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.get("delta") {
                self.delta(delta, out);
            }
            if let Some(reason) = choice
                .get("finish_reason")
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
            {
                self.finish_reason = Some(reason.to_string());
            }
        }
        Ok(false)
    }

    fn stopped(&self) -> bool {
        self.finish_reason.is_some()
    }

    fn reply(&self) -> ModelReply {
        ModelReply {
            parts: self.parts(false).0,
            stop_reason: self.finish_reason.clone(),
            usage: self.usage,
        }
    }

    fn partial(&self) -> (ModelReply, usize) {
        let (parts, dropped) = self.parts(true);
        let reply = ModelReply {
            parts,
            stop_reason: self.finish_reason.clone(),
            usage: self.usage,
        };
        (reply, dropped)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::provider::{RetryKind, RetryPolicy};
    use crate::providers::http::tests::decode;
    use crate::providers::test_server::{self, Then, fast_retry, serve};

    fn decode_chat(transcript: &str) -> (Result<ModelReply, ProviderError>, Vec<ModelEvent>) {
        decode(ChatDecoder::default, transcript)
    }

    const TEXT: &str = r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":", wörld 🎉"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":4,"total_tokens":16,"prompt_tokens_details":{"cached_tokens":8}}}

data: [DONE]

"#;

    #[test]
    fn streams_text_and_the_usage_chunk() {
        let (reply, events) = decode_chat(TEXT);
        let reply = reply.unwrap();
        assert_eq!(
            reply,
            ModelReply {
                parts: vec![Part::Text {
                    text: "Hello, wörld 🎉".into()
                }],
                stop_reason: Some("stop".into()),
                usage: Usage {
                    input_tokens: 12,
                    output_tokens: 4,
                    cache_read_tokens: 8
                },
            }
        );
        assert_eq!(
            events,
            vec![
                ModelEvent::TextDelta { text: "Hello".into() },
                ModelEvent::TextDelta {
                    text: ", wörld 🎉".into()
                },
            ]
        );
    }

    const PARALLEL_TOOLS: &str = r#"data: {"id":"chatcmpl-2","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Par"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"tz\":"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"","arguments":"is\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"CET\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-2","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

"#;

    #[test]
    fn two_parallel_tool_calls_with_fragmented_arguments() {
        let (reply, events) = decode_chat(PARALLEL_TOOLS);
        let reply = reply.unwrap();
        assert_eq!(
            reply.parts,
            vec![
                Part::ToolUse {
                    id: "call_a".into(),
                    name: "get_weather".into(),
                    arguments: json!({"city": "Paris"})
                },
                Part::ToolUse {
                    id: "call_b".into(),
                    name: "get_time".into(),
                    arguments: json!({"tz": "CET"})
                },
            ]
        );
        assert_eq!(reply.stop_reason.as_deref(), Some("tool_calls"));
        let started: Vec<_> = events
            .iter()
            .filter(|e| matches!(e, ModelEvent::ToolCallStarted { .. }))
            .collect();
        assert_eq!(
            started,
            vec![
                &ModelEvent::ToolCallStarted {
                    index: 0,
                    id: "call_a".into(),
                    name: "get_weather".into()
                },
                &ModelEvent::ToolCallStarted {
                    index: 1,
                    id: "call_b".into(),
                    name: "get_time".into()
                },
            ]
        );
        let fragments = |wanted: usize| {
            events
                .iter()
                .filter_map(|e| match e {
                    ModelEvent::ToolCallArgumentsDelta { index, fragment } if *index == wanted => {
                        Some(fragment.as_str())
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(fragments(0), vec!["{\"ci", "ty\": \"Par", "is\"}"]);
        assert_eq!(fragments(1), vec!["{\"tz\":", "\"CET\"}"]);
    }

    /// Ollama-style: whole calls in one chunk each, with ids but no `index`; and a server that
    /// sends later fragments with neither (they belong to the single open call).
    const NO_INDEX: &str = r#"data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_x1","function":{"name":"add","arguments":"{\"a\":1,\"b\":2}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_x2","function":{"name":"add","arguments":"{\"a\":3,"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"\"b\":4}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"now","arguments":"{}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]}

data: [DONE]

"#;

    #[test]
    fn tool_call_deltas_without_index() {
        let (reply, events) = decode_chat(NO_INDEX);
        assert_eq!(
            reply.unwrap().parts,
            vec![
                Part::ToolUse {
                    id: "call_x1".into(),
                    name: "add".into(),
                    arguments: json!({"a": 1, "b": 2})
                },
                Part::ToolUse {
                    id: "call_x2".into(),
                    name: "add".into(),
                    arguments: json!({"a": 3, "b": 4})
                },
                Part::ToolUse {
                    id: "call_2".into(),
                    name: "now".into(),
                    arguments: json!({})
                },
            ]
        );
        let starts = events
            .iter()
            .filter(|e| matches!(e, ModelEvent::ToolCallStarted { .. }))
            .count();
        assert_eq!(starts, 3);
    }

    const VLLM_REASONING: &str = r#"data: {"id":"chatcmpl-3","object":"chat.completion.chunk","model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-3","object":"chat.completion.chunk","model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"reasoning":"Let me"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-3","object":"chat.completion.chunk","model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"reasoning":" think."},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-3","object":"chat.completion.chunk","model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":"42"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-3","object":"chat.completion.chunk","model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}

data: [DONE]

"#;

    const DEEPSEEK_REASONING: &str = r#"data: {"id":"x","object":"chat.completion.chunk","model":"deepseek-reasoner","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"finish_reason":null}]}

data: {"id":"x","object":"chat.completion.chunk","model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"Hmm"},"finish_reason":null}]}

data: {"id":"x","object":"chat.completion.chunk","model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"Yes","reasoning_content":null},"finish_reason":null}]}

data: {"id":"x","object":"chat.completion.chunk","model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"","reasoning_content":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}

data: [DONE]

"#;

    #[test]
    fn reasoning_in_either_field_remembers_which() {
        let (reply, events) = decode_chat(VLLM_REASONING);
        assert_eq!(
            reply.unwrap().parts,
            vec![
                Part::Reasoning {
                    text: "Let me think.".into(),
                    signature: None,
                    field: Some("reasoning".into())
                },
                Part::Text { text: "42".into() },
            ]
        );
        assert_eq!(events[0], ModelEvent::ReasoningDelta { text: "Let me".into() });
        let (reply, _) = decode_chat(DEEPSEEK_REASONING);
        let reply = reply.unwrap();
        assert_eq!(
            reply.parts,
            vec![
                Part::Reasoning {
                    text: "Hmm".into(),
                    signature: None,
                    field: Some("reasoning_content".into())
                },
                Part::Text { text: "Yes".into() },
            ]
        );
        assert_eq!(reply.usage.input_tokens, 5);
    }

    /// llama.cpp-style: `finish_reason` "" until the end, and the stream ends without a blank
    /// line after `[DONE]`.
    const EMPTY_FINISH_REASON: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"\"}]}\r\n\r\n\
         data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\r\n\r\n\
         data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\r\n\r\n\
         data: [DONE]";

    #[test]
    fn empty_or_absent_finish_reason_is_not_a_stop() {
        let (reply, _) = decode_chat(EMPTY_FINISH_REASON);
        let reply = reply.unwrap();
        assert_eq!(reply.parts, vec![Part::Text { text: "ab".into() }]);
        assert_eq!(reply.stop_reason.as_deref(), Some("length"));
        assert_eq!(reply.usage.output_tokens, 2);
    }

    #[test]
    fn arguments_parse_at_the_end() {
        assert_eq!(parse_arguments(""), json!({}));
        assert_eq!(parse_arguments("  "), json!({}));
        assert_eq!(parse_arguments(r#"{"a":[1]}"#), json!({"a": [1]}));
        assert_eq!(parse_arguments(r#"{"a":"#), Value::String(r#"{"a":"#.into()));
        assert_eq!(parse_arguments("[1]"), Value::String("[1]".into()));
        let transcript = r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{not json"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

"#;
        let (reply, _) = decode_chat(transcript);
        assert_eq!(
            reply.unwrap().parts,
            vec![Part::ToolUse {
                id: "c".into(),
                name: "f".into(),
                arguments: Value::String("{not json".into())
            }]
        );
    }

    #[test]
    fn a_cut_keeps_the_text_and_drops_incomplete_tool_calls() {
        let cut = PARALLEL_TOOLS.split("data: {\"id\":\"chatcmpl-2\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\"").next().unwrap();
        let transcript = format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"Checking\"}}}}]}}\n\n{}",
            cut.split_once("\n\n").unwrap().1
        );
        let (reply, _) = decode_chat(&transcript);
        let Err(ProviderError::StreamCut { partial, reason }) = reply else {
            panic!("expected a cut, got {reply:?}");
        };
        assert_eq!(
            partial.parts,
            vec![Part::Text {
                text: "Checking".into()
            }]
        );
        assert!(reason.contains("before [DONE]"), "{reason}");
        assert!(reason.contains("2 tool calls"), "{reason}");
        // The model had said it stopped: the missing [DONE] is forgiven.
        let (reply, _) = decode_chat(TEXT.trim_end().strip_suffix("data: [DONE]").unwrap());
        assert!(reply.is_ok());
    }

    #[test]
    fn an_error_chunk_mid_stream_is_a_cut() {
        let transcript = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n\
                          data: {\"error\":{\"message\":\"upstream overloaded\",\"code\":502}}\n\n";
        let (reply, _) = decode_chat(transcript);
        let Err(ProviderError::StreamCut { partial, reason }) = reply else {
            panic!("expected a cut");
        };
        assert_eq!(partial.parts, vec![Part::Text { text: "Hi".into() }]);
        assert!(reason.contains("upstream overloaded"));
    }

    // ---- Request bodies ----

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: "gpt-test".into(),
            system: Some("Be brief.".into()),
            messages,
            tools: vec![],
            max_tokens: None,
        }
    }

    #[test]
    fn a_message_with_attachments_is_sent_as_content_parts() {
        let body = request_body(
            &request(vec![super::super::content::message_with_attachments()]),
            None,
            true,
        );
        assert_eq!(
            body["messages"][1],
            json!({"role": "user", "content": [
                {"type": "text", "text": "Summarise"},
                {"type": "text", "text": "[file:///a.md from docs]\n# A"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ]})
        );
    }

    #[test]
    fn tool_results_with_images_add_one_user_message() {
        let conversation = vec![
            Message::user("Show me"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::ToolUse {
                        id: "call_1".into(),
                        name: "screenshot".into(),
                        arguments: json!({"w": 10}),
                    },
                    Part::ToolUse {
                        id: "call_2".into(),
                        name: "search".into(),
                        arguments: Value::String("{bad".into()),
                    },
                ],
            },
            Message {
                role: Role::Tool,
                parts: vec![
                    Part::ToolResult {
                        tool_use_id: "call_1".into(),
                        content: vec![
                            json!({"type": "text", "text": "Here it is"}),
                            json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
                            json!({"type": "resource_link", "uri": "file:///shot.png", "name": "shot.png"}),
                        ],
                        is_error: false,
                    },
                    Part::ToolResult {
                        tool_use_id: "call_2".into(),
                        content: vec![json!({"type": "text", "text": "invalid arguments"})],
                        is_error: true,
                    },
                ],
            },
        ];
        let body = request_body(&request(conversation), None, true);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Show me"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "screenshot", "arguments": "{\"w\":10}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "search", "arguments": "{bad"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1",
                 "content": "Here it is\n[image image/png attached below]\n[resource link: file:///shot.png (shot.png)]"},
                {"role": "tool", "tool_call_id": "call_2", "content": "[the tool reported an error]\ninvalid arguments"},
                {"role": "user", "content": [
                    {"type": "text", "text": "Images from tool call call_1:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                ]},
            ])
        );
    }

    #[test]
    fn reasoning_goes_back_in_the_field_it_came_in() {
        let (reply, _) = decode_chat(VLLM_REASONING);
        let assistant = Message {
            role: Role::Assistant,
            parts: reply.unwrap().parts,
        };
        let body = request_body(&request(vec![Message::user("q"), assistant]), None, true);
        assert_eq!(
            body["messages"][2],
            json!({"role": "assistant", "content": "42", "reasoning": "Let me think."})
        );
        // Reasoning without a field (e.g. from Anthropic) is not sent.
        let foreign = Message {
            role: Role::Assistant,
            parts: vec![
                Part::Reasoning {
                    text: "secret".into(),
                    signature: Some("sig".into()),
                    field: None,
                },
                Part::Text { text: "ok".into() },
            ],
        };
        let body = request_body(&request(vec![Message::user("q"), foreign]), None, true);
        assert_eq!(body["messages"][2], json!({"role": "assistant", "content": "ok"}));
    }

    #[test]
    fn tools_are_omitted_when_empty_and_options_only_when_set() {
        let mut req = request(vec![Message::user("hi")]);
        let body = request_body(&req, None, true);
        assert_eq!(
            body,
            json!({
                "model": "gpt-test",
                "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
                "stream": true,
                "stream_options": {"include_usage": true},
            })
        );
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}, "$defs": {"x": {}}});
        req.tools = vec![ToolSpec {
            name: "search".into(),
            description: "Search".into(),
            input_schema: schema.clone(),
        }];
        req.system = None;
        let body = request_body(&req, Some(100), false);
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "function": {"name": "search", "description": "Search", "parameters": schema}}])
        );
        assert_eq!(body["max_tokens"], json!(100));
        assert!(body.get("stream_options").is_none());
        assert_eq!(body["messages"][0]["role"], "user");
        req.max_tokens = Some(7);
        assert_eq!(request_body(&req, Some(100), false)["max_tokens"], json!(7));
    }

    #[test]
    fn model_lists_in_both_shapes() {
        let openai = br#"{"object":"list","data":[{"id":"gpt-4o","object":"model"},{"id":"o3","object":"model"}]}"#;
        assert_eq!(model_ids(openai).unwrap(), vec!["gpt-4o", "o3"]);
        let llama = br#"{"models":[{"name":"qwen","model":"qwen.gguf"}],"object":"list"}"#;
        assert_eq!(model_ids(llama).unwrap(), vec!["qwen.gguf"]);
        assert!(model_ids(b"nope").is_err());
    }

    // ---- HTTP ----

    fn provider(base_url: &str, key: Option<&str>, retry: RetryPolicy) -> OpenAiProvider {
        OpenAiProvider::new(ProviderConfig {
            kind: ProviderKind::OpenAi,
            base_url: Some(base_url.to_string()),
            api_key: key.map(str::to_string),
            retry,
            max_tokens: None,
        })
    }

    async fn run(
        provider: &OpenAiProvider,
        cancel: CancellationToken,
    ) -> (Result<ModelReply, ProviderError>, Vec<ModelEvent>) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let result = provider.stream(&request(vec![Message::user("hi")]), tx, cancel).await;
        let mut events = Vec::new();
        while let Ok(event) = rx.try_recv() {
            events.push(event);
        }
        (result, events)
    }

    #[tokio::test]
    async fn http_429_with_retry_after_then_success() {
        let server = serve(vec![
            test_server::json(
                429,
                &[("retry-after", "0")],
                r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#,
            ),
            test_server::sse(TEXT, true, Then::Close),
        ])
        .await;
        let provider = provider(&server.base_url, Some("sk-test"), fast_retry(3));
        let (result, events) = run(&provider, CancellationToken::new()).await;
        let reply = result.unwrap();
        assert_eq!(
            reply.parts,
            vec![Part::Text {
                text: "Hello, wörld 🎉".into()
            }]
        );
        assert_eq!(
            events[0],
            ModelEvent::Retrying {
                attempt: 2,
                wait_ms: 0,
                kind: RetryKind::RateLimited,
                reason: "rate limited (HTTP 429): Rate limit reached".into()
            }
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert!(requests[0].head.starts_with("POST /v1/chat/completions "));
        assert_eq!(requests[0].header("authorization").as_deref(), Some("Bearer sk-test"));
        assert_eq!(requests[0].json()["stream"], json!(true));
    }

    #[tokio::test]
    async fn http_429_with_a_too_long_retry_after_is_reported_at_once() {
        let server = serve(vec![test_server::json(
            429,
            &[("retry-after-ms", "600000")],
            r#"{"error":{"message":"slow down"}}"#,
        )])
        .await;
        let provider = provider(&server.base_url, None, fast_retry(3));
        let (result, events) = run(&provider, CancellationToken::new()).await;
        assert!(
            matches!(&result, Err(ProviderError::RateLimited { attempts: 1, message }) if message == "slow down"),
            "{result:?}"
        );
        assert!(events.is_empty());
        assert_eq!(server.requests()[0].header("authorization"), None, "no key, no header");
    }

    #[tokio::test]
    async fn http_500_every_time_is_a_server_error_after_max_attempts() {
        let answer = test_server::json(500, &[], r#"{"error":{"message":"boom"}}"#);
        let server = serve(vec![answer.clone(), answer.clone(), answer]).await;
        let provider = provider(&server.base_url, None, fast_retry(3));
        let (result, events) = run(&provider, CancellationToken::new()).await;
        assert!(
            matches!(&result, Err(ProviderError::Server { status: 500, attempts: 3, message }) if message == "boom"),
            "{result:?}"
        );
        let waits: Vec<_> = events
            .iter()
            .map(|e| match e {
                ModelEvent::Retrying { attempt, wait_ms, .. } => (*attempt, *wait_ms),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(waits, vec![(2, 1), (3, 2)]);
        assert_eq!(server.requests().len(), 3);
    }

    #[tokio::test]
    async fn http_401_is_unauthorized_with_the_api_message() {
        let server = serve(vec![test_server::json(
            401,
            &[],
            r#"{"error":{"message":"Incorrect API key provided: sk-te***","type":"invalid_request_error","code":"invalid_api_key"}}"#,
        )])
        .await;
        let provider = provider(&server.base_url, Some("sk-test"), fast_retry(3));
        let (result, events) = run(&provider, CancellationToken::new()).await;
        assert!(
            matches!(&result, Err(ProviderError::Unauthorized(m)) if m == "Incorrect API key provided: sk-te***"),
            "{result:?}"
        );
        assert!(events.is_empty());
        assert_eq!(server.requests().len(), 1);
    }

    #[tokio::test]
    async fn http_unknown_model() {
        let server = serve(vec![test_server::json(
            404,
            &[],
            r#"{"error":{"message":"The model `gpt-test` does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}"#,
        )])
        .await;
        let provider = provider(&server.base_url, None, fast_retry(3));
        let (result, _) = run(&provider, CancellationToken::new()).await;
        assert!(
            matches!(&result, Err(ProviderError::UnknownModel { model, .. }) if model == "gpt-test"),
            "{result:?}"
        );
    }

    #[tokio::test]
    async fn http_stream_cut_mid_reply_keeps_the_text_so_far() {
        let first_two = TEXT.split("\n\n").take(2).collect::<Vec<_>>().join("\n\n") + "\n\n";
        let server = serve(vec![test_server::sse(&first_two, false, Then::Close)]).await;
        let provider = provider(&server.base_url, None, fast_retry(3));
        let (result, events) = run(&provider, CancellationToken::new()).await;
        let Err(ProviderError::StreamCut { partial, reason }) = result else {
            panic!("expected a cut, got {result:?}");
        };
        assert_eq!(partial.parts, vec![Part::Text { text: "Hello".into() }]);
        assert!(reason.contains("reading the stream failed"), "{reason}");
        assert_eq!(events, vec![ModelEvent::TextDelta { text: "Hello".into() }]);
        assert_eq!(server.requests().len(), 1, "never retried once something streamed");
    }

    #[tokio::test]
    async fn http_cancel_during_a_hanging_stream() {
        let first_two = TEXT.split("\n\n").take(2).collect::<Vec<_>>().join("\n\n") + "\n\n";
        let server = serve(vec![test_server::sse(&first_two, false, Then::Hang)]).await;
        let provider = provider(&server.base_url, None, fast_retry(3));
        let cancel = CancellationToken::new();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let req = request(vec![Message::user("hi")]);
        let stream = provider.stream(&req, tx, cancel.clone());
        let canceller = async {
            assert_eq!(rx.recv().await, Some(ModelEvent::TextDelta { text: "Hello".into() }));
            cancel.cancel();
        };
        let (result, ()) = tokio::time::timeout(Duration::from_secs(10), async { tokio::join!(stream, canceller) })
            .await
            .expect("cancellation stops the stream promptly");
        let Err(ProviderError::Cancelled { partial }) = result else {
            panic!("expected Cancelled, got {result:?}");
        };
        assert_eq!(partial.parts, vec![Part::Text { text: "Hello".into() }]);
    }

    #[tokio::test]
    async fn http_cancel_while_waiting_for_retry() {
        let server = serve(vec![test_server::json(503, &[("retry-after", "3")], "busy")]).await;
        let provider = provider(&server.base_url, None, fast_retry(3));
        let cancel = CancellationToken::new();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let req = request(vec![Message::user("hi")]);
        let stream = provider.stream(&req, tx, cancel.clone());
        let canceller = async {
            assert!(matches!(
                rx.recv().await,
                Some(ModelEvent::Retrying { wait_ms: 3000, .. })
            ));
            cancel.cancel();
        };
        let (result, ()) = tokio::time::timeout(Duration::from_secs(10), async { tokio::join!(stream, canceller) })
            .await
            .unwrap();
        assert!(matches!(result, Err(ProviderError::Cancelled { partial }) if partial.parts.is_empty()));
    }

    #[tokio::test]
    async fn http_stream_options_refused_then_never_sent_again() {
        let server = serve(vec![
            test_server::json(
                400,
                &[],
                r#"{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error"}}"#,
            ),
            test_server::sse(TEXT, true, Then::Close),
            test_server::sse(TEXT, true, Then::Close),
        ])
        .await;
        let provider = provider(&server.base_url, None, fast_retry(3));
        assert!(run(&provider, CancellationToken::new()).await.0.is_ok());
        assert!(run(&provider, CancellationToken::new()).await.0.is_ok());
        let has_options: Vec<bool> = server
            .requests()
            .iter()
            .map(|r| r.json().get("stream_options").is_some())
            .collect();
        assert_eq!(has_options, vec![true, false, false]);
    }

    #[tokio::test]
    async fn http_unreachable_after_bounded_retries() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        drop(listener);
        let provider = provider(&base_url, None, fast_retry(2));
        let (result, events) = run(&provider, CancellationToken::new()).await;
        assert!(
            matches!(&result, Err(ProviderError::Unreachable { url, .. }) if url.ends_with("/v1/chat/completions")),
            "{result:?}"
        );
        assert_eq!(events.len(), 1, "one retry announced: {events:?}");
        assert!(
            matches!(&events[0], ModelEvent::Retrying { kind: RetryKind::Unreachable, reason, .. } if reason.starts_with("could not connect")),
            "{events:?}"
        );
    }

    #[tokio::test]
    async fn http_list_models() {
        let server = serve(vec![test_server::json(
            200,
            &[],
            r#"{"object":"list","data":[{"id":"llama3.2","object":"model","owned_by":"library"}]}"#,
        )])
        .await;
        let provider = provider(&format!("{}/", server.base_url), Some("k"), fast_retry(1));
        assert_eq!(provider.list_models().await.unwrap(), vec!["llama3.2"]);
        let request = &server.requests()[0];
        assert!(request.head.starts_with("GET /v1/models "), "{}", request.head);
        assert_eq!(request.header("authorization").as_deref(), Some("Bearer k"));
    }
}
