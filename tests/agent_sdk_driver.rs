//! End to end: the real `robota` binary started as the Claude Agent SDK starts it
//! (`--output-format stream-json --verbose --input-format stream-json`), over real pipes,
//! against the loopback mock Anthropic server: user messages written one at a time, each
//! answered by its own `result`; control requests answered at any time.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use support::project::project;
use support::sdk_peer::{Peer, SDK_FLAGS, peer_results};
use support::{MockServer, anthropic};

fn two_messages_one_at_a_time(print: bool) {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("A1"), anthropic::text_turn("A2")]);
    let mut peer = Peer::start(&p, &server, print);
    // As in Claude Code, `system/init` comes once the first message is read (the session
    // is put together after it, so hooks an `initialize` registers are in it).
    peer.user("Q1");
    let init = peer.until("system/init", |v| v["subtype"] == "init");
    assert_eq!(init["type"], "system");
    assert_eq!(init["claude_code_version"], "2.0.0");
    assert!(init["tools"].as_array().unwrap().len() > 3, "{init}");
    assert!(init["session_id"].as_str().is_some_and(|s| !s.is_empty()));

    let first = peer.result();
    assert_eq!(first["result"], "A1", "{first}");
    assert_eq!(first["subtype"], "success");
    assert_eq!(first["num_turns"], 1);
    // The second message is written only now: the run did not wait for end of input.
    peer.user("Q2");
    let second = peer.result();
    assert_eq!(second["result"], "A2", "{second}");
    assert_eq!(second["session_id"], first["session_id"]);
    // Each result carries its own turn's usage, not the session's running total.
    assert!(first["usage"]["output_tokens"].as_u64().unwrap() > 0);
    assert_eq!(first["usage"], second["usage"]);
    assert_eq!(first["total_cost_usd"], second["total_cost_usd"]);

    let (code, rest) = peer.finish();
    assert_eq!(code, Some(0));
    assert!(rest.iter().all(|v| v["type"] != "result"), "{rest:#?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body["messages"].as_array().unwrap().len(), 3);
}

#[test]
fn two_user_messages_written_one_at_a_time_get_two_results() {
    two_messages_one_at_a_time(true);
}

#[test]
fn without_print_the_driver_runs_the_same_instead_of_the_tui() {
    two_messages_one_at_a_time(false);
}

#[test]
fn initialize_is_answered_with_commands_output_style_and_models() {
    let p = project();
    let server = MockServer::start(vec![]);
    let mut peer = Peer::start(&p, &server, true);
    peer.control("req_1", json!({"subtype": "initialize", "hooks": null}));
    let response = peer.response("req_1");
    assert_eq!(response["subtype"], "success", "{response}");
    let body = &response["response"];
    let commands = body["commands"].as_array().unwrap();
    let model = commands.iter().find(|c| c["name"] == "model").unwrap();
    assert_eq!(model["argumentHint"], "[model id]");
    assert!(model["description"].as_str().is_some_and(|d| !d.is_empty()));
    assert_eq!(body["output_style"], "default");
    assert!(body["models"][0]["value"].as_str().is_some());
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    assert!(server.requests().is_empty());
}

#[test]
fn interrupt_during_a_held_stream_ends_that_turn_and_the_next_still_runs() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn_held("I am in the middle of a long answer", 4),
        anthropic::text_turn("after the interrupt"),
    ]);
    let mut peer = Peer::start(&p, &server, true);
    peer.user("tell me a story");
    assert!(server.wait_for_requests(1, Duration::from_secs(20)));
    peer.control("req_int", json!({"subtype": "interrupt"}));
    assert_eq!(peer.response("req_int")["subtype"], "success");
    let interrupted = peer.result();
    assert_eq!(interrupted["stop_reason"], "interrupted", "{interrupted}");
    assert_eq!(interrupted["is_error"], true);
    assert_eq!(interrupted["subtype"], "error_during_execution");

    peer.user("go on");
    let next = peer.result();
    assert_eq!(next["result"], "after the interrupt", "{next}");
    assert_eq!(next["subtype"], "success");
    server.release_held();
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_message_queued_behind_an_interrupted_turn_still_runs_and_gets_its_result() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn_held("I am in the middle of a long answer", 4),
        anthropic::text_turn("the queued one"),
    ]);
    let mut peer = Peer::start(&p, &server, true);
    peer.user("tell me a story");
    assert!(server.wait_for_requests(1, Duration::from_secs(20)));
    // Written while the first turn runs: it waits in the session's queue.
    peer.user("and then this");
    peer.control("req_int", json!({"subtype": "interrupt"}));
    assert_eq!(peer.response("req_int")["subtype"], "success");
    assert_eq!(peer.result()["stop_reason"], "interrupted");
    let queued = peer.result();
    assert_eq!(queued["result"], "the queued one", "{queued}");
    server.release_held();
    let (code, rest) = peer.finish();
    assert_eq!(code, Some(0));
    assert_eq!(peer_results(&rest), 0, "{rest:#?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(last.contains("and then this"), "{last}");
}

