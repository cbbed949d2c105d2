//! Moving through the command line: looking ahead, skipping blanks, comments, line
//! continuations and separators, recognising reserved words, and recording why the line
//! is opaque.

use super::MAX_DEPTH;
use super::grammar::Parser;

/// Words the shell reserves at the start of a command.
const RESERVED: &[&str] = &[
    "if", "then", "elif", "else", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "select", "in", "function", "time", "coproc", "{", "}", "!", "[[", "]]",
];

impl Parser<'_> {
    pub(super) fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    pub(super) fn starts_with(&self, text: &str) -> bool {
        (self.pos..)
            .zip(text.chars())
            .all(|(i, c)| self.chars.get(i) == Some(&c))
    }

    pub(super) fn opaque(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        if !self.out.opaque.contains(&reason) {
            self.out.opaque.push(reason);
        }
    }

    /// Runs `f` one level deeper; past the limit the rest of the line is opaque.
    pub(super) fn nested(&mut self, f: impl FnOnce(&mut Self)) {
        if self.depth >= MAX_DEPTH {
            self.opaque("the command nests too deeply to be read");
            self.pos = self.chars.len();
            return;
        }
        self.depth += 1;
        f(self);
        self.depth -= 1;
    }

    pub(super) fn skip_blanks(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' => self.pos += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    pub(super) fn skip_linebreaks(&mut self) {
        loop {
            self.skip_blanks();
            if self.peek() == Some('\n') {
                self.newline();
            } else {
                break;
            }
        }
    }

    pub(super) fn skip_separators(&mut self) {
        loop {
            self.skip_blanks();
            match (self.peek(), self.peek_at(1)) {
                (Some('\n'), _) => self.newline(),
                (Some(';'), next) if !matches!(next, Some(';' | '&')) => self.pos += 1,
                (Some('&'), next) if !matches!(next, Some('&' | '>')) => self.pos += 1,
                _ => break,
            }
        }
    }

    /// The reserved word at the cursor, if the next word is one (unquoted, whole).
    pub(super) fn peek_keyword(&self) -> Option<&'static str> {
        let mut end = self.pos;
        while let Some(c) = self.chars.get(end) {
            if matches!(
                c,
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')'
            ) {
                break;
            }
            if matches!(c, '\'' | '"' | '\\' | '$' | '`') {
                return None;
            }
            end += 1;
        }
        if end == self.pos || end - self.pos > 8 {
            return None;
        }
        let word: String = self.chars[self.pos..end].iter().collect();
        RESERVED.iter().copied().find(|k| *k == word)
    }

    pub(super) fn expect(&mut self, keyword: &str) -> bool {
        self.skip_linebreaks();
        if self.peek_keyword() == Some(keyword) {
            self.pos += keyword.len();
            true
        } else {
            self.opaque(format!("expected `{keyword}`"));
            false
        }
    }

    pub(super) fn close_paren(&mut self, what: &str) {
        if self.peek() == Some(')') {
            self.pos += 1;
        } else {
            self.opaque(format!("unterminated {what}"));
        }
    }
}
