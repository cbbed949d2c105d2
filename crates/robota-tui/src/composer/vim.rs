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
#[path = "vim_tests.rs"]
mod tests;
