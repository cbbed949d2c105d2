//! Finding Git Bash, the shell the Bash tool and command hooks run on Windows (as Claude
//! Code does): `CLAUDE_CODE_GIT_BASH_PATH` when set, then Git for Windows' install places
//! (`%ProgramFiles%`, `%ProgramFiles(x86)%`, `%LOCALAPPDATA%\Programs`), then a `bash.exe`
//! on `PATH` — never WSL's `bash.exe` (in `System32`, or the `WindowsApps` alias), which
//! would run the command in another system. The search is a pure function of an environment
//! lookup and a file check, so it is tested on any platform.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The variable naming Git Bash's `bash.exe` explicitly (Claude Code's name for it).
pub const GIT_BASH_PATH_VAR: &str = "CLAUDE_CODE_GIT_BASH_PATH";

/// Where Git Bash is, given `var` (an environment lookup) and `is_file` (whether a path is
/// an existing file); `None` when it is in none of the places looked at. Paths are Windows
/// paths, joined with `\` and `PATH` split on `;`, whatever platform this runs on.
pub fn find_git_bash(
    var: impl Fn(&str) -> Option<String>,
    is_file: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let explicit = var(GIT_BASH_PATH_VAR).filter(|path| !path.trim().is_empty());
    let installed = ["ProgramFiles", "ProgramFiles(x86)"]
        .into_iter()
        .filter_map(|name| var(name).map(|dir| join(&dir, "Git\\bin\\bash.exe")))
        .chain(var("LOCALAPPDATA").map(|dir| join(&dir, "Programs\\Git\\bin\\bash.exe")));
    let on_path = var("PATH").into_iter().flat_map(|path| {
        path.split(';')
            .map(|dir| dir.trim().trim_matches('"').to_string())
            .filter(|dir| !dir.is_empty() && !is_wsl_directory(dir))
            .map(|dir| join(&dir, "bash.exe"))
            .collect::<Vec<_>>()
    });
    explicit
        .into_iter()
        .chain(installed)
        .chain(on_path)
        .map(PathBuf::from)
        .find(|candidate| is_file(candidate))
}

fn join(dir: &str, rest: &str) -> String {
    format!("{}\\{rest}", dir.trim_end_matches(['\\', '/']))
}

/// A directory whose `bash.exe` starts WSL rather than Git Bash.
fn is_wsl_directory(dir: &str) -> bool {
    let dir = dir.trim_end_matches(['\\', '/']).to_ascii_lowercase();
    dir.ends_with("\\system32") || dir.ends_with("\\sysnative") || dir.ends_with("\\windowsapps")
}

/// Git Bash on this machine, looked up once (the real environment and file system); `None`
/// when it is not installed. Only Windows asks.
pub fn git_bash() -> Option<&'static Path> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| find_git_bash(|name| std::env::var(name).ok(), Path::is_file))
        .as_deref()
}

/// The shell `sh -c` scripts run in: `/bin/sh`; on Windows Git Bash, else an `sh` on
/// `PATH` (which fails to start, with [`GIT_BASH_MISSING`] worth saying, when there is none).
pub fn posix_shell() -> &'static Path {
    if cfg!(windows) {
        git_bash().unwrap_or(Path::new("sh"))
    } else {
        Path::new("/bin/sh")
    }
}

/// What to tell the user when Git Bash is missing.
pub const GIT_BASH_MISSING: &str = "Git Bash was not found: install Git for Windows \
(https://git-scm.com/downloads/win) or set CLAUDE_CODE_GIT_BASH_PATH to its bash.exe";

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn find(env: &[(&str, &str)], files: &[&str]) -> Option<String> {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        find_git_bash(
            |name| env.get(name).cloned(),
            |path| files.contains(&path.to_str().unwrap()),
        )
        .map(|path| path.to_str().unwrap().to_string())
    }

    const PROGRAM_FILES_BASH: &str = "C:\\Program Files\\Git\\bin\\bash.exe";

    #[test]
    fn the_explicit_variable_wins_over_the_install_places() {
        let env = [
            (GIT_BASH_PATH_VAR, "D:\\tools\\git\\bin\\bash.exe"),
            ("ProgramFiles", "C:\\Program Files"),
        ];
        let files = ["D:\\tools\\git\\bin\\bash.exe", PROGRAM_FILES_BASH];
        assert_eq!(
            find(&env, &files).as_deref(),
            Some("D:\\tools\\git\\bin\\bash.exe")
        );
    }

    #[test]
    fn the_install_places_are_looked_at_in_order() {
        let env = [
            ("ProgramFiles", "C:\\Program Files\\"),
            ("ProgramFiles(x86)", "C:\\Program Files (x86)"),
            ("LOCALAPPDATA", "C:\\Users\\ann\\AppData\\Local"),
        ];
        assert_eq!(
            find(&env, &[PROGRAM_FILES_BASH]).as_deref(),
            Some(PROGRAM_FILES_BASH)
        );
        let x86 = "C:\\Program Files (x86)\\Git\\bin\\bash.exe";
        assert_eq!(find(&env, &[x86]).as_deref(), Some(x86));
        let user = "C:\\Users\\ann\\AppData\\Local\\Programs\\Git\\bin\\bash.exe";
        assert_eq!(find(&env, &[user]).as_deref(), Some(user));
    }

    #[test]
    fn path_is_searched_without_wsl_bash() {
        let env = [(
            "PATH",
            "C:\\Windows\\System32;C:\\Users\\ann\\AppData\\Local\\Microsoft\\WindowsApps;\"C:\\scoop\\apps\\git\\current\\bin\"",
        )];
        let wsl = "C:\\Windows\\System32\\bash.exe";
        let alias = "C:\\Users\\ann\\AppData\\Local\\Microsoft\\WindowsApps\\bash.exe";
        let scoop = "C:\\scoop\\apps\\git\\current\\bin\\bash.exe";
        assert_eq!(find(&env, &[wsl, alias, scoop]).as_deref(), Some(scoop));
        assert_eq!(
            find(&env, &[wsl, alias]),
            None,
            "WSL's bash is not Git Bash"
        );
    }

    #[test]
    fn nothing_found_is_none() {
        let env = [
            (GIT_BASH_PATH_VAR, "  "),
            ("ProgramFiles", "C:\\Program Files"),
        ];
        assert_eq!(find(&env, &[]), None);
    }
}
