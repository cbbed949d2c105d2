//! The composer's text: lines of grapheme clusters plus atomic paste placeholders, and a
//! cursor that always sits on a cluster boundary. Every edit re-segments the lines it
//! touched, so clusters that merge or split across an edit (combining marks, ZWJ emoji,
//! regional-indicator flags, Hangul jamo) stay whole and the cursor never lands inside one.

use unicode_segmentation::UnicodeSegmentation;

/// One unit the cursor steps over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Atom {
    /// One extended grapheme cluster; never contains a line break.
    Grapheme(Box<str>),
    /// A collapsed paste, shown as `label` and expanded on submit; deleted as one unit.
    Paste {
        /// Which paste this is; the composer keeps its text under this id.
        id: u32,
        /// The placeholder shown in its place (`[Pasted text #1 +12 lines]`).
        label: Box<str>,
    },
}

impl Atom {
    pub(crate) fn is_whitespace(&self) -> bool {
        matches!(self, Atom::Grapheme(g) if g.chars().next().is_some_and(char::is_whitespace))
    }

    fn is_word(&self) -> bool {
        match self {
            Atom::Grapheme(g) => g
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_'),
            Atom::Paste { .. } => true,
        }
    }
}

/// A place in the text: logical line and atom index within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct TextPosition {
    /// The logical line, from 0.
    pub row: usize,
    pub(crate) col: usize,
}

/// Lines of atoms (never empty) and the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextBuffer {
    lines: Vec<Vec<Atom>>,
    cursor: TextPosition,
}

impl Default for TextBuffer {
    fn default() -> Self {
        TextBuffer {
            lines: vec![Vec::new()],
            cursor: TextPosition::default(),
        }
    }
}

/// Keeps what a composer may hold: line breaks as `\n` (CR LF and lone CR folded), tabs,
/// and no other control characters (they would corrupt the terminal).
pub fn sanitize(text: &str) -> String {
    let folded = text.replace("\r\n", "\n").replace('\r', "\n");
    folded
        .chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

fn graphemes(text: &str) -> impl Iterator<Item = Atom> + '_ {
    text.graphemes(true).map(|g| Atom::Grapheme(g.into()))
}

/// Re-segments the runs of text in `line` and maps `cursor` (an atom index) to the new
/// atoms, moving it forward to the next cluster boundary if the old one was swallowed.
fn normalize(line: &mut Vec<Atom>, cursor: usize) -> usize {
    let old = std::mem::take(line);
    let len = old.len();
    let mut run = String::new();
    let mut run_cursor: Option<usize> = None;
    let mut new_cursor = None;
    let mut flush = |run: &mut String, run_cursor: &mut Option<usize>, out: &mut Vec<Atom>| {
        let mut offset = 0;
        for g in run.graphemes(true) {
            if let Some(at) = *run_cursor
                && at <= offset
            {
                new_cursor = Some(out.len());
                *run_cursor = None;
            }
            out.push(Atom::Grapheme(g.into()));
            offset += g.len();
        }
        if run_cursor.take().is_some() {
            new_cursor = Some(out.len());
        }
        run.clear();
    };
    for (i, atom) in old.into_iter().enumerate() {
        if i == cursor {
            run_cursor = Some(run.len());
        }
        match atom {
            Atom::Grapheme(g) => run.push_str(&g),
            paste @ Atom::Paste { .. } => {
                flush(&mut run, &mut run_cursor, line);
                line.push(paste);
            }
        }
    }
    if cursor >= len {
        run_cursor = Some(run.len());
    }
    flush(&mut run, &mut run_cursor, line);
    new_cursor.unwrap_or(line.len())
}

impl TextBuffer {
    /// The logical lines, each a run of atoms; there is always at least one.
    pub fn lines(&self) -> &[Vec<Atom>] {
        &self.lines
    }

    /// Where the cursor is.
    pub fn cursor(&self) -> TextPosition {
        self.cursor
    }

    /// Whether the buffer holds no text (one empty line).
    pub fn is_empty(&self) -> bool {
        self.lines.len() == 1 && self.lines[0].is_empty()
    }

