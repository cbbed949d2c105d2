//! `SessionEvent`: everything a client (headless printer, TUI, protocol drivers) sees of a
//! session, in the order it happens. Every submission is bracketed by
//! `SubmissionStarted`/`SubmissionEnded` with its id (or `SubmissionQueued` then
//! `SubmissionDropped` when it never ran); what changes in the session's state comes as a
//! whole `SessionState`. Clients render or serialise these; they never look below and keep
//! no copies of what the session owns.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use crate::core::context::ContextState;
use crate::core::hooks::{HookEvent, HookRunRecord};
use crate::core::permission::PermissionMode;
use crate::core::{Message, ToolDisplay, Usage};
use crate::session::PermissionAnswer;
pub use crate::session::conversation::CompactTrigger;
/// How the summary opens the first message of a compacted history (a resumed session's
/// history starts with it).
pub use crate::session::line::CONTEXT_SUMMARY_PREFIX;

use super::commands::{Submission, SubmissionId};
use super::errors::TurnError;

/// A pending permission question; answer it exactly once through `respond`.
#[derive(Debug)]
pub struct PermissionRequest {
    pub tool_use_id: String,
    pub tool_name: String,
    pub input: Value,
    pub reason: String,
    /// The rule "Yes, and don't ask again" would add (empty: none can be saved).
    pub suggested_rule: String,
    /// What the call would change, computed by the tool that will apply it (the diff of
    /// an Edit or Write).
    pub preview: Option<ToolDisplay>,
    /// The answers to offer, in order.
    pub choices: Vec<PermissionChoice>,
    /// The subagent asking (`Explore: find the tests`), when it is not the session itself.
    pub subagent: Option<String>,
    responder: Option<oneshot::Sender<PermissionAnswer>>,
}

/// One answer a permission question offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionChoice {
    /// Yes, this once.
    Allow,
    /// Yes, and don't ask again for calls this rule covers (saved for the project).
    AllowAlways { rule: String },
    /// No, optionally telling the model what to do instead.
    Deny,
}

impl PermissionRequest {
    pub(crate) fn new(
        tool_use_id: String,
        tool_name: String,
        input: Value,
        reason: String,
        suggested_rule: String,
        preview: Option<ToolDisplay>,
        responder: oneshot::Sender<PermissionAnswer>,
    ) -> Self {
        let mut choices = vec![PermissionChoice::Allow];
        if !suggested_rule.is_empty() {
            choices.push(PermissionChoice::AllowAlways {
                rule: suggested_rule.clone(),
            });
        }
        choices.push(PermissionChoice::Deny);
        PermissionRequest {
            tool_use_id,
            tool_name,
            input,
            reason,
            suggested_rule,
            preview,
            choices,
            subagent: None,
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

/// How a submission ended, for clients.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEnd {
    Success,
    Interrupted,
    MaxTurns,
    ContextFull,
    Error(TurnError),
}

impl TurnEnd {
    pub fn is_success(&self) -> bool {
        *self == TurnEnd::Success
    }
}

/// The end of one submission.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub end: TurnEnd,
    /// Provider calls that ran tools (0 for commands and `!commands`).
    pub rounds: u32,
    pub duration: Duration,
    /// The last assistant text of a turn, a command's output, a `!command`'s output.
    pub result: String,
}

/// A submission waiting behind the running one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedSubmission {
    pub id: SubmissionId,
    /// As the user typed it.
    pub text: String,
}

/// Token usage and cost of one model in a session.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelUsage {
    pub model: String,
    pub usage: Usage,
    /// `None` when the model's price is unknown.
    pub cost_usd: Option<f64>,
}

