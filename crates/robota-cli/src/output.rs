//! Print-mode output in Claude Code's shapes: the `system/init`, `assistant`, `user`,
//! `stream_event`, `system/api_retry`, `system/compact_boundary` and `result` messages, and the totals a result
//! carries (usage, cost, per-model usage, permission denials).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::core::{Message, Usage, models};
use crate::sdk::{SessionState, TurnEnd};

/// Totals gathered over a print-mode run.
#[derive(Debug, Default)]
pub struct RunTotals {
    pub usage: Usage,
    pub by_model: BTreeMap<String, (Usage, Option<f64>)>,
    /// `None` once any call's price was unknown.
    pub cost_known: bool,
    pub cost_usd: f64,
    pub api_duration: Duration,
    pub num_turns: u32,
    pub permission_denials: Vec<Value>,
    pub errors: Vec<String>,
    /// `--max-budget-usd` was reached during this run.
    pub budget_exceeded: bool,
    pub structured: Structured,
}

/// The structured answer of a `--json-schema` run.
#[derive(Debug, Default, Clone, PartialEq)]
pub enum Structured {
    /// No schema was asked for.
    #[default]
    NotAsked,
    /// The turn ended without a valid `StructuredOutput` call.
    Missing,
    Given(Value),
}

impl RunTotals {
    pub fn new() -> Self {
        RunTotals {
            cost_known: true,
            ..RunTotals::default()
        }
    }

    /// Takes the usage and cost totals from the session's state.
    pub fn set_usage(&mut self, state: &SessionState) {
        self.usage = state.usage;
        self.cost_known = state.cost_usd.is_some();
        self.cost_usd = state.cost_usd.unwrap_or_default();
        self.by_model = state
            .models
            .iter()
            .map(|m| (m.model.clone(), (m.usage, m.cost_usd)))
            .collect();
    }

    /// Adds one provider call's usage and cost (for totals of a single turn).
    pub fn add_call(&mut self, model: &str, usage: &Usage, cost: Option<f64>) {
        self.usage.add(usage);
        self.cost_known &= cost.is_some();
        self.cost_usd += cost.unwrap_or_default();
        let entry = self
            .by_model
            .entry(model.to_string())
            .or_insert((Usage::default(), Some(0.0)));
        entry.0.add(usage);
        entry.1 = entry.1.zip(cost).map(|(a, b)| a + b);
    }
}

/// The Claude Code version whose stream-json and control protocol robota speaks, sent as
/// `claude_code_version` in `system/init` (the Agent SDK warns about a CLI without one, or
/// one below 2.0.0).
pub const CLAUDE_CODE_COMPAT_VERSION: &str = "2.0.0";

pub fn init_message(
    session_id: &str,
    cwd: &str,
    model: &str,
    tools: &[String],
    mode: &str,
    api_key_source: &str,
    slash_commands: &[String],
) -> Value {
    json!({
        "type": "system",
        "subtype": "init",
        "uuid": uuid::Uuid::new_v4().to_string(),
        "session_id": session_id,
        "cwd": cwd,
        "model": model,
        "tools": tools,
        "mcp_servers": [],
        "permissionMode": mode,
        "slash_commands": slash_commands,
        "apiKeySource": api_key_source,
        "robota_version": env!("CARGO_PKG_VERSION"),
        "claude_code_version": CLAUDE_CODE_COMPAT_VERSION,
        "output_style": "default",
        "agents": [],
        "skills": [],
        "plugins": [],
    })
}

pub fn assistant_message(
    session_id: &str,
    message: &Message,
    model: &str,
    stop_reason: Option<&str>,
) -> Value {
    let mut inner = json!({
        "id": message.id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": message.content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": message.usage,
    });
    if message.state == crate::core::MessageState::Interrupted
        && let Some(obj) = inner.as_object_mut()
    {
        obj.insert("interrupted".into(), json!(true));
    }
    json!({
        "type": "assistant",
        "uuid": message.id,
        "session_id": session_id,
        "parent_tool_use_id": null,
        "message": inner,
    })
}

pub fn user_message(session_id: &str, message: &Message) -> Value {
    json!({
        "type": "user",
        "uuid": message.id,
        "session_id": session_id,
        "parent_tool_use_id": null,
        "message": {"role": "user", "content": message.content},
    })
}

pub fn stream_event(session_id: &str, event: Value) -> Value {
    json!({
        "type": "stream_event",
        "uuid": uuid::Uuid::new_v4().to_string(),
        "session_id": session_id,
        "parent_tool_use_id": null,
        "event": event,
    })
}

