//! Failures end to end: HTTP errors and their kinds, retries after 429 (with the server's
//! delay from `retry-after` or the message) and 5xx, quota not retried, cut and stalled
//! streams, the end after `finish_reason` without `[DONE]`, mid-stream error events (JSON
//! and old llama.cpp's `error:` line), and prompt cancellation.

use crate::support::harness;
use std::time::Duration;

use robota::core::{ProviderErrorKind, StreamEvent};
use serde_json::json;

use crate::support::openai_chat as mock;
use crate::support::{MockResponse, MockServer, wire_fixture_path};
use crate::{provider_with, replay, request, run, text};

#[tokio::test]
async fn rate_limited_with_retry_after_then_success() {
    let (out, server) = replay(
        vec![
            mock::error_with_code(
                429,
                "requests",
                json!("rate_limit_exceeded"),
                "slow down",
                Some("0.003"),
            ),
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
            if error == "slow down" && *delay == Duration::from_millis(3)
    ));
    assert!(!out.events.contains(&StreamEvent::AttemptDiscarded));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn rate_limit_delay_is_read_from_the_message_when_no_header() {
    let (out, _server) = replay(
        vec![
            mock::error_with_code(
                429,
                "tokens",
                json!("rate_limit_exceeded"),
                "Rate limit reached for gpt-4o. Please try again in 4ms. Visit https://platform.openai.com/account/rate-limits.",
                None,
            ),
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
async fn insufficient_quota_429_is_quota_and_not_retried() {
    let body = std::fs::read_to_string(wire_fixture_path(
        "openai-responses/error_body_429_insufficient_quota.json",
    ))
    .unwrap();
    let (out, server) = replay(
        vec![
            MockResponse::Http {
                status: 429,
                headers: vec![],
                body,
            },
            mock::text_turn("never served"),
        ],
        3,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::Quota);
    assert!(
        out.error()
            .message
            .starts_with("You exceeded your current quota")
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn overloaded_503_and_server_500_are_retried() {
    let (out, server) = replay(
        vec![
            mock::error_status(503, "unavailable_error", "Loading model", None),
            mock::error_status(500, "server_error", "boom", None),
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
async fn auth_and_not_found_are_typed_and_not_retried() {
    let (out, server) = replay(
        vec![
            mock::error_with_code(
                401,
                "invalid_request_error",
                json!("invalid_api_key"),
                "Incorrect API key provided: sk-x.",
                None,
            ),
            mock::text_turn("never served"),
        ],
        3,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::Auth);
    assert_eq!(out.error().message, "Incorrect API key provided: sk-x.");
    assert_eq!(out.error().request_id.as_deref(), Some("req_mock_error"));
    assert!(out.error().user_message().contains("check your API key"));
    assert_eq!(server.requests().len(), 1);

    let (out, _server) = replay(
        vec![MockResponse::Http {
            status: 404,
            headers: vec![],
            body: r#"{"error":{"message":"model 'qwen9' not found","type":"not_found_error","param":null,"code":null}}"#.into(),
        }],
        3,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::NotFound);
    assert_eq!(out.error().status, Some(404));
}

#[tokio::test]
async fn context_length_exceeded_is_context_too_long() {
    let (out, _server) = replay(
        vec![mock::error_with_code(
            400,
            "invalid_request_error",
            json!("context_length_exceeded"),
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
            None,
        )],
        3,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::ContextTooLong);
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
}

#[tokio::test]
async fn end_after_finish_reason_without_done_is_complete() {
    let mut chunks = mock::text_turn_chunks("no terminator");
    // Drop the usage chunk and [DONE]: the stream ends right after the finish chunk.
    chunks.truncate(chunks.len() - 2);
    let (out, server) = replay(vec![MockResponse::sse(chunks)], 2).await;
    assert_eq!(text(out.turn()), "no terminator");
    assert_eq!(out.turn().usage, None);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn mid_stream_error_event_fails_or_retries() {
    let (out, _server) = replay(
        vec![mock::text_then_error_event(
            "partial",
            "invalid_request_error",
            "bad tool schema",
        )],
        2,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::InvalidRequest);
    assert_eq!(out.streamed_text(), "partial");

    let (out, _server) = replay(
        vec![
            mock::text_then_error_event("partial", "server_error", "Internal server error"),
            mock::text_turn("whole answer"),
        ],
        1,
    )
    .await;
    assert_eq!(text(out.turn()), "whole answer");
    assert!(out.events.contains(&StreamEvent::AttemptDiscarded));
}

#[tokio::test]
async fn old_llamacpp_error_field_line_is_context_too_long() {
    let (out, _server) = replay(
        vec![MockResponse::sse(vec![
            mock::event(&mock::chunk(json!({"role":"assistant","content":null}), None)),
            br#"error: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}"#.to_vec(),
            b"\n\n".to_vec(),
        ])],
        2,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::ContextTooLong);
    assert!(out.retries().is_empty());
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
    assert!(out.events.contains(&StreamEvent::AttemptDiscarded));
}

#[tokio::test]
async fn cancel_during_a_held_stream_returns_promptly() {
    let server = MockServer::start(vec![mock::text_turn_held("hello there friend", 4)]);
    let provider = provider_with(&server, 3, Duration::from_secs(60));
    harness::assert_cancel_during_held_stream(&provider, &server, &request()).await;
}

#[tokio::test]
async fn reasoning_turn_streams_thinking_then_text() {
    let (out, _server) = replay(vec![mock::thinking_then_text("let me think", "answer")], 0).await;
    assert_eq!(out.streamed_thinking(), "let me think");
    assert_eq!(text(out.turn()), "answer");
    assert_eq!(out.turn().usage, crate::usage(12, 7, 0));
}

#[tokio::test]
async fn scripted_tool_turn_round_trips() {
    let (out, _server) = replay(
        vec![mock::tool_turn(
            Some("Let me look."),
            &[
                ("call_a", "Read", json!({"file_path":"/a"})),
                ("call_b", "Grep", json!({"pattern":"TODO"})),
            ],
        )],
        0,
    )
    .await;
    assert_eq!(
        crate::tool_calls(out.turn()),
        vec![
            crate::call("call_a", "Read", json!({"file_path":"/a"})),
            crate::call("call_b", "Grep", json!({"pattern":"TODO"})),
        ]
    );
    assert_eq!(text(out.turn()), "Let me look.");
}
