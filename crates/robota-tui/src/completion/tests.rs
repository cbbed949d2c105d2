//! Tests of the prompt input with its popups: key routing (Up/Down, Tab, Enter, Esc),
//! command and argument completion, `@` path insertion, and insta snapshots of the
//! popups drawn above the composer.

use std::fs;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Color;

use super::*;
use crate::composer::Composer;
use crate::composer::test_support::{render, screen, with_snapshot_dir};

fn key(input: &mut PromptInput, code: KeyCode) -> InputAction {
    input.handle_key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn type_text(input: &mut PromptInput, text: &str) {
    for c in text.chars() {
        key(input, KeyCode::Char(c));
    }
}

/// An input over a small project tree whose index is already built.
fn input() -> (PromptInput, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    for file in [
        "src/main.rs",
        "src/lib.rs",
        "src/tui/mod.rs",
        "docs/my notes.md",
        "Cargo.toml",
    ] {
        let path = dir.path().join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "x").unwrap();
    }
    let indexer = FileIndexer::new(dir.path());
    indexer.publish(FileIndex::build(dir.path()));
    let input = PromptInput::new(Composer::default(), builtin_commands(), indexer);
    (input, dir)
}

/// The screen with the composer in the bottom rows and the popup above it.
fn frame(input: &PromptInput, width: u16, height: u16) -> String {
    let composer_height = input.desired_height(width);
    let composer_area = Rect::new(0, height - composer_height, width, composer_height);
    let buf = render(width, height, |_, buf| {
        input.render(composer_area, buf);
        input.render_popup(composer_area, buf);
    });
    screen(&buf, input.cursor_position(composer_area))
}

#[test]
fn slash_opens_filters_and_closes() {
    let (mut input, _dir) = input();
    assert!(!input.popup_open());
    type_text(&mut input, "/");
    assert!(input.popup_open());
    type_text(&mut input, "co");
    assert!(input.popup_open());
    type_text(&mut input, "zzz");
    assert!(!input.popup_open(), "nothing matches");
    for _ in 0..3 {
        key(&mut input, KeyCode::Backspace);
    }
    assert!(input.popup_open());
    // Esc closes and keeps it closed until the text changes.
    assert_eq!(key(&mut input, KeyCode::Esc), InputAction::Handled);
    assert!(!input.popup_open());
    assert_eq!(
        key(&mut input, KeyCode::Esc),
        InputAction::Ignored,
        "Esc is the app's again"
    );
    type_text(&mut input, "n");
    assert!(input.popup_open());
}

#[test]
fn tab_completes_and_enter_runs() {
    let (mut input, _dir) = input();
    type_text(&mut input, "/he");
    assert_eq!(key(&mut input, KeyCode::Tab), InputAction::Handled);
    assert_eq!(input.composer().display_text(), "/help");
    assert_eq!(
        key(&mut input, KeyCode::Enter),
        InputAction::Submit("/help".into())
    );
    assert!(input.composer().is_empty());
    // Enter on a selection runs it directly.
    type_text(&mut input, "/co");
    key(&mut input, KeyCode::Down);
    assert_eq!(
        key(&mut input, KeyCode::Enter),
        InputAction::Submit("/cost".into())
    );
}

#[test]
fn commands_with_arguments_complete_their_values() {
    let (mut input, _dir) = input();
    type_text(&mut input, "/mod");
    key(&mut input, KeyCode::Down);
    key(&mut input, KeyCode::Tab);
    assert_eq!(input.composer().display_text(), "/mode ");
    assert!(input.popup_open(), "mode values are offered");
    type_text(&mut input, "pl");
    assert_eq!(
        key(&mut input, KeyCode::Enter),
        InputAction::Submit("/mode plan".into())
    );
    // A required argument is asked for, not run empty.
    type_text(&mut input, "/ren");
    assert_eq!(key(&mut input, KeyCode::Enter), InputAction::Handled);
    assert_eq!(input.composer().display_text(), "/rename ");
    assert!(!input.popup_open());
    type_text(&mut input, "bugfix");
    assert_eq!(
        key(&mut input, KeyCode::Enter),
        InputAction::Submit("/rename bugfix".into())
    );
    // Typed out in full, it runs (and answers with its usage).
    type_text(&mut input, "/rename");
    assert_eq!(
        key(&mut input, KeyCode::Enter),
        InputAction::Submit("/rename".into())
    );
}

#[test]
fn unknown_slash_text_is_a_prompt() {
    let (mut input, _dir) = input();
    type_text(&mut input, "/usr/bin/env is missing");
    assert!(!input.popup_open());
    assert_eq!(
        key(&mut input, KeyCode::Enter),
        InputAction::Submit("/usr/bin/env is missing".into())
    );
}

