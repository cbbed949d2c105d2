//! The Claude Agent SDK's protocol (`--input-format stream-json --output-format
//! stream-json`, with or without `-p`): stdin is read line by line while turns run. Each
//! `user` message becomes its own submission (the session's queue keeps them in order)
//! and gets its own `result` when it ends, with that turn's usage and cost.
//! `control_request` lines are answered at any time with a `control_response`:
//! `initialize`, `interrupt`, `set_permission_mode` and `set_model` are handled, any other
//! subtype gets an error response. With `--permission-prompt-tool stdio` a tool call that
//! needs approval is asked of the program as a `can_use_tool` control request (without it,
//! as in print mode, such a call is denied). The run ends at end of input once every
//! submission has ended; then SessionEnd hooks run.

use std::collections::HashMap;
use std::io::{BufRead, IsTerminal};

use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::core::permission::PermissionMode;
use crate::sdk::commands::{self, CommandScope, Submission, SubmissionId};
use crate::sdk::{InteractiveSession, PermissionRequest, SessionEvent, TurnEnd};
use crate::session::PermissionAnswer;

use super::super::args::Args;
use super::super::assemble::assemble_with;
use super::super::headless::{EXIT_ERROR, EXIT_OK, end_error, user_text};
use super::super::output::{self, RunTotals};
use super::super::printer::Printer;

/// Control request subtypes this driver answers.
const HANDLED: &str = "initialize, interrupt, set_permission_mode, set_model";

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
    pending: HashMap<SubmissionId, (Owed, String)>,
    /// The model the run started with (`set_model` without a model goes back to it).
    initial_model: String,
    model: String,
    mode: PermissionMode,
    api_key_source: String,
    last_end: TurnEnd,
    /// Permission questions sent as `can_use_tool`, by request id, awaiting the answer.
    questions: HashMap<String, PermissionRequest>,
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
    let assembled = match assemble_with(&args, false, ask) {
        Ok(a) => a,
        Err(message) => return printer.fail_early(&message, std::time::Instant::now()),
    };
    for warning in &assembled.warnings {
        eprintln!("robota: warning: {warning}");
    }
    if let Some(notice) = &assembled.notice
        && (args.verbose || std::io::stderr().is_terminal())
    {
        eprintln!("robota: {notice}");
    }
    let mode = assembled.session.mode();
    let model = assembled.model.clone();
    let api_key_source = assembled.api_key_source.clone();
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
        next_request: 1,
        input_open: true,
    };
    // A prompt argument goes first, as the first user message.
    if let Some(prompt) = driver.args.prompt.clone() {
        driver.submit(Owed::Result, prompt);
    }
    let mut lines = read_lines();
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

/// The commands a session runs in every client (the ones an SDK program may send).
fn session_commands() -> impl Iterator<Item = &'static commands::CommandSpec> {
    commands::all().filter(|c| c.scope == CommandScope::Session)
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
    fn submit(&mut self, owed: Owed, text: String) {
        let id = self.session.submit(Submission::parse(&text));
        self.pending.insert(id, (owed, text));
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
            Some("user") => match user_text(&value) {
                Some(text) => self.submit(Owed::Result, text),
                None => eprintln!("robota: skipped a user message without text content"),
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
            "" => Err("control_request without request.subtype".to_string()),
            other => Err(format!(
                "Unsupported control request subtype: {other} (robota handles {HANDLED})"
            )),
        };
        match answer {
            Ok(response) => json!({
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": response},
            }),
            Err(error) => json!({
                "type": "control_response",
                "response": {"subtype": "error", "request_id": request_id, "error": error},
            }),
        }
    }

    /// `initialize`: the commands, output style, models and account, as Claude Code
    /// answers. SDK-side hooks and agents are refused rather than silently not run.
    fn initialize(&self, request: &Value) -> Result<Value, String> {
        let has = |key: &str| match request.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::Object(m)) => !m.is_empty(),
            Some(_) => true,
        };
        if has("hooks") {
            return Err("robota does not run SDK hook callbacks yet".to_string());
        }
        if has("agents") {
            return Err("robota does not take SDK-defined agents yet".to_string());
        }
        let commands: Vec<Value> = session_commands()
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
    fn set_model(&mut self, request: &Value) -> Result<Value, String> {
        let model = match request.get("model") {
            None | Some(Value::Null) => self.initial_model.clone(),
            Some(Value::String(m)) if m == "default" => self.initial_model.clone(),
            Some(Value::String(m)) if !m.trim().is_empty() && !m.contains('\n') => {
                m.trim().to_string()
            }
            Some(other) => return Err(format!("set_model: not a model name: {other}")),
        };
        self.submit(Owed::Nothing, format!("/model {model}"));
        Ok(json!({}))
    }

    /// Nobody can answer a question any more: the waiting ones and later ones are denied.
    fn input_closed(&mut self) {
        self.input_open = false;
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
        let Some(mut request) = self.questions.remove(id) else {
            return;
        };
        let deny = |text: String| PermissionAnswer::Deny(Some(text));
        let answer = if response.get("subtype").and_then(Value::as_str) == Some("success") {
            let body = response.get("response").unwrap_or(&Value::Null);
            match body.get("behavior").and_then(Value::as_str) {
                Some("allow") => match body.get("updatedInput") {
                    Some(updated) if !updated.is_null() && *updated != request.input => deny(
                        "robota cannot run a tool call with changed input (updatedInput) yet"
                            .to_string(),
                    ),
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
                    self.printer.totals = RunTotals::new();
                }
            }
            SessionEvent::SubmissionEnded { id, outcome } => {
                let Some((owed, text)) = self.pending.remove(&id) else {
                    return;
                };
                if owed == Owed::Nothing {
                    if let TurnEnd::Error(e) = &outcome.end {
                        eprintln!("robota: {text}: {}", e.line());
                    }
                    return;
                }
                let totals = &mut self.printer.totals;
                totals.num_turns = outcome.rounds;
                if let Some(error) = end_error(&outcome.end, self.args.max_turns) {
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
                self.printer.totals = RunTotals::new();
                self.last_end = outcome.end;
            }
            // An interrupt drops the queue with the running turn; what was dropped is
            // submitted again, in order, so every message still runs and gets its result.
            SessionEvent::SubmissionDropped(queued) => {
                if let Some((owed, text)) = self.pending.remove(&queued.id) {
                    self.submit(owed, text);
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

/// `set_permission_mode`: `{"mode": …}`, one of Claude Code's mode names.
fn set_mode(session: &InteractiveSession, request: &Value) -> Result<Value, String> {
    let name = request.get("mode").and_then(Value::as_str).unwrap_or("");
    let mode = PermissionMode::parse(name).ok_or_else(|| {
        let known: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
        format!(
            "set_permission_mode: unknown mode {name:?} (one of {})",
            known.join(", ")
        )
    })?;
    session.set_mode(mode);
    Ok(json!({}))
}
