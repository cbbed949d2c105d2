//! `InteractiveSession`: the one client API. It owns a `Session` on its own task and
//! takes commands (`submit`, `abort`, `execute_command`, mode changes) while turns run;
//! a second prompt submitted during a turn waits in a queue of one. Every outcome comes
//! back as a `SessionEvent` on one channel. SessionStart hooks fire when the task starts,
//! SessionEnd hooks when it is closed (and both around `/clear`). `!command`s run here too
//! (`run_shell`), between turns, and join the conversation as user notes.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::core::engine::{EngineEvent, TurnStop};
use crate::core::hooks::HookProgress;
use crate::core::permission::{PermissionMode, PermissionPolicy};
use crate::core::{Block, StreamEvent, models};
use crate::session::{Session, SessionUpdate};

use super::commands::{self, CommandEffect};
use super::events::{PermissionRequest, SessionEvent, TurnEnd};
use super::shell_command::run_shell_command;

enum Command {
    Submit(String),
    Abort,
    Execute(String, String),
    SetMode(PermissionMode),
    Shell(String),
}

/// A running session driven by commands and observed through events.
pub struct InteractiveSession {
    commands: mpsc::UnboundedSender<Command>,
    events: Option<mpsc::UnboundedReceiver<SessionEvent>>,
    id: String,
    task: JoinHandle<()>,
}

impl InteractiveSession {
    /// Starts the session's task on the current tokio runtime.
    pub fn start(session: Session) -> Self {
        let (commands, command_rx) = mpsc::unbounded_channel();
        let (event_tx, events) = mpsc::unbounded_channel();
        let id = session.id().to_string();
        let task = tokio::spawn(drive(session, command_rx, event_tx));
        InteractiveSession {
            commands,
            events: Some(events),
            id,
            task,
        }
    }

    /// Ends the session: a running turn is interrupted, SessionEnd hooks run (their events
    /// still arrive), and this returns when the session's task is done.
    pub async fn close(self) {
        drop(self.commands);
        let _ = self.task.await;
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Takes the event stream (once).
    pub fn events(&mut self) -> Option<mpsc::UnboundedReceiver<SessionEvent>> {
        self.events.take()
    }

    /// Sends a prompt: runs now when idle, else waits behind the running turn. A prompt
    /// starting with `/` runs as a command when one of that name exists.
    pub fn submit(&self, prompt: impl Into<String>) {
        let _ = self.commands.send(Command::Submit(prompt.into()));
    }

    /// Interrupts the running turn (its partial answer is kept) and drops a queued prompt.
    pub fn abort(&self) {
        let _ = self.commands.send(Command::Abort);
    }

    /// Runs a slash command by name (without the slash) with its argument text.
    pub fn execute_command(&self, name: &str, args: &str) {
        let _ = self
            .commands
            .send(Command::Execute(name.to_string(), args.to_string()));
    }

    pub fn set_mode(&self, mode: PermissionMode) {
        let _ = self.commands.send(Command::SetMode(mode));
    }

    /// Runs a `!command` (without the `!`) in the session's directory with its settings'
    /// environment, stdin closed, for at most two minutes; `abort` stops it. It answers
    /// with `SessionEvent::ShellOutput`, and the command with its output joins the
    /// conversation for the model's next turn. Refused with a warning while a turn runs.
    pub fn run_shell(&self, command: impl Into<String>) {
        let _ = self.commands.send(Command::Shell(command.into()));
    }
}

struct Driver {
    session: Session,
    events: mpsc::UnboundedSender<SessionEvent>,
    queued: Option<String>,
}

async fn drive(
    session: Session,
    mut commands: mpsc::UnboundedReceiver<Command>,
    events: mpsc::UnboundedSender<SessionEvent>,
) {
    let mut driver = Driver {
        session,
        events,
        queued: None,
    };
    let source = driver.session.start_source().to_string();
    driver.fire_session_start(&source).await;
    while let Some(command) = commands.recv().await {
        let mut next = Some(command);
        while let Some(command) = next.take() {
            match command {
                Command::Submit(prompt) => {
                    if let Some((name, args)) = commands::parse_slash(&prompt)
                        && commands::find(name).is_some()
                    {
                        driver.execute(name, args).await;
                    } else {
                        driver.run_turn(prompt, &mut commands).await;
                    }
                }
                Command::Abort => {}
                Command::Execute(name, args) => driver.execute(&name, &args).await,
                Command::SetMode(mode) => driver.session.set_mode(mode),
                Command::Shell(command) => driver.run_shell(command, &mut commands).await,
            }
            next = driver.queued.take().map(Command::Submit);
        }
    }
    driver.fire_session_end("other").await;
}

impl Driver {
    fn emit(&self, event: SessionEvent) {
        let _ = self.events.send(event);
    }

