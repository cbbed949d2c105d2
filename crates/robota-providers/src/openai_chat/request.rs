//! The Chat Completions request body (wire.md §2.2, §6, §7.4): model, system prompt,
//! messages converted from `core` blocks (assistant `tool_calls` with JSON-string arguments,
//! each tool result its own `role:"tool"` message placed before the user text of its turn,
//! thinking and other providers' opaque blocks left out), tools in the nested `function`
//! shape, `tool_choice:"none"` when the round must not call tools, streaming with usage, and
//! the profile's `options` merged last. Tool-call ids that are missing, repeated or too long
//! are rewritten consistently with their results.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use robota_core::message::ImageSource;
use robota_core::{Block, Message, ProviderRequest, Role, ToolSchema};

/// Body keys the profile's `options` may not replace.
const FIXED_KEYS: [&str; 3] = ["model", "messages", "stream"];

/// OpenAI rejects tool-call ids longer than this.
const MAX_TOOL_ID_CHARS: usize = 40;

/// The JSON body for one streaming call.
pub(crate) fn build_body(request: &ProviderRequest, options: &Map<String, Value>) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert(
        "messages".into(),
        Value::Array(messages(&request.system, &request.messages)),
    );
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools(&request.tools)));
        if request.tools_disabled {
            body.insert("tool_choice".into(), json!("none"));
        }
    }
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if request.max_tokens > 0 {
        body.insert("max_tokens".into(), json!(request.max_tokens));
    }
    merge_options(&mut body, options);
    Value::Object(body)
}

/// Options override what robota would send; `null` removes a key; fixed keys stay.
fn merge_options(body: &mut Map<String, Value>, options: &Map<String, Value>) {
    for (key, value) in options {
        if FIXED_KEYS.contains(&key.as_str()) {
            tracing::warn!(key = %key, "ignoring provider option that would replace a fixed field");
            continue;
        }
        if value.is_null() {
            body.remove(key);
        } else {
            body.insert(key.clone(), value.clone());
        }
    }
    // OpenAI's reasoning models reject `max_tokens` next to `max_completion_tokens`.
    if body.contains_key("max_completion_tokens") {
        body.remove("max_tokens");
    }
}

fn tools(tools: &[ToolSchema]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            json!({"type":"function","function":{
                "name":t.name,"description":t.description,"parameters":t.input_schema}})
        })
        .collect()
}

/// API messages: the system prompt, then the conversation.
fn messages(system: &str, history: &[Message]) -> Vec<Value> {
    let mut out = Vec::with_capacity(history.len() + 1);
    if !system.trim().is_empty() {
        out.push(json!({"role":"system","content":system}));
    }
    let mut ids = ToolIdRewriter::default();
    for message in history {
        match message.role {
            Role::Assistant => out.extend(assistant_message(&message.content, &mut ids)),
            Role::User => user_messages(&message.content, &mut ids, &mut out),
        }
    }
    out
}

/// One assistant message: its text and its tool calls; `None` when nothing is sendable.
fn assistant_message(content: &[Block], ids: &mut ToolIdRewriter) -> Option<Value> {
    let text = joined_text(content);
    let calls: Vec<Value> = content
        .iter()
        .filter_map(|block| match block {
            Block::ToolUse { id, name, input } => Some(json!({
                "id": ids.tool_use(id),
                "type": "function",
                "function": {"name": name, "arguments": arguments(input)},
            })),
            _ => None,
        })
        .collect();
    if text.is_empty() && calls.is_empty() {
        return None;
    }
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message.insert(
        "content".into(),
        if text.is_empty() {
            Value::Null
        } else {
            json!(text)
        },
    );
    if !calls.is_empty() {
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    Some(Value::Object(message))
}

/// Arguments as the JSON string the API expects. The input is always a JSON value (invalid
/// model output is wrapped under `INVALID_INPUT_KEY`), so servers that parse it succeed.
fn arguments(input: &Value) -> String {
    match input {
        Value::Null => "{}".to_string(),
        other => other.to_string(),
    }
}

/// A user turn: one `tool` message per result (they must follow the assistant's calls
/// directly), then the user's own text and images, if any. A `tool` message carries text
/// only, so images a tool returned (Read of a picture) go in that following user message.
fn user_messages(content: &[Block], ids: &mut ToolIdRewriter, out: &mut Vec<Value>) {
    let mut images: Vec<&ImageSource> = Vec::new();
    for block in content {
        if let Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        } = block
        {
            let text = if *is_error && !content.trim_start().to_lowercase().starts_with("error") {
                format!("Error: {content}")
            } else {
                content.to_string()
            };
            images.extend(&content.images);
            out.push(
                json!({"role":"tool","tool_call_id":ids.tool_result(tool_use_id),"content":text}),
            );
        }
    }
    images.extend(content.iter().filter_map(|b| match b {
        Block::Image { source } => Some(source),
        _ => None,
    }));
    let text = joined_text(content);
    if images.is_empty() {
        if !text.is_empty() {
            out.push(json!({"role":"user","content":text}));
        }
        return;
    }
    let mut parts = Vec::with_capacity(images.len() + 1);
    if !text.is_empty() {
        parts.push(json!({"type":"text","text":text}));
    }
    for image in images {
        parts.push(json!({"type":"image_url","image_url":{"url":image_url(image)}}));
    }
    out.push(json!({"role":"user","content":parts}));
}

