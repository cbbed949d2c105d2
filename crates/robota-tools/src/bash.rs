//! The Bash tool: runs a command through `shell_process` in a working directory that
//! persists between calls (a marker plus `$PWD` is printed after the command and parsed
//! back out of stdout), reports stdout, stderr and a non-zero exit code, timeouts and
//! interruptions, and starts background jobs (`background_jobs`) on request. While a
//! command runs, its last lines are reported as the call's progress, and the user can send
//! it to the background (`send_to_background`): the call returns the job at once. When the
//! host offers a terminal (`host`), foreground commands run there instead. Once given the
//! session's permission policy ([`BashTool::sandboxed_by`]), local commands — foreground
//! and background — run in the sandbox (`sandbox`) whenever the policy says so; a
//! sandboxed command that fails as the sandbox would make it fail gets a hint that it may
//! be run outside (`dangerouslyDisableSandbox`, which asks the user).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::background_jobs::{BackgroundJob, BackgroundJobs};
use super::background_note::{BackgroundStart, background_note};
use super::host::{HostEnding, HostTerminal, TerminalCommand, ToolHost};
use super::input::{ToolFailure, ToolInput, into_output};
use super::live_run::{DetachSignal, RunWatch, WatchedRun, run_watched};
#[cfg(unix)]
use super::sandbox::proxy::{DomainCheck, DomainProxy, domain_allowed};
use super::sandbox::{
    PreparedSandbox, SandboxDirs, SandboxSpec, failure_hint, files_guard_hint, prepare,
};
use super::shell_process::{Ending, ShellScript};
use robota_core::permission::{CallFacts, Confinement, DISABLE_SANDBOX_FIELD, PermissionPolicy};
use robota_core::{RiskClass, Tool, ToolContext, ToolOutput};

pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// Runs the command (`$1`) with `eval`, then prints the marker (`$2`) and the directory it
/// ended in, keeping the command's exit status.
const TRACKING_SCRIPT: &str = "__robota_cmd=$1; __robota_marker=$2; shift 2; eval \"$__robota_cmd\"; \
__robota_status=$?; printf '\\n%s%s\\n' \"$__robota_marker\" \"$PWD\"; exit $__robota_status";

/// [`TRACKING_SCRIPT`] for the host's terminal: the directory the command ended in goes to
/// the file named by `$2` instead of stdout.
const TERMINAL_TRACKING_SCRIPT: &str = "__robota_cmd=$1; __robota_dir_file=$2; shift 2; eval \"$__robota_cmd\"; \
__robota_status=$?; printf '%s' \"$PWD\" > \"$__robota_dir_file\" 2>/dev/null; exit $__robota_status";

const DESCRIPTION: &str = "Runs a shell command with bash and returns its stdout, then stderr; a non-zero exit code makes the result an error. \
The working directory persists between calls (`cd` carries over); shell variables do not. stdin is empty, so avoid interactive commands. \
Quote paths with spaces. timeout is in ms (default 120000, max 600000); on timeout the command and its child processes are killed. \
run_in_background starts a long-running command (server, watcher) and returns a log file to Read later. \
Prefer Read, Edit, Write, Glob and Grep over cat, sed, echo >, find and grep. Chain dependent commands with &&.";

/// Where the shell is: the session directory it started from and where `cd` took it.
#[derive(Debug, Clone)]
struct ShellDir {
    session_dir: PathBuf,
    current: PathBuf,
}

/// Runs shell commands (Claude Code's `Bash`) in a working directory that persists between
/// calls, in the foreground or as background jobs.
#[derive(Debug)]
pub struct BashTool {
    dir: Mutex<ShellDir>,
    jobs: BackgroundJobs,
    /// What the host offers: its terminal, where foreground commands run when there is one.
    host: ToolHost,
    /// Sends the foreground commands running now to the background (Ctrl+B).
    detach: DetachSignal,
    /// Foreground commands running now (in this process, not the host's terminal).
    foreground: AtomicUsize,
    /// The session's live permission policy: whether and how to sandbox each command.
    policy: OnceLock<Arc<Mutex<PermissionPolicy>>>,
    /// The sandbox's private directory (made on the first sandboxed command).
    sandbox_dirs: OnceLock<std::io::Result<SandboxDirs>>,
    /// The domain proxy (started on the first sandboxed command that needs it).
    #[cfg(unix)]
    proxy: OnceLock<std::io::Result<DomainProxy>>,
}

