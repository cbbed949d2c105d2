//! The supervisor of a background session (`robota __background <dir>`): it leaves the
//! terminal's session, runs the session as a `robota -p` child speaking the Agent SDK's
//! stream-json, and serves the control socket. Every line the child writes is appended to
//! `events.jsonl` and sent to every connected client; every line a client sends is
//! written to the child (a user message is a prompt: `robota send`). The state file
//! follows: running while a prompt is answered, idle when all are. SIGTERM (`robota
//! stop`) ends the child, which ends the commands it started, then the supervisor.

use std::io::Write;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{broadcast, mpsc};

use super::registry::{Launch, Phase, SessionDir, State};

/// The first argument that makes `robota` a supervisor.
pub const SUPERVISE_ARG: &str = "__background";

/// How long the child has to end after SIGTERM before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Runs the supervisor of the session in `dir` (the argument after [`SUPERVISE_ARG`]).
pub fn run(dir: Option<PathBuf>) -> ExitCode {
    let Some(dir) = dir else {
        eprintln!("robota {SUPERVISE_ARG}: no session directory given");
        return ExitCode::FAILURE;
    };
    // SAFETY: setsid takes no pointers and has no preconditions; it fails harmlessly
    // (EPERM) when this process already leads a process group.
    unsafe { libc::setsid() };
    let dir = SessionDir { dir };
    let runtime = match crate::runtime() {
        Ok(runtime) => runtime,
        Err(code) => return ExitCode::from(code),
    };
    let code = runtime.block_on(supervise(dir));
    runtime.shutdown_timeout(Duration::from_millis(200));
    code
}

async fn supervise(dir: SessionDir) -> ExitCode {
    let launch: Launch = match std::fs::read(dir.launch())
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_slice(&t).map_err(|e| e.to_string()))
    {
        Ok(launch) => launch,
        Err(e) => {
            eprintln!(
                "robota {SUPERVISE_ARG}: cannot read {}: {e}",
                dir.launch().display()
            );
            return ExitCode::FAILURE;
        }
    };
    let mut state = State {
        id: dir
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        name: name_of(&launch.args),
        cwd: launch.cwd.clone(),
        worktree: launch.worktree.clone(),
        branch: launch.branch.clone(),
        pid: std::process::id(),
        started: jiff::Timestamp::now().to_string(),
        state: Phase::Starting,
        reason: None,
        turns: 0,
        cost_usd: 0.0,
    };
    match start(&dir, &launch).await {
        Ok((listener, child)) => serve(dir, &mut state, listener, child, &launch.prompt).await,
        Err(e) => {
            state.state = Phase::Failed;
            state.reason = Some(e.to_string());
            let _ = dir.write_state(&state);
            ExitCode::FAILURE
        }
    }
}

/// `--name NAME` of the child's arguments.
fn name_of(args: &[String]) -> Option<String> {
    let at = args.iter().position(|a| a == "--name" || a == "-n")?;
    args.get(at + 1).cloned()
}

/// Binds the control socket and starts the session's process.
async fn start(dir: &SessionDir, launch: &Launch) -> std::io::Result<(UnixListener, Child)> {
    let _ = std::fs::remove_file(dir.socket());
    let listener = UnixListener::bind(dir.socket())?;
    let exe = std::env::current_exe()?;
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.stderr())?;
    let child = Command::new(exe)
        .args(&launch.args)
        .current_dir(&launch.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()?;
    Ok((listener, child))
}

/// What the main loop hears.
enum Heard {
    /// A line from a client, for the child.
    FromClient(String),
}

