//! Against a REAL local OpenAI-compatible server (llama.cpp `llama-server` serving
//! Qwen2.5-Coder-0.5B, started with `../shared/bench/local-llm.sh start 8012`): the adapter
//! streams a plain answer and a tool round trip, and the real `robota` binary, with an
//! `openai-compatible` settings profile, answers in print mode and answers every tool call
//! the model makes. The server is found through `LOCAL_LLM_BASE_URL` (e.g.
//! `http://127.0.0.1:8012/v1`); when it is unset or unreachable every test skips through
//! `support::skip` (a failure under `ROBOTA_REQUIRE_REAL` unless `.ci/run` lists
//! `llama.cpp` in `ROBOTA_MAY_LACK`).
//!
//! What a model chooses to do (answer or call a tool, which file, which offset, what it
//! says) is not under test: a 0.5B model's choices vary from run to run. The assertions are
//! about robota's side of the exchange only — the stream parsed into a consistent turn,
//! every tool call the model made was executed exactly as asked (its `tool_result` is what
//! robota's own Read gives for that very input) and answered (one `tool_result` per
//! `tool_use` id, in the output and in the session log, followed by the next model turn
//! unless the turn cap stopped the loop), and the loop ended the way robota says it did.

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use robota::core::truncate::{TOOL_OUTPUT_CAP, truncate_middle};
use robota::core::{
    Block, INVALID_INPUT_KEY, Message, Provider, ProviderRequest, Role, StopReason, StreamEvent,
    Tool, ToolContext, ToolSchema,
};
use robota::providers::{OpenAiChatConfig, OpenAiChatProvider};
use robota::tools::{FileReadTracker, ReadTool};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The model name `local-llm.sh` serves.
const LOCAL_MODEL: &str = "qwen2.5-coder-0.5b";
/// Prompt processing runs at ~100 tokens/s on 2 cores: a first request can take a while.
const FIRST_TOKEN_TIMEOUT: Duration = Duration::from_secs(600);
/// Upper bound on one `robota` run before it is killed and the test fails.
const RUN_DEADLINE: Duration = Duration::from_secs(900);

/// How to get a server, for a skip's reason.
const GET_A_SERVER: &str = "start one with `../shared/bench/local-llm.sh start 8012` and \
    export the LOCAL_LLM_BASE_URL it prints; .ci/run does";

/// The server's base URL when one is reachable; otherwise the test skips (see
/// `support::skip`, component `llama.cpp`) and the caller returns.
fn local_server() -> Option<String> {
    let base = std::env::var("LOCAL_LLM_BASE_URL")
        .ok()
        .map(|v| v.trim().trim_end_matches('/').to_string())
        .filter(|v| !v.is_empty());
    let why = match &base {
        None => format!("LOCAL_LLM_BASE_URL is not set ({GET_A_SERVER})"),
        Some(base) => match probe_models(base) {
            Ok(()) => return Some(base.clone()),
            Err(why) => {
                format!("LOCAL_LLM_BASE_URL={base} is not reachable: {why} ({GET_A_SERVER})")
            }
        },
    };
    support::skip::skip("llama.cpp", &why);
    None
}

