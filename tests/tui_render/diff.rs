//! Diff views: a multi-hunk edit collapsed and expanded, a new file, at every width.

use robota::tui::diff::{COLLAPSED_ROWS, DiffView};
use robota::tui::theme::Theme;

use crate::{WIDTHS, assert_buffer_snapshot, assert_rows_fit, buffer_of};

fn before() -> String {
    (1..=40)
        .map(|i| format!("line {i}: unchanged text\n"))
        .collect()
}

fn after() -> String {
    (1..=40)
        .map(|i| match i {
            3 => "line 3: changed, with a longer replacement that wraps on narrow screens\n"
                .to_string(),
            20 => String::new(),
            30..=34 => format!("line {i}: 한국어 日本語 🎉 edited\n"),
            _ => format!("line {i}: unchanged text\n"),
        })
        .collect()
}

#[test]
fn multi_hunk_diff_collapsed_and_expanded() {
    let view = DiffView::new("src/multi.rs", Some(&before()), &after());
    assert!(view.is_collapsible());
    assert_eq!(view.counts(), (6, 7));
    for width in WIDTHS {
        let lines = view.render(width, false, &Theme::new(true));
        assert_rows_fit(&lines, width);
        assert!(lines.len() > COLLAPSED_ROWS);
        assert_buffer_snapshot!(format!("diff_collapsed_{width}"), buffer_of(&lines, width));
    }
    let lines = view.render(80, true, &Theme::new(true));
    assert_buffer_snapshot!("diff_expanded_80", buffer_of(&lines, 80));
}

#[test]
fn new_file_diff() {
    let view = DiffView::new("notes.md", None, "# Notes\n\n- one\n- two\n");
    let lines = view.render(40, false, &Theme::new(true));
    assert_eq!(view.summary(), "Created notes.md (4 lines)");
    assert_buffer_snapshot!("diff_new_file_40", buffer_of(&lines, 40));
}

#[test]
fn diff_in_one_by_one_area() {
    let view = DiffView::new("a", Some("x\n"), "y\n");
    let lines = view.render(1, false, &Theme::new(true));
    assert!(!lines.is_empty());
    assert_buffer_snapshot!("diff_1x1", buffer_of(&lines[..1], 1));
}
