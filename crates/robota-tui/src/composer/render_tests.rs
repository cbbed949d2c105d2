//! Rendering tests of the composer: insta snapshots of its states (stored under the
//! repo's `snapshots/`), style checks with and without colour, and property tests: random
//! edits over random Unicode keep the text segmented into whole clusters, the cursor on
//! a boundary, and the terminal cursor exactly where the renderer put the text.

use crossterm::event::{KeyCode, KeyModifiers};
use proptest::prelude::*;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use unicode_segmentation::UnicodeSegmentation;

use super::buffer::{Atom, TextBuffer, sanitize};
use super::layout::{self, atom_width};
use super::render::text_width;
use super::test_support::{render, screen, with_snapshot_dir};
use super::tests::{press, type_text};
use super::*;

fn snapshot(composer: &Composer, width: u16, height: u16) -> String {
    let buf = render(width, height, |area, buf| composer.render(area, buf));
    screen(
        &buf,
        composer.cursor_position(Rect::new(0, 0, width, height)),
    )
}

fn composer(text: &str) -> Composer {
    let mut c = Composer::default();
    type_text(&mut c, text);
    c
}

#[test]
fn snapshot_empty_with_hint() {
    let c = Composer::default();
    assert_eq!(
        c.desired_height(60),
        2,
        "one text row and the empty row below"
    );
    with_snapshot_dir(|| insta::assert_snapshot!("composer_empty_hint", snapshot(&c, 60, 2)));
}

#[test]
fn snapshot_multi_line_with_cursor_inside() {
    let mut c = composer("Refactor the parser:\n- split lexing\n- keep spans");
    press(&mut c, KeyCode::Up, KeyModifiers::NONE);
    press(&mut c, KeyCode::Left, KeyModifiers::NONE);
    assert_eq!(c.desired_height(40), 4);
    with_snapshot_dir(|| insta::assert_snapshot!("composer_multi_line", snapshot(&c, 40, 4)));
}

#[test]
fn snapshot_korean_and_japanese_with_cursor() {
    let mut c = composer("안녕하세요, 세계!\n日本語のテキストを入力");
    for _ in 0..4 {
        press(&mut c, KeyCode::Left, KeyModifiers::NONE);
    }
    let pos = c.cursor_position(Rect::new(0, 0, 24, 4)).unwrap();
    // "> " + 日本語のテキス (7 wide clusters) = column 16.
    assert_eq!((pos.x, pos.y), (16, 1));
    with_snapshot_dir(|| insta::assert_snapshot!("composer_cjk_cursor", snapshot(&c, 24, 4)));
}

#[test]
fn snapshot_collapsed_paste() {
    let mut c = composer("Why does this fail? ");
    let log: String = (1..=40)
        .map(|i| format!("error[E0{i:03}]: something\n"))
        .collect();
    c.paste(&log);
    type_text(&mut c, " thanks");
    with_snapshot_dir(|| insta::assert_snapshot!("composer_collapsed_paste", snapshot(&c, 50, 3)));
}

#[test]
fn snapshot_narrow_wrapping() {
    let c = composer("a long prompt that wraps at twenty columns, with 한글 too");
    with_snapshot_dir(|| insta::assert_snapshot!("composer_narrow_20", snapshot(&c, 20, 5)));
}

#[test]
fn snapshot_scrolls_to_keep_the_cursor_visible() {
    let c = composer("1\n2\n3\n4\n5\n6");
    assert_eq!(c.desired_height(20), 7);
    with_snapshot_dir(|| insta::assert_snapshot!("composer_scrolled", snapshot(&c, 20, 3)));
}

#[test]
fn snapshot_shell_mode() {
    let c = composer("!cargo test --lib");
    with_snapshot_dir(|| insta::assert_snapshot!("composer_shell_mode", snapshot(&c, 30, 2)));
}

#[test]
fn snapshot_one_by_one_area() {
    let c = composer("漢字 and text");
    with_snapshot_dir(|| insta::assert_snapshot!("composer_1x1", snapshot(&c, 1, 1)));
    let empty = render(0, 0, |area, buf| c.render(area, buf));
    assert_eq!(empty.area.area(), 0);
    assert_eq!(c.cursor_position(Rect::new(0, 0, 0, 0)), None);
}

