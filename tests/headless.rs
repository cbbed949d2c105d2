//! End to end: the real `robota` binary in print mode, in a temp git repository, against
//! the loopback mock Anthropic server, with `ROBOTA_HOME` in a temp dir.

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::process::process_gone;
use support::project::{json_result, log_lines, project, result_text, tool_results};
use support::{MockServer, anthropic};

#[test]
fn a_full_coding_turn_reads_greps_edits_tests_and_answers() {
    let p = project();
    let calc = p.root.join("calc.py");
    let calc_path = calc.to_str().unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            Some("Let me look."),
            &[("toolu_01", "Read", json!({"file_path": calc_path}))],
        ),
        anthropic::tool_turn(
            None,
            &[(
                "toolu_02",
                "Grep",
                json!({"pattern": "TODO", "output_mode": "content"}),
            )],
        ),
        anthropic::tool_turn(
            None,
            &[(
                "toolu_03",
                "Edit",
                json!({"file_path": calc_path, "old_string": "return a - b", "new_string": "return a + b"}),
            )],
        ),
        anthropic::tool_turn(
            None,
            &[("toolu_04", "Bash", json!({"command": "sh test_calc.sh"}))],
        ),
        anthropic::text_turn("Fixed `add`: it subtracted. The test passes."),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "fix the add function",
            "--output-format",
            "json",
            "--allowedTools",
            "Edit,Bash(sh test_calc.sh)",
        ],
    );
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(0), "{result}");
    assert_eq!(
        std::fs::read_to_string(&calc).unwrap(),
        "def add(a, b):\n    return a + b\n\n# TODO: more operations\n"
    );
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["num_turns"], 5);
    assert_eq!(
        result["result"],
        "Fixed `add`: it subtracted. The test passes."
    );
    assert_eq!(result["permission_denials"], json!([]));
    assert!(result["usage"]["output_tokens"].as_u64().unwrap() > 0);
    assert!(result["duration_ms"].as_u64().is_some());
    assert!(result["total_cost_usd"].as_f64().unwrap() > 0.0);
    let session_id = result["session_id"].as_str().unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let first = &requests[0].body;
    assert_eq!(first["messages"][0]["role"], "user");
    assert!(first["system"].to_string().contains("You are robota"));
    let read = tool_results(&requests[1].body);
    assert_eq!(read[0]["tool_use_id"], "toolu_01");
    assert!(result_text(&read[0]).contains("     2\t    return a - b"));
    let grep = tool_results(&requests[2].body);
    assert!(result_text(&grep[0]).contains("TODO: more operations"));
    let bash = tool_results(&requests[4].body);
    assert!(result_text(&bash[0]).contains("PASS"), "{}", bash[0]);
    assert_ne!(bash[0]["is_error"], true);

    let logs = p.session_logs();
    assert_eq!(logs.len(), 1);
    assert!(logs[0].to_string_lossy().contains(session_id));
    let lines = log_lines(&logs[0]);
    assert_eq!(lines[0]["type"], "session");
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "assistant").count(), 5);
    assert_eq!(kinds.iter().filter(|k| **k == "user").count(), 5);
    let edit_end = lines
        .iter()
        .find(|l| l["event"] == "tool_end" && l["tool"] == "Edit")
        .expect("a tool_end event for Edit");
    assert_eq!(edit_end["is_error"], false);
    let raw = std::fs::read_to_string(&logs[0]).unwrap();
    assert!(
        !raw.contains("sk-ant-test-key"),
        "the key never reaches the log"
    );
}

#[test]
fn parallel_reads_come_back_in_request_order() {
    let p = project();
    std::fs::write(p.root.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(p.root.join("b.txt"), "beta\n").unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                ("toolu_a", "Read", json!({"file_path": "a.txt"})),
                ("toolu_b", "Read", json!({"file_path": "b.txt"})),
            ],
        ),
        anthropic::text_turn("alpha and beta"),
    ]);
    let out = p.run(&server, &["-p", "read both", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["tool_use_id"], "toolu_a");
    assert!(result_text(&results[0]).contains("alpha"));
    assert_eq!(results[1]["tool_use_id"], "toolu_b");
    assert!(result_text(&results[1]).contains("beta"));
}

