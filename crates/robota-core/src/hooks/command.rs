//! Running one `command` hook: `sh -c <command>` (Git Bash on Windows, through
//! [`crate::git_bash`]) in its own process group (through [`crate::process_group`]), in the
//! session's working directory, with the event JSON written to stdin, stdout and stderr
//! captured (bounded), and the whole group killed at the timeout, on cancellation, or when
//! the run is dropped half-way. A hook that exits normally may leave background processes
//! behind.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::protocol::{RawRun, RunEnding};
use crate::credentials::ChildEnv;
use crate::git_bash::posix_shell;
use crate::process_group::{
    GroupEnding, OutputSink, PipeReader, StopPolicy, detach_into_new_group, kill_detached,
    spawn_in_new_group, wait_or_stop,
};

/// Bytes kept of each output stream.
const CAPTURE_CAP: usize = 1024 * 1024;

/// What to run and how.
pub(super) struct CommandSpec<'a> {
    pub command: &'a str,
    /// The exec form's arguments: `command` runs directly with them, no shell.
    pub args: Option<&'a [String]>,
    pub stdin: &'a [u8],
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub timeout: Duration,
}

/// `sh -c <command>`, or the exec form's program with its arguments.
fn program(spec: &CommandSpec<'_>) -> std::process::Command {
    match spec.args {
        Some(args) => {
            let mut command = std::process::Command::new(spec.command);
            command.args(args);
            command
        }
        None => {
            let mut command = std::process::Command::new(posix_shell());
            command.arg("-c").arg(spec.command);
            command
        }
    }
}

fn program_name<'a>(spec: &CommandSpec<'a>) -> std::borrow::Cow<'a, str> {
    match spec.args {
        Some(_) => spec.command.into(),
        None => posix_shell().to_string_lossy(),
    }
}

/// Starts an `async` hook on its own: in a process group of its own that robota does not
/// stop when it exits (a `-p` run ends without waiting for it), its output discarded.
/// While robota runs, a thread reaps it and kills its group at the timeout.
pub(super) fn spawn_detached(spec: &CommandSpec<'_>) -> std::io::Result<()> {
    use std::io::Write;
    let mut command = program(spec);
    ChildEnv::new(spec.env.iter().map(|(k, v)| (k, v))).apply(&mut command);
    command
        .current_dir(spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    detach_into_new_group(&mut command);
    let mut child = command.spawn()?;
    let stdin = child.stdin.take();
    let input = spec.stdin.to_vec();
    let timeout = spec.timeout;
    std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input);
        }
        let deadline = std::time::Instant::now() + timeout;
        loop {
            match child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if std::time::Instant::now() >= deadline => {
                    kill_detached(&mut child);
                    let _ = child.wait();
                    return;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    });
    Ok(())
}

/// Runs the command to its end, its timeout or cancellation.
pub(super) async fn run_command(spec: &CommandSpec<'_>, cancel: &CancellationToken) -> RawRun {
    let mut command = Command::from(program(spec));
    ChildEnv::new(spec.env.iter().map(|(k, v)| (k, v))).apply(&mut command);
    command
        .current_dir(spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (mut child, group) = match spawn_in_new_group(&mut command) {
        Ok(spawned) => spawned,
        Err(err) => return failed(format!("cannot start {}: {err}", program_name(spec))),
    };
    if let Some(mut stdin) = child.stdin.take() {
        let input = spec.stdin.to_vec();
        // A hook that never reads its stdin must not stall: the write runs on its own and
        // ends with EPIPE when the hook exits.
        tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stdout = PipeReader::start(child.stdout.take(), Capped::default());
    let stderr = PipeReader::start(child.stderr.take(), Capped::default());
    let ending = match wait_or_stop(&mut child, group, spec.timeout, cancel, StopPolicy::Kill).await
    {
        Ok(GroupEnding::Exited(code)) => RunEnding::Exited(code),
        Ok(GroupEnding::Signaled(signal)) => RunEnding::Signaled(signal),
        Ok(GroupEnding::TimedOut) => RunEnding::TimedOut,
        Ok(GroupEnding::Cancelled) => RunEnding::Cancelled,
        Err(err) => RunEnding::Failed(format!("waiting for the hook failed: {err}")),
    };
    RawRun {
        ending,
        stdout: stdout.finish().await.into_text(),
        stderr: stderr.finish().await.into_text(),
    }
}

fn failed(message: String) -> RawRun {
    RawRun {
        ending: RunEnding::Failed(message),
        stdout: String::new(),
        stderr: String::new(),
    }
}

/// The first [`CAPTURE_CAP`] bytes of a stream.
#[derive(Default)]
struct Capped(Vec<u8>);

impl OutputSink for Capped {
    fn push(&mut self, bytes: &[u8]) {
        let room = CAPTURE_CAP.saturating_sub(self.0.len());
        self.0.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl Capped {
    fn into_text(self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }
}

// The tests run real programs through `/bin/sh` and Unix file modes.
#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::time::Instant;

    async fn run(command: &str, stdin: &str, timeout: Duration) -> RawRun {
        let dir = tempfile::tempdir().unwrap();
        let env = vec![("HOOK_TEST_VAR".to_string(), "from env".to_string())];
        let spec = CommandSpec {
            command,
            args: None,
            stdin: stdin.as_bytes(),
            cwd: dir.path(),
            env: &env,
            timeout,
        };
        run_command(&spec, &CancellationToken::new()).await
    }

    #[tokio::test]
    async fn stdin_env_and_both_streams_reach_the_hook_and_back() {
        let out = run(
            "cat; echo \" $HOOK_TEST_VAR\"; echo err >&2; exit 3",
            "{\"a\":1}",
            Duration::from_secs(30),
        )
        .await;
        assert_eq!(out.ending, RunEnding::Exited(3));
        assert_eq!(out.stdout, "{\"a\":1} from env\n");
        assert_eq!(out.stderr, "err\n");
    }

    #[tokio::test]
    async fn a_hook_that_ignores_a_large_stdin_does_not_stall() {
        let big = "x".repeat(512 * 1024);
        let out = run("echo done", &big, Duration::from_secs(30)).await;
        assert_eq!(out.ending, RunEnding::Exited(0));
        assert_eq!(out.stdout, "done\n");
    }

    #[tokio::test]
    async fn a_hanging_hook_and_its_children_are_killed_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("child.pid");
        let command = format!("sleep 30 & echo $! > {}; wait", marker.display());
        let started = Instant::now();
        let out = run(&command, "", Duration::from_millis(300)).await;
        assert_eq!(out.ending, RunEnding::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(10));
        let pid: i32 = std::fs::read_to_string(&marker)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The background child was in the hook's group and is gone (or a zombie being
        // reaped by init): signal 0 fails or /proc shows it is not running any more. A
        // killed process may still be on its way out for a moment, so this polls, bounded.
        let alive = || {
            // SAFETY: signal 0 only checks that the process exists.
            let exists = unsafe { libc::kill(pid, 0) } == 0;
            exists
                && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .map(|s| !s.contains(") Z"))
                    .unwrap_or(false)
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive() && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(!alive(), "the hook's child {pid} survived the timeout");
    }

    #[tokio::test]
    async fn a_missing_working_directory_is_a_failure_not_a_panic() {
        let spec = CommandSpec {
            command: "true",
            args: None,
            stdin: b"",
            cwd: Path::new("/nonexistent/robota-hook-test"),
            env: &[],
            timeout: Duration::from_secs(5),
        };
        let out = run_command(&spec, &CancellationToken::new()).await;
        assert!(matches!(out.ending, RunEnding::Failed(_)));
    }
}
