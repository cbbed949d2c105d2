//! The programs and options opacity knows: shells, interpreters and the options that hand
//! them code, options whose value is a command, programs that run what they are given
//! elsewhere, and builtins that take variable names. Data only; `mod.rs` reads it.

pub(super) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "posh",
    "rbash", "oksh", "loksh", "pdksh", "elvish", "nu", "xonsh",
];

/// Interpreters and the options that hand them code on the command line.
pub(super) const INTERPRETERS: &[(&str, &[&str])] = &[
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

/// Short options of interpreters that take a value (the rest of a cluster, or the next
/// word), so a later letter in the same word is not an option. (`perl -l`, `-0` take
/// only digits: `-lne` is `-l -n -e`.)
pub(super) const INTERPRETER_VALUED: &[(&str, &str)] = &[
    ("perl", "IMmixdD"),
    ("ruby", "ICEFrx"),
    ("node", "rC"),
    ("nodejs", "rC"),
    ("bun", "r"),
    ("php", "cdfz"),
    ("lua", "l"),
    ("luajit", "lj"),
    ("expect", "fbD"),
    ("python", "WXm"),
];

/// Long options, per program, whose value is a command, script or file the program runs;
/// any unambiguous prefix names them as well (getopt_long, git's parse-options).
pub(super) const LONG_COMMAND_OPTIONS: &[(&[&str], &[&str])] = &[
    (
        &["tar", "gtar", "bsdtar"],
        &[
            "to-command",
            "use-compress-program",
            "checkpoint-action",
            "info-script",
            "new-volume-script",
            "rsh-command",
            "rmt-command",
        ],
    ),
    (&["sort"], &["compress-program"]),
    (&["rsync"], &["rsh", "rsync-path"]),
    (&["rg"], &["pre"]),
    (
        &["gdb"],
        &["eval-command", "command", "init-eval-command", "args"],
    ),
    (&["nc", "ncat", "netcat"], &["sh-exec", "lua-exec", "exec"]),
    (&["man"], &["pager"]),
    (&["flock"], &["command"]),
    (&["split"], &["filter"]),
    (&["nix-shell"], &["run", "command"]),
    (&["emacs"], &["eval", "load", "funcall"]),
    (&["zip"], &["unzip-command"]),
    (&["sudo"], &["shell", "login"]),
    (&["make", "gmake"], &["eval"]),
    (&["env"], &["split-string"]),
];

/// Options, for any program, whose value is a command the program runs.
pub(super) const COMMAND_OPTIONS: &[&str] = &[
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
pub(super) const PROGRAM_COMMAND_OPTIONS: &[(&[&str], &[&str])] = &[
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
    (&["xterm", "uxterm", "urxvt", "rxvt"], &["-e"]),
    (&["make", "gmake"], &["-E"]),
];

/// Programs that run what they are given through a shell or schedule it.
pub(super) const SHELL_RUNNERS: &[&str] = &[
    "su",
    "runuser",
    "sg",
    "script",
    "watch",
    "parallel",
    "at",
    "batch",
    "ssh-agent",
    "hyperfine",
    "capsh",
    "concurrently",
    "npm-run-all",
    "run-p",
    "run-s",
    "watchexec",
    "nodemon",
];

/// Programs that run whatever programs a directory or their own arguments hold, or open a
/// terminal running a shell.
pub(super) const FILE_RUNNERS: &[&str] = &[
    "run-parts",
    "gnome-terminal",
    "konsole",
    "kitty",
    "alacritty",
    "wezterm",
    "foot",
    "terminator",
    "tilix",
    "xfce4-terminal",
    "lxterminal",
    "mate-terminal",
];

/// Builtins taking variable names, where `name[$(…)]` would run code.
pub(super) const NAME_BUILTINS: &[&str] = &[
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
