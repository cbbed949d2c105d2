//! Every recorded Anthropic stream replayed over loopback and checked against its real
//! text, tool calls, usage numbers, stop reason or error kind.

use robota::core::{Block, INVALID_INPUT_KEY, ProviderErrorKind, StopReason, StreamEvent};
use serde_json::{Value, json};

use crate::support::anthropic as mock;
use crate::support::{self, MockResponse};
use crate::{replay, text, tool_calls, usage};

#[tokio::test]
async fn fixture_text_jsonl() {
    let (out, _server) = replay(vec![mock::fixture("anthropic/text.jsonl")], 0).await;
    let turn = out.turn();
    let want = "Hello! I'm doing well, thank you for asking. How are you doing today? \
                Is there anything I can help you with?";
    assert_eq!(text(turn), want);
    assert_eq!(out.streamed_text(), want);
    assert_eq!(turn.stop_reason, StopReason::EndTurn);
    assert_eq!(turn.usage, usage(12, 30, 0, 0));
    assert_eq!(turn.id.as_deref(), Some("msg_01QC4g3HwBThD4BaNtBckFDJ"));
    assert_eq!(turn.model, "claude-sonnet-4-5-20250929");
}

#[tokio::test]
async fn fixture_thinking_jsonl_keeps_the_signature() {
    let (out, _server) = replay(vec![mock::fixture("anthropic/thinking.jsonl")], 0).await;
    let turn = out.turn();
    assert_eq!(turn.content.len(), 2);
    let Block::Thinking {
        thinking,
        signature,
    } = &turn.content[0]
    else {
        panic!("first block is thinking: {:?}", turn.content[0]);
    };
    assert_eq!(
        thinking,
        "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185"
    );
    assert!(signature.starts_with("EvQBCkYICxgCKkAxhD4NUKFzudtZ6NzbZdEiBACIScTzqjPViM596"));
    assert!(signature.ends_with("vi/EhT6Ca17BgB"));
    assert_eq!(text(turn), "925 ÷ 5 = 185");
    assert_eq!(turn.usage, usage(69, 53, 0, 0));
    let thinking_streamed: String = out
        .events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ThinkingDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(&thinking_streamed, thinking);
}

#[tokio::test]
async fn fixture_tool_use_sse() {
    let (out, _server) = replay(vec![mock::fixture("anthropic/tool_use.sse")], 0).await;
    let turn = out.turn();
    assert_eq!(
        text(turn),
        "I'll check the current weather in Paris for you."
    );
    assert_eq!(
        tool_calls(turn),
        vec![(
            "toolu_01NRLabsLyVHZPKxbKvkfSMn".to_string(),
            "get_weather".to_string(),
            json!({"location":"Paris"})
        )]
    );
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(turn.usage, usage(377, 65, 0, 0));
    assert!(out.events.contains(&StreamEvent::ToolUseStart {
        id: "toolu_01NRLabsLyVHZPKxbKvkfSMn".into(),
        name: "get_weather".into()
    }));
    let input_streamed: String = out
        .events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolInputDelta { partial_json, .. } => Some(partial_json.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(input_streamed, r#"{"location": "Paris"}"#);
}

#[tokio::test]
async fn fixture_tool_use_no_args_gets_an_empty_object() {
    let (out, _server) = replay(vec![mock::fixture("anthropic/tool_use_no_args.jsonl")], 0).await;
    let turn = out.turn();
    assert_eq!(text(turn), "I'll update the issue list for you.");
    assert_eq!(
        tool_calls(turn),
        vec![(
            "toolu_01QE1WLsSVp5hy5Q3GmGTmjP".to_string(),
            "updateIssueList".to_string(),
            json!({})
        )]
    );
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(turn.usage, usage(565, 48, 0, 0));
}

#[tokio::test]
async fn fixture_max_tokens_mid_tool_input_keeps_raw_input() {
    let (out, _server) = replay(
        vec![mock::fixture("anthropic/max_tokens_mid_tool_input.sse")],
        0,
    )
    .await;
    let turn = out.turn();
    assert_eq!(turn.stop_reason, StopReason::MaxTokens);
    assert_eq!(turn.usage, usage(450, 124, 0, 0));
    assert!(text(turn).starts_with("I'll create a comprehensive tax guide"));
    let calls = tool_calls(turn);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].0, "toolu_01EKqbqmZrGRXy18eN7m9kvY");
    assert_eq!(calls[0].1, "make_file");
    let raw = calls[0].2[INVALID_INPUT_KEY]
        .as_str()
        .expect("raw input kept");
    assert!(raw.starts_with("{\"filename\": \"taxes.txt\", \"lines_of_text\": ["));
    assert!(raw.ends_with("\n\"Filing taxes"));
}

