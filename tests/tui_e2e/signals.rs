//! The terminal comes back on every way out: Ctrl+Z suspends with the modes restored and
//! `fg` takes the screen again; SIGTERM and SIGHUP end the app cleanly, and so does closing
//! the terminal (SIGHUP, then EIO) — without a panic.

use std::time::Duration;

use crate::support::MockServer;
use crate::support::anthropic::text_turn;
use crate::support::project::project;
use crate::support::pty::PtySession;
use crate::{start, start_with_program};

fn signal(pid: u32, name: &str) {
    let ok = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{name}");
}

fn count(raw: &[u8], needle: &str) -> usize {
    String::from_utf8_lossy(raw).matches(needle).count()
}

/// Ctrl+Z needs job control (a process group the kernel may stop), so robota runs under
/// an interactive bash here, as it does for a user.
#[test]
fn ctrl_z_restores_the_terminal_and_fg_takes_it_back() {
    let project = project();
    let server = MockServer::start(vec![]);
    let mut pty = start_with_program(&project, &server, "bash", &["--norc", "--noprofile", "-i"]);
    pty.wait_for_text("$ ");
    pty.type_text(&format!("{}\r", env!("CARGO_BIN_EXE_robota")));
    pty.wait_for_text("Ask anything");
    pty.type_text("kept draft");
    pty.wait_for_text("> kept draft");
    pty.send(b"\x1a");
    let shell = pty.wait_for_text("Stopped");
    assert!(
        !shell.contains("Ask anything"),
        "the shell has the screen: {shell}"
    );
    assert_eq!(
        count(&pty.raw(), "\x1b[?1049l"),
        1,
        "alternate screen left on suspend"
    );
    pty.type_text("fg\r");
    pty.wait_for(
        "the app redrawn with the draft",
        Duration::from_secs(10),
        |s| s.contains("> kept draft") && !s.contains("Stopped"),
    );
    assert_eq!(
        count(&pty.raw(), "\x1b[?1049h"),
        2,
        "alternate screen entered again"
    );
    pty.send(b"\x03");
    pty.send(b"\x04");
    pty.wait_for(
        "the shell prompt after robota exits",
        Duration::from_secs(10),
        |s| !s.contains("Ask anything") && s.contains("$ "),
    );
    pty.type_text("exit\r");
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(0));
}

/// When robota is ready for the signal: once its first frame is on screen, or as soon as
/// it has taken the terminal (the alternate screen is entered), before any frame.
#[derive(Clone, Copy)]
enum When {
    Ready,
    TerminalTaken,
}

fn ends_cleanly_on(name: &str, when: When) {
    let project = project();
    let server = MockServer::start(vec![]);
    let mut pty: PtySession = start(&project, &server, &[]);
    match when {
        When::Ready => {
            pty.wait_for_text("Ask anything");
        }
        When::TerminalTaken => pty.wait_for_raw(b"\x1b[?1049h", Duration::from_secs(20)),
    }
    signal(pty.pid(), name);
    assert!(
        pty.wait_exit(Duration::from_secs(10)).is_some(),
        "exited on {name}"
    );
    let raw = String::from_utf8_lossy(&pty.raw()).into_owned();
    let entered = raw.find("\x1b[?1049h").unwrap();
    for mode_off in ["\x1b[?1049l", "\x1b[?2004l", "\x1b[?1000l"] {
        assert!(
            raw[entered..].contains(mode_off),
            "{mode_off:?} not restored on {name}"
        );
    }
}

#[test]
fn sigterm_ends_the_app_with_the_terminal_restored() {
    ends_cleanly_on("TERM", When::Ready);
}

#[test]
fn sighup_ends_the_app_with_the_terminal_restored() {
    ends_cleanly_on("HUP", When::Ready);
}

/// The handlers are in place before the terminal is altered, so even a signal that comes
/// before the first frame ends the app with the terminal restored (a handler installed
/// after the first frame left a window in which SIGTERM killed the app mid-screen).
#[test]
fn sigterm_right_after_the_terminal_is_taken_still_restores_it() {
    ends_cleanly_on("TERM", When::TerminalTaken);
}

/// Closing the terminal window: the pty's master goes away, so robota gets SIGHUP and every
/// read and write of its terminal fails (EIO). It must end quietly: no panic on stderr
/// (sent to a file here, the terminal being gone) or in its log, and a normal exit status.
#[test]
fn closing_the_terminal_ends_the_app_without_a_panic() {
    use portable_pty::{PtySize, native_pty_system};

    let project = project();
    let server = MockServer::start(vec![text_turn("Hello before the close.")]);
    let stderr = project.root.join("robota-stderr.txt");
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: crate::ROWS,
            cols: crate::COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let robota = env!("CARGO_BIN_EXE_robota");
    let stderr_arg = stderr.display().to_string();
    let cmd = crate::command_for(
        "/bin/sh",
        &project,
        &server,
        &["-c", "exec \"$0\" 2>\"$1\"", robota, &stderr_arg],
    );
    let mut child = pty.slave.spawn_command(cmd).unwrap();
    drop(pty.slave);
    // Read the master directly (no cloned reader keeps it open).
    let fd = pty.master.as_raw_fd().expect("a master fd");
    let mut screen = vt100::Parser::new(
        std::num::NonZero::new(crate::ROWS).unwrap(),
        std::num::NonZero::new(crate::COLS).unwrap(),
        0,
    );
    let mut read_until = |needle: &str| {
        let mut buf = [0u8; 8192];
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !screen.screen().contents().contains(needle) {
            assert!(
                std::time::Instant::now() < deadline,
                "no {needle}: {}",
                screen.screen().contents()
            );
            let mut poll = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd; `buf` is valid for its length.
            let n = unsafe {
                if libc::poll(&mut poll, 1, 200) <= 0 {
                    continue;
                }
                libc::read(fd, buf.as_mut_ptr().cast(), buf.len())
            };
            assert!(n > 0, "the terminal closed early");
            screen.process(&buf[..n as usize]);
        }
    };
    read_until("Ask anything");
    // A finished turn: leaving then also prints how to resume (to a terminal that is gone).
    let type_in = |bytes: &[u8]| {
        // SAFETY: writes `bytes`, valid for their length, to the open master.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        assert_eq!(n, bytes.len() as isize);
    };
    type_in(b"hi");
    read_until("> hi");
    type_in(b"\r");
    read_until("Hello before the close.");
    drop(pty.master);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait()));
    let status = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("robota did not exit after its terminal closed")
        .unwrap();
    let stderr_text = std::fs::read_to_string(&stderr).unwrap_or_default();
    assert!(!stderr_text.contains("panicked"), "{stderr_text}");
    for log in std::fs::read_dir(project.home.join("logs"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let text = std::fs::read_to_string(log.path()).unwrap_or_default();
        assert!(
            !text.contains("panicked"),
            "{}: {text}",
            log.path().display()
        );
    }
    assert_ne!(
        status.exit_code(),
        101,
        "a panic's exit status: {stderr_text}"
    );
}
