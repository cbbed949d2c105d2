//! PreToolUse, PermissionRequest and PostToolUse hooks around real tool calls.

use serde_json::{Value, json};

use crate::project::{HookProject, content_text, json_result, python3, stderr, tool_results};
use crate::support::skip::skip;
use crate::support::{MockServer, anthropic};

#[test]
fn pre_tool_use_reads_claude_code_stdin_and_exit_2_blocks_with_the_reason() {
    let p = HookProject::new();
    let hook = p.script(
        "guard.sh",
        "#!/bin/sh\ncat > \"$CLAUDE_PROJECT_DIR/pre-input.json\"\necho 'touching files is not allowed here' >&2\nexit 2\n",
    );
    p.settings(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}]}));
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_1",
                "Bash",
                json!({"command": "touch created.txt", "description": "make a file"}),
            )],
        ),
        anthropic::text_turn("understood"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "go",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash",
        ],
    );
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(0), "{result}");
    assert!(
        !p.path("created.txt").exists(),
        "the blocked tool did not run"
    );

    let results = tool_results(&server.requests()[1].body);
    assert_eq!(
        content_text(&results[0]["content"]),
        "touching files is not allowed here"
    );
    assert_eq!(results[0]["is_error"], true);
    assert_eq!(result["permission_denials"][0]["tool_name"], "Bash");

    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path("pre-input.json")).unwrap()).unwrap();
    assert_eq!(input["session_id"], result["session_id"]);
    assert_eq!(
        input["transcript_path"],
        p.session_log().to_string_lossy().as_ref()
    );
    assert_eq!(input["cwd"], p.root.to_string_lossy().as_ref());
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["permission_mode"], "default");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(
        input["tool_input"],
        json!({"command": "touch created.txt", "description": "make a file"})
    );
    assert_eq!(input["tool_use_id"], "toolu_1");

    let hooks = p.hook_lines();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0]["hook_event"], "PreToolUse");
    assert_eq!(hooks[0]["exit_code"], 2);
    assert_eq!(hooks[0]["outcome"], "blocked");
    assert!(hooks[0]["stderr"].as_str().unwrap().contains("not allowed"));
    assert!(hooks[0]["duration_ms"].is_u64());
}

#[test]
fn a_python_hook_rewrites_the_input_and_its_allow_skips_the_prompt() {
    let Some(python) = python3() else {
        skip(
            "python3",
            "no working python3 on the PATH (install Python 3)",
        );
        return;
    };
    let p = HookProject::new();
    let hook = p.script(
        "rewrite.py",
        &format!(
            "#!{python}\nimport json, sys\ndata = json.load(sys.stdin)\ncmd = data['tool_input']['command']\nprint(json.dumps({{'hookSpecificOutput': {{'hookEventName': 'PreToolUse', 'permissionDecision': 'allow', 'permissionDecisionReason': 'rewritten safely', 'updatedInput': {{'command': cmd.replace('original', 'rewritten')}}}}}}))\n"
        ),
    );
    p.settings(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}]}));
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_1",
                "Bash",
                json!({"command": "echo original > out.txt"}),
            )],
        ),
        anthropic::text_turn("done"),
    ]);
    // No allow rule: Bash would ask, and print mode would deny; the hook's allow runs it.
    let out = p.run(&server, &["-p", "go", "--output-format", "json"]);
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(0), "{result}");
    assert_eq!(
        std::fs::read_to_string(p.path("out.txt")).unwrap(),
        "rewritten\n"
    );
    assert_eq!(result["permission_denials"], json!([]));
    let log = p.log_lines();
    let start = log.iter().find(|l| l["event"] == "tool_start").unwrap();
    assert_eq!(start["input"]["command"], "echo rewritten > out.txt");
}

#[test]
fn deny_rules_win_over_a_hook_allow_and_over_rewritten_input() {
    let p = HookProject::new();
    let allow = p.script(
        "allow.sh",
        "#!/bin/sh\ntouch \"$CLAUDE_PROJECT_DIR/hook-ran\"\necho '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'\n",
    );
    p.settings(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": allow}]}]}));
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("toolu_1", "Bash", json!({"command": "touch denied.txt"}))],
        ),
        anthropic::text_turn("ok"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "go",
            "--output-format",
            "json",
            "--disallowedTools",
            "Bash(touch *)",
        ],
    );
    let result = json_result(&out);
    assert!(!p.path("denied.txt").exists());
    assert_eq!(result["permission_denials"][0]["tool_name"], "Bash");
    let results = tool_results(&server.requests()[1].body);
    assert!(content_text(&results[0]["content"]).contains("denied by rule Bash(touch *)"));
    // As Claude Code: a call a deny rule refuses never reaches PreToolUse hooks.
    assert!(!p.path("hook-ran").exists());

    // A hook that rewrites an allowed command into a denied one is judged on the new input.
    let p = HookProject::new();
    let rewrite = p.script(
        "rewrite.sh",
        "#!/bin/sh\necho '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\",\"updatedInput\":{\"command\":\"touch sneaky.txt\"}}}'\n",
    );
    p.settings(json!({"PreToolUse": [{"hooks": [{"type": "command", "command": rewrite}]}]}));
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("toolu_1", "Bash", json!({"command": "echo harmless"}))],
        ),
        anthropic::text_turn("ok"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "go",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash(echo *)",
            "--disallowedTools",
            "Bash(touch *)",
        ],
    );
    json_result(&out);
    assert!(!p.path("sneaky.txt").exists());
    let results = tool_results(&server.requests()[1].body);
    let text = content_text(&results[0]["content"]);
    assert!(
        text.contains("denied by rule Bash(touch *)"),
        "judged on the new input: {text}"
    );
}

