//! Headless print mode (`robota -p`): one run of an `InteractiveSession` whose events are
//! printed as the final text, one JSON result, or NDJSON messages. Nothing can prompt: a
//! call that needs approval is denied and listed in `permission_denials`. SIGINT, SIGTERM
//! and SIGHUP interrupt the turn cleanly (log and result still written) and exit 130, 143
//! and 129. Hook runs appear as `system/hook_started` / `system/hook_response` lines
//! (SessionStart always, the rest with `--include-hook-events`); hook notices go to stderr;
//! SessionEnd hooks run after the result is printed.

use std::io::{IsTerminal, Read, Write};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::core::hooks::{HookEvent, HookRunRecord};
use crate::sdk::commands::{self, CommandScope};
use crate::sdk::{ErrorKind, InteractiveSession, SessionEvent, SessionOptions, TurnEnd, TurnError};

use super::args::{Args, InputFormat, OutputFormat};
use super::assemble::assemble;
use super::output::{self, RunTotals};
use super::stop_signals::StopSignals;

/// Piped stdin is read up to this size, as in Claude Code.
const STDIN_CAP: u64 = 10 * 1024 * 1024;

pub const EXIT_OK: u8 = 0;
pub const EXIT_ERROR: u8 = 1;
pub const EXIT_INTERRUPTED: u8 = 130;

/// Runs print mode to completion and returns the process exit code.
pub async fn run(args: Args) -> u8 {
    let started = Instant::now();
    // Registered now, before any output, so a SIGINT, SIGTERM or SIGHUP at any point ends
    // the turn cleanly rather than killing the process.
    let mut signals = StopSignals::install();
    if args.output_format == OutputFormat::StreamJson && !args.verbose {
        eprintln!("Error: When using --print, --output-format=stream-json requires --verbose");
        return EXIT_ERROR;
    }
    if args.input_format == InputFormat::StreamJson
        && args.output_format != OutputFormat::StreamJson
    {
        eprintln!("Error: --input-format=stream-json requires --output-format=stream-json");
        return EXIT_ERROR;
    }
    let mut printer = Printer::new(&args);
    let prompts = match read_prompts(&args) {
        Ok(p) => p,
        Err(message) => return printer.fail_early(&message, started),
    };
    let assembled = match assemble(&args, false) {
        Ok(a) => a,
        Err(message) => return printer.fail_early(&message, started),
    };
    for warning in &assembled.warnings {
        eprintln!("robota: warning: {warning}");
    }
    if let Some(notice) = &assembled.notice
        && (args.verbose || std::io::stderr().is_terminal())
    {
        eprintln!("robota: {notice}");
    }
    let session_id = assembled.session.id().to_string();
    printer.session_id = session_id.clone();
    let commands: Vec<&str> = commands::all()
        .filter(|c| c.scope == CommandScope::Session)
        .map(|c| c.name)
        .collect();
    printer.emit(output::init_message(
        &session_id,
        &assembled.session.config().cwd.to_string_lossy(),
        &assembled.model,
        &assembled.session.tools().names(),
        assembled.session.mode().as_str(),
        &assembled.api_key_source,
        &commands,
    ));

    let mut session = InteractiveSession::start_with(
        assembled.session,
        SessionOptions {
            endpoint: assembled.endpoint.clone(),
        },
    );
    let Some(mut events) = session.events() else {
        return EXIT_ERROR;
    };
    let mut end = TurnEnd::Success;
    let mut result = String::new();
    let mut prompts = prompts.into_iter();
    // The exit code of the stop signal that interrupted the run, if one did.
    let mut stopped_by: Option<u8> = None;
    let mut interrupted = false;
    let mut current = prompts.next().map(|p| session.submit(p));
    while let Some(running) = current {
        let event = tokio::select! {
            event = events.recv() => event,
            code = signals.recv(), if !interrupted => {
                session.abort();
                interrupted = true;
                stopped_by = Some(code);
                continue;
            }
        };
        let Some(event) = event else { break };
        match event {
            SessionEvent::SubmissionEnded { id, outcome } if id == running => {
                printer.totals.num_turns += outcome.rounds;
                if let Some(error) = end_error(&outcome.end, args.max_turns) {
                    printer.totals.errors.push(error);
                }
                let go_on = outcome.end.is_success() && !printer.closed;
                end = outcome.end;
                result = outcome.result;
                current = if go_on {
                    prompts.next().map(|p| session.submit(p))
                } else {
                    None
                };
            }
            other => printer.on_event(other),
        }
        if printer.closed && !interrupted {
            // Nobody reads the output any more: end the turn as an interrupt would.
            session.abort();
            interrupted = true;
        }
    }
    let code = match (printer.finish(&end, &result, started.elapsed()), stopped_by) {
        (EXIT_INTERRUPTED, Some(signal_code)) => signal_code,
        (code, _) => code,
    };
    // SessionEnd hooks run now; what they report can only go to stderr.
    session.close().await;
    while let Ok(event) = events.try_recv() {
        if let SessionEvent::Warning(n) | SessionEvent::Notice(n) = event {
            eprintln!("robota: {n}");
        }
    }
    code
}

