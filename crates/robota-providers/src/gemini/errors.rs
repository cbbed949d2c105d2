//! Gemini failures mapped onto `ProviderError` (wire.md §4.4, §7.7): an HTTP error status
//! with its `{"error":{code,message,status,details}}` body (also accepted inside a JSON
//! array, as the non-SSE endpoint sends it), and a mid-stream `{"error":…}` chunk. A 400
//! with `ErrorInfo.reason = API_KEY_INVALID` is an auth failure, a 429 whose quota id is
//! a daily one is `Quota` (not retried), `RetryInfo.retryDelay` ("34.4s") is the server's
//! requested wait, and token-limit messages are `ContextTooLong`.

use std::time::Duration;

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
    let error_obj = json.as_ref().and_then(error_object);
    let mut error = match error_obj {
        Some(obj) => from_error_object(obj, Some(status)),
        None => ProviderError::new(
            kind_for(Some(status), None, "", &[]),
            describe_raw_body(status, body),
        ),
    };
    error.status = Some(status);
    if error.retry_after.is_none() {
        error.retry_after = http::retry_after(headers);
    }
    error.request_id = http::header_text(headers, "x-request-id")
        .or_else(|| http::header_text(headers, "request-id"));
    AttemptFailure {
        error,
        streamed: false,
        server_says_retry: http::should_retry_header(headers),
    }
}

/// The error a mid-stream `{"error":{…}}` chunk stands for (no HTTP status: it was 200).
pub(crate) fn from_stream_chunk(chunk: &Value) -> ProviderError {
    match error_object(chunk) {
        Some(obj) => from_error_object(obj, None),
        None => ProviderError::new(
            ProviderErrorKind::Server,
            format!("stream error: {}", snippet(&chunk.to_string())),
        ),
    }
}

/// `{"error":{…}}`, or the same as the first element of an array.
fn error_object(json: &Value) -> Option<&Value> {
    let json = match json {
        Value::Array(items) => items.first()?,
        other => other,
    };
    json.get("error").filter(|e| e.is_object())
}

fn from_error_object(obj: &Value, http_status: Option<u16>) -> ProviderError {
    let code = obj
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .or(http_status);
    let status = obj.get("status").and_then(Value::as_str);
    let message = obj
        .get("message")
        .and_then(Value::as_str)
        .filter(|m| !m.trim().is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| format!("Gemini error {}", status.unwrap_or("without a message")));
    let details: &[Value] = obj
        .get("details")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let kind = kind_for(code, status, &message, details);
    ProviderError::new(kind, message).with_retry_after(retry_delay(details))
}

fn kind_for(
    code: Option<u16>,
    status: Option<&str>,
    message: &str,
    details: &[Value],
) -> ProviderErrorKind {
    use ProviderErrorKind as K;
    if has_reason(details, "API_KEY_INVALID") || status == Some("UNAUTHENTICATED") {
        return K::Auth;
    }
    if is_context_overflow(message) {
        return K::ContextTooLong;
    }
    match code {
        Some(401) => K::Auth,
        Some(403) => K::Permission,
        Some(404) => K::NotFound,
        Some(408) => K::Timeout,
        Some(429) if is_daily_quota(details) => K::Quota,
        Some(429) => K::RateLimited,
        Some(400 | 409 | 411 | 413 | 422) => K::InvalidRequest,
        Some(503) => K::Overloaded,
        Some(504) => K::Timeout,
        Some(500..=599) => K::Server,
        Some(_) | None => match status {
            Some("INVALID_ARGUMENT" | "FAILED_PRECONDITION" | "OUT_OF_RANGE") => K::InvalidRequest,
            Some("PERMISSION_DENIED") => K::Permission,
            Some("NOT_FOUND") => K::NotFound,
            Some("RESOURCE_EXHAUSTED") if is_daily_quota(details) => K::Quota,
            Some("RESOURCE_EXHAUSTED") => K::RateLimited,
            Some("UNAVAILABLE") => K::Overloaded,
            Some("DEADLINE_EXCEEDED") => K::Timeout,
            _ if code.is_some_and(|c| (400..500).contains(&c)) => K::InvalidRequest,
            _ => K::Server,
        },
    }
}

fn detail_type(detail: &Value) -> &str {
    detail.get("@type").and_then(Value::as_str).unwrap_or("")
}

/// Whether an `ErrorInfo` detail carries `reason`.
fn has_reason(details: &[Value], reason: &str) -> bool {
    details.iter().any(|d| {
        detail_type(d).ends_with("ErrorInfo")
            && d.get("reason").and_then(Value::as_str) == Some(reason)
    })
}

/// A `QuotaFailure` violation on a per-day quota: retrying today will not help.
fn is_daily_quota(details: &[Value]) -> bool {
    details
        .iter()
        .filter(|d| detail_type(d).ends_with("QuotaFailure"))
        .filter_map(|d| d.get("violations").and_then(Value::as_array))
        .flatten()
        .filter_map(|v| v.get("quotaId").and_then(Value::as_str))
        .any(|id| id.contains("PerDay"))
}

