//! End to end with the real client: Anthropic's official Python `claude-agent-sdk` (from
//! PyPI, installed by `.ci/run` into a venv named by `ROBOTA_TEST_PYTHON`) with `cli_path`
//! pointing at the built robota, against the loopback mock model. Each test runs one
//! scenario of `tests/agent_sdk/sdk_scenarios.py`, which prints what the SDK saw as JSON.
//!
//! Without `ROBOTA_TEST_PYTHON` (and no venv at `~/.cache/robota-ci/venv`) the tests say
//! why on stderr and pass without running; with it set, a missing SDK is a failure.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};
use support::project::{Project, project};
use support::{MockServer, anthropic};

/// The venv's python with `claude_agent_sdk` importable, or `None` (skip) when no venv
/// was named and none is at the default place.
fn python() -> Option<PathBuf> {
    let named = std::env::var_os("ROBOTA_TEST_PYTHON").map(PathBuf::from);
    let candidate = named.clone().or_else(|| {
        let home = std::env::var_os("HOME")?;
        let default = PathBuf::from(home).join(".cache/robota-ci/venv/bin/python");
        default.exists().then_some(default)
    });
    let Some(python) = candidate else {
        eprintln!(
            "skipped: no Python with claude-agent-sdk (set ROBOTA_TEST_PYTHON; .ci/run does)"
        );
        return None;
    };
    let ok = Command::new(&python)
        .args(["-c", "import claude_agent_sdk"])
        .status()
        .is_ok_and(|s| s.success());
    match (ok, named.is_some()) {
        (true, _) => Some(python),
        (false, true) => panic!("{} cannot import claude_agent_sdk", python.display()),
        (false, false) => {
            eprintln!("skipped: {} has no claude_agent_sdk", python.display());
            None
        }
    }
}

/// Runs one scenario with the SDK spawning robota; returns what it printed.
fn scenario(python: &PathBuf, p: &Project, server: &MockServer, name: &str) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agent_sdk/sdk_scenarios.py");
    let out = Command::new("timeout")
        .arg("120")
        .arg(python)
        .arg(&script)
        .arg(name)
        .current_dir(&p.root)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &p.user_home)
        .env("ROBOTA_HOME", &p.home)
        .env("ROBOTA_BIN", env!("CARGO_BIN_EXE_robota"))
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-test-key-0000000000000000")
        .env("ROBOTA_RETRY_BASE_MS", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scenario {name} failed ({:?})\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("scenario {name} printed no JSON ({e}): {stdout}"))
}

fn result_texts(seen: &Value) -> Vec<String> {
    seen["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["result"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn query_returns_the_answer_and_a_success_result() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("Hello from robota")]);
    let seen = scenario(&python, &p, &server, "query_text");
    assert_eq!(seen["texts"], json!(["Hello from robota"]), "{seen}");
    assert_eq!(seen["results"][0]["subtype"], "success");
    assert_eq!(seen["results"][0]["is_error"], false);
    assert!(seen["results"][0]["total_cost_usd"].as_f64().unwrap() > 0.0);
    assert_eq!(seen["types"][0], "SystemMessage", "{seen}");
}

#[test]
fn a_read_bash_text_tool_loop_runs_the_tools() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("t1", "Read", json!({"file_path": "calc.py"}))]),
        anthropic::tool_turn(
            None,
            &[("t2", "Bash", json!({"command": "sh test_calc.sh"}))],
        ),
        anthropic::text_turn("The test fails: add subtracts."),
    ]);
    let seen = scenario(&python, &p, &server, "tool_loop");
    assert_eq!(seen["tools"], json!(["Read", "Bash"]), "{seen}");
    assert_eq!(
        result_texts(&seen),
        ["The test fails: add subtracts."],
        "{seen}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // The Read result and the Bash output went back to the model.
    assert!(
        requests[1].body["messages"]
            .to_string()
            .contains("return a - b")
    );
    assert!(
        requests[2].body["messages"]
            .to_string()
            .contains("AssertionError")
    );
}

