//! The `streamGenerateContent` request body (wire.md §4.2): system instruction, contents
//! converted from `core` messages, function declarations, tool config and generation
//! config. History conversion: assistant messages become `model` contents (text parts,
//! `functionCall{name,args}` parts, `thoughtSignature`s put back on their exact parts from
//! the adapter's opaque markers, thought summaries only when signed); tool results become
//! `functionResponse{name,response}` parts at the head of a `user` content, the name taken
//! from the latest tool_use with that id seen so far (so ids repeated across turns resolve
//! to the right call). Gemini matches responses to calls by order, so no tool id is sent.
//! Consecutive contents of one role are merged; empty ones are left out.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::parts::{self, OwnedOpaque, SKIP_SIGNATURE_VALIDATOR};
use super::schema;
use robota_core::message::ImageSource;
use robota_core::{Block, Message, ProviderRequest, Role, ToolSchema};

/// The JSON body for one streaming call.
pub(crate) fn build_body(request: &ProviderRequest) -> Value {
    let mut body = Map::new();
    if !request.system.trim().is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts":[{"text": request.system}]}),
        );
    }
    body.insert("contents".into(), Value::Array(contents(&request.messages)));
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations(&request.tools)}]),
        );
        if request.tools_disabled {
            body.insert(
                "toolConfig".into(),
                json!({"functionCallingConfig": {"mode": "NONE"}}),
            );
        }
    }
    let mut generation = Map::new();
    if request.max_tokens > 0 {
        generation.insert("maxOutputTokens".into(), json!(request.max_tokens));
    }
    if let Some(budget) = request.thinking_budget {
        generation.insert(
            "thinkingConfig".into(),
            json!({"thinkingBudget": budget, "includeThoughts": budget > 0}),
        );
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    Value::Object(body)
}

fn declarations(tools: &[ToolSchema]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description,
                "parametersJsonSchema": schema::function_parameters(&t.input_schema),
            })
        })
        .collect()
}

/// `contents` from the conversation.
fn contents(history: &[Message]) -> Vec<Value> {
    let mut call_names: HashMap<&str, &str> = HashMap::new();
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::with_capacity(history.len());
    for message in history {
        let (role, parts) = match message.role {
            Role::User => ("user", user_parts(message, &call_names)),
            Role::Assistant => ("model", model_parts(message, &mut call_names)),
        };
        if parts.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((last_role, last_parts)) if *last_role == role => last_parts.extend(parts),
            _ => out.push((role, parts)),
        }
    }
    out.into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect()
}

/// A user message: function responses first (Gemini pairs them with the calls before),
/// then text and images. A result whose call is not in the history becomes text.
fn user_parts(message: &Message, call_names: &HashMap<&str, &str>) -> Vec<Value> {
    let mut responses = Vec::new();
    let mut others = Vec::new();
    for block in &message.content {
        match block {
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                match call_names.get(tool_use_id.as_str()) {
                    Some(name) => {
                        let key = if *is_error { "error" } else { "content" };
                        responses.push(json!({"functionResponse": {
                            "name": name,
                            "response": {key: &**content},
                        }}));
                    }
                    None => others.push(json!({
                        "text": format!("[result of tool call {tool_use_id}]\n{content}")
                    })),
                }
                // A function response is JSON; a tool's images ride as parts beside it.
                others.extend(content.images.iter().map(inline_data));
            }
            Block::Text { text, .. } if !text.is_empty() => others.push(json!({"text": text})),
            Block::Image { source } => others.push(inline_data(source)),
            _ => {}
        }
    }
    responses.extend(others);
    responses
}

/// An inline image part.
fn inline_data(source: &ImageSource) -> Value {
    json!({"inlineData": {"mimeType": source.media_type, "data": source.data}})
}

/// An assistant message as `model` parts, with each thought signature on its own part.
fn model_parts<'a>(message: &'a Message, call_names: &mut HashMap<&'a str, &'a str>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut pending: Option<&str> = None;
    for block in &message.content {
        let part = match block {
            Block::Opaque(value) => match parts::classify(value) {
                OwnedOpaque::Signature {
                    signature,
                    standalone,
                } => {
                    if let Some(earlier) = pending.take() {
                        out.push(empty_signed_part(earlier));
                    }
                    if standalone {
                        out.push(empty_signed_part(signature));
                    } else {
                        pending = Some(signature);
                    }
                    continue;
                }
                OwnedOpaque::Part(part) => Some(part.clone()),
                OwnedOpaque::Foreign => None,
            },
            Block::Text { text, .. } if !text.is_empty() => Some(json!({"text": text})),
            // Thought summaries are sent back only when a signature rides on them.
            Block::Thinking { thinking, .. } if pending.is_some() => {
                Some(json!({"text": thinking, "thought": true}))
            }
            Block::ToolUse { id, name, input } => {
                call_names.insert(id, name);
                let args = match input {
                    Value::Object(_) => input.clone(),
                    Value::Null => json!({}),
                    other => json!({"value": other}),
                };
                Some(json!({"functionCall": {"name": name, "args": args}}))
            }
            _ => None,
        };
        let Some(mut part) = part else { continue };
        if let (Some(signature), Some(obj)) = (pending.take(), part.as_object_mut()) {
            obj.entry("thoughtSignature")
                .or_insert_with(|| json!(signature));
        }
        out.push(part);
    }
    if let Some(signature) = pending {
        out.push(empty_signed_part(signature));
    }
    sign_unsigned_calls(&mut out);
    out
}

