//! `Session`: one conversation over time — its config and state (history, name, mode,
//! model, usage, context) and the turn runner. A turn fires UserPromptSubmit hooks, runs
//! the core engine through the session's tool gate (`gate`), lets Stop hooks send it back
//! to work, and writes every committed message and event to the session log (`engine_log`
//! says what an engine event leaves there). Also SessionStart / SessionEnd hooks, and when
//! to compact (`compact` does it): before a user turn above the threshold, on `/compact`,
//! and once mid-turn when the provider says the conversation is too long.

use std::collections::{BTreeMap, HashMap};
use std::mem::take;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use robota_core::context::{ContextTracker, chars_to_tokens};
use robota_core::engine::{Engine, EngineEvent, SteeringInbox, TurnConfig, TurnOutcome, TurnStop};
use robota_core::hooks::protocol::system_reminder;
use robota_core::hooks::{HookCallbacks, HookConfig, HookEvent, HookRequest};
use robota_core::permission::{PermissionMode, PermissionPolicy};
use robota_core::{
    Block, Message, Provider, ProviderErrorKind, Role, TodoItem, ToolDisplay, ToolRegistry, Usage,
};

use super::barrier::EffectBarrier;
use super::compact::{CompactError, CompactionConfig};
use super::engine_log::append_engine_event;
use super::gate::SessionGate;
use super::hooks::{HookFiring, SessionHooks, TurnEnding};
use super::line::{LogEvent, MessageExtra, SessionHeader};
use super::log::{LogError, SessionLog};

pub use super::update::{
    CompactReport, CompactTrigger, PermissionAnswer, SessionUpdate, UpdateSink,
};

/// Told to the model with each prompt while the session is in plan mode.
const PLAN_MODE_REMINDER: &str = "Plan mode is active: the user wants a plan before any change. Do not edit files, run commands that change anything, or make other changes (such calls are refused). Explore read-only, then present your plan with the ExitPlanMode tool; the user approves it (and you may then start) or tells you what to change.";

/// How a session is set up; fixed for its life except where setters exist.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The session's id: its log's file name and the `session_id` hooks receive. `clear`
    /// gives the session a new one.
    pub session_id: String,
    /// The working directory of tools and hooks, and the project the log belongs to.
    pub cwd: PathBuf,
    /// The model the provider is asked for; `set_model` changes it.
    pub model: String,
    /// Sent with every request; `set_system_prompt` changes it.
    pub system_prompt: String,
    /// Upper bound on the tokens of each model answer.
    pub max_tokens: u32,
    /// Tokens the model may spend thinking per answer; `None` asks for no extended
    /// thinking.
    pub thinking_budget: Option<u32>,
    /// Cap on the model calls of one turn that may run tools; `None` is unlimited.
    pub max_rounds: Option<u32>,
    /// The model's context window in tokens: the context estimate and the compaction
    /// threshold are measured against it.
    pub context_window: u64,
    /// Environment variables set for tool commands and hooks, on top of the process's own.
    pub env: Vec<(String, String)>,
    /// Whether a person can be asked to approve a call. Headless runs cannot: a call that
    /// needs approval is denied.
    pub interactive: bool,
    /// Provider-side tools (e.g. Anthropic's web search) offered every round.
    pub server_tools: Vec<robota_core::ServerTool>,
}

/// The context estimate split by what fills it, in tokens (chars/4, and the provider's
/// last figure for the messages when it is larger).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextUsage {
    /// Tokens of the system prompt.
    pub system_prompt: u64,
    /// Tool definitions (names, descriptions, input schemas).
    pub tools: u64,
    /// Tokens of the conversation history.
    pub messages: u64,
    /// The model's context window, in tokens.
    pub window: u64,
}

impl ContextUsage {
    /// The whole estimate: what [`Session::context_estimate`] returns.
    pub fn used(&self) -> u64 {
        self.system_prompt + self.tools + self.messages
    }

    /// What is left of the window (zero when the estimate exceeds it).
    pub fn free(&self) -> u64 {
        self.window.saturating_sub(self.used())
    }
}

