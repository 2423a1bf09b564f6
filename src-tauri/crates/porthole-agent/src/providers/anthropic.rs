//! Anthropic Messages, streamed.

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::HeaderValue;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::content::{self, Block};
use super::http::{self, Decoder};
use super::sse::SseEvent;
use super::{ProviderConfig, ProviderKind, parse_arguments};
use crate::conversation::{Message, Part, Role, ToolSpec, Usage};
use crate::provider::{ModelEvent, ModelReply, ModelRequest, Provider, ProviderError};

/// The `anthropic-version` header sent.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` when neither the request nor the configuration sets one (the API requires it).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

#[derive(Debug)]
pub struct AnthropicProvider {
    endpoint: http::Endpoint,
}

impl AnthropicProvider {
    /// (`config.kind` is not looked at.)
    pub fn new(config: ProviderConfig) -> AnthropicProvider {
        AnthropicProvider {
            endpoint: http::Endpoint::new(config, ProviderKind::Anthropic),
        }
    }

    pub fn base_url(&self) -> &str {
        &self.endpoint.base_url
    }

    /// A request with the version header and, when there is a key, `x-api-key`.
    fn request(&self, builder: reqwest::RequestBuilder, key: &Option<HeaderValue>) -> reqwest::RequestBuilder {
        let builder = builder.header("anthropic-version", API_VERSION);
        match key {
            Some(key) => builder.header("x-api-key", key.clone()),
            None => builder,
        }
    }

    fn key(&self) -> Result<Option<HeaderValue>, ProviderError> {
        self.endpoint.api_key.as_deref().map(http::secret_header).transpose()
    }
}

impl Provider for AnthropicProvider {
    fn kind(&self) -> &'static str {
        "anthropic"
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        events: mpsc::UnboundedSender<ModelEvent>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<ModelReply, ProviderError>> {
        Box::pin(async move {
            let url = http::join_url(&self.endpoint.base_url, "messages");
            let body =
                Bytes::from(serde_json::to_vec(&request_body(request, self.endpoint.max_tokens)).unwrap_or_default());
            let key = self.key()?;
            let make = || {
                let builder = self.endpoint.post_sse(&url, &body);
                self.request(builder, &key)
            };
            let response = http::send(
                &make,
                &url,
                Some(&request.model),
                &self.endpoint.retry,
                &events,
                &cancel,
            )
            .await?;
            http::read_stream(response, MessagesDecoder::default(), &events, &cancel).await
        })
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(async move {
            let key = self.key()?;
            let (events, _) = mpsc::unbounded_channel();
            let cancel = CancellationToken::new();
            let mut ids = Vec::new();
            let mut after: Option<String> = None;
            // Pages of up to 1000; a bound in case a server keeps saying "more".
            for _ in 0..20 {
                let base = http::join_url(&self.endpoint.base_url, "models");
                let mut url = reqwest::Url::parse(&base).map_err(|e| ProviderError::Unreachable {
                    url: porthole_secrets::redact::url(&base),
                    message: e.to_string(),
                })?;
                url.query_pairs_mut().append_pair("limit", "1000");
                if let Some(after) = &after {
                    url.query_pairs_mut().append_pair("after_id", after);
                }
                let url = url.to_string();
                let make = || self.request(self.endpoint.client.get(&url), &key);
                let response = http::send(&make, &url, None, &self.endpoint.retry, &events, &cancel).await?;
                let body = response.bytes().await.map_err(|e| {
                    ProviderError::BadResponse(format!("reading the model list: {}", http::error_chain(&e)))
                })?;
                let json: Value = serde_json::from_slice(&body)
                    .map_err(|e| ProviderError::BadResponse(format!("the model list is not JSON: {e}")))?;
                let page = json
                    .get("data")
                    .and_then(Value::as_array)
                    .ok_or_else(|| ProviderError::BadResponse("the model list has no \"data\" array".into()))?;
                ids.extend(page.iter().filter_map(|m| m.get("id")?.as_str()).map(str::to_string));
                after = json.get("last_id").and_then(Value::as_str).map(str::to_string);
                let more = json.get("has_more").and_then(Value::as_bool).unwrap_or(false);
                if !more || after.is_none() || page.is_empty() {
                    break;
                }
            }
            Ok(ids)
        })
    }
}

