//! `Session`: one conversation over time — its config and state (history, name, mode,
//! model, usage, context) and the turn runner. A turn fires UserPromptSubmit hooks, runs
//! the core engine through the session's tool gate (`gate`), lets Stop hooks send it back
//! to work, and writes every committed message and event to the session log (`engine_log`
//! says what an engine event leaves there). Also SessionStart / SessionEnd hooks, and when
//! to compact (`compact` does it): before a user turn above the threshold, on `/compact`,
//! and once mid-turn when the provider says the conversation is too long.
//!
//! This module holds the session's state and its setters; `turn` runs a turn,
//! `hook_wiring` sets up and fires the session's own hooks, and `record` writes to its log.

mod hook_wiring;
mod mode_lock;
mod record;
mod turn;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use robota_core::context::{ContextTracker, chars_to_tokens};
use robota_core::engine::SteeringInbox;
use robota_core::permission::{PermissionMode, PermissionPolicy};
use robota_core::{Message, Provider, Role, TodoItem, ToolRegistry, Usage};

use super::barrier::EffectBarrier;
use super::compact::CompactionConfig;
use super::hooks::SessionHooks;
use super::log::SessionLog;

pub(crate) use hook_wiring::hook_firing;
pub use mode_lock::ModeLock;
pub use turn::PLAN_MODE_REMINDER;
pub(crate) use turn::forwarder;

pub use super::update::{
    CompactReason, CompactReport, CompactTrigger, PermissionAnswer, SessionUpdate, UpdateSink,
};

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
    /// The modes it may not switch to (managed policy).
    pub(super) mode_lock: ModeLock,
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
            mode_lock: ModeLock::default(),
            steering: SteeringInbox::default(),
        }
    }

    /// Marks the session as a subagent's (see the `subagent` field).
    pub fn as_subagent(mut self) -> Self {
        self.subagent = true;
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

    /// The provider the session talks to (a subagent talks to its parent's).
    pub fn provider(&self) -> Arc<dyn Provider> {
        self.provider.clone()
    }

    /// Token usage so far, per model.
    pub fn usage_by_model(&self) -> BTreeMap<String, Usage> {
        self.usage.lock().map(|u| u.clone()).unwrap_or_default()
    }

    /// The session's name, when it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
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

    /// Starts the token totals from what an earlier run of the session used (a resumed
    /// log's answers), so `/cost` counts the whole session.
    pub fn with_usage(self, usage_by_model: BTreeMap<String, Usage>) -> Self {
        if let Ok(mut totals) = self.usage.lock() {
            *totals = usage_by_model;
        }
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

    /// Changes the permission mode and records the change in the log; a mode the policy
    /// forbids ([`mode_refusal`](Self::mode_refusal)) is not switched to.
    pub fn set_mode(&mut self, mode: PermissionMode) {
        if self.mode_refusal(mode).is_some() {
            return;
        }
        if let Ok(mut p) = self.policy.lock() {
            p.mode = mode;
        }
        self.with_log(|log| log.append_mode(mode.as_str()));
    }

    /// Forbids the modes `lock` names for the rest of the session (a managed policy's
    /// `disableBypassPermissionsMode`).
    pub fn lock_modes(&mut self, lock: ModeLock) {
        self.mode_lock = lock;
    }

    /// The modes the session may not switch to.
    pub fn mode_lock(&self) -> &ModeLock {
        &self.mode_lock
    }

    /// Why the session may not switch to `mode`, if it may not.
    pub fn mode_refusal(&self, mode: PermissionMode) -> Option<&str> {
        self.mode_lock.refusal(mode)
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
}
