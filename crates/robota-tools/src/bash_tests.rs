//! Unit tests of the Bash tool with real processes in temp dirs.

use super::*;
use crate::test_support::{assert_error_contains, assert_ok, ctx};
use std::ffi::CString;
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt;
use std::time::Instant;

async fn bash(tool: &BashTool, cwd: &Path, input: Value) -> ToolOutput {
    tool.call(input, &ctx(cwd)).await
}

/// Creates a FIFO the test blocks on until a command writes to it: a notification
/// without sleeping.
fn make_fifo(path: &Path) {
    let c_path = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no other memory effects.
    let rc = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo failed");
}

/// Blocks (off the runtime) until a writer opens the FIFO and closes it; returns what it wrote.
async fn read_fifo(path: &Path) -> String {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut text = String::new();
        std::fs::File::open(path)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        text
    })
    .await
    .unwrap()
}

/// Whether the process has exited within the safety net: a pidfd becomes readable when
/// the process terminates (zombies count as gone; so does an already reaped pid).
#[cfg(target_os = "linux")]
fn exits_within(pid: i32, safety_net: Duration) -> bool {
    // SAFETY: plain syscalls on integers and a local pollfd.
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as i32;
        if fd < 0 {
            return true;
        }
        let mut poll_fd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ready = libc::poll(&mut poll_fd, 1, safety_net.as_millis() as i32);
        libc::close(fd);
        ready == 1
    }
}

