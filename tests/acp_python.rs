//! End to end with a real editor-side client: the Python `agent-client-protocol` package
//! (from PyPI, installed by `.ci/run` into the venv named by `ROBOTA_TEST_PYTHON`) spawns
//! `robota acp` and drives it against the loopback mock model:
//! `tests/agent_sdk/acp_scenarios.py` initializes, opens a session, runs a prompt whose
//! Edit it approves (the diff arrives, the file changes), cancels a turn mid-stream, and
//! loads the session back in a new process. It prints what it saw as JSON.
//!
//! Without `ROBOTA_TEST_PYTHON` (and no venv at `~/.cache/robota-ci/venv`) the test says
//! why on stderr and passes without running; with it set, a missing package is a failure
//! (`support::python`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};
use support::project::project;
use support::python::python_with;
use support::{MockServer, anthropic};

#[test]
fn the_python_acp_client_runs_an_edit_a_cancel_and_a_load() {
    let Some(python) = python_with("acp") else {
        return;
    };
    let p = project();
    let calc = p.root.join("calc.py");
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            Some("Fixing."),
            &[
                ("toolu_read", "Read", json!({"file_path": calc})),
                (
                    "toolu_edit",
                    "Edit",
                    json!({"file_path": calc, "old_string": "return a - b", "new_string": "return a + b"}),
                ),
            ],
        ),
        anthropic::text_turn("Fixed."),
        anthropic::text_turn_held("Once upon a time there was a long story", 4),
    ]);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agent_sdk/acp_scenarios.py");
    let out = p
        .python_command(&python, &server, &script, &["core"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the ACP scenario failed ({:?})\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON ({e}): {stdout}"));

    assert_eq!(seen["load_session"], true, "{seen}");
    assert_eq!(seen["agent_name"], "robota");
    assert_eq!(seen["modes"], json!(["default", "acceptEdits", "plan"]));
    assert_eq!(seen["fix_stop"], "end_turn", "{seen}");
    assert_eq!(seen["answer"], "Fixing.Fixed.");
    let question = &seen["questions"][0];
    assert_eq!(question["tool_call"]["toolCallId"], "toolu_edit", "{seen}");
    assert_eq!(question["tool_call"]["content"][0]["type"], "diff");
    assert!(
        question["tool_call"]["content"][0]["newText"]
            .as_str()
            .unwrap()
            .contains("return a + b")
    );
    assert_eq!(
        question["options"],
        json!(["allow_once", "allow_always", "reject_once"])
    );
    let updates = seen["updates"].as_array().unwrap();
    let edit_done = updates
        .iter()
        .find(|u| u["toolCallId"] == "toolu_edit" && u["status"] == "completed")
        .unwrap_or_else(|| panic!("no completed edit: {seen}"));
    assert_eq!(edit_done["content"][0]["type"], "diff");
    let kinds: Vec<&str> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .map(|u| u["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["read", "edit"]);
    assert!(
        std::fs::read_to_string(&calc)
            .unwrap()
            .contains("return a + b")
    );

    assert_eq!(seen["cancel_stop"], "cancelled", "{seen}");

    assert_eq!(seen["replayed_user"], "fix addtell me a story", "{seen}");
    assert!(
        seen["replayed_agent"]
            .as_str()
            .unwrap()
            .starts_with("Fixing.Fixed."),
        "{seen}"
    );
    let replayed: Vec<&str> = seen["replayed_kinds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(replayed.contains(&"tool_call") && replayed.contains(&"tool_call_update"));
    server.release_held();
    assert_eq!(server.requests().len(), 3);
}
