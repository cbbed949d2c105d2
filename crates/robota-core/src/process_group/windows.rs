//! Process groups on Windows: a job object per group. The leader is spawned in a console
//! process group of its own (Ctrl+C at robota's console does not reach it) and assigned to a
//! new job right after it starts; what it starts joins the job too. Stopping the group is
//! `TerminateJobObject`; the job is made with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, so when
//! its last handle closes — the guard dropped, or robota itself ending, however it ends — the
//! whole tree goes with it. A group released after its leader exited by itself has that limit
//! lifted first, so what the leader deliberately left running stays, as on Unix.
//!
//! The ids robota passes around are the leaders' pids; a table maps each group still held
//! here to its job, so [`kill_group`] reaches the whole tree. A detached group (an `async`
//! hook, [`detach_into_new_group`]) has no job: [`kill_detached`] ends its leader only. Between the spawn and the
//! assignment to the job there is a short window in which the leader runs outside it (the
//! standard library cannot spawn suspended); a shell starts nothing that early.

use std::collections::HashMap;
use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tokio::process::{Child, Command};
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::CREATE_NEW_PROCESS_GROUP;

use super::{GroupEnding, StopPolicy, watch};

/// The exit code the processes of a stopped job get (what a SIGKILL reads as in a shell's
/// `$?`, 128 + 9).
const STOPPED_EXIT_CODE: u32 = 137;

/// A job object handle, closed when dropped.
#[derive(Debug)]
struct Job(HANDLE);

// SAFETY: a job handle is a kernel object reference usable from any thread; the job
// functions called on it are thread-safe.
unsafe impl Send for Job {}
// SAFETY: as above; `&Job` only passes the handle to thread-safe kernel calls.
unsafe impl Sync for Job {}

impl Job {
    /// A new unnamed job that kills its processes when its last handle closes.
    fn new() -> io::Result<Job> {
        // SAFETY: no security attributes and no name (both may be null); the result is
        // either null (an error) or a handle this `Job` owns from here on.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        let job = Job(handle);
        job.set_limit_flags(JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE)?;
        Ok(job)
    }

    fn set_limit_flags(&self, flags: u32) -> io::Result<()> {
        let mut info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        info.BasicLimitInformation.LimitFlags = flags;
        // SAFETY: `self.0` is an open job handle; `info` is a valid
        // JOBOBJECT_EXTENDED_LIMIT_INFORMATION of the size passed, read during the call only.
        let ok = unsafe {
            SetInformationJobObject(
                self.0,
                JobObjectExtendedLimitInformation,
                (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn assign(&self, process: HANDLE) -> io::Result<()> {
        // SAFETY: both handles are open (the child's is held by its `Child`).
        if unsafe { AssignProcessToJobObject(self.0, process) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn terminate(&self) {
        // SAFETY: `self.0` is an open job handle; terminating an empty job does nothing.
        unsafe {
            TerminateJobObject(self.0, STOPPED_EXIT_CODE);
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: this `Job` owns the handle and closes it once.
        unsafe {
            CloseHandle(self.0);
        }
    }
}

/// The jobs of the groups still held here, by their leader's pid.
fn jobs() -> MutexGuard<'static, HashMap<i32, Arc<Job>>> {
    static JOBS: OnceLock<Mutex<HashMap<i32, Arc<Job>>>> = OnceLock::new();
    JOBS.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Spawns `command` as the leader of a new group (a job of its own). The child is killed if
/// its handle is dropped, and the returned guard kills the whole tree when dropped (unless
/// [`ProcessGroup::release`]d), so a run abandoned half-way leaves nothing behind.
pub fn spawn_in_new_group(command: &mut Command) -> io::Result<(Child, Option<ProcessGroup>)> {
    command
        .creation_flags(CREATE_NEW_PROCESS_GROUP)
        .kill_on_drop(true);
    let child = command.spawn()?;
    let group = ProcessGroup::led_by(&child);
    Ok((child, group))
}

/// A group: the job its leader was assigned to. Terminates the job when dropped, unless
/// released.
#[derive(Debug)]
pub struct ProcessGroup {
    pid: i32,
    job: Arc<Job>,
    /// Stopped or released already: dropping only forgets it.
    settled: bool,
}

impl ProcessGroup {
    /// A new job holding `child` (just spawned, through [`spawn_in_new_group`]); `None`
    /// when it has exited already or the job cannot be made (then only the child itself is
    /// stopped, through its handle).
    pub fn led_by(child: &Child) -> Option<ProcessGroup> {
        let pid = child.id().and_then(|pid| i32::try_from(pid).ok())?;
        let process = child.raw_handle()?;
        let job = Job::new().and_then(|job| job.assign(process as HANDLE).map(|()| job));
        match job {
            Ok(job) => {
                let job = Arc::new(job);
                jobs().insert(pid, Arc::clone(&job));
                Some(ProcessGroup {
                    pid,
                    job,
                    settled: false,
                })
            }
            Err(err) => {
                tracing::warn!("no job object for process {pid}: {err}");
                None
            }
        }
    }

    /// The group id (the leader's pid).
    pub fn id(&self) -> i32 {
        self.pid
    }

    /// Terminates every process in the job and reaps the leader `child`. There is no
    /// SIGTERM on Windows: both policies stop the job at once.
    pub async fn stop(mut self, child: &mut Child, _policy: StopPolicy) {
        self.job.terminate();
        let _ = child.wait().await;
        self.settled = true;
    }

    /// Forgets the group: dropping the guard no longer stops it, and closing the job no
    /// longer kills what is left in it.
    pub fn release(mut self) {
        let _ = self.job.set_limit_flags(0);
        self.settled = true;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if !self.settled {
            self.job.terminate();
        }
        jobs().remove(&self.pid);
        if let Some(watch) = watch() {
            watch.ended(self.pid);
        }
    }
}

/// Stops the group led by `pgid`: its whole job, when the group is one this process holds
/// (a group that ended and was released, or another process's, is left alone: its pid may
/// name another process by now).
pub fn kill_group(pgid: i32) {
    let job = jobs().get(&pgid).cloned();
    if let Some(job) = job {
        job.terminate();
    }
}

/// Spawns `command`, when it is spawned, in a console process group of its own, for a child
/// that no [`ProcessGroup`] guard stops (an `async` hook left running when robota exits).
pub fn detach_into_new_group(command: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::windows::process::CommandExt;
    command.creation_flags(CREATE_NEW_PROCESS_GROUP)
}

/// Stops a child started through [`detach_into_new_group`]: its leader (it has no job).
pub fn kill_detached(child: &mut std::process::Child) {
    let _ = child.kill();
}

/// How the leader's exit status reads: its exit code (Windows has no signals).
pub fn ending_of(status: ExitStatus) -> GroupEnding {
    GroupEnding::Exited(status.code().unwrap_or(-1))
}
