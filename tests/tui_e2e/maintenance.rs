//! The full-screen UI's commands that reach outside the conversation: `/memory` hands the
//! terminal to the user's editor (keys reach the editor, the edit reaches the next
//! request's system prompt), `/reset` moves the user settings aside only once confirmed,
//! `/doctor` adds the terminal's facts to the session's checks.

use std::time::Duration;

use crate::support::MockServer;
use crate::support::anthropic::text_turn;
use crate::support::project::project;
use crate::{exit_cleanly, start, start_with};

fn system_text(server: &MockServer, n: usize) -> String {
    assert!(server.wait_for_requests(n, Duration::from_secs(20)));
    crate::support::anthropic::system_text(&server.requests()[n - 1].body)
}

#[test]
fn memory_opens_the_editor_with_the_keyboard_and_the_edit_reaches_the_next_request() {
    let project = project();
    let (editor, _) = crate::stand_in_program(
        &project,
        "fake-editor",
        "#!/bin/sh\nprintf 'EDITING %s> ' \"$(basename \"$1\")\"\nread line\necho \"$line\" >> \"$1\"\n",
    );
    let server = MockServer::start(vec![text_turn("Noted.")]);
    let mut pty = start_with(&project, &server, &[], |cmd| {
        cmd.env("EDITOR", &editor);
    });
    pty.wait_for_text("Ask anything");
    pty.type_text("/memory");
    pty.send(b"\r");
    pty.wait_for_text("EDITING AGENTS.md>");
    // Typed into the editor, not into robota's composer.
    pty.type_text("Always answer with PINEAPPLE.");
    pty.send(b"\r");
    pty.wait_for_text("robota follows it from your next");
    let written = std::fs::read_to_string(project.root.join("AGENTS.md")).unwrap();
    assert_eq!(written, "Always answer with PINEAPPLE.\n");
    pty.type_text("hello");
    pty.send(b"\r");
    pty.wait_for_text("Noted.");
    let system = system_text(&server, 1);
    assert!(system.contains("Always answer with PINEAPPLE."), "{system}");
    let prompt = crate::last_user_text(&server, 1);
    assert_eq!(
        prompt, "hello",
        "the editor's keys never reached the composer"
    );
    exit_cleanly(&mut pty);
}

#[test]
fn reset_asks_first_then_moves_the_settings_aside_and_leaves() {
    let project = project();
    std::fs::create_dir_all(&project.home).unwrap();
    let settings = project.home.join("settings.json");
    std::fs::write(&settings, "{\"language\": \"German\"}\n").unwrap();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("/reset");
    pty.send(b"\r");
    pty.wait_for_text("/reset confirm");
    assert!(settings.is_file(), "nothing moves before the confirmation");
    pty.type_text("/reset confirm");
    pty.send(b"\r");
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(0));
    assert!(!settings.exists());
    let backup = project.home.join("settings.json.bak");
    assert_eq!(
        std::fs::read_to_string(backup).unwrap(),
        "{\"language\": \"German\"}\n"
    );
    let raw = String::from_utf8_lossy(&pty.raw()).into_owned();
    assert!(raw.contains("Your settings were moved to"), "{raw}");
}

#[test]
fn doctor_in_the_ui_adds_the_terminal() {
    let project = project();
    let server = MockServer::start(vec![]);
    let mut pty = start_with(&project, &server, &[], |cmd| {
        cmd.env("COLORTERM", "truecolor");
    });
    pty.wait_for_text("Ask anything");
    pty.type_text("/doctor");
    pty.send(b"\r");
    let screen = pty.wait_for_text("24-bit colour");
    assert!(screen.contains("✓ TERM=xterm-256color"), "{screen}");
    assert!(screen.contains("answers (connected"), "{screen}");
    exit_cleanly(&mut pty);
}
