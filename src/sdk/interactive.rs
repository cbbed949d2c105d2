//! `InteractiveSession`: the one client API. It owns a `Session` on its own task and takes
//! typed submissions (prompts, slash commands, `!commands`) and controls (abort, take back
//! a queued submission, mode changes) while work runs. Each submission gets an id and is
//! bracketed by `SubmissionStarted`/`SubmissionEnded`; while one runs, the others wait in
//! the one queue (a command that reads nothing the turn holds, like `/help` or `/mode`,
//! runs at once). `/compact` runs here too, interruptible like a turn. State that changes
//! comes back as `SessionEvent::State`. SessionStart
//! hooks fire when the task starts, SessionEnd hooks when it is closed (and both around
//! `/clear`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::core::context::ContextState;
use crate::core::engine::TurnStop;
use crate::core::permission::{PermissionMode, PermissionPolicy};
use crate::core::{Block, Role, models};
use crate::session::Session;
use crate::session::compact::CompactError;
use crate::session::conversation::CompactTrigger;

use super::agents::{AgentCatalog, AgentRuntime, AgentTool, AgentToolSource, SubagentTask};
use super::attachments;
use super::checkpoint::{self, Checkpointer, RewindAction, Rewound};
use super::commands::expand::{ExpandContext, expand};
use super::commands::grants::TurnGrants;
use super::commands::{
    self, CommandEffect, CommandRegistry, CommandScope, PromptCommand, Submission, SubmissionId,
};
use super::errors::{ErrorKind, ProviderEndpoint, TurnError};
use super::events::{Outcome, QueuedSubmission, SessionEvent, SessionState, TurnEnd};
use super::mcp::McpManager;
use super::shell_command::run_shell_command;
use super::skills::{SkillTool, SkillToolSource};
use super::translate::translate;

/// How a session is presented to its clients.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Where the provider is reached and what configured it, for error messages.
    pub endpoint: ProviderEndpoint,
    /// The session's MCP servers: `/mcp` reports on them, and they are shut down when the
    /// session ends.
    pub mcp: Option<Arc<McpManager>>,
    /// The commands beside the built-ins (custom commands, skills); the model gets the
    /// `Skill` tool when some of them are for it.
    pub commands: Arc<CommandRegistry>,
    /// The subagents the model may start through the `Agent` tool (`None`: no Agent tool).
    pub agents: Option<Arc<AgentCatalog>>,
    /// The project's checkpoint store: each prompt opens a checkpoint and `/rewind` can
    /// put files back (`None`: no checkpoints, `/rewind` rewinds the conversation only).
    pub checkpoints: Option<Checkpointer>,
}

enum Control {
    Submit(SubmissionId, Submission),
    Abort,
    TakeBackQueued,
    SetMode(PermissionMode),
    CycleMode,
}

/// A running session driven by submissions and observed through events.
pub struct InteractiveSession {
    controls: mpsc::UnboundedSender<Control>,
    events: Option<mpsc::UnboundedReceiver<SessionEvent>>,
    id: String,
    commands: Arc<CommandRegistry>,
    next_id: AtomicU64,
    task: JoinHandle<()>,
}

impl InteractiveSession {
    /// Starts the session's task on the current tokio runtime.
    pub fn start(session: Session) -> Self {
        Self::start_with(session, SessionOptions::default())
    }

