//! Assembly of one Gemini `alt=sse` stream (wire.md §4.3, §5): every `data:` payload is a
//! whole `GenerateContentResponse` holding only the new parts of candidate 0. Text parts
//! stream as `TextDelta`, `thought:true` parts as `ThinkingDelta`; a `functionCall` part
//! arrives whole (no id: one is made up, unique in the conversation) and is emitted as
//! `ToolUseStart` plus one `ToolInputDelta`; Vertex's streamed arguments are assembled by
//! `partial_args`. `thoughtSignature`s become the adapter's opaque markers. `usageMetadata`
//! is cumulative (last wins; cached tokens are taken out of the input, thought tokens
//! added to the output). There is no terminator: a chunk with `finishReason` (or a blocked
//! prompt) completes the answer, and the end of the body without one is a `StreamCut`.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::errors;
use super::partial_args::PartialCall;
use super::parts;
use crate::sse::SseEvent;
use crate::streaming::{Flow, WireDecoder};
use robota_core::{
    AssistantTurn, Block, INVALID_INPUT_KEY, Message, ProviderError, ProviderErrorKind, StopReason,
    StreamEvent, StreamSink, Usage,
};

/// Tool ids for calls Gemini sends without one: `call_<n>`, unique in the conversation
/// (the history's tool_use ids are taken), and the same on every retry of a request.
#[derive(Debug, Clone)]
pub(crate) struct ToolIds {
    used: HashSet<String>,
    next: u64,
}

impl Default for ToolIds {
    fn default() -> Self {
        ToolIds::from_history(&[])
    }
}

impl ToolIds {
    pub(crate) fn from_history(messages: &[Message]) -> Self {
        let used: HashSet<String> = messages
            .iter()
            .flat_map(|m| m.tool_uses().map(|(id, _, _)| id.to_string()))
            .collect();
        let count = messages
            .iter()
            .map(|m| m.tool_uses().count())
            .sum::<usize>();
        ToolIds {
            used,
            next: count as u64 + 1,
        }
    }

    /// The id for a new call: the server's own when it sent a fresh one, else `call_<n>`.
    fn claim(&mut self, server_id: Option<&str>) -> String {
        if let Some(id) = server_id.map(str::trim).filter(|id| !id.is_empty())
            && self.used.insert(id.to_string())
        {
            return id.to_string();
        }
        loop {
            let id = format!("call_{}", self.next);
            self.next += 1;
            if self.used.insert(id.clone()) {
                return id;
            }
        }
    }
}

/// Raw `usageMetadata` counts, each the latest value seen.
#[derive(Debug, Default, Clone, Copy)]
struct UsageCounts {
    seen: bool,
    prompt: u64,
    candidates: u64,
    thoughts: u64,
    cached: u64,
    tool_use_prompt: u64,
}

impl UsageCounts {
    fn merge(&mut self, metadata: &Value) {
        let mut found = false;
        for (name, slot) in [
            ("promptTokenCount", &mut self.prompt),
            ("candidatesTokenCount", &mut self.candidates),
            ("thoughtsTokenCount", &mut self.thoughts),
            ("cachedContentTokenCount", &mut self.cached),
            ("toolUsePromptTokenCount", &mut self.tool_use_prompt),
        ] {
            if let Some(v) = metadata.get(name).and_then(Value::as_u64) {
                *slot = v;
                found = true;
            }
        }
        self.seen |= found;
    }

    fn usage(&self) -> Option<Usage> {
        self.seen.then(|| Usage {
            input_tokens: self.prompt.saturating_sub(self.cached) + self.tool_use_prompt,
            output_tokens: self.candidates + self.thoughts,
            cache_read_input_tokens: self.cached,
            cache_creation_input_tokens: 0,
        })
    }
}

/// Builds one assistant turn from the chunks of one HTTP stream.
#[derive(Debug)]
pub(crate) struct GeminiStreamDecoder {
    ids: ToolIds,
    blocks: Vec<Block>,
    open_call: Option<PartialCall>,
    usage: UsageCounts,
    finish_reason: Option<String>,
    blocked: bool,
    response_id: Option<String>,
    model: Option<String>,
    emitted: bool,
}

impl WireDecoder for GeminiStreamDecoder {
    fn emitted_anything(&self) -> bool {
        self.emitted
    }

