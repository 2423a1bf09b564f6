//! Checking the params of the `ui/*` requests a view sends. Each check returns what the app is
//! given, or the error message the view gets (with [`super::rpc::INVALID_PARAMS`] unless noted).

use serde_json::{Map, Value, json};

use crate::display::{DisplayMode, MAX_VIEW_HEIGHT};

/// Links longer than this are not opened.
pub const MAX_LINK_LEN: usize = 8 * 1024;
/// `size-changed` widths are clamped to `0..=MAX_WIDTH` CSS pixels.
pub const MAX_WIDTH: f64 = 10_000.0;

/// Why a link is not opened (answered with [`super::rpc::REFUSED`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkRefusal {
    /// Not a string.
    Malformed,
    TooLong,
    /// Not an absolute `https:` URL with a host.
    NotHttps,
    /// `https://user:password@host/…`: a classic way to disguise the real host.
    Credentials,
}

impl LinkRefusal {
    pub fn message(&self) -> &'static str {
        match self {
            LinkRefusal::Malformed => "url must be a string",
            LinkRefusal::TooLong => "the link is too long",
            LinkRefusal::NotHttps => "only https links can be opened",
            LinkRefusal::Credentials => "links with a user name or password are not opened",
        }
    }
}

/// The normalised URL to open (IDN hosts in punycode, so the user sees the real host), or why not.
pub fn open_link(params: &Map<String, Value>) -> Result<String, LinkRefusal> {
    let Some(raw) = params.get("url").and_then(Value::as_str) else {
        return Err(LinkRefusal::Malformed);
    };
    if raw.len() > MAX_LINK_LEN {
        return Err(LinkRefusal::TooLong);
    }
    let url = url::Url::parse(raw).map_err(|_| LinkRefusal::NotHttps)?;
    if url.scheme() != "https" || url.host_str().is_none_or(str::is_empty) {
        return Err(LinkRefusal::NotHttps);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(LinkRefusal::Credentials);
    }
    Ok(url.to_string())
}

/// Whether `block` is a text content block (`{type: "text", text: string, …}`).
fn is_text_block(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("text") && block.get("text").is_some_and(Value::is_string)
}

/// `ui/message`: the content blocks to propose. `content` may be an array (SDK) or one block
/// (spec text); only the `user` role and text blocks (what we advertise) are accepted.
pub fn message(params: &mut Map<String, Value>) -> Result<Vec<Value>, &'static str> {
    if params.get("role").and_then(Value::as_str) != Some("user") {
        return Err("role must be \"user\"");
    }
    let blocks = match params.remove("content") {
        Some(Value::Array(blocks)) => blocks,
        Some(block @ Value::Object(_)) => vec![block],
        _ => return Err("content must be a content block or an array of them"),
    };
    if blocks.is_empty() {
        return Err("content is empty");
    }
    if !blocks.iter().all(is_text_block) {
        return Err("only text content is supported");
    }
    Ok(blocks)
}

/// `ui/update-model-context`: `{content?, structuredContent?}` with text blocks and an object;
/// other keys are dropped. Neither present means "clear".
pub fn model_context(params: &mut Map<String, Value>) -> Result<Value, &'static str> {
    let mut out = Map::new();
    match params.remove("content") {
        None | Some(Value::Null) => {}
        Some(Value::Array(blocks)) => {
            if !blocks.iter().all(is_text_block) {
                return Err("only text content blocks are supported");
            }
            out.insert("content".into(), Value::Array(blocks));
        }
        Some(_) => return Err("content must be an array of content blocks"),
    }
    match params.remove("structuredContent") {
        None | Some(Value::Null) => {}
        Some(structured @ Value::Object(_)) => {
            out.insert("structuredContent".into(), structured);
        }
        Some(_) => return Err("structuredContent must be an object"),
    }
    Ok(Value::Object(out))
}

/// `ui/download-file`: a non-empty array of embedded resources and resource links, each with a URI.
pub fn download(params: &mut Map<String, Value>) -> Result<Vec<Value>, &'static str> {
    let Some(Value::Array(contents)) = params.remove("contents") else {
        return Err("contents must be an array");
    };
    if contents.is_empty() {
        return Err("contents is empty");
    }
    let ok = contents
        .iter()
        .all(|item| match item.get("type").and_then(Value::as_str) {
            Some("resource") => item
                .get("resource")
                .is_some_and(|r| r.get("uri").is_some_and(Value::is_string)),
            Some("resource_link") => item.get("uri").is_some_and(Value::is_string),
            _ => false,
        });
    if !ok {
        return Err("each item must be an embedded resource or a resource link with a uri");
    }
    Ok(contents)
}