fn image_url(source: &ImageSource) -> String {
    if source.kind == "base64" {
        format!("data:{};base64,{}", source.media_type, source.data)
    } else {
        source.data.clone()
    }
}

/// Text blocks joined by a blank line; thinking, opaque and tool blocks are not text.
fn joined_text(content: &[Block]) -> String {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|b| match b {
            Block::Text { text, .. } if !text.is_empty() => Some(text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n\n")
}

/// Makes tool-call ids present, unique and short enough across the request, keeping each
/// result on the id its call went out with.
#[derive(Debug, Default)]
struct ToolIdRewriter {
    used: HashSet<String>,
    /// Original id → the id its most recent call went out with.
    latest: HashMap<String, String>,
    minted: u32,
}

impl ToolIdRewriter {
    fn tool_use(&mut self, original: &str) -> String {
        let id = if is_acceptable(original) && !self.used.contains(original) {
            original.to_string()
        } else {
            self.mint(original)
        };
        self.used.insert(id.clone());
        self.latest.insert(original.to_string(), id.clone());
        if id != original {
            tracing::debug!(from = %original, to = %id, "rewrote tool call id");
        }
        id
    }

    fn tool_result(&mut self, original: &str) -> String {
        if let Some(id) = self.latest.get(original) {
            return id.clone();
        }
        if is_acceptable(original) {
            return original.to_string();
        }
        let id = self.mint(original);
        self.latest.insert(original.to_string(), id.clone());
        id
    }

    fn mint(&mut self, original: &str) -> String {
        let stem: String = original
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .take(24)
            .collect();
        loop {
            self.minted += 1;
            let mut id = format!("call_r{}_{stem}", self.minted);
            id.truncate(MAX_TOOL_ID_CHARS);
            if !self.used.contains(&id) {
                return id;
            }
        }
    }
}

fn is_acceptable(id: &str) -> bool {
    !id.trim().is_empty() && id.chars().count() <= MAX_TOOL_ID_CHARS
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool_use(id: &str, path: &str) -> Block {
        Block::ToolUse {
            id: id.into(),
            name: "Read".into(),
            input: json!({"file_path": path}),
        }
    }

    fn tool_result(id: &str, content: &str, is_error: bool) -> Block {
        Block::ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error,
        }
    }

    fn request(messages: Vec<Message>) -> ProviderRequest {
        ProviderRequest {
            model: "qwen2.5-coder".into(),
            system: "be brief".into(),
            messages,
            tools: vec![ToolSchema {
                name: "Read".into(),
                description: "read a file".into(),
                input_schema: json!({"type":"object","properties":{"file_path":{"type":"string"}}}),
            }],
            max_tokens: 512,
            thinking_budget: Some(1024),
            tools_disabled: false,
            server_tools: Vec::new(),
            wire: None,
        }
    }

    #[test]
    fn body_has_system_tools_stream_usage_and_max_tokens() {
        let body = build_body(&request(vec![Message::user_text("hi")]), &Map::new());
        assert_eq!(
            body,
            json!({
                "model":"qwen2.5-coder",
                "messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],
                "tools":[{"type":"function","function":{"name":"Read","description":"read a file",
                    "parameters":{"type":"object","properties":{"file_path":{"type":"string"}}}}}],
                "stream":true,
                "stream_options":{"include_usage":true},
                "max_tokens":512
            })
        );
        let mut summary = request(vec![Message::user_text("sum up")]);
        summary.tools_disabled = true;
        let body = build_body(&summary, &Map::new());
        assert_eq!(body["tool_choice"], "none");
        assert_eq!(body["tools"].as_array().unwrap().len(), 1);
        summary.tools.clear();
        summary.system.clear();
        let body = build_body(&summary, &Map::new());
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
        assert_eq!(body["messages"][0]["role"], "user");
    }

    #[test]
    fn options_override_remove_and_cannot_touch_fixed_keys() {
        let options: Map<String, Value> = serde_json::from_value(json!({
            "temperature": 0.2, "stream_options": null, "model": "other",
            "max_completion_tokens": 900
        }))
        .unwrap();
        let body = build_body(&request(vec![Message::user_text("hi")]), &options);
        assert_eq!(body["temperature"], 0.2);
        assert!(body.get("stream_options").is_none());
        assert_eq!(body["model"], "qwen2.5-coder");
        assert_eq!(body["max_completion_tokens"], 900);
        assert!(body.get("max_tokens").is_none());
    }

    #[test]
    fn tool_rounds_become_tool_calls_and_tool_messages() {
        let body = build_body(
            &request(vec![
                Message::user_text("read a and b"),
                Message::new(
                    Role::Assistant,
                    vec![
                        Block::Thinking {
                            thinking: "plan".into(),
                            signature: String::new(),
                        },
                        Block::text("Reading both."),
                        tool_use("call_a", "a.txt"),
                        tool_use("call_b", "b.txt"),
                        Block::Opaque(json!({"type":"openai_reasoning","encrypted_content":"x"})),
                    ],
                ),
                Message::new(
                    Role::User,
                    vec![
                        Block::text("also note this"),
                        tool_result("call_a", "A", false),
                        tool_result("call_b", "no such file", true),
                    ],
                ),
            ]),
            &Map::new(),
        );
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 6);
        assert_eq!(
            m[2],
            json!({"role":"assistant","content":"Reading both.","tool_calls":[
                {"id":"call_a","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a.txt\"}"}},
                {"id":"call_b","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"b.txt\"}"}}]})
        );
        assert_eq!(
            m[3],
            json!({"role":"tool","tool_call_id":"call_a","content":"A"})
        );
        assert_eq!(
            m[4],
            json!({"role":"tool","tool_call_id":"call_b","content":"Error: no such file"})
        );
        assert_eq!(m[5], json!({"role":"user","content":"also note this"}));
    }

    #[test]
    fn tool_only_assistant_has_null_content_and_empty_turns_are_skipped() {
        let body = build_body(
            &request(vec![
                Message::user_text("go"),
                Message::new(Role::Assistant, vec![tool_use("c1", "x")]),
                Message::new(Role::User, vec![tool_result("c1", "X", false)]),
                Message::new(
                    Role::Assistant,
                    vec![Block::Thinking {
                        thinking: "only thought".into(),
                        signature: String::new(),
                    }],
                ),
            ]),
            &Map::new(),
        );
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!(m[2]["content"], Value::Null);
        assert_eq!(m[3]["role"], "tool");
    }

    #[test]
    fn repeated_missing_and_long_ids_are_rewritten_with_their_results() {
        let long = "call__0_read_file_cmpl-e9060d2b-49be-4514-8145-1082aaa1da9d";
        let body = build_body(
            &request(vec![
                Message::user_text("go"),
                Message::new(Role::Assistant, vec![tool_use("call_0", "a")]),
                Message::new(Role::User, vec![tool_result("call_0", "A", false)]),
                Message::new(
                    Role::Assistant,
                    vec![
                        tool_use("call_0", "b"),
                        tool_use("", "c"),
                        tool_use(long, "d"),
                    ],
                ),
                Message::new(
                    Role::User,
                    vec![
                        tool_result("call_0", "B", false),
                        tool_result("", "C", false),
                        tool_result(long, "D", false),
                    ],
                ),
            ]),
            &Map::new(),
        );
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m[2]["tool_calls"][0]["id"], "call_0");
        assert_eq!(m[3]["tool_call_id"], "call_0");
        let calls = m[4]["tool_calls"].as_array().unwrap();
        let ids: Vec<&str> = calls.iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert!(!ids.contains(&"call_0") && !ids.contains(&"") && !ids.contains(&long));
        assert!(ids.iter().all(|id| id.len() <= MAX_TOOL_ID_CHARS));
        let unique: HashSet<&&str> = ids.iter().collect();
        assert_eq!(unique.len(), 3);
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(m[5 + i]["tool_call_id"], *id);
        }
    }

    #[test]
    fn images_go_as_image_url_parts() {
        let body = build_body(
            &request(vec![Message::new(
                Role::User,
                vec![
                    Block::text("what is this"),
                    Block::Image {
                        source: ImageSource {
                            kind: "base64".into(),
                            media_type: "image/png".into(),
                            data: "iVBOR".into(),
                        },
                    },
                ],
            )]),
            &Map::new(),
        );
        assert_eq!(
            body["messages"][1]["content"],
            json!([{"type":"text","text":"what is this"},
                   {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBOR"}}])
        );
    }
}
