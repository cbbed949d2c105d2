//! Protocol, permissions, failure and status end to end with the Python servers of
//! `fake_server.py` (always run: they need only python3).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::project::{project, tool_results};
use crate::support::{MockServer, anthropic};
use crate::*;

#[test]
fn tools_reach_the_model_results_come_back_and_errors_stay_errors() {
    let p = project();
    let pid = p.root.join("fake.pid");
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                ("toolu_1", "mcp__fake__shout", json!({"text": "hello mcp"})),
                ("toolu_2", "mcp__fake__fail", json!({})),
            ],
        ),
        anthropic::text_turn("done"),
    ]);
    let config = json!({"mcpServers": {"fake": fake_entry("serve", &pid)}});
    let out = run_with_servers(
        &p,
        &server,
        "go",
        &config,
        &["--allowedTools", "mcp__fake"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let init = init(&out);
    assert_eq!(
        statuses(&init),
        [("fake".to_string(), "connected".to_string())]
    );
    let tools = init_tools(&init);
    for name in [
        "mcp__fake__shout",
        "mcp__fake__fail",
        "mcp__fake__touch",
        "Bash",
    ] {
        assert!(tools.contains(&name.to_string()), "{tools:?}");
    }
    let requests = server.requests();
    let offered = requests[0].body["tools"].as_array().unwrap();
    let shout = offered
        .iter()
        .find(|t| t["name"] == "mcp__fake__shout")
        .expect("the MCP tool is offered to the model");
    assert_eq!(shout["description"], "Upper-cases text");
    assert_eq!(shout["input_schema"]["required"], json!(["text"]));
    let results = tool_results(&requests[1].body);
    assert_eq!(results[0]["tool_use_id"], "toolu_1");
    assert_eq!(results[0]["content"], "HELLO MCP");
    assert_ne!(results[0]["is_error"], true);
    assert_eq!(results[1]["content"], "it went wrong");
    assert_eq!(results[1]["is_error"], true);
    assert!(process_gone(pid_in(&pid)), "the server outlived the run");
}

/// Runs one `touch` call under the given permission flags; whether the file was made.
fn touch_with(flags: &[&str]) -> (bool, Value, Value) {
    let p = project();
    let made = p.root.join("made-by-mcp");
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_t",
                "mcp__fake__touch",
                json!({"path": made.to_string_lossy()}),
            )],
        ),
        anthropic::text_turn("done"),
    ]);
    let config = json!({"fake": fake_entry("serve", &p.root.join("pid"))});
    let out = run_with_servers(&p, &server, "go", &config, flags, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let offered = server.requests()[0].body["tools"].clone();
    (made.exists(), result(&out), offered)
}

#[test]
fn permission_rules_govern_mcp_tools_and_deny_wins() {
    // Default mode, no rule: headless cannot ask, so the call is denied.
    let (made, result, _) = touch_with(&[]);
    assert!(!made);
    assert_eq!(
        result["permission_denials"][0]["tool_name"],
        "mcp__fake__touch"
    );
    // Allowed by its exact name, or by the server's name.
    for rule in ["mcp__fake__touch", "mcp__fake"] {
        let (made, result, _) = touch_with(&["--allowedTools", rule]);
        assert!(made, "{rule}: {result}");
    }
    // Denying the server wins over allowing it, and takes its tools out of the request.
    let (made, _, offered) = touch_with(&[
        "--allowedTools",
        "mcp__fake",
        "--disallowedTools",
        "mcp__fake",
    ]);
    assert!(!made);
    let names: Vec<&str> = offered
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with("mcp__fake")),
        "{names:?}"
    );
    // Bypass mode runs it, unless a deny rule names it.
    let (made, _, _) = touch_with(&["--dangerously-skip-permissions"]);
    assert!(made);
    let (made, _, _) = touch_with(&[
        "--dangerously-skip-permissions",
        "--disallowedTools",
        "mcp__fake__touch",
    ]);
    assert!(!made);
}