    /// A sink that turns session updates into events on the channel.
    fn sink(&self) -> impl Fn(SessionUpdate) + Send + Sync + use<> {
        let events = self.events.clone();
        move |update: SessionUpdate| {
            if let Some(event) = translate(update) {
                let _ = events.send(event);
            }
        }
    }

    async fn fire_session_start(&mut self, source: &str) {
        let sink = self.sink();
        self.session.fire_session_start(source, &sink).await;
    }

    async fn fire_session_end(&mut self, reason: &str) {
        let sink = self.sink();
        self.session.fire_session_end(reason, &sink).await;
    }

    async fn execute(&mut self, name: &str, args: &str) {
        let clearing = name == "clear";
        if clearing {
            self.fire_session_end("clear").await;
        }
        let result = commands::execute(&mut self.session, name, args);
        if clearing && result.is_ok() {
            self.fire_session_start("clear").await;
        }
        match result {
            Ok(CommandEffect::Output(output)) => self.emit(SessionEvent::CommandOutput {
                command: name.to_string(),
                output,
            }),
            Err(message) => self.emit(SessionEvent::Warning(message)),
        }
    }

    /// Runs a `!command` to its end (an abort interrupts it), records it with its output
    /// as a user note and reports it.
    async fn run_shell(
        &mut self,
        command: String,
        commands: &mut mpsc::UnboundedReceiver<Command>,
    ) {
        if command.trim().is_empty() {
            self.emit(SessionEvent::Warning(
                "Type a command after ! to run it".to_string(),
            ));
            return;
        }
        let cwd = self.session.config().cwd.clone();
        let env = self.session.config().env.clone();
        let cancel = CancellationToken::new();
        let policy = self.session.policy_handle();
        let (run, mode_change) = {
            let mut busy = Busy {
                activity: "a !command is running",
                queued: &mut self.queued,
                events: &self.events,
                policy,
                cancel: &cancel,
                mode_change: None,
                closed: false,
            };
            let shell = run_shell_command(&command, &cwd, &env, &cancel);
            tokio::pin!(shell);
            let run = loop {
                tokio::select! {
                    run = &mut shell => break run,
                    command = commands.recv(), if !busy.closed => busy.handle(command),
                }
            };
            (run, busy.mode_change)
        };
        if let Some(mode) = mode_change {
            self.session.set_mode(mode);
        }
        self.session.record_user_note(run.note);
        self.emit(SessionEvent::ShellOutput {
            command,
            output: run.output,
            exit_code: run.exit_code,
        });
    }

    async fn run_turn(&mut self, prompt: String, commands: &mut mpsc::UnboundedReceiver<Command>) {
        let started = Instant::now();
        self.emit(SessionEvent::TurnStarted {
            prompt: prompt.clone(),
        });
        let cancel = CancellationToken::new();
        let sink = self.sink();
        let policy = self.session.policy_handle();
        let (outcome, mode_change) = {
            let mut busy = Busy {
                activity: "a turn is in progress",
                queued: &mut self.queued,
                events: &self.events,
                policy,
                cancel: &cancel,
                mode_change: None,
                closed: false,
            };
            let turn = self
                .session
                .run_turn(vec![Block::text(prompt)], &sink, &cancel);
            tokio::pin!(turn);
            let outcome = loop {
                tokio::select! {
                    outcome = &mut turn => break outcome,
                    command = commands.recv(), if !busy.closed => busy.handle(command),
                }
            };
            (outcome, busy.mode_change)
        };
        if let Some(mode) = mode_change {
            self.session.set_mode(mode);
        }
        let result = self
            .session
            .history()
            .iter()
            .rev()
            .take_while(|m| m.role == crate::core::Role::Assistant || has_tool_results(m))
            .find(|m| m.role == crate::core::Role::Assistant && !m.text().is_empty())
            .map(|m| m.text())
            .unwrap_or_default();
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
            TurnStop::PromptBlocked(reason) => TurnEnd::Error(format!(
                "The prompt was blocked by a UserPromptSubmit hook: {reason}"
            )),
            TurnStop::Interrupted => TurnEnd::Interrupted,
            TurnStop::MaxRounds => TurnEnd::MaxTurns,
            TurnStop::ContextFull => TurnEnd::ContextFull,
            TurnStop::Failed(err) => TurnEnd::Error(err.user_message()),
        };
        self.emit(SessionEvent::TurnComplete {
            end,
            rounds: outcome.rounds,
            duration: started.elapsed(),
            result,
        });
    }
}

/// Commands that arrive while the driver is busy with a turn or a `!command`: an abort
/// cancels it (and drops the queued prompt), a prompt waits in the queue of one, a mode
/// change applies at once, commands and `!commands` are refused.
struct Busy<'a> {
    /// What the driver is busy with, for refusals: "a turn is in progress".
    activity: &'static str,
    queued: &'a mut Option<String>,
    events: &'a mpsc::UnboundedSender<SessionEvent>,
    policy: Arc<Mutex<PermissionPolicy>>,
    cancel: &'a CancellationToken,
    /// The last mode set meanwhile; the session records it once the work is done.
    mode_change: Option<PermissionMode>,
    /// The client hung up: the work is cancelled and no more commands come.
    closed: bool,
}

