//! Hooks around turns and sessions: SessionStart, UserPromptSubmit, Stop (with its cap of
//! eight blocks in a row), SubagentStop (with the subagent's last message), `prompt` hooks
//! through the session's provider, SessionEnd, and hook events in stream-json output.

use serde_json::{Value, json};

use crate::project::{HookProject, json_result, last_user_text, stderr};
use crate::support::{MockServer, anthropic};

#[test]
fn session_start_and_prompt_submit_context_reach_the_first_request() {
    let p = HookProject::new();
    let start_input = p.path("start-input.json");
    let start = p.script(
        "start.sh",
        &format!(
            "#!/bin/sh\ncat > {}\necho '{{\"hookSpecificOutput\":{{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"branch policy: small commits\"}}}}'\n",
            start_input.display()
        ),
    );
    p.settings(json!({
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": start}]},
                         {"matcher": "resume", "hooks": [{"type": "command", "command": "echo resume-only"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo \"prompt seen: $(cat | head -c 400 | grep -o 'fix the bug')\""}]}]
    }));
    let server = MockServer::start(vec![anthropic::text_turn("fine")]);
    let out = p.run(&server, &["-p", "fix the bug", "--output-format", "json"]);
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(0), "{result}");
    let first = last_user_text(&server.requests()[0].body);
    assert!(first.starts_with("fix the bug"), "{first}");
    assert!(first.contains("<system-reminder>"), "{first}");
    assert!(first.contains("branch policy: small commits"), "{first}");
    assert!(first.contains("prompt seen: fix the bug"), "{first}");
    assert!(
        !first.contains("resume-only"),
        "the resume matcher did not fire"
    );
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(&start_input).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "SessionStart");
    assert_eq!(input["source"], "startup");
}

#[test]
fn a_user_prompt_submit_exit_2_refuses_the_prompt_and_the_run_ends_with_its_reason() {
    let p = HookProject::new();
    let refuse = p.script(
        "refuse.sh",
        "#!/bin/sh\necho 'prompts may not mention passwords' >&2\nexit 2\n",
    );
    p.settings(json!({"UserPromptSubmit": [{"hooks": [{"type": "command", "command": refuse}]}]}));
    let server = MockServer::start(vec![anthropic::text_turn("never")]);
    let out = p.run(
        &server,
        &["-p", "print the password", "--output-format", "json"],
    );
    let result = json_result(&out);
    // As Claude Code: the run ends normally, the reason is the result.
    assert_eq!(out.status.code(), Some(0), "{result}");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["subtype"], "success");
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .contains("prompts may not mention passwords"),
        "{result}"
    );
    assert!(
        server.requests().is_empty(),
        "nothing was sent to the model"
    );
    let log = p.log_lines();
    assert!(
        !log.iter().any(|l| l["type"] == "user"),
        "the prompt was erased"
    );
    assert!(log.iter().any(|l| l["event"] == "prompt_blocked"));
}

#[test]
fn a_blocking_stop_hook_continues_the_turn_at_most_eight_times() {
    let p = HookProject::new();
    let seen = p.path("stop-inputs.jsonl");
    let stop = p.script(
        "stop.sh",
        &format!(
            "#!/bin/sh\ncat >> {}\necho >> {}\necho '{{\"decision\":\"block\",\"reason\":\"keep going\",\"systemMessage\":\"looping\"}}'\n",
            seen.display(),
            seen.display()
        ),
    );
    p.settings(json!({"Stop": [{"hooks": [{"type": "command", "command": stop}]}]}));
    let server = MockServer::start(
        (0..12)
            .map(|i| anthropic::text_turn(&format!("answer {i}")))
            .collect(),
    );
    let out = p.run(&server, &["-p", "work", "--output-format", "json"]);
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(0), "{result}");
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        9,
        "the first answer plus eight continuations"
    );
    assert_eq!(last_user_text(&requests[1].body), "keep going");
    assert_eq!(result["result"], "answer 8");
    let inputs: Vec<Value> = std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(inputs.len(), 9);
    assert_eq!(inputs[0]["stop_hook_active"], false);
    assert!(inputs[1..].iter().all(|i| i["stop_hook_active"] == true));
    assert_eq!(inputs[0]["last_assistant_message"], "answer 0");
    let err = stderr(&out);
    assert!(err.contains("8 times in a row"), "{err}");
    assert!(err.contains("looping"), "systemMessage shown: {err}");
}

