//! `SessionEvent` → transcript cells: prompts, streamed answer and thinking text, tool
//! calls from the first streamed byte to their result, retries (a discarded attempt's
//! cells are removed again), and how the turn ended. Tool-use ids are only trusted within
//! a turn (some servers reuse `call_0`), so a finished call is never matched again.

use std::time::Duration;

use serde_json::Value;

use super::Transcript;
use super::cell::{Cell, NoticeKind, ThinkingCell};
use super::tool_call::{ToolCallCell, ToolResultView, ToolStatus, summarize_input};
use crate::markdown::StreamingMarkdown;
use robota_core::{Block, Message};
use robota_sdk::{CompactReason, CompactTrigger, SessionEvent, Submission, SubmissionId, TurnEnd};

/// Why an automatic compaction happened and how, under its divider.
pub(super) fn auto_compacted_notice(
    reason: CompactReason,
    stages: usize,
    cut_results: usize,
) -> String {
    let why = match reason {
        CompactReason::ProviderOverflow => "The provider said the prompt is too long",
        CompactReason::WindowFull => "The context window was full",
        CompactReason::Threshold | CompactReason::Requested => "The context was nearly full",
    };
    let mut how = String::new();
    if stages > 1 {
        how.push_str(&format!(" in {stages} stages"));
    }
    if cut_results > 0 {
        how.push_str(&format!(
            ", after cutting {cut_results} oversized tool result(s) to their head and tail"
        ));
    }
    format!(
        "{why}, so the conversation above was summarised automatically{how}; /context shows what it holds now."
    )
}

/// The divider's text: what the compaction did, and whether it was automatic
/// ("compacted: 151k → 18k tokens").
pub(super) fn compacted_label(
    trigger: CompactTrigger,
    pre_tokens: u64,
    post_tokens: u64,
) -> String {
    let short = |n: u64| {
        if n < 1_000 {
            n.to_string()
        } else {
            format!("{}k", (n + 500) / 1_000)
        }
    };
    let what = match trigger {
        CompactTrigger::Manual => "compacted",
        CompactTrigger::Auto => "auto-compacted",
    };
    format!(
        "{what}: {} → {} tokens",
        short(pre_tokens),
        short(post_tokens)
    )
}

