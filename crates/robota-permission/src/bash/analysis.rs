//! A Bash command line read for a decision: each simple command as a [`CommandNode`] tree,
//! the files every command reads and writes (arguments and redirections, resolved against
//! the directory the line has `cd`-ed into by then), every reason it is opaque, and the
//! commands of literal scripts handed to a shell (`sh -c '…'`, `eval …`), read the same way.

use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::paths::PathContext;
use crate::rules::basename;
use crate::shell::{self, Piece, RedirectKind, Word};
use crate::targets::FileTarget;

use super::file_args::{FileUse, file_arguments};
use super::session_files::{implicit_files, literal_args};
use super::tree::{self, CommandNode};

/// How deep literal shell scripts inside scripts are still read.
const MAX_SCRIPT_DEPTH: usize = 4;

/// Variables whose value changes which program a name runs or runs code by itself.
const DANGEROUS_VARIABLES: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "CDPATH",
    "HOME",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_ASKPASS",
    "GIT_EXEC_PATH",
    "GIT_PROXY_COMMAND",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "MANPAGER",
    "LESSOPEN",
    "LESSCLOSE",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "NODE_OPTIONS",
    "PERL5OPT",
    "RUBYOPT",
    "PYTHONSTARTUP",
    "BROWSER",
    "PYTHONINSPECT",
];

