//! Firing one event: pick the handlers whose matcher (and `if` rule) select the call,
//! build Claude Code's stdin JSON, run them all in parallel — each under its own timeout —
//! report each start and finish to an observer, and merge what they decided into one
//! `HookOutcome`. `prompt` and `agent` handlers go to a `ModelHookRunner` supplied by the
//! holder of a model; background (`async`) handlers run detached and decide nothing.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::future::join_all;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::HookEvent;
use super::command::{CommandSpec, run_command, spawn_detached};
use super::config::{HandlerKind, HookConfig, HookHandler};
use super::http::{HttpSpec, run_http};
use super::protocol::{HookOutcome, OUTPUT_CAP, RawRun, RunEnding, interpret};
use crate::provider::ProviderError;
use crate::truncate::truncate_middle;

/// SessionEnd handlers without their own timeout get this long (Claude Code's budget).
pub const SESSION_END_DEFAULT_TIMEOUT: Duration = Duration::from_millis(1500);
/// And never more than this.
pub const SESSION_END_MAX_TIMEOUT: Duration = Duration::from_secs(60);

/// Asks a model on behalf of `prompt` / `agent` hooks.
#[async_trait]
pub trait ModelHookRunner: Send + Sync {
    /// One tool-less call; returns the answer's text.
    async fn ask(
        &self,
        prompt: &str,
        model: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<String, ProviderError>;
}

/// Why a `callback` handler got no output from the program that registered it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookCallbackError {
    /// The program could not be asked, or stopped answering; says why.
    #[error("{0}")]
    Unanswered(String),
    /// The program answered with an error (its message).
    #[error("the hook callback failed: {0}")]
    Failed(String),
    /// The handler's run was cancelled.
    #[error("cancelled")]
    Cancelled,
}

/// Answers `callback` handlers: the program driving robota runs its own hook code (the
/// Agent SDK's `hook_callback` control request) and returns its JSON output.
#[async_trait]
pub trait HookCallbacks: Send + Sync {
    /// Runs the callback `callback_id` with the event's stdin JSON `input`; `Ok` is its JSON
    /// output, read as a command hook's stdout.
    async fn call(
        &self,
        callback_id: &str,
        input: &Value,
        cancel: &CancellationToken,
    ) -> Result<Value, HookCallbackError>;
}

/// The session facts every hook input carries, and the environment hooks run in.
#[derive(Debug, Clone, Default)]
pub struct HookEnvironment {
    /// The session's id.
    pub session_id: String,
    /// The session log; `None` when the session is not persisted (sent as `""`).
    pub transcript_path: Option<PathBuf>,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The project root (`CLAUDE_PROJECT_DIR`, `ROBOTA_PROJECT_DIR`).
    pub project_dir: PathBuf,
    /// The permission mode's Claude Code name (`default`, `acceptEdits`, `plan`…).
    pub permission_mode: String,
    /// The session's extra environment (settings `env`).
    pub env: Vec<(String, String)>,
}

/// One event to fire.
pub struct HookRequest<'a> {
    /// The event.
    pub event: HookEvent,
    /// What matchers filter on: the tool name, the start source, the end reason…
    pub query: Option<&'a str>,
    /// The event's own input fields (`tool_name`, `prompt`, `source`…).
    pub fields: Map<String, Value>,
    /// Decides a handler's `if` rule for this call (tool events); `None` = every rule holds.
    pub condition: Option<&'a (dyn Fn(&str) -> bool + Send + Sync)>,
}

impl<'a> HookRequest<'a> {
    /// A request for `event` with `query` for matchers and `fields` (an object; anything
    /// else counts as none), every `if` rule holding.
    pub fn new(event: HookEvent, query: Option<&'a str>, fields: Value) -> Self {
        HookRequest {
            event,
            query,
            fields: match fields {
                Value::Object(map) => map,
                _ => Map::new(),
            },
            condition: None,
        }
    }
}

/// How one run ended, as logs and clients show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    /// It went on normally (exit 0).
    Success,
    /// It blocked what the event is about (exit 2 or a block decision).
    Blocked,
    /// It failed without blocking (another exit code, a failure to run).
    Error,
    /// It ran out of time.
    TimedOut,
    /// It was cancelled.
    Cancelled,
}

impl RunOutcome {
    /// The outcome as logs write it (`success`, `blocked`, `error`, `timeout`, `cancelled`).
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Success => "success",
            RunOutcome::Blocked => "blocked",
            RunOutcome::Error => "error",
            RunOutcome::TimedOut => "timeout",
            RunOutcome::Cancelled => "cancelled",
        }
    }
}

