//! Compaction in the UI: an automatic compaction before a turn leaves a divider with the
//! token figures and the earlier transcript above it; a resumed session shows the divider
//! where the summary begins.

use std::time::Duration;

use crate::support::MockServer;
use crate::support::anthropic::{text_turn, text_turn_with_input_tokens};
use crate::support::project::project;
use crate::{exit_cleanly, start};

#[test]
fn auto_compaction_shows_a_divider_below_the_earlier_transcript() {
    let project = project();
    let server = MockServer::start(vec![
        // 170,000 of 200,000: the next prompt compacts first.
        text_turn_with_input_tokens("Explored the parser.", 170_000),
        text_turn("The user explored the parser."),
        text_turn("Second answer."),
        text_turn("Third answer."),
    ]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("first task: explore the parser");
    pty.send(b"\r");
    pty.wait_for_text("Explored the parser.");
    pty.wait_for("the spinner to stop", Duration::from_secs(10), |s| {
        !s.contains("esc to interrupt")
    });
    pty.type_text("second task");
    pty.send(b"\r");
    let screen = pty.wait_for_text("Second answer.");
    assert!(screen.contains("auto-compacted: 170k → "), "{screen}");
    assert!(screen.contains("The context was nearly full"), "{screen}");
    assert!(screen.contains("k tokens ─"), "{screen}");
    let above = screen
        .find("first task: explore the parser")
        .expect("still shown");
    let divider = screen.find("auto-compacted").unwrap();
    assert!(above < divider, "{screen}");
    assert!(screen.contains("─ auto-compacted"), "a rule: {screen}");
    assert_eq!(server.requests().len(), 3);
    exit_cleanly(&mut pty);

    let mut pty = start(&project, &server, &["-c"]);
    let screen = pty.wait_for_text("earlier conversation compacted");
    assert!(screen.contains("second task"), "{screen}");
    assert!(!screen.contains("first task"), "{screen}");
    exit_cleanly(&mut pty);
}
