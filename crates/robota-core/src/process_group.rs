//! Child processes that run in a process group of their own, so that everything they start
//! can be stopped together: spawning in a new group, waiting for the leader against a
//! timeout and a cancellation token, stopping the whole group (SIGKILL at once, or SIGTERM
//! then SIGKILL after a grace) when the run is cut short or dropped half-way, leaving
//! deliberately backgrounded processes alone when the leader exits by itself, and reading
//! the child's pipes in the background with a bounded wait once it has exited. Hooks and
//! the Bash tool both run their shells through this.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

/// After the leader exits, how long to keep reading pipes that a leftover background
/// process still holds open.
pub const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// How a group is stopped when its run is cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopPolicy {
    /// SIGKILL to the whole group at once.
    Kill,
    /// SIGTERM to the group, up to this long for the leader to exit, then SIGKILL to
    /// whatever is left.
    TermThenKill(Duration),
}

/// How a run in a process group ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupEnding {
    /// The leader exited with this code.
    Exited(i32),
    /// The leader was ended by this signal.
    Signaled(i32),
    /// The timeout passed first; the group was stopped.
    TimedOut,
    /// The cancellation token fired first; the group was stopped.
    Cancelled,
}

/// Told of every group spawned here and of every group that ended or was stopped, so that
/// something outside this process can stop the groups still running if it dies — SIGKILL
/// included, when no destructor runs (the CLI installs one: its reaper). A new group's
/// leader announces itself (`+PID` and a newline, one atomic pipe write) on
/// [`GroupWatch::announce_fd`] before it runs anything, so no command can start unannounced.
pub trait GroupWatch: Send + Sync {
    /// The write end of the pipe leaders announce themselves on (started on first use);
    /// `None` when there is none.
    fn announce_fd(&self) -> Option<std::os::fd::RawFd>;
    /// The group ended or was stopped.
    fn ended(&self, pgid: i32);
}

static WATCH: OnceLock<Box<dyn GroupWatch>> = OnceLock::new();

/// Installs the process-wide watch (once; `false` if one was already installed).
pub fn set_group_watch(watch: Box<dyn GroupWatch>) -> bool {
    WATCH.set(watch).is_ok()
}

fn watch() -> Option<&'static dyn GroupWatch> {
    WATCH.get().map(|w| w.as_ref())
}

/// Spawns `command` as the leader of a new process group. The child is killed if its
/// handle is dropped, and the returned guard kills the whole group when dropped (unless
/// [`ProcessGroup::release`]d), so a run abandoned half-way leaves nothing behind.
pub fn spawn_in_new_group(command: &mut Command) -> io::Result<(Child, Option<ProcessGroup>)> {
    command.process_group(0).kill_on_drop(true);
    if let Some(fd) = watch().and_then(|w| w.announce_fd()) {
        // SAFETY: runs in the child between fork and exec; it only calls getpid(2) and
        // write(2), both async-signal-safe, and formats into a stack buffer (no allocation).
        unsafe {
            command.pre_exec(move || {
                announce(fd, libc::getpid());
                Ok(())
            });
        }
    }
    let child = command.spawn()?;
    let group = ProcessGroup::led_by(&child);
    Ok((child, group))
}

