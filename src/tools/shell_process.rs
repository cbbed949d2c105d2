//! Running one shell script for Bash: `bash -c` (or `sh` when bash is missing) in its own
//! process group with stdin closed, stdout and stderr captured with bounded memory (head
//! and tail of each), and the whole group killed — SIGTERM, then SIGKILL after a short
//! grace — on timeout, on cancellation, or when the run is dropped half-way.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

/// Bytes kept of each stream: this much of the head and this much of the tail.
pub const CAPTURE_HALF_BYTES: usize = 512 * 1024;
/// How long the group gets to exit after SIGTERM before SIGKILL.
const KILL_GRACE: Duration = Duration::from_millis(1500);
/// After the shell exits, how long to keep reading pipes that a leftover background
/// process still holds open.
const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    Signaled(i32),
    TimedOut,
    Cancelled,
}

#[derive(Debug)]
pub struct ShellRun {
    pub stdout: String,
    pub stderr: String,
    pub ending: Ending,
}

/// What to run: a script for `<shell> -c`, the arguments it sees as `$1…`, where, with what
/// extra environment.
#[derive(Debug, Clone)]
pub struct ShellScript<'a> {
    pub script: &'a str,
    pub args: &'a [&'a str],
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
}

/// `bash` when it is on PATH, else `sh`.
pub fn shell_program() -> &'static Path {
    static SHELL: OnceLock<PathBuf> = OnceLock::new();
    SHELL.get_or_init(|| find_on_path("bash").unwrap_or_else(|| PathBuf::from("/bin/sh")))
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// A `Command` for the script in a new process group, stdin closed.
pub fn shell_command(script: &ShellScript<'_>) -> Command {
    let mut command = Command::new(shell_program());
    command
        .arg("-c")
        .arg(script.script)
        .arg("robota-shell")
        .args(script.args)
        .current_dir(script.cwd)
        .envs(script.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .process_group(0);
    command
}

/// Runs the script to the end, the timeout or cancellation, whichever comes first.
pub async fn run_script(
    script: &ShellScript<'_>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> std::io::Result<ShellRun> {
    let mut child = shell_command(script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut group = child.id().map(|pid| GroupGuard(pid as i32));
    let stdout = Capture::start(child.stdout.take());
    let stderr = Capture::start(child.stderr.take());

    let ending = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => match (status.code(), status.signal()) {
                (Some(code), _) => Ending::Exited(code),
                (None, Some(signal)) => Ending::Signaled(signal),
                (None, None) => Ending::Exited(-1),
            },
            Err(err) => return Err(err),
        },
        _ = tokio::time::sleep(timeout) => Ending::TimedOut,
        _ = cancel.cancelled() => Ending::Cancelled,
    };
    match ending {
        Ending::TimedOut | Ending::Cancelled => {
            if let Some(group) = group.take() {
                group.terminate(&mut child).await;
            }
        }
        // Finished normally: processes it deliberately left running stay alive.
        Ending::Exited(_) | Ending::Signaled(_) => {
            if let Some(group) = group.take() {
                group.disarm();
            }
        }
    }
    Ok(ShellRun {
        stdout: stdout.finish().await,
        stderr: stderr.finish().await,
        ending,
    })
}

/// Kills the process group when dropped, unless disarmed.
struct GroupGuard(i32);

impl GroupGuard {
    /// SIGTERM to the group, up to [`KILL_GRACE`] for the shell to exit, then SIGKILL to
    /// whatever is left of the group, and reap the shell.
    async fn terminate(self, child: &mut Child) {
        signal_group(self.0, libc::SIGTERM);
        let _ = tokio::time::timeout(KILL_GRACE, child.wait()).await;
        signal_group(self.0, libc::SIGKILL);
        let _ = child.wait().await;
        self.disarm();
    }

    fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        signal_group(self.0, libc::SIGKILL);
    }
}

/// Sends `signal` to every process in the group `pgid`.
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals a process group; it has no memory
        // effects, and a stale group id only yields ESRCH.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// A stream being read in the background into a [`BoundedBuffer`].
struct Capture {
    buffer: Arc<Mutex<BoundedBuffer>>,
    reader: Option<tokio::task::JoinHandle<()>>,
}

