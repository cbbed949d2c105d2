//! `robota ps`, `logs`, `send`, `stop` and `rm`: the background sessions seen and driven
//! from any terminal, through their directories and control sockets.

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use robota_core::process_group::signal_group;
use serde_json::json;

use super::registry::{self, Phase, SessionDir, State};
use super::render::event_text;
use crate::headless::{EXIT_ERROR, EXIT_OK};
use crate::session::store::SessionStore;

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
        return match serde_json::to_string_pretty(&sessions) {
            Ok(text) => say(&format!("{text}\n")),
            Err(e) => {
                eprintln!("Error: {e}");
                EXIT_ERROR
            }
        };
    }
    if sessions.is_empty() {
        return say("No background sessions (start one with robota --bg \"prompt\").\n");
    }
    let state_width = sessions
        .iter()
        .map(|s| s.state.as_str().len())
        .max()
        .unwrap_or(0)
        .max("STATE".len());
    let mut table = format!(
        "{:<10} {:<16} {:<state_width$} {:>5} {:>6} {:>9}  DIRECTORY\n",
        "ID", "NAME", "STATE", "AGE", "TURNS", "COST"
    );
    let now = jiff::Timestamp::now();
    for s in &sessions {
        table.push_str(&format!(
            "{:<10} {:<16} {:<state_width$} {:>5} {:>6} {:>9}  {}\n",
            s.id.get(..8).unwrap_or(&s.id),
            s.name.as_deref().unwrap_or("-"),
            s.state.as_str(),
            age(&s.started, now),
            s.turns,
            format!("${:.4}", s.cost_usd),
            s.cwd.display()
        ));
        if let Some(branch) = &s.branch {
            table.push_str(&format!("{:<10} worktree on branch {branch}\n", ""));
        }
        if let Some(reason) = &s.reason {
            table.push_str(&format!("{:<10} {reason}\n", ""));
        }
    }
    say(&table)
}

/// How long ago `started` (an RFC 3339 time) was, in its largest unit: `45s`, `12m`,
/// `3h`, `2d` (`-` when it cannot be read).
fn age(started: &str, now: jiff::Timestamp) -> String {
    let Ok(started) = started.parse::<jiff::Timestamp>() else {
        return "-".into();
    };
    let seconds = now.as_second().saturating_sub(started.as_second()).max(0);
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

/// Writes `text` to stdout; a reader that went away (`robota ps | head -1`) is not an
/// error.
fn say(text: &str) -> u8 {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
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
            let mut out = std::io::stdout().lock();
            if out.write_all(shown.as_bytes()).is_err() {
                // The reader went away (`robota logs ID | head`).
                return EXIT_OK;
            }
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
        Ok(()) => say(&format!("Sent to {}\n", state.id)),
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
        return say(&format!(
            "Background session {} is already {}\n",
            state.id,
            state.state.as_str()
        ));
    }
    let Ok(pid) = i32::try_from(state.pid) else {
        return EXIT_ERROR;
    };
    // Only the supervisor is asked: it ends the session (which ends the commands it
    // started) and records the stop; a session that heard it first would end as failed.
    // SAFETY: kill takes no pointers. The socket answered just now, so `pid` is that
    // session's supervisor, not a reused pid.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = Instant::now() + STOP_WAIT;
    while dir.answers() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if dir.answers() {
        signal_group(pid, libc::SIGKILL);
        let mut state = state.clone();
        state.state = Phase::Stopped;
        let _ = dir.write_state(&state);
    }
    say(&format!("Stopped {}\n", state.id))
}

/// `robota rm <id> [--force] [--purge]`: removes a session that has ended and its
/// worktree (the worktree's branch stays, and its conversation log unless `purge`).
pub fn rm(robota_home: &Path, query: &str, force: bool, purge: bool) -> u8 {
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
    if purge && let Some(conversation) = dir.conversation_id() {
        match SessionStore::new(robota_home.to_path_buf()).remove(&state.cwd, &conversation) {
            Ok(Some(log)) => say(&format!("Removed its conversation log {}\n", log.display())),
            Ok(None) => EXIT_OK,
            Err(e) => {
                eprintln!("Error: {e}");
                return EXIT_ERROR;
            }
        };
    }
    match std::fs::remove_dir_all(&dir.dir) {
        Ok(()) => say(&format!("Removed {}\n", state.id)),
        Err(e) => {
            eprintln!("Error: cannot remove {}: {e}", dir.dir.display());
            EXIT_ERROR
        }
    }
}

#[cfg(test)]
mod tests {
    use super::age;

    #[test]
    fn ages_are_shown_in_their_largest_unit() {
        let now: jiff::Timestamp = "2026-11-28T12:00:00Z".parse().unwrap();
        assert_eq!(age("2026-11-28T11:59:15Z", now), "45s");
        assert_eq!(age("2026-11-28T11:48:00Z", now), "12m");
        assert_eq!(age("2026-11-28T09:00:00Z", now), "3h");
        assert_eq!(age("2026-11-26T12:00:00Z", now), "2d");
        assert_eq!(age("not a time", now), "-");
    }
}
