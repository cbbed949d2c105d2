//! The wrappers robota looks through — programs that run the command they are given
//! (`timeout`, `nice`, `nohup`, `env`, `command`, `exec`, `time`, `stdbuf`, `sudo`,
//! `setsid`, `flock`, `strace` …) — each with the options that take a value, and reading
//! past them to the command.

use crate::shell::Word;

/// One wrapper's command line: options taking a value, options meaning nothing is run,
/// plain flags, and operands before the command.
pub(super) struct Wrapper {
    pub(super) names: &'static [&'static str],
    valued: &'static [&'static str],
    flags: &'static [&'static str],
    no_command: &'static [&'static str],
    operands: usize,
    /// Runs the command with other privileges: allow rules must name the wrapper.
    elevates: bool,
    /// Its operands and options come in any order (`setarch [arch] [options] cmd`, `perf
    /// <sub> [options] cmd`): every later word may start the command.
    loose: bool,
}

pub(super) const fn wrapper(names: &'static [&'static str]) -> Wrapper {
    Wrapper {
        names,
        valued: &[],
        flags: &[],
        no_command: &[],
        operands: 0,
        elevates: false,
        loose: false,
    }
}

pub(super) const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        valued: &["-s", "--signal", "-k", "--kill-after"],
        flags: &["--preserve-status", "--foreground", "-v", "--verbose"],
        operands: 1,
        ..wrapper(&["timeout"])
    },
    Wrapper {
        valued: &["-n", "--adjustment"],
        ..wrapper(&["nice"])
    },
    wrapper(&[
        "nohup",
        "builtin",
        "busybox",
        "toybox",
        "torsocks",
        "catchsegv",
        "nocache",
        "chronic",
        "unbuffer",
        "npx",
        "bunx",
        "pnpx",
        "dbus-run-session",
        "entr",
    ]),
    Wrapper {
        valued: &["-u", "--unset", "-C", "--chdir"],
        flags: &[
            "-i",
            "--ignore-environment",
            "-0",
            "--null",
            "-v",
            "--debug",
            "-",
        ],
        ..wrapper(&["env"])
    },
    Wrapper {
        flags: &["-p"],
        no_command: &["-v", "-V"],
        ..wrapper(&["command"])
    },
    Wrapper {
        valued: &["-a"],
        flags: &["-c", "-l"],
        ..wrapper(&["exec"])
    },
    Wrapper {
        valued: &["-f", "--format", "-o", "--output"],
        flags: &[
            "-p",
            "-v",
            "-a",
            "-q",
            "--portability",
            "--verbose",
            "--append",
            "--quiet",
        ],
        ..wrapper(&["time"])
    },
    Wrapper {
        valued: &["-i", "-o", "-e", "--input", "--output", "--error"],
        ..wrapper(&["stdbuf"])
    },
    Wrapper {
        valued: &[
            "-u",
            "-g",
            "-h",
            "-p",
            "-C",
            "-D",
            "-r",
            "-t",
            "-U",
            "-T",
            "-R",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--close-from",
            "--chdir",
            "--role",
            "--type",
            "--other-user",
            "--command-timeout",
            "--chroot",
        ],
        flags: &[
            "-E",
            "-H",
            "-n",
            "-S",
            "-b",
            "-k",
            "-P",
            "-A",
            "-B",
            "-N",
            "-s",
            "-i",
            "--preserve-env",
            "--set-home",
            "--non-interactive",
            "--stdin",
            "--background",
            "--shell",
            "--login",
            "--askpass",
            "--bell",
        ],
        no_command: &[
            "-l",
            "-v",
            "-K",
            "-V",
            "-e",
            "--list",
            "--validate",
            "--edit",
        ],
        elevates: true,
        ..wrapper(&["sudo"])
    },
    Wrapper {
        valued: &["-u", "-C"],
        flags: &["-n", "-s", "-L"],
        elevates: true,
        ..wrapper(&["doas", "pkexec", "run0"])
    },
    Wrapper {
        flags: &["-c", "-f", "-w", "--ctty", "--fork", "--wait"],
        ..wrapper(&["setsid"])
    },
    Wrapper {
        valued: &[
            "-c",
            "-n",
            "-p",
            "-P",
            "-u",
            "--class",
            "--classdata",
            "--pid",
            "--pgid",
            "--uid",
        ],
        flags: &["-t", "--ignore"],
        ..wrapper(&["ionice"])
    },
    Wrapper {
        flags: &["-a", "--all-tasks"],
        operands: 1,
        ..wrapper(&["taskset"])
    },
    Wrapper {
        valued: &["-w", "--timeout", "-E", "--conflict-exit-code"],
        flags: &[
            "-s",
            "-x",
            "-e",
            "-u",
            "-n",
            "-o",
            "-F",
            "--shared",
            "--exclusive",
            "--unlock",
            "--nonblock",
            "--close",
            "--no-fork",
            "--verbose",
        ],
        operands: 1,
        ..wrapper(&["flock"])
    },
    Wrapper {
        valued: &["--userspec", "--groups"],
        flags: &["--skip-chdir"],
        operands: 1,
        elevates: true,
        ..wrapper(&["chroot"])
    },
    Wrapper {
        valued: &[
            "-e", "-o", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-P", "-S", "-U", "-X", "-O",
        ],
        flags: &[
            "-f", "-ff", "-c", "-C", "-d", "-D", "-F", "-i", "-q", "-qq", "-r", "-t", "-tt",
            "-ttt", "-T", "-v", "-w", "-x", "-xx", "-y", "-yy", "-k", "-n", "-Z", "-z", "-C",
        ],
        ..wrapper(&["strace", "ltrace"])
    },
    Wrapper {
        valued: &["-t", "-w"],
        flags: &["-d", "-i", "-m", "-s", "-u"],
        ..wrapper(&["caffeinate"])
    },
    Wrapper {
        valued: &["-f"],
        flags: &["-q"],
        ..wrapper(&["proxychains", "proxychains4"])
    },
    wrapper(&[
        "valgrind",
        "firejail",
        "unshare",
        "nsenter",
        "systemd-run",
        "xvfb-run",
        "chrt",
        "prlimit",
        "setpriv",
        "numactl",
        "bwrap",
        "nsjail",
        "proot",
        "eatmydata",
        "ccache",
        "sccache",
        "distcc",
        "icecc",
        "trickle",
        "cpulimit",
        "tsp",
        "nq",
        "daemonize",
        "linux32",
        "linux64",
        "i386",
        "x86_64",
        "uvx",
    ]),
    Wrapper {
        valued: &["-l", "--lib", "-s", "-i", "-b", "--faked"],
        flags: &["-u", "--unknown-is-real"],
        ..wrapper(&["fakeroot"])
    },
    Wrapper {
        valued: &["-n", "--adjust", "-p", "--pid"],
        ..wrapper(&["choom"])
    },
    Wrapper {
        flags: &[
            "-v",
            "--verbose",
            "-R",
            "--addr-no-randomize",
            "-L",
            "--addr-compat-layout",
            "-3",
            "--3gb",
            "-B",
            "--32bit",
            "-F",
            "--fdpic-funcptrs",
            "-I",
            "--short-inode",
            "-S",
            "--whole-seconds",
            "-T",
            "--sticky-timeouts",
            "-X",
            "--read-implies-exec",
            "-Z",
            "--mmap-page-zero",
        ],
        operands: 1,
        loose: true,
        ..wrapper(&["setarch"])
    },
    Wrapper {
        loose: true,
        ..wrapper(&["perf"])
    },
    Wrapper {
        flags: &["-a", "-s", "-v"],
        operands: 1,
        ..wrapper(&["logsave"])
    },
    Wrapper {
        valued: &["-m"],
        flags: &["-f", "--exclude-monotonic", "--no-cache"],
        operands: 1,
        ..wrapper(&["faketime"])
    },
];

