//! OpenTelemetry export end to end: the real `robota -p` against the loopback Anthropic
//! mock, exporting to a real OTLP receiver (`tests/telemetry/otlp_receiver.py`, built on
//! the `opentelemetry-proto` package and run as a subprocess; over HTTP, or over gRPC with
//! `grpcio`), which decodes the requests and writes down every metric data point and event
//! that arrived.
//! Checked: Claude Code's metric and event names and attributes with the mock's values;
//! prompts redacted unless `OTEL_LOG_USER_PROMPTS`; header values never in attributes;
//! nothing sent when telemetry is off; the user's settings `env` turns it on, a project's
//! may not; a collector that
//! refuses or never answers leaves the run's result and exit code alone.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::anthropic::{MOCK_INPUT_TOKENS, MOCK_OUTPUT_TOKENS, text_turn, tool_turn};
use support::project::{Project, json_result, output_text, project};
use support::python::python_with;
use support::{MockServer, refused_url};

const SECRET: &str = "Bearer otlp-secret-token-1234";

/// The receiver subprocess and the file it writes.
struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How the receiver takes OTLP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// OTLP/HTTP (`/v1/metrics`, `/v1/logs`).
    Http,
    /// OTLP/gRPC (the collector services).
    Grpc,
}

impl Receiver {
    /// Starts an OTLP/HTTP receiver; `None` (the test skips) without the venv's
    /// `opentelemetry.proto`.
    fn start() -> Option<Receiver> {
        Self::start_over(Transport::Http)
    }

    /// Starts a receiver over `transport`; gRPC needs the venv's `grpcio` too.
    fn start_over(transport: Transport) -> Option<Receiver> {
        let python = python_with(match transport {
            Transport::Http => "opentelemetry.proto.collector.metrics.v1.metrics_service_pb2",
            // The generated servicers import `grpc`.
            Transport::Grpc => "opentelemetry.proto.collector.metrics.v1.metrics_service_pb2_grpc",
        })?;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("otlp.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/telemetry/otlp_receiver.py");
        let mut command = Command::new(python);
        command.arg(script).arg(&out).stdout(Stdio::piped());
        if transport == Transport::Grpc {
            command.arg("--grpc");
        }
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the receiver prints its port");
        Some(Receiver {
            child,
            port,
            out,
            _dir: dir,
        })
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Everything that arrived so far.
    fn lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn of_kind<'a>(lines: &'a [Value], kind: &str, name: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["kind"] == kind && l["name"] == name)
        .collect()
}

/// The sum of metric `name`'s data points whose attributes include `filter`.
fn metric_sum(lines: &[Value], name: &str, filter: &[(&str, &str)]) -> f64 {
    of_kind(lines, "metric", name)
        .into_iter()
        .filter(|m| filter.iter().all(|(k, v)| m["attributes"][k] == *v))
        .map(|m| m["value"].as_f64().unwrap())
        .sum()
}

/// A session that writes a three-line file (allowed), has its Edit refused (a deny rule)
/// and commits with Bash (allowed), then answers.
fn scripted_mock() -> MockServer {
    MockServer::start(vec![
        tool_turn(
            None,
            &[
                (
                    "toolu_w",
                    "Write",
                    json!({"file_path": "notes.md", "content": "one\ntwo\nthree\n"}),
                ),
                (
                    "toolu_e",
                    "Edit",
                    json!({"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
                ),
                (
                    "toolu_b",
                    "Bash",
                    json!({"command": "git add notes.md && git -c user.email=t@t -c user.name=t commit -qm notes"}),
                ),
            ],
        ),
        text_turn("Done."),
    ])
}

fn run_with(p: &Project, server: &MockServer, env: &[(&str, &str)]) -> Output {
    let args = [
        "-p",
        "write the notes",
        "--output-format",
        "json",
        "--allowedTools",
        "Write,Bash",
        "--disallowedTools",
        "Edit(calc.py)",
    ];
    run_args(p, server, &args, env)
}

fn run_args(p: &Project, server: &MockServer, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = p.command(server, args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn telemetry_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("CLAUDE_CODE_ENABLE_TELEMETRY", "1".into()),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.into()),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            format!("Authorization={}", SECRET.replace(' ', "%20")),
        ),
        ("OTEL_RESOURCE_ATTRIBUTES", "team=platform".into()),
        // The loopback receiver answers at once; a loaded machine still gets its time.
        ("ROBOTA_TELEMETRY_FLUSH_MS", "20000".into()),
    ]
}

