//! `!command` (bash mode): a shell command the user runs directly, outside the model's
//! turn. It runs through the Bash tool's process runner (`bash -c`, else `sh -c`, in its
//! own process group, stdin closed, killed on timeout or interruption; its last lines are
//! reported while it runs), its output is
//! capped like a tool result, and it becomes a user note in Claude Code's shape —
//! `<bash-input>…</bash-input>` then `<bash-stdout>…</bash-stdout><bash-stderr>…</bash-stderr>`
//! — so the model sees it on the next turn. [`parse_shell_note`] reads such a note back
//! (for a resumed transcript).

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use robota_core::truncate::{TOOL_OUTPUT_CAP, truncate_middle};
use robota_tools::{Ending, RunWatch, ShellScript, WatchedRun, run_watched};

/// How long a `!command` may run before it is killed.
pub(crate) const SHELL_COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// What a `!command` produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellCommandRun {
    /// stdout then stderr (and how the run ended when it did not exit), as shown to the
    /// user.
    pub output: String,
    /// The exit code; `None` when killed, timed out, interrupted or never started.
    pub exit_code: Option<i32>,
    /// The user note recorded in the conversation.
    pub note: String,
}

/// A `!command` note read back out of a user message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellNote {
    /// The command as typed, without the `!`.
    pub command: String,
    /// What it wrote to standard output.
    pub stdout: String,
    /// What it wrote to standard error.
    pub stderr: String,
}

impl ShellNote {
    /// stdout then stderr, joined by a newline when both are non-empty (as the command
    /// showed them when it ran).
    pub fn output(&self) -> String {
        join_output(&self.stdout, &self.stderr)
    }
}

const INPUT_OPEN: &str = "<bash-input>";
const INPUT_CLOSE: &str = "</bash-input>\n<bash-stdout>";
const STREAMS_BETWEEN: &str = "</bash-stdout><bash-stderr>";
const STDERR_CLOSE: &str = "</bash-stderr>";

/// The conversation note for a command and its (already capped) output.
pub fn shell_note(command: &str, stdout: &str, stderr: &str) -> String {
    format!("{INPUT_OPEN}{command}{INPUT_CLOSE}{stdout}{STREAMS_BETWEEN}{stderr}{STDERR_CLOSE}")
}

/// Reads a note written by [`shell_note`]; `None` for any other text.
pub fn parse_shell_note(text: &str) -> Option<ShellNote> {
    let rest = text.trim_end().strip_prefix(INPUT_OPEN)?;
    let rest = rest.strip_suffix(STDERR_CLOSE)?;
    let (command, streams) = rest.split_once(INPUT_CLOSE)?;
    let (stdout, stderr) = streams.rsplit_once(STREAMS_BETWEEN)?;
    Some(ShellNote {
        command: command.to_string(),
        stdout: stdout.to_string(),
        stderr: stderr.to_string(),
    })
}

/// What a running `!command`'s last lines are reported to.
pub(crate) type TailReport<'a> = &'a (dyn Fn(Vec<String>) + Send + Sync);

/// Runs `command` in `cwd` with `env` added, until it ends, [`SHELL_COMMAND_TIMEOUT`]
/// passes or `cancel` fires, reporting its last lines to `tail` while it runs. Never
/// fails: a command that cannot start reports why.
pub(crate) async fn run_shell_command(
    command: &str,
    cwd: &Path,
    env: &[(String, String)],
    cancel: &CancellationToken,
    tail: TailReport<'_>,
) -> ShellCommandRun {
    run_with_timeout(command, cwd, env, SHELL_COMMAND_TIMEOUT, cancel, tail).await
}

