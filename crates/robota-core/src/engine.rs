//! The execution loop of one user turn (DESIGN §4): estimate context, stream a provider
//! call, commit the assistant message, run its tool calls (read-only ones in parallel,
//! edits and commands in order), append the results, and repeat until a round asks for no
//! tools — with cancellation, the round cap and its summary call, and the context guards.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::future::join_all;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::context::{ContextState, ContextTracker, HARD_LIMIT, TOOL_RESULT_GUARD};
use super::message::{Block, Message, MessageState, Role, ToolResultContent, Usage};
use super::provider::{
    INVALID_INPUT_KEY, Provider, ProviderError, ProviderErrorKind, ProviderRequest, StopReason,
    StreamEvent,
};
use super::tool::{RiskClass, Tool, ToolContext, ToolOutput, ToolProgress, ToolRegistry};
use super::truncate::{TOOL_OUTPUT_CAP, truncate_middle};

/// Read-only tools of one round run at most this many at a time.
pub const PARALLEL_READS: usize = 8;

/// A turn paused by a provider-side tool is resumed at most this many times in a row.
pub const MAX_PAUSES: u32 = 5;

/// How long a cancelled tool may take to wind down before it is dropped.
pub const CANCEL_GRACE: Duration = Duration::from_secs(3);

/// The result of a call that was running or about to run when the user interrupted the
/// turn.
pub const INTERRUPTED_RESULT: &str = "Interrupted by user: the tool call did not complete.";
/// The result of each call a hook's `continue: false` kept from running (see
/// [`ToolGate::halted`]).
pub const HALTED_RESULT: &str = "Not run: a hook stopped the turn before this tool call.";
/// The result of a call skipped because the context window is nearly full.
pub(crate) const SKIPPED_RESULT: &str =
    "Skipped: context window near capacity. Tool execution result skipped to save context.";
/// The user message added to the summary call the engine makes at the round cap.
pub(crate) const SUMMARY_REQUEST: &str = "You have reached the maximum number of turns for this request. Do not call any tools. Summarize what you have done so far and what remains to be done.";

/// Settings of one turn.
#[derive(Debug, Clone)]
pub struct TurnConfig {
    /// The model to ask.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// Most output tokens per provider call.
    pub max_tokens: u32,
    /// Extended-thinking budget in tokens; `None` leaves thinking off.
    pub thinking_budget: Option<u32>,
    /// Cap on provider calls that may run tools; `None` = unlimited.
    pub max_rounds: Option<u32>,
    /// The model's context window in tokens, for the context guards.
    pub context_window: u64,
    /// The working directory tools run in.
    pub cwd: std::path::PathBuf,
    /// Extra environment for processes tools start (settings `env`).
    pub env: Vec<(String, String)>,
    /// Provider-side tools offered every round.
    pub server_tools: Vec<super::provider::ServerTool>,
    /// Where providers report their wire traffic; `None` unless diagnostics are on.
    pub wire: Option<super::wire::WireTap>,
    /// What deny rules keep from tools that walk directories (see [`ToolContext`]).
    pub read_denial: Option<std::sync::Arc<super::permission::PathDenial>>,
}

/// A tool call as the gate sees it.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The provider's id for the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The input the model sent (or the gate rewrote).
    pub input: Value,
    /// What the tool can do, for the permission decision.
    pub risk: RiskClass,
    /// The command, path or URL the call acts on.
    pub argument: Option<String>,
    /// Where the tool's command starts when the tool keeps its own directory (Bash after
    /// an earlier `cd`); see [`super::tool::Tool::start_dir`].
    pub start_dir: Option<std::path::PathBuf>,
}

/// The gate's answer for one call.
#[derive(Debug, Clone, PartialEq)]
pub enum GateDecision {
    /// Run it, with this (possibly rewritten) input.
    Allow(Value),
    /// Do not run it; the model reads this message.
    Deny(String),
    /// It cannot succeed (its tool said so before anyone was asked): it ends as a failed
    /// call with this error, reported like one that ran.
    Fail(String),
}

