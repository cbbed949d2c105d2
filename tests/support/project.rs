//! A temp git project, a private `ROBOTA_HOME` and user home, and the real `robota`
//! binary pointed at a mock server: what end-to-end tests start from.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::MockServer;

pub struct Project {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub user_home: PathBuf,
}

pub fn project() -> Project {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let home = dir.path().join("robota-home");
    let user_home = dir.path().join("user-home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&user_home).unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(
        root.join("calc.py"),
        "def add(a, b):\n    return a - b\n\n# TODO: more operations\n",
    )
    .unwrap();
    std::fs::write(
        root.join("test_calc.sh"),
        "#!/bin/sh\npython3 -c 'import calc; assert calc.add(2, 3) == 5' && echo PASS\n",
    )
    .unwrap();
    git(&["add", "."]);
    git(&[
        "-c",
        "user.email=t@t",
        "-c",
        "user.name=t",
        "commit",
        "-qm",
        "init",
    ]);
    Project {
        _dir: dir,
        root,
        home,
        user_home,
    }
}

impl Project {
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

    /// Writes `settings` as the user's `~/.claude/settings.json` and an empty robota
    /// settings file under `$ROBOTA_HOME`.
    pub fn write_user_settings(&self, settings: &Value) {
        std::fs::create_dir_all(self.user_home.join(".claude")).unwrap();
        std::fs::write(
            self.user_home.join(".claude/settings.json"),
            settings.to_string(),
        )
        .unwrap();
        std::fs::create_dir_all(&self.home).unwrap();
        std::fs::write(self.home.join("settings.json"), "{}").unwrap();
    }

    pub fn session_logs(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let projects = self.home.join("projects");
        for dir in std::fs::read_dir(projects).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if f.path().extension().is_some_and(|e| e == "jsonl") {
                    out.push(f.path());
                }
            }
        }
        out
    }
}

/// A run's stdout then its stderr, as text (for assertions and their messages).
pub fn output_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
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

pub fn log_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The tool_result blocks of the last user message of a recorded request.
pub fn tool_results(request: &Value) -> Vec<Value> {
    let messages = request["messages"].as_array().unwrap();
    messages
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

/// The text of the result answering call `id` among `results`, led by `[error] ` when it is
/// an error result; `[no result]` when none answers it.
pub fn marked_result_text(results: &[Value], id: &str) -> String {
    results
        .iter()
        .find(|b| b["tool_use_id"] == id)
        .map(|b| {
            let mut t = result_text(b);
            if b["is_error"] == true {
                t.insert_str(0, "[error] ");
            }
            t
        })
        .unwrap_or_else(|| "[no result]".to_string())
}

pub fn result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Runs `robota -p` with stream-json input and output, writing each prompt as a user
/// message line, then closing stdin; `extra` are more arguments.
pub fn stream_json_run(
    p: &Project,
    server: &MockServer,
    extra: &[&str],
    prompts: &[&str],
) -> Output {
    let lines: Vec<Value> = prompts
        .iter()
        .map(|prompt| json!({"type": "user", "message": {"role": "user", "content": prompt}}))
        .collect();
    stream_json_lines(p, server, extra, &lines)
}

/// Runs `robota -p` with stream-json input and output, one stdin line per message, then
/// closes stdin; `extra` are more arguments.
pub fn stream_json_lines(
    p: &Project,
    server: &MockServer,
    extra: &[&str],
    lines: &[Value],
) -> Output {
    stream_json_lines_with(p, server, extra, lines, |_| {})
}

/// [`stream_json_lines`], with the command adjusted by `adjust` first (an environment
/// variable set).
pub fn stream_json_lines_with(
    p: &Project,
    server: &MockServer,
    extra: &[&str],
    lines: &[Value],
    adjust: impl FnOnce(&mut Command),
) -> Output {
    let mut args = vec![
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
    ];
    args.extend_from_slice(extra);
    let mut command = p.command(server, &args);
    adjust(&mut command);
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    child.wait_with_output().unwrap()
}
