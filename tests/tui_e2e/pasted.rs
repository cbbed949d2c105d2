//! A large paste collapses to a placeholder in the composer and stays collapsed in the
//! transcript's prompt cell (Ctrl+O expands it), while the model gets the whole text.

use crate::support::MockServer;
use crate::support::anthropic::text_turn;
use crate::support::project::project;
use crate::{exit_cleanly, last_user_text, start};

#[test]
fn a_collapsed_paste_stays_collapsed_in_the_transcript_and_expands_on_ctrl_o() {
    let project = project();
    let server = MockServer::start(vec![text_turn("Read your log.")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    let log: String = (1..=12).map(|i| format!("log line {i}\n")).collect();
    pty.type_text("check ");
    pty.paste(&log);
    pty.wait_for_text("[Pasted text #1 +12 lines]");
    pty.type_text(" please");
    pty.send(b"\r");
    let screen = pty.wait_for_text("Read your log.");
    assert!(
        screen.contains("> check [Pasted text #1 +12 lines] please"),
        "{screen}"
    );
    assert!(!screen.contains("log line 7"), "{screen}");
    let sent = last_user_text(&server, 1);
    assert_eq!(sent, format!("check {log} please"));

    // Ctrl+O shows the whole prompt; again collapses it.
    pty.send(b"\x0f");
    let screen = pty.wait_for_text("log line 12");
    assert!(screen.contains("log line 7"), "{screen}");
    assert!(!screen.contains("[Pasted text #1"), "{screen}");
    pty.send(b"\x0f");
    let screen = pty.wait_for_text("> check [Pasted text #1 +12 lines] please");
    assert!(!screen.contains("log line 7"), "{screen}");
    exit_cleanly(&mut pty);
}
