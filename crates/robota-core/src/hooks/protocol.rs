//! The hook output protocol (claude-code.md §3.4–3.5): what one finished run says — by
//! its exit code (0 go on, 2 block with stderr as the reason, anything else a non-blocking
//! error), its JSON stdout (`continue`, `stopReason`, `systemMessage`, `decision`,
//! `reason`, `hookSpecificOutput`) or its plain stdout — and the merged outcome of all the
//! runs of one event.

use serde_json::{Map, Value};

use super::HookEvent;
use crate::truncate::truncate_middle;

/// Hook output strings (reasons, context) are capped at this many characters.
pub const OUTPUT_CAP: usize = 10_000;

/// How one run ended, before interpretation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RunEnding {
    Exited(i32),
    Signaled(i32),
    TimedOut,
    Cancelled,
    /// It could not be run at all (spawn failure, connection refused, bad answer).
    Failed(String),
}

/// The raw result of one run: its ending and its output. HTTP answers and model answers
/// are mapped onto the same shape (2xx = exit 0; `ok:false` = exit 2 with the reason).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawRun {
    pub ending: RunEnding,
    pub stdout: String,
    pub stderr: String,
}

/// A PreToolUse hook's permission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ToolPermission {
    /// Run the call without asking.
    Allow,
    /// Ask the user.
    Ask,
    /// Refuse the call.
    Deny,
}

/// `hookSpecificOutput.permissionDecision` with its reason.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolPermissionDecision {
    /// The decision.
    pub decision: ToolPermission,
    /// Why, for the model (deny) or the user (ask).
    pub reason: Option<String>,
}

/// A PermissionRequest hook's answer (`hookSpecificOutput.decision`).
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionRequestDecision {
    /// Whether the request is granted.
    pub allow: bool,
    /// Why it was denied, for the model.
    pub message: Option<String>,
    /// The input to run the call with instead, when granted.
    pub updated_input: Option<Value>,
    /// Deny and stop the turn.
    pub interrupt: bool,
}

/// What one run decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RunVerdict {
    /// Exit 2, `decision:"block"` or a `prompt` hook's `ok:false`: the reason.
    pub block: Option<String>,
    /// `continue:false`: the `stopReason` (possibly empty).
    pub stop: Option<String>,
    pub system_message: Option<String>,
    /// `additionalContext`, or plain stdout for the events where it is context.
    pub context: Option<String>,
    pub permission: Option<ToolPermissionDecision>,
    pub permission_request: Option<PermissionRequestDecision>,
    pub updated_input: Option<Value>,
    /// A non-fatal problem to show the user (exit 1, timeout, invalid JSON, missing…).
    pub notice: Option<String>,
}

/// Interprets one run of a handler for `event`. `label` names the handler in notices.
pub(crate) fn interpret(event: HookEvent, label: &str, run: &RawRun) -> RunVerdict {
    let mut verdict = RunVerdict::default();
    let first_stderr_line = || {
        run.stderr
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("(no stderr)")
            .to_string()
    };
    match &run.ending {
        RunEnding::Exited(0) => apply_stdout(event, label, &run.stdout, &mut verdict),
        RunEnding::Exited(2) => {
            let reason = cap(run.stderr.trim());
            if event.can_block() {
                verdict.block = Some(if reason.is_empty() {
                    format!("Blocked by {event} hook")
                } else {
                    reason
                });
            } else if event != HookEvent::PermissionRequest {
                verdict.notice = Some(format!(
                    "{event} hook `{label}` exited 2: {}",
                    first_stderr_line()
                ));
            }
        }
        RunEnding::Exited(code) => {
            apply_json_only(event, label, &run.stdout, &mut verdict);
            let hint = match code {
                126 => " (not executable?)",
                127 => " (command not found?)",
                _ => "",
            };
            verdict.notice = Some(format!(
                "{event} hook error: `{label}` failed with non-blocking status code {code}{hint}: {}",
                first_stderr_line()
            ));
        }
        RunEnding::Signaled(signal) => {
            verdict.notice = Some(format!(
                "{event} hook error: `{label}` was killed by signal {signal}"
            ));
        }
        RunEnding::TimedOut => {
            verdict.notice = Some(format!(
                "{event} hook `{label}` timed out and was stopped; going on without it"
            ));
        }
        RunEnding::Cancelled => {}
        RunEnding::Failed(err) => {
            verdict.notice = Some(format!(
                "{event} hook error: `{label}` could not run: {err}"
            ));
        }
    }
    verdict
}

