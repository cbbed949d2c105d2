//! Git's global options, the ones before the subcommand (`git -C sub -c k=v --no-pager
//! log`): where the subcommand starts, the directories `-C` moves to, and whether an option
//! can change what git runs (`-c`, `--config-env`, `--exec-path`). One reading for every
//! check that looks at a git command: the wrapper peeling, the opaque-code finder, the
//! read-only list and the `git config` writer.

/// Global options that take the next word as their value.
const VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--config-env",
    "--list-cmds",
    "--attr-source",
];

/// What stands before a git command's subcommand.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct GitGlobals {
    /// The index, in the words after `git`, of the subcommand: the first word that is not a
    /// global option or its value — a word unknown until run time included. Equal to the
    /// number of words when there is none. `--version` and `--help` are git's `version`
    /// and `help` commands, so they count as the subcommand.
    pub subcommand: usize,
    /// The values of every `-C`, in order (`None`: computed at run time).
    pub directories: Vec<Option<String>>,
    /// An option sets configuration or the helpers' directory, so an alias or a hook
    /// could run whatever it names.
    pub sets_configuration: bool,
}

/// Reads the global options of `git <args>` (`None`: a word known only at run time).
pub(super) fn read<S: AsRef<str>>(args: &[Option<S>]) -> GitGlobals {
    let mut globals = GitGlobals::default();
    let mut i = 0;
    while let Some(Some(arg)) = args.get(i) {
        let arg = arg.as_ref();
        if !arg.starts_with('-') || arg == "--version" || arg == "--help" {
            break;
        }
        // `-ckey=value` is not git's syntax, but it is counted as `-c` all the same.
        if arg.starts_with("-c")
            || arg.starts_with("--config-env")
            || arg.starts_with("--exec-path")
        {
            globals.sets_configuration = true;
        }
        if VALUED.contains(&arg) {
            if arg == "-C" {
                let value = args.get(i + 1).and_then(|v| v.as_ref());
                globals
                    .directories
                    .push(value.map(|v| v.as_ref().to_string()));
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    globals.subcommand = i.min(args.len());
    globals
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Option<String>> {
        line.split(' ')
            .map(|w| (w != "$X").then(|| w.to_string()))
            .collect()
    }

    #[test]
    fn the_subcommand_comes_after_the_options_and_their_values() {
        let globals = read(&words("-C sub --git-dir .git --no-pager -c a=b log -p"));
        assert_eq!(globals.subcommand, 7);
        assert_eq!(globals.directories, vec![Some("sub".to_string())]);
        assert!(globals.sets_configuration);
        assert_eq!(read(&words("status")), GitGlobals::default());
        assert_eq!(read(&words("--version")).subcommand, 0);
    }

    #[test]
    fn run_time_words_end_the_options_or_stand_for_a_value() {
        let globals = read(&words("-C $X $X log"));
        assert_eq!(globals.subcommand, 2);
        assert_eq!(globals.directories, vec![None]);
        assert_eq!(read(&words("-C")).subcommand, 1, "a missing value");
    }

    #[test]
    fn every_way_to_set_configuration_is_seen() {
        for line in [
            "-c alias.x=!sh log",
            "-calias.x=!sh log",
            "--config-env=alias.x=V log",
            "--config-env alias.x=V log",
            "--exec-path=/tmp log",
        ] {
            assert!(read(&words(line)).sets_configuration, "{line}");
        }
        assert!(!read(&words("--no-pager -C a log")).sets_configuration);
    }
}
