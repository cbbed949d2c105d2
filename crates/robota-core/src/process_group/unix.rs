//! Process groups on Unix: the leader spawned with `process_group(0)` (announcing itself to
//! the [`GroupWatch`] between fork and exec), the whole group signalled through the negative
//! pid, SIGKILL when the guard is dropped.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::ExitStatus;

use tokio::process::{Child, Command};

#[cfg(doc)]
use super::GroupWatch;
use super::{GroupEnding, StopPolicy, watch};

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

/// SIGKILL to every process in the group `pgid`.
pub fn kill_group(pgid: i32) {
    signal_group(pgid, libc::SIGKILL);
}

/// Makes `command` the leader of a process group of its own when spawned, for a child that
/// no [`ProcessGroup`] guard stops (an `async` hook left running when robota exits).
pub fn detach_into_new_group(command: &mut std::process::Command) -> &mut std::process::Command {
    command.process_group(0)
}

/// SIGKILL to the group of a child started through [`detach_into_new_group`].
pub fn kill_detached(child: &mut std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        kill_group(pid);
    }
}

/// How the leader's exit status reads: its code, or the signal that ended it.
pub fn ending_of(status: ExitStatus) -> GroupEnding {
    match (status.code(), status.signal()) {
        (Some(code), _) => GroupEnding::Exited(code),
        (None, Some(signal)) => GroupEnding::Signaled(signal),
        (None, None) => GroupEnding::Exited(-1),
    }
}
