//! robota's language-server client (issue 30). Servers come from settings and plugins
//! (`lspServers`, Claude Code's plugin format, in `config`) and from a built-in table of
//! common servers found on `PATH`; each starts lazily on the first file of its language,
//! one per workspace root, and stops with the session (`manager`). The protocol is JSON-RPC
//! over the server's stdio (`rpc`), one process per server (`server`). What the session
//! gets from it: diagnostics appended to Edit and Write results (`diagnostics`, through the
//! wrappers of `feedback`) and the `LSP` tool (`tool`). Nothing starts, and nothing is
//! spent, until a file of a configured language is touched.

#![deny(missing_docs)]

mod config;
mod diagnostics;
mod feedback;
mod manager;
mod rpc;
mod server;
mod tool;
mod typescript;

use std::path::PathBuf;
use std::time::Duration;

pub use config::{LspSection, LspServerConfig, builtin_servers, find_on_path};
pub use diagnostics::{EditDiagnostics, diagnostic_line};
pub use feedback::{WithLanguageServers, with_language_servers};
pub use manager::{LspManager, ServerStatus};
pub use tool::LspTool;

/// What can go wrong talking to a language server.
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    /// The server's program could not be started.
    #[error("could not start `{command}`: {source}")]
    Spawn {
        /// The program.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// Reading from or writing to the server failed.
    #[error("talking to the server failed: {0}")]
    Io(#[from] std::io::Error),
    /// The server sent something that is not the protocol.
    #[error("the server broke the protocol: {0}")]
    Protocol(String),
    /// The server did not answer in time.
    #[error("{method} got no answer within {} ms", after.as_millis())]
    Timeout {
        /// The request.
        method: String,
        /// How long robota waited.
        after: Duration,
    },
    /// The server's connection is gone (it exited).
    #[error("the server exited")]
    Closed,
    /// The server answered with an error.
    #[error("the server answered with error {code}: {message}")]
    Rpc {
        /// The JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// The server failed to start, or failed too often.
    #[error("{0}")]
    Unavailable(String),
    /// The server is still starting when the caller's deadline came.
    #[error("{0} is still starting; try again in a moment")]
    StillStarting(String),
    /// No configured or built-in server handles this kind of file.
    #[error("no language server handles {}", .0.display())]
    NoServer(PathBuf),
    /// A path that cannot be a `file://` URI (not absolute).
    #[error("{} is not an absolute file path", .0.display())]
    NotAFile(PathBuf),
    /// The file asked about could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The user interrupted the call.
    #[error("interrupted")]
    Cancelled,
}
