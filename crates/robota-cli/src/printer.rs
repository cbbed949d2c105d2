//! The stream of one print-mode run as output lines: turns `SessionEvent`s into Claude
//! Code's message shapes (through `output`), keeps the run's totals, and notices when
//! nobody reads stdout any more. Shared by headless print mode and the Agent SDK driver.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::core::hooks::{HookEvent, HookRunRecord};
use tokio::sync::mpsc;

use crate::sdk::commands::CommandScope;
use crate::sdk::{ErrorKind, InteractiveSession, SessionEvent, TurnEnd, TurnError};

use super::args::{Args, OutputFormat};
use super::assemble::Assembled;
use super::headless::{EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK};
use super::output::{self, RunTotals};

/// Turns events into output lines and keeps the totals.
pub struct Printer {
    format: OutputFormat,
    verbose_json: bool,
    partial: bool,
    hook_events: bool,
    pub session_id: String,
    pub totals: RunTotals,
    /// All messages, for `json` + `--verbose` (printed as one array).
    collected: Vec<Value>,
    /// The streamed message's open content block, and the next block's index.
    block_index: Option<(usize, StreamBlock)>,
    next_block: usize,
    /// A `message_start` was written and its `message_stop` not yet.
    message_open: bool,
    /// The model named in `message_start`.
    pub model: String,
    /// Stdout was closed by its reader.
    pub closed: bool,
    /// `--max-budget-usd`, and the session's cost when the run started (a resumed
    /// session's earlier cost does not count).
    budget: Option<f64>,
    cost_at_start: Option<f64>,
    /// Where the model's answer lands in a `--json-schema` run.
    structured: Option<crate::tools::StructuredSlot>,
}

impl Printer {
    /// Prints `system/init` for the assembled session and starts it; its events come on
    /// the returned channel. The one start of print mode and the protocol drivers. MCP
    /// servers get up to `MCP_TIMEOUT` to connect first, so that `system/init` and the
    /// first request see their tools; one still connecting is reported as pending.
    pub async fn start_session(
        &mut self,
        assembled: Assembled,
    ) -> Option<(InteractiveSession, mpsc::UnboundedReceiver<SessionEvent>)> {
        self.structured = assembled.structured.clone();
        self.model = assembled.model.clone();
        let mcp_servers: Vec<Value> = match assembled.mcp() {
            Some(mcp) => {
                mcp.wait_settled(crate::sdk::mcp::startup_wait()).await;
                mcp.reports()
                    .iter()
                    .map(|r| json!({"name": r.name, "status": r.status.as_str()}))
                    .collect()
            }
            None => Vec::new(),
        };
        let session = assembled.session();
        let session_id = session.id().to_string();
        self.session_id = session_id.clone();
        let commands: Vec<String> = assembled
            .command_entries()
            .into_iter()
            .filter(|c| c.scope == CommandScope::Session)
            .map(|c| c.name)
            .collect();
        let mut init = output::init_message(
            &session_id,
            &session.config().cwd.to_string_lossy(),
            &assembled.model,
            &session.tools().names(),
            session.mode().as_str(),
            &assembled.api_key_source,
            &commands,
        );
        init["mcp_servers"] = Value::Array(mcp_servers);
        init["plugins"] = Value::Array(assembled.plugins.clone());
        init["sandbox"] = sandbox_status(&session.policy_snapshot());
        init["skills"] = json!(assembled.skill_names());
        init["agents"] = json!(assembled.agent_names());
        self.emit(init);
        let mut session = assembled.start();
        let events = session.events()?;
        Some((session, events))
    }

    pub fn new(args: &Args) -> Self {
        Printer {
            format: args.output_format,
            verbose_json: args.output_format == OutputFormat::Json && args.verbose,
            partial: args.include_partial_messages,
            hook_events: args.include_hook_events,
            session_id: String::new(),
            totals: RunTotals::new(),
            collected: Vec::new(),
            block_index: None,
            next_block: 0,
            message_open: false,
            model: String::new(),
            closed: false,
            budget: args.max_budget_usd,
            cost_at_start: None,
            structured: None,
        }
    }

    /// True once, when the run's cost reaches `--max-budget-usd`: the caller stops the
    /// turn; its result says `error_max_budget_usd`.
    pub fn crosses_budget(&mut self, state: &crate::sdk::SessionState) -> bool {
        let (Some(limit), Some(cost)) = (self.budget, state.cost_usd) else {
            return false;
        };
        let start = *self.cost_at_start.get_or_insert(cost);
        if self.totals.budget_exceeded || cost - start < limit {
            return false;
        }
        self.totals.budget_exceeded = true;
        self.totals.errors.push(format!(
            "Reached the maximum budget (${limit}): this run cost ${:.4}",
            cost - start
        ));
        true
    }

