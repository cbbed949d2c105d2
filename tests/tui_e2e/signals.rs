//! The terminal comes back on every way out: Ctrl+Z suspends with the modes restored and
//! `fg` takes the screen again; SIGTERM and SIGHUP end the app cleanly.

use std::time::Duration;

use crate::support::MockServer;
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
