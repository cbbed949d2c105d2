//! What can go wrong reading or writing a session log: every error names the file and
//! what was being done to it, so a client can tell the user which log failed and how.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// What is wrong with the first line of a session log, which must be its header.
#[derive(Debug, Error)]
pub enum HeaderError {
    #[error("line 1 is not JSON ({0})")]
    NotJson(#[source] serde_json::Error),
    #[error("the first line is not of type \"session\"")]
    NotSession,
    #[error("the first line is not a valid session header ({0})")]
    Invalid(#[source] serde_json::Error),
    #[error("the header has no sessionId")]
    NoSessionId,
}

/// What went wrong reading or writing a session log; every variant names the file (or,
/// for a bad id, the id that would have named it).
#[derive(Debug, Error)]
pub enum LogError {
    #[error("session log {}: cannot {action}: {source}", path.display())]
    Io {
        path: PathBuf,
        action: LogAction,
        source: io::Error,
    },
    #[error("session log {} already exists", path.display())]
    AlreadyExists { path: PathBuf },
    /// Another process writes this log (two writers would interleave their turns).
    #[error("{}", in_use_message(path, *holder))]
    InUse { path: PathBuf, holder: Option<u32> },
    #[error("session log {} has no valid session header: {reason}", path.display())]
    InvalidHeader {
        path: PathBuf,
        #[source]
        reason: HeaderError,
    },
    #[error("session id {id:?} cannot name a log file (use letters, digits, '-', '_', '.')")]
    InvalidSessionId { id: String },
    #[error("session log {}: cannot serialise a line: {source}", path.display())]
    Serialize {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// The file operation that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogAction {
    CreateDir,
    Create,
    Open,
    Read,
    /// Appending (and flushing) a line.
    Write,
}

impl fmt::Display for LogAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LogAction::CreateDir => "create its directory",
            LogAction::Create => "create it",
            LogAction::Open => "open it",
            LogAction::Read => "read it",
            LogAction::Write => "write a line",
        })
    }
}

impl LogError {
    pub(crate) fn io(path: &Path, action: LogAction, source: io::Error) -> Self {
        LogError::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    }

    /// The log file the error is about (`None` for an id that names no file).
    pub fn path(&self) -> Option<&Path> {
        match self {
            LogError::Io { path, .. }
            | LogError::AlreadyExists { path }
            | LogError::InUse { path, .. }
            | LogError::InvalidHeader { path, .. }
            | LogError::Serialize { path, .. } => Some(path),
            LogError::InvalidSessionId { .. } => None,
        }
    }
}

fn in_use_message(path: &Path, holder: Option<u32>) -> String {
    let who = match holder {
        Some(pid) if pid == std::process::id() => "this robota process".to_string(),
        Some(pid) => format!("another robota process (pid {pid})"),
        None => "another robota process".to_string(),
    };
    format!(
        "session log {} is open in {who}: continue it there, or add --fork-session to continue it here as a new session",
        path.display()
    )
}
