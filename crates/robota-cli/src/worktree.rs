//! `-w/--worktree[=NAME]`: the session works in a new git worktree on a new branch
//! `robota/NAME`, beside the repository (`<repo>-NAME` next to it), so several sessions
//! can change one repository at once without stepping on each other. `robota rm` of a
//! background session removes its worktree (the branch, with the work, stays).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A worktree made for a session.
#[derive(Debug, Clone)]
pub struct Worktree {
    /// Its directory.
    pub path: PathBuf,
    /// Its branch (`robota/NAME`).
    pub branch: String,
    /// Where the session starts in it: the same place relative to the top as the
    /// directory robota was started in.
    pub cwd: PathBuf,
}

/// Why a worktree could not be made or removed.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    /// git could not run.
    #[error("cannot run git: {0}")]
    Git(#[source] std::io::Error),
    /// The directory is in no repository.
    #[error("--worktree needs a git repository, and {0} is in none")]
    NoRepository(PathBuf),
    /// The name makes no branch name.
    #[error("--worktree={0:?} does not make a branch name (robota/{0})")]
    BadName(String),
    /// The worktree's directory is taken.
    #[error("{0} exists already; choose another name with --worktree=NAME")]
    Exists(PathBuf),
    /// `git worktree` refused.
    #[error("git worktree {action} failed: {message}")]
    Refused {
        /// `add` or `remove`.
        action: &'static str,
        /// What git said.
        message: String,
    },
    /// The worktree has changes nobody committed (removing one: background sessions,
    /// Unix only).
    #[cfg(unix)]
    #[error("{} has uncommitted changes; commit them, or remove it anyway with --force", .0.display())]
    Uncommitted(PathBuf),
}

/// Runs git in `dir`; its trimmed stdout, or what it said on failure.
fn git(dir: &Path, args: &[&str]) -> Result<Result<String, String>, WorktreeError> {
    let mut command = Command::new("git");
    // The repository's config and hooks (`post-checkout`) may run commands: not with
    // robota's keys.
    crate::core::credentials::ChildEnv::inherited().apply(&mut command);
    let out = command
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(WorktreeError::Git)?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
    Ok(if out.status.success() {
        Ok(text(&out.stdout))
    } else {
        Err(text(&out.stderr))
    })
}

/// Makes the worktree `name` (a generated one when empty) for the repository `cwd` is in.
pub fn create(cwd: &Path, name: &str) -> Result<Worktree, WorktreeError> {
    let top = git(cwd, &["rev-parse", "--show-toplevel"])?
        .map(PathBuf::from)
        .map_err(|_| WorktreeError::NoRepository(cwd.to_path_buf()))?;
    let name = if name.is_empty() {
        uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
    } else {
        name.to_string()
    };
    let branch = format!("robota/{name}");
    if name.contains('/') || git(cwd, &["check-ref-format", "--branch", &branch])?.is_err() {
        return Err(WorktreeError::BadName(name));
    }
    let repo = top.file_name().map(|n| n.to_string_lossy().into_owned());
    let path = top
        .with_file_name(format!("{}-{name}", repo.unwrap_or_default()))
        .to_path_buf();
    if path.exists() {
        return Err(WorktreeError::Exists(path));
    }
    let target = path.to_string_lossy().into_owned();
    git(&top, &["worktree", "add", "-q", "-b", &branch, &target])?.map_err(|message| {
        WorktreeError::Refused {
            action: "add",
            message,
        }
    })?;
    let inside = cwd.strip_prefix(&top).unwrap_or(Path::new(""));
    let start = path.join(inside);
    Ok(Worktree {
        cwd: if start.is_dir() { start } else { path.clone() },
        path,
        branch,
    })
}

/// Removes the worktree at `path`; one with uncommitted changes only with `force` (for
/// `robota rm` of a background session, Unix only).
#[cfg(unix)]
pub fn remove(path: &Path, force: bool) -> Result<(), WorktreeError> {
    if !path.exists() {
        return Ok(());
    }
    let changes = git(path, &["status", "--porcelain"])?.unwrap_or_default();
    if !changes.is_empty() && !force {
        return Err(WorktreeError::Uncommitted(path.to_path_buf()));
    }
    // git removes a worktree from its repository, not from inside it.
    let common = git(
        path,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )?
    .map(PathBuf::from)
    .map_err(|message| WorktreeError::Refused {
        action: "remove",
        message,
    })?;
    let target = path.to_string_lossy().into_owned();
    let mut args = vec!["worktree", "remove"];
    if force {
        args.push("--force");
    }
    args.push(&target);
    git(&common, &args)?.map_err(|message| WorktreeError::Refused {
        action: "remove",
        message,
    })?;
    Ok(())
}
