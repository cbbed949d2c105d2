//! Programs that take a script of their own, read far enough to tell whether it runs
//! commands or writes files: awk programs, sed scripts, git subcommands and configuration
//! that store or run commands, ssh remote command lines, and `[[ … ]]` arithmetic.

use crate::core::permission::shell::Word;

use super::opacity::{joined, reads_stdin};
use super::tree::CommandNode;

/// The awk program text (None when it comes from a file or is computed at run time is
/// reported by the caller as opaque only for the computed case).
pub(super) fn awk_program(args: &[Option<String>]) -> Option<String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let arg = arg.as_deref()?;
        match arg {
            "-f" | "--file" => {
                // A program file; from standard input or computed, it cannot be read.
                return match args.get(i + 1) {
                    Some(Some(file)) if !reads_stdin(file) => Some(String::new()),
                    _ => None,
                };
            }
            "-F" | "-v" | "--assign" | "--field-separator" | "-i" | "--include" => i += 2,
            "-e" | "--source" => return args.get(i + 1).cloned().flatten(),
            "--" => return args.get(i + 1).cloned().flatten(),
            a if a.starts_with('-') => i += 1,
            a => return Some(a.to_string()),
        }
    }
    Some(String::new())
}

pub(super) fn awk_runs_commands(program: &str) -> bool {
    program.contains("system") || program.replace("||", "").contains('|')
}

/// Every sed script of the command line (None when computed at run time).
pub(super) fn sed_scripts(args: &[Option<String>]) -> Vec<Option<String>> {
    let mut scripts = Vec::new();
    let mut first_operand = None;
    let mut explicit = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_deref() {
            Some("-e" | "--expression") => {
                scripts.push(args.get(i + 1).cloned().flatten());
                explicit = true;
                i += 2;
                continue;
            }
            Some("-f" | "--file") => {
                explicit = true;
                if !matches!(args.get(i + 1), Some(Some(file)) if !reads_stdin(file)) {
                    scripts.push(None);
                }
                i += 2;
                continue;
            }
            Some(a) if a.starts_with("--expression=") => {
                scripts.push(Some(a["--expression=".len()..].to_string()));
                explicit = true;
            }
            Some(a) if a.starts_with('-') && a.len() > 1 => {}
            other => {
                if first_operand.is_none() {
                    first_operand = Some(other.map(str::to_string));
                }
            }
        }
        i += 1;
    }
    if !explicit && let Some(script) = first_operand {
        scripts.push(script);
    }
    scripts
}

/// What a sed script does besides printing.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct SedScript {
    /// Runs commands (`e`, `s///e`) or could not be read.
    pub runs: bool,
    /// Writes files (`w`, `W`, `s///w`).
    pub writes: bool,
}

pub(super) fn sed_script(script: &str) -> SedScript {
    let chars: Vec<char> = script.chars().collect();
    let mut result = SedScript::default();
    let mut i = 0;
    let skip_field = |i: &mut usize, delim: char| {
        while *i < chars.len() && chars[*i] != delim {
            if chars[*i] == '\\' {
                *i += 1;
            }
            *i += 1;
        }
        *i += 1;
    };
    let to_line_end = |i: &mut usize| {
        while *i < chars.len() && chars[*i] != '\n' {
            *i += 1;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            ' ' | '\t' | '\n' | ';' | '{' | '}' | '!' | ',' | '$' | '~' | '+' => {}
            '0'..='9' => {}
            '/' => skip_field(&mut i, '/'),
            '\\' => {
                if let Some(&delim) = chars.get(i) {
                    i += 1;
                    skip_field(&mut i, delim);
                }
            }
            's' | 'y' => {
                let Some(&delim) = chars.get(i) else {
                    result.runs = true;
                    return result;
                };
                i += 1;
                skip_field(&mut i, delim);
                skip_field(&mut i, delim);
                if c == 's' {
                    while let Some(&flag) = chars.get(i) {
                        match flag {
                            'e' => result.runs = true,
                            'w' => {
                                result.writes = true;
                                to_line_end(&mut i);
                                break;
                            }
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => {}
                            _ => break,
                        }
                        i += 1;
                    }
                }
            }
            'e' => {
                result.runs = true;
                return result;
            }
            'w' | 'W' => {
                result.writes = true;
                to_line_end(&mut i);
            }
            'r' | 'R' | 'a' | 'i' | 'c' | ':' | 'b' | 't' | 'T' => {
                while i < chars.len() && !matches!(chars[i], '\n' | ';') {
                    i += 1;
                }
            }
            'p' | 'P' | 'd' | 'D' | 'q' | 'Q' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'l'
            | '=' | 'z' | 'F' => {}
            _ => {
                result.runs = true;
                return result;
            }
        }
    }
    result
}

