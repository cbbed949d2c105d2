//! Programs that take a script of their own, read far enough to tell whether it runs
//! commands or writes files: awk programs, sed scripts, git subcommands and configuration
//! that store or run commands, ssh remote command lines, and `[[ … ]]` arithmetic.

use crate::shell::Word;

use super::getopt::{long_parts, long_value, names_long, short_in, short_value};
use super::opacity::{joined, reads_stdin};
use super::session_files::GIT_COMMAND_KEYS;
use super::tree::CommandNode;

/// The awk program text (None when it comes from a file or is computed at run time is
/// reported by the caller as opaque only for the computed case).
pub(super) fn awk_program(args: &[Option<String>]) -> Option<String> {
    /// Short options taking a value (gawk's and POSIX awk's).
    const VALUED: &str = "fFvieElLW";
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let arg = arg.as_deref()?;
        if arg == "--" {
            return args.get(i + 1).cloned().flatten();
        }
        if !arg.starts_with('-') || arg == "-" {
            return Some(arg.to_string());
        }
        let file = ['f', 'E']
            .iter()
            .find_map(|l| short_value(args, i, *l, VALUED))
            .or_else(|| long_value(args, i, "file", 2))
            .or_else(|| long_value(args, i, "exec", 3));
        if let Some(file) = file {
            // A program file; from standard input or computed, it cannot be read.
            return file.filter(|f| !reads_stdin(f)).map(|_| String::new());
        }
        if let Some(source) =
            short_value(args, i, 'e', VALUED).or_else(|| long_value(args, i, "source", 2))
        {
            return source;
        }
        // Any other option: skip its value when it is in the next word.
        let takes_next = match long_parts(arg) {
            Some((name, None)) => ["assign", "field-separator", "include", "load"]
                .iter()
                .any(|o| o.starts_with(name) && name.len() >= 2),
            Some(_) => false,
            None => arg[1..]
                .char_indices()
                .find(|(_, c)| VALUED.contains(*c))
                .is_some_and(|(k, c)| k + c.len_utf8() == arg.len() - 1),
        };
        i += if takes_next { 2 } else { 1 };
    }
    Some(String::new())
}

pub(super) fn awk_runs_commands(program: &str) -> bool {
    program.contains("system") || program.replace("||", "").contains('|')
}

/// Every sed script of the command line (None when computed at run time).
pub(super) fn sed_scripts(args: &[Option<String>]) -> Vec<Option<String>> {
    /// Short options taking a value (`-i` and `-l` take the rest of the word).
    const VALUED: &str = "efli";
    let mut scripts = Vec::new();
    let mut first_operand = None;
    let mut explicit = false;
    let mut options_end = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg
            .as_deref()
            .filter(|a| !options_end && a.starts_with('-') && a.len() > 1)
        else {
            if arg.as_deref() == Some("--") && !options_end {
                options_end = true;
            } else if first_operand.is_none() {
                first_operand = Some(arg.clone());
            }
            i += 1;
            continue;
        };
        if let Some(script) = short_in(text, 'e', VALUED)
            .map(|a| (a.is_some(), short_value(args, i, 'e', VALUED).flatten()))
            .or_else(|| {
                names_long(text, "expression", 1).then(|| {
                    let attached = long_parts(text).is_some_and(|(_, v)| v.is_some());
                    (attached, long_value(args, i, "expression", 1).flatten())
                })
            })
        {
            explicit = true;
            let (attached, value) = script;
            i += if attached { 1 } else { 2 };
            scripts.push(value);
            continue;
        }
        if let Some((attached, file)) = short_in(text, 'f', VALUED)
            .map(|a| (a.is_some(), short_value(args, i, 'f', VALUED).flatten()))
            .or_else(|| {
                names_long(text, "file", 2).then(|| {
                    let attached = long_parts(text).is_some_and(|(_, v)| v.is_some());
                    (attached, long_value(args, i, "file", 2).flatten())
                })
            })
        {
            explicit = true;
            if file.as_deref().is_none_or(reads_stdin) {
                scripts.push(None);
            }
            i += if attached { 1 } else { 2 };
            continue;
        }
        let line_length_next =
            text == "-l" || (names_long(text, "line-length", 1) && !text.contains('='));
        i += if line_length_next { 2 } else { 1 };
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
    let globals = super::git_globals::read(args);
    if globals.sets_configuration {
        node.opaque
            .push("git -c can define aliases and commands to run".to_string());
        return;
    }
    let i = globals.subcommand;
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
            let has_value = rest
                .iter()
                .filter(|a| a.as_deref().is_none_or(|a| !a.starts_with('-')))
                .count()
                > 1;
            if let Some(key) = key
                && has_value
                && (key.starts_with("alias.") || GIT_COMMAND_KEYS.iter().any(|k| key.contains(k)))
            {
                let value = rest.iter().flatten().filter(|a| !a.starts_with('-')).nth(1);
                opaque(
                    "git config stores a command to run later",
                    value.map(|v| v.trim_start_matches('!').to_string()),
                );
            }
        }
        Some("rebase") => {
            for k in 0..rest.len() {
                // git's parse-options: `-x cmd`, `-xcmd`, `--exec=cmd`, `--exe cmd`.
                if let Some(command) =
                    short_value(rest, k, 'x', "xsXSC").or_else(|| long_value(rest, k, "exec", 3))
                {
                    opaque("git rebase --exec runs a command", command);
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
            if rest.iter().flatten().any(|a| {
                short_in(a, 'x', "xtSO").is_some()
                    || short_in(a, 't', "xtSO").is_some()
                    || names_long(a, "tool", 2)
                    || names_long(a, "extcmd", 2)
            }) =>
        {
            opaque("the git tool option runs a command", None)
        }
        Some("clone" | "fetch" | "pull" | "ls-remote" | "archive" | "push" | "send-pack")
            if rest.iter().flatten().any(|a| {
                short_in(a, 'u', "ubo").is_some()
                    || names_long(a, "upload-pack", 3)
                    || names_long(a, "receive-pack", 3)
                    || names_long(a, "exec", 3)
            }) =>
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
            // A config file (`ProxyCommand`, `LocalCommand`, `Match exec`) runs commands.
            Some("-F") => {
                match args.get(i + 1) {
                    Some(Some(file)) => node.executes.push(file.clone()),
                    _ => node
                        .opaque
                        .push("ssh reads a config file named at run time".to_string()),
                }
                i += 2;
            }
            Some(a) if a.starts_with("-F") => {
                node.executes.push(a[2..].to_string());
                i += 1;
            }
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
