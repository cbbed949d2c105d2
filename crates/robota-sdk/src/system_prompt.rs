//! The system prompts, assembled here and nowhere else. The main agent's: the built-in
//! text (`assets/prompt/`: who it is, the shared working rules, finishing the task and
//! answering), an environment block (working directory, git branch, status and recent
//! commit subjects, whether anyone can answer questions, platform, date, model) and the
//! context files, in that order; `--system-prompt` replaces the built-in text,
//! `--append-system-prompt` adds to the end, and the response language (settings
//! `language`) comes last. A subagent's (`subagent`): its definition's own prompt, the
//! same working rules, the parent's environment and context files, and a note on
//! reporting. Git is asked with a deadline (killed, and said so in the prompt, when it
//! does not answer) and without optional locks, so a killed `git status` leaves no
//! `index.lock` behind; the prompt is built before the session's actor runs or on a
//! blocking thread, never on the actor's own.

use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

use robota_core::helper_program::{HelperError, HelperIo, deadline, describe, run_helper_blocking};

use super::context_files::ContextFile;

/// The rules every agent works by, the main one and each subagent alike (the
/// `# Working rules` section).
pub(crate) const WORKING_RULES: &str = include_str!("../assets/prompt/working_rules.md");

/// The main agent's built-in text: who it is, the working rules, finishing the task and
/// how to answer.
pub(crate) const BUILT_IN: &str = concat!(
    include_str!("../assets/prompt/intro.md"),
    "\n",
    include_str!("../assets/prompt/working_rules.md"),
    "\n",
    include_str!("../assets/prompt/main.md"),
);

/// Closes every subagent's prompt: its answer is all the agent that asked gets.
const REPORT_NOTE: &str = "\n\n# Reporting\nYou are a subagent: your final answer goes back to the agent that asked, not to the user. End with a concise, complete report of what you did and found (with file paths), since nothing else you wrote reaches it. Where a step needs the user's approval, stop and say so in the report instead.";

/// Where the environment block starts in a built prompt.
const ENVIRONMENT_HEADING: &str = "\n\n# Environment\n";

/// At most this many changed files are listed in the git summary.
const GIT_STATUS_LINES: usize = 20;
/// How many recent commit subjects are listed (what the model matches its messages to).
const RECENT_COMMITS: usize = 5;
/// A longer commit subject is cut to this many characters.
const SUBJECT_CHARS: usize = 100;
/// How long one git query may take (a cold `git status` of a huge repository is slow).
const GIT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the commit subjects may take (optional: left out when slow).
const GIT_LOG_TIMEOUT: Duration = Duration::from_secs(3);
/// The most of git's output read.
const GIT_OUTPUT_LIMIT: usize = 4 * 1024 * 1024;

/// What the prompt is built from.
#[derive(Debug, Clone)]
pub(crate) struct PromptParts<'a> {
    pub cwd: &'a Path,
    pub model: &'a str,
    pub date: &'a str,
    /// Replaces the built-in text when set.
    pub replace: Option<&'a str>,
    pub append: Option<&'a str>,
    pub context_files: &'a [ContextFile],
    /// The language answers are written in (settings `language`, `/language`).
    pub language: Option<&'a str>,
    /// Nobody can answer a question before the task ends (`-p` without a client that is
    /// asked about permissions).
    pub unattended: bool,
}

