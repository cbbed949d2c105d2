//! Searching the transcript: `/` while scrolled up opens the search prompt, typing finds
//! and highlights the first match below the top of the view, `n`/`N` step through the
//! matches (wrapping), Esc closes it; at the end of the transcript `/` is a slash command.

use std::time::Duration;

use crate::support::MockServer;
use crate::support::anthropic::text_turn;
use crate::support::project::project;
use crate::{exit_cleanly, start};

fn long_answer() -> String {
    (1..=60)
        .map(|i| match i {
            5 => "- row 5 has the needle alpha".to_string(),
            40 => "- row 40 has the NEEDLE beta".to_string(),
            _ => format!("- filler row {i}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn slash_searches_the_scrolled_transcript_and_n_steps_through_matches() {
    let project = project();
    let server = MockServer::start(vec![text_turn(&long_answer())]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("write rows");
    pty.send(b"\r");
    pty.wait_for_text("filler row 60");

    // Home on the empty composer scrolls to the top; `/` then opens the search.
    pty.send(b"\x1b[H");
    pty.wait_for_text("> write rows");
    pty.send(b"/");
    pty.wait_for_text("Enter to keep");
    pty.type_text("needle");
    // "nee" already has both matches: wait for the whole query before reading the screen.
    pty.wait_for_text("/needle");
    let screen = pty.wait_for_text("1/2");
    assert!(screen.contains("needle alpha"), "{screen}");
    assert_eq!(pty.reversed_text(), vec!["needle"], "{screen}");
    pty.send(b"\r");
    pty.wait_for_text("n/N next/previous");

    pty.send(b"n");
    let screen = pty.wait_for_text("2/2");
    assert!(screen.contains("NEEDLE beta"), "{screen}");
    assert!(!screen.contains("needle alpha"), "{screen}");
    assert_eq!(pty.reversed_text(), vec!["NEEDLE"], "{screen}");
    pty.send(b"n");
    let screen = pty.wait_for_text("1/2");
    assert!(screen.contains("needle alpha"), "wraps around: {screen}");
    pty.send(b"N");
    pty.wait_for_text("2/2");

    pty.send(b"\x1b");
    let screen = pty.wait_for_text("Ask anything");
    assert!(!screen.contains("n/N next"), "{screen}");
    assert!(pty.reversed_text().is_empty(), "{screen}");

    // A query without matches says so; Esc closes it again.
    pty.send(b"/");
    pty.type_text("zebra");
    pty.wait_for_text("no match");
    pty.send(b"\x1b");
    pty.wait_for_text("Ask anything");

    // Following the end, `/` is the start of a slash command as always.
    pty.send(b"\x1b[F");
    pty.wait_for("the view to follow the end", Duration::from_secs(10), |s| {
        s.contains("filler row 60")
    });
    pty.send(b"/");
    pty.wait_for_text("> /");
    let screen = pty.contents();
    assert!(!screen.contains("Enter to keep"), "{screen}");
    pty.send(b"\x03");
    pty.wait_for_text("Ask anything");
    exit_cleanly(&mut pty);
}
