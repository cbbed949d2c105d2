//! `SessionEvent`: everything a client (headless printer or TUI) sees of a session, in
//! the order it happens. Clients render or serialise these; they never look below.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use crate::core::context::ContextState;
use crate::core::hooks::{HookEvent, HookRunRecord};
use crate::core::{Message, ToolDisplay, Usage};
use crate::session::PermissionAnswer;

/// A pending permission question; answer it exactly once through `respond`.
#[derive(Debug)]
pub struct PermissionRequest {
    pub tool_use_id: String,
    pub tool_name: String,
    pub input: Value,
    pub reason: String,
    /// The rule "Yes, and don't ask again" would add.
    pub suggested_rule: String,
    responder: Option<oneshot::Sender<PermissionAnswer>>,
}

impl PermissionRequest {
    pub(crate) fn new(
        tool_use_id: String,
        tool_name: String,
        input: Value,
        reason: String,
        suggested_rule: String,
        responder: oneshot::Sender<PermissionAnswer>,
    ) -> Self {
        PermissionRequest {
            tool_use_id,
            tool_name,
            input,
            reason,
            suggested_rule,
            responder: Some(responder),
        }
    }

    /// Sends the answer; later calls do nothing.
    pub fn respond(&mut self, answer: PermissionAnswer) {
        if let Some(tx) = self.responder.take() {
            let _ = tx.send(answer);
        }
    }

    /// "Yes, and don't ask again": saves the suggested rule to the project's
    /// `.robota/settings.local.json` and allows this call (and, for the rest of the
    /// session, every call the rule covers). On a write error the call is still allowed
    /// for the session and the error is returned for display.
    pub fn allow_and_save(
        &mut self,
        project_dir: &std::path::Path,
    ) -> Result<std::path::PathBuf, String> {
        let saved =
            crate::sdk::settings::local_rules::add_allow_rule(project_dir, &self.suggested_rule)
                .map_err(|e| e.to_string());
        self.respond(PermissionAnswer::AllowAlways(self.suggested_rule.clone()));
        saved
    }
}

/// How a turn ended, for clients.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEnd {
    Success,
    Interrupted,
    MaxTurns,
    ContextFull,
    Error(String),
}

/// One thing that happened in a session.
#[derive(Debug)]
pub enum SessionEvent {
    TurnStarted {
        prompt: String,
    },
    TextDelta(String),
    ThinkingDelta(String),
    /// The model began a tool call (input still streaming).
    ToolUseStreaming {
        id: String,
        name: String,
    },
    /// A committed assistant message.
    AssistantMessage {
        message: Message,
        stop_reason: Option<String>,
        model: String,
    },
    ToolStarted {
        id: String,
        name: String,
        input: Value,
    },
    ToolFinished {
        id: String,
        name: String,
        input: Value,
        content: String,
        is_error: bool,
        display: Option<ToolDisplay>,
        duration: Duration,
    },
    /// A committed user message carrying tool results.
    ToolResults(Message),
    PermissionRequest(PermissionRequest),
    PermissionDenied {
        tool_use_id: String,
        tool_name: String,
        input: Value,
        reason: String,
    },
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        error: String,
    },
    /// Text streamed so far in this call is void; a retry follows.
    AttemptDiscarded,
    Context(ContextState),
    Usage {
        usage: Usage,
        model: String,
        /// `None` when the model's price is unknown.
        cost_usd: Option<f64>,
        api_duration: Duration,
    },
    TurnComplete {
        end: TurnEnd,
        rounds: u32,
        duration: Duration,
        /// The last assistant text of the turn.
        result: String,
    },
    /// A prompt was queued behind the running turn.
    PromptQueued(String),
    /// A queued prompt was dropped (e.g. by an abort); clients may give it back to the user.
    PromptDequeued(String),
    /// Output of a slash command.
    CommandOutput {
        command: String,
        output: String,
    },
    /// A `!command` the user ran directly, and what it printed (stdout, then stderr).
    /// The command and its output are also part of the conversation now.
    ShellOutput {
        command: String,
        output: String,
        /// `None` when the command was killed, timed out, interrupted or could not start.
        exit_code: Option<i32>,
    },
    Notice(String),
    Warning(String),
    /// A hook began to run.
    HookStarted {
        hook_id: String,
        /// `Event` or `Event:query`, e.g. `PreToolUse:Bash`.
        hook_name: String,
        event: HookEvent,
    },
    /// A hook finished: exit code, outcome, duration and its (capped) output.
    HookFinished(HookRunRecord),
}
