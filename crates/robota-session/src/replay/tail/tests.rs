//! Tests of the resume from the end of the log.
use super::*;
use crate::line::SessionHeader;
use crate::log::{MessageExtra, SessionLog};
use crate::replay::replay;
use robota_core::{TodoItem, Usage};
use std::io::Write;

const WINDOW: u64 = 200_000;

pub(in crate::replay) fn new_log(home: &Path) -> SessionLog {
    let header = SessionHeader::new("s-1", Path::new("/work/app"), "claude-x", "anthropic");
    SessionLog::create(home, &header).unwrap()
}

/// A `compact_boundary` line: the summary `uuid` names, written by `trigger`, keeping the
/// `kept` messages before it.
pub(in crate::replay) fn write_boundary(
    log: &SessionLog,
    summary: &str,
    uuid: &str,
    trigger: &str,
    kept: usize,
) {
    log.append_event(LogEvent::CompactBoundary {
        summary: summary.into(),
        uuid: Some(uuid.into()),
        trigger: Some(trigger.into()),
        pre_tokens: None,
        post_tokens: None,
        kept,
    })
    .unwrap();
}

/// One prompt, a tool call, its result and an answer with usage: `pad` characters each.
pub(in crate::replay) fn write_turn(log: &SessionLog, n: usize, pad: usize) {
    let filler = "x".repeat(pad);
    log.append_message(
        &Message::user_text(format!("prompt {n} {filler}")),
        MessageExtra::default(),
    )
    .unwrap();
    let call = Message::new(
        Role::Assistant,
        vec![Block::ToolUse {
            id: format!("toolu_{n}"),
            name: "Read".into(),
            input: serde_json::json!({"file_path": "/a"}),
        }],
    );
    log.append_message(&call, MessageExtra::default()).unwrap();
    let result = Message::new(
        Role::User,
        vec![Block::ToolResult {
            tool_use_id: format!("toolu_{n}"),
            content: filler.clone().into(),
            is_error: false,
        }],
    );
    log.append_message(&result, MessageExtra::default())
        .unwrap();
    let mut answer = Message::new(Role::Assistant, vec![Block::text(format!("answer {n}"))]);
    answer.usage = Some(Usage {
        input_tokens: 10,
        output_tokens: 2,
        ..Usage::default()
    });
    let extra = MessageExtra {
        model: Some(
            if n.is_multiple_of(2) {
                "m-even"
            } else {
                "m-odd"
            }
            .into(),
        ),
        stop_reason: None,
    };
    log.append_message(&answer, extra).unwrap();
}

fn write_state(log: &SessionLog) {
    log.append_rename("the name").unwrap();
    log.append_mode("plan").unwrap();
    log.append_model("m-2").unwrap();
    log.append_todos(&[TodoItem {
        content: "write tests".into(),
        status: "in_progress".into(),
        active_form: "Writing tests".into(),
    }])
    .unwrap();
}

/// Overwrites the first `len` bytes after the header with `#`: a resume that reads them
/// would warn about a corrupt line.
fn spoil_head(path: &Path, len: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    let body = bytes.iter().position(|b| *b == b'\n').unwrap() + 1;
    for byte in &mut bytes[body..body + len] {
        if *byte != b'\n' {
            *byte = b'#';
        }
    }
    std::fs::write(path, bytes).unwrap();
}

fn assert_same_session(resumed: &ReplayedSession, replayed: &ReplayedSession) {
    assert_eq!(resumed.messages, replayed.messages);
    assert_eq!(resumed.name, replayed.name);
    assert_eq!(resumed.mode, replayed.mode);
    assert_eq!(resumed.model, replayed.model);
    assert_eq!(resumed.todos, replayed.todos);
    assert_eq!(resumed.usage_by_model, replayed.usage_by_model);
    assert_eq!(resumed.last_uuid, replayed.last_uuid);
    assert_eq!(resumed.message_lines, replayed.message_lines);
    assert_eq!(resumed.dropped, None);
}

#[test]
fn a_log_with_boundaries_resumes_as_its_replay_reading_only_the_live_part() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    write_state(&log);
    for n in 0..20 {
        write_turn(&log, n, 500);
    }
    log.append_compact_boundary("first").unwrap();
    for n in 20..40 {
        write_turn(&log, n, 500);
    }
    log.append_compact_boundary("second").unwrap();
    for n in 40..43 {
        write_turn(&log, n, 500);
    }
    let replayed = replay(log.path()).unwrap();
    let resumed = resume(log.path(), WINDOW).unwrap();
    assert_same_session(&resumed, &replayed);
    assert_eq!(resumed.messages.len(), 1 + 3 * 4);

    spoil_head(log.path(), 20_000);
    let resumed = resume(log.path(), WINDOW).unwrap();
    assert!(resumed.warnings.is_empty(), "{:?}", resumed.warnings);
    assert_eq!(resumed.messages, replayed.messages);
    assert_eq!(resumed.name.as_deref(), Some("the name"));
}

