//! Anthropic failures mapped onto `ProviderError` (wire.md §1.6): an HTTP error status with
//! its JSON (or non-JSON) body and headers, and a mid-stream `error` event, each get the
//! kind that decides retrying and what the user is told.

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::http;
use crate::retry::AttemptFailure;
use robota_core::{ProviderError, ProviderErrorKind};

/// Longest slice of a non-JSON error body quoted in a message.
const MAX_QUOTED_BODY_CHARS: usize = 300;

/// The failure an HTTP error response stands for.
pub(crate) fn from_http_response(status: u16, headers: &HeaderMap, body: &[u8]) -> AttemptFailure {
    let json: Option<Value> = serde_json::from_slice(body).ok();
    let error_obj = json.as_ref().and_then(|v| v.get("error"));
    let error_type = error_obj
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str);
    let api_message = error_obj
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str);
    let message = match api_message {
        Some(m) => m.to_string(),
        None => describe_raw_body(status, body),
    };
    let kind = kind_for_status(status, error_type, &message);
    let request_id = http::header_text(headers, "request-id").or_else(|| {
        json.as_ref()
            .and_then(|v| v.get("request_id"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let mut error = ProviderError::new(kind, message)
        .with_status(status)
        .with_retry_after(http::retry_after(headers));
    error.request_id = request_id;
    AttemptFailure {
        error,
        streamed: false,
        server_says_retry: http::should_retry_header(headers),
    }
}

/// The error a mid-stream `{"type":"error","error":{type,message}}` event stands for.
pub(crate) fn from_stream_event(event: &Value) -> ProviderError {
    let error_obj = event.get("error");
    let error_type = error_obj
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str);
    let message = error_obj
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("stream error: {event}"));
    let kind = error_type
        .map(|t| kind_for_error_type(t, &message))
        .unwrap_or(ProviderErrorKind::Server);
    let mut error = ProviderError::new(kind, message);
    error.request_id = event
        .get("request_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    error
}

fn kind_for_status(status: u16, error_type: Option<&str>, message: &str) -> ProviderErrorKind {
    match status {
        400 if is_context_overflow(message) => ProviderErrorKind::ContextTooLong,
        400 | 413 | 422 => ProviderErrorKind::InvalidRequest,
        401 => ProviderErrorKind::Auth,
        402 => ProviderErrorKind::Quota,
        403 => ProviderErrorKind::Permission,
        404 => ProviderErrorKind::NotFound,
        408 => ProviderErrorKind::Timeout,
        // The SDKs retry a 409 (conflict_error); Server is the retryable kind that fits.
        409 => ProviderErrorKind::Server,
        429 => ProviderErrorKind::RateLimited,
        503 | 529 => ProviderErrorKind::Overloaded,
        500..=599 => match error_type {
            Some("overloaded_error") => ProviderErrorKind::Overloaded,
            _ => ProviderErrorKind::Server,
        },
        400..=499 => match error_type {
            Some(t) => kind_for_error_type(t, message),
            None => ProviderErrorKind::InvalidRequest,
        },
        _ => ProviderErrorKind::Server,
    }
}

fn kind_for_error_type(error_type: &str, message: &str) -> ProviderErrorKind {
    match error_type {
        "invalid_request_error" if is_context_overflow(message) => {
            ProviderErrorKind::ContextTooLong
        }
        "invalid_request_error" | "request_too_large" => ProviderErrorKind::InvalidRequest,
        "authentication_error" => ProviderErrorKind::Auth,
        "permission_error" => ProviderErrorKind::Permission,
        "not_found_error" => ProviderErrorKind::NotFound,
        "billing_error" => ProviderErrorKind::Quota,
        "rate_limit_error" => ProviderErrorKind::RateLimited,
        "overloaded_error" => ProviderErrorKind::Overloaded,
        "timeout_error" => ProviderErrorKind::Timeout,
        _ => ProviderErrorKind::Server,
    }
}

fn is_context_overflow(message: &str) -> bool {
    let m = message.trim_start().to_ascii_lowercase();
    m.starts_with("prompt is too long") || m.contains("exceed context limit")
}

fn describe_raw_body(status: u16, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return format!("HTTP {status} with an empty body");
    }
    let mut quoted: String = text.chars().take(MAX_QUOTED_BODY_CHARS).collect();
    if quoted.len() < text.len() {
        quoted.push('…');
    }
    format!("HTTP {status}: {quoted}")
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;
    use serde_json::json;

    use super::*;

    fn body(error_type: &str, message: &str) -> Vec<u8> {
        json!({"type":"error","error":{"type":error_type,"message":message}})
            .to_string()
            .into_bytes()
    }

    fn kind(status: u16, error_type: &str, message: &str) -> ProviderErrorKind {
        from_http_response(status, &HeaderMap::new(), &body(error_type, message))
            .error
            .kind
    }

    #[test]
    fn statuses_map_to_kinds() {
        use ProviderErrorKind as K;
        assert_eq!(
            kind(401, "authentication_error", "invalid x-api-key"),
            K::Auth
        );
        assert_eq!(kind(403, "permission_error", "no"), K::Permission);
        assert_eq!(kind(404, "not_found_error", "model: x"), K::NotFound);
        assert_eq!(kind(400, "invalid_request_error", "bad"), K::InvalidRequest);
        assert_eq!(
            kind(
                400,
                "invalid_request_error",
                "prompt is too long: 210000 tokens > 200000 maximum"
            ),
            K::ContextTooLong
        );
        assert_eq!(kind(413, "request_too_large", "big"), K::InvalidRequest);
        assert_eq!(kind(429, "rate_limit_error", "slow down"), K::RateLimited);
        assert_eq!(kind(529, "overloaded_error", "Overloaded"), K::Overloaded);
        assert_eq!(kind(503, "api_error", "unavailable"), K::Overloaded);
        assert_eq!(kind(500, "api_error", "oops"), K::Server);
        assert_eq!(kind(402, "billing_error", "pay"), K::Quota);
    }

    #[test]
    fn headers_fill_request_id_retry_after_and_should_retry() {
        let mut h = HeaderMap::new();
        h.insert("request-id", HeaderValue::from_static("req_1"));
        h.insert("retry-after", HeaderValue::from_static("3"));
        h.insert("x-should-retry", HeaderValue::from_static("true"));
        let f = from_http_response(429, &h, &body("rate_limit_error", "slow"));
        assert_eq!(f.error.request_id.as_deref(), Some("req_1"));
        assert_eq!(f.error.retry_after, Some(std::time::Duration::from_secs(3)));
        assert_eq!(f.error.status, Some(429));
        assert_eq!(f.error.message, "slow");
        assert_eq!(f.server_says_retry, Some(true));
    }

    #[test]
    fn non_json_body_still_gives_a_clear_message() {
        let f = from_http_response(502, &HeaderMap::new(), b"<html>Bad Gateway</html>");
        assert_eq!(f.error.kind, ProviderErrorKind::Server);
        assert_eq!(f.error.message, "HTTP 502: <html>Bad Gateway</html>");
        let empty = from_http_response(413, &HeaderMap::new(), b"");
        assert_eq!(empty.error.message, "HTTP 413 with an empty body");
    }

    #[test]
    fn stream_error_events_map_by_type() {
        let e = from_stream_event(
            &json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
        );
        assert_eq!(e.kind, ProviderErrorKind::Overloaded);
        assert_eq!(e.message, "Overloaded");
        assert_eq!(e.status, None);
        let odd = from_stream_event(&json!({"type":"error"}));
        assert_eq!(odd.kind, ProviderErrorKind::Server);
    }
}
