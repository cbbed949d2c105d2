//! The `PreSkillShellCommand` hook, asked before each `` !`command` `` line of a skill or
//! custom command runs. Its input names the skill (`skill_name`, also the matcher's query)
//! and the command (`command`, and as `tool_name: "Bash"` with `tool_input.command`, so a
//! PreToolUse guard for Bash reads it unchanged). `permissionDecision` deny, ask or defer,
//! `decision: "block"`, exit 2 or `continue: false` stop the line — and the expansion —
//! with the hook's reason; allow adds nothing (the permission rules still decide).

use serde_json::json;
use tokio_util::sync::CancellationToken;

use robota_core::hooks::protocol::ToolPermission;
use robota_core::hooks::{HookEvent, HookOutcome, HookRequest};
use robota_session::hooks::HookHandle;

use super::definition::PromptCommand;
use super::expand::ExpandError;

/// `Ok` when the hooks let `script` of `command` run; else why not, for the user.
pub async fn check(
    hooks: Option<&HookHandle>,
    command: &PromptCommand,
    script: &str,
    cancel: &CancellationToken,
) -> Result<(), ExpandError> {
    let Some(hooks) = hooks.filter(|h| h.has(HookEvent::PreSkillShellCommand)) else {
        return Ok(());
    };
    let fields = json!({
        "skill_name": command.name,
        "command": script,
        "tool_name": "Bash",
        "tool_input": {"command": script},
    });
    let request = HookRequest::new(HookEvent::PreSkillShellCommand, Some(&command.name), fields);
    match refusal(&hooks.fire(request, cancel).await) {
        None => Ok(()),
        Some(reason) => Err(ExpandError::StoppedByHook {
            command: command.name.clone(),
            script: script.to_string(),
            reason,
        }),
    }
}

/// Why the hooks' outcome stops the line, if it does.
fn refusal(outcome: &HookOutcome) -> Option<String> {
    if let Some(reason) = outcome.block_reason() {
        return Some(reason);
    }
    if let Some(decision) = &outcome.permission
        && decision.decision != ToolPermission::Allow
    {
        return Some(
            decision
                .reason
                .clone()
                .unwrap_or_else(|| "the hook did not allow it".to_string()),
        );
    }
    outcome.stop_reason().map(|reason| {
        if reason.is_empty() {
            "the hook said not to continue".to_string()
        } else {
            reason
        }
    })
}
