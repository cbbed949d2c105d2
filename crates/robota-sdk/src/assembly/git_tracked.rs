//! The files git tracks that a Read deny rule denies: git keeps them in its history and
//! index, where the kernel's file guard cannot hide them, so the policy refuses git
//! commands that would print them (`robota_permission`'s `git_history`) and the session
//! warns at start. Looked for only when Read deny rules exist (two `git` calls).

use std::path::{Path, PathBuf};
use std::time::Duration;

use robota_core::helper_program::{HelperIo, deadline, run_helper_blocking};
use robota_core::permission::PermissionPolicy;

/// How long each `git` call may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(3);

/// At most this many listed bytes are read (a very large repository is cut short).
const LIST_LIMIT: usize = 32 << 20;

/// How many of them the warning names.
const NAMED: usize = 3;

/// The tracked files of `cwd`'s repository that `policy`'s Read deny rules deny, with a
/// warning naming them; empty outside a repository or without such rules.
pub(super) fn tracked_denied(
    policy: &PermissionPolicy,
    cwd: &Path,
    warnings: &mut Vec<String>,
) -> Vec<PathBuf> {
    let Some(denial) = policy.read_denial(cwd) else {
        return Vec::new();
    };
    let Some(top) = git(cwd, &["rev-parse", "--show-toplevel"]) else {
        return Vec::new();
    };
    let top = PathBuf::from(String::from_utf8_lossy(&top).trim_end());
    let Some(listed) = git(&top, &["ls-files", "-z", "--full-name"]) else {
        return Vec::new();
    };
    let found: Vec<PathBuf> = listed
        .split(|b| *b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| top.join(String::from_utf8_lossy(name).as_ref()))
        .filter(|path| denial.hides(path, false))
        .collect();
    if !found.is_empty() {
        let named: Vec<String> = found
            .iter()
            .take(NAMED)
            .map(|p| p.strip_prefix(cwd).unwrap_or(p).display().to_string())
            .collect();
        let more = found.len().saturating_sub(NAMED);
        warnings.push(format!(
            "git tracks {} file(s) a Read deny rule denies ({}{}): git can still show them from its history, so git commands that could print them are refused",
            found.len(),
            named.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() },
        ));
    }
    found
}

/// `git args…` in `dir`: its stdout when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let mut command = tokio::process::Command::new("git");
    command
        .args(args)
        .current_dir(dir)
        .env("GIT_OPTIONAL_LOCKS", "0");
    robota_core::credentials::ChildEnv::inherited().apply(&mut command);
    let io = HelperIo {
        input: None,
        output_limit: LIST_LIMIT,
        deadline: deadline(GIT_TIMEOUT),
    };
    run_helper_blocking(command, io)
        .ok()
        .filter(|out| out.success())
        .map(|out| out.stdout)
}