    fn on_event(&mut self, event: &SseEvent, sink: StreamSink<'_>) -> Result<Flow, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(Flow::Continue);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::new(
                ProviderErrorKind::Decode,
                format!("malformed stream chunk ({e}): {}", snippet(data)),
            )
        })?;
        if chunk.get("error").is_some() || event.is_error() {
            return Err(errors::from_stream_chunk(&chunk));
        }
        self.on_chunk(&chunk, sink)?;
        Ok(Flow::Continue)
    }

    fn finish(mut self, fallback_model: &str) -> Result<AssistantTurn, ProviderError> {
        if self.finish_reason.is_none() && !self.blocked {
            return Err(ProviderError::new(
                ProviderErrorKind::StreamCut,
                "the stream ended before a finishReason",
            ));
        }
        if let Some(call) = self.open_call.take() {
            self.close_incomplete_call(call);
        }
        let has_calls = self
            .blocks
            .iter()
            .any(|b| matches!(b, Block::ToolUse { .. }));
        let stop_reason = if self.blocked {
            StopReason::Refusal
        } else {
            stop_reason(self.finish_reason.as_deref().unwrap_or("STOP"), has_calls)
        };
        Ok(AssistantTurn {
            id: self.response_id,
            model: self.model.unwrap_or_else(|| fallback_model.to_string()),
            content: self.blocks,
            stop_reason,
            usage: self.usage.usage(),
        })
    }
}

impl GeminiStreamDecoder {
    pub(crate) fn new(ids: ToolIds) -> Self {
        GeminiStreamDecoder {
            ids,
            blocks: Vec::new(),
            open_call: None,
            usage: UsageCounts::default(),
            finish_reason: None,
            blocked: false,
            response_id: None,
            model: None,
            emitted: false,
        }
    }

