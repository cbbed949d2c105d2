//! Where a streamed markdown answer may be cut into independently rendered blocks. Lines
//! are classified as they complete (fence openers and closers, ATX headings, list items,
//! blank lines) and a boundary is placed only where CommonMark agrees the previous block
//! has ended: after a blank line before an unindented line, before a fence or heading, and
//! between the items of a top-level list (so a long list, too, is finished item by item).
//! Everything here looks at one line at a time, so finding boundaries costs O(length).

/// The leading columns of spaces (a tab counts to the next multiple of 4).
pub(crate) fn indent(line: &str) -> usize {
    let mut col = 0;
    for c in line.chars() {
        match c {
            ' ' => col += 1,
            '\t' => col += 4 - col % 4,
            _ => break,
        }
    }
    col
}

/// An open fenced code block: its fence character, length and indentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fence {
    pub ch: char,
    pub len: usize,
    pub indent: usize,
    pub info: String,
}

impl Fence {
    /// The fence a line opens, if it is an opener (indent up to 3).
    pub(crate) fn open(line: &str) -> Option<Fence> {
        let indent = indent(line);
        if indent > 3 {
            return None;
        }
        let rest = line.trim_start();
        let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
        let len = rest.chars().take_while(|c| *c == ch).count();
        if len < 3 {
            return None;
        }
        let info = rest[len * ch.len_utf8()..].trim();
        if ch == '`' && info.contains('`') {
            return None;
        }
        Some(Fence {
            ch,
            len,
            indent,
            info: info.to_string(),
        })
    }

    /// Whether `line` closes this fence.
    pub(crate) fn closes(&self, line: &str) -> bool {
        if indent(line) > 3 {
            return false;
        }
        let rest = line.trim_start();
        let run = rest.chars().take_while(|c| *c == self.ch).count();
        run >= self.len && rest[run * self.ch.len_utf8()..].trim().is_empty()
    }

    /// A content line with the opener's indentation removed.
    pub(crate) fn strip<'a>(&self, line: &'a str) -> &'a str {
        let spaces = line
            .bytes()
            .take(self.indent)
            .take_while(|b| *b == b' ')
            .count();
        &line[spaces..]
    }
}

/// Whether a line is an ATX heading (`# …` with up to 3 spaces of indent).
pub(crate) fn is_heading(line: &str) -> bool {
    if indent(line) > 3 {
        return false;
    }
    let rest = line.trim_start();
    let hashes = rest.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&hashes)
        && rest[hashes..]
            .chars()
            .next()
            .is_none_or(|c| c == ' ' || c == '\t')
}

/// The kind of marker a list item line starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListMarker {
    Bullet(char),
    Ordered { delimiter: char, start: u64 },
}

impl ListMarker {
    /// The marker of an unindented list item line.
    pub(crate) fn of(line: &str) -> Option<(ListMarker, bool)> {
        let (marker, rest) = match line.chars().next()? {
            c @ ('-' | '*' | '+') => (ListMarker::Bullet(c), &line[1..]),
            '0'..='9' => {
                let digits = line.chars().take_while(char::is_ascii_digit).count();
                if digits > 9 {
                    return None;
                }
                let delimiter = line[digits..].chars().next()?;
                if delimiter != '.' && delimiter != ')' {
                    return None;
                }
                let start = line[..digits].parse().ok()?;
                (
                    ListMarker::Ordered { delimiter, start },
                    &line[digits + 1..],
                )
            }
            _ => return None,
        };
        if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
            return None;
        }
        // `---` / `***` are thematic breaks, not items.
        if let ListMarker::Bullet(c) = marker {
            let no_space: String = line.chars().filter(|x| !x.is_whitespace()).collect();
            if no_space.len() >= 3 && no_space.chars().all(|x| x == c) {
                return None;
            }
        }
        Some((marker, rest.trim().is_empty()))
    }

    /// Whether two markers continue one list.
    pub(crate) fn same_list(self, other: ListMarker) -> bool {
        match (self, other) {
            (ListMarker::Bullet(a), ListMarker::Bullet(b)) => a == b,
            (
                ListMarker::Ordered { delimiter: a, .. },
                ListMarker::Ordered { delimiter: b, .. },
            ) => a == b,
            _ => false,
        }
    }

    /// Whether an item with this marker may interrupt a paragraph (CommonMark 5.2).
    pub(crate) fn interrupts_paragraph(self, empty: bool) -> bool {
        !empty
            && match self {
                ListMarker::Bullet(_) => true,
                ListMarker::Ordered { start, .. } => start == 1,
            }
    }
}

