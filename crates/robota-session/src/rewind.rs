//! Rewinding a session's conversation and the checkpoints its prompts opened. The log
//! is never rewritten: a rewind is one `rewind` line (the history goes on from just before
//! the chosen prompt; replay honours it), a checkpoint a `checkpoint` line at the prompt
//! and a `checkpoint_files` line at the end of its turn. What the snapshots hold and how
//! files are put back is the SDK's (`sdk::checkpoint`); here is only what the session
//! records.

use robota_core::{Block, Message, Role};

use super::conversation::Session;
use super::line::{CONTEXT_SUMMARY_PREFIX, LogEvent, MessageExtra};
use super::repair::answer_orphan_tool_calls;
use super::replay::{CheckpointEnd, CheckpointRecord};

/// Writes `checkpoint` lines to a session's log from outside the session's task.
#[derive(Debug, Clone)]
pub struct CheckpointLog {
    log: Option<std::sync::Arc<super::log::SessionLog>>,
}

/// A `checkpoint` line as written, for the session to take in.
#[derive(Debug, Clone)]
pub struct WrittenCheckpoint {
    event: LogEvent,
    timestamp: String,
}

impl CheckpointLog {
    /// Writes that prompt `message` opened a checkpoint at `snapshot`.
    pub fn write(
        &self,
        message: &str,
        snapshot: &str,
        incomplete: Option<String>,
    ) -> WrittenCheckpoint {
        let event = LogEvent::Checkpoint {
            message: message.to_string(),
            snapshot: snapshot.to_string(),
            incomplete,
        };
        if let Some(log) = &self.log
            && let Err(e) = log.append_event(event.clone())
        {
            tracing::warn!("checkpoint line not written: {e}");
        }
        WrittenCheckpoint {
            event,
            timestamp: super::line::now_rfc3339(),
        }
    }
}

/// Drops the checkpoints of prompts no longer in `history` (a compaction summarised them
/// away; they cannot be rewound to), so a long session's checkpoint list stays as long as
/// its live part. The newest stays: its prompt may be about to join the conversation (its
/// turn compacts before it starts).
pub(crate) fn forget_summarised_checkpoints(
    checkpoints: &mut Vec<CheckpointRecord>,
    history: &[Message],
) {
    let live: std::collections::HashSet<&str> = history.iter().map(|m| m.id.as_str()).collect();
    let newest = checkpoints.len().saturating_sub(1);
    let mut index = 0;
    checkpoints.retain(|record| {
        let keep = index == newest || live.contains(record.message.as_str());
        index += 1;
        keep
    });
    checkpoints.shrink_to_fit();
}

/// Why a rewind did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindError(pub String);

impl Session {
    /// The checkpoints of a resumed session.
    pub fn with_checkpoints(mut self, checkpoints: Vec<CheckpointRecord>) -> Self {
        self.checkpoints = checkpoints;
        self
    }

    /// This session's checkpoints, oldest first.
    pub fn checkpoints(&self) -> &[CheckpointRecord] {
        &self.checkpoints
    }

    /// Drops the checkpoints of prompts a compaction summarised away
    /// ([`forget_summarised_checkpoints`]).
    pub(crate) fn forget_summarised_checkpoints(&mut self) {
        forget_summarised_checkpoints(&mut self.checkpoints, &self.history);
    }

    /// Records that prompt `message` opened a checkpoint at `snapshot`.
    pub fn record_checkpoint(&mut self, message: &str, snapshot: &str, incomplete: Option<String>) {
        let written = self.checkpoint_log().write(message, snapshot, incomplete);
        self.remember_checkpoint(written);
    }

    /// Where a checkpoint taken while the turn runs is written at once (so a crash
    /// mid-turn keeps it); [`Session::remember_checkpoint`] tells the session after.
    pub fn checkpoint_log(&self) -> CheckpointLog {
        CheckpointLog {
            log: self.log.clone(),
        }
    }

    /// Takes in a checkpoint [`CheckpointLog::write`] recorded.
    pub fn remember_checkpoint(&mut self, written: WrittenCheckpoint) {
        CheckpointRecord::apply(&mut self.checkpoints, &written.event, &written.timestamp);
    }

    /// Records how the turn of prompt `message` left the files.
    pub fn record_checkpoint_end(&mut self, message: &str, end: CheckpointEnd) {
        let event = LogEvent::CheckpointFiles {
            message: message.to_string(),
            snapshot: end.snapshot,
            files: end.files,
            not_restorable: end.not_restorable,
        };
        CheckpointRecord::apply(&mut self.checkpoints, &event, "");
        self.log_event(event);
    }