/// The running session: relays lines until the child ends or SIGTERM comes.
async fn serve(
    dir: SessionDir,
    state: &mut State,
    listener: UnixListener,
    mut child: Child,
    prompt: &str,
) -> ExitCode {
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return fail(&dir, state, "the session's process has no pipes".into());
    };
    let Ok(mut events) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.events())
    else {
        return fail(&dir, state, "cannot open events.jsonl".into());
    };
    let (lines_tx, _) = broadcast::channel::<String>(1024);
    let (heard_tx, mut heard) = mpsc::unbounded_channel();
    let mut pending = 0u32;
    if send_prompt(&mut stdin, &mut events, prompt).await.is_ok() {
        pending += 1;
    }
    state.state = Phase::Running;
    let _ = dir.write_state(state);
    let mut out = BufReader::new(stdout).lines();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    loop {
        tokio::select! {
            line = out.next_line() => match line {
                Ok(Some(line)) => {
                    let _ = writeln!(events, "{line}");
                    let _ = lines_tx.send(line.clone());
                    if follow(state, &line, &mut pending) {
                        let _ = dir.write_state(state);
                    }
                }
                _ => break,
            },
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    tokio::spawn(client(stream, heard_tx.clone(), lines_tx.subscribe()));
                }
            }
            Some(Heard::FromClient(line)) = heard.recv() => {
                if is_prompt(&line) {
                    let _ = writeln!(events, "{line}");
                    pending += 1;
                    state.state = Phase::Running;
                    let _ = dir.write_state(state);
                }
                if stdin.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                    break;
                }
            }
            _ = terminated(&mut term) => {
                return stop(&dir, state, child).await;
            }
        }
    }
    finish(&dir, state, child).await
}

/// Writes the first prompt to the child and to the event log.
async fn send_prompt(
    stdin: &mut ChildStdin,
    events: &mut std::fs::File,
    prompt: &str,
) -> std::io::Result<()> {
    let line = json!({"type": "user", "message": {"role": "user", "content": prompt}}).to_string();
    writeln!(events, "{line}")?;
    stdin.write_all(format!("{line}\n").as_bytes()).await
}

/// Whether a client's line is a user message (a prompt to answer).
fn is_prompt(line: &str) -> bool {
    serde_json::from_str::<Value>(line).is_ok_and(|v| v["type"] == "user")
}

/// Updates `state` from a line of the child; `true` when it changed.
fn follow(state: &mut State, line: &str, pending: &mut u32) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    if value["type"] != "result" {
        return false;
    }
    *pending = pending.saturating_sub(1);
    state.turns += 1;
    state.cost_usd += value["total_cost_usd"].as_f64().unwrap_or(0.0);
    if *pending == 0 {
        state.state = Phase::Idle;
    }
    true
}

/// Serves one client: its lines go to the main loop, the session's lines go to it.
async fn client(
    stream: UnixStream,
    heard: mpsc::UnboundedSender<Heard>,
    mut lines: broadcast::Receiver<String>,
) {
    let (read, mut write) = stream.into_split();
    let mut from_client = BufReader::new(read).lines();
    loop {
        tokio::select! {
            line = from_client.next_line() => match line {
                Ok(Some(line)) if !line.trim().is_empty() => {
                    if heard.send(Heard::FromClient(line)).is_err() {
                        return;
                    }
                }
                Ok(Some(_)) => {}
                _ => return,
            },
            line = lines.recv() => match line {
                Ok(line) => {
                    if write.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return,
            },
        }
    }
}

async fn terminated(term: &mut Option<tokio::signal::unix::Signal>) {
    match term {
        Some(term) => {
            term.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// `robota stop`: asks the child to end (it ends the commands it started), kills it
/// after the grace period, and records the stop.
async fn stop(dir: &SessionDir, state: &mut State, mut child: Child) -> ExitCode {
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill takes no pointers; `pid` is our own child, not yet reaped.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    if tokio::time::timeout(STOP_GRACE, child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
    state.state = Phase::Stopped;
    let _ = dir.write_state(state);
    let _ = std::fs::remove_file(dir.socket());
    ExitCode::SUCCESS
}

/// The child's output ended: records how it ended.
async fn finish(dir: &SessionDir, state: &mut State, mut child: Child) -> ExitCode {
    let status = child.wait().await;
    let _ = std::fs::remove_file(dir.socket());
    match status {
        Ok(status) if status.success() => {
            state.state = Phase::Finished;
            let _ = dir.write_state(state);
            ExitCode::SUCCESS
        }
        Ok(status) => fail(dir, state, format!("the session ended with {status}")),
        Err(e) => fail(dir, state, format!("the session's process was lost: {e}")),
    }
}

fn fail(dir: &SessionDir, state: &mut State, reason: String) -> ExitCode {
    state.state = Phase::Failed;
    state.reason = Some(reason);
    let _ = dir.write_state(state);
    let _ = std::fs::remove_file(dir.socket());
    ExitCode::FAILURE
}