/// Writes `+PID` and a newline to `fd` in one write(2) (atomic on a pipe), without
/// allocating: safe between fork and exec.
fn announce(fd: std::os::fd::RawFd, pid: i32) {
    let mut buf = [0u8; 16];
    let mut digits = [0u8; 11];
    let mut n = pid.unsigned_abs();
    let mut count = 0;
    loop {
        digits[count] = b'0' + (n % 10) as u8;
        count += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf[0] = b'+';
    for i in 0..count {
        buf[1 + i] = digits[count - 1 - i];
    }
    buf[1 + count] = b'\n';
    // SAFETY: `buf` is valid for `2 + count` bytes; a failed write only loses the notice.
    unsafe {
        libc::write(fd, buf.as_ptr().cast(), 2 + count);
    }
}

/// Waits for `child` (the leader of `group`) to exit, for `timeout`, or for `cancel`,
/// whichever comes first. On a timeout or cancellation the whole group is stopped as
/// `policy` says and the leader reaped; when the leader exits by itself, processes it
/// deliberately left running stay alive. If waiting fails, the group is killed and the
/// error returned.
pub async fn wait_or_stop(
    child: &mut Child,
    group: Option<ProcessGroup>,
    timeout: Duration,
    cancel: &CancellationToken,
    policy: StopPolicy,
) -> io::Result<GroupEnding> {
    let ending = tokio::select! {
        status = child.wait() => {
            let status = status?;
            match (status.code(), status.signal()) {
                (Some(code), _) => GroupEnding::Exited(code),
                (None, Some(signal)) => GroupEnding::Signaled(signal),
                (None, None) => GroupEnding::Exited(-1),
            }
        },
        _ = tokio::time::sleep(timeout) => GroupEnding::TimedOut,
        _ = cancel.cancelled() => GroupEnding::Cancelled,
    };
    match ending {
        GroupEnding::TimedOut | GroupEnding::Cancelled => match group {
            Some(group) => group.stop(child, policy).await,
            None => {
                let _ = child.wait().await;
            }
        },
        GroupEnding::Exited(_) | GroupEnding::Signaled(_) => {
            if let Some(group) = group {
                group.release();
            }
        }
    }
    Ok(ending)
}

/// A process group; SIGKILLs the whole group when dropped, unless released.
#[derive(Debug)]
pub struct ProcessGroup(i32);

impl ProcessGroup {
    /// The group `child` leads (it was spawned with `process_group(0)`), if it still has
    /// a pid.
    pub fn led_by(child: &Child) -> Option<ProcessGroup> {
        child
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .map(ProcessGroup)
    }

    /// The group id (the leader's pid).
    pub fn id(&self) -> i32 {
        self.0
    }

    /// Stops every process in the group as `policy` says and reaps the leader `child`.
    pub async fn stop(self, child: &mut Child, policy: StopPolicy) {
        match policy {
            StopPolicy::Kill => signal_group(self.0, libc::SIGKILL),
            StopPolicy::TermThenKill(grace) => {
                signal_group(self.0, libc::SIGTERM);
                let _ = tokio::time::timeout(grace, child.wait()).await;
                signal_group(self.0, libc::SIGKILL);
            }
        }
        let _ = child.wait().await;
        self.release();
    }

    /// Forgets the group: dropping the guard no longer kills it.
    pub fn release(self) {
        if let Some(watch) = watch() {
            watch.ended(self.0);
        }
        std::mem::forget(self);
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        signal_group(self.0, libc::SIGKILL);
        if let Some(watch) = watch() {
            watch.ended(self.0);
        }
    }
}

/// Sends `signal` to every process in the group `pgid` (never to group 0 or 1, which
/// would mean our own group or init).
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals a process group; it has no memory
        // effects, and a stale group id only yields ESRCH.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Where a [`PipeReader`] puts what it reads; each sink decides what it keeps.
pub trait OutputSink: Default + Send + 'static {
    /// Takes the next bytes read from the pipe.
    fn push(&mut self, bytes: &[u8]);
}

/// A child's pipe read in the background into an [`OutputSink`].
pub struct PipeReader<S> {
    sink: Arc<Mutex<S>>,
    reader: Option<tokio::task::JoinHandle<()>>,
}