    /// New totals for the next turn (protocol drivers report each turn on its own); a
    /// spent budget stays spent.
    pub fn reset_totals(&mut self) {
        let spent = self.totals.budget_exceeded;
        self.totals = RunTotals::new();
        self.totals.budget_exceeded = spent;
    }

    /// Moves the structured answer of the submission that just ended into the totals.
    pub fn take_structured(&mut self) {
        if let Some(slot) = &self.structured {
            self.totals.structured = match slot.take() {
                Some(value) => output::Structured::Given(value),
                None => output::Structured::Missing,
            };
        }
    }

    pub fn print(&mut self, line: &str) {
        if !self.closed && !print_line(line) {
            self.closed = true;
        }
    }

    pub fn emit(&mut self, value: Value) {
        match self.format {
            OutputFormat::StreamJson => self.print(&value.to_string()),
            OutputFormat::Json if self.verbose_json => self.collected.push(value),
            _ => {}
        }
    }

    pub fn fail_early(&mut self, message: &str, started: Instant) -> u8 {
        self.totals.errors.push(message.to_string());
        match self.format {
            OutputFormat::Text => {
                eprintln!("Error: {message}");
                EXIT_ERROR
            }
            _ => {
                let error = TurnError::new(ErrorKind::Config, message);
                self.finish(&TurnEnd::Error(error), "", started.elapsed())
            }
        }
    }

    /// Whether `--include-partial-messages` stream events are written.
    fn streams(&self) -> bool {
        self.partial && self.format == OutputFormat::StreamJson
    }

    fn stream_event(&mut self, event: Value) {
        let value = output::stream_event(&self.session_id, event);
        self.emit(value);
    }

