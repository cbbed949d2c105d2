//! Headless print mode (`robota -p`): one run of an `InteractiveSession` whose events are
//! printed as the final text, one JSON result, or NDJSON messages. Nothing can prompt: a
//! call that needs approval is denied and listed in `permission_denials`. SIGINT, SIGTERM
//! and SIGHUP interrupt the turn cleanly (log and result still written) and exit 130, 143
//! and 129. Hook runs appear as `system/hook_started` / `system/hook_response` lines
//! (SessionStart always, the rest with `--include-hook-events`); hook notices go to stderr;
//! SessionEnd hooks run after the result is printed. A turn that runs past its wall deadline
//! (`--max-turn-seconds`, setting `maxTurnSeconds`) is stopped and ends the run with an
//! error result naming what it waited on (the provider, a hook, a tool, an MCP server) and
//! exit 124; stream-json output carries keepalive lines meanwhile (`turn_watch`).

use std::io::{IsTerminal, Read};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::core::image::checked_base64_image;
use crate::core::message::ImageSource;
use crate::sdk::{SessionEvent, TurnEnd};

use super::args::{Args, InputFormat, OutputFormat};
use super::assemble::assemble;
use super::output;
use super::printer::Printer;
use super::stop_signals::StopSignals;
use super::turn_watch::{self, ABORT_GRACE, CLOSE_GRACE, TurnWatch};

/// Piped stdin is read up to this size, as in Claude Code.
const STDIN_CAP: u64 = 10 * 1024 * 1024;

/// The exit status of a run that succeeded.
pub const EXIT_OK: u8 = 0;
/// The exit status of a run that failed.
pub const EXIT_ERROR: u8 = 1;
/// The exit status of a run stopped by Ctrl+C (as a shell reports SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;
/// The exit status of a run whose turn ran past its deadline (`--max-turn-seconds`), as
/// `timeout(1)` reports one.
pub const EXIT_DEADLINE: u8 = 124;

/// Runs print mode to completion and returns the process exit code.
pub async fn run(args: Args, providers: &'static dyn crate::ProviderFactory) -> u8 {
    let started = Instant::now();
    // Registered now, before any output, so a SIGINT, SIGTERM or SIGHUP at any point ends
    // the turn cleanly rather than killing the process.
    let signals = StopSignals::install();
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
    if args.permission_prompt_tool.is_some() {
        eprintln!(
            "Error: --permission-prompt-tool needs --input-format stream-json --output-format stream-json"
        );
        return EXIT_ERROR;
    }
    let mut printer = Printer::new(&args);
    let prompts = match read_prompts(&args) {
        Ok(p) => p,
        Err(e) => return printer.fail_early(&e.to_string(), started),
    };
    let assembled = match assemble(&args, false, providers) {
        Ok(a) => a,
        Err(e) => return printer.fail_early(&e.to_string(), started),
    };
    for warning in &assembled.warnings {
        eprintln!("robota: warning: {warning}");
    }
    if let Some(notice) = &assembled.notice
        && (args.verbose || std::io::stderr().is_terminal())
    {
        eprintln!("robota: {notice}");
    }
    let limits = TurnLimits::new(&args, &assembled);
    let mut watch = TurnWatch::new(&assembled.endpoint);
    let Some((session, events)) = printer.start_session(assembled).await else {
        return EXIT_ERROR;
    };
    let mut run = Run {
        args: &args,
        session,
        events,
        printer,
        signals,
        limits,
    };
    let ended = run.prompts(prompts, &mut watch).await;
    let Run {
        session,
        mut events,
        mut printer,
        ..
    } = run;
    let code = match (
        printer.finish(&ended.end, &ended.result, started.elapsed()),
        ended.stopped_by,
    ) {
        _ if ended.hung => EXIT_DEADLINE,
        (EXIT_INTERRUPTED, Some(signal_code)) => signal_code,
        (code, _) => code,
    };
    // SessionEnd hooks run now; what they report can only go to stderr. After a deadline
    // the session may still be stuck in what hung: it gets a moment, then the process ends
    // (and with it every process group it started).
    if ended.hung {
        let _ = tokio::time::timeout(CLOSE_GRACE, session.close()).await;
    } else {
        session.close().await;
    }
    while let Ok(event) = events.try_recv() {
        if let SessionEvent::Warning(n) | SessionEvent::Notice(n) = event {
            eprintln!("robota: {n}");
        }
    }
    code
}

/// The wall deadline of each turn and the interval of keepalive lines.
struct TurnLimits {
    /// `--max-turn-seconds`, else the setting `maxTurnSeconds`; `None` (or 0): none.
    deadline: Option<Duration>,
    /// Keepalive lines are written (stream-json output) this often.
    keepalive: Option<Duration>,
}

