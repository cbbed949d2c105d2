//! Running one shell script for Bash: `bash -c` (or `sh` when bash is missing) in its own
//! process group with stdin closed, stdout and stderr captured with bounded memory (head
//! and tail of each), and the whole group killed — SIGTERM, then SIGKILL after a short
//! grace — on timeout, on cancellation, or when the run is dropped half-way. The process
//! group handling is `core::process_group`'s, shared with command hooks.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::live_run::{RunWatch, WatchedRun, run_watched};
use robota_core::credentials::ChildEnv;
use robota_core::process_group::{GroupEnding, OutputSink};

/// Bytes kept of each stream: this much of the head and this much of the tail.
pub const CAPTURE_HALF_BYTES: usize = 512 * 1024;
/// How long the group gets to exit after SIGTERM before SIGKILL.
pub(crate) const KILL_GRACE: Duration = Duration::from_millis(1500);

/// How a run ended.
pub type Ending = GroupEnding;

/// What a finished script left: its output (head and tail of each stream kept) and how it
/// ended.
#[derive(Debug)]
pub struct ShellRun {
    /// Its stdout, as text.
    pub stdout: String,
    /// Its stderr, as text.
    pub stderr: String,
    /// How it ended.
    pub ending: Ending,
}

/// What to run: a script for `<shell> -c`, the arguments it sees as `$1…`, where, with what
/// extra environment.
#[derive(Debug, Clone)]
pub struct ShellScript<'a> {
    /// The script.
    pub script: &'a str,
    /// The arguments it sees as `$1…`.
    pub args: &'a [&'a str],
    /// Where it runs.
    pub cwd: &'a Path,
    /// Extra environment for it.
    pub env: &'a [(String, String)],
    /// The sandbox the shell enters before it runs, if any.
    pub sandbox: Option<&'a std::sync::Arc<super::sandbox::PreparedSandbox>>,
}

/// `bash` when it is on PATH, else `sh`; on Windows Git Bash (`robota_core::git_bash`),
/// never WSL's `bash.exe`.
pub fn shell_program() -> &'static Path {
    if cfg!(windows) {
        return robota_core::git_bash::posix_shell();
    }
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
    let mut command = match script.sandbox {
        Some(sandbox) => sandbox.command(shell_program()),
        None => Command::new(shell_program()),
    };
    command
        .arg("-c")
        .arg(script.script)
        .arg("robota-shell")
        .args(script.args)
        .current_dir(script.cwd)
        .stdin(Stdio::null());
    #[cfg(unix)]
    command.process_group(0);
    ChildEnv::new(script.env.iter().map(|(k, v)| (k, v))).apply(&mut command);
    command
}

/// Runs the script to the end, the timeout or cancellation, whichever comes first
/// (`live_run::run_watched` with nothing watching).
pub async fn run_script(
    script: &ShellScript<'_>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> std::io::Result<ShellRun> {
    match run_watched(script, timeout, cancel, RunWatch::default()).await? {
        WatchedRun::Finished(run) => Ok(run),
        // Nothing can ask an unwatched run to detach.
        WatchedRun::Detached(_) => Err(std::io::Error::other("the run was detached")),
    }
}

/// Keeps the first and last `half` bytes of a stream and counts what fell in between.
#[derive(Debug, Default)]
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

impl OutputSink for BoundedBuffer {
    fn push(&mut self, bytes: &[u8]) {
        BoundedBuffer::push(self, bytes);
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
            sandbox: None,
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
            sandbox: None,
        };
        let run = run_script(&script, Duration::from_secs(60), &CancellationToken::new())
            .await
            .unwrap();
        assert!(run.stdout.len() < 2 * CAPTURE_HALF_BYTES + 100);
        assert!(run.stdout.contains("bytes of output omitted"));
        assert!(run.stdout.ends_with("aaaEND\n"));
    }
}