impl Busy<'_> {
    fn handle(&mut self, command: Option<Command>) {
        let emit = |event| {
            let _ = self.events.send(event);
        };
        match command {
            None => {
                self.closed = true;
                self.cancel.cancel();
            }
            Some(Command::Abort) => {
                self.cancel.cancel();
                if let Some(prompt) = self.queued.take() {
                    emit(SessionEvent::PromptDequeued(prompt));
                }
            }
            Some(Command::Submit(prompt)) => {
                if let Some(old) = self.queued.replace(prompt.clone()) {
                    emit(SessionEvent::PromptDequeued(old));
                }
                emit(SessionEvent::PromptQueued(prompt));
            }
            Some(Command::SetMode(mode)) => {
                // Takes effect for the next tool call of a running turn.
                if let Ok(mut p) = self.policy.lock() {
                    p.mode = mode;
                }
                self.mode_change = Some(mode);
            }
            Some(Command::Execute(name, _)) => emit(SessionEvent::Warning(format!(
                "/{name} cannot run while {}",
                self.activity
            ))),
            Some(Command::Shell(_)) => emit(SessionEvent::Warning(format!(
                "!commands cannot run while {}",
                self.activity
            ))),
        }
    }
}

fn has_tool_results(message: &crate::core::Message) -> bool {
    message
        .content
        .iter()
        .any(|b| matches!(b, Block::ToolResult { .. }))
}

/// Maps a session update onto the client events it stands for.
fn translate(update: SessionUpdate) -> Option<SessionEvent> {
    let event = match update {
        SessionUpdate::Engine(event) => match event {
            EngineEvent::Stream(stream) => match stream {
                StreamEvent::TextDelta(t) => SessionEvent::TextDelta(t),
                StreamEvent::ThinkingDelta(t) => SessionEvent::ThinkingDelta(t),
                StreamEvent::ToolUseStart { id, name } => {
                    SessionEvent::ToolUseStreaming { id, name }
                }
                StreamEvent::ServerToolUse { id, name } => {
                    SessionEvent::ToolUseStreaming { id, name }
                }
                StreamEvent::ToolInputDelta { .. } => return None,
                StreamEvent::Retrying {
                    attempt,
                    max_attempts,
                    delay,
                    error,
                    ..
                } => SessionEvent::Retrying {
                    attempt,
                    max_attempts,
                    delay,
                    error,
                },
                StreamEvent::AttemptDiscarded => SessionEvent::AttemptDiscarded,
            },
            EngineEvent::Assistant {
                message,
                stop_reason,
                model,
            } => SessionEvent::AssistantMessage {
                message,
                stop_reason: stop_reason.map(|s| s.as_str().to_string()),
                model,
            },
            EngineEvent::ToolStarted(call) => SessionEvent::ToolStarted {
                id: call.id,
                name: call.name,
                input: call.input,
            },
            EngineEvent::ToolFinished {
                call,
                output,
                duration,
            } => SessionEvent::ToolFinished {
                id: call.id,
                name: call.name,
                input: call.input,
                content: output.content,
                is_error: output.is_error,
                display: output.display,
                duration,
            },
            EngineEvent::ToolResults(message) => SessionEvent::ToolResults(message),
            EngineEvent::Usage {
                usage,
                model,
                api_duration,
            } => SessionEvent::Usage {
                cost_usd: models::lookup(&model).price.map(|p| p.cost(&usage)),
                usage,
                model,
                api_duration,
            },
            EngineEvent::Context(state) => SessionEvent::Context(state),
        },
        SessionUpdate::PermissionAsked {
            call,
            reason,
            suggested_rule,
            responder,
        } => SessionEvent::PermissionRequest(PermissionRequest::new(
            call.id,
            call.name,
            call.input,
            reason,
            suggested_rule,
            responder,
        )),
        SessionUpdate::PermissionDenied { call, reason } => SessionEvent::PermissionDenied {
            tool_use_id: call.id,
            tool_name: call.name,
            input: call.input,
            reason,
        },
        SessionUpdate::Warning(w) => SessionEvent::Warning(w),
        SessionUpdate::Notice(n) => SessionEvent::Notice(n),
        SessionUpdate::Hook(HookProgress::Started {
            hook_id,
            event,
            hook_name,
            ..
        }) => SessionEvent::HookStarted {
            hook_id,
            hook_name,
            event,
        },
        SessionUpdate::Hook(HookProgress::Finished(record)) => SessionEvent::HookFinished(record),
    };
    Some(event)
}
