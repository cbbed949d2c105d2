//! The Claude Agent SDK's protocol (`--input-format stream-json --output-format
//! stream-json`, with or without `-p`): stdin is read line by line while turns run. Each
//! `user` message becomes its own submission (the session's queue keeps them in order)
//! and gets its own `result` when it ends, with that turn's usage and cost.
//! `control_request` lines are answered at any time with a `control_response`:
//! `initialize`, `interrupt`, `set_permission_mode` and `set_model` are handled, any other
//! subtype gets an error response. The session is put together once the first line is read,
//! so the hooks the program registers in its `initialize` are in it from the start: each is
//! a `callback` hook asked of the program as a `hook_callback` control request. With
//! `--permission-prompt-tool stdio` a tool call that needs approval is asked of the program
//! as a `can_use_tool` control request (without it, as in print mode, such a call is
//! denied). The program's in-process MCP servers (`"type": "sdk"` in `--mcp-config`) are
//! reached by `mcp_message` control requests carrying each JSON-RPC message, answered with
//! the server's `mcp_response`; their tools are `mcp__<server>__<tool>` like any other
//! server's. The run ends at end of input once every submission has ended; then SessionEnd
//! hooks run. While a turn runs, keepalive lines say what it waits on (Claude Code's
//! `tool_progress` for a long tool, see `turn_watch`), and each turn has the wall deadline
//! of `--max-turn-seconds` (`deadline`).
//!
//! The driver's loop and its state live here; `submissions` turns input lines into
//! submissions and session events into output, `control` answers the program's control
//! requests, `questions` asks the program (tool permissions, hook callbacks, MCP messages)
//! and reads its answers, `deadline` stops a turn past its deadline, and `bridges` carries the session's hook callbacks and SDK MCP
//! messages to the loop.

mod bridges;
mod control;
mod deadline;
mod questions;
mod submissions;

use std::collections::HashMap;
use std::io::{BufRead, IsTerminal};
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::core::hooks::{HookCallbackError, HookConfig};
use crate::core::permission::PermissionMode;
use crate::sdk::commands::{Submission, SubmissionId};
use crate::sdk::{InteractiveSession, PermissionRequest, SessionEvent, TurnEnd};
use crate::tools::mcp::{SdkMcpError, SdkMcpRouter};

use super::super::args::Args;
use super::super::assemble::{AssembleError, assemble_in, options};
use super::super::headless::{EXIT_DEADLINE, EXIT_ERROR, EXIT_OK};
use super::super::printer::Printer;
use super::super::turn_watch::{CLOSE_GRACE, TurnWatch, keepalive_interval, turn_deadline};
use crate::sdk::ProjectOptions;
use crate::sdk::assembly::CallbackHooks;
use bridges::{CallbackBridge, Early, McpBridge, settle_servers};
use control::{initialize_agents, initialize_hooks, is_initialize};
use deadline::TurnDeadline;

/// Who is owed what when a submission ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owed {
    /// A `user` message: its `result`.
    Result,
    /// A submission the driver made for a control request (`/model`): nothing.
    Nothing,
}

/// What the driver knows besides the printer.
struct Driver {
    session: InteractiveSession,
    printer: Printer,
    args: Args,
    /// Submitted and not yet ended (or dropped).
    pending: HashMap<SubmissionId, (Owed, Submission)>,
    /// The model the run started with (`set_model` without a model goes back to it).
    initial_model: String,
    model: String,
    mode: PermissionMode,
    api_key_source: String,
    last_end: TurnEnd,
    /// Permission questions sent as `can_use_tool`, by request id, awaiting the answer.
    questions: HashMap<String, PermissionRequest>,
    /// Hook callbacks sent as `hook_callback`, by request id, awaiting the answer.
    hook_calls: HashMap<String, oneshot::Sender<Result<Value, HookCallbackError>>>,
    /// Messages for the program's MCP servers sent as `mcp_message`, by request id.
    mcp_calls: HashMap<String, oneshot::Sender<Result<Option<Value>, SdkMcpError>>>,
    /// The `initialize` whose hooks went into the session (the first input line) is yet
    /// to be answered; any other `initialize` cannot add hooks.
    hooks_initialize_pending: bool,
    request_ids: bridges::RequestIds,
    input_open: bool,
    /// What the running turn waits on, for the keepalive lines and the deadline's error.
    watch: TurnWatch,
    /// The wall deadline of each turn, when one is set.
    deadline: Option<TurnDeadline>,
    /// A turn stopped at its deadline did not wind down: the run ends.
    stuck: bool,
}