#[test]
fn bash_needing_approval_is_denied_in_print_mode_and_listed() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("toolu_x", "Bash", json!({"command": "touch pwned"}))],
        ),
        anthropic::text_turn("I could not run it."),
    ]);
    let out = p.run(&server, &["-p", "make a file", "--output-format", "json"]);
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(0));
    assert!(!p.root.join("pwned").exists());
    assert_eq!(
        result["permission_denials"],
        json!([{"tool_name": "Bash", "tool_use_id": "toolu_x", "tool_input": {"command": "touch pwned"}}])
    );
    let r = tool_results(&server.requests()[1].body);
    assert_eq!(r[0]["is_error"], true);
    assert!(result_text(&r[0]).contains("denied"));
}

#[test]
fn a_whole_tool_bash_allow_runs_commands_that_write_and_the_protected_files_still_ask() {
    let p = project();
    let script = "open('by-python.txt', 'w').write('x')";
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                (
                    "toolu_1",
                    "Bash",
                    json!({"command": "echo hi > by-redirect.txt"}),
                ),
                (
                    "toolu_2",
                    "Bash",
                    json!({"command": format!("python3 -c \"{script}\"")}),
                ),
                (
                    "toolu_3",
                    "Bash",
                    json!({"command": "echo x >> .claude/settings.json"}),
                ),
            ],
        ),
        anthropic::text_turn("done"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "write",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(p.root.join("by-redirect.txt").exists());
    assert!(p.root.join("by-python.txt").exists());
    assert!(!p.root.join(".claude/settings.json").exists());
    let denials = &json_result(&out)["permission_denials"];
    assert_eq!(denials.as_array().map(Vec::len), Some(1), "{denials}");
    assert_eq!(denials[0]["tool_use_id"], "toolu_3");
}

#[test]
fn deny_rules_hold_even_in_bypass_mode() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("toolu_x", "Bash", json!({"command": "ls && rm calc.py"}))],
        ),
        anthropic::text_turn("ok"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "clean",
            "--output-format",
            "json",
            "--permission-mode",
            "bypassPermissions",
            "--disallowedTools",
            "Bash(rm *)",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(p.root.join("calc.py").exists());
    assert_eq!(
        json_result(&out)["permission_denials"][0]["tool_name"],
        "Bash"
    );
}

#[test]
fn unknown_tools_and_tool_errors_reach_the_model_as_error_results() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                ("toolu_1", "Teleport", json!({"to": "mars"})),
                ("toolu_2", "Read", json!({"file_path": "missing.txt"})),
                ("toolu_3", "Read", json!({"wrong": 1})),
            ],
        ),
        anthropic::text_turn("Those failed."),
    ]);
    let out = p.run(&server, &["-p", "try", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let r = tool_results(&server.requests()[1].body);
    assert_eq!(r.len(), 3);
    assert!(r.iter().all(|b| b["is_error"] == true));
    assert!(result_text(&r[0]).contains("No such tool available: Teleport"));
    assert!(result_text(&r[0]).contains("Read"));
    assert!(result_text(&r[1]).contains("missing.txt"));
    assert!(result_text(&r[2]).contains("file_path"));
}

#[test]
fn max_turns_stops_with_a_summary_and_an_error_result() {
    let p = project();
    let read =
        |id: &str| anthropic::tool_turn(None, &[(id, "Read", json!({"file_path": "calc.py"}))]);
    let server = MockServer::start(vec![
        read("t1"),
        read("t2"),
        anthropic::text_turn("Summary: I read calc.py twice."),
    ]);
    let out = p.run(
        &server,
        &["-p", "loop", "--output-format", "json", "--max-turns", "2"],
    );
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["result"], "Summary: I read calc.py twice.");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].body["tool_choice"]["type"], "none");
}