#[test]
fn at_completes_paths() {
    let (mut input, _dir) = input();
    type_text(&mut input, "explain @srcmain");
    assert!(input.popup_open());
    assert_eq!(key(&mut input, KeyCode::Enter), InputAction::Handled);
    assert_eq!(input.composer().display_text(), "explain @src/main.rs ");
    assert!(!input.popup_open());
    // Directories keep the popup open for the next level; blanks are quoted.
    type_text(&mut input, "@do");
    key(&mut input, KeyCode::Tab);
    assert_eq!(
        input.composer().display_text(),
        "explain @src/main.rs @docs/"
    );
    assert!(input.popup_open());
    key(&mut input, KeyCode::Tab);
    assert_eq!(
        input.composer().display_text(),
        "explain @src/main.rs @\"docs/my notes.md\" "
    );
    assert_eq!(
        key(&mut input, KeyCode::Enter),
        InputAction::Submit("explain @src/main.rs @\"docs/my notes.md\"".into())
    );
}

#[test]
fn keys_fall_through_to_the_composer_and_app() {
    let (mut input, _dir) = input();
    type_text(&mut input, "!ls");
    assert_eq!(
        key(&mut input, KeyCode::Enter),
        InputAction::RunShell("ls".into())
    );
    assert_eq!(
        input.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        InputAction::Ignored
    );
    assert_eq!(
        input.handle_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)),
        InputAction::Ignored
    );
    type_text(&mut input, "hello");
    assert_eq!(
        key(&mut input, KeyCode::Enter),
        InputAction::Submit("hello".into())
    );
}

#[test]
fn the_popup_needs_room_above_the_composer() {
    let (mut input, _dir) = input();
    type_text(&mut input, "/");
    let screen_area = Rect::new(0, 0, 40, 20);
    let area = input
        .popup_area(Rect::new(0, 18, 40, 2), screen_area)
        .unwrap();
    assert_eq!(area, Rect::new(0, 8, 40, 10));
    assert_eq!(
        input
            .popup_area(Rect::new(0, 4, 40, 2), screen_area)
            .unwrap()
            .height,
        4
    );
    assert_eq!(input.popup_area(Rect::new(0, 0, 40, 2), screen_area), None);
}

#[test]
fn popups_without_colour() {
    let (mut input, _dir) = input();
    type_text(&mut input, "/");
    let composer_area = Rect::new(0, 10, 40, 2);
    let draw =
        |input: &PromptInput| render(40, 12, |_, buf| input.render_popup(composer_area, buf));
    let buf = draw(&input);
    assert_eq!(buf[(1, 1)].symbol(), "›");
    assert_eq!(buf[(1, 1)].fg, Color::Cyan);
    input.set_colors(false);
    let buf = draw(&input);
    assert_eq!(buf[(1, 1)].fg, Color::Reset);
    assert!((0..40).all(|x| (0..12).all(|y| buf[(x, y)].fg == Color::Reset)));
}

#[test]
fn snapshot_slash_popup_all_commands() {
    let (mut input, _dir) = input();
    type_text(&mut input, "/");
    with_snapshot_dir(|| insta::assert_snapshot!("slash_popup_all", frame(&input, 72, 14)));
}

#[test]
fn snapshot_slash_popup_filtered_with_selection() {
    let (mut input, _dir) = input();
    type_text(&mut input, "/c");
    key(&mut input, KeyCode::Down);
    key(&mut input, KeyCode::Down);
    with_snapshot_dir(|| insta::assert_snapshot!("slash_popup_filtered", frame(&input, 64, 10)));
}

#[test]
fn snapshot_slash_popup_arguments() {
    let (mut input, _dir) = input();
    type_text(&mut input, "/mode ");
    with_snapshot_dir(|| insta::assert_snapshot!("slash_popup_arguments", frame(&input, 50, 9)));
}

#[test]
fn snapshot_file_popup() {
    let (mut input, _dir) = input();
    type_text(&mut input, "look at @rs");
    with_snapshot_dir(|| insta::assert_snapshot!("file_popup_matches", frame(&input, 50, 9)));
}

#[test]
fn snapshot_file_popup_while_indexing() {
    let dir = tempfile::tempdir().unwrap();
    // An indexer with no index yet; the build it starts is not awaited.
    let mut input = PromptInput::new(
        Composer::default(),
        builtin_commands(),
        FileIndexer::new(dir.path()),
    );
    type_text(&mut input, "@");
    let shown = frame(&input, 40, 6);
    // The popup shows what the index was when `@` was typed; the background build of
    // this empty tree almost never wins that race, but when it does there is no popup.
    if shown.contains("Indexing") {
        with_snapshot_dir(|| insta::assert_snapshot!("file_popup_indexing", shown));
    } else {
        assert!(!shown.contains("files") && !input.popup_open());
    }
}