/// Stdout of a successful run: JSON when it looks like JSON, plain text otherwise.
fn apply_stdout(event: HookEvent, label: &str, stdout: &str, verdict: &mut RunVerdict) {
    let trimmed = stdout.trim();
    if trimmed.is_empty() {
        return;
    }
    if trimmed.starts_with('{') {
        match serde_json::from_str::<Map<String, Value>>(trimmed) {
            Ok(obj) => {
                apply_json(event, &obj, verdict);
                return;
            }
            Err(err) => {
                verdict.notice = Some(format!(
                    "{event} hook `{label}` printed invalid JSON ({err}); its output was read as plain text"
                ));
            }
        }
    }
    if event.stdout_is_context() {
        verdict.context = Some(cap(trimmed));
    }
}

/// A non-zero, non-2 exit: valid JSON still decides; anything else is ignored.
fn apply_json_only(event: HookEvent, _label: &str, stdout: &str, verdict: &mut RunVerdict) {
    let trimmed = stdout.trim();
    if trimmed.starts_with('{')
        && let Ok(obj) = serde_json::from_str::<Map<String, Value>>(trimmed)
    {
        apply_json(event, &obj, verdict);
    }
}

fn str_field(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(cap)
}

fn apply_json(event: HookEvent, obj: &Map<String, Value>, verdict: &mut RunVerdict) {
    if obj.get("continue").and_then(Value::as_bool) == Some(false) {
        verdict.stop = Some(str_field(obj, "stopReason").unwrap_or_default());
    }
    verdict.system_message = str_field(obj, "systemMessage");
    let reason = str_field(obj, "reason");
    let specific = obj.get("hookSpecificOutput").and_then(Value::as_object);
    match obj.get("decision").and_then(Value::as_str) {
        Some("block") if event == HookEvent::PreToolUse => {
            verdict.permission = Some(ToolPermissionDecision {
                decision: ToolPermission::Deny,
                reason: reason.clone(),
            });
        }
        Some("approve") if event == HookEvent::PreToolUse => {
            verdict.permission = Some(ToolPermissionDecision {
                decision: ToolPermission::Allow,
                reason: reason.clone(),
            });
        }
        Some("block") if event.can_block() => {
            verdict.block = Some(reason.unwrap_or_else(|| format!("Blocked by {event} hook")));
        }
        _ => {}
    }
    let Some(specific) = specific else { return };
    if let Some(context) = str_field(specific, "additionalContext") {
        verdict.context = Some(context);
    }
    match event {
        HookEvent::PreToolUse | HookEvent::PreSkillShellCommand => {
            let decision = match specific.get("permissionDecision").and_then(Value::as_str) {
                Some("allow") => Some(ToolPermission::Allow),
                Some("ask") => Some(ToolPermission::Ask),
                // Nobody is asked while a skill expands: deferring stops the line like ask.
                Some("defer") if event == HookEvent::PreSkillShellCommand => {
                    Some(ToolPermission::Ask)
                }
                Some("deny") => Some(ToolPermission::Deny),
                _ => None,
            };
            if let Some(decision) = decision {
                verdict.permission = Some(ToolPermissionDecision {
                    decision,
                    reason: str_field(specific, "permissionDecisionReason"),
                });
            }
            verdict.updated_input = specific
                .get("updatedInput")
                .filter(|v| v.is_object())
                .cloned();
        }
        HookEvent::PermissionRequest => {
            if let Some(decision) = specific.get("decision").and_then(Value::as_object) {
                let allow = match decision.get("behavior").and_then(Value::as_str) {
                    Some("allow") => Some(true),
                    Some("deny") => Some(false),
                    _ => None,
                };
                if let Some(allow) = allow {
                    verdict.permission_request = Some(PermissionRequestDecision {
                        allow,
                        message: str_field(decision, "message"),
                        updated_input: decision
                            .get("updatedInput")
                            .filter(|v| v.is_object())
                            .cloned(),
                        interrupt: decision.get("interrupt").and_then(Value::as_bool) == Some(true),
                    });
                }
            }
        }
        _ => {}
    }
}

fn cap(text: &str) -> String {
    truncate_middle(text, OUTPUT_CAP)
}

