//! Compaction (DESIGN §4, §15): replacing the conversation so far by a summary the session's
//! own provider writes, without tools. It owns the summary prompt (what must survive: the
//! user's requests verbatim, decisions, files, errors, the current state and the next step,
//! steered by the project's "Compact Instructions" and the user's focus text), the
//! conversation as the text the summariser reads, the current TodoWrite list appended to the
//! summary verbatim, the PreCompact / PostCompact / SessionStart(`compact`) hooks, and the
//! `compact_boundary` log line, and the session's compaction settings and `/compact`. The
//! system prompt and context files are never summarised: they are resent as they are. An
//! interrupted or failed summary leaves the history as it was. A conversation too long for
//! one summary request is summarised in stages (`prompt`), each request keeping a reserve
//! for the summary; a provider that still says "prompt is too long" gets smaller stages.
//! `room` makes room for a turn that no longer fits.

mod prompt;
mod room;

pub use prompt::{conversation_text, summary_prompt};
pub(crate) use room::{Room, RoomRequest, make_room};
pub use room::{cut_oversized_results, result_cap_chars};

use std::mem::take;
use std::time::Instant;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use robota_core::context::{AUTO_COMPACT_THRESHOLD, ContextTracker};
use robota_core::engine::EngineEvent;
use robota_core::hooks::{HookEvent, HookRequest};
use robota_core::{
    Message, Provider, ProviderError, ProviderErrorKind, ProviderRequest, Role, StreamEvent,
    TodoItem,
};

use super::conversation::{Session, forwarder, hook_firing};
use super::hooks::HookFiring;
use super::line::{LogEvent, compact_summary_message};
use super::log::SessionLog;
use super::rewind::SUMMARY_FROM_HERE_PREFIX;
use super::update::{CompactReason, CompactReport, CompactTrigger, SessionUpdate, UpdateSink};
use prompt::{earlier_for_stage, extract_summary, stages, with_todo_list};

/// The system prompt of the summary call.
const SUMMARY_SYSTEM: &str = "You are a helpful AI assistant tasked with summarizing conversations between a user and a coding agent. You never call tools; you answer with the summary only.";

/// Share of the window one summary request's conversation text may fill.
const SUMMARY_INPUT_SHARE: f64 = 0.6;

/// The summary's own answer is given at most this many tokens; the request keeps them free.
const SUMMARY_OUTPUT_TOKENS: u32 = 20_000;

/// Tokens kept free in a summary request for its system prompt and instructions.
const SUMMARY_OVERHEAD_TOKENS: f64 = 2_000.0;

/// A stage is never cut below this many characters; a provider that refuses one this small
/// fails the compaction.
const MIN_STAGE_CHARS: usize = 8_000;

/// How compaction is set up for a session.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionConfig {
    /// Share of the window above which compaction runs before a user turn (`None`: never
    /// automatically). Settings: `autoCompactThreshold`.
    pub auto_threshold: Option<f64>,
    /// The "Compact Instructions" of the context files, steering every summary.
    pub instructions: Option<String>,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            auto_threshold: Some(AUTO_COMPACT_THRESHOLD),
            instructions: None,
        }
    }
}

/// Why a compaction did not happen (the history is as it was).
#[derive(Debug, Clone, PartialEq)]
pub enum CompactError {
    /// There is nothing before the kept messages to summarise.
    Empty,
    /// A PreCompact hook refused, with its reason.
    Blocked(String),
    /// The cancellation token fired before the summary was made.
    Interrupted,
    /// The summary call failed.
    Failed(ProviderError),
    /// The model answered with no text.
    EmptySummary,
    /// "Summarise from here" named a message that is not a prompt of the conversation.
    NotAPrompt(String),
}

impl CompactError {
    /// A sentence for the user.
    pub fn message(&self) -> String {
        match self {
            CompactError::Empty => "Nothing to compact yet".to_string(),
            CompactError::Blocked(reason) if reason.is_empty() => {
                "Compaction was blocked by a PreCompact hook".to_string()
            }
            CompactError::Blocked(reason) => {
                format!("Compaction was blocked by a PreCompact hook: {reason}")
            }
            CompactError::Interrupted => "Compaction interrupted".to_string(),
            CompactError::Failed(err) => format!("Compaction failed: {}", err.user_message()),
            CompactError::EmptySummary => {
                "Compaction failed: the model wrote an empty summary".to_string()
            }
            CompactError::NotAPrompt(reason) => reason.clone(),
        }
    }
}

