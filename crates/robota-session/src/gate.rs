//! The session's tool gate, the engine's `ToolGate`: PreToolUse hooks before the policy
//! (block, stop, rewrite the input, allow / ask / deny), then the policy, then
//! PermissionRequest hooks and the user when the policy says ask (Notification hooks fire
//! while the user is asked; nobody asked means deny), and PostToolUse /
//! PostToolUseFailure hooks after the call (feedback and context for the model). Deny
//! rules win over every hook: a hook's allow only skips the mode's question, and input a
//! hook rewrites is judged by the policy again. Every decision that is not the policy's
//! silent allow is written to the session log.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use robota_core::engine::{GateDecision, INTERRUPTED_RESULT, ToolCall, ToolGate};
use robota_core::hooks::HookEvent;
use robota_core::hooks::protocol::{ToolPermission, ToolPermissionDecision};
use robota_core::permission::{
    CallFacts, PLAN_APPROVAL_TOOL, PermissionMode, PermissionPolicy, PermissionRule, Verdict,
    suggested_rule,
};
use robota_core::{PreviewError, ToolContext, ToolDisplay, ToolOutput, ToolRegistry};

use super::hooks::{HookFiring, tool_response};
use super::line::{LogEvent, PermissionDecision};
use super::log::SessionLog;
use super::update::{PermissionAnswer, SessionUpdate, UpdateSink};

/// The engine's gate: PreToolUse hooks, then the policy, then PermissionRequest hooks
/// and the user when the policy says ask; PostToolUse hooks after each call.
pub(crate) struct SessionGate<'a> {
    pub(super) policy: Arc<Mutex<PermissionPolicy>>,
    pub(super) interactive: bool,
    pub(super) cwd: PathBuf,
    pub(super) sink: UpdateSink<'a>,
    pub(super) log: Option<Arc<SessionLog>>,
    /// To re-derive a call's primary argument when a hook rewrites its input.
    pub(super) tools: &'a ToolRegistry,
    pub(super) hooks: Option<&'a HookFiring<'a>>,
    /// Set when a hook said `continue: false`.
    pub(super) halt: Mutex<Option<String>>,
    /// PreToolUse `additionalContext` per tool_use id, appended to the call's result.
    pub(super) hook_context: Mutex<HashMap<String, String>>,
    /// What every call waits for before anything else (the turn's checkpoint).
    pub(super) barrier: Option<super::barrier::EffectBarrier>,
}

impl SessionGate<'_> {
    /// The tool's own preview of `call` (see [`robota_core::Tool::preview`]).
    async fn preview(
        &self,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> Result<Option<ToolDisplay>, PreviewError> {
        let Some(tool) = self.tools.get(&call.name) else {
            return Ok(None);
        };
        let ctx = ToolContext {
            cwd: self.cwd.clone(),
            cancel: cancel.clone(),
            tool_use_id: call.id.clone(),
            env: Vec::new(),
            read_denial: None,
            progress: Default::default(),
        };
        tool.preview(&call.input, &ctx).await
    }

    /// Writes the decision about `call` to the log (a failed write is only traced).
    pub(super) fn record(&self, call: &ToolCall, decision: PermissionDecision, reason: &str) {
        if let Some(log) = &self.log
            && let Err(err) = log.append_event(LogEvent::Permission {
                tool: call.name.clone(),
                tool_use_id: call.id.clone(),
                decision,
                reason: reason.to_string(),
            })
        {
            tracing::warn!("session log: {err}");
        }
    }

    /// What the policy judges of `call`.
    fn facts<'c>(&'c self, call: &'c ToolCall) -> CallFacts<'c> {
        CallFacts {
            tool: &call.name,
            risk: call.risk,
            argument: call.argument.as_deref(),
            cwd: &self.cwd,
            shell_dir: call.start_dir.as_deref(),
            input: Some(&call.input),
        }
    }

    /// What the permission policy says of `call` as it stands.
    fn verdict(&self, call: &ToolCall) -> Verdict {
        let facts = self.facts(call);
        match self.policy.lock() {
            Ok(policy) => policy.evaluate(&facts),
            Err(_) => Verdict::Deny {
                reason: "permission state is unavailable".to_string(),
            },
        }
    }

    /// The policy refused `call` for `reason`.
    fn refuse(&self, call: &ToolCall, reason: String) -> GateDecision {
        let message = format!("Permission to use {} was denied: {reason}.", call.name);
        self.deny(call, reason, message)
    }

    pub(super) fn deny(&self, call: &ToolCall, reason: String, message: String) -> GateDecision {
        self.record(call, PermissionDecision::Deny, &reason);
        (self.sink)(SessionUpdate::PermissionDenied {
            call: call.clone(),
            reason,
        });
        GateDecision::Deny(message)
    }
}

