//! Resume = replay the log: reads a session file back into the history to send (messages
//! after the last compaction boundary, led by its summary) and the session state the events
//! recorded (name, mode, model, todos). A truncated or corrupt line anywhere is skipped with
//! a warning; only a missing or invalid header is an error. Lines and events of kinds this
//! version does not know (a later version's, another tool's) are skipped quietly.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::error::{LogAction, LogError};
use crate::line::{LogEvent, LogLine, SessionHeader};
use crate::repair::answer_orphan_tool_calls;
use robota_core::{Message, Role, TodoItem, Usage};

pub use crate::line::{CONTEXT_SUMMARY_PREFIX, compact_summary_message};

/// A session read back from its log.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayedSession {
    /// The log's first line.
    pub header: SessionHeader,
    /// Messages after the last `compact_boundary`, whose summary comes first as a user
    /// message opening with [`CONTEXT_SUMMARY_PREFIX`] (then the messages of the turn the
    /// compaction kept, then later ones).
    pub messages: Vec<Message>,
    /// The name set by the last `rename` event, if any.
    pub name: Option<String>,
    /// The permission mode set by the last `mode` event, as its name (`plan`…).
    pub mode: Option<String>,
    /// The model chosen by the last `model` event (the header holds the initial one).
    pub model: Option<String>,
    /// The list of the last `todos` event.
    pub todos: Option<Vec<TodoItem>>,
    /// One per skipped line, e.g. `"line 57 is truncated or corrupt; skipped"`.
    pub warnings: Vec<String>,
    /// The uuid of the last message line: the next line's `parentUuid`.
    pub last_uuid: Option<String>,
    /// Non-empty lines in the file, the header and skipped lines included.
    pub line_count: usize,
    /// Message lines ever written to the file, before and after compaction.
    pub message_lines: usize,
    /// The checkpoints of the session's prompts, oldest first (see `sdk::checkpoint`).
    pub checkpoints: Vec<CheckpointRecord>,
    /// The tokens every answer in the log used, by model (compacted and rewound parts
    /// included: they were paid for), for `/cost` after a resume.
    pub usage_by_model: BTreeMap<String, Usage>,
    /// Results added for the calls of the last message, which the log did not answer
    /// (robota stopped while they ran): append it to the log when continuing. Gaps earlier
    /// in the history are filled in `messages` too (see `repair`).
    pub unanswered_calls: Option<Message>,
}

/// A prompt's checkpoint as the log recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRecord {
    /// The prompt's message id.
    pub message: String,
    /// The snapshot of the files before the prompt ran.
    pub snapshot: String,
    /// When the prompt was submitted (RFC 3339).
    pub timestamp: String,
    /// What the snapshot left out, if anything.
    pub incomplete: Option<String>,
    /// Set once the turn ended.
    pub end: Option<CheckpointEnd>,
}

/// The end of a checkpointed turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointEnd {
    /// The files after the turn.
    pub snapshot: String,
    /// The paths the turn changed.
    pub files: Vec<String>,
    /// Of those, the ones whose earlier state is not stored.
    pub not_restorable: Vec<String>,
}

impl CheckpointRecord {
    /// Applies a `checkpoint` or `checkpoint_files` event to `records`; other events are
    /// not theirs (false).
    pub fn apply(records: &mut Vec<CheckpointRecord>, event: &LogEvent, timestamp: &str) -> bool {
        match event {
            LogEvent::Checkpoint {
                message,
                snapshot,
                incomplete,
            } => records.push(CheckpointRecord {
                message: message.clone(),
                snapshot: snapshot.clone(),
                timestamp: timestamp.to_string(),
                incomplete: incomplete.clone(),
                end: None,
            }),
            LogEvent::CheckpointFiles {
                message,
                snapshot,
                files,
                not_restorable,
            } => {
                if let Some(record) = records.iter_mut().rev().find(|r| &r.message == message) {
                    record.end = Some(CheckpointEnd {
                        snapshot: snapshot.clone(),
                        files: files.clone(),
                        not_restorable: not_restorable.clone(),
                    });
                }
            }
            _ => return false,
        }
        true
    }
}

/// Reads a session log. See the module docs for what is an error and what a warning.
pub fn replay(path: &Path) -> Result<ReplayedSession, LogError> {
    replay_as(path, Compactions::Apply)
}

/// Every message of the session in its log, from the first prompt on: what compactions
/// summarised away is kept (rewinds still cut the history back), for a transcript of the
/// whole session.
pub fn whole_history(path: &Path) -> Result<Vec<Message>, LogError> {
    Ok(replay_as(path, Compactions::Ignore)?.messages)
}

