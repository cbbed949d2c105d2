//! The edits vim commands make on whole characters and lines: `r` replace, `~` case,
//! `J` join, taking lines into the register (`dd`, `yy`) and putting it back (`p`, `P`).

use super::Register;
use crate::composer::Composer;
use crate::composer::buffer::{Atom, TextBuffer};
use crate::composer::vim_motion::{at, first_non_blank};

impl Composer {
    /// `r`: the `count` characters from the cursor become `with`.
    pub(super) fn replace_chars(&mut self, with: char, count: usize) {
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
    pub(super) fn toggle_case(&mut self, count: usize) {
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
    pub(super) fn join_lines(&mut self, joins: usize) {
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
    pub(super) fn take_lines(&mut self, from: usize, to: usize, delete: bool) {
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

    pub(super) fn set_register(&mut self, lines: Vec<Vec<Atom>>, linewise: bool) {
        if let Some(vim) = &mut self.vim {
            vim.register = Register { lines, linewise };
        }
    }

    /// `p` (after the cursor or below its line) and `P` (before it or above), the
    /// register `times` over as one block.
    pub(super) fn put(&mut self, after: bool, times: usize) {
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
