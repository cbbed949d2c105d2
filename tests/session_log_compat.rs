//! Session logs already written by robota still load. `tests/fixtures/logs/` holds logs
//! written by real sessions against the loopback mock (a tool turn with permission answers,
//! a hook run, todos, usage and context, a retry and an error, rename, mode and model
//! changes, a shell note, a clear, an interrupted answer; a fork of it with a compaction),
//! each with `<name>.expected.json`: what replay and the session store made of it when it
//! was written. Replaying and listing them today must give the same.
//!
//! The fixtures were written by `run_scenario` with the code before the log lines became one
//! typed enum (commit cd2c742); never regenerate them to make a failing comparison pass.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use robota::core::ToolRegistry;
use robota::core::engine::EngineEvent;
use robota::core::hooks::HookConfig;
use robota::core::permission::{PermissionMode, PermissionPolicy};
use robota::core::{Block, StreamEvent};
use robota::providers::{AnthropicConfig, AnthropicProvider};
use robota::session::line::{LogEvent, LogLine};
use robota::session::log::{SessionHeader, SessionLog};
use robota::session::replay::{ReplayedSession, replay};
use robota::session::store::{SessionStore, SessionSummary};
use robota::session::{PermissionAnswer, Session, SessionConfig, SessionUpdate};
use serde_json::{Value, json};
use support::{MockServer, anthropic, harness::fast_retry};
use tokio_util::sync::CancellationToken;

/// Where the fixture project's paths point in the stored logs.
const FIXTURE_CWD: &str = "/work/fixture-project";
const FIXTURES: [&str; 2] = ["tool_turn", "forked_compacted"];

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/logs")
}

/// What replay and the store made of a log, as JSON to compare and store.
fn observed(replayed: &ReplayedSession, summary: &SessionSummary) -> Value {
    json!({
        "replay": {
            "header": {
                "session_id": replayed.header.session_id,
                "cwd": replayed.header.cwd,
                "created": replayed.header.created,
                "version": replayed.header.version,
                "model": replayed.header.model,
                "provider": replayed.header.provider,
                "forked_from": replayed.header.forked_from,
            },
            "messages": replayed.messages,
            "name": replayed.name,
            "mode": replayed.mode,
            "model": replayed.model,
            "todos": replayed.todos,
            "warnings": replayed.warnings,
            "last_uuid": replayed.last_uuid,
            "line_count": replayed.line_count,
            "message_lines": replayed.message_lines,
        },
        "summary": {
            "id": summary.id,
            "cwd": summary.cwd,
            "name": summary.name,
            "first_prompt": summary.first_prompt,
            "created": summary.created,
            "message_count": summary.message_count,
        },
    })
}

/// Copies a stored log into a fresh `$ROBOTA_HOME` and reads it back both ways.
fn load(name: &str) -> Value {
    let source = fixture_dir().join(format!("{name}.jsonl"));
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().to_path_buf());
    let dir = store.project_dir(Path::new(FIXTURE_CWD));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(source.file_name().unwrap());
    std::fs::copy(&source, &path).unwrap();
    let replayed = replay(&path).unwrap();
    let listed = store.list(Path::new(FIXTURE_CWD));
    assert_eq!(listed.len(), 1, "{name}");
    assert_eq!(listed[0].path, path);
    observed(&replayed, &listed[0])
}

#[test]
fn logs_written_by_earlier_versions_replay_and_list_the_same() {
    for name in FIXTURES {
        let expected =
            std::fs::read_to_string(fixture_dir().join(format!("{name}.expected.json"))).unwrap();
        let expected: Value = serde_json::from_str(&expected).unwrap();
        assert_eq!(load(name), expected, "{name}");
    }
}

/// Every line robota wrote is a known `LogLine` (no unknown line or event kinds), and the
/// typed writer writes it back byte for byte.
#[test]
fn every_stored_line_is_a_known_log_line_written_back_unchanged() {
    for name in FIXTURES {
        let text = std::fs::read_to_string(fixture_dir().join(format!("{name}.jsonl"))).unwrap();
        for (index, raw) in text.lines().enumerate() {
            let line: LogLine = serde_json::from_str(raw)
                .unwrap_or_else(|e| panic!("{name} line {}: {e}\n{raw}", index + 1));
            let unknown = match &line {
                LogLine::Unknown => true,
                LogLine::Event(event) => event.event == LogEvent::Unknown,
                _ => false,
            };
            assert!(!unknown, "{name} line {}: {raw}", index + 1);
            assert_eq!(serde_json::to_string(&line).unwrap(), raw, "{name}");
        }
    }
}

