//! What both providers share: the HTTP client, sending with bounded retries, mapping HTTP errors
//! to [`ProviderError`], and reading an event stream into a reply (cut-offs and cancellation
//! included).

use std::time::Duration;

use futures::StreamExt;
use porthole_secrets::redact;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::sse::{SseEvent, SseParser};
use super::{ProviderConfig, ProviderKind, default_base_url};
use crate::provider::{ModelEvent, ModelReply, ProviderError, RetryKind, RetryPolicy};

pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Per read, not in all: a local server may take minutes to load a model or read a long prompt
/// before its first byte, and a reply may stream for much longer than that.
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(300);

/// The longest API error message kept (some servers answer with a whole HTML page).
const MAX_MESSAGE_CHARS: usize = 1000;

/// Where and how a provider is reached: its client, base URL, key, retries and default
/// `max_tokens`. `Debug` never shows the key.
pub(crate) struct Endpoint {
    pub client: reqwest::Client,
    pub base_url: String,
    pub api_key: Option<String>,
    pub retry: RetryPolicy,
    pub max_tokens: Option<u32>,
}

impl Endpoint {
    /// From a provider's config; no base URL means `kind`'s public API.
    pub fn new(config: ProviderConfig, kind: ProviderKind) -> Endpoint {
        Endpoint {
            client: client(),
            base_url: config
                .base_url
                .filter(|u| !u.trim().is_empty())
                .unwrap_or_else(|| default_base_url(kind).to_string()),
            api_key: clean_key(&config.api_key),
            retry: config.retry,
            max_tokens: config.max_tokens,
        }
    }
}

impl Endpoint {
    /// A streaming POST of a JSON `body` to `url` (headers for the key are the caller's).
    pub fn post_sse(&self, url: &str, body: &bytes::Bytes) -> reqwest::RequestBuilder {
        self.client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .body(body.clone())
    }
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish_non_exhaustive()
    }
}

/// The providers' HTTP client, one for the process: building one loads the system's root
/// certificates (45–100 ms here), which every turn paid when each built its own, and a shared
/// client keeps its connections, so a turn after another reuses the provider's TLS session
/// instead of connecting again.
pub(crate) fn client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .read_timeout(READ_TIMEOUT)
                .user_agent(concat!("porthole/", env!("CARGO_PKG_VERSION")))
                .build()
                .unwrap_or_else(|e| {
                    tracing::error!("could not build the HTTP client ({e}); using the defaults");
                    reqwest::Client::new()
                })
        })
        .clone()
}

/// `base` (with or without a trailing slash) + `/` + `path`, before `base`'s query, which is
/// kept (Azure OpenAI's `?api-version=…`).
pub(crate) fn join_url(base: &str, path: &str) -> String {
    let (base, query) = base.find(['?', '#']).map_or((base, ""), |i| base.split_at(i));
    format!("{}/{}{}", base.trim_end_matches('/'), path, query)
}

/// The API key, trimmed; `None` when unset or blank.
pub(crate) fn clean_key(key: &Option<String>) -> Option<String> {
    key.as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_string)
}

/// A header value carrying a secret: marked sensitive, so it is never printed.
pub(crate) fn secret_header(value: &str) -> Result<reqwest::header::HeaderValue, ProviderError> {
    let mut value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
        ProviderError::Unauthorized("the API key contains characters that cannot be sent in an HTTP header".into())
    })?;
    value.set_sensitive(true);
    Ok(value)
}

/// The readable parts of an API's error answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ApiError {
    pub message: String,
    /// `error.type`, `error.code`, ...: machine-readable kinds, as given.
    pub codes: Vec<String>,
}

