//! `git config` as a writer: a call that sets, adds, removes or edits a key (rather than
//! reading one) changes the repository's `.git/config` — `~/.gitconfig` with `--global`,
//! the named file with `--file` — so the protected-files guard sees it as a write there.
//! (An alias, `core.pager` or `core.fsmonitor` set that way runs code at the next git call.)
//! A key on the [`BENIGN_KEYS`] list (`user.email`, `remote.origin.url`, …) runs nothing,
//! so setting one is not guarded.
//!
//! The kernel makes `.git/config` and the user's git config read-only to every confined
//! Bash call; [`only_config_writers`] names the lines that may write them all the same:
//! lines of `git config`, `git remote add|set-url` and `git branch --set-upstream-to`
//! alone, which run no hook and no code, and whose other writes are all named.

use std::path::Path;

use crate::paths::PathContext;
use crate::rules::basename;
use crate::shell::Word;
use crate::targets::FileTarget;
use crate::{PermissionPolicy, Verdict};

use super::analysis::Analysis;
use super::tree::CommandNode;

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

/// Keys whose value runs nothing and redirects nothing (matched without case, `*` one
/// name part): setting one is ordinary work (`git config user.email …`). Left out on
/// purpose: `alias.*`, `core.*` but the few below, `credential.*`, `include*`, `http.*`,
/// `url.*`, `safe.directory`, `gpg.*`, `diff.*`/`merge.*` drivers, `remote.*.uploadpack`.
pub(super) const BENIGN_KEYS: &[&str] = &[
    "user.*",
    "init.defaultbranch",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "push.followtags",
    "fetch.prune",
    "fetch.prunetags",
    "rebase.autosquash",
    "rebase.autostash",
    "rebase.updaterefs",
    "merge.conflictstyle",
    "merge.ff",
    "rerere.enabled",
    "rerere.autoupdate",
    "branch.*.remote",
    "branch.*.merge",
    "branch.*.rebase",
    "branch.*.description",
    "remote.*.url",
    "remote.*.pushurl",
    "remote.*.fetch",
    "remote.*.push",
    "remote.*.prune",
    "remote.*.tagopt",
    "color.*",
    "color.*.*",
    "column.*",
    "advice.*",
    "log.*",
    "status.*",
    "diff.algorithm",
    "diff.renames",
    "diff.colormoved",
    "core.autocrlf",
    "core.eol",
    "core.filemode",
    "core.ignorecase",
    "core.quotepath",
    "core.safecrlf",
    "core.whitespace",
    "commit.gpgsign",
    "commit.verbose",
    "tag.gpgsign",
];

/// Whether setting `key` runs nothing (see [`BENIGN_KEYS`]).
fn benign_key(key: &str) -> bool {
    let parts: Vec<&str> = key.split('.').collect();
    BENIGN_KEYS.iter().any(|pattern| {
        let wanted: Vec<&str> = pattern.split('.').collect();
        wanted.len() == parts.len()
            && wanted
                .iter()
                .zip(&parts)
                .all(|(w, p)| !p.is_empty() && (*w == "*" || w.eq_ignore_ascii_case(p)))
    })
}

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
            let Some(ConfigWrite { file, benign }) = written_config(&node.words) else {
                return;
            };
            if benign {
                return;
            }
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

/// What a `git … config …` command writes.
#[derive(Debug, PartialEq, Eq)]
struct ConfigWrite {
    /// The config file (`./.git/config`, `~/.gitconfig`, a `--file`).
    file: String,
    /// It sets or unsets one [`BENIGN_KEYS`] key in git's own config file (no `--file`,
    /// no `--edit`, no section renamed or removed).
    benign: bool,
}

/// The config file a `git … config …` command writes, if it writes one.
fn written_config(words: &[Word]) -> Option<ConfigWrite> {
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
    let mut operands: Vec<&str> = Vec::new();
    let mut writes = false;
    let mut plain = true;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--global" => file = "~/.gitconfig".into(),
            "--system" => (file, plain) = ("/etc/gitconfig".into(), false),
            "-f" | "--file" => {
                (file, plain) = (joined(&dir, args.next().map(String::as_str)), false)
            }
            a if a.starts_with("--file=") => {
                (file, plain) = (joined(&dir, Some(&a["--file=".len()..])), false);
            }
            "--add" | "--unset" | "--unset-all" | "--replace-all" | "set" | "unset" => {
                writes = true
            }
            "--rename-section" | "--remove-section" | "-e" | "--edit" | "edit"
            | "rename-section" | "remove-section" => (writes, plain) = (true, false),
            a if a.starts_with('-') => {}
            operand => operands.push(operand),
        }
    }
    let key = operands.first().copied().unwrap_or_default();
    (writes || operands.len() >= 2).then(|| ConfigWrite {
        file,
        benign: plain && benign_key(key),
    })
}