impl<S: OutputSink> PipeReader<S> {
    /// Starts reading `stream` (nothing when it is `None`) into `sink`.
    pub fn start<R: AsyncRead + Unpin + Send + 'static>(stream: Option<R>, sink: S) -> Self {
        let sink = Arc::new(Mutex::new(sink));
        let reader = stream.map(|mut stream| {
            let sink = Arc::clone(&sink);
            tokio::spawn(async move {
                let mut chunk = vec![0u8; 16 * 1024];
                while let Ok(n) = stream.read(&mut chunk).await {
                    if n == 0 {
                        break;
                    }
                    lock(&sink).push(&chunk[..n]);
                }
            })
        });
        PipeReader { sink, reader }
    }

    /// Waits for the end of the stream — at most [`DRAIN_GRACE`], for when a leftover
    /// process holds the pipe open — and returns what the sink kept.
    pub async fn finish(mut self) -> S {
        if let Some(mut reader) = self.reader.take()
            && tokio::time::timeout(DRAIN_GRACE, &mut reader)
                .await
                .is_err()
        {
            reader.abort();
        }
        std::mem::take(&mut *lock(&self.sink))
    }
}

fn lock<S>(sink: &Mutex<S>) -> MutexGuard<'_, S> {
    sink.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;
    use std::time::Instant;

    #[derive(Default)]
    struct All(Vec<u8>);

    impl OutputSink for All {
        fn push(&mut self, bytes: &[u8]) {
            self.0.extend_from_slice(bytes);
        }
    }

    fn sh(script: &str) -> Command {
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        command
    }

    fn alive(pid: i32) -> bool {
        // A zombie waiting for init to reap it counts as gone.
        // SAFETY: signal 0 only checks that the process exists.
        let exists = unsafe { libc::kill(pid, 0) } == 0;
        exists
            && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| !s.contains(") Z"))
                .unwrap_or(false)
    }

    /// A SIGKILLed process may still be on its way out when kill(2) returns (its pipes
    /// closed, not yet a zombie): poll for a bounded while.
    fn gone_soon(pid: i32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(pid) {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    #[tokio::test]
    async fn a_normal_exit_keeps_the_exit_code_and_the_output() {
        let (mut child, group) = spawn_in_new_group(&mut sh("echo hi; exit 4")).unwrap();
        let out = PipeReader::start(child.stdout.take(), All::default());
        let ending = wait_or_stop(
            &mut child,
            group,
            Duration::from_secs(30),
            &CancellationToken::new(),
            StopPolicy::Kill,
        )
        .await
        .unwrap();
        assert_eq!(ending, GroupEnding::Exited(4));
        assert_eq!(out.finish().await.0, b"hi\n");
    }

    #[tokio::test]
    async fn a_timeout_stops_the_leader_and_its_background_children() {
        for policy in [
            StopPolicy::Kill,
            StopPolicy::TermThenKill(Duration::from_millis(500)),
        ] {
            let (mut child, group) =
                spawn_in_new_group(&mut sh("sleep 30 & echo $!; wait")).unwrap();
            let out = PipeReader::start(child.stdout.take(), All::default());
            let started = Instant::now();
            let ending = wait_or_stop(
                &mut child,
                group,
                Duration::from_millis(300),
                &CancellationToken::new(),
                policy,
            )
            .await
            .unwrap();
            assert_eq!(ending, GroupEnding::TimedOut);
            assert!(started.elapsed() < Duration::from_secs(10));
            let pid: i32 = String::from_utf8(out.finish().await.0)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            assert!(
                gone_soon(pid),
                "{policy:?}: the background child {pid} survived"
            );
        }
    }

    #[tokio::test]
    async fn cancellation_stops_the_group() {
        let cancel = CancellationToken::new();
        let (mut child, group) = spawn_in_new_group(&mut sh("sleep 30")).unwrap();
        cancel.cancel();
        let ending = wait_or_stop(
            &mut child,
            group,
            Duration::from_secs(30),
            &cancel,
            StopPolicy::Kill,
        )
        .await
        .unwrap();
        assert_eq!(ending, GroupEnding::Cancelled);
    }

    #[tokio::test]
    async fn dropping_the_guard_kills_the_group() {
        let (mut child, group) = spawn_in_new_group(&mut sh("sleep 30")).unwrap();
        let pid = group.as_ref().map(ProcessGroup::id).unwrap();
        drop(group);
        let status = child.wait().await.unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert!(gone_soon(pid));
    }
}
