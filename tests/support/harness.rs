//! What every provider test suite does with an adapter: call it with a fast retry policy,
//! collect its stream events, and read the outcome (the turn or the error, the retries,
//! the streamed text, thinking and tool input).
#![allow(dead_code)]

use std::sync::Mutex;
use std::time::Duration;

use robota::core::{
    AssistantTurn, Block, Message, Provider, ProviderError, ProviderRequest, Role, StreamEvent,
};
use robota::providers::RetryPolicy;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Retries with millisecond delays, so retry tests run fast.
pub fn fast_retry(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(2),
        max_server_delay: Duration::from_secs(60),
    }
}

/// The result of one call and every event it streamed.
pub struct Outcome {
    pub result: Result<AssistantTurn, ProviderError>,
    pub events: Vec<StreamEvent>,
}

impl Outcome {
    pub fn turn(&self) -> &AssistantTurn {
        self.result.as_ref().expect("the call succeeds")
    }

    pub fn error(&self) -> &ProviderError {
        self.result.as_ref().expect_err("the call fails")
    }

    pub fn retries(&self) -> Vec<&StreamEvent> {
        self.events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Retrying { .. }))
            .collect()
    }

    pub fn streamed_text(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn streamed_thinking(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ThinkingDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The concatenated `ToolInputDelta`s of the call with `id`.
    pub fn streamed_input(&self, id: &str) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolInputDelta {
                    id: call,
                    partial_json,
                } if call == id => Some(partial_json.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// One call, bounded in time.
pub async fn run(provider: &dyn Provider, request: &ProviderRequest) -> Outcome {
    let seen = Mutex::new(Vec::new());
    let sink = |e: StreamEvent| seen.lock().unwrap().push(e);
    let cancel = CancellationToken::new();
    let result = tokio::time::timeout(
        Duration::from_secs(30),
        provider.stream(request, &sink, &cancel),
    )
    .await
    .expect("the call ends in bounded time");
    Outcome {
        result,
        events: seen.into_inner().unwrap(),
    }
}

/// The answer's text.
pub fn text(turn: &AssistantTurn) -> String {
    Message::new(Role::Assistant, turn.content.clone()).text()
}

/// The answer's tool calls as (id, name, input).
pub fn tool_calls(turn: &AssistantTurn) -> Vec<(String, String, Value)> {
    turn.content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, name, input } => Some((id.clone(), name.clone(), input.clone())),
            _ => None,
        })
        .collect()
}

/// Cancelling while the server holds the stream open ends the call promptly with
/// `Cancelled`, after one request. `server` holds its (only) stream after some text.
pub async fn assert_cancel_during_held_stream(
    provider: &dyn Provider,
    server: &super::MockServer,
    request: &ProviderRequest,
) {
    let cancel = CancellationToken::new();
    let sink = |e: StreamEvent| {
        if matches!(e, StreamEvent::TextDelta(_)) {
            cancel.cancel();
        }
    };
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        provider.stream(request, &sink, &cancel),
    )
    .await
    .expect("cancellation ends the call promptly");
    assert_eq!(
        result.unwrap_err().kind,
        robota::core::ProviderErrorKind::Cancelled
    );
    assert_eq!(server.requests().len(), 1);
}

/// A held stream released by the test finishes normally with the whole `expected` text.
pub async fn assert_released_hold_finishes(
    provider: &dyn Provider,
    server: &super::MockServer,
    request: &ProviderRequest,
    expected: &str,
) {
    let release = || server.release_held();
    let sink = |e: StreamEvent| {
        if matches!(e, StreamEvent::TextDelta(_)) {
            release();
        }
    };
    let turn = tokio::time::timeout(
        Duration::from_secs(20),
        provider.stream(request, &sink, &CancellationToken::new()),
    )
    .await
    .expect("bounded")
    .expect("the released stream completes");
    assert_eq!(text(&turn), expected);
}
