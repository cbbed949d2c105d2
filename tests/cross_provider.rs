//! One behaviour across providers (issue 3, point 6): the same scripted conversation —
//! text, two parallel tool calls, their results, a final answer — and the same errors give
//! the same `SessionEvent` sequence and the same session-log shape whichever of the four
//! wire formats serves it. Each provider is the real adapter over real HTTP against the loopback mock.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use robota::core::permission::{PermissionMode, PermissionPolicy};
use robota::core::{Provider, ToolRegistry};
use robota::providers::{
    AnthropicConfig, AnthropicProvider, GeminiConfig, GeminiProvider, OpenAiChatConfig,
    OpenAiChatProvider, OpenAiResponsesConfig, OpenAiResponsesProvider, RetryPolicy,
};
use robota::sdk::{InteractiveSession, SessionEvent, TurnEnd};
use robota::session::log::{SessionHeader, SessionLog};
use robota::session::{Session, SessionConfig};
use serde_json::{Value, json};
use support::{MockResponse, MockServer, anthropic, gemini, openai_chat, openai_responses};

/// Builds a turn of parallel tool calls (`(id, name, input)`), optionally after some text.
type ToolTurn = fn(Option<&str>, &[(&str, &str, Value)]) -> MockResponse;

/// The scripted answers of one wire format.
struct Wire {
    name: &'static str,
    text_turn: fn(&str) -> MockResponse,
    tool_turn: ToolTurn,
    error_status: fn(u16, &str, &str, Option<&str>) -> MockResponse,
    provider: fn(&MockServer) -> Arc<dyn Provider>,
}

fn retry() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(1),
        ..RetryPolicy::default()
    }
}

fn wires() -> Vec<Wire> {
    vec![
        Wire {
            name: "anthropic",
            text_turn: anthropic::text_turn,
            tool_turn: anthropic::tool_turn,
            error_status: anthropic::error_status,
            provider: |s| {
                let mut c = AnthropicConfig::new("k");
                c.base_url = s.base_url();
                c.retry = retry();
                Arc::new(AnthropicProvider::new(c).unwrap())
            },
        },
        Wire {
            name: "openai",
            text_turn: openai_responses::text_turn,
            tool_turn: openai_responses::tool_turn,
            error_status: openai_responses::error_status,
            provider: |s| {
                let mut c = OpenAiResponsesConfig::new("k");
                c.base_url = format!("{}/v1", s.base_url());
                c.retry = retry();
                Arc::new(OpenAiResponsesProvider::new(c).unwrap())
            },
        },
        Wire {
            name: "openai-compatible",
            text_turn: openai_chat::text_turn,
            tool_turn: openai_chat::tool_turn,
            error_status: openai_chat::error_status,
            provider: |s| {
                let mut c = OpenAiChatConfig::new(format!("{}/v1", s.base_url()));
                c.retry = retry();
                Arc::new(OpenAiChatProvider::new(c).unwrap())
            },
        },
        Wire {
            name: "google",
            text_turn: gemini::text_turn,
            tool_turn: gemini::tool_turn,
            error_status: gemini::error_status,
            provider: |s| {
                let mut c = GeminiConfig::new("k");
                c.base_url = s.base_url();
                c.retry = retry();
                Arc::new(GeminiProvider::new(c).unwrap())
            },
        },
    ]
}

fn session(provider: Arc<dyn Provider>, cwd: &Path, home: &Path, id: &str) -> Session {
    let log = SessionLog::create(
        home,
        &SessionHeader::new(id, cwd, "test-model", provider.name()),
    )
    .unwrap();
    Session::new(
        SessionConfig {
            session_id: id.into(),
            cwd: cwd.to_path_buf(),
            model: "test-model".into(),
            system_prompt: "test".into(),
            max_tokens: 1000,
            thinking_budget: None,
            max_rounds: None,
            context_window: 200_000,
            env: vec![],
            interactive: false,
            server_tools: Vec::new(),
        },
        provider,
        ToolRegistry::new(robota::tools::default_tools(cwd)),
        PermissionPolicy {
            mode: PermissionMode::Default,
            ..PermissionPolicy::default()
        },
        Some(log),
    )
}

