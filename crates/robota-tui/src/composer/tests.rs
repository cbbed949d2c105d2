//! Behaviour tests of the composer: every key binding, paste collapsing, history walking,
//! shell mode and completion triggers. Rendering snapshots and property tests are in
//! `render_tests`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;

pub(crate) fn press(c: &mut Composer, code: KeyCode, modifiers: KeyModifiers) -> ComposerAction {
    c.handle_key(KeyEvent::new(code, modifiers))
}

pub(crate) fn type_text(c: &mut Composer, text: &str) {
    for ch in text.chars() {
        if ch == '\n' {
            press(c, KeyCode::Enter, KeyModifiers::SHIFT);
        } else {
            press(c, KeyCode::Char(ch), KeyModifiers::NONE);
        }
    }
}

fn ctrl(c: &mut Composer, ch: char) -> ComposerAction {
    press(c, KeyCode::Char(ch), KeyModifiers::CONTROL)
}

fn alt(c: &mut Composer, ch: char) -> ComposerAction {
    press(c, KeyCode::Char(ch), KeyModifiers::ALT)
}

fn plain(c: &mut Composer, code: KeyCode) -> ComposerAction {
    press(c, code, KeyModifiers::NONE)
}

/// The text with `|` at the cursor.
fn shown(c: &Composer) -> String {
    let mut b = c.buffer.clone();
    b.insert_str("\u{2038}");
    b.display_text().replace('\u{2038}', "|")
}

fn composer(text: &str) -> Composer {
    let mut c = Composer::default();
    type_text(&mut c, text);
    c
}

#[test]
fn enter_submits_trimmed_text_and_clears() {
    let mut c = composer("hello world  ");
    assert_eq!(
        plain(&mut c, KeyCode::Enter),
        ComposerAction::Submit("hello world".into())
    );
    assert!(c.is_empty());
    // Blank input is consumed, not submitted.
    let mut c = composer("   ");
    assert_eq!(plain(&mut c, KeyCode::Enter), ComposerAction::Handled);
}

#[test]
fn newline_keys_insert_line_breaks() {
    let mut c = composer("a");
    press(&mut c, KeyCode::Enter, KeyModifiers::SHIFT);
    type_text(&mut c, "b");
    press(&mut c, KeyCode::Enter, KeyModifiers::ALT);
    type_text(&mut c, "c");
    ctrl(&mut c, 'j');
    type_text(&mut c, "d\\");
    plain(&mut c, KeyCode::Enter);
    type_text(&mut c, "e");
    assert_eq!(shown(&c), "a\nb\nc\nd\ne|");
    assert_eq!(
        plain(&mut c, KeyCode::Enter),
        ComposerAction::Submit("a\nb\nc\nd\ne".into())
    );
}

#[test]
fn line_motions_and_kills() {
    let mut c = composer("one two three");
    ctrl(&mut c, 'a');
    assert_eq!(shown(&c), "|one two three");
    ctrl(&mut c, 'e');
    assert_eq!(shown(&c), "one two three|");
    plain(&mut c, KeyCode::Home);
    assert_eq!(shown(&c), "|one two three");
    plain(&mut c, KeyCode::End);
    ctrl(&mut c, 'w');
    assert_eq!(shown(&c), "one two |");
    alt(&mut c, 'b');
    assert_eq!(shown(&c), "one |two ");
    ctrl(&mut c, 'k');
    assert_eq!(shown(&c), "one |");
    ctrl(&mut c, 'y');
    assert_eq!(shown(&c), "one two |");
    alt(&mut c, 'b');
    alt(&mut c, 'b');
    alt(&mut c, 'f');
    assert_eq!(shown(&c), "one| two ");
    ctrl(&mut c, 'u');
    assert_eq!(shown(&c), "| two ");
    alt(&mut c, 'd');
    assert_eq!(shown(&c), "| ");
}

#[test]
fn kills_at_line_edges_join_lines() {
    let mut c = composer("ab\ncd");
    ctrl(&mut c, 'a');
    ctrl(&mut c, 'u');
    assert_eq!(shown(&c), "ab|cd");
    ctrl(&mut c, 'k');
    assert_eq!(shown(&c), "ab|");
    let mut c = composer("ab\ncd");
    plain(&mut c, KeyCode::Up);
    ctrl(&mut c, 'e');
    ctrl(&mut c, 'k');
    assert_eq!(shown(&c), "ab|cd");
}

#[test]
fn arrows_backspace_and_delete_step_over_whole_clusters() {
    let mut c = composer("a한👩‍💻e\u{301}");
    plain(&mut c, KeyCode::Left);
    assert_eq!(shown(&c), "a한👩‍💻|e\u{301}");
    plain(&mut c, KeyCode::Backspace);
    assert_eq!(shown(&c), "a한|e\u{301}");
    plain(&mut c, KeyCode::Left);
    plain(&mut c, KeyCode::Delete);
    assert_eq!(shown(&c), "a|e\u{301}");
    ctrl(&mut c, 'h');
    assert_eq!(shown(&c), "|e\u{301}");
    plain(&mut c, KeyCode::Right);
    assert_eq!(shown(&c), "e\u{301}|");
    ctrl(&mut c, 'b');
    ctrl(&mut c, 'd');
    assert_eq!(shown(&c), "|");
}

