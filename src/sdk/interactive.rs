//! `InteractiveSession`: the one client API. It owns a `Session` on its own task and
//! takes commands (`submit`, `abort`, `execute_command`, mode changes) while turns run;
//! a second prompt submitted during a turn waits in a queue of one. Every outcome comes
//! back as a `SessionEvent` on one channel. SessionStart hooks fire when the task starts,
//! SessionEnd hooks when it is closed (and both around `/clear`).

use std::time::Instant;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::core::engine::{EngineEvent, TurnStop};
use crate::core::hooks::HookProgress;
use crate::core::permission::PermissionMode;
use crate::core::{Block, StreamEvent, models};
use crate::session::{Session, SessionUpdate};

use super::commands::{self, CommandEffect};
use super::events::{PermissionRequest, SessionEvent, TurnEnd};

enum Command {
    Submit(String),
    Abort,
    Execute(String, String),
    SetMode(PermissionMode),
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

    pub fn run_shell(&self, _command: impl Into<String>) {}

    pub fn set_mode(&self, mode: PermissionMode) {
        let _ = self.commands.send(Command::SetMode(mode));
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

    async fn run_turn(&mut self, prompt: String, commands: &mut mpsc::UnboundedReceiver<Command>) {
        let started = Instant::now();
        self.emit(SessionEvent::TurnStarted {
            prompt: prompt.clone(),
        });
        let cancel = CancellationToken::new();
        let sink = self.sink();
        let mut mode_change = None;
        let policy = self.session.policy_handle();
        let mut closed = false;
        let outcome = {
            let queued = &mut self.queued;
            let events = &self.events;
            let turn = self
                .session
                .run_turn(vec![Block::text(prompt)], &sink, &cancel);
            tokio::pin!(turn);
            loop {
                tokio::select! {
                    outcome = &mut turn => break outcome,
                    command = commands.recv(), if !closed => match command {
                        None => {
                            closed = true;
                            cancel.cancel();
                        }
                        Some(Command::Abort) => {
                            cancel.cancel();
                            if let Some(prompt) = queued.take() {
                                let _ = events.send(SessionEvent::PromptDequeued(prompt));
                            }
                        }
                        Some(Command::Submit(prompt)) => {
                            if let Some(old) = queued.replace(prompt.clone()) {
                                let _ = events.send(SessionEvent::PromptDequeued(old));
                            }
                            let _ = events.send(SessionEvent::PromptQueued(prompt));
                        }
                        Some(Command::SetMode(mode)) => {
                            // Takes effect for the next tool call of this turn.
                            if let Ok(mut p) = policy.lock() {
                                p.mode = mode;
                            }
                            mode_change = Some(mode);
                        }
                        Some(Command::Execute(name, _)) => {
                            let _ = events.send(SessionEvent::Warning(format!(
                                "/{name} cannot run while a turn is in progress"
                            )));
                        }
                    },
                }
            }
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