#[test]
fn hanging_and_crashing_servers_cost_at_most_the_startup_wait_and_are_reported() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("answered anyway")]);
    let (hang_pid, good_pid) = (p.root.join("hang.pid"), p.root.join("good.pid"));
    let config = json!({"mcpServers": {
        "good": fake_entry("serve", &good_pid),
        "hang": fake_entry("hang", &hang_pid),
        "crash": fake_entry("crash", &p.root.join("crash.pid")),
    }});
    let started = Instant::now();
    let out = run_with_servers(&p, &server, "go", &config, &[], &[("MCP_TIMEOUT", "1500")]);
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(result(&out)["result"], "answered anyway");
    let init = init(&out);
    assert_eq!(
        statuses(&init),
        [
            ("good".to_string(), "connected".to_string()),
            ("hang".to_string(), "pending".to_string()),
            ("crash".to_string(), "failed".to_string()),
        ]
    );
    assert!(init_tools(&init).contains(&"mcp__good__shout".to_string()));
    // The wait is 1.5 s; a server's own connect limit (30 s) never holds the run up. The
    // bound sits below that limit, not near the wait: it tells the two apart, not speed
    // (a loaded machine took over 10 s).
    assert!(
        elapsed < Duration::from_secs(25),
        "the run took {elapsed:?} with MCP_TIMEOUT=1500"
    );
    assert!(
        process_gone(pid_in(&hang_pid)),
        "the hanging server outlived the run"
    );
    assert!(
        process_gone(pid_in(&good_pid)),
        "the server outlived the run"
    );
}

#[test]
fn a_server_ignoring_stdin_eof_is_killed_at_once_with_its_group() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("toolu_s", "mcp__stubborn__shout", json!({"text": "hi"}))],
        ),
        anthropic::text_turn("done"),
    ]);
    let pid_file = p.root.join("stubborn.pid");
    let config = json!({"mcpServers": {"stubborn": fake_entry("ignore-eof", &pid_file)}});
    let out = run_with_servers(
        &p,
        &server,
        "go",
        &config,
        &["--allowedTools", "mcp__stubborn"],
        // The wait ends once the server is connected; generous for a loaded machine.
        &[("MCP_TIMEOUT", "30000")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(result(&out)["result"], "done");
    // The server (its group's leader) and the `sleep` it started are gone: nothing of its
    // process group is left once `-p` has ended.
    let group = pid_in(&pid_file) as i32;
    let until = Instant::now() + Duration::from_secs(10);
    while !crate::support::process::group_members(group).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        crate::support::process::group_members(group),
        Vec::<i32>::new(),
        "left behind"
    );
    // Killed at once after the last answer: never asked to stop with SIGTERM and waited for.
    let term = p.root.join("stubborn.pid.term");
    assert!(!term.exists(), "the server was sent SIGTERM and waited for");
}

#[test]
fn start_up_waits_only_for_servers_whose_tools_the_first_request_can_carry() {
    // Two hanging servers and a ten-minute MCP_TIMEOUT: one is denied whole, `--tools`
    // names none of the other's tools. Neither is waited for, so the run answers (a run
    // that waited would be killed by the one-minute safety net).
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("answered at once")]);
    let (denied_pid, unchosen_pid) = (p.root.join("denied.pid"), p.root.join("unchosen.pid"));
    let config = json!({"mcpServers": {
        "denied": fake_entry("hang", &denied_pid),
        "unchosen": fake_entry("hang", &unchosen_pid),
    }});
    let config = config.to_string();
    let mut cmd = p.command(
        &server,
        &[
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--verbose",
            "--mcp-config",
            &config,
            "--disallowedTools",
            "mcp__denied",
            "--tools",
            "Read",
        ],
    );
    cmd.env("MCP_TIMEOUT", "600000");
    let out = crate::support::process::output_within(cmd, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(result(&out)["result"], "answered at once");
    assert_eq!(
        statuses(&init(&out)),
        [
            ("denied".to_string(), "pending".to_string()),
            ("unchosen".to_string(), "pending".to_string()),
        ]
    );
}