pub fn retry_message(
    session_id: &str,
    attempt: u32,
    max_attempts: u32,
    delay: Duration,
    error: &str,
) -> Value {
    json!({
        "type": "system",
        "subtype": "api_retry",
        "uuid": uuid::Uuid::new_v4().to_string(),
        "session_id": session_id,
        "attempt": attempt,
        "max_retries": max_attempts,
        "retry_delay_ms": delay.as_millis() as u64,
        "error": error,
    })
}

/// What a `compact_boundary` message says about its compaction.
#[derive(Debug, Clone, Copy)]
pub struct CompactMetadata {
    /// `manual` or `auto`.
    pub trigger: &'static str,
    /// Why it ran (`requested`, `threshold`, `window_full`, `prompt_too_long`).
    pub reason: &'static str,
    /// The context estimate before, in tokens.
    pub pre_tokens: u64,
    /// The context estimate after, in tokens.
    pub post_tokens: u64,
    /// Summary requests it took.
    pub stages: usize,
    /// Oversized tool results cut before it.
    pub cut_results: usize,
}

/// `system/compact_boundary`: the conversation before this point was replaced by a summary.
/// `compact_metadata` holds Claude Code's `trigger` and `pre_tokens`, and robota's
/// `post_tokens`, `reason`, `stages` and `cut_tool_results`.
pub fn compact_boundary_message(session_id: &str, meta: CompactMetadata) -> Value {
    json!({
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": uuid::Uuid::new_v4().to_string(),
        "session_id": session_id,
        "compact_metadata": {
            "trigger": meta.trigger,
            "pre_tokens": meta.pre_tokens,
            "post_tokens": meta.post_tokens,
            "reason": meta.reason,
            "stages": meta.stages,
            "cut_tool_results": meta.cut_results,
        },
    })
}

/// The final `result` message.
/// A prompt a UserPromptSubmit hook blocked ends a headless turn as Claude Code ends it:
/// successfully (exit 0), with the hook's reason as the result.
pub fn blocked_prompt_as_result(end: TurnEnd, result: String) -> (TurnEnd, String) {
    match end {
        TurnEnd::Error(e) if e.kind == crate::sdk::ErrorKind::HookBlocked => {
            (TurnEnd::Success, e.message)
        }
        end => (end, result),
    }
}

pub fn result_message(
    session_id: &str,
    end: &TurnEnd,
    result: &str,
    duration: Duration,
    totals: &RunTotals,
) -> Value {
    let (subtype, is_error) = match end {
        _ if totals.budget_exceeded => ("error_max_budget_usd", true),
        TurnEnd::Success if totals.structured == Structured::Missing => {
            ("error_max_structured_output_retries", true)
        }
        TurnEnd::Success => ("success", false),
        TurnEnd::MaxTurns => ("error_max_turns", true),
        _ => ("error_during_execution", true),
    };
    let model_usage: serde_json::Map<String, Value> = totals
        .by_model
        .iter()
        .map(|(model, (usage, cost))| {
            let info = models::lookup(model);
            (
                model.clone(),
                json!({
                    "inputTokens": usage.input_tokens,
                    "outputTokens": usage.output_tokens,
                    "cacheReadInputTokens": usage.cache_read_input_tokens,
                    "cacheCreationInputTokens": usage.cache_creation_input_tokens,
                    "webSearchRequests": 0,
                    "costUSD": cost,
                    "contextWindow": info.context_window,
                    "maxOutputTokens": info.max_output,
                }),
            )
        })
        .collect();
    let mut value = json!({
        "type": "result",
        "subtype": subtype,
        "uuid": uuid::Uuid::new_v4().to_string(),
        "session_id": session_id,
        "is_error": is_error,
        "duration_ms": duration.as_millis() as u64,
        "duration_api_ms": totals.api_duration.as_millis() as u64,
        "num_turns": totals.num_turns,
        "result": result,
        "total_cost_usd": if totals.cost_known { json!(totals.cost_usd) } else { Value::Null },
        "usage": totals.usage,
        "modelUsage": model_usage,
        "permission_denials": totals.permission_denials,
    });
    if let Some(obj) = value.as_object_mut() {
        let stop = match end {
            TurnEnd::Success => "end_turn",
            TurnEnd::Interrupted => "interrupted",
            TurnEnd::MaxTurns => "max_turns",
            TurnEnd::ContextFull => "context_full",
            TurnEnd::Error(_) => "error",
        };
        obj.insert("stop_reason".into(), json!(stop));
        if let Structured::Given(value) = &totals.structured {
            obj.insert("structured_output".into(), value.clone());
        }
        if is_error {
            obj.insert("errors".into(), json!(totals.errors));
        }
        if let TurnEnd::Error(error) = end {
            obj.insert("error".into(), json!(error));
        }
    }
    value
}
