//! The Responses API request body (wire.md §3.1, §7.4, §7.5): model, `instructions`, flat
//! function tools, tool choice, limits, reasoning options and the `input` items converted
//! from `core` messages — user text and images, assistant text as output messages, tool
//! calls as `function_call` items and results as `function_call_output` items keyed by
//! `call_id`, and this provider's own reasoning items (`Block::Opaque` of type
//! `openai_reasoning`) echoed back with their `encrypted_content`. Thinking blocks and
//! opaque blocks of other providers are left out; repeated or missing call ids are rewritten
//! consistently for the outgoing request.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use robota_core::message::ImageSource;
use robota_core::{Block, INVALID_INPUT_KEY, Message, ProviderRequest, Role, ToolSchema};

/// `Block::Opaque` type under which a reasoning item of this API is kept in history:
/// `{"type":"openai_reasoning","model":<requested model>,"item":<the API's reasoning item>}`.
pub const REASONING_BLOCK_TYPE: &str = "openai_reasoning";

/// Options of one call that do not come from the `ProviderRequest`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BodyOptions<'a> {
    /// `reasoning.effort` configured for the provider (`minimal|low|medium|high|…`).
    pub reasoning_effort: Option<&'a str>,
}

/// The JSON body for one streaming call.
pub(crate) fn build_body(request: &ProviderRequest, options: BodyOptions<'_>) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    if !request.system.trim().is_empty() {
        body.insert("instructions".into(), json!(request.system));
    }
    body.insert(
        "input".into(),
        Value::Array(input_items(&request.messages, &request.model)),
    );
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools(&request.tools)));
        let choice = if request.tools_disabled {
            "none"
        } else {
            "auto"
        };
        body.insert("tool_choice".into(), json!(choice));
    }
    body.insert("stream".into(), json!(true));
    body.insert("store".into(), json!(false));
    if request.max_tokens > 0 {
        body.insert("max_output_tokens".into(), json!(request.max_tokens));
    }
    let effort = options
        .reasoning_effort
        .map(str::to_string)
        .or_else(|| request.thinking_budget.map(effort_for_budget));
    if effort.is_some() || is_reasoning_model(&request.model) {
        let mut reasoning = Map::new();
        if let Some(effort) = effort {
            reasoning.insert("effort".into(), json!(effort));
        }
        reasoning.insert("summary".into(), json!("auto"));
        body.insert("reasoning".into(), Value::Object(reasoning));
        // With store:false a reasoning item can only be sent back in encrypted form.
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    Value::Object(body)
}

/// A thinking budget in tokens turned into the nearest effort level.
fn effort_for_budget(budget: u32) -> String {
    match budget {
        0..=4096 => "low",
        4097..=16384 => "medium",
        _ => "high",
    }
    .to_string()
}

/// Models that reason (and accept `reasoning` / encrypted reasoning): the o-series, GPT-5
/// (except the non-reasoning `-chat` variants) and codex models. Others reject the fields.
pub(crate) fn is_reasoning_model(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    let m = m.rsplit('/').next().unwrap_or(&m);
    let o_series = m.starts_with('o') && m[1..].starts_with(|c: char| c.is_ascii_digit());
    o_series || (m.starts_with("gpt-5") && !m.contains("-chat")) || m.contains("codex")
}

fn tools(tools: &[ToolSchema]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            json!({"type":"function","name":t.name,"description":t.description,
                   "parameters":t.input_schema,"strict":false})
        })
        .collect()
}

/// Input items for the whole conversation, in order.
fn input_items(history: &[Message], model: &str) -> Vec<Value> {
    let mut ids = CallIdRewriter::default();
    let mut items = Vec::with_capacity(history.len() * 2);
    for message in history {
        match message.role {
            Role::User => user_items(&message.content, &mut ids, &mut items),
            Role::Assistant => assistant_items(&message.content, model, &mut ids, &mut items),
        }
    }
    items
}

/// Tool results first (they answer the calls just before), then the user's own content.
fn user_items(blocks: &[Block], ids: &mut CallIdRewriter, items: &mut Vec<Value>) {
    let mut parts = Vec::new();
    let mut images: Vec<&ImageSource> = Vec::new();
    for block in blocks {
        match block {
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let output = if *is_error && !content.to_ascii_lowercase().starts_with("error") {
                    format!("Error: {content}")
                } else {
                    content.to_string()
                };
                // A function output is text; a tool's images follow in the user message.
                images.extend(&content.images);
                match ids.for_result(tool_use_id) {
                    Some(call_id) => items.push(
                        json!({"type":"function_call_output","call_id":call_id,"output":output}),
                    ),
                    // A result whose call is not in the request would be refused: keep it
                    // as text so the model still sees it.
                    None => parts.push(json!({"type":"input_text",
                        "text":format!("[result of tool call {tool_use_id}]\n{output}")})),
                }
            }
            Block::Text { text, .. } if !text.is_empty() => {
                parts.push(json!({"type":"input_text","text":text}));
            }
            Block::Image { source } => images.push(source),
            _ => {}
        }
    }
    for source in images {
        parts.push(json!({"type":"input_image","image_url":source.data_url()}));
    }
    if !parts.is_empty() {
        items.push(json!({"role":"user","content":parts}));
    }
}

