//! `robota acp`: robota as an Agent Client Protocol agent on stdio (JSON-RPC 2.0, on the
//! `agent-client-protocol` crate), so editors (Zed, JetBrains, Neovim, Emacs) and harnesses
//! can run it. One connection holds any number of sessions, each an `InteractiveSession`
//! whose one event stream this driver turns into `session/update` notifications, as the
//! TUI renders it and the Agent SDK driver serialises it.
//!
//! The crate's handlers only hand each request (with its responder) to the driver's loop,
//! which owns every session: `initialize`, `authenticate` (nothing to authenticate),
//! `session/new`, `session/load` (history replayed as updates first), `session/prompt`
//! (answered when its submission ends, with its stop reason), `session/cancel`,
//! `session/set_mode` (permission modes) and `session/set_config_option` (the model).
//! Permission questions become `session/request_permission`; "always" saves the rule as
//! the full-screen UI's "don't ask again" does. When the client offers its file system
//! and terminal, the tools read, write and run commands through them (`client_host`).

mod client_host;
mod open;
mod updates;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::v1::schema::{
    AgentCapabilities, AgentResponse, AuthenticateResponse, ClientCapabilities, ClientNotification,
    ClientRequest, ConfigOptionUpdate, ContentBlock, CurrentModeUpdate, EmbeddedResourceResource,
    Implementation, InitializeResponse, LoadSessionResponse, McpCapabilities, NewSessionResponse,
    PermissionOption, PermissionOptionKind, PromptCapabilities, PromptResponse,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SessionNotification, SessionUpdate, SetSessionConfigOptionResponse, SetSessionModeResponse,
    StopReason, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error, Stdio};
use serde::Serialize;
use tokio::sync::mpsc;

use crate::core::message::ImageSource;
use crate::core::permission::PermissionMode;
use crate::core::{Block, ToolDisplay};
use crate::sdk::commands::{Submission, SubmissionId};
use crate::sdk::settings::trust::TrustStore;
use crate::sdk::{
    ErrorKind, InteractiveSession, PermissionChoice, PermissionRequest, SessionEvent, TurnEnd,
};
use crate::session::PermissionAnswer;

use super::super::args::Args;
use super::super::headless::{EXIT_ERROR, EXIT_OK, InputError, checked_image};
use crate::sdk::assembly as paths;

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT_ONCE: &str = "reject_once";

/// What the crate's handlers hand the driver.
enum Inbound {
    Request(Box<ClientRequest>, Responder),
    Notification(ClientNotification),
}

/// What the driver's own tasks hand it back.
enum Internal {
    /// An event of the session opened as `generation` under this id.
    Event(String, u64, SessionEvent),
    /// That session's event stream ended (it was closed).
    Ended(String, u64),
    Permission {
        session: String,
        question: u64,
        answer: Result<RequestPermissionResponse, Error>,
    },
}

/// One open session.
struct Live {
    session: InteractiveSession,
    /// Which opening of this id it is (a session loaded again replaces the earlier copy,
    /// whose last events must not reach the new one).
    generation: u64,
    cwd: PathBuf,
    provider: String,
    model: String,
    mode: PermissionMode,
    /// Whether `bypassPermissions` is among the modes offered (the session started in it).
    bypass: bool,
    /// Prompts waiting for their submission to end.
    prompts: HashMap<SubmissionId, Responder>,
    /// Permission questions sent to the client, by number.
    questions: HashMap<u64, PermissionRequest>,
    /// The running turn's model refused to answer.
    refused: bool,
}

struct Driver {
    cx: ConnectionTo<Client>,
    base: Args,
    sessions: HashMap<String, Live>,
    internal: mpsc::UnboundedSender<Internal>,
    next_question: u64,
    next_generation: u64,
    /// What the client's `initialize` offered (its file system, its terminal).
    offered: ClientCapabilities,
    /// Terminals embedded in tool calls, kept for each call's final update.
    terminals: client_host::ShownTerminals,
}

