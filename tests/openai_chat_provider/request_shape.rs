//! The request as the server receives it: the endpoint and headers (a bearer token only
//! when a key is set, extra headers), the body of a tool round trip equal to the one
//! recorded against a real llama.cpp server, a multi-round conversation with parallel calls
//! and a reused id, `tool_choice:"none"` for the summary round, and merged options.

use std::time::Duration;

use robota::core::{Block, Message, ProviderRequest, Role, ToolSchema};
use robota::providers::OpenAiChatProvider;
use serde_json::{Map, Value, json};

use crate::support::openai_chat as mock;
use crate::support::{MockServer, RecordedRequest, wire_fixture_path};
use crate::{config_for, provider, request, run, text};

async fn sent_with(
    provider: &OpenAiChatProvider,
    server: &MockServer,
    req: &ProviderRequest,
) -> RecordedRequest {
    let out = run(provider, req).await;
    assert_eq!(text(out.turn()), "ok");
    server.requests().pop().expect("one request")
}

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

#[tokio::test]
async fn endpoint_and_headers() {
    let server = MockServer::start(vec![mock::text_turn("ok"), mock::text_turn("ok")]);
    let anonymous = provider(&server, 0);
    let sent = sent_with(&anonymous, &server, &request()).await;
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), None);
    assert!(
        sent.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );

    let mut config = config_for(&server, 0, Duration::from_secs(20));
    config.base_url.push('/');
    config.api_key = Some("sk-or-test".into());
    config.extra_headers = vec![("X-Title".into(), "robota".into())];
    let keyed = OpenAiChatProvider::new(config).unwrap();
    let sent = sent_with(&keyed, &server, &request()).await;
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-or-test"));
    assert_eq!(sent.header("x-title"), Some("robota"));
}

/// The second request of `local/req-03-stream-tool-result.json`, sent to a real llama.cpp.
#[tokio::test]
async fn tool_round_trip_body_equals_the_one_recorded_against_llamacpp() {
    let recorded: Value = serde_json::from_str(
        &std::fs::read_to_string(wire_fixture_path("local/req-03-stream-tool-result.json"))
            .unwrap(),
    )
    .unwrap();
    let file = "fn main() {\n    let args: Vec<String> = std::env::args().collect();\n    println!(\"{} args\", args.len() - 1);\n}\n";
    let req = ProviderRequest {
        model: "qwen2.5-coder-0.5b".into(),
        system: "You are a coding agent working in a repository. Use the provided tools to inspect files before answering.".into(),
        messages: vec![
            Message::user_text("Read the file src/main.rs and tell me what it does."),
            Message::new(
                Role::Assistant,
                vec![Block::ToolUse {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    input: json!({"path":"src/main.rs"}),
                }],
            ),
            Message::new(Role::User, vec![tool_result("call_1", file, false)]),
        ],
        tools: vec![ToolSchema {
            name: "read_file".into(),
            description: "Read a UTF-8 text file from the repository and return its contents."
                .into(),
            input_schema: json!({"type":"object","properties":{"path":{"type":"string",
                "description":"Path relative to the repository root"}},"required":["path"]}),
        }],
        max_tokens: 150,
        thinking_budget: None,
        tools_disabled: false,
        server_tools: Vec::new(),
        wire: None,
    };
    let server = MockServer::start(vec![mock::text_turn("ok")]);
    let mut config = config_for(&server, 0, Duration::from_secs(20));
    config.options = serde_json::from_value::<Map<String, Value>>(
        json!({"temperature": 0, "tool_choice": "auto"}),
    )
    .unwrap();
    let sent = sent_with(&OpenAiChatProvider::new(config).unwrap(), &server, &req).await;
    assert_eq!(sent.body, recorded);
}

#[tokio::test]
async fn multi_round_history_with_parallel_calls_and_a_reused_id() {
    let server = MockServer::start(vec![mock::text_turn("ok")]);
    let mut req = request();
    req.tools = vec![ToolSchema {
        name: "Read".into(),
        description: "Read a file".into(),
        input_schema: json!({"type":"object","properties":{"file_path":{"type":"string"}}}),
    }];
    req.messages = vec![
        Message::user_text("read a and b"),
        Message::new(
            Role::Assistant,
            vec![
                Block::Thinking {
                    thinking: "two reads".into(),
                    signature: String::new(),
                },
                Block::text("Reading both."),
                tool_use("call_0", "a.txt"),
                tool_use("call_1", "b.txt"),
            ],
        ),
        Message::new(
            Role::User,
            vec![
                tool_result("call_0", "A", false),
                tool_result("call_1", "no such file", true),
            ],
        ),
        Message::new(Role::Assistant, vec![tool_use("call_0", "c.txt")]),
        Message::new(Role::User, vec![tool_result("call_0", "C", false)]),
        Message::new(Role::Assistant, vec![Block::text("A and C read.")]),
        Message::user_text("thanks"),
    ];
    let sent = sent_with(&provider(&server, 0), &server, &req).await;
    let messages = sent.body["messages"].as_array().unwrap().clone();
    let reused = messages[5]["tool_calls"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(reused, "call_0", "a reused id is rewritten");
    assert_eq!(
        Value::Array(messages),
        json!([
            {"role":"system","content":"You are robota."},
            {"role":"user","content":"read a and b"},
            {"role":"assistant","content":"Reading both.","tool_calls":[
                {"id":"call_0","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a.txt\"}"}},
                {"id":"call_1","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"b.txt\"}"}}]},
            {"role":"tool","tool_call_id":"call_0","content":"A"},
            {"role":"tool","tool_call_id":"call_1","content":"Error: no such file"},
            {"role":"assistant","content":null,"tool_calls":[
                {"id":reused,"type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"c.txt\"}"}}]},
            {"role":"tool","tool_call_id":reused,"content":"C"},
            {"role":"assistant","content":"A and C read."},
            {"role":"user","content":"thanks"}
        ])
    );
    assert_eq!(
        sent.body["tools"],
        json!([{"type":"function","function":{"name":"Read","description":"Read a file",
            "parameters":{"type":"object","properties":{"file_path":{"type":"string"}}}}}])
    );
    assert_eq!(sent.body["stream"], true);
    assert_eq!(sent.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(sent.body["max_tokens"], 1024);
    assert!(sent.body.get("tool_choice").is_none());
}

#[tokio::test]
async fn summary_round_sends_tool_choice_none_with_the_tools_listed() {
    let server = MockServer::start(vec![mock::text_turn("ok")]);
    let mut req = request();
    req.tools = vec![ToolSchema {
        name: "Bash".into(),
        description: "run".into(),
        input_schema: json!({"type":"object"}),
    }];
    req.tools_disabled = true;
    let sent = sent_with(&provider(&server, 0), &server, &req).await;
    assert_eq!(sent.body["tool_choice"], "none");
    assert_eq!(sent.body["tools"][0]["function"]["name"], "Bash");
}
