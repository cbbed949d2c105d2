//! The composer's vim mode (`/vim`): insert mode types as the plain composer does;
//! normal mode takes the letter keys as vim commands, with counts (`3w`, `2dd`):
//! motions `h j k l w b e 0 ^ $ gg G f F t T ; ,` (`vim_motion.rs`); the operators `d c y`
//! with any motion, doubled for whole lines (`dd cc yy`) or with `iw`/`aw`; `x X D C Y s
//! S r ~ J p P`, `u` undo and `.` to repeat the last change (an insert's text included);
//! visual line mode `V` with motions, then `d`/`x`/`y`/`c`; and `i a I A o O` back to
//! insert. Keys that are not plain characters (Enter, arrows, Ctrl+…) keep the composer's
//! and the app's meanings, so Enter submits in both modes. One register holds what the
//! last delete or yank took; an insert session is one undo step.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::buffer::{Atom, TextBuffer, TextPosition};
use super::vim_motion::{Motion, Reach, at, first_non_blank, motion_target, word_object};
use super::{Composer, ComposerAction};

/// How many edits `u` can take back.
const UNDO_DEPTH: usize = 100;
/// The largest count taken (`99999dd` is as good as this).
const MAX_COUNT: usize = 9_999;

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

/// `a × b` of two optional counts (`2d3w` deletes six words).
fn times(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some((a.unwrap_or(1) * b.unwrap_or(1)).min(MAX_COUNT)),
    }
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
        let lines_now = self.buffer.lines().to_vec();
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

    fn vim_char(&mut self, c: char) {
        let Some(vim) = &mut self.vim else {
            return;
        };
        if let Some(pending) = vim.pending.take() {
            self.complete_pending(pending, c);
        } else if c.is_ascii_digit() && (c != '0' || vim.count.is_some()) {
            let digit = c as usize - '0' as usize;
            let count = vim.count.unwrap_or(0).saturating_mul(10) + digit;
            vim.count = Some(count.min(MAX_COUNT));
            return;
        } else {
            let count = vim.count.take();
            match vim.operator.take() {
                Some((op, before)) => self.operator_key(op, times(before, count), c),
                None => self.command(c, count),
            }
        }
        if self.vim_mode() != Some(VimMode::Insert) {
            self.clamp_normal();
        }
    }

    fn await_key(&mut self, key: Awaiting, count: Option<usize>, operator: Option<char>) {
        if let Some(vim) = &mut self.vim {
            vim.pending = Some(Pending {
                key,
                count,
                operator,
            });
        }
    }

    /// The key after `g`, `f`…, `r`, or an operator's `i`/`a`.
    fn complete_pending(&mut self, pending: Pending, c: char) {
        let Pending {
            key,
            count,
            operator,
        } = pending;
        match key {
            Awaiting::G if c == 'g' => self.motion(operator, Motion::FirstLine, count),
            Awaiting::Find(kind) => {
                let motion = Motion::Find {
                    target: c,
                    forward: kind.is_ascii_lowercase(),
                    till: kind.eq_ignore_ascii_case(&'t'),
                };
                if let Some(vim) = &mut self.vim {
                    vim.last_find = Some(motion);
                }
                self.motion(operator, motion, count);
            }
            Awaiting::Replace => self.replace_chars(c, count.unwrap_or(1)),
            Awaiting::Object { around } if matches!(c, 'w' | 'W') => {
                let pos = self.buffer.cursor();
                if let (Some(op), Some((from, to))) =
                    (operator, word_object(self.buffer.lines(), pos, around))
                {
                    self.operate(op, Range::Chars(from, to));
                }
            }
            _ => {}
        }
    }

    /// A key after an operator: the same operator again (whole lines), a motion, or the
    /// start of a text object or a two-key motion.
    fn operator_key(&mut self, op: char, count: Option<usize>, c: char) {
        let row = self.buffer.cursor().row;
        let last_row = self.buffer.lines().len() - 1;
        match c {
            _ if c == op => {
                let to = (row + count.unwrap_or(1) - 1).min(last_row);
                self.operate(op, Range::Lines(row, to));
            }
            'i' | 'a' => self.await_key(Awaiting::Object { around: c == 'a' }, count, Some(op)),
            'g' => self.await_key(Awaiting::G, count, Some(op)),
            'f' | 'F' | 't' | 'T' => self.await_key(Awaiting::Find(c), count, Some(op)),
            ';' | ',' => self.repeat_find(Some(op), count, c == ','),
            _ => {
                if let Some(motion) = Motion::of_key(c) {
                    self.motion(Some(op), motion, count);
                }
            }
        }
    }

    /// A motion: moves the cursor, or gives `op` its range.
    fn motion(&mut self, op: Option<char>, motion: Motion, count: Option<usize>) {
        let lines = self.buffer.lines();
        let pos = self.buffer.cursor();
        let mut motion = motion;
        // `cw` on a word changes to its end, as vim does (`ce`).
        if op == Some('c')
            && motion == Motion::WordForward
            && lines[pos.row]
                .get(pos.col)
                .is_some_and(|a| !a.is_whitespace())
        {
            motion = Motion::WordEnd;
            if word_end_is_here(lines, pos) && count.unwrap_or(1) == 1 {
                self.operate('c', Range::Chars(pos, at(pos.row, pos.col + 1)));
                return;
            }
        }
        let Some((target, reach)) = motion_target(lines, pos, motion, count) else {
            return;
        };
        let Some(op) = op else {
            self.buffer.set_cursor(target);
            return;
        };
        let (from, to) = (pos.min(target), pos.max(target));
        let range = match reach {
            Reach::Lines => Range::Lines(from.row, to.row),
            Reach::Inclusive => {
                let len = lines[to.row].len();
                Range::Chars(from, at(to.row, (to.col + 1).min(len)))
            }
            // `dw` on a line's last word stops at the line's end.
            Reach::Exclusive if motion == Motion::WordForward && to.row > from.row => {
                let end = if first_non_blank(&lines[to.row]) < to.col {
                    to
                } else {
                    at(to.row - 1, lines[to.row - 1].len())
                };
                Range::Chars(from, end.max(from))
            }
            Reach::Exclusive => Range::Chars(from, to),
        };
        self.operate(op, range);
    }

    /// `;` (or `,`, `reverse`): the last find again.
    fn repeat_find(&mut self, op: Option<char>, count: Option<usize>, reverse: bool) {
        let Some(last) = self.vim.as_ref().and_then(|v| v.last_find) else {
            return;
        };
        let motion = if reverse { last.reversed() } else { last };
        // A `t` repeated from right before its match looks past it.
        if let Motion::Find {
            till: true,
            forward,
            ..
        } = motion
        {
            let pos = self.buffer.cursor();
            let nudged = if forward {
                at(pos.row, pos.col + 1)
            } else {
                at(pos.row, pos.col.saturating_sub(1))
            };
            let lines = self.buffer.lines();
            if let Some((target, _)) = motion_target(lines, nudged, motion, count)
                && target != pos
                && op.is_none()
            {
                self.buffer.set_cursor(target);
                return;
            }
        }
        self.motion(op, motion, count);
    }

    /// What an operator does to its range: `d` deletes, `y` copies, `c` deletes and
    /// starts inserting. The register takes the text either way.
    fn operate(&mut self, op: char, range: Range) {
        match (op, range) {
            ('y', Range::Lines(from, to)) => self.take_lines(from, to, false),
            ('d', Range::Lines(from, to)) => self.take_lines(from, to, true),
            ('c', Range::Lines(from, to)) => {
                self.checkpoint();
                self.leave_history();
                let removed = self.buffer.lines()[from..=to].to_vec();
                let end = at(to, self.buffer.lines()[to].len());
                self.buffer.delete_range(at(from, 0), end);
                self.set_register(removed, true);
                self.set_mode(VimMode::Insert);
            }
            ('y', Range::Chars(from, to)) => {
                let mut copy = self.buffer.clone();
                let taken = copy.delete_range(from, to);
                self.set_register(taken, false);
                self.buffer.set_cursor(from);
            }
            (_, Range::Chars(from, to)) => {
                if from == to && op == 'd' {
                    return;
                }
                self.checkpoint();
                self.leave_history();
                let taken = self.buffer.delete_range(from, to);
                if !taken.is_empty() {
                    self.set_register(taken, false);
                }
                if op == 'c' {
                    self.set_mode(VimMode::Insert);
                }
            }
            _ => {}
        }
    }

    /// A key with no operator before it.
    fn command(&mut self, c: char, count: Option<usize>) {
        let visual = self.vim_mode() == Some(VimMode::VisualLine);
        let pos = self.buffer.cursor();
        let row_len = self.buffer.lines()[pos.row].len();
        let n = count.unwrap_or(1);
        if visual {
            let anchor = self.vim.as_ref().map_or(pos.row, |v| v.anchor);
            let (from, to) = (anchor.min(pos.row), anchor.max(pos.row));
            match c {
                'd' | 'x' | 'y' | 'c' => {
                    self.set_mode(VimMode::Normal);
                    let op = if c == 'x' { 'd' } else { c };
                    self.operate(op, Range::Lines(from, to));
                }
                'V' => self.set_mode(VimMode::Normal),
                'g' => self.await_key(Awaiting::G, count, None),
                _ => {
                    if let Some(motion) = Motion::of_key(c) {
                        self.motion(None, motion, count);
                    }
                }
            }
            return;
        }
        match c {
            'd' | 'c' | 'y' => {
                if let Some(vim) = &mut self.vim {
                    vim.operator = Some((c, count));
                }
            }
            'g' => self.await_key(Awaiting::G, count, None),
            'f' | 'F' | 't' | 'T' => self.await_key(Awaiting::Find(c), count, None),
            'r' => self.await_key(Awaiting::Replace, count, None),
            ';' | ',' => self.repeat_find(None, count, c == ','),
            'x' if row_len > 0 => {
                let end = at(pos.row, (pos.col + n).min(row_len));
                self.operate('d', Range::Chars(pos, end));
            }
            'X' if pos.col > 0 => {
                self.operate(
                    'd',
                    Range::Chars(at(pos.row, pos.col.saturating_sub(n)), pos),
                );
            }
            'D' => self.motion(Some('d'), Motion::LineEnd, count),
            'C' => {
                if row_len == 0 {
                    self.enter_insert();
                } else {
                    self.motion(Some('c'), Motion::LineEnd, count);
                }
            }
            's' => {
                let end = at(pos.row, (pos.col + n).min(row_len));
                self.operate('c', Range::Chars(pos, end));
            }
            'Y' | 'S' => {
                let last_row = self.buffer.lines().len() - 1;
                let to = (pos.row + n - 1).min(last_row);
                self.operate(if c == 'Y' { 'y' } else { 'c' }, Range::Lines(pos.row, to));
            }
            '~' if row_len > 0 => self.toggle_case(n),
            'J' => self.join_lines(n.max(2) - 1),
            'p' | 'P' => self.put(c == 'p', n),
            'u' => {
                for _ in 0..n {
                    if let Some(previous) = self.vim.as_mut().and_then(|v| v.undo.pop()) {
                        self.leave_history();
                        self.buffer = previous;
                    }
                }
            }
            '.' => self.repeat_change(),
            'i' => self.enter_insert(),
            'a' => {
                if row_len > 0 {
                    self.buffer.set_cursor(at(pos.row, pos.col + 1));
                }
                self.enter_insert();
            }
            'I' => {
                let col = first_non_blank(&self.buffer.lines()[pos.row]);
                self.buffer.set_cursor(at(pos.row, col));
                self.enter_insert();
            }
            'A' => {
                self.buffer.line_end();
                self.enter_insert();
            }
            'o' => {
                self.enter_insert();
                self.buffer.line_end();
                self.edit(|b| b.insert_str("\n"));
            }
            'O' => {
                self.enter_insert();
                self.buffer.line_start();
                self.edit(|b| b.insert_str("\n"));
                self.buffer.set_cursor(at(pos.row, 0));
            }
            'V' => {
                if let Some(vim) = &mut self.vim {
                    vim.mode = VimMode::VisualLine;
                    vim.anchor = pos.row;
                }
            }
            _ => {
                if let Some(motion) = Motion::of_key(c) {
                    self.motion(None, motion, count);
                }
            }
        }
    }

    /// `.`: the keys of the last change again.
    fn repeat_change(&mut self) {
        let Some(keys) = self.vim.as_mut().map(|v| {
            v.replaying = true;
            v.last_change.clone()
        }) else {
            return;
        };
        for key in keys {
            if key.code == KeyCode::Esc {
                self.vim_escape();
            } else {
                self.handle_key(key);
            }
        }
        if let Some(vim) = &mut self.vim {
            vim.replaying = false;
        }
    }

    /// `r`: the `count` characters from the cursor become `with`.
    fn replace_chars(&mut self, with: char, count: usize) {
        let pos = self.buffer.cursor();
        let len = self.buffer.lines()[pos.row].len();
        if pos.col + count > len {
            return;
        }
        self.checkpoint();
        self.leave_history();
        self.buffer.delete_range(pos, at(pos.row, pos.col + count));
        self.buffer.insert_str(&with.to_string().repeat(count));
        self.buffer.set_cursor(at(pos.row, pos.col + count - 1));
    }

    /// `~`: the case of `count` characters from the cursor swapped; the cursor after them.
    fn toggle_case(&mut self, count: usize) {
        let pos = self.buffer.cursor();
        let len = self.buffer.lines()[pos.row].len();
        let end = at(pos.row, (pos.col + count).min(len));
        self.checkpoint();
        self.leave_history();
        let taken = self.buffer.delete_range(pos, end);
        let swapped: Vec<Atom> = taken
            .into_iter()
            .flatten()
            .map(|atom| match atom {
                Atom::Grapheme(g) => {
                    let swapped: String = g
                        .chars()
                        .flat_map(|c| {
                            if c.is_uppercase() {
                                c.to_lowercase().collect::<Vec<_>>()
                            } else {
                                c.to_uppercase().collect::<Vec<_>>()
                            }
                        })
                        .collect();
                    Atom::Grapheme(swapped.into())
                }
                paste => paste,
            })
            .collect();
        self.buffer.insert_lines(vec![swapped]);
    }

    /// `J`: `joins` following lines onto this one, their leading blanks replaced by one
    /// space (none before an empty line or a `)`).
    fn join_lines(&mut self, joins: usize) {
        let row = self.buffer.cursor().row;
        if row + 1 >= self.buffer.lines().len() {
            return;
        }
        self.checkpoint();
        self.leave_history();
        for _ in 0..joins {
            let lines = self.buffer.lines();
            if row + 1 >= lines.len() {
                break;
            }
            let end = lines[row].len();
            let next = &lines[row + 1];
            let skip = first_non_blank(next);
            let space = end > 0
                && skip < next.len()
                && !lines[row][end - 1].is_whitespace()
                && !matches!(&next[skip], Atom::Grapheme(g) if g.as_ref() == ")");
            self.buffer.delete_range(at(row, end), at(row + 1, skip));
            if space {
                self.buffer.insert_str(" ");
            }
            self.buffer.set_cursor(at(row, end));
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

    /// `p` (after the cursor or below its line) and `P` (before it or above), the
    /// register `times` over as one block.
    fn put(&mut self, after: bool, times: usize) {
        let Some(mut register) = self.vim.as_ref().map(|v| v.register.clone()) else {
            return;
        };
        if register.lines.is_empty() {
            return;
        }
        let once = std::mem::take(&mut register.lines);
        for _ in 0..times {
            match register.lines.last_mut() {
                // A run of text joins the copy before it.
                Some(last) if !register.linewise => {
                    let mut copy = once.clone();
                    last.append(&mut copy[0]);
                    register.lines.extend(copy.into_iter().skip(1));
                }
                _ => register.lines.extend(once.iter().cloned()),
            }
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

/// Whether the word under `pos` ends right there (`cw` on a word's last letter changes
/// just that letter).
fn word_end_is_here(lines: &[Vec<Atom>], pos: TextPosition) -> bool {
    word_object(lines, pos, false).is_some_and(|(_, end)| end.col == pos.col + 1)
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
}
