//! Unit tests of the transcript: events → cells, viewport slicing, scrolling, resize.

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::json;

use super::*;
use crate::markdown::StreamingMarkdown;
use robota_core::ToolDisplay;
use robota_sdk::{SessionEvent, TurnEnd};

fn text(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

fn all_lines(t: &mut Transcript, width: u16) -> Vec<String> {
    let total = t.total_height(width);
    text(&t.visible_lines(width, 0, total))
}

fn finished(id: &str, name: &str, input: serde_json::Value, content: &str) -> SessionEvent {
    SessionEvent::ToolFinished {
        id: id.into(),
        name: name.into(),
        input,
        content: content.into(),
        is_error: false,
        display: None,
        duration: Duration::from_millis(5),
    }
}

#[test]
fn a_turn_becomes_prompt_answer_and_tool_cells() {
    let mut t = Transcript::new(Theme::new(false));
    t.apply(&crate::transcript::test_events::started("list files"));
    t.apply(&SessionEvent::ThinkingDelta("let me see".into()));
    t.apply(&SessionEvent::TextDelta("I'll run **ls**.".into()));
    t.apply(&SessionEvent::ToolUseStreaming {
        id: "call_0".into(),
        name: "Bash".into(),
    });
    t.apply(&SessionEvent::ToolStarted {
        id: "call_0".into(),
        name: "Bash".into(),
        input: json!({"command": "ls"}),
    });
    assert!(t.has_running_tools());
    t.apply(&finished(
        "call_0",
        "Bash",
        json!({"command": "ls"}),
        "a.rs\nb.rs\n",
    ));
    t.apply(&SessionEvent::TextDelta("Two files.".into()));
    t.apply(&crate::transcript::test_events::ended(TurnEnd::Success));
    assert!(!t.has_running_tools());
    assert_eq!(
        all_lines(&mut t, 40),
        [
            "> list files",
            "",
            "✻ Thinking (ctrl+o to expand)",
            "",
            "⏺ I'll run ls.",
            "",
            "⏺ Bash(ls)",
            "  ⎿  a.rs",
            "     b.rs",
            "",
            "⏺ Two files.",
        ]
    );
    t.toggle_expanded();
    assert!(all_lines(&mut t, 40).contains(&"✻ let me see".to_string()));
}

#[test]
fn reused_tool_ids_get_new_cells_in_a_new_turn() {
    let mut t = Transcript::new(Theme::new(false));
    for round in 0..2 {
        t.apply(&SessionEvent::ToolStarted {
            id: "call_0".into(),
            name: "Read".into(),
            input: json!({"file_path": format!("/f{round}")}),
        });
        t.apply(&finished(
            "call_0",
            "Read",
            json!({"file_path": format!("/f{round}")}),
            "x\n",
        ));
    }
    let lines = all_lines(&mut t, 40);
    assert!(lines.contains(&"⏺ Read(/f0)".to_string()));
    assert!(lines.contains(&"⏺ Read(/f1)".to_string()));
    assert!(lines.contains(&"  ⎿  Read 1 line".to_string()));
}

#[test]
fn a_discarded_attempt_removes_its_cells_and_retries_update_in_place() {
    let mut t = Transcript::new(Theme::new(false));
    t.apply(&crate::transcript::test_events::started("hi"));
    t.apply(&SessionEvent::TextDelta("partial ans".into()));
    t.apply(&SessionEvent::AttemptDiscarded);
    for attempt in 1..=2 {
        t.apply(&SessionEvent::Retrying {
            attempt,
            max_attempts: 5,
            delay: Duration::from_secs(2),
            error: "Overloaded".into(),
        });
    }
    assert_eq!(
        all_lines(&mut t, 60),
        ["> hi", "", "↻ Overloaded · retrying in 2s (attempt 2/5)"]
    );
    t.apply(&SessionEvent::TextDelta("full answer".into()));
    assert_eq!(all_lines(&mut t, 60), ["> hi", "", "⏺ full answer"]);
    // A retry that never succeeds stays visible next to the error.
    t.apply(&SessionEvent::Retrying {
        attempt: 1,
        max_attempts: 1,
        delay: Duration::from_secs(1),
        error: "Server error".into(),
    });
    t.apply(&crate::transcript::test_events::ended(TurnEnd::Error(
        robota_sdk::TurnError::new(robota_sdk::ErrorKind::Server, "Server error (500)"),
    )));
    assert_eq!(
        all_lines(&mut t, 60)[3..],
        [
            "",
            "↻ Server error · retrying in 1s (attempt 1/1)",
            "",
            "✗ Server error (500)"
        ]
    );
}

#[test]
fn diffs_denials_and_interruptions() {
    let mut t = Transcript::new(Theme::new(false));
    t.apply(&SessionEvent::ToolFinished {
        id: "e".into(),
        name: "Edit".into(),
        input: json!({"file_path": "src/a.rs"}),
        content: "The file src/a.rs has been updated.".into(),
        is_error: false,
        display: Some(ToolDisplay::FileDiff {
            file_path: "src/a.rs".into(),
            before: Some("one\ntwo\n".into()),
            after: "one\n2\n".into(),
        }),
        duration: Duration::from_millis(1),
    });
    t.apply(&SessionEvent::PermissionDenied {
        tool_use_id: "b".into(),
        tool_name: "Bash".into(),
        input: json!({"command": "rm -rf /"}),
        reason: "Denied by rule Bash(rm *)".into(),
    });
    t.apply(&SessionEvent::ToolUseStreaming {
        id: "c".into(),
        name: "Bash".into(),
    });
    t.apply(&crate::transcript::test_events::ended(TurnEnd::Interrupted));
    assert_eq!(
        all_lines(&mut t, 60),
        [
            "⏺ Edit(src/a.rs)",
            "  ⎿  Updated src/a.rs with 1 addition and 1 removal",
            "     @@ -1,2 +1,2 @@",
            "     1 1   one",
            "     2   - two",
            "       2 + 2",
            "",
            "⏺ Bash(rm -rf /)",
            "  ⎿  Denied by rule Bash(rm *)",
            "",
            "⏺ Bash",
            "  ⎿  Interrupted",
            "",
            "  ⎿  Interrupted by user",
        ]
    );
}

#[test]
fn an_edit_with_diagnostics_shows_their_counts_under_the_diff() {
    let mut t = Transcript::new(Theme::new(false));
    t.apply(&SessionEvent::ToolFinished {
        id: "e".into(),
        name: "Edit".into(),
        input: json!({"file_path": "a.py"}),
        content: "The file a.py has been updated.\n\n<diagnostics server=\"pyright\">\nThe language server reports 1 error(s) and 2 warning(s) in this file:\na.py:2:1 error bad\n</diagnostics>".into(),
        is_error: false,
        display: Some(ToolDisplay::FileDiff {
            file_path: "a.py".into(),
            before: Some("x = 1\n".into()),
            after: "x = 1\ny: int = ''\n".into(),
        }),
        duration: Duration::from_millis(1),
    });
    let lines = all_lines(&mut t, 60);
    assert!(
        lines
            .iter()
            .any(|l| l.trim() == "pyright: 1 error(s), 2 warning(s)"),
        "{lines:#?}"
    );
}

#[test]
fn non_streamed_messages_build_their_cells() {
    let mut t = Transcript::new(Theme::new(false));
    let message = robota_core::Message::new(
        robota_core::Role::Assistant,
        vec![
            robota_core::Block::text("# Done"),
            robota_core::Block::ToolUse {
                id: "t".into(),
                name: "Glob".into(),
                input: json!({"pattern": "**/*.rs"}),
            },
        ],
    );
    t.apply(&SessionEvent::AssistantMessage {
        message,
        stop_reason: None,
        model: "m".into(),
    });
    assert_eq!(all_lines(&mut t, 40), ["⏺ Done", "", "⠋ Glob(**/*.rs)"]);
}

fn long_transcript(cells: usize) -> Transcript {
    let mut t = Transcript::new(Theme::new(false));
    for i in 0..cells {
        t.push(Cell::UserPrompt(format!("prompt {i}")));
        t.push(Cell::Assistant(StreamingMarkdown::from_text(
            Theme::new(false),
            &format!("answer {i} with enough words to wrap at a narrow width\n\n- item\n- item"),
        )));
    }
    t
}

#[test]
fn visible_lines_are_the_matching_slice_of_the_whole() {
    let mut t = long_transcript(50);
    let all = all_lines(&mut t, 30);
    for (top, height) in [(0, 5), (17, 9), (all.len() - 3, 10), (all.len() + 5, 3)] {
        let slice = text(&t.visible_lines(30, top, height));
        let expect: Vec<String> = all.iter().skip(top).take(height).cloned().collect();
        assert_eq!(slice, expect, "top {top}");
    }
}

#[test]
fn resize_rewraps_like_a_fresh_layout() {
    let mut t = long_transcript(20);
    let wide = all_lines(&mut t, 80);
    let narrow = all_lines(&mut t, 24);
    assert!(narrow.len() > wide.len());
    assert_eq!(narrow, all_lines(&mut long_transcript(20), 24));
    assert_eq!(all_lines(&mut t, 80), wide);
}

#[test]
fn follows_output_until_scrolled_up_and_flags_new_output() {
    let mut t = long_transcript(30);
    let area = Rect::new(0, 0, 30, 8);
    let mut buf = Buffer::empty(area);
    t.render(area, &mut buf);
    let total = t.total_height(30);
    assert_eq!(t.scroll_top(), total - 8);
    assert!(t.is_following());

    t.scroll_up(4);
    t.render(area, &mut buf);
    assert_eq!(t.scroll_top(), total - 12);
    assert!(!t.is_following());
    assert!(!t.has_new_output_below());

    t.push(Cell::Notice {
        kind: NoticeKind::Info,
        text: "more".into(),
    });
    t.render(area, &mut buf);
    assert_eq!(t.scroll_top(), total - 12, "the view stays put");
    assert!(t.has_new_output_below());
    let last_row: String = (0..30).map(|x| buf[(x, 7)].symbol().to_string()).collect();
    assert!(last_row.contains("new output below"), "{last_row}");

    t.handle_key(&KeyEvent::from(KeyCode::End));
    t.render(area, &mut buf);
    assert!(t.is_following());
    assert!(!t.has_new_output_below());
    assert_eq!(t.scroll_top(), t.total_height(30) - 8);

    t.handle_key(&KeyEvent::from(KeyCode::Home));
    t.render(area, &mut buf);
    assert_eq!(t.scroll_top(), 0);
    t.handle_key(&KeyEvent::from(KeyCode::PageDown));
    t.render(area, &mut buf);
    assert_eq!(t.scroll_top(), 6);
}

#[test]
fn resize_while_scrolled_up_keeps_the_same_cell_in_view() {
    let mut t = long_transcript(30);
    let mut buf = Buffer::empty(Rect::new(0, 0, 80, 10));
    t.render(Rect::new(0, 0, 80, 10), &mut buf);
    t.scroll_to_top();
    t.scroll_down(20);
    t.render(Rect::new(0, 0, 80, 10), &mut buf);
    let top = t.scroll_top();
    let first = text(&t.visible_lines(80, top, 1));
    let mut narrow = Buffer::empty(Rect::new(0, 0, 40, 10));
    t.render(Rect::new(0, 0, 40, 10), &mut narrow);
    let top = t.scroll_top();
    let after = text(&t.visible_lines(40, top, 1));
    let digits = |s: &str| s.chars().filter(char::is_ascii_digit).collect::<String>();
    assert_eq!(
        digits(&first[0]),
        digits(&after[0]),
        "{first:?} vs {after:?}"
    );
}

#[test]
fn tiny_areas_do_not_panic() {
    let mut t = long_transcript(3);
    for (w, h) in [(1, 1), (2, 1), (3, 2), (1, 5)] {
        let area = Rect::new(0, 0, w, h);
        let mut buf = Buffer::empty(area);
        t.render(area, &mut buf);
        assert!(t.total_height(w) > 0);
    }
    let mut empty = Transcript::new(Theme::new(true));
    let mut buf = Buffer::empty(Rect::new(0, 0, 10, 3));
    empty.render(Rect::new(0, 0, 10, 3), &mut buf);
    assert!(empty.visible_lines(10, 0, 3).is_empty());
}

#[test]
fn following_frames_match_the_measured_layout_and_skip_measuring() {
    for height in [1usize, 7, 40, 10_000] {
        let mut t = long_transcript(25);
        let bottom = text(&t.bottom_lines(33, height));
        assert_eq!(t.index.width(), 0, "following needs no heights");
        let total = t.total_height(33);
        let expect = text(&t.visible_lines(33, total.saturating_sub(height), height));
        assert_eq!(bottom, expect, "height {height}");
    }
}

#[test]
fn a_compaction_turns_its_notice_into_a_divider_under_the_earlier_cells() {
    use robota_sdk::CompactTrigger;
    let mut t = Transcript::new(Theme::new(false));
    t.apply(&crate::transcript::test_events::started("first"));
    t.apply(&SessionEvent::TextDelta("An answer.".into()));
    t.apply(&SessionEvent::CompactStarted {
        trigger: CompactTrigger::Auto,
    });
    assert!(
        all_lines(&mut t, 40)
            .iter()
            .any(|l| l.contains("Compacting the conversation…"))
    );
    t.apply(&SessionEvent::Compacted {
        trigger: CompactTrigger::Auto,
        reason: robota_sdk::CompactReason::Threshold,
        stages: 1,
        cut_results: 0,
        pre_tokens: 151_234,
        post_tokens: 17_600,
        summary: "S".into(),
    });
    t.apply(&SessionEvent::TextDelta("After.".into()));
    let lines = all_lines(&mut t, 60);
    let divider = lines
        .iter()
        .position(|l| l.contains(" auto-compacted: 151k → 18k tokens "))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(lines[divider].contains("───"), "{}", lines[divider]);
    // The gutter, then the rule across the rest of the width.
    assert_eq!(lines[divider].chars().count(), 60, "{}", lines[divider]);
    assert!(
        lines[divider + 1..]
            .iter()
            .any(|l| l.contains("The context was nearly full")),
        "why it was automatic: {lines:#?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("Compacting")),
        "{lines:#?}"
    );
    let earlier = lines.iter().position(|l| l.contains("An answer.")).unwrap();
    let later = lines.iter().position(|l| l.contains("After.")).unwrap();
    assert!(earlier < divider && divider < later, "{lines:#?}");
    assert_eq!(
        super::events::compacted_label(CompactTrigger::Manual, 999, 0),
        "compacted: 999 → 0 tokens"
    );
    let why =
        super::events::auto_compacted_notice(robota_sdk::CompactReason::ProviderOverflow, 3, 1);
    assert!(
        why.starts_with("The provider said the prompt is too long, so the conversation above was summarised automatically in 3 stages, after cutting 1 oversized tool result(s)"),
        "{why}"
    );
}

#[test]
fn a_running_agent_call_shows_what_its_subagent_does() {
    let mut t = Transcript::new(Theme::new(false));
    t.apply(&crate::transcript::test_events::started("delegate"));
    t.apply(&SessionEvent::ToolStarted {
        id: "agent_1".into(),
        name: "Agent".into(),
        input: json!({"description": "find tests", "prompt": "p", "subagent_type": "Explore"}),
    });
    let inner = |event: SessionEvent| SessionEvent::Subagent {
        parent_tool_use_id: "agent_1".into(),
        agent_type: "Explore".into(),
        description: "find tests".into(),
        event: Box::new(event),
    };
    t.apply(&inner(SessionEvent::ToolStarted {
        id: "c1".into(),
        name: "Grep".into(),
        input: json!({"pattern": "#[test]"}),
    }));
    t.apply(&inner(SessionEvent::Usage {
        usage: robota_core::Usage {
            input_tokens: 1_200,
            output_tokens: 300,
            ..Default::default()
        },
        model: "claude-haiku-4-5".into(),
        cost_usd: None,
        api_duration: Duration::from_millis(10),
    }));
    let lines = all_lines(&mut t, 80).join("\n");
    assert!(lines.contains("Agent(find tests)"), "{lines}");
    assert!(
        lines.contains("Grep(#[test]) · 1 tool use · 1.5k tokens"),
        "{lines}"
    );
    t.apply(&inner(finished(
        "c1",
        "Grep",
        json!({"pattern": "#[test]"}),
        "x",
    )));
    let lines = all_lines(&mut t, 80).join("\n");
    assert!(
        lines.contains("1 tool use · 1.5k tokens · ")
            && lines.contains("s (ctrl+o to expand)")
            && !lines.contains("Grep(#[test]) ·"),
        "{lines}"
    );
    t.apply(&inner(SessionEvent::AssistantMessage {
        message: robota_core::Message::new(
            robota_core::Role::Assistant,
            vec![robota_core::Block::text(
                "Found 3 test files.\nDetails follow.",
            )],
        ),
        stop_reason: None,
        model: "claude-haiku-4-5".into(),
    }));
    t.toggle_expanded();
    let lines = all_lines(&mut t, 80).join("\n");
    assert!(lines.contains("• Grep(#[test])"), "{lines}");
    assert!(lines.contains("“Found 3 test files.…”"), "{lines}");
    // Finished, the steps stay behind ctrl+o above the report.
    t.apply(&finished(
        "agent_1",
        "Agent",
        json!({"description": "find tests"}),
        "The report.",
    ));
    let lines = all_lines(&mut t, 80).join("\n");
    let step = lines.find("• Grep(#[test])").expect("steps when expanded");
    assert!(step < lines.find("The report.").unwrap(), "{lines}");
    t.toggle_expanded();
    let lines = all_lines(&mut t, 80).join("\n");
    assert!(!lines.contains("• Grep"), "{lines}");
    // Events for a call the transcript does not know are ignored.
    t.apply(&SessionEvent::Subagent {
        parent_tool_use_id: "nobody".into(),
        agent_type: "x".into(),
        description: String::new(),
        event: Box::new(SessionEvent::TextDelta("stray".into())),
    });
    assert!(!all_lines(&mut t, 80).join("\n").contains("stray"));
}

#[test]
fn a_bang_command_is_live_until_its_output_comes() {
    use robota_sdk::{Outcome, Submission, SubmissionId, TurnError};
    let mut t = Transcript::new(Theme::new(false));
    let id = SubmissionId(7);
    t.apply(&SessionEvent::SubmissionStarted {
        id,
        submission: Submission::Shell("make".into()),
    });
    assert!(t.has_running_tools(), "it animates while it runs");
    assert_eq!(all_lines(&mut t, 40)[1].trim(), "⎿  Running… (esc to stop)");
    t.apply(&SessionEvent::ShellOutputTail {
        id,
        lines: vec!["cc a.c".into(), "cc b.c".into()],
    });
    let lines = all_lines(&mut t, 40);
    assert_eq!(lines[1].trim(), "⎿  cc a.c");
    assert_eq!(lines[2].trim(), "cc b.c");
    assert_eq!(lines[3].trim(), "Running… (esc to stop)");
    t.apply(&SessionEvent::ShellOutput {
        id,
        command: "make".into(),
        output: "cc a.c\ncc b.c\ndone".into(),
        exit_code: Some(0),
    });
    assert!(!t.has_running_tools());
    assert_eq!(t.len(), 1, "the live cell became the result");
    assert!(all_lines(&mut t, 40).iter().any(|l| l.contains("done")));

    // One that fails before it runs does not spin forever.
    let other = SubmissionId(8);
    t.apply(&SessionEvent::SubmissionStarted {
        id: other,
        submission: Submission::Shell(" ".into()),
    });
    t.apply(&SessionEvent::SubmissionEnded {
        id: other,
        outcome: Outcome {
            end: TurnEnd::Error(TurnError::new(
                robota_sdk::ErrorKind::CommandFailed,
                "Type a command after ! to run it",
            )),
            rounds: 0,
            duration: Duration::ZERO,
            result: String::new(),
        },
    });
    assert!(!t.has_running_tools());
}
