//! Resume = replay the log: reads a session file back into the history to send (messages
//! after the last compaction boundary, led by its summary) and the session state the events
//! recorded (name, mode, model, todos). A truncated or corrupt line anywhere is skipped with
//! a warning; only a missing or invalid header is an error.

use std::fs;
use std::path::Path;

use serde_json::{Map, Value};

use crate::core::{Block, Message, MessageState, Role, Usage};
use crate::session::log::{LogError, SessionHeader};

/// How the compaction summary is introduced at the head of the history.
pub const CONTEXT_SUMMARY_PREFIX: &str = "[Context Summary]\n";

/// A session read back from its log.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayedSession {
    pub header: SessionHeader,
    /// Messages after the last `compact_boundary`, whose summary comes first as a user
    /// message `"[Context Summary]\n…"`.
    pub messages: Vec<Message>,
    pub name: Option<String>,
    pub mode: Option<String>,
    /// The model chosen by the last `model` event (the header holds the initial one).
    pub model: Option<String>,
    pub todos: Option<Value>,
    /// One per skipped line, e.g. `"line 57 is truncated or corrupt; skipped"`.
    pub warnings: Vec<String>,
    /// The uuid of the last message line: the next line's `parentUuid`.
    pub last_uuid: Option<String>,
    /// Non-empty lines in the file, the header and skipped lines included.
    pub line_count: usize,
    /// Message lines ever written to the file, before and after compaction.
    pub message_lines: usize,
}

/// Reads a session log. See the module docs for what is an error and what a warning.
pub fn replay(path: &Path) -> Result<ReplayedSession, LogError> {
    let bytes = fs::read(path).map_err(|e| LogError::io(path, e))?;
    let mut lines = bytes.split(|b| *b == b'\n');
    let header_line = lines.next().unwrap_or_default();
    let header = serde_json::from_slice::<Value>(header_line)
        .map_err(|e| format!("line 1 is not JSON ({e})"))
        .and_then(|line| SessionHeader::from_line(&line))
        .map_err(|reason| LogError::InvalidHeader {
            path: path.to_path_buf(),
            reason,
        })?;

    let mut session = ReplayedSession {
        header,
        messages: Vec::new(),
        name: None,
        mode: None,
        model: None,
        todos: None,
        warnings: Vec::new(),
        last_uuid: None,
        line_count: 1,
        message_lines: 0,
    };
    let mut highest_seq = 0;
    for (index, raw) in lines.enumerate() {
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let number = index + 2;
        session.line_count += 1;
        let Ok(Value::Object(mut line)) = serde_json::from_slice::<Value>(raw) else {
            session.warnings.push(corrupt_line_warning(number));
            continue;
        };
        match line.get("type").and_then(Value::as_str) {
            Some("user" | "assistant") => {
                if let Some(seq) = line.get("seq").and_then(Value::as_u64) {
                    highest_seq = highest_seq.max(seq as usize);
                }
                match message_from_line(&mut line) {
                    Some(message) => {
                        session.message_lines += 1;
                        session.last_uuid = Some(message.id.clone());
                        session.messages.push(message);
                    }
                    None => session.warnings.push(corrupt_line_warning(number)),
                }
            }
            Some("event") => apply_event(&mut session, &mut line),
            // Header repeats and kinds written by other tools carry nothing to restore.
            _ => {}
        }
    }
    session.message_lines = session.message_lines.max(highest_seq);
    Ok(session)
}

fn corrupt_line_warning(number: usize) -> String {
    format!("line {number} is truncated or corrupt; skipped")
}

fn apply_event(session: &mut ReplayedSession, line: &mut Map<String, Value>) {
    let text = |line: &Map<String, Value>, key: &str| {
        line.get(key).and_then(Value::as_str).map(str::to_string)
    };
    match line.get("event").and_then(Value::as_str) {
        Some("compact_boundary") => {
            let summary = text(line, "summary").unwrap_or_default();
            let id = text(line, "uuid").unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            session.messages.clear();
            session
                .messages
                .push(compact_summary_message(&summary, &id));
        }
        Some("rename") => session.name = text(line, "name").filter(|name| !name.is_empty()),
        Some("mode") => session.mode = text(line, "mode"),
        Some("model") => session.model = text(line, "model"),
        Some("todos") => session.todos = line.remove("todos"),
        _ => {}
    }
}

/// The user message that stands for everything before a compaction boundary.
pub fn compact_summary_message(summary: &str, id: &str) -> Message {
    Message {
        id: id.to_string(),
        role: Role::User,
        content: vec![Block::text(format!("{CONTEXT_SUMMARY_PREFIX}{summary}"))],
        state: MessageState::Complete,
        usage: None,
    }
}

/// Rebuilds a message from a `user`/`assistant` line (ours or Claude Code's: string
/// content is accepted as one text block). `None` if the line is not a valid message.
pub(crate) fn message_from_line(line: &mut Map<String, Value>) -> Option<Message> {
    let id = line.get("uuid")?.as_str()?.to_string();
    let interrupted = line.get("state").and_then(Value::as_str) == Some("interrupted");
    let kind = line.get("type")?.as_str()?.to_string();
    let Value::Object(mut body) = line.remove("message")? else {
        return None;
    };
    let role = match body.get("role").and_then(Value::as_str).unwrap_or(&kind) {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => return None,
    };
    let content = match body.remove("content")? {
        Value::String(text) => vec![Block::text(text)],
        blocks @ Value::Array(_) => serde_json::from_value::<Vec<Block>>(blocks).ok()?,
        _ => return None,
    };
    let usage = body
        .remove("usage")
        .and_then(|usage| serde_json::from_value::<Usage>(usage).ok());
    Some(Message {
        id,
        role,
        content,
        state: if interrupted {
            MessageState::Interrupted
        } else {
            MessageState::Complete
        },
        usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::TodoItem;
    use crate::session::log::{MessageExtra, SessionLog};
    use serde_json::json;
    use std::io::Write;

    fn new_log(home: &Path) -> SessionLog {
        let header = SessionHeader::new("s-1", Path::new("/work/app"), "claude-x", "anthropic");
        SessionLog::create(home, &header).unwrap()
    }

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
        log.append_event("tool_start", Map::new()).unwrap();
        log.append_message(&call, extra).unwrap();
        let mut end = Map::new();
        end.insert("duration_ms".into(), 12.into());
        end.insert("is_error".into(), true.into());
        log.append_event("tool_end", end).unwrap();
        log.append_message(&result, MessageExtra::default())
            .unwrap();
        log.append_message(&cut, MessageExtra::default()).unwrap();
        log.append_event("interrupted", Map::new()).unwrap();
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
        assert_eq!(summary.text(), "[Context Summary]\nwe listed files");
        assert_eq!(summary.role, Role::User);
        assert_eq!(replayed.message_lines, 6);
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
        assert_eq!(
            replayed.todos,
            Some(
                json!([{"content":"write tests","status":"in_progress","activeForm":"Writing tests"}])
            )
        );
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
                    content: "fn main() {}\n".repeat(40),
                    is_error: false,
                }],
            );
            log.append_message(&result, MessageExtra::default())
                .unwrap();
            log.append_event("usage", Map::new()).unwrap();
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
}
