//! The exchange every streaming adapter performs: send one request, map a failed status
//! to a typed error, read the SSE body chunk by chunk into a wire-specific decoder (with a
//! no-progress deadline — the idle timeout counts from the last complete event, not the last
//! byte — and cancellation at every await), and retry retryable failures under the
//! adapter's `RetryPolicy`. Adapters supply only their request body, their error mapping
//! and their `WireDecoder`.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::HeaderMap;
use tokio_util::sync::CancellationToken;

use super::http;
use super::retry::{AttemptFailure, RetryLoop, RetryPolicy};
use super::sse::{SseDecoder, SseEvent};
use robota_core::wire::{WireRequest, WireTap};
use robota_core::{AssistantTurn, ProviderError, ProviderErrorKind, ProviderRequest, StreamSink};

/// What the exchange does after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// The terminal event arrived: the answer is complete.
    Done,
}

/// Turns one wire format's SSE events into stream events and a finished turn.
pub(crate) trait WireDecoder {
    /// Handles one SSE event; an `Err` ends the attempt (e.g. a mid-stream error event).
    fn on_event(&mut self, event: &SseEvent, sink: StreamSink<'_>) -> Result<Flow, ProviderError>;
    /// Whether anything of this attempt reached the sink (a retry must discard it).
    fn emitted_anything(&self) -> bool;
    /// The finished turn, or a `StreamCut` when the stream ended early.
    fn finish(self, fallback_model: &str) -> Result<AssistantTurn, ProviderError>;
}

/// Maps a non-success HTTP response onto a failure.
pub(crate) type ErrorMapper = fn(u16, &HeaderMap, &[u8]) -> AttemptFailure;

/// A wire tap with the number of the request it reported.
type Tapped<'a> = Option<(&'a WireTap, u64)>;

/// One HTTP exchange: send, check the status, stream the answer through `decoder`; what
/// comes back is reported to `tap` when there is one.
#[allow(clippy::too_many_arguments)] // the exchange's parts, passed through unchanged
pub(crate) async fn attempt<D: WireDecoder>(
    request: reqwest::RequestBuilder,
    mut decoder: D,
    model: &str,
    idle: Duration,
    map_error: ErrorMapper,
    events: StreamSink<'_>,
    cancel: &CancellationToken,
    tap: Tapped<'_>,
) -> Result<AssistantTurn, AttemptFailure> {
    let mut response = http::send(request, idle, cancel).await?;
    let status = response.status().as_u16();
    if let Some((tap, n)) = tap {
        tap.0.response_status(n, status);
    }
    let request_id = http::header_text(response.headers(), "request-id")
        .or_else(|| http::header_text(response.headers(), "x-request-id"));
    tracing::debug!(status, ?request_id, "provider response");
    if !response.status().is_success() {
        let headers = response.headers().clone();
        let body = http::read_error_body(&mut response, idle, cancel).await?;
        if let Some((tap, n)) = tap {
            tap.0.response_body(n, &body);
        }
        return Err(map_error(status, &headers, &body));
    }
    if !http::is_event_stream(response.headers()) {
        let headers = response.headers().clone();
        let body = http::read_error_body(&mut response, idle, cancel).await?;
        if let Some((tap, n)) = tap {
            tap.0.response_body(n, &body);
        }
        let mut failure = map_error(status, &headers, &body);
        failure.error.kind = ProviderErrorKind::Decode;
        failure.error.message = format!(
            "expected an event stream, got {}: {}",
            http::header_text(&headers, "content-type").unwrap_or_default(),
            failure.error.message
        );
        return Err(failure);
    }

    let mut sse = SseDecoder::new();
    // Mid-stream failures carry the request id but no status: the HTTP status was 200.
    let fail = |mut error: ProviderError, streamed: bool| {
        error.request_id = error.request_id.or_else(|| request_id.clone());
        AttemptFailure::new(error, streamed)
    };
    // The idle deadline moves only when a whole event arrives: a server that trickles
    // bytes without ever completing one cannot hold the call open.
    let mut deadline = tokio::time::Instant::now() + idle;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let chunk = match http::next_chunk(&mut response, left, cancel).await {
            Ok(chunk) => chunk,
            Err(mut error) => {
                if error.kind == ProviderErrorKind::Timeout {
                    error.message = format!(
                        "stream stalled: no data for {} (no complete event)",
                        http::describe(idle)
                    );
                }
                return Err(fail(error, decoder.emitted_anything()));
            }
        };
        let decoded = match &chunk {
            Some(bytes) => sse.push(bytes).map_err(|e| {
                let error = ProviderError::new(ProviderErrorKind::Decode, e.to_string());
                fail(error, decoder.emitted_anything())
            })?,
            None => sse.finish().into_iter().collect(),
        };
        if !decoded.is_empty() {
            deadline = tokio::time::Instant::now() + idle;
        }
        let mut done = chunk.is_none();
        for event in &decoded {
            if let Some((tap, n)) = tap {
                tap.0.response_event(n, event.event.as_deref(), &event.data);
            }
            let flow = decoder
                .on_event(event, events)
                .map_err(|e| fail(e, decoder.emitted_anything()))?;
            if flow == Flow::Done {
                done = true;
                break;
            }
        }
        if done {
            let streamed = decoder.emitted_anything();
            return decoder.finish(model).map_err(|e| fail(e, streamed));
        }
    }
}