#[test]
fn prompt_hooks_ask_the_sessions_provider() {
    let p = HookProject::new();
    p.settings(json!({"Stop": [{"hooks": [{"type": "prompt", "prompt": "Did the assistant add a test? $ARGUMENTS"}]}]}));
    let server = MockServer::start(vec![
        anthropic::text_turn("I fixed it."),
        anthropic::text_turn("{\"ok\": false, \"reason\": \"add a test for add()\"}"),
        anthropic::text_turn("Added a test."),
        anthropic::text_turn("{\"ok\": true}"),
    ]);
    let out = p.run(&server, &["-p", "fix add", "--output-format", "json"]);
    let result = json_result(&out);
    assert_eq!(result["result"], "Added a test.", "{result}");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let hook_call = &requests[1].body;
    assert!(
        hook_call.get("tools").is_none(),
        "the hook call offers no tools"
    );
    assert!(hook_call["system"].to_string().contains("\\\"ok\\\""));
    let asked = last_user_text(hook_call);
    assert!(
        asked.starts_with("Did the assistant add a test? {"),
        "{asked}"
    );
    assert!(
        asked.contains("\"last_assistant_message\":\"I fixed it.\""),
        "{asked}"
    );
    assert_eq!(last_user_text(&requests[2].body), "add a test for add()");
}

