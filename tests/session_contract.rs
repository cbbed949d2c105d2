//! The contract between a session and its clients: the exact event sequence an SDK client
//! receives for each kind of submission — a prompt with tools, a slash command, an unknown
//! command, a `!command`, an interrupted turn, a queued prompt — and the typed error each
//! failure carries. Over the real Anthropic adapter and a loopback mock.

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::time::Duration;

use robota::core::hooks::HookConfig;
use robota::core::permission::PermissionMode;
use robota::sdk::{
    ErrorKind, InteractiveSession, Outcome, ProviderEndpoint, SessionEvent, Submission,
    SubmissionId, TurnEnd, TurnError,
};
use robota::session::Session;
use robota::session::log::{SessionHeader, SessionLog};
use serde_json::json;
use support::session::anthropic_session;
use support::{MockResponse, MockServer, anthropic};
use tokio::sync::mpsc::UnboundedReceiver;

fn session_at(base_url: String, cwd: &std::path::Path) -> Session {
    session_in_mode(base_url, cwd, PermissionMode::BypassPermissions)
}

fn session_in_mode(base_url: String, cwd: &std::path::Path, mode: PermissionMode) -> Session {
    anthropic_session(base_url, cwd, mode, None)
}

fn start(
    session: Session,
    base_url: &str,
) -> (InteractiveSession, UnboundedReceiver<SessionEvent>) {
    let mut client = InteractiveSession::start_with_endpoint(
        session,
        ProviderEndpoint {
            provider: "anthropic".into(),
            base_url: base_url.to_string(),
            base_url_source: Some("ANTHROPIC_BASE_URL".into()),
            key_source: Some("ANTHROPIC_API_KEY".into()),
        },
    );
    let events = client.events().unwrap();
    (client, events)
}