#[tokio::test]
async fn fixture_prompt_cache_usage_overrides_with_message_delta() {
    let (out, _server) = replay(vec![mock::fixture("anthropic/prompt_cache_usage.jsonl")], 0).await;
    let turn = out.turn();
    assert_eq!(turn.usage, usage(6, 198, 6289, 3337));
    assert_eq!(turn.stop_reason, StopReason::EndTurn);
    assert_eq!(turn.content.len(), 5);
    let Block::Opaque(first) = &turn.content[0] else {
        panic!("server_tool_use is opaque");
    };
    assert_eq!(first["type"], "server_tool_use");
    assert_eq!(
        first["input"]["command"],
        "for n in $(seq 1 12); do echo \"$n: $((n*n))\"; done"
    );
    let Block::Opaque(result) = &turn.content[3] else {
        panic!("tool result is opaque");
    };
    assert_eq!(result["content"]["stdout"], "Sum: 650\n");
    assert_eq!(
        text(turn),
        "The sum of the squares of the numbers 1 through 12 is **650**."
    );
    let server_uses = out
        .events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ServerToolUse { name, .. } if name == "bash_code_execution"))
        .count();
    assert_eq!(server_uses, 2);
}

#[tokio::test]
async fn fixture_web_search_keeps_server_blocks_verbatim() {
    let (out, _server) = replay(
        vec![mock::fixture("anthropic/web_search_server_tool.jsonl")],
        0,
    )
    .await;
    let turn = out.turn();
    assert_eq!(turn.content.len(), 21);
    assert_eq!(turn.usage, usage(15665, 795, 0, 0));
    assert!(out.events.contains(&StreamEvent::ServerToolUse {
        id: "srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k".into(),
        name: "web_search".into()
    }));
    let Block::Opaque(search) = &turn.content[0] else {
        panic!("server_tool_use is opaque");
    };
    assert_eq!(
        search["input"],
        json!({"query":"tech news today September 26 2025"})
    );
    let recorded = std::fs::read_to_string(support::wire_fixture_path(
        "anthropic/web_search_server_tool.jsonl",
    ))
    .unwrap();
    let recorded_result: Value = recorded
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["content_block"]["type"] == "web_search_tool_result")
        .unwrap()["content_block"]
        .clone();
    assert_eq!(turn.content[1], Block::Opaque(recorded_result));
    let answer = text(turn);
    assert!(answer.starts_with("Based on my search results, here are the key tech news"));
    assert!(answer.ends_with("retail expansion."));
    // Citations ride on the text they annotate, as the API sent them.
    let recorded_citations: Vec<Value> = recorded
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["delta"]["type"] == "citations_delta")
        .map(|v| v["delta"]["citation"].clone())
        .collect();
    assert!(!recorded_citations.is_empty());
    let decoded: Vec<Value> = turn
        .content
        .iter()
        .filter_map(|b| match b {
            Block::Text {
                citations: Some(Value::Array(c)),
                ..
            } => Some(c.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(decoded, recorded_citations);
    assert_eq!(decoded[0]["type"], "web_search_result_location");
}

#[tokio::test]
async fn fixture_mid_stream_error_event_is_overloaded() {
    let (out, _server) = replay(
        vec![mock::fixture("anthropic/error_event_overloaded.docs.sse")],
        0,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::Overloaded);
    assert_eq!(out.error().message, "Overloaded");
    assert!(out.events.is_empty());
}

#[tokio::test]
async fn fixture_recorded_529_is_overloaded_with_request_id() {
    let response = mock::fixture("anthropic/error_529_overloaded_issue616.txt");
    let MockResponse::Raw(bytes) = &response else {
        panic!("the notes become a raw response");
    };
    let raw = String::from_utf8_lossy(bytes);
    assert!(raw.starts_with("HTTP/1.1 529 "));
    assert!(raw.contains("content-length: 75\r\n"));
    assert!(raw.ends_with(
        "\r\n\r\n{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"
    ));
    let (out, _server) = replay(vec![response], 0).await;
    let error = out.error();
    assert_eq!(error.kind, ProviderErrorKind::Overloaded);
    assert_eq!(error.status, Some(529));
    assert_eq!(error.message, "Overloaded");
    assert_eq!(
        error.request_id.as_deref(),
        Some("req_01RCc7MbLyQNtGKzBTv8VCep")
    );
}