#[test]
fn a_429_is_retried_after_the_servers_delay() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::error_status(429, "rate_limit_error", "slow down", Some("0")),
        anthropic::text_turn("after the retry"),
    ]);
    let out = p.run(&server, &["-p", "hi"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "after the retry"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("retrying"));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_stream_cut_once_is_retried_and_only_the_second_answer_counts() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn_cut("first attempt that breaks", 5),
        anthropic::text_turn("second attempt"),
    ]);
    let out = p.run(&server, &["-p", "hi", "--output-format", "json"]);
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(result["result"], "second attempt");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_stream_cut_on_every_attempt_fails_clearly_and_keeps_the_partial_answer() {
    let p = project();
    let cut = || anthropic::text_turn_cut("partial words that never finish", 5);
    let server = MockServer::start(vec![cut(), cut(), cut()]);
    let mut cmd = p.command(&server, &["-p", "hi", "--output-format", "json"]);
    cmd.env("ROBOTA_MAX_RETRIES", "2");
    let out = cmd.output().unwrap();
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(result["is_error"], true);
    assert_eq!(result["subtype"], "error_during_execution");
    assert!(!result["errors"][0].as_str().unwrap().is_empty());
    assert_eq!(server.requests().len(), 3);
    let lines = log_lines(&p.session_logs()[0]);
    let partial = lines
        .iter()
        .find(|l| l["type"] == "assistant")
        .expect("the partial answer is logged");
    assert_eq!(partial["state"], "interrupted");
}

#[test]
fn sigint_mid_turn_exits_130_and_the_session_resumes() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn_held("I am in the middle of a long answer", 4),
        anthropic::text_turn("resumed fine"),
    ]);
    let (out, result) = signal_mid_turn(&p, &server, libc::SIGINT);
    assert_eq!(out.status.code(), Some(130), "{result}");
    let session_id = result["session_id"].as_str().unwrap().to_string();

    let out = p.run(
        &server,
        &["-p", "go on", "-r", &session_id, "--output-format", "json"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json_result(&out)["session_id"], session_id.as_str());
    let second = &server.requests()[1].body;
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"][0]["text"], "tell me a story");
    assert_eq!(messages[1]["role"], "assistant");
    assert!(messages[1].to_string().contains("I am"), "{}", messages[1]);
    assert!(messages.last().unwrap().to_string().contains("go on"));
}

#[test]
fn sigterm_and_sighup_end_the_turn_like_sigint_with_their_exit_codes() {
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGHUP, 129)] {
        let p = project();
        let server = MockServer::start(vec![anthropic::text_turn_held(
            "I am in the middle of a long answer",
            4,
        )]);
        let (out, result) = signal_mid_turn(&p, &server, signal);
        assert_eq!(out.status.code(), Some(code), "{result}");
        assert_eq!(result["stop_reason"], "interrupted");
        // The partial answer is in the log, so the session resumes with it.
        let log = std::fs::read_to_string(&p.session_logs()[0]).unwrap();
        assert!(log.contains("I am"), "{log}");
    }
}