#[async_trait]
impl ToolGate for SessionGate<'_> {
    async fn check(&self, call: &ToolCall, cancel: &CancellationToken) -> GateDecision {
        if let Some(barrier) = &self.barrier {
            barrier.passed().await;
        }
        // A call a deny rule refuses is refused before any hook sees it, as Claude Code.
        let verdict = self.verdict(call);
        if verdict.denied_by_rule()
            && let Verdict::Deny { reason } = verdict
        {
            return self.refuse(call, reason);
        }
        // PreToolUse hooks may block, stop the turn, rewrite the input (the policy then
        // judges the new input) or decide allow / ask / deny.
        let mut call = call.clone();
        let hook_decision = match self.pre_tool_use_hooks(&mut call, cancel).await {
            Ok(decision) => decision,
            Err(decision) => return decision,
        };
        let call = &call;
        let facts = self.facts(call);
        let verdict = self.verdict(call);
        // A hook's allow skips the mode's question but never a deny or ask rule; its ask
        // asks even where the policy would allow.
        let verdict = match (verdict, hook_decision.as_ref().map(|d| d.decision)) {
            (Verdict::Ask { .. }, Some(ToolPermission::Allow)) => self.evaluate_as_bypass(call),
            (Verdict::Allow, Some(ToolPermission::Ask)) => Verdict::Ask {
                reason: hook_decision
                    .and_then(|d| d.reason)
                    .unwrap_or_else(|| "a PreToolUse hook asks for confirmation".to_string()),
            },
            (verdict, _) => verdict,
        };
        let reason = match verdict {
            Verdict::Allow => return GateDecision::Allow(call.input.clone()),
            Verdict::Deny { reason } => return self.refuse(call, reason),
            Verdict::Ask { reason } => reason,
        };
        // The tool works out what it would change before anyone is asked; a call that
        // cannot succeed fails now with the tool's own error.
        let preview = match self.preview(call, cancel).await {
            Ok(preview) => preview,
            Err(failure) => return GateDecision::Fail(failure.message),
        };
        if let Some(decision) = self.permission_request_hooks(call, cancel).await {
            return decision;
        }
        if !self.interactive {
            let message = format!(
                "Permission to use {} was denied: it needs approval ({reason}) and robota is running non-interactively. The user can allow it with --allowedTools or a permissions.allow rule.",
                call.name
            );
            return self.deny(call, reason, message);
        }
        let (responder, answer) = oneshot::channel();
        (self.sink)(SessionUpdate::PermissionAsked {
            call: call.clone(),
            reason: reason.clone(),
            suggested_rule: suggested_rule(&facts),
            preview,
            responder,
        });
        self.notify_permission_prompt(call);
        let answer = tokio::select! {
            answer = answer => answer.unwrap_or(PermissionAnswer::Deny(None)),
            _ = cancel.cancelled() => PermissionAnswer::Deny(None),
        };
        // Approving a plan leaves plan mode: to the mode the user chose, else default.
        if call.name == PLAN_APPROVAL_TOOL {
            let next = match &answer {
                PermissionAnswer::AllowWithMode(mode) => Some(*mode),
                PermissionAnswer::Deny(_) => None,
                _ => Some(PermissionMode::Default),
            };
            if let Some(mode) = next {
                self.leave_plan_mode(mode);
            }
        }
        match answer {
            PermissionAnswer::Allow | PermissionAnswer::AllowWithMode(_) => {
                self.record(call, PermissionDecision::Allow, "user approved");
                GateDecision::Allow(call.input.clone())
            }
            PermissionAnswer::AllowWithInput(input) => {
                self.allow_with(call, Some(input), "the approver", "approved with new input")
            }
            PermissionAnswer::AllowAlways(rule) => {
                if let Ok(mut policy) = self.policy.lock() {
                    policy.allow.extend(PermissionRule::parse_list(&rule));
                }
                self.record(
                    call,
                    PermissionDecision::Allow,
                    &format!("user approved; rule {rule} added"),
                );
                GateDecision::Allow(call.input.clone())
            }
            PermissionAnswer::Deny(feedback) => {
                let message = match feedback.filter(|f| !f.trim().is_empty()) {
                    Some(f) => format!(
                        "The user doesn't want to proceed with this tool use. The tool use was rejected. The user said: {f}"
                    ),
                    None => "The user doesn't want to proceed with this tool use. The tool use was rejected.".to_string(),
                };
                self.deny(call, "user refused".to_string(), message)
            }
        }
    }

    async fn after(
        &self,
        call: &ToolCall,
        output: &ToolOutput,
        cancel: &CancellationToken,
    ) -> Option<String> {
        self.post_tool_use_hooks(call, output, cancel).await
    }

    fn halted(&self) -> Option<String> {
        self.halt.lock().ok().and_then(|h| h.clone())
    }
}