fn as_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[test]
fn a_session_s_metrics_and_events_reach_a_real_otlp_receiver() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let paths = ["/v1/metrics", "/v1/logs"];
    check_scripted_session(&receiver, "http/protobuf", paths, "application/x-protobuf");
}

#[test]
fn a_session_s_metrics_and_events_reach_a_real_otlp_grpc_receiver() {
    let Some(receiver) = Receiver::start_over(Transport::Grpc) else {
        return;
    };
    let paths = [
        "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
        "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
    ];
    check_scripted_session(&receiver, "grpc", paths, "application/grpc");
    // The header went as gRPC metadata, beside robota's user agent.
    let lines = receiver.lines();
    let request = lines.iter().find(|l| l["kind"] == "request").unwrap();
    assert!(
        request["user_agent"]
            .as_str()
            .is_some_and(|a| a.contains(" robota/")),
        "{request}"
    );
}

#[test]
fn grpc_to_an_https_collector_trusts_node_extra_ca_certs() {
    let Some(receiver) = Receiver::start_over(Transport::Grpc) else {
        return;
    };
    let backend = format!("127.0.0.1:{}", receiver.port).parse().unwrap();
    let front = support::tls::TlsFront::start_h2("localhost", backend);
    let endpoint = format!("https://localhost:{}", front.port());
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), &front.cert_pem).unwrap();
    let mut env = telemetry_env(&endpoint);
    env.push(("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".into()));
    env.push(("OTEL_METRICS_EXPORTER", "none".into()));
    // Without the CA the collector is not trusted: nothing arrives, the run is unharmed.
    let p = project();
    let server = MockServer::start(vec![text_turn("Hi.")]);
    let out = run_with(&p, &server, &as_refs(&env));
    assert!(out.status.success(), "{}", output_text(&out));
    assert!(receiver.lines().is_empty(), "{:?}", receiver.lines());
    env.push((
        "NODE_EXTRA_CA_CERTS",
        ca.path().to_string_lossy().into_owned(),
    ));
    let server = MockServer::start(vec![text_turn("Hi.")]);
    let out = run_with(&p, &server, &as_refs(&env));
    assert!(out.status.success(), "{}", output_text(&out));
    let lines = receiver.lines();
    assert_eq!(
        of_kind(&lines, "event", "claude_code.user_prompt").len(),
        1,
        "{lines:?}"
    );
}

/// Runs the scripted session exporting over `protocol` to `receiver` and checks what
/// arrived: the metrics and events, one request at each of `paths` (metrics, logs) with
/// `content_type`, the header sent and never recorded.
fn check_scripted_session(
    receiver: &Receiver,
    protocol: &str,
    paths: [&str; 2],
    content_type: &str,
) {
    let p = project();
    let server = scripted_mock();
    let mut env = telemetry_env(&receiver.endpoint());
    env.push(("OTEL_EXPORTER_OTLP_PROTOCOL", protocol.into()));
    let out = run_with(&p, &server, &as_refs(&env));
    assert!(out.status.success(), "{}", output_text(&out));
    let session_id = json_result(&out)["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let lines = receiver.lines();
    assert_metrics(&lines, &session_id);
    assert_events(&lines, &session_id);
    // The installation's anonymous id, kept in ROBOTA_HOME, is on metrics and events alike.
    let user_id = std::fs::read_to_string(p.home.join("telemetry-user-id")).unwrap();
    let recorded: Vec<&Value> = lines.iter().filter(|l| l["kind"] != "request").collect();
    assert!(!recorded.is_empty());
    assert!(
        recorded
            .iter()
            .all(|l| l["attributes"]["user.id"] == user_id.trim()),
        "{recorded:?}"
    );
    // The header went to the collector, and nowhere into what was recorded.
    let sent: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "request").collect();
    for path in paths {
        assert!(sent.iter().any(|r| r["path"] == path), "{path}: {lines:?}");
    }
    assert!(
        sent.iter()
            .all(|r| r["authorization"] == SECRET && r["content_type"] == content_type),
        "{sent:?}"
    );
    let recorded: Vec<&Value> = lines.iter().filter(|l| l["kind"] != "request").collect();
    assert!(
        !serde_json::to_string(&recorded)
            .unwrap()
            .contains("otlp-secret-token")
    );
}