/// Whether the line is made only of git commands that write git's config files and run
/// nothing else: `git config` (not `--edit`), `git remote add` (without `--fetch`) or
/// `set-url`, `git branch --set-upstream-to`/`-u`/`--unset-upstream`; with no global
/// option that sets configuration, nothing read at run time, and every file it writes
/// named. None of them runs a hook, so the kernel may leave git's config writable for it.
pub(super) fn only_config_writers(analysis: &Analysis) -> bool {
    analysis.opaque.is_empty()
        && !analysis.commands.is_empty()
        && analysis.accesses.iter().all(|a| {
            a.use_ != super::file_args::FileUse::Write || matches!(a.target, FileTarget::Known(_))
        })
        && analysis
            .commands
            .iter()
            .all(|c| c.safe_assignments && node_writes_config_only(&c.tree))
}

/// [`writes_config_only`] for a command and what it runs (`git -C sub …` runs itself in
/// `sub`).
fn node_writes_config_only(node: &CommandNode) -> bool {
    writes_config_only(&node.words) && node.runs.iter().all(node_writes_config_only)
}

/// Whether `git …` (`words`) is one of [`only_config_writers`]'s commands.
fn writes_config_only(words: &[Word]) -> bool {
    let Some(words) = words
        .iter()
        .map(Word::as_literal)
        .collect::<Option<Vec<String>>>()
    else {
        return false;
    };
    if words.first().map(|w| basename(w)) != Some("git") {
        return false;
    }
    let args = &words[1..];
    let globals = super::git_globals::read(&args.iter().map(Some).collect::<Vec<_>>());
    if globals.sets_configuration {
        return false;
    }
    let rest: Vec<&str> = args
        .iter()
        .skip(globals.subcommand)
        .map(String::as_str)
        .collect();
    let has = |options: &[&str]| {
        rest.iter().any(|a| {
            options
                .iter()
                .any(|o| a == o || a.starts_with(&format!("{o}=")))
        })
    };
    match rest.as_slice() {
        ["config", ..] => !has(&["-e", "--edit", "edit"]),
        ["remote", "add", ..] => !has(&["-f", "--fetch"]),
        ["remote", "set-url", ..] => true,
        ["branch", ..] => has(&["-u", "--set-upstream-to", "--unset-upstream"]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split(' ').map(Word::literal).collect()
    }

    #[test]
    fn setting_a_key_writes_and_reading_one_does_not() {
        let w = |l: &str| written_config(&words(l)).map(|c| c.file);
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

    #[test]
    fn a_benign_key_is_not_guarded_and_code_running_ones_are() {
        let benign = |l: &str| written_config(&words(l)).map(|c| c.benign);
        for line in [
            "git config user.email a@b.c",
            "git config --global user.name Ann",
            "git config set init.defaultBranch main",
            "git config remote.Origin.url https://example.com/r.git",
            "git config --unset branch.main.merge",
            "git config color.diff.meta blue",
        ] {
            assert_eq!(benign(line), Some(true), "{line}");
        }
        for line in [
            "git config core.fsmonitor ./x",
            "git config core.hooksPath h",
            "git config alias.st !sh",
            "git config --file .claude/settings.json user.name x",
            "git config --edit",
            "git config remote.origin.uploadpack ./x",
            "git config include.path ../evil",
            "git config url.x.insteadOf https://github.com/",
            "git config user..email x",
        ] {
            assert_eq!(benign(line), Some(false), "{line}");
        }
    }

    fn only_writers(line: &str) -> bool {
        let ctx = PathContext::new(Path::new("/repo"), None, &[]);
        only_config_writers(&Analysis::of(line, Path::new("/repo"), &ctx))
    }

    #[test]
    fn only_hookless_config_writers_may_write_gits_config() {
        for line in [
            "git config user.email a@b.c",
            "git config --global init.defaultBranch main",
            "git remote add origin https://example.com/r.git",
            "git remote set-url origin u && git branch -u origin/main",
            "git -C sub branch --set-upstream-to=origin/main",
        ] {
            assert!(only_writers(line), "{line}");
        }
        for line in [
            "git push -u origin main",
            "git remote add -f origin u",
            "git config --edit",
            "git -c core.editor=x config -e",
            "git config user.email x && make",
            "git config user.email x > $f",
            "git commit -m x",
            "sudo git config user.email x",
            "git config user.email $(cat f)",
            "python3 -c 'print(1)'",
            "git branch new",
        ] {
            assert!(!only_writers(line), "{line}");
        }
    }
}