    /// The text with each placeholder replaced by `paste(id, label)`.
    pub fn text_with(&self, mut paste: impl FnMut(u32, &str) -> String) -> String {
        let mut out = String::new();
        for (i, line) in self.lines.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            for atom in line {
                match atom {
                    Atom::Grapheme(g) => out.push_str(g),
                    Atom::Paste { id, label } => out.push_str(&paste(*id, label)),
                }
            }
        }
        out
    }

    /// The text as shown (placeholders as their labels).
    pub fn display_text(&self) -> String {
        self.text_with(|_, label| label.to_string())
    }

    /// The atoms of the current line before the cursor.
    pub fn before_cursor(&self) -> &[Atom] {
        &self.lines[self.cursor.row][..self.cursor.col]
    }

    /// Moves the cursor, clamped into the text.
    pub fn set_cursor(&mut self, pos: TextPosition) {
        let row = pos.row.min(self.lines.len() - 1);
        self.cursor = TextPosition {
            row,
            col: pos.col.min(self.lines[row].len()),
        };
    }

    /// The position after the last atom of the last line.
    pub fn end(&self) -> TextPosition {
        let row = self.lines.len() - 1;
        TextPosition {
            row,
            col: self.lines[row].len(),
        }
    }

    /// Inserts lines of atoms at the cursor (the first joins the current line, the last
    /// takes its rest) and leaves the cursor after them.
    pub fn insert_lines(&mut self, mut new: Vec<Vec<Atom>>) {
        if new.is_empty() {
            return;
        }
        let TextPosition { row, col } = self.cursor;
        let tail = self.lines[row].split_off(col);
        let first = new.remove(0);
        self.lines[row].extend(first);
        let mut last_row = row;
        for (i, line) in new.into_iter().enumerate() {
            self.lines.insert(row + 1 + i, line);
            last_row = row + 1 + i;
        }
        let cursor_col = self.lines[last_row].len();
        self.lines[last_row].extend(tail);
        if last_row != row {
            let len = self.lines[row].len();
            normalize(&mut self.lines[row], len);
        }
        let col = normalize(&mut self.lines[last_row], cursor_col);
        self.cursor = TextPosition { row: last_row, col };
    }

    /// Inserts text (sanitized; `\n` breaks lines) at the cursor.
    pub fn insert_str(&mut self, text: &str) {
        let clean = sanitize(text);
        let lines = clean.split('\n').map(|l| graphemes(l).collect()).collect();
        self.insert_lines(lines);
    }

    pub(crate) fn insert_paste(&mut self, id: u32, label: &str) {
        self.insert_lines(vec![vec![Atom::Paste {
            id,
            label: label.into(),
        }]]);
    }

    /// Removes the text between two positions (either order), returning it as lines of
    /// atoms; the cursor ends where the range started.
    pub fn delete_range(&mut self, a: TextPosition, b: TextPosition) -> Vec<Vec<Atom>> {
        let (from, to) = if a <= b { (a, b) } else { (b, a) };
        if from == to {
            self.cursor = from;
            return Vec::new();
        }
        let removed = if from.row == to.row {
            vec![self.lines[from.row].drain(from.col..to.col).collect()]
        } else {
            let tail = self.lines[to.row].split_off(to.col);
            let mut removed: Vec<Vec<Atom>> = vec![self.lines[from.row].split_off(from.col)];
            removed.extend(self.lines.drain(from.row + 1..=to.row));
            self.lines[from.row].extend(tail);
            removed
        };
        let col = normalize(&mut self.lines[from.row], from.col);
        self.cursor = TextPosition { row: from.row, col };
        removed
    }

    /// The position one atom (or line break) to the left, if any.
    pub fn prev(&self, pos: TextPosition) -> Option<TextPosition> {
        if pos.col > 0 {
            Some(TextPosition {
                col: pos.col - 1,
                ..pos
            })
        } else if pos.row > 0 {
            Some(TextPosition {
                row: pos.row - 1,
                col: self.lines[pos.row - 1].len(),
            })
        } else {
            None
        }
    }

    /// The position one atom (or line break) to the right, if any.
    pub fn next(&self, pos: TextPosition) -> Option<TextPosition> {
        if pos.col < self.lines[pos.row].len() {
            Some(TextPosition {
                col: pos.col + 1,
                ..pos
            })
        } else if pos.row + 1 < self.lines.len() {
            Some(TextPosition {
                row: pos.row + 1,
                col: 0,
            })
        } else {
            None
        }
    }

    /// The atom just before `pos` (`None` at a line start).
    fn atom_before(&self, pos: TextPosition) -> Option<&Atom> {
        pos.col
            .checked_sub(1)
            .and_then(|c| self.lines[pos.row].get(c))
    }

    fn atom_at(&self, pos: TextPosition) -> Option<&Atom> {
        self.lines[pos.row].get(pos.col)
    }

    pub(crate) fn move_left(&mut self) {
        if let Some(p) = self.prev(self.cursor) {
            self.cursor = p;
        }
    }

    pub(crate) fn move_right(&mut self) {
        if let Some(p) = self.next(self.cursor) {
            self.cursor = p;
        }
    }

    /// One atom left, not past the line's start (vim's `h`).
    pub fn move_left_in_line(&mut self) {
        self.cursor.col = self.cursor.col.saturating_sub(1);
    }

    pub(crate) fn line_start(&mut self) {
        self.cursor.col = 0;
    }

    pub(crate) fn line_end(&mut self) {
        self.cursor.col = self.lines[self.cursor.row].len();
    }

    /// Steps left over a run: first while `skip` holds, then while `take` holds. A line
    /// break counts as whitespace (neither word nor punctuation).
    fn scan_left(
        &self,
        skip: impl Fn(Option<&Atom>) -> bool,
        take: impl Fn(&Atom) -> bool,
    ) -> TextPosition {
        let mut pos = self.cursor;
        while let Some(p) = self.prev(pos) {
            if !skip(self.atom_before(pos)) {
                break;
            }
            pos = p;
        }
        while let Some(a) = self.atom_before(pos) {
            if !take(a) {
                break;
            }
            pos.col -= 1;
        }
        pos
    }

    fn scan_right(
        &self,
        skip: impl Fn(Option<&Atom>) -> bool,
        take: impl Fn(&Atom) -> bool,
    ) -> TextPosition {
        let mut pos = self.cursor;
        while let Some(p) = self.next(pos) {
            if !skip(self.atom_at(pos)) {
                break;
            }
            pos = p;
        }
        while let Some(a) = self.atom_at(pos) {
            if !take(a) {
                break;
            }
            pos.col += 1;
        }
        pos
    }

    /// Where Alt+B lands: the start of the word before the cursor.
    pub fn word_left_position(&self) -> TextPosition {
        self.scan_left(|a| !a.is_some_and(Atom::is_word), Atom::is_word)
    }

    /// Where Alt+F lands: the end of the word after the cursor.
    pub fn word_right_position(&self) -> TextPosition {
        self.scan_right(|a| !a.is_some_and(Atom::is_word), Atom::is_word)
    }

    /// Where Ctrl+W deletes back to: over whitespace, then over a word or a run of
    /// punctuation.
    pub fn word_rubout_position(&self) -> TextPosition {
        let after_space = self.scan_left(|a| a.is_none_or(Atom::is_whitespace), |_| false);
        let word_before = self.atom_before(after_space).is_some_and(Atom::is_word);
        let mut pos = after_space;
        while let Some(a) = self.atom_before(pos) {
            let same = if word_before {
                a.is_word()
            } else {
                !a.is_word() && !a.is_whitespace()
            };
            if !same {
                break;
            }
            pos.col -= 1;
        }
        pos
    }

    /// Where Ctrl+U deletes back to: the line start, or the previous line's end when the
    /// cursor already is at a line start.
    pub fn line_start_kill_position(&self) -> TextPosition {
        if self.cursor.col == 0 {
            self.prev(self.cursor).unwrap_or(self.cursor)
        } else {
            TextPosition {
                col: 0,
                ..self.cursor
            }
        }
    }

    /// Where Ctrl+K deletes to: the line end, or the next line's start at a line end.
    pub fn line_end_kill_position(&self) -> TextPosition {
        let len = self.lines[self.cursor.row].len();
        if self.cursor.col == len {
            self.next(self.cursor).unwrap_or(self.cursor)
        } else {
            TextPosition {
                col: len,
                ..self.cursor
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(text: &str) -> TextBuffer {
        let mut b = TextBuffer::default();
        b.insert_str(text);
        b
    }

    fn atoms(b: &TextBuffer, row: usize) -> Vec<String> {
        b.lines()[row]
            .iter()
            .map(|a| match a {
                Atom::Grapheme(g) => g.to_string(),
                Atom::Paste { label, .. } => label.to_string(),
            })
            .collect()
    }

    #[test]
    fn insertion_keeps_clusters_whole_when_they_merge() {
        let mut b = buffer("e");
        b.insert_str("\u{301}");
        assert_eq!(atoms(&b, 0), vec!["e\u{301}"]);
        assert_eq!(b.cursor().col, 1);
        // A flag forms from two regional indicators typed one by one.
        let mut b = buffer("🇰");
        b.insert_str("🇷");
        assert_eq!(atoms(&b, 0), vec!["🇰🇷"]);
        assert_eq!(b.cursor().col, 1);
    }

    #[test]
    fn deleting_between_indicators_merges_them_and_snaps_the_cursor() {
        let mut b = buffer("🇰x🇷");
        b.set_cursor(TextPosition { row: 0, col: 2 });
        b.delete_range(
            TextPosition { row: 0, col: 1 },
            TextPosition { row: 0, col: 2 },
        );
        assert_eq!(atoms(&b, 0), vec!["🇰🇷"]);
        assert_eq!(b.cursor().col, 1);
    }

    #[test]
    fn line_breaks_split_and_deletion_across_lines_joins() {
        let mut b = buffer("ab\r\ncd\ref");
        assert_eq!(b.lines().len(), 3);
        assert_eq!(b.display_text(), "ab\ncd\nef");
        let removed = b.delete_range(
            TextPosition { row: 0, col: 1 },
            TextPosition { row: 2, col: 1 },
        );
        assert_eq!(b.display_text(), "af");
        assert_eq!(removed.len(), 3);
        assert_eq!(b.cursor(), TextPosition { row: 0, col: 1 });
    }

    #[test]
    fn control_characters_are_dropped_but_tabs_kept() {
        let b = buffer("a\u{1b}[31mb\tc\u{7}");
        assert_eq!(b.display_text(), "a[31mb\tc");
    }

    #[test]
    fn word_positions_follow_emacs_and_readline() {
        let mut b = buffer("foo.bar  baz");
        assert_eq!(b.word_left_position().col, 9);
        assert_eq!(b.word_rubout_position().col, 9);
        b.set_cursor(TextPosition { row: 0, col: 7 });
        assert_eq!(b.word_rubout_position().col, 4);
        assert_eq!(b.word_left_position().col, 4);
        b.set_cursor(TextPosition { row: 0, col: 0 });
        assert_eq!(b.word_right_position().col, 3);
        b.set_cursor(TextPosition { row: 0, col: 3 });
        assert_eq!(b.word_right_position().col, 7);
        let b = buffer("foo.. ");
        assert_eq!(b.word_rubout_position().col, 3);
    }

    #[test]
    fn word_motions_cross_line_breaks() {
        let mut b = buffer("one\ntwo");
        b.set_cursor(TextPosition { row: 1, col: 0 });
        assert_eq!(b.word_left_position(), TextPosition { row: 0, col: 0 });
        b.set_cursor(TextPosition { row: 0, col: 3 });
        assert_eq!(b.word_right_position(), TextPosition { row: 1, col: 3 });
    }

    #[test]
    fn a_paste_placeholder_is_one_atom() {
        let mut b = buffer("x");
        b.insert_paste(1, "[Pasted text #1 +9 lines]");
        b.insert_str("y");
        assert_eq!(b.lines()[0].len(), 3);
        b.set_cursor(TextPosition { row: 0, col: 2 });
        let removed = b.delete_range(
            TextPosition { row: 0, col: 1 },
            TextPosition { row: 0, col: 2 },
        );
        assert!(matches!(removed[0][0], Atom::Paste { id: 1, .. }));
        assert_eq!(b.display_text(), "xy");
    }
}