/// A conversation with its provider, tools, policy, history and log.
pub struct Session {
    pub(super) config: SessionConfig,
    pub(super) provider: Arc<dyn Provider>,
    pub(super) tools: ToolRegistry,
    pub(super) policy: Arc<Mutex<PermissionPolicy>>,
    pub(super) history: Vec<Message>,
    pub(super) tracker: ContextTracker,
    pub(super) log: Option<Arc<SessionLog>>,
    pub(super) usage: Arc<Mutex<BTreeMap<String, Usage>>>,
    pub(super) name: Option<String>,
    pub(super) hooks: Option<Arc<SessionHooks>>,
    /// Hook context (`additionalContext`, SessionStart output) waiting for the next prompt.
    pub(super) pending_context: Vec<String>,
    /// How this session began, for SessionStart: `startup`, `resume`…
    pub(super) start_source: String,
    pub(super) compaction: CompactionConfig,
    /// TodoWrite's list as it stands (kept verbatim through compaction).
    pub(super) todos: Arc<Mutex<Vec<TodoItem>>>,
    /// A subagent's session: its parent reports its start and stop (SubagentStart,
    /// SubagentStop), so UserPromptSubmit and Stop hooks do not fire for it.
    pub(super) subagent: bool,
    /// The checkpoints of this session's prompts, oldest first (`rewind`).
    pub(super) checkpoints: Vec<super::replay::CheckpointRecord>,
    /// What the next turn's hooks and tool calls wait for (its checkpoint).
    pub(super) effect_barrier: Option<EffectBarrier>,
    /// Text the user sent during a turn for the model's next call.
    pub(super) steering: SteeringInbox,
}

impl Session {
    /// A fresh session: no history, name or hooks, started as `startup`, default
    /// compaction settings. `log`, when given, records everything from here on; the context
    /// estimate starts with the system prompt and the tool definitions.
    pub fn new(
        config: SessionConfig,
        provider: Arc<dyn Provider>,
        tools: ToolRegistry,
        policy: PermissionPolicy,
        log: Option<SessionLog>,
    ) -> Self {
        let prefix_chars = config.system_prompt.len()
            + tools
                .schemas()
                .iter()
                .map(|s| s.description.len() + s.input_schema.to_string().len())
                .sum::<usize>();
        Session {
            tracker: ContextTracker::new(prefix_chars),
            config,
            provider,
            tools,
            policy: Arc::new(Mutex::new(policy)),
            history: Vec::new(),
            log: log.map(Arc::new),
            usage: Arc::new(Mutex::new(BTreeMap::new())),
            name: None,
            hooks: None,
            pending_context: Vec::new(),
            start_source: "startup".to_string(),
            compaction: CompactionConfig::default(),
            todos: Arc::new(Mutex::new(Vec::new())),
            subagent: false,
            checkpoints: Vec::new(),
            effect_barrier: None,
            steering: SteeringInbox::default(),
        }
    }

    /// Marks the session as a subagent's (see the `subagent` field).
    pub fn as_subagent(mut self) -> Self {
        self.subagent = true;
        self
    }

    /// Runs these hooks for the project at `project_dir`; `prompt` and `agent` hooks ask
    /// this session's provider.
    pub fn with_hooks(mut self, config: HookConfig, project_dir: PathBuf) -> Self {
        self.hooks = (!config.is_empty()).then(|| {
            Arc::new(SessionHooks::new(
                config,
                project_dir,
                self.provider.clone(),
                self.config.model.clone(),
                self.wire_tap(),
            ))
        });
        self
    }

    /// Adds the hooks a driving program registered (`callback` handlers answered by
    /// `callbacks`) after the configured ones; they run for the project at `project_dir`.
    pub fn with_callback_hooks(
        mut self,
        config: HookConfig,
        callbacks: Arc<dyn HookCallbacks>,
        project_dir: PathBuf,
    ) -> Self {
        if config.is_empty() {
            return self;
        }
        let mut all = self
            .hooks
            .as_ref()
            .map(|h| h.config().clone())
            .unwrap_or_default();
        all.merge(config);
        let hooks = SessionHooks::new(
            all,
            project_dir,
            self.provider.clone(),
            self.config.model.clone(),
            self.wire_tap(),
        )
        .with_callbacks(callbacks);
        self.hooks = Some(Arc::new(hooks));
        self
    }

    /// How the session began (`startup`, `resume`, `clear`, `compact`), for SessionStart.
    pub fn with_start_source(mut self, source: &str) -> Self {
        self.start_source = source.to_string();
        self
    }

    /// How the session began (see [`Session::with_start_source`]); `startup` unless set.
    pub fn start_source(&self) -> &str {
        &self.start_source
    }

    /// The session's hooks, when it has any.
    pub fn hooks(&self) -> Option<&SessionHooks> {
        self.hooks.as_deref()
    }