    /// Where prompt `message_id` is in the history, if it is a user prompt there.
    pub fn prompt_index(&self, message_id: &str) -> Result<usize, RewindError> {
        let at = self
            .history
            .iter()
            .position(|m| m.id == message_id)
            .ok_or_else(|| {
                RewindError(format!(
                    "message {message_id} is not in this session's conversation"
                ))
            })?;
        if prompt_text(&self.history[at]).is_none() {
            return Err(RewindError(format!("message {message_id} is not a prompt")));
        }
        Ok(at)
    }

    /// Takes the conversation back to just before prompt `message_id` (the prompt and
    /// what followed are left out; the log keeps them) and returns the prompt's text.
    pub fn rewind_conversation(&mut self, message_id: &str) -> Result<String, RewindError> {
        let at = self.prompt_index(message_id)?;
        let text = prompt_text(&self.history[at]).unwrap_or_default();
        self.cut_history_before(at);
        Ok(text)
    }

    /// Cuts the history before index `at`, answering calls that leaves open, and records
    /// the rewind.
    pub(super) fn cut_history_before(&mut self, at: usize) {
        let to = self.history[at].id.clone();
        self.history.truncate(at);
        let answers = answer_orphan_tool_calls(&mut self.history);
        self.tracker.reset_reported();
        self.pending_context.clear();
        let parent = self.history.last().map(|m| m.id.clone());
        if let Some(log) = &self.log {
            let written = log
                .append_rewind(&to, true, parent)
                .and_then(|()| match &answers {
                    Some(answers) => log.append_message(answers, MessageExtra::default()),
                    None => Ok(()),
                });
            if let Err(e) = written {
                tracing::warn!("session log: {e}");
            }
        }
    }

    /// Appends `message` to the history and the log.
    pub(super) fn push_logged(&mut self, message: Message) {
        if let Some(log) = &self.log
            && let Err(e) = log.append_message(&message, MessageExtra::default())
        {
            tracing::warn!("session log: {e}");
        }
        self.history.push(message);
    }
}

/// The text a user typed, if `message` is a prompt: a user message with text, no tool
/// results, not a compaction summary and not a note such as a `!command`'s output.
pub fn prompt_text(message: &Message) -> Option<String> {
    if message.role != Role::User
        || message
            .content
            .iter()
            .any(|b| matches!(b, Block::ToolResult { .. }))
    {
        return None;
    }
    let text = message.content.iter().find_map(|b| match b {
        Block::Text { text, .. } => Some(text.clone()),
        _ => None,
    })?;
    let note = text.starts_with(CONTEXT_SUMMARY_PREFIX)
        || text.starts_with(SUMMARY_FROM_HERE_PREFIX)
        || text.starts_with("<bash-input>")
        || text.starts_with("<system-reminder>");
    (!note).then_some(text)
}

/// How the summary "summarise from here" leaves opens.
pub const SUMMARY_FROM_HERE_PREFIX: &str =
    "The conversation from here on was summarised at the user's request:\n\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_are_told_from_notes_summaries_and_tool_results() {
        assert_eq!(
            prompt_text(&Message::user_text("fix it")).as_deref(),
            Some("fix it")
        );
        for note in [
            format!("{CONTEXT_SUMMARY_PREFIX}x"),
            format!("{SUMMARY_FROM_HERE_PREFIX}x"),
            "<bash-input>ls</bash-input>".to_string(),
        ] {
            assert_eq!(prompt_text(&Message::user_text(note)), None);
        }
        let answer = Message::new(Role::Assistant, vec![Block::text("hi")]);
        assert_eq!(prompt_text(&answer), None);
    }

    #[test]
    fn checkpoints_of_summarised_prompts_are_dropped_the_newest_stays() {
        let record = |message: &str| CheckpointRecord {
            message: message.to_string(),
            snapshot: "s".into(),
            timestamp: String::new(),
            incomplete: None,
            end: None,
        };
        let mut kept = Message::user_text("kept");
        kept.id = "kept".into();
        let mut checkpoints = vec![
            record("gone-1"),
            record("gone-2"),
            record("kept"),
            record("next"),
        ];
        forget_summarised_checkpoints(&mut checkpoints, &[kept]);
        let left: Vec<&str> = checkpoints.iter().map(|r| r.message.as_str()).collect();
        assert_eq!(left, ["kept", "next"]);
    }
}
