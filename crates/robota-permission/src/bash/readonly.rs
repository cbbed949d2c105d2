//! What a command does to files, as far as its words say: the built-in set of read-only
//! commands that never ask (`ls`, `cat`, `grep`, `find` without `-exec`/`-delete`,
//! `git status`/`diff`/`log` …), the file arguments of common readers (checked against
//! `Read(...)` rules and the working directories) and writers (`rm`, `mv`, `cp`, `tee`,
//! `sed -i` … checked like an Edit of that path), and the simple file commands
//! `acceptEdits` lets through.

use crate::shell::Word;

use super::getopt::{names_long, short_in};
use super::programs::{awk_runs_commands, sed_script, sed_scripts};

/// Commands that only read, whatever their arguments.
const ALWAYS_READ_ONLY: &[&str] = &[
    "ls",
    "read",
    "cat",
    "head",
    "tail",
    "wc",
    "pwd",
    "echo",
    "which",
    "whereis",
    "type",
    "file",
    "stat",
    "du",
    "df",
    "diff",
    "cmp",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "true",
    "false",
    "test",
    "[",
    "[[",
    "uname",
    "whoami",
    "id",
    "groups",
    "printenv",
    "cut",
    "tr",
    "nl",
    "tac",
    "rev",
    "od",
    "hexdump",
    "strings",
    "base64",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "shasum",
    "cksum",
    "sum",
    "seq",
    "column",
    "expand",
    "unexpand",
    "fold",
    "fmt",
    "paste",
    "join",
    "comm",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "jq",
    "less",
    "more",
    "sleep",
    "cd",
    "pushd",
    "popd",
    "dirs",
    "uptime",
    "nproc",
    "arch",
    "locale",
    "tty",
    "ps",
    "pgrep",
    "free",
    "look",
    ":",
    "env",
    "command",
    "builtin",
    "nice",
    "nohup",
    "timeout",
    "time",
    "stdbuf",
    "xargs",
    "tree",
    "lsof",
    "getconf",
    "cal",
];

/// Git subcommands that only read (some with further conditions below).
const GIT_READ_ONLY: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "blame",
    "rev-parse",
    "rev-list",
    "ls-files",
    "ls-tree",
    "cat-file",
    "describe",
    "shortlog",
    "grep",
    "whatchanged",
    "count-objects",
    "merge-base",
    "name-rev",
    "show-ref",
    "var",
    "check-ignore",
    "check-attr",
    "for-each-ref",
    "help",
    "version",
    "--version",
    "branch",
    "tag",
    "remote",
    "config",
    "stash",
    "worktree",
    "reflog",
    "diff-tree",
    "diff-files",
    "diff-index",
    "verify-commit",
    "verify-tag",
];

/// File commands `acceptEdits` runs without asking inside the working directories.
pub(super) const ACCEPT_EDITS: &[&str] = &["mkdir", "touch", "mv", "cp"];

