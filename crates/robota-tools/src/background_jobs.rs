//! Bash's background mode: commands started detached in their own process group with
//! stdout and stderr going to a log file under a private temp dir (which the model reads
//! with Read), each with an id; a foreground command the user sent to the background is
//! adopted the same way (`adopt`). Jobs announce their groups to the reaper, so they die
//! with robota even when it is killed; dropping the registry kills every job's group and
//! removes the dir.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard};

use super::live_run::DetachedRun;
use super::sandbox::PreparedSandbox;
use super::shell_process::{ShellScript, shell_command};
use robota_core::process_group::{kill_group, spawn_in_new_group};

/// Appends the exit code to the log when the command ends, so a reader can tell.
const BACKGROUND_SCRIPT: &str = "__robota_cmd=$1; shift; eval \"$__robota_cmd\"; \
__robota_status=$?; printf '\\n[exit code: %d]\\n' \"$__robota_status\"";

/// A job as the session can list it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackgroundJob {
    /// The job's id (`bash_1`, `bash_2`…), which the model uses to refer to it.
    pub id: String,
    /// The command as given.
    pub command: String,
    /// The log file its stdout and stderr go to.
    pub output_path: PathBuf,
    /// The shell's exit code once it finished.
    pub exit_code: Option<i32>,
}

#[derive(Debug, Default)]
struct Jobs {
    next_id: u32,
    dir: Option<PathBuf>,
    running: Vec<(i32, Arc<Mutex<BackgroundJob>>)>,
}

/// The background jobs of one Bash tool.
#[derive(Debug, Default)]
pub struct BackgroundJobs {
    jobs: Mutex<Jobs>,
}

impl BackgroundJobs {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Jobs> {
        self.jobs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The directory the jobs' logs go to (made on first use), writable inside the
    /// sandbox so that a job may reopen its own log.
    pub fn log_dir(&self) -> std::io::Result<PathBuf> {
        let mut jobs = self.lock();
        match &jobs.dir {
            Some(dir) => Ok(dir.clone()),
            None => {
                let dir = std::env::temp_dir()
                    .join(format!("robota-bash-{}", uuid::Uuid::new_v4().simple()));
                let mut builder = std::fs::DirBuilder::new();
                builder.recursive(true);
                #[cfg(unix)]
                std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
                builder.create(&dir)?;
                jobs.dir = Some(dir.clone());
                Ok(dir)
            }
        }
    }

    /// A new job's id and log file.
    fn new_log(&self) -> std::io::Result<(String, PathBuf, std::fs::File)> {
        let dir = self.log_dir()?;
        let mut jobs = self.lock();
        jobs.next_id += 1;
        let id = format!("bash_{}", jobs.next_id);
        let output_path = dir.join(format!("{id}.log"));
        let log = std::fs::File::create(&output_path)?;
        Ok((id, output_path, log))
    }

    /// Takes over a foreground run the user sent to the background: its output so far and
    /// from now on goes to the job's log (without the line `hide` starts), which ends with
    /// `[exit code: N]`. Must run inside a tokio runtime.
    pub fn adopt(
        &self,
        command: &str,
        run: DetachedRun,
        hide: Option<String>,
    ) -> std::io::Result<BackgroundJob> {
        let (id, output_path, log) = self.new_log()?;
        let mut jobs = self.lock();
        let pgid = run.group_id();
        let job = Arc::new(Mutex::new(BackgroundJob {
            id,
            command: command.to_string(),
            output_path,
            exit_code: None,
        }));
        if let Some(pgid) = pgid {
            jobs.running.push((pgid, Arc::clone(&job)));
        }
        let ended = run.into_log(log, hide);
        let record = Arc::clone(&job);
        tokio::spawn(async move {
            let code = ended.await;
            record.lock().unwrap_or_else(|p| p.into_inner()).exit_code = Some(code);
        });
        let snapshot = job.lock().unwrap_or_else(|p| p.into_inner()).clone();
        Ok(snapshot)
    }

    /// Starts `command` in `cwd` and returns the job (id and output file). Must run
    /// inside a tokio runtime (a task waits for the job to record its exit code).
    pub fn start(
        &self,
        command: &str,
        cwd: &Path,
        env: &[(String, String)],
        sandbox: Option<&Arc<PreparedSandbox>>,
    ) -> std::io::Result<BackgroundJob> {
        let (id, output_path, log) = self.new_log()?;
        let mut jobs = self.lock();
        let script = ShellScript {
            script: BACKGROUND_SCRIPT,
            args: &[command],
            cwd,
            env,
            sandbox,
        };
        let mut shell = shell_command(&script);
        shell
            .stdout(Stdio::from(log.try_clone()?))
            .stderr(Stdio::from(log));
        // A group of its own that announces itself to the reaper, so a job dies with robota
        // even when robota is killed outright.
        let (mut child, group) = spawn_in_new_group(&mut shell)?;
        let job = Arc::new(Mutex::new(BackgroundJob {
            id,
            command: command.to_string(),
            output_path,
            exit_code: None,
        }));
        if let Some(pid) = child.id() {
            jobs.running.push((pid as i32, Arc::clone(&job)));
        }
        let record = Arc::clone(&job);
        tokio::spawn(async move {
            if let Ok(status) = child.wait().await {
                let mut job = record.lock().unwrap_or_else(|p| p.into_inner());
                job.exit_code = Some(status.code().unwrap_or(-1));
            }
            // The job ended by itself: like a foreground command's, what it deliberately
            // left running stays, and the reaper forgets the group.
            if let Some(group) = group {
                group.release();
            }
        });
        let snapshot = job.lock().unwrap_or_else(|p| p.into_inner()).clone();
        Ok(snapshot)
    }

    /// Every job started so far, oldest first.
    pub fn list(&self) -> Vec<BackgroundJob> {
        self.lock()
            .running
            .iter()
            .map(|(_, job)| job.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .collect()
    }

    /// Kills job `id`'s process group: `Some(true)` when it was running, `Some(false)` when
    /// it had already finished, `None` when there is no such job.
    pub fn stop(&self, id: &str) -> Option<bool> {
        let jobs = self.lock();
        let (pgid, job) = jobs
            .running
            .iter()
            .find(|(_, job)| job.lock().unwrap_or_else(|p| p.into_inner()).id == id)?;
        let finished = job
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .exit_code
            .is_some();
        if !finished {
            kill_group(*pgid);
        }
        Some(!finished)
    }

    /// Kills every job's process group (their logs stay until the registry is dropped).
    pub fn stop_all(&self) {
        for (pgid, _) in &self.lock().running {
            kill_group(*pgid);
        }
    }
}

impl Drop for BackgroundJobs {
    fn drop(&mut self) {
        self.stop_all();
        if let Some(dir) = self.lock().dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