// ---- The request -----------------------------------------------------------------------------

/// The Messages request body. `default_max_tokens` applies when the request sets none (and
/// [`DEFAULT_MAX_TOKENS`] when neither does).
pub fn request_body(request: &ModelRequest, default_max_tokens: Option<u32>) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    let max_tokens = request.max_tokens.or(default_max_tokens).unwrap_or(DEFAULT_MAX_TOKENS);
    body.insert("max_tokens".into(), json!(max_tokens));
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert("system".into(), json!(system));
    }
    body.insert("messages".into(), Value::Array(messages(&request.messages)));
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Array(request.tools.iter().map(tool).collect()));
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

fn tool(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.input_schema,
    })
}

/// The conversation as Messages: content block arrays, tool results in user messages, and
/// consecutive messages of one role merged (the API requires alternation).
pub fn messages(conversation: &[Message]) -> Vec<Value> {
    let mut merged: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in conversation {
        let (role, blocks) = match message.role {
            Role::User | Role::Tool => ("user", user_blocks(message)),
            Role::Assistant => ("assistant", assistant_blocks(message)),
        };
        if blocks.is_empty() {
            continue;
        }
        match merged.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => merged.push((role, blocks)),
        }
    }
    merged
        .into_iter()
        .map(|(role, mut content)| {
            if role == "user" {
                // Tool results must open the message that answers the tool calls.
                content.sort_by_key(|b| b.get("type").and_then(Value::as_str) != Some("tool_result"));
            }
            json!({"role": role, "content": content})
        })
        .collect()
}

fn user_blocks(message: &Message) -> Vec<Value> {
    let mut blocks = Vec::new();
    for part in &message.parts {
        match part {
            Part::Text { text } if !text.is_empty() => blocks.push(json!({"type": "text", "text": text})),
            Part::Attachment { server, content } => {
                blocks.extend(content::attachment(server, content).into_iter().map(content_block))
            }
            Part::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let mut result = Map::new();
                result.insert("type".into(), json!("tool_result"));
                result.insert("tool_use_id".into(), json!(tool_use_id));
                let content: Vec<Value> = content::blocks(content).into_iter().map(content_block).collect();
                if !content.is_empty() {
                    result.insert("content".into(), Value::Array(content));
                }
                result.insert("is_error".into(), json!(is_error));
                blocks.push(Value::Object(result));
            }
            _ => {}
        }
    }
    blocks
}

fn content_block(block: Block) -> Value {
    match block {
        Block::Text(text) => json!({"type": "text", "text": text}),
        Block::Image { media_type, data } => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }),
    }
}