/// Runs the driver until end of input and every submission ended; returns the exit code.
pub async fn run(args: Args, providers: &'static dyn crate::ProviderFactory) -> u8 {
    let mut sigint = crate::stop_signals::interrupt();
    if !args.verbose {
        eprintln!("Error: When using --print, --output-format=stream-json requires --verbose");
        return EXIT_ERROR;
    }
    let ask = match args.permission_prompt_tool.as_deref() {
        None => false,
        Some("stdio") => true,
        Some(other) => {
            eprintln!(
                "Error: --permission-prompt-tool {other}: robota asks only over stdio (--permission-prompt-tool stdio)"
            );
            return EXIT_ERROR;
        }
    };
    let mut printer = Printer::new(&args);
    let mut lines = read_lines();
    // The SDK's first message is its `initialize`; the hooks it registers must be in the
    // session from the start, so the session is put together after reading it.
    let first = lines.recv().await;
    let registered = first
        .as_deref()
        .and_then(initialize_hooks)
        .map(|hooks| HookConfig::from_callbacks(&hooks));
    let (mcp_tx, mut mcp_rx) = mpsc::unbounded_channel();
    let router: Arc<dyn SdkMcpRouter> = Arc::new(McpBridge { asks: mcp_tx });
    let (callback_tx, mut callback_rx) = mpsc::unbounded_channel();
    let mut hook_warnings = Vec::new();
    let assembled = options(&args, false, ask).and_then(|options| {
        let callback_hooks = registered.map(|(config, warnings)| {
            hook_warnings = warnings;
            CallbackHooks {
                config,
                callbacks: Arc::new(CallbackBridge { asks: callback_tx }),
            }
        });
        let options = ProjectOptions {
            sdk_mcp: Some(router),
            callback_hooks,
            program_agents: first.as_deref().and_then(initialize_agents),
            ..options
        };
        let cwd = std::env::current_dir().map_err(AssembleError::WorkingDirectory)?;
        assemble_in(&args, cwd, options, providers)
    });
    let mut assembled = match assembled {
        Ok(a) => a,
        Err(e) => return printer.fail_early(&e.to_string(), std::time::Instant::now()),
    };
    assembled.warnings.extend(hook_warnings);
    for warning in &assembled.warnings {
        eprintln!("robota: warning: {warning}");
    }
    if let Some(notice) = &assembled.notice
        && (args.verbose || std::io::stderr().is_terminal())
    {
        eprintln!("robota: {notice}");
    }
    let mode = assembled.session().mode();
    let model = assembled.model.clone();
    let api_key_source = assembled.api_key_source.clone();
    // The servers get their startup wait here, where the program can answer for its own
    // in-process ones; `start_session` then finds them settled.
    let mut early = Early::default();
    if let Some(mcp) = assembled.mcp().cloned()
        && first.is_some()
    {
        early = settle_servers(&mcp, &mut printer, &mut lines, &mut mcp_rx).await;
    }
    let watch = TurnWatch::new(&assembled.endpoint);
    let deadline = turn_deadline(&args, &assembled).map(TurnDeadline::new);
    let Some((session, mut events)) = printer.start_session(assembled).await else {
        return EXIT_ERROR;
    };
    let every = keepalive_interval();
    let mut keepalive = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut driver = Driver {
        session,
        printer,
        args,
        pending: HashMap::new(),
        initial_model: model.clone(),
        model,
        mode,
        api_key_source,
        last_end: TurnEnd::Success,
        questions: HashMap::new(),
        hook_calls: HashMap::new(),
        mcp_calls: early.mcp_calls,
        hooks_initialize_pending: first.as_deref().is_some_and(is_initialize),
        request_ids: early.request_ids,
        input_open: true,
        watch,
        deadline,
        stuck: false,
    };
    // A prompt argument goes first, as the first user message.
    if let Some(prompt) = driver.args.prompt.clone() {
        driver.submit(Owed::Result, Submission::parse(&prompt));
    }
    match first {
        Some(line) => driver.on_line(&line),
        None => driver.input_closed(),
    }
    for line in early.lines {
        driver.on_line(&line);
    }
    if early.input_closed {
        driver.input_closed();
    }
    loop {
        if (!driver.input_open && driver.pending.is_empty())
            || driver.printer.closed
            || driver.stuck
        {
            break;
        }
        let alarm = driver.deadline.as_ref().and_then(TurnDeadline::alarm);
        tokio::select! {
            line = lines.recv(), if driver.input_open => match line {
                Some(line) => driver.on_line(&line),
                None => driver.input_closed(),
            },
            event = events.recv() => match event {
                Some(event) => driver.on_event(event),
                None => break,
            },
            Some(call) = callback_rx.recv() => driver.call_back(call),
            Some(ask) = mcp_rx.recv() => driver.ask_mcp(ask),
            Some(_) = async { sigint.as_mut()?.recv().await } => driver.session.abort(),
            _ = keepalive.tick() => driver.keepalive(every),
            _ = sleep_until(alarm), if alarm.is_some() => driver.on_deadline_alarm(),
        }
    }
    driver.finish(events).await
}

impl Driver {
    /// Closes the session (SessionEnd hooks run; their notices go to stderr) and returns the
    /// run's exit code.
    async fn finish(self, mut events: mpsc::UnboundedReceiver<SessionEvent>) -> u8 {
        let code = match (&self.last_end, self.printer.closed) {
            _ if self.stuck => EXIT_DEADLINE,
            (_, true) | (TurnEnd::Error(_), _) => EXIT_ERROR,
            _ => EXIT_OK,
        };
        if self.stuck {
            // The session may still be stuck in what hung: a moment to close, then the
            // process ends (and with it every process group it started).
            let _ = tokio::time::timeout(CLOSE_GRACE, self.session.close()).await;
        } else {
            self.session.close().await;
        }
        while let Ok(event) = events.try_recv() {
            if let SessionEvent::Warning(n) | SessionEvent::Notice(n) = event {
                eprintln!("robota: {n}");
            }
        }
        code
    }
}

/// Sleeps until `at`, or forever when there is nothing to wait for.
async fn sleep_until(at: Option<std::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Reads stdin line by line on its own thread (a blocking read must not hold a runtime
/// worker); the channel closes at end of input. The thread is not joined: at exit it may
/// still wait in a read.
fn read_lines() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    let reader = std::thread::Builder::new()
        .name("stdin-lines".into())
        .spawn(move || {
            for line in std::io::stdin().lock().lines() {
                match line {
                    Ok(line) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        eprintln!("robota: cannot read stdin: {e}");
                        break;
                    }
                }
            }
        });
    if let Err(e) = reader {
        eprintln!("robota: cannot start the stdin reader: {e}");
    }
    rx
}