fn assert_metrics(lines: &[Value], session_id: &str) {
    let session = of_kind(lines, "metric", "claude_code.session.count");
    assert_eq!(session.len(), 1, "{lines:?}");
    assert_eq!(session[0]["value"], 1);
    assert_eq!(session[0]["attributes"]["session.id"], session_id);
    assert_eq!(session[0]["attributes"]["start_type"], "fresh");
    assert_eq!(session[0]["resource"]["service.name"], "robota");
    assert_eq!(session[0]["resource"]["team"], "platform");
    let tokens = |kind| metric_sum(lines, "claude_code.token.usage", &[("type", kind)]);
    assert_eq!(tokens("input"), (2 * MOCK_INPUT_TOKENS) as f64);
    assert_eq!(tokens("output"), (2 * MOCK_OUTPUT_TOKENS) as f64);
    assert_eq!(tokens("cacheRead"), 0.0);
    let model = &of_kind(lines, "metric", "claude_code.token.usage")[0]["attributes"]["model"];
    assert!(
        model.as_str().is_some_and(|m| m.starts_with("claude")),
        "{model}"
    );
    assert!(!of_kind(lines, "metric", "claude_code.cost.usage").is_empty());
    assert_eq!(
        metric_sum(
            lines,
            "claude_code.lines_of_code.count",
            &[("type", "added")]
        ),
        3.0
    );
    assert_eq!(
        metric_sum(
            lines,
            "claude_code.commit.count",
            &[("session.id", session_id)]
        ),
        1.0
    );
    let write = [
        ("tool_name", "Write"),
        ("decision", "accept"),
        ("source", "config"),
        ("language", "Markdown"),
    ];
    assert_eq!(
        metric_sum(lines, "claude_code.code_edit_tool.decision", &write),
        1.0
    );
    let edit = [
        ("tool_name", "Edit"),
        ("decision", "reject"),
        ("language", "Python"),
    ];
    assert_eq!(
        metric_sum(lines, "claude_code.code_edit_tool.decision", &edit),
        1.0
    );
    assert!(metric_sum(lines, "claude_code.active_time.total", &[("type", "cli")]) > 0.0);
    // `-p` has no person between turns.
    let user = [("type", "user")];
    assert_eq!(
        metric_sum(lines, "claude_code.active_time.total", &user),
        0.0
    );
}

