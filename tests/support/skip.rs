//! The one rule for a test whose real component is missing on this machine (the kernel
//! sandbox, the Python clients, the npm MCP servers, the llama.cpp server, a tmpfs, a
//! program such as `bash` or `perl`): every such test calls [`skip`] and then returns.
//!
//! - Without `ROBOTA_REQUIRE_REAL` (a bare clone) the skip is allowed. Its line
//!   `SKIP <binary>::<test>: <component>: <reason>` goes to the real stderr (past the test
//!   runner's capture, so `cargo test` shows it) and, when `ROBOTA_SKIP_LOG` names a file,
//!   is appended to it (one write per line, so parallel tests do not mix their lines).
//! - With `ROBOTA_REQUIRE_REAL=1` (`.ci/run` sets it) the test fails instead, naming the
//!   component and how to get it, unless the component is listed in `ROBOTA_MAY_LACK`
//!   (names separated by commas or spaces): those may still skip, as above.
//!
//! The component names, as `ROBOTA_MAY_LACK` lists them: `sandbox`, `python-clients`,
//! `npm-mcp-servers`, `llama.cpp`, `tmpfs`, and programs by their name (`bash`, `python3`,
//! `perl`, …).

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Records that the running test skips for want of `component` (`reason` says what is
/// missing and how to get it; its lines are joined into one). Returns when the skip is
/// allowed (the caller then returns); panics when `ROBOTA_REQUIRE_REAL` forbids it or the
/// skip log cannot be written.
pub fn skip(component: &str, reason: &str) {
    match SkipRule::from_env().apply(&test_name(), component, reason) {
        Ok(line) => {
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
        Err(failure) => panic!("{failure}"),
    }
}

/// The rule as the environment sets it: whether a missing component fails the test, which
/// components may be missing all the same, and the file skips are appended to.
pub struct SkipRule {
    pub require_real: bool,
    pub may_lack: Vec<String>,
    pub log: Option<PathBuf>,
}

impl SkipRule {
    /// `ROBOTA_REQUIRE_REAL`, `ROBOTA_MAY_LACK` and `ROBOTA_SKIP_LOG`.
    pub fn from_env() -> SkipRule {
        SkipRule::from_values(
            std::env::var("ROBOTA_REQUIRE_REAL").ok().as_deref(),
            std::env::var("ROBOTA_MAY_LACK").ok().as_deref(),
            std::env::var_os("ROBOTA_SKIP_LOG").as_deref(),
        )
    }

    /// The rule from the variables' values: the switch is on when set, not empty and not
    /// `0`; the names may be separated by commas or white space.
    pub fn from_values(
        require_real: Option<&str>,
        may_lack: Option<&str>,
        log: Option<&OsStr>,
    ) -> SkipRule {
        SkipRule {
            require_real: require_real.is_some_and(|v| !v.is_empty() && v != "0"),
            may_lack: may_lack
                .unwrap_or_default()
                .split([',', ' ', '\t', '\n'])
                .filter(|name| !name.is_empty())
                .map(str::to_string)
                .collect(),
            log: log.map(PathBuf::from),
        }
    }

    /// The skip line of `test`, appended to the log (`Ok`), or why the test must fail
    /// instead (`Err`).
    pub fn apply(&self, test: &str, component: &str, reason: &str) -> Result<String, String> {
        let reason: Vec<&str> = reason.lines().map(str::trim).collect();
        let reason = reason.join(" ");
        if self.require_real && !self.may_lack.iter().any(|name| name == component) {
            return Err(format!(
                "{test}: {component} is missing: {reason}. ROBOTA_REQUIRE_REAL is set, so the \
                 test fails instead of skipping: make {component} available, or list it in \
                 ROBOTA_MAY_LACK if this machine cannot have it"
            ));
        }
        let line = format!("SKIP {test}: {component}: {reason}\n");
        if let Some(log) = &self.log {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .and_then(|mut file| file.write_all(line.as_bytes()))
                .map_err(|e| {
                    format!(
                        "{test}: cannot append to ROBOTA_SKIP_LOG {}: {e}",
                        log.display()
                    )
                })?;
        }
        Ok(line)
    }
}

/// `<binary>::<test>`, e.g. `sandbox::background_jobs_are_sandboxed_too`: the test binary
/// without cargo's hash, and the test's name, which the test runner gives its thread.
fn test_name() -> String {
    let exe = std::env::current_exe().ok();
    let stem = exe
        .as_deref()
        .and_then(Path::file_stem)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let binary = stem
        .rsplit_once('-')
        .map_or(stem.as_str(), |(name, _)| name);
    let thread = std::thread::current();
    format!("{binary}::{}", thread.name().unwrap_or("main"))
}
