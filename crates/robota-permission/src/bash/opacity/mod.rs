//! Commands whose effect cannot be read from their words: shells and interpreters fed a
//! string or standard input, `eval`, `trap`, `source` of a computed file, aliases,
//! arithmetic that can run code hidden in a value, programs told to run a command by an
//! option (`git -c`, `git rebase --exec`, `tar --to-command`, `ssh -o ProxyCommand`,
//! `awk 'system(…)'`, `sed 's/…/…/e'`, …). Such a command is opaque; when it hands a
//! literal script to a shell, the script is kept so deny rules can still be checked on it.

use crate::shell::{Piece, Word};

use super::getopt::{long_parts, long_value, names_long, short_in, short_value};
use super::programs::{
    arithmetic_on_values, awk_program, awk_runs_commands, git, sed_script, sed_scripts, ssh,
};
use super::tree::CommandNode;

mod tables;
use tables::{
    COMMAND_OPTIONS, FILE_RUNNERS, INTERPRETER_VALUED, INTERPRETERS, LONG_COMMAND_OPTIONS,
    NAME_BUILTINS, PROGRAM_COMMAND_OPTIONS, SHELL_RUNNERS, SHELLS,
};

/// Marks `node` opaque (with scripts) when its effect cannot be read from its words.
pub(super) fn check(name: &str, node: &mut CommandNode, stdin_fed: bool) {
    let words: Vec<Option<String>> = node.words.iter().map(Word::as_literal).collect();
    let args = words.get(1..).unwrap_or_default();
    command_options(name, node, args);
    if FILE_RUNNERS.contains(&name) {
        opaque(node, "the program runs programs it finds or a shell");
    }
    if SHELLS.contains(&name) {
        shell(node, args, stdin_fed);
    } else if let Some((_, inline)) = INTERPRETERS.iter().find(|(n, _)| *n == name) {
        interpreter(node, args, inline, valued_letters(name), stdin_fed);
    } else if is_python(name) {
        interpreter(node, args, &["-c"], valued_letters("python"), stdin_fed);
    }
    by_program(name, node, args, stdin_fed);
    if SHELL_RUNNERS.contains(&name) {
        opaque(node, "the program runs a command line through a shell");
        let operands: Vec<Option<String>> = args
            .iter()
            .filter(|a| a.as_deref().is_none_or(|a| !a.starts_with('-')))
            .cloned()
            .collect();
        if let Some(text) = joined(&operands) {
            node.scripts.push(text);
        }
    }
    name_builtins(name, node, args);
}

/// Marks the command opaque for `reason` (once).
fn opaque(node: &mut CommandNode, reason: &str) {
    if !node.opaque.iter().any(|r| r == reason) {
        node.opaque.push(reason.to_string());
    }
}

/// Options that make a program run another command (`find -exec`, `ssh -o
/// ProxyCommand=…`, `rsync -e`, …).
fn command_options(name: &str, node: &mut CommandNode, args: &[Option<String>]) {
    for (i, arg) in args.iter().enumerate() {
        let Some(arg) = arg else { continue };
        let option = arg.split('=').next().unwrap_or(arg);
        let by_prefix = LONG_COMMAND_OPTIONS
            .iter()
            .filter(|(programs, _)| programs.contains(&name))
            .flat_map(|(_, options)| options.iter())
            .find_map(|o| long_value(args, i, o, 2));
        if COMMAND_OPTIONS.contains(&option) || by_prefix.is_some() {
            opaque(node, "an option makes the program run another command");
            if let Some(Some(script)) = by_prefix {
                node.scripts.push(script);
            }
        }
        if contains_ignore_case(arg, "proxycommand")
            || contains_ignore_case(arg, "localcommand")
            || contains_ignore_case(arg, "knownhostscommand")
        {
            opaque(node, "an ssh option runs a local command");
        }
    }
    for (programs, options) in PROGRAM_COMMAND_OPTIONS {
        if programs.contains(&name) {
            for i in 0..args.len() {
                if let Some(value) = options.iter().find_map(|o| option_value(args, i, o)) {
                    opaque(node, "an option makes the program run another command");
                    if let Some(script) = value {
                        node.scripts.push(script);
                    }
                }
            }
        }
    }
}

