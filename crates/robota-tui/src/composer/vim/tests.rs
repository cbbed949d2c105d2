//! Behaviour tests of vim mode: motions, operators, counts, registers, undo, `.` and
//! visual line mode, key by key on a real composer.

use crossterm::event::{KeyCode, KeyModifiers};

use super::super::tests::{press, type_text};
use super::*;

/// A composer in vim normal mode holding `text`, the cursor where vim leaves it.
fn normal(text: &str) -> Composer {
    let mut c = Composer::default();
    c.set_vim(true);
    type_text(&mut c, text);
    assert!(c.vim_escape());
    c
}

fn keys(c: &mut Composer, keys: &str) {
    for ch in keys.chars() {
        press(c, KeyCode::Char(ch), KeyModifiers::NONE);
    }
}

/// The text with `|` before the cursor's atom.
fn shown(c: &Composer) -> String {
    let mut b = c.buffer.clone();
    b.insert_str("\u{2038}");
    b.display_text().replace('\u{2038}', "|")
}

#[test]
fn escape_steps_back_onto_the_last_character_and_keys_are_commands() {
    let mut c = normal("hello");
    assert_eq!(c.vim_mode(), Some(VimMode::Normal));
    assert_eq!(shown(&c), "hell|o");
    keys(&mut c, "q");
    assert_eq!(c.display_text(), "hello", "unbound letters type nothing");
    keys(&mut c, "0");
    assert_eq!(shown(&c), "|hello");
    keys(&mut c, "$");
    assert_eq!(shown(&c), "hell|o");
    keys(&mut c, "hh");
    assert_eq!(shown(&c), "he|llo");
    keys(&mut c, "llll");
    assert_eq!(shown(&c), "hell|o", "l stops on the last character");
}

#[test]
fn word_motions_follow_vim_classes() {
    let mut c = normal("foo.bar  baz\nqux");
    keys(&mut c, "gg");
    assert_eq!(shown(&c), "|foo.bar  baz\nqux");
    keys(&mut c, "w");
    assert_eq!(shown(&c), "foo|.bar  baz\nqux");
    keys(&mut c, "w");
    assert_eq!(shown(&c), "foo.|bar  baz\nqux");
    keys(&mut c, "w");
    assert_eq!(shown(&c), "foo.bar  |baz\nqux");
    keys(&mut c, "w");
    assert_eq!(shown(&c), "foo.bar  baz\n|qux", "w crosses the line break");
    keys(&mut c, "b");
    assert_eq!(shown(&c), "foo.bar  |baz\nqux");
    keys(&mut c, "bb");
    assert_eq!(shown(&c), "foo|.bar  baz\nqux");
    keys(&mut c, "0e");
    assert_eq!(shown(&c), "fo|o.bar  baz\nqux");
    keys(&mut c, "e");
    assert_eq!(shown(&c), "foo|.bar  baz\nqux");
    keys(&mut c, "G");
    assert_eq!(shown(&c), "foo.bar  baz\n|qux");
}

#[test]
fn dd_and_p_move_lines_and_u_undoes() {
    let mut c = normal("one\ntwo\nthree");
    keys(&mut c, "ggdd");
    assert_eq!(shown(&c), "|two\nthree");
    keys(&mut c, "p");
    assert_eq!(shown(&c), "two\n|one\nthree");
    keys(&mut c, "GP");
    assert_eq!(shown(&c), "two\none\n|one\nthree");
    keys(&mut c, "u");
    assert_eq!(c.display_text(), "two\none\nthree");
    keys(&mut c, "uu");
    assert_eq!(c.display_text(), "one\ntwo\nthree");
    keys(&mut c, "u");
    assert_eq!(c.display_text(), "one\ntwo\nthree", "nothing more to undo");
    // dd on the last line takes its line break with it.
    keys(&mut c, "Gdd");
    assert_eq!(shown(&c), "one\n|two");
}