#[test]
fn slash_mcp_lists_status_tool_counts_and_last_errors() {
    let p = project();
    let server = MockServer::start(vec![]);
    let config = json!({
        "fake": fake_entry("serve", &p.root.join("pid")),
        "crash": fake_entry("crash", &p.root.join("crash.pid")),
        "broken": {"url": "http://127.0.0.1:1/mcp"},
    });
    let out = run_with_servers(&p, &server, "/mcp", &config, &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = result(&out)["result"].as_str().unwrap().to_string();
    assert!(text.contains("fake (stdio): connected, 3 tools"), "{text}");
    assert!(text.contains("crash (stdio): failed"), "{text}");
    assert!(
        text.contains("configured to crash"),
        "the server's stderr is shown: {text}"
    );
    assert!(text.contains("broken (?): failed"), "{text}");
    assert!(text.contains("needs a `type`"), "{text}");
    assert!(server.requests().is_empty(), "/mcp needs no model");

    let out = run_with_servers(&p, &server, "/mcp reconnect fake", &config, &[], &[]);
    let text = result(&out)["result"].as_str().unwrap().to_string();
    assert_eq!(text, "Reconnected fake: connected, 3 tools");
    let out = run_with_servers(&p, &server, "/mcp reconnect nope", &config, &[], &[]);
    let error = result(&out);
    assert_eq!(error["is_error"], true, "{error}");
}

/// A Python HTTP server that answers every request with 401, on a free loopback port.
struct Unauthorized {
    child: std::process::Child,
    port: u16,
}

impl Unauthorized {
    fn start() -> Unauthorized {
        use std::io::BufRead;
        let script = r#"
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def answer(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="mcp"')
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_GET = do_POST = do_DELETE = answer
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;
        let mut child = std::process::Command::new("python3")
            .args(["-c", script])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        Unauthorized {
            port: line.trim().parse().unwrap(),
            child,
        }
    }
}

impl Drop for Unauthorized {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_server_answering_401_needs_authentication_and_says_what_to_do() {
    let p = project();
    let http = Unauthorized::start();
    let server = MockServer::start(vec![]);
    let url = format!("http://127.0.0.1:{}/mcp", http.port);
    let config = json!({"remote": {"type": "http", "url": url}});
    let out = run_with_servers(
        &p,
        &server,
        "/mcp",
        &config,
        &[],
        &[("MCP_TIMEOUT", "10000")],
    );
    assert_eq!(
        statuses(&init(&out)),
        [("remote".to_string(), "needs-auth".to_string())]
    );
    let text = result(&out)["result"].as_str().unwrap().to_string();
    assert!(
        text.contains("remote (http): needs authentication"),
        "{text}"
    );
    assert!(text.contains("Authorization"), "{text}");
}

#[test]
fn project_mcp_json_waits_for_trust_and_variables_expand() {
    let p = project();
    let pid = p.root.join("pid");
    std::fs::write(
        p.root.join(".mcp.json"),
        json!({"mcpServers": {"proj": {
            "command": "${ROBOTA_TEST_PY:-python3}",
            "args": [fake_server_script().to_string_lossy(), "serve", "${PID_FILE}"]
        }}})
        .to_string(),
    )
    .unwrap();
    let server = MockServer::start(vec![]);
    let mut cmd = p.command(&server, &["-p", "/mcp", "--output-format", "json"]);
    let out = cmd.env("PID_FILE", &pid).output().unwrap();
    let text = crate::support::project::json_result(&out)["result"].clone();
    assert!(
        text.as_str()
            .unwrap()
            .starts_with("Not started until you trust this directory (.mcp.json: proj)"),
        "{text}"
    );
    let err = stderr(&out);
    assert!(
        err.contains(
            "the MCP servers of .mcp.json: proj were not started: this directory is not trusted"
        ),
        "{err}"
    );
    assert!(!pid.exists(), "an untrusted project's server never starts");

    let trusted = p.command(&server, &["trust"]).output().unwrap();
    assert!(trusted.status.success(), "{}", stderr(&trusted));
    let out = p
        .command(&server, &["-p", "/mcp", "--output-format", "json"])
        .env("PID_FILE", &pid)
        .output()
        .unwrap();
    let text: Value = crate::support::project::json_result(&out)["result"].clone();
    assert!(
        text.as_str()
            .unwrap()
            .contains("proj (stdio): connected, 3 tools"),
        "{text}"
    );
    assert!(pid.exists(), "${{PID_FILE}} expanded in args");
}
