//! The process groups' behaviour on Unix: exit codes and output, timeouts and
//! cancellation stopping the whole group, the guard killing it when dropped.

use super::*;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::Instant;
use tokio::process::Command;

#[derive(Default)]
struct All(Vec<u8>);

impl OutputSink for All {
    fn push(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
}

fn sh(script: &str) -> Command {
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    command
}

fn alive(pid: i32) -> bool {
    // A zombie waiting for init to reap it counts as gone.
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists
        && std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z"))
            .unwrap_or(false)
}

/// A SIGKILLed process may still be on its way out when kill(2) returns (its pipes
/// closed, not yet a zombie): poll for a bounded while.
fn gone_soon(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

#[tokio::test]
async fn a_normal_exit_keeps_the_exit_code_and_the_output() {
    let (mut child, group) = spawn_in_new_group(&mut sh("echo hi; exit 4")).unwrap();
    let out = PipeReader::start(child.stdout.take(), All::default());
    let ending = wait_or_stop(
        &mut child,
        group,
        Duration::from_secs(30),
        &CancellationToken::new(),
        StopPolicy::Kill,
    )
    .await
    .unwrap();
    assert_eq!(ending, GroupEnding::Exited(4));
    assert_eq!(out.finish().await.0, b"hi\n");
}

#[tokio::test]
async fn a_timeout_stops_the_leader_and_its_background_children() {
    for policy in [
        StopPolicy::Kill,
        StopPolicy::TermThenKill(Duration::from_millis(500)),
    ] {
        let (mut child, group) = spawn_in_new_group(&mut sh("sleep 30 & echo $!; wait")).unwrap();
        let out = PipeReader::start(child.stdout.take(), All::default());
        let started = Instant::now();
        let ending = wait_or_stop(
            &mut child,
            group,
            Duration::from_millis(300),
            &CancellationToken::new(),
            policy,
        )
        .await
        .unwrap();
        assert_eq!(ending, GroupEnding::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(10));
        let pid: i32 = String::from_utf8(out.finish().await.0)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            gone_soon(pid),
            "{policy:?}: the background child {pid} survived"
        );
    }
}

#[tokio::test]
async fn cancellation_stops_the_group() {
    let cancel = CancellationToken::new();
    let (mut child, group) = spawn_in_new_group(&mut sh("sleep 30")).unwrap();
    cancel.cancel();
    let ending = wait_or_stop(
        &mut child,
        group,
        Duration::from_secs(30),
        &cancel,
        StopPolicy::Kill,
    )
    .await
    .unwrap();
    assert_eq!(ending, GroupEnding::Cancelled);
}

#[tokio::test]
async fn dropping_the_guard_kills_the_group() {
    let (mut child, group) = spawn_in_new_group(&mut sh("sleep 30")).unwrap();
    let pid = group.as_ref().map(ProcessGroup::id).unwrap();
    drop(group);
    let status = child.wait().await.unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert!(gone_soon(pid));
}
