//! End to end: the options and control messages the Claude Agent SDK uses beyond plain
//! turns — SDK hook callbacks, `updatedInput` in permission answers, `--max-budget-usd`,
//! `--json-schema`, `--tools`, `--setting-sources`, `--system-prompt-file`, full
//! `--include-partial-messages` stream events, and flags robota accepts without acting on
//! them — driven through the real binary over pipes against the loopback mock model.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use support::project::project;
use support::sdk_peer::{Peer, peer_results};
use support::{MockServer, anthropic};

fn answer(peer: &mut Peer, question: &Value, response: Value) {
    let id = question["request_id"].as_str().unwrap().to_string();
    peer.send(json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": id, "response": response,
    }}));
}

/// The model asks for one Bash call touching `path`.
fn touch_turn(id: &str, path: &std::path::Path) -> support::MockResponse {
    anthropic::tool_turn(
        None,
        &[(
            id,
            "Bash",
            json!({"command": format!("touch {}", path.display())}),
        )],
    )
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn an_sdk_pre_tool_use_hook_registered_at_initialize_is_called_back_and_its_deny_holds() {
    let p = project();
    let canary = p.root.join("canary.txt");
    let server = MockServer::start(vec![
        touch_turn("toolu_1", &canary),
        anthropic::text_turn("the hook said no"),
    ]);
    let mut peer = Peer::start_with(&p, &server, &["-p", "--allowedTools", "Bash"]);
    peer.control(
        "req_init",
        json!({"subtype": "initialize", "hooks": {"PreToolUse": [
            {"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 30},
            {"matcher": "Read", "hookCallbackIds": ["hook_1"]},
        ]}}),
    );
    assert_eq!(peer.response("req_init")["subtype"], "success");
    peer.user("touch the canary");
    let call = peer.until("hook_callback", |v| {
        v["type"] == "control_request" && v["request"]["subtype"] == "hook_callback"
    });
    // Only the Bash matcher's callback is asked, with Claude Code's hook input.
    assert_eq!(call["request"]["callback_id"], "hook_0", "{call}");
    assert_eq!(call["request"]["input"]["hook_event_name"], "PreToolUse");
    assert_eq!(call["request"]["input"]["tool_name"], "Bash");
    assert_eq!(call["request"]["tool_use_id"], "toolu_1");
    answer(
        &mut peer,
        &call,
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no shell today",
        }}),
    );
    let result = peer.result();
    assert_eq!(result["result"], "the hook said no", "{result}");
    let (code, rest) = peer.finish();
    assert_eq!(code, Some(0));
    assert_eq!(peer_results(&rest), 0);
    assert!(!canary.exists(), "the denied Bash call ran");
    let second = server.requests()[1].body["messages"].to_string();
    assert!(second.contains("no shell today"), "{second}");
}

#[test]
fn a_hook_callback_answered_with_an_error_does_not_block_and_a_second_initialize_cannot_add_hooks()
{
    let p = project();
    let made = p.root.join("made.txt");
    let server = MockServer::start(vec![
        touch_turn("toolu_1", &made),
        anthropic::text_turn("done"),
    ]);
    let mut peer = Peer::start_with(&p, &server, &["-p", "--allowedTools", "Bash"]);
    peer.control(
        "req_init",
        json!({"subtype": "initialize", "hooks": {"PreToolUse": [{"hookCallbackIds": ["hook_0"]}]}}),
    );
    assert_eq!(peer.response("req_init")["subtype"], "success");
    peer.control(
        "req_again",
        json!({"subtype": "initialize", "hooks": {"PreToolUse": [{"hookCallbackIds": ["hook_9"]}]}}),
    );
    assert_eq!(peer.response("req_again")["subtype"], "error");
    peer.user("make it");
    let call = peer.until("hook_callback", |v| {
        v["type"] == "control_request" && v["request"]["subtype"] == "hook_callback"
    });
    let id = call["request_id"].as_str().unwrap().to_string();
    peer.send(json!({"type": "control_response", "response": {
        "subtype": "error", "request_id": id, "error": "callback crashed",
    }}));
    assert_eq!(peer.result()["result"], "done");
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    assert!(
        made.exists(),
        "a failing hook callback must not block the call"
    );
}