/// What each program that can run code does with its arguments.
fn by_program(name: &str, node: &mut CommandNode, args: &[Option<String>], stdin_fed: bool) {
    match name {
        "eval" => {
            opaque(node, "eval runs text as a command");
            if let Some(text) = joined(args) {
                node.scripts.push(text);
            }
        }
        "source" | "." => match args.first() {
            Some(Some(path)) if !reads_stdin(path) => node.executes.push(path.clone()),
            Some(_) => opaque(
                node,
                "the file sourced is computed at run time or is standard input",
            ),
            None => {}
        },
        "trap" => {
            opaque(node, "trap stores a command to run later");
            if let Some(Some(text)) = args.first() {
                node.scripts.push(text.clone());
            }
        }
        "alias"
            if args
                .iter()
                .any(|a| a.as_deref().is_none_or(|a| a.contains('='))) =>
        {
            opaque(node, "alias can make one command name run another");
        }
        "hash" if args.iter().flatten().any(|a| a.starts_with("-p")) => {
            opaque(node, "hash -p makes one command name run another program");
        }
        "enable"
            if args
                .iter()
                .flatten()
                .any(|a| !matches!(a.as_str(), "-a" | "-p")) =>
        {
            opaque(node, "enable changes which builtins exist");
        }
        "fc" | "let" | "coproc" => opaque(node, "the command evaluates text at run time"),
        "mapfile" | "readarray" | "compgen" | "complete" => {
            for (i, arg) in args.iter().enumerate() {
                if matches!(arg.as_deref(), Some("-C" | "-F")) {
                    opaque(node, "a callback command runs at run time");
                    if let Some(Some(text)) = args.get(i + 1) {
                        node.scripts.push(text.clone());
                    }
                }
            }
        }
        "env" => env_split_string(node, args),
        "awk" | "gawk" | "mawk" | "nawk" | "sed" => awk_or_sed(name, node, args),
        "git" => git(node, args),
        "make" | "gmake" => make(node, args),
        "npx" | "pnpx" | "bunx" | "npm" => package_runner(name, node, args),
        "vim" | "vi" | "nvim" | "ex" | "view" | "vimdiff"
            if args.iter().flatten().any(|a| a.starts_with('+')) =>
        {
            opaque(
                node,
                "an editor command given on the command line can run anything",
            );
        }
        "ssh" => ssh(node, args),
        "ed" | "red" => line_editor(node, stdin_fed),
        "sqlite3" => sqlite(node, args, stdin_fed),
        _ => {
            if let Some(reason) = runs_elsewhere(name, args) {
                opaque(node, reason);
            }
        }
    }
}

/// `env -S`/`--split-string`: a string split into a command.
fn env_split_string(node: &mut CommandNode, args: &[Option<String>]) {
    for (i, arg) in args.iter().enumerate() {
        let Some(arg) = arg else { continue };
        let attached = short_in(arg, 'S', "uCSa").or_else(|| {
            names_long(arg, "split-string", 1)
                .then(|| long_parts(arg).and_then(|(_, v)| v).map(str::to_string))
        });
        match attached {
            Some(Some(rest)) => {
                opaque(node, "env -S splits a string into a command");
                let mut text = vec![Some(rest)];
                text.extend_from_slice(&args[i + 1..]);
                if let Some(text) = joined(&text) {
                    node.scripts.push(text);
                }
            }
            Some(None) => {
                opaque(node, "env -S splits a string into a command");
                if let Some(text) = joined(&args[i + 1..]) {
                    node.scripts.push(text);
                }
            }
            None => {}
        }
    }
}

/// An awk or sed program that may run commands, and program files they read.
fn awk_or_sed(name: &str, node: &mut CommandNode, args: &[Option<String>]) {
    let runs = if name == "sed" {
        sed_scripts(args)
            .iter()
            .any(|s| s.as_deref().is_none_or(|s| sed_script(s).runs))
    } else {
        awk_program(args).is_none_or(|p| awk_runs_commands(&p))
    };
    if runs {
        opaque(node, "the awk or sed program may run commands");
    }
    for i in 0..args.len() {
        let file = short_value(args, i, 'f', "fFvieElLW")
            .or_else(|| long_value(args, i, "file", 2))
            .or_else(|| long_value(args, i, "exec", 2))
            .or_else(|| gawk_w_exec(args, i));
        if let Some(Some(file)) = file {
            node.executes.push(file);
        }
    }
}

