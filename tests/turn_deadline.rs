//! A result on every exit path (issue 27, item 3): the real `robota -p` against things that
//! never answer — a provider that accepts the connection and sends nothing, a command hook
//! that sleeps forever (also a SessionStart one, which the session is too busy to be
//! aborted from), an MCP server that never answers a `tools/call` — ends at its
//! `--max-turn-seconds` deadline with exactly one error `result` line naming what hung and
//! exit 124; stream-json carries keepalive lines meanwhile (Claude Code's `tool_progress`
//! for a running tool, `system/keepalive` otherwise); a Bash command that ignores SIGTERM
//! is still killed at its own timeout. In the Agent SDK protocol (stream-json input) the
//! deadline is per message: the hung one gets its error result and the next one runs, or,
//! when the session cannot be freed, every message gets one. Signals are covered in
//! `headless.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::process::{output_within, process_gone};
use support::project::{Project, project, tool_results};
use support::{MockServer, anthropic};

/// The exit code of a turn stopped at its deadline.
const EXIT_DEADLINE: i32 = 124;
/// The deadline the hanging runs get; far below every hang, so only the deadline ends them.
const DEADLINE: &str = "3";

/// Runs `robota -p PROMPT --output-format stream-json --verbose ARGS…` with `env`, killing
/// it after a generous safety net (far beyond the deadline, so never the thing tested).
fn run(p: &Project, server: &MockServer, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut all = vec!["-p", "go", "--output-format", "stream-json", "--verbose"];
    all.extend_from_slice(args);
    let mut cmd = p.command(server, &all);
    for (k, v) in env {
        cmd.env(k, v);
    }
    output_within(cmd, Duration::from_secs(90))
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// Exactly one `result` line, the last one, an error: its `errors` joined.
fn one_error_result(out: &Output) -> (Value, String) {
    let lines = lines(out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 1, "one result line; stderr:\n{stderr}");
    let result = results[0].clone();
    assert_eq!(lines.last(), Some(&result), "the result comes last");
    assert_eq!(result["is_error"], true, "{result}");
    assert_eq!(result["subtype"], "error_during_execution", "{result}");
    let errors = result["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    (result, errors)
}

/// Waits (polling, up to ten seconds) until `pid` is gone; whether it went.
fn gone_soon(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if process_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    process_gone(pid)
}

fn pid_in(file: &Path) -> u32 {
    std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .trim()
        .parse()
        .unwrap()
}

/// A loopback server that accepts connections, reads what comes and never writes a byte;
/// its URL. The listener and connections live as long as the test process.
fn silent_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    url
}

#[test]
fn a_provider_that_never_answers_ends_at_the_deadline_naming_it() {
    let p = project();
    let server = MockServer::start(vec![]);
    let silent = silent_server();
    let out = run(
        &p,
        &server,
        &["--max-turn-seconds", DEADLINE],
        &[
            ("ANTHROPIC_BASE_URL", &silent),
            ("ROBOTA_KEEPALIVE_MS", "200"),
        ],
    );
    assert_eq!(out.status.code(), Some(EXIT_DEADLINE), "{out:?}");
    let (result, errors) = one_error_result(&out);
    assert!(errors.contains("deadline of 3 s"), "{errors}");
    assert!(
        errors.contains(&format!("the provider (anthropic at {silent})")),
        "{errors}"
    );
    assert_eq!(result["error"]["kind"], "timeout", "{result}");
    // Meanwhile the stream said what it waits on, so a driver could tell slow from dead.
    let keepalive = lines(&out)
        .into_iter()
        .find(|l| l["type"] == "system" && l["subtype"] == "keepalive")
        .expect("a keepalive line while the provider is silent");
    assert!(
        keepalive["waiting_on"]
            .as_str()
            .unwrap()
            .contains("the provider"),
        "{keepalive}"
    );
}

#[test]
fn the_idle_timeout_is_shortened_by_its_variable_and_ends_the_run_without_a_deadline() {
    let p = project();
    let server = MockServer::start(vec![]);
    let silent = silent_server();
    let out = run(
        &p,
        &server,
        &[],
        &[
            ("ANTHROPIC_BASE_URL", &silent),
            ("ROBOTA_STREAM_IDLE_TIMEOUT_MS", "300"),
            ("ROBOTA_MAX_RETRIES", "1"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let (result, errors) = one_error_result(&out);
    assert_eq!(result["error"]["kind"], "timeout", "{result}");
    assert!(errors.contains("ROBOTA_STREAM_IDLE_TIMEOUT_MS"), "{errors}");
}

#[test]
fn a_hook_that_sleeps_forever_ends_at_the_deadline_naming_it() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("never reached")]);
    let pid_file = p.root.join("hook.pid");
    let command = format!("echo $$ > {}; exec sleep 1000", pid_file.display());
    let settings = json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": command, "timeout": 600}
    ]}]}});
    let out = run(
        &p,
        &server,
        &[
            "--max-turn-seconds",
            DEADLINE,
            "--settings",
            &settings.to_string(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(EXIT_DEADLINE), "{out:?}");
    let (_, errors) = one_error_result(&out);
    assert!(
        errors.contains(&format!("the UserPromptSubmit hook `{command}`")),
        "{errors}"
    );
    assert!(server.requests().is_empty(), "the model was never called");
    assert!(gone_soon(pid_in(&pid_file)), "the hook outlived the run");
}

#[test]
fn a_session_start_hook_that_never_ends_still_gets_a_result_at_the_deadline() {
    // The session is busy in its SessionStart hook and does not hear the abort: the run
    // gives up on it after a grace and still ends with its one result line.
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("never reached")]);
    let settings = sleeping_session_start_hook();
    let out = run(
        &p,
        &server,
        &[
            "--max-turn-seconds",
            "2",
            "--settings",
            &settings.to_string(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(EXIT_DEADLINE), "{out:?}");
    let (_, errors) = one_error_result(&out);
    assert!(
        errors.contains("the SessionStart:startup hook `sleep 1000`"),
        "{errors}"
    );
}

/// Runs robota in the Agent SDK protocol with `messages` (user message texts) on stdin,
/// then end of input; the same safety net as [`run`].
fn run_sdk(p: &Project, server: &MockServer, args: &[&str], messages: &[&str]) -> Output {
    let input = p.root.join("sdk-input.jsonl");
    let lines: String = messages
        .iter()
        .map(|m| {
            json!({"type": "user", "message": {"role": "user", "content": m}}).to_string() + "\n"
        })
        .collect();
    std::fs::write(&input, lines).unwrap();
    let mut all = vec![
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
    ];
    all.extend_from_slice(args);
    let mut cmd = p.command(server, &all);
    cmd.stdin(std::fs::File::open(&input).unwrap());
    output_within(cmd, Duration::from_secs(90))
}

/// The `result` lines of a run, in order.
fn results(out: &Output) -> Vec<Value> {
    lines(out)
        .into_iter()
        .filter(|l| l["type"] == "result")
        .collect()
}

#[test]
fn in_the_agent_sdk_protocol_the_hung_message_gets_its_error_and_the_next_one_runs() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn_held("the first answer", 2),
        anthropic::text_turn("the second answer"),
    ]);
    let out = run_sdk(
        &p,
        &server,
        &["--max-turn-seconds", DEADLINE],
        &["first", "second"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let results = results(&out);
    assert_eq!(
        results.len(),
        2,
        "one result per message; stderr:\n{stderr}"
    );
    assert_eq!(results[0]["is_error"], true, "{}", results[0]);
    let errors = results[0]["errors"].to_string();
    assert!(
        errors.contains("deadline of 3 s") && errors.contains("the provider (anthropic"),
        "the first result names what hung: {errors}"
    );
    assert_eq!(results[1]["is_error"], false, "{}", results[1]);
    assert_eq!(results[1]["result"], "the second answer");
    assert_eq!(
        out.status.code(),
        Some(0),
        "the last message succeeded: {stderr}"
    );
}

#[test]
fn in_the_agent_sdk_protocol_a_stuck_session_still_answers_every_message() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("never reached")]);
    let settings = sleeping_session_start_hook();
    let out = run_sdk(
        &p,
        &server,
        &[
            "--max-turn-seconds",
            "2",
            "--settings",
            &settings.to_string(),
        ],
        &["first", "second"],
    );
    assert_eq!(out.status.code(), Some(EXIT_DEADLINE), "{out:?}");
    let results = results(&out);
    assert_eq!(results.len(), 2, "{out:?}");
    assert!(
        results[0]["errors"]
            .to_string()
            .contains("the SessionStart:startup hook `sleep 1000`"),
        "{}",
        results[0]
    );
    assert!(
        results[1]["errors"].to_string().contains("did not run"),
        "{}",
        results[1]
    );
    assert!(server.requests().is_empty());
}