/// A short, stable name for an event (what a client switches on), with the fields that
/// matter for ordering.
fn name(event: &SessionEvent) -> String {
    match event {
        SessionEvent::State(s) => format!(
            "State(running={}, queue={})",
            s.running.map_or("-".to_string(), |id| id.to_string()),
            s.queue.len()
        ),
        SessionEvent::SubmissionQueued(q) => format!("SubmissionQueued({} {:?})", q.id, q.text),
        SessionEvent::SubmissionDropped(q) => format!("SubmissionDropped({} {:?})", q.id, q.text),
        SessionEvent::SubmissionStarted { id, submission } => {
            format!("SubmissionStarted({id} {:?})", submission.text())
        }
        SessionEvent::SubmissionEnded { id, outcome } => {
            let end = match &outcome.end {
                TurnEnd::Error(e) => format!("Error({})", e.kind.as_str()),
                other => format!("{other:?}"),
            };
            format!("SubmissionEnded({id} {end})")
        }
        SessionEvent::TextDelta(_) => "TextDelta".into(),
        SessionEvent::ThinkingDelta(_) => "ThinkingDelta".into(),
        SessionEvent::ToolUseStreaming { name, .. } => format!("ToolUseStreaming({name})"),
        SessionEvent::ToolInputDelta { .. } => "ToolInputDelta".into(),
        SessionEvent::AssistantMessage { .. } => "AssistantMessage".into(),
        SessionEvent::ToolStarted { name, .. } => format!("ToolStarted({name})"),
        SessionEvent::ToolFinished { name, is_error, .. } => {
            format!("ToolFinished({name}, error={is_error})")
        }
        SessionEvent::ToolResults(_) => "ToolResults".into(),
        SessionEvent::PermissionRequest(r) => format!("PermissionRequest({})", r.tool_name),
        SessionEvent::PermissionWithdrawn { tool_use_id } => {
            format!("PermissionWithdrawn({tool_use_id})")
        }
        SessionEvent::PermissionDenied { tool_name, .. } => {
            format!("PermissionDenied({tool_name})")
        }
        SessionEvent::Retrying { .. } => "Retrying".into(),
        SessionEvent::AttemptDiscarded => "AttemptDiscarded".into(),
        SessionEvent::Context(_) => "Context".into(),
        SessionEvent::Usage { .. } => "Usage".into(),
        SessionEvent::CommandOutput { id, command, .. } => {
            format!("CommandOutput({id} /{command})")
        }
        SessionEvent::RewindPoints { id, points } => {
            format!("RewindPoints({id} {})", points.len())
        }
        SessionEvent::Rewound { id, rewound } => {
            format!("Rewound({id} {})", rewound.action.as_str())
        }
        SessionEvent::ShellOutput { id, exit_code, .. } => {
            format!("ShellOutput({id} exit={exit_code:?})")
        }
        SessionEvent::ShellOutputTail { id, lines } => {
            format!("ShellOutputTail({id} {})", lines.len())
        }
        SessionEvent::ToolOutputTail { lines, .. } => format!("ToolOutputTail({})", lines.len()),
        SessionEvent::SteeringSent(sent) => format!(
            "SteeringSent({})",
            sent.iter()
                .map(|s| s.id.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
        SessionEvent::Notice(_) => "Notice".into(),
        SessionEvent::Attached(files) => format!("Attached({files:?})"),
        SessionEvent::Warning(_) => "Warning".into(),
        SessionEvent::Subagent {
            agent_type, event, ..
        } => format!("Subagent({agent_type}: {})", name(event)),
        SessionEvent::HookStarted { hook_name, .. } => format!("HookStarted({hook_name})"),
        SessionEvent::HookFinished(r) => format!("HookFinished({})", r.hook_name),
        SessionEvent::CompactStarted { trigger } => format!("CompactStarted({trigger:?})"),
        SessionEvent::Compacted { trigger, .. } => format!("Compacted({trigger:?})"),
    }
}

/// Every event until `last` has ended (text deltas folded into one name).
async fn until_ended(
    events: &mut UnboundedReceiver<SessionEvent>,
    last: SubmissionId,
) -> (Vec<String>, Vec<SessionEvent>) {
    let mut names: Vec<String> = Vec::new();
    let mut all = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let event = events.recv().await.expect("the session ended early");
            let n = name(&event);
            let done = matches!(&event, SessionEvent::SubmissionEnded { id, .. } if *id == last);
            // Runs of deltas count once.
            let delta = n == "TextDelta" || n == "ToolInputDelta";
            if !(delta && names.last().is_some_and(|l| *l == n)) {
                names.push(n);
            }
            all.push(event);
            if done {
                break;
            }
        }
    })
    .await
    .expect("the submission never ended");
    (names, all)
}

/// The outcome of the submission `until_ended` waited for (its last event).
fn outcome(all: &[SessionEvent]) -> &Outcome {
    match all.last() {
        Some(SessionEvent::SubmissionEnded { outcome, .. }) => outcome,
        other => panic!("not an end: {other:?}"),
    }
}

/// The error that submission ended with.
fn failure(all: &[SessionEvent]) -> &TurnError {
    match &outcome(all).end {
        TurnEnd::Error(error) => error,
        other => panic!("ended {other:?}"),
    }
}

/// Waits for the first streamed text of the running turn.
async fn first_text(events: &mut UnboundedReceiver<SessionEvent>) {
    tokio::time::timeout(Duration::from_secs(20), async {
        while !matches!(events.recv().await, Some(SessionEvent::TextDelta(_))) {}
    })
    .await
    .expect("the answer starts streaming");
}

/// The log of a new session `id` in `cwd`, under `home`, with its header.
fn new_log(cwd: &std::path::Path, home: &std::path::Path, id: &str) -> (SessionHeader, SessionLog) {
    let header = SessionHeader::new(id, cwd, "claude-sonnet-4-5", "anthropic");
    let log = SessionLog::create(home, &header).unwrap();
    (header, log)
}

