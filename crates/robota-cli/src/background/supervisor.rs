//! The supervisor of a background session (`robota __background <dir>`): it leaves the
//! terminal's session, runs the session as a `robota -p` child speaking the Agent SDK's
//! stream-json, and serves the control socket. Every line the child writes is appended to
//! `events.jsonl` and sent to every connected client, after a first line saying where in
//! `events.jsonl` the client's lines begin (`robota attach` reads what came before from
//! the file). Every line a client sends is written to the child (a user message is a
//! prompt: `robota send`). The child asks permission questions (`can_use_tool`) of the
//! clients: the first answer goes to the child and is shown to the others; a question
//! with no client to answer it waits. The state file follows: running while a prompt is
//! answered, waiting for permission while a question is open, idle when all are.
//! SIGTERM (`robota stop`) ends the child, which ends the commands it started, then the
//! supervisor.

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::process::{Child, Command};
use tokio::sync::{broadcast, mpsc};

use super::registry::{Launch, Phase, SessionDir, State};

/// The first argument that makes `robota` a supervisor.
pub const SUPERVISE_ARG: &str = "__background";

/// The `system` subtype of the first line each client is sent: `events_offset` says
/// where in `events.jsonl` the lines sent to it next begin.
pub const ATTACHED_SUBTYPE: &str = "robota_attached";

/// Lines kept for a client that reads slower than the session writes.
const FEED_CAPACITY: usize = 4096;

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
    // Only the user may drive the session (its directory is 0700 too).
    std::fs::set_permissions(
        dir.socket(),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )?;
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

/// The relay's bookkeeping: the event log, the clients' feed, and what the state file
/// follows.
struct Relay {
    dir: SessionDir,
    events: std::fs::File,
    /// Bytes in `events.jsonl`: a client attaching now reads up to here from the file.
    logged: u64,
    feed: broadcast::Sender<String>,
    /// Prompts sent and not yet answered with a `result`.
    pending: u32,
    /// Permission questions (`can_use_tool` request ids) asked and not yet answered.
    questions: HashSet<String>,
}

impl Relay {
    /// Appends `line` to the event log and sends it to every client.
    fn record(&mut self, line: &str) {
        if writeln!(self.events, "{line}").is_ok() {
            self.logged += line.len() as u64 + 1;
        }
        let _ = self.feed.send(line.to_string());
    }

    /// A line of the session: logged, sent on, and followed in the state.
    fn session_said(&mut self, state: &mut State, line: &str) {
        self.record(line);
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            return;
        };
        match value["type"].as_str() {
            Some("result") => {
                self.pending = self.pending.saturating_sub(1);
                state.turns += 1;
                state.cost_usd += value["total_cost_usd"].as_f64().unwrap_or(0.0);
            }
            Some("control_request") if value["request"]["subtype"] == "can_use_tool" => {
                if let Some(id) = value["request_id"].as_str() {
                    self.questions.insert(id.to_string());
                }
            }
            _ => return,
        }
        self.settle(state);
    }

    /// A client's line: what to write to the session, if anything. A prompt is logged
    /// and shown to every client; only the first answer to a permission question goes
    /// through (and is shown to every client, so the others close it).
    fn client_said(&mut self, state: &mut State, line: String) -> Option<String> {
        let value = serde_json::from_str::<Value>(&line).unwrap_or(Value::Null);
        match value["type"].as_str() {
            Some("user") => {
                self.record(&line);
                self.pending += 1;
            }
            Some("control_response") => {
                // An answer to a question already answered (or never asked) goes nowhere.
                let id = value["response"]["request_id"].as_str().unwrap_or("");
                if !self.questions.remove(id) {
                    return None;
                }
                self.record(&line);
            }
            _ => return Some(line),
        }
        self.settle(state);
        Some(line)
    }

    /// Sets the phase from what is pending, and writes the state file.
    fn settle(&self, state: &mut State) {
        state.state = if !self.questions.is_empty() {
            Phase::WaitingForPermission
        } else if self.pending > 0 {
            Phase::Running
        } else {
            Phase::Idle
        };
        let _ = self.dir.write_state(state);
    }
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
    let Ok(events) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.events())
    else {
        return fail(&dir, state, "cannot open events.jsonl".into());
    };
    let logged = events.metadata().map(|m| m.len()).unwrap_or(0);
    let mut relay = Relay {
        dir: dir.clone(),
        events,
        logged,
        feed: broadcast::channel::<String>(FEED_CAPACITY).0,
        pending: 0,
        questions: HashSet::new(),
    };
    let (heard_tx, mut heard) = mpsc::unbounded_channel();
    if prompt.trim().is_empty() {
        // A session moved to the background with `/bg` and no prompt: it waits.
        relay.settle(state);
    } else {
        let first = json!({"type": "user", "message": {"role": "user", "content": prompt}});
        if let Some(line) = relay.client_said(state, first.to_string())
            && stdin
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
        {
            return finish(&dir, state, child).await;
        }
    }
    let mut out = BufReader::new(stdout).lines();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    loop {
        tokio::select! {
            line = out.next_line() => match line {
                Ok(Some(line)) => relay.session_said(state, &line),
                _ => break,
            },
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    let feed = relay.feed.subscribe();
                    tokio::spawn(client(stream, heard_tx.clone(), feed, relay.logged));
                }
            }
            Some(Heard::FromClient(line)) = heard.recv() => {
                if let Some(line) = relay.client_said(state, line)
                    && stdin.write_all(format!("{line}\n").as_bytes()).await.is_err()
                {
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

/// Serves one client: first where its live lines begin in `events.jsonl` (an attaching
/// client reads what came before from the file), then the session's lines as they come;
/// its own lines go to the main loop.
async fn client(
    stream: UnixStream,
    heard: mpsc::UnboundedSender<Heard>,
    mut lines: broadcast::Receiver<String>,
    logged: u64,
) {
    let (read, mut write) = stream.into_split();
    let mut from_client = BufReader::new(read).lines();
    let hello = json!({"type": "system", "subtype": ATTACHED_SUBTYPE, "events_offset": logged});
    if write
        .write_all(format!("{hello}\n").as_bytes())
        .await
        .is_err()
    {
        // A client that wrote and left (`robota send`): what it wrote still counts.
        while let Ok(Some(line)) = from_client.next_line().await {
            if !line.trim().is_empty() && heard.send(Heard::FromClient(line)).is_err() {
                return;
            }
        }
        return;
    }
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