/// `-W exec file` / `-Wexec=file` (gawk, mawk): the program file, read like `-f`.
fn gawk_w_exec(args: &[Option<String>], i: usize) -> Option<Option<String>> {
    let arg = args.get(i)?.as_deref()?;
    // The word after `-W exec` (separate) or `-Wexec` (attached) is the file.
    let (value, next) = match arg {
        "-W" => (args.get(i + 1)?.as_deref()?, i + 2),
        _ => (arg.strip_prefix("-W")?, i + 1),
    };
    let rest = value.strip_prefix("exec")?;
    match rest.strip_prefix('=') {
        Some(file) => Some(Some(file.to_string())),
        None if rest.is_empty() => Some(args.get(next).cloned().flatten()),
        None => None,
    }
}

/// `ed`/`ex` read their commands from standard input, and `!cmd` runs a shell command.
fn line_editor(node: &mut CommandNode, stdin_fed: bool) {
    if stdin_fed {
        opaque(
            node,
            "the editor runs the commands it reads, `!` shell commands included",
        );
    }
}

/// sqlite3's dot-commands run programs (`.shell`, `.system`, `.output |cmd`, `.import
/// '|cmd'`); so may commands read from standard input or an `-init` file.
fn sqlite(node: &mut CommandNode, args: &[Option<String>], stdin_fed: bool) {
    let dot_command = args.iter().any(|a| {
        a.as_deref()
            .is_none_or(|a| a.lines().any(|l| l.trim_start().starts_with('.')))
    });
    let init = args
        .iter()
        .any(|a| matches!(a.as_deref(), Some("-init" | "--init" | "-cmd" | "--cmd")));
    if stdin_fed || dot_command || init {
        opaque(node, "sqlite3 runs dot-commands, which can run programs");
    }
}

/// `make --eval` and the makefiles make reads.
fn make(node: &mut CommandNode, args: &[Option<String>]) {
    for (i, arg) in args.iter().enumerate() {
        let Some(arg) = arg else { continue };
        if names_long(arg, "eval", 2) {
            opaque(node, "make --eval runs recipes given on the command line");
        }
        let file = short_value(args, i, 'f', "CfIoWEjlO")
            .or_else(|| long_value(args, i, "file", 2))
            .or_else(|| long_value(args, i, "makefile", 1));
        match file {
            Some(Some(file)) if !reads_stdin(&file) => node.executes.push(file),
            Some(_) => opaque(
                node,
                "the makefile is computed at run time or is standard input",
            ),
            None => {}
        }
    }
}

/// `npx -c`, `npm exec -c`: a command line through a shell.
fn package_runner(name: &str, node: &mut CommandNode, args: &[Option<String>]) {
    let exec =
        name != "npm" || matches!(args.first(), Some(Some(sub)) if sub == "exec" || sub == "x");
    for (i, arg) in args.iter().enumerate() {
        if exec && matches!(arg.as_deref(), Some("-c" | "--call")) {
            opaque(
                node,
                "the package runner runs a command line through a shell",
            );
            if let Some(Some(text)) = args.get(i + 1) {
                node.scripts.push(text.clone());
            }
        }
    }
}

/// Programs that hand commands to another shell or a later time (tmux, screen, crontab,
/// socat), unless the arguments only read.
fn runs_elsewhere(name: &str, args: &[Option<String>]) -> Option<&'static str> {
    match name {
        "tmux"
            if !matches!(
                args.first().and_then(|a| a.as_deref()),
                Some(
                    "ls" | "list-sessions"
                        | "list-windows"
                        | "list-panes"
                        | "has-session"
                        | "capture-pane"
                        | "display-message"
                        | "show-options"
                        | "-V"
                )
            ) =>
        {
            Some("tmux can run commands in another shell")
        }
        "screen"
            if !matches!(
                args.first().and_then(|a| a.as_deref()),
                Some("-ls" | "-list")
            ) =>
        {
            Some("screen can run commands in another shell")
        }
        "crontab" if !matches!(args.first().and_then(|a| a.as_deref()), Some("-l")) => {
            Some("crontab installs commands to run later")
        }
        "socat"
            if args.iter().flatten().any(|a| {
                a.to_ascii_uppercase().contains("EXEC:")
                    || a.to_ascii_uppercase().contains("SYSTEM:")
            }) =>
        {
            Some("socat runs a command")
        }
        _ => None,
    }
}