#[test]
fn colours_follow_no_color() {
    let mut c = composer("!ls");
    let buf = render(20, 2, |area, buf| c.render(area, buf));
    assert_eq!(buf[(0, 0)].symbol(), "!");
    assert_eq!(buf[(0, 0)].fg, Color::Magenta);
    c.set_colors(false);
    let buf = render(20, 2, |area, buf| c.render(area, buf));
    assert_eq!(buf[(0, 0)].fg, Color::Reset);
    assert!(buf[(0, 0)].modifier.contains(Modifier::BOLD));
    let mut hint = Composer::default();
    let buf = render(40, 2, |area, buf| hint.render(area, buf));
    assert_eq!(buf[(2, 0)].fg, Color::DarkGray);
    hint.set_colors(false);
    let buf = render(40, 2, |area, buf| hint.render(area, buf));
    assert_eq!(buf[(2, 0)].fg, Color::Reset);
    assert!(buf[(2, 0)].modifier.contains(Modifier::DIM));
}

#[test]
fn a_paste_placeholder_is_drawn_in_its_style() {
    let mut c = Composer::default();
    c.paste(&"x\n".repeat(10));
    let buf = render(40, 2, |area, buf| c.render(area, buf));
    assert_eq!(buf[(2, 0)].symbol(), "[");
    assert_eq!(buf[(2, 0)].fg, Color::Cyan);
}

// ---- properties ----

/// Pieces that stress segmentation: combining marks, ZWJ sequences, flags, Hangul jamo,
/// CJK, zero-width and halfwidth marks, tabs, line breaks, controls, and any char.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "a",
            "Z",
            " ",
            "  ",
            "e\u{301}",
            "\u{301}",
            "\u{300}\u{301}",
            "👩‍💻",
            "\u{200D}",
            "👨",
            "🇰",
            "🇷",
            "🇰🇷",
            "한",
            "\u{1100}",
            "\u{1161}",
            "\u{11A8}",
            "日本",
            "カ",
            "\u{FF76}\u{FF9E}",
            "\u{200B}",
            "\u{FE0F}",
            "☺",
            "\t",
            "\n",
            "\r\n",
            "\r",
            "\u{1b}",
            "\u{7f}",
            "!",
            "/",
            "@",
            "\\",
            "foo.bar",
            "😀🏽",
        ])
        .prop_map(str::to_string),
        any::<char>().prop_map(|c| c.to_string()),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..6).prop_map(|p| p.concat())
}

#[derive(Debug, Clone)]
enum Op {
    Type(String),
    Paste(String),
    Key(KeyCode, KeyModifiers),
}

fn op() -> impl Strategy<Value = Op> {
    let none = KeyModifiers::NONE;
    let ctrl = KeyModifiers::CONTROL;
    let alt = KeyModifiers::ALT;
    let keys = vec![
        (KeyCode::Left, none),
        (KeyCode::Right, none),
        (KeyCode::Up, none),
        (KeyCode::Down, none),
        (KeyCode::Home, none),
        (KeyCode::End, none),
        (KeyCode::Backspace, none),
        (KeyCode::Delete, none),
        (KeyCode::Enter, none),
        (KeyCode::Enter, KeyModifiers::SHIFT),
        (KeyCode::Char('w'), ctrl),
        (KeyCode::Char('u'), ctrl),
        (KeyCode::Char('k'), ctrl),
        (KeyCode::Char('y'), ctrl),
        (KeyCode::Char('b'), alt),
        (KeyCode::Char('f'), alt),
        (KeyCode::Char('d'), alt),
    ];
    prop_oneof![
        3 => text().prop_map(Op::Type),
        1 => text().prop_map(Op::Paste),
        1 => prop::collection::vec(piece(), 0..300).prop_map(|p| Op::Paste(p.concat())),
        4 => prop::sample::select(keys).prop_map(|(k, m)| Op::Key(k, m)),
    ]
}

/// Every run of text atoms is exactly the segmentation of its concatenation.
fn assert_segmented(b: &TextBuffer) {
    for line in b.lines() {
        let mut run: Vec<&str> = Vec::new();
        let check = |run: &mut Vec<&str>| {
            let joined = run.concat();
            let segmented: Vec<&str> = joined.graphemes(true).collect();
            assert_eq!(&segmented, run, "atoms are not whole clusters");
            run.clear();
        };
        for atom in line {
            match atom {
                Atom::Grapheme(g) => {
                    assert!(!g.contains(['\n', '\r']) && !g.is_empty());
                    assert!(!g.chars().any(|c| c.is_control() && c != '\t'));
                    run.push(g);
                }
                Atom::Paste { .. } => check(&mut run),
            }
        }
        check(&mut run);
    }
    let cursor = b.cursor();
    assert!(cursor.row < b.lines().len() && cursor.col <= b.lines()[cursor.row].len());
}