    /// Fires SessionStart; what the hooks print as context reaches the next prompt.
    pub async fn fire_session_start(&mut self, source: &str, sink: UpdateSink<'_>) {
        let Some(hooks) = self.hooks.clone() else {
            return;
        };
        let firing = hook_firing(hooks, &self.config, &self.policy, &self.log, sink);
        let fields = json!({"source": source, "model": self.config.model});
        let request = HookRequest::new(HookEvent::SessionStart, Some(source), fields);
        let outcome = firing.fire(request, &CancellationToken::new()).await;
        self.pending_context.extend(outcome.contexts);
    }

    /// Fires `event` with `fields` (SubagentStart and SubagentStop, which the SDK's
    /// subagents report); returns the context the hooks added.
    pub async fn fire_hook(
        &self,
        event: HookEvent,
        query: Option<&str>,
        fields: serde_json::Value,
        sink: UpdateSink<'_>,
    ) -> Vec<String> {
        let Some(hooks) = self.hooks.clone() else {
            return Vec::new();
        };
        let firing = hook_firing(hooks, &self.config, &self.policy, &self.log, sink);
        let request = HookRequest::new(event, query, fields);
        firing
            .fire(request, &CancellationToken::new())
            .await
            .contexts
    }

    /// The session's hooks as they stand, to fire from outside a turn (`None`: it has
    /// none); runs are reported to `sink`.
    pub fn hook_handle(
        &self,
        sink: Arc<dyn Fn(SessionUpdate) + Send + Sync>,
    ) -> Option<super::hooks::HookHandle> {
        Some(super::hooks::HookHandle {
            hooks: self.hooks.clone()?,
            session_id: self.config.session_id.clone(),
            transcript_path: self.log.as_ref().map(|l| l.path().to_path_buf()),
            cwd: self.config.cwd.clone(),
            env: self.config.env.clone(),
            policy: self.policy.clone(),
            log: self.log.clone(),
            sink,
        })
    }

    /// The session's hooks, to share with a child session (a subagent runs its parent's).
    pub fn shared_hooks(&self) -> Option<Arc<SessionHooks>> {
        self.hooks.clone()
    }

    /// Runs `hooks` (a parent session's) in this session.
    pub fn with_shared_hooks(mut self, hooks: Option<Arc<SessionHooks>>) -> Self {
        self.hooks = hooks;
        self
    }

    /// The provider the session talks to (a subagent talks to its parent's).
    pub fn provider(&self) -> Arc<dyn Provider> {
        self.provider.clone()
    }

    /// Fires SessionEnd (`clear`, `resume`, `logout`, `prompt_input_exit`, `other`).
    pub async fn fire_session_end(&mut self, reason: &str, sink: UpdateSink<'_>) {
        let Some(hooks) = self.hooks.clone() else {
            return;
        };
        let firing = hook_firing(hooks, &self.config, &self.policy, &self.log, sink);
        let request = HookRequest::new(
            HookEvent::SessionEnd,
            Some(reason),
            json!({ "reason": reason }),
        );
        firing.fire(request, &CancellationToken::new()).await;
    }

    /// Token usage so far, per model.
    pub fn usage_by_model(&self) -> BTreeMap<String, Usage> {
        self.usage.lock().map(|u| u.clone()).unwrap_or_default()
    }

    /// The session's name, when it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Names the session (resumable by that name).
    pub fn rename(&mut self, name: String) {
        self.with_log(|log| log.append_rename(&name));
        self.name = Some(name);
    }

    /// Continues from replayed messages and state. The last answer's usage, as the
    /// provider reported it, seeds the context estimate (so a resumed session near its
    /// window compacts before its next turn).
    pub fn with_history(mut self, history: Vec<Message>, name: Option<String>) -> Self {
        let answered = history.iter().enumerate().rev().find_map(|(i, m)| {
            m.usage
                .filter(|_| m.role == Role::Assistant)
                .map(|u| (i, u))
        });
        if let Some((index, usage)) = answered {
            self.tracker.record_usage(&usage, index + 1);
        }
        self.history = history;
        self.name = name;
        self
    }

    /// The session's id (a new one after `clear`).
    pub fn id(&self) -> &str {
        &self.config.session_id
    }

