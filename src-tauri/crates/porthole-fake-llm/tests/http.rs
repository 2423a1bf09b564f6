//! The fake LLM over real HTTP on loopback, parsed the way a client would.

use std::time::{Duration, Instant};

use futures::StreamExt;
use porthole_fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use serde_json::{Value, json};

/// One server-sent event.
#[derive(Debug)]
struct Sse {
    event: Option<String>,
    data: String,
}

/// A tiny SSE parser: events are separated by a blank line; `event:` and `data:` fields.
fn parse_sse(text: &str) -> Vec<Sse> {
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut event = None;
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    event = Some(v.trim().to_string());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            Sse {
                event,
                data: data.join("\n"),
            }
        })
        .collect()
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

async fn openai(llm: &FakeLlm, body: Value, key: Option<&str>) -> reqwest::Response {
    let mut req = client()
        .post(format!("{}/chat/completions", llm.base_url()))
        .json(&body);
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    req.send().await.unwrap()
}

async fn anthropic(llm: &FakeLlm, body: Value, key: Option<&str>) -> reqwest::Response {
    let mut req = client()
        .post(format!("{}/messages", llm.base_url()))
        .header("anthropic-version", "2023-06-01")
        .json(&body);
    if let Some(key) = key {
        req = req.header("x-api-key", key);
    }
    req.send().await.unwrap()
}

fn openai_body() -> Value {
    json!({"model": "gpt-test", "stream": true, "messages": [{"role": "user", "content": "hi"}]})
}

fn anthropic_body() -> Value {
    json!({"model": "claude-test", "max_tokens": 100, "stream": true, "messages": [{"role": "user", "content": "hi"}]})
}

/// The chunk objects of an OpenAI stream; asserts it ends with `[DONE]`.
async fn openai_chunks(response: reqwest::Response) -> Vec<Value> {
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let events = parse_sse(&response.text().await.unwrap());
    assert_eq!(events.last().unwrap().data, "[DONE]", "stream must end with [DONE]");
    events[..events.len() - 1]
        .iter()
        .map(|e| {
            assert!(e.event.is_none());
            serde_json::from_str(&e.data).unwrap()
        })
        .collect()
}

/// `(event name, data)` of an Anthropic stream; asserts each `event:` matches the data's `type`.
async fn anthropic_events(response: reqwest::Response) -> Vec<(String, Value)> {
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    parse_sse(&response.text().await.unwrap())
        .into_iter()
        .map(|e| {
            let data: Value = serde_json::from_str(&e.data).unwrap();
            let name = e.event.expect("every Anthropic event is named");
            assert_eq!(data["type"], name.as_str());
            (name, data)
        })
        .collect()
}

fn names(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(n, _)| n.as_str()).collect()
}

fn openai_content(chunks: &[Value]) -> String {
    chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect()
}

fn anthropic_text(events: &[(String, Value)], field: &str) -> String {
    events.iter().filter_map(|(_, d)| d["delta"][field].as_str()).collect()
}

#[tokio::test]
async fn openai_text_stream_concatenates_and_ends_with_done() {
    let llm = FakeLlm::start(Script::new(vec![Reply::text("Hello from the fake model!")]))
        .await
        .unwrap();
    let chunks = openai_chunks(openai(&llm, openai_body(), None).await).await;
    assert!(chunks.len() >= 5, "several deltas expected, got {chunks:?}");
    for chunk in &chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert!(chunk["id"].as_str().unwrap().starts_with("chatcmpl-"));
        assert!(chunk["created"].as_u64().unwrap() > 0);
        assert_eq!(chunk["model"], "gpt-test");
        assert_eq!(chunk["choices"][0]["index"], 0);
        assert!(chunk.get("usage").is_none());
    }
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(openai_content(&chunks), "Hello from the fake model!");
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert_eq!(last["choices"][0]["delta"], json!({}));
    assert!(
        chunks[..chunks.len() - 1]
            .iter()
            .all(|c| c["choices"][0]["finish_reason"].is_null())
    );
}

