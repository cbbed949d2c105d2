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
//!
//! This module holds the driver's loop and its state; `requests` answers the client's
//! requests, `prompt` turns a prompt into a submission, `events` turns session events into
//! updates and prompt answers, `permission` asks the client's permission, and `open`,
//! `updates` and `client_host` do what their headers say.

mod client_host;
mod events;
mod open;
mod permission;
mod prompt;
mod requests;
mod updates;

use std::collections::HashMap;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    ClientCapabilities, ClientNotification, ClientRequest, PromptResponse,
    RequestPermissionResponse, SessionNotification, SessionUpdate,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error, Stdio};
use serde::Serialize;
use tokio::sync::mpsc;

use crate::core::permission::PermissionMode;
use crate::sdk::commands::SubmissionId;
use crate::sdk::{InteractiveSession, PermissionRequest, SessionEvent};

use super::super::args::Args;
use super::super::headless::{EXIT_ERROR, EXIT_OK};
use crate::ProviderFactory;

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
    providers: &'static dyn ProviderFactory,
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
pub async fn run(base: Args, providers: &'static dyn ProviderFactory) -> u8 {
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
            serve(cx, base, providers, inbound_rx).await;
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
    providers: &'static dyn ProviderFactory,
    mut inbound: mpsc::UnboundedReceiver<Inbound>,
) {
    let (internal, mut internal_rx) = mpsc::unbounded_channel();
    let mut driver = Driver {
        cx: cx.clone(),
        base,
        providers,
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

    pub(super) fn live(&mut self, session: &str) -> Result<&mut Live, Error> {
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
}