/// `size-changed`: each of `width`/`height` that is a number, clamped to `0..=MAX_WIDTH` and
/// `0..=MAX_VIEW_HEIGHT` CSS pixels; `None` when neither is.
pub fn size(params: &Map<String, Value>) -> Option<(Option<f64>, Option<f64>)> {
    let read = |key: &str, max: f64| {
        params
            .get(key)
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite())
            // `<=` also turns -0.0 into 0.0.
            .map(|v| if v <= 0.0 { 0.0 } else { v.min(max) })
    };
    let (width, height) = (read("width", MAX_WIDTH), read("height", f64::from(MAX_VIEW_HEIGHT)));
    (width.is_some() || height.is_some()).then_some((width, height))
}

/// The spec's display modes among `value` (an array of strings), in the spec's order.
pub fn display_modes(value: Option<&Value>) -> Vec<DisplayMode> {
    let Some(items) = value.and_then(Value::as_array) else {
        return Vec::new();
    };
    DisplayMode::ALL
        .into_iter()
        .filter(|mode| items.iter().any(|v| v.as_str() == Some(mode.as_str())))
        .collect()
}

/// The most messages one sampling request may carry.
pub const MAX_SAMPLING_MESSAGES: usize = 50;
/// The most tokens a view may ask the model for.
pub const MAX_SAMPLING_TOKENS: u64 = 4096;

