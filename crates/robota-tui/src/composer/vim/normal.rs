//! Normal and visual line mode keys: counts, keys that wait for the next one (`f`, `r`,
//! operators), operators over motions and text objects, the single-key commands, and `.`
//! replaying the last change.

use crossterm::event::KeyCode;

use super::{Awaiting, MAX_COUNT, Pending, Range, VimMode};
use crate::composer::Composer;
use crate::composer::buffer::{Atom, TextPosition};
use crate::composer::vim_motion::{Motion, Reach, at, first_non_blank, motion_target, word_object};

impl Composer {
    pub(super) fn vim_char(&mut self, c: char) {
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
}

/// `a × b` of two optional counts (`2d3w` deletes six words).
fn times(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some((a.unwrap_or(1) * b.unwrap_or(1)).min(MAX_COUNT)),
    }
}

/// Whether the word under `pos` ends right there (`cw` on a word's last letter changes
/// just that letter).
fn word_end_is_here(lines: &[Vec<Atom>], pos: TextPosition) -> bool {
    word_object(lines, pos, false).is_some_and(|(_, end)| end.col == pos.col + 1)
}