impl TurnLimits {
    fn new(args: &Args, assembled: &super::assemble::Assembled) -> Self {
        TurnLimits {
            deadline: turn_watch::turn_deadline(args, assembled),
            keepalive: (args.output_format == OutputFormat::StreamJson)
                .then(turn_watch::keepalive_interval),
        }
    }
}

/// How the run's prompts ended.
struct Ended {
    end: TurnEnd,
    result: String,
    /// The exit code of the stop signal that interrupted the run, if one did.
    stopped_by: Option<u8>,
    /// A turn ran past its deadline.
    hung: bool,
}

/// A started print-mode run: its session, events, output and signals.
struct Run<'a> {
    args: &'a Args,
    session: crate::sdk::InteractiveSession,
    events: tokio::sync::mpsc::UnboundedReceiver<SessionEvent>,
    printer: Printer,
    signals: StopSignals,
    limits: TurnLimits,
}

impl Run<'_> {
    /// Runs the prompts one after the other until one does not succeed.
    async fn prompts(&mut self, prompts: Vec<String>, watch: &mut TurnWatch) -> Ended {
        let mut ended = Ended {
            end: TurnEnd::Success,
            result: String::new(),
            stopped_by: None,
            hung: false,
        };
        let mut interrupted = false;
        let mut prompts = prompts.into_iter();
        let mut current = prompts.next().map(|p| self.submit(p));
        let never = || Instant::now() + Duration::from_secs(86_400 * 365);
        let every = self.limits.keepalive.unwrap_or(Duration::from_secs(3_600));
        let mut ticker = tokio::time::interval(every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        ticker.tick().await;
        // After the deadline: when to stop waiting for the aborted turn to wind down.
        let mut give_up: Option<Instant> = None;
        while let Some((running, deadline)) = current {
            let event = tokio::select! {
                event = self.events.recv() => event,
                code = self.signals.recv(), if !interrupted => {
                    self.session.abort();
                    interrupted = true;
                    ended.stopped_by = Some(code);
                    continue;
                }
                _ = tokio::time::sleep_until(deadline.unwrap_or_else(never).into()),
                    if deadline.is_some() && !ended.hung => {
                    self.passed_deadline(watch, &mut ended);
                    self.session.abort();
                    interrupted = true;
                    // A turn that never started (the session is busy elsewhere) will not
                    // wind down: the run ends at once.
                    let grace = if watch.in_turn() { ABORT_GRACE } else { Duration::ZERO };
                    give_up = Some(Instant::now() + grace);
                    continue;
                }
                _ = tokio::time::sleep_until(give_up.unwrap_or_else(never).into()),
                    if give_up.is_some() => break,
                _ = ticker.tick(), if self.limits.keepalive.is_some() => {
                    if let Some(every) = self.limits.keepalive {
                        for line in watch.keepalive_lines(&self.printer.session_id, every) {
                            self.printer.emit(line);
                        }
                    }
                    continue;
                }
            };
            let Some(event) = event else { break };
            watch.observe(&event);
            current = Some((running, deadline));
            match event {
                SessionEvent::State(state) => {
                    if self.printer.crosses_budget(&state) {
                        self.session.abort();
                    }
                    self.printer.on_event(SessionEvent::State(state));
                }
                SessionEvent::SubmissionEnded { id, mut outcome } if id == running => {
                    (outcome.end, outcome.result) =
                        output::blocked_prompt_as_result(outcome.end, outcome.result);
                    let go_on = self.ended(outcome, &mut ended);
                    current = match prompts.next() {
                        Some(prompt) if go_on => Some(self.submit(prompt)),
                        _ => None,
                    };
                }
                other => self.printer.on_event(other),
            }
            if self.printer.closed && !interrupted {
                // Nobody reads the output any more: end the turn as an interrupt would.
                self.session.abort();
                interrupted = true;
            }
        }
        ended
    }

    /// Submits a prompt; its deadline, if it has one.
    fn submit(&self, prompt: String) -> (crate::sdk::SubmissionId, Option<Instant>) {
        let deadline = self.limits.deadline.map(|d| Instant::now() + d);
        (self.session.submit(prompt), deadline)
    }

    /// The deadline passed: the turn ends with an error naming what it waited on.
    fn passed_deadline(&mut self, watch: &TurnWatch, ended: &mut Ended) {
        let limit = self.limits.deadline.unwrap_or_default();
        let error = watch.deadline_error(limit);
        self.printer.totals.errors.push(error.line());
        ended.end = TurnEnd::Error(error);
        ended.hung = true;
    }

    /// Takes in the outcome of a prompt; whether the next one runs.
    fn ended(&mut self, outcome: crate::sdk::Outcome, ended: &mut Ended) -> bool {
        self.printer.take_structured();
        self.printer.totals.num_turns += outcome.rounds;
        ended.result = outcome.result;
        if ended.hung {
            // The aborted turn wound down; the deadline error stands.
            return false;
        }
        if let Some(error) = end_error(&outcome.end, self.args.max_turns)
            && !self.printer.totals.budget_exceeded
        {
            self.printer.totals.errors.push(error);
        }
        let go_on = outcome.end.is_success()
            && !self.printer.closed
            && !self.printer.totals.budget_exceeded;
        ended.end = outcome.end;
        go_on
    }
}

