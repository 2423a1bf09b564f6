//! Every JSON-RPC message between Porthole and a server, as it passed on the connection (read
//! off the transport, so nothing rmcp answers by itself is missed): direction, kind, method,
//! id, size, and for an answer how long after its request it came. The workbench's Traffic and
//! Notifications panes read it. One log per server name, kept across reconnections; the
//! oldest entries go first, and a message's JSON is kept only up to a size.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The most entries kept per server.
pub const KEPT_ENTRIES: usize = 5000;
/// A message's JSON is kept when it is at most this long (bytes); larger ones only by size.
pub const KEPT_MESSAGE_BYTES: usize = 256 * 1024;
/// The most JSON kept per server (bytes), all messages together.
pub const KEPT_BYTES: usize = 32 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Porthole to the server.
    Out,
    /// The server to Porthole.
    In,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum MessageKind {
    Request,
    Notification,
    /// A result.
    Response,
    /// An error answer.
    Error,
}

/// One message, without its JSON (see [`Traffic::message`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TrafficEntry {
    /// Counts up from 1 for the server's log; never reused.
    #[ts(type = "number")]
    pub seq: u64,
    /// When it passed, in milliseconds since 1970.
    #[ts(type = "number")]
    pub at_ms: u64,
    pub direction: Direction,
    pub kind: MessageKind,
    /// The request's or notification's method; for an answer, its request's.
    pub method: Option<String>,
    /// The JSON-RPC id, as JSON text (`3`, `"abc"`).
    pub id: Option<String>,
    /// Its JSON's length in bytes.
    pub bytes: usize,
    /// For an answer: milliseconds since its request passed.
    pub duration_ms: Option<f64>,
    /// For an error answer: its message; for `notifications/message`: its level.
    pub detail: Option<String>,
    /// The JSON is kept (see [`KEPT_MESSAGE_BYTES`]).
    pub kept: bool,
}

/// A server's traffic log; clones share it.
#[derive(Clone, Default)]
pub struct Traffic(Arc<Mutex<Log>>);

impl std::fmt::Debug for Traffic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Traffic")
    }
}

#[derive(Default)]
struct Log {
    entries: VecDeque<(TrafficEntry, Option<Arc<str>>)>,
    kept_bytes: usize,
    next_seq: u64,
    /// Requests not answered yet, by direction and id: method and when.
    open: HashMap<(Direction, String), (Option<String>, Instant)>,
}

/// What the log reads of a message to file it.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    error: Option<ErrorHead>,
    #[serde(default)]
    params: Option<ParamsHead>,
}

#[derive(Deserialize)]
struct ErrorHead {
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
struct ParamsHead {
    #[serde(default)]
    level: Option<String>,
}

impl Traffic {
    /// Files one message that passed in `direction` (anything serializable as JSON-RPC).
    pub fn record(&self, direction: Direction, message: &impl Serialize) {
        let Ok(json) = serde_json::to_string(message) else {
            return;
        };
        self.record_json(direction, json);
    }

    fn record_json(&self, direction: Direction, json: String) {
        let Ok(head) = serde_json::from_str::<Head>(&json) else {
            return;
        };
        let now = Instant::now();
        let at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let id = head.id.as_ref().map(|v| v.to_string());
        let mut log = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (kind, method, duration_ms) = match (&head.method, &id) {
            (Some(method), Some(id)) => {
                log.open.insert((direction, id.clone()), (Some(method.clone()), now));
                (MessageKind::Request, Some(method.clone()), None)
            }
            (Some(method), None) => (MessageKind::Notification, Some(method.clone()), None),
            (None, _) => {
                // An answer goes the other way from its request.
                let asked = id.as_ref().and_then(|id| {
                    let other = match direction {
                        Direction::In => Direction::Out,
                        Direction::Out => Direction::In,
                    };
                    log.open.remove(&(other, id.clone()))
                });
                let kind = if head.error.is_some() {
                    MessageKind::Error
                } else {
                    MessageKind::Response
                };
                let (method, duration) = match asked {
                    Some((method, since)) => (method, Some(now.duration_since(since).as_secs_f64() * 1000.0)),
                    None => (None, None),
                };
                (kind, method, duration)
            }
        };
        let detail = match (&head.error, &head.params) {
            (Some(error), _) => Some(error.message.clone()),
            (None, Some(ParamsHead { level: Some(level) })) if method.as_deref() == Some("notifications/message") => {
                Some(level.clone())
            }
            _ => None,
        };
        log.next_seq += 1;
        let bytes = json.len();
        let kept = bytes <= KEPT_MESSAGE_BYTES;
        let entry = TrafficEntry {
            seq: log.next_seq,
            at_ms,
            direction,
            kind,
            method,
            id,
            bytes,
            duration_ms,
            detail,
            kept,
        };
        if kept {
            log.kept_bytes += bytes;
        }
        log.entries.push_back((entry, kept.then(|| Arc::from(json))));
        while log.entries.len() > KEPT_ENTRIES || log.kept_bytes > KEPT_BYTES {
            let Some((_, json)) = log.entries.pop_front() else {
                break;
            };
            log.kept_bytes -= json.map_or(0, |j| j.len());
        }
        // Requests never answered (a connection that ended) are not kept for ever.
        if log.open.len() > KEPT_ENTRIES {
            log.open.clear();
        }
    }