impl BashTool {
    /// A shell starting in `start_dir`. Whenever a call's `ctx.cwd` differs from the
    /// directory the shell started in, it starts over in `ctx.cwd`.
    pub fn new(start_dir: &Path) -> Self {
        BashTool {
            dir: Mutex::new(ShellDir {
                session_dir: start_dir.to_path_buf(),
                current: start_dir.to_path_buf(),
            }),
            jobs: BackgroundJobs::new(),
            host: ToolHost::default(),
            detach: DetachSignal::default(),
            foreground: AtomicUsize::new(0),
            policy: OnceLock::new(),
            sandbox_dirs: OnceLock::new(),
            #[cfg(unix)]
            proxy: OnceLock::new(),
        }
    }

    /// Sandboxes local commands as the session's live `policy` says (its mode, its
    /// sandbox settings, its deny rules). Set once; `false` when it already was.
    pub fn sandboxed_by(&self, policy: Arc<Mutex<PermissionPolicy>>) -> bool {
        self.policy.set(policy).is_ok()
    }

    /// The confinement for `command` (input `input`) run from `run_dir`: the full sandbox
    /// when the policy puts it in one, else the filesystem-only confinement where the
    /// machine runs it (`Confinement`). `Err` when it should apply but cannot be
    /// prepared: the command does not run.
    fn sandbox_for(
        &self,
        command: &str,
        input: &Value,
        session_dir: &Path,
        run_dir: &Path,
        background: bool,
    ) -> Result<Option<(Arc<PreparedSandbox>, Confinement)>, ToolFailure> {
        let Some(policy) = self.policy.get() else {
            return Ok(None);
        };
        let policy = policy.lock().map(|p| p.clone()).unwrap_or_default();
        let confinement = policy.confinement(command, Some(input));
        if confinement == Confinement::Unconfined {
            return Ok(None);
        }
        let dirs = self
            .sandbox_dirs
            .get_or_init(SandboxDirs::create)
            .as_ref()
            .map_err(|e| ToolFailure::failed(format!("Cannot set up the sandbox: {e}")))?;
        let extra = if background {
            self.jobs.log_dir().into_iter().collect()
        } else {
            Vec::new()
        };
        let mut spec = if confinement == Confinement::Sandbox {
            SandboxSpec::for_policy(&policy, session_dir, run_dir, dirs, &extra)
        } else {
            SandboxSpec::files_only(&policy, session_dir, run_dir, dirs, &extra)
        };
        let call = CallFacts {
            shell_dir: Some(run_dir),
            input: Some(input),
            ..CallFacts::new("Bash", RiskClass::Execute, Some(command), session_dir)
        };
        spec.apply(policy.bash_kernel_terms(&call));
        if confinement == Confinement::Sandbox
            && policy.sandbox.settings.proxied_domains().is_some()
        {
            spec.proxy_socket = self.domain_proxy(dirs)?;
        }
        prepare(&spec, dirs)
            .map(|p| Some((Arc::new(p), confinement)))
            .map_err(|e| ToolFailure::failed(format!("Cannot set up the sandbox: {e}")))
    }

    /// The socket of the domain proxy (started on first use) that checks each host against
    /// the live policy's `allowedDomains`.
    #[cfg(unix)]
    fn domain_proxy(&self, dirs: &SandboxDirs) -> Result<Option<PathBuf>, ToolFailure> {
        let proxy = self
            .proxy
            .get_or_init(|| {
                let live = self
                    .policy
                    .get()
                    .ok_or_else(|| std::io::Error::other("the sandbox policy is not set"))?;
                let live = Arc::clone(live);
                let check: DomainCheck = Arc::new(move |host: &str| {
                    live.lock().is_ok_and(|p| {
                        p.sandbox
                            .settings
                            .proxied_domains()
                            .is_some_and(|domains| domain_allowed(domains, host))
                    })
                });
                DomainProxy::start(&dirs.proxy_socket(), check)
            })
            .as_ref()
            .map_err(|e| {
                ToolFailure::failed(format!("Cannot start the sandbox's domain proxy: {e}"))
            })?;
        Ok(Some(proxy.socket().to_path_buf()))
    }

