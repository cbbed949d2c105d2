//! Older history on demand after a resume: the transcript shows the live part of the log
//! (from the last compaction on) under a line saying how much came before; scrolling to
//! the top reads the older part in pages (off the UI thread) and puts it above, with each
//! compaction a divider between its turns; what the model is sent stays the live part. A
//! log cut short since the resume gives a warning in the line's place.

use std::path::Path;

use crate::support::MockServer;
use crate::support::anthropic::text_turn;
use crate::support::project::{Project, project};
use crate::{exit_cleanly, last_user_text, start};
use robota::core::{Block, Message, Role};
use robota::session::log::{MessageExtra, SessionLog};
use robota::session::replay::replay;

/// Mouse wheel up (SGR) over the transcript.
const WHEEL_UP: &[u8] = b"\x1b[<64;20;8M";
const PAGE_UP: &[u8] = b"\x1b[5~";
const HOME: &[u8] = b"\x1b[H";

/// Turns of a prompt and its answer, numbered.
fn write_turns(log: &SessionLog, turns: std::ops::Range<usize>) {
    for n in turns {
        log.append_message(
            &Message::user_text(format!("older prompt {n:04}")),
            MessageExtra::default(),
        )
        .unwrap();
        let answer = Message::new(
            Role::Assistant,
            vec![Block::text(format!("older answer {n:04}"))],
        );
        log.append_message(&answer, MessageExtra::default())
            .unwrap();
    }
}

/// A session (seeded by one real `-p` run) grown with `older` turns, a compaction, one
/// turn, another compaction and two live turns (numbered on from `older`).
fn compacted_session(project: &Project, server: &MockServer, older: usize) -> std::path::PathBuf {
    let out = project.run(server, &["-p", "seed"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = project.session_logs().pop().unwrap();
    let log = SessionLog::open_append(&path, &replay(&path).unwrap()).unwrap();
    write_turns(&log, 0..older);
    log.append_compact_boundary("summary one").unwrap();
    write_turns(&log, older..older + 1);
    log.append_compact_boundary("summary two").unwrap();
    write_turns(&log, older + 1..older + 3);
    path
}

fn older_line(messages: usize) -> String {
    format!("older history: {messages} earlier messages · scroll up to load")
}

const DIVIDER: &str = "earlier conversation compacted";

#[test]
fn scrolling_to_the_top_loads_older_history_page_by_page_above_the_live_part() {
    let project = project();
    let server = MockServer::start(vec![text_turn("seeded"), text_turn("still live")]);
    // 1,100 older turns: more than one page of 2,000 messages.
    compacted_session(&project, &server, 1_100);
    let mut pty = start(&project, &server, &["-c"]);
    let screen = pty.wait_for_text("older answer 1102");
    assert!(screen.contains(&older_line(2 + 2_200 + 2)), "{screen}");
    assert_eq!(screen.matches(DIVIDER).count(), 1, "{screen}");
    assert!(!screen.contains("older answer 1100"), "{screen}");

    // The wheel at the top: the newest page comes in above the live part, the first
    // compaction a divider between its turns.
    pty.send(WHEEL_UP);
    let screen = pty.wait_for_text("older answer 1099");
    assert!(
        screen.contains("older answer 1102"),
        "the live part stays: {screen}"
    );
    assert!(screen.contains("older answer 1100"), "{screen}");
    assert_eq!(screen.matches(DIVIDER).count(), 2, "{screen}");
    assert!(!screen.contains("older history:"), "{screen}");
    // Home: the top of what is loaded, where the line about the 204 messages left asks
    // for the next page; it comes in above, the view staying where it was.
    pty.send(HOME);
    let screen = pty.wait_for_text("older answer 0100");
    assert!(!screen.contains("older answer 0099"), "{screen}");
    pty.send(HOME);
    let screen = pty.wait_for_text("older prompt 0000");
    assert!(screen.contains("> seed"), "{screen}");
    assert!(
        !screen.contains("older history:"),
        "everything is loaded: {screen}"
    );

    // Display only: the model is sent the live part, as before.
    pty.send(b"\x1b[F");
    pty.type_text("go on");
    pty.send(b"\r");
    assert_eq!(last_user_text(&server, 2), "go on");
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(sent.contains("summary two") && sent.contains("older prompt 1101"));
    assert!(!sent.contains("older prompt 1100") && !sent.contains("summary one"));
    pty.wait_for_text("still live");
    exit_cleanly(&mut pty);
}

#[test]
fn a_log_cut_short_since_the_resume_leaves_a_warning_in_the_lines_place() {
    let project = project();
    let server = MockServer::start(vec![text_turn("seeded")]);
    let path = compacted_session(&project, &server, 20);
    let mut pty = start(&project, &server, &["-c"]);
    let screen = pty.wait_for_text("older answer 0022");
    assert!(screen.contains(&older_line(2 + 40 + 2)), "{screen}");
    cut_to(&path, 500);
    pty.send(PAGE_UP);
    let screen = pty.wait_for_text("Older history could not be read");
    assert!(screen.contains("changed since it was resumed"), "{screen}");
    assert!(!screen.contains("older history:"), "{screen}");
    exit_cleanly(&mut pty);
}

/// Cuts the log at `path` to its first `len` bytes, in place (robota keeps it open).
fn cut_to(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

#[test]
fn rewind_offers_the_resumed_prompts_only_and_keeps_the_older_history_line() {
    let project = project();
    let server = MockServer::start(vec![text_turn("seeded")]);
    compacted_session(&project, &server, 20);
    let mut pty = start(&project, &server, &["-c"]);
    pty.wait_for_text("older answer 0022");
    pty.send(WHEEL_UP);
    pty.wait_for_text("older answer 0019");

    pty.send(b"\x1b");
    pty.wait_for_text("Press Esc again to rewind");
    pty.send(b"\x1b");
    let screen = pty.wait_for_text("Rewind to before a prompt");
    let picker: Vec<&str> = screen
        .lines()
        .skip_while(|line| !line.contains("Rewind to before a prompt"))
        .collect();
    let picker = picker.join("\n");
    // The prompts of the history the model has; older ones were summarised away.
    assert!(picker.contains("older prompt 0022") && picker.contains("older prompt 0021"));
    assert!(!picker.contains("older prompt 0020"), "{picker}");
    assert!(!picker.contains("seed"), "{picker}");
    assert!(picker.contains("1/2"), "two prompts: {picker}");

    // Rewinding the conversation to before the older of them redraws the transcript from
    // the rewound history, with the line about older history above it again.
    pty.send(b"\x1b[B");
    pty.send(b"\r");
    pty.wait_for_text("Restore conversation");
    pty.send(b"\x1b[B");
    pty.send(b"\r");
    let screen = pty.wait_for_text("Rewound the conversation");
    assert!(screen.contains(&older_line(44)), "{screen}");
    assert!(!screen.contains("older answer 0021"), "{screen}");
    assert!(!screen.contains("older answer 0019"), "{screen}");
    // The prompt is back in the composer; emptied, the composer lets Ctrl+D leave.
    assert!(screen.contains("older prompt 0021"), "{screen}");
    pty.send(b"\x15");
    pty.wait_for(
        "an empty composer",
        std::time::Duration::from_secs(10),
        |s| !s.contains("older prompt 0021"),
    );
    exit_cleanly(&mut pty);
}
