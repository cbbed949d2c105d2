//! The composer's vim mode (`/vim`): insert mode types as the plain composer does;
//! normal mode takes the letter keys as vim commands — motions `h j k l w b e 0 $ gg G`,
//! edits `x dd yy p P`, `u` undo, visual line mode `V` with `j k gg G` then `d`/`y`, and
//! `i a I A o O` back to insert. Keys that are not plain characters (Enter, arrows,
//! Ctrl+…) keep the composer's and the app's meanings, so Enter submits in both modes.
//! One register holds what `dd`, `x`, `yy` and visual `d`/`y` took; an insert session is
//! one undo step.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::buffer::{Atom, TextBuffer, TextPosition};
use super::{Composer, ComposerAction};

/// How many edits `u` can take back.
const UNDO_DEPTH: usize = 100;

/// The vim mode the composer is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VimMode {
    Insert,
    Normal,
    VisualLine,
}

impl VimMode {
    /// What the status line shows for the mode.
    pub fn label(self) -> &'static str {
        match self {
            VimMode::Insert => "-- INSERT --",
            VimMode::Normal => "NORMAL",
            VimMode::VisualLine => "-- VISUAL LINE --",
        }
    }
}

/// What `p`/`P` put: whole lines (from `dd`, `yy`, visual line) or a run of text (`x`).
#[derive(Debug, Clone, Default)]
struct Register {
    lines: Vec<Vec<Atom>>,
    linewise: bool,
}

/// The vim state of a composer in vim mode.
#[derive(Debug, Clone)]
pub struct Vim {
    mode: VimMode,
    /// The first key of a two-key command (`g`, `d`, `y`).
    pending: Option<char>,
    register: Register,
    undo: Vec<TextBuffer>,
    /// The line visual mode started on.
    anchor: usize,
}

impl Default for Vim {
    fn default() -> Self {
        Vim {
            mode: VimMode::Insert,
            pending: None,
            register: Register::default(),
            undo: Vec::new(),
            anchor: 0,
        }
    }
}

fn at(row: usize, col: usize) -> TextPosition {
    TextPosition { row, col }
}

/// How `w`, `b` and `e` see an atom: blank (line breaks too), word, or punctuation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Blank,
    Word,
    Punct,
}

fn class(atom: Option<&Atom>) -> Class {
    match atom {
        None => Class::Blank,
        Some(a) if a.is_whitespace() => Class::Blank,
        Some(Atom::Paste { .. }) => Class::Word,
        Some(Atom::Grapheme(g)) => {
            if g.chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                Class::Word
            } else {
                Class::Punct
            }
        }
    }
}

/// Every position of the text in order with its class (a line end counts as blank).
fn cells(lines: &[Vec<Atom>]) -> Vec<(TextPosition, Class)> {
    let mut out = Vec::new();
    for (row, line) in lines.iter().enumerate() {
        for (col, atom) in line.iter().enumerate() {
            out.push((at(row, col), class(Some(atom))));
        }
        if row + 1 < lines.len() {
            out.push((at(row, line.len()), Class::Blank));
        }
    }
    out
}

/// `w`: the start of the next word or punctuation run.
fn word_forward(lines: &[Vec<Atom>], from: TextPosition) -> TextPosition {
    let cells = cells(lines);
    let Some(mut i) = cells.iter().position(|(p, _)| *p >= from) else {
        return from;
    };
    let start = cells[i].1;
    while i < cells.len() && start != Class::Blank && cells[i].1 == start {
        i += 1;
    }
    while i < cells.len() && cells[i].1 == Class::Blank {
        i += 1;
    }
    cells.get(i).or(cells.last()).map_or(from, |(p, _)| *p)
}

