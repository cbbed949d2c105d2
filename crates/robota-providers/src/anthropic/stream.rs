//! Assembly of one Anthropic Messages stream (wire.md §1.3–1.5, §1.7): dispatches each SSE
//! payload on its JSON `type`, forwards text, thinking and tool-input deltas to the event
//! sink as they arrive, builds the content blocks by `index` (tool input parsed at block
//! end, unknown block kinds kept verbatim), merges usage and the stop reason, and turns
//! protocol faults (error events, a second `message_start`, an early end) into typed errors.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::errors;
use crate::sse::SseEvent;
use robota_core::{
    AssistantTurn, Block, INVALID_INPUT_KEY, ProviderError, ProviderErrorKind, StopReason,
    StreamEvent, StreamSink, Usage,
};

use crate::streaming::{Flow, WireDecoder};

#[derive(Debug)]
enum BlockState {
    /// The text and the citations that annotate it.
    Text(String, Vec<Value>),
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    /// A block of another kind, kept verbatim; `json` collects `input_json_delta`s for
    /// kinds that stream an input (`server_tool_use`, `mcp_tool_use`).
    Opaque {
        value: Value,
        json: String,
    },
    /// Stopped: the final block (`None`: nothing to keep, e.g. an empty text block).
    Done(Option<Block>),
}

/// Builds one assistant turn from the events of one HTTP stream.
#[derive(Debug, Default)]
pub(crate) struct StreamAssembler {
    message_id: Option<String>,
    model: Option<String>,
    started: bool,
    stopped: bool,
    blocks: BTreeMap<u64, BlockState>,
    usage: Option<Usage>,
    stop_reason: Option<StopReason>,
    emitted: bool,
}

impl WireDecoder for StreamAssembler {
    /// Whether anything of this attempt reached the event sink.
    fn emitted_anything(&self) -> bool {
        self.emitted
    }

    /// Handles one SSE event.
    fn on_event(&mut self, event: &SseEvent, sink: StreamSink<'_>) -> Result<Flow, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(Flow::Continue);
        }
        let json: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::new(
                ProviderErrorKind::Decode,
                format!("malformed stream event ({e}): {}", snippet(data)),
            )
        })?;
        let kind = json.get("type").and_then(Value::as_str).unwrap_or("");
        if kind == "error" || (kind.is_empty() && event.is_error()) {
            return Err(errors::from_stream_event(&json));
        }
        match kind {
            "message_start" => self.message_start(&json)?,
            "content_block_start" => self.block_start(&json, sink),
            "content_block_delta" => self.block_delta(&json, sink),
            "content_block_stop" => {
                if let Some(index) = json.get("index").and_then(Value::as_u64) {
                    self.finish_block(index);
                }
            }
            "message_delta" => self.message_delta(&json),
            "message_stop" => {
                self.stopped = true;
                return Ok(Flow::Done);
            }
            "ping" => {}
            other => tracing::debug!(event_type = other, "ignoring unknown Anthropic event"),
        }
        Ok(Flow::Continue)
    }

    /// The finished turn. Without `message_stop` the stream was cut.
    fn finish(mut self, fallback_model: &str) -> Result<AssistantTurn, ProviderError> {
        if !self.stopped {
            let what = if self.started {
                "the stream ended before message_stop"
            } else {
                "the stream ended before any message"
            };
            return Err(ProviderError::new(ProviderErrorKind::StreamCut, what));
        }
        let content: Vec<Block> = std::mem::take(&mut self.blocks)
            .into_values()
            .filter_map(settle)
            .collect();
        let stop_reason = self.stop_reason.take().unwrap_or_else(|| {
            if content.iter().any(|b| matches!(b, Block::ToolUse { .. })) {
                StopReason::ToolUse
            } else {
                StopReason::EndTurn
            }
        });
        Ok(AssistantTurn {
            id: self.message_id,
            model: self.model.unwrap_or_else(|| fallback_model.to_string()),
            content,
            stop_reason,
            usage: self.usage,
        })
    }
}

impl StreamAssembler {
    pub(crate) fn new() -> Self {
        StreamAssembler::default()
    }

    fn message_start(&mut self, json: &Value) -> Result<(), ProviderError> {
        if self.started {
            return Err(ProviderError::new(
                ProviderErrorKind::Decode,
                "a second message_start arrived in one stream (a gateway spliced two answers)",
            ));
        }
        self.started = true;
        let message = json.get("message").unwrap_or(&Value::Null);
        self.message_id = message
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.model = message
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .map(str::to_string);
        if let Some(usage) = message.get("usage") {
            merge_usage(&mut self.usage, usage);
        }
        Ok(())
    }