/// The terminal cursor sits right after the cells drawn for the text before it.
fn assert_cursor_matches_render(c: &Composer, area: Rect) {
    let buf = render(area.width, area.height, |a, buf| c.render(a, buf));
    let Some(pos) = c.cursor_position(area) else {
        panic!("no cursor for a non-empty area");
    };
    assert!(pos.x < area.right() && pos.y < area.bottom());
    let lines = c.buffer.lines();
    let rows = layout::wrap(lines, text_width(area.width));
    let (row, expected_x) = layout::locate(&rows, lines, c.buffer.cursor());
    let top = (row + 1).saturating_sub(usize::from(area.height));
    assert_eq!(usize::from(pos.y), row - top);
    let text_x = usize::from(area.width - u16::try_from(text_width(area.width)).unwrap_or(0));
    let r = rows[row];
    let mut x = text_x;
    for atom in &lines[r.line][r.start..c.buffer.cursor().col.max(r.start)] {
        let w = atom_width(atom);
        if w > 0 && x + w <= usize::from(area.right()) {
            let cell = buf[(x as u16, pos.y)].symbol();
            let expected = match atom {
                Atom::Grapheme(g) if g.as_ref() == "\t" => " ".to_string(),
                Atom::Grapheme(g) => g.to_string(),
                Atom::Paste { label, .. } => label.chars().next().unwrap_or(' ').to_string(),
            };
            assert_eq!(cell, expected, "cell at x={x}");
        }
        x += w;
    }
    assert_eq!(x, text_x + expected_x);
    assert_eq!(usize::from(pos.x), x.min(usize::from(area.right() - 1)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_edits_keep_clusters_whole_and_the_cursor_consistent(
        ops in prop::collection::vec(op(), 1..40),
        width in 1u16..32,
        height in 1u16..8,
    ) {
        let mut c = Composer::default();
        c.set_width(width);
        let area = Rect::new(0, 0, width, height);
        for op in ops {
            match op {
                Op::Type(text) => type_text(&mut c, &text),
                Op::Paste(text) => c.paste(&text),
                Op::Key(code, modifiers) => {
                    press(&mut c, code, modifiers);
                }
            }
            assert_segmented(&c.buffer);
            assert_cursor_matches_render(&c, area);
            prop_assert!(c.desired_height(width) >= 2);
        }
    }

    #[test]
    fn the_buffer_edits_like_a_string_model(
        ops in prop::collection::vec((0u8..5, text()), 1..40),
    ) {
        let mut b = TextBuffer::default();
        let mut model = String::new();
        let mut cursor = 0usize;
        let boundaries = |s: &str| -> Vec<usize> {
            s.grapheme_indices(true).map(|(i, _)| i).chain([s.len()]).collect()
        };
        for (kind, text) in ops {
            let bounds = boundaries(&model);
            let prev = bounds.iter().rev().find(|&&i| i < cursor).copied();
            let next = bounds.iter().find(|&&i| i > cursor).copied();
            match kind {
                0 => {
                    let clean = sanitize(&text);
                    b.insert_str(&text);
                    model.insert_str(cursor, &clean);
                    cursor += clean.len();
                }
                1 => { b.move_left(); cursor = prev.unwrap_or(cursor); }
                2 => { b.move_right(); cursor = next.unwrap_or(cursor); }
                3 => {
                    if let Some(p) = b.prev(b.cursor()) { b.delete_range(p, b.cursor()); }
                    if let Some(p) = prev { model.replace_range(p..cursor, ""); cursor = p; }
                }
                _ => {
                    if let Some(n) = b.next(b.cursor()) { b.delete_range(b.cursor(), n); }
                    if let Some(n) = next { model.replace_range(cursor..n, ""); }
                }
            }
            // A cursor swallowed by a merged cluster moves to the cluster's end.
            cursor = *boundaries(&model).iter().find(|&&i| i >= cursor).unwrap_or(&model.len());
            prop_assert_eq!(b.display_text(), model.clone());
            let at = b.cursor();
            let offset: usize = b.lines()[..at.row].iter().map(|l| {
                l.iter().map(|a| match a { Atom::Grapheme(g) => g.len(), Atom::Paste { .. } => 0 }).sum::<usize>() + 1
            }).sum::<usize>() + b.lines()[at.row][..at.col].iter().map(|a| match a {
                Atom::Grapheme(g) => g.len(),
                Atom::Paste { .. } => 0,
            }).sum::<usize>();
            prop_assert_eq!(offset, cursor);
        }
    }
}