/// The merged outcome of every run of one event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookOutcome {
    /// Handlers that ran (background ones not counted).
    pub ran: usize,
    /// Block reasons, in configuration order.
    pub blocks: Vec<String>,
    /// `continue:false` from any run: its `stopReason`s (possibly empty strings).
    pub stops: Vec<String>,
    /// `systemMessage`s, shown to the user.
    pub system_messages: Vec<String>,
    /// `additionalContext` (or plain stdout where that is context), for the model.
    pub contexts: Vec<String>,
    /// The strongest PreToolUse decision: deny > ask > allow.
    pub permission: Option<ToolPermissionDecision>,
    /// A PermissionRequest answer: deny wins over allow.
    pub permission_request: Option<PermissionRequestDecision>,
    /// The last `updatedInput` in configuration order.
    pub updated_input: Option<Value>,
    /// Problems to show the user (exit 1, timeouts, invalid JSON…).
    pub notices: Vec<String>,
}

impl HookOutcome {
    /// Folds one run's verdict in.
    pub(crate) fn absorb(&mut self, verdict: RunVerdict) {
        self.ran += 1;
        self.blocks.extend(verdict.block);
        self.stops.extend(verdict.stop);
        self.system_messages.extend(verdict.system_message);
        self.contexts.extend(verdict.context);
        self.notices.extend(verdict.notice);
        if let Some(p) = verdict.permission {
            let stronger = self
                .permission
                .as_ref()
                .is_none_or(|current| p.decision > current.decision);
            if stronger {
                self.permission = Some(p);
            }
        }
        if let Some(p) = verdict.permission_request {
            let replace = match &self.permission_request {
                None => true,
                Some(current) => current.allow && !p.allow,
            };
            if replace {
                self.permission_request = Some(p);
            }
        }
        if verdict.updated_input.is_some() {
            self.updated_input = verdict.updated_input;
        }
    }

    /// All block reasons as one message.
    pub fn block_reason(&self) -> Option<String> {
        (!self.blocks.is_empty()).then(|| self.blocks.join("\n"))
    }