fn empty_signed_part(signature: &str) -> Value {
    json!({"text": "", "thoughtSignature": signature})
}

/// Function calls Gemini did not sign (another provider's history) get Google's documented
/// stand-in on the first call, which Gemini 3 requires; signed ones are left as they are.
fn sign_unsigned_calls(parts: &mut [Value]) {
    let is_call = |p: &Value| p.get("functionCall").is_some();
    if parts
        .iter()
        .any(|p| is_call(p) && p.get("thoughtSignature").is_some())
    {
        return;
    }
    if let Some(obj) = parts
        .iter_mut()
        .find(|p| is_call(p))
        .and_then(Value::as_object_mut)
    {
        obj.insert("thoughtSignature".into(), json!(SKIP_SIGNATURE_VALIDATOR));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use robota_core::INVALID_INPUT_KEY;
    use robota_core::message::ImageSource;

    fn call(id: &str, name: &str, input: Value) -> Block {
        Block::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
        }
    }

    fn result(id: &str, content: &str, is_error: bool) -> Block {
        Block::ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error,
        }
    }

    fn request(messages: Vec<Message>) -> ProviderRequest {
        ProviderRequest {
            model: "gemini-2.5-flash".into(),
            system: "be brief".into(),
            messages,
            tools: vec![ToolSchema {
                name: "Read".into(),
                description: "read a file".into(),
                input_schema: json!({"$schema":"x","type":"object","properties":{"file_path":{"type":"string"}}}),
            }],
            max_tokens: 2048,
            thinking_budget: None,
            tools_disabled: false,
            server_tools: Vec::new(),
            wire: None,
        }
    }

    #[test]
    fn body_has_system_tools_and_generation_config() {
        let mut req = request(vec![Message::user_text("hi")]);
        let body = build_body(&req);
        assert_eq!(
            body["systemInstruction"],
            json!({"parts":[{"text":"be brief"}]})
        );
        assert_eq!(
            body["contents"],
            json!([{"role":"user","parts":[{"text":"hi"}]}])
        );
        let decl = &body["tools"][0]["functionDeclarations"][0];
        assert_eq!(decl["name"], "Read");
        assert_eq!(decl["description"], "read a file");
        assert_eq!(
            decl["parametersJsonSchema"],
            json!({"type":"object","properties":{"file_path":{"type":"string"}}})
        );
        assert!(body.get("toolConfig").is_none());
        assert_eq!(body["generationConfig"], json!({"maxOutputTokens": 2048}));

        req.tools_disabled = true;
        req.thinking_budget = Some(1024);
        req.system = "  ".into();
        let body = build_body(&req);
        assert_eq!(
            body["toolConfig"],
            json!({"functionCallingConfig":{"mode":"NONE"}})
        );
        assert_eq!(
            body["generationConfig"]["thinkingConfig"],
            json!({"thinkingBudget":1024,"includeThoughts":true})
        );
        assert!(body.get("systemInstruction").is_none());

        req.tools.clear();
        req.thinking_budget = Some(0);
        let body = build_body(&req);
        assert!(body.get("tools").is_none() && body.get("toolConfig").is_none());
        assert_eq!(
            body["generationConfig"]["thinkingConfig"]["includeThoughts"],
            false
        );
    }

    #[test]
    fn parallel_calls_and_results_convert_with_names_from_history() {
        let body = build_body(&request(vec![
            Message::user_text("read a and b"),
            Message::new(
                Role::Assistant,
                vec![
                    Block::text("Reading both."),
                    parts::signature_marker("SIG1", false),
                    call("call_1", "Read", json!({"file_path":"a"})),
                    call("call_2", "Read", json!({"file_path":"b"})),
                ],
            ),
            Message::new(
                Role::User,
                vec![result("call_1", "A", false), result("call_2", "nope", true)],
            ),
        ]));
        assert_eq!(
            body["contents"][1],
            json!({"role":"model","parts":[
                {"text":"Reading both."},
                {"functionCall":{"name":"Read","args":{"file_path":"a"}},"thoughtSignature":"SIG1"},
                {"functionCall":{"name":"Read","args":{"file_path":"b"}}}
            ]})
        );
        assert_eq!(
            body["contents"][2],
            json!({"role":"user","parts":[
                {"functionResponse":{"name":"Read","response":{"content":"A"}}},
                {"functionResponse":{"name":"Read","response":{"error":"nope"}}}
            ]})
        );
    }

    #[test]
    fn repeated_ids_resolve_to_the_latest_call() {
        let body = build_body(&request(vec![
            Message::user_text("go"),
            Message::new(Role::Assistant, vec![call("call_0", "Read", json!({}))]),
            Message::new(Role::User, vec![result("call_0", "r1", false)]),
            Message::new(Role::Assistant, vec![call("call_0", "Bash", json!({}))]),
            Message::new(
                Role::User,
                vec![Block::text("and then"), result("call_0", "r2", false)],
            ),
        ]));
        let contents = body["contents"].as_array().unwrap();
        assert_eq!(contents[2]["parts"][0]["functionResponse"]["name"], "Read");
        assert_eq!(contents[4]["parts"][0]["functionResponse"]["name"], "Bash");
        assert_eq!(contents[4]["parts"][1]["text"], "and then");
    }

    #[test]
    fn signatures_return_to_their_exact_parts() {
        let body = build_body(&request(vec![
            Message::user_text("q"),
            Message::new(
                Role::Assistant,
                vec![
                    parts::signature_marker("T", false),
                    Block::Thinking {
                        thinking: "plan".into(),
                        signature: String::new(),
                    },
                    Block::Thinking {
                        thinking: "unsigned thought".into(),
                        signature: String::new(),
                    },
                    Block::text("There are 3"),
                    parts::signature_marker("END", true),
                ],
            ),
        ]));
        assert_eq!(
            body["contents"][1]["parts"],
            json!([
                {"text":"plan","thought":true,"thoughtSignature":"T"},
                {"text":"There are 3"},
                {"text":"","thoughtSignature":"END"}
            ])
        );
    }

    #[test]
    fn foreign_blocks_are_dropped_and_unsigned_calls_get_the_stand_in() {
        let body = build_body(&request(vec![
            Message::user_text("q"),
            Message::new(
                Role::Assistant,
                vec![
                    Block::Thinking {
                        thinking: "claude thinking".into(),
                        signature: "anthropic-sig".into(),
                    },
                    Block::RedactedThinking { data: "x".into() },
                    Block::Opaque(json!({"type":"server_tool_use","id":"srvtoolu_1"})),
                    Block::Opaque(json!({"type":"openai_reasoning","encrypted_content":"e"})),
                    call("toolu_01", "Read", json!({"file_path":"a"})),
                    call("toolu_02", "Read", json!({INVALID_INPUT_KEY: "{bad"})),
                ],
            ),
            Message::new(
                Role::User,
                vec![
                    result("toolu_01", "A", false),
                    result("toolu_02", "bad", true),
                ],
            ),
        ]));
        let parts = body["contents"][1]["parts"].as_array().unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0]["thoughtSignature"], SKIP_SIGNATURE_VALIDATOR);
        assert!(parts[1].get("thoughtSignature").is_none());
        assert_eq!(parts[1]["functionCall"]["args"][INVALID_INPUT_KEY], "{bad");
    }

    #[test]
    fn orphan_results_become_text_and_roles_merge() {
        let body = build_body(&request(vec![
            Message::new(Role::User, vec![result("gone", "old output", false)]),
            Message::user_text("next"),
            Message::new(Role::Assistant, vec![Block::text("")]),
            Message::new(Role::Assistant, vec![Block::text("a")]),
            Message::new(Role::Assistant, vec![Block::text("b")]),
        ]));
        assert_eq!(
            body["contents"],
            json!([
                {"role":"user","parts":[{"text":"[result of tool call gone]\nold output"},{"text":"next"}]},
                {"role":"model","parts":[{"text":"a"},{"text":"b"}]}
            ])
        );
    }

    #[test]
    fn unknown_parts_and_images_are_carried() {
        let code = json!({"executableCode":{"language":"PYTHON","code":"print(1)"},"thoughtSignature":"C"});
        let body = build_body(&request(vec![
            Message::new(
                Role::User,
                vec![Block::Image {
                    source: ImageSource {
                        kind: "base64".into(),
                        media_type: "image/png".into(),
                        data: "iVBOR".into(),
                    },
                }],
            ),
            Message::new(Role::Assistant, vec![parts::raw_part(&code)]),
        ]));
        assert_eq!(
            body["contents"][0]["parts"][0],
            json!({"inlineData":{"mimeType":"image/png","data":"iVBOR"}})
        );
        assert_eq!(body["contents"][1]["parts"][0], code);
    }
}
