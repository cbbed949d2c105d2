//! The stream of one print-mode run as output lines: turns `SessionEvent`s into Claude
//! Code's message shapes (through `output`), keeps the run's totals, and notices when
//! nobody reads stdout any more. Shared by headless print mode and the Agent SDK driver.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::core::hooks::{HookEvent, HookRunRecord};
use tokio::sync::mpsc;

use crate::sdk::commands::{self, CommandScope};
use crate::sdk::{ErrorKind, InteractiveSession, SessionEvent, SessionOptions, TurnEnd, TurnError};

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
    block_index: Option<(usize, &'static str)>,
    next_block: usize,
    /// Stdout was closed by its reader.
    pub closed: bool,
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
        let mcp_servers: Vec<Value> = match &assembled.mcp {
            Some(mcp) => {
                mcp.wait_settled(crate::sdk::mcp::startup_wait()).await;
                mcp.reports()
                    .iter()
                    .map(|r| json!({"name": r.name, "status": r.status.as_str()}))
                    .collect()
            }
            None => Vec::new(),
        };
        let session_id = assembled.session.id().to_string();
        self.session_id = session_id.clone();
        let commands: Vec<&str> = commands::all()
            .filter(|c| c.scope == CommandScope::Session)
            .map(|c| c.name)
            .collect();
        let mut init = output::init_message(
            &session_id,
            &assembled.session.config().cwd.to_string_lossy(),
            &assembled.model,
            &assembled.session.tools().names(),
            assembled.session.mode().as_str(),
            &assembled.api_key_source,
            &commands,
        );
        init["mcp_servers"] = Value::Array(mcp_servers);
        self.emit(init);
        let mut session = InteractiveSession::start_with(
            assembled.session,
            SessionOptions {
                endpoint: assembled.endpoint,
                mcp: assembled.mcp,
            },
        );
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
            closed: false,
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

    /// A text/thinking delta as a raw-API-like `stream_event`.
    fn delta(&mut self, kind: &'static str, text: String) {
        if !self.partial || self.format != OutputFormat::StreamJson {
            return;
        }
        let index = match self.block_index {
            Some((i, k)) if k == kind => i,
            _ => {
                let i = self.next_block;
                self.next_block += 1;
                self.block_index = Some((i, kind));
                let block = if kind == "text_delta" {
                    json!({"type": "text", "text": ""})
                } else {
                    json!({"type": "thinking", "thinking": ""})
                };
                let start =
                    json!({"type": "content_block_start", "index": i, "content_block": block});
                self.emit(output::stream_event(&self.session_id, start));
                i
            }
        };
        let field = if kind == "text_delta" {
            "text"
        } else {
            "thinking"
        };
        let event = json!({"type": "content_block_delta", "index": index, "delta": {"type": kind, field: text}});
        self.emit(output::stream_event(&self.session_id, event));
    }

    pub fn on_event(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::TextDelta(t) => self.delta("text_delta", t),
            SessionEvent::ThinkingDelta(t) => self.delta("thinking_delta", t),
            SessionEvent::AttemptDiscarded => {
                self.block_index = None;
            }
            SessionEvent::AssistantMessage {
                message,
                stop_reason,
                model,
            } => {
                self.block_index = None;
                self.next_block = 0;
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
            SessionEvent::PermissionDenied {
                tool_use_id,
                tool_name,
                input,
                ..
            } => self.totals.permission_denials.push(json!({
                "tool_name": tool_name,
                "tool_use_id": tool_use_id,
                "tool_input": input,
            })),
            SessionEvent::PermissionRequest(mut request) => {
                // Print mode cannot ask; the session denies before asking, so this is a
                // safety net.
                request.respond(crate::session::PermissionAnswer::Deny(None));
            }
            SessionEvent::Usage { api_duration, .. } => {
                self.totals.api_duration += api_duration;
            }
            SessionEvent::State(state) => self.totals.set_usage(&state),
            SessionEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                error,
            } => {
                if self.format == OutputFormat::Text {
                    eprintln!(
                        "robota: {error} — retrying in {:.1} s (attempt {attempt} of {max_attempts})",
                        delay.as_secs_f64()
                    );
                }
                let value =
                    output::retry_message(&self.session_id, attempt, max_attempts, delay, &error);
                self.emit(value);
            }
            SessionEvent::Notice(n) | SessionEvent::Warning(n) => eprintln!("robota: {n}"),
            SessionEvent::HookStarted {
                hook_id,
                hook_name,
                event,
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

    pub fn finish(&mut self, end: &TurnEnd, result: &str, duration: Duration) -> u8 {
        let code = match end {
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
