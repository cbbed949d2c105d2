//! End to end: `robota mcp serve` with the Python `mcp` package (PyPI) as its client — the
//! way another agent delegates to robota: list the tools, run a task with `robota`,
//! continue the session with `robota-reply`, and a call in a directory that does not exist.
//! Skips where the venv of `.ci/run` is missing (a failure under `ROBOTA_REQUIRE_REAL`); see
//! `support::python` and `support::skip`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};
use support::project::project;
use support::python::python_with;
use support::{MockServer, anthropic};

#[test]
fn another_agent_runs_a_task_and_continues_the_session_over_mcp() {
    let Some(python) = python_with("mcp") else {
        return;
    };
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("t1", "Read", json!({"file_path": "calc.py"}))]),
        anthropic::text_turn("add subtracts instead of adding"),
        anthropic::text_turn("replace - with +"),
    ]);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_serve/mcp_client.py");
    let root = p.root.to_string_lossy().into_owned();
    let out = p
        .python_command(&python, &server, &script, &[&root])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim().lines().last().unwrap()).unwrap();
    assert_eq!(seen["tools"], json!(["robota", "robota-reply"]), "{seen}");
    // The server names itself, not the MCP library it is built on.
    assert_eq!(
        seen["server_info"],
        json!({"name": "robota", "version": env!("CARGO_PKG_VERSION")}),
        "{seen}"
    );
    let required = &seen["schemas"]["robota"]["required"];
    assert_eq!(required, &json!(["prompt"]), "{seen}");

    assert_eq!(seen["first"]["is_error"], false, "{seen}");
    assert_eq!(seen["first"]["text"], "add subtracts instead of adding");
    let session_id = seen["first"]["structured"]["session_id"].as_str().unwrap();
    assert!(!session_id.is_empty());
    assert_eq!(seen["second"]["text"], "replace - with +", "{seen}");
    assert_eq!(seen["second"]["structured"]["session_id"], session_id);
    // The reply continued the session: its request carries the first exchange.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let third = requests[2].body["messages"].to_string();
    assert!(
        third.contains("what does calc.py do?") && third.contains("return a - b"),
        "{third}"
    );
    // A bad directory is an error result, not a crash of the server.
    assert_eq!(seen["bad"]["is_error"], true, "{seen}");
    assert!(
        seen["bad"]["text"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/dir"),
        "{seen}"
    );
}
