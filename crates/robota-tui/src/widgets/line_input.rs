//! A one-line text field for the overlays (the picker's filter; the setup
//! screen's URL, key, variable and model fields). It is the composer's grapheme-aware
//! [`TextBuffer`] driven by the composer's own key bindings, kept to a single line, and
//! shown scrolled so the cursor stays in view — optionally masked for secrets.

use crossterm::event::KeyEvent;

use crate::composer::buffer::{Atom, TextBuffer, TextPosition};
use crate::composer::keys::{EditCommand, edit_command};
use crate::composer::layout::atom_width;

/// The mask character drawn for each hidden character of a secret.
pub(crate) const MASK: &str = "•";

/// A secret shows its last characters only when it is at least this long, so a short
/// entry is never shown whole.
const REVEAL_FROM: usize = 12;
/// How many trailing characters of a long secret are shown.
const REVEALED: usize = 4;

/// A single-line editor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LineInput {
    buffer: TextBuffer,
}

/// What a field shows at a given width: its visible text and where the cursor sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldView {
    pub text: String,
    /// Column of the cursor within `text`'s row (may equal the text's width).
    pub cursor: usize,
}

impl LineInput {
    pub(crate) fn with_text(text: &str) -> Self {
        let mut input = LineInput::default();
        input.insert(text);
        input
    }

    /// The text typed.
    pub(crate) fn text(&self) -> String {
        self.buffer.display_text()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    pub(crate) fn clear(&mut self) {
        self.buffer = TextBuffer::default();
    }

    /// Inserts text at the cursor; line breaks become spaces (the field is one line).
    pub(crate) fn insert(&mut self, text: &str) {
        let one_line = text.replace("\r\n", " ").replace(['\n', '\r'], " ");
        self.buffer.insert_str(&one_line);
    }

    /// Applies an editing key (characters, Backspace, Delete, arrows, Home/End, the
    /// Emacs bindings); returns `false` for keys a field does not own (Enter, Up, Down,
    /// Esc, Tab, …), which the screen handles.
    pub(crate) fn handle_key(&mut self, key: KeyEvent) -> bool {
        use EditCommand::*;
        let Some(command) = edit_command(key) else {
            return false;
        };
        let cursor = self.buffer.cursor();
        match command {
            Insert(c) => self.buffer.insert_str(c.encode_utf8(&mut [0; 4])),
            Backspace => {
                if let Some(p) = self.buffer.prev(cursor) {
                    self.buffer.delete_range(p, cursor);
                }
            }
            DeleteForward => {
                if let Some(n) = self.buffer.next(cursor) {
                    self.buffer.delete_range(cursor, n);
                }
            }
            Left => self.buffer.move_left(),
            Right => self.buffer.move_right(),
            LineStart | BufferStart => self.buffer.line_start(),
            LineEnd | BufferEnd => self.buffer.line_end(),
            WordLeft => self.buffer.set_cursor(self.buffer.word_left_position()),
            WordRight => self.buffer.set_cursor(self.buffer.word_right_position()),
            DeleteWordBack => self.delete_to(self.buffer.word_rubout_position()),
            DeleteWordForward => self.delete_to(self.buffer.word_right_position()),
            KillToLineStart => self.delete_to(TextPosition { row: 0, col: 0 }),
            KillToLineEnd => self.delete_to(self.buffer.end()),
            Enter | Newline | Up | Down | Yank => return false,
        }
        true
    }

    fn delete_to(&mut self, to: TextPosition) {
        let cursor = self.buffer.cursor();
        self.buffer.delete_range(cursor, to);
    }

    /// The field as shown in `width` columns: scrolled left just enough that the cursor
    /// (and one cell for it) fits. With `masked`, every character is drawn as [`MASK`]
    /// except the last few of a long secret.
    pub(crate) fn view(&self, width: usize, masked: bool) -> FieldView {
        let atoms: &[Atom] = self.buffer.lines().first().map_or(&[], Vec::as_slice);
        let reveal_from = if atoms.len() >= REVEAL_FROM {
            atoms.len() - REVEALED
        } else {
            atoms.len()
        };
        let shown: Vec<(String, usize)> = atoms
            .iter()
            .enumerate()
            .map(|(i, atom)| match atom {
                _ if masked && i < reveal_from => (MASK.to_string(), 1),
                Atom::Grapheme(g) => (g.to_string(), atom_width(atom)),
                Atom::Paste { label, .. } => (label.to_string(), atom_width(atom)),
            })
            .collect();
        let cursor = self.buffer.cursor().col.min(shown.len());
        let width_of =
            |range: std::ops::Range<usize>| -> usize { shown[range].iter().map(|(_, w)| w).sum() };
        let mut start = 0;
        while start < cursor && width_of(start..cursor) + 1 > width {
            start += 1;
        }
        let mut text = String::new();
        let mut used = 0;
        for (g, w) in &shown[start..] {
            if used + w > width {
                break;
            }
            used += w;
            text.push_str(g);
        }
        FieldView {
            text,
            cursor: width_of(start..cursor),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn typed(text: &str) -> LineInput {
        let mut input = LineInput::default();
        for c in text.chars() {
            assert!(input.handle_key(key(KeyCode::Char(c))));
        }
        input
    }

    #[test]
    fn editing_keys_work_on_grapheme_clusters() {
        let mut input = typed("한국어 e\u{301}");
        assert!(input.handle_key(key(KeyCode::Backspace)));
        assert_eq!(input.text(), "한국어 ");
        input.handle_key(key(KeyCode::Home));
        input.handle_key(key(KeyCode::Delete));
        assert_eq!(input.text(), "국어 ");
        input.handle_key(KeyEvent::new(KeyCode::Char('k'), KeyModifiers::CONTROL));
        assert!(input.is_empty());
        assert!(!input.handle_key(key(KeyCode::Enter)));
        assert!(!input.handle_key(key(KeyCode::Esc)));
        assert!(!input.handle_key(key(KeyCode::Up)));
    }

    #[test]
    fn pasted_line_breaks_become_spaces() {
        let mut input = LineInput::with_text("a\r\nb\nc");
        assert_eq!(input.text(), "a b c");
        input.clear();
        assert!(input.is_empty());
    }

    #[test]
    fn the_view_scrolls_to_keep_the_cursor_visible() {
        let input = typed("abcdefghij");
        assert_eq!(
            input.view(5, false),
            FieldView {
                text: "ghij".into(),
                cursor: 4
            }
        );
        assert_eq!(input.view(20, false).text, "abcdefghij");
        assert_eq!(input.view(0, false).text, "");
        let wide = typed("日本語");
        assert_eq!(
            wide.view(5, false),
            FieldView {
                text: "本語".into(),
                cursor: 4
            }
        );
    }

    #[test]
    fn secrets_show_only_their_last_characters_and_short_ones_nothing() {
        let long = typed("sk-ant-api03-secretvalue-WXYZ");
        let view = long.view(80, true);
        assert!(view.text.ends_with("WXYZ"));
        assert!(!view.text.contains("secret"));
        assert_eq!(view.text.chars().filter(|&c| c == '•').count(), 25);
        let short = typed("abcd");
        assert_eq!(short.view(80, true).text, "••••");
    }
}
