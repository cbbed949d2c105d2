//! Tests of the replay module.
use super::*;
use crate::log::{MessageExtra, SessionLog};
use robota_core::{Block, MessageState, Role, Usage};
use serde_json::Value;
use serde_json::json;
use std::io::Write;

use crate::replay::tail::tests::new_log;

fn assistant(content: Vec<Block>) -> Message {
    let mut m = Message::new(Role::Assistant, content);
    m.usage = Some(Usage {
        input_tokens: 12,
        output_tokens: 3,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 0,
    });
    m
}

/// A conversation with every kind of block, an interrupted answer and events between.
fn write_conversation(log: &SessionLog) -> Vec<Message> {
    let first = Message::user_text("list the files");
    let call = assistant(vec![
        Block::Thinking {
            thinking: "use Glob".into(),
            signature: "sig==".into(),
        },
        Block::text("Looking."),
        Block::ToolUse {
            id: "toolu_1".into(),
            name: "Glob".into(),
            input: json!({"pattern": "**/*.rs"}),
        },
    ]);
    let result = Message::new(
        Role::User,
        vec![Block::ToolResult {
            tool_use_id: "toolu_1".into(),
            content: "src/main.rs".into(),
            is_error: true,
        }],
    );
    let mut cut = assistant(vec![Block::text("There is one fi")]);
    cut.state = MessageState::Interrupted;
    cut.usage = None;
    let extra = MessageExtra {
        model: Some("claude-x".into()),
        stop_reason: Some("tool_use".into()),
    };
    log.append_message(&first, MessageExtra::default()).unwrap();
    log.append_event(LogEvent::ToolStart {
        tool: "Glob".into(),
        tool_use_id: "toolu_1".into(),
        input: json!({"pattern": "**/*.rs"}),
    })
    .unwrap();
    log.append_message(&call, extra).unwrap();
    log.append_event(LogEvent::ToolEnd {
        tool: "Glob".into(),
        tool_use_id: "toolu_1".into(),
        is_error: true,
        duration_ms: 12,
        output_chars: 11,
    })
    .unwrap();
    log.append_message(&result, MessageExtra::default())
        .unwrap();
    log.append_message(&cut, MessageExtra::default()).unwrap();
    log.append_event(LogEvent::Interrupted {}).unwrap();
    vec![first, call, result, cut]
}

#[test]
fn a_written_conversation_replays_equal() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    let messages = write_conversation(&log);
    let replayed = replay(log.path()).unwrap();
    assert_eq!(replayed.messages, messages);
    assert_eq!(replayed.header.session_id, "s-1");
    assert_eq!(replayed.header.model, "claude-x");
    assert_eq!(replayed.header.cwd, Path::new("/work/app"));
    assert!(replayed.warnings.is_empty(), "{:?}", replayed.warnings);
    assert_eq!(replayed.last_uuid.as_deref(), Some(messages[3].id.as_str()));
    assert_eq!(replayed.line_count, 8);
    assert_eq!(replayed.message_lines, 4);
}

#[test]
fn a_half_written_last_line_is_skipped_and_appending_starts_a_fresh_line() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    let messages = write_conversation(&log);
    let path = log.path().to_path_buf();
    drop(log);
    // What a process killed inside write_all leaves behind.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"type":"assistant","uuid":"x","message":{"role":"assis"#)
        .unwrap();
    drop(file);

    let replayed = replay(&path).unwrap();
    assert_eq!(replayed.messages, messages);
    assert_eq!(
        replayed.warnings,
        vec!["line 9 is truncated or corrupt; skipped".to_string()]
    );

    let log = SessionLog::open_append(&path, &replayed).unwrap();
    let next = Message::user_text("go on");
    log.append_message(&next, MessageExtra::default()).unwrap();
    let again = replay(&path).unwrap();
    assert_eq!(again.messages.len(), 5);
    assert_eq!(again.messages[4], next);
    assert_eq!(again.warnings.len(), 1);
    assert_eq!(again.message_lines, 5);
    let text = std::fs::read_to_string(&path).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["parentUuid"], json!(messages[3].id));
    assert_eq!(last["seq"], json!(5));
}

#[test]
fn a_corrupt_middle_line_is_skipped_with_its_number() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    let a = Message::user_text("one");
    log.append_message(&a, MessageExtra::default()).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(log.path())
        .unwrap()
        .write_all(b"{not json at all\n[1,2]\n{\"type\":\"user\",\"uuid\":7}\n")
        .unwrap();
    let b = Message::user_text("two");
    log.append_message(&b, MessageExtra::default()).unwrap();
    let replayed = replay(log.path()).unwrap();
    assert_eq!(replayed.messages, vec![a, b]);
    assert_eq!(
        replayed.warnings,
        vec![
            "line 3 is truncated or corrupt; skipped",
            "line 4 is truncated or corrupt; skipped",
            "line 5 is truncated or corrupt; skipped",
        ]
    );
}

