//! What the agent loop needs from a model provider, whatever its wire format.

use std::time::Duration;

use futures::future::BoxFuture;
use serde::Serialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::conversation::{Message, Part, ToolSpec, Usage};

/// One model request.
#[derive(Debug, Clone, Default)]
pub struct ModelRequest {
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    /// Anthropic requires one; OpenAI-compatible servers get it only when set.
    pub max_tokens: Option<u32>,
}

/// What streams out of a provider while a reply is being produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ModelEvent {
    TextDelta {
        text: String,
    },
    ReasoningDelta {
        text: String,
    },
    /// A tool call begins (its id and name are known). `index` is its position in the reply.
    ToolCallStarted {
        index: usize,
        id: String,
        name: String,
    },
    /// A fragment of a tool call's JSON arguments, as streamed.
    ToolCallArgumentsDelta {
        index: usize,
        fragment: String,
    },
    /// The provider will try again after `wait_ms` (429 with `retry-after`, or a 5xx).
    Retrying {
        attempt: u32,
        wait_ms: u64,
        kind: RetryKind,
        reason: String,
    },
}

/// Why a provider is trying a request again, for words chosen by the reader (the window) rather
/// than parsed from `reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum RetryKind {
    /// HTTP 429.
    RateLimited,
    /// HTTP 5xx (and Anthropic's 529 "overloaded").
    ServerError,
    /// The request never got an answer (connection refused, reset, timed out).
    Unreachable,
}

/// A finished reply: the assistant message's parts in order (text, reasoning, tool uses with
/// parsed arguments), why it stopped, and token usage.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModelReply {
    pub parts: Vec<Part>,
    pub stop_reason: Option<String>,
    pub usage: Usage,
}

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("the provider refused the API key (HTTP 401): {0}")]
    Unauthorized(String),
    #[error("the provider does not know the model {model:?}: {message}")]
    UnknownModel { model: String, message: String },
    #[error("the provider is rate limiting (HTTP 429) and still was after {}: {message}", attempts_text(*.attempts))]
    RateLimited { attempts: u32, message: String },
    #[error("the provider failed (HTTP {status}) after {}: {message}", attempts_text(*.attempts))]
    Server {
        status: u16,
        attempts: u32,
        message: String,
    },
    #[error("the provider rejected the request (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },
    #[error("could not reach the provider at {url}: {message}")]
    Unreachable { url: String, message: String },
    /// The stream ended before the reply was complete; `partial` is what arrived.
    #[error("the reply was cut off mid-stream: {reason}")]
    StreamCut { partial: ModelReply, reason: String },
    /// The caller cancelled; `partial` is what arrived.
    #[error("the reply was stopped")]
    Cancelled { partial: ModelReply },
    #[error("the provider sent something unreadable: {0}")]
    BadResponse(String),
}

/// "1 attempt", "4 attempts".
fn attempts_text(attempts: u32) -> String {
    match attempts {
        1 => "1 attempt".into(),
        n => format!("{n} attempts"),
    }
}

impl ProviderError {
    /// The part of the reply that arrived before the failure, if any.
    pub fn partial(&self) -> Option<&ModelReply> {
        match self {
            ProviderError::StreamCut { partial, .. } | ProviderError::Cancelled { partial } => Some(partial),
            _ => None,
        }
    }
}

/// Retry bounds shared by every provider.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts in all (the first included).
    pub max_attempts: u32,
    /// First wait after a 5xx, doubled each time.
    pub base_delay: Duration,
    /// A `retry-after` longer than this is not waited for; the error is reported instead.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_wait: Duration::from_secs(60),
        }
    }
}

/// A model provider. `stream` sends one request, forwards what streams in to `events`, and
/// returns the assembled reply; cancelling `cancel` stops it with [`ProviderError::Cancelled`].
pub trait Provider: Send + Sync {
    /// e.g. "openai" or "anthropic".
    fn kind(&self) -> &'static str;
    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        events: mpsc::UnboundedSender<ModelEvent>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<ModelReply, ProviderError>>;
    /// The models the provider lists (ids), where its API has a listing.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ProviderError>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_attempt_is_one_attempt() {
        let once = ProviderError::RateLimited {
            attempts: 1,
            message: "slow down".into(),
        };
        assert_eq!(
            once.to_string(),
            "the provider is rate limiting (HTTP 429) and still was after 1 attempt: slow down"
        );
        let four = ProviderError::Server {
            status: 502,
            attempts: 4,
            message: "bad gateway".into(),
        };
        assert_eq!(
            four.to_string(),
            "the provider failed (HTTP 502) after 4 attempts: bad gateway"
        );
    }
}