    /// The entries after `after` (0: all kept), oldest first.
    pub fn entries(&self, after: u64) -> Vec<TrafficEntry> {
        let log = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let first = log.entries.partition_point(|(e, _)| e.seq <= after);
        log.entries.range(first..).map(|(e, _)| e.clone()).collect()
    }

    /// The JSON of entry `seq`, when it is still kept.
    pub fn message(&self, seq: u64) -> Option<serde_json::Value> {
        let log = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let index = log.entries.binary_search_by_key(&seq, |(e, _)| e.seq).ok()?;
        let json = log.entries[index].1.as_ref()?;
        serde_json::from_str(json).ok()
    }

    /// Every entry kept, one JSON object a line: the entry's fields and, when kept, `message`.
    pub fn json_lines(&self) -> String {
        let log = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = String::new();
        for (entry, json) in &log.entries {
            let mut line = serde_json::to_value(entry).unwrap_or_default();
            if let (Some(json), Some(object)) = (json, line.as_object_mut()) {
                let message = serde_json::from_str(json).unwrap_or(serde_json::Value::Null);
                object.insert("message".into(), message);
            }
            out.push_str(&line.to_string());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_answers_and_notifications_are_filed_with_their_method_and_time() {
        let traffic = Traffic::default();
        traffic.record(
            Direction::Out,
            &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo"}}),
        );
        traffic.record(
            Direction::In,
            &json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "warning", "data": "x"}}),
        );
        traffic.record(
            Direction::In,
            &json!({"jsonrpc": "2.0", "id": 3, "result": {"content": []}}),
        );
        // The server asks, Porthole answers with an error.
        traffic.record(
            Direction::In,
            &json!({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}),
        );
        traffic.record(
            Direction::Out,
            &json!({"jsonrpc": "2.0", "id": "s1", "error": {"code": -32601, "message": "no roots"}}),
        );
        let entries = traffic.entries(0);
        let shape: Vec<_> = entries
            .iter()
            .map(|e| {
                (
                    e.seq,
                    e.direction,
                    e.kind,
                    e.method.as_deref(),
                    e.id.as_deref(),
                    e.detail.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                (
                    1,
                    Direction::Out,
                    MessageKind::Request,
                    Some("tools/call"),
                    Some("3"),
                    None
                ),
                (
                    2,
                    Direction::In,
                    MessageKind::Notification,
                    Some("notifications/message"),
                    None,
                    Some("warning")
                ),
                (
                    3,
                    Direction::In,
                    MessageKind::Response,
                    Some("tools/call"),
                    Some("3"),
                    None
                ),
                (
                    4,
                    Direction::In,
                    MessageKind::Request,
                    Some("roots/list"),
                    Some("\"s1\""),
                    None
                ),
                (
                    5,
                    Direction::Out,
                    MessageKind::Error,
                    Some("roots/list"),
                    Some("\"s1\""),
                    Some("no roots")
                ),
            ]
        );
        assert!(entries[2].duration_ms.is_some() && entries[0].duration_ms.is_none());
        assert_eq!(traffic.entries(3).len(), 2);
        assert_eq!(traffic.message(1).unwrap()["params"]["name"], "echo");
        let lines = traffic.json_lines();
        assert_eq!(lines.lines().count(), 5);
        let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
        assert_eq!(first["method"], "tools/call");
        assert_eq!(first["message"]["params"]["name"], "echo");
    }

    #[test]
    fn large_messages_are_kept_by_size_only_and_old_entries_go_first() {
        let traffic = Traffic::default();
        let big = "x".repeat(KEPT_MESSAGE_BYTES + 1);
        traffic.record(
            Direction::In,
            &json!({"jsonrpc": "2.0", "id": 1, "result": {"text": big}}),
        );
        let entry = &traffic.entries(0)[0];
        assert!(!entry.kept);
        assert!(entry.bytes > KEPT_MESSAGE_BYTES);
        assert_eq!(traffic.message(entry.seq), None);
        for n in 0..KEPT_ENTRIES + 10 {
            traffic.record(
                Direction::Out,
                &json!({"jsonrpc": "2.0", "method": "notifications/x", "params": {"n": n}}),
            );
        }
        let entries = traffic.entries(0);
        assert_eq!(entries.len(), KEPT_ENTRIES);
        assert_eq!(entries[0].seq, 12, "the oldest went");
        assert_eq!(entries.last().unwrap().seq, (KEPT_ENTRIES + 11) as u64);
    }
}
