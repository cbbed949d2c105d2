//! The transcript with every cell kind — prompt, thinking, answer, tool calls running /
//! ok / failed / denied, an Edit diff, a todo list, notices, retry, command output,
//! interruption — fed through `SessionEvent`s and drawn with `Transcript::render`.

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use robota::core::{TodoItem, ToolDisplay};
use robota::sdk::{ErrorKind, Outcome, SessionEvent, Submission, SubmissionId, TurnEnd, TurnError};
use robota::tui::markdown::highlight;
use robota::tui::theme::Theme;
use robota::tui::transcript::Transcript;
use serde_json::json;

use crate::{WIDTHS, assert_buffer_snapshot};

fn started(prompt: &str) -> SessionEvent {
    SessionEvent::SubmissionStarted {
        id: SubmissionId(1),
        submission: Submission::Prompt(prompt.to_string()),
    }
}

fn ended(end: TurnEnd) -> SessionEvent {
    SessionEvent::SubmissionEnded {
        id: SubmissionId(1),
        outcome: Outcome {
            end,
            rounds: 1,
            duration: Duration::ZERO,
            result: String::new(),
        },
    }
}

fn tool_started(id: &str, name: &str, input: serde_json::Value) -> SessionEvent {
    SessionEvent::ToolStarted {
        id: id.into(),
        name: name.into(),
        input,
    }
}

fn tool_finished(
    id: &str,
    name: &str,
    input: serde_json::Value,
    content: &str,
    is_error: bool,
    display: Option<ToolDisplay>,
) -> SessionEvent {
    SessionEvent::ToolFinished {
        id: id.into(),
        name: name.into(),
        input,
        content: content.into(),
        is_error,
        display,
        duration: Duration::from_millis(12),
    }
}

fn conversation() -> Transcript {
    let mut t = Transcript::new(Theme::new(true));
    let events = vec![
        started("Fix the failing test in src/lib.rs, 테스트를 고쳐 주세요"),
        SessionEvent::ThinkingDelta("The test fails because `add` overflows.".into()),
        SessionEvent::TextDelta("Let me look at the **test** first.".into()),
        tool_started("c1", "Read", json!({"file_path": "src/lib.rs"})),
        tool_finished(
            "c1",
            "Read",
            json!({"file_path": "src/lib.rs"}),
            "     1\tpub fn add(a: u8, b: u8) -> u8 {\n     2\t    a + b\n     3\t}\n",
            false,
            None,
        ),
        tool_started("c2", "Bash", json!({"command": "cargo test"})),
        tool_finished(
            "c2",
            "Bash",
            json!({"command": "cargo test"}),
            "running 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... FAILED\nfailures:\n  attempt to add with overflow\n",
            true,
            None,
        ),
        SessionEvent::Retrying {
            attempt: 1,
            max_attempts: 10,
            delay: Duration::from_millis(1500),
            error: "Overloaded (529)".into(),
        },
        tool_started("c3", "Edit", json!({"file_path": "src/lib.rs"})),
        tool_finished(
            "c3",
            "Edit",
            json!({"file_path": "src/lib.rs"}),
            "The file src/lib.rs has been updated.",
            false,
            Some(ToolDisplay::FileDiff {
                file_path: "src/lib.rs".into(),
                before: Some("pub fn add(a: u8, b: u8) -> u8 {\n    a + b\n}\n".into()),
                after: "pub fn add(a: u8, b: u8) -> u8 {\n    a.saturating_add(b)\n}\n".into(),
            }),
        ),
        tool_started("c4", "TodoWrite", json!({"todos": []})),
        tool_finished(
            "c4",
            "TodoWrite",
            json!({"todos": []}),
            "ok",
            false,
            Some(ToolDisplay::Todos {
                todos: vec![
                    TodoItem {
                        content: "Find the bug".into(),
                        status: "completed".into(),
                        active_form: String::new(),
                    },
                    TodoItem {
                        content: "Fix add".into(),
                        status: "in_progress".into(),
                        active_form: String::new(),
                    },
                    TodoItem {
                        content: "Run the tests".into(),
                        status: "pending".into(),
                        active_form: String::new(),
                    },
                ],
            }),
        ),
        SessionEvent::PermissionDenied {
            tool_use_id: "c5".into(),
            tool_name: "Bash".into(),
            input: json!({"command": "git push --force"}),
            reason: "Denied by your settings: Bash(git push *)".into(),
        },
        SessionEvent::TextDelta(
            "Fixed: `add` now saturates.\n\n| test | result |\n|---|---|\n| a | ok |\n| c | ok |\n"
                .into(),
        ),
        ended(TurnEnd::Success),
        SessionEvent::CommandOutput {
            id: SubmissionId(2),
            command: "cost".into(),
            output: "Total cost: $0.0123\nTotal duration (API): 4.1s".into(),
        },
        SessionEvent::Notice("Conversation compacted (42k → 8k tokens)".into()),
        SessionEvent::Warning("CLAUDE.md is larger than 40k characters".into()),
        started("now run it again"),
        tool_started(
            "c6",
            "Bash",
            json!({"command": "cargo test -- --nocapture"}),
        ),
        ended(TurnEnd::Error(TurnError::new(
            ErrorKind::RateLimit,
            "Rate limited: retries exhausted",
        ))),
        started("try once more"),
        SessionEvent::TextDelta("Running".into()),
        tool_started("c7", "Bash", json!({"command": "sleep 100"})),
    ];
    for event in &events {
        t.apply(event);
    }
    t
}

