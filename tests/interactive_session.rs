//! `InteractiveSession` driven as a client drives it (the TUI will): prompts queued behind a
//! running turn, abort keeping the partial answer, permission requests answered through the
//! responder, and slash commands — over the real Anthropic adapter and a loopback mock.

mod support;

use std::sync::Arc;
use std::time::Duration;

use robota::core::ToolRegistry;
use robota::core::permission::{PermissionMode, PermissionPolicy};
use robota::providers::{AnthropicConfig, AnthropicProvider, RetryPolicy};
use robota::sdk::{InteractiveSession, SessionEvent, TurnEnd};
use robota::session::{PermissionAnswer, Session, SessionConfig};
use serde_json::json;
use support::{MockServer, anthropic};
use tokio::sync::mpsc::UnboundedReceiver;

fn session(server: &MockServer, cwd: &std::path::Path) -> Session {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = server.base_url();
    config.retry = RetryPolicy::none();
    let provider = Arc::new(AnthropicProvider::new(config).unwrap());
    let tools = ToolRegistry::new(robota::tools::default_tools(cwd));
    Session::new(
        SessionConfig {
            session_id: "s1".into(),
            cwd: cwd.to_path_buf(),
            model: "claude-sonnet-4-5".into(),
            system_prompt: "test".into(),
            max_tokens: 1000,
            thinking_budget: None,
            max_rounds: None,
            context_window: 200_000,
            env: vec![],
            interactive: true,
            server_tools: Vec::new(),
        },
        provider,
        tools,
        PermissionPolicy {
            mode: PermissionMode::Default,
            ..PermissionPolicy::default()
        },
        None,
    )
}

