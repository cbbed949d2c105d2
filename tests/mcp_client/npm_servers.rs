//! The npm reference servers: `@modelcontextprotocol/server-everything` over stdio,
//! streamable HTTP and SSE, and `@modelcontextprotocol/server-filesystem` on a temp dir.
//! They are installed by `.ci/run` into the directory `ROBOTA_TEST_MCP_DIR` names (its
//! `node_modules`); without them these tests skip through `support::skip` (a failure under
//! `ROBOTA_REQUIRE_REAL`).

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::support::project::{project, tool_results};
use crate::support::{MockServer, anthropic};
use crate::*;

/// The installed servers' directory, or `None` when they are not installed: the test then
/// skips (see `support::skip`, component `npm-mcp-servers`) and the caller returns.
fn npm_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("ROBOTA_TEST_MCP_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/robota-ci/mcp")))
        .filter(|d| d.join("node_modules/@modelcontextprotocol").is_dir());
    if dir.is_none() {
        crate::support::skip::skip(
            "npm-mcp-servers",
            "the npm MCP servers are not installed (set ROBOTA_TEST_MCP_DIR to a directory \
             where `npm install @modelcontextprotocol/server-everything \
             @modelcontextprotocol/server-filesystem` ran; .ci/run does)",
        );
    }
    dir
}

fn everything_js(dir: &std::path::Path) -> String {
    dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .to_string_lossy()
        .into_owned()
}

fn filesystem_js(dir: &std::path::Path) -> String {
    dir.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
        .to_string_lossy()
        .into_owned()
}

/// Processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(marker) && !process_gone(pid) {
            pids.push(pid);
        }
    }
    pids
}

#[test]
fn everything_over_stdio_echoes_and_adds_and_leaves_no_process_behind() {
    let Some(dir) = npm_dir() else {
        return;
    };
    let p = project();
    let marker = format!("robota-mcp-test-{}", std::process::id());
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                (
                    "toolu_e",
                    "mcp__everything__echo",
                    json!({"message": "round trip"}),
                ),
                (
                    "toolu_s",
                    "mcp__everything__get-sum",
                    json!({"a": 2, "b": 40}),
                ),
            ],
        ),
        anthropic::text_turn("done"),
    ]);
    let config = json!({"mcpServers": {"everything": {
        "command": "node", "args": [everything_js(&dir), "stdio", marker]
    }}});
    let out = run_with_servers(
        &p,
        &server,
        "go",
        &config,
        &["--allowedTools", "mcp__everything"],
        &[("MCP_TIMEOUT", "30000")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let init = init(&out);
    assert_eq!(
        statuses(&init),
        [("everything".to_string(), "connected".to_string())]
    );
    assert!(init_tools(&init).contains(&"mcp__everything__echo".to_string()));
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["content"], "Echo: round trip", "{results:?}");
    assert!(
        results[1]["content"].as_str().unwrap().contains("42"),
        "{results:?}"
    );
    assert!(
        processes_with(&marker).is_empty(),
        "node processes outlived the run"
    );
}

#[test]
fn filesystem_reads_lists_and_writes_only_when_allowed() {
    let Some(dir) = npm_dir() else {
        return;
    };
    let p = project();
    let data = p.root.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("note.txt"), "remember the milk\n").unwrap();
    let target = data.join("written.txt");
    let data_str = data.to_string_lossy().into_owned();
    let config = json!({"fs": {"command": "node", "args": [filesystem_js(&dir), data_str]}});
    let script = || {
        MockServer::start(vec![
            anthropic::tool_turn(
                None,
                &[
                    (
                        "toolu_r",
                        "mcp__fs__read_text_file",
                        json!({"path": data.join("note.txt").to_string_lossy()}),
                    ),
                    (
                        "toolu_l",
                        "mcp__fs__list_directory",
                        json!({"path": data_str}),
                    ),
                    (
                        "toolu_w",
                        "mcp__fs__write_file",
                        json!({"path": target.to_string_lossy(), "content": "written"}),
                    ),
                ],
            ),
            anthropic::text_turn("done"),
        ])
    };
    let env = [("MCP_TIMEOUT", "30000")];
    // Reads allowed, the write denied by a deny rule on the server.
    let server = script();
    let out = run_with_servers(
        &p,
        &server,
        "go",
        &config,
        &[
            "--allowedTools",
            "mcp__fs__read_text_file,mcp__fs__list_directory,mcp__fs__write_file",
            "--disallowedTools",
            "mcp__fs__write_file",
        ],
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["content"], "remember the milk\n", "{results:?}");
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("[FILE] note.txt"),
        "{results:?}"
    );
    assert_eq!(results[2]["is_error"], true, "{results:?}");
    assert!(!target.exists(), "a denied write happened");
    // Allowed: the write happens.
    let server = script();
    let out = run_with_servers(
        &p,
        &server,
        "go",
        &config,
        &["--allowedTools", "mcp__fs"],
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "written");
}

/// server-everything as an HTTP server (`streamableHttp` or `sse`) on a free port.
struct HttpEverything {
    child: Child,
    port: u16,
}

impl HttpEverything {
    fn start(dir: &std::path::Path, transport: &str) -> HttpEverything {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new("node")
            .args([everything_js(dir), transport.to_string()])
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Ready when it says it listens.
        let stderr = child.stderr.take().unwrap();
        let mut lines = std::io::BufReader::new(stderr).lines();
        let ready = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.contains(&port.to_string()));
        assert!(ready, "server-everything {transport} did not start");
        std::thread::spawn(move || lines.for_each(drop));
        HttpEverything { child, port }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn echo_over(transport: &str, entry: impl Fn(u16) -> Value) {
    let Some(dir) = npm_dir() else {
        return;
    };
    let http = HttpEverything::start(&dir, transport);
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_e",
                "mcp__remote__echo",
                json!({"message": transport}),
            )],
        ),
        anthropic::text_turn("done"),
    ]);
    let config = json!({"remote": entry(http.port)});
    let out = run_with_servers(
        &p,
        &server,
        "go",
        &config,
        &["--allowedTools", "mcp__remote__echo"],
        &[("MCP_TIMEOUT", "30000")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        statuses(&init(&out)),
        [("remote".to_string(), "connected".to_string())]
    );
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["content"], format!("Echo: {transport}"));
}

#[test]
fn everything_over_streamable_http() {
    echo_over(
        "streamableHttp",
        |port| json!({"type": "http", "url": format!("http://127.0.0.1:{port}/mcp"), "headers": {"X-Test": "${ROBOTA_UNSET_VAR:-yes}"}}),
    );
}

#[test]
fn everything_over_sse() {
    echo_over(
        "sse",
        |port| json!({"type": "sse", "url": format!("http://127.0.0.1:{port}/sse")}),
    );
}
