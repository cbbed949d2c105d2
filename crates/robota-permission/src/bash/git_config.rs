//! `git config` as a writer: a call that sets, adds, removes or edits a key (rather than
//! reading one) changes the repository's `.git/config` — `~/.gitconfig` with `--global`,
//! the named file with `--file` — so the protected-files guard sees it as a write there.
//! (An alias, `core.pager` or `core.fsmonitor` set that way runs code at the next git call.)

use std::path::Path;

use crate::paths::PathContext;
use crate::rules::basename;
use crate::shell::Word;
use crate::targets::FileTarget;
use crate::{PermissionPolicy, Verdict};

use super::analysis::Analysis;

/// Options of `git config` that only read.
const READING: &[&str] = &[
    "--get",
    "--get-all",
    "--get-regexp",
    "--get-urlmatch",
    "--get-color",
    "--get-colorbool",
    "-l",
    "--list",
    "get",
    "list",
];

/// The guard's verdict on the `git config` writes of the line, if any asks.
pub(super) fn config_writes(
    analysis: &Analysis,
    policy: &PermissionPolicy,
    start_dir: &Path,
    ctx: &PathContext<'_>,
) -> Option<Verdict> {
    let mut verdict = None;
    for command in &analysis.commands {
        command.tree.walk(&mut |node| {
            if verdict.is_some() {
                return;
            }
            let Some(file) = written_config(&node.words) else {
                return;
            };
            let target = FileTarget::of_word(&Word::literal(&file), Some(start_dir), ctx)
                .unwrap_or(FileTarget::Unknown);
            verdict = policy.guard_write(&target, "Edit", ctx);
        });
    }
    verdict
}

/// `path` taken from `dir`; a path known only at run time becomes one no rule names, so the
/// guard asks.
fn joined(dir: &str, path: Option<&str>) -> String {
    match path {
        Some(p) if p.starts_with('/') || dir == "." => p.to_string(),
        Some(p) => format!("{dir}/{p}"),
        None => "\u{1}".to_string(),
    }
}

/// The config file a `git … config …` command writes, if it writes one.
fn written_config(words: &[Word]) -> Option<String> {
    let name = words.first()?.as_literal()?;
    if basename(&name) != "git" {
        return None;
    }
    let words: Vec<Option<String>> = words[1..].iter().map(Word::as_literal).collect();
    let globals = super::git_globals::read(&words);
    if words.get(globals.subcommand)?.as_deref() != Some("config") {
        return None;
    }
    // `-C dir` moves where `.git` is looked for, each one from where the last left off.
    // A `--git-dir` may name the repository's own under another name (a symlink made on
    // the same line), so the file is taken as a `.git/config` all the same: the guard's.
    let mut dir = String::from(".");
    for moved in &globals.directories {
        dir = joined(&dir, moved.as_deref());
    }
    let rest = words[globals.subcommand + 1..].iter();
    let args: Vec<String> = rest.map(|w| w.clone().unwrap_or_default()).collect();
    if args.iter().any(|a| READING.contains(&a.as_str())) {
        return None;
    }
    let mut file = format!("{dir}/.git/config");
    let mut operands = 0;
    let mut writes = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--global" => file = "~/.gitconfig".into(),
            "--system" => file = "/etc/gitconfig".into(),
            "-f" | "--file" => file = joined(&dir, args.next().map(String::as_str)),
            a if a.starts_with("--file=") => file = joined(&dir, Some(&a["--file=".len()..])),
            "--add" | "--unset" | "--unset-all" | "--replace-all" | "--rename-section"
            | "--remove-section" | "-e" | "--edit" | "set" | "unset" | "edit"
            | "rename-section" | "remove-section" => writes = true,
            a if a.starts_with('-') => {}
            _ => operands += 1,
        }
    }
    (writes || operands >= 2).then_some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split(' ').map(Word::literal).collect()
    }

    #[test]
    fn setting_a_key_writes_and_reading_one_does_not() {
        let w = |l: &str| written_config(&words(l));
        assert_eq!(
            w("git config alias.x !rm").as_deref(),
            Some("./.git/config")
        );
        assert_eq!(
            w("git config --global core.pager evil").as_deref(),
            Some("~/.gitconfig")
        );
        assert_eq!(
            w("git -C sub config core.fsmonitor x").as_deref(),
            Some("sub/.git/config")
        );
        assert_eq!(w("git config --file f.cfg a.b c").as_deref(), Some("f.cfg"));
        assert_eq!(
            w("git -C a -C b config --file f.cfg a.b c").as_deref(),
            Some("a/b/f.cfg")
        );
        assert_eq!(
            w("git -C .git config --file config a.b c").as_deref(),
            Some(".git/config")
        );
        assert_eq!(
            w("git --git-dir=g config core.pager x").as_deref(),
            Some("./.git/config")
        );
        assert_eq!(
            w("git config --unset core.pager").as_deref(),
            Some("./.git/config")
        );
        assert_eq!(
            w("git config set core.pager x").as_deref(),
            Some("./.git/config")
        );
        assert_eq!(w("git config user.name"), None);
        assert_eq!(w("git config --get user.name"), None);
        assert_eq!(w("git config --list"), None);
        assert_eq!(w("git status"), None);
        assert_eq!(w("echo config a b"), None);
    }
}