#[test]
fn x_yy_and_charwise_put() {
    let mut c = normal("abc");
    keys(&mut c, "0x");
    assert_eq!(shown(&c), "|bc");
    keys(&mut c, "p");
    assert_eq!(shown(&c), "b|ac");
    keys(&mut c, "P");
    assert_eq!(shown(&c), "b|aac");
    keys(&mut c, "yyp");
    assert_eq!(shown(&c), "baac\n|baac");
}

#[test]
fn insert_commands_place_the_cursor_and_one_insert_is_one_undo() {
    let mut c = normal("mid");
    keys(&mut c, "I");
    assert_eq!(c.vim_mode(), Some(VimMode::Insert));
    type_text(&mut c, "<");
    c.vim_escape();
    keys(&mut c, "A");
    type_text(&mut c, ">");
    c.vim_escape();
    assert_eq!(c.display_text(), "<mid>");
    keys(&mut c, "o");
    type_text(&mut c, "below");
    c.vim_escape();
    keys(&mut c, "ggO");
    type_text(&mut c, "above");
    c.vim_escape();
    assert_eq!(c.display_text(), "above\n<mid>\nbelow");
    keys(&mut c, "0a");
    type_text(&mut c, "X");
    c.vim_escape();
    assert_eq!(c.display_text(), "aXbove\n<mid>\nbelow");
    keys(&mut c, "u");
    assert_eq!(c.display_text(), "above\n<mid>\nbelow");
    keys(&mut c, "u");
    assert_eq!(c.display_text(), "<mid>\nbelow");
    // Entering and leaving insert without typing leaves no undo step behind.
    keys(&mut c, "i");
    c.vim_escape();
    keys(&mut c, "u");
    assert_eq!(c.display_text(), "<mid>");
}

#[test]
fn visual_line_deletes_and_yanks_a_range() {
    let mut c = normal("a\nb\nc\nd");
    keys(&mut c, "ggjVj");
    assert_eq!(c.vim_mode(), Some(VimMode::VisualLine));
    keys(&mut c, "d");
    assert_eq!(c.vim_mode(), Some(VimMode::Normal));
    assert_eq!(shown(&c), "a\n|d");
    keys(&mut c, "P");
    assert_eq!(c.display_text(), "a\nb\nc\nd");
    keys(&mut c, "GVky");
    assert_eq!(c.display_text(), "a\nb\nc\nd", "y changes nothing");
    assert_eq!(
        c.buffer.cursor().row,
        2,
        "the cursor goes to the range's top"
    );
    keys(&mut c, "ggp");
    assert_eq!(c.display_text(), "a\nc\nd\nb\nc\nd");
    // Esc leaves visual mode without an edit.
    keys(&mut c, "V");
    assert!(c.vim_escape());
    assert_eq!(c.vim_mode(), Some(VimMode::Normal));
}

#[test]
fn visual_line_mode_draws_its_lines_reversed() {
    use ratatui::style::Modifier;

    let mut c = normal("one\ntwo\nthree");
    keys(&mut c, "ggjVj");
    let buf = crate::composer::test_support::render(20, 4, |area, buf| {
        c.render(area, buf);
    });
    let reversed = |y: u16| {
        (0..20u16)
            .filter(|x| buf[(*x, y)].modifier.contains(Modifier::REVERSED))
            .count()
    };
    assert_eq!(
        (reversed(0), reversed(1), reversed(2)),
        (0, 3, 5),
        "two and three"
    );
    c.vim_escape();
    let buf = crate::composer::test_support::render(20, 4, |area, buf| {
        c.render(area, buf);
    });
    assert!((0..20u16).all(|x| !buf[(x, 1)].modifier.contains(Modifier::REVERSED)));
}

#[test]
fn enter_submits_from_normal_mode_and_the_next_prompt_starts_in_insert() {
    let mut c = normal("ship it");
    assert_eq!(
        press(&mut c, KeyCode::Enter, KeyModifiers::NONE),
        ComposerAction::Submit("ship it".into())
    );
    assert_eq!(c.vim_mode(), Some(VimMode::Insert));
    type_text(&mut c, "ij");
    assert_eq!(c.display_text(), "ij");
}