#[test]
fn an_allow_with_updated_input_runs_the_new_input_and_deny_rules_judge_it() {
    let p = project();
    let asked = p.root.join("asked.txt");
    let instead = p.root.join("instead.txt");
    let server = MockServer::start(vec![
        touch_turn("toolu_1", &asked),
        anthropic::text_turn("ran the rewritten call"),
        anthropic::tool_turn(
            None,
            &[("toolu_2", "Bash", json!({"command": "touch other.txt"}))],
        ),
        anthropic::text_turn("the rewrite was refused"),
    ]);
    let mut peer = Peer::start_with(
        &p,
        &server,
        &[
            "-p",
            "--permission-prompt-tool",
            "stdio",
            "--disallowedTools",
            "Bash(rm:*)",
        ],
    );
    peer.user("touch it");
    let question = peer.until("can_use_tool", |v| v["type"] == "control_request");
    answer(
        &mut peer,
        &question,
        json!({"behavior": "allow", "updatedInput": {"command": format!("touch {}", instead.display())}}),
    );
    assert_eq!(peer.result()["result"], "ran the rewritten call");
    assert!(instead.exists(), "the updated input did not run");
    assert!(!asked.exists(), "the original input ran");

    peer.user("touch another");
    let question = peer.until("can_use_tool", |v| v["type"] == "control_request");
    answer(
        &mut peer,
        &question,
        json!({"behavior": "allow", "updatedInput": {"command": "rm calc.py"}}),
    );
    assert_eq!(peer.result()["result"], "the rewrite was refused");
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    assert!(
        p.root.join("calc.py").exists(),
        "a rewrite into a denied command ran"
    );
}

/// A call the client allows while rewriting it to write `PLANTED` into `target`: a Write
/// whose path is replaced, or a Bash command (`bash: true`) replaced by one that writes.
fn rewritten_onto(target: &str, bash: bool, modes: &[&str]) -> bool {
    let p = project();
    let (call, rewritten) = if bash {
        (
            ("Bash", json!({"command": "make build"})),
            json!({"command": format!("mkdir -p $(dirname {target}) && echo PLANTED > {target}")}),
        )
    } else {
        let path = |name: &str| p.root.join(name).display().to_string();
        (
            (
                "Write",
                json!({"file_path": path("notes.md"), "content": "PLANTED"}),
            ),
            json!({"file_path": path(target), "content": "PLANTED"}),
        )
    };
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("toolu_1", call.0, call.1)]),
        anthropic::text_turn("done"),
    ]);
    let mut args = vec!["-p", "--permission-prompt-tool", "stdio"];
    args.extend_from_slice(modes);
    let mut peer = Peer::start_with(&p, &server, &args);
    peer.user("go");
    let question = peer.until("can_use_tool", |v| v["type"] == "control_request");
    answer(
        &mut peer,
        &question,
        json!({"behavior": "allow", "updatedInput": rewritten}),
    );
    peer.result();
    peer.finish();
    std::fs::read_to_string(p.root.join(target)).is_ok_and(|t| t.trim() == "PLANTED")
}

#[test]
fn an_allow_that_rewrites_a_call_onto_a_protected_file_writes_nothing_there() {
    let accept_edits = &["--permission-mode", "acceptEdits"][..];
    for target in [
        ".claude/settings.json",
        ".git/hooks/pre-commit",
        ".mcp.json",
    ] {
        assert!(!rewritten_onto(target, false, &[]), "Write onto {target}");
        for modes in [&[][..], accept_edits] {
            assert!(
                !rewritten_onto(target, true, modes),
                "Bash onto {target} ({modes:?})"
            );
        }
    }
    // The benign controls: rewrites onto an ordinary file are carried out.
    assert!(rewritten_onto("docs/notes.md", false, &[]));
    assert!(rewritten_onto("docs/notes.md", true, accept_edits));
}