/// `GET {base}/models` must answer 200 within a few seconds.
fn probe_models(base: &str) -> Result<(), String> {
    let url = reqwest::Url::parse(&format!("{base}/models")).map_err(|e| e.to_string())?;
    let host = url.host_str().ok_or("the URL has no host")?.to_string();
    let port = url.port_or_known_default().ok_or("the URL has no port")?;
    let addr = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or("the host does not resolve")?;
    let timeout = Duration::from_secs(3);
    let mut stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let request = format!(
        "GET {} HTTP/1.0\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n",
        url.path()
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut head = [0u8; 64];
    let n = stream.read(&mut head).map_err(|e| e.to_string())?;
    let status_line = String::from_utf8_lossy(&head[..n]);
    if status_line.starts_with("HTTP/1.1 200") || status_line.starts_with("HTTP/1.0 200") {
        Ok(())
    } else {
        Err(format!(
            "GET {} answered {:?}",
            url.path(),
            status_line.lines().next().unwrap_or("")
        ))
    }
}

fn provider(base: &str) -> OpenAiChatProvider {
    let mut config = OpenAiChatConfig::new(base);
    config.idle_timeout = FIRST_TOKEN_TIMEOUT;
    config.options.insert("temperature".into(), json!(0));
    OpenAiChatProvider::new(config).expect("provider")
}

fn read_file_tool() -> ToolSchema {
    ToolSchema {
        name: "read_file".into(),
        description: "Read a UTF-8 text file from the repository and return its contents.".into(),
        input_schema: json!({"type":"object","properties":{"path":{"type":"string",
            "description":"Path relative to the repository root"}},"required":["path"]}),
    }
}

#[tokio::test]
async fn adapter_streams_a_plain_answer_and_a_tool_round_trip() {
    let Some(base) = local_server() else {
        return;
    };
    let provider = provider(&base);
    let cancel = CancellationToken::new();
    let events = std::sync::Mutex::new(Vec::new());
    let sink = |e: StreamEvent| events.lock().unwrap().push(e);

    // A plain answer: whatever the model says, the streamed deltas add up to the final
    // text, usage is parsed, and the stop reason is one a plain answer can have.
    let plain = ProviderRequest {
        model: LOCAL_MODEL.into(),
        system: "You are a helpful assistant.".into(),
        messages: vec![Message::user_text("Say hello in five words or fewer.")],
        tools: vec![],
        max_tokens: 40,
        thinking_budget: None,
        tools_disabled: false,
        server_tools: Vec::new(),
        wire: None,
    };
    let turn = provider
        .stream(&plain, &sink, &cancel)
        .await
        .expect("the plain answer streams and parses");
    let answer = Message::new(Role::Assistant, turn.content.clone()).text();
    let streamed: String = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, answer);
    let usage = turn
        .usage
        .expect("include_usage makes llama.cpp report usage");
    assert!(usage.prompt_tokens() > 0, "{usage:?}");
    assert!(
        matches!(
            turn.stop_reason,
            StopReason::EndTurn | StopReason::MaxTokens
        ),
        "{:?}",
        turn.stop_reason
    );
    assert!(
        turn.content
            .iter()
            .all(|b| !matches!(b, Block::ToolUse { .. })),
        "no tools were offered: {:?}",
        turn.content
    );

    // Tools offered: the model may call any number of them (or none). Every call robota
    // parsed has a non-empty id of its own and an object for input, and the stop reason
    // agrees with the calls.
    let mut tool_request = ProviderRequest {
        model: LOCAL_MODEL.into(),
        system: "You are a coding agent working in a repository. Use the provided tools to \
                 inspect files before answering."
            .into(),
        messages: vec![Message::user_text(
            "Read the file src/main.rs and tell me what it does.",
        )],
        tools: vec![read_file_tool()],
        max_tokens: 150,
        thinking_budget: None,
        tools_disabled: false,
        server_tools: Vec::new(),
        wire: None,
    };
    let turn = provider
        .stream(&tool_request, &sink, &cancel)
        .await
        .expect("the turn with tools streams and parses");
    let calls: Vec<String> = turn
        .content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, input, .. } => {
                assert!(!id.is_empty(), "a call without an id: {:?}", turn.content);
                assert!(input.is_object(), "input is not an object: {input}");
                Some(id.clone())
            }
            _ => None,
        })
        .collect();
    let unique: std::collections::HashSet<&String> = calls.iter().collect();
    assert_eq!(unique.len(), calls.len(), "repeated ids: {calls:?}");
    match turn.stop_reason {
        StopReason::ToolUse => assert!(!calls.is_empty(), "tool_use stop without a call"),
        StopReason::EndTurn | StopReason::MaxTokens => {}
        other => panic!("unexpected stop reason {other:?}: {:?}", turn.content),
    }

    // The round trip: the history carries the calls (the model's, or one written here when
    // it made none, so the round trip is exercised either way) and a result for each; the
    // server accepts it and, with tools disabled, nothing comes back as a call.
    let mut assistant = turn.content.clone();
    let mut ids = calls;
    if ids.is_empty() {
        assistant.push(Block::ToolUse {
            id: "call_robota_test_0".into(),
            name: "read_file".into(),
            input: json!({"path": "src/main.rs"}),
        });
        ids.push("call_robota_test_0".into());
    }
    tool_request
        .messages
        .push(Message::new(Role::Assistant, assistant));
    tool_request.messages.push(Message::new(
        Role::User,
        ids.iter()
            .map(|id| Block::ToolResult {
                tool_use_id: id.clone(),
                content: "fn main() {\n    println!(\"hello\");\n}\n".into(),
                is_error: false,
            })
            .collect(),
    ));
    tool_request.tools_disabled = true;
    let turn = provider
        .stream(&tool_request, &sink, &cancel)
        .await
        .expect("the tool results are accepted");
    assert!(
        turn.content
            .iter()
            .all(|b| !matches!(b, Block::ToolUse { .. })),
        "tool_choice none: {:?}",
        turn.content
    );
    assert!(turn.usage.is_some_and(|u| u.prompt_tokens() > 0));
}

