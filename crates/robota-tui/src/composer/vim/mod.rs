//! The composer's vim mode (`/vim`): insert mode types as the plain composer does;
//! normal mode takes the letter keys as vim commands, with counts (`3w`, `2dd`):
//! motions `h j k l w b e 0 ^ $ gg G f F t T ; ,` (`vim_motion.rs`); the operators `d c y`
//! with any motion, doubled for whole lines (`dd cc yy`) or with `iw`/`aw`; `x X D C Y s
//! S r ~ J p P`, `u` undo and `.` to repeat the last change (an insert's text included);
//! visual line mode `V` with motions, then `d`/`x`/`y`/`c`; and `i a I A o O` back to
//! insert. Keys that are not plain characters (Enter, arrows, Ctrl+…) keep the composer's
//! and the app's meanings, so Enter submits in both modes. One register holds what the
//! last delete or yank took; an insert session is one undo step.
//!
//! Here: the modes, the vim state and the composer's entry points (keys in, mode changes,
//! undo checkpoints); `normal` reads the keys of normal and visual line mode, `edits` makes
//! the character and line edits they ask for.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::buffer::{Atom, TextBuffer, TextPosition};
use super::vim_motion::{Motion, at};
use super::{Composer, ComposerAction};

mod edits;
mod normal;

/// How many edits `u` can take back.
const UNDO_DEPTH: usize = 100;
/// The largest count taken (`99999dd` is as good as this).
const MAX_COUNT: usize = 9_999;

/// The vim mode the composer is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VimMode {
    /// Keys type text (the mode the composer starts in).
    Insert,
    /// Keys are commands: motions, operators, counts.
    Normal,
    /// `V`: whole lines are selected from the line it started on to the cursor's.
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

/// A key that waits for the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Awaiting {
    /// `g`, for `gg`.
    G,
    /// `f F t T`, for the character to find.
    Find(char),
    /// `r`, for the replacing character.
    Replace,
    /// `i`/`a` after an operator (`around` for `a`), for the object (`w`).
    Object { around: bool },
}

/// A waiting key with the count and operator typed before it.
#[derive(Debug, Clone, Copy)]
struct Pending {
    key: Awaiting,
    count: Option<usize>,
    operator: Option<char>,
}

/// What an operator acts on.
#[derive(Debug, Clone, Copy)]
enum Range {
    /// From one position up to another, not including it.
    Chars(TextPosition, TextPosition),
    /// Whole lines, first to last.
    Lines(usize, usize),
}

/// The keys of the change being typed, and the text before it (to tell whether it
/// changed anything).
#[derive(Debug, Clone)]
struct Recording {
    keys: Vec<KeyEvent>,
    before: Vec<Vec<Atom>>,
}

/// The vim state of a composer in vim mode.
#[derive(Debug, Clone)]
pub struct Vim {
    mode: VimMode,
    pending: Option<Pending>,
    /// Digits typed before a command.
    count: Option<usize>,
    /// An operator waiting for its motion, with the count typed before it.
    operator: Option<(char, Option<usize>)>,
    register: Register,
    undo: Vec<TextBuffer>,
    /// The line visual mode started on.
    anchor: usize,
    /// The last `f F t T` find, for `;` and `,`.
    last_find: Option<Motion>,
    recording: Option<Recording>,
    /// The keys of the last change, for `.`.
    last_change: Vec<KeyEvent>,
    replaying: bool,
}

impl Default for Vim {
    fn default() -> Self {
        Vim {
            mode: VimMode::Insert,
            pending: None,
            count: None,
            operator: None,
            register: Register::default(),
            undo: Vec::new(),
            anchor: 0,
            last_find: None,
            recording: None,
            last_change: Vec::new(),
            replaying: false,
        }
    }
}

impl Vim {
    /// Whether no command is half-typed.
    fn idle(&self) -> bool {
        self.pending.is_none() && self.count.is_none() && self.operator.is_none()
    }
}

impl Composer {
    /// Turns vim mode on (starting in insert mode) or off.
    pub fn set_vim(&mut self, on: bool) {
        self.vim = on.then(Vim::default);
    }

    pub(crate) fn vim_enabled(&self) -> bool {
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
            vim.count = None;
            vim.operator = None;
            vim.recording = None;
            vim.undo.clear();
        }
    }

    /// Esc in insert mode: to normal mode, the cursor onto the character it followed, as
    /// vim does; in visual mode, or with a command half-typed, back to plain normal mode.
    /// Returns whether it did any of these (otherwise Esc keeps the app's meanings).
    pub fn vim_escape(&mut self) -> bool {
        let Some(vim) = &mut self.vim else {
            return false;
        };
        match vim.mode {
            VimMode::Normal if vim.idle() => return false,
            VimMode::Normal | VimMode::VisualLine => {
                vim.mode = VimMode::Normal;
                vim.pending = None;
                vim.count = None;
                vim.operator = None;
                vim.recording = None;
                return true;
            }
            VimMode::Insert => {}
        }
        vim.mode = VimMode::Normal;
        if vim.undo.last() == Some(&self.buffer) {
            vim.undo.pop();
        }
        // The insert ends the change it belongs to (`cw…`, `o…`): `.` repeats all of it.
        if let Some(mut recording) = vim.recording.take()
            && !vim.replaying
            && recording.before != self.buffer.lines()
        {
            recording
                .keys
                .push(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
            vim.last_change = recording.keys;
        }
        self.buffer.move_left_in_line();
        self.clamp_normal();
        true
    }

    /// A key in normal or visual mode; `None` when the composer's usual handling applies
    /// (insert mode, and keys that are not plain characters).
    pub(super) fn vim_key(&mut self, key: KeyEvent) -> Option<ComposerAction> {
        let vim = self.vim.as_mut()?;
        if vim.mode == VimMode::Insert {
            if let Some(recording) = &mut vim.recording
                && !vim.replaying
            {
                recording.keys.push(key);
            }
            return None;
        }
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let c = match key.code {
            KeyCode::Char(c) if plain => c,
            KeyCode::Backspace if plain => 'h',
            _ => return None,
        };
        if !vim.replaying {
            // What visual mode does is not repeated by `.` (it needs the selection).
            if vim.idle() {
                vim.recording = (vim.mode == VimMode::Normal).then(|| Recording {
                    keys: Vec::new(),
                    before: self.buffer.lines().to_vec(),
                });
            }
            if let Some(recording) = &mut vim.recording {
                recording.keys.push(key);
            }
        }
        self.preferred_x = None;
        self.vim_char(c);
        self.finish_recording(c);
        Some(ComposerAction::Handled)
    }

    /// After a normal-mode key: a change that ended here becomes what `.` repeats; one
    /// that went on into insert mode goes on recording until Esc.
    fn finish_recording(&mut self, key: char) {
        let lines_now = self.buffer.lines();
        let Some(vim) = &mut self.vim else {
            return;
        };
        if vim.replaying || !vim.idle() || vim.mode == VimMode::Insert {
            return;
        }
        if let Some(recording) = vim.recording.take()
            && key != '.'
            && recording.before != lines_now
        {
            vim.last_change = recording.keys;
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
}

#[cfg(test)]
mod tests;
