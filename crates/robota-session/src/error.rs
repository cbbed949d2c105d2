//! What can go wrong reading or writing a session log: every error names the file and
//! what was being done to it, so a client can tell the user which log failed and how.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// What is wrong with the first line of a session log, which must be its header.
#[derive(Debug, Error)]
pub enum HeaderError {
    /// Line 1 does not parse as JSON.
    #[error("line 1 is not JSON ({0})")]
    NotJson(#[source] serde_json::Error),
    /// Line 1 is JSON but not a `"type": "session"` line.
    #[error("the first line is not of type \"session\"")]
    NotSession,
    /// Line 1 is a session line whose fields do not fit the header.
    #[error("the first line is not a valid session header ({0})")]
    Invalid(#[source] serde_json::Error),
    /// The header names no session id.
    #[error("the header has no sessionId")]
    NoSessionId,
}

/// What went wrong reading or writing a session log; every variant names the file (or,
/// for a bad id, the id that would have named it).
#[derive(Debug, Error)]
pub enum LogError {
    /// A file operation on the log failed.
    #[error("session log {}: cannot {action}: {source}", path.display())]
    Io {
        /// The log file.
        path: PathBuf,
        /// What was being done to it.
        action: LogAction,
        /// The operating system's error.
        source: io::Error,
    },
    /// A new log was to be created where one already exists.
    #[error("session log {} already exists", path.display())]
    AlreadyExists {
        /// The existing log.
        path: PathBuf,
    },
    /// Another process writes this log (two writers would interleave their turns).
    #[error("{}", in_use_message(path, *holder))]
    InUse {
        /// The log.
        path: PathBuf,
        /// The pid holding the lock, when `/proc/locks` (Linux) shows it.
        holder: Option<u32>,
    },
    /// The log's first line is not a valid session header.
    #[error("session log {} has no valid session header: {reason}", path.display())]
    InvalidHeader {
        /// The log file.
        path: PathBuf,
        /// What is wrong with the first line.
        #[source]
        reason: HeaderError,
    },
    /// The id contains characters that cannot name a file.
    #[error("session id {id:?} cannot name a log file (use letters, digits, '-', '_', '.')")]
    InvalidSessionId {
        /// The id as given.
        id: String,
    },
    /// The log no longer holds what an earlier read found in it: it was cut short or
    /// rewritten since.
    #[error("session log {} changed since it was resumed: {detail}", path.display())]
    Changed {
        /// The log file.
        path: PathBuf,
        /// What no longer matches.
        detail: String,
    },
    /// A line could not be serialised to JSON; nothing was written.
    #[error("session log {}: cannot serialise a line: {source}", path.display())]
    Serialize {
        /// The log file.
        path: PathBuf,
        /// The serialiser's error.
        source: serde_json::Error,
    },
}

/// The file operation that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogAction {
    /// Creating the directory the log lives in.
    CreateDir,
    /// Creating a new log file.
    Create,
    /// Opening an existing log.
    Open,
    /// Reading the log.
    Read,
    /// Appending (and flushing) a line.
    Write,
    /// Removing it.
    Remove,
}

impl fmt::Display for LogAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LogAction::CreateDir => "create its directory",
            LogAction::Create => "create it",
            LogAction::Open => "open it",
            LogAction::Read => "read it",
            LogAction::Write => "write a line",
            LogAction::Remove => "remove it",
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
            | LogError::Changed { path, .. }
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
