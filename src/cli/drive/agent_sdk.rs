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
//! hooks run.

use std::collections::HashMap;
use std::io::{BufRead, IsTerminal};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::core::hooks::{HookCallbackError, HookCallbacks, HookConfig};
use crate::core::permission::PermissionMode;
use crate::sdk::commands::{CommandScope, Submission, SubmissionId};
use crate::sdk::{InteractiveSession, PermissionRequest, SessionEvent, TurnEnd};
use crate::session::PermissionAnswer;
use crate::tools::mcp::{SdkMcpAnswer, SdkMcpError, SdkMcpRouter};

use super::super::args::Args;
use super::super::assemble::{AssembleError, assemble_in, options};
use super::super::headless::{EXIT_ERROR, EXIT_OK, end_error, user_prompt};
use super::super::output;
use super::super::printer::Printer;
use crate::sdk::ProjectOptions;
use crate::sdk::assembly::CallbackHooks;

/// Control request subtypes this driver answers.
const HANDLED: &str = "initialize, interrupt, set_permission_mode, set_model";

/// Why a control request is refused; its `control_response` carries the message.
#[derive(Debug, thiserror::Error)]
enum ControlError {
    #[error("control_request without request.subtype")]
    NoSubtype,
    #[error("Unsupported control request subtype: {0} (robota handles {HANDLED})")]
    Unsupported(String),
    /// A later `initialize` carries what only the first line's can (`hooks`, `agents`).
    #[error("{what} can only be {done} by an initialize request on the first input line")]
    NotFirstInitialize {
        what: &'static str,
        done: &'static str,
    },
    #[error("set_model: not a model name: {0}")]
    NotAModel(Value),
    #[error(
        "set_permission_mode: unknown mode {0:?} (one of {modes})",
        modes = PermissionMode::ALL.map(|m| m.as_str()).join(", ")
    )]
    UnknownMode(String),
}

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
    next_request: u64,
    input_open: bool,
}

/// Runs the driver until end of input and every submission ended; returns the exit code.
pub async fn run(args: Args) -> u8 {
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok();
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
        assemble_in(&args, cwd, options)
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
    let Some((session, mut events)) = printer.start_session(assembled).await else {
        return EXIT_ERROR;
    };
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
        next_request: early.next_request,
        input_open: true,
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
        if (!driver.input_open && driver.pending.is_empty()) || driver.printer.closed {
            break;
        }
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
        }
    }
    let code = match (&driver.last_end, driver.printer.closed) {
        (_, true) | (TurnEnd::Error(_), _) => EXIT_ERROR,
        _ => EXIT_OK,
    };
    driver.session.close().await;
    while let Ok(event) = events.try_recv() {
        if let SessionEvent::Warning(n) | SessionEvent::Notice(n) = event {
            eprintln!("robota: {n}");
        }
    }
    code
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

impl Driver {
    fn submit(&mut self, owed: Owed, submission: Submission) {
        if owed == Owed::Result && self.printer.totals.budget_exceeded {
            // The budget is spent: the message gets its result without a model call.
            let value = output::result_message(
                &self.printer.session_id,
                &TurnEnd::Interrupted,
                "",
                std::time::Duration::ZERO,
                &self.printer.totals,
            );
            self.printer.emit(value);
            return;
        }
        let id = self.session.submit(submission.clone());
        self.pending.insert(id, (owed, submission));
    }

    /// A user message that cannot be sent gets an error result saying why (the program
    /// waits for one result per message) and the same line on stderr.
    fn refuse(&mut self, problem: &str) {
        eprintln!("robota: {problem}");
        let end = TurnEnd::Error(crate::sdk::TurnError::new(
            crate::sdk::ErrorKind::InvalidRequest,
            problem,
        ));
        let value = output::result_message(
            &self.printer.session_id,
            &end,
            "",
            std::time::Duration::ZERO,
            &self.printer.totals,
        );
        self.printer.emit(value);
    }

