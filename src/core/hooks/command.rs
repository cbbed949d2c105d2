//! Running one `command` hook: `sh -c <command>` in its own process group, in the session's
//! working directory, with the event JSON written to stdin, stdout and stderr captured
//! (bounded), and the whole group killed at the timeout, on cancellation, or when the run
//! is dropped half-way. A hook that exits normally may leave background processes behind.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::protocol::{RawRun, RunEnding};

/// Bytes kept of each output stream.
const CAPTURE_CAP: usize = 1024 * 1024;
/// After the hook exits, how long to keep reading pipes a leftover child still holds open.
const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// What to run and how.
pub(super) struct CommandSpec<'a> {
    pub command: &'a str,
    pub stdin: &'a [u8],
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub timeout: Duration,
}

/// Runs the command to its end, its timeout or cancellation.
pub(super) async fn run_command(spec: &CommandSpec<'_>, cancel: &CancellationToken) -> RawRun {
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(spec.command)
        .current_dir(spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => {
            return RawRun {
                ending: RunEnding::Failed(format!("cannot start /bin/sh: {err}")),
                stdout: String::new(),
                stderr: String::new(),
            };
        }
    };
    let mut group = child.id().map(|pid| GroupGuard(pid as i32));
    if let Some(mut stdin) = child.stdin.take() {
        let input = spec.stdin.to_vec();
        // A hook that never reads its stdin must not stall: the write runs on its own and
        // ends with EPIPE when the hook exits.
        tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stdout = Capture::start(child.stdout.take());
    let stderr = Capture::start(child.stderr.take());
    let ending = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => {
                use std::os::unix::process::ExitStatusExt;
                match (status.code(), status.signal()) {
                    (Some(code), _) => RunEnding::Exited(code),
                    (None, Some(signal)) => RunEnding::Signaled(signal),
                    (None, None) => RunEnding::Exited(-1),
                }
            }
            Err(err) => RunEnding::Failed(format!("waiting for the hook failed: {err}")),
        },
        _ = tokio::time::sleep(spec.timeout) => RunEnding::TimedOut,
        _ = cancel.cancelled() => RunEnding::Cancelled,
    };
    match ending {
        RunEnding::TimedOut | RunEnding::Cancelled => {
            if let Some(group) = group.take() {
                drop(group);
            }
            let _ = child.wait().await;
        }
        _ => {
            if let Some(group) = group.take() {
                std::mem::forget(group);
            }
        }
    }
    RawRun {
        ending,
        stdout: stdout.finish().await,
        stderr: stderr.finish().await,
    }
}

/// Kills the process group when dropped.
struct GroupGuard(i32);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.0 > 1 {
            // SAFETY: kill(2) with a negative pid signals a process group; it touches no
            // memory, and a stale group id only yields ESRCH.
            unsafe {
                libc::kill(-self.0, libc::SIGKILL);
            }
        }
    }
}

/// A pipe read in the background, keeping at most [`CAPTURE_CAP`] bytes.
struct Capture {
    buffer: Arc<Mutex<Vec<u8>>>,
    reader: Option<tokio::task::JoinHandle<()>>,
}

impl Capture {
    fn start<R: AsyncRead + Unpin + Send + 'static>(stream: Option<R>) -> Self {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let reader = stream.map(|mut stream| {
            let buffer = Arc::clone(&buffer);
            tokio::spawn(async move {
                let mut chunk = vec![0u8; 8 * 1024];
                while let Ok(n) = stream.read(&mut chunk).await {
                    if n == 0 {
                        break;
                    }
                    let mut kept = buffer.lock().unwrap_or_else(|p| p.into_inner());
                    let room = CAPTURE_CAP.saturating_sub(kept.len());
                    kept.extend_from_slice(&chunk[..n.min(room)]);
                }
            })
        });
        Capture { buffer, reader }
    }

    async fn finish(mut self) -> String {
        if let Some(mut reader) = self.reader.take()
            && tokio::time::timeout(DRAIN_GRACE, &mut reader)
                .await
                .is_err()
        {
            reader.abort();
        }
        let bytes = std::mem::take(&mut *self.buffer.lock().unwrap_or_else(|p| p.into_inner()));
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    async fn run(command: &str, stdin: &str, timeout: Duration) -> RawRun {
        let dir = tempfile::tempdir().unwrap();
        let env = vec![("HOOK_TEST_VAR".to_string(), "from env".to_string())];
        let spec = CommandSpec {
            command,
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
        // reaped by init): signal 0 fails or /proc shows it is not sleeping any more.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| !s.contains(") Z"))
                .unwrap_or(false);
        assert!(!alive, "the hook's child {pid} survived the timeout");
    }

    #[tokio::test]
    async fn a_missing_working_directory_is_a_failure_not_a_panic() {
        let spec = CommandSpec {
            command: "true",
            stdin: b"",
            cwd: Path::new("/nonexistent/robota-hook-test"),
            env: &[],
            timeout: Duration::from_secs(5),
        };
        let out = run_command(&spec, &CancellationToken::new()).await;
        assert!(matches!(out.ending, RunEnding::Failed(_)));
    }
}