/// The line `errors` carries for a submission that did not succeed.
fn end_error(end: &TurnEnd, max_turns: Option<u32>) -> Option<String> {
    Some(match end {
        TurnEnd::Success => return None,
        TurnEnd::Error(error) => error.line(),
        TurnEnd::Interrupted => "Interrupted by user".to_string(),
        TurnEnd::ContextFull => {
            "The context window is nearly full; run /compact or start a new session.".to_string()
        }
        TurnEnd::MaxTurns => format!(
            "Reached the maximum number of turns ({})",
            max_turns.unwrap_or_default()
        ),
    })
}

/// The prompts of this run: the argument plus piped stdin, or one per stream-json line.
fn read_prompts(args: &Args) -> Result<Vec<String>, String> {
    let stdin = std::io::stdin();
    let piped = !stdin.is_terminal();
    let mut input = String::new();
    if piped {
        let mut bytes = Vec::new();
        stdin
            .lock()
            .take(STDIN_CAP)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read stdin: {e}"))?;
        input = String::from_utf8_lossy(&bytes).into_owned();
    }
    if args.input_format == InputFormat::StreamJson {
        let mut prompts: Vec<String> = args.prompt.iter().cloned().collect();
        for (n, line) in input
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let value: Value = serde_json::from_str(line)
                .map_err(|e| format!("stdin line {}: not JSON: {e}", n + 1))?;
            prompts.push(user_text(&value).ok_or_else(|| {
                format!(
                    "stdin line {}: expected {{\"type\":\"user\",\"message\":{{…}}}}",
                    n + 1
                )
            })?);
        }
        if prompts.is_empty() {
            return Err("Input must be provided through stdin as stream-json user messages".into());
        }
        return Ok(prompts);
    }
    let prompt = match (args.prompt.as_deref(), input.trim().is_empty()) {
        (Some(p), true) => p.to_string(),
        (Some(p), false) => format!("{}\n\n{p}", input.trim_end()),
        (None, false) => input,
        (None, true) => String::new(),
    };
    if prompt.trim().is_empty() {
        return Err(
            "Input must be provided either through stdin or as a prompt argument when using --print"
                .into(),
        );
    }
    Ok(vec![prompt])
}

/// The text of a stream-json user message.
fn user_text(value: &Value) -> Option<String> {
    if value.get("type")?.as_str()? != "user" {
        return None;
    }
    let content = value.get("message")?.get("content")?;
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => Some(
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// Turns events into output lines and keeps the totals.
struct Printer {
    format: OutputFormat,
    verbose_json: bool,
    partial: bool,
    hook_events: bool,
    session_id: String,
    totals: RunTotals,
    /// All messages, for `json` + `--verbose` (printed as one array).
    collected: Vec<Value>,
    block_index: Option<(usize, &'static str)>,
    next_block: usize,
    /// Stdout was closed by its reader.
    closed: bool,
}

impl Printer {
    fn new(args: &Args) -> Self {
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

    fn print(&mut self, line: &str) {
        if !self.closed && !print_line(line) {
            self.closed = true;
        }
    }

    fn emit(&mut self, value: Value) {
        match self.format {
            OutputFormat::StreamJson => self.print(&value.to_string()),
            OutputFormat::Json if self.verbose_json => self.collected.push(value),
            _ => {}
        }
    }

    fn fail_early(&mut self, message: &str, started: Instant) -> u8 {
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

    fn on_event(&mut self, event: SessionEvent) {
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

    fn finish(&mut self, end: &TurnEnd, result: &str, duration: Duration) -> u8 {
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
