//! OpenAI failures mapped onto `ProviderError` (wire.md §2.4, §3.3, §7.7): an HTTP error
//! status with its `{"error":{message,type,param,code}}` body and headers, a mid-stream
//! `error` event (nested or flat), and a `response.failed` event's `response.error`. Also
//! where a retry delay comes from when the server names one: `retry-after-ms`,
//! `retry-after`, the "try again in 1.5s" text of the message, or `x-ratelimit-reset-*`.

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
    let field = |name: &str| {
        error_obj
            .and_then(|e| e.get(name))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let (code, error_type) = (field("code"), field("type"));
    let message = field("message")
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| describe_raw_body(status, body));
    let kind = kind_for_status(status, code.as_deref(), error_type.as_deref(), &message);
    let retry_after = http::retry_after(headers)
        .or_else(|| retry_delay_from_message(&message))
        .or_else(|| rate_limit_reset(headers));
    let mut error = ProviderError::new(kind, message)
        .with_status(status)
        .with_retry_after(retry_after);
    error.request_id = http::header_text(headers, "x-request-id")
        .or_else(|| http::header_text(headers, "request-id"));
    let server_says_retry = match kind {
        // Out of credit stays out of credit, whatever a header says.
        ProviderErrorKind::Quota => Some(false),
        _ => http::should_retry_header(headers),
    };
    AttemptFailure {
        error,
        streamed: false,
        server_says_retry,
    }
}

/// The error a mid-stream `error` event stands for. The wire nests the fields
/// (`{"type":"error","error":{type,code,message,param}}`); the SDK types declare them at
/// the top level: both are accepted.
pub(crate) fn from_stream_error(event: &Value) -> ProviderError {
    let source = event
        .get("error")
        .filter(|e| e.is_object())
        .unwrap_or(event);
    let text = |name: &str| source.get(name).and_then(Value::as_str);
    let code = text("code");
    // At the top level `type` is the event's own type ("error"), not an error class.
    let error_type = text("type").filter(|t| *t != "error");
    let message = text("message")
        .map(str::to_string)
        .unwrap_or_else(|| format!("stream error: {event}"));
    from_code(code, error_type, message)
}

/// The error of a `response.failed` event, from its `response.error{code,message}`.
pub(crate) fn from_failed_response(response: &Value) -> ProviderError {
    let error = response.get("error").filter(|e| e.is_object());
    let text = |name: &str| error.and_then(|e| e.get(name)).and_then(Value::as_str);
    let message = text("message")
        .map(str::to_string)
        .unwrap_or_else(|| "the response failed without an error message".to_string());
    from_code(text("code"), text("type"), message)
}

fn from_code(code: Option<&str>, error_type: Option<&str>, message: String) -> ProviderError {
    let kind = code
        .and_then(|c| kind_for_code(c, &message))
        .or_else(|| error_type.and_then(|t| kind_for_code(t, &message)))
        .unwrap_or_else(|| {
            if is_context_overflow(&message) {
                ProviderErrorKind::ContextTooLong
            } else {
                ProviderErrorKind::Server
            }
        });
    let retry_after = retry_delay_from_message(&message);
    ProviderError::new(kind, message).with_retry_after(retry_after)
}

/// The `error` object of an error body. Some servers (old vLLM) put the fields at the top.
fn error_object(body: &Value) -> Option<&Value> {
    match body.get("error") {
        Some(e) if e.is_object() => Some(e),
        _ if body.get("message").is_some() => Some(body),
        _ => None,
    }
}