pub(crate) fn build(parts: &PromptParts<'_>) -> String {
    let mut out = String::with_capacity(8 * 1024);
    out.push_str(parts.replace.unwrap_or(BUILT_IN).trim_end());
    out.push_str(ENVIRONMENT_HEADING);
    let _ = writeln!(out, "- Working directory: {}", parts.cwd.display());
    match git_summary(parts.cwd) {
        Some(git) => {
            out.push_str(&git);
            out.push_str(&recent_commits(parts.cwd));
        }
        None => out.push_str("- Not a git repository\n"),
    }
    if parts.unattended {
        out.push_str("- Non-interactive: nobody can answer questions\n");
    }
    let _ = writeln!(
        out,
        "- Platform: {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH
    );
    let _ = writeln!(out, "- Date: {}", parts.date);
    let _ = writeln!(out, "- Model: {}", parts.model);
    if !parts.context_files.is_empty() {
        out.push_str(
            "\n# Project instructions\nThese files hold the user's and the project's instructions. Follow them; they override the defaults above.\n",
        );
        for file in parts.context_files {
            let _ = write!(
                out,
                "\n<context-file path=\"{}\">\n{}\n</context-file>\n",
                file.path.display(),
                file.content.trim_end()
            );
        }
    }
    if let Some(append) = parts.append.filter(|a| !a.trim().is_empty()) {
        out.push('\n');
        out.push_str(append.trim_end());
        out.push('\n');
    }
    if let Some(language) = parts.language.map(str::trim).filter(|l| !l.is_empty()) {
        let _ = write!(
            out,
            "\n# Response language\nAlways write your answers to the user in {language}, whatever language the files and tool output are in. Code, identifiers and commands stay as they are.\n"
        );
    }
    out
}

/// A subagent's system prompt: its definition's `own` prompt, the working rules, the
/// environment and context files of the `parent`'s prompt (what follows the `head` it
/// starts with: the built-in text or the `--system-prompt` that replaced it), and the
/// reporting note. A custom agent's prompt is added to the working rules, never instead.
pub(crate) fn subagent(own: &str, parent: &str, head: &str) -> String {
    let shared = parent
        .strip_prefix(head.trim_end())
        .or_else(|| parent.find(ENVIRONMENT_HEADING).map(|at| &parent[at..]))
        .unwrap_or_default();
    format!(
        "{}\n\n{}{shared}{REPORT_NOTE}",
        own.trim_end(),
        WORKING_RULES.trim_end()
    )
}

/// The last few commit subjects, newest first (`- Recent commits:` and one indented line
/// each), or nothing when there are none or git is slow.
fn recent_commits(cwd: &Path) -> String {
    let count = format!("--max-count={RECENT_COMMITS}");
    let Ok(Some(log)) = git_within(
        cwd,
        &["log", &count, "--no-merges", "--format=%s"],
        GIT_LOG_TIMEOUT,
    ) else {
        return String::new();
    };
    let subjects: Vec<&str> = log
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if subjects.is_empty() {
        return String::new();
    }
    let mut out = String::from("- Recent commits:\n");
    for subject in subjects {
        match subject.char_indices().nth(SUBJECT_CHARS) {
            Some((cut, _)) => {
                let _ = writeln!(out, "  {}…", &subject[..cut]);
            }
            None => {
                let _ = writeln!(out, "  {subject}");
            }
        }
    }
    out
}

/// `git args…` in `cwd`, killed at its deadline: its output when it succeeds (`None`
/// outside a repository or without git), `Err` with the deadline it missed.
fn git(cwd: &Path, args: &[&str]) -> Result<Option<String>, Duration> {
    git_within(cwd, args, GIT_TIMEOUT)
}

/// [`git`] with its own deadline.
fn git_within(cwd: &Path, args: &[&str], timeout: Duration) -> Result<Option<String>, Duration> {
    let mut command = tokio::process::Command::new("git");
    command
        .args(args)
        .current_dir(cwd)
        .env("GIT_OPTIONAL_LOCKS", "0");
    // The repository's config may run commands (`core.fsmonitor`): not with robota's keys.
    robota_core::credentials::ChildEnv::inherited().apply(&mut command);
    let io = HelperIo {
        input: None,
        output_limit: GIT_OUTPUT_LIMIT,
        deadline: deadline(timeout),
    };
    match run_helper_blocking(command, io) {
        Ok(out) if out.success() => Ok(Some(String::from_utf8_lossy(&out.stdout).into_owned())),
        Err(HelperError::TimedOut(limit)) => {
            tracing::warn!(
                "git {} did not finish in {}",
                args.join(" "),
                describe(limit)
            );
            Err(limit)
        }
        Ok(_) | Err(_) => Ok(None),
    }
}

