//! `SessionEvent`: everything a client (headless printer, TUI, protocol drivers) sees of a
//! session, in the order it happens. Every submission is bracketed by
//! `SubmissionStarted`/`SubmissionEnded` with its id (or `SubmissionQueued` then
//! `SubmissionDropped` when it never ran); what changes in the session's state comes as a
//! whole `SessionState`. Clients render or serialise these; they never look below and keep
//! no copies of what the session owns.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use robota_core::context::ContextState;
use robota_core::hooks::{HookEvent, HookRunRecord};
use robota_core::permission::PermissionMode;
use robota_core::{Message, ToolDisplay, Usage};
use robota_session::PermissionAnswer;
pub use robota_session::conversation::{CompactReason, CompactTrigger};
/// How the summary opens the first message of a compacted history (a resumed session's
/// history starts with it).
pub use robota_session::line::CONTEXT_SUMMARY_PREFIX;
pub use robota_session::rewind::SUMMARY_FROM_HERE_PREFIX;

use super::commands::{Submission, SubmissionId};
use super::errors::TurnError;

/// A pending permission question; answer it exactly once through `respond`.
#[derive(Debug)]
pub struct PermissionRequest {
    /// The provider's id of the tool call waiting for the answer.
    pub tool_use_id: String,
    /// The tool the model wants to run (`Bash`, `Edit`, an MCP tool's `mcp__server__name`).
    pub tool_name: String,
    /// The call's input as the model sent it.
    pub input: Value,
    /// Why it needs approval (the mode, or the `ask` rule that matched), in words.
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
    AllowAlways {
        /// The permission rule that would be saved, e.g. `Bash(npm test:*)`.
        rule: String,
    },
    /// No, optionally telling the model what to do instead.
    Deny,
}

impl PermissionRequest {
    /// A request for one tool call, answered through `responder`; its choices are allow,
    /// allow-always (when `suggested_rule` is not empty) and deny.
    pub fn new(
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
    ) -> Result<std::path::PathBuf, crate::settings::local_rules::SettingsWriteError> {
        let saved = crate::settings::local_rules::add_allow_rule(project_dir, &self.suggested_rule);
        self.respond(PermissionAnswer::AllowAlways(self.suggested_rule.clone()));
        saved
    }
}

/// How a submission ended, for clients.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEnd {
    /// It ran to its end: the model answered without asking for more tools, or the
    /// command finished.
    Success,
    /// [`InteractiveSession::abort`](super::InteractiveSession::abort) stopped it; a
    /// turn's partial answer is kept in the conversation.
    Interrupted,
    /// The turn limit (`max_turns`) was reached before the model finished.
    MaxTurns,
    /// The conversation no longer fits the model's context window, even after compaction.
    ContextFull,
    /// It failed; the error says why and what to do.
    Error(TurnError),
}

impl TurnEnd {
    /// Whether it is [`TurnEnd::Success`].
    pub fn is_success(&self) -> bool {
        *self == TurnEnd::Success
    }
}

/// The end of one submission.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// How it ended.
    pub end: TurnEnd,
    /// Provider calls the turn made, the one that answered included (0 for commands and
    /// `!commands`).
    pub rounds: u32,
    /// From its start to its end (time spent queued not counted).
    pub duration: Duration,
    /// The last assistant text of a turn, a command's output, a `!command`'s output.
    pub result: String,
}

/// A submission waiting behind the running one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedSubmission {
    /// The id [`InteractiveSession::submit`](super::InteractiveSession::submit) returned.
    pub id: SubmissionId,
    /// As the user typed it.
    pub text: String,
}

