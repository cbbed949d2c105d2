//! Every recorded Responses stream and error body replayed over loopback and checked
//! against its real text, tool calls, usage numbers, stop reason or error kind.

use std::time::Duration;

use robota::core::{Block, ProviderErrorKind, StopReason, StreamEvent};
use serde_json::{Value, json};

use crate::support::openai_responses as mock;
use crate::support::{self, MockServer};
use crate::{provider, replay, request, run, text, tool_calls, usage};

fn recorded_lines(path: &str) -> Vec<Value> {
    std::fs::read_to_string(support::wire_fixture_path(path))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn fixture_function_call_jsonl() {
    let (out, _server) = replay(
        vec![mock::fixture("openai-responses/function_call.jsonl")],
        0,
    )
    .await;
    let turn = out.turn();
    let call_id = "call_Q7pq6EfVGRnauPLWSSYBGJ1l";
    assert_eq!(
        tool_calls(turn),
        vec![(
            call_id.to_string(),
            "get_weather".to_string(),
            json!({"location":"San Francisco, CA","unit":"fahrenheit"})
        )]
    );
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(turn.usage, usage(467, 26, 0));
    assert_eq!(
        turn.id.as_deref(),
        Some("resp_05147bbe356953b60069ab6736cddc8196933842ce635db83f")
    );
    assert_eq!(turn.model, "gpt-5.4-2026-03-05");
    assert_eq!(text(turn), "");
    assert_eq!(
        out.events[0],
        StreamEvent::ToolUseStart {
            id: call_id.into(),
            name: "get_weather".into()
        }
    );
    let deltas = out
        .events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolInputDelta { .. }))
        .count();
    assert_eq!(deltas, 13);
    assert_eq!(
        out.streamed_input(call_id),
        r#"{"location":"San Francisco, CA","unit":"fahrenheit"}"#
    );
}

#[tokio::test]
async fn fixture_reasoning_and_function_calls_four_streams() {
    let streams =
        mock::fixture_streams("openai-responses/reasoning_and_function_calls_4_streams.jsonl");
    assert_eq!(streams.len(), 4);
    let server = MockServer::start(streams);
    let provider = provider(&server, 0);
    let calc = |id: &str, a: i64, b: i64, op: &str| {
        (
            id.to_string(),
            "calculator".to_string(),
            json!({"a":a,"b":b,"op":op}),
        )
    };

    // Stream 1: a reasoning item with a summary, then a function call.
    let out = run(&provider, &request()).await;
    let turn = out.turn();
    assert_eq!(turn.model, "gpt-5.1-codex-max");
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(turn.usage, usage(134, 28, 0));
    assert_eq!(
        tool_calls(turn),
        vec![calc("call_AB6AaRZ1FYZB2RwS6A5vbdqn", 12, 7, "add")]
    );
    let summary = "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, \
                   then multiply the result by 3, and finally multiply that by 10, reporting \
                   the final product.";
    assert_eq!(out.streamed_thinking(), summary);
    let recorded_item =
        recorded_lines("openai-responses/reasoning_and_function_calls_4_streams.jsonl")
            .into_iter()
            .find(|l| l["type"] == "response.output_item.done" && l["item"]["type"] == "reasoning")
            .unwrap()["item"]
            .clone();
    assert_eq!(
        turn.content[0],
        Block::Opaque(json!({"type":"openai_reasoning","model":"gpt-5.1","item":recorded_item}))
    );
    assert_eq!(turn.content.len(), 2);
    assert!(
        !out.events
            .iter()
            .any(|e| matches!(e, StreamEvent::TextDelta(_)))
    );

    // Streams 2 and 3: one call each, no reasoning item.
    let out = run(&provider, &request()).await;
    assert_eq!(
        tool_calls(out.turn()),
        vec![calc("call_Q6pW65MUgW9vF59BmItYGos3", 19, 3, "multiply")]
    );
    assert_eq!(out.turn().usage, usage(221, 26, 0));
    assert_eq!(out.turn().content.len(), 1);
    let out = run(&provider, &request()).await;
    assert_eq!(
        tool_calls(out.turn()),
        vec![calc("call_Zl5vIMnD7dVAjgU6FkhmiCZh", 57, 10, "multiply")]
    );
    assert_eq!(out.turn().usage, usage(260, 26, 0));

    // Stream 4: the final text message.
    let out = run(&provider, &request()).await;
    let turn = out.turn();
    assert_eq!(
        turn.content,
        vec![Block::text("The final result is **570**.")]
    );
    assert_eq!(out.streamed_text(), "The final result is **570**.");
    assert_eq!(turn.stop_reason, StopReason::EndTurn);
    assert_eq!(turn.usage, usage(299, 12, 0));
}

#[tokio::test]
async fn fixture_mid_stream_insufficient_quota_is_quota_and_not_retried() {
    let (out, server) = replay(
        vec![
            mock::fixture("openai-responses/error_mid_stream_insufficient_quota.jsonl"),
            mock::text_turn("never served"),
        ],
        3,
    )
    .await;
    let error = out.error();
    assert_eq!(error.kind, ProviderErrorKind::Quota);
    assert!(error.message.starts_with("You exceeded your current quota"));
    assert_eq!(error.status, None);
    assert_eq!(server.requests().len(), 1);
    assert!(out.events.is_empty());
}

#[tokio::test]
async fn fixture_429_insufficient_quota_body_is_quota_and_not_retried() {
    let (out, server) = replay(
        vec![
            mock::fixture("openai-responses/error_body_429_insufficient_quota.json"),
            mock::text_turn("never served"),
        ],
        3,
    )
    .await;
    let error = out.error();
    assert_eq!(error.kind, ProviderErrorKind::Quota);
    assert_eq!(error.status, Some(429));
    assert_eq!(error.request_id.as_deref(), Some("req_fixture"));
    assert!(
        error
            .message
            .contains("check your plan and billing details")
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn fixture_response_failed_context_length_is_fatal() {
    let (out, server) = replay(
        vec![
            mock::fixture("openai-responses/response_failed_context_length.sse"),
            mock::text_turn("never served"),
        ],
        3,
    )
    .await;
    let error = out.error();
    assert_eq!(error.kind, ProviderErrorKind::ContextTooLong);
    assert_eq!(
        error.message,
        "Your input exceeds the context window of this model. Please adjust your input and try again."
    );
    assert!(error.user_message().contains("/compact"));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn fixture_response_failed_rate_limit_carries_the_server_delay() {
    let (out, _server) = replay(
        vec![mock::fixture(
            "openai-responses/response_failed_rate_limit.sse",
        )],
        0,
    )
    .await;
    let error = out.error();
    assert_eq!(error.kind, ProviderErrorKind::RateLimited);
    assert!(error.is_retryable());
    assert_eq!(error.retry_after, Some(Duration::from_millis(11_054)));
    assert!(error.message.starts_with("Rate limit reached for gpt-5.1"));
    assert_eq!(error.request_id.as_deref(), Some("req_mock"));
}
