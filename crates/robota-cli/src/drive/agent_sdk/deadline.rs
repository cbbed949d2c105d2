//! The wall deadline of each turn the program sends (`--max-turn-seconds`, setting
//! `maxTurnSeconds`), as print mode keeps it. A user message's clock starts when it becomes
//! the oldest message still owed a result (it runs now, or runs next once the session is
//! free). Past its deadline the turn is aborted and its result is an error naming what it
//! waited on; the messages queued behind it run after it as usual. A turn that does not
//! wind down within the abort grace leaves the session stuck: every message still owed a
//! result gets an error result, and the run ends with exit 124, as `-p` does.

use std::time::{Duration, Instant};

use crate::sdk::commands::SubmissionId;
use crate::sdk::{ErrorKind, TurnEnd, TurnError};

use super::super::super::output;
use super::super::super::turn_watch::ABORT_GRACE;
use super::{Driver, Owed};

/// The deadline's state for one run.
pub(super) struct TurnDeadline {
    /// How long one turn may take.
    limit: Duration,
    /// The oldest message owed a result, and when its deadline passes.
    clock: Option<(SubmissionId, Instant)>,
    /// The message stopped at its deadline, if one is winding down.
    stopped: Option<Stopped>,
}

/// A message whose turn was aborted at its deadline and has not ended yet.
struct Stopped {
    id: SubmissionId,
    /// What its result says.
    error: TurnError,
    /// When to stop waiting for the aborted turn.
    give_up: Instant,
}

impl TurnDeadline {
    /// A deadline of `limit` per turn.
    pub(super) fn new(limit: Duration) -> Self {
        TurnDeadline {
            limit,
            clock: None,
            stopped: None,
        }
    }

    /// When the driver must look again: a deadline passing, or the wind-down grace ending.
    pub(super) fn alarm(&self) -> Option<Instant> {
        match &self.stopped {
            Some(stopped) => Some(stopped.give_up),
            None => self.clock.map(|(_, at)| at),
        }
    }

    /// The error the result of `id` carries when its turn was stopped at the deadline.
    pub(super) fn take_error(&mut self, id: SubmissionId) -> Option<TurnError> {
        if self.stopped.as_ref().is_some_and(|s| s.id == id) {
            return self.stopped.take().map(|s| s.error);
        }
        None
    }
}

impl Driver {
    /// Starts the clock of the oldest message owed a result when it changed (after a
    /// submission, an end or a re-submission).
    pub(super) fn restart_deadline_clock(&mut self) {
        let Some(deadline) = self.deadline.as_mut() else {
            return;
        };
        let oldest = self
            .pending
            .iter()
            .filter(|(_, (owed, _))| *owed == Owed::Result)
            .map(|(id, _)| *id)
            .min();
        let stopped = deadline.stopped.as_ref().map(|s| s.id);
        deadline.clock = match (oldest, deadline.clock) {
            (Some(id), _) if Some(id) == stopped => None,
            (Some(id), Some((timed, at))) if timed == id => Some((id, at)),
            (Some(id), _) => Some((id, Instant::now() + deadline.limit)),
            (None, _) => None,
        };
    }

    /// The alarm rang: stops the turn past its deadline, or gives up on one that did not
    /// wind down (then the run ends: the session is stuck in what hung).
    pub(super) fn on_deadline_alarm(&mut self) {
        let now = Instant::now();
        let in_turn = self.watch.in_turn();
        let Some(deadline) = self.deadline.as_mut() else {
            return;
        };
        if deadline.stopped.as_ref().is_some_and(|s| now >= s.give_up) {
            self.give_up_stuck_session();
            return;
        }
        let Some((id, at)) = deadline.clock else {
            return;
        };
        if now < at {
            return;
        }
        let error = self.watch.deadline_error(deadline.limit);
        // A turn that never started (the session is busy elsewhere) will not wind down.
        let grace = if in_turn { ABORT_GRACE } else { Duration::ZERO };
        deadline.stopped = Some(Stopped {
            id,
            error,
            give_up: now + grace,
        });
        deadline.clock = None;
        self.session.abort();
    }

    /// Every message still owed a result gets an error result: the one that hung names
    /// what it waited on, the others that they could not run.
    fn give_up_stuck_session(&mut self) {
        let stopped = self.deadline.as_mut().and_then(|d| d.stopped.take());
        let mut owed: Vec<SubmissionId> = self
            .pending
            .iter()
            .filter(|(_, (owed, _))| *owed == Owed::Result)
            .map(|(id, _)| *id)
            .collect();
        owed.sort();
        for id in owed {
            let error = match &stopped {
                Some(s) if s.id == id => s.error.clone(),
                _ => TurnError::new(
                    ErrorKind::Timeout,
                    "The message did not run: the session is stuck in a turn that ran past its deadline",
                ),
            };
            self.printer.totals.errors.push(error.line());
            let value = output::result_message(
                &self.printer.session_id,
                &TurnEnd::Error(error),
                "",
                Duration::ZERO,
                &self.printer.totals,
            );
            self.printer.emit(value);
            self.printer.reset_totals();
        }
        self.pending.clear();
        self.stuck = true;
    }
}