    /// No domain proxy where there is no sandbox backend to send traffic through it
    /// (preparing the sandbox says so).
    #[cfg(not(unix))]
    fn domain_proxy(&self, _dirs: &SandboxDirs) -> Result<Option<PathBuf>, ToolFailure> {
        Ok(None)
    }

    /// Runs foreground commands in the host's terminal when `host` offers one.
    pub fn on_host(mut self, host: &ToolHost) -> Self {
        self.host = host.clone();
        self
    }

    fn lock_dir(&self) -> MutexGuard<'_, ShellDir> {
        self.dir.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The directory the next command runs in (follows `cd`).
    pub fn current_dir(&self) -> PathBuf {
        self.lock_dir().current.clone()
    }

    /// Background jobs started so far, with their output files and exit codes.
    pub fn background_jobs(&self) -> Vec<BackgroundJob> {
        self.jobs.list()
    }

    /// Sends the foreground commands running now to the background: each call returns at
    /// once with the job's id and log file, and the command goes on. Returns whether one
    /// was running.
    pub fn send_to_background(&self) -> bool {
        let running = self.foreground.load(Ordering::SeqCst) > 0;
        if running {
            self.detach.request();
        }
        running
    }

    /// Background jobs still running.
    pub fn running_background_jobs(&self) -> usize {
        self.jobs
            .list()
            .iter()
            .filter(|job| job.exit_code.is_none())
            .count()
    }

    /// Kills every background job (dropping the tool does too).
    pub fn stop_background_jobs(&self) {
        self.jobs.stop_all();
    }

    /// Kills the background job `id`: `Some(true)` when it was running, `Some(false)`
    /// when it had already finished, `None` when there is no such job.
    pub fn stop_background_job(&self, id: &str) -> Option<bool> {
        self.jobs.stop(id)
    }

    /// Starts `command` as a background job, as a call with `run_in_background` does.
    pub fn start_background_job(
        &self,
        command: &str,
        cwd: &Path,
        env: &[(String, String)],
    ) -> std::io::Result<BackgroundJob> {
        self.jobs.start(command, cwd, env, None)
    }

    /// The directory to run in, and a note when the remembered one had disappeared.
    fn working_dir(&self, ctx: &ToolContext) -> (PathBuf, Option<String>) {
        let mut dir = self.lock_dir();
        if dir.session_dir != ctx.cwd {
            *dir = ShellDir {
                session_dir: ctx.cwd.clone(),
                current: ctx.cwd.clone(),
            };
        }
        if dir.current != dir.session_dir && !dir.current.is_dir() {
            let note = format!(
                "(The previous working directory {} no longer exists; running in {}.)",
                dir.current.display(),
                dir.session_dir.display()
            );
            dir.current = dir.session_dir.clone();
            return (dir.current.clone(), Some(note));
        }
        (dir.current.clone(), None)
    }

