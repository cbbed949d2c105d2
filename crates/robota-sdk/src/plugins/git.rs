//! The system `git`, for marketplaces and plugins that live in repositories: a shallow
//! clone (of a ref, or of a commit when a `sha` is pinned), a fast-forward update, and the
//! commit a checkout is at. Git never prompts (`GIT_TERMINAL_PROMPT=0`), and its error
//! text comes back whole so the user sees why a clone failed.

use std::path::Path;
use std::process::{Command, Stdio};

use super::error::PluginError;

/// Runs `git args…` (in `dir` when given); `Err` carries git's stderr.
fn git(dir: Option<&Path>, args: &[&str]) -> Result<String, PluginError> {
    let mut command = Command::new("git");
    // A repository's config and hooks may run commands: not with robota's keys.
    robota_core::credentials::ChildEnv::inherited().apply(&mut command);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let output = command
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(PluginError::GitMissing)?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        Err(PluginError::Git {
            args: args.join(" "),
            stderr,
        })
    }
}

/// Clones `url` into `dest` (which must not exist yet): the default branch, `git_ref`, or
/// exactly `sha` when given.
pub fn clone(
    url: &str,
    dest: &Path,
    git_ref: Option<&str>,
    sha: Option<&str>,
) -> Result<(), PluginError> {
    let dest_text = dest.to_string_lossy();
    let mut args = vec!["clone", "--quiet"];
    if sha.is_none() {
        args.extend(["--depth", "1"]);
    }
    if let Some(r) = git_ref {
        args.extend(["--branch", r]);
    }
    args.extend(["--", url, &dest_text]);
    git(None, &args)?;
    if let Some(sha) = sha {
        git(Some(dest), &["checkout", "--quiet", "--detach", sha])?;
    }
    Ok(())
}

/// Brings the checkout at `dir` to its upstream's newest commit (fast-forward only).
pub fn pull(dir: &Path) -> Result<(), PluginError> {
    git(Some(dir), &["pull", "--quiet", "--ff-only"]).map(|_| ())
}

/// The commit the checkout at `dir` is at.
pub fn head(dir: &Path) -> Result<String, PluginError> {
    git(Some(dir), &["rev-parse", "HEAD"])
}

/// Whether `source` names a git repository rather than a folder or a JSON file:
/// `git@…`, `ssh://`, `git://`, `file://`, or an `http(s)` URL ending in `.git`.
pub(crate) fn looks_like_git_url(source: &str) -> bool {
    source.starts_with("git@")
        || ["ssh://", "git://", "file://", "git+"]
            .iter()
            .any(|p| source.starts_with(p))
        || ((source.starts_with("https://") || source.starts_with("http://"))
            && source.trim_end_matches('/').ends_with(".git"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_urls_are_told_from_paths_and_json_urls() {
        for url in [
            "git@github.com:o/r.git",
            "ssh://h/r",
            "file:///tmp/r.git",
            "https://h/o/r.git",
        ] {
            assert!(looks_like_git_url(url), "{url}");
        }
        for not in ["./dir", "/abs/dir", "o/r", "https://h/marketplace.json"] {
            assert!(!looks_like_git_url(not), "{not}");
        }
    }

    #[test]
    fn a_failed_clone_says_why() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = format!("file://{}/nothing.git", tmp.path().display());
        let err = clone(&missing, &tmp.path().join("dest"), None, None).unwrap_err();
        assert!(
            matches!(&err, PluginError::Git { args, .. } if args.starts_with("clone")),
            "{err}"
        );
        assert!(err.to_string().contains("git clone"), "{err}");
        assert!(!tmp.path().join("dest").exists());
    }
}