#[test]
fn messages_written_together_run_in_order_and_a_prompt_argument_goes_first() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("A0"),
        anthropic::text_turn("A1"),
        anthropic::text_turn("A2"),
    ]);
    let mut args = vec!["-p", "Q0"];
    args.extend_from_slice(SDK_FLAGS);
    let out = p
        .command(&server, &args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = out;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"Q1\"}}\n{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Q2\"}]}}\n",
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let results: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "result")
        .collect();
    let texts: Vec<&str> = results
        .iter()
        .map(|r| r["result"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["A0", "A1", "A2"]);
    let requests = server.requests();
    let firsts: Vec<String> = requests
        .iter()
        .map(|r| {
            r.body["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(firsts[0].contains("Q0") && firsts[1].contains("Q1") && firsts[2].contains("Q2"));
}

#[test]
fn set_permission_mode_and_set_model_are_answered_and_take_effect() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("A1")]);
    let mut peer = Peer::start(&p, &server, true);
    peer.control(
        "req_mode",
        json!({"subtype": "set_permission_mode", "mode": "acceptEdits"}),
    );
    let answer = peer.response("req_mode");
    assert_eq!(answer["subtype"], "success");
    assert_eq!(
        answer["response"],
        json!({"mode": "acceptEdits"}),
        "{answer}"
    );
    let status = peer.until("system/status", |v| v["subtype"] == "status");
    assert_eq!(status["permissionMode"], "acceptEdits");

    peer.control(
        "req_model",
        json!({"subtype": "set_model", "model": "claude-opus-4-6"}),
    );
    assert_eq!(peer.response("req_model")["subtype"], "success");
    peer.user("Q1");
    let result = peer.result();
    assert_eq!(result["result"], "A1", "{result}");
    // The request of that turn asked for the new model.
    assert_eq!(server.requests()[0].body["model"], "claude-opus-4-6");

    peer.control(
        "req_bad",
        json!({"subtype": "set_permission_mode", "mode": "yolo"}),
    );
    let bad = peer.response("req_bad");
    assert_eq!(bad["subtype"], "error");
    assert!(bad["error"].as_str().unwrap().contains("yolo"), "{bad}");

    let (code, rest) = peer.finish();
    assert_eq!(code, Some(0));
    // set_model printed no result of its own.
    let results = peer_results(&rest);
    assert_eq!(results, 0, "{rest:#?}");
}

#[test]
fn with_the_stdio_prompt_tool_permission_questions_are_control_requests() {
    let p = project();
    let allowed = p.root.join("allowed.txt");
    let denied = p.root.join("denied.txt");
    let write = |id: &str, path: &std::path::Path| {
        anthropic::tool_turn(
            None,
            &[(
                id,
                "Write",
                json!({"file_path": path.to_str().unwrap(), "content": "hi\n"}),
            )],
        )
    };
    let server = MockServer::start(vec![
        write("toolu_1", &allowed),
        anthropic::text_turn("wrote it"),
        write("toolu_2", &denied),
        anthropic::text_turn("did not write it"),
    ]);
    let mut peer = Peer::start_with(&p, &server, &["-p", "--permission-prompt-tool", "stdio"]);
    peer.user("write allowed.txt");
    let question = peer.until("can_use_tool", |v| v["type"] == "control_request");
    assert_eq!(question["request"]["subtype"], "can_use_tool", "{question}");
    assert_eq!(question["request"]["tool_name"], "Write");
    assert_eq!(question["request"]["tool_use_id"], "toolu_1");
    let id = question["request_id"].as_str().unwrap().to_string();
    let input = question["request"]["input"].clone();
    peer.send(json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": id,
        "response": {"behavior": "allow", "updatedInput": input},
    }}));
    assert_eq!(peer.result()["result"], "wrote it");
    assert_eq!(std::fs::read_to_string(&allowed).unwrap(), "hi\n");

    peer.user("write denied.txt");
    let question = peer.until("can_use_tool", |v| v["type"] == "control_request");
    let id = question["request_id"].as_str().unwrap().to_string();
    peer.send(json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": id,
        "response": {"behavior": "deny", "message": "not that file"},
    }}));
    let result = peer.result();
    assert_eq!(result["result"], "did not write it", "{result}");
    assert!(!denied.exists());
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    let last = server.requests()[3].body["messages"].to_string();
    assert!(last.contains("not that file"), "{last}");
}

#[test]
fn max_thinking_tokens_as_the_sdk_passes_it_sets_the_thinking_budget() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("thought")]);
    let mut peer = Peer::start_with(&p, &server, &["--max-thinking-tokens", "2048"]);
    peer.user("think");
    assert_eq!(peer.result()["result"], "thought");
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    let body = &server.requests()[0].body;
    assert_eq!(body["thinking"]["budget_tokens"], 2048, "{body}");
}