/// Drops the state events the session sends once at its start.
async fn skip_start(events: &mut UnboundedReceiver<SessionEvent>) {
    let first = events.recv().await.unwrap();
    assert_eq!(name(&first), "State(running=-, queue=0)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_with_tools() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            Some("Reading."),
            &[("t1", "Read", json!({"file_path": "a.txt"}))],
        ),
        anthropic::text_turn("It says alpha."),
    ]);
    let (client, mut events) = start(
        session_at(server.base_url(), dir.path()),
        &server.base_url(),
    );
    skip_start(&mut events).await;
    let id = client.submit("what is in a.txt?");
    let (names, all) = until_ended(&mut events, id).await;
    assert_eq!(
        names,
        [
            "State(running=#1, queue=0)",
            "SubmissionStarted(#1 \"what is in a.txt?\")",
            "TextDelta",
            "ToolUseStreaming(Read)",
            "ToolInputDelta",
            "AssistantMessage",
            "Usage",
            "State(running=#1, queue=0)",
            "Context",
            "State(running=#1, queue=0)",
            "ToolStarted(Read)",
            "ToolFinished(Read, error=false)",
            "ToolResults",
            "TextDelta",
            "AssistantMessage",
            "Usage",
            "State(running=#1, queue=0)",
            "Context",
            "State(running=#1, queue=0)",
            "SubmissionEnded(#1 Success)",
        ]
    );
    let outcome = outcome(&all);
    assert_eq!(
        (outcome.rounds, outcome.result.as_str()),
        (2, "It says alpha.")
    );
    // The state after the turn carries the whole usage and no running submission.
    let state = events.recv().await.unwrap();
    let SessionEvent::State(state) = state else {
        panic!("the state follows the end: {state:?}");
    };
    assert_eq!(state.running, None);
    assert!(state.usage.output_tokens > 0);
    assert!(state.cost_usd.is_some_and(|c| c > 0.0), "{state:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_unknown_commands_and_shell_commands() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![]);
    let (client, mut events) = start(
        session_at(server.base_url(), dir.path()),
        &server.base_url(),
    );
    skip_start(&mut events).await;

    let id = client.submit("/model claude-haiku-4-5");
    let (names, all) = until_ended(&mut events, id).await;
    assert_eq!(
        names,
        [
            "State(running=#1, queue=0)",
            "SubmissionStarted(#1 \"/model claude-haiku-4-5\")",
            "State(running=#1, queue=0)",
            "CommandOutput(#1 /model)",
            "SubmissionEnded(#1 Success)",
        ]
    );
    let SessionEvent::State(state) = &all[2] else {
        panic!()
    };
    assert_eq!(
        state.model, "claude-haiku-4-5",
        "the state carries the new model"
    );

    let id = client.submit("/foo bar");
    let (names, all) = until_ended(&mut events, id).await;
    assert_eq!(
        names,
        [
            "State(running=-, queue=0)",
            "State(running=#2, queue=0)",
            "SubmissionStarted(#2 \"/foo\")",
            "SubmissionEnded(#2 Error(unknown_command))",
        ]
    );
    let error = failure(&all);
    assert_eq!(
        error.message,
        "Unknown command: /foo — /help lists the commands"
    );

    let id = client.run_shell("echo hi");
    let (names, all) = until_ended(&mut events, id).await;
    // A tail of the running command's output may come or not, by timing (a loaded machine
    // sees the line before the exit): it is progress, not part of the contract here.
    let names: Vec<String> = names
        .into_iter()
        .filter(|n| !n.starts_with("ShellOutputTail("))
        .collect();
    assert_eq!(
        names,
        [
            "State(running=-, queue=0)",
            "State(running=#3, queue=0)",
            "SubmissionStarted(#3 \"!echo hi\")",
            "ShellOutput(#3 exit=Some(0))",
            "SubmissionEnded(#3 Success)",
        ]
    );
    let outcome = outcome(&all);
    assert_eq!(outcome.result, "hi");
    assert!(
        server.requests().is_empty(),
        "none of these called the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_prompt_waits_and_an_interrupt_drops_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        anthropic::text_turn_held("first answer is long", 4),
        anthropic::text_turn("second answer"),
        anthropic::text_turn_held("third answer is long", 4),
    ]);
    let (client, mut events) = start(
        session_at(server.base_url(), dir.path()),
        &server.base_url(),
    );
    skip_start(&mut events).await;
    let first = client.submit("first");
    // Wait for the stream to start, then queue behind it; /help runs at once meanwhile.
    first_text(&mut events).await;
    let second = client.submit("second");
    let help = client.submit("/help");
    let (names, _) = until_ended(&mut events, help).await;
    assert_eq!(
        names,
        [
            "State(running=#1, queue=1)",
            "SubmissionQueued(#2 \"second\")",
            "SubmissionStarted(#3 \"/help\")",
            "CommandOutput(#3 /help)",
            "SubmissionEnded(#3 Success)",
        ]
    );
    server.release_held();
    let (names, _) = until_ended(&mut events, second).await;
    let first_end = names
        .iter()
        .position(|n| n == "SubmissionEnded(#1 Success)")
        .expect("the first ends");
    let second_start = names
        .iter()
        .position(|n| n == "SubmissionStarted(#2 \"second\")")
        .expect("the queued prompt starts");
    assert!(first_end < second_start, "{names:?}");
    assert_eq!(names[second_start - 1], "State(running=#2, queue=0)");
    assert_eq!(names.last().unwrap(), "SubmissionEnded(#2 Success)");
    let _ = first;

    // An interrupt ends the running turn as Interrupted and drops what waits.
    let third = client.submit("third");
    first_text(&mut events).await;
    let fourth = client.submit("fourth");
    client.abort();
    let (names, all) = until_ended(&mut events, third).await;
    server.release_held();
    let tail: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .rev()
        .take(5)
        .rev()
        .collect();
    assert_eq!(
        tail,
        [
            "SubmissionQueued(#5 \"fourth\")",
            "State(running=#4, queue=0)",
            "SubmissionDropped(#5 \"fourth\")",
            "AssistantMessage",
            "SubmissionEnded(#4 Interrupted)",
        ],
        "{names:?}"
    );
    let outcome = outcome(&all);
    assert!(
        !outcome.result.is_empty(),
        "the partial answer is the result"
    );
    let _ = fourth;
    assert_eq!(
        server.requests().len(),
        3,
        "the dropped prompt was never sent"
    );
}