/// Runs one prompt and returns the event kinds (consecutive deltas folded into one).
async fn run(session: Session, prompt: &str) -> (Vec<String>, TurnEnd) {
    let mut client = InteractiveSession::start(session);
    let mut events = client.events().unwrap();
    client.submit(prompt);
    let mut kinds: Vec<String> = Vec::new();
    let end = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let kind = match events.recv().await.unwrap() {
                SessionEvent::SubmissionEnded { outcome, .. } => return outcome.end,
                SessionEvent::TextDelta(_) => "text".to_string(),
                SessionEvent::ThinkingDelta(_) => "thinking".to_string(),
                SessionEvent::ToolUseStreaming { name, .. } => format!("streaming {name}"),
                // How a tool call's input is cut into pieces is the wire's own business.
                SessionEvent::ToolInputDelta { .. } => continue,
                SessionEvent::AssistantMessage { message, .. } => {
                    let tools: Vec<&str> = message.tool_uses().map(|(_, n, _)| n).collect();
                    format!("assistant {:?} text={:?}", tools, message.text())
                }
                SessionEvent::ToolStarted { name, .. } => format!("start {name}"),
                SessionEvent::ToolFinished { name, is_error, .. } => {
                    format!("finish {name} error={is_error}")
                }
                SessionEvent::ToolResults(m) => format!("results {}", m.content.len()),
                SessionEvent::Usage { .. } => "usage".to_string(),
                SessionEvent::Context(_) => "context".to_string(),
                SessionEvent::Retrying { .. } => "retrying".to_string(),
                SessionEvent::AttemptDiscarded => "discarded".to_string(),
                other => format!("{other:?}")
                    .split([' ', '(', '{'])
                    .next()
                    .unwrap()
                    .to_string(),
            };
            if kinds.last() != Some(&kind) || kind != "text" {
                kinds.push(kind);
            }
        }
    })
    .await
    .expect("the turn ends");
    (canonical_tool_order(kinds), end)
}

/// Parallel reads start and finish in whatever order the scheduler picks: sort each run of
/// tool start/finish events so only what happened is compared, not the interleaving.
fn canonical_tool_order(mut kinds: Vec<String>) -> Vec<String> {
    let mut i = 0;
    while i < kinds.len() {
        let is_tool = |k: &String| k.starts_with("start ") || k.starts_with("finish ");
        if is_tool(&kinds[i]) {
            let end = (i..kinds.len())
                .find(|&j| !is_tool(&kinds[j]))
                .unwrap_or(kinds.len());
            kinds[i..end].sort();
            i = end;
        } else {
            i += 1;
        }
    }
    kinds
}