#[tokio::test]
async fn openai_tool_calls_stream_fragments_and_indices() {
    let reply = Reply::ToolCalls {
        text: Some("Let me check.".into()),
        calls: vec![
            FakeToolCall::new("call_1", "get_weather", r#"{"city":"Paris","unit":"celsius"}"#),
            FakeToolCall::new("call_2", "get_time", r#"{"tz":"Europe/Paris"}"#),
        ],
    };
    let llm = FakeLlm::start(Script::new(vec![reply])).await.unwrap();
    let chunks = openai_chunks(openai(&llm, openai_body(), None).await).await;
    assert_eq!(openai_content(&chunks), "Let me check.");

    let deltas: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"].as_array())
        .flatten()
        .collect();
    for (index, id, name, args) in [
        (0, "call_1", "get_weather", json!({"city": "Paris", "unit": "celsius"})),
        (1, "call_2", "get_time", json!({"tz": "Europe/Paris"})),
    ] {
        let mine: Vec<&&Value> = deltas.iter().filter(|d| d["index"] == index).collect();
        assert!(mine.len() >= 3, "a header delta and at least two fragments: {mine:?}");
        let first = mine[0];
        assert_eq!(first["id"], id);
        assert_eq!(first["type"], "function");
        assert_eq!(first["function"]["name"], name);
        assert_eq!(first["function"]["arguments"], "");
        for later in &mine[1..] {
            assert!(later.get("id").is_none() && later.get("type").is_none());
            assert!(later["function"].get("name").is_none());
        }
        let joined: String = mine
            .iter()
            .map(|d| d["function"]["arguments"].as_str().unwrap())
            .collect();
        assert_eq!(serde_json::from_str::<Value>(&joined).unwrap(), args);
    }
    assert_eq!(chunks.last().unwrap()["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn openai_include_usage_sends_a_final_usage_chunk() {
    let llm = FakeLlm::start(Script::new(vec![Reply::text("one two three")]))
        .await
        .unwrap();
    let mut body = openai_body();
    body["stream_options"] = json!({"include_usage": true});
    let chunks = openai_chunks(openai(&llm, body, None).await).await;
    let (usage_chunk, rest) = chunks.split_last().unwrap();
    assert_eq!(usage_chunk["choices"], json!([]));
    assert_eq!(usage_chunk["object"], "chat.completion.chunk");
    let usage = &usage_chunk["usage"];
    let prompt = usage["prompt_tokens"].as_u64().unwrap();
    let completion = usage["completion_tokens"].as_u64().unwrap();
    assert!(prompt > 0 && completion > 0);
    assert_eq!(usage["total_tokens"].as_u64().unwrap(), prompt + completion);
    assert!(rest.iter().all(|c| c["usage"].is_null()));
    assert_eq!(rest.last().unwrap()["choices"][0]["finish_reason"], "stop");
}

#[tokio::test]
async fn openai_reasoning_content_precedes_text() {
    let reply = Reply::Reasoning {
        thinking: "Considering the question".into(),
        text: "The answer".into(),
    };
    let llm = FakeLlm::start(Script::new(vec![reply])).await.unwrap();
    let chunks = openai_chunks(openai(&llm, openai_body(), None).await).await;
    let reasoning: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["reasoning_content"].as_str())
        .collect();
    assert_eq!(reasoning, "Considering the question");
    assert_eq!(openai_content(&chunks), "The answer");
    let last_reasoning = chunks
        .iter()
        .rposition(|c| c["choices"][0]["delta"]["reasoning_content"].is_string());
    let first_text = chunks.iter().position(|c| {
        c["choices"][0]["delta"]["content"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    });
    assert!(last_reasoning.unwrap() < first_text.unwrap());
}

#[tokio::test]
async fn anthropic_text_event_order() {
    let llm = FakeLlm::start(Script::new(vec![Reply::text("Hello from Claude's stand-in")]))
        .await
        .unwrap();
    let events = anthropic_events(anthropic(&llm, anthropic_body(), None).await).await;
    let n = names(&events);
    assert_eq!(n[..3], ["message_start", "ping", "content_block_start"]);
    assert!(n[3..n.len() - 3].iter().all(|e| *e == "content_block_delta") && n.len() >= 8);
    assert_eq!(
        n[n.len() - 3..],
        ["content_block_stop", "message_delta", "message_stop"]
    );

    let message = &events[0].1["message"];
    assert!(message["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(message["type"], "message");
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["model"], "claude-test");
    assert_eq!(message["content"], json!([]));
    assert!(message["stop_reason"].is_null());
    assert!(message["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(message["usage"]["output_tokens"].is_u64());

    assert_eq!(events[2].1["index"], 0);
    assert_eq!(events[2].1["content_block"], json!({"type": "text", "text": ""}));
    assert!(
        events[3..n.len() - 3]
            .iter()
            .all(|(_, d)| d["delta"]["type"] == "text_delta" && d["index"] == 0)
    );
    assert_eq!(anthropic_text(&events, "text"), "Hello from Claude's stand-in");
    let delta = &events[n.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert!(delta["usage"]["output_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn anthropic_tool_use_streams_input_json_delta() {
    let reply = Reply::ToolCalls {
        text: Some("Checking.".into()),
        calls: vec![
            FakeToolCall::new("toolu_1", "get_weather", r#"{"city":"Oslo"}"#),
            FakeToolCall::new("toolu_2", "get_time", r#"{"tz":"UTC"}"#),
        ],
    };
    let llm = FakeLlm::start(Script::new(vec![reply])).await.unwrap();
    let events = anthropic_events(anthropic(&llm, anthropic_body(), None).await).await;
    let starts: Vec<&Value> = events
        .iter()
        .filter(|(n, _)| n == "content_block_start")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(starts.len(), 3);
    assert_eq!(starts[0]["content_block"]["type"], "text");
    for (i, (id, name, args)) in [
        ("toolu_1", "get_weather", json!({"city": "Oslo"})),
        ("toolu_2", "get_time", json!({"tz": "UTC"})),
    ]
    .into_iter()
    .enumerate()
    {
        let index = i + 1;
        assert_eq!(starts[index]["index"], index);
        assert_eq!(
            starts[index]["content_block"],
            json!({"type": "tool_use", "id": id, "name": name, "input": {}})
        );
        let fragments: Vec<&str> = events
            .iter()
            .filter(|(n, d)| n == "content_block_delta" && d["index"] == index)
            .map(|(_, d)| {
                assert_eq!(d["delta"]["type"], "input_json_delta");
                d["delta"]["partial_json"].as_str().unwrap()
            })
            .collect();
        assert!(fragments.len() >= 2);
        assert_eq!(serde_json::from_str::<Value>(&fragments.concat()).unwrap(), args);
        // Each block is stopped before the next one starts.
        let stop = events
            .iter()
            .position(|(n, d)| n == "content_block_stop" && d["index"] == index)
            .unwrap();
        let start = events
            .iter()
            .position(|(n, d)| n == "content_block_start" && d["index"] == index)
            .unwrap();
        assert!(start < stop);
    }
    let n = names(&events);
    assert_eq!(n[n.len() - 2..], ["message_delta", "message_stop"]);
    assert_eq!(events[n.len() - 2].1["delta"]["stop_reason"], "tool_use");
}

#[tokio::test]
async fn anthropic_thinking_block_gets_a_signature() {
    let reply = Reply::Reasoning {
        thinking: "Let me think this through".into(),
        text: "Done thinking".into(),
    };
    let llm = FakeLlm::start(Script::new(vec![reply])).await.unwrap();
    let events = anthropic_events(anthropic(&llm, anthropic_body(), None).await).await;
    let block0: Vec<&Value> = events.iter().filter(|(_, d)| d["index"] == 0).map(|(_, d)| d).collect();
    assert_eq!(block0[0]["type"], "content_block_start");
    assert_eq!(block0[0]["content_block"]["type"], "thinking");
    let kinds: Vec<&str> = block0[1..]
        .iter()
        .map(|d| d["delta"]["type"].as_str().unwrap_or(d["type"].as_str().unwrap()))
        .collect();
    let k = kinds.len();
    assert!(kinds[..k - 2].iter().all(|t| *t == "thinking_delta"));
    assert_eq!(kinds[k - 2..], ["signature_delta", "content_block_stop"]);
    assert!(
        block0[k - 1]["delta"]["signature"]
            .as_str()
            .unwrap()
            .starts_with("sig-")
    );
    assert_eq!(anthropic_text(&events, "thinking"), "Let me think this through");
    assert_eq!(anthropic_text(&events, "text"), "Done thinking");
    let text_start = events
        .iter()
        .find(|(n, d)| n == "content_block_start" && d["index"] == 1)
        .unwrap();
    assert_eq!(text_start.1["content_block"]["type"], "text");
    assert_eq!(events[events.len() - 2].1["delta"]["stop_reason"], "end_turn");
}

#[tokio::test]
async fn wrong_api_key_gets_401_in_both_formats() {
    let script = Script {
        api_key: Some("sk-right".into()),
        ..Script::new(vec![Reply::text("ok"), Reply::text("ok"), Reply::text("ok")])
    };
    let llm = FakeLlm::start(script).await.unwrap();

    let r = openai(&llm, openai_body(), Some("sk-wrong")).await;
    assert_eq!(r.status(), 401);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["type"], "invalid_request_error");
    assert_eq!(e["error"]["code"], "invalid_api_key");
    assert!(e["error"]["message"].is_string() && e["error"].get("param").is_some());
    assert_eq!(openai(&llm, openai_body(), None).await.status(), 401);

    let r = anthropic(&llm, anthropic_body(), Some("sk-wrong")).await;
    assert_eq!(r.status(), 401);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["type"], "error");
    assert_eq!(e["error"]["type"], "authentication_error");
    assert!(e["error"]["message"].is_string());
    assert_eq!(anthropic(&llm, anthropic_body(), None).await.status(), 401);
    // OpenAI's header name is not Anthropic's, nor the other way round.
    let r = client()
        .post(format!("{}/chat/completions", llm.base_url()))
        .header("x-api-key", "sk-right")
        .json(&openai_body())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["code"], "invalid_api_key");

    // Rejected requests consume nothing; the right key gets the replies.
    assert_eq!(llm.remaining_replies(), 3);
    assert_eq!(
        openai_content(&openai_chunks(openai(&llm, openai_body(), Some("sk-right")).await).await),
        "ok"
    );
    assert_eq!(
        anthropic_text(
            &anthropic_events(anthropic(&llm, anthropic_body(), Some("sk-right")).await).await,
            "text"
        ),
        "ok"
    );
    // Recent official Anthropic SDKs send the key as a bearer token; that is accepted too.
    let r = client()
        .post(format!("{}/messages", llm.base_url()))
        .header("anthropic-version", "2023-06-01")
        .bearer_auth("sk-right")
        .json(&anthropic_body())
        .send()
        .await
        .unwrap();
    assert_eq!(anthropic_text(&anthropic_events(r).await, "text"), "ok");
}

#[tokio::test]
async fn unknown_model_gets_404_in_both_formats() {
    let script = Script {
        models: vec!["gpt-test".into(), "claude-test".into()],
        ..Script::new(vec![Reply::text("x")])
    };
    let llm = FakeLlm::start(script).await.unwrap();
    let mut body = openai_body();
    body["model"] = json!("gpt-nope");
    let r = openai(&llm, body, None).await;
    assert_eq!(r.status(), 404);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["code"], "model_not_found");
    assert_eq!(e["error"]["type"], "invalid_request_error");

    let mut body = anthropic_body();
    body["model"] = json!("claude-nope");
    let r = anthropic(&llm, body, None).await;
    assert_eq!(r.status(), 404);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["type"], "error");
    assert_eq!(e["error"]["type"], "not_found_error");

    assert_eq!(llm.remaining_replies(), 1);
    assert_eq!(
        openai_content(&openai_chunks(openai(&llm, openai_body(), None).await).await),
        "x"
    );
}

#[tokio::test]
async fn models_are_listed_in_each_format() {
    let script = Script {
        models: vec!["m-a".into(), "m-b".into()],
        ..Script::new(vec![Reply::text("kept")])
    };
    let llm = FakeLlm::start(script).await.unwrap();
    let r = client().get(format!("{}/models", llm.base_url())).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["object"], "list");
    let ids: Vec<&str> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["m-a", "m-b"]);
    assert_eq!(v["data"][0]["object"], "model");

    let r = client()
        .get(format!("{}/models", llm.base_url()))
        .header("anthropic-version", "2023-06-01")
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v["data"][1],
        json!({"type": "model", "id": "m-b", "display_name": "m-b", "created_at": "2025-01-01T00:00:00Z"})
    );
    assert_eq!(v["has_more"], false);
    assert_eq!(v["first_id"], "m-a");
    assert_eq!(v["last_id"], "m-b");
    assert_eq!(llm.remaining_replies(), 1, "GET /models consumes no reply");
}

#[tokio::test]
async fn status_reply_429_has_retry_after_in_both_formats() {
    let status = Reply::Status {
        status: 429,
        retry_after: Some(7),
        message: "slow down".into(),
    };
    let llm = FakeLlm::start(Script::new(vec![status.clone(), status, Reply::status(529, "busy")]))
        .await
        .unwrap();

    let r = openai(&llm, openai_body(), None).await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "7");
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["message"], "slow down");
    assert_eq!(e["error"]["code"], "rate_limit_exceeded");

    let r = anthropic(&llm, anthropic_body(), None).await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "7");
    let e: Value = r.json().await.unwrap();
    assert_eq!(
        e,
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
    );

    let r = anthropic(&llm, anthropic_body(), None).await;
    assert_eq!(r.status(), 529);
    assert!(r.headers().get("retry-after").is_none());
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["type"], "overloaded_error");
}

