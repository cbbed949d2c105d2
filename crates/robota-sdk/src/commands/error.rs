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
        /// The command's usage line.
        usage: &'static str,
        /// What was typed, when it is worth quoting back.
        given: Option<String>,
    },
    /// A subcommand word the command does not know.
    #[error("Unknown /{command} argument {given:?}; use {usage}")]
    UnknownArgument {
        /// The command's name, without the slash.
        command: &'static str,
        /// The word typed.
        given: String,
        /// The command's usage line.
        usage: &'static str,
    },
    /// Only an interactive client runs it (pickers, clipboard, leaving).
    #[error("/{0} only runs in the full-screen UI")]
    ClientOnly(String),
    /// The command (its name) cannot run while a turn is in progress.
    #[error("/{0} cannot run while a turn is in progress")]
    DuringTurn(String),
    /// `/mode` with a mode the policy forbids (the reason names the file).
    #[error("{0}")]
    ModeRefused(String),
    /// `/mode` with a word that is not a permission mode.
    #[error("Unknown mode {0:?}; choose one of: {modes}", modes = mode_names())]
    UnknownMode(String),
    /// `/clear` emptied the conversation but could not open the new session's log file.
    #[error("Conversation cleared, but the new session's log could not be created: {0}")]
    ClearedWithoutLog(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// `/export` could not write the transcript file.
    #[error("cannot write {}: {source}", path.display())]
    Export {
        /// The file it was writing.
        path: PathBuf,
        /// The io error.
        #[source]
        source: std::io::Error,
    },
    /// `/language` in a session whose system prompt replaced the built-in one.
    #[error("This session's system prompt was given whole; /language cannot change it.")]
    FixedSystemPrompt,
    /// `/language` could not save the language in the user settings.
    #[error("The language was not changed: {0}")]
    LanguageNotSaved(#[source] SettingsWriteError),
    /// `/plugin` in a session assembled without plugin support.
    #[error("/plugin is not available here; use `robota plugin …`")]
    PluginsUnavailable,
    /// A `/plugin` operation failed.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// An `/mcp` operation failed.
    #[error(transparent)]
    Mcp(#[from] McpError),
    /// A command's work on another thread ended without an answer.
    #[error("/{command} stopped: {source}")]
    Stopped {
        /// The command's name, without the slash.
        command: &'static str,
        /// How the thread ended (panicked or was cancelled).
        #[source]
        source: tokio::task::JoinError,
    },
    /// `/tasks stop` with an id (the one given) that names no background task.
    #[error("No background task {0:?}: /tasks lists the ids of what is running.")]
    NoTask(String),
    /// `/tasks stop` on a background shell job (its id) that has already finished.
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