fn kind_for_status(
    status: u16,
    code: Option<&str>,
    error_type: Option<&str>,
    message: &str,
) -> ProviderErrorKind {
    let by_code = || {
        code.and_then(|c| kind_for_code(c, message))
            .or_else(|| error_type.and_then(|t| kind_for_code(t, message)))
    };
    match status {
        400 | 413
            if is_context_overflow(message)
                || by_code() == Some(ProviderErrorKind::ContextTooLong) =>
        {
            ProviderErrorKind::ContextTooLong
        }
        400 | 413 | 422 => ProviderErrorKind::InvalidRequest,
        401 => ProviderErrorKind::Auth,
        402 => ProviderErrorKind::Quota,
        403 => ProviderErrorKind::Permission,
        404 => ProviderErrorKind::NotFound,
        408 => ProviderErrorKind::Timeout,
        409 => ProviderErrorKind::Server,
        429 => match by_code() {
            Some(ProviderErrorKind::Quota) => ProviderErrorKind::Quota,
            _ => ProviderErrorKind::RateLimited,
        },
        503 | 529 => ProviderErrorKind::Overloaded,
        500..=599 => match by_code() {
            Some(ProviderErrorKind::Overloaded) => ProviderErrorKind::Overloaded,
            _ => ProviderErrorKind::Server,
        },
        400..=499 => by_code().unwrap_or(ProviderErrorKind::InvalidRequest),
        _ => ProviderErrorKind::Server,
    }
}

/// The kind an OpenAI error `code` (or `type`) names; `None` when it names none we know.
/// Anthropic-style type names appear too, from gateways that speak this API.
fn kind_for_code(code: &str, message: &str) -> Option<ProviderErrorKind> {
    use ProviderErrorKind as K;
    Some(match code {
        "context_length_exceeded" | "exceed_context_size_error" => K::ContextTooLong,
        "insufficient_quota"
        | "billing_hard_limit_reached"
        | "billing_not_active"
        | "billing_error" => K::Quota,
        "rate_limit_exceeded" | "rate_limit_error" | "requests" | "tokens" => K::RateLimited,
        "server_is_overloaded" | "slow_down" | "overloaded_error" => K::Overloaded,
        "invalid_api_key" | "authentication_error" | "invalid_authentication" => K::Auth,
        "permission_error" | "unsupported_country_region_territory" => K::Permission,
        "model_not_found" | "not_found_error" => K::NotFound,
        "invalid_request_error" | "invalid_prompt" | "invalid_value" | "invalid_type" => {
            if is_context_overflow(message) {
                K::ContextTooLong
            } else {
                K::InvalidRequest
            }
        }
        "server_error" | "api_error" | "internal_error" => K::Server,
        "timeout_error" => K::Timeout,
        _ => return None,
    })
}

/// Messages OpenAI and the servers that copy it use for a prompt that does not fit.
fn is_context_overflow(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("maximum context length")
        || m.contains("context window")
        || m.contains("context_length_exceeded")
        || m.contains("prompt is too long")
        || m.contains("exceeds the available context size")
}

/// The delay in "…Please try again in 11.054s." / "…in 28ms" (codex's rule, wire.md §3.3).
pub(crate) fn retry_delay_from_message(message: &str) -> Option<Duration> {
    const MARKER: &str = "try again in";
    // ASCII lowercasing keeps byte offsets, so positions carry over to the original.
    let lower = message.to_ascii_lowercase();
    let start = lower.find(MARKER)? + MARKER.len();
    let rest = lower[start..].trim_start();
    let number_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let value: f64 = rest[..number_len].trim_end_matches('.').parse().ok()?;
    if !value.is_finite() || value < 0.0 {
        return None;
    }
    let unit = rest[number_len..].trim_start();
    if unit.starts_with("ms") {
        Some(Duration::from_secs_f64(value / 1000.0))
    } else if unit.starts_with('s') {
        Some(Duration::from_secs_f64(value))
    } else {
        None
    }
}

