//! What event handling remembers between events: the cells the stream is writing to (the
//! answer, thinking, unfinished tool calls, running `!commands`, the retry and compaction
//! notices) by their index, kept right when cells go (`forget_from`) or older cells come
//! in above them (`shift`).

use std::collections::HashMap;

use robota_sdk::SubmissionId;

/// What event handling remembers between events.
#[derive(Debug, Default)]
pub(crate) struct EventState {
    /// The answer cell text deltas go to.
    pub(super) assistant: Option<usize>,
    /// The thinking cell thinking deltas go to.
    pub(super) thinking: Option<usize>,
    /// Cells of the current provider attempt start here (removed if it is discarded).
    pub(super) attempt_start: usize,
    /// The current attempt streamed something.
    pub(super) streamed: bool,
    /// Tool-use id → its cell, for calls not yet finished.
    pub(super) tools: HashMap<String, usize>,
    /// The retry notice of the current attempt; it goes away once the retry succeeds.
    pub(super) retry_notice: Option<usize>,
    /// Submissions running beside the turn (commands, `!commands`): their end is not the
    /// turn's end.
    pub(super) side: Vec<SubmissionId>,
    /// The "Compacting…" notice, replaced by the divider once the compaction is done.
    pub(super) compacting: Option<usize>,
    /// Running `!commands` → their cell.
    pub(super) shells: HashMap<SubmissionId, usize>,
    /// Running commands → what was typed (without the `/`), the heading of their output.
    pub(super) typed: HashMap<SubmissionId, String>,
}

impl EventState {
    /// Cells from `len` on are gone.
    pub(crate) fn forget_from(&mut self, len: usize) {
        self.assistant = self.assistant.filter(|i| *i < len);
        self.thinking = self.thinking.filter(|i| *i < len);
        self.tools.retain(|_, i| *i < len);
        self.retry_notice = self.retry_notice.filter(|i| *i < len);
        self.compacting = self.compacting.filter(|i| *i < len);
        self.shells.retain(|_, i| *i < len);
        self.attempt_start = self.attempt_start.min(len);
    }

    /// The first `removed` cells were replaced by `added` others: every cell remembered
    /// (none of them among the removed) moves by the difference.
    pub(crate) fn shift(&mut self, removed: usize, added: usize) {
        let moved = |i: usize| (i + added).saturating_sub(removed);
        for slot in [
            &mut self.assistant,
            &mut self.thinking,
            &mut self.retry_notice,
            &mut self.compacting,
        ] {
            *slot = slot.map(moved);
        }
        self.tools.values_mut().for_each(|i| *i = moved(*i));
        self.shells.values_mut().for_each(|i| *i = moved(*i));
        self.attempt_start = moved(self.attempt_start);
    }
}