#[test]
fn max_budget_usd_stops_the_run_after_the_call_that_reaches_it() {
    let p = project();
    let canary = p.root.join("canary.txt");
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_1",
                "Bash",
                json!({"command": format!("sleep 20; touch {}", canary.display())}),
            )],
        ),
        anthropic::text_turn("never asked for"),
    ]);
    let mut peer = Peer::start_with(
        &p,
        &server,
        &[
            "-p",
            "--allowedTools",
            "Bash",
            "--max-budget-usd",
            "0.00000001",
        ],
    );
    peer.user("work");
    let result = peer.result();
    assert_eq!(result["subtype"], "error_max_budget_usd", "{result}");
    assert_eq!(result["is_error"], true);
    // A later message is answered at once, without a model call.
    peer.user("more");
    let later = peer.result();
    assert_eq!(later["subtype"], "error_max_budget_usd", "{later}");
    let (code, _) = peer.finish();
    assert_eq!(code, Some(1));
    assert_eq!(server.requests().len(), 1);
    assert!(!canary.exists());
}

#[test]
fn max_budget_usd_in_print_mode_ends_with_its_subtype_and_exit_1() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("toolu_1", "Read", json!({"file_path": "calc.py"}))],
        ),
        anthropic::text_turn("never asked for"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "read calc.py",
            "--output-format",
            "json",
            "--max-budget-usd",
            "0.00000001",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["subtype"], "error_max_budget_usd", "{result}");
    let errors = result["errors"].to_string();
    assert!(errors.contains("maximum budget"), "{errors}");
    // The budget is checked as each call's cost arrives; the round that crossed it may
    // already have sent its next request (a Read runs in microseconds), never more.
    let requests = server.requests().len();
    assert!((1..=2).contains(&requests), "{requests} requests");
}

const SCHEMA: &str = r#"{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"],"additionalProperties":false}"#;

#[test]
fn json_schema_answers_come_through_the_structured_output_tool_validated() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("toolu_1", "StructuredOutput", json!({"answer": "four"}))],
        ),
        anthropic::tool_turn(
            None,
            &[("toolu_2", "StructuredOutput", json!({"answer": 4}))],
        ),
        anthropic::text_turn("done"),
    ]);
    let mut peer = Peer::start_with(&p, &server, &["-p", "--json-schema", SCHEMA]);
    peer.user("what is 2+2?");
    let result = peer.result();
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(result["structured_output"], json!({"answer": 4}));
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    let requests = server.requests();
    let tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "StructuredOutput")
        .cloned()
        .unwrap();
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    assert_eq!(tool["input_schema"], schema);
    assert!(
        requests[0].body["system"]
            .to_string()
            .contains("StructuredOutput")
    );
    // The invalid answer went back to the model with what is wrong.
    let second = requests[1].body["messages"].to_string();
    assert!(
        second.contains("does not match the required schema"),
        "{second}"
    );
}