/// Receives events until `pick` returns a value (bounded by a safety timeout).
async fn until<T>(
    events: &mut UnboundedReceiver<SessionEvent>,
    mut pick: impl FnMut(SessionEvent) -> Option<T>,
) -> T {
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let event = events.recv().await.expect("the session ended early");
            if let Some(v) = pick(event) {
                return v;
            }
        }
    })
    .await
    .expect("the awaited event never came")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_sent_while_busy_waits_its_turn_and_abort_keeps_the_partial() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        anthropic::text_turn_held("first answer is long", 4),
        anthropic::text_turn("second answer"),
    ]);
    let mut client = InteractiveSession::start(session(&server, dir.path()));
    let mut events = client.events().unwrap();
    client.submit("first");
    until(&mut events, |e| {
        matches!(e, SessionEvent::TextDelta(_)).then_some(())
    })
    .await;
    client.submit("second");
    let queued = until(&mut events, |e| match e {
        SessionEvent::PromptQueued(p) => Some(p),
        _ => None,
    })
    .await;
    assert_eq!(queued, "second");
    client.abort();
    let (end, dequeued) = {
        let mut dequeued = None;
        let end = until(&mut events, |e| match e {
            SessionEvent::PromptDequeued(p) => {
                dequeued = Some(p);
                None
            }
            SessionEvent::TurnComplete { end, result, .. } => Some((end, result)),
            _ => None,
        })
        .await;
        (end, dequeued)
    };
    server.release_held();
    assert_eq!(end.0, TurnEnd::Interrupted);
    assert!(!end.1.is_empty(), "the partial answer is the result");
    assert_eq!(
        dequeued.as_deref(),
        Some("second"),
        "abort hands the queued prompt back"
    );

    // The session is still usable: the next prompt carries the interrupted answer.
    client.submit("third");
    let result = until(&mut events, |e| match e {
        SessionEvent::TurnComplete { end, result, .. } => Some((end, result)),
        _ => None,
    })
    .await;
    assert_eq!(result, (TurnEnd::Success, "second answer".to_string()));
    let body = &server.requests()[1].body;
    assert_eq!(body["messages"][1]["role"], "assistant");
    assert_eq!(body["messages"][2]["content"][0]["text"], "third");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_prompt_runs_after_the_turn_completes() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        anthropic::text_turn_held("one", 4),
        anthropic::text_turn("two"),
    ]);
    let mut client = InteractiveSession::start(session(&server, dir.path()));
    let mut events = client.events().unwrap();
    client.submit("first");
    until(&mut events, |e| {
        matches!(e, SessionEvent::TextDelta(_)).then_some(())
    })
    .await;
    client.submit("second");
    until(&mut events, |e| {
        matches!(e, SessionEvent::PromptQueued(_)).then_some(())
    })
    .await;
    server.release_held();
    let mut results = Vec::new();
    while results.len() < 2 {
        let r = until(&mut events, |e| match e {
            SessionEvent::TurnComplete { result, .. } => Some(result),
            _ => None,
        })
        .await;
        results.push(r);
    }
    assert_eq!(results, ["one", "two"]);
    assert_eq!(
        server.requests()[1].body["messages"][2]["content"][0]["text"],
        "second"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_requests_are_answered_through_the_responder() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("made.txt");
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "t1",
                "Bash",
                json!({"command": format!("touch {}", target.display())}),
            )],
        ),
        anthropic::tool_turn(
            None,
            &[("t2", "Bash", json!({"command": "rm -rf /tmp/nothing-here"}))],
        ),
        anthropic::text_turn("done"),
    ]);
    let mut client = InteractiveSession::start(session(&server, dir.path()));
    let mut events = client.events().unwrap();
    client.submit("go");
    let mut first = until(&mut events, |e| match e {
        SessionEvent::PermissionRequest(r) => Some(r),
        _ => None,
    })
    .await;
    assert_eq!(first.tool_name, "Bash");
    assert!(
        first.suggested_rule.starts_with("Bash(touch"),
        "{}",
        first.suggested_rule
    );
    first.respond(PermissionAnswer::Allow);
    let mut second = until(&mut events, |e| match e {
        SessionEvent::PermissionRequest(r) => Some(r),
        _ => None,
    })
    .await;
    assert!(target.exists(), "the approved command ran");
    second.respond(PermissionAnswer::Deny(Some("use trash instead".into())));
    until(&mut events, |e| {
        matches!(e, SessionEvent::TurnComplete { .. }).then_some(())
    })
    .await;
    let last = &server.requests()[2].body;
    let result = last["messages"].as_array().unwrap().last().unwrap()["content"][0].clone();
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("use trash instead")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_run_without_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![]);
    let mut client = InteractiveSession::start(session(&server, dir.path()));
    let mut events = client.events().unwrap();
    client.submit("/mode plan");
    let out = until(&mut events, |e| match e {
        SessionEvent::CommandOutput { output, .. } => Some(output),
        _ => None,
    })
    .await;
    assert_eq!(out, "Permission mode set to plan.");
    client.execute_command("model", "");
    let out = until(&mut events, |e| match e {
        SessionEvent::CommandOutput { output, .. } => Some(output),
        _ => None,
    })
    .await;
    assert_eq!(out, "Model: claude-sonnet-4-5");
    client.submit("/nonsense");
    // Unknown slash words go to the model like any prompt (the mock has no script: error).
    let end = until(&mut events, |e| match e {
        SessionEvent::TurnComplete { end, .. } => Some(end),
        _ => None,
    })
    .await;
    assert!(matches!(end, TurnEnd::Error(_)));
    assert!(server.requests()[0].body.to_string().contains("/nonsense"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dont_ask_again_saves_the_rule_and_stops_asking() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("t1", "Bash", json!({"command": "mkdir -p one"}))]),
        anthropic::tool_turn(
            None,
            &[("t2", "Bash", json!({"command": "mkdir -p one/two"}))],
        ),
        anthropic::text_turn("done"),
    ]);
    let mut client = InteractiveSession::start(session(&server, dir.path()));
    let mut events = client.events().unwrap();
    client.submit("go");
    let mut request = until(&mut events, |e| match e {
        SessionEvent::PermissionRequest(r) => Some(r),
        _ => None,
    })
    .await;
    let saved = request.allow_and_save(dir.path()).unwrap();
    let text = std::fs::read_to_string(&saved).unwrap();
    assert!(text.contains(&request.suggested_rule), "{text}");
    let asked_again = until(&mut events, |e| match e {
        SessionEvent::PermissionRequest(_) => Some(true),
        SessionEvent::TurnComplete { .. } => Some(false),
        _ => None,
    })
    .await;
    assert!(!asked_again, "the saved rule covers the second call");
    assert!(
        dir.path().join("one/two").is_dir(),
        "the second command ran"
    );
}