/// What the currently open markdown block is, for boundary decisions.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OpenBlock {
    /// The list marker when the block started as an unindented list item.
    pub list: Option<ListMarker>,
    /// Whether the last line was blank.
    pub after_blank: bool,
}

/// Whether a non-blank `line` starts a new block after the open one.
pub(crate) fn starts_new_block(open: &OpenBlock, line: &str) -> bool {
    let ind = indent(line);
    let in_list = open.list.is_some();
    let top_level = if in_list { ind == 0 } else { ind <= 3 };
    if open.after_blank && (ind == 0 || (!in_list && ind <= 3)) {
        return true;
    }
    if top_level && (Fence::open(line).is_some() || is_heading(line)) {
        return true;
    }
    if ind == 0
        && let Some((marker, empty)) = ListMarker::of(line)
    {
        return open.list.is_some_and(|m| m.same_list(marker))
            || marker.interrupts_paragraph(empty);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_open_and_close() {
        let f = Fence::open("```rust title").unwrap();
        assert_eq!((f.ch, f.len, f.info.as_str()), ('`', 3, "rust title"));
        assert!(f.closes("```"));
        assert!(f.closes("  ````  "));
        assert!(!f.closes("``"));
        assert!(!f.closes("```rust"));
        assert!(Fence::open("``` a`b").is_none());
        assert!(Fence::open("    ```").is_none());
        let t = Fence::open("  ~~~~").unwrap();
        assert!(!t.closes("~~~"));
        assert_eq!(t.strip("    x"), "  x");
        assert_eq!(t.strip(" y"), "y");
    }

    #[test]
    fn headings_and_list_markers() {
        assert!(is_heading("# a"));
        assert!(is_heading("###"));
        assert!(!is_heading("#hashtag"));
        assert!(!is_heading("####### seven"));
        assert_eq!(
            ListMarker::of("12. x"),
            Some((
                ListMarker::Ordered {
                    delimiter: '.',
                    start: 12
                },
                false
            ))
        );
        assert_eq!(ListMarker::of("- "), Some((ListMarker::Bullet('-'), true)));
        assert_eq!(ListMarker::of("---"), None);
        assert_eq!(ListMarker::of("-x"), None);
        assert_eq!(ListMarker::of("1.5 apples"), None);
    }

    #[test]
    fn boundaries() {
        let para = OpenBlock::default();
        let after_blank = OpenBlock {
            after_blank: true,
            ..OpenBlock::default()
        };
        let list = OpenBlock {
            list: Some(ListMarker::Bullet('-')),
            after_blank: false,
        };
        assert!(!starts_new_block(&para, "more text"));
        assert!(starts_new_block(&after_blank, "new paragraph"));
        assert!(!starts_new_block(&after_blank, "    indented code"));
        assert!(starts_new_block(&para, "```"));
        assert!(starts_new_block(&para, "## Heading"));
        assert!(starts_new_block(&para, "- item"));
        assert!(!starts_new_block(&para, "2. not a list here"));
        assert!(starts_new_block(&list, "- next"));
        assert!(!starts_new_block(&list, "  - nested"));
        assert!(!starts_new_block(&list, "  ```"));
        assert!(!starts_new_block(&list, "lazy continuation"));
    }
}
