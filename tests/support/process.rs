//! Processes in tests: whether one the real binary started is gone (or a process group
//! has no live member left), and running an attack line under real bash (HOME and npm's
//! cache kept in the test's directory) with a safety-net timeout.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Whether the process `pid` is gone (or a zombie nobody reaped yet).
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Runs `command` under bash in `dir` (stdin closed, `HOME` there); whether it ended within
/// the 30 s safety net (otherwise it is killed).
pub fn run_bash(command: &str, dir: &Path) -> bool {
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("HOME", dir)
        .env("npm_config_cache", dir.join(".npm-cache"))
        .env("npm_config_update_notifier", "false")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("bash runs");
    let (tx, rx) = mpsc::channel();
    let id = child.id();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(status) => status.is_ok(),
        Err(_) => {
            // Safety net only: end the one process we started.
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            false
        }
    }
}

/// Whether `program` is on the PATH.
pub fn have(program: &str) -> bool {
    Command::new("bash")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `cmd` (stdout and stderr captured) and returns its output; a safety net only: a
/// run still going after `limit` is killed (SIGKILL), which the caller sees in the status.
pub fn output_within(mut cmd: Command, limit: Duration) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(limit).is_err() {
            #[cfg(unix)]
            // SAFETY: kill(2) takes no memory; it fires only while the child has not been
            // waited for, so the pid is still its own.
            unsafe {
                libc::kill(pid, libc::SIGKILL)
            };
            #[cfg(windows)]
            let _ = Command::new("taskkill")
                .args(["/F", "/T", "/PID", &pid.to_string()])
                .status();
        }
    });
    let out = child.wait_with_output().unwrap();
    let _ = tx.send(());
    watchdog.join().unwrap();
    out
}

/// The live processes whose process group is `pgid` (from /proc). A zombie has ended; it
/// only waits for its parent (here the machine's init, which may be slow to) to collect
/// its exit status. Linux's /proc only.
pub fn group_members(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // Fields after the command's closing parenthesis: state, ppid, pgrp.
            let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
            let fields: Vec<&str> = after.split_whitespace().collect();
            fields.first() != Some(&"Z") && fields.get(2) == Some(&pgid.to_string().as_str())
        })
        .collect()
}

/// A field of `/proc/<pid>/status` in KiB (`VmRSS`, `VmHWM`); 0 when it cannot be read.
pub fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