#[test]
fn a_client_keeps_one_session_over_two_turns() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("A1"), anthropic::text_turn("A2")]);
    let seen = scenario(&python, &p, &server, "client_two_turns");
    assert_eq!(result_texts(&seen), ["A1", "A2"], "{seen}");
    assert_eq!(
        seen["results"][0]["session_id"], seen["results"][1]["session_id"],
        "{seen}"
    );
    // The second request carries the first exchange.
    let second = server.requests()[1].body["messages"].to_string();
    assert!(
        second.contains("first question") && second.contains("A1"),
        "{second}"
    );
}

#[test]
fn can_use_tool_allows_one_bash_call_and_denies_another() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                ("t1", "Bash", json!({"command": "touch allowed.txt"})),
                ("t2", "Bash", json!({"command": "touch refused.txt"})),
            ],
        ),
        anthropic::text_turn("one of two"),
    ]);
    let seen = scenario(&python, &p, &server, "can_use_tool");
    assert_eq!(
        seen["asked"],
        json!(["touch allowed.txt", "touch refused.txt"]),
        "{seen}"
    );
    assert!(p.root.join("allowed.txt").exists());
    assert!(!p.root.join("refused.txt").exists());
    assert!(
        server.requests()[1].body["messages"]
            .to_string()
            .contains("not this one")
    );
}

#[test]
fn interrupt_stops_a_slow_stream_and_the_client_goes_on() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn_held("Once upon a time there was a very long story", 4),
        anthropic::text_turn("short"),
    ]);
    let seen = scenario(&python, &p, &server, "interrupt");
    server.release_held();
    let results = seen["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{seen}");
    assert_eq!(results[0]["is_error"], true, "{seen}");
    assert_eq!(results[1]["result"], "short");
}

#[test]
fn an_sdk_pre_tool_use_hook_blocks_the_call() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("t1", "Bash", json!({"command": "touch canary.txt"}))],
        ),
        anthropic::text_turn("blocked"),
    ]);
    let seen = scenario(&python, &p, &server, "hook_blocks");
    assert_eq!(
        seen["hook_calls"],
        json!([{"tool": "Bash", "id": "t1"}]),
        "{seen}"
    );
    assert!(
        !p.root.join("canary.txt").exists(),
        "the hook's deny did not hold"
    );
    assert!(
        server.requests()[1].body["messages"]
            .to_string()
            .contains("blocked by the SDK hook")
    );
}

#[test]
fn resume_continues_the_session_by_id() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("noted"),
        anthropic::text_turn("it was 42"),
    ]);
    let seen = scenario(&python, &p, &server, "resume");
    assert_eq!(
        seen["first"]["results"][0]["session_id"], seen["second"]["results"][0]["session_id"],
        "{seen}"
    );
    let second = server.requests()[1].body["messages"].to_string();
    assert!(second.contains("remember the number 42"), "{second}");
}

#[test]
fn include_partial_messages_yields_stream_events() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("streamed answer")]);
    let seen = scenario(&python, &p, &server, "partial_messages");
    let types: Vec<&str> = seen["stream_types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(types.first(), Some(&"message_start"), "{seen}");
    assert_eq!(types.last(), Some(&"message_stop"), "{seen}");
    assert!(types.contains(&"content_block_delta"));
}

#[test]
fn set_permission_mode_and_set_model_take_effect_mid_session() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("switched")]);
    let seen = scenario(&python, &p, &server, "mode_and_model");
    assert_eq!(result_texts(&seen), ["switched"], "{seen}");
    assert_eq!(server.requests()[0].body["model"], "claude-opus-4-6");
}

#[test]
fn output_format_with_a_json_schema_gives_structured_output() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("t1", "StructuredOutput", json!({"answer": 4}))]),
        anthropic::text_turn("done"),
    ]);
    let seen = scenario(&python, &p, &server, "json_schema");
    assert_eq!(
        seen["results"][0]["structured_output"],
        json!({"answer": 4}),
        "{seen}"
    );
}

#[test]
fn max_budget_usd_ends_with_its_error_subtype() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("t1", "Bash", json!({"command": "sleep 20"}))]),
        anthropic::text_turn("never asked for"),
    ]);
    let seen = scenario(&python, &p, &server, "max_budget");
    assert_eq!(
        seen["results"][0]["subtype"], "error_max_budget_usd",
        "{seen}"
    );
    assert_eq!(seen["raised"], "error_max_budget_usd", "{seen}");
    assert_eq!(server.requests().len(), 1);
}