/// Whether the process has exited within the safety net, where there is no pidfd (macOS):
/// `kill(pid, 0)` asked until it says the pid is gone (a zombie still counts as running).
#[cfg(not(target_os = "linux"))]
fn exits_within(pid: i32, safety_net: Duration) -> bool {
    let deadline = std::time::Instant::now() + safety_net;
    loop {
        // SAFETY: signal 0 only checks that the process exists; no memory is touched.
        if unsafe { libc::kill(pid, 0) } != 0 {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn is_running(pid: i32) -> bool {
    !exits_within(pid, Duration::ZERO)
}

#[tokio::test]
async fn the_working_directory_persists_between_calls() {
    let dir = tempfile::tempdir().unwrap();
    let tool = BashTool::new(dir.path());
    let out = bash(
        &tool,
        dir.path(),
        json!({"command": "mkdir -p sub/deeper && cd sub"}),
    )
    .await;
    assert_eq!(assert_ok(&out), "(no output)");
    let sub = dir.path().join("sub");
    assert_eq!(tool.current_dir(), sub);
    let out = bash(&tool, dir.path(), json!({"command": "pwd; cd deeper"})).await;
    assert_eq!(assert_ok(&out), sub.display().to_string());
    let out = bash(&tool, dir.path(), json!({"command": "pwd"})).await;
    assert_eq!(assert_ok(&out), sub.join("deeper").display().to_string());
    // A new session directory starts the shell over there.
    let other = tempfile::tempdir().unwrap();
    let out = bash(&tool, other.path(), json!({"command": "pwd"})).await;
    assert_eq!(assert_ok(&out), other.path().display().to_string());
}

#[tokio::test]
async fn a_vanished_directory_falls_back_to_the_session_directory() {
    let dir = tempfile::tempdir().unwrap();
    let tool = BashTool::new(dir.path());
    assert_ok(
        &bash(
            &tool,
            dir.path(),
            json!({"command": "mkdir gone && cd gone"}),
        )
        .await,
    );
    std::fs::remove_dir(dir.path().join("gone")).unwrap();
    let out = bash(&tool, dir.path(), json!({"command": "pwd"})).await;
    let text = assert_ok(&out);
    assert!(text.contains("no longer exists"));
    assert!(text.ends_with(&format!("\n{}", dir.path().display())));
}

#[tokio::test]
async fn stdout_then_stderr_and_non_zero_exit_codes_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let tool = BashTool::new(dir.path());
    let out = bash(
        &tool,
        dir.path(),
        json!({"command": "echo out; echo err >&2"}),
    )
    .await;
    assert_eq!(assert_ok(&out), "out\nerr");
    let out = bash(
        &tool,
        dir.path(),
        json!({"command": "printf partial; echo bad >&2; exit 3"}),
    )
    .await;
    assert!(out.is_error);
    assert_eq!(out.content, "partial\nbad\nExit code 3");
    let out = bash(&tool, dir.path(), json!({"command": "printf 'a\\xffb'"})).await;
    assert_eq!(assert_ok(&out), "a\u{fffd}b");
    let out = bash(&tool, dir.path(), json!({"command": "echo 'unterminated"})).await;
    assert!(
        out.is_error,
        "a syntax error exits non-zero: {}",
        out.content
    );
}

#[tokio::test]
async fn the_context_environment_reaches_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let tool = BashTool::new(dir.path());
    let mut context = ctx(dir.path());
    context.env = vec![("ROBOTA_TEST_VALUE".to_string(), "from settings".to_string())];
    let out = tool
        .call(json!({"command": "echo \"$ROBOTA_TEST_VALUE\""}), &context)
        .await;
    assert_eq!(assert_ok(&out), "from settings");
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let tool = BashTool::new(dir.path());
    let started = Instant::now();
    let out = bash(
        &tool,
        dir.path(),
        json!({"command": "echo before; sleep 30 & echo $! > child.pid; wait", "timeout": 1000}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert_error_contains(&out, "Command timed out after 1s");
    assert!(
        out.content.starts_with("before\n"),
        "output so far is kept: {}",
        out.content
    );
    let pid: i32 = std::fs::read_to_string(dir.path().join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        exits_within(pid, Duration::from_secs(5)),
        "sleep {pid} survived"
    );
}

#[tokio::test]
async fn cancellation_interrupts_and_kills_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("ready");
    make_fifo(&fifo);
    let tool = std::sync::Arc::new(BashTool::new(dir.path()));
    let context = ctx(dir.path());
    let cancel = context.cancel.clone();
    let running = {
        let tool = std::sync::Arc::clone(&tool);
        tokio::spawn(async move {
            tool.call(
                json!({"command": "sleep 30 & echo $! > ready; wait"}),
                &context,
            )
            .await
        })
    };
    let pid: i32 = read_fifo(&fifo).await.trim().parse().unwrap();
    assert!(is_running(pid));
    cancel.cancel();
    let out = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("cancellation did not end the call")
        .unwrap();
    assert_error_contains(&out, "Command interrupted by user");
    assert!(
        exits_within(pid, Duration::from_secs(5)),
        "sleep {pid} survived"
    );
}

#[tokio::test]
async fn background_commands_write_to_a_log_and_die_with_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("done");
    make_fifo(&fifo);
    let tool = BashTool::new(dir.path());
    let out = bash(
        &tool,
        dir.path(),
        json!({"command": "echo hello; echo oops >&2; sleep 30 & echo $! > done; wait", "run_in_background": true}),
    )
    .await;
    let text = assert_ok(&out).to_string();
    assert!(text.contains("ID: bash_1"), "{text}");
    let pid: i32 = read_fifo(&fifo).await.trim().parse().unwrap();
    let jobs = tool.background_jobs();
    assert_eq!(jobs.len(), 1);
    assert!(text.contains(&jobs[0].output_path.display().to_string()));
    let log = std::fs::read_to_string(&jobs[0].output_path).unwrap();
    assert_eq!(log, "hello\noops\n");
    let log_dir = jobs[0].output_path.parent().unwrap().to_path_buf();
    assert!(is_running(pid));
    drop(tool);
    // A safety net, not a timing: SIGKILL ends it at once, and a loaded machine only
    // delays the exit being seen.
    assert!(
        exits_within(pid, Duration::from_secs(30)),
        "background sleep {pid} survived"
    );
    assert!(!log_dir.exists(), "the log dir is removed with the tool");
}

#[tokio::test]
async fn invalid_input_is_an_error_result() {
    let dir = tempfile::tempdir().unwrap();
    let tool = BashTool::new(dir.path());
    let out = bash(&tool, dir.path(), json!({"description": "nothing"})).await;
    assert_eq!(
        out.content,
        "Invalid input for Bash: missing required field \"command\""
    );
    assert!(out.is_error);
    let out = bash(&tool, dir.path(), json!({"command": ["ls"]})).await;
    assert_error_contains(&out, "\"command\" must be a string, got an array");
    let out = bash(
        &tool,
        dir.path(),
        json!({"command": "ls", "timeout": "soon"}),
    )
    .await;
    assert_error_contains(&out, "\"timeout\" must be a non-negative integer");
    let out = bash(
        &tool,
        dir.path(),
        json!({"command": "ls", "run_in_background": 1}),
    )
    .await;
    assert_error_contains(&out, "\"run_in_background\" must be a boolean");
    let out = bash(&tool, dir.path(), json!({"command": "  "})).await;
    assert_error_contains(&out, "must not be empty");
}

#[test]
fn marker_lines_are_removed_from_output() {
    let (out, dir) = take_marker("a\nb\n\n__M__/tmp/x\n", "__M__");
    assert_eq!(out, "a\nb\n");
    assert_eq!(dir, Some(PathBuf::from("/tmp/x")));
    let (out, dir) = take_marker("no newline\n__M__/y\n", "__M__");
    assert_eq!(out, "no newline");
    assert_eq!(dir, Some(PathBuf::from("/y")));
    let (out, dir) = take_marker("killed early", "__M__");
    assert_eq!((out.as_str(), dir), ("killed early", None));
    assert_eq!(format_duration(1500), "1.5s");
    assert_eq!(format_duration(120_000), "120s");
}

#[tokio::test]
async fn processes_left_running_do_not_block_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let tool = BashTool::new(dir.path());
    let started = Instant::now();
    let out = bash(&tool, dir.path(), json!({"command": "sleep 30 & echo $!"})).await;
    let pid: i32 = assert_ok(&out).trim().parse().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    // SAFETY: signalling the test's own leftover process.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert!(exits_within(pid, Duration::from_secs(5)));
}
