//! The events Claude Code documents beyond the first set (`record`), under its names and
//! attributes: `claude_code.assistant_response`, `claude_code.compaction` (beside robota's
//! `robota.compaction.count`), `claude_code.permission_mode_changed` and
//! `claude_code.api_retries_exhausted`. Like every record they only queue.

use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::logs::AnyValue;

use crate::record::{Telemetry, millis};

/// The most of a response's text an event carries (Claude Code's content limit).
const RESPONSE_LIMIT: usize = 60 * 1024;

/// One provider call's answer that had text.
#[derive(Debug, Clone, Copy)]
pub struct AssistantResponse<'a> {
    /// Its text blocks, joined.
    pub text: &'a str,
    /// The model that answered.
    pub model: &'a str,
    /// `main` or `subagent`.
    pub query_source: &'a str,
}

/// A compaction that completed.
#[derive(Debug, Clone, Copy)]
pub struct Compaction {
    /// `manual` (`/compact`) or `auto`.
    pub trigger: &'static str,
    /// How long it took, when its start was seen.
    pub duration: Option<Duration>,
    /// The context estimate before, in tokens.
    pub pre_tokens: u64,
    /// The context estimate after, in tokens.
    pub post_tokens: u64,
}

/// A provider call that failed after more than one attempt.
#[derive(Debug, Clone, Copy)]
pub struct RetriesExhausted<'a> {
    /// The model called.
    pub model: &'a str,
    /// The final error.
    pub error: &'a str,
    /// The final HTTP status, when there was a response.
    pub status_code: Option<u16>,
    /// Every attempt, the first included.
    pub total_attempts: u32,
    /// From the first attempt's start to the last one's failure.
    pub total_retry_duration: Duration,
}

impl Telemetry {
    /// `claude_code.assistant_response`; the text goes out only with
    /// `OTEL_LOG_ASSISTANT_RESPONSES` (or, when that is unset, `OTEL_LOG_USER_PROMPTS`),
    /// cut at 60 KB.
    pub fn assistant_response(&self, response: &AssistantResponse<'_>) {
        let text = if self.config.log_assistant_responses {
            cut_at_char_boundary(response.text, RESPONSE_LIMIT)
        } else {
            "<REDACTED>"
        };
        self.event(
            "claude_code.assistant_response",
            "assistant_response",
            vec![
                (
                    "response_length",
                    AnyValue::from(response.text.chars().count().to_string()),
                ),
                ("response", AnyValue::from(text.to_string())),
                ("model", AnyValue::from(response.model.to_string())),
                (
                    "query_source",
                    AnyValue::from(response.query_source.to_string()),
                ),
            ],
        );
    }

    /// `robota.compaction.count` (`trigger`) and the `claude_code.compaction` event.
    pub fn compaction(&self, compaction: &Compaction) {
        self.count(
            |i| &i.compactions,
            1,
            &[KeyValue::new("trigger", compaction.trigger)],
        );
        let mut attributes = vec![
            ("trigger", AnyValue::from(compaction.trigger)),
            ("success", AnyValue::from("true")),
            (
                "pre_tokens",
                AnyValue::from(compaction.pre_tokens.to_string()),
            ),
            (
                "post_tokens",
                AnyValue::from(compaction.post_tokens.to_string()),
            ),
        ];
        if let Some(duration) = compaction.duration {
            attributes.push(("duration_ms", AnyValue::from(millis(duration))));
        }
        self.event("claude_code.compaction", "compaction", attributes);
    }

    /// `claude_code.permission_mode_changed` (`from_mode`, `to_mode`; robota does not say
    /// what changed it, as Claude Code does not when its SDK does).
    pub fn permission_mode_changed(&self, from_mode: &str, to_mode: &str) {
        self.event(
            "claude_code.permission_mode_changed",
            "permission_mode_changed",
            vec![
                ("from_mode", AnyValue::from(from_mode.to_string())),
                ("to_mode", AnyValue::from(to_mode.to_string())),
            ],
        );
    }

    /// `claude_code.api_retries_exhausted`, beside the final `claude_code.api_error`.
    pub fn api_retries_exhausted(&self, failure: &RetriesExhausted<'_>) {
        let mut attributes = vec![
            ("model", AnyValue::from(failure.model.to_string())),
            ("error", AnyValue::from(failure.error.to_string())),
            (
                "total_attempts",
                AnyValue::from(failure.total_attempts.to_string()),
            ),
            (
                "total_retry_duration_ms",
                AnyValue::from(millis(failure.total_retry_duration)),
            ),
        ];
        if let Some(status) = failure.status_code {
            attributes.push(("status_code", AnyValue::from(i64::from(status))));
        }
        self.event(
            "claude_code.api_retries_exhausted",
            "api_retries_exhausted",
            attributes,
        );
    }
}

/// `text` up to `limit` bytes, cut where a character begins.
fn cut_at_char_boundary(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_response_is_cut_on_a_character_boundary() {
        assert_eq!(cut_at_char_boundary("héllo", 2), "h");
        assert_eq!(cut_at_char_boundary("héllo", 3), "hé");
        assert_eq!(cut_at_char_boundary("short", 60), "short");
    }
}
