//! What one simple command runs: the command itself and, below it, the commands it starts
//! — through wrappers (`timeout`, `nice`, `nohup`, `env`, `command`, `exec`, `builtin`,
//! `time`, `stdbuf`, `sudo`, `xargs`, `busybox`, `git -C …`, `uv run` …) and `find -exec`.
//! Deny rules are matched against every node; an allow rule may match a wrapper's single
//! child instead of the wrapper only when the wrapper merely runs it with the same
//! privileges. When options make the reading ambiguous, every reading is kept.

use crate::rules::basename;
use crate::shell::{Piece, Word};

use super::opacity;
use super::wrappers::{WRAPPERS, peel, wrapper};

/// A command and what it runs.
#[derive(Debug, Clone, Default)]
pub(super) struct CommandNode {
    pub words: Vec<Word>,
    /// Everything this command may run (all of it is checked against deny rules).
    pub runs: Vec<CommandNode>,
    /// This command only runs `runs[i]`: an allow rule for that child allows it.
    pub wraps: Option<usize>,
    /// Why this command cannot be judged statically.
    pub opaque: Vec<String>,
    /// Literal shell text it hands to a shell (`sh -c '…'`, `eval …`): read for deny rules.
    pub scripts: Vec<String>,
    /// Files it runs as code: a program named by path, a shell or interpreter script, a
    /// sourced file.
    pub executes: Vec<String>,
}

impl CommandNode {
    /// The command name as written, when literal.
    pub fn name(&self) -> Option<String> {
        self.words.first().and_then(Word::as_literal)
    }

    /// Visits this node and every node below it.
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a CommandNode)) {
        f(self);
        for child in &self.runs {
            child.walk(f);
        }
    }
}

/// How many wrappers deep a command is still read.
const MAX_WRAPPERS: usize = 12;

pub(super) fn build(words: Vec<Word>, stdin_fed: bool, depth: usize) -> CommandNode {
    let mut node = CommandNode {
        words,
        ..CommandNode::default()
    };
    let Some(first) = node.words.first() else {
        return node;
    };
    let Some(full) = first.as_literal() else {
        node.opaque
            .push("the command name is computed at run time".to_string());
        return node;
    };
    if full
        .chars()
        .any(|c| !c.is_ascii() || c.is_ascii_control() || c.is_whitespace())
    {
        node.opaque
            .push("the command name has characters that only look like others".to_string());
        return node;
    }
    if depth > MAX_WRAPPERS {
        node.opaque.push("too many nested wrappers".to_string());
        return node;
    }
    if full.starts_with("/proc/") || full.starts_with("/dev/fd/") {
        node.opaque
            .push("the program is named through /proc or a descriptor".to_string());
        return node;
    }
    if full.contains('/') {
        node.executes.push(full.clone());
    }
    let name = basename(&full).to_string();
    opacity::check(&name, &mut node, stdin_fed);
    let (children, wraps) = children(&name, &node.words);
    for (words, child_stdin) in children {
        let fed = child_stdin && stdin_fed;
        node.runs.push(build(words, fed, depth + 1));
    }
    node.wraps = wraps;
    node
}