/// Reads a streamed body until it ends; returns the text read and whether it ended in an error.
async fn read_until_end(response: reqwest::Response) -> (String, bool) {
    let mut stream = response.bytes_stream();
    let mut text = String::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(bytes) => text.push_str(&String::from_utf8_lossy(&bytes)),
            Err(_) => return (text, true),
        }
    }
    (text, false)
}

#[tokio::test]
async fn cut_drops_the_connection_before_the_stream_ends() {
    let text = "This sentence will never be finished by the model";
    let llm = FakeLlm::start(Script::new(vec![
        Reply::Cut { text: text.into() },
        Reply::Cut { text: text.into() },
    ]))
    .await
    .unwrap();

    let (body, errored) = read_until_end(openai(&llm, openai_body(), None).await).await;
    assert!(errored, "the client must see a broken body, got a clean end: {body}");
    assert!(!body.contains("[DONE]"));
    let chunks: Vec<Value> = parse_sse(&body)
        .iter()
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect();
    let sent = openai_content(&chunks);
    assert!(
        !sent.is_empty() && text.starts_with(&sent) && sent.len() < text.len(),
        "{sent:?}"
    );
    assert!(chunks.iter().all(|c| c["choices"][0]["finish_reason"].is_null()));

    let (body, errored) = read_until_end(anthropic(&llm, anthropic_body(), None).await).await;
    assert!(errored, "the client must see a broken body, got a clean end: {body}");
    assert!(!body.contains("message_stop") && !body.contains("message_delta"));
    assert!(body.contains("text_delta"));
}