/// One finished run, for the session log and clients.
#[derive(Debug, Clone, PartialEq)]
pub struct HookRunRecord {
    /// A fresh id for the run, shared with its [`HookProgress::Started`].
    pub hook_id: String,
    /// The event that fired.
    pub event: HookEvent,
    /// `Event` or `Event:query` (`PreToolUse:Bash`).
    pub hook_name: String,
    /// The handler's `type` (`command`, `http`, `prompt`, `agent`, `callback`).
    pub handler_type: &'static str,
    /// The command, URL or prompt.
    pub label: String,
    /// The exit code, for runs that exited (HTTP and model answers count as exits).
    pub exit_code: Option<i32>,
    /// How it ended.
    pub outcome: RunOutcome,
    /// How long it took.
    pub duration: Duration,
    /// What it wrote to stdout (the middle cut when long).
    pub stdout: String,
    /// What it wrote to stderr (the middle cut when long).
    pub stderr: String,
    /// The notice the run produced, if any.
    pub notice: Option<String>,
}

/// A hook starting or finishing.
#[derive(Debug, Clone, PartialEq)]
pub enum HookProgress {
    /// A run started.
    Started {
        /// The run's id, shared with its [`HookProgress::Finished`] record.
        hook_id: String,
        /// The event that fired.
        event: HookEvent,
        /// `Event` or `Event:query` (`PreToolUse:Bash`).
        hook_name: String,
        /// The command, URL or prompt.
        label: String,
    },
    /// A run finished.
    Finished(HookRunRecord),
}

/// Receives progress while an event's hooks run.
pub type HookObserver<'a> = &'a (dyn Fn(HookProgress) + Send + Sync);

/// Runs the configured hooks.
pub struct HookRunner {
    config: HookConfig,
    model: Option<Arc<dyn ModelHookRunner>>,
    callbacks: Option<Arc<dyn HookCallbacks>>,
    http: OnceLock<Option<reqwest::Client>>,
}

impl HookRunner {
    /// A runner of `config`'s hooks, with no model runner or callbacks yet.
    pub fn new(config: HookConfig) -> Self {
        HookRunner {
            config,
            model: None,
            callbacks: None,
            http: OnceLock::new(),
        }
    }

    /// Lets `callback` handlers reach the program that registered them.
    pub fn with_callbacks(mut self, callbacks: Arc<dyn HookCallbacks>) -> Self {
        self.callbacks = Some(callbacks);
        self
    }

    /// Lets `prompt` and `agent` handlers ask a model.
    pub fn with_model_runner(mut self, runner: Arc<dyn ModelHookRunner>) -> Self {
        self.model = Some(runner);
        self
    }

    /// The hooks it runs.
    pub fn config(&self) -> &HookConfig {
        &self.config
    }

