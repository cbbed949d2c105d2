//! Hooks as a session fires them: the configured `HookRunner` with `prompt` / `agent`
//! handlers answered by the session's own provider, the per-moment context (session id,
//! transcript path, cwd, project dir, current permission mode), and the bookkeeping every
//! firing shares — each run written to the session log as a `hook` event and reported as
//! a `SessionUpdate::Hook`, notices and `systemMessage`s shown to the user. Also the
//! input shapes of the tool events and the `if` rule check for tool calls.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use robota_core::engine::{ToolCall, TurnOutcome, TurnStop};
use robota_core::hooks::{
    HookCallbacks, HookConfig, HookEnvironment, HookEvent, HookOutcome, HookProgress, HookRequest,
    HookRunRecord, HookRunner, ModelHookRunner,
};
use robota_core::permission::{
    CallFacts, PermissionMode, PermissionPolicy, PermissionRule, Verdict,
};
use robota_core::{
    Block, Message, Provider, ProviderError, ProviderRequest, Role, StreamEvent, ToolOutput,
};

use super::line::{HookRun, LogEvent};
use super::log::SessionLog;
use super::update::{SessionUpdate, UpdateSink};

/// How many times in a row a Stop hook may send the turn back to work.
pub const MAX_STOP_BLOCKS: u32 = 8;

/// Characters of a hook's stdout / stderr kept in its log line.
const LOG_EXCERPT_CHARS: usize = 500;

const HOOK_SYSTEM_PROMPT: &str = "You are evaluating a hook in a coding agent. Read the hook instruction and the event data, then answer with only a JSON object: {\"ok\": true} when the condition is met or the action may proceed, or {\"ok\": false, \"reason\": \"<what is missing and what to do next>\"} when it is not.";

/// The session's hooks: the runner and the project root they run for.
pub struct SessionHooks {
    runner: HookRunner,
    project_dir: PathBuf,
}

impl SessionHooks {
    /// Hooks whose `prompt` and `agent` handlers ask `provider` (with `model` unless the
    /// handler names one).
    pub fn new(
        config: HookConfig,
        project_dir: PathBuf,
        provider: Arc<dyn Provider>,
        model: String,
        wire: Option<robota_core::wire::WireTap>,
    ) -> Self {
        let runner = HookRunner::new(config).with_model_runner(Arc::new(ProviderHookModel {
            provider,
            model,
            wire,
        }));
        SessionHooks {
            runner,
            project_dir,
        }
    }

    /// Lets `callback` handlers reach the program that registered them.
    pub fn with_callbacks(mut self, callbacks: Arc<dyn HookCallbacks>) -> Self {
        self.runner = self.runner.with_callbacks(callbacks);
        self
    }

    /// Whether at least one hook is configured for `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.runner.has(event)
    }

    /// The hook configuration the hooks run from.
    pub fn config(&self) -> &HookConfig {
        self.runner.config()
    }
}

/// A session's hooks with what firing them needs, owned: for code that runs outside a turn's
/// engine but on the session's behalf (a skill's `` !`command` `` lines). Runs are logged
/// and reported like the session's own.
#[derive(Clone)]
pub struct HookHandle {
    pub(crate) hooks: Arc<SessionHooks>,
    pub(crate) session_id: String,
    pub(crate) transcript_path: Option<PathBuf>,
    pub(crate) cwd: PathBuf,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) policy: Arc<Mutex<PermissionPolicy>>,
    pub(crate) log: Option<Arc<SessionLog>>,
    pub(crate) sink: Arc<dyn Fn(SessionUpdate) + Send + Sync>,
}

impl HookHandle {
    /// Whether at least one hook is configured for `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.hooks.has(event)
    }

    /// Fires one event: logs and reports each run, shows notices and system messages.
    pub async fn fire(&self, request: HookRequest<'_>, cancel: &CancellationToken) -> HookOutcome {
        let firing = HookFiring {
            hooks: self.hooks.clone(),
            session_id: &self.session_id,
            transcript_path: self.transcript_path.clone(),
            cwd: &self.cwd,
            env: &self.env,
            policy: &self.policy,
            sink: &*self.sink,
            log: self.log.clone(),
            barrier: None,
        };
        firing.fire(request, cancel).await
    }
}

