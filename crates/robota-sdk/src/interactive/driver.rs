//! The session's task: `Driver` owns the `Session` and the queue of submissions, runs them
//! one at a time (`drive`), applies the controls that arrive while nothing runs, and fires
//! the SessionStart and SessionEnd hooks around its life. What it reports goes to the
//! clients through `Shared`: the first state (`initial_state`) and the sink that turns the
//! session's updates into events and state (`update_sink`).

use super::*;

pub(super) struct Driver {
    pub(super) session: Session,
    pub(super) shared: Arc<Shared>,
    pub(super) queue: VecDeque<(SubmissionId, Submission)>,
    pub(super) options: SessionOptions,
    /// Shift+Tab reaches `bypassPermissions` only when the session started in it.
    pub(super) modes: ModeGate,
    /// Rules a command or skill granted for the running turn.
    pub(super) grants: TurnGrants,
    /// Runs `context: fork` commands and skills as subagents.
    pub(super) subagents: Option<Arc<AgentTool>>,
    /// Background jobs and running subagents, for `/tasks`.
    pub(super) tasks: Arc<TaskBoard>,
}

pub(super) async fn drive(
    session: Session,
    options: SessionOptions,
    grants: TurnGrants,
    subagents: Option<Arc<AgentTool>>,
    tasks: Arc<TaskBoard>,
    shared: Arc<Shared>,
    mut controls: mpsc::UnboundedReceiver<Control>,
) {
    let modes = ModeGate {
        bypass_in_cycle: session.mode() == PermissionMode::BypassPermissions,
        lock: session.mode_lock().clone(),
    };
    let mut driver = Driver {
        session,
        shared,
        queue: VecDeque::new(),
        options,
        modes,
        grants,
        subagents,
        tasks,
    };
    driver.shared.update_state(|_| {});
    if let Some(checkpoints) = &driver.options.checkpoints {
        checkpoints.prepare();
    }
    let source = driver.session.start_source().to_string();
    driver.fire_session_start(&source).await;
    loop {
        let next = match driver.queue.pop_front() {
            Some(next) => Some(next),
            None => match controls.recv().await {
                None => break,
                Some(control) => driver.idle_control(control),
            },
        };
        if driver.shared.reload_instructions.load(Ordering::Relaxed) {
            driver.rebuild_system_prompt().await;
        }
        if let Some((id, submission)) = next {
            driver.run(id, submission, &mut controls).await;
        }
    }
    driver.fire_session_end("other").await;
    if let Some(mcp) = &driver.options.mcp {
        mcp.shutdown().await;
    }
    if let Some(lsp) = &driver.options.lsp {
        lsp.shutdown().await;
    }
}

pub(super) fn initial_state(session: &Session) -> SessionState {
    let mut state = SessionState {
        session_id: session.id().to_string(),
        name: session.name().map(str::to_string),
        model: session.config().model.clone(),
        mode: session.mode(),
        usage: robota_core::Usage::default(),
        cost_usd: Some(0.0),
        models: Vec::new(),
        context: None,
        running: None,
        queue: Vec::new(),
        steering: Vec::new(),
    };
    add_session_usage(&mut state, session);
    state
}

/// A sink that turns session updates into events for `shared`'s clients, keeping usage
/// (a subagent's included) and context in the state as they arrive.
pub(super) fn update_sink(
    shared: Arc<Shared>,
) -> impl Fn(robota_session::SessionUpdate) + Send + Sync {
    move |update| {
        if let robota_session::SessionUpdate::ModeChanged(mode) = update {
            shared.update_state(|s| s.mode = mode);
            return;
        }
        let Some(event) = translate(update) else {
            return;
        };
        let usage = match &event {
            SessionEvent::Usage {
                usage,
                cost_usd,
                model,
                ..
            } => Some((*usage, *cost_usd, model.clone())),
            SessionEvent::Subagent { event, .. } => match event.as_ref() {
                SessionEvent::Usage {
                    usage,
                    cost_usd,
                    model,
                    ..
                } => Some((*usage, *cost_usd, model.clone())),
                _ => None,
            },
            _ => None,
        };
        match (&event, usage) {
            (_, Some((usage, cost, model))) => {
                shared.emit(event);
                shared.update_state(|s| s.add_usage(&model, &usage, cost));
            }
            (SessionEvent::SteeringSent(sent), None) => {
                let sent: Vec<SubmissionId> = sent.iter().map(|s| s.id).collect();
                shared.emit(event);
                shared.update_state(|s| s.steering.retain(|q| !sent.contains(&q.id)));
            }
            (SessionEvent::Context(context), None) => {
                let context = *context;
                shared.emit(event);
                shared.update_state(|s| s.context = Some(context));
            }
            _ => shared.emit(event),
        }
    }
}

