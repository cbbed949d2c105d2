//! Read deny rules and git's object store. A file a `Read(...)` rule denies that git
//! tracks is in git's history and index, out of the kernel's reach (objects are packed
//! under `.git/objects`): `git show HEAD:secrets/key.txt`, `git log -p`, `git archive`,
//! `git grep`, `git cat-file -p`, `git worktree add` or `git clone .` print or copy it.
//! When the policy knows such tracked files (`PermissionPolicy::git_tracked_denied`, found
//! at start-up), a git command that can print or copy tracked content is refused unless
//! its pathspecs keep it away from every one of them (`git log -p -- src/`, `git diff
//! -- . ':!secrets'`); commands that print only names, statistics or ids (`git log
//! --oneline`, `git diff --stat`, `git status`) run as before.

use std::path::{Path, PathBuf};

use crate::rules::basename;
use crate::shell::Word;

use super::analysis::Analysis;
use super::tree::CommandNode;

/// Subcommands that print tracked content unless told to print only names or counts.
const PATCH_PRINTERS: &[&str] = &[
    "show",
    "log",
    "whatchanged",
    "diff",
    "diff-tree",
    "diff-index",
    "diff-files",
    "stash",
];

/// Subcommands that print or copy tracked content whatever their options.
const CONTENT_READERS: &[&str] = &[
    "cat-file",
    "archive",
    "grep",
    "blame",
    "annotate",
    "format-patch",
    "bundle",
    "fast-export",
    "checkout-index",
    "unpack-file",
    "clone",
    "worktree",
    "notes",
    "am",
];

/// Options that make the patch printers print names, counts or ids only.
const NO_CONTENT: &[&str] = &[
    "--stat",
    "--numstat",
    "--shortstat",
    "--name-only",
    "--name-status",
    "--summary",
    "--raw",
    "-s",
    "--no-patch",
    "--quiet",
    "--dirstat",
];

/// Options that make the patch printers print content.
const PATCH: &[&str] = &[
    "-p",
    "-u",
    "--patch",
    "--cc",
    "-L",
    "--word-diff",
    "--patch-with-stat",
];

/// The first tracked denied file a git command of the line can print or copy, with the
/// subcommand that would.
pub(super) fn reached(
    analysis: &Analysis,
    tracked_denied: &[PathBuf],
    start_dir: &Path,
) -> Option<(String, PathBuf)> {
    if tracked_denied.is_empty() {
        return None;
    }
    let mut found = None;
    for command in &analysis.commands {
        command.tree.walk(&mut |node: &CommandNode| {
            if found.is_none() {
                found = node_reaches(&node.words, tracked_denied, start_dir);
            }
        });
    }
    found
}

/// [`reached`] for one simple command.
fn node_reaches(
    words: &[Word],
    tracked: &[PathBuf],
    start_dir: &Path,
) -> Option<(String, PathBuf)> {
    if words.first()?.as_literal().as_deref().map(basename) != Some("git") {
        return None;
    }
    // A word known only at run time counts as an argument of unknown meaning.
    let args: Vec<Option<String>> = words[1..].iter().map(Word::as_literal).collect();
    let globals = super::git_globals::read(&args);
    let sub = args.get(globals.subcommand)?.clone().unwrap_or_default();
    let mut dir = start_dir.to_path_buf();
    let mut dir_known = true;
    for moved in &globals.directories {
        match moved {
            Some(moved) => dir = dir.join(moved),
            None => dir_known = false,
        }
    }
    let rest = &args[globals.subcommand + 1..];
    if !prints_content(&sub, rest) {
        return None;
    }
    if !dir_known {
        // `-C` a directory known only at run time: its pathspecs mean nothing here.
        return tracked.first().map(|path| (sub.clone(), path.clone()));
    }
    let specs = Pathspecs::of(rest, &dir);
    tracked
        .iter()
        .find(|path| specs.reaches(path))
        .map(|path| (sub.clone(), path.clone()))
}

/// Whether `git <sub> <rest>` prints or copies tracked content.
fn prints_content(sub: &str, rest: &[Option<String>]) -> bool {
    let has = |options: &[&str]| {
        rest.iter().flatten().any(|a| {
            options
                .iter()
                .any(|o| a == o || (o.starts_with("--") && a.starts_with(&format!("{o}="))))
        })
    };
    if CONTENT_READERS.contains(&sub) {
        // `cat-file -t/-s/-e` print a type, a size or nothing.
        return !(sub == "cat-file" && has(&["-t", "-s", "-e"]));
    }
    if !PATCH_PRINTERS.contains(&sub) {
        return sub.is_empty();
    }
    // An option known only at run time may be `-p`.
    let patch = has(PATCH) || rest.iter().any(Option::is_none);
    // `REV:path` names a blob, printed whole whatever the options.
    let blob = rest
        .iter()
        .flatten()
        .any(|a| !a.starts_with(['-', ':']) && a.contains(':'));
    match sub {
        // `git log` prints patches only when asked; `git stash` only `show -p`.
        "log" | "whatchanged" => patch,
        "stash" => rest.first().and_then(|a| a.as_deref()) == Some("show") && patch,
        _ => blob || patch || !has(NO_CONTENT),
    }
}