/// Reasoning items, output messages and function calls in the order the model made them.
fn assistant_items(
    blocks: &[Block],
    model: &str,
    ids: &mut CallIdRewriter,
    items: &mut Vec<Value>,
) {
    let start = items.len();
    let mut text_parts: Vec<Value> = Vec::new();
    let flush = |parts: &mut Vec<Value>, items: &mut Vec<Value>| {
        if !parts.is_empty() {
            items.push(json!({"type":"message","role":"assistant",
                "content":std::mem::take(parts)}));
        }
    };
    for block in blocks {
        match block {
            Block::Text { text, .. } if !text.is_empty() => {
                text_parts.push(json!({"type":"output_text","text":text}));
            }
            Block::ToolUse { id, name, input } => {
                flush(&mut text_parts, items);
                items.push(json!({"type":"function_call","call_id":ids.for_call(id),
                    "name":name,"arguments":arguments_text(input)}));
            }
            Block::Opaque(value) => {
                if let Some(item) = reasoning_item(value, model) {
                    flush(&mut text_parts, items);
                    items.push(item);
                }
            }
            // Thinking of other providers cannot be verified here; the rest has no item.
            _ => {}
        }
    }
    flush(&mut text_parts, items);
    // A reasoning item must be followed by the item it led to; trailing ones are refused.
    while items.len() > start && items.last().is_some_and(is_reasoning_item) {
        items.pop();
    }
}

fn is_reasoning_item(item: &Value) -> bool {
    item.get("type").and_then(Value::as_str) == Some("reasoning")
}

/// The reasoning item an `openai_reasoning` block carries, when it can go to `model`:
/// produced for the same model and holding `encrypted_content` (with `store:false` an item
/// without it refers to nothing the server kept).
fn reasoning_item(block: &Value, model: &str) -> Option<Value> {
    if block.get("type").and_then(Value::as_str) != Some(REASONING_BLOCK_TYPE) {
        return None;
    }
    if let Some(made_for) = block.get("model").and_then(Value::as_str)
        && made_for != model
    {
        return None;
    }
    let item = block.get("item")?;
    let encrypted = item
        .get("encrypted_content")
        .and_then(Value::as_str)
        .filter(|e| !e.is_empty())?;
    let mut out = Map::new();
    out.insert("type".into(), json!("reasoning"));
    if let Some(id) = item.get("id").and_then(Value::as_str) {
        out.insert("id".into(), json!(id));
    }
    let summary = item
        .get("summary")
        .filter(|s| s.is_array())
        .cloned()
        .unwrap_or_else(|| json!([]));
    out.insert("summary".into(), summary);
    out.insert("encrypted_content".into(), json!(encrypted));
    Some(Value::Object(out))
}

/// Tool input as the arguments string the model produced (raw text when it was not JSON).
fn arguments_text(input: &Value) -> String {
    if let Some(raw) = input
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.get(INVALID_INPUT_KEY))
        .and_then(Value::as_str)
    {
        return raw.to_string();
    }
    input.to_string()
}

/// Makes call ids unique and non-empty across the request, keeping results in step.
#[derive(Debug, Default)]
struct CallIdRewriter {
    /// Ids already used by a function_call in this request.
    used: HashSet<String>,
    /// Original id → the id its most recent call went out with.
    latest: HashMap<String, String>,
    minted: u32,
}

impl CallIdRewriter {
    fn for_call(&mut self, original: &str) -> String {
        let id = if original.is_empty() || self.used.contains(original) {
            self.mint(original)
        } else {
            original.to_string()
        };
        if id != original {
            tracing::debug!(from = %original, to = %id, "rewrote tool call id");
        }
        self.used.insert(id.clone());
        self.latest.insert(original.to_string(), id.clone());
        id
    }

    /// The id a result goes out with; `None` when no call in the request made it.
    fn for_result(&self, original: &str) -> Option<String> {
        self.latest.get(original).cloned()
    }

    fn mint(&mut self, original: &str) -> String {
        let stem: String = original
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .take(40)
            .collect();
        loop {
            self.minted += 1;
            let id = if stem.is_empty() {
                format!("call_r{}", self.minted)
            } else {
                format!("call_r{}_{stem}", self.minted)
            };
            if !self.used.contains(&id) {
                return id;
            }
        }
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