#[test]
fn permission_request_hooks_answer_when_the_policy_asks() {
    let p = HookProject::new();
    let input_file = p.path("permission-input.json");
    let approve = p.script(
        "approve.sh",
        &format!(
            "#!/bin/sh\ncat > {}\necho '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PermissionRequest\",\"decision\":{{\"behavior\":\"allow\"}}}}}}'\n",
            input_file.display()
        ),
    );
    p.settings(json!({"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": approve}]}]}));
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("toolu_1", "Bash", json!({"command": "touch approved.txt"}))],
        ),
        anthropic::text_turn("done"),
    ]);
    let out = p.run(&server, &["-p", "go", "--output-format", "json"]);
    let result = json_result(&out);
    assert!(p.path("approved.txt").exists(), "{result}");
    assert_eq!(result["permission_denials"], json!([]));
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(&input_file).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PermissionRequest");
    assert_eq!(input["tool_name"], "Bash");
    assert!(input.get("tool_use_id").is_none());
    assert_eq!(
        input["permission_suggestions"][0]["rules"][0]["toolName"],
        "Bash"
    );
}

#[test]
fn post_tool_use_context_and_feedback_reach_the_model_and_continue_false_stops() {
    let p = HookProject::new();
    let input_file = p.path("post-input.json");
    let context = p.script(
        "context.sh",
        &format!(
            "#!/bin/sh\ncat > {}\necho '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"remember to run the tests\"}}}}'\n",
            input_file.display()
        ),
    );
    let feedback = p.script(
        "feedback.sh",
        "#!/bin/sh\necho 'style: use four spaces' >&2\nexit 2\n",
    );
    p.settings(json!({"PostToolUse": [
        {"matcher": "Read", "hooks": [{"type": "command", "command": context}]},
        {"matcher": "Edit|Write|Read", "hooks": [{"type": "command", "command": feedback}]},
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo '{\"continue\": false, \"stopReason\": \"build broke\"}'"}]}
    ]}));
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("toolu_1", "Read", json!({"file_path": "calc.py"}))],
        ),
        anthropic::tool_turn(
            None,
            &[
                ("toolu_2", "Bash", json!({"command": "echo hi"})),
                ("toolu_3", "Bash", json!({"command": "touch never.txt"})),
            ],
        ),
        anthropic::text_turn("never requested"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "go",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash",
        ],
    );
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(0), "{result}");
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        2,
        "continue:false ended the turn after the tool round"
    );
    let read = content_text(&tool_results(&requests[1].body)[0]["content"]);
    assert!(read.contains("return a - b"), "{read}");
    assert!(
        read.contains("<system-reminder>\nremember to run the tests\n</system-reminder>"),
        "{read}"
    );
    assert!(
        read.contains("PostToolUse hook feedback:\nstyle: use four spaces"),
        "{read}"
    );
    assert!(
        !p.path("never.txt").exists(),
        "no call runs after continue:false"
    );
    assert!(stderr(&out).contains("build broke"), "{}", stderr(&out));
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(&input_file).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PostToolUse");
    assert!(
        input["tool_response"]["file"]["content"]
            .as_str()
            .unwrap()
            .contains("def add")
    );
    assert_eq!(input["tool_use_id"], "toolu_1");
}

#[test]
fn an_exec_form_hook_gets_its_arguments_verbatim_without_a_shell() {
    let p = HookProject::new();
    let script = p.script(
        "args.sh",
        "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done > \"$CLAUDE_PROJECT_DIR/args.txt\"\ncat > \"$CLAUDE_PROJECT_DIR/stdin.json\"\n",
    );
    p.settings(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command",
        "command": "/bin/sh",
        "args": [script, "two words", "$HOME", "; touch injected"]
    }]}]}));
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("toolu_1", "Bash", json!({"command": "echo hi"}))]),
        anthropic::text_turn("done"),
    ]);
    let out = p.run(&server, &["-p", "go", "--allowedTools", "Bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(p.path("args.txt")).unwrap(),
        "[two words]\n[$HOME]\n[; touch injected]\n"
    );
    assert!(!p.path("injected").exists());
    let stdin: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path("stdin.json")).unwrap()).unwrap();
    assert_eq!(stdin["tool_input"]["command"], "echo hi");
}