fn log_shape(home: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(home.join("projects")).unwrap().flatten() {
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            files.push(f.path());
        }
    }
    assert_eq!(files.len(), 1);
    let lines = std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let blocks: Vec<String> = v["message"]["content"]
                .as_array()
                .map(|c| {
                    c.iter()
                        .map(|b| b["type"].as_str().unwrap_or("?").to_string())
                        // A provider's own data (e.g. Gemini thought signatures) rides
                        // along; the conversation's shape is the core blocks.
                        .filter(|t| {
                            ["text", "thinking", "tool_use", "tool_result", "image"]
                                .contains(&t.as_str())
                        })
                        .collect()
                })
                .unwrap_or_default();
            let kind = v["event"]
                .as_str()
                .unwrap_or(v["type"].as_str().unwrap_or("?"));
            // Same spelling as the event kinds so parallel tool runs sort alike.
            match kind {
                "tool_start" => format!("start {}", v["tool"]),
                "tool_end" => format!("finish {}", v["tool"]),
                _ => format!("{kind} {}", blocks.join(",")),
            }
        })
        .collect();
    canonical_tool_order(lines)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_conversation_gives_the_same_events_and_log_on_every_wire() {
    let mut seen: Vec<(&str, Vec<String>, Vec<String>)> = Vec::new();
    for wire in wires() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("repo");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::write(cwd.join("a.txt"), "alpha\n").unwrap();
        std::fs::write(cwd.join("b.txt"), "beta\n").unwrap();
        let server = MockServer::start(vec![
            (wire.tool_turn)(
                Some("Reading both."),
                &[
                    ("call_a", "Read", json!({"file_path": "a.txt"})),
                    ("call_b", "Read", json!({"file_path": "b.txt"})),
                ],
            ),
            (wire.text_turn)("alpha and beta."),
        ]);
        let home = dir.path().join("home");
        let s = session((wire.provider)(&server), &cwd, &home, "s1");
        let (kinds, end) = run(s, "read a and b").await;
        assert_eq!(end, TurnEnd::Success, "{}", wire.name);
        // The second request carried both results, in order, whatever the wire.
        let second = server.requests()[1].body.to_string();
        let (a, b) = (second.find("alpha").unwrap(), second.find("beta").unwrap());
        assert!(a < b, "{}: results keep request order", wire.name);
        seen.push((wire.name, kinds, log_shape(&home)));
    }
    let (first_name, first_kinds, first_log) = &seen[0];
    for (name, kinds, log) in &seen[1..] {
        assert_eq!(kinds, first_kinds, "{name} events differ from {first_name}");
        assert_eq!(log, first_log, "{name} log shape differs from {first_name}");
    }
    assert!(
        first_kinds.contains(&"assistant [\"Read\", \"Read\"] text=\"Reading both.\"".to_string()),
        "{first_kinds:?}"
    );
    assert!(first_kinds.contains(&"results 2".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_mean_the_same_on_every_wire() {
    let cases: &[(u16, &str, &str, Option<&str>, &str)] = &[
        (
            401,
            "authentication_error",
            "invalid key",
            None,
            "check the API key",
        ),
        (
            404,
            "not_found_error",
            "model: nope",
            None,
            "check the model name",
        ),
        (
            400,
            "invalid_request_error",
            "prompt is too long: 300000 tokens > 200000 maximum",
            None,
            "/compact",
        ),
    ];
    for wire in wires() {
        for (status, kind, message, retry_after, expect) in cases {
            let dir = tempfile::tempdir().unwrap();
            let server = MockServer::start(vec![(wire.error_status)(
                *status,
                kind,
                message,
                *retry_after,
            )]);
            let s = session(
                (wire.provider)(&server),
                dir.path(),
                &dir.path().join("h"),
                "s",
            );
            let (_, end) = run(s, "hi").await;
            match end {
                TurnEnd::Error(error) => assert!(
                    error.line().contains(expect) && error.status == Some(*status),
                    "{}: {status} should say {expect:?}, said {error:?}",
                    wire.name
                ),
                other => panic!("{}: {status} ended {other:?}", wire.name),
            }
            assert_eq!(
                server.requests().len(),
                1,
                "{}: {status} is not retried",
                wire.name
            );
        }
        // 429 and 5xx are retried with the server's delay, then succeed.
        let dir = tempfile::tempdir().unwrap();
        let server = MockServer::start(vec![
            (wire.error_status)(429, "rate_limit_error", "slow down", Some("0")),
            (wire.error_status)(503, "overloaded_error", "busy", None),
            (wire.text_turn)("finally"),
        ]);
        let s = session(
            (wire.provider)(&server),
            dir.path(),
            &dir.path().join("h"),
            "s",
        );
        let (kinds, end) = run(s, "hi").await;
        assert_eq!(end, TurnEnd::Success, "{}", wire.name);
        assert_eq!(
            kinds.iter().filter(|k| *k == "retrying").count(),
            2,
            "{}: {kinds:?}",
            wire.name
        );
        assert_eq!(server.requests().len(), 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_too_long_conversation_is_compacted_and_retried_on_every_wire() {
    use robota::core::Message;
    let overflow = |name: &str| match name {
        "anthropic" => (
            "invalid_request_error",
            "prompt is too long: 300000 tokens > 200000 maximum",
        ),
        "openai" => (
            "context_length_exceeded",
            "Your input exceeds the context window of this model.",
        ),
        "openai-compatible" => (
            "exceed_context_size_error",
            "the request exceeds the available context size",
        ),
        _ => (
            "invalid_request_error",
            "The input token count (300000) exceeds the maximum number of tokens allowed (200000).",
        ),
    };
    for wire in wires() {
        let dir = tempfile::tempdir().unwrap();
        let (kind, message) = overflow(wire.name);
        let server = MockServer::start(vec![
            (wire.error_status)(400, kind, message, None),
            (wire.text_turn)("Summary: the user said hello."),
            (wire.text_turn)("Answered."),
        ]);
        let earlier = vec![
            Message::user_text("hello"),
            Message::new(
                robota::core::Role::Assistant,
                vec![robota::core::Block::text("hi")],
            ),
        ];
        let s = session(
            (wire.provider)(&server),
            dir.path(),
            &dir.path().join("h"),
            "s",
        )
        .with_history(earlier, None);
        let (kinds, end) = run(s, "and now?").await;
        assert_eq!(end, TurnEnd::Success, "{}: {kinds:?}", wire.name);
        assert!(
            kinds.iter().any(|k| k == "CompactStarted") && kinds.iter().any(|k| k == "Compacted"),
            "{}: {kinds:?}",
            wire.name
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{}", wire.name);
        let retry = requests[2].body.to_string();
        assert!(
            retry.contains("Summary: the user said hello.") && retry.contains("and now?"),
            "{}: {retry}",
            wire.name
        );
        assert!(!retry.contains("\"hello\""), "{}: {retry}", wire.name);
    }
}
