//! The shell grammar above words: lists (`;`, `&`, newlines, `&&`, `||`), pipelines,
//! subshells, groups, `if`, `while`/`until`, `for`/`select`, `case`, function definitions,
//! `[[ … ]]`, `(( … ))` and assignments. Every simple command met is recorded; anything malformed or unmodelled marks the script opaque and reading goes
//! on, so later commands are still seen.

use super::redirects::PendingHeredoc;
use super::{Assignment, ParsedScript, SimpleCommand, Word};

/// Where a command list ends.
#[derive(Clone, Copy)]
pub(super) enum Stop<'k> {
    Eof,
    /// A `)` closing a subshell or substitution.
    Paren,
    /// One of these reserved words at the start of a command.
    Keywords(&'k [&'k str]),
}

pub(super) struct Parser<'s> {
    pub(super) chars: Vec<char>,
    pub(super) pos: usize,
    pub(super) out: &'s mut ParsedScript,
    pub(super) depth: usize,
    pub(super) heredocs: Vec<PendingHeredoc>,
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

    pub(super) fn at_stop(&self, stop: Stop<'_>) -> bool {
        if self.starts_with(";;") || self.starts_with(";&") {
            return true;
        }
        match stop {
            Stop::Eof => false,
            Stop::Paren => self.peek() == Some(')'),
            Stop::Keywords(words) => self.peek_keyword().is_some_and(|k| words.contains(&k)),
        }
    }

    pub(super) fn parse_and_or(&mut self) {
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

    pub(super) fn parse_pipeline(&mut self) {
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

    pub(super) fn parse_command(&mut self) {
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

    pub(super) fn if_body(&mut self) {
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

    pub(super) fn do_group(&mut self) {
        if self.expect("do") {
            self.parse_list(Stop::Keywords(&["done"]));
            self.expect("done");
        }
    }

    pub(super) fn for_body(&mut self) {
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

    pub(super) fn case_body(&mut self) {
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
    pub(super) fn double_bracket(&mut self) {
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
    pub(super) fn arithmetic_body(&mut self) {
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

    pub(super) fn simple_command(&mut self) {
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

    /// `NAME=`, `NAME+=`, `NAME[sub]=` at the cursor, with its value (`(…)` arrays too).
    pub(super) fn try_assignment(&mut self) -> Option<Assignment> {
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
                    Some(c) => {
                        // `[sub]=value`: the subscript is arithmetic, like `a[sub]=`'s.
                        let mut keyed = false;
                        if c == '['
                            && let Some(close) = self.chars[self.pos..]
                                .iter()
                                .position(|c| *c == ']')
                                .map(|k| k + self.pos)
                            && self.chars.get(close + 1) == Some(&'=')
                        {
                            self.check_arithmetic(self.pos + 1, close);
                            self.pos = close + 2;
                            keyed = true;
                        }
                        let before = self.pos;
                        self.lex_word();
                        if self.pos == before && !keyed {
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
