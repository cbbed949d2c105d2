//! Rewind in the UI: Esc Esc on an empty composer opens the picker of prompts; choosing
//! one and "Restore code and conversation" puts the files back, empties the transcript of
//! what followed and puts the prompt back in the composer, ready to send again.

use std::time::Duration;

use serde_json::json;

use crate::support::MockServer;
use crate::support::anthropic::{text_turn, tool_turn};
use crate::support::project::project;
use crate::{exit_cleanly, start};

#[test]
fn esc_esc_opens_the_picker_and_restores_code_and_conversation() {
    let project = project();
    let notes = project.root.join("notes.txt");
    let server = MockServer::start(vec![
        tool_turn(
            None,
            &[(
                "t1",
                "Write",
                json!({"file_path": notes, "content": "one\n"}),
            )],
        ),
        text_turn("Wrote the notes."),
        text_turn("Asked again."),
    ]);
    let mut pty = start(&project, &server, &["--dangerously-skip-permissions"]);
    pty.wait_for_text("Ask anything");
    pty.type_text("write the notes");
    pty.send(b"\r");
    // The turn is over (its end work — the checkpoint — done), not only its answer
    // shown: an Esc during the turn would interrupt it instead.
    pty.wait_for("the turn to end", Duration::from_secs(20), |screen| {
        screen.contains("Wrote the notes.") && !screen.contains("esc to interrupt")
    });
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "one\n");

    pty.send(b"\x1b");
    pty.wait_for_text("Press Esc again to rewind");
    pty.send(b"\x1b");
    let picker = pty.wait_for_text("Rewind to before a prompt");
    assert!(picker.contains("write the notes"), "{picker}");
    assert!(picker.contains("changed notes.txt"), "{picker}");
    pty.send(b"\r");
    let actions = pty.wait_for_text("Restore code and conversation");
    assert!(actions.contains("Summarize from here"), "{actions}");
    pty.send(b"\r");
    let screen = pty.wait_for_text("Rewound the code and the conversation");
    assert!(!notes.exists(), "the written file is gone again");
    assert!(!screen.contains("Wrote the notes."), "{screen}");
    assert_eq!(
        screen.matches("write the notes").count(),
        1,
        "only the composer holds the prompt: {screen}"
    );

    // Enter sends it again over the rewound (empty) conversation.
    pty.send(b"\r");
    pty.wait_for_text("Asked again.");
    assert!(server.wait_for_requests(3, Duration::from_secs(10)));
    let messages = server.requests()[2].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].to_string().contains("write the notes"));
    exit_cleanly(&mut pty);
}
