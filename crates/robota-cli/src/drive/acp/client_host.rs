//! The editor's own files and terminal for robota's tools, used when its `initialize`
//! offers them (`clientCapabilities.fs.readTextFile` / `writeTextFile`, `terminal`):
//! [`ClientFiles`] carries Read, Edit and Write's text over `fs/read_text_file` and
//! `fs/write_text_file` (so an unsaved buffer is what the model reads and edits land in
//! the editor); [`ClientTerminal`] runs Bash's foreground commands with `terminal/create`,
//! shows the terminal in the tool call, waits with `terminal/wait_for_exit` (killing it
//! with `terminal/kill` on timeout or cancel), reads `terminal/output`, and releases it.
//! The tools only see `tools::ToolHost`; permissions, hooks and the read-before-edit
//! record run before and around them exactly as for local files.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, CreateTerminalRequest, EnvVariable, KillTerminalRequest,
    ReadTextFileRequest, ReleaseTerminalRequest, SessionNotification, SessionUpdate, Terminal,
    TerminalExitStatus, TerminalId, TerminalOutputRequest, ToolCallContent, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, WaitForTerminalExitRequest, WriteTextFileRequest,
};
use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::tools::{
    HostEnding, HostError, HostFiles, HostTerminal, TerminalCommand, TerminalRun, ToolHost,
};

/// Output the editor keeps of one command (it drops the start beyond this).
const TERMINAL_OUTPUT_LIMIT: u64 = 1024 * 1024;

/// The terminals shown in tool calls, by tool call id, so the call's final update still
/// embeds its terminal.
pub type ShownTerminals = Arc<Mutex<HashMap<String, String>>>;

/// Takes the terminal a tool call ran in, if it ran in one.
pub fn take_shown(shown: &ShownTerminals, tool_use_id: &str) -> Option<String> {
    shown
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(tool_use_id)
}

/// The connection and the id of the session the requests are for (known once the
/// session is put together, before any tool runs).
#[derive(Clone)]
struct ClientSession {
    cx: ConnectionTo<Client>,
    id: Arc<OnceLock<String>>,
}

impl ClientSession {
    fn id(&self) -> Result<String, HostError> {
        self.id.get().cloned().ok_or(HostError::NotReady)
    }
}

/// What the client offers the tools of one session whose id will be set in `id`.
pub fn tool_host(
    cx: &ConnectionTo<Client>,
    offered: &ClientCapabilities,
    id: Arc<OnceLock<String>>,
    shown: &ShownTerminals,
) -> ToolHost {
    let session = ClientSession { cx: cx.clone(), id };
    let files: Arc<dyn HostFiles> = Arc::new(ClientFiles(session.clone()));
    ToolHost {
        reads: offered.fs.read_text_file.then(|| files.clone()),
        writes: offered.fs.write_text_file.then(|| files.clone()),
        terminal: offered.terminal.then(|| {
            Arc::new(ClientTerminal {
                session,
                shown: shown.clone(),
            }) as Arc<dyn HostTerminal>
        }),
    }
}

struct ClientFiles(ClientSession);

#[async_trait]
impl HostFiles for ClientFiles {
    async fn read_text(&self, path: &Path) -> Result<String, HostError> {
        let request = ReadTextFileRequest::new(self.0.id()?, path);
        let response = self
            .0
            .cx
            .send_request(request)
            .block_task()
            .await
            .map_err(|e| HostError::Files(e.into()))?;
        Ok(response.content)
    }

    async fn write_text(&self, path: &Path, text: &str) -> Result<(), HostError> {
        let request = WriteTextFileRequest::new(self.0.id()?, path, text);
        self.0
            .cx
            .send_request(request)
            .block_task()
            .await
            .map(|_| ())
            .map_err(|e| HostError::Files(e.into()))
    }
}

struct ClientTerminal {
    session: ClientSession,
    shown: ShownTerminals,
}

#[async_trait]
impl HostTerminal for ClientTerminal {
    async fn run(
        &self,
        command: TerminalCommand,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<TerminalRun, HostError> {
        let session = self.session.id()?;
        let cx = &self.session.cx;
        let env = command
            .env
            .iter()
            .map(|(name, value)| EnvVariable::new(name.clone(), value.clone()))
            .collect();
        let create = CreateTerminalRequest::new(session.clone(), command.program)
            .args(command.args)
            .env(env)
            .cwd(command.cwd)
            .output_byte_limit(TERMINAL_OUTPUT_LIMIT);
        let created = cx
            .send_request(create)
            .block_task()
            .await
            .map_err(|e| HostError::StartTerminal(e.into()))?;
        let terminal = created.terminal_id;
        self.show(&session, &command.tool_use_id, &terminal);
        let ran = self
            .wait_and_read(&session, &terminal, timeout, cancel)
            .await;
        let released = cx
            .send_request(ReleaseTerminalRequest::new(session, terminal))
            .block_task()
            .await;
        if let Err(e) = released {
            tracing::warn!("acp: cannot release a terminal: {e}");
        }
        ran
    }
}

impl ClientTerminal {
    /// Embeds the terminal in its tool call (the editor shows the output as it comes).
    fn show(&self, session: &str, tool_use_id: &str, terminal: &TerminalId) {
        self.shown
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(tool_use_id.to_string(), terminal.0.to_string());
        let update = SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            tool_use_id.to_string(),
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::InProgress)
                .content(vec![terminal_content(&terminal.0)]),
        ));
        let sent = self
            .session
            .cx
            .send_notification(SessionNotification::new(session.to_string(), update));
        if let Err(e) = sent {
            tracing::warn!("acp: cannot show a terminal: {e}");
        }
    }

    /// Waits for the command (killing it on timeout or cancel), then reads its output.
    async fn wait_and_read(
        &self,
        session: &str,
        terminal: &TerminalId,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<TerminalRun, HostError> {
        let cx = &self.session.cx;
        let wait = cx
            .send_request(WaitForTerminalExitRequest::new(
                session.to_string(),
                terminal.clone(),
            ))
            .block_task();
        let ending = tokio::select! {
            exited = wait => {
                let exited = exited.map_err(|e| HostError::WaitTerminal(e.into()))?;
                ending(&exited.exit_status)
            }
            () = tokio::time::sleep(timeout) => HostEnding::TimedOut,
            () = cancel.cancelled() => HostEnding::Cancelled,
        };
        if matches!(ending, HostEnding::TimedOut | HostEnding::Cancelled) {
            let killed = cx
                .send_request(KillTerminalRequest::new(
                    session.to_string(),
                    terminal.clone(),
                ))
                .block_task()
                .await;
            if let Err(e) = killed {
                tracing::warn!("acp: cannot kill a terminal: {e}");
            }
        }
        let output = cx
            .send_request(TerminalOutputRequest::new(
                session.to_string(),
                terminal.clone(),
            ))
            .block_task()
            .await
            .map_err(|e| HostError::TerminalOutput(e.into()))?;
        Ok(TerminalRun {
            output: output.output,
            truncated: output.truncated,
            ending,
        })
    }
}

/// A terminal as tool call content.
pub fn terminal_content(terminal: &str) -> ToolCallContent {
    ToolCallContent::Terminal(Terminal::new(terminal.to_string()))
}

fn ending(status: &TerminalExitStatus) -> HostEnding {
    match (&status.exit_code, &status.signal) {
        (_, Some(signal)) => HostEnding::Signaled(signal.clone()),
        (Some(code), None) => HostEnding::Exited(*code),
        (None, None) => HostEnding::Exited(0),
    }
}