#[tokio::test]
async fn echo_tool_results_in_both_formats() {
    let llm = FakeLlm::start(Script::new(vec![Reply::EchoToolResults, Reply::EchoToolResults]))
        .await
        .unwrap();
    let body = json!({
        "model": "gpt-test",
        "stream": true,
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{}"}},
                {"id": "call_2", "type": "function", "function": {"name": "t", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21C"},
            {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "12:00"}]}
        ]
    });
    let chunks = openai_chunks(openai(&llm, body, None).await).await;
    assert_eq!(openai_content(&chunks), "Tool results: sunny, 21C\n12:00");

    let body = json!({
        "model": "claude-test",
        "max_tokens": 100,
        "stream": true,
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "rainy, 9C"}]},
                {"type": "text", "text": "(not a tool result)"}
            ]}
        ]
    });
    let events = anthropic_events(anthropic(&llm, body, None).await).await;
    assert_eq!(anthropic_text(&events, "text"), "Tool results: rainy, 9C");
}

#[tokio::test]
async fn requests_are_recorded_with_lowercase_headers() {
    let llm = FakeLlm::start(Script::new(vec![Reply::text("a")])).await.unwrap();
    let _ = openai_chunks(
        client()
            .post(format!("{}/chat/completions", llm.base_url()))
            .header("X-Custom-Header", "Value")
            .json(&openai_body())
            .send()
            .await
            .unwrap(),
    )
    .await;
    client().get(format!("{}/models", llm.base_url())).send().await.unwrap();
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].headers.get("x-custom-header").map(String::as_str),
        Some("Value")
    );
    assert_eq!(requests[0].header("Content-Type"), Some("application/json"));
    assert_eq!(requests[0].body, openai_body());
    assert_eq!(requests[1].method, "GET");
    assert_eq!(requests[1].path, "/v1/models");
    assert_eq!(requests[1].body, Value::Null);
}

