//! Words: quoting (`'…'`, `"…"`, `$'…'`, `$"…"`, backslashes, line continuations), and
//! every expansion inside a word — `$name`, `${…}`, `$(…)`, backticks, `$((…))`, `<(…)`,
//! `>(…)`, globs and brace expansion. Substitutions are read as commands of their own (so
//! their commands are checked too); their results become [`Piece::Any`].

use super::grammar::{Parser, Stop, mark_stdin_fed};
use super::{Piece, Word};

/// A word being built. After a brace expansion everything that follows is run-time text.
#[derive(Default)]
pub(super) struct WordBuilder {
    word: Word,
    collapsed: bool,
}

impl WordBuilder {
    fn push(&mut self, piece: Piece) {
        if !self.collapsed {
            self.word.push(piece);
        }
    }
}

impl Parser<'_> {
    /// Reads one word at the cursor (possibly empty when a delimiter is there).
    pub(super) fn lex_word(&mut self) -> Word {
        let mut word = WordBuilder::default();
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' => break,
                '<' | '>' => {
                    if self.peek_at(1) == Some('(') {
                        self.process_substitution(&mut word, c == '>');
                    } else {
                        break;
                    }
                }
                '\\' => match self.peek_at(1) {
                    Some('\n') => self.pos += 2,
                    Some(next) => {
                        self.pos += 2;
                        word.push(Piece::Lit(next));
                    }
                    None => {
                        self.pos += 1;
                        word.push(Piece::Lit('\\'));
                    }
                },
                '\'' => self.single_quoted(&mut word),
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut word);
                }
                '$' => self.dollar(&mut word, false),
                '`' => self.backtick(&mut word, false),
                '*' | '?' => {
                    self.pos += 1;
                    word.push(Piece::Glob);
                }
                '[' => match self.bracket_end() {
                    Some(close) => {
                        self.pos = close + 1;
                        word.push(Piece::Glob);
                    }
                    None => {
                        self.pos += 1;
                        word.push(Piece::Lit('['));
                    }
                },
                '{' if self.is_brace_expansion() => {
                    self.pos += 1;
                    word.push(Piece::Any);
                    word.collapsed = true;
                }
                _ => {
                    self.pos += 1;
                    word.push(Piece::Lit(c));
                }
            }
        }
        word.word
    }

    fn single_quoted(&mut self, word: &mut WordBuilder) {
        self.pos += 1;
        loop {
            match self.peek() {
                None => {
                    self.opaque("unterminated single quote");
                    return;
                }
                Some('\'') => {
                    self.pos += 1;
                    return;
                }
                Some(c) => {
                    self.pos += 1;
                    word.push(Piece::Lit(c));
                }
            }
        }
    }

    /// After the opening `"`.
    fn double_quoted(&mut self, word: &mut WordBuilder) {
        loop {
            match self.peek() {
                None => {
                    self.opaque("unterminated double quote");
                    return;
                }
                Some('"') => {
                    self.pos += 1;
                    return;
                }
                Some('\\') => match self.peek_at(1) {
                    Some('\n') => self.pos += 2,
                    Some(next @ ('$' | '`' | '"' | '\\')) => {
                        self.pos += 2;
                        word.push(Piece::Lit(next));
                    }
                    _ => {
                        self.pos += 1;
                        word.push(Piece::Lit('\\'));
                    }
                },
                Some('$') => self.dollar(word, true),
                Some('`') => self.backtick(word, true),
                Some(c) => {
                    self.pos += 1;
                    word.push(Piece::Lit(c));
                }
            }
        }
    }

    fn dollar(&mut self, word: &mut WordBuilder, in_double_quotes: bool) {
        match self.peek_at(1) {
            Some('(') if self.peek_at(2) == Some('(') => {
                self.pos += 3;
                if !self.arithmetic_expansion() {
                    // `$( (…) …)`: a command substitution starting with a subshell.
                    self.command_substitution();
                }
                word.push(Piece::Any);
            }
            Some('(') => {
                self.pos += 2;
                self.command_substitution();
                word.push(Piece::Any);
            }
            Some('{') => {
                self.pos += 2;
                self.parameter_expansion();
                word.push(Piece::Any);
            }
            Some('[') => {
                // `$[…]`: the old form of `$((…))`.
                self.pos += 2;
                self.old_arithmetic_expansion();
                word.push(Piece::Any);
            }
            Some('\'') if !in_double_quotes => {
                self.pos += 2;
                self.ansi_c_quoted(word);
            }
            Some('"') if !in_double_quotes => {
                self.pos += 2;
                self.double_quoted(word);
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.pos += 1;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.pos += 1;
                }
                word.push(Piece::Any);
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.pos += 2;
                word.push(Piece::Any);
            }
            _ => {
                self.pos += 1;
                word.push(Piece::Lit('$'));
            }
        }
    }

    /// After `$(`: the commands up to the matching `)`.
    fn command_substitution(&mut self) {
        self.nested(|p| p.parse_list(Stop::Paren));
        self.close_paren("`$(`");
    }

    /// After `$((`: up to the matching `))`. False (cursor restored to after `$(`) when the
    /// text is not arithmetic after all.
    fn arithmetic_expansion(&mut self) -> bool {
        let start = self.pos;
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    if self.peek_at(1) == Some(')') {
                        self.check_arithmetic(start, self.pos);
                        self.pos += 2;
                        return true;
                    }
                    break;
                }
                ')' => depth -= 1,
                _ => {}
            }
            self.pos += 1;
        }
        self.pos = start - 1;
        false
    }

    /// Arithmetic on anything but literal numbers can run code hidden in a variable's
    /// value (`a[$(…)]`), so it is opaque; substitutions inside are read either way.
    pub(super) fn check_arithmetic(&mut self, start: usize, end: usize) {
        let literal = self.chars[start..end].iter().all(|c| {
            c.is_ascii_digit() || c.is_ascii_whitespace() || "+-*/%()<>=!&|^~?:,".contains(*c)
        });
        if !literal {
            self.opaque("arithmetic on run-time values");
        }
        self.scan_expansions(start, end);
    }

    /// After `$[`: up to the matching `]`.
    fn old_arithmetic_expansion(&mut self) {
        let start = self.pos;
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            match c {
                '[' => depth += 1,
                ']' if depth == 0 => {
                    self.check_arithmetic(start, self.pos);
                    self.pos += 1;
                    return;
                }
                ']' => depth -= 1,
                _ => {}
            }
            self.pos += 1;
        }
        self.opaque("unterminated `$[`");
    }

    /// After `${`: up to the matching `}`, reading substitutions inside.
    fn parameter_expansion(&mut self) {
        let start = self.pos;
        let mut scratch = WordBuilder::default();
        let mut depth = 1usize;
        loop {
            match self.peek() {
                None => {
                    self.opaque("unterminated `${`");
                    return;
                }
                Some('}') => {
                    depth -= 1;
                    self.pos += 1;
                    if depth == 0 {
                        break;
                    }
                }
                Some('{') => {
                    depth += 1;
                    self.pos += 1;
                }
                Some('\\') => self.pos += 2,
                Some('\'') => self.single_quoted(&mut scratch),
                Some('"') => {
                    self.pos += 1;
                    self.double_quoted(&mut scratch);
                }
                Some('$') => self.dollar(&mut scratch, true),
                Some('`') => self.backtick(&mut scratch, true),
                Some(_) => self.pos += 1,
            }
        }
        let body: String = self.chars[start..self.pos.saturating_sub(1)]
            .iter()
            .collect();
        if body.contains("@P") {
            self.opaque("prompt expansion `@P` runs substitutions stored in a variable");
        }
        if let Some(reason) = evaluating_expansion(&body) {
            self.opaque(reason);
        }
        if let Some(open) = body.find('[') {
            let subscript = body[open + 1..].split(']').next().unwrap_or("");
            let harmless = subscript == "@"
                || subscript == "*"
                || subscript
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ' ' || c == '-');
            if !harmless {
                self.opaque("array subscript evaluated at run time");
            }
        }
    }

    /// After `$'`: ANSI-C escapes decoded to the characters the shell would see.
    fn ansi_c_quoted(&mut self, word: &mut WordBuilder) {
        loop {
            match self.peek() {
                None => {
                    self.opaque("unterminated `$'`");
                    return;
                }
                Some('\'') => {
                    self.pos += 1;
                    return;
                }
                Some('\\') => {
                    self.pos += 1;
                    let piece = self.ansi_c_escape();
                    word.push(piece);
                }
                Some(c) => {
                    self.pos += 1;
                    word.push(Piece::Lit(c));
                }
            }
        }
    }

    fn ansi_c_escape(&mut self) -> Piece {
        let Some(c) = self.peek() else {
            return Piece::Lit('\\');
        };
        self.pos += 1;
        let simple = match c {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(c),
            _ => None,
        };
        if let Some(s) = simple {
            return Piece::Lit(s);
        }
        let (radix, max) = match c {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => {
                self.pos -= 1;
                (8, 3)
            }
            'c' => {
                return match self.peek() {
                    Some(n) => {
                        self.pos += 1;
                        Piece::Lit(char::from((n as u32 & 0x1f) as u8))
                    }
                    None => Piece::Any,
                };
            }
            _ => {
                // Unknown escapes keep the backslash: two characters.
                self.pos -= 1;
                return Piece::Lit('\\');
            }
        };
        let mut value = 0u32;
        let mut digits = 0;
        while digits < max
            && let Some(d) = self.peek().and_then(|d| d.to_digit(radix))
        {
            value = value.saturating_mul(radix).saturating_add(d);
            self.pos += 1;
            digits += 1;
        }
        if digits == 0 {
            return Piece::Any;
        }
        char::from_u32(value).map_or(Piece::Any, Piece::Lit)
    }

    /// At a backtick: the text up to the closing one, unescaped, read as commands.
    fn backtick(&mut self, word: &mut WordBuilder, in_double_quotes: bool) {
        self.pos += 1;
        let mut body = String::new();
        loop {
            match self.peek() {
                None => {
                    self.opaque("unterminated backtick");
                    break;
                }
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') => match self.peek_at(1) {
                    Some(n @ ('$' | '`' | '\\')) => {
                        body.push(n);
                        self.pos += 2;
                    }
                    Some('"') if in_double_quotes => {
                        body.push('"');
                        self.pos += 2;
                    }
                    _ => {
                        body.push('\\');
                        self.pos += 1;
                    }
                },
                Some(c) => {
                    body.push(c);
                    self.pos += 1;
                }
            }
        }
        let depth = self.depth;
        self.nested(|p| Parser::new(&body, p.out, depth + 1).parse_script());
        word.push(Piece::Any);
    }

    /// At `<(` or `>(`: the commands inside; those of `>(…)` read what is written to it.
    fn process_substitution(&mut self, word: &mut WordBuilder, feeds_input: bool) {
        self.pos += 2;
        let start = self.out.commands.len();
        self.nested(|p| p.parse_list(Stop::Paren));
        self.close_paren("process substitution");
        if feeds_input {
            mark_stdin_fed(&mut self.out.commands[start..]);
        }
        // The word becomes the pipe's path, `/dev/fd/N`.
        for c in "/dev/fd/".chars() {
            word.push(Piece::Lit(c));
        }
        word.push(Piece::Glob);
    }

    /// Reads the substitutions in `start..end` (a here-document body, an arithmetic
    /// expression, an array subscript) for their commands; the cursor is restored.
    pub(super) fn scan_expansions(&mut self, start: usize, end: usize) {
        let saved = self.pos;
        self.pos = start;
        let mut scratch = WordBuilder::default();
        while self.pos < end {
            match self.peek() {
                Some('\\') => self.pos += 2,
                Some('$') => self.dollar(&mut scratch, true),
                Some('`') => self.backtick(&mut scratch, true),
                Some(_) => self.pos += 1,
                None => break,
            }
        }
        self.pos = saved;
    }

    /// The index of the `]` closing a glob bracket expression at the cursor, if any.
    fn bracket_end(&self) -> Option<usize> {
        let mut i = self.pos + 1;
        if matches!(self.chars.get(i), Some('!' | '^')) {
            i += 1;
        }
        if self.chars.get(i) == Some(&']') {
            i += 1;
        }
        while let Some(c) = self.chars.get(i) {
            match c {
                ']' => return Some(i),
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => return None,
                _ => i += 1,
            }
        }
        None
    }

    /// Whether the `{` at the cursor starts a brace expansion (`{a,b}`, `{1..3}`).
    fn is_brace_expansion(&self) -> bool {
        let mut depth = 0usize;
        let mut separated = false;
        let mut i = self.pos;
        let mut quote: Option<char> = None;
        while let Some(&c) = self.chars.get(i) {
            if let Some(q) = quote {
                if c == q {
                    quote = None;
                }
                i += 1;
                continue;
            }
            match c {
                '\'' | '"' => quote = Some(c),
                '\\' => i += 1,
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return separated;
                    }
                }
                ',' if depth == 1 => separated = true,
                '.' if depth == 1 && self.chars.get(i + 1) == Some(&'.') => separated = true,
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => return false,
                _ => {}
            }
            i += 1;
        }
        false
    }
}

