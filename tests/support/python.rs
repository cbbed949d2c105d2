//! The Python clients the end-to-end tests drive robota with (Anthropic's
//! `claude-agent-sdk`, the `mcp` package, `agent-client-protocol`, …), from the venv `.ci/run` installs
//! `tests/agent_sdk/requirements.txt` into and names in `ROBOTA_TEST_PYTHON`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use super::MockServer;
use super::project::Project;

/// How to get the venv, for a skip's reason.
const GET_THE_VENV: &str = "set ROBOTA_TEST_PYTHON to a venv's python where \
    `pip install -r tests/agent_sdk/requirements.txt` ran; .ci/run makes one in \
    ~/.cache/robota-ci/venv";

/// The venv's python with `module` importable, or `None` when no venv was named and none
/// at the default place has it: the test then skips (see `support::skip`, component
/// `python-clients`) and the caller returns. A venv named by `ROBOTA_TEST_PYTHON` without
/// the module fails the test.
pub fn python_with(module: &str) -> Option<PathBuf> {
    let named = std::env::var_os("ROBOTA_TEST_PYTHON").map(PathBuf::from);
    let candidate = named.clone().or_else(|| {
        let home = std::env::var_os("HOME")?;
        let default = PathBuf::from(home).join(".cache/robota-ci/venv/bin/python");
        default.exists().then_some(default)
    });
    let Some(python) = candidate else {
        let why = format!("no Python with {module} ({GET_THE_VENV})");
        super::skip::skip("python-clients", &why);
        return None;
    };
    let ok = Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .status()
        .is_ok_and(|s| s.success());
    match (ok, named.is_some()) {
        (true, _) => Some(python),
        (false, true) => panic!("{} cannot import {module}", python.display()),
        (false, false) => {
            let why = format!("{} has no {module} ({GET_THE_VENV})", python.display());
            super::skip::skip("python-clients", &why);
            None
        }
    }
}

impl Project {
    /// `python script args…` in the project, its environment pointing robota (`ROBOTA_BIN`)
    /// at the mock server, bounded by `timeout` so a hung client fails the test.
    pub fn python_command(
        &self,
        python: &Path,
        server: &MockServer,
        script: &Path,
        args: &[&str],
    ) -> Command {
        let mut cmd = Command::new("timeout");
        cmd.arg("120")
            .arg(python)
            .arg(script)
            .args(args)
            .current_dir(&self.root)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.user_home)
            .env("ROBOTA_HOME", &self.home)
            .env("ROBOTA_BIN", env!("CARGO_BIN_EXE_robota"))
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .env("ANTHROPIC_API_KEY", "sk-ant-test-key-0000000000000000")
            .env("ROBOTA_RETRY_BASE_MS", "1");
        cmd
    }
}
