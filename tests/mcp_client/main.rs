//! The MCP client end to end: the real `robota -p` against the loopback mock model, with
//! real MCP servers as subprocesses — a small Python server (always), a server that hangs
//! and one that crashes, a Python HTTP server answering 401, and, when they are installed
//! (`ROBOTA_TEST_MCP_DIR`, which `.ci/run` sets), the npm reference servers
//! `@modelcontextprotocol/server-everything` (stdio, streamable HTTP, SSE) and
//! `server-filesystem`. Also the corpus' `.mcp.json` files (with `--features corpus`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

#[path = "../support/mod.rs"]
mod support;

#[cfg(feature = "corpus")]
mod corpus;
mod fake_servers;
mod npm_servers;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use support::MockServer;
use support::project::Project;

/// The Python MCP server of these tests.
pub fn fake_server_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client/fake_server.py")
}

/// A stdio server entry running the fake server in `mode`, writing its pid to `pid_file`.
pub fn fake_entry(mode: &str, pid_file: &Path) -> Value {
    json!({
        "command": "python3",
        "args": [fake_server_script().to_string_lossy(), mode, pid_file.to_string_lossy()]
    })
}

/// Runs `robota -p PROMPT --output-format stream-json --verbose --mcp-config CONFIG ARGS…`.
pub fn run_with_servers(
    p: &Project,
    server: &MockServer,
    prompt: &str,
    config: &Value,
    args: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let config = config.to_string();
    let mut all = vec![
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--mcp-config",
        &config,
    ];
    all.extend_from_slice(args);
    let mut cmd = p.command(server, &all);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The stdout lines as JSON.
pub fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| {
                panic!(
                    "not JSON ({e}): {l}\nstderr:\n{}",
                    String::from_utf8_lossy(&output.stderr)
                )
            })
        })
        .collect()
}

/// The `system/init` message.
pub fn init(output: &Output) -> Value {
    lines(output)
        .into_iter()
        .find(|l| l["type"] == "system" && l["subtype"] == "init")
        .unwrap_or_else(|| panic!("no init line; stderr:\n{}", stderr(output)))
}

/// The `result` message.
pub fn result(output: &Output) -> Value {
    lines(output)
        .into_iter()
        .find(|l| l["type"] == "result")
        .unwrap_or_else(|| panic!("no result line; stderr:\n{}", stderr(output)))
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `mcp_servers` of the init message as (name, status) pairs.
pub fn statuses(init: &Value) -> Vec<(String, String)> {
    init["mcp_servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The tool names of the init message.
pub fn init_tools(init: &Value) -> Vec<String> {
    init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

pub use crate::support::process::process_gone;

/// The pid a fake server wrote.
pub fn pid_in(file: &Path) -> u32 {
    std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .trim()
        .parse()
        .unwrap()
}