/// Decides whether a tool call runs (permissions, hooks, user approval). Implemented by
/// the session; the engine knows only this seam.
#[async_trait]
pub trait ToolGate: Send + Sync {
    /// Whether the call may run: [`GateDecision::Allow`] with the input to run it with, or
    /// why not. `cancel` fires when the user aborts the turn.
    async fn check(&self, call: &ToolCall, cancel: &CancellationToken) -> GateDecision;

    /// Runs after a call finished; may add context for the model to the result.
    async fn after(
        &self,
        _call: &ToolCall,
        _output: &ToolOutput,
        _cancel: &CancellationToken,
    ) -> Option<String> {
        None
    }

    /// Set once something behind the gate (a hook's `continue: false`) asked to end the
    /// turn: the engine runs no further calls, answers the rest with [`HALTED_RESULT`],
    /// commits the results and ends the turn with [`TurnStop::HookStopped`].
    fn halted(&self) -> Option<String> {
        None
    }
}

/// Everything the engine reports while a turn runs.
#[derive(Debug, Clone)]
pub enum EngineEvent {
    /// Pieces of the provider's answer as they arrive.
    Stream(StreamEvent),
    /// A committed assistant message.
    Assistant {
        /// The message, as appended to the history.
        message: Message,
        /// Why the model stopped; `None` for the part of an answer a failure or an
        /// interruption cut short.
        stop_reason: Option<StopReason>,
        /// The model that answered.
        model: String,
    },
    /// A tool call starts (one that cannot run starts too, then finishes with its error).
    ToolStarted(ToolCall),
    /// A running call's latest output: its last few lines (replacing the last report).
    ToolProgress {
        /// The call's id.
        id: String,
        /// Its last few lines of output.
        tail: Vec<String>,
    },
    /// A tool call ended.
    ToolFinished {
        /// The call as it ran.
        call: ToolCall,
        /// What it produced, before the result is cut to size.
        output: ToolOutput,
        /// How long it ran.
        duration: Duration,
    },
    /// Text the user sent during the turn (tag, text) joins the tool results about to be
    /// committed.
    Steered(Vec<(u64, String)>),
    /// A committed user message carrying tool results.
    ToolResults(Message),
    /// A provider call's token usage.
    Usage {
        /// The tokens reported.
        usage: Usage,
        /// The model that answered.
        model: String,
        /// How long the provider call took, streaming included.
        api_duration: Duration,
    },
    /// The context window's occupancy after a committed answer.
    Context(ContextState),
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnStop {
    /// The model finished its answer (no tool calls left), for this reason.
    Completed(StopReason),
    /// The user interrupted the turn.
    Interrupted,
    /// The round cap was reached; the model was asked for a summary instead of more tool
    /// calls.
    MaxRounds,
    /// The context window was too full to make another call.
    ContextFull,
    /// A provider call failed (after its retries).
    Failed(ProviderError),
    /// A hook ended the turn (`continue: false`), with its `stopReason`.
    HookStopped(String),
    /// A UserPromptSubmit hook refused the prompt, with its reason; nothing was sent.
    PromptBlocked(String),
}

/// The result of one turn.
#[derive(Debug, Clone)]
pub struct TurnOutcome {
    /// How it ended.
    pub stop: TurnStop,
    /// Provider calls made.
    pub rounds: u32,
}

/// The collaborators of a turn.
pub struct Engine<'a> {
    /// The model API to call.
    pub provider: &'a dyn Provider,
    /// The tools the model may call.
    pub tools: &'a ToolRegistry,
    /// Decides whether each tool call runs.
    pub gate: &'a dyn ToolGate,
    /// Receives every [`EngineEvent`] as it happens.
    pub sink: &'a (dyn Fn(EngineEvent) + Send + Sync),
    /// Text the user sends while the turn runs ("send now"): it joins the next tool
    /// results, so the model reads it with its next call.
    pub steering: Option<&'a SteeringInbox>,
}

/// Text the user sent during a turn for the model's next call, each piece with the
/// caller's tag (the client's id for it).
#[derive(Debug, Clone, Default)]
pub struct SteeringInbox(Arc<Mutex<Vec<(u64, String)>>>);

impl SteeringInbox {
    /// Adds text for the model's next call.
    pub fn push(&self, tag: u64, text: String) {
        self.lock().push((tag, text));
    }

    /// Everything waiting, oldest first; the inbox is empty after.
    pub fn take(&self) -> Vec<(u64, String)> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, String)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Text and thinking streamed in the current attempt, kept for an interrupted commit.
