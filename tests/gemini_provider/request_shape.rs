//! The request the adapter sends: endpoint with the model and `alt=sse`, the key header,
//! system instruction, function declarations with cleaned schemas, tool config and
//! generation config; and a multi-round conversation with parallel calls whose next
//! request carries the calls, the named function responses and the thought signatures
//! exactly as Gemini sent them.

use robota::core::{Block, Message, ProviderRequest, Role, StopReason, StreamEvent, ToolSchema};
use robota::providers::gemini::SKIP_SIGNATURE_VALIDATOR;
use robota::providers::{GeminiConfig, GeminiProvider};
use serde_json::{Value, json};

use crate::support::gemini as mock;
use crate::support::{self, MockServer};
use crate::{API_KEY, MODEL, provider, request, run, text, tool_calls, usage};

fn tools() -> Vec<ToolSchema> {
    vec![
        ToolSchema {
            name: "Read".into(),
            description: "Read a file".into(),
            input_schema: json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["file_path"],
                "additionalProperties": false
            }),
        },
        ToolSchema {
            name: "Bash".into(),
            description: "Run a command".into(),
            input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        },
    ]
}

#[tokio::test]
async fn request_has_endpoint_key_system_tools_and_generation_config() {
    let server = MockServer::start(vec![mock::text_turn("ok")]);
    let mut req = request();
    req.tools = tools();
    req.thinking_budget = Some(2048);
    let out = run(&provider(&server, 0), &req).await;
    assert_eq!(text(out.turn()), "ok");
    assert_eq!(out.turn().usage, usage(12, 7, 0));
    assert_eq!(out.turn().model, mock::MOCK_MODEL);
    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(
        sent.path,
        format!("/v1beta/models/{MODEL}:streamGenerateContent?alt=sse")
    );
    assert_eq!(sent.header("x-goog-api-key"), Some(API_KEY));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert!(sent.header("authorization").is_none());
    let body = &sent.body;
    assert_eq!(
        body["systemInstruction"],
        json!({"parts":[{"text":"You are robota."}]})
    );
    assert_eq!(
        body["contents"],
        json!([{"role":"user","parts":[{"text":"hello"}]}])
    );
    assert_eq!(
        body["tools"],
        json!([{"functionDeclarations":[
            {"name":"Read","description":"Read a file","parametersJsonSchema":{
                "type":"object",
                "properties":{"file_path":{"type":"string"},"limit":{"type":"integer"}},
                "required":["file_path"],
                "additionalProperties":false}},
            {"name":"Bash","description":"Run a command","parametersJsonSchema":{
                "type":"object","properties":{"command":{"type":"string"}}}}
        ]}])
    );
    assert!(body.get("toolConfig").is_none());
    assert_eq!(
        body["generationConfig"],
        json!({"maxOutputTokens":1024,"thinkingConfig":{"thinkingBudget":2048,"includeThoughts":true}})
    );
}