#[test]
fn json_schema_without_a_structured_answer_is_an_error_result() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("4, in prose")]);
    let out = p.run(
        &server,
        &[
            "-p",
            "what is 2+2?",
            "--output-format",
            "json",
            "--json-schema",
            SCHEMA,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        result["subtype"], "error_max_structured_output_retries",
        "{result}"
    );
    assert!(result.get("structured_output").is_none());

    let bad = p.run(&server, &["-p", "x", "--json-schema", "{not json"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("--json-schema is not valid JSON"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

#[test]
fn tools_chooses_the_tool_set_and_an_empty_list_offers_none() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("a"), anthropic::text_turn("b")]);
    let out = p.run(&server, &["-p", "hi", "--tools", "Read,Grep"]);
    assert_eq!(out.status.code(), Some(0));
    let out = p.run(&server, &["-p", "hi", "--tools", ""]);
    assert_eq!(out.status.code(), Some(0));
    let requests = server.requests();
    let mut chosen = tool_names(&requests[0].body);
    chosen.sort();
    assert_eq!(chosen, ["Grep", "Read"]);
    assert!(
        tool_names(&requests[1].body).is_empty(),
        "{}",
        requests[1].body
    );
}

#[test]
fn setting_sources_leaves_out_the_files_not_named() {
    let p = project();
    std::fs::create_dir_all(p.root.join(".claude")).unwrap();
    std::fs::write(
        p.root.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash"]}}"#,
    )
    .unwrap();
    let server = MockServer::start(vec![anthropic::text_turn("a"), anthropic::text_turn("b")]);
    assert!(p.run(&server, &["-p", "hi"]).status.success());
    let user_only = p.run(&server, &["-p", "hi", "--setting-sources", "user"]);
    assert!(user_only.status.success());
    let requests = server.requests();
    assert!(!tool_names(&requests[0].body).contains(&"Bash".to_string()));
    assert!(tool_names(&requests[1].body).contains(&"Bash".to_string()));

    let bad = p.run(&server, &["-p", "hi", "--setting-sources", "user,team"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("team"));
}

#[test]
fn system_prompt_file_replaces_the_prompt_and_append_file_adds_to_it() {
    let p = project();
    let dir = tempfile::tempdir().unwrap();
    let replace = dir.path().join("pirate.md");
    let append = dir.path().join("extra.md");
    std::fs::write(&replace, "You are a pirate.").unwrap();
    std::fs::write(&append, "Always answer in haiku.").unwrap();
    let server = MockServer::start(vec![anthropic::text_turn("arr")]);
    let out = p.run(
        &server,
        &[
            "-p",
            "hi",
            "--system-prompt-file",
            replace.to_str().unwrap(),
            "--append-system-prompt-file",
            append.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let system = server.requests()[0].body["system"].to_string();
    assert!(system.contains("You are a pirate."), "{system}");
    assert!(system.contains("Always answer in haiku."), "{system}");
    let missing = p.run(
        &server,
        &["-p", "hi", "--system-prompt-file", "/nonexistent/x.md"],
    );
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/x.md"));
}

/// The `event.type`s of the `stream_event` lines among `values`.
fn stream_types(values: &[Value]) -> Vec<String> {
    values
        .iter()
        .filter(|v| v["type"] == "stream_event")
        .map(|v| v["event"]["type"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn partial_messages_carry_the_full_anthropic_stream_for_text_and_tool_calls() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            Some("Let me look."),
            &[("toolu_1", "Read", json!({"file_path": "calc.py"}))],
        ),
        anthropic::text_turn("It subtracts."),
    ]);
    let mut peer = Peer::start_with(&p, &server, &["-p", "--include-partial-messages"]);
    peer.user("what does calc.py do?");
    assert_eq!(peer.result()["result"], "It subtracts.");
    let seen = peer.seen.clone();
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    // The first message: text then a tool call, each block opened, streamed and closed.
    let first_assistant = seen.iter().position(|v| v["type"] == "assistant").unwrap();
    let first = stream_types(&seen[..first_assistant]);
    assert_eq!(first.first().map(String::as_str), Some("message_start"));
    assert_eq!(
        &first[first.len() - 2..],
        ["message_delta", "message_stop"],
        "{first:?}"
    );
    let starts: Vec<&Value> = seen[..first_assistant]
        .iter()
        .filter(|v| v["event"]["type"] == "content_block_start")
        .map(|v| &v["event"])
        .collect();
    assert_eq!(starts.len(), 2, "{starts:?}");
    assert_eq!(starts[0]["content_block"]["type"], "text");
    assert_eq!(starts[1]["content_block"]["type"], "tool_use");
    assert_eq!(starts[1]["content_block"]["id"], "toolu_1");
    assert_eq!(starts[1]["index"], 1);
    let stops = first.iter().filter(|t| *t == "content_block_stop").count();
    assert_eq!(stops, 2, "{first:?}");
    let input: String = seen[..first_assistant]
        .iter()
        .filter(|v| v["event"]["delta"]["type"] == "input_json_delta")
        .map(|v| v["event"]["delta"]["partial_json"].as_str().unwrap())
        .collect();
    let input: Value = serde_json::from_str(&input).unwrap();
    assert_eq!(input, json!({"file_path": "calc.py"}));
    let delta = seen[..first_assistant]
        .iter()
        .find(|v| v["event"]["type"] == "message_delta")
        .unwrap();
    assert_eq!(delta["event"]["delta"]["stop_reason"], "tool_use");
    // The second message streams from a new message_start with block index 0 again.
    let rest = &seen[first_assistant + 1..];
    let second = stream_types(rest);
    assert_eq!(
        second,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let start = rest
        .iter()
        .find(|v| v["event"]["type"] == "content_block_start")
        .unwrap();
    assert_eq!(start["event"]["index"], 0);
}

#[test]
fn flags_robota_does_not_act_on_are_accepted_and_named_on_stderr() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("fine")]);
    let out = p.run(
        &server,
        &[
            "-p",
            "hi",
            "--betas",
            "interleaved-thinking-2025-05-14",
            "--effort",
            "high",
            "--thinking-display",
            "summarized",
            "--session-mirror",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "fine");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for flag in [
        "--betas",
        "--effort",
        "--thinking-display",
        "--session-mirror",
    ] {
        assert!(
            stderr.contains(&format!("{flag} is accepted")),
            "{flag}: {stderr}"
        );
    }
}

#[test]
fn thinking_adaptive_and_disabled_set_the_budget() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("a"), anthropic::text_turn("b")]);
    assert!(
        p.run(&server, &["-p", "hi", "--thinking", "adaptive"])
            .status
            .success()
    );
    assert!(
        p.run(
            &server,
            &[
                "-p",
                "hi",
                "--thinking",
                "disabled",
                "--max-thinking-tokens",
                "4000"
            ]
        )
        .status
        .success()
    );
    let requests = server.requests();
    assert!(
        requests[0].body["thinking"]["budget_tokens"]
            .as_u64()
            .unwrap()
            > 1000,
        "{}",
        requests[0].body
    );
    assert!(
        requests[1].body.get("thinking").is_none(),
        "{}",
        requests[1].body
    );
}

