//! Tests of the session log: create, append, lock, diagnostics and failures.

use super::*;
use crate::line::PermissionDecision;
use crate::replay::replay;
use robota_core::{Block, MessageState, Role, Usage};
use serde_json::{Value, json};

fn header(id: &str) -> SessionHeader {
    SessionHeader::new(id, Path::new("/home/u/my_repo"), "m", "anthropic")
}

fn lines(log: &SessionLog) -> Vec<Value> {
    let text = fs::read_to_string(log.path()).unwrap();
    assert!(text.ends_with('\n'));
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn a_log_has_one_writer_until_it_is_closed() {
    let home = tempfile::tempdir().unwrap();
    let log = SessionLog::create(home.path(), &header("locked-1")).unwrap();
    let path = log.path().to_path_buf();
    let replayed = replay(&path).unwrap();
    let err = SessionLog::open_append(&path, &replayed).unwrap_err();
    assert!(matches!(err, LogError::InUse { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("this robota process"), "{text}");
    assert!(text.contains("--fork-session"), "{text}");
    drop(log);
    let again = SessionLog::open_append(&path, &replayed).unwrap();
    again.append_rename("reopened").unwrap();
    assert!(fs::read_to_string(&path).unwrap().contains("reopened"));
}

#[test]
fn create_writes_the_header_under_the_project_dir_and_refuses_to_overwrite() {
    let home = tempfile::tempdir().unwrap();
    let mut h = header("abc-1");
    h.forked_from = Some("parent".into());
    let log = SessionLog::create(home.path(), &h).unwrap();
    assert_eq!(
        log.path(),
        home.path().join("projects/-home-u-my-repo/abc-1.jsonl")
    );
    let first = &lines(&log)[0];
    assert_eq!(first["type"], "session");
    assert_eq!(first["sessionId"], "abc-1");
    assert_eq!(first["cwd"], "/home/u/my_repo");
    assert_eq!(first["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(first["forkedFrom"], "parent");
    let created = first["created"].as_str().unwrap();
    assert!(created.parse::<jiff::Timestamp>().is_ok(), "{created}");
    assert!(created.ends_with('Z') && created.len() == 24, "{created}");
    assert_eq!(SessionHeader::from_line(first).unwrap(), h);

    let again = SessionLog::create(home.path(), &h).unwrap_err();
    assert!(matches!(again, LogError::AlreadyExists { .. }));
    assert!(again.to_string().contains("abc-1.jsonl"), "{again}");
    for bad in ["", "../x", "a/b", ".hidden"] {
        let err = SessionLog::create(home.path(), &header(bad)).unwrap_err();
        assert!(matches!(err, LogError::InvalidSessionId { .. }), "{bad:?}");
    }
}

#[test]
fn the_log_can_be_shared_between_tasks() {
    fn shareable<T: Send + Sync + 'static>(_: &T) {}
    let home = tempfile::tempdir().unwrap();
    let log = std::sync::Arc::new(SessionLog::create(home.path(), &header("t")).unwrap());
    shareable(&log);
    let writers: Vec<_> = (0..4)
        .map(|i| {
            let log = log.clone();
            std::thread::spawn(move || {
                for j in 0..50 {
                    let m = Message::user_text(format!("{i}-{j}"));
                    log.append_message(&m, MessageExtra::default()).unwrap();
                }
            })
        })
        .collect();
    writers.into_iter().for_each(|w| w.join().unwrap());
    let all = lines(&log);
    assert_eq!(all.len(), 201);
    let seqs: Vec<u64> = all[1..]
        .iter()
        .map(|l| l["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=200).collect::<Vec<u64>>());
    for pair in all[1..].windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
    }
}

#[cfg(unix)]
#[test]
fn files_are_0600_and_directories_0700() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let log = SessionLog::create(home.path(), &header("p")).unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(log.path()), 0o600);
    assert_eq!(mode(log.path().parent().unwrap()), 0o700);
    assert_eq!(mode(&home.path().join("projects")), 0o700);
}

#[test]
fn project_dir_names_follow_claude_code() {
    assert_eq!(
        project_dir_name(Path::new("/home/user/work/my-repo")),
        "-home-user-work-my-repo"
    );
    assert_eq!(project_dir_name(Path::new("/a b/c_d.e/한")), "-a-b-c-d-e--");
    let deep = format!("/{}", "segment/".repeat(60));
    let name = project_dir_name(Path::new(&deep));
    assert_eq!(name.len(), MAX_PROJECT_DIR_NAME + 17);
    assert_ne!(name, project_dir_name(Path::new(&format!("{deep}x"))));
    let home = tempfile::tempdir().unwrap();
    let log = SessionLog::create(
        home.path(),
        &SessionHeader::new("d", Path::new(&deep), "m", "p"),
    );
    assert!(log.is_ok(), "{log:?}");
}

#[test]
fn message_lines_have_claude_codes_shape_and_chain() {
    let home = tempfile::tempdir().unwrap();
    let log = SessionLog::create(home.path(), &header("s")).unwrap();
    let ask = Message::user_text("hi");
    let mut answer = Message::new(Role::Assistant, vec![Block::text("hello")]);
    answer.state = MessageState::Interrupted;
    log.append_message(&ask, MessageExtra::default()).unwrap();
    let extra = MessageExtra {
        model: Some("m".into()),
        stop_reason: Some("end_turn".into()),
    };
    log.append_message(&answer, extra).unwrap();
    let all = lines(&log);
    assert_eq!(all[1]["type"], "user");
    assert_eq!(all[1]["uuid"], ask.id.as_str());
    assert_eq!(all[1]["parentUuid"], Value::Null);
    assert_eq!(all[1]["sessionId"], "s");
    assert_eq!(all[1]["cwd"], "/home/u/my_repo");
    assert_eq!(
        all[1]["message"],
        json!({"role":"user","content":[{"type":"text","text":"hi"}]})
    );
    assert!(all[1].get("state").is_none());
    assert_eq!(all[2]["parentUuid"], ask.id.as_str());
    assert_eq!(all[2]["message"]["model"], "m");
    assert_eq!(all[2]["message"]["stop_reason"], "end_turn");
    assert_eq!(all[2]["state"], "interrupted");
}

/// ralph-wiggum's stop hook: `grep '"role":"assistant"' | tail -1`, then
/// `.message.content[] | select(.type=="text") | .text`.
#[test]
fn a_stop_hook_greps_the_last_assistant_text() {
    let home = tempfile::tempdir().unwrap();
    let log = SessionLog::create(home.path(), &header("r")).unwrap();
    for text in [
        "first answer",
        "said \"role\":\"assistant\" inside",
        "last answer",
    ] {
        let ask = Message::user_text(format!("user quoting \"role\":\"assistant\" {text}"));
        log.append_message(&ask, MessageExtra::default()).unwrap();
        let answer = Message::new(
            Role::Assistant,
            vec![
                Block::Thinking {
                    thinking: "hm".into(),
                    signature: String::new(),
                },
                Block::text(text),
            ],
        );
        log.append_message(&answer, MessageExtra::default())
            .unwrap();
        log.append_event(LogEvent::Usage {
            model: "m".into(),
            usage: Usage::default(),
            api_duration_ms: 1,
        })
        .unwrap();
    }
    let out = std::process::Command::new("grep")
        .arg(r#""role":"assistant""#)
        .arg(log.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let texts: Vec<&str> = last["message"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|block| block["type"] == "text")
        .map(|block| block["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, vec!["last answer"]);
}

#[test]
fn events_lead_with_type_event_session_and_time_then_their_fields() {
    let home = tempfile::tempdir().unwrap();
    let log = SessionLog::create(home.path(), &header("e")).unwrap();
    log.append_event(LogEvent::Permission {
        tool: "Bash".into(),
        tool_use_id: "t1".into(),
        decision: PermissionDecision::Deny,
        reason: "user refused".into(),
    })
    .unwrap();
    let event = &lines(&log)[1];
    let keys: Vec<&String> = event.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "type",
            "event",
            "sessionId",
            "timestamp",
            "tool",
            "tool_use_id",
            "decision",
            "reason"
        ]
    );
    assert_eq!(event["type"], "event");
    assert_eq!(event["event"], "permission");
    assert_eq!(event["sessionId"], "e");
    assert_eq!(event["decision"], "deny");
    let stamp = event["timestamp"].as_str().unwrap();
    assert!(stamp.ends_with('Z') && stamp.len() == 24, "{stamp}");
}

#[test]
fn a_failed_write_names_the_file_and_the_action() {
    let home = tempfile::tempdir().unwrap();
    let blocker = home.path().join("projects");
    fs::write(&blocker, "a file where the directory should be").unwrap();
    let err = SessionLog::create(home.path(), &header("w")).unwrap_err();
    assert!(
        matches!(
            err,
            LogError::Io {
                action: LogAction::CreateDir,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.path().unwrap().starts_with(&blocker), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("projects") && text.contains("cannot create its directory"),
        "{text}"
    );
}

#[test]
fn secrets_are_redacted_in_messages_and_events_and_nothing_else_changes() {
    let home = tempfile::tempdir().unwrap();
    let log = SessionLog::create(home.path(), &header("x")).unwrap();
    let call = Message::new(
        Role::Assistant,
        vec![Block::ToolUse {
            id: "t1".into(),
            name: "WebFetch".into(),
            input: json!({"url": "https://a", "headers": {"Authorization": "Bearer abc"}}),
        }],
    );
    log.append_message(&call, MessageExtra::default()).unwrap();
    log.append_event(LogEvent::ToolStart {
        tool: "Bash".into(),
        tool_use_id: "t2".into(),
        input: json!({"env": {"OPENAI_API_KEY": "x"}, "n": 1}),
    })
    .unwrap();
    log.append_event(LogEvent::Error {
        message: "key sk-ant-api03-abcdef123456 failed".into(),
        kind: robota_core::ProviderErrorKind::Auth,
        status: Some(401),
    })
    .unwrap();
    let all = lines(&log);
    assert_eq!(
        all[1]["message"]["content"][0],
        json!({"type":"tool_use","id":"t1","name":"WebFetch",
               "input":{"url":"https://a","headers":{"Authorization":"[REDACTED]"}}})
    );
    assert_eq!(
        all[2]["input"],
        json!({"env": {"OPENAI_API_KEY": "[REDACTED]"}, "n": 1})
    );
    assert_eq!(all[3]["message"], "key [REDACTED] failed");
}

#[test]
fn the_name_is_repeated_so_it_stays_in_the_tail_window() {
    let home = tempfile::tempdir().unwrap();
    let log = SessionLog::create(home.path(), &header("n")).unwrap();
    log.append_rename("my work").unwrap();
    let big = "z".repeat(10_000);
    for _ in 0..40 {
        log.append_message(&Message::user_text(big.clone()), MessageExtra::default())
            .unwrap();
    }
    let text = fs::read_to_string(log.path()).unwrap();
    let last_rename = text.rfind(r#""event":"rename""#).unwrap();
    assert!(text.len() - last_rename < NAME_REAPPEND_AFTER as usize + 11_000);
    assert!(text.matches(r#""name":"my work""#).count() > 5);
    assert_eq!(replay(log.path()).unwrap().name.as_deref(), Some("my work"));
}
