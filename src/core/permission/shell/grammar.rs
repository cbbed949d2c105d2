//! The shell grammar above words: lists (`;`, `&`, newlines, `&&`, `||`), pipelines,
//! subshells, groups, `if`, `while`/`until`, `for`/`select`, `case`, function definitions,
//! `[[ … ]]`, `(( … ))`, redirections and here-document bodies. Every simple command met
//! is recorded; anything malformed or unmodelled marks the script opaque and reading goes
//! on, so later commands are still seen.

use super::{Assignment, MAX_DEPTH, ParsedScript, Redirect, RedirectKind, SimpleCommand, Word};

/// Words the shell reserves at the start of a command.
const RESERVED: &[&str] = &[
    "if", "then", "elif", "else", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "select", "in", "function", "time", "coproc", "{", "}", "!", "[[", "]]",
];

/// Where a command list ends.
#[derive(Clone, Copy)]
pub(super) enum Stop<'k> {
    Eof,
    /// A `)` closing a subshell or substitution.
    Paren,
    /// One of these reserved words at the start of a command.
    Keywords(&'k [&'k str]),
}

/// A here-document whose body starts after the current line.
struct PendingHeredoc {
    delimiter: String,
    strip_tabs: bool,
    /// The body undergoes expansions (the delimiter was not quoted).
    expand: bool,
}

pub(super) struct Parser<'s> {
    pub(super) chars: Vec<char>,
    pub(super) pos: usize,
    pub(super) out: &'s mut ParsedScript,
    pub(super) depth: usize,
    heredocs: Vec<PendingHeredoc>,
}