/// A temp project and `ROBOTA_HOME` whose settings select an `openai-compatible` profile.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(base: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["work", "robota-home", "user-home"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let settings = json!({"currentProvider":"local","providers":{"local":{
            "type":"openai-compatible","model":LOCAL_MODEL,"baseURL":base}}});
        std::fs::write(
            dir.path().join("robota-home/settings.json"),
            serde_json::to_string_pretty(&settings).unwrap(),
        )
        .unwrap();
        Project { dir }
    }

    /// The temp root: `work/` is the cwd, `robota-home/` and `user-home/` sit beside it.
    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `robota` with `args` in the project, killed if it outlives `RUN_DEADLINE`.
    fn run(&self, args: &[&str]) -> Output {
        let child = Command::new(env!("CARGO_BIN_EXE_robota"))
            .args(args)
            .current_dir(self.root().join("work"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.root().join("user-home"))
            .env("ROBOTA_HOME", self.root().join("robota-home"))
            .env(
                "ROBOTA_STREAM_IDLE_TIMEOUT_MS",
                FIRST_TOKEN_TIMEOUT.as_millis().to_string(),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn robota");
        let pid = child.id();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if done_rx.recv_timeout(RUN_DEADLINE).is_err() {
                // SAFETY: kill(2) on the pid of the child this test started and still owns
                // (it has not been waited for, so the pid cannot have been reused).
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                return true;
            }
            false
        });
        let output = child.wait_with_output().expect("wait for robota");
        let _ = done_tx.send(());
        let killed = watchdog.join().unwrap_or(false);
        assert!(
            !killed,
            "robota ran longer than {RUN_DEADLINE:?}; stderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }
}

fn describe(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Tools left out of the CLI runs: the smaller prompt keeps a 2-core first request short.
const UNNEEDED_TOOLS: &str =
    "Bash Write Edit Glob Grep WebFetch WebSearch Agent Task TodoWrite ExitPlanMode";

#[test]
fn robota_print_mode_answers_through_an_openai_compatible_profile() {
    let Some(base) = local_server() else {
        return;
    };
    let project = Project::new(&base);
    let output = project.run(&[
        "-p",
        "Say hello",
        "--output-format",
        "json",
        "--max-turns",
        "2",
        // With no tool offered the turn can only end with an answer (whatever its text).
        "--disallowedTools",
        UNNEEDED_TOOLS,
        "Read",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let result: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("one JSON result ({e}): {}", describe(&output)));
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(result["is_error"], false, "{result}");
    assert!(result["result"].is_string(), "{result}");
    let usage = &result["usage"];
    assert!(
        usage["input_tokens"].as_u64().unwrap_or(0)
            + usage["cache_read_input_tokens"].as_u64().unwrap_or(0)
            > 0,
        "{result}"
    );
    assert!(usage["output_tokens"].is_u64(), "{result}");
}

/// One `tool_use` or `tool_result` block and the index of the stream-json line it came in.
struct Seen {
    line: usize,
    block: Value,
}

/// The content blocks of type `kind` in the stream-json messages of type `role`.
fn blocks(lines: &[Value], role: &str, kind: &str) -> Vec<Seen> {
    let mut found = Vec::new();
    for (line, value) in lines.iter().enumerate() {
        if value["type"] != role {
            continue;
        }
        for block in value["message"]["content"].as_array().into_iter().flatten() {
            if block["type"] == kind {
                found.push(Seen {
                    line,
                    block: block.clone(),
                });
            }
        }
    }
    found
}

/// Every object with `"type": kind` anywhere in the session logs under `home/projects`
/// (searched structurally, so the log's exact line layout does not matter).
fn logged_blocks(home: &Path, kind: &str) -> Vec<Value> {
    fn walk(value: &Value, kind: &str, out: &mut Vec<Value>) {
        match value {
            Value::Object(map) => {
                if map.get("type").and_then(Value::as_str) == Some(kind) {
                    out.push(value.clone());
                }
                map.values().for_each(|v| walk(v, kind, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, kind, out)),
            _ => {}
        }
    }
    let mut files = Vec::new();
    let mut dirs = vec![home.join("projects")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let value: Value = serde_json::from_str(line).unwrap_or_else(|e| {
                panic!("{}: a log line is not JSON ({e}): {line}", file.display())
            });
            walk(&value, kind, &mut out);
        }
    }
    out
}

/// The input of a Read that robota runs without asking anyone: well-formed (not marked
/// invalid by the adapter) and naming a file inside the working directory — a path outside
/// it is a permission question, which print mode answers with a denial, not a read.
fn executed_read_input<'a>(input: &'a Value, work: &Path) -> Option<&'a Value> {
    if input.get(INVALID_INPUT_KEY).is_some() {
        return None;
    }
    let path = Path::new(input["file_path"].as_str()?);
    let inside = if path.is_absolute() {
        path.starts_with(work)
    } else {
        path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
    };
    inside.then_some(input)
}

/// What robota's Read gives for `input` in `cwd`, as the engine would put it in a
/// tool_result: the same tool, run again here on the same unchanged file.
fn read_again(input: &Value, cwd: &Path) -> (String, bool) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let output = runtime.block_on(async {
        ReadTool::new(FileReadTracker::new())
            .call(
                input.clone(),
                &ToolContext {
                    cwd: cwd.to_path_buf(),
                    cancel: CancellationToken::new(),
                    tool_use_id: "check".into(),
                    env: Vec::new(),
                    read_denial: None,
                    progress: Default::default(),
                },
            )
            .await
    });
    (
        truncate_middle(&output.content, TOOL_OUTPUT_CAP),
        output.is_error,
    )
}

