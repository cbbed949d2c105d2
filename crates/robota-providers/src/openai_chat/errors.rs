//! OpenAI-compatible failures mapped onto `ProviderError` (wire.md §2.4, §6, §7.7): an HTTP
//! error status with its body in any of the shapes servers use — OpenAI's and llama.cpp's
//! `{"error":{message,type,code}}`, Ollama's `{"error":"…"}`, old vLLM's top-level
//! `{"object":"error",message,type,code}`, FastAPI's `{"detail":…}`, or no JSON at all —
//! and a mid-stream `data: {"error":…}` event. Context overflow, quota, rate limits (with the
//! server's delay from headers or "try again in 1.5s") and overload each get their kind.

use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::http;
use crate::retry::AttemptFailure;
use robota_core::{ProviderError, ProviderErrorKind};

/// Longest slice of a non-JSON error body quoted in a message.
const MAX_QUOTED_BODY_CHARS: usize = 300;

/// What an error body says, whatever its shape.
#[derive(Debug, Default, PartialEq)]
struct ErrorFields {
    message: Option<String>,
    error_type: Option<String>,
    /// `code` as text (`"context_length_exceeded"`, or a number such as `400`).
    code: Option<String>,
}

impl ErrorFields {
    fn from_json(json: &Value) -> ErrorFields {
        let text = |v: Option<&Value>| match v {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let object = match json.get("error") {
            Some(Value::String(message)) => {
                return ErrorFields {
                    message: Some(message.clone()),
                    ..ErrorFields::default()
                };
            }
            Some(inner @ Value::Object(_)) => inner,
            _ => json,
        };
        let message = text(object.get("message")).or_else(|| match object.get("detail") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(other @ (Value::Array(_) | Value::Object(_))) => Some(other.to_string()),
            _ => None,
        });
        ErrorFields {
            message,
            error_type: text(object.get("type")),
            code: text(object.get("code")),
        }
    }

    fn is(&self, name: &str) -> bool {
        self.error_type.as_deref() == Some(name) || self.code.as_deref() == Some(name)
    }

    fn status_code(&self) -> Option<u16> {
        self.code.as_deref()?.parse().ok()
    }
}

/// The failure an HTTP error response stands for.
pub(crate) fn from_http_response(status: u16, headers: &HeaderMap, body: &[u8]) -> AttemptFailure {
    let fields = serde_json::from_slice::<Value>(body)
        .map(|json| ErrorFields::from_json(&json))
        .unwrap_or_default();
    let message = fields
        .message
        .clone()
        .unwrap_or_else(|| describe_raw_body(status, body));
    let kind = kind_for(Some(status), &fields, &message);
    let retry_after = http::retry_after(headers).or_else(|| retry_after_in_message(&message));
    let mut error = ProviderError::new(kind, message)
        .with_status(status)
        .with_retry_after(retry_after);
    error.request_id = http::header_text(headers, "x-request-id");
    AttemptFailure {
        error,
        streamed: false,
        server_says_retry: http::should_retry_header(headers),
    }
}

/// The error a mid-stream `{"error":…}` (or old vLLM `{"object":"error",…}`) event stands for.
pub(crate) fn from_stream_event(event: &Value) -> ProviderError {
    let fields = ErrorFields::from_json(event);
    let message = fields
        .message
        .clone()
        .unwrap_or_else(|| format!("stream error: {event}"));
    let kind = kind_for(fields.status_code(), &fields, &message);
    let retry_after = retry_after_in_message(&message);
    ProviderError::new(kind, message).with_retry_after(retry_after)
}

/// Whether a data payload is an error rather than a chunk.
pub(crate) fn is_error_payload(json: &Value) -> bool {
    json.get("error").is_some_and(|e| !e.is_null())
        || json.get("object").and_then(Value::as_str) == Some("error")
}