/// Serves ACP on stdin/stdout until the client closes the connection.
pub async fn run(base: Args) -> u8 {
    let (inbound_tx, inbound_rx) = mpsc::unbounded_channel();
    let notify_tx = inbound_tx.clone();
    let served = Agent
        .v1()
        .name("robota")
        .on_receive_request(
            async move |request: ClientRequest, responder: Responder, _cx| {
                let _ = inbound_tx.send(Inbound::Request(Box::new(request), responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: ClientNotification, _cx| {
                let _ = notify_tx.send(Inbound::Notification(notification));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(Stdio::new(), async move |cx: ConnectionTo<Client>| {
            serve(cx, base, inbound_rx).await;
            Ok(())
        })
        .await;
    match served {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("robota acp: {e}");
            EXIT_ERROR
        }
    }
}

async fn serve(
    cx: ConnectionTo<Client>,
    base: Args,
    mut inbound: mpsc::UnboundedReceiver<Inbound>,
) {
    let (internal, mut internal_rx) = mpsc::unbounded_channel();
    let mut driver = Driver {
        cx: cx.clone(),
        base,
        sessions: HashMap::new(),
        internal,
        next_question: 1,
        next_generation: 1,
        offered: ClientCapabilities::default(),
        terminals: client_host::ShownTerminals::default(),
    };
    loop {
        tokio::select! {
            message = inbound.recv() => match message {
                Some(Inbound::Request(request, responder)) => driver.on_request(*request, responder).await,
                Some(Inbound::Notification(notification)) => driver.on_notification(notification),
                None => break,
            },
            Some(message) = internal_rx.recv() => driver.on_internal(message),
            () = cx.incoming_closed() => break,
        }
    }
    for (_, live) in driver.sessions.drain() {
        live.session.close().await;
    }
}

/// Answers a request with a typed response or an error.
fn reply<T: Serialize>(responder: Responder, answer: Result<T, Error>) {
    let sent =
        match answer.and_then(|r| serde_json::to_value(r).map_err(Error::into_internal_error)) {
            Ok(value) => responder.respond(value),
            Err(error) => responder.respond_with_error(error),
        };
    if let Err(e) = sent {
        tracing::warn!("acp: cannot answer a request: {e}");
    }
}

/// A JSON-RPC error carrying robota's message.
fn failure(code: i32, message: impl Into<String>) -> Error {
    Error::new(code, message.into())
}

const INVALID_PARAMS: i32 = -32602;
const INTERNAL_ERROR: i32 = -32603;

impl Driver {
    fn notify(&self, session: &str, update: SessionUpdate) {
        if let Err(e) = self
            .cx
            .send_notification(SessionNotification::new(session.to_string(), update))
        {
            tracing::warn!("acp: cannot send a session update: {e}");
        }
    }

    async fn on_request(&mut self, request: ClientRequest, responder: Responder) {
        let answer = match request {
            ClientRequest::InitializeRequest(request) => {
                self.offered = request.client_capabilities.clone();
                let capabilities = AgentCapabilities::new()
                    .load_session(true)
                    .prompt_capabilities(
                        PromptCapabilities::new().embedded_context(true).image(true),
                    )
                    .mcp_capabilities(McpCapabilities::new().http(true).sse(true));
                Ok(AgentResponse::InitializeResponse(
                    InitializeResponse::new(request.protocol_version)
                        .agent_capabilities(capabilities)
                        .agent_info(Implementation::new("robota", env!("CARGO_PKG_VERSION"))),
                ))
            }
            ClientRequest::AuthenticateRequest(_) => Ok(AgentResponse::AuthenticateResponse(
                AuthenticateResponse::new(),
            )),
            ClientRequest::NewSessionRequest(request) => {
                return self.open(responder, request.cwd, None, &request.mcp_servers);
            }
            ClientRequest::LoadSessionRequest(request) => {
                let id = request.session_id.0.to_string();
                // Loaded again: the open copy ends first (its log is the one to resume).
                if let Some(old) = self.sessions.remove(&id) {
                    old.session.close().await;
                }
                return self.open(responder, request.cwd, Some(id), &request.mcp_servers);
            }
            ClientRequest::PromptRequest(request) => {
                return self.prompt(&request.session_id.0, &request.prompt, responder);
            }
            ClientRequest::SetSessionModeRequest(request) => self
                .set_mode(&request.session_id.0, &request.mode_id.0)
                .map(|()| AgentResponse::SetSessionModeResponse(SetSessionModeResponse::new())),
            ClientRequest::SetSessionConfigOptionRequest(request) => {
                let value = request.value.as_value_id().map(|v| v.0.to_string());
                self.set_option(&request.session_id.0, &request.config_id.0, value)
                    .map(|options| {
                        AgentResponse::SetSessionConfigOptionResponse(
                            SetSessionConfigOptionResponse::new(options),
                        )
                    })
            }
            other => Err(failure(
                -32601,
                format!("robota does not handle {}", request_method(&other)),
            )),
        };
        reply(responder, answer);
    }

    fn on_notification(&mut self, notification: ClientNotification) {
        if let ClientNotification::CancelNotification(cancel) = notification
            && let Some(live) = self.sessions.get(cancel.session_id.0.as_ref())
        {
            live.session.abort();
        }
    }

    /// `session/new` (no `resume`) or `session/load`: the session starts; a loaded one's
    /// history is sent as updates before the answer; then the commands it offers.
    fn open(
        &mut self,
        responder: Responder,
        cwd: PathBuf,
        resume: Option<String>,
        servers: &[agent_client_protocol::v1::schema::McpServer],
    ) {
        let loading = resume.is_some();
        let session_id = Arc::new(OnceLock::new());
        let host =
            client_host::tool_host(&self.cx, &self.offered, session_id.clone(), &self.terminals);
        let opened = match open::open(&self.base, &cwd, resume.as_deref(), servers, &host) {
            Ok(opened) => opened,
            Err(e) => {
                let _ = responder.respond_with_error(failure(INVALID_PARAMS, e.to_string()));
                return;
            }
        };
        for warning in &opened.warnings {
            eprintln!("robota: {warning}");
        }
        let key = opened.id.clone();
        let _ = session_id.set(key.clone());
        let bypass = opened.mode == PermissionMode::BypassPermissions;
        let modes = open::modes(opened.mode, bypass);
        let options = vec![open::model_option(&opened.provider, &opened.model)];
        if loading {
            for update in updates::replay(&opened.history) {
                self.notify(&key, update);
            }
        }
        let answer = if loading {
            AgentResponse::LoadSessionResponse(
                LoadSessionResponse::new()
                    .modes(modes)
                    .config_options(options),
            )
        } else {
            AgentResponse::NewSessionResponse(
                NewSessionResponse::new(key.clone())
                    .modes(modes)
                    .config_options(options),
            )
        };
        reply(responder, Ok(answer));
        let commands = updates::available_commands(opened.session.command_entries());
        self.notify(&key, commands);
        let generation = self.next_generation;
        self.next_generation += 1;
        let mut events = opened.events;
        let internal = self.internal.clone();
        let forward_key = key.clone();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                if internal
                    .send(Internal::Event(forward_key.clone(), generation, event))
                    .is_err()
                {
                    return;
                }
            }
            let _ = internal.send(Internal::Ended(forward_key, generation));
        });
        self.sessions.insert(
            key,
            Live {
                session: opened.session,
                generation,
                cwd,
                provider: opened.provider,
                model: opened.model,
                mode: opened.mode,
                bypass,
                prompts: HashMap::new(),
                questions: HashMap::new(),
                refused: false,
            },
        );
    }

    /// `session/prompt`: the prompt goes into the session's queue; the answer waits for
    /// its submission to end.
    fn prompt(&mut self, session: &str, prompt: &[ContentBlock], responder: Responder) {
        let Some(live) = self.sessions.get_mut(session) else {
            let _ = responder.respond_with_error(failure(
                INVALID_PARAMS,
                format!("no open session {session}"),
            ));
            return;
        };
        let text = prompt_text(prompt);
        let images = match prompt_images(prompt) {
            Ok(images) => images,
            Err(problem) => {
                let _ = responder.respond_with_error(failure(INVALID_PARAMS, problem.to_string()));
                return;
            }
        };
        if text.trim().is_empty() && images.is_empty() {
            let _ = responder.respond_with_error(failure(INVALID_PARAMS, "the prompt has no text"));
            return;
        }
        let submission = if images.is_empty() {
            Submission::parse(&text)
        } else {
            Submission::with_images(text, images)
        };
        let id = live.session.submit(submission);
        live.prompts.insert(id, responder);
    }

    fn set_mode(&mut self, session: &str, mode: &str) -> Result<(), Error> {
        let live = self.live(session)?;
        let parsed = PermissionMode::parse(mode)
            .filter(|m| live.bypass || *m != PermissionMode::BypassPermissions)
            .ok_or_else(|| {
                let offered: Vec<String> = open::modes(live.mode, live.bypass)
                    .available_modes
                    .iter()
                    .map(|m| m.id.0.to_string())
                    .collect();
                failure(
                    INVALID_PARAMS,
                    format!("unknown mode {mode:?} (one of {})", offered.join(", ")),
                )
            })?;
        live.session.set_mode(parsed);
        Ok(())
    }

    /// `session/set_config_option` for the model: `/model X` goes into the session's queue
    /// (it applies from the next turn on).
    fn set_option(
        &mut self,
        session: &str,
        option: &str,
        value: Option<String>,
    ) -> Result<Vec<agent_client_protocol::v1::schema::SessionConfigOption>, Error> {
        let live = self.live(session)?;
        if option != open::MODEL_OPTION {
            return Err(failure(INVALID_PARAMS, format!("no option {option:?}")));
        }
        let model = value
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty() && !v.contains(char::is_whitespace))
            .ok_or_else(|| failure(INVALID_PARAMS, "the model must be a model name"))?;
        live.session
            .submit(Submission::parse(&format!("/model {model}")));
        Ok(vec![open::model_option(&live.provider, &model)])
    }

    fn live(&mut self, session: &str) -> Result<&mut Live, Error> {
        self.sessions
            .get_mut(session)
            .ok_or_else(|| failure(INVALID_PARAMS, format!("no open session {session}")))
    }

    fn on_internal(&mut self, message: Internal) {
        match message {
            Internal::Event(session, generation, event) => {
                if self.is_current(&session, generation) {
                    self.on_event(&session, event);
                }
            }
            Internal::Ended(session, generation) => {
                if self.is_current(&session, generation)
                    && let Some(live) = self.sessions.remove(&session)
                {
                    for (_, responder) in live.prompts {
                        reply::<PromptResponse>(
                            responder,
                            Err(failure(INTERNAL_ERROR, "the session ended")),
                        );
                    }
                }
            }
            Internal::Permission {
                session,
                question,
                answer,
            } => self.on_permission(&session, question, answer),
        }
    }

    fn is_current(&self, key: &str, generation: u64) -> bool {
        self.sessions
            .get(key)
            .is_some_and(|live| live.generation == generation)
    }

    fn on_event(&mut self, key: &str, event: SessionEvent) {
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

    /// A permission question, asked of the client as `session/request_permission`.
    fn ask(&mut self, key: &str, request: PermissionRequest) {
        let number = self.next_question;
        self.next_question += 1;
        let options = request
            .choices
            .iter()
            .map(|choice| match choice {
                PermissionChoice::Allow => {
                    PermissionOption::new(ALLOW_ONCE, "Allow", PermissionOptionKind::AllowOnce)
                }
                PermissionChoice::AllowAlways { rule } => PermissionOption::new(
                    ALLOW_ALWAYS,
                    format!("Always allow {rule}"),
                    PermissionOptionKind::AllowAlways,
                ),
                PermissionChoice::Deny => {
                    PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce)
                }
            })
            .collect();
        let call = updates::permission_call(
            &request.tool_use_id,
            &request.tool_name,
            &request.input,
            request.preview.as_ref(),
        );
        let question = RequestPermissionRequest::new(key.to_string(), call, options);
        let internal = self.internal.clone();
        let session = key.to_string();
        let sent = self
            .cx
            .send_request(question)
            .on_receiving_result(async move |answer| {
                let _ = internal.send(Internal::Permission {
                    session,
                    question: number,
                    answer,
                });
                Ok(())
            });
        let Some(live) = self.sessions.get_mut(key) else {
            return;
        };
        match sent {
            Ok(()) => {
                live.questions.insert(number, request);
            }
            Err(e) => {
                let mut request = request;
                request.respond(PermissionAnswer::Deny(Some(format!(
                    "the editor could not be asked: {e}"
                ))));
            }
        }
    }

    fn on_permission(
        &mut self,
        key: &str,
        number: u64,
        answer: Result<RequestPermissionResponse, Error>,
    ) {
        let Some(live) = self.sessions.get_mut(key) else {
            return;
        };
        let Some(mut request) = live.questions.remove(&number) else {
            return;
        };
        let outcome = match answer {
            Ok(response) => response.outcome,
            Err(e) => {
                request.respond(PermissionAnswer::Deny(Some(format!(
                    "the permission question failed: {e}"
                ))));
                return;
            }
        };
        match outcome {
            RequestPermissionOutcome::Selected(selected) => match selected.option_id.0.as_ref() {
                ALLOW_ONCE => request.respond(PermissionAnswer::Allow),
                ALLOW_ALWAYS if !request.suggested_rule.is_empty() => {
                    match request.allow_and_save(&live.cwd) {
                        Ok(path) => {
                            let home = paths::robota_home();
                            if let Err(e) = TrustStore::load(&home)
                                .remember_saved_rule(&live.cwd, &request.suggested_rule)
                            {
                                eprintln!(
                                    "robota: cannot record the rule in {}: {e}",
                                    home.display()
                                );
                            }
                            eprintln!(
                                "robota: saved {} to {} — robota won't ask again",
                                request.suggested_rule,
                                path.display()
                            );
                        }
                        Err(e) => eprintln!(
                            "robota: allowed {} for this session, but saving the rule failed: {e}",
                            request.suggested_rule
                        ),
                    }
                }
                REJECT_ONCE => request.respond(PermissionAnswer::Deny(None)),
                other => request.respond(PermissionAnswer::Deny(Some(format!(
                    "the editor answered with an unknown option {other:?}"
                )))),
            },
            RequestPermissionOutcome::Cancelled => request.respond(PermissionAnswer::Deny(Some(
                "the editor cancelled the question".to_string(),
            ))),
            #[allow(unreachable_patterns)]
            _ => request.respond(PermissionAnswer::Deny(None)),
        }
    }
}