/// `RetryInfo.retryDelay`, a protobuf duration such as `"34.4s"`.
fn retry_delay(details: &[Value]) -> Option<Duration> {
    let text = details
        .iter()
        .find(|d| detail_type(d).ends_with("RetryInfo"))?
        .get("retryDelay")?
        .as_str()?;
    let seconds: f64 = text.trim().strip_suffix('s')?.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

fn is_context_overflow(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("exceeds the maximum number of tokens")
        || m.contains("input token count")
        || m.starts_with("prompt is too long")
        || m.contains("context window")
        || m.contains("context length")
}

fn describe_raw_body(status: u16, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return format!("HTTP {status} with an empty body");
    }
    format!("HTTP {status}: {}", snippet(text))
}

fn snippet(text: &str) -> String {
    let mut quoted: String = text.chars().take(MAX_QUOTED_BODY_CHARS).collect();
    if quoted.len() < text.len() {
        quoted.push('…');
    }
    quoted
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn body(code: u16, status: &str, message: &str, details: Value) -> Vec<u8> {
        json!({"error":{"code":code,"message":message,"status":status,"details":details}})
            .to_string()
            .into_bytes()
    }

    fn failure(code: u16, status: &str, message: &str, details: Value) -> AttemptFailure {
        from_http_response(
            code,
            &HeaderMap::new(),
            &body(code, status, message, details),
        )
    }

    #[test]
    fn statuses_map_to_kinds() {
        use ProviderErrorKind as K;
        let kind = |code, status, message| failure(code, status, message, json!([])).error.kind;
        assert_eq!(
            kind(400, "INVALID_ARGUMENT", "bad field"),
            K::InvalidRequest
        );
        assert_eq!(
            kind(400, "FAILED_PRECONDITION", "region"),
            K::InvalidRequest
        );
        assert_eq!(kind(401, "UNAUTHENTICATED", "who"), K::Auth);
        assert_eq!(kind(403, "PERMISSION_DENIED", "no"), K::Permission);
        assert_eq!(kind(404, "NOT_FOUND", "models/x is not found"), K::NotFound);
        assert_eq!(kind(429, "RESOURCE_EXHAUSTED", "slow"), K::RateLimited);
        assert_eq!(kind(500, "INTERNAL", "oops"), K::Server);
        assert_eq!(
            kind(503, "UNAVAILABLE", "The model is overloaded."),
            K::Overloaded
        );
        assert_eq!(kind(504, "DEADLINE_EXCEEDED", "late"), K::Timeout);
        assert_eq!(
            kind(
                400,
                "INVALID_ARGUMENT",
                "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
            ),
            K::ContextTooLong
        );
    }

    #[test]
    fn bad_api_key_400_is_auth_with_the_server_message() {
        let f = failure(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            json!([{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]),
        );
        assert_eq!(f.error.kind, ProviderErrorKind::Auth);
        assert_eq!(f.error.status, Some(400));
        assert_eq!(
            f.error.message,
            "API key not valid. Please pass a valid API key."
        );
    }

    #[test]
    fn retry_info_gives_the_delay_and_daily_quota_is_not_retryable() {
        let recorded = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/wire/gemini/error_429_retry_info.json"
        ))
        .unwrap();
        let f = from_http_response(429, &HeaderMap::new(), &recorded);
        assert_eq!(f.error.kind, ProviderErrorKind::RateLimited);
        assert_eq!(f.error.retry_after, Some(Duration::from_millis(34_400)));
        assert_eq!(
            f.error.message,
            "You exceeded your current quota, please check your plan."
        );

        let daily = failure(
            429,
            "RESOURCE_EXHAUSTED",
            "quota",
            json!([{"@type":"type.googleapis.com/google.rpc.QuotaFailure",
                    "violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},
                   {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]),
        );
        assert_eq!(daily.error.kind, ProviderErrorKind::Quota);
        assert!(!daily.error.is_retryable());
        assert_eq!(daily.error.retry_after, Some(Duration::from_secs(7)));
    }

    #[test]
    fn array_bodies_raw_bodies_and_headers() {
        let wrapped = format!(
            "[{}]",
            String::from_utf8(body(404, "NOT_FOUND", "no model", json!([]))).unwrap()
        );
        let f = from_http_response(404, &HeaderMap::new(), wrapped.as_bytes());
        assert_eq!(f.error.kind, ProviderErrorKind::NotFound);
        assert_eq!(f.error.message, "no model");

        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        let f = from_http_response(502, &headers, b"<html>Bad Gateway</html>");
        assert_eq!(f.error.kind, ProviderErrorKind::Server);
        assert_eq!(f.error.message, "HTTP 502: <html>Bad Gateway</html>");
        assert_eq!(f.error.retry_after, Some(Duration::from_secs(2)));
        let empty = from_http_response(400, &HeaderMap::new(), b"");
        assert_eq!(empty.error.message, "HTTP 400 with an empty body");
        assert_eq!(empty.error.kind, ProviderErrorKind::InvalidRequest);
    }

    #[test]
    fn stream_chunks_map_by_code_and_status() {
        let e = from_stream_chunk(
            &json!({"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}),
        );
        assert_eq!(e.kind, ProviderErrorKind::Overloaded);
        assert_eq!(e.status, None);
        let e = from_stream_chunk(&json!({"error":{"message":"m","status":"INVALID_ARGUMENT"}}));
        assert_eq!(e.kind, ProviderErrorKind::InvalidRequest);
        let e = from_stream_chunk(&json!({"error":"text"}));
        assert_eq!(e.kind, ProviderErrorKind::Server);
    }
}