#[test]
fn a_boundary_without_its_resume_state_takes_the_state_from_one_pass_before_it() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    write_state(&log);
    for n in 0..10 {
        write_turn(&log, n, 300);
    }
    log.append_compact_boundary("summary").unwrap();
    for n in 10..12 {
        write_turn(&log, n, 300);
    }
    drop(log);
    let path = home.path().join("projects/-work-app/s-1.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let older: String = text
        .lines()
        .filter(|line| !line.contains(r#""event":"resume_state""#))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(&path, older).unwrap();

    let replayed = replay(&path).unwrap();
    let resumed = resume(&path, WINDOW).unwrap();
    assert_same_session(&resumed, &replayed);
    assert_eq!(resumed.usage_by_model["m-even"].input_tokens, 60);
}

#[test]
fn a_boundary_that_keeps_messages_before_it_resumes_with_them() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    for n in 0..10 {
        write_turn(&log, n, 300);
    }
    let prompt = Message::user_text("the turn that overflowed");
    log.append_message(&prompt, MessageExtra::default())
        .unwrap();
    write_boundary(&log, "earlier work", "sum-1", "auto", 1);
    write_turn(&log, 11, 10);
    let replayed = replay(log.path()).unwrap();
    let resumed = resume(log.path(), WINDOW).unwrap();
    assert_same_session(&resumed, &replayed);
    assert_eq!(resumed.messages[1], prompt);
}

#[test]
fn a_log_too_large_for_the_window_keeps_its_newest_turns_behind_a_notice() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    write_state(&log);
    for n in 0..200 {
        write_turn(&log, n, 1_000);
    }
    let replayed = replay(log.path()).unwrap();
    let window = 10_000;
    let resumed = resume(log.path(), window).unwrap();

    let dropped = resumed.dropped.clone().expect("older history is dropped");
    assert_eq!(dropped.kept, resumed.messages.len() - 1);
    assert!(
        dropped.kept >= 4 && dropped.kept.is_multiple_of(4),
        "{dropped:?}"
    );
    assert!(
        resumed.messages[0]
            .text()
            .contains("did not fit the context window")
    );
    assert!(resumed.messages[1].text().starts_with("prompt "));
    assert_eq!(resumed.messages.last(), replayed.messages.last());
    let tokens = ContextTracker::default().estimate(&resumed.messages[1..]);
    assert!(tokens <= window / 2, "{tokens}");
    assert_eq!(resumed.usage_by_model, replayed.usage_by_model);
    assert_eq!(resumed.name.as_deref(), Some("the name"));
    assert_eq!(resumed.mode.as_deref(), Some("plan"));
    assert_eq!(resumed.message_lines, 800);
    assert!(resumed.unanswered_calls.is_none());
}

#[test]
fn recording_the_dropped_history_as_a_boundary_resumes_the_same_history_next_time() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    for n in 0..200 {
        write_turn(&log, n, 1_000);
    }
    let path = log.path().to_path_buf();
    drop(log);
    let first = resume(&path, 10_000).unwrap();
    let dropped = first.dropped.clone().unwrap();
    let log = SessionLog::open_append(&path, &first).unwrap();
    write_boundary(
        &log,
        &dropped.summary,
        &first.messages[0].id,
        "resume",
        dropped.kept,
    );
    let again = resume(&path, 10_000).unwrap();
    assert_eq!(again.dropped, None);
    assert_eq!(again.messages, first.messages);
    assert_eq!(replay(&path).unwrap().messages, first.messages);
}

#[test]
fn a_truncated_last_line_is_skipped_with_a_warning() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    for n in 0..3 {
        write_turn(&log, n, 10);
    }
    log.append_compact_boundary("summary").unwrap();
    write_turn(&log, 3, 10);
    let path = log.path().to_path_buf();
    drop(log);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"type":"assistant","uuid":"cut"#)
        .unwrap();
    let resumed = resume(&path, WINDOW).unwrap();
    assert_eq!(resumed.messages.len(), 5);
    assert_eq!(resumed.warnings.len(), 1, "{:?}", resumed.warnings);
    assert!(resumed.warnings[0].contains("truncated or corrupt"));
}

#[test]
fn a_cut_log_whose_last_call_went_unanswered_records_the_answer_among_the_kept() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    for n in 0..200 {
        write_turn(&log, n, 1_000);
    }
    log.append_message(&Message::user_text("last prompt"), MessageExtra::default())
        .unwrap();
    let call = Message::new(
        Role::Assistant,
        vec![Block::ToolUse {
            id: "toolu_cut".into(),
            name: "Bash".into(),
            input: serde_json::json!({"command": "sleep 100"}),
        }],
    );
    log.append_message(&call, MessageExtra::default()).unwrap();
    let path = log.path().to_path_buf();
    drop(log);
    let first = resume(&path, 10_000).unwrap();
    let dropped = first.dropped.clone().unwrap();
    assert_eq!(dropped.kept, first.messages.len() - 1);
    let results = first
        .unanswered_calls
        .clone()
        .expect("the cut call is answered");
    let log = SessionLog::open_append(&path, &first).unwrap();
    log.append_message(&results, MessageExtra::default())
        .unwrap();
    write_boundary(
        &log,
        &dropped.summary,
        &first.messages[0].id,
        "resume",
        dropped.kept,
    );
    drop(log);
    let again = resume(&path, 10_000).unwrap();
    assert_eq!(again.dropped, None);
    assert_eq!(again.messages, first.messages);
}