fn kind_for(status: Option<u16>, fields: &ErrorFields, message: &str) -> ProviderErrorKind {
    use ProviderErrorKind as K;
    if is_context_overflow(fields, message) {
        return K::ContextTooLong;
    }
    if fields.is("insufficient_quota") || fields.is("billing_hard_limit_reached") {
        return K::Quota;
    }
    if fields.is("server_is_overloaded") || fields.is("slow_down") {
        return K::Overloaded;
    }
    match status {
        Some(400 | 413 | 422) => K::InvalidRequest,
        Some(401) => K::Auth,
        Some(402) => K::Quota,
        Some(403) => K::Permission,
        Some(404) => K::NotFound,
        Some(408) => K::Timeout,
        Some(409) => K::Server,
        Some(429) => K::RateLimited,
        Some(503 | 529) => K::Overloaded,
        Some(500..=599) => K::Server,
        Some(_) | None => kind_for_type(fields),
    }
}

/// The kind an error `type`/`code` names when the status does not decide it.
fn kind_for_type(fields: &ErrorFields) -> ProviderErrorKind {
    use ProviderErrorKind as K;
    let names = [fields.error_type.as_deref(), fields.code.as_deref()];
    for name in names.into_iter().flatten() {
        let kind = match name {
            "invalid_request_error" | "BadRequestError" | "invalid_api_request" => {
                K::InvalidRequest
            }
            "authentication_error" | "invalid_api_key" => K::Auth,
            "permission_error" => K::Permission,
            "not_found_error" | "model_not_found" | "NotFoundError" => K::NotFound,
            "rate_limit_exceeded" | "rate_limit_error" | "tokens" | "requests" => K::RateLimited,
            "unavailable_error" | "overloaded_error" => K::Overloaded,
            "timeout_error" => K::Timeout,
            _ => continue,
        };
        return kind;
    }
    K::Server
}

fn is_context_overflow(fields: &ErrorFields, message: &str) -> bool {
    if fields.is("context_length_exceeded") || fields.is("exceed_context_size_error") {
        return true;
    }
    let m = message.to_ascii_lowercase();
    [
        "maximum context length",
        "context length exceeded",
        "context_length_exceeded",
        "exceeds the available context size",
        "exceeds the context window",
        "context window exceeded",
        "prompt is too long",
        "input is too long",
        "too many tokens in the prompt",
        "is longer than the model's context length",
    ]
    .iter()
    .any(|needle| m.contains(needle))
}

