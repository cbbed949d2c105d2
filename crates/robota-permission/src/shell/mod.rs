//! A static reading of a Bash command line for permission checks: every simple command
//! it would run (including those inside `$(…)`, backticks, `<(…)`, here-doc bodies,
//! subshells, groups, loops, `if`, `case` and function bodies), each with its assignments,
//! words and redirections, and whether its standard input is fed by the script (a pipe,
//! a here-doc, a here-string or a `<` redirection).
//!
//! Words keep what the shell would see after quote removal; whatever is only known at run
//! time (parameter and command substitutions, arithmetic, globs, brace expansion) becomes
//! a [`Piece::Any`] that stands for any text. Anything the reader does not model makes the
//! script opaque with a reason, and the reader never fails: the caller decides what an
//! opaque script may do.

mod cursor;
mod grammar;
mod lexer;
mod redirects;

/// One character of a word, or a stretch only known at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    Lit(char),
    /// Any text, possibly empty, possibly several words.
    Any,
    /// What an unquoted glob (`*`, `?`, `[…]`) matches: file names, never a `/`.
    Glob,
    /// A relative path below a known directory (`**`, a `find` result): may hold `/`,
    /// never a `..` component.
    Descendant,
}

impl Piece {
    pub fn is_literal(self) -> bool {
        matches!(self, Piece::Lit(_))
    }
}

/// A word after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    pub pieces: Vec<Piece>,
}

impl Word {
    pub fn literal(text: &str) -> Self {
        Word {
            pieces: text.chars().map(Piece::Lit).collect(),
        }
    }

    pub fn any() -> Self {
        Word {
            pieces: vec![Piece::Any],
        }
    }

    /// The text when nothing in it is decided at run time.
    pub fn as_literal(&self) -> Option<String> {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Lit(c) => Some(*c),
                Piece::Any | Piece::Glob | Piece::Descendant => None,
            })
            .collect()
    }

    pub fn is_dynamic(&self) -> bool {
        !self.pieces.iter().all(|p| p.is_literal())
    }

    /// The literal text, with every run-time part shown as `*` (for messages and rules).
    pub fn display(&self) -> String {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Lit(c) => *c,
                Piece::Any | Piece::Glob | Piece::Descendant => '*',
            })
            .collect()
    }

    fn push(&mut self, piece: Piece) {
        // Adjacent run-time parts say nothing more than one.
        match (self.pieces.last().copied(), piece) {
            (Some(Piece::Any), Piece::Any | Piece::Glob) => {}
            (Some(Piece::Glob), Piece::Any) => {
                if let Some(last) = self.pieces.last_mut() {
                    *last = Piece::Any;
                }
            }
            (Some(Piece::Glob), Piece::Glob) => {}
            (Some(Piece::Descendant), Piece::Glob | Piece::Descendant) => {}
            _ => self.pieces.push(piece),
        }
    }
}

/// `NAME=value` (or `NAME+=value`, `NAME[i]=value`, `NAME=(…)`) before a command or as
/// the whole command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub name: String,
    pub value: Word,
}

/// What a redirection does with its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `<`: the target is read.
    Read,
    /// `>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `>&file`: the target is written.
    Write,
    /// `N>&M`, `N<&M`, `N>&-`: descriptors only.
    Duplicate,
    /// `<<`, `<<-`: a here-document (its body is not a file).
    HereDoc,
    /// `<<<`: a here-string.
    HereString,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub kind: RedirectKind,
    pub target: Word,
}

/// One simple command as the shell would run it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    pub assignments: Vec<Assignment>,
    /// The command name and its arguments.
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// Standard input comes from the script itself (pipe, here-doc, here-string, `<`).
    pub stdin_fed: bool,
}

impl SimpleCommand {
    fn is_empty(&self) -> bool {
        self.assignments.is_empty() && self.words.is_empty() && self.redirects.is_empty()
    }
}

/// Everything a command line would run, and why it cannot be fully judged, if it cannot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedScript {
    /// In the order they start (a substitution before the command that uses it).
    pub commands: Vec<SimpleCommand>,
    /// Empty when the whole line was understood.
    pub opaque: Vec<String>,
}

/// How deep substitutions and compound commands may nest before the line is opaque.
const MAX_DEPTH: usize = 40;

/// Reads a command line the way `bash -c` would, without running anything.
pub fn parse(text: &str) -> ParsedScript {
    let mut script = ParsedScript::default();
    grammar::Parser::new(text, &mut script, 0).parse_script();
    script
}

#[cfg(test)]
mod tests;
