//! Every exchange recorded with a real llama.cpp `llama-server` (and llama-cpp-python's
//! server) in `fixtures/wire/local/` replayed over loopback: plain text, tool calls streamed
//! as real `tool_calls` deltas, tool JSON written as content when the template cannot parse
//! it, `length` stops, usage after a tool result with cached tokens, `timings` ignored, the
//! recorded 400 errors (bad JSON, context overflow), llama-cpp-python's id and name repeated
//! on every fragment, and a non-streaming JSON answer.

use robota::core::{ProviderErrorKind, StopReason};
use serde_json::json;

use crate::support::openai_chat as mock;
use crate::{call, replay, text, tool_calls, usage};

const PLAIN: &str = "Hello, Rust! Three keywords are:\n\n1. `println!`\n2. `let`\n3. `if`";
const FENCED_TOOL_JSON: &str = "```json\n{\n  \"name\": \"read_file\",\n  \"arguments\": {\n    \"path\": \"src/main.rs\"\n  }\n}\n```";

#[tokio::test]
async fn llamacpp_plain_stream() {
    let (out, _server) = replay(vec![mock::fixture("local/resp-01-stream-plain.sse")], 0).await;
    let turn = out.turn();
    assert_eq!(text(turn), PLAIN);
    assert_eq!(out.streamed_text(), PLAIN);
    assert_eq!(turn.stop_reason, StopReason::EndTurn);
    assert_eq!(turn.usage, None);
    assert_eq!(turn.model, "qwen2.5-coder-0.5b");
    assert_eq!(
        turn.id.as_deref(),
        Some("chatcmpl-99cgP5uCKL9t7u60Hysv2uFQLUqr5Per")
    );
}

#[tokio::test]
async fn llamacpp_tool_json_written_as_content_stays_text() {
    for (file, model) in [
        ("local/resp-02a-tools-auto-0.5b.sse", "qwen2.5-coder-0.5b"),
        ("local/resp-02c-tools-auto-1.5b.sse", "qwen2.5-coder-1.5b"),
    ] {
        let (out, _server) = replay(vec![mock::fixture(file)], 0).await;
        let turn = out.turn();
        assert_eq!(text(turn), FENCED_TOOL_JSON, "{file}");
        assert!(tool_calls(turn).is_empty(), "{file}");
        assert_eq!(turn.stop_reason, StopReason::EndTurn, "{file}");
        assert_eq!(turn.model, model);
    }
}

#[tokio::test]
async fn llamacpp_required_tool_runs_to_length() {
    let (out, _server) = replay(
        vec![mock::fixture("local/resp-02b-tools-required-0.5b.sse")],
        0,
    )
    .await;
    let turn = out.turn();
    assert!(text(turn).starts_with(FENCED_TOOL_JSON));
    assert!(text(turn).ends_with("If the file is located at `src/main.rs"));
    assert_eq!(turn.stop_reason, StopReason::MaxTokens);
}

#[tokio::test]
async fn llamacpp_fenced_template_streams_real_tool_calls() {
    for (file, id) in [
        (
            "local/resp-02d-tools-auto-0.5b-fenced.sse",
            "J1G0As7Ii56mBGtRJcGnxeuYeBVciojz",
        ),
        (
            "local/resp-02e-tools-auto-1.5b-fenced.sse",
            "kiAsRtNQmYT9ZwLIHs3iPQ1r2UrXaK7g",
        ),
        (
            "local/resp-04-parallel-tools-1.5b-fenced.sse",
            "OcSeTWeqUytqk1x9J9JyDMpV0wv3Pk5C",
        ),
    ] {
        let (out, _server) = replay(vec![mock::fixture(file)], 0).await;
        let turn = out.turn();
        assert_eq!(
            tool_calls(turn),
            vec![call(id, "read_file", json!({"path":"src/main.rs"}))],
            "{file}"
        );
        assert_eq!(turn.content.len(), 1, "{file}: {:?}", turn.content);
        assert_eq!(turn.stop_reason, StopReason::ToolUse, "{file}");
        assert_eq!(turn.usage, None, "{file}");
        assert!(!out.streamed_input(id).is_empty());
    }
}