#[test]
fn korean_text_moves_by_clusters_and_words() {
    let mut c = normal("안녕 세상");
    keys(&mut c, "0w");
    assert_eq!(shown(&c), "안녕 |세상");
    keys(&mut c, "x");
    assert_eq!(shown(&c), "안녕 |상");
}
#[test]
fn counts_repeat_motions_and_edits() {
    let mut c = normal("one two three four five");
    keys(&mut c, "0");
    keys(&mut c, "3w");
    assert_eq!(shown(&c), "one two three |four five");
    keys(&mut c, "2b");
    assert_eq!(shown(&c), "one |two three four five");
    keys(&mut c, "3x");
    assert_eq!(shown(&c), "one | three four five");
    keys(&mut c, "u0");
    keys(&mut c, "10l");
    assert_eq!(shown(&c), "one two th|ree four five");
    let mut c = normal("a\nb\nc\nd\ne");
    keys(&mut c, "gg2dd");
    assert_eq!(c.display_text(), "c\nd\ne");
    keys(&mut c, "2j");
    assert_eq!(shown(&c), "c\nd\n|e");
    keys(&mut c, "2gg");
    assert_eq!(shown(&c), "c\n|d\ne", "a count before gg names the line");
    keys(&mut c, "3p");
    assert_eq!(c.display_text(), "c\nd\na\nb\na\nb\na\nb\ne");
    let mut c = normal("ab");
    keys(&mut c, "0x3p");
    assert_eq!(shown(&c), "baa|a");
}

#[test]
fn operators_take_any_motion() {
    let mut c = normal("alpha beta gamma delta");
    keys(&mut c, "0dw");
    assert_eq!(shown(&c), "|beta gamma delta");
    keys(&mut c, "d2w");
    assert_eq!(shown(&c), "|delta");
    keys(&mut c, "u");
    assert_eq!(c.display_text(), "beta gamma delta");
    keys(&mut c, "0wd$");
    assert_eq!(shown(&c), "beta| ");
    keys(&mut c, "u0de");
    assert_eq!(shown(&c), "| gamma delta");
    keys(&mut c, "u$db");
    assert_eq!(shown(&c), "beta gamma |a");
    keys(&mut c, "u$d0");
    assert_eq!(shown(&c), "|a");
    // `y` copies without changing the text; `P` puts it back before the cursor.
    let mut c = normal("copy me");
    keys(&mut c, "0yeP");
    assert_eq!(shown(&c), "cop|ycopy me");
    // `dj` and `dk` take whole lines.
    let mut c = normal("1\n2\n3\n4");
    keys(&mut c, "ggjdj");
    assert_eq!(c.display_text(), "1\n4");
    keys(&mut c, "jdk");
    assert_eq!(c.display_text(), "");
    // `dw` on a line's last word keeps the line break.
    let mut c = normal("end here\nnext");
    keys(&mut c, "gg$bdw");
    assert_eq!(c.display_text(), "end \nnext");
}

#[test]
fn change_operators_enter_insert_as_one_undo_step() {
    let mut c = normal("say hello world");
    keys(&mut c, "0wcw");
    assert_eq!(c.vim_mode(), Some(VimMode::Insert));
    type_text(&mut c, "goodbye");
    c.vim_escape();
    assert_eq!(
        c.display_text(),
        "say goodbye world",
        "cw stops at the word's end"
    );
    keys(&mut c, "u");
    assert_eq!(c.display_text(), "say hello world");
    keys(&mut c, "0wC");
    type_text(&mut c, "there");
    c.vim_escape();
    assert_eq!(c.display_text(), "say there");
    keys(&mut c, "cc");
    type_text(&mut c, "new");
    c.vim_escape();
    assert_eq!(c.display_text(), "new");
    keys(&mut c, "0s");
    type_text(&mut c, "N");
    c.vim_escape();
    assert_eq!(c.display_text(), "New");
    keys(&mut c, "S");
    type_text(&mut c, "all new");
    c.vim_escape();
    assert_eq!(c.display_text(), "all new");
    keys(&mut c, "0ciw");
    type_text(&mut c, "every");
    c.vim_escape();
    assert_eq!(c.display_text(), "every new");
    keys(&mut c, "0daw");
    assert_eq!(c.display_text(), "new");
}

