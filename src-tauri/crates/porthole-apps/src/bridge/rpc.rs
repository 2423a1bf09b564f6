//! JSON-RPC 2.0 framing for the bridge: sorting what a view posted into requests, notifications
//! and responses, building answers, and measuring a message without serialising it.

use serde_json::{Map, Value, json};

/// The message is not a valid request (JSON-RPC 2.0).
pub const INVALID_REQUEST: i64 = -32600;
/// No such method (JSON-RPC 2.0). The SDK's bridge probe treats only this code as "not supported".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// The method exists but its params are wrong (JSON-RPC 2.0).
pub const INVALID_PARAMS: i64 = -32602;
/// Something went wrong on our side (JSON-RPC 2.0).
pub const INTERNAL_ERROR: i64 = -32603;
/// Refused or failed (implementation-defined server error; what the MCP Apps spec uses for denials).
pub const REFUSED: i64 = -32000;

/// What a message from a view turned out to be.
#[derive(Debug)]
pub(crate) enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Map<String, Value>,
    },
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// An answer to one of our requests.
    Response {
        id: Value,
        outcome: Result<Value, (i64, String)>,
    },
    /// To be answered with an error right away; `id` is `null` when the message's id was unusable.
    Invalid {
        id: Value,
        code: i64,
        message: &'static str,
    },
    /// Not answerable (no usable id) and not acted upon.
    Ignored,
}

/// JSON-RPC ids we accept: strings and numbers (MCP's `RequestId`; `null` is not allowed).
pub(crate) fn is_valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_))
}

/// The id to answer a message with when it must be refused before being read further (too large):
/// `Some` only for something shaped like a request with a usable id.
pub(crate) fn answerable_id(message: &Value) -> Option<Value> {
    let obj = message.as_object()?;
    if !obj.contains_key("method") {
        return None;
    }
    obj.get("id").filter(|id| is_valid_id(id)).cloned()
}

pub(crate) fn classify(message: Value) -> Incoming {
    let Value::Object(mut obj) = message else {
        return Incoming::Ignored;
    };
    let version_ok = obj.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    if obj.contains_key("method") {
        let id = obj.remove("id");
        let method = match obj.remove("method") {
            Some(Value::String(m)) => Some(m),
            _ => None,
        };
        let params = obj.remove("params");
        match id {
            Some(id) if is_valid_id(&id) => {
                if !version_ok {
                    return invalid(id, INVALID_REQUEST, "jsonrpc must be \"2.0\"");
                }
                let Some(method) = method else {
                    return invalid(id, INVALID_REQUEST, "method must be a string");
                };
                match params {
                    None | Some(Value::Null) => Incoming::Request {
                        id,
                        method,
                        params: Map::new(),
                    },
                    Some(Value::Object(params)) => Incoming::Request { id, method, params },
                    Some(Value::Array(_)) => invalid(id, INVALID_PARAMS, "params must be an object"),
                    Some(_) => invalid(id, INVALID_REQUEST, "params must be an object or an array"),
                }
            }
            Some(_) => invalid(Value::Null, INVALID_REQUEST, "id must be a string or a number"),
            None => match (version_ok, method, params) {
                (true, Some(method), None | Some(Value::Null)) => Incoming::Notification {
                    method,
                    params: Map::new(),
                },
                (true, Some(method), Some(Value::Object(params))) => Incoming::Notification { method, params },
                _ => Incoming::Ignored,
            },
        }
    } else if obj.contains_key("result") || obj.contains_key("error") {
        let Some(id) = obj.remove("id").filter(is_valid_id) else {
            return Incoming::Ignored;
        };
        let outcome = match (obj.remove("result"), obj.remove("error")) {
            (Some(result), None) => Ok(result),
            (_, Some(error)) => {
                let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .map(|m| truncate(m, 200))
                    .unwrap_or_default();
                Err((code, message))
            }
            (None, None) => return Incoming::Ignored,
        };
        Incoming::Response { id, outcome }
    } else {
        match obj.remove("id") {
            Some(id) if is_valid_id(&id) => invalid(id, INVALID_REQUEST, "not a JSON-RPC 2.0 request"),
            _ => Incoming::Ignored,
        }
    }
}

fn invalid(id: Value, code: i64, message: &'static str) -> Incoming {
    Incoming::Invalid { id, code, message }
}

pub(crate) fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub(crate) fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

pub(crate) fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

pub(crate) fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// At most `max` characters of `s`, with an ellipsis when cut (for echoing view input in errors
/// and audit notes without copying megabytes).
pub(crate) fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}

/// Why [`measure`] refused a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TooBig {
    Large,
    Deep,
}