    /// Whether any handler is configured for `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.config.has(event)
    }

    /// The stdin JSON of a request: the common fields, then the event's own.
    pub fn input_json(env: &HookEnvironment, request: &HookRequest<'_>) -> Value {
        let mut input = Map::new();
        input.insert("session_id".into(), json!(env.session_id));
        input.insert(
            "transcript_path".into(),
            json!(
                env.transcript_path
                    .as_ref()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ),
        );
        input.insert("cwd".into(), json!(env.cwd.to_string_lossy()));
        input.insert("hook_event_name".into(), json!(request.event.as_str()));
        input.insert("permission_mode".into(), json!(env.permission_mode));
        for (k, v) in &request.fields {
            input.insert(k.clone(), v.clone());
        }
        Value::Object(input)
    }

    /// The handlers that run for this request, without duplicates, in configuration order.
    fn selected(&self, request: &HookRequest<'_>) -> Vec<&HookHandler> {
        let mut chosen: Vec<&HookHandler> = Vec::new();
        for group in self.config.groups(request.event) {
            let selected = !request.event.supports_matcher()
                || request.query.is_none_or(|q| group.matcher.matches(q));
            if !selected {
                continue;
            }
            for handler in &group.handlers {
                if let Some(rule) = &handler.condition {
                    if !request.event.is_tool_event() {
                        continue;
                    }
                    if let Some(holds) = request.condition
                        && !holds(rule)
                    {
                        continue;
                    }
                }
                if !chosen.contains(&handler) {
                    chosen.push(handler);
                }
            }
        }
        chosen
    }

    /// Runs every selected handler in parallel and merges their decisions.
    pub async fn fire(
        &self,
        env: &HookEnvironment,
        request: HookRequest<'_>,
        observer: HookObserver<'_>,
        cancel: &CancellationToken,
    ) -> HookOutcome {
        let handlers = self.selected(&request);
        let mut outcome = HookOutcome::default();
        if handlers.is_empty() {
            return outcome;
        }
        let input = HookRunner::input_json(env, &request);
        let stdin = input.to_string().into_bytes();
        let hook_name = match request.query {
            Some(q) if request.event.supports_matcher() => format!("{}:{q}", request.event),
            _ => request.event.to_string(),
        };
        let event = request.event;
        let foreground: Vec<&HookHandler> = handlers
            .into_iter()
            .filter(|h| !(h.background && self.spawn_background(h, env, event, &stdin)))
            .collect();
        let runs = foreground.into_iter().map(|handler| {
            let hook_name = hook_name.clone();
            let input = &input;
            let stdin = &stdin;
            async move {
                let hook_id = uuid::Uuid::new_v4().to_string();
                let label = handler.label();
                observer(HookProgress::Started {
                    hook_id: hook_id.clone(),
                    event,
                    hook_name: hook_name.clone(),
                    label: label.clone(),
                });
                let started = Instant::now();
                let raw = self
                    .run_handler(handler, env, event, input, stdin, cancel)
                    .await;
                let verdict = interpret(event, &label, &raw);
                let exit_code = match raw.ending {
                    RunEnding::Exited(code) => Some(code),
                    _ => None,
                };
                let outcome = match &raw.ending {
                    RunEnding::TimedOut => RunOutcome::TimedOut,
                    RunEnding::Cancelled => RunOutcome::Cancelled,
                    _ if verdict.block.is_some() => RunOutcome::Blocked,
                    RunEnding::Exited(0) => RunOutcome::Success,
                    _ => RunOutcome::Error,
                };
                observer(HookProgress::Finished(HookRunRecord {
                    hook_id,
                    event,
                    hook_name,
                    handler_type: handler.type_name(),
                    label,
                    exit_code,
                    outcome,
                    duration: started.elapsed(),
                    stdout: truncate_middle(&raw.stdout, OUTPUT_CAP),
                    stderr: truncate_middle(&raw.stderr, OUTPUT_CAP),
                    notice: verdict.notice.clone(),
                }));
                verdict
            }
        });
        for verdict in join_all(runs).await {
            outcome.absorb(verdict);
        }
        outcome
    }

    fn timeout_for(handler: &HookHandler, event: HookEvent) -> Duration {
        if event == HookEvent::SessionEnd {
            return handler
                .timeout
                .map(|t| t.min(SESSION_END_MAX_TIMEOUT))
                .unwrap_or(SESSION_END_DEFAULT_TIMEOUT);
        }
        handler.effective_timeout()
    }

    fn process_env(handler: &HookHandler, env: &HookEnvironment) -> Vec<(String, String)> {
        let mut vars = env.env.clone();
        let project = env.project_dir.to_string_lossy().into_owned();
        vars.push(("CLAUDE_PROJECT_DIR".into(), project.clone()));
        vars.push(("ROBOTA_PROJECT_DIR".into(), project));
        if let Some(root) = &handler.plugin_root {
            vars.push((
                "CLAUDE_PLUGIN_ROOT".into(),
                root.to_string_lossy().into_owned(),
            ));
        }
        if let Some(data) = &handler.plugin_data {
            vars.push((
                "CLAUDE_PLUGIN_DATA".into(),
                data.to_string_lossy().into_owned(),
            ));
        }
        vars
    }

    fn http_client(&self) -> Option<reqwest::Client> {
        self.http
            .get_or_init(|| crate::http_client::client_builder().build().ok())
            .clone()
    }

    async fn run_handler(
        &self,
        handler: &HookHandler,
        env: &HookEnvironment,
        event: HookEvent,
        input: &Value,
        stdin: &[u8],
        cancel: &CancellationToken,
    ) -> RawRun {
        let timeout = HookRunner::timeout_for(handler, event);
        match &handler.kind {
            HandlerKind::Command { command, args } => {
                let vars = HookRunner::process_env(handler, env);
                let spec = CommandSpec {
                    command,
                    args: args.as_deref(),
                    stdin,
                    cwd: &env.cwd,
                    env: &vars,
                    timeout,
                };
                run_command(&spec, cancel).await
            }
            HandlerKind::Http {
                url,
                headers,
                allowed_env_vars,
            } => {
                let Some(client) = self.http_client() else {
                    return failed("no HTTP client could be built");
                };
                let spec = HttpSpec {
                    url,
                    headers,
                    allowed_env_vars,
                    env: &env.env,
                    body: stdin,
                    timeout,
                };
                run_http(&client, &spec, cancel).await
            }
            HandlerKind::Callback { id } => {
                let Some(callbacks) = &self.callbacks else {
                    return failed("no program is connected to answer this callback hook");
                };
                match tokio::time::timeout(timeout, callbacks.call(id, input, cancel)).await {
                    Err(_) => RawRun {
                        ending: RunEnding::TimedOut,
                        stdout: String::new(),
                        stderr: String::new(),
                    },
                    Ok(Err(err)) => failed(&err.to_string()),
                    Ok(Ok(output)) => RawRun {
                        ending: RunEnding::Exited(0),
                        stdout: output.to_string(),
                        stderr: String::new(),
                    },
                }
            }
            HandlerKind::Prompt { prompt, model } | HandlerKind::Agent { prompt, model } => {
                let Some(runner) = &self.model else {
                    return failed("prompt and agent hooks need a model, and none is available");
                };
                let text = prompt_with_arguments(prompt, input);
                let ask = runner.ask(&text, model.as_deref(), cancel);
                match tokio::time::timeout(timeout, ask).await {
                    Err(_) => RawRun {
                        ending: RunEnding::TimedOut,
                        stdout: String::new(),
                        stderr: String::new(),
                    },
                    Ok(Err(err)) => failed(&err.user_message()),
                    Ok(Ok(answer)) => model_answer(&answer),
                }
            }
        }
    }

    /// Starts a background handler detached; returns false when it must run in the
    /// foreground instead (prompt and agent handlers).
    fn spawn_background(
        &self,
        handler: &HookHandler,
        env: &HookEnvironment,
        event: HookEvent,
        stdin: &[u8],
    ) -> bool {
        let timeout = HookRunner::timeout_for(handler, event);
        let label = handler.label();
        let stdin = stdin.to_vec();
        match &handler.kind {
            HandlerKind::Command { command, args } => {
                // Detached: it may outlive this run (a `-p` run ends without waiting).
                let vars = HookRunner::process_env(handler, env);
                let spec = CommandSpec {
                    command,
                    args: args.as_deref(),
                    stdin: &stdin,
                    cwd: &env.cwd,
                    env: &vars,
                    timeout,
                };
                match spawn_detached(&spec) {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::warn!("background {event} hook `{label}` could not start: {e}");
                        false
                    }
                }
            }
            HandlerKind::Http {
                url,
                headers,
                allowed_env_vars,
            } => {
                let Some(client) = self.http_client() else {
                    return false;
                };
                let (url, headers, allowed) =
                    (url.clone(), headers.clone(), allowed_env_vars.clone());
                let vars = env.env.clone();
                tokio::spawn(async move {
                    let spec = HttpSpec {
                        url: &url,
                        headers: &headers,
                        allowed_env_vars: &allowed,
                        env: &vars,
                        body: &stdin,
                        timeout,
                    };
                    let run = run_http(&client, &spec, &CancellationToken::new()).await;
                    tracing::info!("background {event} hook `{label}` ended: {:?}", run.ending);
                });
                true
            }
            HandlerKind::Prompt { .. }
            | HandlerKind::Agent { .. }
            | HandlerKind::Callback { .. } => false,
        }
    }
}

