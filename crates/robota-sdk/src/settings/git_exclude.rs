//! Keeping the project's local settings out of git, as Claude Code does for its own local
//! file: the first time robota writes `.robota/settings.local.json`, its path goes into the
//! repository's `info/exclude` (never into a tracked `.gitignore`), so it does not show up
//! in `git status`. Outside a repository nothing happens.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Adds `file` (inside the repository that holds it) to the repository's `info/exclude`
/// unless a line already names it. Failures are logged: the settings were written, and
/// this is only tidiness.
pub(crate) fn exclude_from_git(file: &Path) {
    let Some((exclude, pattern)) = exclude_entry(file) else {
        return;
    };
    if let Err(error) = append_once(&exclude, &pattern) {
        tracing::debug!(path = %exclude.display(), %error, "info/exclude not updated");
    }
}

/// The `info/exclude` file of the repository holding `file`, and the pattern naming it
/// from the repository's root.
fn exclude_entry(file: &Path) -> Option<(PathBuf, String)> {
    let root = file.ancestors().skip(1).find(|d| d.join(".git").exists())?;
    let relative = file.strip_prefix(root).ok()?;
    let pattern = format!("/{}", relative.to_string_lossy().replace('\\', "/"));
    let git_dir = git_dir(&root.join(".git"))?;
    Some((common_dir(&git_dir).join("info").join("exclude"), pattern))
}

/// `.git` itself, or the directory a `.git` file points to (`gitdir: …`, worktrees and
/// submodules).
fn git_dir(dot_git: &Path) -> Option<PathBuf> {
    if dot_git.is_dir() {
        return Some(dot_git.to_path_buf());
    }
    let text = std::fs::read_to_string(dot_git).ok()?;
    let target = text.trim().strip_prefix("gitdir:")?.trim();
    let base = dot_git.parent()?;
    Some(base.join(target))
}

/// Where a worktree's shared files live (its `commondir`), else the git dir itself.
fn common_dir(git_dir: &Path) -> PathBuf {
    match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) => git_dir.join(text.trim()),
        Err(_) => git_dir.to_path_buf(),
    }
}

fn append_once(exclude: &Path, pattern: &str) -> std::io::Result<()> {
    let existing = match std::fs::read_to_string(exclude) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    if existing.lines().any(|line| line.trim() == pattern) {
        return Ok(());
    }
    if let Some(dir) = exclude.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(exclude)?;
    let separator = if existing.is_empty() || existing.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    writeln!(out, "{separator}{pattern}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn the_local_file_leaves_git_status_once_and_only_once() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path();
        git(repo, &["init", "-q"]);
        let project = repo.join("sub");
        let file = project.join(".robota/settings.local.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "{}").unwrap();
        std::fs::write(project.join("kept.txt"), "x").unwrap();
        assert!(git(repo, &["status", "--porcelain", "-uall"]).contains("settings.local.json"));
        exclude_from_git(&file);
        exclude_from_git(&file);
        let status = git(repo, &["status", "--porcelain", "-uall"]);
        assert!(!status.contains("settings.local.json"), "{status}");
        assert!(
            status.contains("sub/kept.txt"),
            "only that file is excluded: {status}"
        );
        let exclude = std::fs::read_to_string(repo.join(".git/info/exclude")).unwrap();
        let lines = exclude
            .lines()
            .filter(|l| *l == "/sub/.robota/settings.local.json")
            .count();
        assert_eq!(lines, 1, "{exclude}");
    }

    #[test]
    fn outside_a_repository_nothing_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join(".robota/settings.local.json");
        assert_eq!(exclude_entry(&file), None);
    }

    #[test]
    fn a_worktree_writes_to_the_shared_exclude_file() {
        let tmp = tempfile::tempdir().unwrap();
        let main = tmp.path().join("main");
        std::fs::create_dir_all(&main).unwrap();
        git(&main, &["init", "-q"]);
        git(
            &main,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "x",
            ],
        );
        let wt = tmp.path().join("wt");
        git(&main, &["worktree", "add", "-q", wt.to_str().unwrap()]);
        let file = wt.join(".robota/settings.local.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "{}").unwrap();
        exclude_from_git(&file);
        let status = git(&wt, &["status", "--porcelain", "-uall"]);
        assert!(!status.contains("settings.local.json"), "{status}");
    }
}
