//! The embedding API beyond the examples: `query`'s permission callback, turn limit and
//! errors; `InteractiveSession`'s queue cancelling, command execution and listing, and
//! state queries — over the real Anthropic adapter against a loopback mock.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use robota::core::Provider;
use robota::providers::{AnthropicConfig, AnthropicProvider, RetryPolicy};
use robota::sdk::{
    ErrorKind, PermissionAnswer, PermissionMode, QueryOptions, SessionBuilder, SessionEvent,
    TurnEnd, query,
};
use serde_json::json;
use support::{MockServer, anthropic};
use tokio::sync::mpsc::UnboundedReceiver;

const MODEL: &str = "claude-sonnet-4-5";

fn provider(server: &MockServer) -> Arc<dyn Provider> {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = server.base_url();
    config.retry = RetryPolicy::none();
    Arc::new(AnthropicProvider::new(config).unwrap())
}

/// A session over the mock server in `cwd`, as a query runs it.
fn builder(server: &MockServer, cwd: &std::path::Path) -> SessionBuilder {
    SessionBuilder::new(provider(server), MODEL, cwd)
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

fn write_call() -> support::MockResponse {
    anthropic::tool_turn(
        None,
        &[(
            "w1",
            "Write",
            json!({"file_path": "out.txt", "content": "written\n"}),
        )],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_asks_its_permission_callback_and_obeys_the_answer() {
    for (allow, exists) in [(true, true), (false, false)] {
        let dir = tempfile::tempdir().unwrap();
        let server = MockServer::start(vec![write_call(), anthropic::text_turn("done")]);
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = asked.clone();
        let options = QueryOptions::new().on_permission(move |request| {
            seen.lock().unwrap().push(request.tool_name.clone());
            if allow {
                PermissionAnswer::Allow
            } else {
                PermissionAnswer::Deny(Some("not today".into()))
            }
        });
        let answer = query(builder(&server, dir.path()), "write it", options)
            .await
            .unwrap();
        assert_eq!(answer.text, "done");
        assert_eq!(*asked.lock().unwrap(), vec!["Write".to_string()]);
        assert_eq!(dir.path().join("out.txt").exists(), exists, "allow={allow}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_without_a_callback_denies_and_a_mode_allows() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![write_call(), anthropic::text_turn("refused")]);
    let answer = query(
        builder(&server, dir.path()),
        "write it",
        QueryOptions::new(),
    )
    .await
    .unwrap();
    assert_eq!(answer.text, "refused");
    assert!(
        !dir.path().join("out.txt").exists(),
        "nobody approved the write"
    );

    let server = MockServer::start(vec![write_call(), anthropic::text_turn("written")]);
    let session = builder(&server, dir.path()).permission_mode(PermissionMode::AcceptEdits);
    query(session, "write it", QueryOptions::new())
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "written\n",
        "acceptEdits lets the write run"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_stops_at_its_turn_limit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let read = || anthropic::tool_turn(None, &[("r", "Read", json!({"file_path": "a.txt"}))]);
    let server = MockServer::start(vec![read(), read(), read(), anthropic::text_turn("late")]);
    let session = builder(&server, dir.path()).max_turns(1);
    let answer = query(session, "read forever", QueryOptions::new())
        .await
        .unwrap();
    assert_eq!(answer.end, TurnEnd::MaxTurns);
    assert!(server.requests().len() < 4, "the limit stopped the calls");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_failure_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![anthropic::error_status(
        401,
        "authentication_error",
        "invalid x-api-key",
        None,
    )]);
    let error = query(builder(&server, dir.path()), "hi", QueryOptions::new())
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert_eq!(error.status, Some(401));
    assert!(!error.to_string().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_queue_drops_every_waiting_prompt_and_lets_the_running_one_finish() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![anthropic::text_turn_held("first answer", 4)]);
    let mut session = SessionBuilder::new(provider(&server), MODEL, dir.path())
        .session_id("embed-1")
        .start()
        .unwrap();
    let mut events = session.events().unwrap();
    let first = session.submit("first");
    until(&mut events, |e| {
        matches!(e, SessionEvent::TextDelta(_)).then_some(())
    })
    .await;
    assert!(session.is_running());
    session.submit("second");
    session.submit("third");
    let mut queued = 0;
    until(&mut events, |e| {
        if matches!(e, SessionEvent::SubmissionQueued(_)) {
            queued += 1;
        }
        (queued == 2).then_some(())
    })
    .await;
    assert_eq!(session.state().queue.len(), 2);
    session.cancel_queue();
    let mut dropped = Vec::new();
    until(&mut events, |e| {
        if let SessionEvent::SubmissionDropped(q) = e {
            dropped.push(q.text);
        }
        (dropped.len() == 2).then_some(())
    })
    .await;
    assert_eq!(dropped, ["second", "third"]);
    server.release_held();
    let outcome = until(&mut events, |e| match e {
        SessionEvent::SubmissionEnded { id, outcome } if id == first => Some(outcome),
        _ => None,
    })
    .await;
    assert_eq!(
        outcome.end,
        TurnEnd::Success,
        "the running prompt was not interrupted"
    );
    assert_eq!(outcome.result, "first answer");
    let state = session.state();
    assert_eq!(state.session_id, "embed-1");
    assert!(state.queue.is_empty());
    assert!(state.usage.input_tokens > 0);
    session.close().await;
    assert_eq!(
        server.requests().len(),
        1,
        "the dropped prompts never reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_are_listed_and_executed_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![]);
    let mut session = SessionBuilder::new(provider(&server), MODEL, dir.path())
        .permission_mode(PermissionMode::Plan)
        .start()
        .unwrap();
    let mut events = session.events().unwrap();
    let names: Vec<String> = session
        .list_commands()
        .into_iter()
        .map(|c| c.name)
        .collect();
    for name in ["help", "compact", "context", "mode"] {
        assert!(names.iter().any(|n| n == name), "{name} not in {names:?}");
    }
    let id = session.execute_command("mode", "");
    let output = until(&mut events, |e| match e {
        SessionEvent::CommandOutput {
            id: got, output, ..
        } if got == id => Some(output),
        _ => None,
    })
    .await;
    assert!(output.contains("plan"), "{output}");
    let id = session.execute_command("/no-such-command", "x");
    let end = until(&mut events, |e| match e {
        SessionEvent::SubmissionEnded { id: got, outcome } if got == id => Some(outcome.end),
        _ => None,
    })
    .await;
    match end {
        TurnEnd::Error(error) => assert_eq!(error.kind, ErrorKind::UnknownCommand),
        other => panic!("expected an unknown-command error, got {other:?}"),
    }
    assert_eq!(session.state().mode, PermissionMode::Plan);
    session.close().await;
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_continuing_a_full_conversation_compacts_first_and_says_so() {
    use robota::core::{Block, Message, Role, Usage};
    let dir = tempfile::tempdir().unwrap();
    let mut answer = Message::new(Role::Assistant, vec![Block::text("earlier answer")]);
    answer.usage = Some(Usage {
        input_tokens: 190_000,
        output_tokens: 10,
        ..Usage::default()
    });
    let history = vec![Message::user_text("earlier task"), answer];
    let server = MockServer::start(vec![
        anthropic::text_turn("<summary>The user asked an earlier task.</summary>"),
        anthropic::text_turn("fresh answer"),
    ]);
    let compactions = Arc::new(Mutex::new(Vec::new()));
    let seen = compactions.clone();
    let session = builder(&server, dir.path()).history(history);
    let options = QueryOptions::new().on_compact(move |c| seen.lock().unwrap().push(c.clone()));

    let answer = query(session, "next task", options).await.unwrap();

    assert_eq!(answer.text, "fresh answer");
    let compactions = compactions.lock().unwrap();
    assert_eq!(compactions.len(), 1, "the callback saw the one compaction");
    assert!(
        compactions[0].summary.contains("earlier task"),
        "{:?}",
        compactions[0]
    );
    assert!(compactions[0].pre_tokens > compactions[0].post_tokens);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the summary call, then the prompt");
    let sent = &requests[1].body["messages"];
    let first = sent[0]["content"][0]["text"].as_str().unwrap();
    assert!(
        first.starts_with(robota::sdk::CONTEXT_SUMMARY_PREFIX),
        "{first}"
    );
    assert!(
        !sent.to_string().contains("earlier answer"),
        "the history was replaced"
    );
    let last = sent.as_array().unwrap().last().unwrap();
    assert_eq!(last["content"][0]["text"], "next task");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mistyped_rule_starts_nothing_and_a_deny_rule_beats_bypass() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![]);
    let error = SessionBuilder::new(provider(&server), MODEL, dir.path())
        .deny("Bash(rm -rf")
        .start()
        .err()
        .expect("a rule that does not parse is refused");
    assert_eq!(error.kind, ErrorKind::Config);
    assert!(error.message.contains("Bash(rm -rf"), "{}", error.message);
    let session = builder(&server, dir.path()).allow("Bash(echo");
    let error = query(session, "hi", QueryOptions::new()).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Config);
    assert!(server.requests().is_empty(), "nothing reached the model");

    // Well-formed, the deny rule holds even in bypassPermissions: a whole-tool rule takes
    // the tool away (as on the command line), and a call the model makes anyway is not run.
    let server = MockServer::start(vec![write_call(), anthropic::text_turn("blocked")]);
    let mut session = SessionBuilder::new(provider(&server), MODEL, dir.path())
        .permission_mode(PermissionMode::BypassPermissions)
        .deny("Write")
        .start()
        .unwrap();
    let mut events = session.events().unwrap();
    let id = session.submit("write it");
    let outcome = until(&mut events, |e| match e {
        SessionEvent::SubmissionEnded { id: got, outcome } if got == id => Some(outcome),
        _ => None,
    })
    .await;
    session.close().await;
    assert_eq!(outcome.result, "blocked");
    let offered: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    assert!(offered.iter().any(|n| n == "Read"), "{offered:?}");
    assert!(!offered.iter().any(|n| n == "Write"), "{offered:?}");
    assert!(
        !dir.path().join("out.txt").exists(),
        "the denied write did not happen"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_built_session_reads_the_project_context_files_and_no_settings_commands_or_servers() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    std::fs::write(project.join("CLAUDE.md"), "context-marker-7731\n").unwrap();
    std::fs::create_dir_all(project.join(".claude/commands")).unwrap();
    std::fs::write(
        project.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Write"]}, "env": {"SETTINGS_MARKER": "1"}}"#,
    )
    .unwrap();
    std::fs::write(project.join(".claude/commands/hello.md"), "Say hello\n").unwrap();
    let server_log = project.join("server-started");
    std::fs::write(
        project.join(".mcp.json"),
        json!({"mcpServers": {"probe": {"command": "touch", "args": [&server_log]}}}).to_string(),
    )
    .unwrap();
    let server = MockServer::start(vec![write_call(), anthropic::text_turn("asked")]);
    let mut session = builder(&server, project).start().unwrap();
    let names: Vec<String> = session
        .list_commands()
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert!(!names.iter().any(|n| n == "hello"), "{names:?}");
    let mut events = session.events().unwrap();
    let id = session.submit("write it");
    let mut denied = Vec::new();
    let outcome = until(&mut events, |e| match e {
        SessionEvent::PermissionDenied { tool_name, .. } => {
            denied.push(tool_name);
            None
        }
        SessionEvent::SubmissionEnded { id: got, outcome } if got == id => Some(outcome),
        _ => None,
    })
    .await;
    session.close().await;
    assert_eq!(outcome.result, "asked");
    // The project's allow rule was not read: with no one to ask, the write is denied.
    assert_eq!(denied, ["Write"]);
    assert!(!project.join("out.txt").exists());
    let system = server.requests()[0].body["system"].to_string();
    assert!(system.contains("context-marker-7731"), "{system}");
    assert!(!server_log.exists(), "the project's MCP server was started");
}
