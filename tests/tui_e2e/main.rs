//! End-to-end tests of the full-screen UI: the real binary in a pseudo-terminal, its
//! screen parsed by vt100, talking to a mock Anthropic server on loopback.

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

#[path = "../support/mod.rs"]
mod support;

mod basics;
mod compaction;
mod faults;
mod helpers;
mod images;
mod live;
mod maintenance;
mod older_history;
mod pasted;
mod permission_diff;
mod plugins;
mod rewind;
mod search;
mod sessions;
mod signals;
mod turns;
mod vim;

use std::time::Duration;

use portable_pty::CommandBuilder;
use support::MockServer;
use support::project::Project;
use support::pty::PtySession;

/// The UI's terminal size in these tests.
pub const COLS: u16 = 80;
pub const ROWS: u16 = 24;

/// Starts `robota <args>` in a pty for `project`, pointed at `server`.
pub fn start(project: &Project, server: &MockServer, args: &[&str]) -> PtySession {
    start_sized(project, server, args, COLS, ROWS)
}

/// Like [`start`], with the command adjusted by `adjust` (e.g. an env var removed).
pub fn start_with(
    project: &Project,
    server: &MockServer,
    args: &[&str],
    adjust: impl FnOnce(&mut CommandBuilder),
) -> PtySession {
    let mut cmd = command(project, server, args);
    adjust(&mut cmd);
    PtySession::spawn(cmd, COLS, ROWS)
}

pub fn start_sized(
    project: &Project,
    server: &MockServer,
    args: &[&str],
    cols: u16,
    rows: u16,
) -> PtySession {
    PtySession::spawn(command(project, server, args), cols, rows)
}

/// Starts another program (a shell) with robota's test environment.
pub fn start_with_program(
    project: &Project,
    server: &MockServer,
    program: &str,
    args: &[&str],
) -> PtySession {
    let mut cmd = command_for(program, project, server, args);
    cmd.env("PS1", "$ ");
    PtySession::spawn(cmd, COLS, ROWS)
}

fn command(project: &Project, server: &MockServer, args: &[&str]) -> CommandBuilder {
    command_for(env!("CARGO_BIN_EXE_robota"), project, server, args)
}

fn command_for(
    program: &str,
    project: &Project,
    server: &MockServer,
    args: &[&str],
) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(program);
    cmd.args(args);
    cmd.cwd(&project.root);
    cmd.env_clear();
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd.env("HOME", &project.user_home);
    cmd.env("ROBOTA_HOME", &project.home);
    cmd.env("TERM", "xterm-256color");
    cmd.env("ANTHROPIC_BASE_URL", server.base_url());
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test-key-0000000000000000");
    cmd.env("ROBOTA_RETRY_BASE_MS", "1");
    cmd
}

/// The text of the last user message of request `n` (1-based), once it arrived.
pub fn last_user_text(server: &MockServer, n: usize) -> String {
    assert!(
        server.wait_for_requests(n, Duration::from_secs(20)),
        "request {n} never came"
    );
    let request = &server.requests()[n - 1].body;
    let messages = request["messages"].as_array().expect("messages");
    let last = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .expect("a user message");
    match &last["content"] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .filter(|t| !t.starts_with("<system-reminder>"))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Leaves with Ctrl+D on an empty composer and checks the exit status.
pub fn exit_cleanly(pty: &mut PtySession) {
    pty.send(b"\x04");
    assert_eq!(
        pty.wait_exit(Duration::from_secs(10)),
        Some(0),
        "{}",
        pty.contents()
    );
}

/// Waits until `text` is on screen and the turn that wrote it has ended (the status line no
/// longer offers to interrupt it): text streams in before the answer is complete.
pub fn wait_for_answer(pty: &PtySession, text: &str) {
    pty.wait_for(
        &format!("the finished answer with {text}"),
        Duration::from_secs(20),
        |screen| screen.contains(text) && !screen.contains("esc to interrupt"),
    );
}

/// Writes an executable stand-in for `name` (a clipboard tool, an editor) into the
/// project's `user_home/bin` and returns its path and a `PATH` that finds it first.
pub fn stand_in_program(
    project: &Project,
    name: &str,
    script: &str,
) -> (std::path::PathBuf, String) {
    use std::os::unix::fs::PermissionsExt;
    let bin = project.user_home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let program = bin.join(name);
    std::fs::write(&program, script).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (program, path)
}
