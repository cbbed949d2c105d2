//! Typing a prompt, watching the answer stream, leaving.

use crate::support::anthropic::text_turn;
use crate::support::project::project;
use crate::support::MockServer;
use crate::{exit_cleanly, start};

#[test]
fn a_prompt_streams_its_answer_and_exit_restores_the_terminal() {
    let project = project();
    let server = MockServer::start(vec![text_turn("Hello from the **mock** model.")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("say hello");
    pty.send(b"\r");
    let screen = pty.wait_for_text("Hello from the mock model.");
    eprintln!("{screen}");
    assert!(screen.contains("say hello"), "{screen}");
    exit_cleanly(&mut pty);
    let raw = String::from_utf8_lossy(&pty.raw()).into_owned();
    assert!(raw.contains("\x1b[?1049l"), "alternate screen left");
    assert!(raw.contains("\x1b[?2004l"), "bracketed paste off");
}
