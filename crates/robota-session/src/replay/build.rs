//! Building a [`ReplayedSession`] from log lines fed in file order: messages into the
//! history (boundaries and rewinds applied), events into the session state, corrupt lines
//! into warnings. The whole-file replay feeds every line; a resume feeds the lines from the
//! last boundary on, after a state-only pass over what came before when it must.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{CheckpointRecord, ReplayedSession};
use crate::line::compact_summary_message;
use crate::line::{LogEvent, LogLine, MessageLine, ResumeState, SessionHeader};
use crate::repair::answer_orphan_tool_calls;
use robota_core::Role;

/// Whether a replay replaces the history before a compaction boundary by its summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Compactions {
    Apply,
    Ignore,
    /// Keeps the history before a boundary and puts its summary after it: what the user
    /// saw, for a transcript of older history.
    Show,
}

/// Where a fed line is in its file, for warnings.
#[derive(Debug, Clone, Copy)]
pub(super) enum LinePlace {
    /// Its line number (the header is line 1).
    Number(usize),
    /// Its first byte's offset (a resume does not count the lines before its start).
    Offset(u64),
}

/// A replay in progress.
pub(super) struct Builder {
    session: ReplayedSession,
    compactions: Compactions,
    highest_seq: usize,
    /// Messages before the first fed line may be missing from the history: set when the
    /// feeding starts after the header, cleared by a boundary all of whose kept messages
    /// were fed.
    partial: bool,
    /// Only the state: message lines count for usage, numbering and the chain, and are not
    /// kept; boundaries, rewinds and checkpoints are not applied.
    state_only: bool,
}

impl Builder {
    /// A replay of the log whose header is `header`, fed from its second line.
    pub(super) fn new(header: SessionHeader, compactions: Compactions) -> Self {
        Builder {
            session: ReplayedSession {
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
                dropped: None,
                older: None,
            },
            compactions,
            highest_seq: 0,
            partial: false,
            state_only: false,
        }
    }

    /// A pass that keeps only the state of the lines fed (see [`Builder::state_only`]).
    pub(super) fn state_only(header: SessionHeader) -> Self {
        let mut builder = Builder::new(header, Compactions::Apply);
        builder.state_only = true;
        builder
    }

    /// Goes on with the history from a later line: the state gathered so far stays, the
    /// history before the next fed line counts as possibly missing.
    pub(super) fn continue_partial(mut self) -> Self {
        self.state_only = false;
        self.partial = true;
        self
    }

    /// Whether the history may lack messages from before the first fed line.
    pub(super) fn is_partial(&self) -> bool {
        self.partial
    }

    /// The history so far.
    pub(super) fn messages_mut(&mut self) -> &mut Vec<robota_core::Message> {
        &mut self.session.messages
    }

    /// Takes one line (without its newline).
    pub(super) fn feed(&mut self, raw: &[u8], place: LinePlace) {
        if raw.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.session.line_count += 1;
        match LogLine::from_slice(raw) {
            Ok(LogLine::User(line)) => self.message(line, Role::User),
            Ok(LogLine::Assistant(line)) => self.message(line, Role::Assistant),
            Ok(LogLine::Event(line)) => {
                let compaction = matches!(line.event, LogEvent::CompactBoundary { .. });
                if compaction && self.compactions == Compactions::Ignore {
                    return;
                }
                if compaction && self.compactions == Compactions::Show {
                    self.show_boundary(line.event);
                    return;
                }
                let checkpoints = &mut self.session.checkpoints;
                if self.state_only
                    || !CheckpointRecord::apply(checkpoints, &line.event, &line.timestamp)
                {
                    self.event(line.event);
                }
            }
            // Header repeats and kinds written by other tools or later versions carry
            // nothing to restore.
            Ok(LogLine::Session(_) | LogLine::Unknown) => {}
            Err(_) => self.unreadable(raw, place),
        }
    }