    /// One line of input: a user message, a control request, or something to skip.
    fn on_line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("robota: skipped a stdin line that is not JSON: {e}");
                return;
            }
        };
        match value.get("type").and_then(Value::as_str) {
            Some("user") => match user_prompt(&value) {
                Ok(Some((text, images))) if images.is_empty() => {
                    self.submit(Owed::Result, Submission::parse(&text))
                }
                Ok(Some((text, images))) => {
                    self.submit(Owed::Result, Submission::with_images(text, images))
                }
                Ok(None) => eprintln!("robota: skipped a user message without text content"),
                Err(problem) => self.refuse(&format!("The user message was not sent: {problem}")),
            },
            Some("control_request") => {
                let response = self.on_control(&value);
                self.printer.print(&response.to_string());
            }
            Some("control_response") => self.on_answer(&value),
            Some("control_cancel_request" | "keep_alive") => {}
            other => eprintln!(
                "robota: skipped a stdin message of type {}",
                other.unwrap_or("(none)")
            ),
        }
    }

    /// The `control_response` for one `control_request`.
    fn on_control(&mut self, message: &Value) -> Value {
        let request_id = message.get("request_id").cloned().unwrap_or(Value::Null);
        let request = message.get("request").unwrap_or(&Value::Null);
        let subtype = request.get("subtype").and_then(Value::as_str).unwrap_or("");
        let answer = match subtype {
            "initialize" => self.initialize(request),
            "interrupt" => {
                self.session.abort();
                Ok(json!({}))
            }
            "set_permission_mode" => set_mode(&self.session, request),
            "set_model" => self.set_model(request),
            "" => Err(ControlError::NoSubtype),
            other => Err(ControlError::Unsupported(other.to_string())),
        };
        match answer {
            Ok(response) => json!({
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": response},
            }),
            Err(error) => json!({
                "type": "control_response",
                "response": {"subtype": "error", "request_id": request_id, "error": error.to_string()},
            }),
        }
    }

    /// `initialize`: the commands, output style, models and account, as Claude Code
    /// answers. The program's hooks and agents are taken from the first line (the session
    /// is built after it); a later `initialize` carrying them is refused, not ignored.
    fn initialize(&mut self, request: &Value) -> Result<Value, ControlError> {
        let has = |key: &str| match request.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::Object(m)) => !m.is_empty(),
            Some(_) => true,
        };
        let registers = std::mem::take(&mut self.hooks_initialize_pending);
        if has("hooks") && !registers {
            return Err(ControlError::NotFirstInitialize {
                what: "hooks",
                done: "registered",
            });
        }
        if has("agents") && !registers {
            return Err(ControlError::NotFirstInitialize {
                what: "agents",
                done: "defined",
            });
        }
        let commands: Vec<Value> = self
            .session
            .command_entries()
            .into_iter()
            .filter(|c| c.scope == CommandScope::Session)
            .map(|c| {
                json!({
                    "name": c.name,
                    "description": c.description,
                    "argumentHint": c.argument_hint,
                })
            })
            .collect();
        let mut models = vec![self.initial_model.clone()];
        if self.model != self.initial_model {
            models.push(self.model.clone());
        }
        let models: Vec<Value> = models
            .iter()
            .map(|m| json!({"value": m, "displayName": m, "description": ""}))
            .collect();
        Ok(json!({
            "commands": commands,
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": models,
            "account": {"apiKeySource": self.api_key_source},
            "pid": std::process::id(),
        }))
    }

    /// `set_model`: `/model X` goes into the session's queue (so it applies from the
    /// next turn on, in the order of the input) and prints no result of its own.
    fn set_model(&mut self, request: &Value) -> Result<Value, ControlError> {
        let model = match request.get("model") {
            None | Some(Value::Null) => self.initial_model.clone(),
            Some(Value::String(m)) if m == "default" => self.initial_model.clone(),
            Some(Value::String(m)) if !m.trim().is_empty() && !m.contains('\n') => {
                m.trim().to_string()
            }
            Some(other) => return Err(ControlError::NotAModel(other.clone())),
        };
        self.submit(Owed::Nothing, Submission::parse(&format!("/model {model}")));
        Ok(json!({}))
    }

    /// A hook callback the session fires: asked of the program as `hook_callback`.
    fn call_back(&mut self, call: CallbackAsk) {
        if !self.input_open {
            let _ = call.answer.send(Err(HookCallbackError::Unanswered(
                "stdin is closed: the hook callback cannot be asked".to_string(),
            )));
            return;
        }
        let request_id = format!("robota_hook_{}", self.next_request);
        self.next_request += 1;
        let message = json!({
            "type": "control_request",
            "request_id": request_id,
            "request": {
                "subtype": "hook_callback",
                "callback_id": call.callback_id,
                "input": call.input,
                "tool_use_id": call.input.get("tool_use_id"),
            },
        });
        self.printer.print(&message.to_string());
        self.hook_calls.insert(request_id, call.answer);
    }

    /// A message for one of the program's MCP servers, sent as `mcp_message`.
    fn ask_mcp(&mut self, ask: McpAsk) {
        if !self.input_open {
            let _ = ask.answer.send(Err(SdkMcpError::Unanswered(
                "stdin is closed: the SDK MCP server cannot be reached".to_string(),
            )));
            return;
        }
        let request_id = format!("robota_mcp_{}", self.next_request);
        self.next_request += 1;
        self.printer
            .print(&mcp_message(&request_id, &ask).to_string());
        self.mcp_calls.insert(request_id, ask.answer);
    }

    /// Nobody can answer a question any more: the waiting ones and later ones are denied.
    fn input_closed(&mut self) {
        self.input_open = false;
        for (_, waiting) in self.mcp_calls.drain() {
            let _ = waiting.send(Err(SdkMcpError::Unanswered(
                "stdin closed before the SDK MCP server answered".to_string(),
            )));
        }
        for (_, waiting) in self.hook_calls.drain() {
            let _ = waiting.send(Err(HookCallbackError::Unanswered(
                "stdin closed before the hook callback was answered".to_string(),
            )));
        }
        for (_, mut request) in self.questions.drain() {
            request.respond(PermissionAnswer::Deny(Some(
                "stdin closed before the permission question was answered".to_string(),
            )));
        }
    }

    /// Asks the program about a tool call (`can_use_tool`), or denies it when nobody can
    /// be asked.
    fn ask(&mut self, mut request: PermissionRequest) {
        if !self.input_open {
            request.respond(PermissionAnswer::Deny(Some(
                "stdin is closed: nobody can answer the permission question".to_string(),
            )));
            return;
        }
        let request_id = format!("robota_perm_{}", self.next_request);
        self.next_request += 1;
        let message = json!({
            "type": "control_request",
            "request_id": request_id,
            "request": {
                "subtype": "can_use_tool",
                "tool_name": request.tool_name,
                "input": request.input,
                "tool_use_id": request.tool_use_id,
                "decision_reason": request.reason,
                "permission_suggestions": [],
            },
        });
        self.printer.print(&message.to_string());
        self.questions.insert(request_id, request);
    }

    /// A `control_response` to a `can_use_tool` question: allow, or deny with the
    /// program's message (`interrupt: true` also ends the turn). An allow that changes the
    /// tool's input is denied: robota cannot run a call with different input yet.
    fn on_answer(&mut self, message: &Value) {
        let response = message.get("response").unwrap_or(&Value::Null);
        let Some(id) = response.get("request_id").and_then(Value::as_str) else {
            return;
        };
        let succeeded = response.get("subtype").and_then(Value::as_str) == Some("success");
        if let Some(waiting) = self.mcp_calls.remove(id) {
            let _ = waiting.send(mcp_answer(response));
            return;
        }
        if let Some(waiting) = self.hook_calls.remove(id) {
            let answer = if succeeded {
                Ok(response.get("response").cloned().unwrap_or(json!({})))
            } else {
                let error = response.get("error").and_then(Value::as_str).unwrap_or("");
                Err(HookCallbackError::Failed(error.to_string()))
            };
            let _ = waiting.send(answer);
            return;
        }
        let Some(mut request) = self.questions.remove(id) else {
            return;
        };
        let deny = |text: String| PermissionAnswer::Deny(Some(text));
        let answer = if succeeded {
            let body = response.get("response").unwrap_or(&Value::Null);
            match body.get("behavior").and_then(Value::as_str) {
                Some("allow") => match body.get("updatedInput") {
                    Some(updated) if updated.is_object() && *updated != request.input => {
                        PermissionAnswer::AllowWithInput(updated.clone())
                    }
                    _ => PermissionAnswer::Allow,
                },
                Some("deny") => {
                    if body.get("interrupt").and_then(Value::as_bool) == Some(true) {
                        self.session.abort();
                    }
                    let text = body.get("message").and_then(Value::as_str).unwrap_or("");
                    PermissionAnswer::Deny((!text.is_empty()).then(|| text.to_string()))
                }
                _ => deny(format!("the permission answer has no behavior: {body}")),
            }
        } else {
            let error = response.get("error").and_then(Value::as_str).unwrap_or("");
            deny(format!("the permission question failed: {error}"))
        };
        request.respond(answer);
    }

    fn on_event(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::PermissionRequest(request) => self.ask(request),
            SessionEvent::SubmissionStarted { id, .. } => {
                if self
                    .pending
                    .get(&id)
                    .is_some_and(|(o, _)| *o == Owed::Result)
                {
                    self.printer.reset_totals();
                }
            }
            SessionEvent::SubmissionEnded { id, mut outcome } => {
                let Some((owed, submission)) = self.pending.remove(&id) else {
                    return;
                };
                let text = submission.text();
                (outcome.end, outcome.result) =
                    output::blocked_prompt_as_result(outcome.end, outcome.result);
                if owed == Owed::Nothing {
                    if let TurnEnd::Error(e) = &outcome.end {
                        eprintln!("robota: {text}: {}", e.line());
                    }
                    return;
                }
                self.printer.take_structured();
                let totals = &mut self.printer.totals;
                totals.num_turns = outcome.rounds;
                if let Some(error) = end_error(&outcome.end, self.args.max_turns)
                    && !totals.budget_exceeded
                {
                    totals.errors.push(error);
                }
                let value = output::result_message(
                    &self.printer.session_id,
                    &outcome.end,
                    &outcome.result,
                    outcome.duration,
                    totals,
                );
                self.printer.emit(value);
                let spent = self.printer.totals.budget_exceeded;
                self.printer.reset_totals();
                self.last_end = if spent {
                    TurnEnd::Error(crate::sdk::TurnError::new(
                        crate::sdk::ErrorKind::Config,
                        "the --max-budget-usd budget is spent",
                    ))
                } else {
                    outcome.end
                };
            }
            // An interrupt drops the queue with the running turn; what was dropped is
            // submitted again, in order, so every message still runs and gets its result.
            SessionEvent::SubmissionDropped(queued) => {
                if let Some((owed, submission)) = self.pending.remove(&queued.id) {
                    self.submit(owed, submission);
                }
            }
            SessionEvent::Usage {
                usage,
                model,
                cost_usd,
                api_duration,
            } => {
                let totals = &mut self.printer.totals;
                totals.add_call(&model, &usage, cost_usd);
                totals.api_duration += api_duration;
            }
            SessionEvent::State(state) => {
                if self.printer.crosses_budget(&state) {
                    self.session.abort();
                }
                self.model = state.model.clone();
                if self.mode != state.mode {
                    let status = json!({
                        "type": "system",
                        "subtype": "status",
                        "status": null,
                        "permissionMode": state.mode.as_str(),
                        "uuid": uuid::Uuid::new_v4().to_string(),
                        "session_id": self.printer.session_id,
                    });
                    self.printer.emit(status);
                }
                self.mode = state.mode;
            }
            other => self.printer.on_event(other),
        }
    }
}