#[test]
fn a_missing_or_invalid_header_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("empty.jsonl", ""),
        ("nohdr.jsonl", "{\"type\":\"user\",\"uuid\":\"a\"}\n"),
        ("half.jsonl", "{\"type\":\"sess"),
        ("noid.jsonl", "{\"type\":\"session\",\"cwd\":\"/\"}\n"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let err = replay(&path).unwrap_err();
        assert!(matches!(err, LogError::InvalidHeader { .. }), "{name}");
        assert!(err.to_string().contains(name), "{err}");
    }
    let missing = dir.path().join("missing.jsonl");
    assert!(matches!(replay(&missing), Err(LogError::Io { .. })));
}

#[test]
fn compaction_keeps_only_the_summary_and_later_messages() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    write_conversation(&log);
    log.append_compact_boundary("old summary").unwrap();
    log.append_message(&Message::user_text("between"), MessageExtra::default())
        .unwrap();
    let summary = log.append_compact_boundary("we listed files").unwrap();
    let after = assistant(vec![Block::text("next")]);
    log.append_message(&after, MessageExtra::default()).unwrap();

    let replayed = replay(log.path()).unwrap();
    assert_eq!(replayed.messages, vec![summary.clone(), after]);
    assert_eq!(
        summary.text(),
        format!("{CONTEXT_SUMMARY_PREFIX}we listed files")
    );
    assert_eq!(summary.role, Role::User);
    assert_eq!(replayed.message_lines, 6);
}

#[test]
fn a_rewind_leaves_out_what_came_after_its_message_and_later_lines_follow_it() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    let first = Message::user_text("first");
    let answer = assistant(vec![Block::text("one")]);
    let later = Message::user_text("a path not taken");
    for m in [&first, &answer, &later] {
        log.append_message(m, MessageExtra::default()).unwrap();
    }
    log.append_event(LogEvent::Rewind {
        to: answer.id.clone(),
        before: false,
    })
    .unwrap();
    let next = Message::user_text("the path taken");
    log.append_message(&next, MessageExtra::default()).unwrap();
    log.append_event(LogEvent::Rewind {
        to: "no-such-message".into(),
        before: true,
    })
    .unwrap();
    let replayed = replay(log.path()).unwrap();
    assert_eq!(replayed.messages, vec![first, answer, next]);
    assert!(
        replayed
            .warnings
            .iter()
            .any(|w| w.contains("no-such-message")),
        "{:?}",
        replayed.warnings
    );
    // The log kept everything: the abandoned message is still in the file.
    let text = std::fs::read_to_string(log.path()).unwrap();
    assert!(text.contains("a path not taken"));
}

#[test]
fn checkpoints_are_collected_and_a_rewind_before_a_prompt_leaves_it_out() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    let first = Message::user_text("first");
    let answer = assistant(vec![Block::text("one")]);
    let second = Message::user_text("second");
    log.append_event(LogEvent::Checkpoint {
        message: first.id.clone(),
        snapshot: "s1".into(),
        incomplete: None,
    })
    .unwrap();
    for m in [&first, &answer] {
        log.append_message(m, MessageExtra::default()).unwrap();
    }
    log.append_event(LogEvent::CheckpointFiles {
        message: first.id.clone(),
        snapshot: "s2".into(),
        files: vec!["a.rs".into()],
        not_restorable: vec![],
    })
    .unwrap();
    log.append_message(&second, MessageExtra::default())
        .unwrap();
    log.append_rewind(&second.id, true, Some(answer.id.clone()))
        .unwrap();
    let third = Message::user_text("third");
    log.append_message(&third, MessageExtra::default()).unwrap();
    let replayed = replay(log.path()).unwrap();
    assert_eq!(
        replayed.messages,
        vec![first.clone(), answer.clone(), third]
    );
    assert_eq!(replayed.checkpoints.len(), 1);
    let record = &replayed.checkpoints[0];
    assert_eq!(record.message, first.id);
    assert_eq!(record.snapshot, "s1");
    assert!(!record.timestamp.is_empty());
    assert_eq!(record.end.as_ref().unwrap().files, ["a.rs"]);
    // The next message branches from the last one kept.
    let lines: Vec<Value> = std::fs::read_to_string(log.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = lines.last().unwrap();
    assert_eq!(last["parentUuid"], json!(answer.id));
}