/// The end of one prompt against a server that answers `response`.
async fn error_of(response: MockResponse) -> TurnError {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![response]);
    let (client, mut events) = start(
        session_at(server.base_url(), dir.path()),
        &server.base_url(),
    );
    let id = client.submit("hi");
    let (_, all) = until_ended(&mut events, id).await;
    failure(&all).clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_provider_failure_reaches_clients_typed() {
    let cases = [
        (
            401,
            "authentication_error",
            "bad key",
            ErrorKind::Auth,
            "ANTHROPIC_API_KEY",
        ),
        (
            403,
            "permission_error",
            "not allowed",
            ErrorKind::Permission,
            "ANTHROPIC_API_KEY",
        ),
        (
            429,
            "rate_limit_error",
            "slow down",
            ErrorKind::RateLimit,
            "ROBOTA_MAX_RETRIES",
        ),
        (
            529,
            "overloaded_error",
            "busy",
            ErrorKind::Overloaded,
            "/model",
        ),
        (
            400,
            "invalid_request_error",
            "prompt is too long: 300000 tokens > 200000 maximum",
            ErrorKind::ContextTooLong,
            "/compact",
        ),
        (
            400,
            "invalid_request_error",
            "bad field",
            ErrorKind::InvalidRequest,
            "settings",
        ),
        (500, "api_error", "boom", ErrorKind::Server, "try again"),
    ];
    for (status, kind, message, want, hint) in cases {
        let error = error_of(anthropic::error_status(status, kind, message, None)).await;
        assert_eq!(
            (error.kind, error.status),
            (want, Some(status)),
            "{error:?}"
        );
        assert!(error.message.contains(message), "{error:?}");
        assert!(
            error.hint.as_deref().unwrap_or("").contains(hint),
            "{status}: {error:?}"
        );
    }
    let cut = error_of(anthropic::text_turn_cut("partial", 3)).await;
    assert_eq!(cut.kind, ErrorKind::StreamCut, "{cut:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_names_the_url_and_its_variable() {
    let dir = tempfile::tempdir().unwrap();
    let url = support::refused_url();
    let (client, mut events) = start(session_at(url.clone(), dir.path()), &url);
    let id = client.submit("hi");
    let (_, all) = until_ended(&mut events, id).await;
    let error = failure(&all);
    assert_eq!(error.kind, ErrorKind::Network);
    assert_eq!(
        error.line(),
        format!(
            "Cannot reach {url}: connection refused — is the server running? (check ANTHROPIC_BASE_URL)"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_blocked_by_a_hook_is_a_hook_blocked_error() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![]);
    let (hooks, errors) = HookConfig::from_settings(&json!({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "echo 'no secrets here' >&2; exit 2"}]}
    ]}}));
    assert!(errors.is_empty(), "{errors:?}");
    let session = session_at(server.base_url(), dir.path()).with_hooks(hooks, dir.path().into());
    let (client, mut events) = start(session, &server.base_url());
    let id = client.submit(Submission::Prompt("my password is hunter2".into()));
    let (names, all) = until_ended(&mut events, id).await;
    assert_eq!(
        names.last().unwrap(),
        "SubmissionEnded(#1 Error(hook_blocked))"
    );
    let error = failure(&all);
    assert!(error.message.contains("no secrets here"), "{error:?}");
    assert!(
        server.requests().is_empty(),
        "the prompt never reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_requests_carry_the_tools_own_preview() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crlf.txt");
    std::fs::write(&file, "one\r\ntwo\r\nthree\r\n").unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("r1", "Read", json!({"file_path": "crlf.txt"}))]),
        // Matches nothing: fails before anyone is asked.
        anthropic::tool_turn(
            None,
            &[(
                "e1",
                "Edit",
                json!({"file_path": "crlf.txt", "old_string": "four", "new_string": "4"}),
            )],
        ),
        // An LF old_string in a CRLF file: Edit matches it as CRLF and keeps CRLF.
        anthropic::tool_turn(
            None,
            &[(
                "e2",
                "Edit",
                json!({"file_path": "crlf.txt", "old_string": "two\nthree", "new_string": "2\n3"}),
            )],
        ),
        anthropic::text_turn("done"),
    ]);
    let (client, mut events) = start(
        session_in_mode(server.base_url(), dir.path(), PermissionMode::Default),
        &server.base_url(),
    );
    let id = client.submit("edit it");
    let mut asked = Vec::new();
    let mut failed_before_asking = None;
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match events.recv().await.unwrap() {
                SessionEvent::PermissionRequest(mut request) => {
                    let Some(robota::core::ToolDisplay::FileDiff { before, after, .. }) =
                        request.preview.clone()
                    else {
                        panic!("an Edit request carries its diff: {request:?}");
                    };
                    assert_eq!(before.as_deref(), Some("one\r\ntwo\r\nthree\r\n"));
                    assert_eq!(
                        request.choices,
                        [
                            robota::sdk::PermissionChoice::Allow,
                            robota::sdk::PermissionChoice::AllowAlways {
                                rule: request.suggested_rule.clone()
                            },
                            robota::sdk::PermissionChoice::Deny,
                        ]
                    );
                    asked.push((request.tool_use_id.clone(), after));
                    request.respond(robota::sdk::PermissionAnswer::Allow);
                }
                SessionEvent::ToolFinished {
                    id: tool_id,
                    is_error: true,
                    content,
                    ..
                } if tool_id == "e1" => failed_before_asking = Some(content),
                SessionEvent::SubmissionEnded { id: ended, .. } if ended == id => break,
                _ => {}
            }
        }
    })
    .await
    .unwrap();
    let error = failed_before_asking.expect("the unmatched Edit ended as a failed call");
    assert!(error.contains("String to replace not found"), "{error}");
    assert_eq!(
        asked.len(),
        1,
        "only the Edit that can apply was asked about"
    );
    let (tool_use_id, previewed) = &asked[0];
    assert_eq!(tool_use_id, "e2");
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(&written, previewed, "what was approved is what was written");
    assert_eq!(written, "one\r\n2\r\n3\r\n");
    // The model read the tool's own error for the unmatched Edit.
    let body = server.requests()[2].body.to_string();
    assert!(body.contains("String to replace not found"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_that_stops_being_written_is_a_failure_not_a_success() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let header = SessionHeader::new("contract", dir.path(), "claude-sonnet-4-5", "anthropic");
    let path = SessionLog::create(home.path(), &header)
        .unwrap()
        .path()
        .to_path_buf();
    let replayed = robota::session::replay::replay(&path).unwrap();
    // The disk is full from now on: every write to the log fails with ENOSPC.
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("/dev/full", &path).unwrap();
    let log = SessionLog::open_append(&path, &replayed).unwrap();
    let server = MockServer::start(vec![anthropic::text_turn("answer")]);
    let session = anthropic_session(
        server.base_url(),
        dir.path(),
        PermissionMode::Default,
        Some(log),
    );
    let (client, mut events) = start(session, &server.base_url());
    let id = client.submit("hi");
    let (names, all) = until_ended(&mut events, id).await;
    assert_eq!(
        names.last().unwrap(),
        "SubmissionEnded(#1 Error(write_failure))"
    );
    let error = failure(&all);
    assert!(
        error.message.contains(&path.display().to_string()),
        "{error:?}"
    );
    assert!(error.message.contains("No space left"), "{error:?}");
    assert_eq!(outcome(&all).result, "answer", "the answer itself is kept");
}

/// The modes the state reports after each of `n` Shift+Tab presses.
async fn cycled_modes(start_mode: PermissionMode, n: usize) -> Vec<PermissionMode> {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![]);
    let session = session_in_mode(server.base_url(), dir.path(), start_mode);
    let (client, mut events) = start(session, &server.base_url());
    skip_start(&mut events).await;
    let mut modes = Vec::new();
    for _ in 0..n {
        client.cycle_mode();
        let mode = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                if let Some(SessionEvent::State(state)) = events.recv().await {
                    return state.mode;
                }
            }
        })
        .await
        .unwrap();
        modes.push(mode);
    }
    modes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_tab_reaches_bypass_only_when_the_session_started_in_it() {
    use PermissionMode::*;
    assert_eq!(
        cycled_modes(Default, 4).await,
        [AcceptEdits, Plan, Default, AcceptEdits]
    );
    assert_eq!(
        cycled_modes(BypassPermissions, 4).await,
        [Default, AcceptEdits, Plan, BypassPermissions]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_starts_a_new_session_and_the_old_one_stays_resumable() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (header, log) = new_log(
        dir.path(),
        home.path(),
        "11111111-1111-4111-8111-111111111111",
    );
    let old_path = log.path().to_path_buf();
    let server = MockServer::start(vec![
        anthropic::text_turn("first answer"),
        anthropic::text_turn("fresh answer"),
    ]);
    let session = anthropic_session(
        server.base_url(),
        dir.path(),
        PermissionMode::Default,
        Some(log),
    );
    let (client, mut events) = start(session, &server.base_url());
    let first = client.submit("remember the number 42");
    until_ended(&mut events, first).await;
    let clear = client.submit("/clear");
    let (names, all) = until_ended(&mut events, clear).await;
    assert_eq!(
        names.last().unwrap(),
        "SubmissionEnded(#2 Success)",
        "{all:?}"
    );
    let state = all
        .iter()
        .rev()
        .find_map(|e| match e {
            SessionEvent::State(s) => Some(s.clone()),
            _ => None,
        })
        .expect("the state after /clear");
    assert_ne!(state.session_id, header.session_id, "a new session");
    assert_eq!(state.usage.output_tokens, 0, "its counters start at zero");
    let again = client.submit("what now?");
    until_ended(&mut events, again).await;

    // The new request carries nothing of the cleared conversation.
    let body = server.requests()[1].body.to_string();
    assert!(!body.contains("42"), "{body}");
    // The old log keeps everything and ends with the clear; the new one holds the rest, and
    // is the project's latest session (what `robota -c` continues).
    let old = std::fs::read_to_string(&old_path).unwrap();
    assert!(
        old.contains("remember the number 42") && old.contains("\"clear\""),
        "{old}"
    );
    assert!(!old.contains("what now?"), "{old}");
    let store = robota::session::store::SessionStore::new(home.path().to_path_buf());
    let latest = store.latest(dir.path()).expect("a latest session");
    assert_eq!(latest.id, state.session_id);
    let replayed = robota::session::replay::replay(&latest.path).unwrap();
    let texts: Vec<String> = replayed.messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["what now?", "fresh answer"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_is_a_turn_like_submission_and_an_abort_leaves_the_history_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (_, log) = new_log(
        dir.path(),
        home.path(),
        "22222222-2222-4222-8222-222222222222",
    );
    let log_path = log.path().to_path_buf();
    let server = std::sync::Arc::new(MockServer::start(vec![
        anthropic::text_turn("first answer"),
        // The summary stalls after its head until the client goes away.
        anthropic::text_turn_held("a summary never finished", 3),
        anthropic::text_turn("answer with everything"),
        anthropic::text_turn("The user asked about 42."),
    ]));
    let session = anthropic_session(
        server.base_url(),
        dir.path(),
        PermissionMode::Default,
        Some(log),
    );
    let (client, mut events) = start(session, &server.base_url());
    skip_start(&mut events).await;
    let first = client.submit("remember the number 42");
    until_ended(&mut events, first).await;

    let compact = client.submit("/compact");
    tokio::time::timeout(Duration::from_secs(20), async {
        while !matches!(
            events.recv().await,
            Some(SessionEvent::CompactStarted { .. })
        ) {}
    })
    .await
    .expect("the compaction starts");
    let sent = tokio::task::spawn_blocking({
        let server = server.clone();
        move || server.wait_for_requests(2, Duration::from_secs(20))
    })
    .await
    .unwrap();
    assert!(sent, "the summary request is on its way");
    client.abort();
    let (names, _) = until_ended(&mut events, compact).await;
    server.release_held();
    assert_eq!(
        names.last().unwrap(),
        "SubmissionEnded(#2 Interrupted)",
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.starts_with("Compacted")),
        "{names:?}"
    );

    // Untouched: the next request carries the whole conversation; the log has no boundary.
    let again = client.submit("what number?");
    until_ended(&mut events, again).await;
    let body = server.requests()[2].body.to_string();
    assert!(
        body.contains("remember the number 42") && body.contains("first answer"),
        "{body}"
    );
    assert!(
        !std::fs::read_to_string(&log_path)
            .unwrap()
            .contains("compact_boundary")
    );

    // Run to its end: the events a client renders, in order.
    let compact = client.submit("/compact the number");
    let (names, all) = until_ended(&mut events, compact).await;
    let interesting: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !n.starts_with("State") && *n != "Usage")
        .collect();
    assert_eq!(
        interesting,
        [
            "SubmissionStarted(#4 \"/compact the number\")",
            "CompactStarted(Manual)",
            "Compacted(Manual)",
            "Context",
            "SubmissionEnded(#4 Success)",
        ]
    );
    let summary = all
        .iter()
        .find_map(|e| match e {
            SessionEvent::Compacted {
                summary,
                pre_tokens,
                post_tokens,
                ..
            } => Some((summary.clone(), *pre_tokens, *post_tokens)),
            _ => None,
        })
        .unwrap();
    assert_eq!(summary.0, "The user asked about 42.");
    // A conversation this short does not shrink (the summary's opening is longer than it):
    // both figures are the estimates around the compaction, never zero.
    assert!(summary.1 > 1_000 && summary.2 > 1_000, "{summary:?}");
    assert!(
        outcome(&all)
            .result
            .starts_with("Compacted the conversation: ")
    );
    client.close().await;
}