impl<'s> Parser<'s> {
    pub(super) fn new(text: &str, out: &'s mut ParsedScript, depth: usize) -> Self {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            out,
            depth,
            heredocs: Vec::new(),
        }
    }

    pub(super) fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    pub(super) fn starts_with(&self, text: &str) -> bool {
        let mut i = self.pos;
        for c in text.chars() {
            if self.chars.get(i) != Some(&c) {
                return false;
            }
            i += 1;
        }
        true
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

    /// Reads the whole line; whatever stops a list early is skipped as unexpected.
    pub(super) fn parse_script(&mut self) {
        loop {
            self.parse_list(Stop::Eof);
            if self.pos >= self.chars.len() {
                break;
            }
            let skip = self.peek_keyword().map_or(1, |k| k.chars().count());
            let text: String = self.chars[self.pos..self.pos + skip].iter().collect();
            self.opaque(format!("unexpected `{text}`"));
            self.pos += skip;
        }
    }

    pub(super) fn parse_list(&mut self, stop: Stop<'_>) {
        loop {
            self.skip_separators();
            if self.pos >= self.chars.len() || self.at_stop(stop) {
                return;
            }
            let before = self.pos;
            self.parse_and_or();
            if self.pos == before {
                return;
            }
        }
    }

    fn at_stop(&self, stop: Stop<'_>) -> bool {
        if self.starts_with(";;") || self.starts_with(";&") {
            return true;
        }
        match stop {
            Stop::Eof => false,
            Stop::Paren => self.peek() == Some(')'),
            Stop::Keywords(words) => self.peek_keyword().is_some_and(|k| words.contains(&k)),
        }
    }

    fn parse_and_or(&mut self) {
        self.parse_pipeline();
        loop {
            self.skip_blanks();
            if self.starts_with("&&") || self.starts_with("||") {
                self.pos += 2;
                self.skip_linebreaks();
                self.parse_pipeline();
            } else {
                break;
            }
        }
    }

    fn parse_pipeline(&mut self) {
        loop {
            self.skip_blanks();
            match self.peek_keyword() {
                Some(k @ ("!" | "time")) => {
                    self.pos += k.len();
                    self.skip_blanks();
                    if k == "time" && self.starts_with("-p") {
                        self.pos += 2;
                    }
                }
                _ => break,
            }
        }
        let mut piped = false;
        loop {
            let start = self.out.commands.len();
            self.parse_command();
            if piped {
                mark_stdin_fed(&mut self.out.commands[start..]);
            }
            self.skip_blanks();
            if self.starts_with("||") {
                break;
            }
            if self.starts_with("|&") {
                self.pos += 2;
            } else if self.peek() == Some('|') {
                self.pos += 1;
            } else {
                break;
            }
            piped = true;
            self.skip_linebreaks();
        }
    }

    fn parse_command(&mut self) {
        self.skip_blanks();
        let start = self.out.commands.len();
        if self.starts_with("((") {
            self.pos += 2;
            self.arithmetic_body();
            self.trailing_redirects(start);
            return;
        }
        if self.peek() == Some('(') {
            self.pos += 1;
            self.nested(|p| p.parse_list(Stop::Paren));
            self.close_paren("subshell");
            self.trailing_redirects(start);
            return;
        }
        match self.peek_keyword() {
            Some("{") => {
                self.pos += 1;
                self.nested(|p| p.parse_list(Stop::Keywords(&["}"])));
                if self.expect("}") {
                    self.trailing_redirects(start);
                }
            }
            Some("if") => {
                self.pos += 2;
                self.nested(Self::if_body);
                self.trailing_redirects(start);
            }
            Some(k @ ("while" | "until")) => {
                self.pos += k.len();
                self.nested(|p| {
                    p.parse_list(Stop::Keywords(&["do"]));
                    p.do_group();
                });
                self.trailing_redirects(start);
            }
            Some(k @ ("for" | "select")) => {
                self.pos += k.len();
                self.nested(Self::for_body);
                self.trailing_redirects(start);
            }
            Some("case") => {
                self.pos += 4;
                self.nested(Self::case_body);
                self.trailing_redirects(start);
            }
            Some("function") => {
                self.pos += 8;
                self.skip_blanks();
                self.lex_word();
                self.skip_blanks();
                if self.starts_with("()") {
                    self.pos += 2;
                }
                self.skip_linebreaks();
                self.nested(Self::parse_command);
            }
            Some("[[") => {
                self.pos += 2;
                self.double_bracket();
                self.trailing_redirects(start);
            }
            Some("coproc") => {
                self.pos += 6;
                self.opaque("`coproc` runs a command in the background with its own pipes");
                self.nested(Self::parse_command);
            }
            Some("then" | "else" | "elif" | "fi" | "do" | "done" | "esac" | "}" | "in" | "]]") => {}
            _ => self.simple_command(),
        }
    }

    fn if_body(&mut self) {
        self.parse_list(Stop::Keywords(&["then"]));
        if !self.expect("then") {
            return;
        }
        loop {
            self.parse_list(Stop::Keywords(&["elif", "else", "fi"]));
            match self.peek_keyword() {
                Some("elif") => {
                    self.pos += 4;
                    self.parse_list(Stop::Keywords(&["then"]));
                    if !self.expect("then") {
                        return;
                    }
                }
                Some("else") => {
                    self.pos += 4;
                    self.parse_list(Stop::Keywords(&["fi"]));
                    self.expect("fi");
                    return;
                }
                _ => {
                    self.expect("fi");
                    return;
                }
            }
        }
    }

    fn do_group(&mut self) {
        if self.expect("do") {
            self.parse_list(Stop::Keywords(&["done"]));
            self.expect("done");
        }
    }

    fn for_body(&mut self) {
        self.skip_blanks();
        if self.starts_with("((") {
            self.pos += 2;
            self.arithmetic_body();
        } else {
            self.lex_word();
            self.skip_linebreaks();
            if self.peek_keyword() == Some("in") {
                self.pos += 2;
                loop {
                    self.skip_blanks();
                    match self.peek() {
                        None | Some('\n' | ';') => break,
                        _ => {}
                    }
                    let before = self.pos;
                    self.lex_word();
                    if self.pos == before {
                        self.opaque("unexpected character in a `for` list");
                        self.pos += 1;
                    }
                }
            }
        }
        self.skip_blanks();
        if self.peek() == Some(';') {
            self.pos += 1;
        }
        self.skip_linebreaks();
        self.do_group();
    }

    fn case_body(&mut self) {
        self.skip_blanks();
        self.lex_word();
        self.skip_linebreaks();
        if !self.expect("in") {
            return;
        }
        loop {
            self.skip_linebreaks();
            if self.peek_keyword() == Some("esac") {
                self.pos += 4;
                return;
            }
            if self.pos >= self.chars.len() {
                self.opaque("`case` without `esac`");
                return;
            }
            let before = self.pos;
            if self.peek() == Some('(') {
                self.pos += 1;
            }
            loop {
                self.skip_blanks();
                self.lex_word();
                self.skip_blanks();
                match self.peek() {
                    Some('|') => self.pos += 1,
                    Some(')') => {
                        self.pos += 1;
                        break;
                    }
                    _ => {
                        self.opaque("malformed `case` pattern");
                        return;
                    }
                }
            }
            self.parse_list(Stop::Keywords(&["esac"]));
            for terminator in [";;&", ";;", ";&"] {
                if self.starts_with(terminator) {
                    self.pos += terminator.len();
                    break;
                }
            }
            if self.pos == before {
                self.opaque("malformed `case`");
                return;
            }
        }
    }

    /// `[[ … ]]`: words up to `]]`, where `<`, `>`, `(`, `)`, `&&` and `||` are operands.
    fn double_bracket(&mut self) {
        let mut words = vec![Word::literal("[[")];
        loop {
            self.skip_blanks();
            if self.peek() == Some('\n') {
                self.newline();
                continue;
            }
            if self.peek_keyword() == Some("]]") {
                self.pos += 2;
                break;
            }
            if self.pos >= self.chars.len() {
                self.opaque("`[[` without `]]`");
                break;
            }
            if self.starts_with("&&") || self.starts_with("||") {
                self.pos += 2;
                continue;
            }
            if let Some(c @ ('(' | ')' | '<' | '>' | '!')) = self.peek()
                && !(matches!(c, '<' | '>') && self.peek_at(1) == Some('('))
            {
                self.pos += 1;
                words.push(Word::literal(&c.to_string()));
                continue;
            }
            let before = self.pos;
            let word = self.lex_word();
            if self.pos == before {
                self.pos += 1;
            }
            words.push(word);
        }
        words.push(Word::literal("]]"));
        self.out.commands.push(SimpleCommand {
            words,
            ..SimpleCommand::default()
        });
    }

    /// After `((` (also `for ((`): up to the matching `))`.
    fn arithmetic_body(&mut self) {
        let start = self.pos;
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 && self.peek_at(1) == Some(')') => {
                    self.check_arithmetic(start, self.pos);
                    self.pos += 2;
                    return;
                }
                ')' => depth = depth.saturating_sub(1),
                _ => {}
            }
            self.pos += 1;
        }
        self.opaque("unterminated `((`");
    }

    fn simple_command(&mut self) {
        let mut command = SimpleCommand::default();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            match c {
                '\n' | ';' | '|' | ')' => break,
                '&' if !self.starts_with("&>") => break,
                '(' => {
                    let definition = command.words.len() == 1
                        && command.assignments.is_empty()
                        && command.redirects.is_empty();
                    self.pos += 1;
                    if definition {
                        self.skip_blanks();
                        if self.peek() == Some(')') {
                            self.pos += 1;
                            self.skip_linebreaks();
                            self.nested(Self::parse_command);
                            return;
                        }
                    }
                    self.opaque("unexpected `(`");
                }
                _ if self.at_redirect() => self.redirect(&mut command),
                _ => {
                    if command.words.is_empty()
                        && let Some(assignment) = self.try_assignment()
                    {
                        command.assignments.push(assignment);
                        continue;
                    }
                    let before = self.pos;
                    let word = self.lex_word();
                    if self.pos == before {
                        self.opaque(format!("unexpected `{c}`"));
                        self.pos += 1;
                        continue;
                    }
                    command.words.push(word);
                }
            }
        }
        if !command.is_empty() {
            self.out.commands.push(command);
        }
    }

    /// Redirections after a compound command apply to everything inside it.
    fn trailing_redirects(&mut self, start: usize) {
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
    fn at_redirect(&self) -> bool {
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

    fn redirect(&mut self, command: &mut SimpleCommand) {
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
    fn heredoc_delimiter(&mut self) -> (String, bool) {
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
                        text.push(q);
                    }
                }
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
                let line_end = self.chars[line_start..]
                    .iter()
                    .position(|c| *c == '\n')
                    .map_or(self.chars.len(), |i| line_start + i);
                let mut line = &self.chars[line_start..line_end];
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

    fn skip_linebreaks(&mut self) {
        loop {
            self.skip_blanks();
            if self.peek() == Some('\n') {
                self.newline();
            } else {
                break;
            }
        }
    }

    fn skip_separators(&mut self) {
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

    fn expect(&mut self, keyword: &str) -> bool {
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

    /// `NAME=`, `NAME+=`, `NAME[sub]=` at the cursor, with its value (`(…)` arrays too).
    fn try_assignment(&mut self) -> Option<Assignment> {
        let first = self.peek()?;
        if !(first.is_ascii_alphabetic() || first == '_') {
            return None;
        }
        let mut i = self.pos;
        while self
            .chars
            .get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            i += 1;
        }
        let name: String = self.chars[self.pos..i].iter().collect();
        let mut subscript = None;
        if self.chars.get(i) == Some(&'[') {
            let close = self.chars[i..].iter().position(|c| *c == ']')? + i;
            subscript = Some((i + 1, close));
            i = close + 1;
        }
        if self.chars.get(i) == Some(&'+') {
            i += 1;
        }
        if self.chars.get(i) != Some(&'=') {
            return None;
        }
        if let Some((start, end)) = subscript {
            self.check_arithmetic(start, end);
        }
        self.pos = i + 1;
        let value = if self.peek() == Some('(') {
            self.pos += 1;
            loop {
                self.skip_blanks();
                match self.peek() {
                    Some(')') => {
                        self.pos += 1;
                        break;
                    }
                    Some('\n') => self.newline(),
                    None => {
                        self.opaque("unterminated array assignment");
                        break;
                    }
                    Some(_) => {
                        let before = self.pos;
                        self.lex_word();
                        if self.pos == before {
                            self.opaque("malformed array assignment");
                            self.pos += 1;
                        }
                    }
                }
            }
            Word::any()
        } else {
            self.lex_word()
        };
        Some(Assignment { name, value })
    }
}

pub(super) fn mark_stdin_fed(commands: &mut [SimpleCommand]) {
    for command in commands {
        command.stdin_fed = true;
    }
}