#[test]
fn an_unknown_control_subtype_gets_an_error_response_and_the_run_goes_on() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("still here")]);
    let mut peer = Peer::start(&p, &server, true);
    peer.control("req_x", json!({"subtype": "rewind_the_universe"}));
    let response = peer.response("req_x");
    assert_eq!(response["subtype"], "error", "{response}");
    let error = response["error"].as_str().unwrap();
    assert!(error.contains("rewind_the_universe"), "{error}");
    peer.control("req_y", json!({}));
    assert_eq!(peer.response("req_y")["subtype"], "error");
    peer.user("hello");
    assert_eq!(peer.result()["result"], "still here");
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
}

#[test]
fn compact_emits_a_compact_boundary_then_its_result() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("A1"),
        anthropic::text_turn("The user asked Q1."),
        anthropic::text_turn("A2"),
    ]);
    let mut peer = Peer::start(&p, &server, true);
    peer.user("Q1");
    assert_eq!(peer.result()["result"], "A1");
    peer.user("/compact");
    let boundary = peer.until("system/compact_boundary", |v| {
        v["subtype"] == "compact_boundary"
    });
    assert_eq!(boundary["type"], "system");
    assert_eq!(boundary["compact_metadata"]["trigger"], "manual");
    assert!(boundary["compact_metadata"]["pre_tokens"].as_u64().unwrap() > 0);
    let result = peer.result();
    assert_eq!(result["subtype"], "success", "{result}");
    peer.user("Q2");
    assert_eq!(peer.result()["result"], "A2");
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    let requests = server.requests();
    let first = requests[2].body["messages"][0]["content"].to_string();
    assert!(first.contains("The user asked Q1."), "{first}");
    assert_eq!(requests[2].body["messages"].as_array().unwrap().len(), 2);
}

#[test]
fn agents_defined_in_the_first_initialize_can_be_delegated_to() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_r",
                "Agent",
                json!({"description": "research", "prompt": "Find facts.", "subagent_type": "researcher"}),
            )],
        ),
        anthropic::text_turn("FACTS"),
        anthropic::text_turn("Here are the facts."),
    ]);
    let mut peer = Peer::start(&p, &server, true);
    peer.control(
        "req_1",
        json!({"subtype": "initialize", "agents": {"researcher": {
            "description": "Researches facts", "prompt": "You are a researcher.", "tools": ["Read", "Grep"], "model": "haiku"
        }}}),
    );
    assert_eq!(peer.response("req_1")["subtype"], "success");
    peer.user("research it");
    let result = peer.result();
    assert_eq!(result["result"], "Here are the facts.");
    // A later initialize cannot add agents.
    peer.control(
        "req_2",
        json!({"subtype": "initialize", "agents": {"late": {"description": "x", "prompt": "y"}}}),
    );
    assert_eq!(peer.response("req_2")["subtype"], "error");
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    let requests = server.requests();
    let child = &requests[1].body;
    assert!(
        child["system"]
            .to_string()
            .contains("You are a researcher."),
        "{}",
        child["system"]
    );
    assert_eq!(child["model"], "claude-haiku-4-5");
    let tools: Vec<&str> = child["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(tools, ["Grep", "Read"]);
}

#[test]
fn system_init_lists_the_skills_and_agents_there_are() {
    let p = project();
    let write = |path: std::path::PathBuf, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        p.user_home.join(".claude/skills/lint/SKILL.md"),
        "---\ndescription: Lints the code\n---\nRun the linter.",
    );
    write(
        p.user_home.join(".claude/commands/review.md"),
        "---\ndescription: Reviews\n---\nReview.",
    );
    write(
        p.user_home.join(".claude/agents/reviewer.md"),
        "---\nname: code-reviewer\ndescription: Reviews code\n---\nYou review code.",
    );
    let server = MockServer::start(vec![anthropic::text_turn("A1")]);
    let mut peer = Peer::start(&p, &server, true);
    peer.control(
        "req_1",
        json!({"subtype": "initialize", "agents": {"researcher": {"description": "Researches", "prompt": "Research."}}}),
    );
    let init = peer.until("system/init", |v| v["subtype"] == "init");
    assert_eq!(init["skills"], json!(["lint"]), "{init}");
    let agents: Vec<&str> = init["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for agent in [
        "general-purpose",
        "Explore",
        "Plan",
        "code-reviewer",
        "researcher",
    ] {
        assert!(agents.contains(&agent), "{agent} missing: {init}");
    }
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
}

#[test]
fn a_long_tool_call_is_reported_with_tool_progress_lines_while_it_runs() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("toolu_slow", "Bash", json!({"command": "sleep 2"}))],
        ),
        anthropic::text_turn("slept"),
    ]);
    let mut peer = Peer::start_with_env(
        &p,
        &server,
        &["-p", "--allowedTools", "Bash"],
        &[("ROBOTA_KEEPALIVE_MS", "200")],
    );
    peer.user("wait a bit");
    let progress = peer.until("tool_progress", |v| v["type"] == "tool_progress");
    assert_eq!(progress["tool_use_id"], "toolu_slow", "{progress}");
    assert_eq!(progress["tool_name"], "Bash");
    assert!(
        progress["session_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    let result = peer.result();
    assert_eq!(result["result"], "slept", "{result}");
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
}
