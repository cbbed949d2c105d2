//! Child processes that run in a process group of their own, so that everything they start
//! can be stopped together: spawning in a new group, waiting for the leader against a
//! timeout and a cancellation token, stopping the whole group (SIGKILL at once, or SIGTERM
//! then SIGKILL after a grace) when the run is cut short or dropped half-way, leaving
//! deliberately backgrounded processes alone when the leader exits by itself, and reading
//! the child's pipes in the background with a bounded wait once it has exited. Hooks and
//! the Bash tool both run their shells through this.
//!
//! What a group is comes from the platform, behind one API: on Unix a POSIX process group
//! (`unix.rs`: signals to the negative pid), on Windows a job object per group
//! (`windows.rs`: `TerminateJobObject`, and a job that kills its tree when its last handle
//! closes). This file holds what both share.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Child;
use tokio_util::sync::CancellationToken;

/// After the leader exits, how long to keep reading pipes that a leftover background
/// process still holds open.
pub const DRAIN_GRACE: Duration = Duration::from_millis(250);

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{
    ProcessGroup, detach_into_new_group, ending_of, kill_detached, kill_group, signal_group,
    spawn_in_new_group,
};
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{
    ProcessGroup, detach_into_new_group, ending_of, kill_detached, kill_group, spawn_in_new_group,
};

/// How a group is stopped when its run is cut short. (On Windows both terminate the job at
/// once: it has no SIGTERM.)
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
/// (On Windows the job objects stop the trees themselves when robota dies, so nothing
/// announces there and only [`GroupWatch::ended`] is called.)
pub trait GroupWatch: Send + Sync {
    /// The write end of the pipe leaders announce themselves on (started on first use);
    /// `None` when there is none.
    #[cfg(unix)]
    fn announce_fd(&self) -> Option<std::os::fd::RawFd>;
    /// The group ended or was stopped.
    fn ended(&self, pgid: i32);
}

static WATCH: OnceLock<Box<dyn GroupWatch>> = OnceLock::new();

/// Installs the process-wide watch (once; `false` if one was already installed).
pub fn set_group_watch(watch: Box<dyn GroupWatch>) -> bool {
    WATCH.set(watch).is_ok()
}

pub(crate) fn watch() -> Option<&'static dyn GroupWatch> {
    WATCH.get().map(|w| w.as_ref())
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
        status = child.wait() => ending_of(status?),
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
#[cfg(unix)]
mod tests;