    fn unreadable(&mut self, raw: &[u8], place: LinePlace) {
        let warning = match place {
            LinePlace::Number(number) => format!("line {number} is truncated or corrupt; skipped"),
            LinePlace::Offset(offset) => {
                format!("the line at byte {offset} is truncated or corrupt; skipped")
            }
        };
        match unreadable_line(raw) {
            Unreadable::Corrupt => self.session.warnings.push(warning),
            Unreadable::Message { seq } => {
                self.highest_seq = self.highest_seq.max(seq.unwrap_or(0) as usize);
                self.session.warnings.push(warning);
            }
            Unreadable::Other => {}
        }
    }

    fn message(&mut self, line: MessageLine, role: Role) {
        if let Some(seq) = line.seq {
            self.highest_seq = self.highest_seq.max(seq as usize);
        }
        let session = &mut self.session;
        if let (Role::Assistant, Some(usage)) = (role, &line.message.usage) {
            let model = line
                .message
                .model
                .as_deref()
                .unwrap_or(&session.header.model);
            let totals = session.usage_by_model.entry(model.to_string());
            totals.or_default().add(usage);
        }
        session.message_lines += 1;
        session.last_uuid = Some(line.uuid.clone());
        if !self.state_only {
            session.messages.push(line.into_message(role));
        }
    }

    fn event(&mut self, event: LogEvent) {
        let session = &mut self.session;
        match event {
            LogEvent::CompactBoundary { .. } | LogEvent::Rewind { .. } if self.state_only => {}
            LogEvent::CompactBoundary {
                summary,
                uuid,
                kept,
                ..
            } => {
                // Every kept message is here: nothing missing comes after the boundary.
                if session.messages.len() >= kept {
                    self.partial = false;
                }
                let id = uuid.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
                let from = session.messages.len().saturating_sub(kept);
                let kept = session.messages.split_off(from);
                session.messages.clear();
                session
                    .messages
                    .push(compact_summary_message(&summary, &id));
                session.messages.extend(kept);
            }
            LogEvent::Rewind { to, before } => {
                match session.messages.iter().position(|m| m.id == to) {
                    Some(at) => session.messages.truncate(if before { at } else { at + 1 }),
                    None if self.partial => {}
                    None => session.warnings.push(format!(
                        "a rewind names message {to}, which is not in the log; ignored"
                    )),
                }
            }
            LogEvent::ResumeState(state) => self.resume_state(state),
            LogEvent::Rename { name } => session.name = Some(name).filter(|name| !name.is_empty()),
            LogEvent::Mode { mode } => session.mode = Some(mode),
            LogEvent::Model { model } => session.model = Some(model),
            LogEvent::Todos { todos } => session.todos = Some(todos),
            _ => {}
        }
    }

    /// A boundary in a transcript of older history: its summary comes after what it
    /// summarised, which stays.
    fn show_boundary(&mut self, event: LogEvent) {
        if let LogEvent::CompactBoundary { summary, uuid, .. } = event {
            let id = uuid.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            let message = compact_summary_message(&summary, &id);
            self.session.messages.push(message);
        }
    }

    /// Takes the state a `resume_state` line recorded of the lines before it.
    fn resume_state(&mut self, state: ResumeState) {
        let session = &mut self.session;
        session.name = state.name;
        session.mode = state.mode;
        session.model = state.model;
        session.todos = state.todos;
        session.usage_by_model = state.usage_by_model;
        self.highest_seq = self.highest_seq.max(state.message_lines);
        if state.last_uuid.is_some() {
            session.last_uuid = state.last_uuid;
        }
    }

    /// The messages fed as they are (no call answered that the log did not answer: its
    /// answer may come after the lines fed) and the warnings about skipped lines.
    pub(super) fn into_messages(self) -> (Vec<robota_core::Message>, Vec<String>) {
        (self.session.messages, self.session.warnings)
    }

    /// The session replayed, with the calls the log left unanswered answered.
    pub(super) fn finish(mut self) -> ReplayedSession {
        let session = &mut self.session;
        session.message_lines = session.message_lines.max(self.highest_seq);
        session.unanswered_calls = answer_orphan_tool_calls(&mut session.messages);
        self.session
    }
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
