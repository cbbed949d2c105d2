//! Where vim's motions and text objects go in the composer's text: `h j k l w b e 0 ^ $
//! gg G f F t T ; ,` with a count, each with the way an operator takes its range
//! (exclusive, inclusive, whole lines), and `iw`/`aw`. Pure functions of the lines and a
//! position; the commands that use them are in `vim/`.

use super::buffer::{Atom, TextPosition};

pub(super) fn at(row: usize, col: usize) -> TextPosition {
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
    match cells.get(i) {
        Some((p, _)) => *p,
        // Past the last word: the end of the text.
        None => at(lines.len() - 1, lines[lines.len() - 1].len()),
    }
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

/// The first non-blank atom of a line (its end when it is all blank).
pub(super) fn first_non_blank(line: &[Atom]) -> usize {
    line.iter()
        .position(|a| !a.is_whitespace())
        .unwrap_or(line.len())
}

/// A motion: where the cursor goes, and what an operator before it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Motion {
    Left,
    Right,
    Down,
    Up,
    WordForward,
    WordBack,
    WordEnd,
    LineStart,
    FirstNonBlank,
    LineEnd,
    /// `gg`: the first line, or line N with a count.
    FirstLine,
    /// `G`: the last line, or line N with a count.
    LastLine,
    /// `f F t T` and the character: forward or not, up to it (`t T`) or onto it.
    Find {
        target: char,
        forward: bool,
        till: bool,
    },
}

impl Motion {
    /// The motion a key names on its own, if any.
    pub(super) fn of_key(c: char) -> Option<Motion> {
        Some(match c {
            'h' => Motion::Left,
            'l' | ' ' => Motion::Right,
            'j' => Motion::Down,
            'k' => Motion::Up,
            'w' | 'W' => Motion::WordForward,
            'b' | 'B' => Motion::WordBack,
            'e' | 'E' => Motion::WordEnd,
            '0' => Motion::LineStart,
            '^' => Motion::FirstNonBlank,
            '$' => Motion::LineEnd,
            'G' => Motion::LastLine,
            _ => return None,
        })
    }

    /// `;` repeats a find as it was, `,` the other way.
    pub(super) fn reversed(self) -> Motion {
        match self {
            Motion::Find {
                target,
                forward,
                till,
            } => Motion::Find {
                target,
                forward: !forward,
                till,
            },
            other => other,
        }
    }
}

/// How an operator takes the text between the cursor and a motion's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reach {
    /// Up to the end, not including it (`w`, `b`, `h`, `0`).
    Exclusive,
    /// Including the atom at the end (`e`, `$`, `f`, `t`).
    Inclusive,
    /// The whole lines from the cursor's to the end's (`j`, `k`, `gg`, `G`).
    Lines,
}

/// Where `motion`, taken `count` times from `from`, ends, and how an operator reaches
/// there; `None` when it cannot move (a find with no match, `j` on the last line).
pub(super) fn motion_target(
    lines: &[Vec<Atom>],
    from: TextPosition,
    motion: Motion,
    count: Option<usize>,
) -> Option<(TextPosition, Reach)> {
    let n = count.unwrap_or(1).max(1);
    let last_row = lines.len() - 1;
    let len = |row: usize| lines[row].len();
    Some(match motion {
        Motion::Left => (at(from.row, from.col.saturating_sub(n)), Reach::Exclusive),
        Motion::Right => (
            at(from.row, (from.col + n).min(len(from.row))),
            Reach::Exclusive,
        ),
        Motion::Down if from.row < last_row => {
            let row = (from.row + n).min(last_row);
            (at(row, from.col.min(len(row))), Reach::Lines)
        }
        Motion::Up if from.row > 0 => {
            let row = from.row.saturating_sub(n);
            (at(row, from.col.min(len(row))), Reach::Lines)
        }
        Motion::Down | Motion::Up => return None,
        Motion::WordForward => {
            let mut pos = from;
            for _ in 0..n {
                pos = word_forward(lines, pos);
            }
            (pos, Reach::Exclusive)
        }
        Motion::WordBack => {
            let mut pos = from;
            for _ in 0..n {
                pos = word_back(lines, pos);
            }
            (pos, Reach::Exclusive)
        }
        Motion::WordEnd => {
            let mut pos = from;
            for _ in 0..n {
                pos = word_end(lines, pos);
            }
            (pos, Reach::Inclusive)
        }
        Motion::LineStart => (at(from.row, 0), Reach::Exclusive),
        Motion::FirstNonBlank => (
            at(from.row, first_non_blank(&lines[from.row])),
            Reach::Exclusive,
        ),
        Motion::LineEnd => {
            let row = (from.row + n - 1).min(last_row);
            (at(row, len(row).saturating_sub(1)), Reach::Inclusive)
        }
        Motion::FirstLine | Motion::LastLine => {
            let row = match (count, motion) {
                (Some(line), _) => line.max(1).min(lines.len()) - 1,
                (None, Motion::FirstLine) => 0,
                (None, _) => last_row,
            };
            (at(row, first_non_blank(&lines[row])), Reach::Lines)
        }
        Motion::Find {
            target,
            forward,
            till,
        } => {
            let line = &lines[from.row];
            let is_target =
                |col: usize| matches!(&line[col], Atom::Grapheme(g) if g.chars().eq([target]));
            let mut col = from.col;
            for _ in 0..n {
                col = if forward {
                    (col + 1..line.len()).find(|&c| is_target(c))?
                } else {
                    (0..col).rev().find(|&c| is_target(c))?
                };
            }
            let col = match (till, forward) {
                (true, true) => col - 1,
                (true, false) => col + 1,
                (false, _) => col,
            };
            let reach = if forward {
                Reach::Inclusive
            } else {
                Reach::Exclusive
            };
            (at(from.row, col), reach)
        }
    })
}

/// `iw` (`around`: `aw`, with the blanks after the word, or before it at a line's end):
/// the range `[start, end)` of the word, punctuation run or blank run under `pos`.
pub(super) fn word_object(
    lines: &[Vec<Atom>],
    pos: TextPosition,
    around: bool,
) -> Option<(TextPosition, TextPosition)> {
    let line = &lines[pos.row];
    if line.is_empty() {
        return None;
    }
    let col = pos.col.min(line.len() - 1);
    let kind = class(line.get(col));
    let mut start = col;
    while start > 0 && class(line.get(start - 1)) == kind {
        start -= 1;
    }
    let mut end = col + 1;
    while end < line.len() && class(line.get(end)) == kind {
        end += 1;
    }
    if around && kind != Class::Blank {
        let trailing = end;
        while end < line.len() && class(line.get(end)) == Class::Blank {
            end += 1;
        }
        if end == trailing {
            while start > 0 && class(line.get(start - 1)) == Class::Blank {
                start -= 1;
            }
        }
    }
    Some((at(pos.row, start), at(pos.row, end)))
}
