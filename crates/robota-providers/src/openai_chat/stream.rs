//! Decoding of one Chat Completions stream (wire.md §2.3, §5, §6): each `data:` chunk's
//! first choice yields text (`content`, `refusal`), reasoning (`reasoning_content` or
//! `reasoning`) and tool-call fragments, forwarded as events as they arrive and kept in
//! arrival order; usage is taken from whichever chunk carries it (a `choices:[]` chunk, the
//! finish chunk, Groq's `x_groq`), last wins, `None` when absent; `finish_reason` maps onto
//! the stop reason. `[DONE]` ends the stream; an end after a `finish_reason` without
//! `[DONE]` is complete too (servers that omit it), while an end before either is a cut.
//! Error payloads mid-stream become typed errors; unknown fields (`timings`,
//! `obfuscation`, `system_fingerprint`) are ignored.

use serde_json::Value;

use super::errors;
use super::tool_calls::ToolCallAccumulator;
use crate::sse::SseEvent;
use crate::streaming::{Flow, WireDecoder};
use robota_core::{
    AssistantTurn, Block, ProviderError, ProviderErrorKind, StopReason, StreamEvent, StreamSink,
    Usage,
};

/// One piece of the answer, in arrival order.
#[derive(Debug)]
enum Part {
    Text(String),
    Thinking(String),
    /// A tool call, by its position in the accumulator.
    ToolCall(usize),
}

/// Builds one assistant turn from the chunks of one HTTP stream.
#[derive(Debug, Default)]
pub(crate) struct ChatStreamDecoder {
    completion_id: Option<String>,
    model: Option<String>,
    parts: Vec<Part>,
    tool_calls: ToolCallAccumulator,
    finish_reason: Option<String>,
    refused: bool,
    usage: Option<Usage>,
    done: bool,
    emitted: bool,
}

impl WireDecoder for ChatStreamDecoder {
    fn on_event(&mut self, event: &SseEvent, sink: StreamSink<'_>) -> Result<Flow, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(Flow::Done);
        }
        let json: Value = match serde_json::from_str(data) {
            Ok(json) => json,
            // Old llama.cpp's `error:` line may carry text that is not JSON.
            Err(_) if event.is_error() => {
                return Err(errors::from_stream_event(
                    &serde_json::json!({ "error": data }),
                ));
            }
            Err(e) => {
                return Err(ProviderError::new(
                    ProviderErrorKind::Decode,
                    format!("malformed stream chunk ({e}): {}", snippet(data)),
                ));
            }
        };
        if event.is_error() || errors::is_error_payload(&json) {
            return Err(errors::from_stream_event(&json));
        }
        self.on_chunk(&json, sink);
        Ok(Flow::Continue)
    }

    fn emitted_anything(&self) -> bool {
        self.emitted
    }

    fn finish(self, fallback_model: &str) -> Result<AssistantTurn, ProviderError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(ProviderError::new(
                ProviderErrorKind::StreamCut,
                "the stream ended before a finish_reason or [DONE]",
            ));
        }
        let has_tool_calls = !self.tool_calls.is_empty();
        let stop_reason = stop_reason(self.finish_reason.as_deref(), has_tool_calls, self.refused);
        let content = self
            .parts
            .into_iter()
            .filter_map(|part| match part {
                Part::Text(text) => (!text.is_empty()).then_some(Block::text(text)),
                Part::Thinking(thinking) => (!thinking.is_empty()).then_some(Block::Thinking {
                    thinking,
                    signature: String::new(),
                }),
                Part::ToolCall(position) => self.tool_calls.block(position),
            })
            .collect();
        Ok(AssistantTurn {
            id: self.completion_id,
            model: self.model.unwrap_or_else(|| fallback_model.to_string()),
            content,
            stop_reason,
            usage: self.usage,
        })
    }
}

impl ChatStreamDecoder {
    pub(crate) fn new() -> Self {
        ChatStreamDecoder::default()
    }