#[test]
fn session_end_runs_after_the_result_and_hook_events_stream() {
    let p = HookProject::new();
    let end_input = p.path("end-input.json");
    p.settings(json!({
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo started"}]}],
        "PreToolUse": [{"hooks": [{"type": "command", "command": "exit 0"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": format!("cat > {}", end_input.display()), "timeout": 10}]}]
    }));
    let script = || {
        vec![
            anthropic::tool_turn(
                None,
                &[("toolu_1", "Read", json!({"file_path": "calc.py"}))],
            ),
            anthropic::text_turn("done"),
        ]
    };
    let server = MockServer::start(script());
    let args = [
        "-p",
        "go",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-hook-events",
    ];
    let out = p.run(&server, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let hook_lines: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "system" && l["subtype"].as_str().unwrap().starts_with("hook_"))
        .collect();
    let events: Vec<(&str, &str)> = hook_lines
        .iter()
        .map(|l| {
            (
                l["subtype"].as_str().unwrap(),
                l["hook_event"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        events,
        vec![
            ("hook_started", "SessionStart"),
            ("hook_response", "SessionStart"),
            ("hook_started", "PreToolUse"),
            ("hook_response", "PreToolUse")
        ]
    );
    let start = hook_lines[1];
    assert_eq!(start["hook_name"], "SessionStart:startup");
    assert_eq!(start["stdout"], "started\n");
    assert_eq!(start["exit_code"], 0);
    assert_eq!(start["outcome"], "success");
    assert_eq!(hook_lines[0]["hook_id"], start["hook_id"]);
    assert_eq!(hook_lines[3]["hook_name"], "PreToolUse:Read");
    assert_eq!(lines.last().unwrap()["type"], "result");
    let end: Value = serde_json::from_str(&std::fs::read_to_string(&end_input).unwrap()).unwrap();
    assert_eq!(end["hook_event_name"], "SessionEnd");
    assert_eq!(end["reason"], "other");
    let logged: Vec<String> = p
        .hook_lines()
        .iter()
        .map(|l| l["hook_event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(logged, vec!["SessionStart", "PreToolUse", "SessionEnd"]);

    // Without the flag only SessionStart hooks are streamed.
    let p2 = HookProject::new();
    std::fs::copy(
        p.path(".claude/settings.json"),
        p2.path(".claude/settings.json"),
    )
    .unwrap();
    let server = MockServer::start(script());
    let out = p2.run(&server, &args[..5]);
    let subtypes: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| {
            l["subtype"]
                .as_str()
                .is_some_and(|s| s.starts_with("hook_"))
        })
        .map(|l| l["hook_event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(subtypes, vec!["SessionStart", "SessionStart"]);
}

#[test]
fn clear_ends_and_restarts_the_session_for_hooks() {
    let p = HookProject::new();
    let seen = p.path("lifecycle.log");
    let record = |tag: &str| {
        format!(
            "printf '{tag} ' >> {0}; grep -o '\"\\(source\\|reason\\)\":\"[a-z_]*\"' >> {0}",
            seen.display()
        )
    };
    p.settings(json!({
        "SessionStart": [{"hooks": [{"type": "command", "command": record("start")}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": record("end"), "timeout": 10}]}]
    }));
    let server = MockServer::start(vec![]);
    let out = p.run(&server, &["-p", "/clear", "--output-format", "json"]);
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(0), "{result}");
    let log = std::fs::read_to_string(&seen).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines,
        vec![
            "start \"source\":\"startup\"",
            "end \"reason\":\"clear\"",
            "start \"source\":\"clear\"",
            "end \"reason\":\"other\""
        ]
    );
}

#[test]
fn stop_failure_fires_when_an_api_error_ends_the_turn() {
    let p = HookProject::new();
    let failure = p.path("failure.json");
    let stop_ran = p.path("stop-ran");
    p.settings(json!({
        "StopFailure": [{"matcher": "auth", "hooks": [{"type": "command", "command": format!("cat > {}", failure.display())}]}],
        "Stop": [{"hooks": [{"type": "command", "command": format!("touch {}", stop_ran.display())}]}]
    }));
    let server = MockServer::start(vec![anthropic::error_status(
        401,
        "authentication_error",
        "invalid x-api-key",
        None,
    )]);
    let out = p.run(&server, &["-p", "go", "--output-format", "json"]);
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(1), "{result}");
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&failure).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "StopFailure");
    assert_eq!(input["error"], "auth");
    assert!(
        input["error_details"]
            .as_str()
            .unwrap()
            .contains("invalid x-api-key"),
        "{input}"
    );
    assert!(
        !stop_ran.exists(),
        "Stop hooks do not fire when the turn failed"
    );
}

#[test]
fn an_async_hook_runs_in_the_background_and_outlives_a_print_run() {
    let p = HookProject::new();
    let slow = p.script(
        "slow.sh",
        "#!/bin/sh\ncat > \"$CLAUDE_PROJECT_DIR/async-input.json\"\nwhile [ ! -f \"$CLAUDE_PROJECT_DIR/release\" ]; do sleep 0.05; done\ntouch \"$CLAUDE_PROJECT_DIR/finished\"\n",
    );
    p.settings(json!({"Stop": [{"hooks": [{"type": "command", "command": slow, "async": true}]}]}));
    let server = MockServer::start(vec![anthropic::text_turn("answered")]);
    // The run ends while the hook still waits for `release`.
    let out = p.run(&server, &["-p", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "answered");
    assert!(!p.path("finished").exists());
    std::fs::write(p.path("release"), "").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !p.path("finished").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the async hook was killed when robota ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path("async-input.json")).unwrap())
            .unwrap();
    assert_eq!(input["hook_event_name"], "Stop");
}

#[test]
fn subagent_stop_hooks_read_the_subagents_last_message() {
    let p = HookProject::new();
    let stop_input = p.path("subagent-stop.json");
    let record = p.script(
        "record.sh",
        &format!("#!/bin/sh\ncat > {}\n", stop_input.display()),
    );
    p.settings(json!({"SubagentStop": [{"hooks": [{"type": "command", "command": record}]}]}));
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_e",
                "Agent",
                json!({"description": "find tests", "prompt": "Find the tests.", "subagent_type": "Explore"}),
            )],
        ),
        anthropic::text_turn("FINDINGS: two test files"),
        anthropic::text_turn("Done."),
    ]);
    let out = p.run(&server, &["-p", "look around", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(&stop_input).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "SubagentStop");
    assert_eq!(input["agent_type"], "Explore");
    assert_eq!(input["last_assistant_message"], "FINDINGS: two test files");
}
