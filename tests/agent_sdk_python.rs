//! End to end with the real client: Anthropic's official Python `claude-agent-sdk` (from
//! PyPI, installed by `.ci/run` into a venv named by `ROBOTA_TEST_PYTHON`) with `cli_path`
//! pointing at the built robota, against the loopback mock model. Each test runs one
//! scenario of `tests/agent_sdk/sdk_scenarios.py`, which prints what the SDK saw as JSON.
//!
//! Without `ROBOTA_TEST_PYTHON` (and no venv at `~/.cache/robota-ci/venv`) the tests skip
//! through `support::skip` (a failure under `ROBOTA_REQUIRE_REAL`); with it set, a missing
//! SDK is a failure (`support::python`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::project::{Project, project};
use support::python::python_with;
use support::{MockServer, anthropic};

fn python() -> Option<PathBuf> {
    python_with("claude_agent_sdk")
}

/// Runs one scenario with the SDK spawning robota; returns what it printed.
fn scenario(python: &Path, p: &Project, server: &MockServer, name: &str) -> Value {
    scenario_with(python, p, server, name, &[])
}

/// A scenario with extra arguments after its name.
fn scenario_with(
    python: &Path,
    p: &Project,
    server: &MockServer,
    name: &str,
    extra: &[&str],
) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agent_sdk/sdk_scenarios.py");
    let mut args = vec![name];
    args.extend_from_slice(extra);
    let out = p
        .python_command(python, server, &script, &args)
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
fn allowed_tools_bash_runs_a_command_that_writes_in_the_project() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("t1", "Bash", json!({"command": "echo made > sdk-made.txt"}))],
        ),
        anthropic::text_turn("written"),
    ]);
    let seen = scenario(&python, &p, &server, "bash_allowed");
    assert_eq!(result_texts(&seen), ["written"], "{seen}");
    assert_eq!(
        std::fs::read_to_string(p.root.join("sdk-made.txt")).unwrap(),
        "made\n"
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

#[test]
fn an_sdk_in_process_mcp_server_is_reached_through_mcp_message() {
    let Some(python) = python() else { return };
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("t1", "mcp__calc__add", json!({"a": 2, "b": 3}))]),
        anthropic::text_turn("2 + 3 = 5"),
    ]);
    let seen = scenario(&python, &p, &server, "sdk_mcp_server");
    // The tool ran inside the Python program, with the model's arguments.
    assert_eq!(seen["calls"], json!([{"a": 2, "b": 3}]), "{seen}");
    assert_eq!(seen["tools"], json!(["mcp__calc__add"]));
    assert_eq!(result_texts(&seen), ["2 + 3 = 5"]);
    assert_eq!(
        seen["init_mcp"],
        json!([{"name": "calc", "status": "connected"}]),
        "{seen}"
    );
    let requests = server.requests();
    let offered = requests[0].body["tools"].to_string();
    assert!(offered.contains("mcp__calc__add"), "{offered}");
    let results = support::project::tool_results(&requests[1].body);
    assert_eq!(support::project::result_text(&results[0]), "5");
}

#[test]
fn an_ordinary_stdio_server_in_mcp_servers_works_through_the_sdk() {
    let Some(python) = python() else { return };
    let p = project();
    let fake = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client/fake_server.py");
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("t1", "mcp__fake__shout", json!({"text": "hello"}))],
        ),
        anthropic::text_turn("HELLO it is"),
    ]);
    let seen = scenario_with(
        &python,
        &p,
        &server,
        "stdio_mcp_server",
        &[fake.to_str().unwrap()],
    );
    assert_eq!(
        seen["init_mcp"],
        json!([{"name": "fake", "status": "connected"}]),
        "{seen}"
    );
    assert_eq!(result_texts(&seen), ["HELLO it is"]);
    let results = support::project::tool_results(&server.requests()[1].body);
    assert!(
        support::project::result_text(&results[0]).contains("HELLO"),
        "{results:?}"
    );
}