    fn on_chunk(&mut self, chunk: &Value, sink: StreamSink<'_>) -> Result<(), ProviderError> {
        let text = |name: &str| {
            chunk
                .get(name)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        self.response_id = text("responseId").or(self.response_id.take());
        self.model = text("modelVersion").or(self.model.take());
        if let Some(metadata) = chunk.get("usageMetadata") {
            self.usage.merge(metadata);
        }
        let candidate = chunk
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| {
                c.iter()
                    .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            });
        let Some(candidate) = candidate else {
            if let Some(reason) = chunk
                .get("promptFeedback")
                .and_then(|f| f.get("blockReason"))
                .and_then(Value::as_str)
            {
                tracing::debug!(reason, "Gemini blocked the prompt");
                self.blocked = true;
            }
            return Ok(());
        };
        let parts = candidate
            .get("content")
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            self.on_part(part, sink)?;
        }
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            if let Some(call) = self.open_call.take() {
                self.close_incomplete_call(call);
            }
            if let Some(error) = failed_finish(reason, candidate) {
                return Err(error);
            }
            self.finish_reason = Some(reason.to_string());
        }
        Ok(())
    }

    fn on_part(&mut self, part: &Value, sink: StreamSink<'_>) -> Result<(), ProviderError> {
        let signature = part
            .get("thoughtSignature")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        if let Some(call) = part.get("functionCall") {
            return self.on_function_call(call, signature, sink);
        }
        let Some(text) = part.get("text").and_then(Value::as_str) else {
            if part.as_object().is_some_and(|o| !o.is_empty()) {
                self.blocks.push(parts::raw_part(part));
            }
            return Ok(());
        };
        let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
        if let Some(signature) = signature {
            self.blocks
                .push(parts::signature_marker(signature, text.is_empty()));
        }
        if text.is_empty() {
            return Ok(());
        }
        match (self.blocks.last_mut(), thought) {
            (Some(Block::Text { text: current, .. }), false) => current.push_str(text),
            (Some(Block::Thinking { thinking, .. }), true) => thinking.push_str(text),
            (_, false) => self.blocks.push(Block::text(text)),
            (_, true) => self.blocks.push(Block::Thinking {
                thinking: text.to_string(),
                signature: String::new(),
            }),
        }
        self.emit(
            sink,
            if thought {
                StreamEvent::ThinkingDelta(text.to_string())
            } else {
                StreamEvent::TextDelta(text.to_string())
            },
        );
        Ok(())
    }

    /// A whole call, or one piece of a streamed call (opening, arguments, or closing).
    fn on_function_call(
        &mut self,
        call: &Value,
        signature: Option<&str>,
        sink: StreamSink<'_>,
    ) -> Result<(), ProviderError> {
        let name = call
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty());
        let will_continue = call.get("willContinue").and_then(Value::as_bool) == Some(true);
        if let Some(name) = name {
            if let Some(open) = self.open_call.take() {
                self.close_call(open, sink);
            }
            let id = self.ids.claim(call.get("id").and_then(Value::as_str));
            self.emit(
                sink,
                StreamEvent::ToolUseStart {
                    id: id.clone(),
                    name: name.to_string(),
                },
            );
            let args = call.get("args").cloned().unwrap_or(Value::Null);
            self.open_call = Some(PartialCall::new(
                id,
                name.to_string(),
                args,
                signature.map(str::to_string),
            ));
        } else if self.open_call.is_none() {
            if call.get("partialArgs").is_some() {
                return Err(ProviderError::new(
                    ProviderErrorKind::Decode,
                    "streamed function-call arguments arrived with no call open",
                ));
            }
            // The empty `functionCall:{}` that closes a streamed call; nothing is open.
            return Ok(());
        }
        if let (Some(open), Some(pieces)) = (
            self.open_call.as_mut(),
            call.get("partialArgs").and_then(Value::as_array),
        ) {
            for piece in pieces {
                open.apply(piece).map_err(|why| {
                    ProviderError::new(
                        ProviderErrorKind::Decode,
                        format!("cannot assemble streamed arguments of {}: {why}", open.name),
                    )
                })?;
            }
        }
        if !will_continue && let Some(open) = self.open_call.take() {
            self.close_call(open, sink);
        }
        Ok(())
    }

    fn close_call(&mut self, call: PartialCall, sink: StreamSink<'_>) {
        let input = call.args().clone();
        self.emit(
            sink,
            StreamEvent::ToolInputDelta {
                id: call.id.clone(),
                partial_json: input.to_string(),
            },
        );
        self.push_call(call, input);
    }

    /// A streamed call the stream never closed: its arguments may be cut, so the engine is
    /// told (through `INVALID_INPUT_KEY`) instead of running it with partial input.
    fn close_incomplete_call(&mut self, call: PartialCall) {
        let mut input = Map::new();
        input.insert(
            INVALID_INPUT_KEY.to_string(),
            Value::String(format!(
                "{} (the stream ended before this call's arguments were complete)",
                call.args()
            )),
        );
        self.push_call(call, Value::Object(input));
    }

    fn push_call(&mut self, call: PartialCall, input: Value) {
        if let Some(signature) = &call.signature {
            self.blocks.push(parts::signature_marker(signature, false));
        }
        self.blocks.push(Block::ToolUse {
            id: call.id,
            name: call.name,
            input,
        });
    }

    fn emit(&mut self, sink: StreamSink<'_>, event: StreamEvent) {
        self.emitted = true;
        sink(event);
    }
}

/// Finish reasons that mean the answer is unusable but a new attempt may succeed.
fn failed_finish(reason: &str, candidate: &Value) -> Option<ProviderError> {
    let what = match reason {
        "MALFORMED_FUNCTION_CALL" => "Gemini produced a malformed function call",
        "UNEXPECTED_TOOL_CALL" => "Gemini called a tool it was not offered",
        _ => return None,
    };
    let detail = candidate
        .get("finishMessage")
        .and_then(Value::as_str)
        .map(|m| format!(": {}", snippet(m)))
        .unwrap_or_default();
    Some(ProviderError::new(
        ProviderErrorKind::Server,
        format!("{what} (finishReason {reason}){detail}"),
    ))
}

fn stop_reason(reason: &str, has_calls: bool) -> StopReason {
    match reason {
        "STOP" | "FINISH_REASON_UNSPECIFIED" if has_calls => StopReason::ToolUse,
        "STOP" | "FINISH_REASON_UNSPECIFIED" => StopReason::EndTurn,
        "MAX_TOKENS" => StopReason::MaxTokens,
        "SAFETY"
        | "RECITATION"
        | "LANGUAGE"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION" => StopReason::Refusal,
        other => StopReason::Other(other.to_ascii_lowercase()),
    }
}

fn snippet(data: &str) -> String {
    data.chars().take(200).collect()
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
