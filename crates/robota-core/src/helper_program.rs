//! Helper programs — a clipboard tool, the status-line command, `git` — run to their end
//! with a deadline, off whatever loop asked for them: each in a process group of its own
//! (`process_group`), its input written and its output read by tasks of their own (so one
//! that does not read its input, or prints without end, blocks nothing), and the whole
//! group killed when the deadline passes. What a helper leaves running after it exits by
//! itself (xclip stays to serve the selection) is left alone. `ROBOTA_HELPER_TIMEOUT_MS`
//! overrides every deadline (tests use it to see one pass quickly).

use std::io;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, Command};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::process_group::{
    DRAIN_GRACE, GroupEnding, OutputSink, PipeReader, StopPolicy, spawn_in_new_group, wait_or_stop,
};

/// The environment variable that overrides every helper's deadline, in milliseconds.
pub const TIMEOUT_ENV: &str = "ROBOTA_HELPER_TIMEOUT_MS";

/// `default`, unless [`TIMEOUT_ENV`] sets another deadline.
pub fn deadline(default: Duration) -> Duration {
    std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map_or(default, Duration::from_millis)
}

/// A deadline for people: "5 s", or "300 ms" under a second.
pub fn describe(deadline: Duration) -> String {
    if deadline >= Duration::from_secs(1) && deadline.subsec_millis() == 0 {
        format!("{} s", deadline.as_secs())
    } else {
        format!("{} ms", deadline.as_millis())
    }
}

/// What a helper is given and how long it may take.
#[derive(Debug, Clone, Default)]
pub struct HelperIo {
    /// Written to its stdin, which is then closed; `None`: stdin is `/dev/null`.
    pub input: Option<Vec<u8>>,
    /// How many bytes of its stdout are kept (the rest is read and dropped); 0: stdout is
    /// `/dev/null`.
    pub output_limit: usize,
    /// When it is killed, with everything it started.
    pub deadline: Duration,
}

/// How a helper that finished by itself ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelperOutput {
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// Its stdout, up to the limit.
    pub stdout: Vec<u8>,
    /// Whether it took all of its input (true when it had none).
    pub input_taken: bool,
}

impl HelperOutput {
    /// It exited with 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Why a helper gave no output.
#[derive(Debug, thiserror::Error)]
pub enum HelperError {
    /// The program does not exist (not on `PATH`, or no such file).
    #[error("not installed")]
    NotInstalled,
    /// Starting it failed.
    #[error("cannot run it: {0}")]
    CannotStart(#[source] io::Error),
    /// It was still running at its deadline; it was killed with everything it started.
    #[error("did not finish in {}", describe(*.0))]
    TimedOut(Duration),
    /// Waiting for it to exit failed.
    #[error("waiting for it failed: {0}")]
    Wait(#[source] io::Error),
}

/// Runs `command` as `io` says, until it exits or its deadline passes (then its whole
/// process group is killed and [`HelperError::TimedOut`] returned). Its stderr is dropped.
pub async fn run_helper(mut command: Command, io: HelperIo) -> Result<HelperOutput, HelperError> {
    command
        .stdin(piped_if(io.input.is_some()))
        .stdout(piped_if(io.output_limit > 0))
        .stderr(Stdio::null());
    let (mut child, group) = spawn_in_new_group(&mut command).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => HelperError::NotInstalled,
        _ => HelperError::CannotStart(e),
    })?;
    let writer = feed(child.stdin.take(), io.input);
    let reader = PipeReader::start(child.stdout.take(), Capped::new(io.output_limit));
    let never = CancellationToken::new();
    let ending = wait_or_stop(&mut child, group, io.deadline, &never, StopPolicy::Kill).await;
    let input_taken = fed(writer).await;
    let stdout = reader.finish().await.bytes;
    let code = match ending.map_err(HelperError::Wait)? {
        GroupEnding::Exited(code) => Some(code),
        GroupEnding::Signaled(_) => None,
        GroupEnding::TimedOut | GroupEnding::Cancelled => {
            return Err(HelperError::TimedOut(io.deadline));
        }
    };
    Ok(HelperOutput {
        code,
        stdout,
        input_taken,
    })
}

/// [`run_helper`] for code that cannot await: on a thread of its own with a runtime of its
/// own, so it works inside and outside an async runtime. The caller's thread waits, at
/// most the deadline and a moment more.
pub fn run_helper_blocking(command: Command, io: HelperIo) -> Result<HelperOutput, HelperError> {
    let worker = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(HelperError::CannotStart)?;
        runtime.block_on(run_helper(command, io))
    });
    worker
        .join()
        .unwrap_or_else(|_| Err(HelperError::Wait(io::Error::other("its thread panicked"))))
}