#[test]
fn an_interactive_session_counts_the_user_s_time_between_turns() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let p = project();
    let server = MockServer::start(vec![
        text_turn("First answer."),
        text_turn("Second answer."),
    ]);
    let mut cmd = portable_pty::CommandBuilder::new(env!("CARGO_BIN_EXE_robota"));
    cmd.cwd(&p.root);
    cmd.env_clear();
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd.env("HOME", &p.user_home);
    cmd.env("ROBOTA_HOME", &p.home);
    cmd.env("TERM", "xterm-256color");
    cmd.env("ANTHROPIC_BASE_URL", server.base_url());
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test-key-0000000000000000");
    for (k, v) in telemetry_env(&receiver.endpoint()) {
        cmd.env(k, v);
    }
    let mut pty = support::pty::PtySession::spawn(cmd, 80, 24);
    pty.wait_for_text("Ask anything");
    // Shift+Tab: the mode goes from default to acceptEdits.
    pty.send(b"\x1b[Z");
    pty.wait_for_text("acceptEdits");
    for (prompt, answer) in [("one", "First answer."), ("two", "Second answer.")] {
        pty.type_text(prompt);
        pty.send(b"\r");
        // The turn is over once the status line no longer offers to interrupt it.
        pty.wait_for(answer, Duration::from_secs(20), |screen| {
            screen.contains(answer) && !screen.contains("esc to interrupt")
        });
    }
    pty.send(b"\x04");
    assert_eq!(
        pty.wait_exit(Duration::from_secs(20)),
        Some(0),
        "{}",
        pty.contents()
    );
    let lines = receiver.lines();
    let time = |kind| metric_sum(&lines, "claude_code.active_time.total", &[("type", kind)]);
    // One wait, between the first answer and the second prompt: never more than the cap.
    assert!(time("user") > 0.0 && time("user") <= 300.0, "{lines:?}");
    assert!(time("cli") > 0.0, "{lines:?}");
    let changes = of_kind(&lines, "event", "claude_code.permission_mode_changed");
    assert_eq!(changes.len(), 1, "{lines:?}");
    assert_eq!(changes[0]["attributes"]["from_mode"], "default");
    assert_eq!(changes[0]["attributes"]["to_mode"], "acceptEdits");
}

#[test]
fn a_compaction_is_counted_and_reported_as_claude_code_s_event() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let p = project();
    let server = MockServer::start(vec![
        text_turn("The API has three endpoints."),
        text_turn("Summary: the user explored the API."),
    ]);
    let env = telemetry_env(&receiver.endpoint());
    let first = run_args(&p, &server, &["-p", "explore the API"], &as_refs(&env));
    assert!(first.status.success(), "{}", output_text(&first));
    let compact = run_args(&p, &server, &["-c", "-p", "/compact"], &as_refs(&env));
    assert!(compact.status.success(), "{}", output_text(&compact));
    let lines = receiver.lines();
    let manual = [("trigger", "manual")];
    assert_eq!(metric_sum(&lines, "robota.compaction.count", &manual), 1.0);
    let events = of_kind(&lines, "event", "claude_code.compaction");
    assert_eq!(events.len(), 1, "{lines:?}");
    let compaction = &events[0]["attributes"];
    assert_eq!(compaction["trigger"], "manual");
    assert_eq!(compaction["success"], "true");
    let tokens = |key: &str| compaction[key].as_str().unwrap().parse::<u64>().unwrap();
    assert!(tokens("pre_tokens") > 0, "{compaction}");
    assert!(compaction["duration_ms"].as_str().is_some(), "{compaction}");
}

fn assert_events(lines: &[Value], session_id: &str) {
    let prompts = of_kind(lines, "event", "claude_code.user_prompt");
    assert_eq!(prompts.len(), 1, "{lines:?}");
    let prompt = &prompts[0]["attributes"];
    assert_eq!(prompt["prompt"], "<REDACTED>");
    assert_eq!(prompt["prompt_length"], "15");
    assert_eq!(prompt["event.name"], "user_prompt");
    assert_eq!(prompt["session.id"], session_id);
    let prompt_id = prompt["prompt.id"].clone();
    let requests = of_kind(lines, "event", "claude_code.api_request");
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0]["attributes"]["input_tokens"],
        MOCK_INPUT_TOKENS.to_string()
    );
    assert_eq!(requests[0]["attributes"]["prompt.id"], prompt_id);
    let results = of_kind(lines, "event", "claude_code.tool_result");
    let write = results
        .iter()
        .find(|r| r["attributes"]["tool_name"] == "Write")
        .unwrap();
    assert_eq!(write["attributes"]["success"], "true");
    assert_eq!(write["attributes"]["tool_use_id"], "toolu_w");
    let decisions = of_kind(lines, "event", "claude_code.tool_decision");
    let edit = decisions
        .iter()
        .find(|d| d["attributes"]["tool_name"] == "Edit")
        .unwrap();
    assert_eq!(edit["attributes"]["decision"], "reject");
    assert_eq!(edit["attributes"]["source"], "config");
    // The answer with text (the second call; the first only called tools), redacted.
    let responses = of_kind(lines, "event", "claude_code.assistant_response");
    assert_eq!(responses.len(), 1, "{lines:?}");
    let response = &responses[0]["attributes"];
    assert_eq!(response["response"], "<REDACTED>");
    assert_eq!(response["response_length"], "5");
    assert_eq!(response["query_source"], "main");
    assert_eq!(response["model"], requests[1]["attributes"]["model"]);
    // The refused call never ran: no result for it.
    assert!(
        results
            .iter()
            .all(|r| r["attributes"]["tool_name"] != "Edit")
    );
}

