//! A temp project with `.claude/settings.json` hooks and hook scripts, and the real
//! `robota` binary run headless in it against the loopback mock Anthropic server, with
//! `ROBOTA_HOME` and `HOME` in the temp dir.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

use crate::support::MockServer;

pub struct HookProject {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub user_home: PathBuf,
}

impl HookProject {
    pub fn new() -> HookProject {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let home = dir.path().join("robota-home");
        let user_home = dir.path().join("user-home");
        std::fs::create_dir_all(root.join(".claude/hooks")).unwrap();
        std::fs::create_dir_all(&user_home).unwrap();
        std::fs::write(root.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
        HookProject {
            _dir: dir,
            root: root.canonicalize().unwrap(),
            home,
            user_home,
        }
    }

    /// Writes `.claude/settings.json` with this `hooks` object.
    pub fn settings(&self, hooks: Value) {
        let settings = serde_json::json!({ "hooks": hooks });
        std::fs::write(
            self.root.join(".claude/settings.json"),
            serde_json::to_string_pretty(&settings).unwrap(),
        )
        .unwrap();
    }

    /// Writes an executable script under `.claude/hooks/` and returns its absolute path.
    pub fn script(&self, name: &str, body: &str) -> String {
        let path = self.root.join(".claude/hooks").join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.to_string_lossy().into_owned()
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub fn command(&self, server: &MockServer, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_robota"));
        cmd.args(args)
            .current_dir(&self.root)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.user_home)
            .env("ROBOTA_HOME", &self.home)
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .env("ANTHROPIC_API_KEY", "sk-ant-test-key-0000000000000000")
            .env("ROBOTA_RETRY_BASE_MS", "1")
            .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, server: &MockServer, args: &[&str]) -> Output {
        self.command(server, args).output().unwrap()
    }

    /// The one session log of this project.
    pub fn session_log(&self) -> PathBuf {
        let mut found = Vec::new();
        for dir in std::fs::read_dir(self.home.join("projects"))
            .unwrap()
            .flatten()
        {
            for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
                if f.path().extension().is_some_and(|e| e == "jsonl") {
                    found.push(f.path());
                }
            }
        }
        assert_eq!(found.len(), 1, "{found:?}");
        found.remove(0)
    }

    pub fn log_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(self.session_log())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The `hook` event lines of the session log.
    pub fn hook_lines(&self) -> Vec<Value> {
        self.log_lines()
            .into_iter()
            .filter(|l| l["type"] == "event" && l["event"] == "hook")
            .collect()
    }
}

/// The absolute path of a working Python 3, resolved once with the caller's environment
/// (version-manager shims may not work under the test's clean `HOME`).
pub fn python3() -> Option<&'static str> {
    static PYTHON: OnceLock<Option<String>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let out = Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .ok()?;
            let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
            (out.status.success() && Path::new(&path).is_file()).then_some(path)
        })
        .as_deref()
}

pub fn json_result(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON value ({e}):\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The tool_result blocks of the last user message of a recorded request.
pub fn tool_results(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_array())
        .map(|c| {
            c.iter()
                .filter(|b| b["type"] == "tool_result")
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The text of a tool_result or message content (string or blocks).
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The text of the last user message of a recorded request.
pub fn last_user_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| content_text(&m["content"]))
        .unwrap_or_default()
}