async fn run_with_timeout(
    command: &str,
    cwd: &Path,
    env: &[(String, String)],
    timeout: Duration,
    cancel: &CancellationToken,
    tail: TailReport<'_>,
) -> ShellCommandRun {
    let script = ShellScript {
        script: command,
        args: &[],
        cwd,
        env,
        sandbox: None,
    };
    let watch = RunWatch {
        tail: Some(tail),
        detach: None,
    };
    let (stdout, mut stderr, ending) = match run_watched(&script, timeout, cancel, watch).await {
        Ok(WatchedRun::Finished(run)) => (run.stdout, run.stderr, Some(run.ending)),
        // Nothing asks a `!command` to detach.
        Ok(WatchedRun::Detached(_)) => (String::new(), String::new(), None),
        Err(err) => (
            String::new(),
            format!("Failed to run the command: {err}"),
            None,
        ),
    };
    let exit_code = match ending {
        Some(Ending::Exited(code)) => Some(code),
        _ => None,
    };
    let status = match ending {
        Some(Ending::Signaled(signal)) => Some(format!("Killed by signal {signal}")),
        Some(Ending::TimedOut) => Some(format!(
            "Command timed out after {}s",
            timeout.as_secs_f64()
        )),
        Some(Ending::Cancelled) => Some("Command interrupted by user".to_string()),
        Some(Ending::Exited(_)) | None => None,
    };
    if let Some(status) = status {
        let kept = stderr.trim_end_matches(['\n', '\r']).len();
        stderr.truncate(kept);
        if !stderr.is_empty() {
            stderr.push('\n');
        }
        stderr.push_str(&status);
    }
    let stdout = truncate_middle(stdout.trim_end_matches(['\n', '\r']), TOOL_OUTPUT_CAP);
    let stderr = truncate_middle(stderr.trim_end_matches(['\n', '\r']), TOOL_OUTPUT_CAP);
    ShellCommandRun {
        output: join_output(&stdout, &stderr),
        exit_code,
        note: shell_note(command, &stdout, &stderr),
    }
}

fn join_output(stdout: &str, stderr: &str) -> String {
    match (stdout.is_empty(), stderr.is_empty()) {
        (_, true) => stdout.to_string(),
        (true, false) => stderr.to_string(),
        (false, false) => format!("{stdout}\n{stderr}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(command: &str, dir: &Path, env: &[(String, String)]) -> ShellCommandRun {
        run_shell_command(command, dir, env, &CancellationToken::new(), &|_| {}).await
    }

    #[tokio::test]
    async fn output_exit_code_and_note() {
        let dir = tempfile::tempdir().unwrap();
        let out = run("echo hi; echo oops >&2; exit 3", dir.path(), &[]).await;
        assert_eq!(out.exit_code, Some(3));
        assert_eq!(out.output, "hi\noops");
        assert_eq!(
            out.note,
            "<bash-input>echo hi; echo oops >&2; exit 3</bash-input>\n<bash-stdout>hi</bash-stdout><bash-stderr>oops</bash-stderr>"
        );
    }

    #[tokio::test]
    async fn runs_in_the_directory_with_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let env = [("ROBOTA_SHELL_TEST".to_string(), "val".to_string())];
        let out = run("pwd; echo $ROBOTA_SHELL_TEST; cat", dir.path(), &env).await;
        let real = dir.path().canonicalize().unwrap();
        assert_eq!(out.output, format!("{}\nval", real.display()));
        assert_eq!(out.exit_code, Some(0), "cat sees an empty stdin");
    }

    #[tokio::test]
    async fn a_timeout_kills_the_command_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let timeout = Duration::from_millis(300);
        let cancel = CancellationToken::new();
        let out = run_with_timeout(
            "echo started; sleep 30",
            dir.path(),
            &[],
            timeout,
            &cancel,
            &|_| {},
        )
        .await;
        assert_eq!(out.exit_code, None);
        assert_eq!(out.output, "started\nCommand timed out after 0.3s");
        assert!(
            out.note
                .ends_with("<bash-stderr>Command timed out after 0.3s</bash-stderr>")
        );
    }

    #[tokio::test]
    async fn a_missing_directory_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let out = run("true", &dir.path().join("gone"), &[]).await;
        assert_eq!(out.exit_code, None);
        assert!(
            out.output.starts_with("Failed to run the command:"),
            "{}",
            out.output
        );
    }

    #[tokio::test]
    async fn long_output_is_capped() {
        let dir = tempfile::tempdir().unwrap();
        let out = run("head -c 100000 /dev/zero | tr '\\0' a", dir.path(), &[]).await;
        assert!(
            out.output.len() < TOOL_OUTPUT_CAP + 200,
            "{}",
            out.output.len()
        );
        assert!(out.output.contains("output truncated: 100000 chars total"));
    }

    #[test]
    fn notes_parse_back() {
        let note = shell_note("ls -l", "a\nb", "");
        let parsed = parse_shell_note(&note).unwrap();
        assert_eq!(
            parsed,
            ShellNote {
                command: "ls -l".into(),
                stdout: "a\nb".into(),
                stderr: String::new(),
            }
        );
        assert_eq!(parsed.output(), "a\nb");
        let both = parse_shell_note(&shell_note("x", "out", "err")).unwrap();
        assert_eq!(both.output(), "out\nerr");
        assert_eq!(parse_shell_note("<bash-input>ls</bash-input>"), None);
        assert_eq!(parse_shell_note("plain prompt"), None);
    }
}