#[test]
fn a_boundary_keeps_the_messages_of_the_unfinished_turn() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    write_conversation(&log);
    let prompt = Message::user_text("the turn that overflowed");
    log.append_message(&prompt, MessageExtra::default())
        .unwrap();
    log.append_event(LogEvent::CompactBoundary {
        summary: "earlier work".into(),
        uuid: Some("sum-1".into()),
        trigger: Some("auto".into()),
        pre_tokens: Some(190_000),
        post_tokens: Some(900),
        kept: 1,
    })
    .unwrap();
    let answer = assistant(vec![Block::text("done")]);
    log.append_message(&answer, MessageExtra::default())
        .unwrap();
    let replayed = replay(log.path()).unwrap();
    assert_eq!(
        replayed.messages,
        vec![
            compact_summary_message("earlier work", "sum-1"),
            prompt,
            answer
        ]
    );
}

#[test]
fn state_events_restore_name_mode_model_and_todos() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    log.append_rename("first name").unwrap();
    log.append_mode("plan").unwrap();
    log.append_model("m-1").unwrap();
    log.append_rename("final name").unwrap();
    log.append_mode("acceptEdits").unwrap();
    log.append_model("m-2").unwrap();
    let todos = vec![TodoItem {
        content: "write tests".into(),
        status: "in_progress".into(),
        active_form: "Writing tests".into(),
    }];
    log.append_todos(&todos).unwrap();
    let replayed = replay(log.path()).unwrap();
    assert_eq!(replayed.name.as_deref(), Some("final name"));
    assert_eq!(replayed.mode.as_deref(), Some("acceptEdits"));
    assert_eq!(replayed.model.as_deref(), Some("m-2"));
    assert_eq!(replayed.todos, Some(todos));
    assert!(replayed.messages.is_empty());
}

#[test]
fn claude_code_string_content_is_read_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cc.jsonl");
    let text = concat!(
        r#"{"type":"session","sessionId":"cc","cwd":"/p"}"#,
        "\n",
        r#"{"type":"summary","summary":"x"}"#,
        "\n",
        r#"{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hello"}}"#,
        "\n",
    );
    std::fs::write(&path, text).unwrap();
    let replayed = replay(&path).unwrap();
    assert_eq!(replayed.messages.len(), 1);
    assert_eq!(replayed.messages[0].text(), "hello");
    assert_eq!(replayed.messages[0].id, "u1");
}

#[test]
fn lines_and_events_of_unknown_kinds_are_skipped_quietly() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    let first = Message::user_text("before");
    log.append_message(&first, MessageExtra::default()).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(log.path())
        .unwrap()
        .write_all(
            concat!(
                r#"{"type":"checkpoint","files":["a.rs"]}"#,
                "\n",
                r#"{"type":"event","event":"teleport","sessionId":"s-1","to":"mars"}"#,
                "\n",
                r#"{"type":"event","event":"usage","sessionId":"s-1"}"#,
                "\n",
                r#"{"type":"event","event":"rename","sessionId":"s-1","name":"kept","extra":1}"#,
                "\n",
            )
            .as_bytes(),
        )
        .unwrap();
    let second = Message::user_text("after");
    log.append_message(&second, MessageExtra::default())
        .unwrap();
    let replayed = replay(log.path()).unwrap();
    assert_eq!(replayed.messages, vec![first, second]);
    assert_eq!(replayed.name.as_deref(), Some("kept"));
    assert!(replayed.warnings.is_empty(), "{:?}", replayed.warnings);
    assert_eq!(replayed.line_count, 7);
}

/// The figure in the report; asserts the DESIGN §12 budget only in release builds.
#[test]
fn replaying_ten_thousand_lines_is_fast() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    for i in 0..2_500 {
        let ask = Message::user_text(format!("question {i} {}", "x".repeat(200)));
        log.append_message(&ask, MessageExtra::default()).unwrap();
        let call = assistant(vec![
            Block::text(format!("answer {i} {}", "y".repeat(300))),
            Block::ToolUse {
                id: format!("toolu_{i}"),
                name: "Read".into(),
                input: json!({"file_path": format!("/src/file{i}.rs")}),
            },
        ]);
        log.append_message(&call, MessageExtra::default()).unwrap();
        let result = Message::new(
            Role::User,
            vec![Block::ToolResult {
                tool_use_id: format!("toolu_{i}"),
                content: "fn main() {}\n".repeat(40).into(),
                is_error: false,
            }],
        );
        log.append_message(&result, MessageExtra::default())
            .unwrap();
        log.append_event(LogEvent::Context {
            used_tokens: 100,
            window: 1000,
        })
        .unwrap();
    }
    let started = std::time::Instant::now();
    let replayed = replay(log.path()).unwrap();
    let elapsed = started.elapsed();
    let bytes = std::fs::metadata(log.path()).unwrap().len();
    eprintln!(
        "replayed {} lines ({bytes} bytes) in {elapsed:?}",
        replayed.line_count
    );
    assert_eq!(replayed.line_count, 10_001);
    assert_eq!(replayed.messages.len(), 7_500);
    if !cfg!(debug_assertions) {
        assert!(elapsed.as_millis() <= 200, "{elapsed:?}");
    }
}