#[tokio::test]
async fn exhausted_script_gives_500_in_each_format_and_push_refills_it() {
    let llm = FakeLlm::start(Script::default()).await.unwrap();
    let r = openai(&llm, openai_body(), None).await;
    assert_eq!(r.status(), 500);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["message"], "fake LLM script exhausted");
    assert_eq!(e["error"]["type"], "server_error");

    let r = anthropic(&llm, anthropic_body(), None).await;
    assert_eq!(r.status(), 500);
    let e: Value = r.json().await.unwrap();
    assert_eq!(
        e,
        json!({"type": "error", "error": {"type": "api_error", "message": "fake LLM script exhausted"}})
    );

    llm.push(Reply::text("pushed later"));
    assert_eq!(
        openai_content(&openai_chunks(openai(&llm, openai_body(), None).await).await),
        "pushed later"
    );
    assert_eq!(llm.requests().len(), 3);
}

#[tokio::test]
async fn non_streaming_requests_are_rejected() {
    let llm = FakeLlm::start(Script::new(vec![Reply::text("a")])).await.unwrap();
    let mut body = openai_body();
    body.as_object_mut().unwrap().remove("stream");
    let r = openai(&llm, body, None).await;
    assert_eq!(r.status(), 400);
    let e: Value = r.json().await.unwrap();
    assert!(e["error"]["message"].as_str().unwrap().contains("only streams"));
    assert_eq!(e["error"]["param"], "stream");

    let mut body = anthropic_body();
    body["stream"] = json!(false);
    let r = anthropic(&llm, body, None).await;
    assert_eq!(r.status(), 400);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["type"], "invalid_request_error");
    assert_eq!(llm.remaining_replies(), 1);
}