fn piped_if(piped: bool) -> Stdio {
    if piped { Stdio::piped() } else { Stdio::null() }
}

/// Writes `input` to `stdin` in a task of its own, then closes it; the task says whether
/// all of it was taken.
fn feed(stdin: Option<ChildStdin>, input: Option<Vec<u8>>) -> Option<JoinHandle<bool>> {
    let (mut stdin, input) = (stdin?, input?);
    Some(tokio::spawn(async move {
        stdin.write_all(&input).await.is_ok()
    }))
}

/// Whether the writer got all of the input through; one still stuck once the helper is
/// gone (a leftover process holds the pipe and does not read) is given up.
async fn fed(writer: Option<JoinHandle<bool>>) -> bool {
    let Some(mut writer) = writer else {
        return true;
    };
    match tokio::time::timeout(DRAIN_GRACE, &mut writer).await {
        Ok(Ok(taken)) => taken,
        _ => {
            writer.abort();
            false
        }
    }
}

/// Keeps the first `limit` bytes.
#[derive(Default)]
struct Capped {
    bytes: Vec<u8>,
    limit: usize,
}

impl Capped {
    fn new(limit: usize) -> Self {
        Capped {
            bytes: Vec::new(),
            limit,
        }
    }
}

impl OutputSink for Capped {
    fn push(&mut self, bytes: &[u8]) {
        let room = self.limit.saturating_sub(self.bytes.len());
        self.bytes
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("/bin/sh");
        command.arg("-c").arg(script);
        command
    }

    fn io(input: Option<&str>, output_limit: usize, deadline_ms: u64) -> HelperIo {
        HelperIo {
            input: input.map(|i| i.as_bytes().to_vec()),
            output_limit,
            deadline: Duration::from_millis(deadline_ms),
        }
    }

    fn gone(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        }
    }

    #[tokio::test]
    async fn input_in_output_out_and_the_exit_code() {
        let out = run_helper(sh("tr a-z A-Z; exit 3"), io(Some("hello"), 3, 30_000))
            .await
            .unwrap();
        assert_eq!(out.code, Some(3));
        assert_eq!(out.stdout, b"HEL", "kept up to the limit");
        assert!(out.input_taken);
        assert!(!out.success());
        let missing = run_helper(Command::new("robota-no-such-helper"), io(None, 0, 30_000));
        assert!(matches!(missing.await, Err(HelperError::NotInstalled)));
    }

    #[tokio::test]
    async fn one_that_reads_nothing_and_never_ends_is_killed_with_its_children() {
        let pids = tempfile::NamedTempFile::new().unwrap();
        let script = format!(
            "sleep 1000 & echo $! > {0}; echo $$ >> {0}; sleep 1000",
            pids.path().display()
        );
        // Far more input than a pipe holds: a blocking write would never return.
        let input = "x".repeat(1 << 20);
        let ran = run_helper(sh(&script), io(Some(&input), 0, 2_000)).await;
        assert!(matches!(ran, Err(HelperError::TimedOut(_))), "{ran:?}");
        let pids = std::fs::read_to_string(pids.path()).unwrap();
        for pid in pids.lines().map(|p| p.parse::<i32>().unwrap()) {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while !gone(pid) {
                assert!(std::time::Instant::now() < deadline, "{pid} survived");
                std::thread::yield_now();
            }
        }
    }

    #[test]
    fn blocking_callers_get_the_same() {
        let out = run_helper_blocking(sh("printf hi"), io(None, 10, 30_000)).unwrap();
        assert_eq!(out.stdout, b"hi");
        assert!(out.success());
    }

    #[test]
    fn deadlines_read_for_people() {
        assert_eq!(describe(Duration::from_secs(5)), "5 s");
        assert_eq!(describe(Duration::from_millis(300)), "300 ms");
        assert_eq!(describe(Duration::from_millis(1500)), "1500 ms");
    }
}
