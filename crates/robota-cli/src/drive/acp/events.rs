//! One session's events as ACP: text, thoughts, tool calls and their results (with the
//! client's terminal when it ran the command), the plan, mode and model changes as
//! `session/update`s; a submission's end answers its `session/prompt` with a stop reason.

use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, CurrentModeUpdate, PromptResponse, SessionUpdate, StopReason,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};

use crate::core::{Block, ToolDisplay};
use crate::sdk::{ErrorKind, SessionEvent, TurnEnd};

use super::{Driver, INTERNAL_ERROR, client_host, failure, open, reply, updates};

impl Driver {
    pub(super) fn on_event(&mut self, key: &str, event: SessionEvent) {
        let Some(live) = self.sessions.get_mut(key) else {
            return;
        };
        let mut out = Vec::new();
        match event {
            SessionEvent::TextDelta(text) => out.push(updates::agent_text(text)),
            SessionEvent::ThinkingDelta(text) => out.push(updates::agent_thought(text)),
            SessionEvent::AssistantMessage {
                message,
                stop_reason,
                ..
            } => {
                if stop_reason.as_deref() == Some("refusal") {
                    live.refused = true;
                }
                for block in &message.content {
                    if let Block::ToolUse { id, name, input } = block {
                        out.push(updates::tool_call(id, name, input));
                    }
                }
            }
            SessionEvent::ToolStarted { id, .. } => {
                out.push(updates::status_update(&id, ToolCallStatus::InProgress));
            }
            SessionEvent::ToolFinished {
                id,
                content,
                is_error,
                display,
                ..
            } => {
                let mut finished =
                    updates::tool_finished(&id, &content, is_error, display.as_ref());
                if let Some(terminal) = client_host::take_shown(&self.terminals, &id)
                    && let SessionUpdate::ToolCallUpdate(update) = &mut finished
                {
                    let content = update.fields.content.get_or_insert_with(Vec::new);
                    content.insert(0, client_host::terminal_content(&terminal));
                }
                out.push(finished);
                if let Some(ToolDisplay::Todos { todos }) = &display {
                    out.push(updates::plan(todos));
                }
            }
            SessionEvent::PermissionDenied {
                tool_use_id,
                reason,
                ..
            } => out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                tool_use_id,
                ToolCallUpdateFields::new()
                    .status(ToolCallStatus::Failed)
                    .content(vec![updates::text_block(reason).into()]),
            ))),
            SessionEvent::PermissionRequest(request) => {
                self.ask(key, request);
                return;
            }
            SessionEvent::State(state) => {
                if state.mode != live.mode {
                    live.mode = state.mode;
                    out.push(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                        state.mode.as_str(),
                    )));
                }
                if state.model != live.model {
                    live.model = state.model.clone();
                    out.push(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                        vec![open::model_option(&live.provider, &live.model)],
                    )));
                }
            }
            SessionEvent::SubmissionStarted { id, .. } if live.prompts.contains_key(&id) => {
                live.refused = false;
            }
            SessionEvent::CommandOutput { id, output, .. }
                if live.prompts.contains_key(&id) && !output.is_empty() =>
            {
                out.push(updates::agent_text(output));
            }
            SessionEvent::ShellOutput {
                id,
                command,
                output,
                ..
            } if live.prompts.contains_key(&id) => {
                out.push(updates::agent_text(format!("$ {command}\n{output}")));
            }
            SessionEvent::Compacted {
                pre_tokens,
                post_tokens,
                ..
            } => out.push(updates::agent_text(format!(
                "\n\n(Compacted the conversation: {pre_tokens} → {post_tokens} tokens.)\n\n"
            ))),
            SessionEvent::SubmissionEnded { id, outcome } => {
                if let Some(responder) = live.prompts.remove(&id) {
                    let answer = match outcome.end {
                        TurnEnd::Success if live.refused => Ok(StopReason::Refusal),
                        TurnEnd::Success => Ok(StopReason::EndTurn),
                        TurnEnd::Interrupted => Ok(StopReason::Cancelled),
                        TurnEnd::MaxTurns => Ok(StopReason::MaxTurnRequests),
                        TurnEnd::ContextFull => Ok(StopReason::MaxTokens),
                        TurnEnd::Error(e)
                            if matches!(
                                e.kind,
                                ErrorKind::UnknownCommand | ErrorKind::CommandFailed
                            ) =>
                        {
                            out.push(updates::agent_text(e.line()));
                            Ok(StopReason::EndTurn)
                        }
                        TurnEnd::Error(e) => Err(failure(INTERNAL_ERROR, e.line())),
                    };
                    for update in out.drain(..) {
                        self.notify(key, update);
                    }
                    reply(responder, answer.map(PromptResponse::new));
                }
                return;
            }
            // An abort drops what waited behind the turn: those prompts were cancelled too.
            SessionEvent::SubmissionDropped(queued) => {
                if let Some(responder) = live.prompts.remove(&queued.id) {
                    reply(responder, Ok(PromptResponse::new(StopReason::Cancelled)));
                }
            }
            SessionEvent::Warning(text) | SessionEvent::Notice(text) => eprintln!("robota: {text}"),
            SessionEvent::Retrying {
                attempt,
                max_attempts,
                error,
                ..
            } => eprintln!("robota: retrying ({attempt}/{max_attempts}): {error}"),
            _ => {}
        }
        for update in out {
            self.notify(key, update);
        }
    }
}