#[test]
fn prompts_are_sent_when_otel_log_user_prompts_is_set() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let p = project();
    let server = MockServer::start(vec![text_turn("Hi.")]);
    let mut env = telemetry_env(&receiver.endpoint());
    env.push(("OTEL_LOG_USER_PROMPTS", "1".into()));
    env.push(("OTEL_METRICS_EXPORTER", "none".into()));
    let out = run_with(&p, &server, &as_refs(&env));
    assert!(out.status.success(), "{}", output_text(&out));
    let lines = receiver.lines();
    let prompts = of_kind(&lines, "event", "claude_code.user_prompt");
    assert_eq!(prompts[0]["attributes"]["prompt"], "write the notes");
    // Answers follow the prompts' setting unless OTEL_LOG_ASSISTANT_RESPONSES says.
    let responses = of_kind(&lines, "event", "claude_code.assistant_response");
    assert_eq!(responses[0]["attributes"]["response"], "Hi.", "{lines:?}");
    assert!(of_kind(&lines, "metric", "claude_code.session.count").is_empty());
    assert!(lines.iter().all(|l| l["path"] != "/v1/metrics"));
}

#[test]
fn telemetry_off_sends_nothing() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let p = project();
    let server = MockServer::start(vec![text_turn("Hi.")]);
    let mut env = telemetry_env(&receiver.endpoint());
    env.retain(|(k, _)| *k != "CLAUDE_CODE_ENABLE_TELEMETRY");
    let out = run_with(&p, &server, &as_refs(&env));
    assert!(out.status.success(), "{}", output_text(&out));
    assert_eq!(json_result(&out)["result"], "Hi.");
    // The run is over: anything it would send was sent before it exited.
    assert!(receiver.lines().is_empty(), "{:?}", receiver.lines());
}

#[test]
fn the_settings_env_turns_telemetry_on() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let p = project();
    let server = MockServer::start(vec![text_turn("Hi.")]);
    let env: serde_json::Map<String, Value> = telemetry_env(&receiver.endpoint())
        .into_iter()
        .map(|(k, v)| (k.replace("CLAUDE_CODE", "ROBOTA"), Value::from(v)))
        .collect();
    std::fs::create_dir_all(&p.home).unwrap();
    std::fs::write(
        p.home.join("settings.json"),
        json!({ "env": env }).to_string(),
    )
    .unwrap();
    let out = run_with(&p, &server, &[]);
    assert!(out.status.success(), "{}", output_text(&out));
    let lines = receiver.lines();
    assert_eq!(
        metric_sum(&lines, "claude_code.session.count", &[]),
        1.0,
        "{lines:?}"
    );
    let input = metric_sum(&lines, "claude_code.token.usage", &[("type", "input")]);
    assert_eq!(input, MOCK_INPUT_TOKENS as f64);
}