fn draw(t: &mut Transcript, width: u16, height: Option<u16>) -> Buffer {
    let height = height.unwrap_or_else(|| u16::try_from(t.total_height(width)).unwrap_or(u16::MAX));
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    t.render(area, &mut buf);
    buf
}

#[test]
fn every_cell_kind_at_every_width() {
    highlight::load_blocking();
    for width in WIDTHS {
        let mut t = conversation();
        assert!(t.has_running_tools());
        let total = t.total_height(width);
        for line in t.visible_lines(width, 0, total) {
            assert!(line.width() <= usize::from(width), "{line:?}");
        }
        let buf = draw(&mut t, width, None);
        assert_buffer_snapshot!(format!("transcript_cells_{width}"), buf);
    }
}

#[test]
fn expanded_transcript() {
    highlight::load_blocking();
    let mut t = conversation();
    t.toggle_expanded();
    t.tick();
    let buf = draw(&mut t, 80, None);
    assert_buffer_snapshot!("transcript_cells_expanded_80", buf);
}

#[test]
fn interrupted_turn() {
    let mut t = Transcript::new(Theme::new(true));
    t.apply(&started("write a long essay"));
    t.apply(&SessionEvent::TextDelta("Once upon a time".into()));
    t.apply(&tool_started("x", "Bash", json!({"command": "yes"})));
    t.apply(&ended(TurnEnd::Interrupted));
    let buf = draw(&mut t, 40, None);
    assert_buffer_snapshot!("transcript_interrupted_40", buf);
}

#[test]
fn scrolled_up_with_new_output_below() {
    let mut t = conversation();
    let _ = draw(&mut t, 40, Some(10));
    t.scroll_up(15);
    let _ = draw(&mut t, 40, Some(10));
    t.apply(&SessionEvent::TextDelta(" more output arrives".into()));
    let buf = draw(&mut t, 40, Some(10));
    assert!(t.has_new_output_below());
    assert_buffer_snapshot!("transcript_new_output_below_40x10", buf);
}

#[test]
fn rows_fit_every_width_from_two_up() {
    highlight::load_blocking();
    let mut t = conversation();
    t.toggle_expanded();
    for width in 2..=30u16 {
        let total = t.total_height(width);
        for line in t.visible_lines(width, 0, total) {
            assert!(line.width() <= usize::from(width), "at {width}: {line:?}");
        }
    }
}

#[test]
fn one_by_one_area() {
    let mut t = conversation();
    let buf = draw(&mut t, 1, Some(1));
    assert_buffer_snapshot!("transcript_1x1", buf);
}

#[test]
fn no_color_transcript() {
    let mut t = Transcript::new(Theme::new(false));
    for event in [
        started("hi"),
        SessionEvent::TextDelta("Hello **there**, see `x`.".into()),
        tool_finished(
            "a",
            "Bash",
            json!({"command": "false"}),
            "exit 1",
            true,
            None,
        ),
    ] {
        t.apply(&event);
    }
    let buf = draw(&mut t, 40, None);
    for cell in buf.content() {
        assert_eq!(cell.fg, ratatui::style::Color::Reset);
        assert_eq!(cell.bg, ratatui::style::Color::Reset);
    }
    assert_buffer_snapshot!("transcript_no_color_40", buf);
}