#[tokio::test]
async fn tools_disabled_keeps_the_tools_and_sets_mode_none() {
    let server = MockServer::start(vec![mock::text_turn("summary")]);
    let mut req = request();
    req.tools = tools();
    req.tools_disabled = true;
    let out = run(&provider(&server, 0), &req).await;
    assert_eq!(text(out.turn()), "summary");
    let body = &server.requests()[0].body;
    assert_eq!(
        body["tools"][0]["functionDeclarations"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        body["toolConfig"],
        json!({"functionCallingConfig":{"mode":"NONE"}})
    );
    assert!(body["generationConfig"].get("thinkingConfig").is_none());
}

#[tokio::test]
async fn base_url_with_trailing_slash_or_v1beta_reaches_the_same_endpoint() {
    for suffix in ["/", "/v1beta", "/v1beta/"] {
        let server = MockServer::start(vec![mock::text_turn("ok")]);
        let mut config = GeminiConfig::new("k");
        config.base_url = format!("{}{suffix}", server.base_url());
        let out = run(&GeminiProvider::new(config).unwrap(), &request()).await;
        assert_eq!(text(out.turn()), "ok");
        assert_eq!(
            server.requests()[0].path,
            format!("/v1beta/models/{MODEL}:streamGenerateContent?alt=sse")
        );
    }
}

/// The tool results for `calls`, in order.
fn results(calls: &[(String, String, Value)], outputs: &[(&str, bool)]) -> Message {
    Message::new(
        Role::User,
        calls
            .iter()
            .zip(outputs)
            .map(|((id, _, _), (content, is_error))| Block::ToolResult {
                tool_use_id: id.clone(),
                content: (*content).into(),
                is_error: *is_error,
            })
            .collect(),
    )
}

#[tokio::test]
async fn a_multi_round_conversation_with_parallel_calls_converts_exactly() {
    let server = MockServer::start(vec![
        mock::tool_turn(
            Some("Reading both."),
            &[
                ("", "Read", json!({"file_path":"a.txt"})),
                ("", "Read", json!({"file_path":"b.txt"})),
            ],
        ),
        mock::tool_turn(None, &[("", "Bash", json!({"command":"wc -l a.txt"}))]),
        mock::text_turn("All done."),
    ]);
    let provider = provider(&server, 0);
    let mut req = request();
    req.tools = tools();
    req.messages = vec![Message::user_text("Read a.txt and b.txt, then count lines")];

    let first = run(&provider, &req).await;
    let turn = first.turn().clone();
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(text(&turn), "Reading both.");
    let calls = tool_calls(&turn);
    assert_eq!(
        calls.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        ["call_1", "call_2"]
    );
    req.messages
        .push(Message::new(Role::Assistant, turn.content));
    req.messages
        .push(results(&calls, &[("A", false), ("no such file", true)]));

    let second = run(&provider, &req).await;
    let turn = second.turn().clone();
    let calls2 = tool_calls(&turn);
    assert_eq!(calls2[0].0, "call_3", "ids stay unique in the conversation");
    req.messages
        .push(Message::new(Role::Assistant, turn.content));
    req.messages.push(results(&calls2, &[("12 a.txt", false)]));

    let third = run(&provider, &req).await;
    assert_eq!(text(third.turn()), "All done.");
    assert_eq!(third.turn().stop_reason, StopReason::EndTurn);

    let sent = server.requests();
    assert_eq!(sent.len(), 3);
    assert_eq!(
        sent[2].body["contents"],
        json!([
            {"role":"user","parts":[{"text":"Read a.txt and b.txt, then count lines"}]},
            {"role":"model","parts":[
                {"text":"Reading both."},
                {"functionCall":{"name":"Read","args":{"file_path":"a.txt"}},
                 "thoughtSignature":mock::MOCK_CALL_SIGNATURE},
                {"functionCall":{"name":"Read","args":{"file_path":"b.txt"}}}
            ]},
            {"role":"user","parts":[
                {"functionResponse":{"name":"Read","response":{"content":"A"}}},
                {"functionResponse":{"name":"Read","response":{"error":"no such file"}}}
            ]},
            {"role":"model","parts":[
                {"functionCall":{"name":"Bash","args":{"command":"wc -l a.txt"}},
                 "thoughtSignature":mock::MOCK_CALL_SIGNATURE}
            ]},
            {"role":"user","parts":[
                {"functionResponse":{"name":"Bash","response":{"content":"12 a.txt"}}}
            ]}
        ])
    );
}

#[tokio::test]
async fn the_recorded_signature_goes_back_byte_identical_on_its_call() {
    let recorded =
        std::fs::read_to_string(support::wire_fixture_path("gemini/function_call.jsonl")).unwrap();
    let first_line: Value = serde_json::from_str(recorded.lines().next().unwrap()).unwrap();
    let recorded_part = &first_line["candidates"][0]["content"]["parts"][0];

    let server = MockServer::start(vec![
        mock::fixture("gemini/function_call.jsonl"),
        mock::fixture("gemini/text.jsonl"),
    ]);
    let provider = provider(&server, 0);
    let mut req = request();
    req.messages = vec![Message::user_text("What is the weather in San Francisco?")];
    let turn = run(&provider, &req).await.turn().clone();
    let calls = tool_calls(&turn);
    req.messages
        .push(Message::new(Role::Assistant, turn.content));
    req.messages.push(results(&calls, &[("18°C, fog", false)]));
    let answer = run(&provider, &req).await;
    assert!(text(answer.turn()).starts_with("There are"));

    let body = &server.requests()[1].body;
    assert_eq!(body["contents"][1]["parts"], json!([recorded_part]));
    assert_eq!(
        body["contents"][2]["parts"],
        json!([{"functionResponse":{"name":"weather","response":{"content":"18°C, fog"}}}])
    );
}

#[tokio::test]
async fn thinking_streams_as_thinking_and_only_the_signature_is_echoed() {
    let server = MockServer::start(vec![
        mock::thinking_then_text("Counting letters.", "SIG_T", "Three."),
        mock::text_turn("ok"),
    ]);
    let provider = provider(&server, 0);
    let mut req = request();
    req.thinking_budget = Some(512);
    let out = run(&provider, &req).await;
    let turn = out.turn().clone();
    assert_eq!(text(&turn), "Three.");
    assert!(matches!(
        &turn.content[0],
        Block::Thinking { thinking, signature } if thinking == "Counting letters." && signature.is_empty()
    ));
    let thinking: String = out
        .events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ThinkingDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, "Counting letters.");

    req.messages
        .push(Message::new(Role::Assistant, turn.content));
    req.messages.push(Message::user_text("thanks"));
    run(&provider, &req).await.turn();
    let body = &server.requests()[1].body;
    assert_eq!(
        body["contents"][1]["parts"],
        json!([{"text":"Three."},{"text":"","thoughtSignature":"SIG_T"}])
    );
}

#[tokio::test]
async fn history_from_another_provider_is_cleaned_for_gemini() {
    let server = MockServer::start(vec![mock::text_turn("ok")]);
    let mut req: ProviderRequest = request();
    req.tools = tools();
    req.messages = vec![
        Message::user_text("q"),
        Message::new(
            Role::Assistant,
            vec![
                Block::Thinking {
                    thinking: "claude thought".into(),
                    signature: "EvQBCkYICxgCKkAx".into(),
                },
                Block::Opaque(
                    json!({"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}),
                ),
                Block::ToolUse {
                    id: "toolu_01".into(),
                    name: "Read".into(),
                    input: json!({"file_path":"a"}),
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![Block::ToolResult {
                tool_use_id: "toolu_01".into(),
                content: "A".into(),
                is_error: false,
            }],
        ),
    ];
    let out = run(&provider(&server, 0), &req).await;
    assert_eq!(text(out.turn()), "ok");
    let body = &server.requests()[0].body;
    assert_eq!(
        body["contents"][1]["parts"],
        json!([{"functionCall":{"name":"Read","args":{"file_path":"a"}},
                "thoughtSignature":SKIP_SIGNATURE_VALIDATOR}])
    );
    assert_eq!(
        body["contents"][2]["parts"][0]["functionResponse"]["name"],
        "Read"
    );
}
