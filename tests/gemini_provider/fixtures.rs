//! Every recorded Gemini stream replayed over loopback and checked against its real text,
//! tool calls, usage numbers, stop reason and signatures; the recorded 429 body checked for
//! its kind and delay; and the streams re-split at small byte counts (CRLF and JSON cut
//! across reads) giving the same answers.

use std::time::Duration;

use robota::core::{Block, Provider, ProviderErrorKind, StopReason, StreamEvent};
use robota::providers::gemini::THOUGHT_SIGNATURE_TYPE;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::gemini as mock;
use crate::support::{MockResponse, MockServer};
use crate::{provider, replay, request, text, tool_calls, usage};

const TEXT_ANSWER: &str = "There are **3** \"r\"s in strawberry.\n\nst**r**awbe**rr**y";

/// The `thoughtSignature` of an opaque marker block.
fn marker_signature(block: &Block) -> Option<(&str, bool)> {
    match block {
        Block::Opaque(v) if v["type"] == THOUGHT_SIGNATURE_TYPE => Some((
            v["thoughtSignature"].as_str()?,
            v["standalone"].as_bool() == Some(true),
        )),
        _ => None,
    }
}

#[tokio::test]
async fn fixture_text_jsonl() {
    let (out, server) = replay(vec![mock::fixture("gemini/text.jsonl")], 0).await;
    let turn = out.turn();
    assert_eq!(text(turn), TEXT_ANSWER);
    assert_eq!(out.streamed_text(), TEXT_ANSWER);
    assert_eq!(turn.stop_reason, StopReason::EndTurn);
    // promptTokenCount 9; candidatesTokenCount 23 + thoughtsTokenCount 185.
    assert_eq!(turn.usage, usage(9, 208, 0));
    assert_eq!(turn.model, "gemini-3-pro-preview");
    assert_eq!(turn.id.as_deref(), Some("bH6LaZW8Fp_3nsEPqtaSwQ4"));
    assert_eq!(turn.content.len(), 2, "{:?}", turn.content);
    let (signature, standalone) = marker_signature(&turn.content[1]).expect("signature kept");
    assert!(signature.starts_with("EqsFCqgFAb4+9vvtAF5n87lB4OGDOoTRMOqp35jW"));
    assert!(signature.ends_with("wAG37eeWcow="));
    assert!(standalone, "it came on an empty text part");
    assert_eq!(out.events.len(), 2, "no event for the empty part");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn fixture_function_call_jsonl() {
    let (out, _server) = replay(vec![mock::fixture("gemini/function_call.jsonl")], 0).await;
    let turn = out.turn();
    assert_eq!(
        tool_calls(turn),
        vec![(
            "call_1".to_string(),
            "weather".to_string(),
            json!({"location":"San Francisco"})
        )]
    );
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    // wire.md §7.8: usage 29/15/89 with thoughts 45 → output 15 + 45.
    assert_eq!(turn.usage, usage(29, 60, 0));
    assert_eq!(turn.model, "gemini-3-pro-preview");
    let (signature, standalone) = marker_signature(&turn.content[0]).expect("signature first");
    assert!(signature.starts_with("EqUCCqICAb4+9vsh8Pd5taZVoPzSvjWWwzBrvhEQ"));
    assert!(!standalone);
    assert_eq!(text(turn), "");
    assert_eq!(
        out.events,
        vec![
            StreamEvent::ToolUseStart {
                id: "call_1".into(),
                name: "weather".into()
            },
            StreamEvent::ToolInputDelta {
                id: "call_1".into(),
                partial_json: r#"{"location":"San Francisco"}"#.into()
            },
        ]
    );
}

#[tokio::test]
async fn fixture_vertex_streamed_input() {
    let (out, _server) = replay(
        vec![mock::fixture(
            "gemini/vertex_stream_function_call_partial_args.jsonl",
        )],
        0,
    )
    .await;
    let turn = out.turn();
    assert_eq!(
        tool_calls(turn),
        vec![
            (
                "call_1".to_string(),
                "getWeather".to_string(),
                json!({"location":"Boston"})
            ),
            (
                "call_2".to_string(),
                "getWeather".to_string(),
                json!({"location":"San Francisco"})
            ),
        ]
    );
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(turn.usage, usage(26, 23 + 132, 0));
    assert_eq!(turn.model, "gemini-3.1-pro-preview");
    let signatures: Vec<_> = turn.content.iter().filter_map(marker_signature).collect();
    assert_eq!(signatures.len(), 1, "only the first call is signed");
    assert!(signatures[0].0.starts_with("CiMBjz1rX25KieIB4d4AwFn8"));
    let starts = out
        .events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolUseStart { .. }))
        .count();
    assert_eq!(starts, 2);
}

