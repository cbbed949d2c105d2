//! End to end with a real editor-side client: the Python `agent-client-protocol` package
//! (from PyPI, installed by `.ci/run` into the venv named by `ROBOTA_TEST_PYTHON`) spawns
//! `robota acp` and drives it against the loopback mock model:
//! `tests/agent_sdk/acp_scenarios.py` initializes, opens a session, runs a prompt whose
//! Edit it approves (the diff arrives, the file changes), cancels a turn mid-stream, and
//! loads the session back in a new process. It prints what it saw as JSON. The
//! `editor_files` scenario is an editor that offers its file system and terminal: the model
//! reads its unsaved buffer, its Edit lands in the buffer (not on disk), Bash runs in its
//! terminal, and a denied path is never sent to it.
//!
//! Without `ROBOTA_TEST_PYTHON` (and no venv at `~/.cache/robota-ci/venv`) the tests skip
//! through `support::skip` (a failure under `ROBOTA_REQUIRE_REAL`); with it set, a missing
//! package is a failure (`support::python`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};
use support::project::{Project, project, result_text, tool_results};
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

/// Runs one scenario of `acp_scenarios.py`; returns the JSON it printed.
fn run_scenario(python: &std::path::Path, p: &Project, server: &MockServer, name: &str) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agent_sdk/acp_scenarios.py");
    let out = p
        .python_command(python, server, &script, &[name])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the ACP scenario {name} failed ({:?})\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON ({e}): {stdout}"))
}

/// The text of the tool result for `id` in what the model was sent.
fn sent_result(server: &MockServer, id: &str) -> (String, bool) {
    server
        .requests()
        .iter()
        .flat_map(|r| tool_results(&r.body))
        .find(|b| b["tool_use_id"] == id)
        .map(|b| (result_text(&b), b["is_error"] == true))
        .unwrap_or_else(|| panic!("no result for {id}"))
}

#[test]
fn an_editor_offering_files_and_a_terminal_serves_reads_edits_and_commands() {
    let Some(python) = python_with("acp") else {
        return;
    };
    let p = project();
    std::fs::create_dir_all(p.root.join(".claude")).unwrap();
    std::fs::write(
        p.root.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Read(./secret.txt)", "Edit(./secret.txt)"]}}"#,
    )
    .unwrap();
    let calc = p.root.join("calc.py");
    let secret = p.root.join("secret.txt");
    std::fs::write(&secret, "on disk\n").unwrap();
    let on_disk = std::fs::read_to_string(&calc).unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            Some("Fixing."),
            &[
                ("toolu_read", "Read", json!({"file_path": calc})),
                (
                    "toolu_edit",
                    "Edit",
                    json!({"file_path": calc, "old_string": "return a - b  # unsaved in the editor", "new_string": "return a + b"}),
                ),
            ],
        ),
        anthropic::text_turn("Fixed."),
        anthropic::tool_turn(
            None,
            &[(
                "toolu_bash",
                "Bash",
                json!({"command": "mkdir -p sub && cd sub && echo from-terminal && echo to-stderr >&2 && (exit 3)"}),
            )],
        ),
        anthropic::tool_turn(None, &[("toolu_pwd", "Bash", json!({"command": "pwd"}))]),
        anthropic::text_turn("Ran."),
        anthropic::tool_turn(
            None,
            &[
                ("toolu_secret_read", "Read", json!({"file_path": secret})),
                (
                    "toolu_secret_write",
                    "Write",
                    json!({"file_path": secret, "content": "leaked\n"}),
                ),
                (
                    "toolu_secret_edit",
                    "Edit",
                    json!({"file_path": secret, "old_string": "on disk", "new_string": "leaked"}),
                ),
            ],
        ),
        anthropic::text_turn("Refused."),
    ]);
    let seen = run_scenario(&python, &p, &server, "editor_files");
    for turn in ["fix", "run", "secret"] {
        assert_eq!(seen[turn]["stop"], "end_turn", "{turn}: {seen}");
    }

    // The model read the editor's unsaved buffer, not the disk.
    let (read, _) = sent_result(&server, "toolu_read");
    assert!(read.contains("# unsaved in the editor"), "{read}");
    // The Edit was checked against the buffer, asked about with its diff, and written
    // through the editor; the disk still has the old text.
    let (edited, edit_failed) = sent_result(&server, "toolu_edit");
    assert!(!edit_failed, "{edited}\n{}", seen["questions"]);
    assert_eq!(
        seen["questions"][0]["tool_call"]["toolCallId"],
        "toolu_edit"
    );
    assert_eq!(
        seen["questions"][0]["tool_call"]["content"][0]["oldText"],
        "def add(a, b):\n    return a - b  # unsaved in the editor\n"
    );
    let calc_key = calc.display().to_string();
    assert_eq!(
        seen["writes"],
        json!([{"path": calc_key, "content": "def add(a, b):\n    return a + b\n"}])
    );
    assert_eq!(std::fs::read_to_string(&calc).unwrap(), on_disk);

    // Bash ran in the editor's terminal: output and exit code reached the model, `cd`
    // carried over to the next command, and the tool call embedded the terminal.
    let (ran, ran_failed) = sent_result(&server, "toolu_bash");
    assert!(ran_failed, "{ran}\n{}", seen["questions"]);
    assert!(
        ran.contains("from-terminal") && ran.contains("to-stderr"),
        "{ran}\n{}",
        seen["questions"]
    );
    assert!(ran.ends_with("Exit code 3"), "{ran}");
    let (pwd, _) = sent_result(&server, "toolu_pwd");
    assert_eq!(
        pwd.trim(),
        std::fs::canonicalize(p.root.join("sub"))
            .unwrap()
            .display()
            .to_string()
    );
    let methods: Vec<&str> = seen["terminal_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "create",
            "wait_for_exit",
            "output",
            "release",
            "create",
            "wait_for_exit",
            "output",
            "release"
        ]
    );
    assert_eq!(seen["terminal_calls"][0]["command"], "bash");
    let run_updates = seen["run"]["updates"].as_array().unwrap();
    let embedded: Vec<&Value> = run_updates
        .iter()
        .filter(|u| u["toolCallId"] == "toolu_bash")
        .filter(|u| u["content"][0]["type"] == "terminal")
        .collect();
    assert!(
        embedded.iter().any(|u| u["status"] == "in_progress")
            && embedded.iter().any(|u| u["status"] == "failed"),
        "{run_updates:?}"
    );
    assert_eq!(embedded[0]["content"][0]["terminalId"], "term-1");

    // The denied path stayed denied: the editor was never asked to read or write it.
    for id in [
        "toolu_secret_read",
        "toolu_secret_write",
        "toolu_secret_edit",
    ] {
        let (text, failed) = sent_result(&server, id);
        assert!(failed, "{id}: {text}\n{}", seen["questions"]);
    }
    let secret_key = secret.display().to_string();
    assert!(
        !seen["reads"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == &json!(secret_key)),
        "{seen}"
    );
    assert_eq!(seen["writes"].as_array().unwrap().len(), 1, "{seen}");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "on disk\n");
    let asked: Vec<&str> = seen["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["tool_call"]["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(asked, ["toolu_edit", "toolu_bash"]);
}
