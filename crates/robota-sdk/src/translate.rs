//! Session updates (engine stream events, committed messages, tool runs, permission
//! questions, hook runs) mapped onto the client events they stand for.

use robota_core::engine::EngineEvent;
use robota_core::hooks::HookProgress;
use robota_core::{StreamEvent, models};
use robota_session::SessionUpdate;

use super::commands::SubmissionId;
use super::events::{PermissionRequest, QueuedSubmission, SessionEvent};

/// Maps a session update onto the client events it stands for.
pub(super) fn translate(update: SessionUpdate) -> Option<SessionEvent> {
    let event = match update {
        SessionUpdate::Engine(event) => match event {
            EngineEvent::Stream(stream) => match stream {
                StreamEvent::TextDelta(t) => SessionEvent::TextDelta(t),
                StreamEvent::ThinkingDelta(t) => SessionEvent::ThinkingDelta(t),
                StreamEvent::ToolUseStart { id, name } => {
                    SessionEvent::ToolUseStreaming { id, name }
                }
                StreamEvent::ServerToolUse { id, name } => {
                    SessionEvent::ToolUseStreaming { id, name }
                }
                StreamEvent::ToolInputDelta { id, partial_json } => {
                    SessionEvent::ToolInputDelta { id, partial_json }
                }
                StreamEvent::Retrying {
                    attempt,
                    max_attempts,
                    delay,
                    error,
                    ..
                } => SessionEvent::Retrying {
                    attempt,
                    max_attempts,
                    delay,
                    error,
                },
                StreamEvent::AttemptDiscarded => SessionEvent::AttemptDiscarded,
            },
            EngineEvent::Assistant {
                message,
                stop_reason,
                model,
            } => SessionEvent::AssistantMessage {
                message,
                stop_reason: stop_reason.map(|s| s.as_str().to_string()),
                model,
            },
            EngineEvent::ToolStarted(call) => SessionEvent::ToolStarted {
                id: call.id,
                name: call.name,
                input: call.input,
            },
            EngineEvent::ToolProgress { id, tail } => {
                SessionEvent::ToolOutputTail { id, lines: tail }
            }
            EngineEvent::ToolFinished {
                call,
                output,
                duration,
            } => SessionEvent::ToolFinished {
                id: call.id,
                name: call.name,
                input: call.input,
                content: output.content,
                is_error: output.is_error,
                display: output.display,
                duration,
            },
            EngineEvent::Steered(steered) => SessionEvent::SteeringSent(
                steered
                    .into_iter()
                    .map(|(id, text)| QueuedSubmission {
                        id: SubmissionId(id),
                        text,
                    })
                    .collect(),
            ),
            EngineEvent::ToolResults(message) => SessionEvent::ToolResults(message),
            EngineEvent::Usage {
                usage,
                model,
                api_duration,
            } => SessionEvent::Usage {
                cost_usd: models::lookup(&model).price.map(|p| p.cost(&usage)),
                usage,
                model,
                api_duration,
            },
            EngineEvent::Context(state) => SessionEvent::Context(state),
        },
        SessionUpdate::PermissionAsked {
            call,
            reason,
            suggested_rule,
            preview,
            responder,
        } => SessionEvent::PermissionRequest(PermissionRequest::new(
            call.id,
            call.name,
            call.input,
            reason,
            suggested_rule,
            preview,
            responder,
        )),
        SessionUpdate::PermissionDenied { call, reason } => SessionEvent::PermissionDenied {
            tool_use_id: call.id,
            tool_name: call.name,
            input: call.input,
            reason,
        },
        SessionUpdate::Warning(w) => SessionEvent::Warning(w),
        // The sink puts a mode change into the session state.
        SessionUpdate::ModeChanged(_) => return None,
        SessionUpdate::Notice(n) => SessionEvent::Notice(n),
        SessionUpdate::Hook(HookProgress::Started {
            hook_id,
            event,
            hook_name,
            label,
        }) => SessionEvent::HookStarted {
            hook_id,
            hook_name,
            event,
            label,
        },
        SessionUpdate::Hook(HookProgress::Finished(record)) => SessionEvent::HookFinished(record),
        SessionUpdate::CompactStarted { trigger } => SessionEvent::CompactStarted { trigger },
        SessionUpdate::Compacted(report) => SessionEvent::Compacted {
            trigger: report.trigger,
            reason: report.reason,
            stages: report.stages,
            cut_results: report.cut_results,
            pre_tokens: report.pre_tokens,
            post_tokens: report.post_tokens,
            summary: report.summary,
        },
        SessionUpdate::Subagent {
            parent_tool_use_id,
            agent_type,
            description,
            update,
        } => match translate(*update)? {
            // A subagent's question is asked like the parent's own, naming the subagent.
            SessionEvent::PermissionRequest(mut request) => {
                request.subagent = Some(format!("{agent_type}: {description}"));
                SessionEvent::PermissionRequest(request)
            }
            event => SessionEvent::Subagent {
                parent_tool_use_id,
                agent_type,
                description,
                event: Box::new(event),
            },
        },
    };
    Some(event)
}