/// `e`: the last atom of this or the next word.
fn word_end(lines: &[Vec<Atom>], from: TextPosition) -> TextPosition {
    let cells = cells(lines);
    let Some(mut i) = cells.iter().position(|(p, _)| *p >= from) else {
        return from;
    };
    i += 1;
    while i < cells.len() && cells[i].1 == Class::Blank {
        i += 1;
    }
    let Some(&(_, kind)) = cells.get(i) else {
        return cells.last().map_or(from, |(p, _)| *p);
    };
    while i + 1 < cells.len() && cells[i + 1].1 == kind {
        i += 1;
    }
    cells[i].0
}

/// `b`: the start of this or the previous word.
fn word_back(lines: &[Vec<Atom>], from: TextPosition) -> TextPosition {
    let cells = cells(lines);
    let Some(mut i) = cells.iter().position(|(p, _)| *p >= from) else {
        return cells.last().map_or(from, |(p, _)| *p);
    };
    if i == 0 {
        return cells[0].0;
    }
    i -= 1;
    while i > 0 && cells[i].1 == Class::Blank {
        i -= 1;
    }
    let kind = cells[i].1;
    while i > 0 && kind != Class::Blank && cells[i - 1].1 == kind {
        i -= 1;
    }
    cells[i].0
}

/// Removes lines `from..=to` whole and returns them; the cursor goes to the line now there.
fn delete_lines(b: &mut TextBuffer, from: usize, to: usize) -> Vec<Vec<Atom>> {
    let count = b.lines().len();
    let removed = b.lines()[from..=to].to_vec();
    if from == 0 && to + 1 == count {
        b.delete_range(at(0, 0), b.end());
    } else if to + 1 < count {
        b.delete_range(at(from, 0), at(to + 1, 0));
    } else {
        let before = b.lines()[from - 1].len();
        let last = b.lines()[to].len();
        b.delete_range(at(from - 1, before), at(to, last));
    }
    let row = from.min(b.lines().len() - 1);
    b.set_cursor(at(row, 0));
    removed
}

/// Puts whole lines below (`p`) or above (`P`) the cursor's line; the cursor goes to the
/// first of them.
fn put_lines(b: &mut TextBuffer, lines: &[Vec<Atom>], below: bool) {
    let row = b.cursor().row;
    if below {
        b.set_cursor(at(row, b.lines()[row].len()));
        let mut new = vec![Vec::new()];
        new.extend(lines.iter().cloned());
        b.insert_lines(new);
        b.set_cursor(at(row + 1, 0));
    } else {
        b.set_cursor(at(row, 0));
        let mut new = lines.to_vec();
        new.push(Vec::new());
        b.insert_lines(new);
        b.set_cursor(at(row, 0));
    }
}

/// The first non-blank atom of a line (its end when it is all blank).
fn first_non_blank(line: &[Atom]) -> usize {
    line.iter()
        .position(|a| !a.is_whitespace())
        .unwrap_or(line.len())
}

impl Composer {
    /// Turns vim mode on (starting in insert mode) or off.
    pub fn set_vim(&mut self, on: bool) {
        self.vim = on.then(Vim::default);
    }

    pub fn vim_enabled(&self) -> bool {
        self.vim.is_some()
    }

    /// The vim mode, when vim mode is on.
    pub fn vim_mode(&self) -> Option<VimMode> {
        self.vim.as_ref().map(|v| v.mode)
    }

    /// The lines selected in visual line mode (first, last), if in it.
    pub(super) fn visual_lines(&self) -> Option<(usize, usize)> {
        let vim = self.vim.as_ref()?;
        if vim.mode != VimMode::VisualLine {
            return None;
        }
        let row = self.buffer.cursor().row;
        Some((vim.anchor.min(row), vim.anchor.max(row)))
    }

    /// Back to insert mode with a fresh undo history (after a submit or clear).
    pub(super) fn reset_vim(&mut self) {
        if let Some(vim) = &mut self.vim {
            vim.mode = VimMode::Insert;
            vim.pending = None;
            vim.undo.clear();
        }
    }

