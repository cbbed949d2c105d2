//! The reaper: a small process robota starts beside itself (`robota __reap`, in a process
//! group of its own so terminal signals pass it by) the first time it spawns a process
//! group (a Bash command, a hook). Over one pipe, each new group's leader announces itself
//! (`+PGID`, written by the child before it runs anything) and robota says which ended
//! (`-PGID`); when the pipe closes — robota exited or was killed, SIGKILL included — the
//! reaper SIGKILLs every group still running and exits. So a command robota started never
//! outlives it.

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::Mutex;

use crate::core::process_group::{GroupWatch, set_group_watch, signal_group};

/// The hidden first argument that runs the reaper instead of robota.
pub const REAP_ARG: &str = "__reap";

/// Installs the watch that feeds the reaper (started on the first group).
pub fn install() {
    set_group_watch(Box::new(PipeWatch {
        reaper: Mutex::new(Reaper::NotStarted),
    }));
}

enum Reaper {
    NotStarted,
    Running {
        _child: Child,
        pipe: ChildStdin,
    },
    /// It could not be started: groups are still stopped by robota itself whenever it
    /// gets the chance.
    Unavailable,
}

struct PipeWatch {
    reaper: Mutex<Reaper>,
}

impl GroupWatch for PipeWatch {
    fn announce_fd(&self) -> Option<RawFd> {
        let mut reaper = self.reaper.lock().ok()?;
        if matches!(*reaper, Reaper::NotStarted) {
            *reaper = spawn_reaper();
        }
        match &*reaper {
            Reaper::Running { pipe, .. } => Some(pipe.as_raw_fd()),
            _ => None,
        }
    }

    fn ended(&self, pgid: i32) {
        let Ok(mut reaper) = self.reaper.lock() else {
            return;
        };
        // The pipe is never closed while robota runs, even when broken: children spawned
        // meanwhile may hold its descriptor number for their announcement.
        if let Reaper::Running { pipe, .. } = &mut *reaper
            && writeln!(pipe, "-{pgid}")
                .and_then(|()| pipe.flush())
                .is_err()
        {
            tracing::warn!("the reaper's pipe broke; commands may outlive robota if it is killed");
        }
    }
}

fn spawn_reaper() -> Reaper {
    let spawned = std::env::current_exe().and_then(|exe| {
        Command::new(exe)
            .arg(REAP_ARG)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
    });
    match spawned {
        Ok(mut child) => match child.stdin.take() {
            Some(pipe) => Reaper::Running {
                _child: child,
                pipe,
            },
            None => Reaper::Unavailable,
        },
        Err(e) => {
            tracing::warn!("cannot start the reaper: {e}");
            Reaper::Unavailable
        }
    }
}

/// The reaper's own main: tracks groups from stdin until it closes, then kills the rest.
pub fn run() -> ExitCode {
    let mut running = HashSet::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let (sign, pgid) = line.split_at(line.len().min(1));
        let Ok(pgid) = pgid.trim().parse::<i32>() else {
            continue;
        };
        match sign {
            "+" => {
                running.insert(pgid);
            }
            "-" => {
                running.remove(&pgid);
            }
            _ => {}
        }
    }
    for pgid in running {
        signal_group(pgid, libc::SIGKILL);
    }
    ExitCode::SUCCESS
}
