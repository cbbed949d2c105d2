//! What the driver does with controls that arrive while a submission runs.

use super::*;

/// Controls that arrive while a turn or a `!command` runs: an abort cancels it and drops
/// the queue; a submission that may run during a turn runs at once, any other waits in the
/// queue; a mode change applies to the running turn's next tool call at once.
pub(super) struct Busy<'a> {
    modes: ModeGate,
    queue: &'a mut VecDeque<(SubmissionId, Submission)>,
    shared: &'a Arc<Shared>,
    policy: Arc<Mutex<PermissionPolicy>>,
    commands: &'a CommandRegistry,
    tasks: &'a TaskBoard,
    cancel: &'a CancellationToken,
    /// The last mode set meanwhile; the session records it once the work is done.
    pub(super) mode_change: Option<PermissionMode>,
    /// The client hung up: the work is cancelled and no more controls come.
    closed: bool,
    /// Where steered text goes while a turn runs (`None`: other work; it is queued).
    pub(super) steering: Option<robota_core::engine::SteeringInbox>,
}

impl<'a> Busy<'a> {
    pub(super) fn new(
        modes: ModeGate,
        queue: &'a mut VecDeque<(SubmissionId, Submission)>,
        shared: &'a Arc<Shared>,
        policy: Arc<Mutex<PermissionPolicy>>,
        commands: &'a CommandRegistry,
        tasks: &'a TaskBoard,
        cancel: &'a CancellationToken,
    ) -> Self {
        Busy {
            modes,
            queue,
            shared,
            policy,
            commands,
            tasks,
            cancel,
            mode_change: None,
            closed: false,
            steering: None,
        }
    }

    /// Runs `work` to its end, handling the controls that arrive meanwhile.
    pub(super) async fn run<T>(
        &mut self,
        work: impl std::future::Future<Output = T>,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> T {
        tokio::pin!(work);
        loop {
            tokio::select! {
                out = &mut work => return out,
                control = controls.recv(), if !self.closed => self.handle(control),
            }
        }
    }

    fn handle(&mut self, control: Option<Control>) {
        match control {
            None => {
                self.closed = true;
                self.cancel.cancel();
            }
            Some(Control::Abort) => {
                self.cancel.cancel();
                while let Some((id, submission)) = self.queue.pop_front() {
                    self.dropped(id, &submission);
                }
            }
            Some(Control::TakeBackQueued) => {
                if let Some((id, submission)) = self.queue.pop_back() {
                    self.dropped(id, &submission);
                }
            }
            Some(Control::CancelQueue) => {
                while let Some((id, submission)) = self.queue.pop_front() {
                    self.dropped(id, &submission);
                }
            }
            Some(Control::Submit(id, submission)) if submission.runs_during_turn() => {
                self.run_now(id, submission);
            }
            Some(Control::Steer(id, text)) => match &self.steering {
                Some(inbox) => {
                    inbox.push(id.0, text.clone());
                    self.shared
                        .update_state(|s| s.steering.push(QueuedSubmission { id, text }));
                }
                None => self.handle(Some(Control::Submit(id, Submission::Prompt(text)))),
            },
            Some(Control::Submit(id, submission)) => {
                let queued = QueuedSubmission {
                    id,
                    text: submission.text(),
                };
                self.queue.push_back((id, submission));
                self.shared.update_state(|s| s.queue.push(queued.clone()));
                self.shared.emit(SessionEvent::SubmissionQueued(queued));
            }
            Some(Control::SetMode(mode)) => self.set_mode(mode),
            Some(Control::ReloadInstructions) => self
                .shared
                .reload_instructions
                .store(true, std::sync::atomic::Ordering::Relaxed),
            Some(Control::CycleMode) => {
                let current = self.policy.lock().map(|p| p.mode).unwrap_or_default();
                self.set_mode(self.modes.next(current));
            }
        }
    }

    fn dropped(&self, id: SubmissionId, submission: &Submission) {
        let dropped = QueuedSubmission {
            id,
            text: submission.text(),
        };
        self.shared.update_state(|s| s.queue.retain(|q| q.id != id));
        self.shared.emit(SessionEvent::SubmissionDropped(dropped));
    }

    fn set_mode(&mut self, mode: PermissionMode) {
        if let Some(refusal) = self.modes.refusal(mode) {
            self.shared.emit(SessionEvent::Warning(refusal.to_string()));
            return;
        }
        if let Ok(mut p) = self.policy.lock() {
            p.mode = mode;
        }
        self.mode_change = Some(mode);
        self.shared.update_state(|s| s.mode = mode);
    }

    /// A submission that needs nothing the running work holds: `/help`, `/mode`,
    /// `/tasks`, an unknown command.
    fn run_now(&mut self, id: SubmissionId, submission: Submission) {
        let started = Instant::now();
        self.shared.emit(SessionEvent::SubmissionStarted {
            id,
            submission: submission.clone(),
        });
        let (end, result) = match &submission {
            Submission::UnknownCommand {
                name, suggestions, ..
            } => (unknown_command(name, suggestions), String::new()),
            Submission::Command { spec, args } => {
                let output = match spec.name {
                    "help" => Ok(commands::help_text(self.commands)),
                    "tasks" => self.tasks.run(args),
                    "mode" | "permissions" if args.is_empty() => Ok(format!(
                        "Permission mode: {}",
                        self.policy.lock().map(|p| p.mode).unwrap_or_default()
                    )),
                    "mode" | "permissions" => commands::parse_mode(args).and_then(|mode| {
                        if let Some(refusal) = self.modes.refusal(mode) {
                            return Err(crate::commands::CommandError::ModeRefused(
                                refusal.to_string(),
                            ));
                        }
                        self.set_mode(mode);
                        Ok(commands::mode_set(mode))
                    }),
                    other => Err(crate::commands::CommandError::DuringTurn(other.to_string())),
                };
                self.shared.command_ended(id, spec.name, output)
            }
            // `runs_during_turn` holds for none of these; the caller queues them.
            Submission::Prompt(_)
            | Submission::PromptWithImages { .. }
            | Submission::Shell(_)
            | Submission::Custom { .. } => (
                command_failed(format!(
                    "{} cannot run while a turn is in progress",
                    submission.text()
                )),
                String::new(),
            ),
        };
        self.shared.ended(id, started, end, 0, result);
    }
}