    /// Opens the message (`message_start`) before its first block, and a new content
    /// block when `block` differs from the open one (closing that one first); returns the
    /// open block's index.
    fn open_block(&mut self, block: StreamBlock) -> usize {
        if !self.message_open {
            self.message_open = true;
            let start = json!({"type": "message_start", "message": {
                "id": format!("msg_{}", uuid::Uuid::new_v4().simple()),
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            }});
            self.stream_event(start);
        }
        if let Some((index, open)) = &self.block_index
            && *open == block
        {
            return *index;
        }
        self.close_block();
        let index = self.next_block;
        self.next_block += 1;
        let content_block = match &block {
            StreamBlock::Text => json!({"type": "text", "text": ""}),
            StreamBlock::Thinking => json!({"type": "thinking", "thinking": ""}),
            StreamBlock::Tool { id, name } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": {}})
            }
        };
        self.block_index = Some((index, block));
        self.stream_event(
            json!({"type": "content_block_start", "index": index, "content_block": content_block}),
        );
        index
    }

    fn close_block(&mut self) {
        if let Some((index, _)) = self.block_index.take() {
            self.stream_event(json!({"type": "content_block_stop", "index": index}));
        }
    }

    /// A streamed piece as raw-API-like `stream_event`s.
    fn delta(&mut self, block: StreamBlock, delta: Value) {
        if !self.streams() {
            return;
        }
        let index = self.open_block(block);
        self.stream_event(json!({"type": "content_block_delta", "index": index, "delta": delta}));
    }

    /// Closes the streamed message before its committed form is written: the open block's
    /// `content_block_stop`, `message_delta` (stop reason, usage) and `message_stop`.
    fn end_message(&mut self, stop_reason: Option<&str>, usage: Option<&crate::core::Usage>) {
        if self.streams() && self.message_open {
            self.close_block();
            let output_tokens = usage.map(|u| u.output_tokens).unwrap_or_default();
            self.stream_event(json!({
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                "usage": {"output_tokens": output_tokens},
            }));
            self.stream_event(json!({"type": "message_stop"}));
        }
        self.message_open = false;
        self.block_index = None;
        self.next_block = 0;
    }

    pub fn on_event(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::TextDelta(text) => self.delta(
                StreamBlock::Text,
                json!({"type": "text_delta", "text": text}),
            ),
            SessionEvent::ThinkingDelta(thinking) => self.delta(
                StreamBlock::Thinking,
                json!({"type": "thinking_delta", "thinking": thinking}),
            ),
            SessionEvent::ToolUseStreaming { id, name } if self.streams() => {
                self.open_block(StreamBlock::Tool { id, name });
            }
            SessionEvent::ToolInputDelta { id, partial_json } => {
                self.tool_input_delta(id, partial_json)
            }
            SessionEvent::AttemptDiscarded => {
                // A retry streams the message again from its start.
                self.message_open = false;
                self.block_index = None;
                self.next_block = 0;
            }
            SessionEvent::AssistantMessage {
                message,
                stop_reason,
                model,
            } => {
                self.end_message(stop_reason.as_deref(), message.usage.as_ref());
                let value = output::assistant_message(
                    &self.session_id,
                    &message,
                    &model,
                    stop_reason.as_deref(),
                );
                self.emit(value);
            }
            SessionEvent::ToolResults(message) => {
                let value = output::user_message(&self.session_id, &message);
                self.emit(value);
            }
            SessionEvent::Subagent {
                parent_tool_use_id,
                event,
                ..
            } => self.subagent_event(parent_tool_use_id, *event),
            SessionEvent::PermissionDenied {
                tool_use_id,
                tool_name,
                input,
                ..
            } => self.record_denial(tool_use_id, tool_name, input),
            SessionEvent::PermissionRequest(mut request) => {
                // Print mode cannot ask; the session denies before asking, so this is a
                // safety net.
                request.respond(crate::session::PermissionAnswer::Deny(None));
            }
            SessionEvent::Usage { api_duration, .. } => {
                self.totals.api_duration += api_duration;
            }
            SessionEvent::State(state) => {
                self.model = state.model.clone();
                self.totals.set_usage(&state);
            }
            SessionEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                error,
            } => self.retrying(attempt, max_attempts, delay, &error),
            SessionEvent::Notice(n) | SessionEvent::Warning(n) => eprintln!("robota: {n}"),
            SessionEvent::Compacted {
                trigger,
                reason,
                stages,
                cut_results,
                pre_tokens,
                post_tokens,
                ..
            } => {
                let meta = output::CompactMetadata {
                    trigger: trigger.as_str(),
                    reason: reason.as_str(),
                    pre_tokens,
                    post_tokens,
                    stages,
                    cut_results,
                };
                let value = output::compact_boundary_message(&self.session_id, meta);
                self.emit(value);
            }
            SessionEvent::HookStarted {
                hook_id,
                hook_name,
                event,
                ..
            } if self.hook_events || event == HookEvent::SessionStart => {
                let value = hook_started_message(&self.session_id, &hook_id, &hook_name, event);
                self.emit(value);
            }
            SessionEvent::HookFinished(record)
                if self.hook_events || record.event == HookEvent::SessionStart =>
            {
                let value = hook_response_message(&self.session_id, &record);
                self.emit(value);
            }
            _ => {}
        }
    }

    /// A piece of the open tool call's input, streamed as `input_json_delta`.
    fn tool_input_delta(&mut self, id: String, partial_json: String) {
        if let Some((_, StreamBlock::Tool { id: open, name })) = &self.block_index
            && *open == id
        {
            let block = StreamBlock::Tool {
                id,
                name: name.clone(),
            };
            self.delta(
                block,
                json!({"type": "input_json_delta", "partial_json": partial_json}),
            );
        }
    }

    /// A subagent's messages, as Claude Code streams them: tagged with the Agent call
    /// that runs it.
    fn subagent_event(&mut self, parent_tool_use_id: String, event: SessionEvent) {
        let mut value = match event {
            SessionEvent::AssistantMessage {
                message,
                stop_reason,
                model,
            } => output::assistant_message(
                &self.session_id,
                &message,
                &model,
                stop_reason.as_deref(),
            ),
            SessionEvent::ToolResults(message) => output::user_message(&self.session_id, &message),
            SessionEvent::PermissionDenied {
                tool_use_id,
                tool_name,
                input,
                ..
            } => {
                self.record_denial(tool_use_id, tool_name, input);
                return;
            }
            _ => return,
        };
        value["parent_tool_use_id"] = json!(parent_tool_use_id);
        self.emit(value);
    }

    /// A call the permissions refused, for the result's `permission_denials`.
    fn record_denial(&mut self, tool_use_id: String, tool_name: String, input: Value) {
        self.totals.permission_denials.push(json!({
            "tool_name": tool_name,
            "tool_use_id": tool_use_id,
            "tool_input": input,
        }));
    }

    /// A provider call that failed and is tried again: one stderr line in text mode, a
    /// `system/api_retry` message in the streams.
    fn retrying(&mut self, attempt: u32, max_attempts: u32, delay: Duration, error: &str) {
        if self.format == OutputFormat::Text {
            eprintln!(
                "robota: {error} — retrying in {:.1} s (attempt {attempt} of {max_attempts})",
                delay.as_secs_f64()
            );
        }
        let value = output::retry_message(&self.session_id, attempt, max_attempts, delay, error);
        self.emit(value);
    }

    pub fn finish(&mut self, end: &TurnEnd, result: &str, duration: Duration) -> u8 {
        let code = match end {
            _ if self.totals.budget_exceeded => EXIT_ERROR,
            TurnEnd::Success if self.totals.structured == output::Structured::Missing => {
                self.totals
                    .errors
                    .push("the model ended without a valid StructuredOutput call".to_string());
                EXIT_ERROR
            }
            TurnEnd::Success => EXIT_OK,
            TurnEnd::Interrupted => EXIT_INTERRUPTED,
            _ => EXIT_ERROR,
        };
        let value = output::result_message(&self.session_id, end, result, duration, &self.totals);
        match self.format {
            OutputFormat::Text => {
                if !result.is_empty() {
                    self.print(result);
                }
                for e in &self.totals.errors {
                    eprintln!("Error: {e}");
                }
            }
            OutputFormat::Json if self.verbose_json => {
                self.collected.push(value);
                let all = Value::Array(std::mem::take(&mut self.collected));
                self.print(&all.to_string());
            }
            OutputFormat::Json | OutputFormat::StreamJson => self.print(&value.to_string()),
        }
        code
    }
}