    /// The session's settings as they stand (the model and system prompt included).
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// The conversation so far, oldest first; after a compaction its summary comes first.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// The tools offered to the model.
    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    /// Adds tools that follow the session's own (a client-side tool such as `Skill`); the
    /// registry's filters (`--tools`, deny rules naming a tool) apply to them too.
    pub fn add_tool_source(&mut self, source: Arc<dyn robota_core::ToolSource>) {
        self.tools.add_source(source);
    }

    /// The name of the provider the session talks to.
    pub fn provider_name(&self) -> &str {
        self.provider.name()
    }

    /// Whether this session records replay-grade diagnostics.
    pub fn diagnostics_on(&self) -> bool {
        self.log
            .as_ref()
            .is_some_and(|log| log.diagnostics().is_some())
    }

    /// The session log's path, when the session has a log.
    pub fn log_path(&self) -> Option<PathBuf> {
        self.log.as_ref().map(|l| l.path().to_path_buf())
    }

    /// The estimated context in tokens: system prompt, tool definitions and messages (for
    /// the messages, the provider's last figure when it is larger).
    pub fn context_estimate(&self) -> u64 {
        self.tracker.estimate(&self.history)
    }

    /// [`Session::context_estimate`] by category, with the window.
    pub fn context_usage(&self) -> ContextUsage {
        let prefix = self.tracker.prefix_tokens;
        let system_prompt = chars_to_tokens(self.config.system_prompt.len()).min(prefix);
        ContextUsage {
            system_prompt,
            tools: prefix - system_prompt,
            messages: self.context_estimate().saturating_sub(prefix),
            window: self.config.context_window,
        }
    }