#[test]
fn left_and_right_cross_line_breaks() {
    let mut c = composer("ab\ncd");
    ctrl(&mut c, 'a');
    plain(&mut c, KeyCode::Left);
    assert_eq!(shown(&c), "ab|\ncd");
    plain(&mut c, KeyCode::Right);
    assert_eq!(shown(&c), "ab\n|cd");
    plain(&mut c, KeyCode::Backspace);
    assert_eq!(shown(&c), "ab|cd");
}

#[test]
fn ctrl_d_on_empty_is_left_to_the_app() {
    let mut c = Composer::default();
    assert_eq!(ctrl(&mut c, 'd'), ComposerAction::Ignored);
    assert_eq!(plain(&mut c, KeyCode::Esc), ComposerAction::Ignored);
    assert_eq!(plain(&mut c, KeyCode::Tab), ComposerAction::Ignored);
    assert_eq!(ctrl(&mut c, 'c'), ComposerAction::Ignored);
}

#[test]
fn up_and_down_move_by_visual_rows_keeping_the_column() {
    let mut c = composer("abcdef\nab\nabcdef");
    c.set_width(80);
    ctrl(&mut c, 'a');
    plain(&mut c, KeyCode::Right);
    plain(&mut c, KeyCode::Right);
    plain(&mut c, KeyCode::Right);
    plain(&mut c, KeyCode::Right);
    plain(&mut c, KeyCode::Up);
    assert_eq!(shown(&c), "abcdef\nab|\nabcdef");
    plain(&mut c, KeyCode::Up);
    assert_eq!(shown(&c), "abcd|ef\nab\nabcdef");
    plain(&mut c, KeyCode::Down);
    plain(&mut c, KeyCode::Down);
    assert_eq!(shown(&c), "abcdef\nab\nabcd|ef");
    // Wrapped rows count as rows: 8 columns of text at width 10.
    let mut c = composer("aaaaaaaabbbbbbbbcc");
    c.set_width(10);
    plain(&mut c, KeyCode::Up);
    assert_eq!(shown(&c), "aaaaaaaabb|bbbbbbcc");
    plain(&mut c, KeyCode::Up);
    assert_eq!(shown(&c), "aa|aaaaaabbbbbbbbcc");
}

#[test]
fn up_from_a_cjk_row_lands_on_a_cluster_edge() {
    let mut c = composer("abcde\n가나다");
    ctrl(&mut c, 'a');
    plain(&mut c, KeyCode::Up);
    plain(&mut c, KeyCode::End);
    plain(&mut c, KeyCode::Down);
    // Column 5 falls inside 다 (columns 4-5): the cursor stays left of it.
    assert_eq!(shown(&c), "abcde\n가나|다");
}

#[test]
fn history_walks_at_the_edges_and_restores_the_draft() {
    let mut c = Composer::default();
    for prompt in ["first", "second\nline"] {
        type_text(&mut c, prompt);
        plain(&mut c, KeyCode::Enter);
    }
    type_text(&mut c, "draft");
    plain(&mut c, KeyCode::Up);
    assert_eq!(shown(&c), "|second\nline");
    plain(&mut c, KeyCode::Up);
    assert_eq!(shown(&c), "|first");
    plain(&mut c, KeyCode::Up);
    assert_eq!(shown(&c), "|first", "the oldest entry stays");
    // Walking forward puts the cursor at the end, so the next Down goes on at once.
    plain(&mut c, KeyCode::Down);
    assert_eq!(shown(&c), "second\nline|");
    plain(&mut c, KeyCode::Down);
    assert_eq!(shown(&c), "draft|");
    assert_eq!(c.history().len(), 2);
}

#[test]
fn history_persists_per_file_and_recalls_pastes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history").join("-tmp-project.jsonl");
    let mut c = Composer::new(PromptHistory::load(&path).unwrap());
    type_text(&mut c, "look: ");
    let big: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    c.paste(&big);
    assert_eq!(shown(&c), "look: [Pasted text #1 +10 lines]|");
    let ComposerAction::Submit(text) = plain(&mut c, KeyCode::Enter) else {
        panic!("not submitted");
    };
    assert_eq!(text, format!("look: {}", big.trim_end()));
    let mut again = Composer::new(PromptHistory::load(&path).unwrap());
    plain(&mut again, KeyCode::Up);
    assert_eq!(again.display_text(), "look: [Pasted text #1 +10 lines]");
    assert_eq!(again.expanded_text(), format!("look: {big}"));
    // A new paste gets a fresh number.
    ctrl(&mut again, 'e');
    again.paste(&big);
    assert!(again.display_text().ends_with("[Pasted text #2 +10 lines]"));
}