    pub fn start_with(mut session: Session, options: SessionOptions) -> Self {
        let (controls, control_rx) = mpsc::unbounded_channel();
        let (event_tx, events) = mpsc::unbounded_channel();
        let id = session.id().to_string();
        let commands = options.commands.clone();
        let grants = TurnGrants::default();
        let mut skill_tool = None;
        if commands.model_invocable().next().is_some() {
            let tool = Arc::new(SkillTool::new(
                commands.clone(),
                session.policy_handle(),
                grants.clone(),
                id.clone(),
            ));
            session.add_tool_source(Arc::new(SkillToolSource(tool.clone())));
            skill_tool = Some(tool);
        }
        let shared = Arc::new(Shared {
            events: event_tx,
            state: Mutex::new(initial_state(&session)),
        });
        let mut subagents = None;
        if let Some(catalog) = options.agents.clone() {
            let runtime = AgentRuntime {
                provider: session.provider(),
                tools: session.tools().clone(),
                policy: session.policy_handle(),
                hooks: session.shared_hooks(),
                config: session.config().clone(),
                builtin_prompt: super::system_prompt::BUILT_IN.to_string(),
                transcript_dir: session
                    .log_path()
                    .map(|path| path.with_extension("").join("subagents")),
                sink: Arc::new(update_sink(shared.clone())),
                current_model: {
                    let shared = shared.clone();
                    Arc::new(move || {
                        shared
                            .state
                            .lock()
                            .map(|s| s.model.clone())
                            .unwrap_or_default()
                    })
                },
                catalog,
            };
            let tool = Arc::new(AgentTool::new(runtime));
            session.add_tool_source(Arc::new(AgentToolSource(tool.clone())));
            if let Some(skill_tool) = &skill_tool {
                skill_tool.set_subagents(tool.clone());
            }
            subagents = Some(tool);
        }
        let task = tokio::spawn(drive(
            session, options, grants, subagents, shared, control_rx,
        ));
        InteractiveSession {
            controls,
            events: Some(events),
            id,
            commands,
            next_id: AtomicU64::new(1),
            task,
        }
    }

    /// Ends the session: a running turn is interrupted, SessionEnd hooks run (their events
    /// still arrive), and this returns when the session's task is done.
    pub async fn close(self) {
        drop(self.controls);
        let _ = self.task.await;
    }

    /// The id the session started with (`/clear` starts a new one: `SessionState` says
    /// which is current).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Takes the event stream (once).
    pub fn events(&mut self) -> Option<mpsc::UnboundedReceiver<SessionEvent>> {
        self.events.take()
    }

    /// Submits typed text (parsed once: `/name args` is a command, anything else a prompt)
    /// or a [`Submission`]; the names of the session's custom commands and skills are
    /// resolved here. It runs now when the session is idle, else waits in the queue.
    pub fn submit(&self, submission: impl Into<Submission>) -> SubmissionId {
        let id = SubmissionId(self.next_id.fetch_add(1, Ordering::Relaxed));
        let submission = self.commands.resolve(submission.into());
        let _ = self.controls.send(Control::Submit(id, submission));
        id
    }

    /// The session's commands: the built-ins and its custom commands and skills.
    pub fn commands(&self) -> &Arc<CommandRegistry> {
        &self.commands
    }

    /// Runs a `!command` (without the `!`) in the session's directory with its settings'
    /// environment, stdin closed, for at most two minutes; `abort` stops it. Its output
    /// comes as `SessionEvent::ShellOutput`, and the command with its output joins the
    /// conversation for the model's next turn.
    pub fn run_shell(&self, command: impl Into<String>) -> SubmissionId {
        self.submit(Submission::Shell(command.into()))
    }

    /// Interrupts the running submission (a turn's partial answer is kept) and drops the
    /// queue (each dropped submission is reported).
    pub fn abort(&self) {
        let _ = self.controls.send(Control::Abort);
    }

    /// Drops the newest queued submission (reported as `SubmissionDropped`).
    pub fn take_back_queued(&self) {
        let _ = self.controls.send(Control::TakeBackQueued);
    }

    /// Sets the permission mode; a running turn's next tool call sees it.
    pub fn set_mode(&self, mode: PermissionMode) {
        let _ = self.controls.send(Control::SetMode(mode));
    }

    /// Moves to the next mode of the Shift+Tab cycle.
    pub fn cycle_mode(&self) {
        let _ = self.controls.send(Control::CycleMode);
    }

    /// Asks for the prompts this session can rewind to: they come as
    /// `SessionEvent::RewindPoints` (the same as submitting `/rewind`).
    pub fn list_rewind_points(&self) -> SubmissionId {
        self.submit("/rewind")
    }

    /// Rewinds to prompt `message_id` (a [`checkpoint::RewindPoint`]'s): puts back the
    /// code, the conversation or both as they were before it, or summarises from it on.
    /// Reported as `SessionEvent::Rewound`; waits behind a running turn like a prompt.
    pub fn rewind(&self, message_id: &str, action: RewindAction) -> SubmissionId {
        self.submit(format!("/rewind {message_id} {}", action.as_str()))
    }
}