#[test]
fn fallback_model_takes_over_when_the_main_model_is_overloaded() {
    let p = project();
    let overloaded = || anthropic::error_status(529, "overloaded_error", "Overloaded", None);
    // The main model fails every attempt (the first and its 4 retries).
    let mut script: Vec<_> = (0..5).map(|_| overloaded()).collect();
    script.push(anthropic::text_turn("from the fallback"));
    script.push(anthropic::text_turn("still the fallback"));
    let server = MockServer::start(script);
    let mut peer = Peer::start_with(
        &p,
        &server,
        &[
            "-p",
            "--model",
            "claude-sonnet-4-6",
            "--fallback-model",
            "claude-haiku-4-5",
        ],
    );
    peer.user("one");
    let first = peer.result();
    assert_eq!(first["result"], "from the fallback", "{first}");
    peer.user("two");
    assert_eq!(peer.result()["result"], "still the fallback");
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    let models: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models.len(), 7, "{models:?}");
    assert!(
        models[..5].iter().all(|m| m == "claude-sonnet-4-6"),
        "{models:?}"
    );
    assert!(
        models[5..].iter().all(|m| m == "claude-haiku-4-5"),
        "{models:?}"
    );
}

#[test]
fn an_allowed_plan_leaves_plan_mode_and_the_program_is_told() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("p1", "ExitPlanMode", json!({"plan": "1. do it"}))]),
        anthropic::tool_turn(
            None,
            &[(
                "w1",
                "Write",
                json!({"file_path": "new.txt", "content": "hi\n"}),
            )],
        ),
        anthropic::text_turn("done"),
    ]);
    let mut peer = Peer::start_with(
        &p,
        &server,
        &[
            "-p",
            "--permission-mode",
            "plan",
            "--permission-prompt-tool",
            "stdio",
        ],
    );
    peer.user("plan then do");
    let question = peer.until("can_use_tool", |v| v["type"] == "control_request");
    assert_eq!(question["request"]["tool_name"], "ExitPlanMode");
    assert_eq!(question["request"]["input"]["plan"], "1. do it");
    answer(&mut peer, &question, json!({"behavior": "allow"}));
    let status = peer.until("system/status", |v| v["subtype"] == "status");
    assert_eq!(status["permissionMode"], "default");
    // Out of plan mode, the Write is asked about (not refused as read-only).
    let question = peer.until("can_use_tool", |v| v["type"] == "control_request");
    assert_eq!(question["request"]["tool_name"], "Write");
    answer(&mut peer, &question, json!({"behavior": "allow"}));
    assert_eq!(peer.result()["result"], "done");
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    assert_eq!(
        std::fs::read_to_string(p.root.join("new.txt")).unwrap(),
        "hi\n"
    );
}

#[test]
fn in_print_mode_a_plan_cannot_be_approved_and_plan_mode_holds() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("p1", "ExitPlanMode", json!({"plan": "1. do it"}))]),
        anthropic::text_turn("Here is the plan: 1. do it"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "plan it",
            "--permission-mode",
            "plan",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["result"], "Here is the plan: 1. do it");
    assert_eq!(result["permission_denials"][0]["tool_name"], "ExitPlanMode");
}