impl SessionGate<'_> {
    /// Switches the policy out of plan mode now — before the model's next call, so its
    /// first edit is judged by the new mode — and records and reports the change.
    fn leave_plan_mode(&self, mode: PermissionMode) {
        let changed = match self.policy.lock() {
            Ok(mut policy) if policy.mode == PermissionMode::Plan => {
                policy.mode = mode;
                true
            }
            _ => false,
        };
        if !changed {
            return;
        }
        if let Some(log) = &self.log
            && let Err(err) = log.append_mode(mode.as_str())
        {
            tracing::warn!("session log: {err}");
        }
        (self.sink)(SessionUpdate::ModeChanged(mode));
    }

    fn stop_turn(&self, reason: &str) {
        if let Ok(mut halt) = self.halt.lock()
            && halt.is_none()
        {
            *halt = Some(reason.to_string());
        }
    }

    /// The policy's verdict for the call as if the mode were `bypassPermissions`: what a
    /// hook's allow leaves standing (deny and ask rules).
    fn evaluate_as_bypass(&self, call: &ToolCall) -> Verdict {
        match self.policy.lock() {
            Ok(policy) => {
                let mut probe = policy.clone();
                probe.mode = PermissionMode::BypassPermissions;
                probe.evaluate(&self.facts(call))
            }
            Err(_) => Verdict::Deny {
                reason: "permission state is unavailable".to_string(),
            },
        }
    }

    /// Replaces the call's input (and the argument rules look at).
    fn rewrite_input(&self, call: &mut ToolCall, input: serde_json::Value, by: &str) {
        call.argument = self
            .tools
            .get(&call.name)
            .and_then(|t| t.primary_argument(&input));
        call.input = input;
        self.record(
            call,
            PermissionDecision::InputUpdated,
            &format!("{by} replaced the input"),
        );
    }

    /// PreToolUse: `Err` is the final answer (blocked, denied, turn stopped); `Ok` carries
    /// the hooks' permission decision, if any, with `call` possibly rewritten.
    async fn pre_tool_use_hooks(
        &self,
        call: &mut ToolCall,
        cancel: &CancellationToken,
    ) -> Result<Option<ToolPermissionDecision>, GateDecision> {
        let Some(hooks) = self.hooks.filter(|h| h.has(HookEvent::PreToolUse)) else {
            return Ok(None);
        };
        let outcome = hooks
            .fire_for_call(HookEvent::PreToolUse, call, json!({}), cancel)
            .await;
        if let Some(reason) = outcome.stop_reason() {
            let reason = non_empty(reason, "a PreToolUse hook stopped the turn");
            self.stop_turn(&reason);
            return Err(self.deny(
                call,
                format!("PreToolUse hook stopped the turn: {reason}"),
                format!("The turn was stopped by a hook: {reason}"),
            ));
        }
        if let Some(reason) = outcome.block_reason() {
            return Err(self.deny(
                call,
                format!("PreToolUse hook blocked the call: {reason}"),
                reason,
            ));
        }
        if let Some(d) = &outcome.permission
            && d.decision == ToolPermission::Deny
        {
            let reason = d
                .reason
                .clone()
                .unwrap_or_else(|| "Denied by a PreToolUse hook".to_string());
            return Err(self.deny(
                call,
                format!("PreToolUse hook denied the call: {reason}"),
                reason,
            ));
        }
        if let Some(context) = outcome.context_reminder()
            && let Ok(mut pending) = self.hook_context.lock()
        {
            pending.insert(call.id.clone(), context);
        }
        if let Some(input) = outcome.updated_input {
            self.rewrite_input(call, input, "PreToolUse hook");
        }
        Ok(outcome.permission)
    }

    /// PermissionRequest, when the policy asks: `Some` is the hooks' answer.
    async fn permission_request_hooks(
        &self,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> Option<GateDecision> {
        let hooks = self.hooks.filter(|h| h.has(HookEvent::PermissionRequest))?;
        let facts = self.facts(call);
        let suggestion = PermissionRule::parse(&suggested_rule(&facts)).map(|rule| {
            json!({
                "type": "addRules",
                "rules": [{"toolName": rule.tool, "ruleContent": rule.specifier}],
                "behavior": "allow",
                "destination": "session",
            })
        });
        let fields =
            json!({ "permission_suggestions": suggestion.into_iter().collect::<Vec<_>>() });
        let outcome = hooks
            .fire_for_call(HookEvent::PermissionRequest, call, fields, cancel)
            .await;
        if let Some(reason) = outcome.stop_reason() {
            let reason = non_empty(reason, "a PermissionRequest hook stopped the turn");
            self.stop_turn(&reason);
            return Some(self.deny(
                call,
                format!("PermissionRequest hook stopped the turn: {reason}"),
                format!("The turn was stopped by a hook: {reason}"),
            ));
        }
        let answer = outcome.permission_request?;
        let message = answer
            .message
            .clone()
            .unwrap_or_else(|| "Denied by a PermissionRequest hook".to_string());
        if answer.interrupt {
            self.stop_turn(&message);
        }
        if !answer.allow {
            return Some(self.deny(
                call,
                format!("PermissionRequest hook denied the call: {message}"),
                message,
            ));
        }
        Some(self.allow_with(
            call,
            answer.updated_input,
            "PermissionRequest hook",
            "PermissionRequest hook allowed the call",
        ))
    }

    /// An approval, possibly with input rewritten by whoever approved (`by`): rewritten
    /// input is judged again. A deny rule still wins, and so does what asks even in
    /// bypass (a protected path, an ask rule) unless the approved call asked the same: an
    /// approval of one call is not an approval to write `.claude/settings.json`.
    fn allow_with(
        &self,
        call: &ToolCall,
        input: Option<serde_json::Value>,
        by: &str,
        reason: &str,
    ) -> GateDecision {
        let asked = self.evaluate_as_bypass(call);
        let mut call = call.clone();
        if let Some(input) = input.filter(|i| *i != call.input) {
            self.rewrite_input(&mut call, input, by);
            let refusal = match self.evaluate_as_bypass(&call) {
                Verdict::Deny { reason } => Some(reason),
                Verdict::Ask { reason }
                    if asked
                        != (Verdict::Ask {
                            reason: reason.clone(),
                        }) =>
                {
                    Some(format!(
                        "the rewritten input needs its own approval ({reason})"
                    ))
                }
                _ => None,
            };
            if let Some(reason) = refusal {
                let message = format!("Permission to use {} was denied: {reason}.", call.name);
                return self.deny(&call, reason, message);
            }
        }
        self.record(&call, PermissionDecision::Allow, reason);
        GateDecision::Allow(call.input)
    }

    /// Fires Notification for a permission prompt in the background: the prompt is not
    /// delayed by it, and answering does not cut it short.
    fn notify_permission_prompt(&self, call: &ToolCall) {
        if let Some(hooks) = self.hooks {
            let fields = json!({
                "message": format!("Claude needs your permission to use {}", call.name),
                "notification_type": "permission_prompt",
            });
            hooks.fire_detached(
                HookEvent::Notification,
                Some("permission_prompt".to_string()),
                fields,
            );
        }
    }

    /// PostToolUse (or PostToolUseFailure for an error result): what to append to the
    /// result for the model — PreToolUse context, hook feedback, PostToolUse context.
    async fn post_tool_use_hooks(
        &self,
        call: &ToolCall,
        output: &ToolOutput,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let mut extra: Vec<String> = self
            .hook_context
            .lock()
            .ok()
            .and_then(|mut pending| pending.remove(&call.id))
            .into_iter()
            .collect();
        let (event, fields) = if output.is_error {
            (
                HookEvent::PostToolUseFailure,
                json!({"error": output.content, "is_interrupt": output.content == INTERRUPTED_RESULT}),
            )
        } else {
            (
                HookEvent::PostToolUse,
                json!({"tool_response": tool_response(call, output)}),
            )
        };
        if let Some(hooks) = self.hooks.filter(|h| h.has(event)) {
            let outcome = hooks.fire_for_call(event, call, fields, cancel).await;
            if let Some(reason) = outcome.stop_reason() {
                self.stop_turn(&non_empty(
                    reason,
                    &format!("a {event} hook stopped the turn"),
                ));
            }
            if let Some(reason) = outcome.block_reason() {
                extra.push(format!("{event} hook feedback:\n{reason}"));
            }
            extra.extend(outcome.context_reminder());
        }
        (!extra.is_empty()).then(|| extra.join("\n\n"))
    }
}

fn non_empty(text: String, fallback: &str) -> String {
    if text.trim().is_empty() {
        fallback.to_string()
    } else {
        text
    }
}