/// Runs a stream-json turn against a held stream, sends `signal` once the first text
/// delta is out, and returns the output and the final `result` line.
fn signal_mid_turn(
    p: &support::project::Project,
    server: &MockServer,
    signal: i32,
) -> (Output, Value) {
    let mut child = p
        .command(
            server,
            &[
                "-p",
                "tell me a story",
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-partial-messages",
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read until the first text delta has reached robota, then interrupt the turn.
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    read_until(&mut reader, "text_delta");
    // SAFETY: kill(2) takes no memory; the pid is the child this test started and has not
    // waited for, so it cannot have been reused.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    child.stdout = Some(reader.into_inner());
    let out = wait_with_timeout(&mut child, Duration::from_secs(20));
    server.release_held();
    let last = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or("")
        .to_string();
    let result: Value = serde_json::from_str(&last).unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["is_error"], true);
    (out, result)
}

fn wait_with_timeout(child: &mut std::process::Child, limit: Duration) -> Output {
    let (tx, rx) = std::sync::mpsc::channel();
    let pid = child.id() as i32;
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(limit).is_err() {
            // SAFETY: kill(2) takes no memory, so it is sound for any pid; it fires only when
            // the child has not ended within `limit`, unwaited, so the pid is still its own.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let mut stdout = String::new();
    let mut stderr = String::new();
    use std::io::Read;
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    let _ = tx.send(());
    watchdog.join().unwrap();
    Output {
        status,
        stdout: stdout.into_bytes(),
        stderr: stderr.into_bytes(),
    }
}

#[test]
fn continue_resume_and_fork_carry_the_conversation() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("Noted: 42."),
        anthropic::text_turn("It was 42."),
        anthropic::text_turn("Still 42."),
        anthropic::text_turn("Forked 42."),
    ]);
    let first = json_result(&p.run(&server, &["-p", "remember 42", "--output-format", "json"]));
    let id = first["session_id"].as_str().unwrap().to_string();

    let out = p.run(
        &server,
        &["-c", "-p", "what number?", "--output-format", "json"],
    );
    assert_eq!(json_result(&out)["session_id"], id.as_str());
    let body = &server.requests()[1].body;
    assert_eq!(body["messages"].as_array().unwrap().len(), 3);
    assert!(body["messages"][1].to_string().contains("Noted: 42."));

    let prefix = &id[..8];
    let out = p.run(
        &server,
        &["-r", prefix, "-p", "again?", "--output-format", "json"],
    );
    assert_eq!(json_result(&out)["session_id"], id.as_str());
    assert_eq!(
        server.requests()[2].body["messages"]
            .as_array()
            .unwrap()
            .len(),
        5
    );

    let original = p.session_logs()[0].clone();
    let before = std::fs::read_to_string(&original).unwrap();
    let out = p.run(
        &server,
        &[
            "-r",
            &id,
            "--fork-session",
            "-p",
            "fork it",
            "--output-format",
            "json",
        ],
    );
    let forked = json_result(&out);
    assert_ne!(forked["session_id"], id.as_str());
    assert_eq!(
        server.requests()[3].body["messages"]
            .as_array()
            .unwrap()
            .len(),
        7
    );
    assert_eq!(
        std::fs::read_to_string(&original).unwrap(),
        before,
        "the original is untouched"
    );
    assert_eq!(p.session_logs().len(), 2);
}

#[test]
fn a_log_cut_mid_line_still_resumes_with_a_warning() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("one"),
        anthropic::text_turn("two"),
    ]);
    let first = json_result(&p.run(&server, &["-p", "first", "--output-format", "json"]));
    let log = p.session_logs()[0].clone();
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(b"{\"type\":\"assistant\",\"uuid\":\"x\",\"mess")
        .unwrap();
    drop(f);
    let out = p.run(&server, &["-c", "-p", "second", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json_result(&out)["session_id"], first["session_id"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning"));
    assert_eq!(
        server.requests()[1].body["messages"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn stream_json_emits_init_messages_deltas_and_result() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            Some("Reading."),
            &[("toolu_1", "Read", json!({"file_path": "calc.py"}))],
        ),
        anthropic::text_turn("Done reading."),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "read",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "system");
    assert_eq!(lines[0]["subtype"], "init");
    assert!(
        lines[0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("Bash"))
    );
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["result"], "Done reading.");
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert!(types.contains(&"stream_event"));
    let assistant = lines.iter().find(|l| l["type"] == "assistant").unwrap();
    assert_eq!(assistant["message"]["content"][1]["type"], "tool_use");
    let user = lines.iter().find(|l| l["type"] == "user").unwrap();
    assert_eq!(user["message"]["content"][0]["type"], "tool_result");
    let deltas: String = lines
        .iter()
        .filter(|l| l["type"] == "stream_event" && l["event"]["delta"]["type"] == "text_delta")
        .map(|l| l["event"]["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "Reading.Done reading.");
}

#[test]
fn stream_json_without_verbose_is_refused_like_claude_code() {
    let p = project();
    let server = MockServer::start(vec![]);
    let out = p.run(&server, &["-p", "hi", "--output-format", "stream-json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("requires --verbose"));
    assert!(server.requests().is_empty());
}

#[test]
fn piped_stdin_joins_the_prompt_and_text_mode_prints_the_answer() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("It is a calculator.")]);
    let mut child = p
        .command(
            &server,
            &["-p", "what is this?", "--no-session-persistence"],
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"def add(a, b): ...\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "It is a calculator.\n"
    );
    let body = &server.requests()[0].body;
    let prompt = body["messages"][0]["content"].to_string();
    assert!(prompt.contains("def add(a, b)") && prompt.contains("what is this?"));
    assert!(
        p.session_logs().is_empty(),
        "--no-session-persistence writes no log"
    );
}

#[test]
fn stream_json_input_runs_one_turn_per_line() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("A1"), anthropic::text_turn("A2")]);
    let mut child = p
        .command(
            &server,
            &[
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Q1\"}]}}\n{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"Q2\"}}\n",
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body["messages"].as_array().unwrap().len(), 3);
    let last: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["result"], "A2");
}