/// Answers `prompt` / `agent` hooks with one tool-less call to the session's provider.
struct ProviderHookModel {
    provider: Arc<dyn Provider>,
    model: String,
    /// With diagnostics on, where the call's wire traffic is recorded.
    wire: Option<robota_core::wire::WireTap>,
}

#[async_trait]
impl ModelHookRunner for ProviderHookModel {
    async fn ask(
        &self,
        prompt: &str,
        model: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<String, ProviderError> {
        let request = ProviderRequest {
            model: model.unwrap_or(&self.model).to_string(),
            system: HOOK_SYSTEM_PROMPT.to_string(),
            messages: vec![Message::user_text(prompt)],
            tools: Vec::new(),
            max_tokens: 1024,
            thinking_budget: None,
            tools_disabled: false,
            server_tools: Vec::new(),
            wire: self.wire.clone(),
        };
        let ignore = |_event: StreamEvent| {};
        let turn = self.provider.stream(&request, &ignore, cancel).await?;
        Ok(Message::new(Role::Assistant, turn.content).text())
    }
}

/// Everything needed to fire hooks at one moment of a session.
pub(crate) struct HookFiring<'a> {
    pub hooks: Arc<SessionHooks>,
    pub session_id: &'a str,
    pub transcript_path: Option<PathBuf>,
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub policy: &'a Arc<Mutex<PermissionPolicy>>,
    pub sink: UpdateSink<'a>,
    pub log: Option<Arc<SessionLog>>,
    /// What a run waits for first (the turn's checkpoint).
    pub barrier: Option<super::barrier::EffectBarrier>,
}

