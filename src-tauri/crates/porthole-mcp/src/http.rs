//! What Porthole adds to rmcp's Streamable HTTP client so that a remote server that breaks the
//! protocol is told at once, with the reason, as a local one is ([`crate::stdio`]).
//!
//! rmcp's client drops what it cannot use and waits: an SSE event that is not JSON is skipped,
//! an answer whose id matches no request is ignored, and a response body that is not JSON
//! fails the one request with a message naming rmcp's types. The caller then waits its whole
//! timeout, or reads a type name. Here, two layers record the reason in the connection's
//! [`ConnectionEnd`], which ends the connection:
//!
//! - [`CheckedClient`] wraps the HTTP client: a POST answered with a body that is not JSON-RPC
//!   (or over the size limit), and an SSE event that is not JSON, on any stream;
//! - [`CheckedTransport`] wraps the transport: an answer with an id no request has, and once
//!   the end is recorded, the session's end (every waiting request fails with the reason).

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use crate::stdio::{ConnectionEnd, Unanswered, excerpt};

type SseStream = BoxStream<'static, Result<Sse, SseError>>;

/// An HTTP client for rmcp's Streamable HTTP transport that records in `end` why a server's
/// answer cannot be used.
#[derive(Clone)]
pub struct CheckedClient<C> {
    inner: C,
    end: ConnectionEnd,
}

impl<C> CheckedClient<C> {
    pub fn new(inner: C, end: ConnectionEnd) -> Self {
        CheckedClient { inner, end }
    }
}

/// Why a failed POST means the server broke the protocol (not the network or HTTP, which
/// have their own messages), in words.
fn protocol_violation<E: std::error::Error + Send + Sync + 'static>(error: &StreamableHttpError<E>) -> Option<String> {
    match error {
        StreamableHttpError::UnexpectedServerResponse(message) => {
            // rmcp: "could not parse JSON response as ServerJsonRpcMessage: {serde}: {body}".
            let body = message
                .strip_prefix("could not parse JSON response as ServerJsonRpcMessage: ")
                .and_then(|rest| rest.split_once(": ").map(|(_, body)| body));
            Some(match body {
                Some(body) if serde_json::from_str::<serde::de::IgnoredAny>(body).is_err() => {
                    format!(
                        "answered with something that is not JSON: {}",
                        excerpt(body.as_bytes(), 80)
                    )
                }
                Some(body) => format!(
                    "answered with JSON that is not a JSON-RPC message: {}",
                    excerpt(body.as_bytes(), 80)
                ),
                None => format!(
                    "answered in a way Porthole cannot use: {}",
                    excerpt(message.as_bytes(), 80)
                ),
            })
        }
        StreamableHttpError::Deserialize(e) => Some(format!("answered with something that is not JSON: {e}")),
        StreamableHttpError::ResponseBodyTooLarge { .. } => Some(too_large()),
        _ => None,
    }
}

fn too_large() -> String {
    format!(
        "sent a message larger than {} MiB, the most Porthole accepts in one message",
        crate::stdio::MAX_MESSAGE_BYTES >> 20
    )
}

/// `stream`, recording in `end` an event that is not JSON or is over the size limit.
fn checked_events(stream: SseStream, end: ConnectionEnd) -> SseStream {
    stream
        .inspect(move |event| match event {
            Ok(sse) => {
                let is_message = matches!(sse.event.as_deref(), None | Some("") | Some("message"));
                // An event with no data primes a stream for resumption (its id is what counts).
                if let Some(data) = sse.data.as_deref().filter(|d| is_message && !d.trim().is_empty())
                    && serde_json::from_str::<serde::de::IgnoredAny>(data).is_err()
                {
                    end.set(format!(
                        "answered with something that is not JSON: {}",
                        excerpt(data.as_bytes(), 80)
                    ));
                }
            }
            Err(e) if e.to_string().contains("exceeded the maximum size") => end.set(too_large()),
            Err(_) => {}
        })
        .boxed()
}

impl<C: StreamableHttpClient + Send + Sync> CheckedClient<C> {
    fn post_checked(
        &self,
        response: Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>> {
        match response {
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => Ok(StreamableHttpPostResponse::Sse(
                checked_events(stream, self.end.clone()),
                session,
            )),
            Err(e) => {
                if let Some(reason) = protocol_violation(&e) {
                    self.end.set(reason);
                }
                Err(e)
            }
            ok => ok,
        }
    }

    fn stream_checked(
        &self,
        stream: Result<SseStream, StreamableHttpError<C::Error>>,
    ) -> Result<SseStream, StreamableHttpError<C::Error>> {
        stream.map(|s| checked_events(s, self.end.clone()))
    }
}

impl<C: StreamableHttpClient + Send + Sync> StreamableHttpClient for CheckedClient<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let response = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.post_checked(response)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let response = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.post_checked(response)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let response = self
            .inner
            .post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits)
            .await;
        self.post_checked(response)
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<(), StreamableHttpError<Self::Error>>> + Send + '_ {
        self.inner.delete_session(uri, session_id, auth_header, custom_headers)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.stream_checked(stream)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.stream_checked(stream)
    }
}

/// A transport that ends the session once its [`ConnectionEnd`] records a reason, and records
/// one itself for an answer whose id matches no request sent on it.
pub struct CheckedTransport<T> {
    inner: T,
    end: ConnectionEnd,
    /// Requests sent and not yet answered.
    waiting: Unanswered,
}

impl<T> CheckedTransport<T> {
    pub fn new(inner: T, end: ConnectionEnd) -> Self {
        CheckedTransport {
            inner,
            end,
            waiting: Unanswered::default(),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for CheckedTransport<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.waiting.sent(&item);
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.end.reason().is_some() {
            return None;
        }
        let message = tokio::select! {
            // rmcp's HTTP transport receives from a channel: dropping a receive loses nothing.
            message = self.inner.receive() => message?,
            Some(reason) = self.end.ended() => {
                tracing::warn!("{reason}");
                return None;
            }
        };
        if let Err(reason) = self.waiting.check(&message) {
            tracing::warn!("{reason}");
            self.end.set(reason);
            return None;
        }
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.end.closed();
        self.inner.close().await
    }
}

impl<T> Drop for CheckedTransport<T> {
    fn drop(&mut self) {
        self.end.closed();
    }
}