    fn message_delta(&mut self, json: &Value) {
        if let Some(reason) = json
            .get("delta")
            .and_then(|d| d.get("stop_reason"))
            .and_then(Value::as_str)
        {
            self.stop_reason = Some(stop_reason(reason));
        }
        if let Some(usage) = json.get("usage") {
            merge_usage(&mut self.usage, usage);
        }
    }

    fn block_start(&mut self, json: &Value, sink: StreamSink<'_>) {
        let (Some(index), Some(block)) = (
            json.get("index").and_then(Value::as_u64),
            json.get("content_block"),
        ) else {
            tracing::debug!("content_block_start without index or block");
            return;
        };
        let text_field = |name: &str| {
            block
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let state = match block.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => {
                let text = text_field("text");
                self.emit_nonempty(sink, StreamEvent::TextDelta(text.clone()));
                BlockState::Text(text, Vec::new())
            }
            "thinking" => {
                let thinking = text_field("thinking");
                self.emit_nonempty(sink, StreamEvent::ThinkingDelta(thinking.clone()));
                BlockState::Thinking {
                    thinking,
                    signature: text_field("signature"),
                }
            }
            "redacted_thinking" => BlockState::RedactedThinking(text_field("data")),
            "tool_use" => {
                let (id, name) = (text_field("id"), text_field("name"));
                self.emit(
                    sink,
                    StreamEvent::ToolUseStart {
                        id: id.clone(),
                        name: name.clone(),
                    },
                );
                BlockState::ToolUse {
                    id,
                    name,
                    json: String::new(),
                }
            }
            kind => {
                if kind == "server_tool_use" {
                    self.emit(
                        sink,
                        StreamEvent::ServerToolUse {
                            id: text_field("id"),
                            name: text_field("name"),
                        },
                    );
                }
                BlockState::Opaque {
                    value: block.clone(),
                    json: String::new(),
                }
            }
        };
        self.blocks.insert(index, state);
    }

    fn block_delta(&mut self, json: &Value, sink: StreamSink<'_>) {
        let (Some(index), Some(delta)) =
            (json.get("index").and_then(Value::as_u64), json.get("delta"))
        else {
            return;
        };
        let field = |name: &str| delta.get(name).and_then(Value::as_str).unwrap_or("");
        let delta_type = delta.get("type").and_then(Value::as_str).unwrap_or("");
        let Some(block) = self.blocks.get_mut(&index) else {
            tracing::debug!(index, "delta for a block that never started");
            return;
        };
        let event = match (block, delta_type) {
            (BlockState::Text(text, _), "text_delta") => {
                text.push_str(field("text"));
                StreamEvent::TextDelta(field("text").to_string())
            }
            (BlockState::Thinking { thinking, .. }, "thinking_delta") => {
                thinking.push_str(field("thinking"));
                StreamEvent::ThinkingDelta(field("thinking").to_string())
            }
            (BlockState::Thinking { signature, .. }, "signature_delta") => {
                signature.push_str(field("signature"));
                return;
            }
            (BlockState::ToolUse { id, json, .. }, "input_json_delta") => {
                json.push_str(field("partial_json"));
                StreamEvent::ToolInputDelta {
                    id: id.clone(),
                    partial_json: field("partial_json").to_string(),
                }
            }
            (BlockState::Opaque { json, .. }, "input_json_delta") => {
                json.push_str(field("partial_json"));
                return;
            }
            (BlockState::Text(_, citations), "citations_delta") => {
                if let Some(citation) = delta.get("citation") {
                    citations.push(citation.clone());
                }
                return;
            }
            // Future delta kinds: the text they annotate still arrives.
            _ => return,
        };
        self.emit_nonempty(sink, event);
    }

    /// Settles a block at `content_block_stop` (or at the end for blocks never stopped).
    fn finish_block(&mut self, index: u64) {
        if let Some(state) = self.blocks.get_mut(&index) {
            let done = settle(std::mem::replace(state, BlockState::Done(None)));
            *state = BlockState::Done(done);
        }
    }

    fn emit(&mut self, sink: StreamSink<'_>, event: StreamEvent) {
        self.emitted = true;
        sink(event);
    }

    fn emit_nonempty(&mut self, sink: StreamSink<'_>, event: StreamEvent) {
        let empty = match &event {
            StreamEvent::TextDelta(t) | StreamEvent::ThinkingDelta(t) => t.is_empty(),
            StreamEvent::ToolInputDelta { partial_json, .. } => partial_json.is_empty(),
            _ => false,
        };
        if !empty {
            self.emit(sink, event);
        }
    }
}

/// Tool input from its concatenated fragments: all empty is `{}`; text that is not a JSON
/// object is kept raw under `INVALID_INPUT_KEY` for the engine to report to the model.
fn parse_tool_input(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            let mut obj = Map::new();
            obj.insert(
                INVALID_INPUT_KEY.to_string(),
                Value::String(raw.to_string()),
            );
            Value::Object(obj)
        }
    }
}