/// Puts the session's usage per model (and its cost) into `state`'s totals.
pub(super) fn add_session_usage(state: &mut SessionState, session: &Session) {
    for (model, usage) in session.usage_by_model() {
        let cost = models::lookup(&model).price.map(|p| p.cost(&usage));
        state.add_usage(&model, &usage, cost);
    }
}

impl Driver {
    pub(super) fn emit(&self, event: SessionEvent) {
        self.shared.emit(event);
    }

    /// A control while nothing runs: a submission to run, or a change applied at once.
    pub(super) fn idle_control(&mut self, control: Control) -> Option<(SubmissionId, Submission)> {
        match control {
            Control::Submit(id, submission) => return Some((id, submission)),
            Control::Steer(id, text) => return Some((id, Submission::Prompt(text))),
            Control::Abort | Control::TakeBackQueued | Control::CancelQueue => {}
            Control::SetMode(mode) => self.set_mode(mode),
            Control::CycleMode => {
                self.set_mode(self.modes.next(self.session.mode()));
            }
            Control::ReloadInstructions => {
                self.shared
                    .reload_instructions
                    .store(true, Ordering::Relaxed);
            }
        }
        None
    }

    /// Builds the system prompt again from its parts (context files read afresh, git
    /// asked again, the response language as it is now) on a blocking thread, so the
    /// actor's runtime thread never waits for git; without parts the prompt stays as given.
    pub(super) async fn rebuild_system_prompt(&mut self) {
        self.shared
            .reload_instructions
            .store(false, Ordering::Relaxed);
        if let Some(instructions) = self.options.instructions.clone() {
            let model = self.session.config().model.clone();
            let build = tokio::task::spawn_blocking(move || instructions.build(&model));
            if let Ok(built) = build.await {
                self.session.set_system_prompt(built.prompt);
            }
        }
    }

    pub(super) fn set_mode(&mut self, mode: PermissionMode) {
        if let Some(refusal) = self.modes.refusal(mode) {
            self.shared.emit(SessionEvent::Warning(refusal.to_string()));
            return;
        }
        self.session.set_mode(mode);
        self.shared.update_state(|s| s.mode = mode);
    }

