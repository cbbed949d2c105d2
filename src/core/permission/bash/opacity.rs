//! Commands whose effect cannot be read from their words: shells and interpreters fed a
//! string or standard input, `eval`, `trap`, `source` of a computed file, aliases,
//! arithmetic that can run code hidden in a value, programs told to run a command by an
//! option (`git -c`, `git rebase --exec`, `tar --to-command`, `ssh -o ProxyCommand`,
//! `awk 'system(…)'`, `sed 's/…/…/e'`, …). Such a command is opaque; when it hands a
//! literal script to a shell, the script is kept so deny rules can still be checked on it.

use crate::core::permission::shell::Word;

use super::programs::{
    arithmetic_on_values, awk_program, awk_runs_commands, git, sed_script, sed_scripts, ssh,
};
use super::tree::CommandNode;

const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "posh",
    "rbash", "oksh", "loksh", "pdksh", "elvish", "nu", "xonsh",
];

/// Interpreters and the options that hand them code on the command line.
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("luajit", &["-e"]),
    ("Rscript", &["-e"]),
    ("R", &["-e"]),
    ("julia", &["-e"]),
    ("osascript", &["-e"]),
    ("expect", &["-c"]),
    ("tclsh", &[]),
    ("wish", &[]),
    ("irb", &[]),
    ("pwsh", &["-c", "-Command", "-EncodedCommand", "-ec", "-e"]),
    (
        "powershell",
        &["-c", "-Command", "-EncodedCommand", "-ec", "-e"],
    ),
    ("bun", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
];

/// Options, for any program, whose value is a command the program runs.
const COMMAND_OPTIONS: &[&str] = &[
    "--to-command",
    "--use-compress-program",
    "--compress-program",
    "--checkpoint-action",
    "--info-script",
    "--new-volume-script",
    "--rsh",
    "--upload-pack",
    "--receive-pack",
    "--pre",
    "--exec",
    "--pager",
    "--editor",
    "--unzip-command",
    "--open-files-in-pager",
    "--extcmd",
    "--tool-cmd",
    "--sh-exec",
    "--lua-exec",
    "--eval-command",
];

/// Options meaning "run this", per program.
const PROGRAM_COMMAND_OPTIONS: &[(&[&str], &[&str])] = &[
    (&["tar", "bsdtar", "gtar"], &["-I", "-F"]),
    (&["tcpdump"], &["-z"]),
    (&["man"], &["-P"]),
    (&["zip"], &["-TT"]),
    (&["split"], &["--filter"]),
    (&["nix-shell"], &["--run", "--command"]),
    (&["nc", "ncat", "netcat"], &["-e", "-c"]),
    (
        &["vim", "vi", "nvim", "ex", "view", "vimdiff"],
        &["-c", "--cmd", "-S"],
    ),
    (&["emacs"], &["--eval", "-l", "--load", "-f", "--funcall"]),
    (&["gdb"], &["-ex", "-x", "--command", "-iex"]),
    (&["rsync"], &["-e"]),
    (&["git"], &["-O"]),
    (&["entr", "doas"], &["-s"]),
    (&["sudo"], &["-s", "-i", "--shell", "--login"]),
    (&["flock"], &["-c", "--command"]),
];

/// Programs that run what they are given through a shell or schedule it.
const SHELL_RUNNERS: &[&str] = &[
    "su",
    "script",
    "watch",
    "parallel",
    "at",
    "batch",
    "ssh-agent",
];

/// Builtins taking variable names, where `name[$(…)]` would run code.
const NAME_BUILTINS: &[&str] = &[
    "printf",
    "read",
    "unset",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "mapfile",
    "readarray",
    "wait",
    "getopts",
    "test",
    "[",
    "[[",
];

