//! Assembly of one Responses API stream (wire.md §3.2–3.3): dispatches each SSE payload on
//! its JSON `type`, forwards output text, reasoning summaries and function-call arguments
//! to the event sink as they arrive, builds the output items by `output_index` (deltas are
//! correlated by `item_id`, tool calls are named by their `call_id`), takes usage and the
//! stop reason from the terminal event, and turns `error` / `response.failed` events and an
//! early end into typed errors.
//!
//! Representation: a reasoning item becomes one `Block::Opaque` of type
//! `openai_reasoning` (`{"type","model","item"}`, the item as `output_item.done` gave it,
//! `encrypted_content` included) placed where the model produced it. Its summary text is
//! streamed as `ThinkingDelta`s only — no `Block::Thinking` is made, so no other provider
//! is ever sent an unverifiable thinking block. Reasoning items without `encrypted_content`
//! are not kept: with `store:false` they could not be sent back.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use super::errors;
use super::request::REASONING_BLOCK_TYPE;
use crate::sse::SseEvent;
use crate::streaming::{Flow, WireDecoder};
use robota_core::{
    AssistantTurn, Block, INVALID_INPUT_KEY, ProviderError, ProviderErrorKind, StopReason,
    StreamEvent, StreamSink, Usage,
};

#[derive(Debug)]
enum Item {
    Message {
        text: String,
        refused: bool,
    },
    FunctionCall {
        call_id: String,
        name: String,
        arguments: String,
        /// Some argument text already reached the sink.
        streamed: bool,
    },
    Reasoning {
        item: Value,
    },
    /// An output item kind robota does not use (built-in tool calls…).
    Other,
}

/// How the response ended.
#[derive(Debug)]
enum Terminal {
    Completed,
    Incomplete(Option<String>),
}

/// Builds one assistant turn from the events of one HTTP stream.
#[derive(Debug)]
pub(crate) struct ResponsesDecoder {
    /// The model the request named; reasoning blocks are tagged with it.
    request_model: String,
    response_id: Option<String>,
    model: Option<String>,
    items: BTreeMap<u64, Item>,
    index_of: HashMap<String, u64>,
    usage: Option<Usage>,
    terminal: Option<Terminal>,
    emitted: bool,
    /// A reasoning summary part ended: the next summary text starts a new paragraph.
    summary_break: bool,
}