#[tokio::test]
async fn hang_sends_one_delta_then_stalls_until_shutdown() {
    let llm = FakeLlm::start(Script::new(vec![Reply::Hang])).await.unwrap();
    let response = openai(&llm, openai_body(), None).await;
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let mut text = String::new();
    while !text.contains("Hang on") {
        let bytes = tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        text.push_str(&String::from_utf8_lossy(&bytes));
    }
    assert!(
        tokio::time::timeout(Duration::from_millis(300), stream.next())
            .await
            .is_err(),
        "must not finish"
    );
    llm.shutdown().await;
    let end = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("shutdown closes the stream");
    assert!(!matches!(end, Some(Ok(_))), "no more data after shutdown: {end:?}");
}

#[tokio::test]
async fn chunk_delay_paces_the_stream_and_last_chunk_time_is_recorded() {
    let script = Script {
        chunk_delay_ms: 40,
        ..Script::new(vec![Reply::text("a b c d e f g h")])
    };
    let llm = FakeLlm::start(script).await.unwrap();
    assert!(llm.last_chunk_sent_at().is_none());
    let started = Instant::now();
    let response = openai(&llm, openai_body(), None).await;
    let chunks = openai_chunks(response).await;
    let received = Instant::now();
    // role + 4 deltas + finish + [DONE] = 7 events, 6 pauses.
    assert_eq!(chunks.len(), 6);
    assert!(received - started >= Duration::from_millis(6 * 40));
    let sent = llm.last_chunk_sent_at().expect("recorded");
    assert!(sent > started && sent <= received);
    assert!(
        received - sent < Duration::from_millis(40),
        "the final chunk is the last thing sent"
    );
}