/// Reads the error shapes seen in the wild: `{"error": {"message", "type", "code"}}` (OpenAI,
/// Anthropic, most compatible servers), `{"error": "..."}` (Ollama), `{"message", "type",
/// "code"}` (vLLM), `{"detail": ...}` (FastAPI); anything else is kept as text.
pub(crate) fn parse_api_error(status: StatusCode, body: &[u8]) -> ApiError {
    let mut out = ApiError::default();
    match serde_json::from_slice::<Value>(body) {
        Ok(json) => {
            let err = json.get("error");
            let as_text = |v: Option<&Value>| match v {
                Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
                Some(v @ (Value::Object(_) | Value::Array(_))) => Some(v.to_string()),
                _ => None,
            };
            out.message = err
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| err.and_then(Value::as_str).map(str::to_string))
                .or_else(|| json.get("message").and_then(Value::as_str).map(str::to_string))
                .or_else(|| as_text(json.get("detail")))
                .unwrap_or_default();
            for source in [err, Some(&json)].into_iter().flatten() {
                for key in ["type", "code"] {
                    match source.get(key) {
                        Some(Value::String(s)) if !s.is_empty() && s != "error" => out.codes.push(s.clone()),
                        Some(Value::Number(n)) => out.codes.push(n.to_string()),
                        _ => {}
                    }
                }
            }
            if out.message.is_empty() && !json.is_null() {
                out.message = json.to_string();
            }
        }
        Err(_) => out.message = String::from_utf8_lossy(body).trim().to_string(),
    }
    if out.message.chars().count() > MAX_MESSAGE_CHARS {
        out.message = out.message.chars().take(MAX_MESSAGE_CHARS).collect::<String>() + "…";
    }
    if out.message.is_empty() {
        out.message = status.canonical_reason().unwrap_or("no message").to_string();
    }
    out
}

/// Whether the error says the model does not exist (404, or 400 with a clear message).
fn says_unknown_model(status: StatusCode, error: &ApiError, model: &str) -> bool {
    if !matches!(status.as_u16(), 400 | 404) {
        return false;
    }
    if error
        .codes
        .iter()
        .any(|c| c == "model_not_found" || c == "not_found_error")
    {
        return true;
    }
    let message = error.message.to_lowercase();
    let mentions_model = message.contains("model") || (!model.is_empty() && message.contains(&model.to_lowercase()));
    if status == StatusCode::NOT_FOUND {
        return mentions_model;
    }
    mentions_model
        && [
            "not found",
            "does not exist",
            "not exist",
            "unknown model",
            "invalid model",
            "no such model",
            "not a valid model",
        ]
        .iter()
        .any(|phrase| message.contains(phrase))
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds; an HTTP date is not understood).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    number("retry-after").map(Duration::from_secs_f64)
}

/// A failure worth another attempt, and the error to report if there is none.
#[derive(Debug)]
pub(crate) enum Retryable {
    RateLimited { message: String },
    Server { status: u16, message: String },
    Unreachable { url: String, message: String },
}

impl Retryable {
    fn into_error(self, attempts: u32) -> ProviderError {
        match self {
            Retryable::RateLimited { message } => ProviderError::RateLimited { attempts, message },
            Retryable::Server { status, message } => ProviderError::Server {
                status,
                attempts,
                message,
            },
            Retryable::Unreachable { url, message } => ProviderError::Unreachable { url, message },
        }
    }

    fn kind(&self) -> RetryKind {
        match self {
            Retryable::RateLimited { .. } => RetryKind::RateLimited,
            Retryable::Server { .. } => RetryKind::ServerError,
            Retryable::Unreachable { .. } => RetryKind::Unreachable,
        }
    }

    fn reason(&self) -> String {
        match self {
            Retryable::RateLimited { message } => format!("rate limited (HTTP 429): {message}"),
            Retryable::Server { status, message } => format!("server error (HTTP {status}): {message}"),
            Retryable::Unreachable { message, .. } => format!("could not connect: {message}"),
        }
    }
}

/// What an HTTP error status means: `Ok` = try again (maybe), `Err` = report now.
/// `model` is `None` for requests that name no model.
pub(crate) fn classify(
    status: StatusCode,
    body: &[u8],
    url: &str,
    model: Option<&str>,
) -> Result<Retryable, ProviderError> {
    let error = parse_api_error(status, body);
    let code = status.as_u16();
    match code {
        401 | 403 => Err(ProviderError::Unauthorized(error.message)),
        429 => Ok(Retryable::RateLimited { message: error.message }),
        // (529 is Anthropic's "overloaded".)
        500..=599 => Ok(Retryable::Server {
            status: code,
            message: error.message,
        }),
        _ => {
            if let Some(model) = model
                && says_unknown_model(status, &error, model)
            {
                return Err(ProviderError::UnknownModel {
                    model: model.to_string(),
                    message: error.message,
                });
            }
            let mut message = error.message;
            if code == 404 {
                message.push_str(&format!(" (is the base URL right? the request went to {url})"));
            }
            Err(ProviderError::Rejected { status: code, message })
        }
    }
}