/// `x-ratelimit-reset-{tokens,requests}`: the one whose `remaining` is 0, else the longer.
fn rate_limit_reset(headers: &HeaderMap) -> Option<Duration> {
    let reset = |kind: &str| {
        http::header_text(headers, &format!("x-ratelimit-reset-{kind}"))
            .and_then(|v| parse_go_duration(&v))
    };
    let exhausted = |kind: &str| {
        http::header_text(headers, &format!("x-ratelimit-remaining-{kind}"))
            .is_some_and(|v| v.trim() == "0")
    };
    for kind in ["tokens", "requests"] {
        if exhausted(kind)
            && let Some(d) = reset(kind)
        {
            return Some(d);
        }
    }
    match (reset("tokens"), reset("requests")) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// A Go duration (`1s`, `6m0s`, `2m59.56s`, `630ms`, `1h2m`) or plain seconds (Azure).
pub(crate) fn parse_go_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let mut rest = text;
    let mut total = 0.0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let value: f64 = rest[..number_len].parse().ok()?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        total += value * scale;
        rest = &rest[unit_len..];
    }
    total.is_finite().then(|| Duration::from_secs_f64(total))
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

    fn body(error_type: &str, code: Option<&str>, message: &str) -> Vec<u8> {
        json!({"error":{"message":message,"type":error_type,"param":null,"code":code}})
            .to_string()
            .into_bytes()
    }

    fn kind(status: u16, error_type: &str, code: Option<&str>, message: &str) -> ProviderErrorKind {
        from_http_response(status, &HeaderMap::new(), &body(error_type, code, message))
            .error
            .kind
    }

    #[test]
    fn statuses_and_codes_map_to_kinds() {
        use ProviderErrorKind as K;
        let bad_key = "Incorrect API key provided: sk-xx. You can find your API key at …";
        assert_eq!(
            kind(
                401,
                "invalid_request_error",
                Some("invalid_api_key"),
                bad_key
            ),
            K::Auth
        );
        assert_eq!(
            kind(403, "invalid_request_error", None, "region"),
            K::Permission
        );
        assert_eq!(
            kind(404, "invalid_request_error", Some("model_not_found"), "no"),
            K::NotFound
        );
        assert_eq!(
            kind(400, "invalid_request_error", None, "bad"),
            K::InvalidRequest
        );
        let long = "This model's maximum context length is 128000 tokens. However, you requested 130000 tokens.";
        assert_eq!(
            kind(
                400,
                "invalid_request_error",
                Some("context_length_exceeded"),
                long
            ),
            K::ContextTooLong
        );
        assert_eq!(
            kind(
                400,
                "invalid_request_error",
                Some("context_length_exceeded"),
                "x"
            ),
            K::ContextTooLong
        );
        assert_eq!(
            kind(429, "requests", Some("rate_limit_exceeded"), "slow"),
            K::RateLimited
        );
        assert_eq!(
            kind(429, "insufficient_quota", Some("insufficient_quota"), "pay"),
            K::Quota
        );
        assert_eq!(kind(500, "server_error", None, "oops"), K::Server);
        assert_eq!(
            kind(503, "server_error", Some("slow_down"), "slow"),
            K::Overloaded
        );
        assert_eq!(
            kind(502, "server_error", Some("server_is_overloaded"), "busy"),
            K::Overloaded
        );
    }

    #[test]
    fn quota_is_never_retried_even_when_a_header_says_so() {
        let mut h = HeaderMap::new();
        h.insert("x-should-retry", HeaderValue::from_static("true"));
        let f = from_http_response(
            429,
            &h,
            &body("insufficient_quota", Some("insufficient_quota"), "pay"),
        );
        assert_eq!(f.server_says_retry, Some(false));
        assert!(!f.error.is_retryable());
    }

    #[test]
    fn retry_delay_comes_from_headers_then_message_then_reset_headers() {
        let msg = "Rate limit reached for gpt-4.1 on tokens per min (TPM): Limit 30000. Please try again in 1.5s. Visit …";
        let mut h = HeaderMap::new();
        h.insert("x-request-id", HeaderValue::from_static("req_abc"));
        let f = from_http_response(429, &h, &body("tokens", Some("rate_limit_exceeded"), msg));
        assert_eq!(f.error.retry_after, Some(Duration::from_millis(1500)));
        assert_eq!(f.error.request_id.as_deref(), Some("req_abc"));
        h.insert("retry-after", HeaderValue::from_static("2"));
        let f = from_http_response(429, &h, &body("tokens", Some("rate_limit_exceeded"), msg));
        assert_eq!(f.error.retry_after, Some(Duration::from_secs(2)));

        let mut h = HeaderMap::new();
        h.insert(
            "x-ratelimit-remaining-tokens",
            HeaderValue::from_static("0"),
        );
        h.insert(
            "x-ratelimit-reset-tokens",
            HeaderValue::from_static("2m59.56s"),
        );
        h.insert(
            "x-ratelimit-reset-requests",
            HeaderValue::from_static("120ms"),
        );
        let f = from_http_response(
            429,
            &h,
            &body("tokens", Some("rate_limit_exceeded"), "slow"),
        );
        assert_eq!(f.error.retry_after, Some(Duration::from_millis(179_560)));
    }

    #[test]
    fn try_again_text_and_go_durations_parse() {
        assert_eq!(
            retry_delay_from_message("Please try again in 11.054s. Visit"),
            Some(Duration::from_millis(11_054))
        );
        assert_eq!(
            retry_delay_from_message("Try again in 28ms."),
            Some(Duration::from_millis(28))
        );
        assert_eq!(
            retry_delay_from_message("try again in 3 seconds"),
            Some(Duration::from_secs(3))
        );
        assert_eq!(retry_delay_from_message("try again later"), None);
        assert_eq!(parse_go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(
            parse_go_duration("1m26.4s"),
            Some(Duration::from_millis(86_400))
        );
        assert_eq!(parse_go_duration("630ms"), Some(Duration::from_millis(630)));
        assert_eq!(parse_go_duration("1h2m"), Some(Duration::from_secs(3720)));
        assert_eq!(parse_go_duration("15"), Some(Duration::from_secs(15)));
        assert_eq!(parse_go_duration("soon"), None);
        assert_eq!(parse_go_duration(""), None);
    }

    #[test]
    fn non_json_and_flat_bodies_still_give_a_message() {
        let f = from_http_response(502, &HeaderMap::new(), b"<html>Bad Gateway</html>");
        assert_eq!(f.error.kind, ProviderErrorKind::Server);
        assert_eq!(f.error.message, "HTTP 502: <html>Bad Gateway</html>");
        let flat = json!({"object":"error","message":"too long: exceeds the available context size","type":"BadRequestError","code":400});
        let f = from_http_response(400, &HeaderMap::new(), flat.to_string().as_bytes());
        assert_eq!(f.error.kind, ProviderErrorKind::ContextTooLong);
    }

    #[test]
    fn stream_errors_map_nested_flat_and_failed_responses() {
        let nested = json!({"type":"error","sequence_number":2,"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your current quota","param":null}});
        assert_eq!(from_stream_error(&nested).kind, ProviderErrorKind::Quota);
        let flat =
            json!({"type":"error","code":"server_is_overloaded","message":"busy","param":null});
        assert_eq!(from_stream_error(&flat).kind, ProviderErrorKind::Overloaded);
        let bare = json!({"type":"error"});
        assert_eq!(from_stream_error(&bare).kind, ProviderErrorKind::Server);

        let failed = json!({"id":"resp_1","status":"failed","error":{"code":"rate_limit_exceeded","message":"Please try again in 11.054s."}});
        let e = from_failed_response(&failed);
        assert_eq!(e.kind, ProviderErrorKind::RateLimited);
        assert_eq!(e.retry_after, Some(Duration::from_millis(11_054)));
        let ctx = json!({"error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}});
        assert_eq!(
            from_failed_response(&ctx).kind,
            ProviderErrorKind::ContextTooLong
        );
        let invalid = json!({"error":{"code":"invalid_prompt","message":"flagged"}});
        assert_eq!(
            from_failed_response(&invalid).kind,
            ProviderErrorKind::InvalidRequest
        );
        assert_eq!(
            from_failed_response(&json!({})).kind,
            ProviderErrorKind::Server
        );
    }
}