/// Builtins that take variable names (`declare`, `read`, `[[` …), whose subscripts and
/// integer attributes evaluate code at run time.
fn name_builtins(name: &str, node: &mut CommandNode, args: &[Option<String>]) {
    if NAME_BUILTINS.contains(&name) && computed_variable_name(name, &node.words) {
        opaque(
            node,
            "a variable name is computed at run time (a name like `a[$(…)]` runs code)",
        );
    }
    if NAME_BUILTINS.contains(&name) {
        let hidden_code = args.iter().flatten().any(|a| {
            a.find('[')
                .is_some_and(|open| a[open..].contains('$') || a[open..].contains('`'))
        });
        let integer_attribute = matches!(name, "declare" | "typeset" | "local")
            && args
                .iter()
                .flatten()
                .any(|a| a.starts_with('-') && (a.contains('i') || a.contains('n')));
        if hidden_code || integer_attribute {
            opaque(
                node,
                "an array subscript or integer variable is evaluated at run time",
            );
        }
        if name == "[[" && arithmetic_on_values(&node.words) {
            opaque(node, "arithmetic comparison on run-time values");
        }
    }
}

/// The value of `option` (`-x`, `-ex`, `--long`) at `args[i]`, read as getopt reads it:
/// `Some(None)` when present with a value computed at run time or missing.
fn option_value(args: &[Option<String>], i: usize, option: &str) -> Option<Option<String>> {
    if let Some(long) = option.strip_prefix("--") {
        return long_value(args, i, long, 2);
    }
    let arg = args.get(i)?.as_deref()?;
    let letter = option.strip_prefix('-').filter(|l| l.len() == 1);
    match letter.and_then(|l| l.chars().next()) {
        Some(letter) => short_value(args, i, letter, ""),
        // Single-dash words like `-ex`, `-TT`: whole, `=value` or the value attached.
        None if arg == option => Some(args.get(i + 1).cloned().flatten()),
        None => arg
            .strip_prefix(option)
            .filter(|rest| !rest.is_empty())
            .map(|rest| Some(rest.trim_start_matches('=').to_string())),
    }
}

/// Whether a builtin is handed a variable name computed at run time: `printf -v "$n"`,
/// `read "$n"`, `test -v "$n"`, `[[ -v $n ]]`, `declare "$n=1"`, `mapfile "$n"`,
/// `getopts o "$n"`, `wait -p "$n"`.
fn computed_variable_name(name: &str, words: &[Word]) -> bool {
    let args = words.get(1..).unwrap_or_default();
    // The part before a literal `=` holds a run-time piece.
    let dynamic_name = |w: &Word| {
        w.pieces
            .iter()
            .take_while(|p| **p != Piece::Lit('='))
            .any(|p| !p.is_literal())
    };
    let literal = |w: &Word| w.as_literal();
    // The word after option `flag` (or attached to it) is dynamic.
    let option_dynamic = |flag: char, valued: &str| {
        args.iter().enumerate().any(|(i, w)| {
            let text = w.display();
            if !text.starts_with('-') || text.starts_with("--") {
                return false;
            }
            match literal(w) {
                Some(t) => short_in(&t, flag, valued).is_some_and(|attached| {
                    attached.is_none() && args.get(i + 1).is_some_and(Word::is_dynamic)
                }),
                // `-v"$n"`: the option letters are literal, the name is not.
                None => w.pieces.get(1) == Some(&Piece::Lit(flag)),
            }
        })
    };
    let operands_dynamic = |valued: &str| {
        let mut i = 0;
        while let Some(w) = args.get(i) {
            match literal(w) {
                Some(t) if t == "--" => return args[i + 1..].iter().any(Word::is_dynamic),
                Some(t) if t.starts_with('-') && t.len() > 1 => {
                    let takes_next = t[1..]
                        .char_indices()
                        .find(|(_, c)| valued.contains(*c))
                        .is_some_and(|(k, c)| k + c.len_utf8() == t.len() - 1);
                    i += if takes_next { 2 } else { 1 };
                }
                Some(_) => i += 1,
                None if w.display().starts_with('-') => i += 1,
                None => return true,
            }
        }
        false
    };
    match name {
        "printf" => option_dynamic('v', "v"),
        "read" => option_dynamic('a', "adinNptu") || operands_dynamic("adinNptu"),
        "test" | "[" | "[[" => args
            .windows(2)
            .any(|w| matches!(literal(&w[0]).as_deref(), Some("-v" | "-R")) && w[1].is_dynamic()),
        "declare" | "typeset" | "local" | "export" | "readonly" => args
            .iter()
            .any(|w| !w.display().starts_with('-') && dynamic_name(w)),
        "mapfile" | "readarray" => operands_dynamic("dnOsuCc"),
        "getopts" => args.get(1).is_some_and(Word::is_dynamic),
        "wait" => option_dynamic('p', "p"),
        _ => false,
    }
}