/// A finished compaction and the context SessionStart(`compact`) hooks gave for the next
/// prompt.
pub(super) struct Compacted {
    pub report: CompactReport,
    pub contexts: Vec<String>,
}

/// Everything one compaction uses of its session, borrowed field by field so a running turn
/// can compact between its attempts.
pub(super) struct Compactor<'a> {
    pub provider: &'a dyn Provider,
    pub model: &'a str,
    pub max_tokens: u32,
    pub window: u64,
    pub config: &'a CompactionConfig,
    pub todos: Vec<TodoItem>,
    pub firing: Option<&'a HookFiring<'a>>,
    pub log: Option<&'a SessionLog>,
    /// Records an engine event (usage and retries of the summary call) as a turn does.
    pub forward: &'a (dyn Fn(EngineEvent) + Send + Sync),
    pub sink: UpdateSink<'a>,
}

/// What started a compaction and why, and what was cut before it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cause {
    /// `/compact` or automatic.
    pub trigger: CompactTrigger,
    /// Why it ran.
    pub reason: CompactReason,
    /// Oversized tool results cut before it.
    pub cut_results: usize,
}

impl Cause {
    /// A compaction the user asked for or the threshold started, nothing cut before it.
    pub fn of(trigger: CompactTrigger) -> Self {
        let reason = match trigger {
            CompactTrigger::Manual => CompactReason::Requested,
            CompactTrigger::Auto => CompactReason::Threshold,
        };
        Cause {
            trigger,
            reason,
            cut_results: 0,
        }
    }
}

