//! Every recorded OpenAI and OpenAI-compatible cloud stream replayed over loopback and
//! checked against its real text, tool calls (ids, names, parsed arguments), usage and stop
//! reason: OpenAI gpt-4o / gpt-4.1, an Anthropic gateway (first index 1), Groq (arguments
//! whole, usage on the finish chunk), DeepSeek (reasoning, cached tokens), Ollama (calls
//! whole, role on every chunk, no `[DONE]`) and llama.cpp's Qwen3-Coder markup leak.

use robota::core::{Block, StopReason, StreamEvent};
use serde_json::json;

use crate::support::MockResponse;
use crate::support::openai_chat as mock;
use crate::{call, replay, text, tool_calls, usage};

#[tokio::test]
async fn openai_text_sse() {
    let (out, _server) = replay(vec![mock::fixture("openai-chat/text.sse")], 0).await;
    let turn = out.turn();
    let want = "I'm unable to provide real-time weather updates. To get the current weather in \
                San Francisco, I recommend checking a reliable weather website or a weather app.";
    assert_eq!(text(turn), want);
    assert_eq!(out.streamed_text(), want);
    assert_eq!(turn.stop_reason, StopReason::EndTurn);
    assert_eq!(turn.usage, usage(14, 30, 0));
    assert_eq!(
        turn.id.as_deref(),
        Some("chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL")
    );
    assert_eq!(turn.model, "gpt-4o-2024-08-06");
}

