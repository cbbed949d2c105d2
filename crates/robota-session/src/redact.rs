//! Secret redaction for everything written to the session log. Walks a JSON value
//! recursively: the value of any object key that names a credential (api key,
//! authorization, access/refresh token, token, secret, password, x-api-key, client secret)
//! becomes `"[REDACTED]"`, and provider keys embedded in any string (`sk-ant-…`, `sk-…`,
//! `AIza…`, and every credential value robota knows it uses, whatever its shape) are
//! replaced in place — except inside encrypted thinking signatures and base64
//! image data, which must reach the provider unchanged. Everything else is left exactly as
//! it was.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Provider keys as they appear inside free text: Anthropic `sk-ant-…`, OpenAI-style
/// `sk-…` (20+ characters after the prefix) and Google `AIza…`.
static PROVIDER_KEY: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"\bsk-ant-[A-Za-z0-9_-]{8,}|\bsk-[A-Za-z0-9_-]{20,}|\bAIza[0-9A-Za-z_-]{30,}").ok()
});

/// Redacts secrets in `value` in place.
pub fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let carries_payload = matches!(
                map.get("type").and_then(Value::as_str),
                Some("thinking" | "redacted_thinking" | "base64")
            );
            for (key, field) in map.iter_mut() {
                if is_secret_key(key) {
                    if !field.is_null() {
                        *field = Value::String(REDACTED.to_string());
                    }
                } else if carries_payload && (key == "signature" || key == "data") {
                    // Encrypted thinking and base64 images: a chance match of a key
                    // pattern inside them would corrupt what the provider must get back.
                } else {
                    redact(field);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        Value::String(text) => {
            if let Cow::Owned(replaced) = redact_text(text) {
                *text = replaced;
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Whether an object key names a credential. Separators (`-`, `_`) and case are ignored;
/// `token` must end the key so that usage counters such as `input_tokens` stay readable,
/// while `github_token` or `accessToken` are redacted.
pub fn is_secret_key(key: &str) -> bool {
    let normalised: String = key
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    normalised.contains("apikey")
        || normalised.contains("authorization")
        || normalised.contains("secret")
        || normalised.contains("password")
        || normalised.ends_with("token")
}

/// Where provider keys lie in `text` (byte ranges), by the rule [`redact_text`] applies.
pub fn key_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let Some(pattern) = PROVIDER_KEY.as_ref() else {
        return Vec::new();
    };
    pattern
        .find_iter(text)
        .filter(|m| is_key(m.as_str()))
        .map(|m| m.range())
        .collect()
}

/// Real keys carry digits; a long hyphenated word such as "sk-learn-tutorial-notes" does
/// not, and is left alone.
fn is_key(found: &str) -> bool {
    found.starts_with("sk-ant-") || found.bytes().any(|b| b.is_ascii_digit())
}

/// Replaces provider keys and every credential robota knows it uses (the key in use, a
/// gateway token, a base URL's password, what `apiKeyHelper` printed — see
/// `robota_core::credentials`) inside `text`; borrows when there is nothing to replace.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    let keys = redact_key_shapes(text);
    let known = match robota_core::credentials::redact_known(&keys) {
        Cow::Owned(replaced) => Some(replaced),
        Cow::Borrowed(_) => None,
    };
    match known {
        Some(replaced) => Cow::Owned(replaced),
        None => keys,
    }
}

/// Replaces the provider keys recognised by their shape.
fn redact_key_shapes(text: &str) -> Cow<'_, str> {
    if !(text.contains("sk-") || text.contains("AIza")) {
        return Cow::Borrowed(text);
    }
    let Some(pattern) = PROVIDER_KEY.as_ref() else {
        return Cow::Borrowed(text);
    };
    pattern.replace_all(text, |caps: &regex::Captures<'_>| {
        let found = &caps[0];
        if is_key(found) {
            REDACTED.to_string()
        } else {
            found.to_string()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn credential_keys_are_redacted_at_any_depth() {
        let mut v = json!({
            "api_key": "abc",
            "headers": {"Authorization": "Bearer xyz", "X-Api-Key": "k", "accept": "json"},
            "list": [{"password": "p", "user": "me"}, {"nested": {"client_secret": "s"}}],
            "accessToken": "a", "refresh-token": "r", "token": "t", "github_token": "g",
            "SECRET": {"deep": 1}, "apiKey": null,
        });
        redact(&mut v);
        assert_eq!(
            v,
            json!({
                "api_key": "[REDACTED]",
                "headers": {"Authorization": "[REDACTED]", "X-Api-Key": "[REDACTED]", "accept": "json"},
                "list": [{"password": "[REDACTED]", "user": "me"}, {"nested": {"client_secret": "[REDACTED]"}}],
                "accessToken": "[REDACTED]", "refresh-token": "[REDACTED]", "token": "[REDACTED]",
                "github_token": "[REDACTED]", "SECRET": "[REDACTED]", "apiKey": null,
            })
        );
    }

    #[test]
    fn usage_counters_and_ordinary_keys_are_kept() {
        let original = json!({
            "usage": {"input_tokens": 10, "output_tokens": 2, "cache_read_input_tokens": 0},
            "max_tokens": 100, "tool_use_id": "toolu_1", "keyboard": "us", "tokens": 5,
        });
        let mut v = original.clone();
        redact(&mut v);
        assert_eq!(v, original);
    }

    #[test]
    fn provider_keys_inside_strings_are_replaced_in_place() {
        let mut v = json!({
            "command": "export ANTHROPIC_API_KEY=sk-ant-api03-AbCdEf123456_xyz && run",
            "out": ["key sk-proj-1234567890abcdefghijKLMN end", "g=AIzaSyA1234567890abcdefghijklmnopqrstu"],
        });
        redact(&mut v);
        assert_eq!(
            v,
            json!({
                "command": "export ANTHROPIC_API_KEY=[REDACTED] && run",
                "out": ["key [REDACTED] end", "g=[REDACTED]"],
            })
        );
    }

    #[test]
    fn signatures_and_image_data_are_left_intact_but_their_text_is_not() {
        let payload = "AAAA/AIzaSyA1234567890abcdefghijklmnopqrstu+sk-0123456789abcdefghijk";
        let mut v = json!([
            {"type": "thinking", "thinking": "use sk-ant-api03-secret123", "signature": payload},
            {"type": "redacted_thinking", "data": payload},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": payload}},
        ]);
        redact(&mut v);
        assert_eq!(v[0]["thinking"], "use [REDACTED]");
        assert_eq!(v[0]["signature"], payload);
        assert_eq!(v[1]["data"], payload);
        assert_eq!(v[2]["source"]["data"], payload);
        let mut elsewhere = json!({"data": payload});
        redact(&mut elsewhere);
        assert_eq!(elsewhere["data"], "AAAA/[REDACTED]+[REDACTED]");
    }

    #[test]
    fn words_that_merely_contain_sk_are_not_keys() {
        for text in [
            "a risk-assessment-for-the-whole-project-2024 report",
            "task-0123456789012345678901234",
            "sk-learn-tutorial-notebook-pages",
            "sk-short1",
        ] {
            assert_eq!(redact_text(text), text, "{text}");
        }
    }
}
