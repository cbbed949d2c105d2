//! What the session log records of the engine's events: committed messages (assistant
//! answers with their model and stop reason, tool results), tool starts and ends (and
//! TodoWrite's list), usage per provider call, context state and retries. Streaming deltas
//! are not recorded: the committed message holds them.

use robota_core::engine::EngineEvent;
use robota_core::{StreamEvent, ToolDisplay};

use super::line::{LogEvent, MessageExtra};
use super::log::{LogError, SessionLog};

/// Writes what `event` leaves in the log (nothing for most stream events).
pub fn append_engine_event(log: &SessionLog, event: &EngineEvent) -> Result<(), LogError> {
    if let Some(diagnostics) = log.diagnostics() {
        match event {
            EngineEvent::ToolStarted(call) => diagnostics.tool_request(call),
            EngineEvent::ToolFinished {
                call,
                output,
                duration,
            } => diagnostics.tool_result(call, output, *duration),
            _ => {}
        }
    }
    let event = match event {
        EngineEvent::Assistant {
            message,
            stop_reason,
            model,
        } => {
            let extra = MessageExtra {
                model: Some(model.clone()),
                stop_reason: stop_reason.as_ref().map(|s| s.as_str().to_string()),
            };
            return log.append_message(message, extra);
        }
        EngineEvent::ToolResults(message) => {
            return log.append_message(message, MessageExtra::default());
        }
        EngineEvent::ToolStarted(call) => LogEvent::ToolStart {
            tool: call.name.clone(),
            tool_use_id: call.id.clone(),
            input: call.input.clone(),
        },
        EngineEvent::ToolFinished {
            call,
            output,
            duration,
        } => {
            // The list is written before the end, as it always was; a failure to write it
            // does not keep the end from the log.
            let todos = match &output.display {
                Some(ToolDisplay::Todos { todos }) => log.append_todos(todos),
                _ => Ok(()),
            };
            log.append_event(LogEvent::ToolEnd {
                tool: call.name.clone(),
                tool_use_id: call.id.clone(),
                is_error: output.is_error,
                duration_ms: duration.as_millis() as u64,
                output_chars: output.content.len(),
            })?;
            return todos;
        }
        EngineEvent::Usage {
            usage,
            model,
            api_duration,
        } => LogEvent::Usage {
            model: model.clone(),
            usage: *usage,
            api_duration_ms: api_duration.as_millis() as u64,
        },
        EngineEvent::Context(state) => LogEvent::Context {
            used_tokens: state.used_tokens,
            window: state.window,
        },
        EngineEvent::Stream(StreamEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            error,
            status,
        }) => LogEvent::Retry {
            attempt: *attempt,
            max_attempts: *max_attempts,
            delay_ms: delay.as_millis() as u64,
            error: error.clone(),
            status: *status,
        },
        // The tool results that follow carry steered text.
        EngineEvent::Stream(_) | EngineEvent::ToolProgress { .. } | EngineEvent::Steered(_) => {
            return Ok(());
        }
    };
    log.append_event(event)
}