#[test]
fn provider_errors_are_reported_in_the_result_and_as_exit_1() {
    let p = project();
    let unauthorized =
        || anthropic::error_status(401, "authentication_error", "invalid x-api-key", None);
    let server = MockServer::start(vec![unauthorized(), unauthorized()]);
    let out = p.run(&server, &["-p", "hi", "--output-format", "json"]);
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["error"]["kind"], "auth");
    assert_eq!(result["error"]["status"], 401);
    assert_eq!(
        result["errors"][0],
        "Authentication failed (401): invalid x-api-key — check the API key in ANTHROPIC_API_KEY"
    );
    let out = p.run(&server, &["-p", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "Error: Authentication failed (401): invalid x-api-key — check the API key in ANTHROPIC_API_KEY"
    );
}

#[test]
fn a_refused_connection_names_the_base_url_and_its_variable() {
    let p = project();
    let server = MockServer::start(vec![]);
    let url = support::refused_url();
    let mut cmd = p.command(&server, &["-p", "hi", "--output-format", "json"]);
    cmd.env("ANTHROPIC_BASE_URL", &url)
        .env("ROBOTA_MAX_RETRIES", "0");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let result = json_result(&out);
    assert_eq!(result["error"]["kind"], "network");
    assert_eq!(
        result["errors"][0],
        format!(
            "Cannot reach {url}: connection refused — is the server running? (check ANTHROPIC_BASE_URL)"
        )
    );
}

#[test]
fn retries_of_a_refused_connection_print_one_plain_line_each() {
    let p = project();
    let server = MockServer::start(vec![]);
    let url = support::refused_url();
    let mut cmd = p.command(&server, &["-p", "hi"]);
    cmd.env("ANTHROPIC_BASE_URL", &url)
        .env("ROBOTA_MAX_RETRIES", "2");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let retries: Vec<&str> = stderr.lines().filter(|l| l.contains("retrying")).collect();
    assert_eq!(retries.len(), 2, "{stderr}");
    for line in &retries {
        assert!(
            line.starts_with("robota: cannot connect (connection refused) — retrying in"),
            "{stderr}"
        );
    }
    assert!(!stderr.contains("error sending request"), "{stderr}");
    assert!(!stderr.contains("tcp connect error"), "{stderr}");
    assert!(
        stderr.contains(&format!("Cannot reach {url}: connection refused")),
        "{stderr}"
    );
}

#[test]
fn unknown_commands_fail_without_a_model_call_and_paths_are_prompts() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("a path, then")]);
    let out = p.run(&server, &["-p", "/compcat now"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Unknown command: /compcat"), "{stderr}");
    let out = p.run(&server, &["-p", "/foo", "--output-format", "json"]);
    let result = json_result(&out);
    assert_eq!(result["error"]["kind"], "unknown_command");
    assert_eq!(
        result["errors"][0],
        "Unknown command: /foo — /help lists the commands"
    );
    assert!(server.requests().is_empty(), "no model call for a command");

    let out = p.run(&server, &["-p", "/usr/bin/env is broken"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "a path, then");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].body["messages"][0]["content"][0]["text"],
        "/usr/bin/env is broken"
    );
}

#[test]
fn a_closed_stdout_ends_the_run_without_a_panic() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn_held("streamed answer", 2)]);
    let mut child = p
        .command(
            &server,
            &[
                "-p",
                "hi",
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-partial-messages",
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the first line (system/init), then hang up.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    assert!(first.contains("\"subtype\":\"init\""), "{first}");
    drop(stdout);
    server.release_held();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        out.status.code().is_some(),
        "ended by itself, not by a signal"
    );
}

