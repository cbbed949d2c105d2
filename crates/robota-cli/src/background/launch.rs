//! `robota --bg "prompt"`: writes the session's launch file, starts its supervisor
//! detached from the terminal, waits until the session listens (so a `robota send` right
//! after finds it), prints its id and returns.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::registry::{Launch, Phase, SessionDir};
use super::supervisor::SUPERVISE_ARG;
use crate::args::Args;
use crate::headless::{EXIT_ERROR, EXIT_OK};
use crate::worktree::Worktree;

/// How long `--bg` waits for the session to listen.
const START_WAIT: Duration = Duration::from_secs(20);

/// The flags `--bg` adds to the session's own command line.
const DRIVER_FLAGS: &[&str] = &[
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--include-partial-messages",
    "--permission-prompt-tool",
    "stdio",
];

/// Starts the background session `args` describe; returns the exit status.
pub fn start(args: &Args, robota_home: &Path, worktree: Option<&Worktree>) -> u8 {
    let resumes = args.resume.is_some() || args.continue_session;
    let prompt = args.prompt.clone().unwrap_or_default();
    if prompt.trim().is_empty() && !resumes {
        eprintln!("Error: --bg needs a prompt: robota --bg \"what to do\"");
        return EXIT_ERROR;
    }
    let id = args
        .session_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let child = child_args(std::env::args().skip(1), Some(&prompt), &id, resumes);
    match launch(robota_home, id, child, prompt, worktree) {
        Ok(id) => {
            println!("{id}");
            EXIT_OK
        }
        Err(code) => code,
    }
}

/// `/bg` in the UI: goes on with session `session_id` in the background, sending
/// `prompt` first unless it is empty; returns the background session's id (`Err`: the
/// exit status, the reason printed). The UI's own arguments are kept but for those that
/// chose or started its session (its first prompt, `--resume`, `--continue`, …).
pub fn start_resumed(
    args: &Args,
    robota_home: &Path,
    session_id: &str,
    prompt: &str,
) -> Result<String, u8> {
    let mut given = without_session_choice(std::env::args().skip(1), args.prompt.as_deref());
    given.extend(["--resume".to_string(), session_id.to_string()]);
    let id = uuid::Uuid::new_v4().to_string();
    let child = child_args(given.into_iter(), None, &id, true);
    launch(robota_home, id, child, prompt.to_string(), None)
}

/// `given` without the flags that choose the session and without `first_prompt`.
fn without_session_choice(
    given: impl Iterator<Item = String>,
    first_prompt: Option<&str>,
) -> Vec<String> {
    let mut kept = Vec::new();
    let mut given = given.peekable();
    while let Some(arg) = given.next() {
        match arg.as_str() {
            "-c" | "--continue" | "--fork-session" => {}
            "--session-id" => {
                given.next();
            }
            // `--resume` takes an optional value.
            "-r" | "--resume" => {
                given.next_if(|next| !next.starts_with('-'));
            }
            _ if arg.starts_with("--resume=") || arg.starts_with("--session-id=") => {}
            _ if Some(arg.as_str()) == first_prompt => {}
            _ => kept.push(arg),
        }
    }
    kept
}

/// Writes the launch file, starts the supervisor and waits until it listens; returns the
/// session's id (`Err`: the exit status, the reason printed).
fn launch(
    robota_home: &Path,
    id: String,
    args: Vec<String>,
    prompt: String,
    worktree: Option<&Worktree>,
) -> Result<String, u8> {
    let cwd = std::env::current_dir().map_err(|e| {
        eprintln!("Error: cannot read the working directory: {e}");
        EXIT_ERROR
    })?;
    let dir = SessionDir::new(robota_home, &id);
    let launch = Launch {
        args,
        prompt,
        cwd,
        worktree: worktree.map(|w| w.path.clone()),
        branch: worktree.map(|w| w.branch.clone()),
    };
    if let Err(e) = write_launch(&dir, &launch) {
        eprintln!("Error: cannot prepare {}: {e}", dir.dir.display());
        return Err(EXIT_ERROR);
    }
    if let Err(e) = spawn_supervisor(&dir) {
        eprintln!("Error: cannot start the background session: {e}");
        return Err(EXIT_ERROR);
    }
    match wait_until_listening(&dir) {
        Ok(()) => Ok(id),
        Err(why) => {
            eprintln!("Error: the background session {id} did not start: {why}");
            Err(EXIT_ERROR)
        }
    }
}

/// `given` (this process's arguments) without `--bg`, the prompt and the flags the
/// driver sets itself, then the driver's flags and the session id (unless it resumes
/// one, which keeps its own).
fn child_args(
    mut given: impl Iterator<Item = String>,
    prompt: Option<&str>,
    id: &str,
    resumes: bool,
) -> Vec<String> {
    let mut args = Vec::new();
    while let Some(arg) = given.next() {
        match arg.as_str() {
            "--bg"
            | "-p"
            | "--print"
            | "--verbose"
            | "-w"
            | "--worktree"
            | "--include-partial-messages" => {}
            "--output-format" | "--input-format" | "--permission-prompt-tool" => {
                given.next();
            }
            _ if [
                "--output-format=",
                "--input-format=",
                "--permission-prompt-tool=",
                "--worktree=",
                "-w=",
            ]
            .iter()
            .any(|flag| arg.starts_with(flag)) => {}
            _ => args.push(arg),
        }
    }
    if let Some(at) = prompt.and_then(|prompt| args.iter().rposition(|a| a == prompt)) {
        args.remove(at);
    }
    args.extend(DRIVER_FLAGS.iter().map(|f| f.to_string()));
    if !resumes && !args.iter().any(|a| a == "--session-id") {
        args.extend(["--session-id".to_string(), id.to_string()]);
    }
    args
}

fn write_launch(dir: &SessionDir, launch: &Launch) -> std::io::Result<()> {
    dir.create()?;
    let text = serde_json::to_vec_pretty(launch).map_err(std::io::Error::other)?;
    std::fs::write(dir.launch(), text)
}

/// Starts `robota __background <dir>` with no terminal: it makes itself a session
/// leader, so closing this terminal does not reach it.
fn spawn_supervisor(dir: &SessionDir) -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    let stderr = std::fs::File::create(dir.stderr())?;
    Command::new(exe)
        .arg(SUPERVISE_ARG)
        .arg(&dir.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .map(drop)
}

/// Waits until the session's state leaves `starting` with its socket answering; `Err`
/// says what went wrong instead.
fn wait_until_listening(dir: &SessionDir) -> Result<(), String> {
    let deadline = Instant::now() + START_WAIT;
    while Instant::now() < deadline {
        if let Some(state) = dir.read_state() {
            match state.state {
                Phase::Starting => {}
                Phase::Failed => return Err(state.reason.unwrap_or_default()),
                _ => return Ok(()),
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!(
        "it did not answer within {} s (see {})",
        START_WAIT.as_secs(),
        dir.stderr().display()
    ))
}