/// A resumed fixture goes on where it stopped: the chain, the numbering and the name.
#[test]
fn a_stored_log_can_be_appended_to_and_replayed() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("tool_turn.jsonl");
    std::fs::copy(fixture_dir().join("tool_turn.jsonl"), &path).unwrap();
    let before = replay(&path).unwrap();
    let log = SessionLog::open_append(&path, &before).unwrap();
    let next = robota::core::Message::user_text("and now?");
    log.append_message(&next, Default::default()).unwrap();
    let after = replay(&path).unwrap();
    assert_eq!(after.messages.len(), before.messages.len() + 1);
    assert_eq!(after.messages.last(), Some(&next));
    assert_eq!(after.message_lines, before.message_lines + 1);
    assert_eq!(after.name, before.name);
    assert!(after.warnings.is_empty(), "{:?}", after.warnings);
    let text = std::fs::read_to_string(&path).unwrap();
    // The name is repeated after the first appended line; the message comes before it.
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let last = lines.iter().rfind(|line| line["type"] == "user").unwrap();
    assert_eq!(lines.last().unwrap()["event"], "rename");
    assert_eq!(last["parentUuid"], json!(before.last_uuid));
    assert_eq!(last["seq"], json!(before.message_lines + 1));
}

fn provider(server: &MockServer) -> Arc<AnthropicProvider> {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = server.base_url();
    config.retry = fast_retry(1);
    Arc::new(AnthropicProvider::new(config).unwrap())
}

/// Answers permission requests from a script and cancels the turn at the first text
/// delta when asked to.
struct Client {
    answers: Mutex<Vec<PermissionAnswer>>,
    cancel_on_text: Mutex<Option<CancellationToken>>,
}

impl Client {
    fn sink(&self, update: SessionUpdate) {
        match update {
            SessionUpdate::PermissionAsked { responder, .. } => {
                let answer = self.answers.lock().unwrap().remove(0);
                responder.send(answer).unwrap();
            }
            SessionUpdate::Engine(EngineEvent::Stream(StreamEvent::TextDelta(_))) => {
                if let Some(cancel) = self.cancel_on_text.lock().unwrap().take() {
                    cancel.cancel();
                }
            }
            _ => {}
        }
    }
}

