//! The program hosting a session may offer its own files and terminal (an editor: its
//! buffers, unsaved edits included, and its terminal panel). [`ToolHost`] names what it
//! offers; Read, Edit and Write then read and write text through [`HostFiles`], and Bash
//! runs its foreground commands through [`HostTerminal`]. What is not offered stays local:
//! the disk and `shell_process`. Only the transport changes — paths resolve, permissions,
//! hooks and the read-before-edit record apply exactly as for local files. This module
//! also holds the Edit/Write side of it: loading the file about to be replaced and writing
//! the new text through the host or to disk.

use std::fs::Permissions;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::file_tracker::{FileReadTracker, FileStamp};
use super::file_write::{ExistingFile, load_existing, write_and_record};
use super::input::ToolFailure;

/// An error from the host's side (its protocol's or its transport's), as it reports it.
pub type HostSource = Box<dyn std::error::Error + Send + Sync>;

/// Why the host could not do what a tool asked of it.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The host's session is not open yet (a tool ran before it was put together).
    #[error("the session is not open yet")]
    NotReady,
    /// Reading or writing a file through the host failed.
    #[error("{0}")]
    Files(#[source] HostSource),
    /// The host could not start a terminal for the command.
    #[error("the editor could not start a terminal: {0}")]
    StartTerminal(#[source] HostSource),
    /// Waiting for the command in the host's terminal failed.
    #[error("waiting for the terminal failed: {0}")]
    WaitTerminal(#[source] HostSource),
    /// Reading what the command left in the host's terminal failed.
    #[error("reading the terminal's output failed: {0}")]
    TerminalOutput(#[source] HostSource),
}

/// Text files as the host has them.
#[async_trait]
pub trait HostFiles: Send + Sync {
    /// The whole text of the file at `path` (absolute) as the host sees it.
    async fn read_text(&self, path: &Path) -> Result<String, HostError>;
    /// Replaces the file's whole text (the host creates it if needed).
    async fn write_text(&self, path: &Path, text: &str) -> Result<(), HostError>;
}

/// A foreground command for the host's terminal: `program args…` in `cwd`.
#[derive(Debug, Clone)]
pub struct TerminalCommand {
    /// The program to run.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Where it runs.
    pub cwd: std::path::PathBuf,
    /// Extra environment for it.
    pub env: Vec<(String, String)>,
    /// The tool call the terminal belongs to (a host may show the terminal in it).
    pub tool_use_id: String,
}

/// How a command in the host's terminal ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostEnding {
    /// Exited with this code.
    Exited(u32),
    /// Ended by this signal (as the host names it).
    Signaled(String),
    /// Killed at its timeout.
    TimedOut,
    /// Killed because the call was cancelled.
    Cancelled,
}

/// What a command left in the host's terminal: stdout and stderr as one stream.
#[derive(Debug, Clone)]
pub struct TerminalRun {
    /// What it wrote to stdout and stderr, interleaved.
    pub output: String,
    /// The host dropped the start of the output to stay within its limit.
    pub truncated: bool,
    /// How it ended.
    pub ending: HostEnding,
}

/// The host's terminal.
#[async_trait]
pub trait HostTerminal: Send + Sync {
    /// Runs `command` to its end, killing it when `timeout` passes or `cancel` fires.
    async fn run(
        &self,
        command: TerminalCommand,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<TerminalRun, HostError>;
}

/// What the host offers the tools; the default offers nothing (all local).
#[derive(Clone, Default)]
pub struct ToolHost {
    /// Read reads through this, and Edit and Write load the file they replace through it.
    pub reads: Option<Arc<dyn HostFiles>>,
    /// Edit and Write write through this.
    pub writes: Option<Arc<dyn HostFiles>>,
    /// Bash runs foreground commands through this.
    pub terminal: Option<Arc<dyn HostTerminal>>,
}

impl std::fmt::Debug for ToolHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolHost")
            .field("reads", &self.reads.is_some())
            .field("writes", &self.writes.is_some())
            .field("terminal", &self.terminal.is_some())
            .finish()
    }
}

/// The stamp of text that came from the host (no modification time to compare).
pub fn host_stamp(text: &[u8]) -> FileStamp {
    FileStamp {
        modified: None,
        len: text.len() as u64,
        content_hash: FileStamp::hash(text),
    }
}

/// The file about to be replaced by Edit or Write, `None` when there is none: through the
/// host when it reads files (its buffer), else from disk. The path itself is still checked
/// on disk (a directory or a device is refused either way).
pub async fn load_for_replace(
    host: &ToolHost,
    path: &Path,
) -> Result<Option<ExistingFile>, ToolFailure> {
    let on_disk = {
        let owned = path.to_path_buf();
        tokio::task::spawn_blocking(move || load_existing(&owned))
            .await
            .map_err(|err| {
                ToolFailure::failed(format!("Cannot read {}: {err}", path.display()))
            })??
    };
    let Some(files) = &host.reads else {
        return Ok(on_disk);
    };
    match files.read_text(path).await {
        Ok(text) => Ok(Some(ExistingFile {
            stamp: host_stamp(text.as_bytes()),
            permissions: on_disk.and_then(|f| f.permissions),
            bytes: text.into_bytes(),
        })),
        Err(_) if on_disk.is_none() => Ok(None),
        Err(err) => Err(ToolFailure::failed(format!(
            "Cannot read {} from the editor: {err}",
            path.display()
        ))),
    }
}

/// Writes the new text through the host when it writes files, else atomically to disk
/// (keeping `permissions`), and records it as what the model last saw of the file.
pub async fn write_replacement(
    host: &ToolHost,
    tracker: &FileReadTracker,
    path: &Path,
    text: &str,
    permissions: Option<Permissions>,
) -> Result<(), ToolFailure> {
    if let Some(files) = &host.writes {
        files.write_text(path, text).await.map_err(|err| {
            ToolFailure::failed(format!(
                "Failed to write {} through the editor: {err}",
                path.display()
            ))
        })?;
        tracker.record(path, host_stamp(text.as_bytes()));
        return Ok(());
    }
    let (tracker, path, text) = (tracker.clone(), path.to_path_buf(), text.to_string());
    tokio::task::spawn_blocking(move || {
        write_and_record(&tracker, &path, text.as_bytes(), permissions.as_ref())
    })
    .await
    .map_err(|err| ToolFailure::failed(format!("Write failed: {err}")))?
}

#[cfg(test)]
#[path = "host_tests.rs"]
mod tests;
