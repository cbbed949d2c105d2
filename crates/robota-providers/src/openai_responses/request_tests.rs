//! Unit tests of the Responses request body and the history conversion.

use serde_json::json;

use super::*;
use robota_core::message::ImageSource;

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

fn reasoning(model: &str, id: &str, encrypted: &str) -> Block {
    Block::Opaque(json!({"type":REASONING_BLOCK_TYPE,"model":model,
        "item":{"id":id,"type":"reasoning","status":"completed",
                "summary":[{"type":"summary_text","text":"think"}],
                "encrypted_content":encrypted}}))
}

fn request(model: &str, messages: Vec<Message>) -> ProviderRequest {
    ProviderRequest {
        model: model.into(),
        system: "be brief".into(),
        messages,
        tools: vec![ToolSchema {
            name: "Read".into(),
            description: "read".into(),
            input_schema: json!({"type":"object"}),
        }],
        max_tokens: 1024,
        thinking_budget: None,
        tools_disabled: false,
        server_tools: Vec::new(),
        wire: None,
    }
}

fn body(req: &ProviderRequest) -> Value {
    build_body(req, BodyOptions::default())
}

#[test]
fn top_level_fields_and_tool_choice() {
    let req = request("gpt-4.1", vec![Message::user_text("hi")]);
    let b = body(&req);
    assert_eq!(b["model"], "gpt-4.1");
    assert_eq!(b["instructions"], "be brief");
    assert_eq!(b["stream"], true);
    assert_eq!(b["store"], false);
    assert_eq!(b["max_output_tokens"], 1024);
    assert_eq!(b["tool_choice"], "auto");
    assert_eq!(
        b["tools"][0],
        json!({"type":"function","name":"Read","description":"read",
               "parameters":{"type":"object"},"strict":false})
    );
    assert_eq!(
        b["input"],
        json!([{"role":"user","content":[{"type":"input_text","text":"hi"}]}])
    );
    // Not a reasoning model and nothing asked: no reasoning fields at all.
    assert!(b.get("reasoning").is_none() && b.get("include").is_none());
    let mut summary = req.clone();
    summary.tools_disabled = true;
    assert_eq!(body(&summary)["tool_choice"], "none");
    let mut bare = req;
    bare.tools.clear();
    bare.system.clear();
    let b = body(&bare);
    assert!(b.get("tools").is_none() && b.get("tool_choice").is_none());
    assert!(b.get("instructions").is_none());
}

#[test]
fn reasoning_options_follow_model_config_and_budget() {
    let b = body(&request("gpt-5.1-codex-max", vec![]));
    assert_eq!(b["reasoning"], json!({"summary":"auto"}));
    assert_eq!(b["include"], json!(["reasoning.encrypted_content"]));
    let b = build_body(
        &request("my-azure-deployment", vec![]),
        BodyOptions {
            reasoning_effort: Some("high"),
        },
    );
    assert_eq!(b["reasoning"], json!({"effort":"high","summary":"auto"}));
    let mut budgeted = request("o4-mini", vec![]);
    budgeted.thinking_budget = Some(8000);
    assert_eq!(body(&budgeted)["reasoning"]["effort"], "medium");
    for (model, reasons) in [
        ("o3", true),
        ("o4-mini", true),
        ("gpt-5", true),
        ("gpt-5-mini", true),
        ("gpt-5-chat-latest", false),
        ("codex-mini-latest", true),
        ("openai/gpt-5.1", true),
        ("gpt-4.1", false),
        ("gpt-4o", false),
        ("omni-moderation", false),
    ] {
        assert_eq!(is_reasoning_model(model), reasons, "{model}");
    }
}

