//! What a session reports to its client while it runs: [`SessionUpdate`]s through an
//! [`UpdateSink`], and the [`PermissionAnswer`] a client gives when the policy says ask.
//! Every part of the session (turn runner, tool gate, hooks, compaction) reports through
//! these; [`CompactTrigger`] and [`CompactReport`] say what a compaction was and did.

use tokio::sync::oneshot;

use robota_core::engine::{EngineEvent, ToolCall};
use robota_core::hooks::HookProgress;

/// The user's answer to a permission request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionAnswer {
    /// Allow this call once.
    Allow,
    /// Allow, and switch the session to this permission mode (approving a plan).
    AllowWithMode(robota_core::permission::PermissionMode),
    /// Allow, running the call with this input instead (the Agent SDK's `updatedInput`);
    /// the new input is judged again by the deny rules.
    AllowWithInput(serde_json::Value),
    /// Allow, and allow calls matching this rule for the rest of the session.
    AllowAlways(String),
    /// Refuse; the feedback, if any, goes to the model.
    Deny(Option<String>),
}

/// What a session reports while a turn runs.
#[derive(Debug)]
pub enum SessionUpdate {
    /// What the engine running the turn reports: streamed text, tool calls, usage, context.
    Engine(EngineEvent),
    /// The policy says ask: the client must answer through `responder`.
    PermissionAsked {
        /// The call waiting for an answer.
        call: ToolCall,
        /// Why the policy asks.
        reason: String,
        /// The narrow rule "don't ask again" would add.
        suggested_rule: String,
        /// What the call would change, worked out by its tool.
        preview: Option<robota_core::ToolDisplay>,
        /// Takes the answer; dropping it (or cancelling the turn) denies the call.
        responder: oneshot::Sender<PermissionAnswer>,
    },
    /// A call was refused (by a rule, the mode, the user, or because nobody could be asked).
    PermissionDenied {
        /// The refused call.
        call: ToolCall,
        /// Why it was refused.
        reason: String,
    },
    /// A warning that does not stop the turn (e.g. the log could not be written, a hook
    /// failed or timed out).
    Warning(String),
    /// The permission mode changed during the turn (an approved plan left plan mode).
    ModeChanged(robota_core::permission::PermissionMode),
    /// Something to tell the user (a hook's `systemMessage`, a Stop hook continuing).
    Notice(String),
    /// A hook started or finished.
    Hook(HookProgress),
    /// A compaction began (its PreCompact hooks let it): the summary call follows.
    CompactStarted {
        /// What started it.
        trigger: CompactTrigger,
    },
    /// The history was replaced by a summary.
    Compacted(CompactReport),
    /// Something a subagent's session reported while the parent's Agent call
    /// `parent_tool_use_id` runs it.
    Subagent {
        /// The id of the Agent call running the subagent.
        parent_tool_use_id: String,
        /// The agent definition it runs (`general-purpose`, `Explore`, a custom one).
        agent_type: String,
        /// The Agent call's short description.
        description: String,
        /// The subagent session's own update.
        update: Box<SessionUpdate>,
    },
}

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactTrigger {
    /// `/compact`.
    Manual,
    /// The context estimate passed the threshold before a user turn, or the provider
    /// answered that the conversation is too long.
    Auto,
}

impl CompactTrigger {
    /// As hooks and Claude Code's `compact_metadata` name it.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactTrigger::Manual => "manual",
            CompactTrigger::Auto => "auto",
        }
    }
}

/// Why a compaction ran, for the user's notice and `compact_metadata.reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactReason {
    /// The user asked (`/compact`, "summarise from here").
    Requested,
    /// The context estimate passed the auto-compaction threshold before a user turn.
    Threshold,
    /// The window was too full for the turn's next call.
    WindowFull,
    /// The provider answered that the prompt is too long.
    ProviderOverflow,
}

impl CompactReason {
    /// The machine name (`compact_metadata.reason`).
    pub fn as_str(self) -> &'static str {
        match self {
            CompactReason::Requested => "requested",
            CompactReason::Threshold => "threshold",
            CompactReason::WindowFull => "window_full",
            CompactReason::ProviderOverflow => "prompt_too_long",
        }
    }

    /// Why, as the user reads it.
    pub fn describe(self) -> &'static str {
        match self {
            CompactReason::Requested => "as asked",
            CompactReason::Threshold => "the context passed the auto-compaction threshold",
            CompactReason::WindowFull => "the context window was full",
            CompactReason::ProviderOverflow => "the provider said the prompt is too long",
        }
    }
}

/// What a compaction did: the context estimate before and after (tokens), and the summary
/// that now stands for the earlier conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactReport {
    /// What started the compaction.
    pub trigger: CompactTrigger,
    /// Why it ran.
    pub reason: CompactReason,
    /// Summary requests made (more than one when the conversation was summarised in
    /// stages).
    pub stages: usize,
    /// Oversized tool results cut to head and tail before summarising.
    pub cut_results: usize,
    /// The context estimate before, in tokens.
    pub pre_tokens: u64,
    /// The context estimate after, in tokens.
    pub post_tokens: u64,
    /// The summary that now stands for the earlier conversation.
    pub summary: String,
}

/// Receives session updates.
pub type UpdateSink<'a> = &'a (dyn Fn(SessionUpdate) + Send + Sync);
