//! A resumed session's history replayed into the transcript (`Transcript::replay`):
//! prompts (Korean included, hook context left out), thinking, answers, a tool call with
//! its result and one with an error, a compaction notice, a `!command` note — then a live
//! `!command` with a non-zero exit code drawn after it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use robota::core::{Block, Message, Role};
use robota::sdk::SessionEvent;
use robota::sdk::shell_command::shell_note;
use robota::session::replay::compact_summary_message;
use robota::tui::markdown::highlight;
use robota::tui::theme::Theme;
use robota::tui::transcript::Transcript;
use serde_json::json;

use crate::assert_buffer_snapshot;

fn history() -> Vec<Message> {
    let user = |blocks| Message::new(Role::User, blocks);
    let assistant = |blocks| Message::new(Role::Assistant, blocks);
    vec![
        compact_summary_message("We set up the project.", "m0"),
        user(vec![
            Block::text("테스트가 왜 실패하는지 알려 주세요"),
            Block::text("<system-reminder>\nSessionStart hook context\n</system-reminder>"),
        ]),
        assistant(vec![
            Block::Thinking {
                thinking: "The overflow test is the likely culprit.".into(),
                signature: "sig".into(),
            },
            Block::text("먼저 **테스트**를 실행해 보겠습니다."),
            Block::ToolUse {
                id: "t1".into(),
                name: "Bash".into(),
                input: json!({"command": "cargo test"}),
            },
        ]),
        user(vec![Block::ToolResult {
            tool_use_id: "t1".into(),
            content: "running 2 tests\ntest a ... ok\ntest b ... FAILED\nattempt to add with overflow\nerror: test failed".into(),
            is_error: true,
        }]),
        assistant(vec![Block::ToolUse {
            id: "t2".into(),
            name: "Edit".into(),
            input: json!({"file_path": "src/lib.rs", "old_string": "a + b", "new_string": "a.saturating_add(b)"}),
        }]),
        user(vec![Block::ToolResult {
            tool_use_id: "t2".into(),
            content: "The file src/lib.rs has been updated.".into(),
            is_error: false,
        }]),
        assistant(vec![Block::text(
            "`add` 함수가 넘칠 때 포화되도록 고쳤습니다.\n\n```rust\na.saturating_add(b)\n```",
        )]),
        user(vec![Block::text(shell_note("git status --short", " M src/lib.rs", ""))]),
    ]
}

fn draw(t: &mut Transcript, width: u16) -> Buffer {
    let height = u16::try_from(t.total_height(width)).unwrap_or(u16::MAX);
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    t.render(area, &mut buf);
    buf
}

#[test]
fn a_replayed_session_then_a_live_shell_command() {
    highlight::load_blocking();
    for width in [80u16, 40] {
        let mut t = Transcript::new(Theme::new(true));
        t.replay(&history());
        assert!(!t.has_running_tools());
        t.apply(&SessionEvent::ShellOutput {
            id: robota::sdk::SubmissionId(1),
            command: "ls missing".into(),
            output: "ls: cannot access 'missing': No such file or directory".into(),
            exit_code: Some(2),
        });
        let buf = draw(&mut t, width);
        assert_buffer_snapshot!(format!("transcript_replay_{width}"), buf);
    }
}
