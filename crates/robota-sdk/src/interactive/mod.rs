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

use robota_core::context::ContextState;
use robota_core::engine::TurnStop;
use robota_core::message::ImageSource;
use robota_core::permission::{PermissionMode, PermissionPolicy};
use robota_core::{Block, Role, models};
use robota_session::Session;
use robota_session::compact::CompactError;
use robota_session::conversation::CompactTrigger;
use robota_session::conversation::ModeLock;

use super::agents::{
    AgentCatalog, AgentRuntime, AgentTool, AgentToolSource, ParentNow, SubagentTask,
};
use super::attachments;
use super::checkpoint::{self, Checkpointer, RewindAction, Rewound};
use super::commands::expand::{ExpandContext, expand};
use super::commands::grants::TurnGrants;
use super::commands::{
    self, CommandEffect, CommandRegistry, CommandScope, PromptCommand, Submission, SubmissionId,
};
use super::errors::{ErrorKind, ProviderEndpoint, TurnError};
use super::events::{Outcome, QueuedSubmission, SessionEvent, SessionState, TurnEnd};
use super::instructions::Instructions;
use super::mcp::McpManager;
use super::shell_command::run_shell_command;
use super::skills::{SkillTool, SkillToolSource};
use super::tasks::TaskBoard;
use super::translate::translate;

mod busy;
mod driver;
mod remote;
mod rewind;
mod runs;

use busy::Busy;
use driver::{Driver, ModeGate, drive, initial_state, update_sink};
use remote::SessionControl as Control;
pub use remote::{RemoteEnds, RemoteSink, SessionControl};

/// How a session is presented to its clients.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionOptions {
    /// Where the provider is reached and what configured it, for error messages.
    pub endpoint: ProviderEndpoint,
    /// The session's MCP servers: `/mcp` reports on them, and they are shut down when the
    /// session ends.
    pub mcp: Option<Arc<McpManager>>,
    /// The session's language servers: `/lsp` reports on them, and they are stopped when
    /// the session ends.
    pub lsp: Option<Arc<robota_lsp::LspManager>>,
    /// The commands beside the built-ins (custom commands, skills); the model gets the
    /// `Skill` tool when some of them are for it.
    pub commands: Arc<CommandRegistry>,
    /// The subagents the model may start through the `Agent` tool (`None`: no Agent tool).
    pub agents: Option<Arc<AgentCatalog>>,
    /// The project's checkpoint store: each prompt opens a checkpoint and `/rewind` can
    /// put files back (`None`: no checkpoints, `/rewind` rewinds the conversation only).
    pub checkpoints: Option<Checkpointer>,
    /// What the system prompt is built from: `/language` and `/memory` rebuild it (`None`:
    /// the prompt stays as the session was given it).
    pub instructions: Option<Arc<Instructions>>,
    /// The Bash tool whose background jobs `/tasks` lists and stops.
    pub bash: Option<Arc<robota_tools::BashTool>>,
    /// What went wrong while the session was put together (settings, definitions), for
    /// `/doctor`.
    pub startup_warnings: Vec<String>,
    /// Where `/plugin …` installs and records plugins (`None`: `/plugin` says it is not
    /// available in this client).
    pub plugins: Option<crate::paths::ProjectPaths>,
    /// Where the session's events are also recorded as OpenTelemetry metrics and events
    /// (`None`: telemetry is off); flushed, within a bound, when the session is closed.
    pub telemetry: Option<Arc<crate::telemetry::SessionTelemetry>>,
}

/// A running session driven by submissions and observed through events.
///
/// Build one with [`SessionBuilder`](super::SessionBuilder). Take its event stream once
/// with [`events`](Self::events); everything the session does arrives there in order, each
/// submission bracketed by [`SessionEvent::SubmissionStarted`] and
/// [`SessionEvent::SubmissionEnded`] carrying the [`SubmissionId`] that
/// [`submit`](Self::submit) returned. Submissions made while one runs wait in a queue;
/// [`abort`](Self::abort) interrupts, [`cancel_queue`](Self::cancel_queue) empties the
/// queue. Controls never block: they are sent to the session's task, which must run on a
/// tokio runtime. Dropping it (or [`close`](Self::close)) ends that task.
pub struct InteractiveSession {
    controls: mpsc::UnboundedSender<Control>,
    events: Option<mpsc::UnboundedReceiver<SessionEvent>>,
    id: String,
    commands: Arc<CommandRegistry>,
    next_id: AtomicU64,
    /// The state as the driver last sent it (only the state: holding the event sender
    /// here would keep the event stream open after the task ends).
    state: Arc<Mutex<SessionState>>,
    task: JoinHandle<()>,
    /// Background jobs and subagents (Ctrl+B and the status line ask it directly).
    tasks: Arc<TaskBoard>,
    /// The session runs elsewhere ([`remote`](Self::remote)).
    remote: bool,
    /// The modes the session may not switch to (managed policy).
    mode_lock: ModeLock,
    /// Flushed when the session is closed.
    telemetry: Option<Arc<crate::telemetry::SessionTelemetry>>,
}