/// Whether the command itself (not what it runs) only reads.
pub(super) fn own_read_only(name: &str, words: &[Word]) -> bool {
    let args: Vec<Option<String>> = words.iter().skip(1).map(Word::as_literal).collect();
    let has = |flag: &str| {
        args.iter()
            .flatten()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    let operands = || {
        args.iter()
            .filter(|a| a.as_deref().is_none_or(|a| !a.starts_with('-')))
            .count()
    };
    match name {
        "find" => !args.iter().flatten().any(|a| {
            matches!(
                a.as_str(),
                "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls"
            )
        }),
        // `-o file`, `-no file`, `-ofile`, `--output=file`, `--out file` all write.
        "sort" => !args.iter().flatten().any(|a| {
            short_in(a, 'o', "koStT").is_some()
                || names_long(a, "output", 1)
                || names_long(a, "compress-program", 2)
        }),
        "uniq" | "xxd" => operands() <= 1,
        "date" => !has("-s") && !has("--set"),
        "hostname" => args.is_empty(),
        "printf" => !has("-v"),
        "tree" => !has("-o"),
        "yq" => !has("-i") && !has("--inplace"),
        "command" => true,
        "sed" => {
            !args.iter().flatten().any(|a| {
                a == "-i"
                    || a.starts_with("--in-place")
                    || (a.starts_with("-i") && !a.starts_with("--"))
                    || (a.starts_with('-')
                        && !a.starts_with("--")
                        && a.contains('i')
                        && a.len() <= 4)
            }) && sed_scripts(&args).iter().all(|s| {
                s.as_deref().is_some_and(|s| {
                    let k = sed_script(s);
                    !k.runs && !k.writes
                })
            })
        }
        "awk" | "gawk" | "mawk" | "nawk" => {
            let program = args.iter().flatten().find(|a| !a.starts_with('-'));
            !has("-f")
                && !has("-i")
                && program.is_some_and(|p| !awk_runs_commands(p) && !p.contains('>'))
        }
        "git" => git_read_only(&args),
        _ => ALWAYS_READ_ONLY.contains(&name),
    }
}

fn git_read_only(args: &[Option<String>]) -> bool {
    let globals = super::git_globals::read(args);
    if globals.sets_configuration {
        return false;
    }
    let i = globals.subcommand;
    let Some(Some(sub)) = args.get(i) else {
        return false;
    };
    let rest: Vec<&str> = args[i + 1..]
        .iter()
        .map(|a| a.as_deref().unwrap_or("*"))
        .collect();
    if !GIT_READ_ONLY.contains(&sub.as_str())
        || rest.iter().any(|a| {
            a.starts_with("--output") || *a == "-O" || a.starts_with("--open-files-in-pager")
        })
    {
        return false;
    }
    let positional = || rest.iter().filter(|a| !a.starts_with('-')).count();
    let only = |allowed: &[&str]| rest.iter().all(|a| allowed.contains(a));
    match sub.as_str() {
        "branch" => {
            positional() == 0
                && only(&[
                    "-a",
                    "-r",
                    "-v",
                    "-vv",
                    "--list",
                    "-l",
                    "--all",
                    "--remotes",
                    "--show-current",
                    "--verbose",
                    "--no-color",
                    "--color",
                ])
        }
        "tag" => positional() == 0 || rest.first().is_some_and(|a| matches!(*a, "-l" | "--list")),
        "remote" => {
            rest.is_empty() || only(&["-v", "--verbose"]) || rest.first() == Some(&"get-url")
        }
        "config" => rest
            .iter()
            .any(|a| matches!(*a, "--get" | "--get-all" | "--get-regexp" | "--list" | "-l")),
        "stash" => matches!(rest.first(), Some(&"list") | Some(&"show")),
        "worktree" => rest.first() == Some(&"list"),
        "reflog" => rest.is_empty() || rest.first() == Some(&"show"),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    fn words(text: &str) -> Vec<Word> {
        parse(text).commands.remove(0).words
    }

    fn read_only(text: &str) -> bool {
        let w = words(text);
        let name = w[0].as_literal().unwrap();
        own_read_only(&name, &w)
    }

    #[test]
    fn read_only_set() {
        for cmd in [
            "ls -la",
            "git status",
            "git -C sub log --oneline",
            "git branch -a",
            "git config --get user.name",
            "find . -name x",
            "sed -n 1,5p f",
            "awk '{print $1}' f",
            "sort f",
        ] {
            assert!(read_only(cmd), "{cmd}");
        }
        for cmd in [
            "git push",
            "git branch new",
            "git -c alias.x=y log",
            "git diff --output=x",
            "find . -delete",
            "sed -i s/a/b/ f",
            "sed s/a/b/w f",
            "awk 'BEGIN{system(\"x\")}'",
            "sort -o out f",
            "rm x",
            "curl x",
            "uniq a b",
            "git stash",
        ] {
            assert!(!read_only(cmd), "{cmd}");
        }
    }
}