/// `sampling/createMessage`: `{messages: [{role, text}], systemPrompt, maxTokens}` from the
/// request's `messages` (`user` / `assistant`, text content as one block or an array of them),
/// `systemPrompt` (a string, optional) and `maxTokens` (1 to [`MAX_SAMPLING_TOKENS`]).
pub fn sampling(params: &Map<String, Value>) -> Result<Value, &'static str> {
    let Some(messages) = params.get("messages").and_then(Value::as_array) else {
        return Err("messages must be an array");
    };
    if messages.is_empty() || messages.len() > MAX_SAMPLING_MESSAGES {
        return Err("messages must hold 1 to 50 messages");
    }
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        let role = match message.get("role").and_then(Value::as_str) {
            Some(role @ ("user" | "assistant")) => role,
            _ => return Err("each message's role must be \"user\" or \"assistant\""),
        };
        let blocks = match message.get("content") {
            Some(Value::Array(blocks)) => blocks.clone(),
            Some(block @ Value::Object(_)) => vec![block.clone()],
            _ => return Err("each message's content must be a content block or an array of them"),
        };
        if blocks.is_empty() || !blocks.iter().all(is_text_block) {
            return Err("only text content is supported");
        }
        let text = blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n");
        out.push(json!({"role": role, "text": text}));
    }
    let max_tokens = match params.get("maxTokens").and_then(Value::as_u64) {
        Some(n) if (1..=MAX_SAMPLING_TOKENS).contains(&n) => n,
        _ => return Err("maxTokens must be a whole number from 1 to 4096"),
    };
    let system = match params.get("systemPrompt") {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(s)) => Value::String(s.clone()),
        Some(_) => return Err("systemPrompt must be a string"),
    };
    Ok(json!({"messages": out, "systemPrompt": system, "maxTokens": max_tokens}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_requests_are_text_messages_with_a_token_limit() {
        let ok = serde_json::json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "a"}},
                {"role": "assistant", "content": [{"type": "text", "text": "b"}, {"type": "text", "text": "c"}]},
            ],
            "maxTokens": 100,
            "systemPrompt": "be brief",
        });
        assert_eq!(
            sampling(ok.as_object().unwrap()).unwrap(),
            serde_json::json!({"messages": [{"role": "user", "text": "a"}, {"role": "assistant", "text": "b\nc"}],
                               "systemPrompt": "be brief", "maxTokens": 100})
        );
        let text = |role: &str| serde_json::json!({"role": role, "content": {"type": "text", "text": "x"}});
        for (bad, why) in [
            (serde_json::json!({"maxTokens": 10}), "messages must be an array"),
            (serde_json::json!({"messages": [], "maxTokens": 10}), "1 to 50"),
            (
                serde_json::json!({"messages": [text("system")], "maxTokens": 10}),
                "role",
            ),
            (
                serde_json::json!({"messages": [{"role": "user", "content": {"type": "image", "data": "x"}}], "maxTokens": 10}),
                "only text",
            ),
            (serde_json::json!({"messages": [text("user")]}), "maxTokens"),
            (
                serde_json::json!({"messages": [text("user")], "maxTokens": 5000}),
                "maxTokens",
            ),
            (
                serde_json::json!({"messages": [text("user")], "maxTokens": 5, "systemPrompt": 3}),
                "systemPrompt",
            ),
        ] {
            let err = sampling(bad.as_object().unwrap()).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn only_plain_https_links_open() {
        let link = |u: &str| open_link(&obj(json!({ "url": u })));
        assert_eq!(link("https://example.com/a?b=c").unwrap(), "https://example.com/a?b=c");
        assert_eq!(link("HTTPS://EXAMPLE.com").unwrap(), "https://example.com/");
        assert_eq!(
            link("https://bücher.example/").unwrap(),
            "https://xn--bcher-kva.example/"
        );
        for bad in [
            "http://example.com",
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,<script>1</script>",
            "/relative/path",
            "//example.com/x",
            "mcpview://localhost/x",
            "https:",
            "https://",
            "",
            "ftp://example.com",
            " javascript:alert(1)",
        ] {
            assert_eq!(link(bad), Err(LinkRefusal::NotHttps), "{bad}");
        }
        assert_eq!(
            link("https://good.example@evil.example/"),
            Err(LinkRefusal::Credentials)
        );
        assert_eq!(
            link(&format!("https://e.example/{}", "a".repeat(MAX_LINK_LEN))),
            Err(LinkRefusal::TooLong)
        );
        assert_eq!(open_link(&obj(json!({"url": 3}))), Err(LinkRefusal::Malformed));
    }

    #[test]
    fn message_takes_both_shapes_but_only_user_text() {
        let one = json!({"type": "text", "text": "hi"});
        assert_eq!(
            message(&mut obj(json!({"role": "user", "content": one}))).unwrap(),
            vec![one.clone()]
        );
        assert_eq!(
            message(&mut obj(json!({"role": "user", "content": [one, one]})))
                .unwrap()
                .len(),
            2
        );
        assert!(message(&mut obj(json!({"role": "assistant", "content": [one]}))).is_err());
        assert!(message(&mut obj(json!({"content": [one]}))).is_err());
        assert!(message(&mut obj(json!({"role": "user", "content": []}))).is_err());
        assert!(message(&mut obj(json!({"role": "user", "content": "hi"}))).is_err());
        assert!(
            message(&mut obj(
                json!({"role": "user", "content": [{"type": "image", "data": "", "mimeType": "image/png"}]})
            ))
            .is_err()
        );
    }

    #[test]
    fn model_context_keeps_text_and_structured_content() {
        let p = model_context(&mut obj(
            json!({"content": [{"type": "text", "text": "t"}], "structuredContent": {"a": 1}, "extra": 1}),
        ))
        .unwrap();
        assert_eq!(
            p,
            json!({"content": [{"type": "text", "text": "t"}], "structuredContent": {"a": 1}})
        );
        assert_eq!(model_context(&mut Map::new()).unwrap(), json!({}));
        assert!(model_context(&mut obj(json!({"structuredContent": [1]}))).is_err());
        assert!(model_context(&mut obj(json!({"content": {"type": "text", "text": "t"}}))).is_err());
    }

    #[test]
    fn sizes_are_clamped() {
        assert_eq!(
            size(&obj(json!({"width": 300, "height": 200.5}))),
            Some((Some(300.0), Some(200.5)))
        );
        assert_eq!(
            size(&obj(json!({"width": -5, "height": 1e300}))),
            Some((Some(0.0), Some(4000.0)))
        );
        assert_eq!(size(&obj(json!({"height": 10}))), Some((None, Some(10.0))));
        let Some((Some(w), None)) = size(&obj(json!({"width": -0.0}))) else {
            panic!()
        };
        assert!(w.is_sign_positive());
        assert_eq!(size(&obj(json!({"width": "1", "height": null}))), None);
    }

    #[test]
    fn display_modes_are_filtered() {
        assert_eq!(
            display_modes(Some(&json!(["pip", "weird", 3, "inline"]))),
            vec![DisplayMode::Inline, DisplayMode::Pip]
        );
        assert!(display_modes(Some(&json!("inline"))).is_empty());
        assert!(display_modes(None).is_empty());
    }
}