impl WireDecoder for ResponsesDecoder {
    fn on_event(&mut self, event: &SseEvent, sink: StreamSink<'_>) -> Result<Flow, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        if data == "[DONE]" {
            // Normally unseen: the terminal event ends the read first.
            return Ok(Flow::Done);
        }
        let json: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::new(
                ProviderErrorKind::Decode,
                format!("malformed stream event ({e}): {}", snippet(data)),
            )
        })?;
        let kind = json.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "error" => return Err(errors::from_stream_error(&json)),
            "" if event.is_error() || json.get("error").is_some() => {
                return Err(errors::from_stream_error(&json));
            }
            "response.created" | "response.in_progress" | "response.queued" => {
                self.response_header(&json);
            }
            "response.output_item.added" => self.item_added(&json, sink),
            "response.output_item.done" => self.item_done(&json, sink),
            "response.output_text.delta" => self.text_delta(&json, sink, false),
            "response.refusal.delta" => self.text_delta(&json, sink, true),
            "response.output_text.done" => self.text_done(&json, "text", sink, false),
            "response.refusal.done" => self.text_done(&json, "refusal", sink, true),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.thinking_delta(&json, sink);
            }
            "response.reasoning_summary_part.done" | "response.reasoning_text.done" => {
                self.summary_break = true;
            }
            "response.function_call_arguments.delta" => self.arguments_delta(&json, sink),
            "response.function_call_arguments.done" => self.arguments_done(&json, sink),
            "response.completed" | "response.done" => {
                self.finish_response(&json, sink);
                self.terminal = Some(Terminal::Completed);
                return Ok(Flow::Done);
            }
            "response.incomplete" => {
                self.finish_response(&json, sink);
                let reason = json
                    .pointer("/response/incomplete_details/reason")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                self.terminal = Some(Terminal::Incomplete(reason));
                return Ok(Flow::Done);
            }
            "response.failed" => {
                let response = json.get("response").unwrap_or(&Value::Null);
                return Err(errors::from_failed_response(response));
            }
            other => tracing::trace!(event_type = other, "ignoring Responses event"),
        }
        Ok(Flow::Continue)
    }

    fn emitted_anything(&self) -> bool {
        self.emitted
    }

    fn finish(self, fallback_model: &str) -> Result<AssistantTurn, ProviderError> {
        let Some(terminal) = self.terminal else {
            let what = if self.response_id.is_some() {
                "the stream ended before response.completed"
            } else {
                "the stream ended before any response"
            };
            return Err(ProviderError::new(ProviderErrorKind::StreamCut, what));
        };
        let mut refused = false;
        let mut content = Vec::new();
        for item in self.items.into_values() {
            match item {
                Item::Message { text, refused: r } => {
                    refused |= r;
                    if !text.is_empty() {
                        content.push(Block::Text {
                            text,
                            citations: None,
                        });
                    }
                }
                Item::FunctionCall {
                    call_id,
                    name,
                    arguments,
                    ..
                } => content.push(Block::ToolUse {
                    id: call_id,
                    name,
                    input: parse_arguments(&arguments),
                }),
                Item::Reasoning { item } => {
                    let encrypted = item
                        .get("encrypted_content")
                        .and_then(Value::as_str)
                        .is_some_and(|e| !e.is_empty());
                    if encrypted {
                        content.push(Block::Opaque(json!({"type":REASONING_BLOCK_TYPE,
                            "model":self.request_model,"item":item})));
                    }
                }
                Item::Other => {}
            }
        }
        let stop_reason = match terminal {
            Terminal::Incomplete(Some(reason)) => match reason.as_str() {
                "max_output_tokens" | "max_tokens" => StopReason::MaxTokens,
                "content_filter" => StopReason::Refusal,
                _ => StopReason::Other(reason),
            },
            Terminal::Incomplete(None) => StopReason::MaxTokens,
            Terminal::Completed if refused => StopReason::Refusal,
            Terminal::Completed if content.iter().any(|b| matches!(b, Block::ToolUse { .. })) => {
                StopReason::ToolUse
            }
            Terminal::Completed => StopReason::EndTurn,
        };
        Ok(AssistantTurn {
            id: self.response_id,
            model: self.model.unwrap_or_else(|| fallback_model.to_string()),
            content,
            stop_reason,
            usage: self.usage,
        })
    }
}

impl ResponsesDecoder {
    pub(crate) fn new(request_model: &str) -> Self {
        ResponsesDecoder {
            request_model: request_model.to_string(),
            response_id: None,
            model: None,
            items: BTreeMap::new(),
            index_of: HashMap::new(),
            usage: None,
            terminal: None,
            emitted: false,
            summary_break: false,
        }
    }

    fn response_header(&mut self, json: &Value) {
        let Some(response) = json.get("response") else {
            return;
        };
        if let Some(id) = response.get("id").and_then(Value::as_str) {
            self.response_id = Some(id.to_string());
        }
        if let Some(model) = response
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
        {
            self.model = Some(model.to_string());
        }
    }

    /// The output position an event refers to: its `output_index`, else the item its
    /// `item_id` names, else the next free position.
    fn index_for(&self, json: &Value) -> u64 {
        json.get("output_index")
            .and_then(Value::as_u64)
            .or_else(|| {
                let id = json.get("item_id").and_then(Value::as_str)?;
                self.index_of.get(id).copied()
            })
            .unwrap_or_else(|| self.next_index())
    }

    fn next_index(&self) -> u64 {
        self.items.keys().next_back().map_or(0, |last| last + 1)
    }