/// Marks `node` opaque (with scripts) when its effect cannot be read from its words.
pub(super) fn check(name: &str, node: &mut CommandNode, stdin_fed: bool) {
    let words: Vec<Option<String>> = node.words.iter().map(Word::as_literal).collect();
    let args = words.get(1..).unwrap_or_default();
    let opaque = |node: &mut CommandNode, reason: &str| {
        if !node.opaque.iter().any(|r| r == reason) {
            node.opaque.push(reason.to_string());
        }
    };

    for arg in args.iter().flatten() {
        let option = arg.split('=').next().unwrap_or(arg);
        if COMMAND_OPTIONS.contains(&option) {
            opaque(node, "an option makes the program run another command");
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
            for (i, arg) in args.iter().enumerate() {
                if let Some(arg) = arg
                    && options.contains(&arg.as_str())
                {
                    opaque(node, "an option makes the program run another command");
                    if let Some(Some(script)) = args.get(i + 1) {
                        node.scripts.push(script.clone());
                    }
                }
            }
        }
    }

    if SHELLS.contains(&name) {
        shell(node, args, stdin_fed);
    } else if let Some((_, inline)) = INTERPRETERS.iter().find(|(n, _)| *n == name) {
        interpreter(node, args, inline, stdin_fed);
    } else if is_python(name) {
        interpreter(node, args, &["-c"], stdin_fed);
    }
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
        "env" => {
            for (i, arg) in args.iter().enumerate() {
                let Some(arg) = arg else { continue };
                if arg == "-S" || arg == "--split-string" {
                    opaque(node, "env -S splits a string into a command");
                    if let Some(text) = joined(&args[i + 1..]) {
                        node.scripts.push(text);
                    }
                } else if let Some(rest) = arg.strip_prefix("--split-string=").or_else(|| {
                    arg.strip_prefix("-S")
                        .filter(|r| !r.is_empty() && !arg.starts_with("--"))
                }) {
                    opaque(node, "env -S splits a string into a command");
                    node.scripts.push(rest.to_string());
                }
            }
        }
        "awk" | "gawk" | "mawk" | "nawk" | "sed" => {
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
            for (i, arg) in args.iter().enumerate() {
                if matches!(arg.as_deref(), Some("-f" | "--file"))
                    && let Some(Some(file)) = args.get(i + 1)
                {
                    node.executes.push(file.clone());
                }
            }
        }
        "git" => git(node, args),
        "make" | "gmake" => {
            for (i, arg) in args.iter().enumerate() {
                let Some(arg) = arg else { continue };
                if arg.starts_with("--eval") {
                    opaque(node, "make --eval runs recipes given on the command line");
                }
                if matches!(arg.as_str(), "-f" | "--file" | "--makefile") {
                    match args.get(i + 1) {
                        Some(Some(file)) if !reads_stdin(file) => node.executes.push(file.clone()),
                        _ => opaque(
                            node,
                            "the makefile is computed at run time or is standard input",
                        ),
                    }
                }
            }
        }
        "npx" | "pnpx" | "bunx" | "npm" => {
            let exec = name != "npm"
                || matches!(args.first(), Some(Some(sub)) if sub == "exec" || sub == "x");
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
        "vim" | "vi" | "nvim" | "ex" | "view" | "vimdiff"
            if args.iter().flatten().any(|a| a.starts_with('+')) =>
        {
            opaque(
                node,
                "an editor command given on the command line can run anything",
            );
        }
        "ssh" => ssh(node, args),
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
            opaque(node, "tmux can run commands in another shell")
        }
        "screen"
            if !matches!(
                args.first().and_then(|a| a.as_deref()),
                Some("-ls" | "-list")
            ) =>
        {
            opaque(node, "screen can run commands in another shell")
        }
        "crontab" if !matches!(args.first().and_then(|a| a.as_deref()), Some("-l")) => {
            opaque(node, "crontab installs commands to run later")
        }
        "socat"
            if args.iter().flatten().any(|a| {
                a.to_ascii_uppercase().contains("EXEC:")
                    || a.to_ascii_uppercase().contains("SYSTEM:")
            }) =>
        {
            opaque(node, "socat runs a command")
        }
        _ => {}
    }
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
    if NAME_BUILTINS.contains(&name) {
        let hidden_code = args.iter().flatten().any(|a| {
            a.find('[')
                .is_some_and(|open| a[open..].contains('$') || a[open..].contains('`'))
        });
        let integer_attribute = matches!(name, "declare" | "typeset" | "local")
            && args
                .iter()
                .flatten()
                .any(|a| a.starts_with('-') && a.contains('i'));
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

/// `python -c`, `perl -e`, `node -e`, code piped into an interpreter.
fn interpreter(node: &mut CommandNode, args: &[Option<String>], inline: &[&str], stdin_fed: bool) {
    let mut operand = None;
    for arg in args {
        let Some(arg) = arg else {
            node.opaque
                .push("the interpreter's code is computed at run time".to_string());
            return;
        };
        let short_cluster = arg.starts_with('-')
            && !arg.starts_with("--")
            && arg.len() > 2
            && arg[1..].chars().all(|c| c.is_ascii_alphabetic());
        let inline_hit = inline.contains(&arg.as_str())
            || (short_cluster
                && inline
                    .iter()
                    .filter(|f| f.len() == 2)
                    .any(|f| arg[1..].contains(&f[1..])));
        if inline_hit {
            node.opaque
                .push("the interpreter runs inline code".to_string());
            return;
        }
        if !arg.starts_with('-') || arg == "-" || arg == "-m" {
            operand = Some(arg.clone());
            break;
        }
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