#[test]
fn multi_round_parallel_tool_conversation_converts_in_order() {
    let req = request(
        "gpt-5",
        vec![
            Message::user_text("read a and b"),
            Message::new(
                Role::Assistant,
                vec![
                    reasoning("gpt-5", "rs_1", "gAAA1"),
                    Block::text("Reading both."),
                    tool_use("call_a", "/a"),
                    tool_use("call_b", "/b"),
                ],
            ),
            Message::new(
                Role::User,
                vec![
                    tool_result("call_a", "A", false),
                    tool_result("call_b", "no such file", true),
                ],
            ),
            Message::new(Role::Assistant, vec![Block::text("A is A; b is missing.")]),
            Message::user_text("thanks"),
        ],
    );
    let input = body(&req)["input"].clone();
    assert_eq!(
        input,
        json!([
            {"role":"user","content":[{"type":"input_text","text":"read a and b"}]},
            {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"think"}],
             "encrypted_content":"gAAA1"},
            {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Reading both."}]},
            {"type":"function_call","call_id":"call_a","name":"Read","arguments":"{\"file_path\":\"/a\"}"},
            {"type":"function_call","call_id":"call_b","name":"Read","arguments":"{\"file_path\":\"/b\"}"},
            {"type":"function_call_output","call_id":"call_a","output":"A"},
            {"type":"function_call_output","call_id":"call_b","output":"Error: no such file"},
            {"type":"message","role":"assistant","content":[{"type":"output_text","text":"A is A; b is missing."}]},
            {"role":"user","content":[{"type":"input_text","text":"thanks"}]}
        ])
    );
}

#[test]
fn foreign_thinking_other_models_reasoning_and_dangling_reasoning_are_dropped() {
    let req = request(
        "gpt-5-mini",
        vec![
            Message::user_text("q"),
            Message::new(
                Role::Assistant,
                vec![
                    Block::Thinking {
                        thinking: "claude thought".into(),
                        signature: "sig".into(),
                    },
                    Block::Opaque(
                        json!({"type":"server_tool_use","id":"srv","name":"web_search","input":{}}),
                    ),
                    reasoning("gpt-5", "rs_other_model", "gAAA"),
                    Block::text("one"),
                ],
            ),
            Message::user_text("q2"),
            Message::new(
                Role::Assistant,
                vec![
                    Block::text("two"),
                    reasoning("gpt-5-mini", "rs_dangling", "gBBB"),
                ],
            ),
        ],
    );
    let input = body(&req)["input"].clone();
    let types: Vec<String> = input
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            i.get("type")
                .and_then(Value::as_str)
                .unwrap_or("user")
                .to_string()
        })
        .collect();
    assert_eq!(types, ["user", "message", "user", "message"]);
    assert!(!input.to_string().contains("rs_"));
}

#[test]
fn repeated_empty_and_orphan_ids_are_handled() {
    let req = request(
        "gpt-4.1",
        vec![
            Message::user_text("go"),
            Message::new(Role::Assistant, vec![tool_use("call_0", "/x")]),
            Message::new(Role::User, vec![tool_result("call_0", "x", false)]),
            Message::new(
                Role::Assistant,
                vec![tool_use("call_0", "/y"), tool_use("", "/z")],
            ),
            Message::new(
                Role::User,
                vec![
                    tool_result("call_0", "y", false),
                    tool_result("", "z", false),
                    tool_result("call_gone", "lost", false),
                ],
            ),
        ],
    );
    let input = body(&req)["input"].as_array().unwrap().clone();
    assert_eq!(input[1]["call_id"], "call_0");
    assert_eq!(input[2]["call_id"], "call_0");
    let second = input[3]["call_id"].as_str().unwrap();
    let third = input[4]["call_id"].as_str().unwrap();
    assert!(second != "call_0" && !third.is_empty() && third != second);
    assert_eq!(input[5]["call_id"], second);
    assert_eq!(input[6]["call_id"], third);
    assert_eq!(input[7]["role"], "user");
    assert!(
        input[7]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("lost")
    );
}

#[test]
fn images_and_invalid_arguments_convert() {
    let req = request(
        "gpt-4.1",
        vec![
            Message::new(
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
            ),
            Message::new(
                Role::Assistant,
                vec![Block::ToolUse {
                    id: "call_1".into(),
                    name: "Write".into(),
                    input: json!({INVALID_INPUT_KEY: "{\"a\": [1,"}),
                }],
            ),
            Message::new(Role::User, vec![tool_result("call_1", "bad json", true)]),
        ],
    );
    let input = body(&req)["input"].clone();
    assert_eq!(
        input[0]["content"][1],
        json!({"type":"input_image","image_url":"data:image/png;base64,iVBOR"})
    );
    assert_eq!(input[1]["arguments"], "{\"a\": [1,");
}