/// Settings whose SessionStart hook sleeps far past every deadline here.
fn sleeping_session_start_hook() -> Value {
    json!({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": "sleep 1000", "timeout": 600}
    ]}]}})
}

fn fake_mcp_server(mode: &str, pid_file: &Path) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client/fake_server.py");
    json!({"mcpServers": {"fake": {
        "command": "python3",
        "args": [script.to_string_lossy(), mode, pid_file.to_string_lossy()]
    }}})
}

#[test]
fn an_mcp_call_never_answered_ends_at_the_deadline_naming_the_server_and_tool() {
    let p = project();
    let pid_file = p.root.join("mcp.pid");
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("toolu_m", "mcp__fake__shout", json!({"text": "hello"}))],
        ),
        anthropic::text_turn("never reached"),
    ]);
    let config = fake_mcp_server("stall-call", &pid_file).to_string();
    let out = run(
        &p,
        &server,
        &[
            "--max-turn-seconds",
            DEADLINE,
            "--mcp-config",
            &config,
            "--allowedTools",
            "mcp__fake",
        ],
        // The wait ends once the server is connected; generous for a loaded machine.
        &[("ROBOTA_KEEPALIVE_MS", "200"), ("MCP_TIMEOUT", "30000")],
    );
    assert_eq!(out.status.code(), Some(EXIT_DEADLINE), "{out:?}");
    let (_, errors) = one_error_result(&out);
    assert!(
        errors.contains("the MCP server `fake` (its tool `shout`)"),
        "{errors}"
    );
    let progress = lines(&out)
        .into_iter()
        .find(|l| l["type"] == "tool_progress")
        .expect("tool_progress lines while the call waits");
    assert_eq!(progress["tool_use_id"], "toolu_m", "{progress}");
    assert_eq!(progress["tool_name"], "mcp__fake__shout", "{progress}");
    assert!(progress["elapsed_time_seconds"].as_f64().unwrap() > 0.0);
    assert!(gone_soon(pid_in(&pid_file)), "the server outlived the run");
}

