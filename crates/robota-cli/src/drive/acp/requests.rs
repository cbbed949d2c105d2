//! The client's requests other than `session/prompt`'s content: `initialize` (what the
//! client offers is kept), `authenticate`, `session/new` and `session/load` (opening the
//! session, replaying a loaded one's history), `session/set_mode`,
//! `session/set_config_option` (the model) and the `session/cancel` notification.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Error;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AgentResponse, AuthenticateResponse, ClientNotification, ClientRequest,
    Implementation, InitializeResponse, LoadSessionResponse, McpCapabilities, NewSessionResponse,
    PromptCapabilities, SetSessionConfigOptionResponse, SetSessionModeResponse,
};

use crate::core::permission::PermissionMode;
use crate::sdk::commands::Submission;

use super::{Driver, INVALID_PARAMS, Internal, Live, client_host, failure, open, reply, updates};

impl Driver {
    pub(super) async fn on_request(&mut self, request: ClientRequest, responder: Responder) {
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

    pub(super) fn on_notification(&mut self, notification: ClientNotification) {
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
        let opened = match open::open(
            &self.base,
            self.providers,
            &cwd,
            resume.as_deref(),
            servers,
            &host,
        ) {
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
}

/// The method name of a request robota does not handle, for its error.
fn request_method(request: &ClientRequest) -> String {
    serde_json::to_value(request)
        .ok()
        .and_then(|v| v.get("method").and_then(|m| m.as_str()).map(str::to_string))
        .unwrap_or_else(|| "this request".to_string())
}
