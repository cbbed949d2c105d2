//! Running one user turn: compaction first when the context is nearly full,
//! UserPromptSubmit hooks, the prompt with its pending context, the engine through the
//! session's tool gate, making room mid-turn (cut oversized results, summarise) when the
//! window is full or the provider says the conversation is too long, Stop hooks that send
//! the turn back to work, and how the turn stopped in the log. Also where a turn's engine events go (`forwarder`).

use std::collections::{BTreeMap, HashMap};
use std::mem::take;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use robota_core::engine::{Engine, EngineEvent, TurnConfig, TurnOutcome, TurnStop};
use robota_core::hooks::protocol::system_reminder;
use robota_core::permission::PermissionMode;
use robota_core::{Block, Message, ProviderErrorKind, Role, TodoItem, ToolDisplay, Usage};

use crate::barrier::EffectBarrier;
use crate::compact::{CompactError, Room, RoomRequest, make_room};
use crate::engine_log::append_engine_event;
use crate::gate::SessionGate;
use crate::hooks::{HookFiring, TurnEnding};
use crate::line::{LogEvent, MessageExtra};
use crate::log::SessionLog;
use crate::rewind::forget_summarised_checkpoints;
use crate::update::{CompactReason, CompactTrigger, SessionUpdate, UpdateSink};

use super::record::warn_on_failure;
use super::{Session, hook_firing};

/// Told to the model with each prompt while the session is in plan mode (in a
/// `<system-reminder>` block).
pub const PLAN_MODE_REMINDER: &str = "Plan mode is active: the user wants a plan before any change. Do not edit files, run commands that change anything, or make other changes (such calls are refused). Explore read-only, then present your plan with the ExitPlanMode tool; the user approves it (and you may then start) or tells you what to change.";

impl Session {
    /// Runs one user turn to its end: UserPromptSubmit hooks, the engine, and Stop hooks
    /// that may send the turn back to work (at most `MAX_STOP_BLOCKS` times in a row).
    pub async fn run_turn(
        &mut self,
        prompt: Vec<Block>,
        sink: UpdateSink<'_>,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let id = uuid::Uuid::new_v4().to_string();
        self.run_turn_as(id, prompt, sink, cancel).await
    }

    /// [`Session::run_turn`] with the prompt's message id given (a checkpoint names it
    /// before the turn starts).
    pub async fn run_turn_as(
        &mut self,
        prompt_id: String,
        mut prompt: Vec<Block>,
        sink: UpdateSink<'_>,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        // The turn's effects wait for what the client holds them for; a compaction runs
        // hooks, so it waits too.
        let barrier = self.effect_barrier.take();
        if let Some(stopped) = self
            .compact_before_turn(barrier.as_ref(), sink, cancel)
            .await
        {
            return stopped;
        }
        let firing = self.hooks.clone().map(|hooks| HookFiring {
            barrier: barrier.clone(),
            ..hook_firing(hooks, &self.config, &self.policy, &self.log, sink)
        });
        if let Some(firing) = firing.as_ref().filter(|_| !self.subagent) {
            match firing.prompt_submitted(&prompt, cancel).await {
                Ok(contexts) => self.pending_context.extend(contexts),
                Err(stop) => {
                    if let TurnStop::HookStopped(reason) = &stop {
                        self.log_event(LogEvent::HookStopped {
                            reason: reason.clone(),
                        });
                    }
                    return TurnOutcome { stop, rounds: 0 };
                }
            }
        }
        if self.mode() == PermissionMode::Plan {
            self.pending_context.push(PLAN_MODE_REMINDER.to_string());
        }
        if !self.pending_context.is_empty() {
            let context = take(&mut self.pending_context).join("\n\n");
            prompt.push(Block::text(system_reminder(&context)));
        }
        let mut message = Message::new(Role::User, prompt);
        message.id = prompt_id;
        self.log_message(&message, MessageExtra::default());
        let mut turn_start = self.history.len();
        self.history.push(message);
        let turn = self.turn_config();
        let gate = SessionGate {
            policy: self.policy.clone(),
            interactive: self.config.interactive,
            cwd: self.config.cwd.clone(),
            sink,
            log: self.log.clone(),
            tools: &self.tools,
            hooks: firing.as_ref(),
            halt: Mutex::new(None),
            hook_context: Mutex::new(HashMap::new()),
            barrier,
        };
        let forward = forwarder(&self.log, &self.usage, &self.todos, sink);
        let steering = self.steering.clone();
        let engine = Engine {
            provider: self.provider.as_ref(),
            tools: &self.tools,
            gate: &gate,
            sink: &forward,
            steering: Some(&steering),
        };
        let mut rounds = 0;
        let mut stop_blocks = 0u32;
        let mut room_attempts = 0u32;
        let outcome = loop {
            let mut outcome = engine
                .run_turn(&mut self.history, &mut self.tracker, &turn, cancel)
                .await;
            rounds += outcome.rounds;
            outcome.rounds = rounds;
            if let Some(reason) =
                out_of_room(&outcome.stop).filter(|_| room_attempts < MAX_ROOM_ATTEMPTS)
            {
                // The turn no longer fits: cut oversized results, summarise what came before,
                // keep the turn, and go on with it.
                room_attempts += 1;
                let request = RoomRequest { turn_start, reason };
                let (mut history, mut tracker) = (take(&mut self.history), take(&mut self.tracker));
                let room = make_room(
                    &self.compactor(firing.as_ref(), &forward, sink),
                    &mut history,
                    &mut tracker,
                    request,
                    cancel,
                )
                .await;
                (self.history, self.tracker) = (history, tracker);
                match room {
                    Ok(Room::Made {
                        turn_start: start,
                        contexts,
                    }) => {
                        turn_start = start;
                        forget_summarised_checkpoints(&mut self.checkpoints, &self.history);
                        self.pending_context.extend(contexts);
                        continue;
                    }
                    Ok(Room::Nothing) => {}
                    Err(CompactError::Interrupted) => {
                        break TurnOutcome {
                            stop: TurnStop::Interrupted,
                            rounds,
                        };
                    }
                    Err(err) => sink(SessionUpdate::Warning(err.message())),
                }
            }
            let Some(firing) = firing.as_ref().filter(|_| !self.subagent) else {
                break outcome;
            };
            match firing
                .turn_ended(outcome, &self.history, stop_blocks, cancel)
                .await
            {
                TurnEnding::Ends(outcome) => break outcome,
                TurnEnding::Continues { reason, context } => {
                    stop_blocks += 1;
                    let mut content = vec![Block::text(reason)];
                    if !context.is_empty() {
                        content.push(Block::text(system_reminder(&context.join("\n\n"))));
                    }
                    let message = Message::new(Role::User, content);
                    self.log_message(&message, MessageExtra::default());
                    self.history.push(message);
                }
            }
        };
        self.log_stop(&outcome);
        outcome
    }

