//! Failures end to end: HTTP errors and their kinds, retries after 429/529/5xx, cut and
//! stalled streams, mid-stream error events, `x-should-retry`, and prompt cancellation.

use crate::support::harness;
use std::time::Duration;

use robota::core::{ProviderErrorKind, StreamEvent};

use crate::support::anthropic as mock;
use crate::support::{MockResponse, MockServer};
use crate::{provider_with, replay, request, run, text};

#[tokio::test]
async fn rate_limited_with_retry_after_zero_then_success() {
    let (out, server) = replay(
        vec![
            mock::error_status(429, "rate_limit_error", "slow down", Some("0")),
            mock::text_turn("done"),
        ],
        2,
    )
    .await;
    assert_eq!(text(out.turn()), "done");
    let retries = out.retries();
    assert_eq!(retries.len(), 1);
    assert!(matches!(
        retries[0],
        StreamEvent::Retrying { attempt: 1, max_attempts: 2, status: Some(429), error, .. } if error == "slow down"
    ));
    assert!(!out.events.contains(&StreamEvent::AttemptDiscarded));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn overloaded_529_then_success_including_the_recorded_one() {
    let (out, _server) = replay(
        vec![
            mock::error_status(529, "overloaded_error", "Overloaded", None),
            mock::fixture("anthropic/error_529_overloaded_issue616.txt"),
            mock::text_turn("finally"),
        ],
        3,
    )
    .await;
    assert_eq!(text(out.turn()), "finally");
    assert_eq!(out.retries().len(), 2);
}

#[tokio::test]
async fn server_saying_do_not_retry_is_obeyed() {
    let (out, server) = replay(
        vec![
            MockResponse::Http {
                status: 529,
                headers: vec![("x-should-retry".into(), "false".into())],
                body:
                    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
                        .into(),
            },
            mock::text_turn("never served"),
        ],
        3,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::Overloaded);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn stream_cut_once_is_discarded_and_retried() {
    let (out, server) = replay(
        vec![
            mock::text_turn_cut("first attempt text", 4),
            mock::text_turn("second answer"),
        ],
        2,
    )
    .await;
    assert_eq!(text(out.turn()), "second answer");
    let discard = out
        .events
        .iter()
        .position(|e| *e == StreamEvent::AttemptDiscarded)
        .expect("partial attempt discarded");
    assert!(matches!(
        out.events[discard + 1],
        StreamEvent::Retrying { attempt: 1, .. }
    ));
    let after: String = out.events[discard..]
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(after, "second answer");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn stream_cut_on_every_attempt_gives_up_with_stream_cut() {
    let max_retries = 2;
    let script = (0..=max_retries)
        .map(|_| mock::text_turn_cut("never finished", 4))
        .collect();
    let (out, server) = replay(script, max_retries).await;
    assert_eq!(out.error().kind, ProviderErrorKind::StreamCut);
    assert_eq!(server.requests().len(), max_retries as usize + 1);
    assert_eq!(out.retries().len(), max_retries as usize);
    let discards = out
        .events
        .iter()
        .filter(|e| **e == StreamEvent::AttemptDiscarded)
        .count();
    assert_eq!(discards, max_retries as usize);
}

#[tokio::test]
async fn mid_stream_error_event_fails_or_retries() {
    let (out, _server) = replay(
        vec![mock::text_then_error_event(
            "partial",
            "overloaded_error",
            "Overloaded",
        )],
        0,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::Overloaded);
    assert_eq!(out.streamed_text(), "partial");

    let (out, _server) = replay(
        vec![
            mock::text_then_error_event("partial", "api_error", "Internal server error"),
            mock::text_turn("whole answer"),
        ],
        1,
    )
    .await;
    assert_eq!(text(out.turn()), "whole answer");
    assert!(out.events.contains(&StreamEvent::AttemptDiscarded));
}

#[tokio::test]
async fn unauthorized_is_auth_and_not_retried() {
    let (out, server) = replay(
        vec![
            mock::error_status(401, "authentication_error", "invalid x-api-key", None),
            mock::text_turn("never served"),
        ],
        3,
    )
    .await;
    let error = out.error();
    assert_eq!(error.kind, ProviderErrorKind::Auth);
    assert_eq!(error.status, Some(401));
    assert_eq!(error.request_id.as_deref(), Some("req_mock_error"));
    assert!(error.user_message().contains("check your API key"));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn prompt_too_long_is_context_too_long() {
    let (out, _server) = replay(
        vec![mock::error_status(
            400,
            "invalid_request_error",
            "prompt is too long: 212345 tokens > 200000 maximum",
            None,
        )],
        3,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::ContextTooLong);
    assert_eq!(out.error().status, Some(400));
}

#[tokio::test]
async fn exhausted_retries_on_server_errors_return_the_last_error() {
    // Past the script's end the mock answers 500 api_error.
    let (out, server) = replay(vec![], 1).await;
    assert_eq!(out.error().kind, ProviderErrorKind::Server);
    assert_eq!(out.error().message, "mock script exhausted");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn idle_stream_times_out_and_is_retried() {
    let server = MockServer::start(vec![
        mock::text_turn_held("stalled answer", 4),
        mock::text_turn("after the stall"),
    ]);
    let provider = provider_with(&server, 1, Duration::from_millis(200));
    let out = run(&provider, &request()).await;
    assert_eq!(text(out.turn()), "after the stall");
    assert!(matches!(
        out.retries()[0],
        StreamEvent::Retrying { error, .. } if error.contains("no data for 200 ms")
    ));
    assert!(out.events.contains(&StreamEvent::AttemptDiscarded));

    let server = MockServer::start(vec![mock::text_turn_held("stalled", 0)]);
    let out = run(
        &provider_with(&server, 0, Duration::from_millis(200)),
        &request(),
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::Timeout);
}

#[tokio::test]
async fn cancel_during_a_held_stream_returns_promptly() {
    let server = MockServer::start(vec![mock::text_turn_held("hello there friend", 4)]);
    let provider = provider_with(&server, 3, Duration::from_secs(60));
    harness::assert_cancel_during_held_stream(&provider, &server, &request()).await;
}

#[tokio::test]
async fn released_hold_lets_the_stream_finish() {
    let server = MockServer::start(vec![mock::text_turn_held("held then released", 4)]);
    let provider = provider_with(&server, 0, Duration::from_secs(20));
    harness::assert_released_hold_finishes(&provider, &server, &request(), "held then released")
        .await;
}

#[tokio::test]
async fn server_retry_after_sets_the_announced_delay() {
    let (out, _server) = replay(
        vec![
            mock::error_status(429, "rate_limit_error", "slow down", Some("0.003")),
            mock::text_turn("ok"),
        ],
        1,
    )
    .await;
    assert_eq!(text(out.turn()), "ok");
    assert!(matches!(
        out.retries()[0],
        StreamEvent::Retrying { delay, .. } if *delay == Duration::from_millis(3)
    ));
}

#[tokio::test]
async fn a_json_200_instead_of_a_stream_is_a_decode_error() {
    let (out, _server) = replay(
        vec![MockResponse::Http {
            status: 200,
            headers: vec![],
            body: r#"{"type":"message","content":[]}"#.into(),
        }],
        2,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::Decode);
    assert!(out.error().message.contains("expected an event stream"));
    assert!(out.retries().is_empty());
}

#[tokio::test]
async fn a_trickle_that_never_completes_an_event_ends_at_the_idle_deadline() {
    // message_start, ping and the block start arrive; then one byte at a time of an event
    // that never ends — every byte would have reset a per-byte idle timer for 40 s.
    let head = mock::text_turn_chunks("never")[..3].to_vec();
    let server = MockServer::start(vec![MockResponse::Trickle {
        head,
        every: Duration::from_millis(20),
        bytes: 2_000,
    }]);
    let out = run(
        &provider_with(&server, 0, Duration::from_millis(300)),
        &request(),
    )
    .await;
    assert_eq!(
        out.error().kind,
        ProviderErrorKind::Timeout,
        "{:?}",
        out.error()
    );
    assert!(
        out.error().message.contains("no complete event"),
        "{}",
        out.error().message
    );
}
