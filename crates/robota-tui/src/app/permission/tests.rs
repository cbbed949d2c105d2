//! The popup driven by keys: direct answers, arrows, typed feedback, wrapping, the cursor.

use super::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn popup() -> PermissionPopup {
    PermissionPopup::new(
        "Bash",
        "rm -rf build".into(),
        vec![],
        "Bash(rm -rf *)".into(),
        true,
    )
}

#[test]
fn number_and_letter_keys_choose_directly() {
    assert_eq!(
        popup().handle_key(key(KeyCode::Char('1'))),
        Some(PermissionChoice::Allow)
    );
    assert_eq!(
        popup().handle_key(key(KeyCode::Char('y'))),
        Some(PermissionChoice::Allow)
    );
    assert_eq!(
        popup().handle_key(key(KeyCode::Char('2'))),
        Some(PermissionChoice::AllowAlways)
    );
    assert_eq!(
        popup().handle_key(key(KeyCode::Char('n'))),
        Some(PermissionChoice::Deny(None))
    );
    assert_eq!(
        popup().handle_key(key(KeyCode::Esc)),
        Some(PermissionChoice::DenyAndStop)
    );
    assert_eq!(
        popup().handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        Some(PermissionChoice::DenyAndStop)
    );
}

#[test]
fn arrows_enter_and_typed_feedback() {
    let mut p = popup();
    assert_eq!(p.handle_key(key(KeyCode::Down)), None);
    assert_eq!(
        p.handle_key(key(KeyCode::Enter)),
        Some(PermissionChoice::AllowAlways)
    );
    let mut p = popup();
    assert_eq!(p.handle_key(key(KeyCode::Char('3'))), None);
    for c in "use trash".chars() {
        assert_eq!(p.handle_key(key(KeyCode::Char(c))), None);
    }
    p.handle_key(key(KeyCode::Backspace));
    assert_eq!(
        p.handle_key(key(KeyCode::Enter)),
        Some(PermissionChoice::Deny(Some("use tras".into())))
    );
}

#[test]
fn without_a_rule_to_save_only_yes_and_no_are_offered() {
    let mut p = popup();
    p.rule.clear();
    assert_eq!(p.handle_key(key(KeyCode::Char('2'))), None);
    assert!(p.feedback.is_some(), "2 is now \"No, and tell robota…\"");
    let mut p = popup();
    p.rule.clear();
    p.handle_key(key(KeyCode::Down));
    p.handle_key(key(KeyCode::Down));
    assert_eq!(p.selected, 1, "two options only");
    assert_eq!(p.handle_key(key(KeyCode::Char('3'))), None);
    assert!(p.feedback.is_none(), "there is no third option");
}

#[test]
fn narrow_popups_grow_by_their_wrapped_rows_and_place_the_cursor_after_feedback() {
    let mut p = popup();
    assert_eq!(
        p.height(80),
        2 + 2 + 1 + 3,
        "no preview: summary, question, options"
    );
    assert!(p.height(30) > p.height(80), "the long options wrap");
    assert_eq!(p.cursor_position(Rect::new(0, 0, 80, 10)), None);
    p.handle_key(key(KeyCode::Char('3')));
    p.handle_key(key(KeyCode::Char('네')));
    let area = Rect::new(0, 0, 80, p.height(80));
    let prefix = "  Tell robota what to do instead: ".len() as u16;
    assert_eq!(
        p.cursor_position(area),
        Some(Position::new(1 + prefix + 2, area.height - 2))
    );
}

#[test]
fn the_rule_it_saves_is_shown_and_tiny_areas_do_not_panic() {
    let p = popup();
    let mut buf = Buffer::empty(Rect::new(0, 0, 70, 12));
    p.render(buf.area, &mut buf);
    let text: String = (0..12)
        .map(|y| {
            (0..70)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                + "\n"
        })
        .collect();
    assert!(text.contains("Bash(rm -rf *)"), "{text}");
    assert!(text.contains("rm -rf build"));
    let mut tiny = Buffer::empty(Rect::new(0, 0, 1, 1));
    p.render(tiny.area, &mut tiny);
}

/// An Edit popup for `long.txt` ("line 1" … "line 40") with `change` applied.
fn long_edit_popup(change: impl Fn(&str) -> String) -> PermissionPopup {
    let before: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let after = change(&before);
    let diff = DiffView::new("long.txt", Some(&before), &after);
    let theme = Theme::new(false);
    PermissionPopup::new(
        "Edit",
        "long.txt".into(),
        diff.render(78, true, &theme),
        "Edit(long.txt)".into(),
        false,
    )
    .with_diff(diff, theme)
}

fn drawn(p: &PermissionPopup, width: u16, height: u16) -> String {
    let buf = crate::composer::test_support::render(width, height, |area, buf| p.render(area, buf));
    crate::composer::test_support::rows_text(&buf)
}

#[test]
fn a_short_popup_keeps_the_changed_lines_and_cuts_their_context() {
    let mut p = long_edit_popup(|b| b.replace("line 20\n", "LINE 20\n"));
    let text = drawn(&p, 80, 12);
    for wanted in ["@@ -", "- line 20", "+ LINE 20", "1. Yes", "3. No"] {
        assert!(text.contains(wanted), "{wanted:?} missing:\n{text}");
    }
    assert!(!text.contains("line 17"), "context goes first:\n{text}");
    assert!(
        !p.scroll_by(3, false),
        "a fitting preview has nothing to scroll"
    );
    // With room, the usual three lines of context come back.
    assert!(drawn(&p, 80, 24).contains("line 17"));
}

#[test]
fn a_long_preview_scrolls_and_ctrl_o_asks_for_its_full_height() {
    let mut p = long_edit_popup(|b| {
        b.lines()
            .map(|l| {
                let n: usize = l[5..].parse().unwrap();
                if (5..=34).contains(&n) {
                    format!("{}\n", l.to_uppercase())
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    });
    let text = drawn(&p, 80, 20);
    assert!(text.contains("- line 5 "), "{text}");
    assert!(!text.contains("+ LINE 34"), "{text}");
    assert!(text.contains("PgUp/PgDn scroll"), "{text}");
    assert!(p.scroll_by(1000, false));
    let text = drawn(&p, 80, 20);
    assert!(text.contains("+ LINE 34"), "{text}");
    assert!(text.contains("3. No"), "{text}");
    let collapsed = p.height(80);
    p.handle_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    assert!(
        p.height(80) > collapsed + 40,
        "all 60 changed rows and more"
    );
}