#[test]
fn no_configured_provider_names_the_variable_to_set() {
    let p = project();
    let server = MockServer::start(vec![]);
    let out = p
        .command(&server, &["-p", "hi"])
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ANTHROPIC_API_KEY"));
}

#[test]
fn context_files_and_flags_shape_the_system_prompt() {
    let p = project();
    std::fs::write(p.root.join("AGENTS.md"), "Always answer in haiku.\n").unwrap();
    std::fs::write(p.root.join("CLAUDE.md"), "See @docs/style.md\n").unwrap();
    std::fs::create_dir_all(p.root.join("docs")).unwrap();
    std::fs::write(p.root.join("docs/style.md"), "Use tabs.\n").unwrap();
    let server = MockServer::start(vec![anthropic::text_turn("ok"), anthropic::text_turn("ok")]);
    let out = p.run(
        &server,
        &["-p", "hi", "--append-system-prompt", "APPENDED-TEXT"],
    );
    assert_eq!(out.status.code(), Some(0));
    let system = server.requests()[0].body["system"].to_string();
    assert!(system.contains("Always answer in haiku."));
    assert!(system.contains("Use tabs."));
    assert!(system.contains("Git branch: main"));
    assert!(system.contains("APPENDED-TEXT"));
    let out = p.run(&server, &["-p", "hi", "--system-prompt", "ONLY-THIS"]);
    assert_eq!(out.status.code(), Some(0));
    let system = server.requests()[1].body["system"].to_string();
    assert!(system.contains("ONLY-THIS") && !system.contains("You are robota"));
}

#[test]
fn claude_md_imports_written_as_a_list_import_every_file() {
    let p = project();
    std::fs::write(
        p.root.join("CLAUDE.md"),
        "Hot path docs: @src/a/FEATURE.md, @src/b/FEATURE.md, @src/c/FEATURE.md\n",
    )
    .unwrap();
    for (dir, text) in [("a", "ALPHA-DOC"), ("b", "BRAVO-DOC"), ("c", "CHARLIE-DOC")] {
        std::fs::create_dir_all(p.root.join("src").join(dir)).unwrap();
        std::fs::write(p.root.join("src").join(dir).join("FEATURE.md"), text).unwrap();
    }
    let server = MockServer::start(vec![anthropic::text_turn("ok")]);
    let out = p.run(&server, &["-p", "hi"]);
    assert_eq!(out.status.code(), Some(0));
    let system = anthropic::system_text(&server.requests()[0].body);
    assert!(
        system.contains("Hot path docs: ALPHA-DOC, BRAVO-DOC, CHARLIE-DOC"),
        "{system}"
    );
}