    /// Whether some run said `continue:false`; the joined reasons (possibly empty).
    pub fn stop_reason(&self) -> Option<String> {
        (!self.stops.is_empty()).then(|| {
            self.stops
                .iter()
                .filter(|s| !s.is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    /// `additionalContext` of all runs wrapped as one system reminder.
    pub fn context_reminder(&self) -> Option<String> {
        (!self.contexts.is_empty()).then(|| system_reminder(&self.contexts.join("\n\n")))
    }
}

/// Wraps text the way Claude Code injects hook context.
pub fn system_reminder(text: &str) -> String {
    format!("<system-reminder>\n{text}\n</system-reminder>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(code: i32, stdout: &str, stderr: &str) -> RawRun {
        RawRun {
            ending: RunEnding::Exited(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn exit_codes_follow_claude_code() {
        let blocked = interpret(HookEvent::PreToolUse, "h", &run(2, "", "no rm please\n"));
        assert_eq!(blocked.block.as_deref(), Some("no rm please"));
        let warn = interpret(HookEvent::PreToolUse, "h", &run(1, "", "oops\nmore"));
        assert!(warn.block.is_none());
        let notice = warn.notice.unwrap();
        assert!(notice.contains("non-blocking status code 1") && notice.contains("oops"));
        assert!(!notice.contains("more"));
        let missing = interpret(
            HookEvent::Stop,
            "nope.sh",
            &run(127, "", "sh: nope.sh: not found"),
        );
        assert!(missing.notice.unwrap().contains("command not found"));
        // Exit 2 on an event that cannot block only tells the user.
        let start = interpret(HookEvent::SessionStart, "h", &run(2, "", "meh"));
        assert!(start.block.is_none() && start.notice.is_some());
        let timed_out = interpret(
            HookEvent::PreToolUse,
            "slow",
            &RawRun {
                ending: RunEnding::TimedOut,
                stdout: String::new(),
                stderr: String::new(),
            },
        );
        assert!(timed_out.notice.unwrap().contains("timed out"));
        assert!(timed_out.permission.is_none() && timed_out.block.is_none());
    }

    #[test]
    fn plain_stdout_is_context_only_for_prompt_and_session_start() {
        let prompt = interpret(
            HookEvent::UserPromptSubmit,
            "h",
            &run(0, "today is Tuesday\n", ""),
        );
        assert_eq!(prompt.context.as_deref(), Some("today is Tuesday"));
        let pre = interpret(HookEvent::PreToolUse, "h", &run(0, "log line", ""));
        assert_eq!(pre, RunVerdict::default());
        let garbage = interpret(HookEvent::PreToolUse, "h", &run(0, "{not json", ""));
        assert!(garbage.notice.unwrap().contains("invalid JSON"));
        assert!(garbage.permission.is_none());
    }

    #[test]
    fn json_output_controls_the_event() {
        let out = json!({
            "continue": false, "stopReason": "Build failed", "systemMessage": "careful",
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": "Destructive", "updatedInput": {"command": "ls"},
                "additionalContext": "ctx"}
        });
        let v = interpret(HookEvent::PreToolUse, "h", &run(0, &out.to_string(), ""));
        assert_eq!(v.stop.as_deref(), Some("Build failed"));
        assert_eq!(v.system_message.as_deref(), Some("careful"));
        assert_eq!(
            v.permission,
            Some(ToolPermissionDecision {
                decision: ToolPermission::Deny,
                reason: Some("Destructive".into())
            })
        );
        assert_eq!(v.updated_input, Some(json!({"command": "ls"})));
        assert_eq!(v.context.as_deref(), Some("ctx"));

        let stop =
            json!({"decision": "block", "reason": "keep going", "systemMessage": "iteration 2"});
        let v = interpret(HookEvent::Stop, "h", &run(0, &stop.to_string(), ""));
        assert_eq!(v.block.as_deref(), Some("keep going"));
        let legacy = interpret(
            HookEvent::PreToolUse,
            "h",
            &run(0, r#"{"decision":"approve"}"#, ""),
        );
        assert_eq!(legacy.permission.unwrap().decision, ToolPermission::Allow);
        // Exit 1 with valid JSON: the JSON still decides, and the user is told.
        let v = interpret(HookEvent::Stop, "h", &run(1, &stop.to_string(), "x"));
        assert!(v.block.is_some() && v.notice.is_some());
        // Exit 2 ignores stdout JSON: allow cannot override it.
        let allow = json!({"hookSpecificOutput": {"permissionDecision": "allow"}});
        let v = interpret(
            HookEvent::PreToolUse,
            "h",
            &run(2, &allow.to_string(), "no"),
        );
        assert!(v.permission.is_none() && v.block.is_some());
    }

    #[test]
    fn permission_request_answers_parse_and_deny_wins() {
        let allow = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": {"command": "ls -a"}}}});
        let deny = json!({"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "no", "interrupt": true}}});
        let mut outcome = HookOutcome::default();
        outcome.absorb(interpret(
            HookEvent::PermissionRequest,
            "a",
            &run(0, &allow.to_string(), ""),
        ));
        assert!(outcome.permission_request.as_ref().unwrap().allow);
        outcome.absorb(interpret(
            HookEvent::PermissionRequest,
            "d",
            &run(0, &deny.to_string(), ""),
        ));
        let answer = outcome.permission_request.unwrap();
        assert!(!answer.allow && answer.interrupt);
        assert_eq!(answer.message.as_deref(), Some("no"));
    }

    #[test]
    fn outcomes_merge_with_deny_over_ask_over_allow() {
        let decision = |d: &str| {
            interpret(
                HookEvent::PreToolUse,
                "h",
                &run(
                    0,
                    &json!({"hookSpecificOutput": {"permissionDecision": d}}).to_string(),
                    "",
                ),
            )
        };
        let mut outcome = HookOutcome::default();
        outcome.absorb(decision("allow"));
        outcome.absorb(decision("deny"));
        outcome.absorb(decision("ask"));
        assert_eq!(outcome.permission.unwrap().decision, ToolPermission::Deny);
        let mut contexts = HookOutcome::default();
        contexts.absorb(RunVerdict {
            context: Some("a".into()),
            ..RunVerdict::default()
        });
        contexts.absorb(RunVerdict {
            context: Some("b".into()),
            stop: Some(String::new()),
            ..RunVerdict::default()
        });
        assert_eq!(
            contexts.context_reminder().unwrap(),
            "<system-reminder>\na\n\nb\n</system-reminder>"
        );
        assert_eq!(contexts.stop_reason().as_deref(), Some(""));
        assert_eq!(contexts.ran, 2);
    }
}