/// Waits for the event named `wanted`, returning the names seen up to it.
async fn until_named(events: &mut UnboundedReceiver<SessionEvent>, wanted: &str) -> Vec<String> {
    let mut names = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let event = events.recv().await.expect("the session ended early");
            names.push(name(&event));
            if names.last().is_some_and(|n| n == wanted) {
                break;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {wanted} in {names:?}"));
    names
}

/// Reads events until a state lists `id` among the steered texts held for the next call.
async fn until_steering_shows(
    events: &mut tokio::sync::mpsc::UnboundedReceiver<SessionEvent>,
    id: SubmissionId,
) {
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match events.recv().await {
                Some(SessionEvent::State(state)) if state.steering.iter().any(|s| s.id == id) => {
                    break;
                }
                Some(_) => {}
                None => panic!("the session ended before the steered text showed"),
            }
        }
    })
    .await
    .expect("the steered text shows in the state");
}

/// Text sent with `steer` while a tool runs goes with that tool's result into the model's
/// next call, in the same turn; text steered once the model makes no further call is
/// queued first and runs as a prompt after the turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steered_text_joins_the_next_call_or_waits_for_the_turns_end() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&gate)
            .status()
            .unwrap()
            .success()
    );
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "b1",
                "Bash",
                json!({"command": "read x < gate; echo through"}),
            )],
        ),
        anthropic::text_turn_held("Steered answer, and more of it.", 4),
        anthropic::text_turn("Leftover answer."),
    ]);
    let (client, mut events) = start(
        session_at(server.base_url(), dir.path()),
        &server.base_url(),
    );
    skip_start(&mut events).await;
    let id = client.submit("go");
    until_named(&mut events, "ToolStarted(Bash)").await;
    let steered = client.steer("use the fast path");
    // The session holds it for the next call (the state says so) before the tool ends.
    until_steering_shows(&mut events, steered).await;
    tokio::task::spawn_blocking(move || std::fs::write(gate, "x\n").unwrap());
    let names = until_named(&mut events, "ToolResults").await;
    assert_eq!(
        names[names.len() - 4..],
        [
            "ToolFinished(Bash, error=false)".to_string(),
            format!("SteeringSent({steered})"),
            "State(running=#1, queue=0)".to_string(),
            "ToolResults".to_string(),
        ]
    );
    first_text(&mut events).await;
    let late = client.steer("one more thing");
    // The turn must still be running when the session takes the late text in.
    until_steering_shows(&mut events, late).await;
    server.release_held();
    let (names, _) = until_ended(&mut events, id).await;
    assert!(
        names.contains(&format!("SubmissionQueued({late} \"one more thing\")")),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.starts_with("SteeringSent")),
        "{names:?}"
    );
    let (names, _) = until_ended(&mut events, late).await;
    assert!(
        names.contains(&format!("SubmissionStarted({late} \"one more thing\")")),
        "{names:?}"
    );
    // The second call read the steered text right after the tool result.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let messages = requests[1].body["messages"].as_array().unwrap();
    let last = &messages[messages.len() - 1]["content"];
    assert_eq!(last[0]["type"], "tool_result");
    assert!(last[0]["content"].to_string().contains("through"), "{last}");
    assert_eq!(last[1]["text"], "use the fast path");
    let third = requests[2].body["messages"].as_array().unwrap();
    assert_eq!(
        third[third.len() - 1]["content"][0]["text"],
        "one more thing"
    );
}