/// The `request` of a line that is an `initialize` control request.
fn initialize_request(line: &str) -> Option<Value> {
    let value: Value = serde_json::from_str(line).ok()?;
    if value.get("type")?.as_str()? != "control_request" {
        return None;
    }
    let request = value.get("request")?;
    (request.get("subtype")?.as_str()? == "initialize").then(|| request.clone())
}

fn is_initialize(line: &str) -> bool {
    initialize_request(line).is_some()
}

/// The `hooks` of a line that is an `initialize` control request, if it has any.
/// The agents an `initialize` line defines (`{name: {description, prompt, …}}`).
fn initialize_agents(line: &str) -> Option<serde_json::Map<String, Value>> {
    initialize_request(line)?
        .get("agents")?
        .as_object()
        .filter(|a| !a.is_empty())
        .cloned()
}

fn initialize_hooks(line: &str) -> Option<Value> {
    initialize_request(line)?
        .get("hooks")
        .filter(|h| h.is_object())
        .cloned()
}

/// One hook callback to ask of the program.
struct CallbackAsk {
    callback_id: String,
    input: Value,
    answer: oneshot::Sender<Result<Value, HookCallbackError>>,
}

/// The session's way to the program's hook callbacks: each call becomes a `CallbackAsk`
/// for the driver's loop, which owns stdout and reads the answer.
struct CallbackBridge {
    asks: mpsc::UnboundedSender<CallbackAsk>,
}

