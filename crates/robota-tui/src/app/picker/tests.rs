//! The picker driven by keys: filtering, moving, choosing, scrolling, and age labels.

use super::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn item(id: &str, title: &str) -> PickerItem {
    PickerItem {
        id: id.into(),
        title: title.into(),
        detail: format!("detail of {id}"),
    }
}

fn sessions() -> Picker {
    Picker::new(
        "Resume a session",
        vec![
            item("s1", "Fix the login bug"),
            item("s2", "로그인 버그 고치기"),
            item("s3", "Refactor the parser"),
            item("s4", "Write release notes"),
        ],
        true,
    )
}

fn type_text(picker: &mut Picker, text: &str) {
    for c in text.chars() {
        assert_eq!(
            picker.handle_key(key(KeyCode::Char(c))),
            PickerOutcome::Pending
        );
    }
}

fn ids(picker: &Picker) -> Vec<&str> {
    picker.visible().map(|i| i.id.as_str()).collect()
}

fn screen_text(picker: &Picker, width: u16, height: u16) -> String {
    let buf =
        crate::composer::test_support::render(width, height, |area, buf| picker.render(area, buf));
    crate::composer::test_support::rows_text(&buf)
}

#[test]
fn typing_narrows_the_list_and_backspace_widens_it() {
    let mut p = sessions();
    assert_eq!(ids(&p), ["s1", "s2", "s3", "s4"]);
    type_text(&mut p, "re");
    assert_eq!(ids(&p)[..2], ["s3", "s4"], "prefix matches first");
    type_text(&mut p, "f");
    assert_eq!(ids(&p), ["s3"]);
    p.handle_key(key(KeyCode::Backspace));
    p.handle_key(key(KeyCode::Backspace));
    p.handle_key(key(KeyCode::Backspace));
    assert_eq!(p.visible().count(), 4);
    type_text(&mut p, "버그");
    assert_eq!(ids(&p), ["s2"]);
    type_text(&mut p, "zzz");
    assert_eq!(p.visible().count(), 0);
    assert_eq!(p.handle_key(key(KeyCode::Enter)), PickerOutcome::Pending);
    assert!(screen_text(&p, 40, 10).contains("no matches"));
}

#[test]
fn fuzzy_matches_follow_prefix_ones() {
    let mut p = sessions();
    type_text(&mut p, "fxlgn");
    assert_eq!(ids(&p), ["s1"]);
}

#[test]
fn moving_and_choosing() {
    let mut p = sessions();
    assert_eq!(p.handle_key(key(KeyCode::Up)), PickerOutcome::Pending);
    assert_eq!(p.selected().map(|i| i.id.as_str()), Some("s1"));
    p.handle_key(key(KeyCode::Down));
    p.handle_key(ctrl('n'));
    assert_eq!(p.selected().map(|i| i.id.as_str()), Some("s3"));
    p.handle_key(ctrl('p'));
    assert_eq!(
        p.handle_key(key(KeyCode::Enter)),
        PickerOutcome::Chosen("s2".into())
    );
    p.handle_key(key(KeyCode::PageDown));
    assert_eq!(p.selected().map(|i| i.id.as_str()), Some("s4"), "clamped");
    p.handle_key(key(KeyCode::PageUp));
    assert_eq!(p.selected().map(|i| i.id.as_str()), Some("s1"));
    type_text(&mut p, "w");
    assert_eq!(
        p.selected().map(|i| i.id.as_str()),
        Some("s4"),
        "filtering reselects the best"
    );
}

#[test]
fn esc_and_ctrl_c_cancel_even_with_a_filter() {
    let mut p = sessions();
    type_text(&mut p, "fix");
    assert_eq!(p.handle_key(key(KeyCode::Esc)), PickerOutcome::Cancelled);
    assert_eq!(sessions().handle_key(ctrl('c')), PickerOutcome::Cancelled);
}

#[test]
fn pasted_text_filters() {
    let mut p = sessions();
    p.paste("write\n");
    assert_eq!(p.filter_text(), "write ");
    assert_eq!(ids(&p), ["s4"]);
}

#[test]
fn page_keys_move_by_the_rows_drawn_and_the_list_scrolls() {
    let items = (0..50)
        .map(|i| item(&format!("m{i}"), &format!("model {i:02}")))
        .collect();
    let mut p = Picker::new("Models", items, true).with_selected("m3");
    assert_eq!(p.selected().map(|i| i.id.as_str()), Some("m3"));
    // 12 rows: title, filter, separator, hint → 8 list rows.
    let text = screen_text(&p, 50, 12);
    assert!(text.contains("model 00") && text.contains("4/50"), "{text}");
    p.handle_key(key(KeyCode::PageDown));
    assert_eq!(p.selected().map(|i| i.id.as_str()), Some("m11"));
    let text = screen_text(&p, 50, 12);
    assert!(
        text.contains("❯ model 11") && !text.contains("model 00"),
        "{text}"
    );
    p.handle_key(key(KeyCode::Up));
    let text = screen_text(&p, 50, 12);
    assert!(
        text.contains("model 04"),
        "moving up inside the window does not scroll: {text}"
    );
}

#[test]
fn cursor_sits_on_the_filter_line_after_the_text() {
    let mut p = sessions();
    let area = Rect::new(0, 1, 40, 10);
    assert_eq!(p.cursor_position(area), Some(Position { x: 3, y: 2 }));
    type_text(&mut p, "한국");
    assert_eq!(p.cursor_position(area), Some(Position { x: 7, y: 2 }));
    let tiny = Rect::new(0, 0, 1, 1);
    assert_eq!(p.cursor_position(tiny), Some(Position { x: 0, y: 0 }));
    let mut buf = Buffer::empty(tiny);
    p.render(tiny, &mut buf);
}

#[test]
fn an_empty_list_says_so() {
    let p = Picker::new("Resume", vec![], false).with_empty_message("no sessions yet");
    assert!(screen_text(&p, 30, 6).contains("no sessions yet"));
    assert_eq!(
        Picker::new("x", vec![], false).handle_key(key(KeyCode::Enter)),
        PickerOutcome::Pending
    );
}

#[test]
fn ages_read_naturally() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    let ago = |secs: u64| age_label(now - Duration::from_secs(secs), now);
    assert_eq!(ago(0), "just now");
    assert_eq!(ago(59), "just now");
    assert_eq!(ago(5 * 60), "5 min ago");
    assert_eq!(ago(3 * 3600 + 100), "3 h ago");
    assert_eq!(ago(86_400), "1 day ago");
    assert_eq!(ago(2 * 86_400 + 5), "2 days ago");
    assert_eq!(ago(45 * 86_400), "1 month ago");
    assert_eq!(ago(800 * 86_400), "2 years ago");
    assert_eq!(age_label(now + Duration::from_secs(60), now), "just now");
}