    fn item_added(&mut self, json: &Value, sink: StreamSink<'_>) {
        let Some(item) = json.get("item") else {
            return;
        };
        let index = self.index_for(json);
        self.open_item(index, item, sink);
    }

    /// Starts tracking `item` at `index` (a function call announces itself to the sink).
    fn open_item(&mut self, index: u64, item: &Value, sink: StreamSink<'_>) {
        if let Some(id) = item.get("id").and_then(Value::as_str) {
            self.index_of.insert(id.to_string(), index);
        }
        let text = |name: &str| item.get(name).and_then(Value::as_str).unwrap_or("");
        let state = match text("type") {
            "message" => Item::Message {
                text: String::new(),
                refused: false,
            },
            "function_call" => {
                let call_id = match text("call_id") {
                    "" => text("id").to_string(),
                    id => id.to_string(),
                };
                let name = text("name").to_string();
                self.emit(
                    sink,
                    StreamEvent::ToolUseStart {
                        id: call_id.clone(),
                        name: name.clone(),
                    },
                );
                Item::FunctionCall {
                    call_id,
                    name,
                    arguments: String::new(),
                    streamed: false,
                }
            }
            "reasoning" => Item::Reasoning { item: item.clone() },
            _ => Item::Other,
        };
        self.items.insert(index, state);
    }

    fn item_done(&mut self, json: &Value, sink: StreamSink<'_>) {
        let Some(item) = json.get("item") else {
            return;
        };
        let index = self.index_for(json);
        self.settle_item(index, item, sink);
    }

    /// Takes the final form of an item; whatever its deltas did not deliver is sent now.
    fn settle_item(&mut self, index: u64, item: &Value, sink: StreamSink<'_>) {
        if !self.items.contains_key(&index) {
            self.open_item(index, item, sink);
        }
        match item.get("type").and_then(Value::as_str).unwrap_or("") {
            "message" => {
                let (text, refused) = message_text(item);
                self.fill_text(index, &text, refused, sink);
            }
            "function_call" => {
                if let Some(arguments) = item.get("arguments").and_then(Value::as_str) {
                    self.fill_arguments(index, arguments, sink);
                }
                if let Some(Item::FunctionCall { name, .. }) = self.items.get_mut(&index)
                    && name.is_empty()
                    && let Some(done_name) = item.get("name").and_then(Value::as_str)
                {
                    *name = done_name.to_string();
                }
            }
            "reasoning" => {
                if let Some(Item::Reasoning { item: kept }) = self.items.get_mut(&index) {
                    *kept = item.clone();
                }
            }
            _ => {}
        }
    }

    fn text_delta(&mut self, json: &Value, sink: StreamSink<'_>, refusal: bool) {
        let delta = json.get("delta").and_then(Value::as_str).unwrap_or("");
        let index = self.index_for(json);
        let item = self.items.entry(index).or_insert(Item::Message {
            text: String::new(),
            refused: false,
        });
        if let Item::Message { text, refused } = item {
            text.push_str(delta);
            *refused |= refusal;
            self.emit_nonempty(sink, StreamEvent::TextDelta(delta.to_string()));
        }
    }

    /// `output_text.done` / `refusal.done`: the whole text, used when no delta brought it.
    fn text_done(&mut self, json: &Value, field: &str, sink: StreamSink<'_>, refusal: bool) {
        if let Some(full) = json.get(field).and_then(Value::as_str) {
            let index = self.index_for(json);
            self.fill_text(index, full, refusal, sink);
        }
    }

    fn fill_text(&mut self, index: u64, full: &str, refusal: bool, sink: StreamSink<'_>) {
        if let Some(Item::Message { text, refused }) = self.items.get_mut(&index)
            && text.is_empty()
            && !full.is_empty()
        {
            text.push_str(full);
            *refused |= refusal;
            self.emit(sink, StreamEvent::TextDelta(full.to_string()));
        }
    }