    /// What handles controls while work cancelled by `cancel` runs, and the session the
    /// work runs on.
    pub(super) fn busy<'a>(
        &'a mut self,
        cancel: &'a CancellationToken,
    ) -> (Busy<'a>, &'a mut Session) {
        let policy = self.session.policy_handle();
        let busy = Busy::new(
            self.modes.clone(),
            &mut self.queue,
            &self.shared,
            policy,
            &self.options.commands,
            &self.tasks,
            cancel,
        );
        (busy, &mut self.session)
    }

    /// Records the mode set while the work ran (it already applied to the work).
    pub(super) fn keep_mode(&mut self, mode_change: Option<PermissionMode>) {
        if let Some(mode) = mode_change {
            self.session.set_mode(mode);
        }
    }

    /// The session's own state after a command may have changed it.
    pub(super) fn refresh_state(&self) {
        let mut fresh = initial_state(&self.session);
        self.shared.update_state(|s| {
            fresh.running = s.running;
            fresh.queue = std::mem::take(&mut s.queue);
            fresh.steering = std::mem::take(&mut s.steering);
            fresh.context = s.context;
            *s = fresh;
        });
    }

    pub(super) async fn fire_session_start(&mut self, source: &str) {
        let sink = self.sink();
        self.session.fire_session_start(source, &sink).await;
    }

    pub(super) async fn fire_session_end(&mut self, reason: &str) {
        let sink = self.sink();
        self.session.fire_session_end(reason, &sink).await;
    }

    /// A sink that turns session updates into events, keeping usage and context in the
    /// state as they arrive.
    pub(super) fn sink(&self) -> impl Fn(robota_session::SessionUpdate) + Send + Sync + use<> {
        update_sink(self.shared.clone())
    }

    /// Runs one submission from its start event to its end event.
    pub(super) async fn run(
        &mut self,
        id: SubmissionId,
        submission: Submission,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) {
        let started = Instant::now();
        self.shared.update_state(|s| {
            s.running = Some(id);
            s.queue.retain(|q| q.id != id);
        });
        self.emit(SessionEvent::SubmissionStarted {
            id,
            submission: submission.clone(),
        });
        let (end, rounds, result) = match submission {
            Submission::Prompt(prompt) => self.run_turn(prompt, Vec::new(), controls).await,
            Submission::PromptWithImages { text, images } => {
                self.run_turn(text, images, controls).await
            }
            Submission::Command { spec, args } if spec.name == "init" => {
                let prompt = match args.trim() {
                    "" => commands::INIT_PROMPT.to_string(),
                    notes => format!("{}\n\nThe user adds: {notes}", commands::INIT_PROMPT),
                };
                self.run_turn(prompt, Vec::new(), controls).await
            }
            Submission::Command { spec, args } if spec.name == "rewind" => {
                let (end, result) = self.run_rewind(id, &args, controls).await;
                (end, 0, result)
            }
            Submission::Command { spec, args } if spec.name == "compact" => {
                let (end, result) = self.run_compact(&args, controls).await;
                (end, 0, result)
            }
            Submission::Command { spec, args } => {
                let (end, output) = self.run_command(id, spec.name, spec.scope, &args).await;
                (end, 0, output)
            }
            Submission::Custom { command, args } => {
                self.run_prompt_command(id, &command, &args, controls).await
            }
            Submission::UnknownCommand {
                name, suggestions, ..
            } => (unknown_command(&name, &suggestions), 0, String::new()),
            Submission::Shell(command) => self.run_shell(id, command, controls).await,
        };
        let end = self.with_log_failure(end);
        self.shared.ended(id, started, end, rounds, result);
        self.shared.update_state(|s| s.running = None);
    }

    /// A session log that stopped being written is never reported as a success: a
    /// successful end becomes a write failure; any other end keeps its kind and a warning
    /// says it.
    pub(super) fn with_log_failure(&self, end: TurnEnd) -> TurnEnd {
        let Some(failure) = self.session.take_log_failure() else {
            return end;
        };
        let hint = "free disk space or fix the permissions of ROBOTA_HOME; this session goes on in memory but may not resume";
        if end.is_success() {
            let message = format!("The session log could not be written: {failure}");
            return TurnEnd::Error(
                TurnError::new(ErrorKind::WriteFailure, message).with_hint(hint),
            );
        }
        self.emit(SessionEvent::Warning(format!(
            "The session log could not be written: {failure} — {hint}"
        )));
        end
    }
}

/// Which modes a client may switch to: `bypassPermissions` only when the session started
/// in it (the Shift+Tab cycle) and its lock allows it (any switch).
#[derive(Debug, Clone)]
pub(super) struct ModeGate {
    pub(super) bypass_in_cycle: bool,
    pub(super) lock: ModeLock,
}

impl ModeGate {
    /// Why a switch to `mode` is refused, if it is.
    pub(super) fn refusal(&self, mode: PermissionMode) -> Option<&str> {
        self.lock.refusal(mode)
    }

    /// The mode after `current` in the Shift+Tab cycle.
    pub(super) fn next(&self, current: PermissionMode) -> PermissionMode {
        let bypass =
            self.bypass_in_cycle && self.refusal(PermissionMode::BypassPermissions).is_none();
        current.next_in_cycle(bypass)
    }
}