/// An error and its causes, on one line, credentials redacted (an HTTP client's error names the
/// URL it failed on).
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    redact::text(&text).into_owned()
}

fn backoff(retry: &RetryPolicy, failed_attempt: u32) -> Duration {
    let factor = 2u32.saturating_pow(failed_attempt.saturating_sub(1));
    retry.base_delay.saturating_mul(factor).min(retry.max_wait)
}

fn cancelled() -> ProviderError {
    ProviderError::Cancelled {
        partial: ModelReply::default(),
    }
}

/// Sends the request `make` builds until it gets a success status (returned, body unread),
/// retrying 429s, 5xx (and 529) and connection failures within `retry`, and announcing each
/// wait on `events`. `model` is the model the request names, to recognise "unknown model".
/// Errors and log lines show `url` with its credentials redacted.
pub(crate) async fn send(
    make: &(dyn Fn() -> reqwest::RequestBuilder + Send + Sync),
    url: &str,
    model: Option<&str>,
    retry: &RetryPolicy,
    events: &UnboundedSender<ModelEvent>,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, ProviderError> {
    let max_attempts = retry.max_attempts.max(1);
    let url = &redact::url(url);
    let mut attempt = 1;
    loop {
        if cancel.is_cancelled() {
            return Err(cancelled());
        }
        tracing::debug!(%url, attempt, "model API request");
        let sent = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(cancelled()),
            sent = make().send() => sent,
        };
        let (failure, suggested_wait) = match sent {
            Ok(response) if response.status().is_success() => {
                tracing::debug!(%url, status = %response.status(), "model API answered");
                return Ok(response);
            }
            Ok(response) => {
                let status = response.status();
                let wait = retry_after(response.headers());
                let body = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Err(cancelled()),
                    body = response.bytes() => body.unwrap_or_default(),
                };
                tracing::debug!(%url, %status, "model API refused");
                (classify(status, &body, url, model)?, wait)
            }
            Err(e) if e.is_builder() || e.is_redirect() => {
                return Err(ProviderError::Unreachable {
                    url: url.to_string(),
                    message: error_chain(&e),
                });
            }
            Err(e) => {
                tracing::debug!(%url, error = %e, "model API unreachable");
                let failure = Retryable::Unreachable {
                    url: url.to_string(),
                    message: error_chain(&e),
                };
                (failure, None)
            }
        };
        if attempt >= max_attempts {
            return Err(failure.into_error(attempt));
        }
        let wait = match suggested_wait {
            Some(wait) if wait > retry.max_wait => return Err(failure.into_error(attempt)),
            Some(wait) => wait,
            None => backoff(retry, attempt),
        };
        attempt += 1;
        // Progress news only: a caller that stopped listening still gets the retry's reply.
        events
            .send(ModelEvent::Retrying {
                attempt,
                wait_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                kind: failure.kind(),
                reason: failure.reason(),
            })
            .ok();
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(cancelled()),
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

/// A provider's stream format: turns SSE events into [`ModelEvent`]s and assembles the reply.
pub(crate) trait Decoder: Send {
    /// How the stream says it is complete, for messages ("[DONE]", "message_stop").
    const END: &'static str;

    /// Handles one event, pushing what it streams to `out`. `Ok(true)`: the reply is complete.
    /// `Err`: the stream reported an error; the reason.
    fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<bool, String>;
    /// The model said why it stopped (a clean end of stream after that is not a cut-off).
    fn stopped(&self) -> bool;
    /// The reply, once complete.
    fn reply(&self) -> ModelReply;
    /// What can be kept of an incomplete reply, and how many tool calls were dropped from it
    /// because their arguments may be incomplete.
    fn partial(&self) -> (ModelReply, usize);
}

/// An event stream being read into a reply: the SSE parser and a provider's decoder.
pub(crate) struct Assembler<D> {
    parser: SseParser,
    pub decoder: D,
}

impl<D: Decoder> Assembler<D> {
    pub fn new(decoder: D) -> Assembler<D> {
        Assembler {
            parser: SseParser::new(),
            decoder,
        }
    }

    /// Feeds the next bytes: `Ok(Some(reply))` when they complete the reply.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<ModelEvent>) -> Result<Option<ModelReply>, ProviderError> {
        for event in self.parser.feed(bytes) {
            match self.decoder.on_event(event, out) {
                Ok(true) => return Ok(Some(self.decoder.reply())),
                Ok(false) => {}
                Err(reason) => return Err(self.cut(reason)),
            }
        }
        Ok(None)
    }

    /// The stream ended cleanly.
    pub fn end(&mut self, out: &mut Vec<ModelEvent>) -> Result<ModelReply, ProviderError> {
        if let Some(event) = self.parser.finish() {
            match self.decoder.on_event(event, out) {
                Ok(true) => return Ok(self.decoder.reply()),
                Ok(false) => {}
                Err(reason) => return Err(self.cut(reason)),
            }
        }
        if self.decoder.stopped() {
            tracing::debug!(
                "the stream ended without {} but after the stop reason; complete",
                D::END
            );
            return Ok(self.decoder.reply());
        }
        Err(self.cut(format!("the stream ended before {}", D::END)))
    }

    /// The reply was cut off for `reason`.
    pub fn cut(&self, reason: String) -> ProviderError {
        let (partial, dropped) = self.decoder.partial();
        let reason = match dropped {
            0 => reason,
            1 => format!("{reason}; a tool call whose arguments may be incomplete was dropped"),
            n => format!("{reason}; {n} tool calls whose arguments may be incomplete were dropped"),
        };
        ProviderError::StreamCut { partial, reason }
    }

    pub fn cancelled(&self) -> ProviderError {
        ProviderError::Cancelled {
            partial: self.decoder.partial().0,
        }
    }
}

