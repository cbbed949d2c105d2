//! Files a command runs that were written during the session. A program known to run
//! project files without naming them — `make` its makefile, `npm`/`yarn`/`pnpm`/`bun`
//! the scripts of `package.json`, `git` its hooks and the commands its configuration
//! names, `cargo` a `build.rs`, `pytest` a `conftest.py`, `just`, `rake`, `tox` … their
//! recipe files — or a script run by path or through an interpreter, runs code the line
//! does not show. When such a file changed since the session started (by robota's Write,
//! by a Bash line, by anything), an earlier call may have planted what this one runs, so
//! the command is opaque: it asks, whatever rule names the program.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::shell::Word;
use crate::targets::FileTarget;

use super::analysis::Analysis;

use super::getopt::{long_value, short_value};

/// Programs that run recipe files found in the directory they run in.
const RECIPES: &[(&[&str], &[&str])] = &[
    (&["make", "gmake"], &["GNUmakefile", "makefile", "Makefile"]),
    (&["npm", "yarn", "pnpm", "bun"], &["package.json"]),
    (
        &["cargo"],
        &["build.rs", ".cargo/config.toml", ".cargo/config"],
    ),
    (&["just"], &["justfile", "Justfile", ".justfile"]),
    (&["rake"], &["Rakefile", "rakefile", "Rakefile.rb"]),
    (&["tox"], &["tox.ini"]),
    (&["nox"], &["noxfile.py"]),
    (&["invoke", "inv"], &["tasks.py"]),
    (&["task"], &["Taskfile.yml", "Taskfile.yaml"]),
    (
        &["gradle"],
        &[
            "build.gradle",
            "build.gradle.kts",
            "settings.gradle",
            "settings.gradle.kts",
        ],
    ),
    (&["mvn"], &["pom.xml"]),
    (&["composer"], &["composer.json"]),
    (&["pre-commit"], &[".pre-commit-config.yaml"]),
    (&["deno"], &["deno.json", "deno.jsonc"]),
    (&["pytest", "py.test"], &["conftest.py", "pytest.ini"]),
];

/// Git configuration keys that name commands to run (pagers, editors, hooks paths,
/// filters, fsmonitor …); aliases and includes are matched besides them.
pub(super) const GIT_COMMAND_KEYS: &[&str] = &[
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

/// The project files `name` (with literal arguments `args`) would run, when run in `cwd`.
pub(super) fn implicit_files(
    name: &str,
    args: &[Option<String>],
    cwd: &Path,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let python_pytest = name.starts_with("python")
        && args
            .windows(2)
            .any(|w| w[0].as_deref() == Some("-m") && w[1].as_deref() == Some("pytest"));
    let name = if python_pytest { "pytest" } else { name };
    let mut files = Vec::new();
    if let Some((_, recipes)) = RECIPES.iter().find(|(names, _)| names.contains(&name)) {
        let dir = match name {
            "make" | "gmake" => option_dir(args, 'C', "directory", cwd),
            "git" => option_dir(args, 'C', "", cwd),
            _ => cwd.to_path_buf(),
        };
        files.extend(recipes.iter().map(|r| dir.join(r)));
        if name == "pytest" {
            // conftest.py files one directory down (`tests/conftest.py`) too.
            if let Ok(entries) = std::fs::read_dir(&dir) {
                for entry in entries.flatten() {
                    if entry.file_type().is_ok_and(|t| t.is_dir()) {
                        files.push(entry.path().join("conftest.py"));
                    }
                }
            }
        }
        if matches!(name, "make" | "gmake") {
            for i in 0..args.len() {
                let file = short_value(args, i, 'f', "CfIoWEjlO")
                    .or_else(|| long_value(args, i, "file", 2))
                    .or_else(|| long_value(args, i, "makefile", 1));
                if let Some(Some(file)) = file {
                    files.push(dir.join(file));
                }
            }
        }
    }
    if name == "git" {
        let dir = option_dir(args, 'C', "", cwd);
        if let Some(git_dir) = git_dir(&dir) {
            files.push(git_dir.join("config"));
            files.push(git_dir.join("hooks"));
        }
        if let Some(home) = home {
            files.push(home.join(".gitconfig"));
            files.push(home.join(".config/git/config"));
        }
    }
    files
}

/// The directory `-C dir` / `--directory=dir` names (the last one), else `cwd`.
fn option_dir(args: &[Option<String>], short: char, long: &str, cwd: &Path) -> PathBuf {
    let mut dir = cwd.to_path_buf();
    for i in 0..args.len() {
        let value = if args[i].as_deref() == Some(format!("-{short}").as_str()) {
            Some(args.get(i + 1).cloned().flatten())
        } else if long.is_empty() {
            None
        } else {
            long_value(args, i, long, 3)
        };
        if let Some(Some(value)) = value {
            dir = dir.join(value);
        }
    }
    dir
}

/// The repository's git directory: `.git` in `dir` or above (a `.git` file names it).
fn git_dir(dir: &Path) -> Option<PathBuf> {
    for ancestor in dir.ancestors() {
        let candidate = ancestor.join(".git");
        if candidate.is_dir() {
            return Some(candidate);
        }
        if let Ok(text) = std::fs::read_to_string(&candidate) {
            let named = text.trim().strip_prefix("gitdir:")?.trim().to_string();
            return Some(ancestor.join(named));
        }
    }
    None
}

/// Whether `path` (a file, or a hooks directory's programs) changed since `start` and can
/// run code: git configuration only when it names commands, sample hooks never.
/// (File times come from a coarse clock, a few milliseconds behind: a file the session
/// writes — after a model round trip — is still dated after its start.)
pub(super) fn written_since(path: &Path, start: SystemTime) -> bool {
    let since = start;
    let changed = |p: &Path| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= since)
    };
    if path.file_name().is_some_and(|n| n == "hooks") && path.is_dir() {
        return std::fs::read_dir(path).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                !e.file_name().to_string_lossy().ends_with(".sample") && changed(&e.path())
            })
        });
    }
    if !changed(path) {
        return false;
    }
    let is_git_config = path.ends_with(".git/config")
        || path.ends_with(".gitconfig")
        || path.ends_with("git/config");
    if is_git_config {
        let text = std::fs::read_to_string(path)
            .unwrap_or_default()
            .to_ascii_lowercase();
        return ["alias", "include"]
            .iter()
            .chain(GIT_COMMAND_KEYS)
            .any(|k| text.contains(k));
    }
    true
}

/// Literal texts of `words[1..]` (None where computed at run time).
pub(super) fn literal_args(words: &[Word]) -> Vec<Option<String>> {
    words.iter().skip(1).map(Word::as_literal).collect()
}

impl Analysis {
    /// Makes the line opaque when a file it runs changed since `start`.
    pub(super) fn check_session_files(&mut self, start: SystemTime) {
        let run_by_path = self.executed.iter().filter_map(|target| match target {
            FileTarget::Known(path) => Some(path.real.clone()),
            _ => None,
        });
        let planted = run_by_path
            .chain(self.implicit.iter().cloned())
            .find(|path| written_since(path, start));
        if let Some(path) = planted {
            self.opaque(format!(
                "it runs {}, which changed during this session",
                path.display()
            ));
        }
    }
}
