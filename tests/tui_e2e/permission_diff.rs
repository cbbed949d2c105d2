//! The permission popup's diff: in a small window the changed lines stay beside the
//! options (unchanged context gives way), a long diff scrolls inside the popup with
//! PgUp/PgDn and the mouse wheel, and the transcript behind a popup still scrolls.

use serde_json::json;

use crate::support::MockServer;
use crate::support::anthropic::{text_turn, tool_turn};
use crate::support::project::{Project, project};
use crate::{exit_cleanly, start, start_sized};

/// A project with `long.txt`: lines "line 1" … "line 40".
fn project_with_long_file() -> Project {
    let project = project();
    let text: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    std::fs::write(project.root.join("long.txt"), text).unwrap();
    project
}

fn read_then_edit(old: &str, new: &str) -> Vec<crate::support::MockResponse> {
    vec![
        tool_turn(None, &[("r1", "Read", json!({"file_path": "long.txt"}))]),
        tool_turn(
            None,
            &[(
                "e1",
                "Edit",
                json!({"file_path": "long.txt", "old_string": old, "new_string": new}),
            )],
        ),
        text_turn("Edited."),
    ]
}

#[test]
fn in_a_small_window_the_changed_lines_stay_beside_the_options() {
    let project = project_with_long_file();
    let server = MockServer::start(read_then_edit("line 20\n", "LINE 20\n"));
    let mut pty = start_sized(&project, &server, &[], 80, 15);
    pty.wait_for_text("Ask anything");
    pty.type_text("shout line 20");
    pty.send(b"\r");
    let popup = pty.wait_for_text("what to do instead");
    assert!(popup.contains("@@ -"), "the hunk header: {popup}");
    assert!(popup.contains("- line 20"), "{popup}");
    assert!(popup.contains("+ LINE 20"), "{popup}");
    assert!(popup.contains("1. Yes"), "{popup}");
    pty.send(b"1");
    pty.wait_for_text("Edited.");
    let text = std::fs::read_to_string(project.root.join("long.txt")).unwrap();
    assert!(text.contains("LINE 20\nline 21"), "{text}");
    exit_cleanly(&mut pty);
}

#[test]
fn a_long_diff_scrolls_in_the_popup_with_pgdn_and_the_wheel() {
    let project = project_with_long_file();
    let old: String = (5..=34).map(|i| format!("line {i}\n")).collect();
    let new = old.to_uppercase();
    let server = MockServer::start(read_then_edit(&old, &new));
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("shout them all");
    pty.send(b"\r");
    let popup = pty.wait_for_text("PgUp/PgDn scroll");
    assert!(popup.contains("- line 5"), "{popup}");
    assert!(!popup.contains("+ LINE 34"), "{popup}");
    assert!(popup.contains("3. No"), "{popup}");
    for _ in 0..8 {
        pty.send(b"\x1b[6~");
    }
    let popup = pty.wait_for_text("+ LINE 34");
    assert!(!popup.contains("- line 5 "), "{popup}");
    assert!(popup.contains("3. No"), "the options stay: {popup}");
    // Three wheel notches up over the popup scroll its diff back.
    for _ in 0..3 {
        pty.send(b"\x1b[<64;20;8M");
    }
    pty.wait_for(
        "the wheel to scroll the diff",
        std::time::Duration::from_secs(10),
        |s| !s.contains("+ LINE 34") && s.contains("3. No"),
    );
    pty.send(b"1");
    pty.wait_for_text("Edited.");
    let text = std::fs::read_to_string(project.root.join("long.txt")).unwrap();
    assert!(text.contains("LINE 34\nline 35"), "{text}");
    exit_cleanly(&mut pty);
}

#[test]
fn the_transcript_scrolls_behind_an_open_popup() {
    let project = project_with_long_file();
    let rows: String = (1..=60).map(|i| format!("- filler row {i}\n")).collect();
    let mut script = vec![text_turn(&rows)];
    script.extend(read_then_edit("line 20\n", "LINE 20\n"));
    let server = MockServer::start(script);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("rows please");
    pty.send(b"\r");
    pty.wait_for_text("filler row 60");
    pty.type_text("shout line 20");
    pty.send(b"\r");
    let popup = pty.wait_for_text("what to do instead");
    assert!(popup.contains("+ LINE 20"), "{popup}");
    assert!(!shows_early_rows(&popup), "{popup}");
    // A short diff has nothing to scroll: PgUp scrolls the transcript above the popup.
    pty.send(b"\x1b[5~");
    pty.send(b"\x1b[5~");
    let screen = pty.wait_for(
        "the transcript to scroll up",
        std::time::Duration::from_secs(10),
        shows_early_rows,
    );
    assert!(screen.contains("what to do instead"), "{screen}");
    pty.send(b"1");
    // Scrolled up, the answer arrives below the view; End follows it again.
    pty.wait_for_text("new output below");
    pty.send(b"\x1b[F");
    pty.wait_for_text("Edited.");
    exit_cleanly(&mut pty);
}

/// Whether a "filler row N" with N up to 40 is on screen.
fn shows_early_rows(screen: &str) -> bool {
    screen.lines().any(|line| {
        line.split("filler row ")
            .nth(1)
            .and_then(|rest| rest.trim().parse::<u32>().ok())
            .is_some_and(|n| n <= 40)
    })
}