fn failed(message: &str) -> RawRun {
    RawRun {
        ending: RunEnding::Failed(message.to_string()),
        stdout: String::new(),
        stderr: String::new(),
    }
}

/// The hook prompt with `$ARGUMENTS` replaced by the input JSON (appended when absent).
pub fn prompt_with_arguments(prompt: &str, input: &Value) -> String {
    let arguments = input.to_string();
    if prompt.contains("$ARGUMENTS") {
        prompt.replace("$ARGUMENTS", &arguments)
    } else {
        format!("{prompt}\n\nARGUMENTS: {arguments}")
    }
}

/// A model's `{"ok": bool, "reason": "…"}` answer as a run: ok = exit 0, not ok = exit 2
/// with the reason.
pub(crate) fn model_answer(answer: &str) -> RawRun {
    let parsed = answer
        .find('{')
        .zip(answer.rfind('}'))
        .filter(|(start, end)| start < end)
        .and_then(|(start, end)| serde_json::from_str::<Value>(&answer[start..=end]).ok());
    let Some(ok) = parsed
        .as_ref()
        .and_then(|v| v.get("ok"))
        .and_then(Value::as_bool)
    else {
        let excerpt: String = answer.chars().take(200).collect();
        return failed(&format!(
            "the model did not answer with {{\"ok\": true|false}} JSON: {excerpt}"
        ));
    };
    let reason = parsed
        .as_ref()
        .and_then(|v| v.get("reason"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    RawRun {
        ending: RunEnding::Exited(if ok { 0 } else { 2 }),
        stdout: String::new(),
        stderr: if ok { String::new() } else { reason },
    }
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