/// What the driver and the running turn's event sink share: the event channel and the
/// state clients are sent.
struct Shared {
    events: mpsc::UnboundedSender<SessionEvent>,
    state: Mutex<SessionState>,
}

impl Shared {
    fn emit(&self, event: SessionEvent) {
        let _ = self.events.send(event);
    }

    /// Sends the end of submission `id`, begun at `started`.
    fn ended(&self, id: SubmissionId, started: Instant, end: TurnEnd, rounds: u32, result: String) {
        self.emit(SessionEvent::SubmissionEnded {
            id,
            outcome: Outcome {
                end,
                rounds,
                duration: started.elapsed(),
                result,
            },
        });
    }

    /// A command's end: its output is sent (and is the result), or it failed.
    fn command_ended(
        &self,
        id: SubmissionId,
        command: &str,
        output: Result<String, String>,
    ) -> (TurnEnd, String) {
        match output {
            Ok(output) => {
                self.emit(SessionEvent::CommandOutput {
                    id,
                    command: command.to_string(),
                    output: output.clone(),
                });
                (TurnEnd::Success, output)
            }
            Err(message) => (command_failed(message), String::new()),
        }
    }

    /// Changes the state and sends it whole.
    fn update_state(&self, change: impl FnOnce(&mut SessionState)) {
        let snapshot = match self.state.lock() {
            Ok(mut state) => {
                change(&mut state);
                state.clone()
            }
            Err(_) => return,
        };
        self.emit(SessionEvent::State(snapshot));
    }
}

struct Driver {
    session: Session,
    shared: Arc<Shared>,
    queue: VecDeque<(SubmissionId, Submission)>,
    options: SessionOptions,
    /// Shift+Tab reaches `bypassPermissions` only when the session started in it.
    bypass_in_cycle: bool,
    /// Rules a command or skill granted for the running turn.
    grants: TurnGrants,
    /// Runs `context: fork` commands and skills as subagents.
    subagents: Option<Arc<AgentTool>>,
}

async fn drive(
    session: Session,
    options: SessionOptions,
    grants: TurnGrants,
    subagents: Option<Arc<AgentTool>>,
    shared: Arc<Shared>,
    mut controls: mpsc::UnboundedReceiver<Control>,
) {
    let bypass_in_cycle = session.mode() == PermissionMode::BypassPermissions;
    let mut driver = Driver {
        session,
        shared,
        queue: VecDeque::new(),
        options,
        bypass_in_cycle,
        grants,
        subagents,
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
        if let Some((id, submission)) = next {
            driver.run(id, submission, &mut controls).await;
        }
    }
    driver.fire_session_end("other").await;
    if let Some(mcp) = &driver.options.mcp {
        mcp.shutdown().await;
    }
}

fn initial_state(session: &Session) -> SessionState {
    let mut state = SessionState {
        session_id: session.id().to_string(),
        name: session.name().map(str::to_string),
        model: session.config().model.clone(),
        mode: session.mode(),
        usage: crate::core::Usage::default(),
        cost_usd: Some(0.0),
        models: Vec::new(),
        context: None,
        running: None,
        queue: Vec::new(),
    };
    add_session_usage(&mut state, session);
    state
}

