//! HTTP plumbing shared by the adapters: building the one `reqwest` client per provider
//! (proxies and connection reuse skipped for loopback servers), sending a request and reading response bytes
//! under an idle timeout and the call's cancellation token, and reading the response
//! headers that steer retries (`retry-after-ms`, `retry-after`, `x-should-retry`,
//! `request-id`). Every failure comes back as a typed `ProviderError`.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use reqwest::header::HeaderMap;
use tokio_util::sync::CancellationToken;

use super::retry::{parse_retry_after, parse_retry_after_ms};
use robota_core::http_client::{self, is_loopback};
use robota_core::{ProviderError, ProviderErrorKind};

/// Largest error body read for a message (anything beyond is ignored).
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Builds the client an adapter keeps for its lifetime.
pub fn build_client(
    base_url: &reqwest::Url,
    connect_timeout: Duration,
) -> Result<reqwest::Client, ProviderError> {
    let mut builder = http_client::client_builder()
        .connect_timeout(connect_timeout)
        .tcp_nodelay(true);
    if is_loopback(base_url) {
        // A local server is reached directly, and over a fresh connection per request:
        // connecting on loopback costs microseconds, while a reused connection meets the
        // peer's Nagle delay against our delayed ACKs (about 40 ms per streamed answer with
        // servers that do not set TCP_NODELAY).
        builder = builder.no_proxy().pool_max_idle_per_host(0);
    }
    builder.build().map_err(|e| {
        ProviderError::new(
            ProviderErrorKind::Network,
            format!("cannot build HTTP client: {e}"),
        )
    })
}

/// Sends `request`, waiting at most `idle_timeout` for the response head.
pub async fn send(
    request: reqwest::RequestBuilder,
    idle_timeout: Duration,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, ProviderError> {
    tokio::select! {
        _ = cancel.cancelled() => Err(ProviderError::cancelled()),
        sent = tokio::time::timeout(idle_timeout, request.send()) => match sent {
            Err(_) => Err(ProviderError::new(
                ProviderErrorKind::Timeout,
                format!("no response within {}", describe(idle_timeout)),
            )),
            Ok(Err(e)) => Err(ProviderError::new(
                if http_client::is_unknown_authority(&e) {
                    ProviderErrorKind::UntrustedCertificate
                } else {
                    ProviderErrorKind::Network
                },
                format!("connection failed: {}", error_chain(&e)),
            )),
            Ok(Ok(response)) => Ok(response),
        },
    }
}

/// Reads the next piece of a streaming body. `Ok(None)` is the end of the body.
/// A read error is a `StreamCut`; no byte within `idle_timeout` is a `Timeout`.
pub async fn next_chunk(
    response: &mut reqwest::Response,
    idle_timeout: Duration,
    cancel: &CancellationToken,
) -> Result<Option<Bytes>, ProviderError> {
    tokio::select! {
        _ = cancel.cancelled() => Err(ProviderError::cancelled()),
        read = tokio::time::timeout(idle_timeout, response.chunk()) => match read {
            Err(_) => Err(ProviderError::new(
                ProviderErrorKind::Timeout,
                format!("stream stalled: no data for {}", describe(idle_timeout)),
            )),
            Ok(Err(e)) => Err(ProviderError::new(
                ProviderErrorKind::StreamCut,
                format!("connection lost mid-stream: {}", error_chain(&e)),
            )),
            Ok(Ok(chunk)) => Ok(chunk),
        },
    }
}

/// Reads an error response body, bounded in size and time.
pub async fn read_error_body(
    response: &mut reqwest::Response,
    idle_timeout: Duration,
    cancel: &CancellationToken,
) -> Result<Vec<u8>, ProviderError> {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY_BYTES {
        match next_chunk(response, idle_timeout, cancel).await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(e) if e.kind == ProviderErrorKind::Cancelled => return Err(e),
            // A cut or stalled error body still has a status worth reporting.
            Err(_) => break,
        }
    }
    body.truncate(MAX_ERROR_BODY_BYTES);
    Ok(body)
}

/// The server-requested wait: `retry-after-ms`, else `retry-after` (seconds or HTTP date).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(d) = text("retry-after-ms").and_then(parse_retry_after_ms) {
        return Some(d);
    }
    text("retry-after").and_then(|v| parse_retry_after(v, SystemTime::now()))
}

/// The `x-should-retry` header: `Some(true|false)` when present and readable.
pub fn should_retry_header(headers: &HeaderMap) -> Option<bool> {
    let value = headers.get("x-should-retry")?.to_str().ok()?.trim();
    if value.eq_ignore_ascii_case("true") {
        Some(true)
    } else if value.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// The value of a header, when present and readable.
pub fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    Some(headers.get(name)?.to_str().ok()?.to_string())
}

/// Whether the response claims to be an event stream (missing content type: assume so).
pub fn is_event_stream(headers: &HeaderMap) -> bool {
    match headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    {
        Some(ct) => ct
            .trim()
            .to_ascii_lowercase()
            .starts_with("text/event-stream"),
        None => true,
    }
}

/// An error with its causes, which `reqwest` keeps in the source chain.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    http_client::describe_error(e)
}

pub(crate) fn describe(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{} ms", d.as_millis())
    } else {
        format!("{} s", d.as_secs())
    }
}

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderMap, HeaderValue};

    use super::*;

    #[test]
    fn retry_headers_are_read_in_priority_order() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        h.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
        assert_eq!(should_retry_header(&h), None);
        h.insert("x-should-retry", HeaderValue::from_static("false"));
        assert_eq!(should_retry_header(&h), Some(false));
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        let url = |s: &str| reqwest::Url::parse(s).unwrap();
        assert!(is_loopback(&url("http://127.0.0.1:9/")));
        assert!(is_loopback(&url("http://localhost:11434/v1")));
        assert!(is_loopback(&url("http://[::1]:8080")));
        assert!(!is_loopback(&url("https://api.anthropic.com")));
    }

    #[test]
    fn event_stream_content_type_matches_on_prefix() {
        let mut h = HeaderMap::new();
        assert!(is_event_stream(&h));
        h.insert(
            "content-type",
            HeaderValue::from_static("text/event-stream; charset=utf-8"),
        );
        assert!(is_event_stream(&h));
        h.insert("content-type", HeaderValue::from_static("application/json"));
        assert!(!is_event_stream(&h));
    }
}
