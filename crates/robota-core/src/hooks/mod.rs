//! Hooks in Claude Code's protocol (DESIGN §8): the events, the configuration read from
//! settings and plugin `hooks.json` files, matchers, the runners for `command` and `http`
//! handlers (with `prompt` / `agent` handlers delegated to whoever holds a model), the
//! stdin JSON and the stdout / exit-code protocol, and the merged outcome of one event.
//! Where an event fires, and what its outcome does to the conversation, is the session's
//! business; this module only runs hooks and says what they decided.

mod command;
pub mod config;
pub mod dispatch;
mod http;
pub mod matcher;
pub mod protocol;

use std::fmt;

pub use config::{HandlerKind, HookConfig, HookHandler, MatcherGroup};
pub use dispatch::{
    HookCallbackError, HookCallbacks, HookEnvironment, HookProgress, HookRequest, HookRunRecord,
    HookRunner, ModelHookRunner, RunOutcome,
};
pub use matcher::{Matcher, MatcherError};
pub use protocol::{HookOutcome, PermissionRequestDecision, ToolPermissionDecision};

/// A moment at which hooks run. Names and meanings are Claude Code's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookEvent {
    /// A session starts, resumes, or restarts after `/clear` or compaction (matcher: the
    /// source).
    SessionStart,
    /// A session ends (matcher: the reason).
    SessionEnd,
    /// The user sent a prompt, before the model sees it.
    UserPromptSubmit,
    /// Before a tool call runs (matcher: the tool name); may allow, ask, deny or rewrite it.
    PreToolUse,
    /// A tool call is about to ask the user's permission; may answer for the user.
    PermissionRequest,
    /// After a tool call succeeded.
    PostToolUse,
    /// After a tool call failed.
    PostToolUseFailure,
    /// robota wants the user's attention (matcher: the kind, `permission_prompt`…).
    Notification,
    /// The model finished its answer; a block makes it go on.
    Stop,
    /// A turn ended in an API error (matcher: the error's kind).
    StopFailure,
    /// A subagent starts (matcher: the agent's name).
    SubagentStart,
    /// A subagent finished (matcher: the agent's name); a block makes it go on.
    SubagentStop,
    /// Before the conversation is compacted (matcher: `manual` or `auto`).
    PreCompact,
    /// After the conversation was compacted (matcher: `manual` or `auto`).
    PostCompact,
    /// Before a skill's or custom command's `` !`command` `` line runs (matcher: the
    /// skill's name); deny, ask, defer or exit 2 stop it.
    PreSkillShellCommand,
}

/// Events Claude Code knows that robota does not fire; configuring them is not an error.
pub const KNOWN_UNSUPPORTED_EVENTS: &[&str] = &[
    "Setup",
    "UserPromptExpansion",
    "PermissionDenied",
    "PostToolBatch",
    "InstructionsLoaded",
    "ConfigChange",
    "CwdChanged",
    "DirectoryAdded",
    "FileChanged",
    "TaskCreated",
    "TaskCompleted",
    "TeammateIdle",
    "WorktreeCreate",
    "WorktreeRemove",
    "Elicitation",
    "ElicitationResult",
    "MessageDisplay",
];

impl HookEvent {
    /// Every event, in declaration order.
    pub const ALL: [HookEvent; 15] = [
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::Notification,
        HookEvent::Stop,
        HookEvent::StopFailure,
        HookEvent::SubagentStart,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::PostCompact,
        HookEvent::PreSkillShellCommand,
    ];

    /// The event's name as settings and hook input write it (`PreToolUse`).
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::Notification => "Notification",
            HookEvent::Stop => "Stop",
            HookEvent::StopFailure => "StopFailure",
            HookEvent::SubagentStart => "SubagentStart",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PostCompact => "PostCompact",
            HookEvent::PreSkillShellCommand => "PreSkillShellCommand",
        }
    }

    /// The event named `name` in settings, if robota fires it.
    pub(crate) fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// Whether the event concerns one tool call (its matcher filters on the tool name and
    /// its handlers may carry an `if` rule).
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PermissionRequest
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
        )
    }

    /// Whether a matcher means anything for this event; for the others it is ignored.
    pub fn supports_matcher(self) -> bool {
        !matches!(self, HookEvent::UserPromptSubmit | HookEvent::Stop)
    }

    /// Whether plain (non-JSON) stdout of a successful hook becomes context for the model.
    pub fn stdout_is_context(self) -> bool {
        matches!(self, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
    }

    /// Whether exit code 2 blocks what the event is about.
    pub fn can_block(self) -> bool {
        matches!(
            self,
            HookEvent::UserPromptSubmit
                | HookEvent::PreToolUse
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
                | HookEvent::Stop
                | HookEvent::SubagentStop
                | HookEvent::PreCompact
                | HookEvent::PreSkillShellCommand
        )
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