#[test]
fn finds_move_within_the_line_and_repeat() {
    let mut c = normal("a,b,c,d");
    keys(&mut c, "0f,");
    assert_eq!(shown(&c), "a|,b,c,d");
    keys(&mut c, ";");
    assert_eq!(shown(&c), "a,b|,c,d");
    keys(&mut c, ",");
    assert_eq!(shown(&c), "a|,b,c,d");
    keys(&mut c, "2f,");
    assert_eq!(shown(&c), "a,b,c|,d");
    keys(&mut c, "F,");
    assert_eq!(shown(&c), "a,b|,c,d");
    keys(&mut c, "0t,");
    assert_eq!(shown(&c), "|a,b,c,d", "t stops before the match");
    keys(&mut c, ";");
    assert_eq!(
        shown(&c),
        "a,|b,c,d",
        "a repeated t looks past the match beside it"
    );
    keys(&mut c, "fz");
    assert_eq!(shown(&c), "a,|b,c,d", "no match, no move");
    keys(&mut c, "0dt,");
    assert_eq!(c.display_text(), ",b,c,d");
    keys(&mut c, "df,");
    assert_eq!(
        c.display_text(),
        "c,d",
        "f looks past the character under the cursor"
    );
}

#[test]
fn dot_repeats_the_last_change_with_its_insert() {
    let mut c = normal("x x x x");
    keys(&mut c, "0cw");
    type_text(&mut c, "yes");
    c.vim_escape();
    keys(&mut c, "w.w.");
    assert_eq!(c.display_text(), "yes yes yes x");
    // Motions and yanks in between do not replace what `.` repeats.
    keys(&mut c, "0yw$.");
    assert_eq!(c.display_text(), "yes yes yes yes");
    let mut c = normal("1\n2\n3\n4");
    keys(&mut c, "ggdd..");
    assert_eq!(c.display_text(), "4");
    keys(&mut c, "A");
    type_text(&mut c, "!");
    c.vim_escape();
    keys(&mut c, ".");
    assert_eq!(c.display_text(), "4!!");
    // A visual delete is not what `.` repeats: the `x` before it is.
    let mut c = normal("a\nb\nc");
    keys(&mut c, "ggxVd.");
    assert_eq!(c.display_text(), "\nc");
}

#[test]
fn small_edits_replace_swap_case_join_and_delete_to_the_end() {
    let mut c = normal("abc def");
    keys(&mut c, "0rX");
    assert_eq!(shown(&c), "|Xbc def");
    keys(&mut c, "2rY");
    assert_eq!(shown(&c), "Y|Yc def");
    keys(&mut c, "0~~");
    assert_eq!(shown(&c), "yy|c def");
    keys(&mut c, "4~");
    assert_eq!(c.display_text(), "yyC DEf");
    keys(&mut c, "0wD");
    assert_eq!(c.display_text(), "yyC ");
    let mut c = normal("first\n    second\n\nlast");
    keys(&mut c, "ggJ");
    assert_eq!(shown(&c), "first| second\n\nlast");
    keys(&mut c, "3J");
    assert_eq!(c.display_text(), "first second last");
    keys(&mut c, "$X");
    assert_eq!(c.display_text(), "first second lat");
}

#[test]
fn esc_cancels_a_half_typed_command() {
    let mut c = normal("keep this");
    keys(&mut c, "0d");
    assert!(c.vim_escape(), "Esc takes back the pending d");
    keys(&mut c, "w");
    assert_eq!(shown(&c), "keep |this");
    assert_eq!(c.display_text(), "keep this");
    assert!(!c.vim_escape(), "idle normal mode leaves Esc to the app");
}
