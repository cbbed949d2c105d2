//! Failures end to end: Gemini error bodies and their kinds (bad key 400, 403, 404 model,
//! daily quota, token limit), retries after 429 `RetryInfo`/503, cut and stalled streams,
//! mid-stream `{"error"}` chunks and malformed function calls, and prompt cancellation.

use crate::support::harness;
use std::time::Duration;

use robota::core::{ProviderErrorKind, StreamEvent};
use serde_json::json;

use crate::support::gemini as mock;
use crate::support::{MockResponse, MockServer};
use crate::{provider_with, replay, request, run, text};

fn google_error(status: u16, body: serde_json::Value) -> MockResponse {
    MockResponse::Http {
        status,
        headers: vec![],
        body: body.to_string(),
    }
}

#[tokio::test]
async fn rate_limited_with_retry_info_then_success() {
    let (out, server) = replay(
        vec![
            mock::error_status(429, "RESOURCE_EXHAUSTED", "slow down", Some("0.003")),
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
        StreamEvent::Retrying { attempt: 1, status: Some(429), delay, error, .. }
            if *delay == Duration::from_millis(3) && error == "slow down"
    ));
    assert!(!out.events.contains(&StreamEvent::AttemptDiscarded));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn daily_quota_is_quota_and_not_retried() {
    let (out, server) = replay(
        vec![
            google_error(
                429,
                json!({"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED",
                "details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure",
                            "violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},
                           {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0s"}]}}),
            ),
            mock::text_turn("never served"),
        ],
        3,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::Quota);
    assert_eq!(out.error().message, "You exceeded your current quota.");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn bad_api_key_400_is_auth_and_not_retried() {
    let (out, server) = replay(
        vec![
            google_error(
                400,
                json!({"error":{"code":400,"message":"API key not valid. Please pass a valid API key.",
                "status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo",
                "reason":"API_KEY_INVALID","domain":"googleapis.com",
                "metadata":{"service":"generativelanguage.googleapis.com"}}]}}),
            ),
            mock::text_turn("never served"),
        ],
        3,
    )
    .await;
    let error = out.error();
    assert_eq!(error.kind, ProviderErrorKind::Auth);
    assert_eq!(error.status, Some(400));
    assert!(error.user_message().contains("API key not valid"));
    assert!(error.user_message().contains("check your API key"));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn permission_not_found_invalid_and_too_long_map_by_body() {
    let cases = [
        (
            403,
            "PERMISSION_DENIED",
            "Permission denied on resource project x.",
            ProviderErrorKind::Permission,
        ),
        (
            404,
            "NOT_FOUND",
            "models/gemini-9 is not found for API version v1beta",
            ProviderErrorKind::NotFound,
        ),
        (
            400,
            "INVALID_ARGUMENT",
            "Invalid JSON payload received.",
            ProviderErrorKind::InvalidRequest,
        ),
        (
            400,
            "INVALID_ARGUMENT",
            "The input token count (1500000) exceeds the maximum number of tokens allowed (1048576).",
            ProviderErrorKind::ContextTooLong,
        ),
    ];
    for (status, google, message, kind) in cases {
        let (out, server) =
            replay(vec![mock::error_status(status, google, message, None)], 3).await;
        assert_eq!(out.error().kind, kind, "{message}");
        assert_eq!(out.error().message, message);
        assert_eq!(out.error().status, Some(status));
        assert_eq!(server.requests().len(), 1, "{kind:?} is not retried");
    }
}

#[tokio::test]
async fn overloaded_503_is_retried() {
    let (out, server) = replay(
        vec![
            mock::error_status(
                503,
                "UNAVAILABLE",
                "The model is overloaded. Please try again later.",
                None,
            ),
            mock::error_status(500, "INTERNAL", "An internal error has occurred.", None),
            mock::text_turn("finally"),
        ],
        3,
    )
    .await;
    assert_eq!(text(out.turn()), "finally");
    assert_eq!(out.retries().len(), 2);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn stream_cut_once_is_discarded_and_retried() {
    let (out, server) = replay(
        vec![
            mock::text_turn_cut("first attempt text", 2),
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
    assert!(!before.is_empty() && "first attempt text".starts_with(&before));
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
    // 99 is capped: the finishReason chunk is never sent.
    let script = (0..=max_retries)
        .map(|_| mock::text_turn_cut("never finished", 99))
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
async fn mid_stream_error_chunk_fails_or_retries() {
    let (out, _server) = replay(
        vec![mock::text_then_error_event(
            "partial",
            "UNAVAILABLE",
            "The model is overloaded.",
        )],
        0,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::Overloaded);
    assert_eq!(out.error().message, "The model is overloaded.");
    assert_eq!(out.error().request_id.as_deref(), Some("req_mock"));
    assert_eq!(out.streamed_text(), "partial");

    let (out, _server) = replay(
        vec![
            mock::text_then_error_event("partial", "INTERNAL", "Internal error"),
            mock::text_turn("whole answer"),
        ],
        1,
    )
    .await;
    assert_eq!(text(out.turn()), "whole answer");
    assert!(out.events.contains(&StreamEvent::AttemptDiscarded));
}

#[tokio::test]
async fn malformed_function_call_is_retried() {
    let malformed = MockResponse::sse(vec![mock::chunk(
        json!([]),
        Some("MALFORMED_FUNCTION_CALL"),
        0,
    )]);
    let (out, server) = replay(vec![malformed, mock::text_turn("recovered")], 1).await;
    assert_eq!(text(out.turn()), "recovered");
    assert!(matches!(
        out.retries()[0],
        StreamEvent::Retrying { error, .. } if error.contains("MALFORMED_FUNCTION_CALL")
    ));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn exhausted_retries_on_server_errors_return_the_last_error() {
    // Past the script's end the mock answers 500 with an `error.message`.
    let (out, server) = replay(vec![], 1).await;
    assert_eq!(out.error().kind, ProviderErrorKind::Server);
    assert_eq!(out.error().message, "mock script exhausted");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn idle_stream_times_out_and_is_retried() {
    let server = MockServer::start(vec![
        mock::text_turn_held("stalled answer", 1),
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
    let server = MockServer::start(vec![mock::text_turn_held("hello there friend", 1)]);
    let provider = provider_with(&server, 3, Duration::from_secs(60));
    harness::assert_cancel_during_held_stream(&provider, &server, &request()).await;
}

#[tokio::test]
async fn released_hold_lets_the_stream_finish() {
    let server = MockServer::start(vec![mock::text_turn_held("held then released", 1)]);
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
            body: r#"[{"candidates":[]}]"#.into(),
        }],
        2,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::Decode);
    assert!(out.error().message.contains("expected an event stream"));
    assert!(out.retries().is_empty());
}
