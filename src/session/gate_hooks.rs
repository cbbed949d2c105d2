//! The hook steps of the session's tool gate: PreToolUse before the policy (block, stop,
//! rewrite the input, allow / ask / deny), PermissionRequest when the policy asks (before
//! anyone is asked), Notification while the user is asked, and PostToolUse /
//! PostToolUseFailure after the call (feedback and context for the model). Deny rules win
//! over every hook: a hook's allow only skips the mode's question, and input a hook
//! rewrites is judged by the policy again.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::core::ToolOutput;
use crate::core::engine::{GateDecision, INTERRUPTED_RESULT, ToolCall};
use crate::core::hooks::HookEvent;
use crate::core::hooks::protocol::{ToolPermission, ToolPermissionDecision};
use crate::core::permission::{CallFacts, PermissionMode, PermissionRule, Verdict};

use super::conversation::SessionGate;
use super::hooks::tool_response;
use crate::core::permission::suggested_rule;

impl SessionGate<'_> {
    fn stop_turn(&self, reason: &str) {
        if let Ok(mut halt) = self.halt.lock()
            && halt.is_none()
        {
            *halt = Some(reason.to_string());
        }
    }

    /// The policy's verdict for the call as if the mode were `bypassPermissions`: what a
    /// hook's allow leaves standing (deny and ask rules).
    pub(super) fn evaluate_as_bypass(&self, call: &ToolCall) -> Verdict {
        match self.policy.lock() {
            Ok(policy) => {
                let mut probe = policy.clone();
                probe.mode = PermissionMode::BypassPermissions;
                probe.evaluate(&CallFacts {
                    tool: &call.name,
                    risk: call.risk,
                    argument: call.argument.as_deref(),
                    cwd: &self.cwd,
                    input: Some(&call.input),
                })
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
            "input_updated",
            &format!("{by} hook replaced the input"),
        );
    }

    /// PreToolUse: `Err` is the final answer (blocked, denied, turn stopped); `Ok` carries
    /// the hooks' permission decision, if any, with `call` possibly rewritten.
    pub(super) async fn pre_tool_use_hooks(
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
            self.rewrite_input(call, input, "PreToolUse");
        }
        Ok(outcome.permission)
    }

    /// PermissionRequest, when the policy asks: `Some` is the hooks' answer.
    pub(super) async fn permission_request_hooks(
        &self,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> Option<GateDecision> {
        let hooks = self.hooks.filter(|h| h.has(HookEvent::PermissionRequest))?;
        let facts = CallFacts {
            tool: &call.name,
            risk: call.risk,
            argument: call.argument.as_deref(),
            cwd: &self.cwd,
            input: Some(&call.input),
        };
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
        let mut call = call.clone();
        if let Some(input) = answer.updated_input {
            self.rewrite_input(&mut call, input, "PermissionRequest");
            // Rewritten input is judged again: a deny rule still wins.
            if let Verdict::Deny { reason } = self.evaluate_as_bypass(&call) {
                let message = format!("Permission to use {} was denied: {reason}.", call.name);
                return Some(self.deny(&call, reason, message));
            }
        }
        self.record(&call, "allow", "PermissionRequest hook allowed the call");
        Some(GateDecision::Allow(call.input))
    }

    /// Fires Notification for a permission prompt in the background: the prompt is not
    /// delayed by it, and answering does not cut it short.
    pub(super) fn notify_permission_prompt(&self, call: &ToolCall) {
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
    pub(super) async fn post_tool_use_hooks(
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