#[tokio::test]
async fn fixture_error_429_retry_info() {
    let (out, server) = replay(vec![mock::fixture("gemini/error_429_retry_info.json")], 0).await;
    let error = out.error();
    assert_eq!(error.kind, ProviderErrorKind::RateLimited);
    assert_eq!(error.status, Some(429));
    assert_eq!(error.retry_after, Some(Duration::from_millis(34_400)));
    assert_eq!(
        error.message,
        "You exceeded your current quota, please check your plan."
    );
    assert_eq!(server.requests().len(), 1);

    // With retries allowed, the retry announces the server's 34.4 s (then is cancelled).
    let server = MockServer::start(vec![mock::fixture("gemini/error_429_retry_info.json")]);
    let provider = provider(&server, 3);
    let cancel = CancellationToken::new();
    let announced = std::sync::Mutex::new(None);
    let sink = |e: StreamEvent| {
        if let StreamEvent::Retrying { delay, status, .. } = e {
            *announced.lock().unwrap() = Some((delay, status));
            cancel.cancel();
        }
    };
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        provider.stream(&request(), &sink, &cancel),
    )
    .await
    .expect("cancelled promptly");
    assert_eq!(result.unwrap_err().kind, ProviderErrorKind::Cancelled);
    assert_eq!(
        announced.into_inner().unwrap(),
        Some((Duration::from_millis(34_400), Some(429)))
    );
}

/// A fixture's bytes re-cut into `size`-byte writes.
fn resplit(response: MockResponse, size: usize) -> MockResponse {
    let MockResponse::Sse { chunks, .. } = response else {
        panic!("an SSE fixture");
    };
    let bytes: Vec<u8> = chunks.concat();
    MockResponse::sse(bytes.chunks(size).map(<[u8]>::to_vec).collect())
}

#[tokio::test]
async fn fixtures_split_at_small_byte_counts_decode_the_same() {
    for size in [1, 2, 7, 64] {
        let (out, _s) = replay(vec![resplit(mock::fixture("gemini/text.jsonl"), size)], 0).await;
        assert_eq!(text(out.turn()), TEXT_ANSWER, "split {size}");
        assert_eq!(out.turn().usage, usage(9, 208, 0));
        let (out, _s) = replay(
            vec![resplit(
                mock::fixture("gemini/vertex_stream_function_call_partial_args.jsonl"),
                size,
            )],
            0,
        )
        .await;
        assert_eq!(tool_calls(out.turn()).len(), 2, "split {size}");
        assert_eq!(
            tool_calls(out.turn())[1].2,
            json!({"location":"San Francisco"})
        );
    }
}

#[tokio::test]
async fn a_fixture_cut_before_its_finish_reason_is_retried_then_stream_cut() {
    let cut = |n| {
        let MockResponse::Sse { chunks, .. } = mock::fixture("gemini/text.jsonl") else {
            panic!("sse");
        };
        MockResponse::Sse {
            chunks,
            cut_after: Some(n),
            hold_after: None,
        }
    };
    let (out, server) = replay(vec![cut(2), cut(1)], 1).await;
    assert_eq!(out.error().kind, ProviderErrorKind::StreamCut);
    assert!(out.error().message.contains("finishReason"));
    assert_eq!(server.requests().len(), 2);
    assert!(out.events.contains(&StreamEvent::AttemptDiscarded));
}
