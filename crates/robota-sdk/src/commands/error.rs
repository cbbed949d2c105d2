//! Why a command submitted to a session failed: [`CommandError`], one variant per way a
//! built-in can fail, wrapping the plugin, MCP, checkpoint or settings error underneath.
//! Its message is what the user sees (a `command_failed` turn end).

use std::path::PathBuf;

use robota_core::permission::PermissionMode;

use crate::mcp::McpError;
use crate::plugins::PluginError;
use crate::settings::local_rules::SettingsWriteError;

/// Why a command failed; nothing it would have changed was changed unless it says so.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The arguments do not fit the command; `given` is repeated when it helps.
    #[error(
        "Usage: {usage}{}",
        .given.as_ref().map(|g| format!(" (not {g:?})")).unwrap_or_default()
    )]
    Usage {
        usage: &'static str,
        given: Option<String>,
    },
    #[error("Unknown /{command} argument {given:?}; use {usage}")]
    UnknownArgument {
        command: &'static str,
        given: String,
        usage: &'static str,
    },
    /// Only an interactive client runs it (pickers, clipboard, leaving).
    #[error("/{0} only runs in the full-screen UI")]
    ClientOnly(String),
    #[error("/{0} cannot run while a turn is in progress")]
    DuringTurn(String),
    #[error("Unknown mode {0:?}; choose one of: {modes}", modes = mode_names())]
    UnknownMode(String),
    #[error("Conversation cleared, but the new session's log could not be created: {0}")]
    ClearedWithoutLog(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("cannot write {}: {source}", path.display())]
    Export {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("This session's system prompt was given whole; /language cannot change it.")]
    FixedSystemPrompt,
    #[error("The language was not changed: {0}")]
    LanguageNotSaved(#[source] SettingsWriteError),
    #[error("/plugin is not available here; use `robota plugin …`")]
    PluginsUnavailable,
    #[error(transparent)]
    Plugin(#[from] PluginError),
    #[error(transparent)]
    Mcp(#[from] McpError),
    /// A command's work on another thread ended without an answer.
    #[error("/{command} stopped: {source}")]
    Stopped {
        command: &'static str,
        #[source]
        source: tokio::task::JoinError,
    },
    #[error("No background task {0:?}: /tasks lists the ids of what is running.")]
    NoTask(String),
    #[error("Background job {0} has already finished.")]
    TaskFinished(String),
}

fn mode_names() -> String {
    PermissionMode::ALL.map(|m| m.as_str()).join(", ")
}

impl CommandError {
    /// A usage error; `given` is what was typed instead.
    pub fn usage(usage: &'static str, given: Option<&str>) -> CommandError {
        CommandError::Usage {
            usage,
            given: given.map(str::to_string),
        }
    }
}
