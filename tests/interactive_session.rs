//! `InteractiveSession` driven as a client drives it (the TUI will): prompts queued behind a
//! running turn, abort keeping the partial answer, permission requests answered through the
//! responder, and slash commands — over the real Anthropic adapter and a loopback mock.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::time::Duration;

use robota::core::permission::PermissionMode;
use robota::sdk::{InteractiveSession, SessionEvent, TurnEnd};
use robota::session::log::{SessionHeader, SessionLog};
use robota::session::{PermissionAnswer, Session};
use serde_json::json;
use support::{MockServer, anthropic};
use tokio::sync::mpsc::UnboundedReceiver;

fn session(server: &MockServer, cwd: &std::path::Path) -> Session {
    logged_session(server, cwd, None)
}

fn logged_session(server: &MockServer, cwd: &std::path::Path, log: Option<SessionLog>) -> Session {
    support::session::anthropic_session(server.base_url(), cwd, PermissionMode::Default, log)
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
        SessionEvent::SubmissionQueued(q) => Some(q.text),
        _ => None,
    })
    .await;
    assert_eq!(queued, "second");
    client.abort();
    let (end, dequeued) = {
        let mut dequeued = None;
        let end = until(&mut events, |e| match e {
            SessionEvent::SubmissionDropped(q) => {
                dequeued = Some(q.text);
                None
            }
            SessionEvent::SubmissionEnded { outcome, .. } => Some((outcome.end, outcome.result)),
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
        SessionEvent::SubmissionEnded { outcome, .. } => Some((outcome.end, outcome.result)),
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
        matches!(e, SessionEvent::SubmissionQueued(_)).then_some(())
    })
    .await;
    server.release_held();
    let mut results = Vec::new();
    while results.len() < 2 {
        let r = until(&mut events, |e| match e {
            SessionEvent::SubmissionEnded { outcome, .. } => Some(outcome.result),
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
        matches!(e, SessionEvent::SubmissionEnded { .. }).then_some(())
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
    client.submit("/model");
    let out = until(&mut events, |e| match e {
        SessionEvent::CommandOutput { output, .. } => Some(output),
        _ => None,
    })
    .await;
    assert_eq!(out, "Model: claude-sonnet-4-5");
    let unknown = client.submit("/modle x");
    // Unknown commands are answered without the model, naming the closest commands.
    let end = until(&mut events, |e| match e {
        SessionEvent::SubmissionEnded { id, outcome } if id == unknown => Some(outcome.end),
        _ => None,
    })
    .await;
    match end {
        TurnEnd::Error(error) => {
            assert_eq!(error.kind, robota::sdk::ErrorKind::UnknownCommand);
            assert_eq!(
                error.message,
                "Unknown command: /modle — did you mean /mode, /model?"
            );
        }
        other => panic!("ended {other:?}"),
    }
    assert!(server.requests().is_empty(), "no model call");
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
        SessionEvent::SubmissionEnded { .. } => Some(false),
        _ => None,
    })
    .await;
    assert!(!asked_again, "the saved rule covers the second call");
    assert!(
        dir.path().join("one/two").is_dir(),
        "the second command ran"
    );
}

/// The `ShellOutput` answering the next `!command`.
async fn shell_output(
    events: &mut UnboundedReceiver<SessionEvent>,
) -> (String, String, Option<i32>) {
    until(events, |e| match e {
        SessionEvent::ShellOutput {
            command,
            output,
            exit_code,
            ..
        } => Some((command, output, exit_code)),
        _ => None,
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_commands_run_and_join_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker.txt"), "").unwrap();
    let home = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![anthropic::text_turn("seen")]);
    let header = SessionHeader::new("s1", dir.path(), "claude-sonnet-4-5", "anthropic");
    let log = SessionLog::create(home.path(), &header).unwrap();
    let log_path = log.path().to_path_buf();
    let mut client = InteractiveSession::start(logged_session(&server, dir.path(), Some(log)));
    let mut events = client.events().unwrap();
    client.run_shell("echo hi; ls");
    let (command, output, exit_code) = shell_output(&mut events).await;
    assert_eq!(command, "echo hi; ls");
    assert_eq!(output, "hi\nmarker.txt", "runs in the session's directory");
    assert_eq!(exit_code, Some(0));
    client.run_shell("echo bad >&2; exit 3");
    let (_, output, exit_code) = shell_output(&mut events).await;
    assert_eq!((output.as_str(), exit_code), ("bad", Some(3)));

    let question = client.submit("what happened?");
    let result = until(&mut events, |e| match e {
        SessionEvent::SubmissionEnded { id, outcome } if id == question => {
            Some((outcome.end, outcome.result))
        }
        _ => None,
    })
    .await;
    assert_eq!(result, (TurnEnd::Success, "seen".to_string()));
    let messages = server.requests()[0].body["messages"].clone();
    let texts: Vec<String> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"][0]["text"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        texts,
        [
            "<bash-input>echo hi; ls</bash-input>\n<bash-stdout>hi\nmarker.txt</bash-stdout><bash-stderr></bash-stderr>",
            "<bash-input>echo bad >&2; exit 3</bash-input>\n<bash-stdout></bash-stdout><bash-stderr>bad</bash-stderr>",
            "what happened?",
        ]
    );
    // The log holds the notes too, so a resumed session still has them.
    let replayed = robota::session::replay::replay(&log_path).unwrap();
    let logged: Vec<String> = replayed.messages.iter().map(|m| m.text()).collect();
    assert_eq!(logged[..3], texts[..]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_commands_wait_behind_a_turn_and_abort_stops_one() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        anthropic::text_turn_held("busy answer", 4),
        anthropic::text_turn("next"),
    ]);
    let mut client = InteractiveSession::start(session(&server, dir.path()));
    let mut events = client.events().unwrap();
    let first = client.submit("first");
    until(&mut events, |e| {
        matches!(e, SessionEvent::TextDelta(_)).then_some(())
    })
    .await;
    client.run_shell("touch made-after-the-turn");
    let queued = until(&mut events, |e| match e {
        SessionEvent::SubmissionQueued(q) => Some(q.text),
        SessionEvent::ShellOutput { .. } => panic!("the command ran during a turn"),
        _ => None,
    })
    .await;
    assert_eq!(queued, "!touch made-after-the-turn");
    assert!(!dir.path().join("made-after-the-turn").exists());
    server.release_held();
    until(&mut events, |e| match e {
        SessionEvent::SubmissionEnded { id, .. } if id == first => Some(()),
        _ => None,
    })
    .await;
    let (command, _, exit_code) = shell_output(&mut events).await;
    assert_eq!(
        (command.as_str(), exit_code),
        ("touch made-after-the-turn", Some(0))
    );
    assert!(dir.path().join("made-after-the-turn").exists());

    // A long command is stopped by abort, and says so.
    client.run_shell("sleep 30");
    client.abort();
    let (_, output, exit_code) = shell_output(&mut events).await;
    assert_eq!(
        (output.as_str(), exit_code),
        ("Command interrupted by user", None)
    );
    let second = client.submit("second");
    until(&mut events, |e| match e {
        SessionEvent::SubmissionEnded { id, .. } if id == second => Some(()),
        _ => None,
    })
    .await;
    let body = server.requests()[1].body.to_string();
    assert!(
        body.contains("<bash-input>touch made-after-the-turn</bash-input>"),
        "{body}"
    );
    assert!(body.contains("<bash-input>sleep 30</bash-input>"), "{body}");
}