#[tokio::test]
async fn llamacpp_after_a_tool_result_reports_usage_with_cached_tokens() {
    for (file, id, cached) in [
        (
            "local/resp-03-stream-tool-result.sse",
            "079ZHb6pLyIYZV6yP1c3ZCHrqUYTPbZN",
            203,
        ),
        (
            "local/resp-03b-tool-result-1.5b-fenced.sse",
            "ebDlBa27IaX19XvS5npNy5gcogqRyDDk",
            222,
        ),
    ] {
        let (out, _server) = replay(vec![mock::fixture(file)], 0).await;
        let turn = out.turn();
        assert_eq!(
            tool_calls(turn),
            vec![call(id, "read_file", json!({"path":"src/main.rs"}))]
        );
        // 274 prompt tokens, `cached` of them from the cache; 23 generated.
        assert_eq!(turn.usage, usage(274 - cached, 23, cached), "{file}");
    }
}

#[tokio::test]
async fn llamacpp_text_answers_with_tools_offered() {
    let (out, _server) = replay(
        vec![mock::fixture(
            "local/resp-05-tools-present-text-answer-1.5b-fenced.sse",
        )],
        0,
    )
    .await;
    assert_eq!(
        text(out.turn()),
        "The `mut` keyword in Rust is used to declare a variable as mutable, allowing its value \
         to be changed after its declaration."
    );
    assert_eq!(out.turn().stop_reason, StopReason::EndTurn);

    let (out, _server) = replay(
        vec![mock::fixture("local/resp-02f-tools-auto-smollm2-135m.sse")],
        0,
    )
    .await;
    assert!(text(out.turn()).starts_with("Here's a sample of the code:\n\n```\ndef main()"));
    assert!(text(out.turn()).ends_with("when the script is executed."));
    assert_eq!(out.turn().model, "smollm2-135m");
}

#[tokio::test]
async fn llamacpp_bad_json_400_is_invalid_request_and_not_retried() {
    let (out, server) = replay(
        vec![
            mock::fixture("local/resp-06a-error-bad-json.body"),
            mock::text_turn("never served"),
        ],
        3,
    )
    .await;
    let error = out.error();
    assert_eq!(error.kind, ProviderErrorKind::InvalidRequest);
    assert_eq!(error.status, Some(400));
    assert!(
        error
            .message
            .starts_with("[json.exception.parse_error.101]")
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn llamacpp_context_overflow_400_is_context_too_long() {
    let (out, server) = replay(
        vec![
            mock::fixture("local/resp-06b-error-context-overflow.body"),
            mock::text_turn("never served"),
        ],
        3,
    )
    .await;
    let error = out.error();
    assert_eq!(error.kind, ProviderErrorKind::ContextTooLong);
    assert_eq!(
        error.message,
        "request (20030 tokens) exceeds the available context size (16384 tokens), try increasing it"
    );
    assert!(error.user_message().contains("/compact"));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn llama_cpp_python_streams() {
    let (out, _server) = replay(
        vec![mock::fixture(
            "local/llama-cpp-python/resp-01-stream-plain.sse",
        )],
        0,
    )
    .await;
    assert_eq!(text(out.turn()), PLAIN);

    let (out, _server) = replay(
        vec![mock::fixture(
            "local/llama-cpp-python/resp-02a-tools-auto-0.5b-default-format.sse",
        )],
        0,
    )
    .await;
    assert_eq!(
        text(out.turn()),
        FENCED_TOOL_JSON.replace("\"src/", "\"/src/")
    );

    let (out, _server) = replay(
        vec![mock::fixture(
            "local/llama-cpp-python/resp-02b-tools-auto-0.5b-chatml-function-calling.sse",
        )],
        0,
    )
    .await;
    assert_eq!(text(out.turn()), "functions.read_file:");
    assert!(tool_calls(out.turn()).is_empty());
}

#[tokio::test]
async fn llama_cpp_python_repeats_id_and_name_on_every_fragment() {
    let (out, _server) = replay(
        vec![mock::fixture(
            "local/llama-cpp-python/resp-02d-tools-named-stream-chatml-function-calling.sse",
        )],
        0,
    )
    .await;
    let turn = out.turn();
    let id = "call__0_read_file_cmpl-e9060d2b-49be-4514-8145-1082aaa1da9d";
    assert_eq!(
        tool_calls(turn),
        vec![call(id, "read_file", json!({"path":"src/main.rs"}))]
    );
    assert_eq!(out.streamed_input(id), r#"{ "path": "src/main.rs" }"#);
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
}

#[tokio::test]
async fn a_non_streaming_json_answer_is_a_decode_error() {
    let (out, _server) = replay(
        vec![mock::fixture(
            "local/llama-cpp-python/resp-02c-tools-auto-nostream-chatml-function-calling.json",
        )],
        2,
    )
    .await;
    assert_eq!(out.error().kind, ProviderErrorKind::Decode);
    assert!(out.error().message.contains("expected an event stream"));
    assert!(out.retries().is_empty());
}