    fn on_chunk(&mut self, chunk: &Value, sink: StreamSink<'_>) {
        let text = |name: &str| {
            chunk
                .get(name)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        if self.completion_id.is_none() {
            self.completion_id = text("id");
        }
        if self.model.is_none() {
            self.model = text("model");
        }
        if let Some(usage) = chunk
            .get("usage")
            .filter(|u| u.is_object())
            .or_else(|| chunk.pointer("/x_groq/usage"))
            .and_then(usage_from)
        {
            self.usage = Some(usage);
        }
        // One answer is asked for (n = 1): the first choice is it.
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return;
        };
        if let Some(delta) = choice.get("delta").filter(|d| d.is_object()) {
            self.on_delta(delta, sink);
        }
        if let Some(reason) = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
        {
            self.finish_reason = Some(reason.to_string());
        }
    }

    fn on_delta(&mut self, delta: &Value, sink: StreamSink<'_>) {
        let field = |name: &str| {
            delta
                .get(name)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        if let Some(reasoning) = field("reasoning_content").or_else(|| field("reasoning")) {
            self.push_thinking(reasoning, sink);
        }
        if let Some(content) = field("content") {
            self.push_text(content, sink);
        }
        if let Some(refusal) = field("refusal") {
            self.refused = true;
            self.push_text(refusal, sink);
        }
        let fragments = match delta.get("tool_calls") {
            Some(Value::Array(calls)) => calls.iter().collect(),
            // The legacy single `function_call`, only when no `tool_calls` came with it.
            _ => delta
                .get("function_call")
                .filter(|f| f.is_object())
                .map(|_| vec![delta])
                .unwrap_or_default(),
        };
        for fragment in fragments {
            let legacy;
            let fragment = if fragment.get("function_call").is_some() {
                legacy = serde_json::json!({"index": 0, "function": fragment["function_call"]});
                &legacy
            } else {
                fragment
            };
            let outcome = self.tool_calls.on_fragment(fragment);
            if let Some(position) = outcome.new_call {
                self.parts.push(Part::ToolCall(position));
            }
            for event in outcome.events {
                self.emit(sink, event);
            }
        }
    }

    fn push_text(&mut self, text: &str, sink: StreamSink<'_>) {
        match self.parts.last_mut() {
            Some(Part::Text(current)) => current.push_str(text),
            _ => self.parts.push(Part::Text(text.to_string())),
        }
        self.emit(sink, StreamEvent::TextDelta(text.to_string()));
    }

    fn push_thinking(&mut self, thinking: &str, sink: StreamSink<'_>) {
        match self.parts.last_mut() {
            Some(Part::Thinking(current)) => current.push_str(thinking),
            _ => self.parts.push(Part::Thinking(thinking.to_string())),
        }
        self.emit(sink, StreamEvent::ThinkingDelta(thinking.to_string()));
    }

    fn emit(&mut self, sink: StreamSink<'_>, event: StreamEvent) {
        self.emitted = true;
        sink(event);
    }
}

/// `core::Usage` from a Chat usage object: `prompt_tokens` includes cached tokens, so the
/// cached count (`prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`)
/// is moved out of `input_tokens`. `None` when neither count is present.
fn usage_from(json: &Value) -> Option<Usage> {
    let count = |pointer: &str| json.pointer(pointer).and_then(Value::as_u64);
    let prompt = count("/prompt_tokens");
    let completion = count("/completion_tokens");
    if prompt.is_none() && completion.is_none() {
        return None;
    }
    let prompt = prompt.unwrap_or(0);
    let cached = count("/prompt_tokens_details/cached_tokens")
        .or_else(|| count("/prompt_cache_hit_tokens"))
        .unwrap_or(0)
        .min(prompt);
    Some(Usage {
        input_tokens: prompt - cached,
        output_tokens: completion.unwrap_or(0),
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
    })
}

/// The canonical stop reason (wire.md §5). Old Ollama says `stop` after tool calls, so
/// calls present make it `ToolUse`; `tool_calls` with no call parsed is an ordinary end.
fn stop_reason(finish_reason: Option<&str>, has_tool_calls: bool, refused: bool) -> StopReason {
    match finish_reason {
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::Refusal,
        _ if has_tool_calls => StopReason::ToolUse,
        _ if refused => StopReason::Refusal,
        None | Some("stop" | "tool_calls" | "function_call" | "eos" | "eos_token" | "end_turn") => {
            StopReason::EndTurn
        }
        Some(other) => StopReason::Other(other.to_string()),
    }
}

fn snippet(data: &str) -> String {
    data.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;

    fn run(lines: &[Value]) -> (Result<AssistantTurn, ProviderError>, Vec<StreamEvent>) {
        run_data(&lines.iter().map(Value::to_string).collect::<Vec<_>>())
    }

    fn run_data(lines: &[String]) -> (Result<AssistantTurn, ProviderError>, Vec<StreamEvent>) {
        let seen = Mutex::new(Vec::new());
        let sink = |e: StreamEvent| seen.lock().unwrap().push(e);
        let mut decoder = ChatStreamDecoder::new();
        let mut result = None;
        for line in lines {
            let event = SseEvent {
                event: None,
                data: line.clone(),
                id: None,
            };
            match decoder.on_event(&event, &sink) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Done) => break,
                Err(e) => {
                    result = Some(Err(e));
                    break;
                }
            }
        }
        let result = result.unwrap_or_else(|| decoder.finish("fallback"));
        (result, seen.into_inner().unwrap())
    }

    fn delta(delta: Value, finish: Option<&str>) -> Value {
        json!({"id":"c1","model":"m","choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
    }

    #[test]
    fn reasoning_then_text_keeps_order_and_unsigned_thinking() {
        let (turn, events) = run(&[
            delta(
                json!({"role":"assistant","reasoning_content":"think "}),
                None,
            ),
            delta(json!({"reasoning":"more"}), None),
            delta(json!({"content":"answer"}), None),
            delta(json!({}), Some("stop")),
        ]);
        let turn = turn.unwrap();
        assert_eq!(
            turn.content,
            vec![
                Block::Thinking {
                    thinking: "think more".into(),
                    signature: String::new()
                },
                Block::text("answer")
            ]
        );
        assert_eq!(turn.stop_reason, StopReason::EndTurn);
        assert_eq!(turn.usage, None);
        assert_eq!(events[0], StreamEvent::ThinkingDelta("think ".into()));
        assert_eq!(events.len(), 3);
    }

    #[test]
    fn end_without_finish_reason_or_done_is_a_cut_but_finish_without_done_is_complete() {
        let (turn, _) = run(&[delta(json!({"content":"Hel"}), None)]);
        assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::StreamCut);
        let (turn, _) = run(&[
            delta(json!({"content":"Hello"}), None),
            delta(json!({}), Some("stop")),
        ]);
        assert_eq!(turn.unwrap().content, vec![Block::text("Hello")]);
        let (turn, _) = run_data(&["[DONE]".to_string()]);
        assert!(turn.unwrap().content.is_empty());
    }

    #[test]
    fn usage_subtracts_cached_tokens_and_last_wins() {
        let (turn, _) = run(&[
            json!({"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"usage":{"prompt_tokens":1,"completion_tokens":1}}),
            delta(json!({}), Some("stop")),
            json!({"choices":[],"usage":{"prompt_tokens":274,"completion_tokens":23,"prompt_tokens_details":{"cached_tokens":203}}}),
        ]);
        let usage = turn.unwrap().usage.unwrap();
        assert_eq!(
            usage,
            Usage {
                input_tokens: 71,
                output_tokens: 23,
                cache_read_input_tokens: 203,
                cache_creation_input_tokens: 0
            }
        );
        assert_eq!(
            usage_from(
                &json!({"prompt_tokens":339,"completion_tokens":83,"prompt_cache_hit_tokens":320})
            ),
            Some(Usage {
                input_tokens: 19,
                output_tokens: 83,
                cache_read_input_tokens: 320,
                cache_creation_input_tokens: 0
            })
        );
        assert_eq!(usage_from(&json!({"queue_time":0.1})), None);
    }

    #[test]
    fn stop_reasons_map_including_old_ollama_stop_with_tools() {
        assert_eq!(stop_reason(Some("stop"), true, false), StopReason::ToolUse);
        assert_eq!(
            stop_reason(Some("tool_calls"), true, false),
            StopReason::ToolUse
        );
        assert_eq!(
            stop_reason(Some("tool_calls"), false, false),
            StopReason::EndTurn
        );
        assert_eq!(
            stop_reason(Some("length"), true, false),
            StopReason::MaxTokens
        );
        assert_eq!(
            stop_reason(Some("content_filter"), false, false),
            StopReason::Refusal
        );
        assert_eq!(stop_reason(Some("stop"), false, true), StopReason::Refusal);
        assert_eq!(
            stop_reason(Some("weird"), false, false),
            StopReason::Other("weird".into())
        );
    }

    #[test]
    fn error_payloads_and_garbage_fail_typed() {
        let (turn, events) = run(&[
            delta(json!({"content":"part"}), None),
            json!({"error":{"message":"Internal error","type":"server_error"}}),
        ]);
        assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::Server);
        assert_eq!(events, vec![StreamEvent::TextDelta("part".into())]);
        let (turn, _) = run_data(&["{nope".to_string()]);
        assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::Decode);
        let mut decoder = ChatStreamDecoder::new();
        let sink = |_: StreamEvent| {};
        let old_llamacpp = SseEvent {
            event: Some("error".into()),
            data: r#"{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}"#.into(),
            id: None,
        };
        let err = decoder.on_event(&old_llamacpp, &sink).unwrap_err();
        assert_eq!(err.kind, ProviderErrorKind::ContextTooLong);
    }

    /// Decodes raw SSE bytes fed `step` bytes at a time.
    fn decode_bytes(bytes: &[u8], step: usize) -> Result<AssistantTurn, ProviderError> {
        let sink = |_: StreamEvent| {};
        let mut sse = crate::sse::SseDecoder::new();
        let mut decoder = ChatStreamDecoder::new();
        let mut events: Vec<SseEvent> = Vec::new();
        for piece in bytes.chunks(step) {
            events.extend(sse.push(piece).unwrap());
        }
        events.extend(sse.finish());
        for event in &events {
            if decoder.on_event(event, &sink)? == Flow::Done {
                break;
            }
        }
        decoder.finish("fallback")
    }

    #[test]
    fn recorded_streams_decode_alike_whole_and_byte_by_byte() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/wire");
        let files = [
            "openai-chat/parallel_tool_calls.sse",
            "openai-compatible/anthropic_compat_tool_call.sse",
            "local/resp-03-stream-tool-result.sse",
            "local/llama-cpp-python/resp-02d-tools-named-stream-chatml-function-calling.sse",
        ];
        for file in files {
            let bytes = std::fs::read(format!("{root}/{file}")).unwrap();
            let whole = decode_bytes(&bytes, bytes.len()).unwrap();
            assert!(!whole.content.is_empty(), "{file}");
            assert_eq!(decode_bytes(&bytes, 1).unwrap(), whole, "{file}");
            assert_eq!(decode_bytes(&bytes, 7).unwrap(), whole, "{file}");
        }
    }

    #[test]
    fn legacy_function_call_and_text_after_tools_keep_order() {
        let (turn, _) = run(&[
            delta(
                json!({"function_call":{"name":"Read","arguments":"{\"file_path\":"}}),
                None,
            ),
            delta(json!({"function_call":{"arguments":"\"/a\"}"}}), None),
            delta(json!({"content":"after"}), Some("function_call")),
        ]);
        let turn = turn.unwrap();
        assert_eq!(turn.stop_reason, StopReason::ToolUse);
        assert!(
            matches!(&turn.content[0], Block::ToolUse { name, input, .. }
            if name == "Read" && *input == json!({"file_path":"/a"}))
        );
        assert_eq!(turn.content[1], Block::text("after"));
    }
}
