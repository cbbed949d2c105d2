//! The request the adapter sends: endpoint, headers, top-level fields, tools and tool
//! choice, and the history conversion of a multi-round tool conversation fed by the
//! recorded streams themselves (reasoning items echoed back with their encrypted content,
//! function calls and their outputs keyed by `call_id`); plus scripted parallel tool and
//! reasoning turns through the mock builders.

use robota::core::{Block, Message, Role, StopReason, ToolSchema};
use robota::providers::{OpenAiResponsesConfig, OpenAiResponsesProvider};
use serde_json::{Value, json};

use crate::support::MockServer;
use crate::support::openai_responses as mock;
use crate::{fast_retry, provider, replay, request, run, text, tool_calls};

fn tools() -> Vec<ToolSchema> {
    vec![
        ToolSchema {
            name: "Read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type":"object","properties":{"file_path":{"type":"string"}}}),
        },
        ToolSchema {
            name: "calculator".into(),
            description: "Do arithmetic".into(),
            input_schema: json!({"type":"object","properties":{"a":{"type":"number"},
                "b":{"type":"number"},"op":{"type":"string"}}}),
        },
    ]
}

#[tokio::test]
async fn request_has_endpoint_headers_and_body_fields() {
    let server = MockServer::start(vec![mock::text_turn("ok"), mock::text_turn("ok")]);
    let mut req = request();
    req.tools = tools();
    let out = run(&provider(&server, 0), &req).await;
    assert_eq!(text(out.turn()), "ok");
    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-openai-test"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    let body = &sent.body;
    assert_eq!(body["model"], "gpt-5.1");
    assert_eq!(body["instructions"], "You are robota.");
    assert_eq!(body["stream"], true);
    assert_eq!(body["store"], false);
    assert_eq!(body["max_output_tokens"], 1024);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["reasoning"], json!({"summary":"auto"}));
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(
        body["tools"][0],
        json!({"type":"function","name":"Read","description":"Read a file",
               "parameters":{"type":"object","properties":{"file_path":{"type":"string"}}},
               "strict":false})
    );
    assert_eq!(
        body["input"],
        json!([{"role":"user","content":[{"type":"input_text","text":"hello"}]}])
    );

    // The summary call at the round cap: tools stay listed, the model may not call them.
    req.tools_disabled = true;
    run(&provider(&server, 0), &req).await.turn();
    let body = &server.requests()[1].body;
    assert_eq!(body["tool_choice"], "none");
    assert_eq!(body["tools"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn base_url_variants_keyless_servers_and_configured_effort() {
    let server = MockServer::start(vec![mock::text_turn("ok")]);
    let mut config = OpenAiResponsesConfig::new("");
    config.base_url = format!("{}/v1/", server.base_url());
    config.retry = fast_retry(0);
    config.reasoning_effort = Some("high".into());
    let provider = OpenAiResponsesProvider::new(config).unwrap();
    let mut req = request();
    req.model = "gpt-4.1".into();
    assert_eq!(text(run(&provider, &req).await.turn()), "ok");
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.body["reasoning"],
        json!({"effort":"high","summary":"auto"})
    );
}

#[tokio::test]
async fn non_reasoning_models_get_no_reasoning_fields() {
    let server = MockServer::start(vec![mock::text_turn("ok")]);
    let mut req = request();
    req.model = "gpt-4.1-mini".into();
    run(&provider(&server, 0), &req).await.turn();
    let body = &server.requests()[0].body;
    assert!(body.get("reasoning").is_none());
    assert!(body.get("include").is_none());
}

/// Drives the four recorded streams as one tool conversation, the way the engine would:
/// each turn is committed, its call answered, and the next request sent.
#[tokio::test]
async fn recorded_multi_round_conversation_is_sent_back_in_responses_shape() {
    let server = MockServer::start(mock::fixture_streams(
        "openai-responses/reasoning_and_function_calls_4_streams.jsonl",
    ));
    let provider = provider(&server, 0);
    let mut req = request();
    req.tools = tools();
    req.messages = vec![Message::user_text(
        "What is (12 + 7) * 3 * 10? Use the calculator.",
    )];
    let results = ["19", "57", "570"];
    for (round, result) in results.iter().enumerate() {
        let turn = run(&provider, &req).await.turn().clone();
        assert_eq!(turn.stop_reason, StopReason::ToolUse, "round {round}");
        let call_id = tool_calls(&turn)[0].0.clone();
        req.messages
            .push(Message::new(Role::Assistant, turn.content));
        req.messages.push(Message::new(
            Role::User,
            vec![Block::ToolResult {
                tool_use_id: call_id,
                content: (*result).into(),
                is_error: false,
            }],
        ));
    }
    let last = run(&provider, &req).await;
    assert_eq!(text(last.turn()), "The final result is **570**.");

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let recorded: Vec<Value> = std::fs::read_to_string(crate::support::wire_fixture_path(
        "openai-responses/reasoning_and_function_calls_4_streams.jsonl",
    ))
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    let reasoning = recorded
        .iter()
        .find(|l| l["type"] == "response.output_item.done" && l["item"]["type"] == "reasoning")
        .unwrap()["item"]
        .clone();
    let call = |id: &str, args: &str| json!({"type":"function_call","call_id":id,"name":"calculator","arguments":args});
    let output =
        |id: &str, out: &str| json!({"type":"function_call_output","call_id":id,"output":out});
    let want = json!([
        {"role":"user","content":[{"type":"input_text","text":"What is (12 + 7) * 3 * 10? Use the calculator."}]},
        {"type":"reasoning","id":reasoning["id"],"summary":reasoning["summary"],
         "encrypted_content":reasoning["encrypted_content"]},
        call("call_AB6AaRZ1FYZB2RwS6A5vbdqn", r#"{"a":12,"b":7,"op":"add"}"#),
        output("call_AB6AaRZ1FYZB2RwS6A5vbdqn", "19"),
        call("call_Q6pW65MUgW9vF59BmItYGos3", r#"{"a":19,"b":3,"op":"multiply"}"#),
        output("call_Q6pW65MUgW9vF59BmItYGos3", "57"),
        call("call_Zl5vIMnD7dVAjgU6FkhmiCZh", r#"{"a":57,"b":10,"op":"multiply"}"#),
        output("call_Zl5vIMnD7dVAjgU6FkhmiCZh", "570"),
    ]);
    assert_eq!(requests[3].body["input"], want);
    assert_eq!(requests[1].body["input"].as_array().unwrap().len(), 4);

    // Switching model: the encrypted reasoning cannot go to another model and is left out.
    let server = MockServer::start(vec![mock::text_turn("ok")]);
    req.model = "gpt-5.1-mini".into();
    run(&crate::provider(&server, 0), &req).await.turn();
    let input = server.requests()[0].body["input"].clone();
    assert_eq!(input.as_array().unwrap().len(), 7);
    assert!(!input.to_string().contains("\"reasoning\""));
}

#[tokio::test]
async fn scripted_parallel_tool_calls_and_reasoning_round_trip() {
    let (out, _server) = replay(
        vec![mock::tool_turn(
            Some("Reading both."),
            &[
                ("call_a", "Read", json!({"file_path":"/a.txt"})),
                ("call_b", "Read", json!({"file_path":"/b.txt"})),
            ],
        )],
        0,
    )
    .await;
    let turn = out.turn();
    assert_eq!(text(turn), "Reading both.");
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(
        tool_calls(turn),
        vec![
            (
                "call_a".into(),
                "Read".into(),
                json!({"file_path":"/a.txt"})
            ),
            (
                "call_b".into(),
                "Read".into(),
                json!({"file_path":"/b.txt"})
            ),
        ]
    );
    assert_eq!(out.streamed_input("call_b"), r#"{"file_path":"/b.txt"}"#);

    let (out, _server) = replay(
        vec![mock::reasoning_then_text("let me see", "gAAAA-enc", "42")],
        0,
    )
    .await;
    let turn = out.turn();
    assert_eq!(out.streamed_thinking(), "let me see");
    assert_eq!(text(turn), "42");
    let Block::Opaque(kept) = &turn.content[0] else {
        panic!("reasoning is kept opaque: {:?}", turn.content);
    };
    assert_eq!(kept["type"], "openai_reasoning");
    assert_eq!(kept["item"]["encrypted_content"], "gAAAA-enc");
}

#[tokio::test]
async fn incomplete_responses_map_to_max_tokens_and_refusal() {
    let (out, _server) = replay(
        vec![mock::incomplete_turn("half an ans", "max_output_tokens")],
        0,
    )
    .await;
    assert_eq!(out.turn().stop_reason, StopReason::MaxTokens);
    assert_eq!(text(out.turn()), "half an ans");
    let (out, _server) = replay(vec![mock::incomplete_turn("", "content_filter")], 0).await;
    assert_eq!(out.turn().stop_reason, StopReason::Refusal);
    assert!(out.turn().content.is_empty());
}

#[tokio::test]
async fn every_builder_frames_events_the_way_the_api_does() {
    let response = mock::text_turn("abc");
    let crate::support::MockResponse::Sse { chunks, .. } = &response else {
        panic!("sse");
    };
    let first = String::from_utf8_lossy(&chunks[0]);
    assert!(first.starts_with("event: response.created\ndata: {\"type\":\"response.created\""));
    assert!(first.contains("\n\nevent: response.in_progress\n"));
    let third = String::from_utf8_lossy(&chunks[3]);
    assert!(third.starts_with("event: response.output_text.delta\n"));
}