#[test]
fn pastes_fold_line_endings_and_collapse_when_large() {
    let mut c = Composer::default();
    c.paste("a\r\nb\rc");
    assert_eq!(shown(&c), "a\nb\nc|");
    c.clear();
    c.paste("1\n2\n3\n4\n5\n6\n");
    assert_eq!(shown(&c), "[Pasted text #1 +6 lines]|");
    c.paste(&"x".repeat(801));
    assert_eq!(shown(&c), "[Pasted text #1 +6 lines][Pasted text #2]|");
    // A placeholder is deleted as one unit.
    plain(&mut c, KeyCode::Backspace);
    assert_eq!(shown(&c), "[Pasted text #1 +6 lines]|");
    plain(&mut c, KeyCode::Left);
    assert_eq!(shown(&c), "|[Pasted text #1 +6 lines]");
    assert_eq!(
        plain(&mut c, KeyCode::Enter),
        ComposerAction::Submit("1\n2\n3\n4\n5\n6".into())
    );
}

#[test]
fn typed_placeholder_text_is_not_expanded() {
    let mut c = composer("[Pasted text #1 +2 lines]");
    assert_eq!(
        plain(&mut c, KeyCode::Enter),
        ComposerAction::Submit("[Pasted text #1 +2 lines]".into())
    );
}

#[test]
fn bang_switches_to_shell_mode_and_back() {
    let mut c = composer("!ls -la");
    assert!(c.is_shell_mode());
    assert_eq!(c.display_text(), "ls -la");
    assert_eq!(
        plain(&mut c, KeyCode::Enter),
        ComposerAction::RunShell("ls -la".into())
    );
    assert!(!c.is_shell_mode());
    // History keeps the bang and restores the mode.
    plain(&mut c, KeyCode::Up);
    assert!(c.is_shell_mode());
    assert_eq!(c.display_text(), "ls -la");
    c.clear();
    type_text(&mut c, "!");
    plain(&mut c, KeyCode::Backspace);
    assert!(!c.is_shell_mode());
    // A bang later in the text is just text.
    let c = composer("hi!");
    assert!(!c.is_shell_mode());
}

#[test]
fn slash_and_at_triggers() {
    let trigger = |text: &str| composer(text).completion_trigger();
    assert_eq!(
        trigger("/"),
        Some(CompletionTrigger::Command { query: "".into() })
    );
    assert_eq!(
        trigger("/mo"),
        Some(CompletionTrigger::Command { query: "mo".into() })
    );
    assert_eq!(
        trigger("/mode pl"),
        Some(CompletionTrigger::Argument {
            command: "mode".into(),
            query: "pl".into()
        })
    );
    assert_eq!(trigger("/mode plan now"), None);
    assert_eq!(trigger("x /mo"), None);
    assert_eq!(
        trigger("read @src/ma"),
        Some(CompletionTrigger::File {
            query: "src/ma".into()
        })
    );
    assert_eq!(
        trigger("@"),
        Some(CompletionTrigger::File { query: "".into() })
    );
    assert_eq!(trigger("mail me@host"), None);
    assert_eq!(trigger("@a b"), None);
    assert_eq!(trigger("!@x"), None, "no completion in shell mode");
}

#[test]
fn completing_a_token_replaces_the_whole_word() {
    let mut c = composer("see @sr/ma please");
    for _ in 0.." please".len() {
        plain(&mut c, KeyCode::Left);
    }
    plain(&mut c, KeyCode::Left);
    plain(&mut c, KeyCode::Left);
    c.complete_token("@src/main.rs", true);
    assert_eq!(shown(&c), "see @src/main.rs |please");
    let mut c = composer("/mo");
    c.complete_token("/model", true);
    assert_eq!(shown(&c), "/model |");
}

#[test]
fn a_recalled_prompt_brings_its_images_back() {
    let png = robota_core::message::ImageSource::base64("image/png", "iVBORw0KGgo=");
    let jpeg = robota_core::message::ImageSource::base64("image/jpeg", "/9j/4AAQ");
    let mut c = Composer::default();
    type_text(&mut c, "compare ");
    c.attach_image(png.clone());
    type_text(&mut c, " and ");
    c.attach_image(jpeg.clone());
    assert!(matches!(c.submit(), ComposerAction::Submit(_)));
    assert_eq!(c.take_submitted_images(), [png.clone(), jpeg.clone()]);
    plain(&mut c, KeyCode::Up);
    assert_eq!(shown(&c), "|compare [Image #1] and [Image #2]");
    // The recalled placeholders are whole atoms again: one Backspace takes an image out.
    ctrl(&mut c, 'e');
    plain(&mut c, KeyCode::Backspace);
    type_text(&mut c, "itself");
    match c.submit() {
        ComposerAction::Submit(text) => assert_eq!(text, "compare [Image #1] and itself"),
        other => panic!("{other:?}"),
    }
    assert_eq!(c.take_submitted_images(), [png]);
}