/// Skips a wrapper's options; unknown options or run-time words make every later word a
/// possible start of the command.
pub(super) fn peel(
    spec: &Wrapper,
    words: &[Word],
    start: usize,
) -> (Vec<(Vec<Word>, bool)>, Option<usize>) {
    let mut i = start;
    let mut ambiguous_from = spec.loose.then_some(start);
    while let Some(word) = words.get(i) {
        let Some(text) = word.as_literal() else {
            ambiguous_from = Some(i);
            break;
        };
        if text == "--" {
            i += 1;
            break;
        }
        if !text.starts_with('-') || (text == "-" && !spec.flags.contains(&"-")) {
            break;
        }
        if spec.no_command.contains(&text.as_str()) {
            return (Vec::new(), None);
        }
        if spec.valued.contains(&text.as_str()) {
            i += 2;
            continue;
        }
        let attached = text.len() > 2
            && !text.starts_with("--")
            && spec
                .valued
                .iter()
                .any(|v| v.len() == 2 && text.starts_with(v));
        let numeric = text[1..].chars().all(|c| c.is_ascii_digit());
        let long_with_value = text.starts_with("--") && text.contains('=');
        if !(attached || numeric || long_with_value || spec.flags.contains(&text.as_str())) {
            ambiguous_from.get_or_insert(i);
        }
        i += 1;
    }
    if spec.names.contains(&"env") {
        while words
            .get(i)
            .and_then(Word::as_literal)
            .is_some_and(|t| t.contains('=') && !t.starts_with('='))
        {
            i += 1;
        }
    }
    let mut operands = spec.operands;
    while operands > 0 && i < words.len() {
        if words[i].is_dynamic() {
            ambiguous_from.get_or_insert(i);
        }
        i += 1;
        operands -= 1;
    }
    let mut children = Vec::new();
    if i < words.len() {
        children.push((words[i..].to_vec(), true));
    }
    if let Some(from) = ambiguous_from {
        for k in from..words.len() {
            if k != i && !words[k].as_literal().is_some_and(|t| t.starts_with('-')) {
                children.push((words[k..].to_vec(), true));
            }
        }
    }
    let wraps = (ambiguous_from.is_none() && !spec.elevates && !children.is_empty()).then_some(0);
    (children, wraps)
}