#[async_trait::async_trait]
impl HookCallbacks for CallbackBridge {
    async fn call(
        &self,
        callback_id: &str,
        input: &Value,
        cancel: &CancellationToken,
    ) -> Result<Value, HookCallbackError> {
        let (answer, answered) = oneshot::channel();
        self.asks
            .send(CallbackAsk {
                callback_id: callback_id.to_string(),
                input: input.clone(),
                answer,
            })
            .map_err(|_| {
                HookCallbackError::Unanswered(
                    "the program that registered the hook is gone".to_string(),
                )
            })?;
        tokio::select! {
            answer = answered => answer.unwrap_or_else(|_| Err(HookCallbackError::Unanswered("the hook callback got no answer".to_string()))),
            _ = cancel.cancelled() => Err(HookCallbackError::Cancelled),
        }
    }
}

/// What happened on the pipe while the MCP servers connected.
struct Early {
    /// Input lines read meanwhile, for the driver to handle in order.
    lines: Vec<String>,
    /// `mcp_message`s still unanswered when the wait ended.
    mcp_calls: HashMap<String, oneshot::Sender<Result<Option<Value>, SdkMcpError>>>,
    next_request: u64,
    input_closed: bool,
}

impl Default for Early {
    fn default() -> Self {
        Early {
            lines: Vec::new(),
            mcp_calls: HashMap::new(),
            next_request: 1,
            input_closed: false,
        }
    }
}

