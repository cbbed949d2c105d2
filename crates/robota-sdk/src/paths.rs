//! `ProjectPaths`: the directories a session is assembled from — the working directory,
//! the git repository it is in, the user's home, and robota's own home (`$ROBOTA_HOME`,
//! default `~/.robota`).

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
    /// The root of the git repository `cwd` is in (the nearest folder holding `.git`, a
    /// directory or a worktree's file); `None` outside a repository. Commands, skills and
    /// agents are found in `.claude/` folders from `cwd` up to it.
    pub project_root: Option<PathBuf>,
}

impl ProjectPaths {
    /// The paths of a session in `cwd`, with the homes taken from the environment
    /// (`$HOME`, `$ROBOTA_HOME`).
    pub fn from_env(cwd: impl Into<PathBuf>) -> ProjectPaths {
        ProjectPaths::new(cwd, home_dir(), robota_home())
    }

    /// The paths of a session in `cwd` with these homes; the project root is found from
    /// `cwd`.
    pub fn new(
        cwd: impl Into<PathBuf>,
        home: Option<PathBuf>,
        robota_home: impl Into<PathBuf>,
    ) -> ProjectPaths {
        let cwd = cwd.into();
        let project_root = repository_root(&cwd);
        ProjectPaths {
            cwd,
            home,
            robota_home: robota_home.into(),
            project_root,
        }
    }

    /// The user's home, as a path reference.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }
}

/// The nearest of `dir` and its parents that holds `.git`.
fn repository_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_root_is_the_nearest_repository_above_the_working_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        let deep = repo.join("src/deep");
        std::fs::create_dir_all(&deep).unwrap();
        let outside = ProjectPaths::new(&deep, None, tmp.path().join("rh"));
        assert_eq!(outside.project_root, None);
        std::fs::create_dir(repo.join(".git")).unwrap();
        let inside = ProjectPaths::new(&deep, None, tmp.path().join("rh"));
        assert_eq!(inside.project_root.as_deref(), Some(repo.as_path()));
        // A worktree's `.git` is a file.
        let worktree = tmp.path().join("wt");
        std::fs::create_dir_all(worktree.join("a")).unwrap();
        std::fs::write(worktree.join(".git"), "gitdir: ../repo/.git/worktrees/wt\n").unwrap();
        let paths = ProjectPaths::new(worktree.join("a"), None, tmp.path().join("rh"));
        assert_eq!(paths.project_root.as_deref(), Some(worktree.as_path()));
    }
}