impl Capture {
    fn start<R: AsyncRead + Unpin + Send + 'static>(stream: Option<R>) -> Self {
        let buffer = Arc::new(Mutex::new(BoundedBuffer::new(CAPTURE_HALF_BYTES)));
        let reader = stream.map(|mut stream| {
            let buffer = Arc::clone(&buffer);
            tokio::spawn(async move {
                let mut chunk = vec![0u8; 16 * 1024];
                while let Ok(n) = stream.read(&mut chunk).await {
                    if n == 0 {
                        break;
                    }
                    lock(&buffer).push(&chunk[..n]);
                }
            })
        });
        Capture { buffer, reader }
    }

    /// Waits for end of stream (at most [`DRAIN_GRACE`] when a leftover process holds the
    /// pipe open) and returns what was captured.
    async fn finish(mut self) -> String {
        if let Some(mut reader) = self.reader.take()
            && tokio::time::timeout(DRAIN_GRACE, &mut reader)
                .await
                .is_err()
        {
            reader.abort();
        }
        let buffer = std::mem::replace(&mut *lock(&self.buffer), BoundedBuffer::new(0));
        buffer.into_text()
    }
}

fn lock(buffer: &Mutex<BoundedBuffer>) -> std::sync::MutexGuard<'_, BoundedBuffer> {
    buffer
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Keeps the first and last `half` bytes of a stream and counts what fell in between.
#[derive(Debug)]
pub struct BoundedBuffer {
    half: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: u64,
}

impl BoundedBuffer {
    pub fn new(half: usize) -> Self {
        BoundedBuffer {
            half,
            head: Vec::new(),
            tail: VecDeque::new(),
            dropped: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        let room = self.half.saturating_sub(self.head.len());
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.half {
            self.dropped += (self.tail.len() + bytes.len() - self.half) as u64;
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.half..]);
            return;
        }
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(self.half);
        if excess > 0 {
            self.tail.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    /// The text, decoded lossily, with a marker where bytes were dropped.
    pub fn into_text(self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        let tail: Vec<u8> = self.tail.into_iter().collect();
        if self.dropped > 0 {
            text.push_str(&format!(
                "\n[... {} bytes of output omitted ...]\n",
                self.dropped
            ));
            // Start the tail on a character boundary.
            let skip = tail
                .iter()
                .take(3)
                .take_while(|b| (**b & 0xC0) == 0x80)
                .count();
            text.push_str(&String::from_utf8_lossy(&tail[skip..]));
        } else {
            text.push_str(&String::from_utf8_lossy(&tail));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_buffer_keeps_head_and_tail() {
        let mut buffer = BoundedBuffer::new(4);
        buffer.push(b"abc");
        buffer.push(b"defgh");
        buffer.push(b"ij");
        buffer.push(b"klmn");
        assert_eq!(
            buffer.into_text(),
            "abcd\n[... 6 bytes of output omitted ...]\nklmn"
        );
        let mut small = BoundedBuffer::new(4);
        small.push(b"abcdef");
        assert_eq!(small.into_text(), "abcdef");
        let mut big = BoundedBuffer::new(2);
        big.push(b"0123456789");
        assert_eq!(
            big.into_text(),
            "01\n[... 6 bytes of output omitted ...]\n89"
        );
    }

    #[test]
    fn non_utf8_output_is_decoded_lossily() {
        let mut buffer = BoundedBuffer::new(16);
        buffer.push(b"ok \xff\xfe end");
        assert_eq!(buffer.into_text(), "ok \u{fffd}\u{fffd} end");
    }

    #[tokio::test]
    async fn captures_both_streams_and_the_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let script = ShellScript {
            script: "echo out; echo err >&2; echo \"$1\"; exit 3",
            args: &["first-arg"],
            cwd: dir.path(),
            env: &[],
        };
        let run = run_script(&script, Duration::from_secs(30), &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(run.stdout, "out\nfirst-arg\n");
        assert_eq!(run.stderr, "err\n");
        assert_eq!(run.ending, Ending::Exited(3));
    }

    #[tokio::test]
    async fn large_output_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let script = ShellScript {
            script: "head -c 3000000 /dev/zero | tr '\\0' 'a'; echo END",
            args: &[],
            cwd: dir.path(),
            env: &[],
        };
        let run = run_script(&script, Duration::from_secs(60), &CancellationToken::new())
            .await
            .unwrap();
        assert!(run.stdout.len() < 2 * CAPTURE_HALF_BYTES + 100);
        assert!(run.stdout.contains("bytes of output omitted"));
        assert!(run.stdout.ends_with("aaaEND\n"));
    }
}