/// Runs the tool scenario once and checks robota's side of it; returns how many tool calls
/// the model made.
fn tool_scenario(project: &Project, run: usize) -> usize {
    let output = project.run(&[
        "-p",
        "Use the Read tool to read the file notes.txt, then tell me the code word it contains.",
        "--max-turns",
        "2",
        "--output-format",
        "stream-json",
        "--verbose",
        "--disallowedTools",
        UNNEEDED_TOOLS,
    ]);
    let work = project.root().join("work").canonicalize().unwrap();
    // Every line robota wrote parses.
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("stream-json line ({e}): {l}\n{}", describe(&output)))
        })
        .collect();
    // The loop ended the way robota says: a final result line, a success or the turn cap,
    // and the exit status to match.
    let last = lines
        .last()
        .unwrap_or_else(|| panic!("no output: {}", describe(&output)));
    assert_eq!(last["type"], "result", "{}", describe(&output));
    let subtype = last["subtype"].as_str().unwrap_or_default();
    let expected_exit = match subtype {
        "success" => 0,
        "error_max_turns" => 1,
        other => panic!("the run failed ({other}): {}", describe(&output)),
    };
    assert_eq!(
        output.status.code(),
        Some(expected_exit),
        "{}",
        describe(&output)
    );

    // Every call the model made was answered exactly once, after it, with what robota's
    // Read gives for that very input (whatever offset, limit or path the model chose).
    let uses = blocks(&lines, "assistant", "tool_use");
    let results = blocks(&lines, "user", "tool_result");
    let mut ids = std::collections::HashSet::new();
    for call in &uses {
        let id = call.block["id"].as_str().unwrap_or_default();
        assert!(!id.is_empty(), "a tool_use without an id: {}", call.block);
        assert!(ids.insert(id.to_string()), "repeated id {id}");
        let answers: Vec<&Seen> = results
            .iter()
            .filter(|r| r.block["tool_use_id"] == id)
            .collect();
        assert_eq!(
            answers.len(),
            1,
            "tool_use {id} answered {} times: {}",
            answers.len(),
            describe(&output)
        );
        let answer = answers[0];
        assert!(answer.line > call.line, "result before its call: {id}");
        if call.block["name"] == "Read"
            && let Some(input) = executed_read_input(&call.block["input"], &work)
        {
            let (content, is_error) = read_again(input, &work);
            assert_eq!(
                answer.block["content"].as_str(),
                Some(content.as_str()),
                "Read {} was not executed as asked",
                call.block["input"]
            );
            assert_eq!(
                answer.block["is_error"].as_bool().unwrap_or(false),
                is_error,
                "{}",
                answer.block
            );
        }
    }
    assert_eq!(
        results.len(),
        uses.len(),
        "a tool_result without a tool_use: {}",
        describe(&output)
    );

    // The session log holds the same calls and answers.
    let home = project.root().join("robota-home");
    let logged_uses = logged_blocks(&home, "tool_use");
    let logged_results = logged_blocks(&home, "tool_result");
    for id in &ids {
        assert!(
            logged_uses.iter().any(|b| b["id"] == id.as_str()),
            "tool_use {id} missing from the session log"
        );
        assert!(
            logged_results
                .iter()
                .any(|b| b["tool_use_id"] == id.as_str()),
            "tool_result {id} missing from the session log"
        );
    }

    // Each answer went back to the model: after the results of a turn, either another
    // assistant turn came (the next request carried them) or robota stopped at the cap.
    if let Some(first) = results.first() {
        let answered = lines[first.line..].iter().any(|l| l["type"] == "assistant");
        assert!(
            answered || subtype == "error_max_turns",
            "the tool results were never sent back: {}",
            describe(&output)
        );
    }
    eprintln!("run {run}: the model made {} tool call(s)", uses.len());
    uses.len()
}

#[test]
fn robota_answers_every_tool_call_the_model_makes() {
    /// Runs tried for one in which the model calls a tool at all (its choice, not tested).
    const RUNS: usize = 3;
    let Some(base) = local_server() else {
        return;
    };
    let project = Project::new(&base);
    std::fs::write(
        project.root().join("work/notes.txt"),
        "The launch code word is BLUEBERRY.\n",
    )
    .unwrap();
    for run in 1..=RUNS {
        if tool_scenario(&project, run) > 0 {
            return;
        }
    }
    eprintln!(
        "note: the model made no tool call in {RUNS} runs; robota's answers were checked, \
         its tool round trip was not exercised"
    );
}