impl Transcript {
    /// Updates the transcript for one session event. Events with no transcript content
    /// (usage, context, permission requests, queue changes) are ignored; the app shows
    /// those elsewhere.
    pub fn apply(&mut self, event: &SessionEvent) {
        match event {
            SessionEvent::SubmissionStarted { id, submission }
                if let Some(prompt) = submission.prompt() =>
            {
                self.close_streams();
                self.events.side.retain(|side| side != id);
                let index = self.push(Cell::UserPrompt(prompt.to_string()));
                self.attach_pastes(index);
                self.begin_attempt();
            }
            SessionEvent::TextDelta(text) => self.text_delta(text),
            SessionEvent::ThinkingDelta(text) => self.thinking_delta(text),
            SessionEvent::ToolUseStreaming { id, name } => self.tool_streaming(id, name),
            SessionEvent::AssistantMessage { message, .. } => self.assistant_message(message),
            SessionEvent::ToolStarted { id, name, input } => self.tool_started(id, name, input),
            SessionEvent::ToolOutputTail { id, lines } => self.tool_output_tail(id, lines),
            SessionEvent::ToolFinished {
                id,
                name,
                input,
                content,
                is_error,
                display,
                duration,
            } => {
                let index = self.tool_cell(id, name);
                self.events.tools.remove(id);
                self.finish_tool(index, name, input, *duration, |t| {
                    t.finish(content, *is_error, display.as_ref());
                });
            }
            SessionEvent::PermissionDenied {
                tool_use_id,
                tool_name,
                input,
                reason,
            } => self.tool_denied(tool_use_id, tool_name, input, reason),
            SessionEvent::SteeringSent(sent) => {
                self.close_streams();
                for prompt in sent {
                    self.push(Cell::UserPrompt(prompt.text.clone()));
                }
            }
            SessionEvent::ToolResults(_) => {
                self.close_streams();
                self.begin_attempt();
            }
            SessionEvent::Subagent {
                parent_tool_use_id,
                event,
                ..
            } => self.subagent_event(parent_tool_use_id, event),
            SessionEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                error,
            } => self.retrying(&format!(
                "{error} · retrying in {:.0}s (attempt {attempt}/{max_attempts})",
                delay.as_secs_f64().ceil()
            )),
            SessionEvent::AttemptDiscarded => {
                self.truncate(self.events.attempt_start);
                self.close_streams();
                self.events.streamed = false;
            }
            // A `!command` shows as running until its output comes.
            SessionEvent::SubmissionStarted {
                id,
                submission: Submission::Shell(command),
            } => self.shell_started(*id, command),
            SessionEvent::ShellOutputTail { id, lines } => self.shell_output_tail(*id, lines),
            // A command that runs a turn shows its line as the prompt; another adds its
            // output cell under what was typed.
            SessionEvent::SubmissionStarted { id, submission }
                if let Some(typed) = typed_command(submission) =>
            {
                self.command_started(*id, submission, typed);
            }
            SessionEvent::SubmissionStarted { id, .. } => self.events.side.push(*id),
            // A command or `!command` ended: only a failure adds something.
            SessionEvent::SubmissionEnded { id, outcome } if self.events.side.contains(id) => {
                self.side_submission_ended(*id, &outcome.end)
            }
            SessionEvent::SubmissionEnded { outcome, .. } => self.turn_complete(&outcome.end),
            SessionEvent::CommandOutput {
                id,
                command,
                output,
            } => self.command_output(*id, command, output),
            SessionEvent::ShellOutput {
                id,
                command,
                output,
                exit_code,
            } => self.shell_output(
                *id,
                Cell::Shell {
                    command: command.clone(),
                    output: output.clone(),
                    exit_code: *exit_code,
                },
            ),
            SessionEvent::Notice(text) => {
                self.notice(NoticeKind::Info, text.clone());
            }
            SessionEvent::Attached(files) => {
                self.notice(NoticeKind::Info, format!("Attached {}", files.join(", ")));
            }
            SessionEvent::Warning(text) => {
                self.notice(NoticeKind::Warning, text.clone());
            }
            // A hook's notice (timeout, bad output) is shown; a quiet run is not.
            SessionEvent::HookFinished(record) => {
                if let Some(text) = &record.notice {
                    self.notice(NoticeKind::Warning, text.clone());
                }
            }
            SessionEvent::CompactStarted { .. } => {
                self.close_streams();
                let index = self.notice(NoticeKind::Info, "Compacting the conversation…".into());
                self.events.compacting = Some(index);
            }
            SessionEvent::Compacted { .. } => self.compacted(event),
            SessionEvent::HookStarted { .. }
            | SessionEvent::ToolInputDelta { .. }
            | SessionEvent::PermissionRequest(_)
            | SessionEvent::PermissionWithdrawn { .. }
            | SessionEvent::Context(_)
            | SessionEvent::Usage { .. }
            | SessionEvent::State(_)
            | SessionEvent::SubmissionQueued(_)
            | SessionEvent::SubmissionDropped(_)
            // The app opens the rewind picker and redraws the transcript after a rewind.
            | SessionEvent::RewindPoints { .. }
            | SessionEvent::Rewound { .. } => {}
        }
    }

    fn tool_streaming(&mut self, id: &str, name: &str) {
        self.retry_succeeded();
        self.close_streams();
        self.events.streamed = true;
        let index = self.push(Cell::ToolCall(ToolCallCell::new(id, name)));
        self.events.tools.insert(id.to_string(), index);
    }

    fn tool_started(&mut self, id: &str, name: &str, input: &serde_json::Value) {
        self.close_streams();
        let index = self.tool_cell(id, name);
        let summary = summarize_input(name, input);
        self.update(index, |cell| {
            if let Cell::ToolCall(t) = cell {
                t.summary = summary;
                t.status = ToolStatus::Running;
            }
        });
    }

    fn tool_output_tail(&mut self, id: &str, lines: &[String]) {
        if let Some(&index) = self.events.tools.get(id) {
            self.update(index, |cell| {
                if let Cell::ToolCall(t) = cell {
                    t.live_tail = lines.to_vec();
                }
            });
        }
    }

    fn tool_denied(&mut self, id: &str, name: &str, input: &serde_json::Value, reason: &str) {
        let index = self.tool_cell(id, name);
        self.events.tools.remove(id);
        self.finish_tool(index, name, input, Duration::ZERO, |t| {
            t.status = ToolStatus::Denied;
            t.result = ToolResultView::Text(reason.to_string());
            t.duration = None;
        });
    }

    /// A retry notice: the last one is updated rather than stacked.
    fn retrying(&mut self, text: &str) {
        let last_is_retry = matches!(
            self.cell(self.len().wrapping_sub(1)),
            Some(Cell::Notice {
                kind: NoticeKind::Retry,
                ..
            })
        );
        if last_is_retry {
            let last = self.len() - 1;
            self.update(last, |cell| {
                if let Cell::Notice { text: t, .. } = cell {
                    *t = text.to_string();
                }
            });
        } else {
            self.notice(NoticeKind::Retry, text.to_string());
        }
        self.begin_attempt();
        self.events.retry_notice = Some(self.len() - 1);
    }

    /// A `!command` shows as running until its output comes.
    fn shell_started(&mut self, id: SubmissionId, command: &str) {
        self.events.side.push(id);
        let index = self.push(Cell::ShellRunning {
            command: command.to_string(),
            tail: Vec::new(),
        });
        self.events.shells.insert(id, index);
    }

    fn shell_output_tail(&mut self, id: SubmissionId, lines: &[String]) {
        if let Some(&index) = self.events.shells.get(&id) {
            self.update(index, |cell| {
                if let Cell::ShellRunning { tail, .. } = cell {
                    *tail = lines.to_vec();
                }
            });
        }
    }

    /// A command or `!command` ended: only a failure adds something.
    /// A command started: one that runs a turn shows its line as the prompt; another's
    /// output will sit under what was typed.
    fn command_started(&mut self, id: SubmissionId, submission: &Submission, typed: String) {
        self.events.side.push(id);
        if runs_a_turn(submission) {
            self.close_streams();
            self.push(Cell::UserPrompt(format!("/{typed}")));
        } else {
            self.events.typed.insert(id, typed);
        }
    }

    /// A command's output, under the line that was typed.
    fn command_output(&mut self, id: SubmissionId, command: &str, output: &str) {
        let command = self
            .events
            .typed
            .remove(&id)
            .unwrap_or_else(|| command.to_string());
        self.push(Cell::CommandOutput {
            command,
            output: output.to_string(),
        });
    }

    fn side_submission_ended(&mut self, id: SubmissionId, end: &TurnEnd) {
        self.events.side.retain(|side| *side != id);
        self.events.typed.remove(&id);
        // A `!command` that never ran (its output never came) stops spinning.
        if let Some(index) = self.events.shells.remove(&id) {
            self.update(index, |cell| {
                if let Cell::ShellRunning { command, .. } = cell {
                    *cell = Cell::Shell {
                        command: std::mem::take(command),
                        output: String::new(),
                        exit_code: None,
                    };
                }
            });
        }
        if let TurnEnd::Error(error) = end {
            self.notice(NoticeKind::Error, error.line());
        }
    }

    /// A `!command`'s output replaces its running cell (or is added when there is none).
    fn shell_output(&mut self, id: SubmissionId, done: Cell) {
        match self.events.shells.remove(&id) {
            Some(index) => self.update(index, |cell| *cell = done),
            None => {
                self.push(done);
            }
        }
    }

    fn notice(&mut self, kind: NoticeKind, text: String) -> usize {
        self.push(Cell::Notice { kind, text })
    }

    /// Everything above stays on screen; the divider marks where the model's view of the
    /// conversation now starts.
    fn compacted(&mut self, event: &SessionEvent) {
        let SessionEvent::Compacted {
            trigger,
            reason,
            stages,
            cut_results,
            pre_tokens,
            post_tokens,
            ..
        } = *event
        else {
            return;
        };
        let why = (trigger == CompactTrigger::Auto)
            .then(|| auto_compacted_notice(reason, stages, cut_results));
        let divider = Cell::Divider(compacted_label(trigger, pre_tokens, post_tokens));
        match self.events.compacting.take() {
            Some(index) => self.update(index, |cell| *cell = divider),
            None => {
                self.push(divider);
            }
        }
        if let Some(why) = why {
            self.notice(NoticeKind::Info, why);
        }
        self.begin_attempt();
    }

    /// The retried attempt produced output: its retry notice has served its purpose.
    fn retry_succeeded(&mut self) {
        if let Some(index) = self.events.retry_notice.take()
            && index + 1 == self.len()
        {
            self.truncate(index);
            self.events.attempt_start = self.len();
        }
    }

    pub(super) fn begin_attempt(&mut self) {
        self.events.attempt_start = self.len();
        self.events.streamed = false;
    }

    /// Ends the open answer and thinking cells; later deltas start new ones.
    fn close_streams(&mut self) {
        if let Some(index) = self.events.assistant.take() {
            self.update(index, |cell| {
                if let Cell::Assistant(md) = cell {
                    md.finish();
                }
            });
        }
        if let Some(index) = self.events.thinking.take() {
            self.update(index, |cell| {
                if let Cell::Thinking(t) = cell {
                    t.markdown.finish();
                    t.done = true;
                }
            });
        }
    }

    fn text_delta(&mut self, text: &str) {
        self.retry_succeeded();
        self.events.streamed = true;
        if self.events.thinking.is_some() {
            self.close_streams();
        }
        let index = match self.events.assistant {
            Some(index) => index,
            None => {
                let theme = *self.theme();
                let index = self.push(Cell::Assistant(StreamingMarkdown::new(theme)));
                self.events.assistant = Some(index);
                index
            }
        };
        self.update(index, |cell| {
            if let Cell::Assistant(md) = cell {
                md.push(text);
            }
        });
    }

    fn thinking_delta(&mut self, text: &str) {
        self.retry_succeeded();
        self.events.streamed = true;
        if self.events.assistant.is_some() {
            self.close_streams();
        }
        let index = match self.events.thinking {
            Some(index) => index,
            None => {
                let index = self.push(Cell::Thinking(self.new_thinking()));
                self.events.thinking = Some(index);
                index
            }
        };
        self.update(index, |cell| {
            if let Cell::Thinking(t) = cell {
                t.markdown.push(text);
            }
        });
    }

    fn new_thinking(&self) -> ThinkingCell {
        let theme = *self.theme();
        ThinkingCell {
            markdown: StreamingMarkdown::with_base_style(theme, theme.thinking),
            done: false,
        }
    }

    /// A committed message: builds its cells when nothing was streamed (non-streaming
    /// providers, resumed sessions), else fills in what streaming could not know.
    pub(super) fn assistant_message(&mut self, message: &Message) {
        self.retry_succeeded();
        self.close_streams();
        if self.events.streamed {
            for (id, name, input) in message.tool_uses() {
                if let Some(&index) = self.events.tools.get(id) {
                    let summary = summarize_input(name, input);
                    self.update(index, |cell| {
                        if let Cell::ToolCall(t) = cell
                            && t.summary.is_empty()
                        {
                            t.summary = summary;
                        }
                    });
                }
            }
            return;
        }
        let theme = *self.theme();
        for block in &message.content {
            match block {
                Block::Text { text, .. } if !text.trim().is_empty() => {
                    self.push(Cell::Assistant(StreamingMarkdown::from_text(theme, text)));
                }
                Block::Thinking { thinking, .. } if !thinking.trim().is_empty() => {
                    let mut cell = self.new_thinking();
                    cell.markdown.push(thinking);
                    cell.markdown.finish();
                    cell.done = true;
                    self.push(Cell::Thinking(cell));
                }
                Block::ToolUse { id, name, input } => {
                    let mut call = ToolCallCell::new(id, name);
                    call.summary = summarize_input(name, input);
                    let index = self.push(Cell::ToolCall(call));
                    self.events.tools.insert(id.clone(), index);
                }
                _ => {}
            }
        }
        self.events.streamed = true;
    }

    /// The unfinished call with this id, or a new cell for it.
    /// A subagent's event updates the live line under the Agent call running it.
    fn subagent_event(&mut self, parent: &str, event: &SessionEvent) {
        let Some(&index) = self.events.tools.get(parent) else {
            return;
        };
        self.update(index, |cell| {
            let Cell::ToolCall(call) = cell else {
                return;
            };
            let activity = call.subagent.get_or_insert_with(Default::default);
            activity.started.get_or_insert_with(std::time::Instant::now);
            match event {
                SessionEvent::ToolStarted { name, input, .. } => {
                    activity.tool_uses += 1;
                    let summary = summarize_input(name, input);
                    let label = if summary.is_empty() {
                        name.clone()
                    } else {
                        format!("{name}({summary})")
                    };
                    activity.push_step(format!("• {label}"));
                    activity.current = Some(label);
                }
                SessionEvent::ToolFinished { is_error, .. } => {
                    if *is_error && let Some(current) = &activity.current {
                        let step = format!("  ✗ {current} failed");
                        activity.push_step(step);
                    }
                    activity.current = None;
                }
                SessionEvent::AssistantMessage { message, .. } => {
                    let text = message.text();
                    let first = text.trim().lines().next().unwrap_or("");
                    if !first.is_empty() {
                        let mut said: String = first.chars().take(120).collect();
                        if first.chars().count() > 120 || text.trim().lines().nth(1).is_some() {
                            said.push('…');
                        }
                        activity.push_step(format!("“{said}”"));
                    }
                }
                SessionEvent::Usage { usage, .. } => {
                    activity.tokens += usage.input_tokens + usage.output_tokens;
                }
                _ => {}
            }
        });
    }

    fn tool_cell(&mut self, id: &str, name: &str) -> usize {
        if let Some(&index) = self.events.tools.get(id) {
            return index;
        }
        let index = self.push(Cell::ToolCall(ToolCallCell::new(id, name)));
        self.events.tools.insert(id.to_string(), index);
        index
    }

    fn finish_tool(
        &mut self,
        index: usize,
        name: &str,
        input: &Value,
        duration: Duration,
        finish: impl FnOnce(&mut ToolCallCell),
    ) {
        let summary = summarize_input(name, input);
        self.update(index, |cell| {
            if let Cell::ToolCall(t) = cell {
                if t.summary.is_empty() {
                    t.summary = summary;
                }
                t.duration = Some(duration);
                finish(t);
            }
        });
    }

    pub(super) fn turn_complete(&mut self, end: &TurnEnd) {
        self.close_streams();
        // Calls that never finished were cut off by the end of the turn.
        let open: Vec<usize> = self.events.tools.drain().map(|(_, i)| i).collect();
        for index in open {
            self.update(index, |cell| {
                if let Cell::ToolCall(t) = cell
                    && matches!(t.status, ToolStatus::Pending | ToolStatus::Running)
                {
                    t.status = ToolStatus::Error;
                    t.result = ToolResultView::Text("Interrupted".into());
                }
            });
        }
        let notice = |kind, text: &str| Cell::Notice {
            kind,
            text: text.to_string(),
        };
        match end {
            TurnEnd::Success => {}
            TurnEnd::Interrupted => {
                self.push(Cell::Interrupted);
            }
            TurnEnd::MaxTurns => {
                self.push(notice(
                    NoticeKind::Warning,
                    "Stopped: the turn reached its maximum number of rounds",
                ));
            }
            TurnEnd::ContextFull => {
                self.push(notice(
                    NoticeKind::Error,
                    "The context window is full; run /compact or start a new session",
                ));
            }
            TurnEnd::Error(error) => {
                self.push(notice(NoticeKind::Error, &error.line()));
            }
        }
    }
}

/// A command submission as the user typed it, without the `/`: its name and arguments.
fn typed_command(submission: &Submission) -> Option<String> {
    let (name, args) = match submission {
        Submission::Command { spec, args } => (spec.name, args.as_str()),
        Submission::Custom { command, args } => (command.name.as_str(), args.as_str()),
        _ => return None,
    };
    Some(format!("{name} {}", args.trim()).trim_end().to_string())
}

/// Whether the submission runs a turn of the model (a custom command or skill, `/init`,
/// `/compact`): its line then stands as the prompt, as in Claude Code.
fn runs_a_turn(submission: &Submission) -> bool {
    match submission {
        Submission::Custom { .. } => true,
        Submission::Command { spec, .. } => matches!(spec.name, "init" | "compact"),
        _ => false,
    }
}