fn settle(state: BlockState) -> Option<Block> {
    match state {
        BlockState::Text(text, citations) => (!text.is_empty()).then_some(Block::Text {
            text,
            citations: (!citations.is_empty()).then(|| Value::Array(citations)),
        }),
        BlockState::Thinking {
            thinking,
            signature,
        } => Some(Block::Thinking {
            thinking,
            signature,
        }),
        BlockState::RedactedThinking(data) => Some(Block::RedactedThinking { data }),
        BlockState::ToolUse { id, name, json } => Some(Block::ToolUse {
            id,
            name,
            input: parse_tool_input(&json),
        }),
        BlockState::Opaque { mut value, json } => {
            if !json.is_empty()
                && let Some(obj) = value.as_object_mut()
            {
                obj.insert("input".to_string(), parse_tool_input(&json));
            }
            Some(Block::Opaque(value))
        }
        BlockState::Done(block) => block,
    }
}

/// Starts from what is known, then lets every field the event carries override it.
fn merge_usage(usage: &mut Option<Usage>, json: &Value) {
    let Some(obj) = json.as_object() else {
        return;
    };
    let current = usage.get_or_insert_with(Usage::default);
    let field = |name: &str| obj.get(name).and_then(Value::as_u64);
    if let Some(v) = field("input_tokens") {
        current.input_tokens = v;
    }
    if let Some(v) = field("output_tokens") {
        current.output_tokens = v;
    }
    if let Some(v) = field("cache_read_input_tokens") {
        current.cache_read_input_tokens = v;
    }
    if let Some(v) = field("cache_creation_input_tokens") {
        current.cache_creation_input_tokens = v;
    }
}

fn stop_reason(reason: &str) -> StopReason {
    serde_json::from_value(Value::String(reason.to_string()))
        .unwrap_or_else(|_| StopReason::Other(reason.to_string()))
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
        let seen = Mutex::new(Vec::new());
        let sink = |e: StreamEvent| seen.lock().unwrap().push(e);
        let mut assembler = StreamAssembler::new();
        let mut result = None;
        for line in lines {
            let event = SseEvent {
                event: None,
                data: line.to_string(),
                id: None,
            };
            match assembler.on_event(&event, &sink) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Done) => break,
                Err(e) => {
                    result = Some(Err(e));
                    break;
                }
            }
        }
        let result = result.unwrap_or_else(|| assembler.finish("fallback"));
        (result, seen.into_inner().unwrap())
    }

    fn start() -> Value {
        json!({"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":5,"output_tokens":1}}})
    }

    #[test]
    fn bad_tool_json_is_kept_raw_and_unknown_events_are_ignored() {
        let (turn, events) = run(&[
            start(),
            json!({"type":"brand_new_event","x":1}),
            json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"Write","input":{}}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\": [1,"}}),
            json!({"type":"content_block_stop","index":0}),
            json!({"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}),
            json!({"type":"message_stop"}),
        ]);
        let turn = turn.unwrap();
        assert_eq!(turn.stop_reason, StopReason::MaxTokens);
        assert_eq!(
            turn.content,
            vec![Block::ToolUse {
                id: "t1".into(),
                name: "Write".into(),
                input: json!({INVALID_INPUT_KEY: "{\"a\": [1,"}),
            }]
        );
        assert_eq!(turn.usage.unwrap().output_tokens, 9);
        assert_eq!(turn.usage.unwrap().input_tokens, 5);
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn second_message_start_is_an_error_not_a_merge() {
        let (turn, _) = run(&[start(), start()]);
        assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::Decode);
    }

    #[test]
    fn end_without_message_stop_is_a_stream_cut() {
        let (turn, events) = run(&[
            start(),
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}),
        ]);
        assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::StreamCut);
        assert_eq!(events, vec![StreamEvent::TextDelta("Hel".into())]);
    }

    #[test]
    fn refusal_with_no_blocks_is_an_empty_turn_and_no_usage_stays_none() {
        let (turn, _) = run(&[
            json!({"type":"message_start","message":{"id":"msg_2","model":""}}),
            json!({"type":"message_delta","delta":{"stop_reason":"refusal"}}),
            json!({"type":"message_stop"}),
        ]);
        let turn = turn.unwrap();
        assert_eq!(turn.stop_reason, StopReason::Refusal);
        assert!(turn.content.is_empty());
        assert_eq!(turn.usage, None);
        assert_eq!(turn.model, "fallback");
    }

    #[test]
    fn non_json_payload_is_a_decode_error() {
        let mut assembler = StreamAssembler::new();
        let sink = |_: StreamEvent| {};
        let bad = SseEvent {
            event: None,
            data: "{not json".into(),
            id: None,
        };
        assert_eq!(
            assembler.on_event(&bad, &sink).unwrap_err().kind,
            ProviderErrorKind::Decode
        );
    }
}