    /// Esc in insert mode: to normal mode, the cursor onto the character it followed, as
    /// vim does; in visual mode, back to normal mode. Returns whether it did either (in
    /// normal mode Esc keeps the app's meanings).
    pub fn vim_escape(&mut self) -> bool {
        let Some(vim) = &mut self.vim else {
            return false;
        };
        match vim.mode {
            VimMode::Normal => return false,
            VimMode::VisualLine => {
                vim.mode = VimMode::Normal;
                return true;
            }
            VimMode::Insert => {}
        }
        vim.mode = VimMode::Normal;
        if vim.undo.last() == Some(&self.buffer) {
            vim.undo.pop();
        }
        self.buffer.move_left_in_line();
        self.clamp_normal();
        true
    }

    /// A key in normal or visual mode; `None` when the composer's usual handling applies
    /// (insert mode, and keys that are not plain characters).
    pub(super) fn vim_key(&mut self, key: KeyEvent) -> Option<ComposerAction> {
        let mode = self.vim.as_ref()?.mode;
        if mode == VimMode::Insert {
            return None;
        }
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Char(c) if plain => {
                self.preferred_x = None;
                self.vim_char(c);
                Some(ComposerAction::Handled)
            }
            KeyCode::Backspace if plain => {
                self.vim_char('h');
                Some(ComposerAction::Handled)
            }
            _ => None,
        }
    }

    fn set_mode(&mut self, mode: VimMode) {
        if let Some(vim) = &mut self.vim {
            vim.mode = mode;
            vim.pending = None;
        }
    }

    /// Keeps the normal-mode cursor on a character (never past the line's last one).
    fn clamp_normal(&mut self) {
        let pos = self.buffer.cursor();
        let len = self.buffer.lines()[pos.row].len();
        if len > 0 && pos.col >= len {
            self.buffer.set_cursor(at(pos.row, len - 1));
        }
    }

    /// Remembers the text before an edit, for `u`.
    fn checkpoint(&mut self) {
        if let Some(vim) = &mut self.vim {
            if vim.undo.len() == UNDO_DEPTH {
                vim.undo.remove(0);
            }
            vim.undo.push(self.buffer.clone());
        }
    }

    fn enter_insert(&mut self) {
        self.checkpoint();
        self.set_mode(VimMode::Insert);
    }

    fn vim_char(&mut self, c: char) {
        let Some(vim) = &mut self.vim else {
            return;
        };
        let pending = vim.pending.take();
        let visual = vim.mode == VimMode::VisualLine;
        let anchor = vim.anchor;
        let pos = self.buffer.cursor();
        let last_row = self.buffer.lines().len() - 1;
        match (pending, c) {
            (None, 'g' | 'd' | 'y') if !(visual && c != 'g') => {
                if let Some(vim) = &mut self.vim {
                    vim.pending = Some(c);
                }
            }
            (Some('g'), 'g') => self.buffer.set_cursor(at(0, 0)),
            (_, 'G') => self.buffer.set_cursor(at(last_row, 0)),
            (_, 'h') => self.buffer.move_left_in_line(),
            (_, 'l') => {
                let len = self.buffer.lines()[pos.row].len();
                if pos.col + 1 < len {
                    self.buffer.set_cursor(at(pos.row, pos.col + 1));
                }
            }
            (_, 'j') if pos.row < last_row => self.buffer.set_cursor(at(pos.row + 1, pos.col)),
            (_, 'k') if pos.row > 0 => self.buffer.set_cursor(at(pos.row - 1, pos.col)),
            (_, 'w') => self
                .buffer
                .set_cursor(word_forward(self.buffer.lines(), pos)),
            (_, 'b') => self.buffer.set_cursor(word_back(self.buffer.lines(), pos)),
            (_, 'e') => self.buffer.set_cursor(word_end(self.buffer.lines(), pos)),
            (_, '0') => self.buffer.line_start(),
            (_, '$') => self.buffer.line_end(),
            (_, 'V') if visual => self.set_mode(VimMode::Normal),
            (_, 'V') => {
                if let Some(vim) = &mut self.vim {
                    vim.mode = VimMode::VisualLine;
                    vim.anchor = pos.row;
                }
            }
            (None, 'd' | 'y') if visual => {
                let (from, to) = (anchor.min(pos.row), anchor.max(pos.row));
                self.take_lines(from, to, c == 'd');
                self.set_mode(VimMode::Normal);
            }
            (Some('d'), 'd') => self.take_lines(pos.row, pos.row, true),
            (Some('y'), 'y') => self.take_lines(pos.row, pos.row, false),
            (_, _) if visual => {}
            (_, 'x') => {
                let len = self.buffer.lines()[pos.row].len();
                if pos.col < len {
                    self.checkpoint();
                    let taken = self.buffer.delete_range(pos, at(pos.row, pos.col + 1));
                    self.leave_history();
                    self.set_register(taken, false);
                }
            }
            (_, 'p' | 'P') => self.put(c == 'p'),
            (_, 'u') => {
                if let Some(previous) = self.vim.as_mut().and_then(|v| v.undo.pop()) {
                    self.leave_history();
                    self.buffer = previous;
                }
            }
            (_, 'i') => self.enter_insert(),
            (_, 'a') => {
                if !self.buffer.lines()[pos.row].is_empty() {
                    self.buffer.set_cursor(at(pos.row, pos.col + 1));
                }
                self.enter_insert();
            }
            (_, 'I') => {
                let col = first_non_blank(&self.buffer.lines()[pos.row]);
                self.buffer.set_cursor(at(pos.row, col));
                self.enter_insert();
            }
            (_, 'A') => {
                self.buffer.line_end();
                self.enter_insert();
            }
            (_, 'o') => {
                self.enter_insert();
                self.buffer.line_end();
                self.edit(|b| b.insert_str("\n"));
            }
            (_, 'O') => {
                self.enter_insert();
                self.buffer.line_start();
                self.edit(|b| b.insert_str("\n"));
                self.buffer.set_cursor(at(pos.row, 0));
            }
            _ => {}
        }
        if self.vim_mode() != Some(VimMode::Insert) {
            self.clamp_normal();
        }
    }

    /// `dd`/`yy` and visual `d`/`y`: lines into the register, deleted when `delete`.
    fn take_lines(&mut self, from: usize, to: usize, delete: bool) {
        let lines = if delete {
            self.checkpoint();
            self.leave_history();
            delete_lines(&mut self.buffer, from, to)
        } else {
            self.buffer.set_cursor(at(from, self.buffer.cursor().col));
            self.buffer.lines()[from..=to].to_vec()
        };
        self.set_register(lines, true);
    }

    fn set_register(&mut self, lines: Vec<Vec<Atom>>, linewise: bool) {
        if let Some(vim) = &mut self.vim {
            vim.register = Register { lines, linewise };
        }
    }

    /// `p` (after the cursor or below its line) and `P` (before it or above).
    fn put(&mut self, after: bool) {
        let Some(register) = self.vim.as_ref().map(|v| v.register.clone()) else {
            return;
        };
        if register.lines.is_empty() {
            return;
        }
        self.checkpoint();
        self.leave_history();
        if register.linewise {
            put_lines(&mut self.buffer, &register.lines, after);
            return;
        }
        let pos = self.buffer.cursor();
        if after && !self.buffer.lines()[pos.row].is_empty() {
            self.buffer.set_cursor(at(pos.row, pos.col + 1));
        }
        self.buffer.insert_lines(register.lines);
        self.buffer.move_left_in_line();
    }
}

#[cfg(test)]
mod tests {
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
        let buf = crate::tui::composer::test_support::render(20, 4, |area, buf| {
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
        let buf = crate::tui::composer::test_support::render(20, 4, |area, buf| {
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
}
