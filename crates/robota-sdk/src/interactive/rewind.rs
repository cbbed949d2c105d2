//! Checkpoints around each prompt and `/rewind`: the driver's side of
//! `sdk::checkpoint` — snapshot before, record what changed after, and put code and
//! conversation back as asked.

use super::*;

/// A checkpoint being taken: the snapshot and its written log line.
pub(super) struct PendingCheckpoint(
    tokio::task::JoinHandle<(
        Result<checkpoint::Snapshot, checkpoint::CheckpointError>,
        Option<robota_session::rewind::WrittenCheckpoint>,
    )>,
);

impl Driver {
    /// Snapshots the files before prompt `prompt_id` runs and records the checkpoint;
    /// returns the snapshot (`None`: no checkpoints, or the snapshot failed, which is
    /// told as a warning and never stops the turn).
    /// Starts the checkpoint of prompt `prompt_id` while the turn's request goes to the
    /// model: the snapshot is taken in the background, its line written as soon as it is
    /// taken, and the turn's hooks and tool calls wait for it (nothing changes a file
    /// before its pre-image is stored).
    pub(super) fn start_checkpoint(&mut self, prompt_id: &str) -> Option<PendingCheckpoint> {
        let checkpoints = self.options.checkpoints.clone()?;
        let (opener, barrier) = robota_session::barrier::EffectBarrier::new();
        self.session.hold_effects_until(barrier);
        let log = self.session.checkpoint_log();
        let prompt_id = prompt_id.to_string();
        Some(PendingCheckpoint(tokio::spawn(async move {
            let taken = checkpoints.snapshot().await;
            let written = taken
                .as_ref()
                .ok()
                .map(|s| log.write(&prompt_id, &s.id, s.incomplete.clone()));
            opener.open();
            (taken, written)
        })))
    }

    /// The snapshot a turn started from, once taken (told to the session and the user).
    pub(super) async fn opened_checkpoint(&mut self, pending: PendingCheckpoint) -> Option<String> {
        let (taken, written) = match pending.0.await {
            Ok(done) => done,
            Err(e) => (Err(checkpoint::CheckpointError::Task(e)), None),
        };
        if let Some(written) = written {
            self.session.remember_checkpoint(written);
        }
        match taken {
            Ok(snapshot) => {
                if let Some(incomplete) = snapshot.incomplete {
                    self.emit(SessionEvent::Warning(format!(
                        "Checkpoint incomplete: {incomplete}"
                    )));
                }
                Some(snapshot.id)
            }
            Err(e) => {
                self.emit(SessionEvent::Warning(format!(
                    "No checkpoint for this prompt (files cannot be rewound to it): {e}"
                )));
                None
            }
        }
    }

    /// Records which files the turn of `prompt_id` changed.
    pub(super) async fn close_checkpoint(&mut self, prompt_id: &str, start: String) {
        let Some(checkpoints) = self.options.checkpoints.clone() else {
            return;
        };
        match checkpoints.turn_end(start).await {
            Ok(end) => self.session.record_checkpoint_end(prompt_id, end),
            Err(e) => self.emit(SessionEvent::Warning(format!(
                "Could not record the files this turn changed: {e}"
            ))),
        }
    }

    /// `/rewind`: without arguments the prompts to go back to (an event and a listing);
    /// `/rewind <id> [both|conversation|code|summarize]` does it.
    pub(super) async fn run_rewind(
        &mut self,
        id: SubmissionId,
        args: &str,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> (TurnEnd, String) {
        let mut words = args.split_whitespace();
        let Some(message_id) = words.next() else {
            let points =
                checkpoint::rewind_points(self.session.history(), self.session.checkpoints());
            let text = checkpoint::points_text(&points);
            self.emit(SessionEvent::RewindPoints { id, points });
            return self.shared.command_ended(id, "rewind", Ok(text));
        };
        let action = match words.next() {
            None => RewindAction::CodeAndConversation,
            Some(word) => match RewindAction::parse(word) {
                Some(action) => action,
                None => {
                    let message = format!(
                        "Unknown rewind action {word:?}; choose one of: both, conversation, code, summarize"
                    );
                    return (command_failed(message), String::new());
                }
            },
        };
        match self.rewind(message_id, action, controls).await {
            Ok(rewound) => {
                let text = checkpoint::rewound_text(&rewound);
                self.emit(SessionEvent::Rewound { id, rewound });
                self.refresh_state();
                self.shared.command_ended(id, "rewind", Ok(text))
            }
            Err(end) => (end, String::new()),
        }
    }

    pub(super) async fn rewind(
        &mut self,
        message_id: &str,
        action: RewindAction,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> Result<Rewound, TurnEnd> {
        self.session
            .prompt_index(message_id)
            .map_err(|e| command_failed(e.0))?;
        let mut rewound = Rewound {
            message_id: message_id.to_string(),
            action,
            prompt: None,
            restored: Vec::new(),
            removed: Vec::new(),
            not_restorable: Vec::new(),
            history: None,
        };
        if action.restores_code() {
            let Some(checkpoints) = self.options.checkpoints.clone() else {
                return Err(command_failed(
                    "Checkpoints are off in this session: the code cannot be rewound",
                ));
            };
            let Some(records) = checkpoint::records_from(self.session.checkpoints(), message_id)
            else {
                return Err(command_failed(format!(
                    "Prompt {message_id} has no checkpoint: its files cannot be put back"
                )));
            };
            let report = checkpoints
                .restore(records)
                .await
                .map_err(|e| command_failed(e.to_string()))?;
            rewound.restored = report.restored;
            rewound.removed = report.removed;
            rewound.not_restorable = report.not_restorable;
        }
        match action {
            RewindAction::CodeAndConversation | RewindAction::Conversation => {
                let prompt = self
                    .session
                    .rewind_conversation(message_id)
                    .map_err(|e| command_failed(e.0))?;
                rewound.prompt = Some(prompt);
                rewound.history = Some(self.session.history().to_vec());
            }
            RewindAction::Summarize => {
                let cancel = CancellationToken::new();
                let sink = self.sink();
                let (mut busy, session) = self.busy(&cancel);
                let summary = session.summarize_from(message_id, &sink, &cancel);
                let done = busy.run(summary, controls).await;
                let mode_change = busy.mode_change;
                self.keep_mode(mode_change);
                match done {
                    Ok(_) => rewound.history = Some(self.session.history().to_vec()),
                    Err(CompactError::Interrupted) => return Err(TurnEnd::Interrupted),
                    Err(CompactError::Failed(err)) => {
                        return Err(TurnEnd::Error(TurnError::from_provider(
                            &err,
                            &self.options.endpoint,
                        )));
                    }
                    Err(other) => return Err(command_failed(other.message())),
                }
            }
            RewindAction::Code => {}
        }
        Ok(rewound)
    }
}