#[test]
fn a_bash_command_ignoring_sigterm_is_killed_at_its_timeout_and_the_turn_goes_on() {
    let p = project();
    let pid_file = p.root.join("sleep.pid");
    let command = format!(
        "trap '' TERM; sleep 1000 & echo $! > {}; wait; wait",
        pid_file.display()
    );
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_b",
                "Bash",
                json!({"command": command, "timeout": 1000}),
            )],
        ),
        anthropic::text_turn("it timed out"),
    ]);
    let out = run(
        &p,
        &server,
        &["--max-turn-seconds", "120", "--allowedTools", "Bash"],
        &[("ROBOTA_KEEPALIVE_MS", "200")],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines = lines(&out);
    let result = lines.last().unwrap();
    assert_eq!(result["subtype"], "success", "{result}");
    let results = tool_results(&server.requests()[1].body);
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("timed out after 1s"),
        "{results:?}"
    );
    assert!(
        gone_soon(pid_in(&pid_file)),
        "the command that ignores SIGTERM outlived its timeout"
    );
    // While it ran, the stream said so in Claude Code's shape.
    let progress = lines
        .iter()
        .find(|l| l["type"] == "tool_progress")
        .expect("tool_progress while Bash runs");
    assert_eq!(progress["tool_name"], "Bash");
    assert_eq!(progress["tool_use_id"], "toolu_b");
}

#[test]
fn the_setting_gives_the_deadline_and_the_flag_overrides_it() {
    let p = project();
    let server = MockServer::start(vec![]);
    let silent = silent_server();
    std::fs::create_dir_all(&p.home).unwrap();
    std::fs::write(
        p.home.join("settings.json"),
        json!({"maxTurnSeconds": 2}).to_string(),
    )
    .unwrap();
    let out = run(&p, &server, &[], &[("ANTHROPIC_BASE_URL", &silent)]);
    assert_eq!(out.status.code(), Some(EXIT_DEADLINE), "{out:?}");
    let (_, errors) = one_error_result(&out);
    assert!(errors.contains("deadline of 2 s"), "{errors}");

    let server = MockServer::start(vec![anthropic::text_turn("fine")]);
    let out = run(&p, &server, &["--max-turn-seconds", "0"], &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
