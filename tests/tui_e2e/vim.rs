//! Vim mode in the composer: `/vim` turns it on and saves it, Esc goes to normal mode
//! (shown in the status line), normal-mode edits change what reaches the model, Enter
//! submits from normal mode, and the next start begins in vim mode again.

use crate::support::MockServer;
use crate::support::anthropic::text_turn;
use crate::support::project::project;
use crate::{exit_cleanly, last_user_text, start};

#[test]
fn vim_mode_edits_in_normal_mode_submits_and_is_remembered() {
    let project = project();
    let server = MockServer::start(vec![text_turn("Got both lines.")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("/vim");
    pty.wait_for_text("Toggle vim");
    pty.send(b"\r");
    pty.wait_for_text("Vim mode on");
    pty.wait_for_text("-- INSERT --");
    let settings = std::fs::read_to_string(project.home.join("settings.json")).unwrap();
    let settings: serde_json::Value = serde_json::from_str(&settings).unwrap();
    assert_eq!(settings["editorMode"], "vim", "{settings}");

    pty.type_text("hello world");
    pty.wait_for_text("> hello world");
    pty.send(b"\x1b");
    pty.wait_for_text("NORMAL");
    // 0x deletes the first letter, A! appends, Esc, yyp duplicates the line.
    pty.type_text("0x");
    pty.wait_for_text("> ello world");
    pty.type_text("A!");
    pty.wait_for_text("-- INSERT --");
    pty.wait_for_text("> ello world!");
    pty.send(b"\x1b");
    pty.wait_for_text("NORMAL");
    pty.type_text("yyp");
    pty.wait_for(
        "the line put below",
        std::time::Duration::from_secs(10),
        |s| s.matches("ello world!").count() == 2,
    );
    pty.send(b"\r");
    pty.wait_for_text("Got both lines.");
    assert_eq!(last_user_text(&server, 1), "ello world!\nello world!");
    pty.wait_for_text("-- INSERT --");
    exit_cleanly(&mut pty);

    // The next start reads `editorMode` and begins in vim's insert mode.
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("-- INSERT --");
    pty.type_text("/vim");
    pty.wait_for_text("Toggle vim");
    pty.send(b"\r");
    pty.wait_for_text("Vim mode off");
    let screen = pty.contents();
    assert!(!screen.contains("-- INSERT --"), "{screen}");
    let settings = std::fs::read_to_string(project.home.join("settings.json")).unwrap();
    let settings: serde_json::Value = serde_json::from_str(&settings).unwrap();
    assert_eq!(settings["editorMode"], "normal", "{settings}");
    exit_cleanly(&mut pty);
}
