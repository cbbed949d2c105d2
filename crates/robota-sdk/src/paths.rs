//! `ProjectPaths`: the directories a session is assembled from — the working directory,
//! the user's home, and robota's own home (`$ROBOTA_HOME`, default `~/.robota`).

use std::path::{Path, PathBuf};

/// The directories a session reads its settings and definitions from and keeps its state
/// in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectPaths {
    /// The session's working directory (the project).
    pub cwd: PathBuf,
    /// The user's home directory (`~/.claude/…` lives there); `None` when `$HOME` is unset.
    pub home: Option<PathBuf>,
    /// Where robota keeps user state: session logs, settings, trust, checkpoints.
    pub robota_home: PathBuf,
}

impl ProjectPaths {
    /// The paths of a session in `cwd`, with the homes taken from the environment
    /// (`$HOME`, `$ROBOTA_HOME`).
    pub fn from_env(cwd: impl Into<PathBuf>) -> ProjectPaths {
        ProjectPaths {
            cwd: cwd.into(),
            home: home_dir(),
            robota_home: robota_home(),
        }
    }

    /// The user's home, as a path reference.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }
}

/// The user's home directory, from `$HOME`.
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// `$ROBOTA_HOME`, else `~/.robota`, else `./.robota` when no home is known.
pub fn robota_home() -> PathBuf {
    if let Some(dir) = std::env::var_os("ROBOTA_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(dir);
    }
    home_dir()
        .map(|h| h.join(".robota"))
        .unwrap_or_else(|| PathBuf::from(".robota"))
}