#[test]
fn a_project_s_settings_may_not_turn_telemetry_on_or_aim_it() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let p = project();
    let server = MockServer::start(vec![text_turn("Hi.")]);
    let env: serde_json::Map<String, Value> = telemetry_env(&receiver.endpoint())
        .into_iter()
        .map(|(k, v)| (k.to_string(), Value::from(v)))
        .collect();
    std::fs::create_dir_all(p.root.join(".claude")).unwrap();
    let settings = json!({ "env": env }).to_string();
    std::fs::write(p.root.join(".claude/settings.json"), settings).unwrap();
    let out = run_with(&p, &server, &[]);
    assert!(out.status.success(), "{}", output_text(&out));
    assert!(receiver.lines().is_empty(), "{:?}", receiver.lines());
}

#[test]
fn a_dead_collector_leaves_the_result_and_exit_code_alone() {
    // One port refuses connections; the other accepts them (the kernel's backlog) and
    // never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    for endpoint in [refused_url(), silent_url] {
        for protocol in ["http/protobuf", "grpc"] {
            let p = project();
            let server = MockServer::start(vec![text_turn("Still here.")]);
            let out = run_with(
                &p,
                &server,
                &[
                    ("CLAUDE_CODE_ENABLE_TELEMETRY", "1"),
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
                    ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
                ],
            );
            let what = format!("{protocol} to {endpoint}");
            assert_eq!(out.status.code(), Some(0), "{what}: {}", output_text(&out));
            assert_eq!(json_result(&out)["result"], "Still here.", "{what}");
        }
    }
}

#[test]
fn the_console_exporters_write_to_stderr_and_an_unknown_protocol_is_refused_by_name() {
    let p = project();
    let server = MockServer::start(vec![text_turn("Hi.")]);
    let out = run_with(
        &p,
        &server,
        &[
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "1"),
            ("OTEL_METRICS_EXPORTER", "console,otlp"),
            ("OTEL_LOGS_EXPORTER", "console"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/thrift"),
            ("ROBOTA_TELEMETRY_FLUSH_MS", "20000"),
        ],
    );
    assert!(out.status.success(), "{}", output_text(&out));
    // stdout is still the one JSON result; the records went to stderr.
    assert_eq!(json_result(&out)["result"], "Hi.");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL=http/thrift is not supported"),
        "{stderr}"
    );
    assert!(
        stderr.contains("otel metric claude_code.session.count{"),
        "{stderr}"
    );
    assert!(stderr.contains("start_type=fresh"), "{stderr}");
    assert!(
        stderr.contains("otel event claude_code.user_prompt"),
        "{stderr}"
    );
    assert!(stderr.contains("prompt=\"<REDACTED>\""), "{stderr}");
}

#[test]
fn a_failing_provider_call_is_an_api_error_event_per_attempt() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let p = project();
    let failure = || support::anthropic::error_status(500, "api_error", "mock failure", None);
    let server = MockServer::start(vec![failure(), failure()]);
    let mut env = telemetry_env(&receiver.endpoint());
    env.push(("ROBOTA_MAX_RETRIES", "1".into()));
    let out = run_with(&p, &server, &as_refs(&env));
    assert!(!out.status.success(), "{}", output_text(&out));
    let lines = receiver.lines();
    let errors = of_kind(&lines, "event", "claude_code.api_error");
    let attempts: Vec<&Value> = errors.iter().map(|e| &e["attributes"]["attempt"]).collect();
    assert_eq!(attempts, ["1", "2"], "{lines:?}");
    let last = &errors[1]["attributes"];
    assert_eq!(last["status_code"], 500);
    let exhausted = of_kind(&lines, "event", "claude_code.api_retries_exhausted");
    assert_eq!(exhausted.len(), 1, "{lines:?}");
    let exhausted = &exhausted[0]["attributes"];
    assert_eq!(exhausted["total_attempts"], "2");
    assert_eq!(exhausted["status_code"], 500);
    assert_eq!(exhausted["model"], last["model"]);
    assert!(
        exhausted["total_retry_duration_ms"].as_str().is_some(),
        "{exhausted}"
    );
    assert!(
        last["model"].as_str().is_some_and(|m| !m.is_empty()),
        "{last}"
    );
    assert!(of_kind(&lines, "event", "claude_code.api_request").is_empty());
}