/// The line `errors` carries for a submission that did not succeed.
pub(super) fn end_error(end: &TurnEnd, max_turns: Option<u32>) -> Option<String> {
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

/// Why the input of a run cannot be used.
#[derive(Debug, thiserror::Error)]
pub(super) enum InputError {
    #[error("cannot read stdin: {0}")]
    Stdin(#[source] std::io::Error),
    #[error("stdin line {line}: not JSON: {source}")]
    NotJson {
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("stdin line {line}: expected {{\"type\":\"user\",\"message\":{{…}}}}")]
    NotUserMessage { line: usize },
    #[error("Input must be provided through stdin as stream-json user messages")]
    NoStreamInput,
    #[error(
        "Input must be provided either through stdin or as a prompt argument when using --print"
    )]
    NoInput,
    /// Image `n` (1-based) of a message has a source of the wrong shape.
    #[error(
        "image {n}: its source is not {{\"type\":\"base64\",\"media_type\",\"data\"}}: {source}"
    )]
    ImageSource {
        n: usize,
        #[source]
        source: serde_json::Error,
    },
    /// Image `n` (1-based) is not a PNG, JPEG, GIF or WebP image within the size limit.
    #[error("image {n}: {source}")]
    Image {
        n: usize,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The prompts of this run: the argument plus piped stdin, or one per stream-json line.
fn read_prompts(args: &Args) -> Result<Vec<String>, InputError> {
    let stdin = std::io::stdin();
    let piped = !stdin.is_terminal();
    let mut input = String::new();
    if piped {
        let mut bytes = Vec::new();
        stdin
            .lock()
            .take(STDIN_CAP)
            .read_to_end(&mut bytes)
            .map_err(InputError::Stdin)?;
        input = String::from_utf8_lossy(&bytes).into_owned();
    }
    if args.input_format == InputFormat::StreamJson {
        let mut prompts: Vec<String> = args.prompt.iter().cloned().collect();
        for (n, line) in input
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let value: Value =
                serde_json::from_str(line).map_err(|source| InputError::NotJson {
                    line: n + 1,
                    source,
                })?;
            prompts.push(user_text(&value).ok_or(InputError::NotUserMessage { line: n + 1 })?);
        }
        if prompts.is_empty() {
            return Err(InputError::NoStreamInput);
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
        return Err(InputError::NoInput);
    }
    Ok(vec![prompt])
}

/// The text and images of a stream-json user message's content (Claude Agent SDK shape:
/// a string, or `text` and `image` blocks with base64 sources). `Ok(None)` when it is no
/// user message or has nothing to send; `Err` names what is wrong with an image.
pub(super) fn user_prompt(value: &Value) -> Result<Option<(String, Vec<ImageSource>)>, InputError> {
    let Some(text) = user_text(value) else {
        return Ok(None);
    };
    let mut images = Vec::new();
    let blocks = value["message"]["content"].as_array().into_iter().flatten();
    for block in blocks.filter(|b| b["type"] == "image") {
        let n = images.len() + 1;
        let source: ImageSource = serde_json::from_value(block["source"].clone())
            .map_err(|source| InputError::ImageSource { n, source })?;
        images.push(checked_image(n, &source)?);
    }
    if text.trim().is_empty() && images.is_empty() {
        return Ok(None);
    }
    Ok(Some((text, images)))
}

/// Image `n` (1-based) of a prompt, checked: a PNG, JPEG, GIF or WebP within the size
/// limit.
pub(super) fn checked_image(n: usize, source: &ImageSource) -> Result<ImageSource, InputError> {
    checked_base64_image(source).map_err(|e| InputError::Image {
        n,
        source: e.into(),
    })
}

/// The text of a stream-json user message.
pub(super) fn user_text(value: &Value) -> Option<String> {
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
