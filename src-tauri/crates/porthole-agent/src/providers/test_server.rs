//! A tiny scripted HTTP/1.1 server on loopback for the providers' HTTP tests: each connection
//! gets the next scripted answer, written by hand, then the connection is closed or left hanging.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::provider::RetryPolicy;

/// What the server does after writing an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Then {
    Close,
    /// Keep the connection open, sending nothing more.
    Hang,
}

#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub bytes: Vec<u8>,
    pub then: Then,
}

/// A complete response with a `content-length` body.
pub(crate) fn response(status: u16, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut head = format!(
        "HTTP/1.1 {status} Whatever\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    Answer {
        bytes: [head.as_bytes(), body.as_bytes()].concat(),
        then: Then::Close,
    }
}

/// A JSON response.
pub(crate) fn json(status: u16, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    response(status, &all, body)
}

/// A 200 event stream, chunked; `events` is sent as one chunk, then `then`. With
/// [`Then::Close`] and `complete == false` the terminating chunk is never sent (a cut-off).
pub(crate) fn sse(events: &str, complete: bool, then: Then) -> Answer {
    let mut bytes =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            .to_vec();
    if !events.is_empty() {
        bytes.extend_from_slice(format!("{:x}\r\n", events.len()).as_bytes());
        bytes.extend_from_slice(events.as_bytes());
        bytes.extend_from_slice(b"\r\n");
    }
    if complete {
        bytes.extend_from_slice(b"0\r\n\r\n");
    }
    Answer { bytes, then }
}

/// A request as received.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    /// The request line and headers (header names as sent).
    pub head: String,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("a JSON request body")
    }
}

pub(crate) struct TestServer {
    pub base_url: String,
    pub received: Arc<Mutex<Vec<Received>>>,
}

impl TestServer {
    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

/// Serves `script`, one answer per connection, in order.
pub(crate) async fn serve(script: Vec<Answer>) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let received = Arc::new(Mutex::new(Vec::new()));
    let log = received.clone();
    tokio::spawn(async move {
        for answer in script {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            if let Some(request) = read_request(&mut socket).await {
                log.lock().unwrap().push(request);
            }
            let _ = socket.write_all(&answer.bytes).await;
            let _ = socket.flush().await;
            match answer.then {
                Then::Close => {
                    let _ = socket.shutdown().await;
                }
                Then::Hang => {
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_secs(120)).await;
                        drop(socket);
                    });
                }
            }
        }
    });
    TestServer { base_url, received }
}

async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Received> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_string();
    let mut received = Received {
        head,
        body: String::new(),
    };
    let length: usize = received
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    received.body = String::from_utf8_lossy(&body).to_string();
    Some(received)
}

/// Quick retries for tests.
pub(crate) fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(1),
        max_wait: Duration::from_secs(5),
    }
}
