//! Redirections (`<`, `>`, `>>`, `>|`, `&>`, `<>`, `N>&M`, `{var}>`, `<<`, `<<-`, `<<<`),
//! the redirections trailing a compound command, and here-document bodies, read after the
//! line that opens them (expanded ones scanned for substitutions).

use super::grammar::{Parser, mark_stdin_fed};
use super::{Redirect, RedirectKind, SimpleCommand, Word};

/// A here-document whose body starts after the current line.
pub(super) struct PendingHeredoc {
    pub(super) delimiter: String,
    pub(super) strip_tabs: bool,
    /// The body undergoes expansions (the delimiter was not quoted).
    pub(super) expand: bool,
}

impl Parser<'_> {
    /// Redirections after a compound command apply to everything inside it.
    pub(super) fn trailing_redirects(&mut self, start: usize) {
        let mut holder = SimpleCommand::default();
        loop {
            self.skip_blanks();
            if self.at_redirect() {
                self.redirect(&mut holder);
            } else {
                break;
            }
        }
        if holder.stdin_fed {
            mark_stdin_fed(&mut self.out.commands[start..]);
        }
        if !holder.is_empty() {
            self.out.commands.push(holder);
        }
    }

    /// At `[n]<`, `[n]>`, `{var}>`, `&>` (but not a process substitution `<(`/`>(`).
    pub(super) fn at_redirect(&self) -> bool {
        let mut i = self.pos;
        if self.chars.get(i) == Some(&'{') {
            let mut j = i + 1;
            while self
                .chars
                .get(j)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                j += 1;
            }
            if j > i + 1 && self.chars.get(j) == Some(&'}') {
                i = j + 1;
            }
        } else {
            while self.chars.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
        }
        match self.chars.get(i) {
            Some('<' | '>') => i > self.pos || self.chars.get(i + 1) != Some(&'('),
            Some('&') => i == self.pos && self.chars.get(i + 1) == Some(&'>'),
            _ => false,
        }
    }

    pub(super) fn redirect(&mut self, command: &mut SimpleCommand) {
        while self
            .peek()
            .is_some_and(|c| c != '<' && c != '>' && c != '&')
        {
            self.pos += 1;
        }
        const OPS: [(&str, RedirectKind); 12] = [
            ("&>>", RedirectKind::Write),
            ("&>", RedirectKind::Write),
            ("<<<", RedirectKind::HereString),
            ("<<-", RedirectKind::HereDoc),
            ("<<", RedirectKind::HereDoc),
            ("<>", RedirectKind::Write),
            ("<&", RedirectKind::Read),
            (">&", RedirectKind::Write),
            (">>", RedirectKind::Write),
            (">|", RedirectKind::Write),
            ("<", RedirectKind::Read),
            (">", RedirectKind::Write),
        ];
        let Some((op, mut kind)) = OPS.iter().copied().find(|(op, _)| self.starts_with(op)) else {
            self.pos += 1;
            return;
        };
        self.pos += op.len();
        self.skip_blanks();
        let target = if kind == RedirectKind::HereDoc {
            let (delimiter, quoted) = self.heredoc_delimiter();
            self.heredocs.push(PendingHeredoc {
                delimiter: delimiter.clone(),
                strip_tabs: op == "<<-",
                expand: !quoted,
            });
            Word::literal(&delimiter)
        } else {
            let before = self.pos;
            let word = self.lex_word();
            if self.pos == before {
                self.opaque(format!("`{op}` without a target"));
            }
            word
        };
        if matches!(op, "<&" | ">&")
            && target.as_literal().is_some_and(|t| {
                let digits = t.trim_end_matches('-');
                digits.chars().all(|c| c.is_ascii_digit())
            })
        {
            kind = RedirectKind::Duplicate;
        }
        if matches!(
            kind,
            RedirectKind::Read | RedirectKind::HereDoc | RedirectKind::HereString
        ) {
            command.stdin_fed = true;
        }
        command.redirects.push(Redirect { kind, target });
    }

    /// A here-document delimiter: its text after quote removal, and whether any of it was
    /// quoted (then the body is taken literally).
    pub(super) fn heredoc_delimiter(&mut self) -> (String, bool) {
        let mut text = String::new();
        let mut quoted = false;
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\'' | '"' => {
                    quoted = true;
                    self.pos += 1;
                    while let Some(q) = self.peek() {
                        self.pos += 1;
                        if q == c {
                            break;
                        }
                        // In double quotes a backslash escapes `$`, `` ` ``, `"`, `\`
                        // and joins lines (a backslash-newline is removed).
                        if c == '"' && q == '\\' {
                            match self.peek() {
                                Some('\n') => {
                                    self.pos += 1;
                                    continue;
                                }
                                Some(n @ ('$' | '`' | '"' | '\\')) => {
                                    self.pos += 1;
                                    text.push(n);
                                    continue;
                                }
                                _ => {}
                            }
                        }
                        text.push(q);
                    }
                }
                // A line continuation, removed before the word is read: not a quote.
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '\\' => {
                    quoted = true;
                    self.pos += 1;
                    if let Some(n) = self.peek() {
                        text.push(n);
                        self.pos += 1;
                    }
                }
                _ => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
        if text.is_empty() {
            self.opaque("here-document without a delimiter");
        }
        (text, quoted)
    }

    /// Consumes a newline, then the bodies of here-documents opened on its line.
    pub(super) fn newline(&mut self) {
        self.pos += 1;
        for heredoc in std::mem::take(&mut self.heredocs) {
            let body_start = self.pos;
            let mut body_end = self.chars.len();
            let mut after = self.chars.len();
            let mut line_start = self.pos;
            while line_start < self.chars.len() {
                let (line, line_end) = self.heredoc_line(line_start, heredoc.expand);
                let mut line = line.as_slice();
                if heredoc.strip_tabs {
                    while line.first() == Some(&'\t') {
                        line = &line[1..];
                    }
                }
                if line.iter().copied().eq(heredoc.delimiter.chars()) {
                    body_end = line_start;
                    after = (line_end + 1).min(self.chars.len());
                    break;
                }
                line_start = line_end + 1;
            }
            if heredoc.expand {
                self.scan_expansions(body_start, body_end);
            }
            self.pos = after;
        }
    }

    /// The here-document line starting at `start`, and where it ends. In the body of an
    /// expanded here-document a backslash-newline joins lines (as bash reads it), so the
    /// delimiter may be spelled across them (`EO\` on one line, `F` on the next, end `<<EOF`).
    fn heredoc_line(&self, start: usize, joins: bool) -> (Vec<char>, usize) {
        let mut line = Vec::new();
        let mut i = start;
        loop {
            let end = self.chars[i..]
                .iter()
                .position(|c| *c == '\n')
                .map_or(self.chars.len(), |k| i + k);
            let physical = &self.chars[i..end];
            let backslashes = physical.iter().rev().take_while(|c| **c == '\\').count();
            if joins && backslashes % 2 == 1 && end < self.chars.len() {
                line.extend_from_slice(&physical[..physical.len() - 1]);
                i = end + 1;
            } else {
                line.extend_from_slice(physical);
                return (line, end);
            }
        }
    }
}
