//! Bad input in the UI gives a clear message and loses nothing: provider errors and
//! retries show in the transcript and the session goes on; a call to a tool that does not
//! exist shows the error the model got; malformed settings end the start with the file
//! named and the terminal restored.

use std::time::Duration;

use crate::support::MockServer;
use serde_json::json;

use crate::support::anthropic::{error_status, text_turn, tool_turn};
use crate::support::project::project;
use crate::{exit_cleanly, start, wait_for_answer};

#[test]
fn a_rejected_key_is_reported_and_the_next_prompt_still_works() {
    let project = project();
    let server = MockServer::start(vec![
        error_status(401, "authentication_error", "invalid x-api-key", None),
        text_turn("Working again."),
    ]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("first");
    pty.send(b"\r");
    let screen = pty.wait_for_text("invalid x-api-key");
    assert!(
        !screen.contains("esc to interrupt"),
        "the turn ended: {screen}"
    );
    pty.type_text("second");
    pty.send(b"\r");
    pty.wait_for_text("Working again.");
    exit_cleanly(&mut pty);
}

#[test]
fn an_overloaded_provider_shows_the_retry_then_the_answer() {
    let project = project();
    let server = MockServer::start(vec![
        error_status(529, "overloaded_error", "Overloaded", Some("0")),
        text_turn("Made it through."),
    ]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("try");
    pty.send(b"\r");
    pty.wait_for_text("Made it through.");
    assert_eq!(server.requests().len(), 2, "retried once");
    exit_cleanly(&mut pty);
}

#[test]
fn malformed_settings_stop_the_start_with_the_file_named() {
    let project = project();
    std::fs::create_dir_all(project.root.join(".claude")).unwrap();
    std::fs::write(
        project.root.join(".claude/settings.json"),
        "{\"permissions\": [",
    )
    .unwrap();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(1));
    let screen = pty.contents();
    assert!(screen.contains(".claude/settings.json"), "{screen}");
    let raw = String::from_utf8_lossy(&pty.raw()).into_owned();
    assert!(raw.contains("\x1b[?1049l"), "terminal restored");
}

#[test]
fn a_call_to_a_tool_that_does_not_exist_shows_its_error_not_an_interruption() {
    let project = project();
    let server = MockServer::start(vec![
        tool_turn(None, &[("t1", "Teleport", json!({"to": "mars"}))]),
        text_turn("No teleporting today."),
    ]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("go to mars");
    pty.send(b"\r");
    wait_for_answer(&pty, "No teleporting today.");
    let screen = pty.contents();
    assert!(
        screen.contains("No such tool available: Teleport"),
        "{screen}"
    );
    assert!(!screen.contains("Interrupted"), "{screen}");
    exit_cleanly(&mut pty);
}