#[test]
fn version_and_bad_flags() {
    let out = Command::new(env!("CARGO_BIN_EXE_robota"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("robota "));
    let p = project();
    let server = MockServer::start(vec![]);
    let out = p.run(&server, &["-p", "x", "--permission-mode", "yolo"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown --permission-mode"));
    assert!(server.requests().is_empty());
}

#[test]
fn the_permission_mode_survives_resume_but_bypass_does_not() {
    let p = project();
    let server = MockServer::start(
        (0..4)
            .map(|i| anthropic::text_turn(&format!("a{i}")))
            .collect(),
    );
    let init_mode = |out: &Output| -> String {
        let first = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap()
            .to_string();
        let init: Value = serde_json::from_str(&first).unwrap();
        init["permissionMode"].as_str().unwrap().to_string()
    };
    let stream = ["--output-format", "stream-json", "--verbose"];
    let out = p.run(
        &server,
        &[
            &["-p", "one", "--permission-mode", "acceptEdits"],
            &stream[..],
        ]
        .concat(),
    );
    assert_eq!(init_mode(&out), "acceptEdits");
    let out = p.run(&server, &[&["-c", "-p", "two"], &stream[..]].concat());
    assert_eq!(init_mode(&out), "acceptEdits");
    let out = p.run(
        &server,
        &[
            &["-c", "-p", "three", "--dangerously-skip-permissions"],
            &stream[..],
        ]
        .concat(),
    );
    assert_eq!(init_mode(&out), "bypassPermissions");
    let out = p.run(&server, &[&["-c", "-p", "four"], &stream[..]].concat());
    assert_eq!(
        init_mode(&out),
        "default",
        "bypass is never restored silently"
    );
}

#[test]
fn a_run_killed_during_a_tool_call_resumes_with_every_call_answered() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("t1", "Bash", json!({"command": "sleep 5"}))]),
        anthropic::text_turn("picked up"),
    ]);
    let mut child = p
        .command(
            &server,
            &[
                "-p",
                "wait a bit",
                "--permission-mode",
                "bypassPermissions",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
        )
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Kill -9 once the assistant's tool call is out (and so in the log), before its result.
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    read_until(&mut reader, "\"tool_use\"");
    child.kill().unwrap();
    child.wait().unwrap();

    let out = p.run(&server, &["-p", "go on", "-c", "--output-format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json_result(&out)["result"], "picked up");
    let messages = server.requests()[1].body["messages"].clone();
    let results: Vec<&Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1, "{messages}");
    assert_eq!(results[0]["tool_use_id"], "t1");
    assert!(
        results[0]["content"].to_string().contains("Not run"),
        "{}",
        results[0]
    );
    // The log answers the call now, so the next resume needs no repair.
    let log = std::fs::read_to_string(&p.session_logs()[0]).unwrap();
    assert_eq!(log.matches("Not run: robota stopped").count(), 1, "{log}");
    let out = p.run(&server, &["-p", "and now?", "-c"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("marked as not run"), "{stderr}");
}

#[test]
fn commands_die_with_robota_even_when_it_is_killed() {
    let p = project();
    let command = "sleep 60 & echo $! > child.pid; echo $$ > leader.pid; wait";
    let server = MockServer::start(vec![anthropic::tool_turn(
        None,
        &[("t1", "Bash", json!({"command": command}))],
    )]);
    let mut child = p
        .command(
            &server,
            &["-p", "run it", "--permission-mode", "bypassPermissions"],
        )
        .spawn()
        .unwrap();
    // Both pid files written means the command runs; then robota is killed outright.
    let read_pid = |name: &str| -> Option<u32> {
        std::fs::read_to_string(p.root.join(name))
            .ok()
            .and_then(|t| t.trim().parse().ok())
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let (leader, sleeper) = loop {
        if let (Some(l), Some(s)) = (read_pid("leader.pid"), read_pid("child.pid")) {
            break (l, s);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::yield_now();
    };
    assert!(!process_gone(sleeper), "the command runs");
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !(process_gone(leader) && process_gone(sleeper)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command outlived robota (leader {leader}, sleep {sleeper})"
        );
        std::thread::yield_now();
    }
}

#[test]
fn background_jobs_die_with_robota_even_when_it_is_killed() {
    let p = project();
    let command = "echo $$ > bg.pid; exec sleep 60";
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "t1",
                "Bash",
                json!({"command": command, "run_in_background": true}),
            )],
        ),
        anthropic::text_turn_held("Waiting for the job.", 1),
    ]);
    let mut child = p
        .command(
            &server,
            &["-p", "start it", "--permission-mode", "bypassPermissions"],
        )
        .spawn()
        .unwrap();
    // The job runs (it wrote its pid) and robota is waiting on the model's second answer:
    // kill it outright.
    assert!(server.wait_for_requests(2, Duration::from_secs(20)));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let job = loop {
        if let Some(pid) = std::fs::read_to_string(p.root.join("bg.pid"))
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the job never started"
        );
        std::thread::yield_now();
    };
    assert!(!process_gone(job), "the job runs");
    child.kill().unwrap();
    child.wait().unwrap();
    server.release_held();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !process_gone(job) {
        assert!(
            std::time::Instant::now() < deadline,
            "the background job {job} outlived robota"
        );
        std::thread::yield_now();
    }
}

/// Reads output lines until one contains `needle` (failing if the output ends first).
fn read_until(reader: &mut impl std::io::BufRead, needle: &str) {
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "stdout closed before {needle:?}: {seen}"
        );
        seen.push_str(&line);
        if line.contains(needle) {
            return;
        }
    }
}
