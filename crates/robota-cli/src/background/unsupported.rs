//! Background sessions where there are none yet (Windows): the same entry points as on
//! Unix, each saying that background sessions need Unix (their control socket is a Unix
//! domain socket and their supervisor a process session of its own) and failing.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::args::Args;
use crate::headless::EXIT_ERROR;
use crate::worktree::Worktree;

/// What every entry point says.
const UNSUPPORTED: &str = "background sessions (--bg, /bg, ps, logs, send, stop, rm, attach) \
need Unix: robota on Windows does not have them yet";

fn refuse() -> u8 {
    eprintln!("Error: {UNSUPPORTED}");
    EXIT_ERROR
}

/// The hidden first argument that would run a session's supervisor.
pub const SUPERVISE_ARG: &str = "__background";

/// Refuses to supervise a background session.
pub fn supervise(_dir: Option<PathBuf>) -> ExitCode {
    ExitCode::from(refuse())
}

/// Refuses to start a background session.
pub fn start(_args: &Args, _robota_home: &Path, _worktree: Option<&Worktree>) -> u8 {
    refuse()
}

/// Refuses `/bg`.
pub fn start_resumed(
    _args: &Args,
    _robota_home: &Path,
    _session_id: &str,
    _prompt: &str,
) -> Result<String, u8> {
    Err(refuse())
}

/// `robota ps`, `logs`, `send`, `stop` and `rm`, refused.
pub mod commands {
    use super::refuse;
    use std::path::Path;

    /// Refuses `robota ps`.
    pub fn ps(_robota_home: &Path, _as_json: bool) -> u8 {
        refuse()
    }

    /// Refuses `robota logs`.
    pub fn logs(_robota_home: &Path, _query: &str, _follow: bool, _raw: bool) -> u8 {
        refuse()
    }

    /// Refuses `robota send`.
    pub fn send(_robota_home: &Path, _query: &str, _message: &str) -> u8 {
        refuse()
    }

    /// Refuses `robota stop`.
    pub fn stop(_robota_home: &Path, _query: &str) -> u8 {
        refuse()
    }

    /// Refuses `robota rm`.
    pub fn rm(_robota_home: &Path, _query: &str, _force: bool, _purge: bool) -> u8 {
        refuse()
    }
}

/// `robota attach`, refused.
pub mod attach {
    use std::path::{Path, PathBuf};

    use crate::core::permission::PermissionMode;
    use crate::sdk::InteractiveSession;

    /// A background session the UI is attached to (never, here).
    pub struct Attached {
        /// The handle the UI drives.
        pub session: InteractiveSession,
        /// The background session's id.
        pub id: String,
        /// The directory it runs in.
        pub cwd: PathBuf,
        /// The model it started with.
        pub model: String,
        /// Its permission mode when the client came.
        pub mode: PermissionMode,
        /// Its name, if it has one.
        pub name: Option<String>,
        /// What to say at the top.
        pub notices: Vec<String>,
    }

    /// Why `robota attach` could not attach: there are no background sessions here.
    #[derive(Debug, thiserror::Error)]
    pub enum AttachError {
        /// This platform has no background sessions.
        #[error("{}", super::UNSUPPORTED)]
        Unsupported,
    }

    /// Refuses: no background session can be named here.
    pub fn attach_target(_robota_home: &Path, _query: &str) -> Result<String, AttachError> {
        Err(AttachError::Unsupported)
    }

    /// Refuses to attach.
    pub fn attach(_robota_home: &Path, _query: &str) -> Result<Attached, AttachError> {
        Err(AttachError::Unsupported)
    }
}