/// Waits (up to the startup wait) for the MCP servers to connect, sending the program's
/// in-process servers their messages and reading their answers meanwhile; other input
/// lines are kept for later.
async fn settle_servers(
    mcp: &crate::sdk::mcp::McpManager,
    printer: &mut Printer,
    lines: &mut mpsc::UnboundedReceiver<String>,
    asks: &mut mpsc::UnboundedReceiver<McpAsk>,
) -> Early {
    let mut early = Early::default();
    let settled = mcp.wait_settled(crate::sdk::mcp::startup_wait());
    tokio::pin!(settled);
    loop {
        tokio::select! {
            () = &mut settled => break,
            Some(ask) = asks.recv(), if !early.input_closed => {
                let request_id = format!("robota_mcp_{}", early.next_request);
                early.next_request += 1;
                printer.print(&mcp_message(&request_id, &ask).to_string());
                early.mcp_calls.insert(request_id, ask.answer);
            }
            line = lines.recv(), if !early.input_closed => match line {
                Some(line) => {
                    let answered = serde_json::from_str::<Value>(&line).ok().and_then(|v| {
                        let response = v.get("response")?;
                        let id = response.get("request_id")?.as_str()?;
                        let waiting = early.mcp_calls.remove(id)?;
                        let _ = waiting.send(mcp_answer(response));
                        Some(())
                    });
                    if answered.is_none() {
                        early.lines.push(line);
                    }
                }
                None => early.input_closed = true,
            },
        }
    }
    early
}

/// The `control_request` that carries one message to a program's MCP server.
fn mcp_message(request_id: &str, ask: &McpAsk) -> Value {
    json!({
        "type": "control_request",
        "request_id": request_id,
        "request": {
            "subtype": "mcp_message",
            "server_name": ask.server,
            "message": ask.message,
        },
    })
}

/// The server's answer in a `control_response` to an `mcp_message`.
fn mcp_answer(response: &Value) -> Result<Option<Value>, SdkMcpError> {
    if response.get("subtype").and_then(Value::as_str) == Some("success") {
        Ok(response
            .get("response")
            .and_then(|r| r.get("mcp_response"))
            .cloned())
    } else {
        let error = response.get("error").and_then(Value::as_str).unwrap_or("");
        Err(SdkMcpError::Failed(error.to_string()))
    }
}

/// One message for a program's MCP server, for the driver's loop to send.
struct McpAsk {
    server: String,
    message: Value,
    answer: oneshot::Sender<Result<Option<Value>, SdkMcpError>>,
}

/// The session's way to the program's in-process MCP servers: each message becomes an
/// `McpAsk` for the driver's loop, which owns stdout and reads the answer.
struct McpBridge {
    asks: mpsc::UnboundedSender<McpAsk>,
}

impl SdkMcpRouter for McpBridge {
    fn message(&self, server: &str, message: Value) -> SdkMcpAnswer {
        let (answer, answered) = oneshot::channel();
        let ask = McpAsk {
            server: server.to_string(),
            message,
            answer,
        };
        if let Err(mpsc::error::SendError(ask)) = self.asks.send(ask) {
            let _ = ask.answer.send(Err(SdkMcpError::Unanswered(
                "the program that runs the SDK server is gone".to_string(),
            )));
        }
        answered
    }
}

/// `set_permission_mode`: `{"mode": …}`, one of Claude Code's mode names.
fn set_mode(session: &InteractiveSession, request: &Value) -> Result<Value, ControlError> {
    let name = request.get("mode").and_then(Value::as_str).unwrap_or("");
    let mode =
        PermissionMode::parse(name).ok_or_else(|| ControlError::UnknownMode(name.to_string()))?;
    session.set_mode(mode);
    // The mode now in effect, as Claude Code answers (Agent SDK ≥ 0.3.332 reads it).
    Ok(json!({"mode": mode.as_str()}))
}