impl Compactor<'_> {
    /// Replaces `history[..keep_from]` by a summary; the messages from `keep_from` on (the
    /// unfinished turn's) stay after it.
    pub async fn run(
        &self,
        history: &mut Vec<Message>,
        tracker: &mut ContextTracker,
        cause: Cause,
        focus: &str,
        keep_from: usize,
        cancel: &CancellationToken,
    ) -> Result<Compacted, CompactError> {
        let keep_from = keep_from.min(history.len());
        if keep_from == 0 {
            return Err(CompactError::Empty);
        }
        let trigger = cause.trigger;
        let pre_tokens = tracker.estimate(history);
        if let Some(firing) = self.firing {
            let fields = json!({"trigger": trigger.as_str(), "custom_instructions": focus});
            let request = HookRequest::new(HookEvent::PreCompact, Some(trigger.as_str()), fields);
            let outcome = firing.fire(request, cancel).await;
            if let Some(reason) = outcome.block_reason() {
                return Err(CompactError::Blocked(reason));
            }
        }
        if cancel.is_cancelled() {
            return Err(CompactError::Interrupted);
        }
        (self.sink)(SessionUpdate::CompactStarted { trigger });
        let (summary, stages) = self
            .summarise_staged(&history[..keep_from], focus, cancel)
            .await?;
        let summary = with_todo_list(&summary, &self.todos);

        let message = compact_summary_message(&summary, &uuid::Uuid::new_v4().to_string());
        let kept = history.len() - keep_from;
        let mut compacted = Vec::with_capacity(kept + 1);
        compacted.push(message.clone());
        compacted.extend(history.drain(keep_from..));
        tracker.reset_reported();
        let post_tokens = tracker.estimate(&compacted);
        if let Some(log) = self.log {
            let written = log.append_event(LogEvent::CompactBoundary {
                summary: summary.clone(),
                uuid: Some(message.id.clone()),
                trigger: Some(trigger.as_str().to_string()),
                pre_tokens: Some(pre_tokens),
                post_tokens: Some(post_tokens),
                kept,
            });
            if let Err(err) = written {
                tracing::warn!("session log: {err}");
            }
        }
        // The old history goes with its capacity (a fresh vector, not a cleared one), and
        // the memory it held goes back to the system.
        *history = compacted;
        crate::heap::return_freed_memory();

        let report = CompactReport {
            trigger,
            reason: cause.reason,
            stages,
            cut_results: cause.cut_results,
            pre_tokens,
            post_tokens,
            summary,
        };
        let contexts = self.after_hooks(&report).await;
        (self.sink)(SessionUpdate::Compacted(report.clone()));
        Ok(Compacted { report, contexts })
    }

    /// Summarises `messages` in as many stages as the request budget needs; when the
    /// provider still says the prompt is too long, again with stages half as large.
    /// Returns the summary and how many requests made it.
    async fn summarise_staged(
        &self,
        messages: &[Message],
        focus: &str,
        cancel: &CancellationToken,
    ) -> Result<(String, usize), CompactError> {
        let mut budget = self.stage_budget_chars();
        loop {
            match self.summarise_stages(messages, focus, budget, cancel).await {
                Err(CompactError::Failed(err)) if err.kind == ProviderErrorKind::ContextTooLong => {
                    let whole = conversation_text(messages).len();
                    budget = budget.min(whole) / 2;
                    if budget < MIN_STAGE_CHARS {
                        return Err(CompactError::Failed(err));
                    }
                    tracing::info!("summary request too long; again in stages of {budget} chars");
                }
                done => return done,
            }
        }
    }

    /// One summary request per stage of at most `budget` characters, each carrying the
    /// summary of the stages before it.
    async fn summarise_stages(
        &self,
        messages: &[Message],
        focus: &str,
        budget: usize,
        cancel: &CancellationToken,
    ) -> Result<(String, usize), CompactError> {
        let parts = stages(messages, budget);
        let instructions = self.config.instructions.as_deref();
        let mut summary: Option<String> = None;
        for part in &parts {
            let earlier = summary.as_deref().map(|s| earlier_for_stage(s, budget));
            let prompt = summary_prompt(earlier.as_deref(), part, instructions, focus);
            summary = Some(self.summarise(prompt, cancel).await?);
        }
        Ok((summary.unwrap_or_default(), parts.len()))
    }

    /// How many characters of conversation one summary request may carry: a share of the
    /// window, less the summary's own answer and the request's fixed text.
    fn stage_budget_chars(&self) -> usize {
        let window = self.window as f64;
        let reserve = f64::from(self.summary_max_tokens()) + SUMMARY_OVERHEAD_TOKENS;
        let tokens = (window * SUMMARY_INPUT_SHARE).min(window - reserve);
        ((tokens.max(0.0) as usize) * 4).max(MIN_STAGE_CHARS)
    }

    /// The summary call's answer limit: the session's, capped.
    fn summary_max_tokens(&self) -> u32 {
        self.max_tokens.min(SUMMARY_OUTPUT_TOKENS)
    }

    /// One tool-less streaming call; its usage and retries are recorded like a turn's.
    async fn summarise(
        &self,
        prompt: String,
        cancel: &CancellationToken,
    ) -> Result<String, CompactError> {
        let request = ProviderRequest {
            model: self.model.to_string(),
            system: SUMMARY_SYSTEM.to_string(),
            messages: vec![Message::user_text(prompt)],
            tools: Vec::new(),
            max_tokens: self.summary_max_tokens(),
            thinking_budget: None,
            tools_disabled: false,
            server_tools: Vec::new(),
            // With diagnostics on, the summary call is recorded like a turn's.
            wire: self
                .log
                .and_then(SessionLog::diagnostics)
                .map(|d| robota_core::wire::WireTap(d.clone())),
        };
        let events = |event: StreamEvent| {
            if matches!(event, StreamEvent::Retrying { .. }) {
                (self.forward)(EngineEvent::Stream(event));
            }
        };
        let started = Instant::now();
        let turn = match self.provider.stream(&request, &events, cancel).await {
            Ok(turn) => turn,
            Err(err) if err.kind == ProviderErrorKind::Cancelled || cancel.is_cancelled() => {
                return Err(CompactError::Interrupted);
            }
            Err(err) => return Err(CompactError::Failed(err)),
        };
        if let Some(usage) = turn.usage {
            (self.forward)(EngineEvent::Usage {
                usage,
                model: turn.model.clone(),
                api_duration: started.elapsed(),
            });
        }
        if cancel.is_cancelled() {
            return Err(CompactError::Interrupted);
        }
        let text = Message::new(Role::Assistant, turn.content).text();
        let summary = extract_summary(&text);
        if summary.is_empty() {
            return Err(CompactError::EmptySummary);
        }
        Ok(summary.to_string())
    }

    /// PostCompact, then SessionStart with source `compact`; returns the context the
    /// latter gave.
    async fn after_hooks(&self, report: &CompactReport) -> Vec<String> {
        let Some(firing) = self.firing else {
            return Vec::new();
        };
        // The hooks run after the fact: an abort of the turn does not undo the compaction.
        let cancel = CancellationToken::new();
        let trigger = report.trigger.as_str();
        let fields = json!({"trigger": trigger, "compact_summary": report.summary});
        let request = HookRequest::new(HookEvent::PostCompact, Some(trigger), fields);
        firing.fire(request, &cancel).await;
        let fields = json!({"source": "compact", "model": self.model});
        let request = HookRequest::new(HookEvent::SessionStart, Some("compact"), fields);
        firing.fire(request, &cancel).await.contexts
    }
}