/// Tools whose subcommand runs a command: (tool, subcommand).
const RUNNERS: &[(&str, &str)] = &[
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("bundle", "exec"),
    ("conda", "run"),
    ("mise", "exec"),
    ("mise", "x"),
    ("pixi", "run"),
    ("rye", "run"),
    ("hatch", "run"),
    ("npm", "exec"),
    ("npm", "x"),
    ("yarn", "exec"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
];

/// The commands a command starts, each with whether it inherits standard input, and which
/// one (if any) it merely wraps.
fn children(name: &str, words: &[Word]) -> (Vec<(Vec<Word>, bool)>, Option<usize>) {
    if name == "xargs" {
        return xargs(words);
    }
    if name == "find" {
        return (find_exec(words), None);
    }
    if name == "git" {
        return git(words);
    }
    let sub = words.get(1).and_then(Word::as_literal);
    if RUNNERS
        .iter()
        .any(|(tool, runs)| *tool == name && sub.as_deref() == Some(runs))
    {
        return peel(&wrapper(&[]), words, 2);
    }
    // The dynamic loader runs the program it is given (`ld-linux-x86-64.so.2 /bin/rm`).
    if (name.starts_with("ld-") || name.starts_with("ld.so")) && name.contains(".so") {
        return peel(&wrapper(&[]), words, 1);
    }
    match WRAPPERS.iter().find(|w| w.names.contains(&name)) {
        Some(spec) => peel(spec, words, 1),
        None => (Vec::new(), None),
    }
}

/// `xargs [opts] [cmd [args]]`: the command gets the input's words as extra arguments
/// (`-I R` puts them where `R` is); without a command it runs `echo`.
fn xargs(words: &[Word]) -> (Vec<(Vec<Word>, bool)>, Option<usize>) {
    const VALUED: &[&str] = &[
        "-a",
        "--arg-file",
        "-d",
        "--delimiter",
        "-E",
        "-I",
        "-L",
        "-n",
        "--max-args",
        "-P",
        "--max-procs",
        "-s",
        "--max-chars",
        "--process-slot-var",
    ];
    let mut i = 1;
    let mut replace: Option<String> = None;
    let mut ambiguous = false;
    while let Some(word) = words.get(i) {
        let Some(text) = word.as_literal() else {
            ambiguous = true;
            break;
        };
        if text == "--" {
            i += 1;
            break;
        }
        if !text.starts_with('-') || text == "-" {
            break;
        }
        if text == "-I" {
            replace = words.get(i + 1).and_then(Word::as_literal);
            i += 2;
            continue;
        }
        if VALUED.contains(&text.as_str()) {
            i += 2;
            continue;
        }
        if let Some(r) = text
            .strip_prefix("-I")
            .or_else(|| text.strip_prefix("--replace="))
        {
            replace = Some(r.to_string());
        } else if let Some(r) = text.strip_prefix("-i") {
            replace = Some(if r.is_empty() { "{}" } else { r }.to_string());
        } else if text == "--replace" {
            replace = Some("{}".to_string());
        }
        i += 1;
    }
    let mut command: Vec<Word> = if i < words.len() {
        words[i..].to_vec()
    } else {
        vec![Word::literal("echo")]
    };
    if ambiguous {
        command = vec![Word::any()];
    }
    if let Some(r) = replace.filter(|r| !r.is_empty()) {
        for word in &mut command {
            if word.as_literal().is_none_or(|t| t.contains(&r)) {
                *word = Word::any();
            }
        }
        // Replacement mode: no arguments are appended.
        return (vec![(command, false)], Some(0));
    }
    let mut with_input = command.clone();
    with_input.push(Word::any());
    (vec![(with_input, false), (command, false)], Some(0))
}

/// The commands of `find … -exec cmd {} ;` (also `-execdir`, `-ok`, `-okdir`, and `+`);
/// `{}` stands for a path below the one directory searched (anything, when several are).
fn find_exec(words: &[Word]) -> Vec<(Vec<Word>, bool)> {
    let roots: Vec<&Word> = words[1..]
        .iter()
        .take_while(|w| {
            w.as_literal()
                .is_none_or(|t| !t.starts_with('-') && t != "(" && t != "!")
        })
        .collect();
    let found = match roots.as_slice() {
        [] => Some(".".to_string()),
        [root] => root.as_literal(),
        _ => None,
    }
    .map_or_else(Word::any, |root| {
        let mut word = Word::literal(root.trim_end_matches('/'));
        word.pieces.extend([Piece::Lit('/'), Piece::Descendant]);
        word
    });
    let mut children = Vec::new();
    let mut i = 1;
    while i < words.len() {
        let action = words[i].as_literal();
        if matches!(
            action.as_deref(),
            Some("-exec" | "-execdir" | "-ok" | "-okdir")
        ) {
            let mut command = Vec::new();
            i += 1;
            while let Some(word) = words.get(i) {
                if matches!(word.as_literal().as_deref(), Some(";" | "+")) {
                    break;
                }
                let placeholder = word.as_literal().is_some_and(|t| t.contains("{}"));
                command.push(if placeholder {
                    found.clone()
                } else {
                    word.clone()
                });
                i += 1;
            }
            if !command.is_empty() {
                children.push((command, false));
            }
        }
        i += 1;
    }
    children
}

/// `git [global options] sub …` is also read as `git sub …`.
fn git(words: &[Word]) -> (Vec<(Vec<Word>, bool)>, Option<usize>) {
    let args: Vec<Option<String>> = words.iter().skip(1).map(Word::as_literal).collect();
    let i = 1 + super::git_globals::read(&args).subcommand;
    if i == 1 || i >= words.len() {
        return (Vec::new(), None);
    }
    let mut inner = vec![words[0].clone()];
    inner.extend_from_slice(&words[i..]);
    (vec![(inner, true)], Some(0))
}