#[tokio::test]
async fn openai_single_tool_call_sse() {
    let (out, _server) = replay(vec![mock::fixture("openai-chat/single_tool_call.sse")], 0).await;
    let turn = out.turn();
    let id = "call_4XzlGBLtUe9dy3GVNV4jhq7h";
    assert_eq!(
        tool_calls(turn),
        vec![call(id, "get_weather", json!({"city":"New York City"}))]
    );
    assert_eq!(
        turn.content.len(),
        1,
        "no empty text block: {:?}",
        turn.content
    );
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(turn.usage, usage(44, 16, 0));
    assert_eq!(
        out.events[0],
        StreamEvent::ToolUseStart {
            id: id.into(),
            name: "get_weather".into()
        }
    );
    assert_eq!(out.streamed_input(id), r#"{"city":"New York City"}"#);
}

#[tokio::test]
async fn openai_parallel_tool_calls_sse() {
    let (out, _server) = replay(
        vec![mock::fixture("openai-chat/parallel_tool_calls.sse")],
        0,
    )
    .await;
    let turn = out.turn();
    assert_eq!(
        tool_calls(turn),
        vec![
            call(
                "call_JMW1whyEaYG438VE1OIflxA2",
                "GetWeatherArgs",
                json!({"city":"Edinburgh","country":"GB","units":"c"})
            ),
            call(
                "call_DNYTawLBoN8fj3KN6qU9N1Ou",
                "get_stock_price",
                json!({"ticker":"AAPL","exchange":"NASDAQ"})
            ),
        ]
    );
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    let u = turn.usage.expect("usage");
    assert_eq!((u.input_tokens, u.output_tokens), (149, 60));
    assert_eq!(u.prompt_tokens() + u.output_tokens, 209);
    assert_eq!(
        out.streamed_input("call_DNYTawLBoN8fj3KN6qU9N1Ou"),
        r#"{"ticker": "AAPL", "exchange": "NASDAQ"}"#
    );
}

#[tokio::test]
async fn openai_text_with_usage_chunk_jsonl() {
    let (out, _server) = replay(
        vec![mock::fixture("openai-chat/text_with_usage_chunk.jsonl")],
        0,
    )
    .await;
    let turn = out.turn();
    let answer = text(turn);
    assert!(answer.starts_with("**Holiday Name:** Harmony Day\n\n**Date:**"));
    assert!(answer.ends_with("shared human experiences and mutual respect."));
    assert_eq!(answer.chars().count(), 1724);
    assert_eq!(out.streamed_text(), answer);
    assert_eq!(turn.usage, usage(16, 300, 0));
    assert_eq!(turn.model, "gpt-4.1-nano-2025-04-14");
    assert_eq!(turn.stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn anthropic_gateway_first_index_one_and_no_usage() {
    let (out, _server) = replay(
        vec![mock::fixture(
            "openai-compatible/anthropic_compat_tool_call.sse",
        )],
        0,
    )
    .await;
    let turn = out.turn();
    assert_eq!(turn.content[0], Block::text("Reading it."));
    assert_eq!(
        tool_calls(turn),
        vec![call(
            "toolu_sanitized",
            "read_file",
            json!({"path":"a.txt"})
        )]
    );
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(turn.usage, None);
    assert_eq!(turn.model, "claude-haiku-4-5-20251001");
}

#[tokio::test]
async fn groq_arguments_in_one_chunk_and_usage_on_the_finish_chunk() {
    let (out, _server) = replay(
        vec![mock::fixture(
            "openai-compatible/groq_tool_call_single_chunk.jsonl",
        )],
        0,
    )
    .await;
    let turn = out.turn();
    assert_eq!(
        tool_calls(turn),
        vec![call("tk85n1k4m", "weather", json!({}))]
    );
    assert_eq!(turn.usage, usage(210, 15, 0));
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(out.streamed_input("tk85n1k4m"), "{}");
}

#[tokio::test]
async fn deepseek_reasoning_then_tool_call_with_cached_tokens() {
    let (out, _server) = replay(
        vec![mock::fixture(
            "openai-compatible/deepseek_reasoning_tool_call.jsonl",
        )],
        0,
    )
    .await;
    let turn = out.turn();
    let reasoning = "The user is asking for the weather in San Francisco. I need to use the \
                     weather tool to get this information. Let me invoke the weather tool with \
                     the location parameter set to \"San Francisco\".";
    assert_eq!(
        turn.content[0],
        Block::Thinking {
            thinking: reasoning.into(),
            signature: String::new()
        }
    );
    assert_eq!(out.streamed_thinking(), reasoning);
    assert_eq!(
        tool_calls(turn),
        vec![call(
            "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",
            "weather",
            json!({"location":"San Francisco"})
        )]
    );
    assert_eq!(turn.content.len(), 2);
    // 339 prompt tokens of which 320 cached: 19 uncached.
    assert_eq!(turn.usage, usage(19, 83, 320));
    assert_eq!(turn.model, "deepseek-reasoner");
}

#[tokio::test]
async fn ollama_parallel_calls_whole_without_done() {
    let (out, _server) = replay(
        vec![mock::fixture(
            "openai-compatible/ollama_parallel_tool_calls_notes.txt",
        )],
        0,
    )
    .await;
    let turn = out.turn();
    assert_eq!(
        tool_calls(turn),
        vec![
            call("call_wteop8bt", "run_command", json!({"command":"ls"})),
            call("call_rk2xye1l", "run_command", json!({"command":"ls -l"})),
        ]
    );
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(turn.usage, None);
    assert_eq!(turn.model, "qwen2.5-coder:7b-instruct-q8_0");
}

#[tokio::test]
async fn ollama_notes_content_with_finish_in_one_chunk_and_old_stop_after_tools() {
    let blocks = mock::ollama_notes_json_chunks();
    assert_eq!(blocks.len(), 3);
    let sse = |chunks: &[serde_json::Value]| {
        let mut bytes: Vec<Vec<u8>> = chunks.iter().map(mock::event).collect();
        bytes.push(mock::done());
        MockResponse::sse(bytes)
    };
    let (out, _server) = replay(vec![sse(&blocks[..1])], 0).await;
    assert_eq!(
        text(out.turn()),
        "My name is Ben Dover. How can I help you today?"
    );
    assert_eq!(out.turn().stop_reason, StopReason::EndTurn);

    let (out, _server) = replay(vec![sse(&blocks[1..])], 0).await;
    assert_eq!(
        tool_calls(out.turn()),
        vec![call(
            "call_hk81qg8b",
            "run_command",
            json!({"command":"ls -la"})
        )]
    );
    assert_eq!(out.turn().stop_reason, StopReason::ToolUse);

    // Ollama before 10d59d5 said "stop" after tool calls.
    let mut old_finish = blocks[2].clone();
    old_finish["choices"][0]["finish_reason"] = json!("stop");
    let (out, _server) = replay(vec![sse(&[blocks[1].clone(), old_finish])], 0).await;
    assert_eq!(out.turn().stop_reason, StopReason::ToolUse);
    assert_eq!(tool_calls(out.turn()).len(), 1);
}

#[tokio::test]
async fn llamacpp_qwen3coder_markup_leak_stays_text_and_does_not_crash() {
    let (out, _server) = replay(
        vec![mock::fixture(
            "openai-compatible/llamacpp_qwen3coder_markup_leak.jsonl",
        )],
        0,
    )
    .await;
    let turn = out.turn();
    assert_eq!(
        text(turn),
        "Hi there! Let me check the current weather for Washington DC for you.\n\
         <tool_call>\n<function=get_current_weather"
    );
    assert_eq!(
        tool_calls(turn),
        vec![call(
            "CALL_ID",
            "get_current_weather",
            json!({"location":"Washington DC"})
        )]
    );
    assert!(matches!(turn.content[0], Block::Text { .. }));
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(turn.usage, None, "timings are not usage");
    assert_eq!(turn.model, "request-model", "no model in the chunks");
}