/// Token usage and cost of one model in a session.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelUsage {
    /// The model id.
    pub model: String,
    /// Tokens it used over the session.
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
    /// The current session id (`/clear` starts a new one).
    pub session_id: String,
    /// The name given with `/rename`, if any.
    pub name: Option<String>,
    /// The model the next request goes to (`/model` changes it).
    pub model: String,
    /// The permission mode now in force.
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
    /// Prompts sent into the running turn
    /// ([`InteractiveSession::steer`](super::InteractiveSession::steer)) waiting for its
    /// next model call, oldest first.
    pub steering: Vec<QueuedSubmission>,
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
        /// The id `submit` returned.
        id: SubmissionId,
        /// What runs, as parsed.
        submission: Submission,
    },
    /// A submission ended; every `SubmissionStarted` gets exactly one.
    SubmissionEnded {
        /// The id `submit` returned.
        id: SubmissionId,
        /// How it ended, its result text, rounds and duration.
        outcome: Outcome,
    },
    /// A piece of the model's answer text as it streams in.
    TextDelta(String),
    /// A piece of the model's visible reasoning as it streams in (models with thinking on).
    ThinkingDelta(String),
    /// The model began a tool call (input still streaming).
    ToolUseStreaming {
        /// The provider's id of the call.
        id: String,
        /// The tool called.
        name: String,
    },
    /// A piece of a streaming tool call's input JSON.
    ToolInputDelta {
        /// The provider's id of the call.
        id: String,
        /// The next characters of the input JSON (not valid JSON on its own).
        partial_json: String,
    },
    /// A committed assistant message: one provider call's whole answer, text and tool
    /// calls, as it joins the conversation.
    AssistantMessage {
        /// The message.
        message: Message,
        /// Why the provider stopped (`end_turn`, `tool_use`, `max_tokens` …), if it said.
        stop_reason: Option<String>,
        /// The model that answered.
        model: String,
    },
    /// A tool call was allowed and begins to run.
    ToolStarted {
        /// The provider's id of the call.
        id: String,
        /// The tool.
        name: String,
        /// Its input.
        input: Value,
    },
    /// A running tool call's latest output (a Bash command's last few lines, at most ten
    /// reports a second); each report replaces the one before. Not part of the result.
    ToolOutputTail {
        /// The provider's id of the call.
        id: String,
        /// The last lines printed so far, oldest first.
        lines: Vec<String>,
    },
    /// A tool call finished; its result goes back to the model.
    ToolFinished {
        /// The provider's id of the call.
        id: String,
        /// The tool.
        name: String,
        /// Its input.
        input: Value,
        /// The result text the model reads.
        content: String,
        /// Whether the result is an error (the model is told it failed).
        is_error: bool,
        /// Structured data for showing the result (a file's diff, the todo list).
        display: Option<ToolDisplay>,
        /// How long it ran.
        duration: Duration,
    },
    /// Text sent with [`InteractiveSession::steer`](super::InteractiveSession::steer)
    /// during the turn joins the tool results about to be committed: the model reads it
    /// with its next call. (Steered text the turn had no further call for is queued as a
    /// prompt instead: `SubmissionQueued`.)
    SteeringSent(Vec<QueuedSubmission>),
    /// A committed user message carrying tool results.
    ToolResults(Message),
    /// A tool call needs approval; the call waits until the request is answered. Comes
    /// only from sessions that ask (see
    /// [`SessionBuilder::ask_permissions`](super::SessionBuilder::ask_permissions)).
    PermissionRequest(PermissionRequest),
    /// A permission question this client was sent is settled without it: another client
    /// of the same session answered it first. Clients close it unanswered.
    PermissionWithdrawn {
        /// The `tool_use_id` of the question.
        tool_use_id: String,
    },
    /// A tool call was refused (a deny rule, the mode, no one to ask, or the answer);
    /// the model is told.
    PermissionDenied {
        /// The provider's id of the call.
        tool_use_id: String,
        /// The tool.
        tool_name: String,
        /// Its input.
        input: Value,
        /// Why it was refused, as the model reads it.
        reason: String,
    },
    /// A provider call failed in a way worth retrying; the next attempt starts after
    /// `delay`.
    Retrying {
        /// The attempt about to start (1 for the first retry).
        attempt: u32,
        /// The most attempts there will be.
        max_attempts: u32,
        /// The wait before it.
        delay: Duration,
        /// What failed.
        error: String,
    },
    /// Text streamed so far in this call is void; a retry follows.
    AttemptDiscarded,
    /// The context estimate after a provider call: how full the model's window is.
    Context(ContextState),
    /// One provider call's usage.
    Usage {
        /// Tokens in, out and cached.
        usage: Usage,
        /// The model that was called.
        model: String,
        /// `None` when the model's price is unknown.
        cost_usd: Option<f64>,
        /// How long the call took.
        api_duration: Duration,
    },
    /// `/rewind` without arguments: the prompts it can go back to, newest first. A client
    /// with a picker offers them and answers with `InteractiveSession::rewind`.
    RewindPoints {
        /// The `/rewind` submission.
        id: SubmissionId,
        /// The prompts, newest first.
        points: Vec<super::checkpoint::RewindPoint>,
    },
    /// A rewind was done: files put back, the conversation cut (its new history given),
    /// the prompt to put back in the composer.
    Rewound {
        /// The rewind's submission.
        id: SubmissionId,
        /// What was put back.
        rewound: super::checkpoint::Rewound,
    },
    /// Output of a slash command (also the submission's `result`).
    CommandOutput {
        /// The command's submission.
        id: SubmissionId,
        /// Its name, without the `/`.
        command: String,
        /// What it printed.
        output: String,
    },
    /// A `!command` the user ran directly, and what it printed (stdout, then stderr).
    /// The command and its output are also part of the conversation now.
    ShellOutput {
        /// The `!command`'s submission.
        id: SubmissionId,
        /// The command line.
        command: String,
        /// Its stdout, then its stderr.
        output: String,
        /// `None` when the command was killed, timed out, interrupted or could not start.
        exit_code: Option<i32>,
    },
    /// A running `!command`'s latest output: its last few lines (at most ten reports a
    /// second); each report replaces the one before. `ShellOutput` follows when it ends.
    ShellOutputTail {
        /// The `!command`'s submission.
        id: SubmissionId,
        /// The last lines printed so far, oldest first.
        lines: Vec<String>,
    },
    /// Something worth telling the user that changes nothing (a mode change, a hint).
    Notice(String),
    /// What the prompt's `@` mentions attached, each as the user would name it
    /// (`calc.py (12 lines)`, `src/ (directory listing)`); sent before the turn starts.
    Attached(Vec<String>),
    /// Something went wrong that did not end the submission (a hook failed, the log
    /// could not be written).
    Warning(String),
    /// A hook began to run.
    HookStarted {
        /// Names this run of the hook; its `HookFinished` record carries the same id.
        hook_id: String,
        /// `Event` or `Event:query`, e.g. `PreToolUse:Bash`.
        hook_name: String,
        /// The hook event that fired it.
        event: HookEvent,
        /// The command, URL or prompt it runs.
        label: String,
    },
    /// A hook finished: exit code, outcome, duration and its (capped) output.
    HookFinished(HookRunRecord),
    /// A compaction began (`/compact`, or automatically before or during a turn): the
    /// summary call runs; an abort now leaves the history as it was.
    CompactStarted {
        /// Whether `/compact` or the context's fill started it.
        trigger: CompactTrigger,
    },
    /// Something a subagent did (its streamed text, messages, tool runs, usage) while the
    /// Agent call `parent_tool_use_id` runs it; its permission questions come as ordinary
    /// `PermissionRequest`s naming it.
    Subagent {
        /// The id of the parent's Agent tool call running the subagent.
        parent_tool_use_id: String,
        /// The subagent's type (`general-purpose`, `Explore`, a custom agent's name).
        agent_type: String,
        /// The short task description the model gave it.
        description: String,
        /// What the subagent did.
        event: Box<SessionEvent>,
    },
    /// The conversation so far was replaced by `summary`; the context estimate went from
    /// `pre_tokens` to `post_tokens`. Earlier transcript stays on screen above this point.
    Compacted {
        /// Whether `/compact` or the context's fill started it.
        trigger: CompactTrigger,
        /// Why it ran (asked, threshold, window full, provider said too long).
        reason: CompactReason,
        /// Summary requests it took (more than one: summarised in stages).
        stages: usize,
        /// Oversized tool results cut to head and tail before it.
        cut_results: usize,
        /// The context estimate before, in tokens.
        pre_tokens: u64,
        /// The context estimate after, in tokens.
        post_tokens: u64,
        /// The summary that replaced the conversation.
        summary: String,
    },
}
