//! The request the adapter sends: headers, cache breakpoints, endpoint, and the same
//! message shape as the SDK requests recorded in `tool_runner_roundtrip.nock.json`; plus
//! scripted parallel tool and thinking turns through the mock builders.

use robota::core::{Block, Message, ProviderRequest, Role, StopReason, ToolSchema};
use robota::providers::{AnthropicConfig, AnthropicProvider};
use serde_json::{Value, json};

use crate::support::anthropic as mock;
use crate::support::{self, MockServer};
use crate::{provider, replay, request, run, text, tool_calls};

#[tokio::test]
async fn request_has_headers_and_three_cache_breakpoints() {
    let server = MockServer::start(vec![mock::text_turn("ok")]);
    let mut req = request();
    req.tools = vec![
        ToolSchema {
            name: "Read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type":"object","properties":{"file_path":{"type":"string"}}}),
        },
        ToolSchema {
            name: "Bash".into(),
            description: "Run a command".into(),
            input_schema: json!({"type":"object"}),
        },
    ];
    req.messages = vec![
        Message::user_text("first"),
        Message::new(Role::Assistant, vec![Block::text("noted")]),
        Message::user_text("second"),
    ];
    let out = run(&provider(&server, 0), &req).await;
    assert_eq!(text(out.turn()), "ok");
    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    let body = &sent.body;
    let eph = json!({"type":"ephemeral"});
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["max_tokens"], 1024);
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"][0]["text"], "You are robota.");
    assert_eq!(body["system"][0]["cache_control"], eph);
    assert!(body["tools"][0].get("cache_control").is_none());
    assert_eq!(body["tools"][1]["cache_control"], eph);
    assert!(
        body["messages"][0]["content"][0]
            .get("cache_control")
            .is_none()
    );
    assert_eq!(body["messages"][2]["content"][0]["cache_control"], eph);
    assert_eq!(body["messages"][2]["content"][0]["text"], "second");
}

#[tokio::test]
async fn base_url_with_trailing_v1_reaches_the_same_endpoint() {
    let server = MockServer::start(vec![mock::text_turn("ok")]);
    let mut config = AnthropicConfig::new("k");
    config.base_url = format!("{}/v1/", server.base_url());
    let out = run(&AnthropicProvider::new(config).unwrap(), &request()).await;
    assert_eq!(text(out.turn()), "ok");
    assert_eq!(server.requests()[0].path, "/v1/messages");
}

/// Converts a recorded request message (`content` string or blocks) into a core message.
fn core_message(recorded: &Value) -> Message {
    let role = match recorded["role"].as_str() {
        Some("assistant") => Role::Assistant,
        _ => Role::User,
    };
    let content = match &recorded["content"] {
        Value::String(s) => vec![Block::text(s.clone())],
        blocks => serde_json::from_value(blocks.clone()).expect("recorded blocks parse"),
    };
    Message::new(role, content)
}

/// A block's type and its tool id (`id` or `tool_use_id`), if any.
type BlockShape = (String, Option<String>);

/// Roles, block types and tool ids of a messages array (`content` strings are one text block).
fn shape(messages: &Value) -> Vec<(String, Vec<BlockShape>)> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let blocks = match &m["content"] {
                Value::String(_) => vec![("text".to_string(), None)],
                Value::Array(blocks) => blocks
                    .iter()
                    .map(|b| {
                        let id = b.get("id").or_else(|| b.get("tool_use_id"));
                        (
                            b["type"].as_str().unwrap().to_string(),
                            id.and_then(Value::as_str).map(str::to_string),
                        )
                    })
                    .collect(),
                other => panic!("unexpected content {other}"),
            };
            (m["role"].as_str().unwrap().to_string(), blocks)
        })
        .collect()
}

#[tokio::test]
async fn request_builder_matches_recorded_sdk_requests() {
    let nock: Value = serde_json::from_str(
        &std::fs::read_to_string(support::wire_fixture_path(
            "anthropic/tool_runner_roundtrip.nock.json",
        ))
        .unwrap(),
    )
    .unwrap();
    let exchanges = nock.as_array().unwrap();
    let mut compared = 0;
    let mut with_tool_results = 0;
    for exchange in exchanges {
        let recorded = &exchange["body"];
        let server = MockServer::start(vec![mock::text_turn("ok")]);
        let req = ProviderRequest {
            model: recorded["model"].as_str().unwrap().to_string(),
            system: String::new(),
            messages: recorded["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(core_message)
                .collect(),
            tools: recorded["tools"]
                .as_array()
                .map(|tools| {
                    tools
                        .iter()
                        .map(|t| ToolSchema {
                            name: t["name"].as_str().unwrap().to_string(),
                            description: t["description"].as_str().unwrap_or("").to_string(),
                            input_schema: t["input_schema"].clone(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            max_tokens: recorded["max_tokens"].as_u64().unwrap_or(1024) as u32,
            thinking_budget: None,
            tools_disabled: false,
            server_tools: Vec::new(),
            wire: None,
        };
        let out = run(&provider(&server, 0), &req).await;
        assert_eq!(text(out.turn()), "ok");
        let sent = &server.requests()[0].body;
        assert_eq!(sent["model"], recorded["model"]);
        assert_eq!(shape(&sent["messages"]), shape(&recorded["messages"]));
        for (ours, theirs) in sent["messages"]
            .as_array()
            .unwrap()
            .iter()
            .zip(recorded["messages"].as_array().unwrap())
        {
            if let Value::Array(blocks) = &theirs["content"] {
                for (a, b) in ours["content"].as_array().unwrap().iter().zip(blocks) {
                    if b["type"] == "tool_use" {
                        assert_eq!(a["input"], b["input"]);
                        assert_eq!(a["name"], b["name"]);
                    }
                    if b["type"] == "tool_result" {
                        with_tool_results += 1;
                        assert_eq!(a["content"], b["content"]);
                    }
                }
            }
        }
        let names = |v: &Value| -> Vec<Value> {
            v.as_array()
                .map(|t| t.iter().map(|t| t["name"].clone()).collect())
                .unwrap_or_default()
        };
        assert_eq!(names(&sent["tools"]), names(&recorded["tools"]));
        compared += 1;
    }
    assert_eq!(compared, 10);
    assert!(
        with_tool_results >= 3,
        "the parallel tool round trip was compared"
    );
}

#[tokio::test]
async fn scripted_parallel_tool_calls_and_thinking_round_trip() {
    let (out, _server) = replay(
        vec![mock::tool_turn(
            Some("Reading both."),
            &[
                ("toolu_a", "Read", json!({"file_path":"/a.txt"})),
                ("toolu_b", "Read", json!({"file_path":"/b.txt"})),
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
                "toolu_a".into(),
                "Read".into(),
                json!({"file_path":"/a.txt"})
            ),
            (
                "toolu_b".into(),
                "Read".into(),
                json!({"file_path":"/b.txt"})
            ),
        ]
    );
    let (out, _server) = replay(
        vec![mock::thinking_then_text("let me see", "sig-1", "42")],
        0,
    )
    .await;
    assert_eq!(
        out.turn().content,
        vec![
            Block::Thinking {
                thinking: "let me see".into(),
                signature: "sig-1".into()
            },
            Block::text("42")
        ]
    );
}