/// The scenario of the fixtures, run by today's code: each written log as `(fixture name,
/// text with the project path replaced by FIXTURE_CWD)`.
async fn run_scenario() -> Vec<(&'static str, String)> {
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().to_path_buf();
    let home = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            Some("Let me set things up."),
            &[
                ("toolu_01", "Bash", json!({"command": "touch made.txt"})),
                ("toolu_02", "Bash", json!({"command": "rm -rf build"})),
                (
                    "toolu_03",
                    "TodoWrite",
                    json!({"todos": [
                        {"content": "make the file", "status": "completed", "activeForm": "Making the file"},
                        {"content": "clean up", "status": "pending", "activeForm": "Cleaning up"},
                    ]}),
                ),
            ],
        ),
        anthropic::error_status(529, "overloaded_error", "Overloaded", Some("0")),
        anthropic::text_turn("Made the file; left the build."),
        anthropic::text_turn("Hello again."),
        anthropic::text_turn_held("A long answer that is cut short by the user", 4),
        anthropic::error_status(400, "invalid_request_error", "prompt is too long", None),
        // The compaction that answer starts is refused too: the turn ends with the error.
        anthropic::error_status(400, "invalid_request_error", "prompt is too long", None),
    ]);
    // The header as `robota` itself wrote it before this change (nanosecond timestamps).
    let header = SessionHeader {
        session_id: "0f7c2a9e-1111-4c5d-9e2f-000000000001".into(),
        cwd: cwd.clone(),
        created: jiff::Timestamp::now().to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        model: "claude-sonnet-4-5".into(),
        provider: "anthropic".into(),
        forked_from: None,
        git_branch: None,
    };
    let log = SessionLog::create(home.path(), &header).unwrap();
    let path = log.path().to_path_buf();
    let (hooks, warnings) = HookConfig::from_settings(&json!({"hooks": {"PostToolUse": [
        {"matcher": "TodoWrite", "hooks": [{"type": "command", "command": "echo noted"}]}
    ]}}));
    assert!(warnings.is_empty(), "{warnings:?}");
    let tools = ToolRegistry::new(robota::tools::default_tools(&cwd));
    let mut session = Session::new(
        SessionConfig {
            session_id: header.session_id.clone(),
            cwd: cwd.clone(),
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
        provider(&server),
        tools,
        PermissionPolicy {
            mode: PermissionMode::Default,
            ..PermissionPolicy::default()
        },
        Some(log),
    )
    .with_hooks(hooks, cwd.clone());
    let client = Client {
        answers: Mutex::new(vec![
            PermissionAnswer::Allow,
            PermissionAnswer::Deny(Some("keep the build".into())),
        ]),
        cancel_on_text: Mutex::new(None),
    };
    let sink = |update| client.sink(update);
    let never = CancellationToken::new();

    let prompt = vec![Block::text("make a file and clean the build")];
    session.run_turn(prompt, &sink, &never).await;
    session.rename("fixture work".into());
    session.set_mode(PermissionMode::AcceptEdits);
    session.record_user_note(
        "<bash-input>ls</bash-input>\n<bash-stdout>made.txt</bash-stdout><bash-stderr></bash-stderr>"
            .into(),
    );
    // The `clear` line as sessions before `/clear` started a new session wrote it (the
    // history went on in the same log).
    session.log_event(robota::session::line::LogEvent::Clear {});
    session.set_model("claude-opus-4-1".into(), 200_000);
    session
        .run_turn(vec![Block::text("hello")], &sink, &never)
        .await;
    let cancel = CancellationToken::new();
    *client.cancel_on_text.lock().unwrap() = Some(cancel.clone());
    session
        .run_turn(vec![Block::text("tell me a long story")], &sink, &cancel)
        .await;
    server.release_held();
    session
        .run_turn(vec![Block::text("one more")], &sink, &never)
        .await;
    session.rename("fixture work, done".into());
    drop(session);

    // A fork of it (as `--fork-session` makes), resumed and compacted.
    let store = SessionStore::new(home.path().to_path_buf());
    let fork = store
        .fork(&path, "0f7c2a9e-2222-4c5d-9e2f-000000000002", &cwd)
        .unwrap();
    let log = SessionLog::open_append(&fork, &replay(&fork).unwrap()).unwrap();
    log.append_compact_boundary("We made a file and said hello.")
        .unwrap();
    log.append_message(
        &robota::core::Message::user_text("after the summary"),
        Default::default(),
    )
    .unwrap();
    log.append_rename("the fork").unwrap();
    drop(log);

    let cwd_text = cwd.to_string_lossy().into_owned();
    [("tool_turn", &path), ("forked_compacted", &fork)]
        .into_iter()
        .map(|(name, source)| {
            let text = std::fs::read_to_string(source).unwrap();
            (name, text.replace(&cwd_text, FIXTURE_CWD))
        })
        .collect()
}

/// The keys of each line, with the line's kind: the shape of a log without its ids,
/// times and durations.
fn shape(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|line| {
            let line: Value = serde_json::from_str(line).unwrap();
            let mut keys: Vec<String> = line.as_object().unwrap().keys().cloned().collect();
            keys.insert(0, format!("{}/{}", line["type"], line["event"]));
            keys
        })
        .collect()
}

/// Today's writer writes the same lines, in the same order and shape, as the code that
/// wrote the fixtures — plus the `resume_state` line it now writes after each compaction
/// boundary (which older code skips as an unknown event), left out of the comparison.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_session_today_writes_the_stored_shape() {
    const RESUME_STATE: &str = "\"event\"/\"resume_state\"";
    for (name, text) in run_scenario().await {
        let stored = std::fs::read_to_string(fixture_dir().join(format!("{name}.jsonl"))).unwrap();
        let today = shape(&text);
        let boundaries = today.iter().filter(|l| l[0].contains("compact_boundary"));
        let states = today.iter().filter(|l| l[0] == RESUME_STATE);
        assert_eq!(boundaries.count(), states.count(), "{name}");
        let today: Vec<_> = today.into_iter().filter(|l| l[0] != RESUME_STATE).collect();
        assert_eq!(today, shape(&stored), "{name}");
    }
}
