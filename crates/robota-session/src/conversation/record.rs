//! What the session writes to its log and how: messages and events (a failed write is
//! traced, never fatal), the name, `clear`'s new log, notes that are not prompts, the
//! diagnostics tap through which provider calls report their traffic, and the log's path
//! and failures.

use std::path::PathBuf;
use std::sync::Arc;

use robota_core::Message;

use crate::line::{LogEvent, MessageExtra, SessionHeader};
use crate::log::{LogError, SessionLog};

use super::Session;

impl Session {
    /// Whether this session records replay-grade diagnostics.
    pub fn diagnostics_on(&self) -> bool {
        self.log
            .as_ref()
            .is_some_and(|log| log.diagnostics().is_some())
    }

    /// The session log's path, when the session has a log.
    pub fn log_path(&self) -> Option<PathBuf> {
        self.log.as_ref().map(|l| l.path().to_path_buf())
    }

    /// Names the session (resumable by that name).
    pub fn rename(&mut self, name: String) {
        self.with_log(|log| log.append_rename(&name));
        self.name = Some(name);
    }

    /// Starts afresh as a new session, as Claude Code's `/clear`: a new id and log (the old
    /// log keeps what was said, ends with a `clear` line and stays resumable), an empty
    /// history, no name, no usage. `Err` says why the new log could not be created; the
    /// session then goes on without one rather than writing into the old.
    pub fn clear(&mut self) -> Result<(), LogError> {
        self.log_event(LogEvent::Clear {});
        self.history.clear();
        self.checkpoints.clear();
        self.pending_context.clear();
        self.tracker.reset_reported();
        self.name = None;
        if let Ok(mut usage) = self.usage.lock() {
            usage.clear();
        }
        let id = uuid::Uuid::new_v4().to_string();
        let header = SessionHeader::new(
            &id,
            &self.config.cwd,
            &self.config.model,
            self.provider.name(),
        );
        self.config.session_id = id;
        let Some(old) = self.log.take() else {
            return Ok(());
        };
        let log = old.create_beside(&header)?;
        self.log = Some(Arc::new(log));
        Ok(())
    }

    /// Appends a user message that is not a prompt (e.g. a `!command` and its output) to
    /// the history and the log; the model sees it with the next prompt.
    pub fn record_user_note(&mut self, text: String) {
        let message = Message::user_text(text);
        self.log_message(&message, MessageExtra::default());
        self.history.push(message);
    }

    /// The first log write that failed since the last call, naming the file and what
    /// failed; clients must tell the user (the conversation itself goes on in memory).
    pub fn take_log_failure(&self) -> Option<String> {
        self.log.as_ref().and_then(|log| log.take_failure())
    }

    /// Writes an event line; failures are logged to the trace, never fatal.
    pub fn log_event(&self, event: LogEvent) {
        self.with_log(|log| log.append_event(event));
    }

    /// Runs one write on the log, if there is one. A failed write is traced only: the
    /// conversation goes on without it.
    pub(super) fn with_log(&self, write: impl FnOnce(&SessionLog) -> Result<(), LogError>) {
        if let Some(log) = &self.log {
            warn_on_failure(write(log));
        }
    }

    /// With diagnostics on, the tap through which a provider call reports its traffic.
    pub(super) fn wire_tap(&self) -> Option<robota_core::wire::WireTap> {
        let diagnostics = self.log.as_ref()?.diagnostics()?;
        Some(robota_core::wire::WireTap(diagnostics.clone()))
    }

    /// With diagnostics on: records the setup the next turn runs with (when it changed)
    /// and returns the tap through which the provider reports its wire traffic.
    pub(super) fn diagnostics_tap(&self) -> Option<robota_core::wire::WireTap> {
        let diagnostics = self.log.as_ref()?.diagnostics()?;
        diagnostics.session_init(
            self.provider.name(),
            &self.config.model,
            &self.config.system_prompt,
            &self.tools.schemas(),
            &self.config.cwd,
        );
        self.wire_tap()
    }

    pub(super) fn log_message(&self, message: &Message, extra: MessageExtra) {
        self.with_log(|log| log.append_message(message, extra));
    }
}

/// Traces a failed log write (the session log is never fatal; the error names the file and
/// what failed).
pub(super) fn warn_on_failure(written: Result<(), LogError>) {
    if let Err(err) = written {
        tracing::warn!("session log: {err}");
    }
}