    /// Compacts before the turn when the context is nearly full (after the client's
    /// barrier: compaction runs hooks); `Some` when the user interrupted it.
    async fn compact_before_turn(
        &mut self,
        barrier: Option<&EffectBarrier>,
        sink: UpdateSink<'_>,
        cancel: &CancellationToken,
    ) -> Option<TurnOutcome> {
        if !self.needs_auto_compact() {
            return None;
        }
        if let Some(barrier) = barrier {
            barrier.passed().await;
        }
        match self.compact(CompactTrigger::Auto, "", sink, cancel).await {
            Ok(_) | Err(CompactError::Empty) => None,
            Err(CompactError::Interrupted) => Some(TurnOutcome {
                stop: TurnStop::Interrupted,
                rounds: 0,
            }),
            Err(err) => {
                sink(SessionUpdate::Warning(format!(
                    "Auto-compaction did not run: {}",
                    err.message()
                )));
                None
            }
        }
    }

    /// What the engine needs of the session's configuration for one turn.
    fn turn_config(&self) -> TurnConfig {
        TurnConfig {
            model: self.config.model.clone(),
            system: self.config.system_prompt.clone(),
            max_tokens: self.config.max_tokens,
            thinking_budget: self.config.thinking_budget,
            max_rounds: self.config.max_rounds,
            context_window: self.config.context_window,
            cwd: self.config.cwd.clone(),
            env: self.config.env.clone(),
            server_tools: self.config.server_tools.clone(),
            wire: self.diagnostics_tap(),
            read_denial: self
                .policy_snapshot()
                .read_denial(&self.config.cwd)
                .map(Arc::new),
        }
    }

    /// Records how the turn stopped, when that is not in its messages already.
    fn log_stop(&self, outcome: &TurnOutcome) {
        match &outcome.stop {
            TurnStop::Interrupted => self.log_event(LogEvent::Interrupted {}),
            TurnStop::Failed(err) => self.log_event(LogEvent::Error {
                message: err.user_message(),
                kind: err.kind,
                status: err.status,
            }),
            TurnStop::MaxRounds => self.log_event(LogEvent::MaxTurns {
                rounds: outcome.rounds,
            }),
            TurnStop::ContextFull => self.log_event(LogEvent::ContextFull {}),
            TurnStop::HookStopped(reason) => self.log_event(LogEvent::HookStopped {
                reason: reason.clone(),
            }),
            TurnStop::Completed(_) | TurnStop::PromptBlocked(_) => {}
        }
    }
}

/// How many times one turn makes room for itself before it ends as the provider or the
/// engine said (each time drops more: cut results, then summaries).
const MAX_ROOM_ATTEMPTS: u32 = 3;

/// Why a turn stopped for want of room, if it did: the engine found the window full, or the
/// provider said the conversation is too long.
fn out_of_room(stop: &TurnStop) -> Option<CompactReason> {
    match stop {
        TurnStop::ContextFull => Some(CompactReason::WindowFull),
        TurnStop::Failed(err) if err.kind == ProviderErrorKind::ContextTooLong => {
            Some(CompactReason::ProviderOverflow)
        }
        _ => None,
    }
}

/// Where a turn's engine events go: the log, the usage totals, TodoWrite's list, the sink.
pub(crate) fn forwarder<'a>(
    log: &Option<Arc<SessionLog>>,
    usage: &Arc<Mutex<BTreeMap<String, Usage>>>,
    todos: &Arc<Mutex<Vec<TodoItem>>>,
    sink: UpdateSink<'a>,
) -> impl Fn(EngineEvent) + Send + Sync + 'a {
    let (log, usage, todos) = (log.clone(), usage.clone(), todos.clone());
    move |event: EngineEvent| {
        if let Some(log) = &log {
            warn_on_failure(append_engine_event(log, &event));
        }
        match &event {
            EngineEvent::Usage {
                usage: u, model, ..
            } => {
                if let Ok(mut totals) = usage.lock() {
                    totals.entry(model.clone()).or_default().add(u);
                }
            }
            EngineEvent::ToolFinished { output, .. } => {
                if let (Some(ToolDisplay::Todos { todos: list }), Ok(mut current)) =
                    (&output.display, todos.lock())
                {
                    *current = list.clone();
                }
            }
            _ => {}
        }
        sink(SessionUpdate::Engine(event));
    }
}