enum Frame<'a> {
    Array(std::slice::Iter<'a, Value>),
    Object(serde_json::map::Iter<'a>),
}

/// The length of `value` serialised as compact JSON (exact but for numbers, whose length is
/// estimated), or why it is over `limit` bytes or `max_depth` levels. Stops as soon as a limit
/// is passed, so the work is bounded by the limit, not by the message; uses no recursion.
pub(crate) fn measure(value: &Value, limit: usize, max_depth: usize) -> Result<usize, TooBig> {
    let mut total = 0usize;
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next = Some(value);
    loop {
        if let Some(v) = next.take() {
            total = total.saturating_add(match v {
                Value::Null => 4,
                Value::Bool(true) => 4,
                Value::Bool(false) => 5,
                Value::Number(n) => number_len(n),
                Value::String(s) => string_len(s),
                Value::Array(items) => {
                    if stack.len() >= max_depth {
                        return Err(TooBig::Deep);
                    }
                    stack.push(Frame::Array(items.iter()));
                    2 + items.len().saturating_sub(1)
                }
                Value::Object(map) => {
                    if stack.len() >= max_depth {
                        return Err(TooBig::Deep);
                    }
                    stack.push(Frame::Object(map.iter()));
                    2 + map.len().saturating_sub(1)
                }
            });
            if total > limit {
                return Err(TooBig::Large);
            }
        }
        let Some(top) = stack.last_mut() else {
            return Ok(total);
        };
        match top {
            Frame::Array(items) => match items.next() {
                Some(v) => next = Some(v),
                None => {
                    stack.pop();
                }
            },
            Frame::Object(entries) => match entries.next() {
                Some((k, v)) => {
                    total = total.saturating_add(string_len(k) + 1);
                    next = Some(v);
                }
                None => {
                    stack.pop();
                }
            },
        }
    }
}

fn string_len(s: &str) -> usize {
    let extra: usize = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0..0x20 => 5,
            _ => 0,
        })
        .sum();
    s.len() + 2 + extra
}

fn number_len(n: &serde_json::Number) -> usize {
    if let Some(u) = n.as_u64() {
        u.checked_ilog10().unwrap_or(0) as usize + 1
    } else if let Some(i) = n.as_i64() {
        i.unsigned_abs().checked_ilog10().unwrap_or(0) as usize + 2
    } else {
        24
    }
}

/// Drops a value without recursion (a message nested too deeply for the recursive `Drop` of
/// `serde_json::Value` to be safe on a small stack).
pub(crate) fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_matches_serde_for_ordinary_values() {
        let samples = [
            json!(null),
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x", "arguments": {"a": [1, 2, -3, true, false, null]}}}),
            json!(["quote \" and \\ and \n newline \u{1} \u{1f}", {}, [], {"": ""}]),
            json!({"big": u64::MAX, "neg": i64::MIN, "zero": 0}),
        ];
        for v in samples {
            assert_eq!(
                measure(&v, usize::MAX, 128).unwrap(),
                serde_json::to_vec(&v).unwrap().len(),
                "{v}"
            );
        }
    }

    #[test]
    fn measure_stops_at_the_limits() {
        let big = json!({"params": "x".repeat(1000)});
        assert_eq!(measure(&big, 999, 128), Err(TooBig::Large));
        let mut deep = json!(1);
        for _ in 0..200 {
            deep = json!([deep]);
        }
        assert_eq!(measure(&deep, usize::MAX, 128), Err(TooBig::Deep));
        assert!(measure(&deep, usize::MAX, 201).is_ok());
        // Very deep values are dropped without recursion.
        let mut very_deep = json!(1);
        for _ in 0..200_000 {
            very_deep = Value::Array(vec![very_deep]);
        }
        assert_eq!(measure(&very_deep, usize::MAX, 128), Err(TooBig::Deep));
        dismantle(very_deep);
    }

    #[test]
    fn classify_sorts_messages() {
        assert!(matches!(
            classify(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})),
            Incoming::Request { .. }
        ));
        assert!(matches!(
            classify(json!({"jsonrpc": "2.0", "method": "x", "params": {}})),
            Incoming::Notification { .. }
        ));
        assert!(matches!(
            classify(json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
            Incoming::Response { outcome: Ok(_), .. }
        ));
        assert!(matches!(
            classify(json!({"jsonrpc": "1.0", "id": "a", "method": "ping"})),
            Incoming::Invalid {
                code: INVALID_REQUEST,
                ..
            }
        ));
        assert!(matches!(
            classify(json!({"jsonrpc": "2.0", "id": null, "method": "ping"})),
            Incoming::Invalid { id: Value::Null, .. }
        ));
        assert!(matches!(
            classify(json!({"jsonrpc": "2.0", "id": 3, "method": 3})),
            Incoming::Invalid {
                code: INVALID_REQUEST,
                ..
            }
        ));
        assert!(matches!(
            classify(json!({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": [1]})),
            Incoming::Invalid {
                code: INVALID_PARAMS,
                ..
            }
        ));
        assert!(matches!(classify(json!({"id": 3})), Incoming::Invalid { .. }));
        assert!(matches!(classify(json!([1, 2])), Incoming::Ignored));
        assert!(matches!(classify(json!({"method": "x"})), Incoming::Ignored));
    }

    #[test]
    fn truncate_counts_characters() {
        assert_eq!(truncate("héllo", 10), "héllo");
        assert_eq!(truncate("héllo", 2), "hé…");
    }
}
