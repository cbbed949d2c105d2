//! Resume = replay the log: reads a session file back into the history to send (messages
//! after the last compaction boundary, led by its summary) and the session state the events
//! recorded (name, mode, model, todos). A truncated or corrupt line anywhere is skipped with
//! a warning; only a missing or invalid header is an error. Lines and events of kinds this
//! version does not know (a later version's, another tool's) are skipped quietly.
//!
//! [`replay`] reads the whole file (diagnostics, tools that want every line); [`resume`]
//! (`tail`) reads it from the end back to the last boundary, so its cost follows the live
//! part, and keeps only what fits the window of a log never compacted; [`whole_history`]
//! reads everything compactions summarised away, for an export; [`OlderHistory`] (`older`)
//! reads what came before a resume's history page by page from the newest back, for a
//! transcript that shows it on demand. `build` turns fed lines into a [`ReplayedSession`];
//! `prefix` is the state-only pass over older lines.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::error::{LogAction, LogError};
use crate::line::{LogEvent, SessionHeader};
use robota_core::{Message, TodoItem, Usage};

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
    /// Non-empty lines read, the header and skipped lines included (a [`resume`] reads only
    /// the part from the last boundary on, and the state lines before it when it must).
    pub line_count: usize,
    /// Message lines ever written to the file, before and after compaction.
    pub message_lines: usize,
    /// The checkpoints of the session's prompts, oldest first (see `sdk::checkpoint`); a
    /// [`resume`] gathers those of the part it reads, which holds every prompt of the history.
    pub checkpoints: Vec<CheckpointRecord>,
    /// The tokens every answer in the log used, by model (compacted and rewound parts
    /// included: they were paid for), for `/cost` after a resume.
    pub usage_by_model: BTreeMap<String, Usage>,
    /// Results added for the calls of the last message, which the log did not answer
    /// (robota stopped while they ran): append it to the log when continuing. Gaps earlier
    /// in the history are filled in `messages` too (see `repair`).
    pub unanswered_calls: Option<Message>,
    /// Set when [`resume`] left the log's older history out because it did not fit the
    /// context window: record its boundary when continuing (see [`DroppedHistory`]).
    pub dropped: Option<DroppedHistory>,
    /// Set when [`resume`] built the history from a later part of the log: the messages
    /// before it (summarised away, or left out) can be read for display with
    /// [`OlderHistory::read_page`].
    pub older: Option<OlderHistory>,
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

fn replay_as(path: &Path, compactions: Compactions) -> Result<ReplayedSession, LogError> {
    let bytes = fs::read(path).map_err(|e| LogError::io(path, LogAction::Read, e))?;
    let mut lines = bytes.split(|b| *b == b'\n');
    let header = parse_header(path, lines.next().unwrap_or_default())?;
    let mut builder = Builder::new(header, compactions);
    for (index, raw) in lines.enumerate() {
        builder.feed(raw, LinePlace::Number(index + 2));
    }
    Ok(builder.finish())
}

/// The header of the log at `path` from its first line.
pub(crate) fn parse_header(path: &Path, line: &[u8]) -> Result<SessionHeader, LogError> {
    SessionHeader::parse(line).map_err(|reason| LogError::InvalidHeader {
        path: path.to_path_buf(),
        reason,
    })
}

mod build;
mod older;
mod prefix;
mod tail;

use build::{Builder, Compactions, LinePlace};
pub use older::{OlderHistory, OlderPage};
pub use tail::{DroppedHistory, human_bytes, resume};

#[cfg(test)]
mod tests;