/// The assistant's blocks in order. Reasoning goes back only with its signature (the API
/// refuses thinking it cannot verify: reasoning from another provider, or cut off before it
/// was signed).
fn assistant_blocks(message: &Message) -> Vec<Value> {
    let mut blocks = Vec::new();
    for part in &message.parts {
        match part {
            Part::Reasoning {
                text,
                signature: Some(signature),
                ..
            } => blocks.push(json!({"type": "thinking", "thinking": text, "signature": signature})),
            Part::RedactedReasoning { data } => blocks.push(json!({"type": "redacted_thinking", "data": data})),
            Part::Text { text } if !text.is_empty() => blocks.push(json!({"type": "text", "text": text})),
            Part::ToolUse { id, name, arguments } => {
                // The API wants an object; arguments that were invalid JSON cannot go back as such.
                let input = if arguments.is_object() {
                    arguments.clone()
                } else {
                    json!({})
                };
                blocks.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
            _ => {}
        }
    }
    blocks
}

// ---- The stream ------------------------------------------------------------------------------

/// Reads Messages stream events into a reply.
#[derive(Debug, Default)]
pub(crate) struct MessagesDecoder {
    blocks: Vec<StreamBlock>,
    tool_calls: usize,
    stop_reason: Option<String>,
    input_tokens: u64,
    cache_read_tokens: u64,
    cache_creation_tokens: u64,
    output_tokens: u64,
}

#[derive(Debug)]
struct StreamBlock {
    /// The API's content block index.
    index: u64,
    kind: BlockKind,
    stopped: bool,
}

#[derive(Debug)]
enum BlockKind {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    ToolUse {
        ordinal: usize,
        id: String,
        name: String,
        /// The `input_json_delta` fragments.
        json: String,
        /// The `input` the block started with (used when no fragments come).
        initial: Value,
    },
}

impl MessagesDecoder {
    fn block(&mut self, index: u64) -> Option<&mut StreamBlock> {
        self.blocks.iter_mut().rev().find(|b| b.index == index)
    }

    fn usage_from(&mut self, usage: &Value) {
        let number = |key: &str| usage.get(key).and_then(Value::as_u64);
        if let Some(n) = number("input_tokens") {
            self.input_tokens = n;
        }
        if let Some(n) = number("cache_read_input_tokens") {
            self.cache_read_tokens = n;
        }
        if let Some(n) = number("cache_creation_input_tokens") {
            self.cache_creation_tokens = n;
        }
        if let Some(n) = number("output_tokens") {
            self.output_tokens = n;
        }
    }

    fn start_block(&mut self, index: u64, block: &Value, out: &mut Vec<ModelEvent>) {
        let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        let kind = match block.get("type").and_then(Value::as_str).unwrap_or_default() {
            "text" => {
                let initial = text("text");
                if !initial.is_empty() {
                    out.push(ModelEvent::TextDelta { text: initial.clone() });
                }
                BlockKind::Text(initial)
            }
            "thinking" => {
                let initial = text("thinking");
                if !initial.is_empty() {
                    out.push(ModelEvent::ReasoningDelta { text: initial.clone() });
                }
                BlockKind::Thinking {
                    text: initial,
                    signature: text("signature"),
                }
            }
            "redacted_thinking" => BlockKind::Redacted(text("data")),
            "tool_use" => {
                let ordinal = self.tool_calls;
                self.tool_calls += 1;
                let (id, name) = (text("id"), text("name"));
                out.push(ModelEvent::ToolCallStarted {
                    index: ordinal,
                    id: id.clone(),
                    name: name.clone(),
                });
                BlockKind::ToolUse {
                    ordinal,
                    id,
                    name,
                    json: String::new(),
                    initial: block.get("input").cloned().unwrap_or(Value::Null),
                }
            }
            other => {
                tracing::debug!("ignored a content block of type {other:?}");
                return;
            }
        };
        self.blocks.push(StreamBlock {
            index,
            kind,
            stopped: false,
        });
    }

    fn delta(&mut self, index: u64, delta: &Value, out: &mut Vec<ModelEvent>) {
        let text = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        let kind = delta.get("type").and_then(Value::as_str).unwrap_or_default();
        let Some(block) = self.block(index) else {
            tracing::debug!("a delta for unknown content block {index} was ignored");
            return;
        };
        match (&mut block.kind, kind) {
            (BlockKind::Text(all), "text_delta") => {
                let text = text("text");
                if !text.is_empty() {
                    all.push_str(text);
                    out.push(ModelEvent::TextDelta { text: text.to_string() });
                }
            }
            (BlockKind::Thinking { text: all, .. }, "thinking_delta") => {
                let text = text("thinking");
                if !text.is_empty() {
                    all.push_str(text);
                    out.push(ModelEvent::ReasoningDelta { text: text.to_string() });
                }
            }
            (BlockKind::Thinking { signature, .. }, "signature_delta") => signature.push_str(text("signature")),
            (BlockKind::ToolUse { ordinal, json, .. }, "input_json_delta") => {
                let fragment = text("partial_json");
                if !fragment.is_empty() {
                    json.push_str(fragment);
                    out.push(ModelEvent::ToolCallArgumentsDelta {
                        index: *ordinal,
                        fragment: fragment.to_string(),
                    });
                }
            }
            (_, other) => tracing::debug!("ignored a {other:?} delta"),
        }
    }

    /// The reply's parts in block order; `complete_only` drops tool calls whose block did not
    /// stop (their input may be incomplete), and counts them.
    fn parts(&self, complete_only: bool) -> (Vec<Part>, usize) {
        let mut parts = Vec::new();
        let mut dropped = 0;
        for block in &self.blocks {
            match &block.kind {
                BlockKind::Text(text) if !text.is_empty() => parts.push(Part::Text { text: text.clone() }),
                BlockKind::Text(_) => {}
                BlockKind::Thinking { text, signature } => parts.push(Part::Reasoning {
                    text: text.clone(),
                    signature: (!signature.is_empty()).then(|| signature.clone()),
                    field: None,
                }),
                BlockKind::Redacted(data) => parts.push(Part::RedactedReasoning { data: data.clone() }),
                BlockKind::ToolUse {
                    id,
                    name,
                    json,
                    initial,
                    ..
                } => {
                    if complete_only && !block.stopped {
                        dropped += 1;
                        continue;
                    }
                    let arguments = if json.trim().is_empty() && initial.is_object() {
                        initial.clone()
                    } else {
                        parse_arguments(json)
                    };
                    parts.push(Part::ToolUse {
                        id: id.clone(),
                        name: name.clone(),
                        arguments,
                    });
                }
            }
        }
        (parts, dropped)
    }

    fn usage(&self) -> Usage {
        Usage {
            // All the input, whether read from the cache, written to it, or neither.
            input_tokens: self.input_tokens + self.cache_read_tokens + self.cache_creation_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: self.cache_read_tokens,
        }
    }
}

impl Decoder for MessagesDecoder {
    const END: &'static str = "message_stop";

    fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<bool, String> {
        let data: Value = match serde_json::from_str(&event.data) {
            Ok(data) => data,
            Err(e) => {
                tracing::warn!("skipped an unreadable stream event: {e}");
                return Ok(false);
            }
        };
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default();
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    self.usage_from(usage);
                }
            }
            "content_block_start" => {
                if let Some(block) = data.get("content_block") {
                    self.start_block(index, block, out);
                }
            }
            "content_block_delta" => {
                if let Some(delta) = data.get("delta") {
                    self.delta(index, delta, out);
                }
            }
            "content_block_stop" => {
                if let Some(block) = self.block(index) {
                    block.stopped = true;
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(usage) = data.get("usage") {
                    self.usage_from(usage);
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                let error = data.get("error").unwrap_or(&Value::Null);
                let text = |key: &str| error.get(key).and_then(Value::as_str).unwrap_or("unknown");
                return Err(format!(
                    "the provider reported an error mid-stream ({}): {}",
                    text("type"),
                    text("message")
                ));
            }
            _ => {} // ping, and events this client does not know
        }
        Ok(false)
    }

    fn stopped(&self) -> bool {
        self.stop_reason.is_some()
    }

    fn reply(&self) -> ModelReply {
        ModelReply {
            parts: self.parts(false).0,
            stop_reason: self.stop_reason.clone(),
            usage: self.usage(),
        }
    }

    fn partial(&self) -> (ModelReply, usize) {
        let (parts, dropped) = self.parts(true);
        let reply = ModelReply {
            parts,
            stop_reason: self.stop_reason.clone(),
            usage: self.usage(),
        };
        (reply, dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{RetryKind, RetryPolicy};
    use crate::providers::http::tests::decode;
    use crate::providers::test_server::{self, Answer, Then, fast_retry, serve};

    fn decode_messages(transcript: &str) -> (Result<ModelReply, ProviderError>, Vec<ModelEvent>) {
        decode(MessagesDecoder::default, transcript)
    }

    const TEXT: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":5,"cache_read_input_tokens":100,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" thére 👋"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}

event: message_stop
data: {"type":"message_stop"}

"#;

    const SIGNATURE: &str =
        "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+Xq/SfjVBaD0+qA/2Lm4cAJ9+pVKZ3q8/mF==";

    fn thinking_tool_transcript() -> String {
        format!(
            r#"event: message_start
data: {{"type":"message_start","message":{{"id":"msg_02","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"usage":{{"input_tokens":400,"output_tokens":3}}}}}}

event: content_block_start
data: {{"type":"content_block_start","index":0,"content_block":{{"type":"thinking","thinking":"","signature":""}}}}

event: content_block_delta
data: {{"type":"content_block_delta","index":0,"delta":{{"type":"thinking_delta","thinking":"I should check\n"}}}}

event: content_block_delta
data: {{"type":"content_block_delta","index":0,"delta":{{"type":"thinking_delta","thinking":"the weather in Paris."}}}}

event: content_block_delta
data: {{"type":"content_block_delta","index":0,"delta":{{"type":"signature_delta","signature":"{SIGNATURE}"}}}}

event: content_block_stop
data: {{"type":"content_block_stop","index":0}}

event: content_block_start
data: {{"type":"content_block_start","index":1,"content_block":{{"type":"text","text":""}}}}

event: content_block_delta
data: {{"type":"content_block_delta","index":1,"delta":{{"type":"text_delta","text":"Let me look."}}}}

event: content_block_stop
data: {{"type":"content_block_stop","index":1}}

event: content_block_start
data: {{"type":"content_block_start","index":2,"content_block":{{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{{}}}}}}

event: content_block_delta
data: {{"type":"content_block_delta","index":2,"delta":{{"type":"input_json_delta","partial_json":""}}}}

event: content_block_delta
data: {{"type":"content_block_delta","index":2,"delta":{{"type":"input_json_delta","partial_json":"{{\"location\":"}}}}

event: content_block_delta
data: {{"type":"content_block_delta","index":2,"delta":{{"type":"input_json_delta","partial_json":" \"Paris\"}}"}}}}

event: content_block_stop
data: {{"type":"content_block_stop","index":2}}

event: content_block_start
data: {{"type":"content_block_start","index":3,"content_block":{{"type":"tool_use","id":"toolu_01B","name":"now","input":{{}}}}}}

event: content_block_stop
data: {{"type":"content_block_stop","index":3}}

event: message_delta
data: {{"type":"message_delta","delta":{{"stop_reason":"tool_use","stop_sequence":null}},"usage":{{"output_tokens":89}}}}

event: message_stop
data: {{"type":"message_stop"}}

"#
        )
    }

    const REDACTED: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_03","type":"message","role":"assistant","content":[],"model":"claude-3-7-sonnet","usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP=="}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Done."}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}

event: message_stop
data: {"type":"message_stop"}

"#;

    const ERROR_MID_STREAM: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_04","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Partial answer"}}

event: error
data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}

"#;

    #[test]
    fn streams_text_with_usage() {
        let (reply, events) = decode_messages(TEXT);
        assert_eq!(
            reply.unwrap(),
            ModelReply {
                parts: vec![Part::Text {
                    text: "Hello thére 👋".into()
                }],
                stop_reason: Some("end_turn".into()),
                usage: Usage {
                    input_tokens: 130,
                    output_tokens: 15,
                    cache_read_tokens: 100
                },
            }
        );
        assert_eq!(
            events,
            vec![
                ModelEvent::TextDelta { text: "Hello".into() },
                ModelEvent::TextDelta {
                    text: " thére 👋".into()
                }
            ]
        );
    }

    #[test]
    fn thinking_with_signature_then_tool_uses() {
        let (reply, events) = decode_messages(&thinking_tool_transcript());
        let reply = reply.unwrap();
        assert_eq!(
            reply.parts,
            vec![
                Part::Reasoning {
                    text: "I should check\nthe weather in Paris.".into(),
                    signature: Some(SIGNATURE.into()),
                    field: None
                },
                Part::Text {
                    text: "Let me look.".into()
                },
                Part::ToolUse {
                    id: "toolu_01A".into(),
                    name: "get_weather".into(),
                    arguments: json!({"location": "Paris"})
                },
                Part::ToolUse {
                    id: "toolu_01B".into(),
                    name: "now".into(),
                    arguments: json!({})
                },
            ]
        );
        assert_eq!(reply.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(
            events,
            vec![
                ModelEvent::ReasoningDelta {
                    text: "I should check\n".into()
                },
                ModelEvent::ReasoningDelta {
                    text: "the weather in Paris.".into()
                },
                ModelEvent::TextDelta {
                    text: "Let me look.".into()
                },
                ModelEvent::ToolCallStarted {
                    index: 0,
                    id: "toolu_01A".into(),
                    name: "get_weather".into()
                },
                ModelEvent::ToolCallArgumentsDelta {
                    index: 0,
                    fragment: "{\"location\":".into()
                },
                ModelEvent::ToolCallArgumentsDelta {
                    index: 0,
                    fragment: " \"Paris\"}".into()
                },
                ModelEvent::ToolCallStarted {
                    index: 1,
                    id: "toolu_01B".into(),
                    name: "now".into()
                },
            ]
        );
    }

    #[test]
    fn redacted_thinking_is_kept_opaque() {
        let (reply, _) = decode_messages(REDACTED);
        assert_eq!(
            reply.unwrap().parts,
            vec![
                Part::RedactedReasoning {
                    data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP==".into()
                },
                Part::Text { text: "Done.".into() },
            ]
        );
    }

    #[test]
    fn an_error_event_is_a_cut_with_the_partial() {
        let (reply, events) = decode_messages(ERROR_MID_STREAM);
        let Err(ProviderError::StreamCut { partial, reason }) = reply else {
            panic!("expected a cut, got {reply:?}");
        };
        assert_eq!(
            partial.parts,
            vec![Part::Text {
                text: "Partial answer".into()
            }]
        );
        assert_eq!(
            reason,
            "the provider reported an error mid-stream (overloaded_error): Overloaded"
        );
        assert_eq!(events.len(), 1);
    }

    #[test]
    fn a_cut_inside_a_tool_call_drops_it() {
        let transcript = thinking_tool_transcript();
        let cut = &transcript[..transcript.find("\"partial_json\":\" \\\"Paris").unwrap()];
        let cut = &cut[..cut.rfind("event:").unwrap()];
        let (reply, _) = decode_messages(cut);
        let Err(ProviderError::StreamCut { partial, reason }) = reply else {
            panic!("expected a cut, got {reply:?}");
        };
        assert_eq!(partial.parts.len(), 2, "reasoning and text: {:?}", partial.parts);
        assert!(reason.contains("before message_stop"), "{reason}");
        assert!(
            reason.contains("a tool call whose arguments may be incomplete was dropped"),
            "{reason}"
        );
    }

    // ---- Request bodies ----

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: "claude-test".into(),
            system: Some("Be brief.".into()),
            messages,
            tools: vec![],
            max_tokens: None,
        }
    }

    #[test]
    fn a_message_with_attachments_is_sent_as_blocks() {
        let body = request_body(&request(vec![super::super::content::message_with_attachments()]), None);
        assert_eq!(
            body["messages"][0],
            json!({"role": "user", "content": [
                {"type": "text", "text": "Summarise"},
                {"type": "text", "text": "[file:///a.md from docs]\n# A"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            ]})
        );
    }

    #[test]
    fn thinking_goes_back_byte_for_byte() {
        let (reply, _) = decode_messages(&thinking_tool_transcript());
        let assistant = Message {
            role: Role::Assistant,
            parts: reply.unwrap().parts,
        };
        let results = Message {
            role: Role::Tool,
            parts: vec![
                Part::ToolResult {
                    tool_use_id: "toolu_01A".into(),
                    content: vec![json!({"type": "text", "text": "18°C"})],
                    is_error: false,
                },
                Part::ToolResult {
                    tool_use_id: "toolu_01B".into(),
                    content: vec![json!({"type": "text", "text": "noon"})],
                    is_error: false,
                },
            ],
        };
        let body = request_body(&request(vec![Message::user("Weather?"), assistant, results]), None);
        assert_eq!(
            body["messages"][1],
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "I should check\nthe weather in Paris.", "signature": SIGNATURE},
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"location": "Paris"}},
                {"type": "tool_use", "id": "toolu_01B", "name": "now", "input": {}},
            ]})
        );
        assert!(serde_json::to_string(&body).unwrap().contains(SIGNATURE));
        assert_eq!(body["messages"][2]["role"], "user");
        assert_eq!(body["messages"][2]["content"].as_array().unwrap().len(), 2);
        let (reply, _) = decode_messages(REDACTED);
        let assistant = Message {
            role: Role::Assistant,
            parts: reply.unwrap().parts,
        };
        let body = request_body(&request(vec![Message::user("q"), assistant]), None);
        assert_eq!(
            body["messages"][1]["content"][0],
            json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP=="})
        );
    }

    #[test]
    fn same_role_messages_merge_and_unsigned_reasoning_is_not_sent() {
        let conversation = vec![
            Message::user("one"),
            Message::user("two"),
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolUse {
                    id: "toolu_1".into(),
                    name: "f".into(),
                    arguments: Value::String("{broken".into()),
                }],
            },
            Message {
                role: Role::Tool,
                parts: vec![Part::ToolResult {
                    tool_use_id: "toolu_1".into(),
                    content: vec![],
                    is_error: true,
                }],
            },
            Message::user("and then"),
            Message {
                role: Role::Assistant,
                parts: vec![Part::Reasoning {
                    text: "from another provider".into(),
                    signature: None,
                    field: Some("reasoning".into()),
                }],
            },
            Message::user("again"),
        ];
        let body = request_body(&request(conversation), None);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true},
                    {"type": "text", "text": "and then"},
                    {"type": "text", "text": "again"},
                ]},
            ])
        );
    }

    #[test]
    fn tool_results_carry_images_and_errors() {
        let results = Message {
            role: Role::Tool,
            parts: vec![
                Part::ToolResult {
                    tool_use_id: "toolu_1".into(),
                    content: vec![
                        json!({"type": "text", "text": "A chart"}),
                        json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
                        json!({"type": "resource", "resource": {"uri": "mem://x", "mimeType": "text/plain", "text": "embedded"}}),
                        json!({"type": "resource_link", "uri": "file:///report.pdf"}),
                    ],
                    is_error: false,
                },
                Part::ToolResult {
                    tool_use_id: "toolu_2".into(),
                    content: vec![json!({"type": "text", "text": "permission denied"})],
                    is_error: true,
                },
            ],
        };
        let body = request_body(&request(vec![Message::user("go"), results]), None);
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                    {"type": "text", "text": "A chart"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                    {"type": "text", "text": "embedded"},
                    {"type": "text", "text": "[resource link: file:///report.pdf]"},
                ], "is_error": false},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": [
                    {"type": "text", "text": "permission denied"},
                ], "is_error": true},
                {"type": "text", "text": "go"},
            ]),
            "tool results open the merged user message"
        );
    }

    #[test]
    fn system_tools_and_max_tokens() {
        let mut req = request(vec![Message::user("hi")]);
        let body = request_body(&req, None);
        assert_eq!(
            body,
            json!({
                "model": "claude-test",
                "max_tokens": 8192,
                "system": "Be brief.",
                "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
                "stream": true,
            })
        );
        let schema = json!({"type": "object", "properties": {}});
        req.tools = vec![ToolSpec {
            name: "t".into(),
            description: "d".into(),
            input_schema: schema.clone(),
        }];
        assert_eq!(
            request_body(&req, Some(1000))["tools"],
            json!([{"name": "t", "description": "d", "input_schema": schema}])
        );
        assert_eq!(request_body(&req, Some(1000))["max_tokens"], 1000);
        req.max_tokens = Some(50);
        assert_eq!(request_body(&req, Some(1000))["max_tokens"], 50);
    }

    // ---- HTTP ----

    fn provider(base_url: &str, retry: RetryPolicy) -> AnthropicProvider {
        AnthropicProvider::new(ProviderConfig {
            kind: ProviderKind::Anthropic,
            base_url: Some(base_url.to_string()),
            api_key: Some(" sk-ant-test\n".into()),
            retry,
            max_tokens: None,
        })
    }

    async fn run(provider: &AnthropicProvider) -> (Result<ModelReply, ProviderError>, Vec<ModelEvent>) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let result = provider
            .stream(&request(vec![Message::user("hi")]), tx, CancellationToken::new())
            .await;
        let mut events = Vec::new();
        while let Ok(event) = rx.try_recv() {
            events.push(event);
        }
        (result, events)
    }

    #[tokio::test]
    async fn http_overloaded_529_then_a_stream_with_headers() {
        let server = serve(vec![
            test_server::json(
                529,
                &[],
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ),
            test_server::sse(TEXT, true, Then::Close),
        ])
        .await;
        let provider = provider(&server.base_url, fast_retry(3));
        let (result, events) = run(&provider).await;
        assert_eq!(
            result.unwrap().parts,
            vec![Part::Text {
                text: "Hello thére 👋".into()
            }]
        );
        assert!(
            matches!(&events[0], ModelEvent::Retrying { attempt: 2, wait_ms: 1, kind: RetryKind::ServerError, reason } if reason.contains("529"))
        );
        let request = &server.requests()[1];
        assert!(request.head.starts_with("POST /v1/messages "), "{}", request.head);
        assert_eq!(request.header("x-api-key").as_deref(), Some("sk-ant-test"));
        assert_eq!(request.header("anthropic-version").as_deref(), Some(API_VERSION));
        assert_eq!(request.header("authorization"), None);
        assert_eq!(request.json()["max_tokens"], 8192);
    }

    #[tokio::test]
    async fn http_401_and_unknown_model() {
        let server = serve(vec![
            test_server::json(
                401,
                &[],
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
            ),
            test_server::json(
                404,
                &[],
                r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-test"}}"#,
            ),
        ])
        .await;
        let provider = provider(&server.base_url, fast_retry(3));
        let (result, _) = run(&provider).await;
        assert!(
            matches!(&result, Err(ProviderError::Unauthorized(m)) if m == "invalid x-api-key"),
            "{result:?}"
        );
        let (result, _) = run(&provider).await;
        assert!(
            matches!(&result, Err(ProviderError::UnknownModel { model, message }) if model == "claude-test" && message == "model: claude-test"),
            "{result:?}"
        );
    }

    #[tokio::test]
    async fn http_connection_closed_before_message_stop_is_a_cut() {
        let partial = TEXT.split("event: content_block_stop").next().unwrap();
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
        let server = serve(vec![Answer {
            bytes: [head, partial].concat().into_bytes(),
            then: Then::Close,
        }])
        .await;
        let provider = provider(&server.base_url, fast_retry(3));
        let (result, _) = run(&provider).await;
        let Err(ProviderError::StreamCut { partial, reason }) = result else {
            panic!("expected a cut, got {result:?}");
        };
        assert_eq!(
            partial.parts,
            vec![Part::Text {
                text: "Hello thére 👋".into()
            }]
        );
        assert_eq!(reason, "the stream ended before message_stop");
        assert_eq!(server.requests().len(), 1);
    }

    #[tokio::test]
    async fn http_list_models_follows_pages() {
        let server = serve(vec![
            test_server::json(
                200,
                &[],
                r#"{"data":[{"type":"model","id":"claude-a","display_name":"A"}],"has_more":true,"first_id":"claude-a","last_id":"claude-a"}"#,
            ),
            test_server::json(
                200,
                &[],
                r#"{"data":[{"type":"model","id":"claude-b","display_name":"B"}],"has_more":false,"first_id":"claude-b","last_id":"claude-b"}"#,
            ),
        ])
        .await;
        let provider = provider(&server.base_url, fast_retry(1));
        assert_eq!(provider.list_models().await.unwrap(), vec!["claude-a", "claude-b"]);
        let requests = server.requests();
        assert!(
            requests[0].head.starts_with("GET /v1/models?limit=1000 "),
            "{}",
            requests[0].head
        );
        assert!(
            requests[1]
                .head
                .starts_with("GET /v1/models?limit=1000&after_id=claude-a ")
        );
        assert_eq!(requests[1].header("x-api-key").as_deref(), Some("sk-ant-test"));
    }
}