impl SessionState {
    /// Adds one call's usage to the model's and the session's totals.
    pub(crate) fn add_usage(&mut self, model: &str, usage: &Usage, cost: Option<f64>) {
        self.usage.add(usage);
        self.cost_usd = self.cost_usd.zip(cost).map(|(a, b)| a + b);
        match self.models.iter_mut().find(|m| m.model == model) {
            Some(entry) => {
                entry.usage.add(usage);
                entry.cost_usd = entry.cost_usd.zip(cost).map(|(a, b)| a + b);
            }
            None => self.models.push(ModelUsage {
                model: model.to_string(),
                usage: *usage,
                cost_usd: cost,
            }),
        }
    }
}

/// What a client shows of the session besides the transcript; sent whole whenever any of
/// it changes.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionState {
    pub session_id: String,
    pub name: Option<String>,
    pub model: String,
    pub mode: PermissionMode,
    /// Token usage of the whole session, every model.
    pub usage: Usage,
    /// Cost of that usage; `None` when a model's price is unknown.
    pub cost_usd: Option<f64>,
    /// The same, per model, in the order the models were first used.
    pub models: Vec<ModelUsage>,
    /// The latest context estimate, once a call was made.
    pub context: Option<ContextState>,
    /// The submission running now.
    pub running: Option<SubmissionId>,
    /// Submissions waiting behind it, oldest first.
    pub queue: Vec<QueuedSubmission>,
}

/// One thing that happened in a session.
#[derive(Debug)]
pub enum SessionEvent {
    /// The session's state changed (model, mode, name, usage and cost, context, queue).
    State(SessionState),
    /// A submission waits behind the running one.
    SubmissionQueued(QueuedSubmission),
    /// A queued submission was dropped without running (an abort, or the client took it
    /// back); clients may give its text back to the user.
    SubmissionDropped(QueuedSubmission),
    /// A submission began: a prompt's turn, a command, a `!command`.
    SubmissionStarted {
        id: SubmissionId,
        submission: Submission,
    },
    /// A submission ended; every `SubmissionStarted` gets exactly one.
    SubmissionEnded {
        id: SubmissionId,
        outcome: Outcome,
    },
    TextDelta(String),
    ThinkingDelta(String),
    /// The model began a tool call (input still streaming).
    ToolUseStreaming {
        id: String,
        name: String,
    },
    /// A piece of a streaming tool call's input JSON.
    ToolInputDelta {
        id: String,
        partial_json: String,
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
    /// One provider call's usage.
    Usage {
        usage: Usage,
        model: String,
        /// `None` when the model's price is unknown.
        cost_usd: Option<f64>,
        api_duration: Duration,
    },
    /// `/rewind` without arguments: the prompts it can go back to, newest first. A client
    /// with a picker offers them and answers with `InteractiveSession::rewind`.
    RewindPoints {
        id: SubmissionId,
        points: Vec<super::checkpoint::RewindPoint>,
    },
    /// A rewind was done: files put back, the conversation cut (its new history given),
    /// the prompt to put back in the composer.
    Rewound {
        id: SubmissionId,
        rewound: super::checkpoint::Rewound,
    },
    /// Output of a slash command (also the submission's `result`).
    CommandOutput {
        id: SubmissionId,
        command: String,
        output: String,
    },
    /// A `!command` the user ran directly, and what it printed (stdout, then stderr).
    /// The command and its output are also part of the conversation now.
    ShellOutput {
        id: SubmissionId,
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
    /// A compaction began (`/compact`, or automatically before or during a turn): the
    /// summary call runs; an abort now leaves the history as it was.
    CompactStarted {
        trigger: CompactTrigger,
    },
    /// Something a subagent did (its streamed text, messages, tool runs, usage) while the
    /// Agent call `parent_tool_use_id` runs it; its permission questions come as ordinary
    /// `PermissionRequest`s naming it.
    Subagent {
        parent_tool_use_id: String,
        agent_type: String,
        description: String,
        event: Box<SessionEvent>,
    },
    /// The conversation so far was replaced by `summary`; the context estimate went from
    /// `pre_tokens` to `post_tokens`. Earlier transcript stays on screen above this point.
    Compacted {
        trigger: CompactTrigger,
        pre_tokens: u64,
        post_tokens: u64,
        summary: String,
    },
}