/// A sink that turns session updates into events for `shared`'s clients, keeping usage
/// (a subagent's included) and context in the state as they arrive.
fn update_sink(shared: Arc<Shared>) -> impl Fn(crate::session::SessionUpdate) + Send + Sync {
    move |update| {
        if let crate::session::SessionUpdate::ModeChanged(mode) = update {
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
fn add_session_usage(state: &mut SessionState, session: &Session) {
    for (model, usage) in session.usage_by_model() {
        let cost = models::lookup(&model).price.map(|p| p.cost(&usage));
        state.add_usage(&model, &usage, cost);
    }
}

impl Driver {
    fn emit(&self, event: SessionEvent) {
        self.shared.emit(event);
    }

    /// A control while nothing runs: a submission to run, or a change applied at once.
    fn idle_control(&mut self, control: Control) -> Option<(SubmissionId, Submission)> {
        match control {
            Control::Submit(id, submission) => return Some((id, submission)),
            Control::Abort | Control::TakeBackQueued => {}
            Control::SetMode(mode) => self.set_mode(mode),
            Control::CycleMode => {
                self.set_mode(self.session.mode().next_in_cycle(self.bypass_in_cycle));
            }
        }
        None
    }

    fn set_mode(&mut self, mode: PermissionMode) {
        self.session.set_mode(mode);
        self.shared.update_state(|s| s.mode = mode);
    }

    /// What handles controls while work cancelled by `cancel` runs, and the session the
    /// work runs on.
    fn busy<'a>(&'a mut self, cancel: &'a CancellationToken) -> (Busy<'a>, &'a mut Session) {
        let policy = self.session.policy_handle();
        let busy = Busy::new(
            self.bypass_in_cycle,
            &mut self.queue,
            &self.shared,
            policy,
            &self.options.commands,
            cancel,
        );
        (busy, &mut self.session)
    }

    /// Records the mode set while the work ran (it already applied to the work).
    fn keep_mode(&mut self, mode_change: Option<PermissionMode>) {
        if let Some(mode) = mode_change {
            self.session.set_mode(mode);
        }
    }

    /// The session's own state after a command may have changed it.
    fn refresh_state(&self) {
        let mut fresh = initial_state(&self.session);
        self.shared.update_state(|s| {
            fresh.running = s.running;
            fresh.queue = std::mem::take(&mut s.queue);
            fresh.context = s.context;
            *s = fresh;
        });
    }

    async fn fire_session_start(&mut self, source: &str) {
        let sink = self.sink();
        self.session.fire_session_start(source, &sink).await;
    }

    async fn fire_session_end(&mut self, reason: &str) {
        let sink = self.sink();
        self.session.fire_session_end(reason, &sink).await;
    }

    /// A sink that turns session updates into events, keeping usage and context in the
    /// state as they arrive.
    fn sink(&self) -> impl Fn(crate::session::SessionUpdate) + Send + Sync + use<> {
        update_sink(self.shared.clone())
    }

    /// Runs one submission from its start event to its end event.
    async fn run(
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
            Submission::Prompt(prompt) => self.run_turn(prompt, controls).await,
            Submission::Command { spec, args } if spec.name == "init" => {
                let prompt = match args.trim() {
                    "" => commands::INIT_PROMPT.to_string(),
                    notes => format!("{}\n\nThe user adds: {notes}", commands::INIT_PROMPT),
                };
                self.run_turn(prompt, controls).await
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
    fn with_log_failure(&self, end: TurnEnd) -> TurnEnd {
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

    async fn run_command(
        &mut self,
        id: SubmissionId,
        name: &str,
        scope: CommandScope,
        args: &str,
    ) -> (TurnEnd, String) {
        if scope == CommandScope::Client {
            let message = format!("/{name} only runs in the full-screen UI");
            return (command_failed(message), String::new());
        }
        if name == "mcp" {
            let output = super::mcp::command::run(self.options.mcp.as_ref(), args).await;
            return self.shared.command_ended(id, name, output);
        }
        let agents = self.options.agents.as_deref();
        let report = match name {
            "agents" => Some(commands::agents_report(agents)),
            "skills" => Some(commands::skills_report(&self.options.commands)),
            "status" => Some(commands::status_report(
                &self.session,
                &self.options.endpoint,
                &self.options.commands,
                agents,
                self.options.mcp.as_ref().map_or(0, |m| m.reports().len()),
            )),
            _ => None,
        };
        if let Some(report) = report {
            return self.shared.command_ended(id, name, Ok(report));
        }
        let clearing = name == "clear";
        if clearing {
            self.fire_session_end("clear").await;
        }
        let result = commands::execute(&mut self.session, &self.options.commands, name, args);
        if clearing && result.is_ok() {
            self.fire_session_start("clear").await;
            self.shared.update_state(|s| s.context = None);
        }
        self.refresh_state();
        let output = result.map(|CommandEffect::Output(output)| output);
        self.shared.command_ended(id, name, output)
    }

    /// Runs a `!command` to its end (an abort interrupts it), records it with its output
    /// as a user note and reports it.
    async fn run_shell(
        &mut self,
        id: SubmissionId,
        command: String,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> (TurnEnd, u32, String) {
        if command.trim().is_empty() {
            return (
                command_failed("Type a command after ! to run it"),
                0,
                String::new(),
            );
        }
        let cwd = self.session.config().cwd.clone();
        let env = self.session.config().env.clone();
        let cancel = CancellationToken::new();
        let (mut busy, _) = self.busy(&cancel);
        let run = busy
            .run(run_shell_command(&command, &cwd, &env, &cancel), controls)
            .await;
        let mode_change = busy.mode_change;
        self.keep_mode(mode_change);
        self.session.record_user_note(run.note);
        self.emit(SessionEvent::ShellOutput {
            id,
            command,
            output: run.output.clone(),
            exit_code: run.exit_code,
        });
        let end = if cancel.is_cancelled() {
            TurnEnd::Interrupted
        } else {
            TurnEnd::Success
        };
        (end, 0, run.output)
    }

    /// `/compact [focus]`: the summary call runs like a turn (an abort interrupts it and
    /// leaves the history as it was); the result says how far the context shrank.
    async fn run_compact(
        &mut self,
        focus: &str,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> (TurnEnd, String) {
        let cancel = CancellationToken::new();
        let sink = self.sink();
        let (mut busy, session) = self.busy(&cancel);
        let compact = session.compact(CompactTrigger::Manual, focus, &sink, &cancel);
        let compacted = busy.run(compact, controls).await;
        let mode_change = busy.mode_change;
        self.keep_mode(mode_change);
        match compacted {
            Ok(report) => {
                let context = ContextState {
                    used_tokens: report.post_tokens,
                    window: self.session.config().context_window,
                };
                self.emit(SessionEvent::Context(context));
                self.shared.update_state(|s| s.context = Some(context));
                let result = format!(
                    "Compacted the conversation: {} → {} tokens.",
                    report.pre_tokens, report.post_tokens
                );
                (TurnEnd::Success, result)
            }
            Err(CompactError::Interrupted) => (TurnEnd::Interrupted, String::new()),
            Err(CompactError::Blocked(reason)) => {
                let message = CompactError::Blocked(reason).message();
                let error = TurnError::new(ErrorKind::HookBlocked, message)
                    .with_hint("the PreCompact hooks in your settings decide this");
                (TurnEnd::Error(error), String::new())
            }
            Err(CompactError::Failed(err)) => {
                let error = TurnError::from_provider(&err, &self.options.endpoint);
                (TurnEnd::Error(error), String::new())
            }
            Err(other) => (command_failed(other.message()), String::new()),
        }
    }

    /// A custom command or skill typed as `/name args`: its prompt is worked out (its
    /// `` !`commands` `` run; an abort stops them), then it runs as a turn with its
    /// `allowed-tools` granted and its `model` in use for that turn only.
    async fn run_prompt_command(
        &mut self,
        id: SubmissionId,
        command: &PromptCommand,
        args: &str,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> (TurnEnd, u32, String) {
        let cancel = CancellationToken::new();
        let policy = self.session.policy_snapshot();
        let cwd = self.session.config().cwd.clone();
        let env = self.session.config().env.clone();
        let session_id = self.session.id().to_string();
        let context = ExpandContext {
            cwd: &cwd,
            env: &env,
            session_id: &session_id,
            policy,
            cancel: &cancel,
        };
        let (mut busy, _) = self.busy(&cancel);
        let expanded = busy.run(expand(command, args, context), controls).await;
        let mode_change = busy.mode_change;
        self.keep_mode(mode_change);
        let prompt = match expanded {
            Ok(prompt) => prompt,
            Err(_) if cancel.is_cancelled() => return (TurnEnd::Interrupted, 0, String::new()),
            Err(message) => return (command_failed(message), 0, String::new()),
        };
        if let (Some(agent_type), Some(agents)) = (&command.fork_agent, self.subagents.clone()) {
            return self
                .run_forked(id, command, agent_type, &prompt, &agents, controls)
                .await;
        }
        let policy = self.session.policy_handle();
        self.grants.grant(&policy, &command.allowed_tools);
        let previous_model = command.model.as_ref().map(|model| {
            let previous = self.session.config().model.clone();
            let model = models::resolve(model, self.session.provider_name(), &previous);
            let window = models::lookup(&model).context_window;
            self.session.set_model(model, window);
            previous
        });
        let outcome = self.run_turn(prompt, controls).await;
        if let Some(previous) = previous_model {
            let window = models::lookup(&previous).context_window;
            self.session.set_model(previous, window);
        }
        outcome
    }

    /// A `context: fork` command or skill: its prompt runs in a subagent (no conversation
    /// history; its events reach clients tagged with this submission), and the report
    /// joins the conversation as a note, so the next turn knows it.
    async fn run_forked(
        &mut self,
        id: SubmissionId,
        command: &PromptCommand,
        agent_type: &str,
        prompt: &str,
        agents: &AgentTool,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> (TurnEnd, u32, String) {
        let cancel = CancellationToken::new();
        let parent = format!("submission-{}", id.0);
        let task = SubagentTask {
            agent_type,
            description: &command.name,
            prompt,
            model: command.model.as_deref(),
            parent_tool_use_id: &parent,
            allow: &command.allowed_tools,
            cancel: &cancel,
        };
        let (mut busy, _) = self.busy(&cancel);
        let output = busy.run(agents.run(task), controls).await;
        let mode_change = busy.mode_change;
        self.keep_mode(mode_change);
        if cancel.is_cancelled() {
            return (TurnEnd::Interrupted, 0, String::new());
        }
        if output.is_error {
            return (command_failed(output.content), 0, String::new());
        }
        self.session.record_user_note(format!(
            "/{} ran in a {agent_type} subagent and reported:\n{}",
            command.name, output.content
        ));
        self.emit(SessionEvent::CommandOutput {
            id,
            command: command.name.clone(),
            output: output.content.clone(),
        });
        (TurnEnd::Success, 0, output.content)
    }

    async fn run_turn(
        &mut self,
        prompt: String,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> (TurnEnd, u32, String) {
        let cancel = CancellationToken::new();
        let sink = self.sink();
        let mut blocks = vec![Block::text(prompt.clone())];
        let attached = {
            let policy = self.session.policy_snapshot();
            let config = self.session.config();
            attachments::attach(
                &prompt,
                &config.cwd,
                self.session.tools(),
                &policy,
                &config.env,
            )
            .await
        };
        for warning in attached.warnings {
            self.emit(SessionEvent::Warning(warning));
        }
        blocks.extend(attached.blocks);
        let prompt_id = uuid::Uuid::new_v4().to_string();
        let checkpoint = self.open_checkpoint(&prompt_id).await;
        let (mut busy, session) = self.busy(&cancel);
        let turn = session.run_turn_as(prompt_id.clone(), blocks, &sink, &cancel);
        let outcome = busy.run(turn, controls).await;
        let mode_change = busy.mode_change;
        self.keep_mode(mode_change);
        self.grants.revoke_all(&self.session.policy_handle());
        if let Some(start) = checkpoint {
            self.close_checkpoint(&prompt_id, start).await;
        }
        let result = last_answer(self.session.history());
        let end = match outcome.stop {
            TurnStop::Completed(_) => TurnEnd::Success,
            TurnStop::HookStopped(reason) => {
                let shown = if reason.is_empty() {
                    "A hook stopped the turn".to_string()
                } else {
                    format!("A hook stopped the turn: {reason}")
                };
                self.emit(SessionEvent::Notice(shown));
                TurnEnd::Success
            }
            TurnStop::PromptBlocked(reason) => TurnEnd::Error(
                TurnError::new(
                    ErrorKind::HookBlocked,
                    format!("The prompt was blocked by a UserPromptSubmit hook: {reason}"),
                )
                .with_hint("the UserPromptSubmit hooks in your settings decide this"),
            ),
            TurnStop::Interrupted => TurnEnd::Interrupted,
            TurnStop::MaxRounds => TurnEnd::MaxTurns,
            TurnStop::ContextFull => TurnEnd::ContextFull,
            TurnStop::Failed(err) => {
                TurnEnd::Error(TurnError::from_provider(&err, &self.options.endpoint))
            }
        };
        (end, outcome.rounds, result)
    }
}

impl Driver {
    /// Snapshots the files before prompt `prompt_id` runs and records the checkpoint;
    /// returns the snapshot (`None`: no checkpoints, or the snapshot failed, which is
    /// told as a warning and never stops the turn).
    async fn open_checkpoint(&mut self, prompt_id: &str) -> Option<String> {
        let checkpoints = self.options.checkpoints.clone()?;
        match checkpoints.snapshot().await {
            Ok(snapshot) => {
                self.session.record_checkpoint(
                    prompt_id,
                    &snapshot.id,
                    snapshot.incomplete.clone(),
                );
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
    async fn close_checkpoint(&mut self, prompt_id: &str, start: String) {
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
    async fn run_rewind(
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

    async fn rewind(
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
            let report = checkpoints.restore(records).await.map_err(command_failed)?;
            rewound.restored = report.restored;
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

fn command_failed(message: impl Into<String>) -> TurnEnd {
    TurnEnd::Error(TurnError::new(ErrorKind::CommandFailed, message))
}

fn unknown_command(name: &str, suggestions: &[String]) -> TurnEnd {
    TurnEnd::Error(TurnError::new(
        ErrorKind::UnknownCommand,
        Submission::unknown_message(name, suggestions),
    ))
}

/// The last assistant text of the latest turn.
fn last_answer(history: &[crate::core::Message]) -> String {
    history
        .iter()
        .rev()
        .take_while(|m| m.role == Role::Assistant || has_tool_results(m))
        .find(|m| m.role == Role::Assistant && !m.text().is_empty())
        .map(|m| m.text())
        .unwrap_or_default()
}

/// Controls that arrive while a turn or a `!command` runs: an abort cancels it and drops
/// the queue; a submission that may run during a turn runs at once, any other waits in the
/// queue; a mode change applies to the running turn's next tool call at once.
struct Busy<'a> {
    bypass_in_cycle: bool,
    queue: &'a mut VecDeque<(SubmissionId, Submission)>,
    shared: &'a Arc<Shared>,
    policy: Arc<Mutex<PermissionPolicy>>,
    commands: &'a CommandRegistry,
    cancel: &'a CancellationToken,
    /// The last mode set meanwhile; the session records it once the work is done.
    mode_change: Option<PermissionMode>,
    /// The client hung up: the work is cancelled and no more controls come.
    closed: bool,
}

impl<'a> Busy<'a> {
    fn new(
        bypass_in_cycle: bool,
        queue: &'a mut VecDeque<(SubmissionId, Submission)>,
        shared: &'a Arc<Shared>,
        policy: Arc<Mutex<PermissionPolicy>>,
        commands: &'a CommandRegistry,
        cancel: &'a CancellationToken,
    ) -> Self {
        Busy {
            bypass_in_cycle,
            queue,
            shared,
            policy,
            commands,
            cancel,
            mode_change: None,
            closed: false,
        }
    }

    /// Runs `work` to its end, handling the controls that arrive meanwhile.
    async fn run<T>(
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
            Some(Control::Submit(id, submission)) if submission.runs_during_turn() => {
                self.run_now(id, submission);
            }
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
            Some(Control::CycleMode) => {
                let current = self.policy.lock().map(|p| p.mode).unwrap_or_default();
                self.set_mode(current.next_in_cycle(self.bypass_in_cycle));
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
        if let Ok(mut p) = self.policy.lock() {
            p.mode = mode;
        }
        self.mode_change = Some(mode);
        self.shared.update_state(|s| s.mode = mode);
    }

    /// A submission that needs nothing the running work holds: `/help`, `/mode`, an
    /// unknown command.
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
                    "mode" | "permissions" if args.is_empty() => Ok(format!(
                        "Permission mode: {}",
                        self.policy.lock().map(|p| p.mode).unwrap_or_default()
                    )),
                    "mode" | "permissions" => commands::parse_mode(args).map(|mode| {
                        self.set_mode(mode);
                        commands::mode_set(mode)
                    }),
                    other => Err(format!("/{other} cannot run while a turn is in progress")),
                };
                self.shared.command_ended(id, spec.name, output)
            }
            // `runs_during_turn` holds for none of these; the caller queues them.
            Submission::Prompt(_) | Submission::Shell(_) | Submission::Custom { .. } => (
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

fn has_tool_results(message: &crate::core::Message) -> bool {
    message
        .content
        .iter()
        .any(|b| matches!(b, Block::ToolResult { .. }))
}
