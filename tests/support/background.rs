//! Helpers for the background-session tests (`robota --bg`, `ps`, `attach`): run a
//! subcommand, read `robota ps --json`, wait for a session's state.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use serde_json::Value;

use super::MockServer;
use super::project::{Project, output_text};

/// Runs `robota ARGS` to its end; returns stdout, failing on a non-zero exit.
pub fn robota(p: &Project, server: &MockServer, args: &[&str]) -> String {
    let out = p.command(server, args).output().unwrap();
    assert!(
        out.status.success(),
        "robota {args:?}: {}",
        output_text(&out)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The sessions `robota ps --json` lists.
pub fn ps(p: &Project, server: &MockServer) -> Vec<Value> {
    serde_json::from_str(&robota(p, server, &["ps", "--json"])).unwrap()
}

/// Waits (at most a minute) until session `id` is in `state` with `turns` answered;
/// returns its `ps` entry.
pub fn wait_for(p: &Project, server: &MockServer, id: &str, state: &str, turns: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let sessions = ps(p, server);
        let found = sessions.iter().find(|s| s["id"] == id).cloned();
        if let Some(s) = &found
            && s["state"] == state
            && s["turns"] == turns
        {
            return s.clone();
        }
        assert!(
            Instant::now() < deadline,
            "session {id} never became {state} after {turns} turns: {found:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