#[derive(Default)]
struct Partial {
    text: String,
}

impl Engine<'_> {
    /// Runs one user turn over `history` (whose last message is the user's prompt).
    pub async fn run_turn(
        &self,
        history: &mut Vec<Message>,
        tracker: &mut ContextTracker,
        config: &TurnConfig,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let mut rounds = 0u32;
        let mut tool_rounds = 0u32;
        let mut pauses = 0u32;
        loop {
            if cancel.is_cancelled() {
                return TurnOutcome {
                    stop: TurnStop::Interrupted,
                    rounds,
                };
            }
            let state = self.context_state(history, tracker, config);
            if state.fraction() > HARD_LIMIT {
                return TurnOutcome {
                    stop: TurnStop::ContextFull,
                    rounds,
                };
            }
            let at_cap = config.max_rounds.is_some_and(|cap| tool_rounds >= cap);
            let mut request = ProviderRequest {
                model: config.model.clone(),
                system: config.system.clone(),
                messages: history.clone(),
                tools: self.tools.schemas(),
                max_tokens: config.max_tokens,
                thinking_budget: config.thinking_budget,
                tools_disabled: at_cap,
                server_tools: config.server_tools.clone(),
                wire: config.wire.clone(),
            };
            if at_cap {
                request.messages.push(Message::user_text(SUMMARY_REQUEST));
            }
            rounds += 1;
            let partial = Mutex::new(Partial::default());
            let forward = |event: StreamEvent| {
                if let Ok(mut p) = partial.lock() {
                    match &event {
                        StreamEvent::TextDelta(t) => p.text.push_str(t),
                        StreamEvent::AttemptDiscarded => p.text.clear(),
                        _ => {}
                    }
                }
                (self.sink)(EngineEvent::Stream(event));
            };
            let started = Instant::now();
            let result = self.provider.stream(&request, &forward, cancel).await;
            let api_duration = started.elapsed();
            let partial_text = partial.lock().map(|p| p.text.clone()).unwrap_or_default();
            let turn = match result {
                Ok(turn) => turn,
                Err(err) => {
                    if !partial_text.is_empty() {
                        let mut message =
                            Message::new(Role::Assistant, vec![Block::text(partial_text)]);
                        message.state = MessageState::Interrupted;
                        self.commit_assistant(history, message, None, &config.model);
                    }
                    let stop = if err.kind == ProviderErrorKind::Cancelled {
                        TurnStop::Interrupted
                    } else {
                        TurnStop::Failed(err)
                    };
                    return TurnOutcome { stop, rounds };
                }
            };
            let mut message = Message::new(Role::Assistant, turn.content);
            message.usage = turn.usage;
            if let Some(id) = turn.id.filter(|id| !id.is_empty()) {
                message.id = id;
            }
            let calls: Vec<(String, String, Value)> = message
                .tool_uses()
                .map(|(id, name, input)| (id.to_string(), name.to_string(), input.clone()))
                .collect();
            let model = if turn.model.is_empty() {
                config.model.clone()
            } else {
                turn.model
            };
            self.commit_assistant(history, message, Some(turn.stop_reason.clone()), &model);
            if let Some(usage) = turn.usage {
                tracker.record_usage(&usage, history.len());
                (self.sink)(EngineEvent::Usage {
                    usage,
                    model: model.clone(),
                    api_duration,
                });
            }
            (self.sink)(EngineEvent::Context(
                self.context_state(history, tracker, config),
            ));
            if at_cap {
                return TurnOutcome {
                    stop: TurnStop::MaxRounds,
                    rounds,
                };
            }
            if calls.is_empty() {
                // A server tool (web search) paused a long answer: sending the answer back
                // lets the provider continue it.
                if turn.stop_reason == StopReason::PauseTurn && pauses < MAX_PAUSES {
                    pauses += 1;
                    continue;
                }
                return TurnOutcome {
                    stop: TurnStop::Completed(turn.stop_reason),
                    rounds,
                };
            }
            tool_rounds += 1;
            let mut results = self
                .run_tools(&calls, history, tracker, config, cancel)
                .await;
            if let Some(inbox) = self.steering.filter(|_| !cancel.is_cancelled()) {
                let steered = inbox.take();
                if !steered.is_empty() {
                    results.extend(steered.iter().map(|(_, text)| Block::text(text.clone())));
                    (self.sink)(EngineEvent::Steered(steered));
                }
            }
            let message = Message::new(Role::User, results);
            history.push(message.clone());
            (self.sink)(EngineEvent::ToolResults(message));
            if let Some(reason) = self.gate.halted() {
                return TurnOutcome {
                    stop: TurnStop::HookStopped(reason),
                    rounds,
                };
            }
            if cancel.is_cancelled() {
                return TurnOutcome {
                    stop: TurnStop::Interrupted,
                    rounds,
                };
            }
        }
    }

    fn commit_assistant(
        &self,
        history: &mut Vec<Message>,
        message: Message,
        stop_reason: Option<StopReason>,
        model: &str,
    ) {
        history.push(message.clone());
        (self.sink)(EngineEvent::Assistant {
            message,
            stop_reason,
            model: model.to_string(),
        });
    }

    fn context_state(
        &self,
        history: &[Message],
        tracker: &ContextTracker,
        config: &TurnConfig,
    ) -> ContextState {
        ContextState {
            used_tokens: tracker.estimate(history),
            window: config.context_window,
        }
    }

    /// Ends a call that cannot run (no such tool, unreadable input, a gate's failure) as a
    /// failed call: its clients see it start and finish with the error the model reads.
    fn fail_unrun(&self, call: ToolCall, message: String) -> ToolOutput {
        let output = ToolOutput::error(message);
        (self.sink)(EngineEvent::ToolStarted(call.clone()));
        (self.sink)(EngineEvent::ToolFinished {
            call,
            output: output.clone(),
            duration: Duration::ZERO,
        });
        output
    }

    /// How long a result of the tool `name` may be (the default cap for an unknown tool).
    fn result_cap(&self, name: &str) -> Option<usize> {
        self.tools
            .get(name)
            .map_or(Some(TOOL_OUTPUT_CAP), |tool| tool.max_result_chars())
    }

    fn no_such_tool(&self, name: &str) -> String {
        format!(
            "Error: No such tool available: {name}. Available tools: {}",
            self.tools.names().join(", ")
        )
    }

    /// Runs a round's calls and returns one tool_result block per call, in request order.
    async fn run_tools(
        &self,
        calls: &[(String, String, Value)],
        history: &[Message],
        tracker: &ContextTracker,
        config: &TurnConfig,
        cancel: &CancellationToken,
    ) -> Vec<Block> {
        let mut outputs: Vec<Option<ToolOutput>> = vec![None; calls.len()];
        let mut batch: Vec<(usize, ToolCall, Arc<dyn Tool>)> = Vec::new();
        for (index, (id, name, input)) in calls.iter().enumerate() {
            if cancel.is_cancelled() || self.gate.halted().is_some() {
                break;
            }
            let Some(tool) = self.tools.get(name) else {
                let call = unknown_call(id, name, input);
                outputs[index] = Some(self.fail_unrun(call, self.no_such_tool(name)));
                continue;
            };
            let mut call = ToolCall {
                id: id.clone(),
                name: name.clone(),
                argument: tool.primary_argument(input),
                risk: tool.risk(),
                input: input.clone(),
                start_dir: tool.start_dir(),
            };
            if let Some(raw) = input.get(INVALID_INPUT_KEY) {
                let message = format!(
                    "Error: the arguments for {name} were not valid JSON (the output may have been cut off): {}",
                    truncate_middle(raw.as_str().unwrap_or_default(), 400)
                );
                outputs[index] = Some(self.fail_unrun(call, message));
                continue;
            }
            if call.risk != RiskClass::Read {
                self.run_batch(&mut batch, &mut outputs, config, cancel)
                    .await;
            }
            match self.gate.check(&call, cancel).await {
                GateDecision::Deny(message) => {
                    outputs[index] = Some(ToolOutput::error(message));
                    continue;
                }
                GateDecision::Fail(message) => {
                    outputs[index] = Some(self.fail_unrun(call, message));
                    continue;
                }
                GateDecision::Allow(input) => {
                    if input != call.input {
                        call.argument = tool.primary_argument(&input);
                        call.input = input;
                    }
                }
            }
            batch.push((index, call, tool));
            if batch
                .last()
                .is_some_and(|(_, c, _)| c.risk != RiskClass::Read)
            {
                self.run_batch(&mut batch, &mut outputs, config, cancel)
                    .await;
            }
        }
        self.run_batch(&mut batch, &mut outputs, config, cancel)
            .await;

        let mut used = tracker.estimate(history);
        let guard = (config.context_window as f64 * TOOL_RESULT_GUARD) as u64;
        let mut over = false;
        let missing = if self.gate.halted().is_some() && !cancel.is_cancelled() {
            HALTED_RESULT
        } else {
            INTERRUPTED_RESULT
        };
        calls
            .iter()
            .zip(outputs)
            .map(|((id, name, _), output)| {
                let output = output.unwrap_or_else(|| ToolOutput::error(missing));
                let mut content = match self.result_cap(name) {
                    Some(cap) => truncate_middle(&output.content, cap),
                    None => output.content,
                };
                let mut images = output.images;
                if over {
                    content = SKIPPED_RESULT.to_string();
                    images.clear();
                } else {
                    let image_chars = images.len() * super::image::IMAGE_CHARS_ESTIMATE;
                    used += super::context::chars_to_tokens(content.len() + image_chars);
                    over = used > guard;
                }
                Block::ToolResult {
                    tool_use_id: id.clone(),
                    content: ToolResultContent::with_images(content, images),
                    is_error: output.is_error,
                }
            })
            .collect()
    }

    /// Runs the queued calls: several read-only ones concurrently, anything else alone.
    async fn run_batch(
        &self,
        batch: &mut Vec<(usize, ToolCall, Arc<dyn Tool>)>,
        outputs: &mut [Option<ToolOutput>],
        config: &TurnConfig,
        cancel: &CancellationToken,
    ) {
        let queued = std::mem::take(batch);
        for chunk in queued.chunks(PARALLEL_READS) {
            if cancel.is_cancelled() {
                return;
            }
            let runs = chunk.iter().map(|(index, call, tool)| async move {
                (
                    *index,
                    self.run_one(call, tool.as_ref(), config, cancel).await,
                )
            });
            for (index, output) in join_all(runs).await {
                outputs[index] = output;
            }
        }
    }

    async fn run_one(
        &self,
        call: &ToolCall,
        tool: &dyn Tool,
        config: &TurnConfig,
        cancel: &CancellationToken,
    ) -> Option<ToolOutput> {
        (self.sink)(EngineEvent::ToolStarted(call.clone()));
        let (progress, mut reports) = ToolProgress::channel();
        let ctx = ToolContext {
            cwd: config.cwd.clone(),
            cancel: cancel.child_token(),
            tool_use_id: call.id.clone(),
            env: config.env.clone(),
            read_denial: config.read_denial.clone(),
            progress,
        };
        let started = Instant::now();
        let running = tool.call(call.input.clone(), &ctx);
        // A tool sees the cancellation itself (Bash kills its process group); one that
        // ignores it is dropped after a grace period so an abort never hangs.
        let grace = async {
            cancel.cancelled().await;
            tokio::time::sleep(CANCEL_GRACE).await;
        };
        tokio::pin!(running, grace);
        let mut output = loop {
            tokio::select! {
                output = &mut running => break output,
                _ = &mut grace => break ToolOutput::error(INTERRUPTED_RESULT),
                Some(tail) = reports.recv() => (self.sink)(EngineEvent::ToolProgress {
                    id: call.id.clone(),
                    tail,
                }),
            }
        };
        if let Some(extra) = self.gate.after(call, &output, cancel).await {
            output.content.push_str("\n\n");
            output.content.push_str(&extra);
        }
        (self.sink)(EngineEvent::ToolFinished {
            call: call.clone(),
            output: output.clone(),
            duration: started.elapsed(),
        });
        Some(output)
    }
}

/// A call to a tool the session does not have, as its clients see it.
fn unknown_call(id: &str, name: &str, input: &Value) -> ToolCall {
    ToolCall {
        id: id.to_string(),
        name: name.to_string(),
        input: input.clone(),
        risk: RiskClass::Read,
        argument: None,
        start_dir: None,
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