/// Runs `attempt` until it succeeds, fails for good, or the policy gives up.
pub(crate) async fn with_retries<F, Fut>(
    policy: &RetryPolicy,
    events: StreamSink<'_>,
    cancel: &CancellationToken,
    mut attempt: F,
) -> Result<AssistantTurn, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<AssistantTurn, AttemptFailure>>,
{
    let mut retry = RetryLoop::new(policy);
    loop {
        if cancel.is_cancelled() {
            return Err(ProviderError::cancelled());
        }
        match attempt().await {
            Ok(turn) => return Ok(turn),
            Err(failure) => retry.after_failure(failure, events, cancel).await?,
        }
    }
}

/// Where and how one adapter sends its requests.
pub(crate) struct Endpoint<'a> {
    pub client: &'a reqwest::Client,
    pub url: &'a reqwest::Url,
    pub headers: &'a HeaderMap,
    pub retry: &'a RetryPolicy,
    pub idle: Duration,
    pub map_error: ErrorMapper,
    /// The adapter's name, for the wire tap.
    pub provider: &'a str,
}

/// The whole provider call: `body` (encoded from `request`) sent to `endpoint` under its
/// retry policy, each attempt decoded by a fresh decoder from `new_decoder` and, when the
/// request carries a wire tap, reported to it (untapped, nothing more is done).
pub(crate) async fn exchange<D: WireDecoder>(
    endpoint: Endpoint<'_>,
    body: &serde_json::Value,
    request: &ProviderRequest,
    new_decoder: impl Fn() -> D,
    events: StreamSink<'_>,
    cancel: &CancellationToken,
) -> Result<AssistantTurn, ProviderError> {
    let model = request.model.as_str();
    let body = encode_body(body)?;
    tracing::debug!(model, url = %endpoint.url, bytes = body.len(), "provider request");
    let mut attempts = 0u32;
    with_retries(endpoint.retry, events, cancel, || {
        attempts += 1;
        let builder = endpoint
            .client
            .post(endpoint.url.clone())
            .headers(endpoint.headers.clone())
            .body(body.clone());
        let tap = request.wire.as_ref().map(|tap| {
            let sent = WireRequest {
                provider: endpoint.provider,
                envelope: request,
                url: endpoint.url.as_str(),
                headers: header_pairs(endpoint.headers),
                body: &body,
                attempt: attempts,
            };
            (tap, tap.0.request(&sent))
        });
        let decoder = new_decoder();
        async move {
            let result = attempt(
                builder,
                decoder,
                model,
                endpoint.idle,
                endpoint.map_error,
                events,
                cancel,
                tap,
            )
            .await;
            if let Some((tap, n)) = tap {
                tap.0
                    .response_end(n, result.as_ref().err().map(|f| &f.error));
            }
            result
        }
    })
    .await
}

/// The headers as name/value text (values that are not text are shown lossily).
fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_string(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// Serialises a request body once for every attempt.
pub(crate) fn encode_body(body: &serde_json::Value) -> Result<Bytes, ProviderError> {
    serde_json::to_vec(body).map(Bytes::from).map_err(|e| {
        ProviderError::new(
            ProviderErrorKind::InvalidRequest,
            format!("cannot encode the request: {e}"),
        )
    })
}