    async fn run(&self, raw: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolFailure> {
        let input = ToolInput::parse("Bash", raw)?;
        let command = input.required_str("command")?;
        if command.trim().is_empty() {
            return Err(input.invalid("\"command\" must not be empty").into());
        }
        input.optional_str("description")?;
        let timeout_ms = match input.optional_u64("timeout")? {
            None | Some(0) => DEFAULT_TIMEOUT_MS,
            Some(ms) => ms.min(MAX_TIMEOUT_MS),
        };
        let background = input.optional_bool("run_in_background")?.unwrap_or(false);
        input.optional_bool(DISABLE_SANDBOX_FIELD)?;
        if cfg!(windows) && robota_core::git_bash::git_bash().is_none() {
            return Err(ToolFailure::failed(robota_core::git_bash::GIT_BASH_MISSING));
        }
        let (cwd, note) = self.working_dir(ctx);
        // The host's terminal is the client's business: no sandbox there.
        let local = background || self.host.terminal.is_none();
        let (sandbox, confinement) = if local {
            self.sandbox_for(command, raw, &ctx.cwd, &cwd, background)?
                .unzip()
        } else {
            (None, None)
        };

        if background {
            let job = self
                .jobs
                .start(command, &cwd, &ctx.env, sandbox.as_ref())
                .map_err(|err| {
                    ToolFailure::failed(format!("Failed to start the command: {err}"))
                })?;
            return Ok(background_note(&job, BackgroundStart::Asked));
        }

        if let Some(terminal) = &self.host.terminal {
            return self
                .run_in_terminal(terminal.as_ref(), command, &cwd, note, timeout_ms, ctx)
                .await;
        }
        let marker = format!("__ROBOTA_CWD_{}__", uuid::Uuid::new_v4().simple());
        let script = ShellScript {
            script: TRACKING_SCRIPT,
            args: &[command, &marker],
            cwd: &cwd,
            env: &ctx.env,
            sandbox: sandbox.as_ref(),
        };
        let tail = |lines: Vec<String>| ctx.progress.tail(lines);
        let watch = RunWatch {
            tail: Some(&tail),
            detach: Some(self.detach.subscribe()),
        };
        let counted = Counted::new(&self.foreground);
        let run = run_watched(
            &script,
            Duration::from_millis(timeout_ms),
            &ctx.cancel,
            watch,
        )
        .await;
        drop(counted);
        let run = match run {
            Ok(WatchedRun::Finished(run)) => run,
            Ok(WatchedRun::Detached(detached)) => {
                let job = self
                    .jobs
                    .adopt(command, detached, Some(marker))
                    .map_err(|err| {
                        ToolFailure::failed(format!(
                            "Failed to move the command to the background: {err}"
                        ))
                    })?;
                return Ok(background_note(&job, BackgroundStart::SentByUser));
            }
            Err(err) => {
                return Err(ToolFailure::failed(format!(
                    "Failed to run the command: {err}"
                )));
            }
        };
        let (stdout, new_dir) = take_marker(&run.stdout, &marker);
        if let Some(new_dir) = new_dir.filter(|d| d.is_dir()) {
            self.lock_dir().current = new_dir;
        }
        let status = local_status(run.ending, timeout_ms);
        let mut output = render(note, &[&stdout, &run.stderr], status);
        let hint = match confinement {
            Some(Confinement::Sandbox) => failure_hint(&output.content),
            Some(_) => files_guard_hint(&output.content),
            None => None,
        };
        if output.is_error
            && let Some(hint) = hint
        {
            output.content.push('\n');
            output.content.push_str(hint);
        }
        Ok(output)
    }

    /// A foreground command in the host's terminal. The directory it ends in comes back
    /// through a file (the terminal shows only the command's own output).
    async fn run_in_terminal(
        &self,
        terminal: &dyn HostTerminal,
        command: &str,
        cwd: &Path,
        note: Option<String>,
        timeout_ms: u64,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolFailure> {
        let dir_file =
            std::env::temp_dir().join(format!("robota-cwd-{}", uuid::Uuid::new_v4().simple()));
        let request = TerminalCommand {
            program: "bash".to_string(),
            args: vec![
                "-c".to_string(),
                TERMINAL_TRACKING_SCRIPT.to_string(),
                "robota-shell".to_string(),
                command.to_string(),
                dir_file.display().to_string(),
            ],
            cwd: cwd.to_path_buf(),
            env: ctx.env.clone(),
            tool_use_id: ctx.tool_use_id.clone(),
        };
        let run = terminal
            .run(request, Duration::from_millis(timeout_ms), &ctx.cancel)
            .await
            .map_err(|err| ToolFailure::failed(format!("Failed to run the command: {err}")));
        let new_dir = std::fs::read_to_string(&dir_file).ok();
        let _ = std::fs::remove_file(&dir_file);
        let run = run?;
        if let Some(new_dir) = new_dir.map(PathBuf::from).filter(|d| d.is_dir()) {
            self.lock_dir().current = new_dir;
        }
        let status = match run.ending {
            HostEnding::Exited(0) => None,
            HostEnding::Exited(code) => Some(format!("Exit code {code}")),
            HostEnding::Signaled(signal) => Some(format!("Killed by signal {signal}")),
            HostEnding::TimedOut => Some(timed_out(timeout_ms)),
            HostEnding::Cancelled => Some(INTERRUPTED.to_string()),
        };
        let mut output = run.output;
        if run.truncated {
            output.insert_str(0, "(The start of the output was cut.)\n");
        }
        Ok(render(note, &[&output], status))
    }
}

/// Counts one running command for as long as it lives (a dropped call included).
struct Counted<'a>(&'a AtomicUsize);

impl<'a> Counted<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Counted(count)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Removes the marker line from stdout and returns the directory it names.
fn take_marker(stdout: &str, marker: &str) -> (String, Option<PathBuf>) {
    let Some(at) = stdout.rfind(marker) else {
        return (stdout.to_string(), None);
    };
    let rest = &stdout[at + marker.len()..];
    let line_end = rest.find('\n').unwrap_or(rest.len());
    let dir = PathBuf::from(&rest[..line_end]);
    let start = if stdout[..at].ends_with('\n') {
        at - 1
    } else {
        at
    };
    let end = (at + marker.len() + line_end + 1).min(stdout.len());
    let mut cleaned = String::with_capacity(stdout.len());
    cleaned.push_str(&stdout[..start]);
    cleaned.push_str(&stdout[end..]);
    (cleaned, Some(dir))
}

const INTERRUPTED: &str = "Command interrupted by user";

fn timed_out(timeout_ms: u64) -> String {
    format!("Command timed out after {}", format_duration(timeout_ms))
}

/// The status line of a local run that did not exit with 0.
fn local_status(ending: Ending, timeout_ms: u64) -> Option<String> {
    match ending {
        Ending::Exited(0) => None,
        Ending::Exited(code) => Some(format!("Exit code {code}")),
        Ending::Signaled(signal) => Some(format!("Killed by signal {signal}")),
        Ending::TimedOut => Some(timed_out(timeout_ms)),
        Ending::Cancelled => Some(INTERRUPTED.to_string()),
    }
}

/// The result: the note, each non-empty stream, then the status line (which makes it an
/// error).
fn render(note: Option<String>, streams: &[&str], status: Option<String>) -> ToolOutput {
    let mut parts: Vec<String> = Vec::new();
    parts.extend(note);
    for stream in streams {
        let trimmed = stream.trim_end_matches(['\n', '\r']);
        if !trimmed.is_empty() {
            parts.push(trimmed.to_string());
        }
    }
    let is_error = status.is_some();
    parts.extend(status);
    let content = if parts.is_empty() {
        "(no output)".to_string()
    } else {
        parts.join("\n")
    };
    if is_error {
        ToolOutput::error(content)
    } else {
        ToolOutput::ok(content)
    }
}

fn format_duration(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

#[async_trait]
impl Tool for BashTool {
    fn name(&self) -> &str {
        "Bash"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command to execute"},
                "description": {"type": "string", "description": "What the command does, in 5-10 words"},
                "timeout": {"type": "number", "description": "Timeout in milliseconds (max 600000)"},
                "run_in_background": {"type": "boolean", "description": "Run in the background; Read its log file later"},
                "dangerouslyDisableSandbox": {"type": "boolean", "description": "Run outside the sandbox; only after a command failed because of it. The user is asked to approve."}
            },
            "required": ["command"]
        })
    }

    fn risk(&self) -> RiskClass {
        RiskClass::Execute
    }

    fn primary_argument(&self, input: &Value) -> Option<String> {
        input.get("command")?.as_str().map(str::to_string)
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        into_output(self.run(&input, ctx).await)
    }

    fn start_dir(&self) -> Option<PathBuf> {
        Some(self.current_dir())
    }
}

// The tests drive real shells with Unix tools (mkfifo, kill).
#[cfg(test)]
#[cfg(unix)]
#[path = "bash_tests.rs"]
mod tests;