/// Branch and a short status, or `None` outside a repository.
fn git_summary(cwd: &Path) -> Option<String> {
    let status = git(
        cwd,
        &[
            "status",
            "--porcelain=v1",
            "--branch",
            "--untracked-files=normal",
        ],
    );
    let text = match status {
        Ok(text) => text?,
        Err(limit) => {
            return Some(format!(
                "- Git status: unknown (git status did not finish in {})\n",
                describe(limit)
            ));
        }
    };
    let mut lines = text.lines();
    let branch = lines
        .next()
        .and_then(|l| l.strip_prefix("## "))
        .map(|b| {
            let b = b
                .strip_prefix("No commits yet on ")
                .or_else(|| b.strip_prefix("Initial commit on "))
                .unwrap_or(b);
            b.split("...").next().unwrap_or(b).to_string()
        })
        .unwrap_or_else(|| "unknown".to_string());
    let changed: Vec<&str> = lines.collect();
    let mut out = format!("- Git branch: {branch}\n");
    if changed.is_empty() {
        out.push_str("- Git status: clean\n");
    } else {
        let _ = writeln!(out, "- Git status: {} changed file(s)", changed.len());
        for line in changed.iter().take(GIT_STATUS_LINES) {
            let _ = writeln!(out, "  {line}");
        }
        if changed.len() > GIT_STATUS_LINES {
            let _ = writeln!(out, "  … and {} more", changed.len() - GIT_STATUS_LINES);
        }
    }
    Some(out)
}

/// Current git branch of `cwd`, if any (for status displays).
pub fn git_branch(cwd: &Path) -> Option<String> {
    git_summary(cwd)?
        .lines()
        .next()?
        .strip_prefix("- Git branch: ")
        .map(str::to_string)
}

/// The branch checked out in `cwd` (one cheap `git symbolic-ref`, no status walk); `None`
/// outside a repository or on a detached HEAD. Recorded in a new session's header.
pub(crate) fn checked_out_branch(cwd: &Path) -> Option<String> {
    let output = git(cwd, &["symbolic-ref", "--short", "-q", "HEAD"]).ok()??;
    let branch = output.trim().to_string();
    (!branch.is_empty()).then_some(branch)
}

#[cfg(test)]
mod snapshot_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_has_builtin_environment_context_and_append_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let files = vec![ContextFile {
            path: dir.path().join("AGENTS.md"),
            content: "Use tabs.".into(),
        }];
        let prompt = build(&PromptParts {
            cwd: dir.path(),
            model: "claude-x",
            date: "2026-11-22",
            replace: None,
            append: Some("Answer in French."),
            context_files: &files,
            language: Some("Korean"),
            unattended: false,
        });
        let i_builtin = prompt.find("You are robota").unwrap();
        let i_env = prompt.find("# Environment").unwrap();
        let i_ctx = prompt.find("Use tabs.").unwrap();
        let i_append = prompt.find("Answer in French.").unwrap();
        let i_language = prompt.find("# Response language").unwrap();
        assert!(i_builtin < i_env && i_env < i_ctx && i_ctx < i_append && i_append < i_language);
        assert!(prompt.contains("- Not a git repository"));
        assert!(prompt.contains("- Model: claude-x"));
        assert!(prompt.contains("- Date: 2026-11-22"));
    }

    #[test]
    fn git_repositories_show_branch_and_changes() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap()
        };
        git(&["init", "-q", "-b", "feature-x"]);
        std::fs::write(dir.path().join("new.txt"), "x").unwrap();
        let prompt = build(&PromptParts {
            cwd: dir.path(),
            model: "m",
            date: "d",
            replace: Some("CUSTOM"),
            append: None,
            context_files: &[],
            language: None,
            unattended: true,
        });
        assert!(prompt.starts_with("CUSTOM\n"));
        assert!(!prompt.contains("You are robota"));
        assert!(prompt.contains("- Git branch: feature-x"), "{prompt}");
        assert!(prompt.contains("?? new.txt"));
        assert_eq!(git_branch(dir.path()).as_deref(), Some("feature-x"));
        assert_eq!(checked_out_branch(dir.path()).as_deref(), Some("feature-x"));
        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(checked_out_branch(elsewhere.path()), None);
    }
}