/// Whether a replay replaces the history before a compaction boundary by its summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compactions {
    Apply,
    Ignore,
}

fn replay_as(path: &Path, compactions: Compactions) -> Result<ReplayedSession, LogError> {
    let bytes = fs::read(path).map_err(|e| LogError::io(path, LogAction::Read, e))?;
    let mut lines = bytes.split(|b| *b == b'\n');
    let header = SessionHeader::parse(lines.next().unwrap_or_default()).map_err(|reason| {
        LogError::InvalidHeader {
            path: path.to_path_buf(),
            reason,
        }
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
        checkpoints: Vec::new(),
        usage_by_model: BTreeMap::new(),
        unanswered_calls: None,
    };
    let mut highest_seq = 0;
    for (index, raw) in lines.enumerate() {
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let number = index + 2;
        session.line_count += 1;
        let (line, role) = match LogLine::from_slice(raw) {
            Ok(LogLine::User(line)) => (line, Role::User),
            Ok(LogLine::Assistant(line)) => (line, Role::Assistant),
            Ok(LogLine::Event(line)) => {
                let compaction = matches!(line.event, LogEvent::CompactBoundary { .. });
                if compaction && compactions == Compactions::Ignore {
                    continue;
                }
                if !CheckpointRecord::apply(&mut session.checkpoints, &line.event, &line.timestamp)
                {
                    apply_event(&mut session, line.event);
                }
                continue;
            }
            // Header repeats and kinds written by other tools or later versions carry
            // nothing to restore.
            Ok(LogLine::Session(_) | LogLine::Unknown) => continue,
            Err(_) => {
                match unreadable_line(raw) {
                    Unreadable::Corrupt => session.warnings.push(corrupt_line_warning(number)),
                    Unreadable::Message { seq } => {
                        highest_seq = highest_seq.max(seq.unwrap_or(0) as usize);
                        session.warnings.push(corrupt_line_warning(number));
                    }
                    Unreadable::Other => {}
                }
                continue;
            }
        };
        if let Some(seq) = line.seq {
            highest_seq = highest_seq.max(seq as usize);
        }
        if let (Role::Assistant, Some(usage)) = (role, &line.message.usage) {
            let model = line
                .message
                .model
                .clone()
                .unwrap_or_else(|| session.header.model.clone());
            session.usage_by_model.entry(model).or_default().add(usage);
        }
        let message = line.into_message(role);
        session.message_lines += 1;
        session.last_uuid = Some(message.id.clone());
        session.messages.push(message);
    }
    session.message_lines = session.message_lines.max(highest_seq);
    session.unanswered_calls = answer_orphan_tool_calls(&mut session.messages);
    Ok(session)
}

/// What a line that is not a valid [`LogLine`] is.
enum Unreadable {
    /// Not a JSON object: truncated or corrupt.
    Corrupt,
    /// A message line that does not hold a valid message.
    Message { seq: Option<u64> },
    /// An event or line of a shape this version cannot read: skipped quietly, like
    /// unknown kinds.
    Other,
}

fn unreadable_line(raw: &[u8]) -> Unreadable {
    let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(raw) else {
        return Unreadable::Corrupt;
    };
    match line.get("type").and_then(Value::as_str) {
        Some("user" | "assistant") => Unreadable::Message {
            seq: line.get("seq").and_then(Value::as_u64),
        },
        _ => Unreadable::Other,
    }
}

fn corrupt_line_warning(number: usize) -> String {
    format!("line {number} is truncated or corrupt; skipped")
}

fn apply_event(session: &mut ReplayedSession, event: LogEvent) {
    match event {
        LogEvent::CompactBoundary {
            summary,
            uuid,
            kept,
            ..
        } => {
            let id = uuid.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            let from = session.messages.len().saturating_sub(kept);
            let kept = session.messages.split_off(from);
            session.messages.clear();
            session
                .messages
                .push(compact_summary_message(&summary, &id));
            session.messages.extend(kept);
        }
        LogEvent::Rewind { to, before } => match session.messages.iter().position(|m| m.id == to) {
            Some(at) => session.messages.truncate(if before { at } else { at + 1 }),
            None => session.warnings.push(format!(
                "a rewind names message {to}, which is not in the log; ignored"
            )),
        },
        LogEvent::Rename { name } => session.name = Some(name).filter(|name| !name.is_empty()),
        LogEvent::Mode { mode } => session.mode = Some(mode),
        LogEvent::Model { model } => session.model = Some(model),
        LogEvent::Todos { todos } => session.todos = Some(todos),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