fn valued_letters(name: &str) -> &'static str {
    INTERPRETER_VALUED
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, v)| v)
}

fn contains_ignore_case(text: &str, needle: &str) -> bool {
    text.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

pub(super) fn joined(args: &[Option<String>]) -> Option<String> {
    let parts: Option<Vec<&str>> = args.iter().map(|a| a.as_deref()).collect();
    parts.map(|p| p.join(" ")).filter(|t| !t.is_empty())
}

pub(super) fn reads_stdin(path: &str) -> bool {
    path == "-"
        || path == "/dev/stdin"
        || path.starts_with("/dev/fd/")
        || path.starts_with("/proc/self/fd/")
}

fn is_python(name: &str) -> bool {
    ["python", "pypy"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

/// `sh -c '…'`, `bash -s`, `bash` reading a pipe, `sh <(…)`.
fn shell(node: &mut CommandNode, args: &[Option<String>], _stdin_fed: bool) {
    let mut i = 0;
    let mut command_string = false;
    let mut from_stdin = false;
    while let Some(arg) = args.get(i) {
        let Some(arg) = arg else {
            node.opaque
                .push("a shell argument is computed at run time".to_string());
            return;
        };
        if arg == "--" || arg == "-" {
            i += 1;
            break;
        }
        if arg.starts_with("--") {
            i += if matches!(arg.as_str(), "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if (arg.starts_with('-') || arg.starts_with('+')) && arg.len() > 1 {
            let letters = &arg[1..];
            command_string |= arg.starts_with('-') && letters.contains('c');
            from_stdin |= letters.contains('s');
            i += if letters.contains('o') || letters.contains('O') {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    let operand = args.get(i);
    if command_string {
        node.opaque
            .push("a shell runs a command string".to_string());
        if let Some(Some(script)) = operand {
            node.scripts.push(script.clone());
        }
        return;
    }
    match operand {
        None => node
            .opaque
            .push("a shell reads commands from its standard input".to_string()),
        Some(_) if from_stdin => node
            .opaque
            .push("a shell reads commands from its standard input".to_string()),
        Some(None) => node
            .opaque
            .push("the script a shell runs is computed at run time".to_string()),
        Some(Some(path)) if reads_stdin(path) => node
            .opaque
            .push("a shell reads commands from its standard input".to_string()),
        Some(Some(path)) => node.executes.push(path.clone()),
    }
}

/// `python -c`, `perl -e`, `node -e`, code piped into an interpreter. Options are read
/// as getopt reads them: `-e'code'`, `-we 'code'`, `--ev='code'` all run inline code.
fn interpreter(
    node: &mut CommandNode,
    args: &[Option<String>],
    inline: &[&str],
    valued: &str,
    stdin_fed: bool,
) {
    let mut operand = None;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(arg) = arg else {
            node.opaque
                .push("the interpreter's code is computed at run time".to_string());
            return;
        };
        let inline_hit = inline.contains(&arg.as_str())
            || inline
                .iter()
                .filter(|f| f.len() == 2 && f.starts_with('-'))
                .filter_map(|f| f.chars().nth(1))
                .any(|letter| short_in(arg, letter, valued).is_some())
            || inline
                .iter()
                .filter_map(|f| f.strip_prefix("--"))
                .any(|long| names_long(arg, long, 2));
        if inline_hit {
            node.opaque
                .push("the interpreter runs inline code".to_string());
            return;
        }
        if !arg.starts_with('-') || arg == "-" || arg == "-m" {
            operand = Some(arg.clone());
            break;
        }
        // `-I dir`: the next word is the option's value, not the script.
        let takes_next = arg.len() == 2
            && !arg.starts_with("--")
            && arg[1..].chars().all(|c| valued.contains(c) && c != 'm');
        i += if takes_next { 2 } else { 1 };
    }
    if let Some(script) = operand.as_deref().filter(|o| !o.starts_with('-')) {
        node.executes.push(script.to_string());
    }
    let reads_input = operand.as_deref().is_none_or(reads_stdin);
    if reads_input && stdin_fed {
        node.opaque
            .push("code is fed to an interpreter's standard input".to_string());
    }
}