    fn thinking_delta(&mut self, json: &Value, sink: StreamSink<'_>) {
        let delta = json.get("delta").and_then(Value::as_str).unwrap_or("");
        if delta.is_empty() {
            return;
        }
        let text = if std::mem::take(&mut self.summary_break) {
            format!("\n\n{delta}")
        } else {
            delta.to_string()
        };
        self.emit(sink, StreamEvent::ThinkingDelta(text));
    }

    fn arguments_delta(&mut self, json: &Value, sink: StreamSink<'_>) {
        let delta = json.get("delta").and_then(Value::as_str).unwrap_or("");
        let index = self.index_for(json);
        let Some(Item::FunctionCall {
            call_id,
            arguments,
            streamed,
            ..
        }) = self.items.get_mut(&index)
        else {
            tracing::debug!(index, "arguments for an unknown function call");
            return;
        };
        arguments.push_str(delta);
        *streamed |= !delta.is_empty();
        let event = StreamEvent::ToolInputDelta {
            id: call_id.clone(),
            partial_json: delta.to_string(),
        };
        self.emit_nonempty(sink, event);
    }

    fn arguments_done(&mut self, json: &Value, sink: StreamSink<'_>) {
        if let Some(arguments) = json.get("arguments").and_then(Value::as_str) {
            let index = self.index_for(json);
            self.fill_arguments(index, arguments, sink);
        }
    }

    /// The final arguments win; when none streamed, they are sent whole now.
    fn fill_arguments(&mut self, index: u64, full: &str, sink: StreamSink<'_>) {
        let Some(Item::FunctionCall {
            call_id,
            arguments,
            streamed,
            ..
        }) = self.items.get_mut(&index)
        else {
            return;
        };
        if full.is_empty() && !arguments.is_empty() {
            return;
        }
        *arguments = full.to_string();
        if !*streamed && !full.is_empty() {
            *streamed = true;
            let event = StreamEvent::ToolInputDelta {
                id: call_id.clone(),
                partial_json: full.to_string(),
            };
            self.emit(sink, event);
        }
    }

    /// The terminal response: its usage, and any output item no event announced.
    fn finish_response(&mut self, json: &Value, sink: StreamSink<'_>) {
        let Some(response) = json.get("response") else {
            return;
        };
        self.response_header(json);
        self.usage = response.get("usage").and_then(usage_from);
        let Some(output) = response.get("output").and_then(Value::as_array) else {
            return;
        };
        let seen_nothing = self.items.is_empty();
        for item in output {
            let known = item
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| self.index_of.contains_key(id));
            if seen_nothing || (!known && item.get("id").is_some()) {
                let index = self.next_index();
                self.settle_item(index, item, sink);
            }
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

/// The text of an output message item, and whether it was a refusal.
fn message_text(item: &Value) -> (String, bool) {
    let mut text = String::new();
    let mut refused = false;
    for part in item
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match part.get("type").and_then(Value::as_str) {
            Some("output_text") => {
                text.push_str(part.get("text").and_then(Value::as_str).unwrap_or(""));
            }
            Some("refusal") => {
                refused = true;
                text.push_str(part.get("refusal").and_then(Value::as_str).unwrap_or(""));
            }
            _ => {}
        }
    }
    (text, refused)
}

/// `core::Usage` from the API's usage: `input_tokens` there includes the cached ones.
fn usage_from(usage: &Value) -> Option<Usage> {
    let obj = usage.as_object()?;
    let field = |name: &str| obj.get(name).and_then(Value::as_u64);
    let input = field("input_tokens")?;
    let cached = usage
        .pointer("/input_tokens_details/cached_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0)
        .min(input);
    Some(Usage {
        input_tokens: input - cached,
        output_tokens: field("output_tokens").unwrap_or(0),
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
    })
}

/// Tool input from the arguments text: empty is `{}`; text that is not a JSON object is
/// kept raw under `INVALID_INPUT_KEY` for the engine to report to the model.
fn parse_arguments(raw: &str) -> Value {
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

fn snippet(data: &str) -> String {
    data.chars().take(200).collect()
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