/// OpenAI's "Please try again in 1.898s" / "in 28ms" inside the message.
fn retry_after_in_message(message: &str) -> Option<Duration> {
    static TRY_AGAIN: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(r"(?i)try again in\s*(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|seconds?)\b").ok()
    });
    let captures = TRY_AGAIN.as_ref()?.captures(message)?;
    let amount: f64 = captures.get(1)?.as_str().parse().ok()?;
    let unit = captures.get(2)?.as_str().to_ascii_lowercase();
    let secs = if unit.starts_with("ms") || unit.starts_with("milli") {
        amount / 1000.0
    } else {
        amount
    };
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
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

    fn failure(status: u16, body: Value) -> AttemptFailure {
        from_http_response(status, &HeaderMap::new(), body.to_string().as_bytes())
    }

    fn openai(status: u16, error_type: &str, code: Value, message: &str) -> ProviderErrorKind {
        failure(
            status,
            json!({"error":{"message":message,"type":error_type,"param":null,"code":code}}),
        )
        .error
        .kind
    }

    #[test]
    fn openai_shaped_bodies_map_to_kinds() {
        use ProviderErrorKind as K;
        let null = Value::Null;
        assert_eq!(
            openai(
                401,
                "invalid_request_error",
                json!("invalid_api_key"),
                "Incorrect API key"
            ),
            K::Auth
        );
        assert_eq!(
            openai(403, "permission_error", null.clone(), "no"),
            K::Permission
        );
        assert_eq!(
            openai(
                404,
                "invalid_request_error",
                json!("model_not_found"),
                "nope"
            ),
            K::NotFound
        );
        assert_eq!(
            openai(
                400,
                "invalid_request_error",
                json!("context_length_exceeded"),
                "This model's maximum context length is 128000 tokens."
            ),
            K::ContextTooLong
        );
        assert_eq!(
            openai(400, "invalid_request_error", null.clone(), "bad param"),
            K::InvalidRequest
        );
        assert_eq!(
            openai(
                429,
                "insufficient_quota",
                json!("insufficient_quota"),
                "You exceeded your current quota"
            ),
            K::Quota
        );
        assert_eq!(
            openai(429, "tokens", json!("rate_limit_exceeded"), "slow"),
            K::RateLimited
        );
        assert_eq!(
            openai(503, "server_error", null.clone(), "overloaded"),
            K::Overloaded
        );
        assert_eq!(openai(500, "server_error", null, "oops"), K::Server);
    }

    #[test]
    fn llamacpp_ollama_and_vllm_shapes_are_read() {
        let overflow = failure(
            400,
            json!({"error":{"code":400,"message":"request (20030 tokens) exceeds the available context size (16384 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":20030,"n_ctx":16384}}),
        );
        assert_eq!(overflow.error.kind, ProviderErrorKind::ContextTooLong);
        assert!(overflow.error.message.starts_with("request (20030 tokens)"));
        let ollama = failure(404, json!({"error":"model 'qwen9' not found"}));
        assert_eq!(ollama.error.kind, ProviderErrorKind::NotFound);
        assert_eq!(ollama.error.message, "model 'qwen9' not found");
        let vllm = failure(
            400,
            json!({"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens","type":"BadRequestError","param":null,"code":400}),
        );
        assert_eq!(vllm.error.kind, ProviderErrorKind::ContextTooLong);
        let fastapi = failure(
            422,
            json!({"detail":[{"loc":["body","model"],"msg":"field required"}]}),
        );
        assert_eq!(fastapi.error.kind, ProviderErrorKind::InvalidRequest);
        assert!(fastapi.error.message.contains("field required"));
    }

    #[test]
    fn retry_delay_from_headers_then_message() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        h.insert("x-request-id", HeaderValue::from_static("req_9"));
        let body = json!({"error":{"message":"Rate limit reached. Please try again in 1.898s.","type":"requests","code":"rate_limit_exceeded"}});
        let f = from_http_response(429, &h, body.to_string().as_bytes());
        assert_eq!(f.error.retry_after, Some(Duration::from_secs(2)));
        assert_eq!(f.error.request_id.as_deref(), Some("req_9"));
        let f = failure(429, body);
        assert_eq!(f.error.retry_after, Some(Duration::from_millis(1898)));
        assert_eq!(
            retry_after_in_message("Please try again in 28ms."),
            Some(Duration::from_millis(28))
        );
        assert_eq!(retry_after_in_message("try later"), None);
    }

    #[test]
    fn non_json_bodies_and_stream_events() {
        let f = from_http_response(502, &HeaderMap::new(), b"<html>Bad Gateway</html>");
        assert_eq!(f.error.kind, ProviderErrorKind::Server);
        assert_eq!(f.error.message, "HTTP 502: <html>Bad Gateway</html>");
        let e = from_stream_event(
            &json!({"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}),
        );
        assert_eq!(e.kind, ProviderErrorKind::ContextTooLong);
        assert_eq!(e.status, None);
        let e = from_stream_event(&json!({"error":{"message":"boom","type":"server_error"}}));
        assert_eq!(e.kind, ProviderErrorKind::Server);
        let e = from_stream_event(&json!({"error":"model crashed"}));
        assert_eq!(e.kind, ProviderErrorKind::Server);
        assert_eq!(e.message, "model crashed");
        let e = from_stream_event(
            &json!({"error":{"message":"Rate limit, try again in 3s","type":"rate_limit_error"}}),
        );
        assert_eq!(e.kind, ProviderErrorKind::RateLimited);
        assert_eq!(e.retry_after, Some(Duration::from_secs(3)));
        assert!(is_error_payload(&json!({"object":"error","message":"x"})));
        assert!(!is_error_payload(&json!({"error":null,"choices":[]})));
    }
}