#[tokio::test]
async fn anthropic_sdk_style_base_url_with_doubled_v1_is_accepted() {
    let llm = FakeLlm::start(Script::new(vec![Reply::text("sdk")])).await.unwrap();
    let r = client()
        .post(format!("{}/v1/messages", llm.base_url()))
        .header("anthropic-version", "2023-06-01")
        .json(&anthropic_body())
        .send()
        .await
        .unwrap();
    assert_eq!(anthropic_text(&anthropic_events(r).await, "text"), "sdk");
    let r = client()
        .post(format!("{}/completions", llm.base_url()))
        .json(&openai_body())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn binary_prints_listening_line_serves_and_records() {
    use tokio::io::AsyncBufReadExt;

    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("script.json");
    let record_path = dir.path().join("requests.jsonl");
    std::fs::write(
        &script_path,
        json!({
            "replies": [
                {"kind": "text", "text": "from the binary"},
                {"kind": "tool_calls", "calls": [{"id": "c1", "name": "echo", "arguments": {"x": 1}}]}
            ],
            "apiKey": "k1",
            "chunkDelayMs": 1
        })
        .to_string(),
    )
    .unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_porthole-fake-llm"))
        .arg("--script")
        .arg(&script_path)
        .arg("--record")
        .arg(&record_path)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let base = line.strip_prefix("listening ").expect("listening line");
    assert!(base.starts_with("http://127.0.0.1:") && base.ends_with("/v1"), "{line}");

    let response = client()
        .post(format!("{base}/chat/completions"))
        .bearer_auth("k1")
        .json(&openai_body())
        .send()
        .await
        .unwrap();
    assert_eq!(openai_content(&openai_chunks(response).await), "from the binary");
    let response = client()
        .post(format!("{base}/messages"))
        .header("x-api-key", "k1")
        .header("anthropic-version", "2023-06-01")
        .json(&anthropic_body())
        .send()
        .await
        .unwrap();
    let events = anthropic_events(response).await;
    assert_eq!(anthropic_text(&events, "partial_json"), r#"{"x":1}"#);

    let recorded: Vec<Value> = std::fs::read_to_string(&record_path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0]["path"], "/v1/chat/completions");
    assert_eq!(recorded[0]["headers"]["authorization"], "Bearer k1");
    assert_eq!(recorded[1]["body"]["model"], "claude-test");
    assert!(child.try_wait().unwrap().is_none(), "still serving");

    child.kill().await.unwrap();
}
