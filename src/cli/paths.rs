//! Where user state lives: `$ROBOTA_HOME` (default `~/.robota`) and the user's home.

use std::path::PathBuf;

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