impl Session {
    /// Compacts by these settings (threshold, Compact Instructions).
    pub fn with_compaction(mut self, compaction: CompactionConfig) -> Self {
        self.compaction = compaction;
        self
    }

    /// The compaction settings in force (threshold, Compact Instructions).
    pub fn compaction(&self) -> &CompactionConfig {
        &self.compaction
    }

    /// TodoWrite's list of a resumed session.
    pub fn with_todos(self, todos: Vec<TodoItem>) -> Self {
        if let Ok(mut list) = self.todos.lock() {
            *list = todos;
        }
        self
    }

    /// A compaction of this session, reporting through `firing`, `forward` and `sink`.
    pub(super) fn compactor<'a>(
        &'a self,
        firing: Option<&'a HookFiring<'a>>,
        forward: &'a (dyn Fn(EngineEvent) + Send + Sync),
        sink: UpdateSink<'a>,
    ) -> Compactor<'a> {
        Compactor {
            provider: self.provider.as_ref(),
            model: &self.config.model,
            max_tokens: self.config.max_tokens,
            window: self.config.context_window,
            config: &self.compaction,
            todos: self.todos.lock().map(|t| t.clone()).unwrap_or_default(),
            firing,
            log: self.log.as_deref(),
            forward,
            sink,
        }
    }

    /// Whether the context estimate is above the auto-compaction threshold.
    pub fn needs_auto_compact(&self) -> bool {
        let Some(threshold) = self.compaction.auto_threshold else {
            return false;
        };
        let window = self.config.context_window;
        !self.history.is_empty()
            && window > 0
            && self.context_estimate() as f64 > threshold * window as f64
    }

    /// Replaces the whole history by a summary (`/compact [focus]`); on `Err` it is as it
    /// was. Interruptible through `cancel`.
    pub async fn compact(
        &mut self,
        trigger: CompactTrigger,
        focus: &str,
        sink: UpdateSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<CompactReport, CompactError> {
        let firing = self
            .hooks
            .clone()
            .map(|hooks| hook_firing(hooks, &self.config, &self.policy, &self.log, sink));
        let forward = forwarder(&self.log, &self.usage, &self.todos, sink);
        let keep_from = self.history.len();
        // The compaction borrows the rest of the session: history and tracker move out
        // while it rewrites them, and back after.
        let (mut history, mut tracker) = (take(&mut self.history), take(&mut self.tracker));
        let done = self
            .compactor(firing.as_ref(), &forward, sink)
            .run(
                &mut history,
                &mut tracker,
                Cause::of(trigger),
                focus,
                keep_from,
                cancel,
            )
            .await;
        (self.history, self.tracker) = (history, tracker);
        let done = done?;
        self.forget_summarised_checkpoints();
        self.pending_context.extend(done.contexts);
        Ok(done.report)
    }
}

impl Session {
    /// "Summarise from here": replaces prompt `message_id` and everything after it by a
    /// summary of them, keeping what came before. Logged as a rewind to before the prompt
    /// and the summary as a user message. Interruptible; on `Err` the history is as it was.
    pub async fn summarize_from(
        &mut self,
        message_id: &str,
        sink: UpdateSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<CompactReport, CompactError> {
        let at = self
            .prompt_index(message_id)
            .map_err(|e| CompactError::NotAPrompt(e.0))?;
        let pre_tokens = self.tracker.estimate(&self.history);
        let forward = forwarder(&self.log, &self.usage, &self.todos, sink);
        (sink)(SessionUpdate::CompactStarted {
            trigger: CompactTrigger::Manual,
        });
        let (summary, stages) = self
            .compactor(None, &forward, sink)
            .summarise_staged(&self.history[at..], "", cancel)
            .await?;
        let summary = with_todo_list(
            &summary,
            &self.todos.lock().map(|t| t.clone()).unwrap_or_default(),
        );
        self.cut_history_before(at);
        self.push_logged(Message::user_text(format!(
            "{SUMMARY_FROM_HERE_PREFIX}{summary}"
        )));
        self.tracker.reset_reported();
        self.forget_summarised_checkpoints();
        crate::heap::return_freed_memory();
        let post_tokens = self.tracker.estimate(&self.history);
        let report = CompactReport {
            trigger: CompactTrigger::Manual,
            reason: CompactReason::Requested,
            stages,
            cut_results: 0,
            pre_tokens,
            post_tokens,
            summary,
        };
        // As `/compact` does: the TUI stops showing "Compacting…", `-p` writes its
        // `compact_boundary`.
        (sink)(SessionUpdate::Compacted(report.clone()));
        Ok(report)
    }
}
