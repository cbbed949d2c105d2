//! The composer's key bindings: which crossterm key event means which editing command.
//! Keys not listed here are left to the layers around the composer (Esc, Ctrl+C, Tab,
//! Shift+Tab, PgUp/PgDn, …).

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// An editing command of the composer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditCommand {
    /// A typed character.
    Insert(char),
    /// Enter: submit, or a newline when the cursor follows a `\`.
    Enter,
    /// Shift+Enter, Alt+Enter, Ctrl+J.
    Newline,
    /// Backspace, Ctrl+H: deletes the character (or collapsed paste) before the cursor.
    Backspace,
    /// Delete, and Ctrl+D (which the app takes instead when the composer is empty).
    DeleteForward,
    /// Left, Ctrl+B: one character left.
    Left,
    /// Right, Ctrl+F: one character right.
    Right,
    /// Up, Ctrl+P: one row up, or the previous history entry from the first row.
    Up,
    /// Down, Ctrl+N: one row down, or the next history entry from the last row.
    Down,
    /// Ctrl/Alt+Left, Alt+B: to the previous word boundary.
    WordLeft,
    /// Ctrl/Alt+Right, Alt+F: to the next word boundary.
    WordRight,
    /// Home, Ctrl+A: to the start of the line.
    LineStart,
    /// End, Ctrl+E: to the end of the line.
    LineEnd,
    /// Ctrl+Home: to the start of the buffer.
    BufferStart,
    /// Ctrl+End: to the end of the buffer.
    BufferEnd,
    /// Ctrl+W, Ctrl/Alt+Backspace: deletes the word before the cursor, keeping it for `Yank`.
    DeleteWordBack,
    /// Alt+D, Ctrl/Alt+Delete: deletes the word after the cursor, keeping it for `Yank`.
    DeleteWordForward,
    /// Ctrl+U: deletes to the start of the line, keeping it for `Yank`.
    KillToLineStart,
    /// Ctrl+K: deletes to the end of the line, keeping it for `Yank`.
    KillToLineEnd,
    /// Ctrl+Y: inserts the text the last deletion that kept it removed.
    Yank,
}

/// Maps a key to its editing command; `None` for keys the composer does not own and
/// for key releases.
pub fn edit_command(key: KeyEvent) -> Option<EditCommand> {
    use EditCommand::*;
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let m = key.modifiers;
    let ctrl = m.contains(KeyModifiers::CONTROL);
    let alt = m.contains(KeyModifiers::ALT);
    let shift = m.contains(KeyModifiers::SHIFT);
    let command = match key.code {
        KeyCode::Enter if shift || alt || ctrl => Newline,
        KeyCode::Enter => Enter,
        KeyCode::Char(c) if ctrl && !alt => match c.to_ascii_lowercase() {
            'a' => LineStart,
            'e' => LineEnd,
            'b' => Left,
            'f' => Right,
            'p' => Up,
            'n' => Down,
            'h' => Backspace,
            'd' => DeleteForward,
            'w' => DeleteWordBack,
            'u' => KillToLineStart,
            'k' => KillToLineEnd,
            'y' => Yank,
            'j' => Newline,
            _ => return None,
        },
        KeyCode::Char(c) if alt && !ctrl => match c {
            'b' | 'B' => WordLeft,
            'f' | 'F' => WordRight,
            'd' | 'D' => DeleteWordForward,
            _ => return None,
        },
        KeyCode::Char(c) if !ctrl && !alt => Insert(c),
        KeyCode::Backspace if alt || ctrl => DeleteWordBack,
        KeyCode::Backspace => Backspace,
        KeyCode::Delete if alt || ctrl => DeleteWordForward,
        KeyCode::Delete => DeleteForward,
        KeyCode::Left if alt || ctrl => WordLeft,
        KeyCode::Right if alt || ctrl => WordRight,
        KeyCode::Left => Left,
        KeyCode::Right => Right,
        KeyCode::Up => Up,
        KeyCode::Down => Down,
        KeyCode::Home if ctrl => BufferStart,
        KeyCode::End if ctrl => BufferEnd,
        KeyCode::Home => LineStart,
        KeyCode::End => LineEnd,
        _ => return None,
    };
    Some(command)
}

#[cfg(test)]
mod tests {
    use super::*;
    use EditCommand::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> Option<EditCommand> {
        edit_command(KeyEvent::new(code, modifiers))
    }

    #[test]
    fn newline_keys_and_enter() {
        assert_eq!(key(KeyCode::Enter, KeyModifiers::NONE), Some(Enter));
        assert_eq!(key(KeyCode::Enter, KeyModifiers::SHIFT), Some(Newline));
        assert_eq!(key(KeyCode::Enter, KeyModifiers::ALT), Some(Newline));
        assert_eq!(
            key(KeyCode::Char('j'), KeyModifiers::CONTROL),
            Some(Newline)
        );
    }

    #[test]
    fn emacs_bindings() {
        let ctrl = KeyModifiers::CONTROL;
        let alt = KeyModifiers::ALT;
        for (c, cmd) in [
            ('a', LineStart),
            ('e', LineEnd),
            ('w', DeleteWordBack),
            ('u', KillToLineStart),
            ('k', KillToLineEnd),
            ('y', Yank),
            ('h', Backspace),
            ('d', DeleteForward),
        ] {
            assert_eq!(key(KeyCode::Char(c), ctrl), Some(cmd), "ctrl+{c}");
        }
        assert_eq!(key(KeyCode::Char('b'), alt), Some(WordLeft));
        assert_eq!(key(KeyCode::Char('f'), alt), Some(WordRight));
        assert_eq!(key(KeyCode::Char('d'), alt), Some(DeleteWordForward));
        assert_eq!(key(KeyCode::Backspace, alt), Some(DeleteWordBack));
        assert_eq!(key(KeyCode::Left, ctrl), Some(WordLeft));
    }

    #[test]
    fn plain_and_shifted_characters_insert() {
        assert_eq!(
            key(KeyCode::Char('x'), KeyModifiers::NONE),
            Some(Insert('x'))
        );
        assert_eq!(
            key(KeyCode::Char('X'), KeyModifiers::SHIFT),
            Some(Insert('X'))
        );
        assert_eq!(
            key(KeyCode::Char('한'), KeyModifiers::NONE),
            Some(Insert('한'))
        );
    }

    #[test]
    fn keys_for_other_layers_are_not_taken() {
        assert_eq!(key(KeyCode::Esc, KeyModifiers::NONE), None);
        assert_eq!(key(KeyCode::Tab, KeyModifiers::NONE), None);
        assert_eq!(key(KeyCode::BackTab, KeyModifiers::SHIFT), None);
        assert_eq!(key(KeyCode::Char('c'), KeyModifiers::CONTROL), None);
        assert_eq!(key(KeyCode::PageUp, KeyModifiers::NONE), None);
        let mut release = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        assert_eq!(edit_command(release), None);
    }
}