/// The paths a git command limits itself to (`-- a b`, existing paths before `--`,
/// `REV:path`), and those it excludes (`':!x'`, `':(exclude)x'`).
struct Pathspecs {
    /// None: no limit (the whole tree), or one git cannot be told apart from everything.
    positive: Option<Vec<PathBuf>>,
    excluded: Vec<PathBuf>,
}

impl Pathspecs {
    fn of(rest: &[Option<String>], dir: &Path) -> Pathspecs {
        let mut specs = Pathspecs {
            positive: Some(Vec::new()),
            excluded: Vec::new(),
        };
        let mut after_dashes = false;
        for arg in rest {
            let Some(arg) = arg else {
                specs.positive = None;
                continue;
            };
            if arg == "--" {
                after_dashes = true;
            } else if let Some(excluded) = exclusion(arg) {
                specs.excluded.push(dir.join(excluded));
            } else if arg.starts_with('-') && !after_dashes {
                continue;
            } else if let Some((_, path)) = arg.split_once(':').filter(|_| !after_dashes) {
                // `REV:path` names the path from the repository's top unless it starts
                // with `./`: either way it may be any tracked file, so it limits only by
                // its last part's name.
                specs.add(Path::new(path.trim_start_matches("./")), dir, true);
            } else if after_dashes || dir.join(arg).exists() {
                specs.add(Path::new(arg), dir, false);
            }
        }
        specs
    }

    /// Adds a positive pathspec (`anywhere`: matched by its trailing components, since its
    /// base is not known here).
    fn add(&mut self, spec: &Path, dir: &Path, anywhere: bool) {
        let text = spec.to_string_lossy();
        if text.is_empty() || text.starts_with(':') || text.contains(['*', '?', '[']) {
            self.positive = None;
            return;
        }
        if let Some(list) = &mut self.positive {
            list.push(if anywhere {
                spec.to_path_buf()
            } else {
                dir.join(spec)
            });
        }
    }

    /// Whether the command can reach `path`.
    fn reaches(&self, path: &Path) -> bool {
        let covered = |spec: &PathBuf| {
            if spec.is_absolute() {
                path.starts_with(normal(spec))
            } else {
                // A `REV:path`: the tracked file ends with it, or lies below it.
                (0..path.components().count()).any(|skip| {
                    path.components()
                        .skip(skip)
                        .collect::<PathBuf>()
                        .starts_with(spec)
                })
            }
        };
        let limited = match &self.positive {
            None => true,
            Some(list) if list.is_empty() => true,
            Some(list) => list.iter().any(covered),
        };
        limited && !self.excluded.iter().any(|e| path.starts_with(normal(e)))
    }
}

/// The path of an exclusion pathspec (`:!x`, `:^x`, `:(exclude)x`).
fn exclusion(arg: &str) -> Option<&str> {
    arg.strip_prefix(":!")
        .or_else(|| arg.strip_prefix(":^"))
        .or_else(|| arg.strip_prefix(":(exclude)"))
        .filter(|p| !p.contains(['*', '?', '[']))
}

/// `path` without `.` parts and with `..` taken back (no symlinks resolved).
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::PathContext;

    fn reaches(line: &str) -> bool {
        let root = Path::new("/repo");
        let ctx = PathContext::new(root, None, &[]);
        let tracked = [root.join("secrets/key.txt")];
        reached(&Analysis::of(line, root, &ctx), &tracked, root).is_some()
    }

    #[test]
    fn history_readers_reach_a_tracked_denied_file() {
        for line in [
            "git show HEAD:secrets/key.txt",
            "git show HEAD",
            "git log -p",
            "git log --patch --follow -- secrets/key.txt",
            "git cat-file -p HEAD:secrets/key.txt",
            "git cat-file blob 1234abcd",
            "git archive HEAD",
            "git grep -h CANARY HEAD",
            "git diff HEAD~1",
            "git diff --cached",
            "git -C . show HEAD:./secrets/key.txt",
            "git stash show -p",
            "git worktree add /tmp/wt",
            "git clone . /tmp/copy",
            "git blame secrets/key.txt",
            "git log -p -- . ':!src'",
            "git format-patch -1 --stdout",
            "echo x && git show HEAD:secrets/key.txt | base64",
            "git diff -- 'secrets/*'",
            "d=.; git -C $d log -p -- src/",
        ] {
            assert!(reaches(line), "{line}");
        }
    }

    #[test]
    fn names_counts_and_other_paths_do_not() {
        for line in [
            "git status",
            "git log --oneline",
            "git log --stat",
            "git show --stat HEAD",
            "git show --name-only HEAD",
            "git diff --stat",
            "git diff --name-only HEAD~1",
            "git log -p -- src/",
            "git diff -- . ':!secrets'",
            "git show HEAD:src/main.rs",
            "git cat-file -t HEAD",
            "git branch -a",
            "git stash list",
            "git rev-parse HEAD",
            "git diff HEAD -- src/main.rs",
            "git log --pretty=format:%h:%s",
        ] {
            assert!(!reaches(line), "{line}");
        }
    }
}