pub(super) fn git(node: &mut CommandNode, args: &[Option<String>]) {
    let mut i = 0;
    while let Some(Some(arg)) = args.get(i) {
        if !arg.starts_with('-') {
            break;
        }
        if arg == "-c"
            || arg.starts_with("--config-env")
            || arg.starts_with("--exec-path")
            || (arg.starts_with("-c") && arg.len() > 2)
        {
            node.opaque
                .push("git -c can define aliases and commands to run".to_string());
            return;
        }
        i += if matches!(
            arg.as_str(),
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" | "--attr-source"
        ) {
            2
        } else {
            1
        };
    }
    let sub = args.get(i).cloned().flatten();
    let rest = args.get(i + 1..).unwrap_or(&[]);
    let mut opaque = |reason: &str, script: Option<String>| {
        node.opaque.push(reason.to_string());
        node.scripts.extend(script);
    };
    match sub.as_deref() {
        None if args.get(i).is_some() => opaque("the git subcommand is computed at run time", None),
        Some("config") => {
            let key = rest
                .iter()
                .flatten()
                .find(|a| !a.starts_with('-'))
                .map(|k| k.to_ascii_lowercase());
            const COMMAND_KEYS: &[&str] = &[
                "pager",
                "editor",
                "sshcommand",
                "askpass",
                "fsmonitor",
                "hookspath",
                "textconv",
                "command",
                "cmd",
                "external",
                "program",
                "helper",
                "clean",
                "smudge",
                "process",
                "driver",
                "tool",
                "receivepack",
                "uploadpack",
                "exec",
                "proxy",
                "shell",
            ];
            let has_value = rest
                .iter()
                .filter(|a| a.as_deref().is_none_or(|a| !a.starts_with('-')))
                .count()
                > 1;
            if let Some(key) = key
                && has_value
                && (key.starts_with("alias.") || COMMAND_KEYS.iter().any(|k| key.contains(k)))
            {
                let value = rest.iter().flatten().filter(|a| !a.starts_with('-')).nth(1);
                opaque(
                    "git config stores a command to run later",
                    value.map(|v| v.trim_start_matches('!').to_string()),
                );
            }
        }
        Some("rebase") => {
            for (k, arg) in rest.iter().enumerate() {
                if matches!(arg.as_deref(), Some("-x" | "--exec")) {
                    opaque(
                        "git rebase --exec runs a command",
                        rest.get(k + 1).cloned().flatten(),
                    );
                }
            }
        }
        Some("bisect") if matches!(rest.first().and_then(|a| a.as_deref()), Some("run")) => {
            opaque("git bisect run runs a command", joined(&rest[1..]));
        }
        Some("submodule") if rest.iter().flatten().any(|a| a == "foreach") => {
            let at = rest
                .iter()
                .position(|a| a.as_deref() == Some("foreach"))
                .unwrap_or(0);
            opaque(
                "git submodule foreach runs a command",
                joined(&rest[at + 1..]),
            );
        }
        Some("filter-branch" | "filter-repo") => opaque("git filter-branch runs commands", None),
        Some("difftool" | "mergetool")
            if rest
                .iter()
                .flatten()
                .any(|a| a == "-x" || a == "-t" || a.starts_with("--tool")) =>
        {
            opaque("the git tool option runs a command", None)
        }
        Some("clone" | "fetch" | "pull" | "ls-remote" | "archive")
            if rest.iter().flatten().any(|a| a == "-u") =>
        {
            opaque("--upload-pack runs a command", None)
        }
        _ => {}
    }
}

/// `ssh host command…` runs the command line in the remote shell.
pub(super) fn ssh(node: &mut CommandNode, args: &[Option<String>]) {
    const VALUED: &[&str] = &[
        "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p",
        "-Q", "-R", "-S", "-W", "-w", "-B",
    ];
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_deref() {
            Some(a) if VALUED.contains(&a) => i += 2,
            Some(a) if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    if args.len() > i + 1 {
        node.opaque
            .push("ssh runs a command line in a remote shell".to_string());
        if let Some(text) = joined(&args[i + 1..]) {
            node.scripts.push(text);
        }
    }
}

/// `[[ $a -eq 1 ]]` evaluates `$a`'s value as arithmetic (which can run code).
pub(super) fn arithmetic_on_values(words: &[Word]) -> bool {
    const OPS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];
    let numeric = |w: Option<&Word>| {
        w.and_then(Word::as_literal).is_some_and(|t| {
            !t.is_empty()
                && t.trim_start_matches('-')
                    .chars()
                    .all(|c| c.is_ascii_digit())
        })
    };
    words.iter().enumerate().any(|(i, w)| {
        w.as_literal().is_some_and(|t| OPS.contains(&t.as_str()))
            && !(numeric(i.checked_sub(1).and_then(|p| words.get(p))) && numeric(words.get(i + 1)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts_that_run_or_write() {
        assert_eq!(sed_script("s/a/b/g"), SedScript::default());
        assert_eq!(sed_script("1,5p;$d"), SedScript::default());
        assert!(sed_script("s/.*/rm x/e").runs);
        assert!(sed_script("1e rm x").runs);
        assert!(sed_script("s/a/b/w out").writes);
        assert!(sed_script("/x/w out").writes);
        assert!(!sed_script("s/e/w/g").runs);
        assert!(sed_script("k").runs);
    }

    #[test]
    fn awk_programs_that_run_commands() {
        assert!(!awk_runs_commands("{print $1} $2 > 5 || x"));
        assert!(awk_runs_commands("BEGIN{system(\"rm x\")}"));
        assert!(awk_runs_commands("{print | \"sh\"}"));
        assert!(awk_runs_commands("BEGIN{\"date\" | getline d}"));
    }
}