/// The kind of content block being streamed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum StreamBlock {
    Text,
    Thinking,
    Tool { id: String, name: String },
}

/// `system/hook_started`, as Claude Code's stream-json emits it.
fn hook_started_message(
    session_id: &str,
    hook_id: &str,
    hook_name: &str,
    event: HookEvent,
) -> Value {
    json!({
        "type": "system",
        "subtype": "hook_started",
        "uuid": uuid::Uuid::new_v4().to_string(),
        "session_id": session_id,
        "hook_id": hook_id,
        "hook_name": hook_name,
        "hook_event": event.as_str(),
    })
}

/// `system/hook_response`: output, exit code and outcome (`success`, `error`, `cancelled`).
fn hook_response_message(session_id: &str, record: &HookRunRecord) -> Value {
    use crate::core::hooks::RunOutcome;
    let outcome = match record.outcome {
        RunOutcome::Success | RunOutcome::Blocked => "success",
        RunOutcome::Error | RunOutcome::TimedOut => "error",
        RunOutcome::Cancelled => "cancelled",
    };
    json!({
        "type": "system",
        "subtype": "hook_response",
        "uuid": uuid::Uuid::new_v4().to_string(),
        "session_id": session_id,
        "hook_id": record.hook_id,
        "hook_name": record.hook_name,
        "hook_event": record.event.as_str(),
        "output": format!("{}{}", record.stdout, record.stderr),
        "stdout": record.stdout,
        "stderr": record.stderr,
        "exit_code": record.exit_code,
        "outcome": outcome,
        "duration_ms": record.duration.as_millis() as u64,
    })
}

/// Writes a line to stdout; `false` once nobody reads it (a closed pipe), which ends the
/// run rather than panicking.
fn print_line(line: &str) -> bool {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).is_ok()
}

/// `system/init`'s `sandbox` field (robota's own; Claude Code has none): whether Bash
/// commands run in the sandbox in the session's mode, and why not when they cannot.
fn sandbox_status(policy: &crate::core::permission::PermissionPolicy) -> Value {
    let support = policy
        .sandbox
        .settings
        .enabled
        .ne(&Some(false))
        .then(crate::tools::sandbox::support);
    json!({
        "enabled": policy.sandbox.active_in(policy.mode),
        "available": policy.sandbox.available,
        "network": policy.sandbox.settings.network_allowed(),
        "allowedDomains": policy.sandbox.settings.proxied_domains(),
        "backend": support.map(|s| s.backend.name()),
        "unavailableReason": support.and_then(|s| s.missing.clone()),
        // How an ordinary Bash call is confined in this mode and in each: "sandbox",
        // "filesystem" (deny rules and protected files only) or "rules-only" (the
        // fallback: the command analyzer alone).
        "confinement": policy.mode_confinement().name(),
        "confinementByMode": policy
            .confinement_by_mode()
            .into_iter()
            .map(|(mode, c)| (mode.as_str().to_string(), json!(c.name())))
            .collect::<serde_json::Map<_, _>>(),
    })
}