impl HookFiring<'_> {
    pub fn has(&self, event: HookEvent) -> bool {
        self.hooks.has(event)
    }

    fn environment(&self) -> HookEnvironment {
        let mode = self.policy.lock().map(|p| p.mode).unwrap_or_default();
        HookEnvironment {
            session_id: self.session_id.to_string(),
            transcript_path: self.transcript_path.clone(),
            cwd: self.cwd.to_path_buf(),
            project_dir: self.hooks.project_dir.clone(),
            permission_mode: mode.as_str().to_string(),
            env: self.env.to_vec(),
        }
    }

    /// Fires one event: logs and reports each run, shows notices and system messages.
    pub async fn fire(&self, request: HookRequest<'_>, cancel: &CancellationToken) -> HookOutcome {
        if !self.has(request.event) {
            return HookOutcome::default();
        }
        if let Some(barrier) = &self.barrier {
            barrier.passed().await;
        }
        let observer = |progress: HookProgress| {
            if let HookProgress::Finished(record) = &progress {
                log_run(self.log.as_deref(), record);
            }
            (self.sink)(SessionUpdate::Hook(progress));
        };
        let outcome = self
            .hooks
            .runner
            .fire(&self.environment(), request, &observer, cancel)
            .await;
        for notice in &outcome.notices {
            (self.sink)(SessionUpdate::Warning(notice.clone()));
        }
        for message in &outcome.system_messages {
            (self.sink)(SessionUpdate::Notice(message.clone()));
        }
        outcome
    }

    /// Fires a tool event for `call`, with the handlers' `if` rules checked against it.
    pub async fn fire_for_call(
        &self,
        event: HookEvent,
        call: &ToolCall,
        mut fields: Value,
        cancel: &CancellationToken,
    ) -> HookOutcome {
        if let Value::Object(map) = &mut fields {
            map.insert("tool_name".into(), json!(call.name));
            map.insert("tool_input".into(), call.input.clone());
            if event != HookEvent::PermissionRequest {
                map.insert("tool_use_id".into(), json!(call.id));
            }
        }
        let cwd = self.cwd;
        let holds = |rule: &str| rule_holds(rule, call, cwd);
        let mut request = HookRequest::new(event, Some(&call.name), fields);
        request.condition = Some(&holds);
        self.fire(request, cancel).await
    }

    /// UserPromptSubmit: `Ok` carries context for the prompt; `Err` is how the turn ends
    /// instead (the prompt refused, or `continue: false`).
    pub async fn prompt_submitted(
        &self,
        prompt: &[Block],
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, TurnStop> {
        if !self.has(HookEvent::UserPromptSubmit) {
            return Ok(Vec::new());
        }
        let text = Message::new(Role::User, prompt.to_vec()).text();
        let request =
            HookRequest::new(HookEvent::UserPromptSubmit, None, json!({ "prompt": text }));
        let outcome = self.fire(request, cancel).await;
        if let Some(reason) = outcome.block_reason() {
            self.log_line(LogEvent::PromptBlocked {
                reason: reason.clone(),
            });
            return Err(TurnStop::PromptBlocked(reason));
        }
        if let Some(reason) = outcome.stop_reason() {
            return Err(TurnStop::HookStopped(reason));
        }
        Ok(outcome.contexts)
    }

    /// After the engine ended a turn: Stop hooks when it completed (they may send it back
    /// to work), StopFailure when a provider error ended it.
    pub async fn turn_ended(
        &self,
        outcome: TurnOutcome,
        history: &[Message],
        stop_blocks: u32,
        cancel: &CancellationToken,
    ) -> TurnEnding {
        match &outcome.stop {
            TurnStop::Completed(_) if self.has(HookEvent::Stop) => {
                let fields = json!({
                    "stop_hook_active": stop_blocks > 0,
                    "last_assistant_message": last_assistant_text(history),
                });
                let hook = self
                    .fire(HookRequest::new(HookEvent::Stop, None, fields), cancel)
                    .await;
                if let Some(reason) = hook.stop_reason() {
                    return TurnEnding::Ends(TurnOutcome {
                        stop: TurnStop::HookStopped(reason),
                        rounds: outcome.rounds,
                    });
                }
                let Some(reason) = hook.block_reason() else {
                    return TurnEnding::Ends(outcome);
                };
                if cancel.is_cancelled() {
                    return TurnEnding::Ends(outcome);
                }
                if stop_blocks >= MAX_STOP_BLOCKS {
                    (self.sink)(SessionUpdate::Warning(format!(
                        "Stop hooks blocked {MAX_STOP_BLOCKS} times in a row; the turn ends here"
                    )));
                    return TurnEnding::Ends(outcome);
                }
                (self.sink)(SessionUpdate::Notice(format!(
                    "Stop hook sent the turn back ({}/{MAX_STOP_BLOCKS}): {}",
                    stop_blocks + 1,
                    reason.lines().next().unwrap_or_default()
                )));
                TurnEnding::Continues {
                    reason,
                    context: hook.contexts,
                }
            }
            TurnStop::Failed(err) if self.has(HookEvent::StopFailure) => {
                let kind = serde_json::to_value(err.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                let fields = json!({
                    "error": kind,
                    "error_details": err.user_message(),
                    "last_assistant_message": last_assistant_text(history),
                });
                let request = HookRequest::new(HookEvent::StopFailure, Some(&kind), fields);
                self.fire(request, cancel).await;
                TurnEnding::Ends(outcome)
            }
            _ => TurnEnding::Ends(outcome),
        }
    }

    /// Fires an event in the background: it never delays the caller and is never cut
    /// short by it. Runs are logged; notices go to the trace log only (no client sees a
    /// detached run). For side-effect events such as Notification.
    pub fn fire_detached(&self, event: HookEvent, query: Option<String>, fields: Value) {
        if !self.has(event) {
            return;
        }
        let hooks = self.hooks.clone();
        let environment = self.environment();
        let log = self.log.clone();
        tokio::spawn(async move {
            let observer = |progress: HookProgress| {
                if let HookProgress::Finished(record) = &progress {
                    log_run(log.as_deref(), record);
                }
            };
            let request = HookRequest::new(event, query.as_deref(), fields);
            let outcome = hooks
                .runner
                .fire(&environment, request, &observer, &CancellationToken::new())
                .await;
            for notice in outcome.notices {
                tracing::warn!("{notice}");
            }
        });
    }

    fn log_line(&self, event: LogEvent) {
        if let Some(log) = &self.log
            && let Err(err) = log.append_event(event)
        {
            tracing::warn!("session log: {err}");
        }
    }
}

/// Writes one finished run to the session log as a `hook` event.
fn log_run(log: Option<&SessionLog>, record: &HookRunRecord) {
    let Some(log) = log else { return };
    let excerpt = |s: &str| -> String { s.chars().take(LOG_EXCERPT_CHARS).collect() };
    let run = HookRun {
        hook_id: record.hook_id.clone(),
        hook_event: record.event.as_str().to_string(),
        hook_name: record.hook_name.clone(),
        hook_type: record.handler_type.to_string(),
        command: record.label.clone(),
        exit_code: record.exit_code,
        duration_ms: record.duration.as_millis() as u64,
        outcome: record.outcome.as_str().to_string(),
        stdout: excerpt(&record.stdout),
        stderr: excerpt(&record.stderr),
        notice: record.notice.clone(),
    };
    if let Err(err) = log.append_event(LogEvent::Hook(run)) {
        tracing::warn!("session log: {err}");
    }
}

/// What Stop hooks made of a finished turn.
#[derive(Debug)]
pub enum TurnEnding {
    /// The turn is over.
    Ends(TurnOutcome),
    /// A Stop hook blocked: the turn goes on with `reason` as the next user message.
    Continues {
        /// The Stop hook's reason, the next user message.
        reason: String,
        /// Context the hooks added (`additionalContext`), given to the model with it.
        context: Vec<String>,
    },
}

/// Whether a handler's `if` rule (one permission rule) matches the call. A rule that does
/// not parse holds (Claude Code fails open); one naming another tool does not.
pub fn rule_holds(rule: &str, call: &ToolCall, cwd: &Path) -> bool {
    let Some(parsed) = PermissionRule::parse(rule) else {
        return true;
    };
    let same_tool = parsed.tool == "*"
        || parsed.tool == call.name
        || (parsed.tool == "Agent" && call.name == "Task");
    if !same_tool {
        return false;
    }
    if parsed.specifier.is_none() {
        return true;
    }
    // A deny list holding only this rule denies exactly the calls the rule matches.
    let probe = PermissionPolicy {
        mode: PermissionMode::BypassPermissions,
        deny: vec![parsed],
        ..PermissionPolicy::default()
    };
    matches!(
        probe.evaluate(&CallFacts {
            tool: &call.name,
            risk: call.risk,
            argument: call.argument.as_deref(),
            cwd,
            shell_dir: call.start_dir.as_deref(),
            input: Some(&call.input),
        }),
        Verdict::Deny { .. }
    )
}

/// `tool_response` for PostToolUse in the shapes hooks written for Claude Code read.
pub fn tool_response(call: &ToolCall, output: &ToolOutput) -> Value {
    let file_path = call.input.get("file_path").cloned().unwrap_or(Value::Null);
    match call.name.as_str() {
        "Bash" => json!({
            "stdout": output.content,
            "stderr": "",
            "interrupted": false,
            "isImage": false,
        }),
        "Write" | "Edit" => json!({
            "filePath": file_path,
            "success": !output.is_error,
            "message": output.content,
        }),
        "Read" => json!({
            "type": "text",
            "file": {"filePath": file_path, "content": output.content},
        }),
        _ => json!({"content": output.content}),
    }
}

/// The text of the last assistant message, for Stop hooks.
pub fn last_assistant_text(history: &[Message]) -> String {
    history
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(Message::text)
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
