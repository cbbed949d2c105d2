//! Failures end to end: HTTP errors and their kinds, retries after 429 (server delay from a
//! header or from the message text) and 5xx, cut and stalled streams, retryable
//! `response.failed` and `error` events, and prompt cancellation.

use crate::support::harness;
use std::time::Duration;

use robota::core::{ProviderErrorKind, StreamEvent};

use crate::support::openai_responses as mock;
use crate::support::{MockResponse, MockServer};
use crate::{provider_with, replay, request, run, text};

#[tokio::test]
async fn rate_limited_with_retry_after_then_success() {
    let (out, server) = replay(
        vec![
            mock::error_status(429, "rate_limit_exceeded", "slow down", Some("0.003")),
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
        StreamEvent::Retrying { attempt: 1, max_attempts: 2, status: Some(429), error, delay }
            if error == "slow down" && *delay == Duration::from_millis(3)
    ));
    assert!(!out.events.contains(&StreamEvent::AttemptDiscarded));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn rate_limit_delay_is_read_from_the_message_when_no_header_says() {
    let message = "Rate limit reached for gpt-5.1 on tokens per min (TPM): Limit 30000, Used 29000, \
                   Requested 1500. Please try again in 4ms. Visit https://platform.openai.com/account/rate-limits";
    let (out, _server) = replay(
        vec![
            mock::error_status(429, "rate_limit_exceeded", message, None),
            mock::text_turn("ok"),
        ],
        1,
    )
    .await;
    assert_eq!(text(out.turn()), "ok");
    assert!(matches!(
        out.retries()[0],
        StreamEvent::Retrying { delay, .. } if *delay == Duration::from_millis(4)
    ));
}

#[tokio::test]
async fn failed_rate_limit_mid_stream_is_discarded_and_retried_after_its_delay() {
    let (out, server) = replay(
        vec![
            mock::text_then_failed("partial", "rate_limit_exceeded", "Please try again in 5ms."),
            mock::text_turn("whole answer"),
        ],
        1,
    )
    .await;
    assert_eq!(text(out.turn()), "whole answer");
    let discard = out
        .events
        .iter()
        .position(|e| *e == StreamEvent::AttemptDiscarded)
        .expect("the partial attempt is discarded");
    assert!(matches!(
        out.events[discard + 1],
        StreamEvent::Retrying { delay, status: None, .. } if delay == Duration::from_millis(5)
    ));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn overloaded_error_event_is_retried_and_server_errors_too() {
    let (out, _server) = replay(
        vec![
            mock::text_then_error_event("partial", "server_is_overloaded", "busy"),
            mock::error_status(503, "server_error", "unavailable", None),
            mock::error_status(500, "server_error", "oops", None),
            mock::text_turn("finally"),
        ],
        3,
    )
    .await;
    assert_eq!(text(out.turn()), "finally");
    assert_eq!(out.retries().len(), 3);
    assert!(out.events.contains(&StreamEvent::AttemptDiscarded));
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
    let before: String = out.events[..discard]
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(before, "first ");
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
    assert!(out.error().message.contains("response.completed"));
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
async fn client_errors_are_typed_and_not_retried() {
    let cases = [
        (
            401,
            "invalid_api_key",
            "Incorrect API key provided: sk-xx.",
            ProviderErrorKind::Auth,
        ),
        (
            403,
            "unsupported_country_region_territory",
            "Country not supported",
            ProviderErrorKind::Permission,
        ),
        (
            404,
            "model_not_found",
            "The model `gpt-9` does not exist",
            ProviderErrorKind::NotFound,
        ),
        (
            400,
            "invalid_request_error",
            "Invalid value for 'input'",
            ProviderErrorKind::InvalidRequest,
        ),
        (
            400,
            "context_length_exceeded",
            "Your input exceeds the context window of this model.",
            ProviderErrorKind::ContextTooLong,
        ),
    ];
    for (status, code, message, kind) in cases {
        let (out, server) = replay(
            vec![
                mock::error_status(status, code, message, None),
                mock::text_turn("never served"),
            ],
            3,
        )
        .await;
        let error = out.error();
        assert_eq!(error.kind, kind, "{status} {code}");
        assert_eq!(error.status, Some(status));
        assert_eq!(error.message, message);
        assert_eq!(error.request_id.as_deref(), Some("req_mock_error"));
        assert_eq!(server.requests().len(), 1, "{status} {code} is not retried");
    }
}

#[tokio::test]
async fn exhausted_retries_on_server_errors_return_the_last_error() {
    // Past the script's end the mock answers 500 with an (Anthropic-shaped) api_error body.
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
async fn a_json_200_instead_of_a_stream_is_a_decode_error() {
    let (out, _server) = replay(
        vec![MockResponse::Http {
            status: 200,
            headers: vec![],
            body: r#"{"id":"resp_1","object":"response","output":[]}"#.into(),
        }],
        2,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::Decode);
    assert!(out.error().message.contains("expected an event stream"));
    assert!(out.retries().is_empty());
}