    /// The permission rules as they stand now (a copy).
    pub fn policy_snapshot(&self) -> PermissionPolicy {
        self.policy.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Where text the user sends during a turn waits for the model's next call (it joins
    /// the next tool results; what a turn leaves there stays for the caller to take).
    pub fn steering_inbox(&self) -> SteeringInbox {
        self.steering.clone()
    }

    /// The live policy, for changing the mode while a turn runs.
    pub fn policy_handle(&self) -> Arc<Mutex<PermissionPolicy>> {
        self.policy.clone()
    }

    /// The permission mode in force.
    pub fn mode(&self) -> PermissionMode {
        self.policy.lock().map(|p| p.mode).unwrap_or_default()
    }

    /// Changes the permission mode and records the change in the log.
    pub fn set_mode(&mut self, mode: PermissionMode) {
        if let Ok(mut p) = self.policy.lock() {
            p.mode = mode;
        }
        self.with_log(|log| log.append_mode(mode.as_str()));
    }

    /// Holds the next turn's side effects — its hooks and tool calls, not its request to
    /// the model — until `barrier` opens (the client's checkpoint of the files).
    pub fn hold_effects_until(&mut self, barrier: EffectBarrier) {
        self.effect_barrier = Some(barrier);
    }

    /// Replaces the system prompt from the next request on (a changed response language,
    /// an edited context file); the context estimate follows.
    pub fn set_system_prompt(&mut self, prompt: String) {
        let old = robota_core::context::chars_to_tokens(self.config.system_prompt.len());
        let new = robota_core::context::chars_to_tokens(prompt.len());
        self.tracker.prefix_tokens = (self.tracker.prefix_tokens + new).saturating_sub(old);
        self.config.system_prompt = prompt;
    }

    /// Switches to `model`, whose window is `context_window` tokens, from the next request
    /// on, and records the change in the log.
    pub fn set_model(&mut self, model: String, context_window: u64) {
        self.with_log(|log| log.append_model(&model));
        self.config.model = model;
        self.config.context_window = context_window;
    }

    /// Starts afresh as a new session, as Claude Code's `/clear`: a new id and log (the old
    /// log keeps what was said, ends with a `clear` line and stays resumable), an empty
    /// history, no name, no usage. `Err` says why the new log could not be created; the
    /// session then goes on without one rather than writing into the old.
    pub fn clear(&mut self) -> Result<(), LogError> {
        self.log_event(LogEvent::Clear {});
        self.history.clear();
        self.checkpoints.clear();
        self.pending_context.clear();
        self.tracker.reset_reported();
        self.name = None;
        if let Ok(mut usage) = self.usage.lock() {
            usage.clear();
        }
        let id = uuid::Uuid::new_v4().to_string();
        let header = SessionHeader::new(
            &id,
            &self.config.cwd,
            &self.config.model,
            self.provider.name(),
        );
        self.config.session_id = id;
        let Some(old) = self.log.take() else {
            return Ok(());
        };
        let log = old.create_beside(&header)?;
        self.log = Some(Arc::new(log));
        Ok(())
    }

    /// Appends a user message that is not a prompt (e.g. a `!command` and its output) to
    /// the history and the log; the model sees it with the next prompt.
    pub fn record_user_note(&mut self, text: String) {
        let message = Message::user_text(text);
        self.log_message(&message, MessageExtra::default());
        self.history.push(message);
    }

    /// The first log write that failed since the last call, naming the file and what
    /// failed; clients must tell the user (the conversation itself goes on in memory).
    pub fn take_log_failure(&self) -> Option<String> {
        self.log.as_ref().and_then(|log| log.take_failure())
    }

    /// Writes an event line; failures are logged to the trace, never fatal.
    pub fn log_event(&self, event: LogEvent) {
        self.with_log(|log| log.append_event(event));
    }

    /// Runs one write on the log, if there is one. A failed write is traced only: the
    /// conversation goes on without it.
    fn with_log(&self, write: impl FnOnce(&SessionLog) -> Result<(), LogError>) {
        if let Some(log) = &self.log {
            warn_on_failure(write(log));
        }
    }

    /// With diagnostics on, the tap through which a provider call reports its traffic.
    fn wire_tap(&self) -> Option<robota_core::wire::WireTap> {
        let diagnostics = self.log.as_ref()?.diagnostics()?;
        Some(robota_core::wire::WireTap(diagnostics.clone()))
    }

    /// With diagnostics on: records the setup the next turn runs with (when it changed)
    /// and returns the tap through which the provider reports its wire traffic.
    fn diagnostics_tap(&self) -> Option<robota_core::wire::WireTap> {
        let diagnostics = self.log.as_ref()?.diagnostics()?;
        diagnostics.session_init(
            self.provider.name(),
            &self.config.model,
            &self.config.system_prompt,
            &self.tools.schemas(),
            &self.config.cwd,
        );
        self.wire_tap()
    }

    fn log_message(&self, message: &Message, extra: MessageExtra) {
        self.with_log(|log| log.append_message(message, extra));
    }

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
        let turn_start = self.history.len();
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
        let mut overflow_compacted = false;
        let outcome = loop {
            let mut outcome = engine
                .run_turn(&mut self.history, &mut self.tracker, &turn, cancel)
                .await;
            rounds += outcome.rounds;
            outcome.rounds = rounds;
            if !overflow_compacted && is_overflow(&outcome.stop) {
                // The provider says the conversation is too long: compact what came before
                // this turn once, keep the turn, and go on with it.
                overflow_compacted = true;
                let (mut history, mut tracker) = (take(&mut self.history), take(&mut self.tracker));
                let compacted = self
                    .compactor(firing.as_ref(), &forward, sink)
                    .run(
                        &mut history,
                        &mut tracker,
                        CompactTrigger::Auto,
                        "",
                        turn_start,
                        cancel,
                    )
                    .await;
                (self.history, self.tracker) = (history, tracker);
                match compacted {
                    Ok(done) => {
                        self.pending_context.extend(done.contexts);
                        continue;
                    }
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

/// The hook context of a session, built from its fields (so a turn can borrow the rest).
pub(super) fn hook_firing<'a>(
    hooks: Arc<SessionHooks>,
    config: &'a SessionConfig,
    policy: &'a Arc<Mutex<PermissionPolicy>>,
    log: &Option<Arc<SessionLog>>,
    sink: UpdateSink<'a>,
) -> HookFiring<'a> {
    HookFiring {
        hooks,
        session_id: &config.session_id,
        transcript_path: log.as_ref().map(|l| l.path().to_path_buf()),
        cwd: &config.cwd,
        env: &config.env,
        policy,
        sink,
        log: log.clone(),
        barrier: None,
    }
}

/// Whether a turn ended because the provider said the conversation is too long.
fn is_overflow(stop: &TurnStop) -> bool {
    matches!(stop, TurnStop::Failed(err) if err.kind == ProviderErrorKind::ContextTooLong)
}

/// Where a turn's engine events go: the log, the usage totals, TodoWrite's list, the sink.
pub(super) fn forwarder<'a>(
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

/// Traces a failed log write (the session log is never fatal; the error names the file and
/// what failed).
fn warn_on_failure(written: Result<(), LogError>) {
    if let Err(err) = written {
        tracing::warn!("session log: {err}");
    }
}