impl InteractiveSession {
    /// Starts a session built directly with `robota-session`'s [`Session`] (no commands,
    /// subagents, checkpoints or MCP servers beside it) on the current tokio runtime.
    pub fn start(session: Session) -> Self {
        Self::start_with(session, SessionOptions::default())
    }

    /// [`start`](Self::start), naming where the provider is reached and what configured
    /// it, so that provider errors can say so.
    pub fn start_with_endpoint(session: Session, endpoint: ProviderEndpoint) -> Self {
        let options = SessionOptions {
            endpoint,
            ..SessionOptions::default()
        };
        Self::start_with(session, options)
    }

    /// Starts the session's task on the current tokio runtime, presented as `options`
    /// describe (commands, subagents, checkpoints, MCP servers). Programs start one with
    /// [`SessionBuilder`](super::SessionBuilder) or
    /// [`ProjectSession::start`](crate::ProjectSession::start).
    pub(crate) fn start_with(mut session: Session, options: SessionOptions) -> Self {
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
            telemetry: options.telemetry.clone(),
            state: Arc::new(Mutex::new(initial_state(&session))),
            reload_instructions: std::sync::atomic::AtomicBool::new(false),
        });
        if let (Some(tool), Some(hooks)) = (
            &skill_tool,
            session.hook_handle(Arc::new(update_sink(shared.clone()))),
        ) {
            tool.set_hooks(hooks);
        }
        let tasks = Arc::new(TaskBoard::new(options.bash.clone()));
        let mut subagents = None;
        if let Some(catalog) = options.agents.clone() {
            let runtime = AgentRuntime {
                provider: session.provider(),
                tools: session.tools().clone(),
                policy: session.policy_handle(),
                hooks: session.shared_hooks(),
                config: session.config().clone(),
                builtin_prompt: options
                    .instructions
                    .as_ref()
                    .and_then(|i| i.replace.clone())
                    .unwrap_or_else(|| super::system_prompt::BUILT_IN.to_string()),
                sessions_dir: session
                    .log_path()
                    .and_then(|path| path.parent().map(std::path::Path::to_path_buf)),
                diagnostics: session.diagnostics_on(),
                sink: Arc::new(update_sink(shared.clone())),
                parent_now: {
                    let shared = shared.clone();
                    let started = ParentNow {
                        session_id: session.id().to_string(),
                        model: session.config().model.clone(),
                    };
                    Arc::new(move || {
                        shared
                            .state
                            .lock()
                            .map(|s| ParentNow {
                                session_id: s.session_id.clone(),
                                model: s.model.clone(),
                            })
                            .unwrap_or_else(|_| started.clone())
                    })
                },
                catalog,
                tasks: tasks.clone(),
            };
            let tool = Arc::new(AgentTool::new(runtime));
            session.add_tool_source(Arc::new(AgentToolSource(tool.clone())));
            if let Some(skill_tool) = &skill_tool {
                skill_tool.set_subagents(tool.clone());
            }
            subagents = Some(tool);
        }
        let state = shared.state.clone();
        let mode_lock = session.mode_lock().clone();
        let telemetry = options.telemetry.clone();
        let task = tokio::spawn(drive(
            session,
            options,
            grants,
            subagents,
            tasks.clone(),
            shared,
            control_rx,
        ));
        InteractiveSession {
            controls,
            events: Some(events),
            id,
            commands,
            next_id: AtomicU64::new(1),
            state,
            task,
            tasks,
            remote: false,
            mode_lock,
            telemetry,
        }
    }

    /// Ends the session: a running turn is interrupted, SessionEnd hooks run (their events
    /// still arrive), and this returns when the session's task is done.
    pub async fn close(self) {
        drop(self.controls);
        let _ = self.task.await;
        if let Some(telemetry) = self.telemetry {
            // Bounded (`telemetry::FLUSH_BUDGET`): a collector that never answers delays no
            // more.
            let _ = tokio::task::spawn_blocking(move || telemetry.shutdown()).await;
        }
    }

    /// Whether the session runs elsewhere (another process this handle is attached to):
    /// closing the handle detaches from it and leaves it running.
    pub fn is_remote(&self) -> bool {
        self.remote
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

    /// Sends a prompt to the running turn ("send now"): it joins the results of the tool
    /// calls running now, so the model reads it with its next call
    /// (`SessionEvent::SteeringSent`), and it is in the session log with them. When the
    /// turn makes no further call, or nothing runs, or `text` is a command, it is
    /// submitted as [`submit`](Self::submit) does.
    pub fn steer(&self, text: impl Into<String>) -> SubmissionId {
        let text = text.into();
        match self.commands.resolve(Submission::from(text.as_str())) {
            Submission::Prompt(prompt) => {
                let id = SubmissionId(self.next_id.fetch_add(1, Ordering::Relaxed));
                let _ = self.controls.send(Control::Steer(id, prompt));
                id
            }
            _ => self.submit(text),
        }
    }

    /// The session's commands: the built-ins and its custom commands and skills.
    pub fn command_entries(&self) -> Vec<super::CommandEntry> {
        self.commands.entries()
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

    /// Sends the Bash commands running in the foreground now to the background: each call
    /// returns to the model at once with the job's id and log file, and the command goes
    /// on (`/tasks` lists it). Returns whether one was running.
    pub fn send_to_background(&self) -> bool {
        self.tasks.send_bash_to_background()
    }

    /// How many background jobs are still running.
    pub fn running_background_jobs(&self) -> usize {
        self.tasks.running_jobs()
    }

    /// Drops the newest queued submission (reported as `SubmissionDropped`).
    pub fn take_back_queued(&self) {
        let _ = self.controls.send(Control::TakeBackQueued);
    }

    /// Drops every queued submission (each reported as `SubmissionDropped`) and lets the
    /// running one finish.
    pub fn cancel_queue(&self) {
        let _ = self.controls.send(Control::CancelQueue);
    }

    /// Runs slash command `name` (without the `/`) with `args`, as submitting
    /// `/name args` does: a built-in, or one of the session's custom commands and skills.
    /// Its output comes as `SessionEvent::CommandOutput` and is the result of its
    /// `SubmissionEnded`; an unknown name ends it with [`ErrorKind::UnknownCommand`].
    pub fn execute_command(&self, name: &str, args: &str) -> SubmissionId {
        let name = name.trim_start_matches('/');
        match args.trim() {
            "" => self.submit(format!("/{name}")),
            args => self.submit(format!("/{name} {args}")),
        }
    }

    /// Every command this session runs: the built-ins, then its custom commands and
    /// skills, with their descriptions (what `/help` lists).
    pub fn list_commands(&self) -> Vec<super::commands::CommandEntry> {
        self.commands.entries()
    }

    /// The session's state as the latest `SessionEvent::State` sent it: model, mode,
    /// usage and cost, context estimate, the running submission and the queue.
    pub fn state(&self) -> SessionState {
        match self.state.lock() {
            Ok(state) => state.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Whether a submission is running now.
    pub fn is_running(&self) -> bool {
        self.state().running.is_some()
    }

    /// Why the session refuses to switch to `mode` (a managed policy forbids
    /// `bypassPermissions`), if it does; [`set_mode`](Self::set_mode) to it then only
    /// brings a `SessionEvent::Warning` saying so.
    pub fn mode_refusal(&self, mode: PermissionMode) -> Option<&str> {
        self.mode_lock.refusal(mode)
    }

    /// Sets the permission mode; a running turn's next tool call sees it.
    pub fn set_mode(&self, mode: PermissionMode) {
        let _ = self.controls.send(Control::SetMode(mode));
    }

    /// Moves to the next mode of the Shift+Tab cycle.
    pub fn cycle_mode(&self) {
        let _ = self.controls.send(Control::CycleMode);
    }

    /// Reads the context files again (one was edited, as by `/memory`): the system prompt
    /// is rebuilt before the next submission runs (after the running turn, if one runs).
    pub fn reload_instructions(&self) {
        let _ = self.controls.send(Control::ReloadInstructions);
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
    /// Sees every event before the clients do (`None`: telemetry is off).
    telemetry: Option<Arc<crate::telemetry::SessionTelemetry>>,
    state: Arc<Mutex<SessionState>>,
    /// A context file changed (`/memory`): the system prompt is rebuilt before the next
    /// submission runs.
    reload_instructions: std::sync::atomic::AtomicBool,
}

impl Shared {
    fn emit(&self, event: SessionEvent) {
        if let Some(telemetry) = &self.telemetry {
            telemetry.observe(&event);
        }
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
        output: Result<String, crate::commands::CommandError>,
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
            Err(error) => (command_failed(error.to_string()), String::new()),
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
fn last_answer(history: &[robota_core::Message]) -> String {
    history
        .iter()
        .rev()
        .take_while(|m| m.role == Role::Assistant || has_tool_results(m))
        .find(|m| m.role == Role::Assistant && !m.text().is_empty())
        .map(|m| m.text())
        .unwrap_or_default()
}

fn has_tool_results(message: &robota_core::Message) -> bool {
    message
        .content
        .iter()
        .any(|b| matches!(b, Block::ToolResult { .. }))
}