fn dangerous_variable(name: &str) -> bool {
    DANGEROUS_VARIABLES.contains(&name)
        || ["LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// One file read or written.
#[derive(Debug, Clone)]
pub(super) struct Access {
    pub use_: FileUse,
    pub target: FileTarget,
    /// From a redirection (`> file`) rather than an argument.
    pub redirect: bool,
}

/// One simple command of the line.
#[derive(Debug, Clone)]
pub(super) struct Analysed {
    pub tree: CommandNode,
    /// No assignment in front of it changes what runs.
    pub safe_assignments: bool,
    /// Its entries in [`Analysis::accesses`].
    pub accesses: Range<usize>,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Analysis {
    pub commands: Vec<Analysed>,
    pub opaque: Vec<String>,
    pub accesses: Vec<Access>,
    /// Files run as code (programs by path, scripts, sourced files).
    pub executed: Vec<FileTarget>,
    /// Project files programs run without naming them (a Makefile under `make` …).
    pub implicit: Vec<PathBuf>,
}

impl Analysis {
    /// What `command`, started in `start_dir`, would run and touch.
    pub fn of(command: &str, start_dir: &Path, ctx: &PathContext<'_>) -> Self {
        let mut analysis = Analysis::default();
        analysis.read(command, &mut Some(start_dir.to_path_buf()), ctx, 0);
        let writes = || {
            analysis
                .accesses
                .iter()
                .filter(|a| a.use_ == FileUse::Write)
        };
        let runs_what_it_writes = analysis
            .executed
            .iter()
            .any(|run| writes().any(|a| may_be_same(run, &a.target)))
            // A makefile, `package.json` or git hook the same line writes.
            || analysis
                .implicit
                .iter()
                .any(|file| writes().any(|a| may_lie_in(&a.target, file)));
        if runs_what_it_writes {
            analysis.opaque("the command runs a file it writes itself".to_string());
        }
        analysis
    }

    pub(super) fn opaque(&mut self, reason: String) {
        if !self.opaque.contains(&reason) {
            self.opaque.push(reason);
        }
    }

    fn read(&mut self, text: &str, cwd: &mut Option<PathBuf>, ctx: &PathContext<'_>, depth: usize) {
        let script = shell::parse(text);
        for reason in script.opaque {
            self.opaque(reason);
        }
        for command in script.commands {
            let tree = tree::build(command.words, command.stdin_fed, 0);
            let start = self.accesses.len();
            let mut safe_assignments = true;
            for assignment in &command.assignments {
                if dangerous_variable(&assignment.name) {
                    safe_assignments = false;
                    self.opaque(format!(
                        "setting {} changes what commands run",
                        assignment.name
                    ));
                }
            }
            for redirect in &command.redirects {
                let use_ = match redirect.kind {
                    RedirectKind::Read => FileUse::Read,
                    RedirectKind::Write => FileUse::Write,
                    _ => continue,
                };
                self.access(use_, &redirect.target, cwd.as_deref(), ctx, true);
            }
            let mut found = Vec::new();
            let mut scripts = Vec::new();
            let mut reasons = Vec::new();
            let mut new_cwd = None;
            let mut executed = Vec::new();
            let mut implicit = Vec::new();
            tree.walk(&mut |node| {
                reasons.extend(node.opaque.iter().cloned());
                executed.extend(node.executes.iter().cloned());
                scripts.extend(node.scripts.iter().cloned());
                let Some(full) = node.name() else { return };
                let name = basename(&full);
                found.extend(file_arguments(name, &node.words));
                if let Some(dir) = cwd.as_deref() {
                    implicit.extend(implicit_files(
                        name,
                        &literal_args(&node.words),
                        dir,
                        ctx.home,
                    ));
                }
                if matches!(
                    name,
                    "env" | "export" | "declare" | "typeset" | "local" | "readonly"
                ) {
                    for word in &node.words[1..] {
                        let name: Option<String> = word
                            .pieces
                            .iter()
                            .take_while(|p| **p != Piece::Lit('='))
                            .map(|p| match p {
                                Piece::Lit(c) => Some(*c),
                                _ => None,
                            })
                            .collect();
                        let assigns = word.pieces.contains(&Piece::Lit('='));
                        match name {
                            Some(var) if assigns && dangerous_variable(&var) => {
                                reasons.push(format!("setting {var} changes what commands run"));
                            }
                            None if assigns => {
                                reasons.push("a variable name is computed at run time".to_string());
                            }
                            _ => {}
                        }
                    }
                }
                if matches!(name, "cd" | "pushd" | "popd") {
                    new_cwd = Some(changed_dir(name, &node.words, cwd.as_deref(), ctx));
                }
            });
            for reason in reasons {
                self.opaque(reason);
            }
            self.implicit.extend(implicit);
            for (use_, word) in found {
                self.access(use_, &word, cwd.as_deref(), ctx, false);
            }
            for path in executed {
                if let Some(target) =
                    FileTarget::of_word(&Word::literal(&path), cwd.as_deref(), ctx)
                {
                    self.executed.push(target);
                }
            }
            if let Some(dir) = new_cwd {
                *cwd = dir;
            }
            self.commands.push(Analysed {
                tree,
                safe_assignments,
                accesses: start..self.accesses.len(),
            });
            for script in scripts {
                if depth < MAX_SCRIPT_DEPTH {
                    self.read(&script, &mut cwd.clone(), ctx, depth + 1);
                } else {
                    self.opaque("shell scripts nest too deeply to be read".to_string());
                }
            }
        }
    }

    fn access(
        &mut self,
        use_: FileUse,
        word: &Word,
        cwd: Option<&Path>,
        ctx: &PathContext<'_>,
        redirect: bool,
    ) {
        if let Some(target) = FileTarget::of_word(word, cwd, ctx) {
            self.accesses.push(Access {
                use_,
                target,
                redirect,
            });
        }
    }
}

/// Whether two files may be the same one (unknown parts may be anything).
/// Whether the written `target` may be `file` or lie below it.
fn may_lie_in(target: &FileTarget, file: &Path) -> bool {
    match target {
        FileTarget::Known(t) => t.lexical.starts_with(file) || t.real.starts_with(file),
        _ => true,
    }
}

fn may_be_same(a: &FileTarget, b: &FileTarget) -> bool {
    match (a, b) {
        (FileTarget::Known(a), FileTarget::Known(b)) => a.lexical == b.lexical || a.real == b.real,
        _ => true,
    }
}

/// The directory after `cd`/`pushd`/`popd` (None when it cannot be known).
fn changed_dir(
    name: &str,
    words: &[Word],
    cwd: Option<&Path>,
    ctx: &PathContext<'_>,
) -> Option<PathBuf> {
    if name == "popd" {
        return None;
    }
    let target = words.get(1..).unwrap_or_default().iter().find(|w| {
        w.as_literal()
            .is_none_or(|t| !t.starts_with('-') || t == "-")
    });
    match target {
        None => ctx.home.map(Path::to_path_buf),
        Some(word) => match FileTarget::of_word(word, cwd, ctx)? {
            FileTarget::Known(path) => {
                (word.as_literal().as_deref() != Some("-")).then_some(path.lexical)
            }
            _ => None,
        },
    }
}