/// Why a `${…}` body evaluates a value as code or as a variable name: `${!x}` takes `x`'s
/// value as a name (and `a[$(…)]` as a name runs the substitution), and the offset and
/// length of `${s:off:len}` are arithmetic. Name listings (`${!pre*}`, `${!a[@]}`) and
/// literal numbers are harmless.
fn evaluating_expansion(body: &str) -> Option<&'static str> {
    let chars: Vec<char> = body.chars().collect();
    let indirect = chars.first() == Some(&'!') && chars.len() > 1;
    let mut i = usize::from(indirect || (chars.first() == Some(&'#') && chars.len() > 1));
    let name_start = i;
    match chars.get(i) {
        Some(c) if c.is_ascii_alphabetic() || *c == '_' => {
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                i += 1;
            }
        }
        Some(c) if c.is_ascii_digit() => {
            while chars.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
        }
        Some(c) if "@*#?$!-".contains(*c) => i += 1,
        _ => {}
    }
    let name = &chars[name_start..i];
    let mut subscript: Option<String> = None;
    if chars.get(i) == Some(&'[') {
        let mut depth = 0usize;
        let open = i;
        while let Some(c) = chars.get(i) {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        subscript = Some(chars[open + 1..i.min(chars.len())].iter().collect());
        i += 1;
    }
    let rest: String = chars.get(i..).unwrap_or_default().iter().collect();
    if indirect {
        let listing = subscript.is_none() && (rest == "*" || rest == "@") && !name.is_empty();
        let keys = matches!(subscript.as_deref(), Some("@" | "*")) && rest.is_empty();
        let special = name == ['#'] && rest.is_empty();
        if !(listing || keys || special) {
            return Some("indirect expansion `${!…}` uses a value as a variable name");
        }
    }
    if let Some(range) = rest.strip_prefix(':')
        && !range.starts_with(['-', '=', '?', '+'])
    {
        let literal = range.chars().all(|c| {
            c.is_ascii_digit() || c.is_ascii_whitespace() || "+-*/%()<>=!&|^~?:,".contains(c)
        });
        if !literal {
            return Some("a substring offset or length is arithmetic on run-time values");
        }
    }
    None
}
