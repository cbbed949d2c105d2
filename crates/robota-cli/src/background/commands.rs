//! `robota ps`, `logs`, `send`, `stop` and `rm`: the background sessions seen and driven
//! from any terminal, through their directories and control sockets.

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::registry::{self, Phase, SessionDir, State};
use super::render::event_text;
use crate::headless::{EXIT_ERROR, EXIT_OK};

/// How long `robota stop` waits for the session to end before killing its group.
const STOP_WAIT: Duration = Duration::from_secs(10);
/// How often `robota logs -f` looks for more.
const FOLLOW_EVERY: Duration = Duration::from_millis(100);

/// `robota ps [--json]`.
pub fn ps(robota_home: &Path, as_json: bool) -> u8 {
    let sessions: Vec<State> = registry::list(robota_home)
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    if as_json {
        match serde_json::to_string_pretty(&sessions) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("Error: {e}");
                return EXIT_ERROR;
            }
        }
        return EXIT_OK;
    }
    if sessions.is_empty() {
        println!("No background sessions (start one with robota --bg \"prompt\").");
        return EXIT_OK;
    }
    println!(
        "{:<10} {:<16} {:<9} {:>6} {:>9}  DIRECTORY",
        "ID", "NAME", "STATE", "TURNS", "COST"
    );
    for s in &sessions {
        println!(
            "{:<10} {:<16} {:<9} {:>6} {:>9}  {}",
            s.id.get(..8).unwrap_or(&s.id),
            s.name.as_deref().unwrap_or("-"),
            s.state.as_str(),
            s.turns,
            format!("${:.4}", s.cost_usd),
            s.cwd.display()
        );
        if let Some(branch) = &s.branch {
            println!("{:<10} worktree on branch {branch}", "");
        }
        if let Some(reason) = &s.reason {
            println!("{:<10} {reason}", "");
        }
    }
    EXIT_OK
}

/// Finds `query`, or prints why not.
fn found(robota_home: &Path, query: &str) -> Option<(SessionDir, State)> {
    registry::find(robota_home, query)
        .map_err(|e| eprintln!("Error: {e}"))
        .ok()
}

/// `robota logs <id> [-f] [--stream-json]`.
pub fn logs(robota_home: &Path, query: &str, follow: bool, raw: bool) -> u8 {
    let Some((dir, _)) = found(robota_home, query) else {
        return EXIT_ERROR;
    };
    let Ok(mut file) = std::fs::File::open(dir.events()) else {
        eprintln!("Error: {} has no events yet", dir.dir.display());
        return EXIT_ERROR;
    };
    let mut partial = String::new();
    loop {
        let mut chunk = String::new();
        if file.read_to_string(&mut chunk).is_err() {
            return EXIT_ERROR;
        }
        partial.push_str(&chunk);
        while let Some(end) = partial.find('\n') {
            let line: String = partial.drain(..=end).collect();
            let line = line.trim_end();
            let shown = if raw {
                format!("{line}\n")
            } else {
                event_text(line)
            };
            print!("{shown}");
        }
        let _ = std::io::stdout().flush();
        let live = dir.read_state().is_some_and(|s| s.state.is_live());
        if !follow || (!live && chunk.is_empty()) {
            return EXIT_OK;
        }
        if chunk.is_empty() {
            std::thread::sleep(FOLLOW_EVERY);
        }
    }
}

/// `robota send <id> <message>`: queues a prompt into the running session.
pub fn send(robota_home: &Path, query: &str, message: &str) -> u8 {
    let Some((dir, state)) = found(robota_home, query) else {
        return EXIT_ERROR;
    };
    if !state.state.is_live() {
        eprintln!(
            "Error: background session {} is {}; only a running one takes messages",
            state.id,
            state.state.as_str()
        );
        return EXIT_ERROR;
    }
    let line = json!({"type": "user", "message": {"role": "user", "content": message}});
    let sent = std::os::unix::net::UnixStream::connect(dir.socket())
        .and_then(|mut stream| writeln!(stream, "{line}"));
    match sent {
        Ok(()) => {
            println!("Sent to {}", state.id);
            EXIT_OK
        }
        Err(e) => {
            eprintln!("Error: cannot reach background session {}: {e}", state.id);
            EXIT_ERROR
        }
    }
}

/// `robota stop <id>`: ends the session and everything it started.
pub fn stop(robota_home: &Path, query: &str) -> u8 {
    let Some((dir, state)) = found(robota_home, query) else {
        return EXIT_ERROR;
    };
    if !state.state.is_live() {
        println!(
            "Background session {} is already {}",
            state.id,
            state.state.as_str()
        );
        return EXIT_OK;
    }
    let Ok(pid) = i32::try_from(state.pid) else {
        return EXIT_ERROR;
    };
    // SAFETY: kill takes no pointers. `pid` leads the session's process group; the
    // socket answered just now, so it is that session's supervisor, not a reused pid.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = Instant::now() + STOP_WAIT;
    while dir.answers() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if dir.answers() {
        // SAFETY: as above, for the whole group.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let mut state = state.clone();
        state.state = Phase::Stopped;
        let _ = dir.write_state(&state);
    }
    println!("Stopped {}", state.id);
    EXIT_OK
}

/// `robota rm <id> [--force]`: removes a session that has ended and its worktree (its
/// conversation log and the worktree's branch stay).
pub fn rm(robota_home: &Path, query: &str, force: bool) -> u8 {
    let Some((dir, state)) = found(robota_home, query) else {
        return EXIT_ERROR;
    };
    if state.state.is_live() {
        eprintln!(
            "Error: background session {} is {}; stop it first (robota stop {})",
            state.id,
            state.state.as_str(),
            state.id
        );
        return EXIT_ERROR;
    }
    if let Some(worktree) = &state.worktree
        && let Err(e) = crate::worktree::remove(worktree, force)
    {
        eprintln!("Error: {e}");
        return EXIT_ERROR;
    }
    match std::fs::remove_dir_all(&dir.dir) {
        Ok(()) => {
            println!("Removed {}", state.id);
            EXIT_OK
        }
        Err(e) => {
            eprintln!("Error: cannot remove {}: {e}", dir.dir.display());
            EXIT_ERROR
        }
    }
}
