//! Tests of older history coming in above a resumed transcript.

use std::path::PathBuf;
use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::json;

use super::*;
use crate::theme::Theme;
use crate::transcript::{ToolStatus, test_events};
use robota_core::{Block, Message, Role};
use robota_sdk::{CONTEXT_SUMMARY_PREFIX, SessionEvent};

const WIDTH: u16 = 60;
const HEIGHT: u16 = 8;

fn source(until: u64, messages: usize) -> OlderHistory {
    OlderHistory {
        log: PathBuf::from("/tmp/s.jsonl"),
        until,
        messages,
    }
}

fn turn(n: usize) -> [Message; 2] {
    [
        Message::user_text(format!("older prompt {n}")),
        Message::new(
            Role::Assistant,
            vec![Block::text(format!("older answer {n}"))],
        ),
    ]
}

/// A resumed transcript: the summary's divider and `live` turns, with older history above.
fn resumed(live: usize) -> Transcript {
    let mut history = vec![Message::user_text(format!(
        "{CONTEXT_SUMMARY_PREFIX}what came before"
    ))];
    for n in 0..live {
        history.push(Message::user_text(format!("live prompt {n}")));
        history.push(Message::new(
            Role::Assistant,
            vec![Block::text(format!("live answer {n}"))],
        ));
    }
    let mut t = Transcript::new(Theme::new(false));
    t.replay(&history);
    t.set_older_history(Some(source(1_000, 40)));
    t
}

fn screen(t: &mut Transcript) -> Vec<String> {
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let mut buf = Buffer::empty(area);
    t.render(area, &mut buf);
    (0..HEIGHT)
        .map(|y| {
            (0..WIDTH)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

fn page(turns: std::ops::Range<usize>, rest: Option<OlderHistory>) -> OlderPage {
    OlderPage {
        messages: turns.flat_map(turn).collect(),
        rest,
        warnings: Vec::new(),
    }
}

#[test]
fn the_line_asks_for_older_history_only_once_the_view_reaches_the_top() {
    let mut t = resumed(6);
    let first = screen(&mut t);
    assert!(
        !first.iter().any(|row| row.contains("older history")),
        "{first:?}"
    );
    assert_eq!(t.older_wanted(), None, "the view is at the end");
    t.scroll_up(3);
    screen(&mut t);
    assert_eq!(t.older_wanted(), None, "not at the top yet");
    t.scroll_to_top();
    let top = screen(&mut t);
    assert!(
        top[0].contains("older history: 40 earlier messages · scroll up to load"),
        "{top:?}"
    );
    assert_eq!(t.older_wanted(), Some(source(1_000, 40)));
    assert!(screen(&mut t)[0].contains("older history: loading…"));
    assert_eq!(t.older_wanted(), None, "one read at a time");
    assert!(t.is_loading_older());
}

#[test]
fn a_page_comes_in_above_with_the_view_kept_on_the_same_content() {
    let mut t = resumed(6);
    screen(&mut t);
    t.scroll_to_top();
    let before = screen(&mut t);
    let from = t.older_wanted().unwrap();
    t.older_loaded(&from, Ok::<_, String>(page(10..20, Some(source(500, 20)))));
    let after = screen(&mut t);
    // The rows that showed the live part show it still; the line went up with the rest.
    assert_eq!(after[2..], before[2..], "{before:?}\n{after:?}");
    assert!(after[0].contains("older answer 19"), "{after:?}");
    t.scroll_to_top();
    let top = screen(&mut t);
    assert!(
        top[0].contains("older history: 20 earlier messages"),
        "{top:?}"
    );
    assert!(top[2].contains("older prompt 10"), "{top:?}");

    // The next page: the last one, so the line goes.
    let from = t.older_wanted().unwrap();
    assert_eq!(from, source(500, 20));
    t.older_loaded(&from, Ok::<_, String>(page(0..10, None)));
    t.scroll_to_top();
    let top = screen(&mut t);
    assert!(top[0].contains("older prompt 0"), "{top:?}");
    assert_eq!(t.older_wanted(), None);
    assert!(
        !t.cells()
            .any(|c| matches!(c, Cell::Divider(l) if l.contains("older history")))
    );
    let prompts = t
        .cells()
        .filter(|c| matches!(c, Cell::UserPrompt(_)))
        .count();
    assert_eq!(prompts, 20 + 6);
}

#[test]
fn an_unreadable_log_leaves_a_warning_and_a_stale_page_is_dropped() {
    let mut t = resumed(1);
    screen(&mut t);
    let from = t
        .older_wanted()
        .expect("everything fits: the top is in view");
    t.older_loaded(&source(9, 9), Ok::<_, String>(page(0..1, None)));
    assert!(
        t.is_loading_older(),
        "a page of another log is not this one's"
    );
    t.older_loaded(&from, Err("session log x changed since it was resumed"));
    let rows = screen(&mut t);
    assert!(
        rows[0].contains("Older history could not be read: session log x changed"),
        "{rows:?}"
    );
    assert!(!t.is_loading_older());
    assert_eq!(t.older_wanted(), None);
}

#[test]
fn live_events_reach_their_cells_after_older_cells_came_in_above() {
    let mut t = resumed(1);
    t.apply(&test_events::started("run it"));
    t.apply(&SessionEvent::ToolUseStreaming {
        id: "c1".into(),
        name: "Bash".into(),
    });
    t.apply(&SessionEvent::ToolStarted {
        id: "c1".into(),
        name: "Bash".into(),
        input: json!({"command": "ls"}),
    });
    screen(&mut t);
    t.scroll_to_top();
    screen(&mut t);
    let from = t.older_wanted().unwrap();
    t.older_loaded(&from, Ok::<_, String>(page(0..3, None)));
    t.apply(&SessionEvent::ToolFinished {
        id: "c1".into(),
        name: "Bash".into(),
        input: json!({"command": "ls"}),
        content: "a.rs".into(),
        is_error: false,
        display: None,
        duration: Duration::from_millis(5),
    });
    let last = t.cell(t.len() - 1);
    assert!(
        matches!(last, Some(Cell::ToolCall(call)) if call.status == ToolStatus::Ok),
        "the live call's own cell finished"
    );
    assert!(!t.has_running_tools());
}

#[test]
fn a_rewound_transcript_gets_the_line_again_and_clearing_removes_it() {
    let mut t = resumed(2);
    t.clear();
    assert!(t.is_empty());
    screen(&mut t);
    assert_eq!(t.older_wanted(), None);
    t.replay(&turn(0));
    t.set_older_history(Some(source(1_000, 1)));
    t.set_older_history(Some(source(1_000, 1)));
    let labels: Vec<&Cell> = t
        .cells()
        .filter(|c| matches!(c, Cell::Divider(l) if l.contains("older history")))
        .collect();
    assert_eq!(labels.len(), 1, "set twice, shown once");
    assert!(screen(&mut t)[0].contains("older history: 1 earlier message ·"));
}