/// The method name of a request robota does not handle, for its error.
fn request_method(request: &ClientRequest) -> String {
    serde_json::to_value(request)
        .ok()
        .and_then(|v| v.get("method").and_then(|m| m.as_str()).map(str::to_string))
        .unwrap_or_else(|| "this request".to_string())
}

/// A prompt's blocks as robota's one text: text as is, resource links as `@path`, embedded
/// text resources as context blocks (what the editor has open, unsaved edits included).
fn prompt_text(prompt: &[ContentBlock]) -> String {
    let mut text = String::new();
    for block in prompt {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ResourceLink(link) => {
                let path = link.uri.strip_prefix("file://").unwrap_or(&link.uri);
                text.push_str(&format!("@{path}"));
            }
            ContentBlock::Resource(resource) => {
                if let EmbeddedResourceResource::TextResourceContents(contents) = &resource.resource
                {
                    let uri = contents
                        .uri
                        .strip_prefix("file://")
                        .unwrap_or(&contents.uri);
                    text.push_str(&format!(
                        "\n<context ref=\"{uri}\">\n{}\n</context>\n",
                        contents.text
                    ));
                }
            }
            _ => {}
        }
    }
    text
}

/// A prompt's image blocks, checked (PNG, JPEG, GIF or WebP up to 5 MB); `Err` names the
/// first that is not one.
fn prompt_images(prompt: &[ContentBlock]) -> Result<Vec<ImageSource>, InputError> {
    let mut images = Vec::new();
    for block in prompt {
        if let ContentBlock::Image(image) = block {
            let source = ImageSource::base64(&image.mime_type, &image.data);
            images.push(checked_image(images.len() + 1, &source)?);
        }
    }
    Ok(images)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{ImageContent, ResourceLink, TextContent};

    #[test]
    fn prompt_images_are_checked() {
        let png = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            crate::core::image::fixtures::PNG_1X1,
        );
        let blocks = vec![
            ContentBlock::Text(TextContent::new("what is it?")),
            ContentBlock::Image(ImageContent::new(png.clone(), "image/png")),
        ];
        assert_eq!(
            prompt_images(&blocks).unwrap(),
            vec![ImageSource::base64("image/png", png)]
        );
        let bad = vec![ContentBlock::Image(ImageContent::new(
            "aGVsbG8=",
            "image/png",
        ))];
        let err = prompt_images(&bad).unwrap_err();
        assert!(matches!(err, InputError::Image { n: 1, .. }), "{err}");
        assert!(err.to_string().starts_with("image 1: "), "{err}");
    }

    #[test]
    fn prompt_blocks_become_one_text() {
        let blocks = vec![
            ContentBlock::Text(TextContent::new("look at ")),
            ContentBlock::ResourceLink(ResourceLink::new("a.rs", "file:///p/a.rs")),
        ];
        assert_eq!(prompt_text(&blocks), "look at @/p/a.rs");
    }
}