/// Reads `response`'s event stream with `decoder`, forwarding what streams to `events`.
pub(crate) async fn read_stream<D: Decoder>(
    response: reqwest::Response,
    decoder: D,
    events: &UnboundedSender<ModelEvent>,
    cancel: &CancellationToken,
) -> Result<ModelReply, ProviderError> {
    let mut assembler = Assembler::new(decoder);
    let mut body = response.bytes_stream();
    let mut out = Vec::new();
    loop {
        let chunk = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(assembler.cancelled()),
            chunk = body.next() => chunk,
        };
        let result = match chunk {
            Some(Ok(bytes)) => assembler.feed(&bytes, &mut out),
            Some(Err(e)) => Err(assembler.cut(format!("reading the stream failed: {}", error_chain(&e)))),
            None => assembler.end(&mut out).map(Some),
        };
        for event in out.drain(..) {
            // The events are a live view of the reply being assembled; a caller that stopped
            // listening still gets the whole reply returned.
            events.send(event).ok();
        }
        if let Some(reply) = result? {
            return Ok(reply);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    #[test]
    fn a_path_goes_before_the_base_urls_query() {
        use super::join_url;
        assert_eq!(join_url("http://x/v1", "models"), "http://x/v1/models");
        assert_eq!(join_url("http://x/v1/", "models"), "http://x/v1/models");
        assert_eq!(
            join_url(
                "https://r.openai.azure.com/openai/deployments/d/?api-version=2024-10-21",
                "chat/completions"
            ),
            "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
        );
    }

    use super::*;

    /// Runs a recorded transcript through the same assembly code as a live stream: the whole
    /// text in one chunk, and again split at every byte (both must agree).
    pub(crate) fn decode<D: Decoder>(
        new: impl Fn() -> D,
        transcript: &str,
    ) -> (Result<ModelReply, ProviderError>, Vec<ModelEvent>) {
        let run = |chunks: Vec<&[u8]>| {
            let mut assembler = Assembler::new(new());
            let mut out = Vec::new();
            for chunk in chunks {
                match assembler.feed(chunk, &mut out) {
                    Ok(Some(reply)) => return (Ok(reply), out),
                    Ok(None) => {}
                    Err(e) => return (Err(e), out),
                }
            }
            let result = assembler.end(&mut out);
            (result, out)
        };
        let whole = run(vec![transcript.as_bytes()]);
        let bytewise = run(transcript.as_bytes().chunks(1).collect());
        assert_eq!(format!("{:?}", whole.0), format!("{:?}", bytewise.0));
        assert_eq!(whole.1, bytewise.1);
        whole
    }

    #[test]
    fn error_bodies_in_every_shape() {
        let s = StatusCode::BAD_REQUEST;
        let openai = br#"{"error":{"message":"bad thing","type":"invalid_request_error","code":"model_not_found"}}"#;
        assert_eq!(
            parse_api_error(s, openai),
            ApiError {
                message: "bad thing".into(),
                codes: vec!["invalid_request_error".into(), "model_not_found".into()]
            }
        );
        let anthropic = br#"{"type":"error","error":{"type":"not_found_error","message":"model: x"}}"#;
        assert_eq!(parse_api_error(s, anthropic).codes, vec!["not_found_error".to_string()]);
        assert_eq!(
            parse_api_error(s, br#"{"error":"model 'x' not found"}"#).message,
            "model 'x' not found"
        );
        assert_eq!(
            parse_api_error(
                s,
                br#"{"object":"error","message":"vllm says","type":"BadRequestError","code":400}"#
            ),
            ApiError {
                message: "vllm says".into(),
                codes: vec!["BadRequestError".into(), "400".into()]
            }
        );
        assert_eq!(parse_api_error(s, br#"{"detail":"fastapi"}"#).message, "fastapi");
        assert_eq!(parse_api_error(s, b"  plain text\n").message, "plain text");
        assert_eq!(parse_api_error(StatusCode::BAD_GATEWAY, b"").message, "Bad Gateway");
        let long = "x".repeat(5000);
        assert_eq!(
            parse_api_error(s, long.as_bytes()).message.chars().count(),
            MAX_MESSAGE_CHARS + 1
        );
    }

    #[test]
    fn statuses_map_to_errors() {
        let url = "http://x/v1/chat/completions";
        let model = Some("gpt-x");
        let status = |c: u16| StatusCode::from_u16(c).unwrap();
        assert!(matches!(
            classify(status(401), br#"{"error":{"message":"Incorrect API key"}}"#, url, model),
            Err(ProviderError::Unauthorized(m)) if m == "Incorrect API key"
        ));
        assert!(matches!(
            classify(status(403), b"", url, model),
            Err(ProviderError::Unauthorized(_))
        ));
        assert!(matches!(
            classify(status(404), br#"{"error":{"message":"The model `gpt-x` does not exist","code":"model_not_found"}}"#, url, model),
            Err(ProviderError::UnknownModel { model, .. }) if model == "gpt-x"
        ));
        assert!(matches!(
            classify(
                status(400),
                br#"{"error":{"message":"model 'gpt-x' not found, try pulling it first"}}"#,
                url,
                model
            ),
            Err(ProviderError::UnknownModel { .. })
        ));
        assert!(matches!(
            classify(
                status(400),
                br#"{"error":{"message":"max_tokens is too large for model gpt-x"}}"#,
                url,
                model
            ),
            Err(ProviderError::Rejected { status: 400, .. })
        ));
        assert!(matches!(
            classify(status(404), b"404 page not found", url, model),
            Err(ProviderError::Rejected { status: 404, message }) if message.contains("base URL")
        ));
        assert!(matches!(
            classify(status(404), br#"{"error":{"message":"model: x"}}"#, url, None),
            Err(ProviderError::Rejected { status: 404, .. })
        ));
        assert!(matches!(
            classify(status(429), b"", url, model),
            Ok(Retryable::RateLimited { .. })
        ));
        assert!(matches!(
            classify(status(529), b"", url, model),
            Ok(Retryable::Server { status: 529, .. })
        ));
        assert!(matches!(
            classify(status(503), b"", url, model),
            Ok(Retryable::Server { status: 503, .. })
        ));
        assert!(matches!(
            classify(status(422), br#"{"detail":"nope"}"#, url, model),
            Err(ProviderError::Rejected { status: 422, message }) if message == "nope"
        ));
    }

    #[test]
    fn retry_after_in_seconds_or_milliseconds() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(1500)));
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn backoff_doubles_up_to_max_wait() {
        let retry = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_wait: Duration::from_millis(500),
        };
        let waits: Vec<_> = (1..=5).map(|a| backoff(&retry, a).as_millis()).collect();
        assert_eq!(waits, vec![100, 200, 400, 500, 500]);
    }
}
