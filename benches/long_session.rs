//! A long session in the full-screen UI (issue 9): `BENCH_TURNS` (default 1,000) scripted
//! turns typed into the real `target/release/robota` in a pseudo-terminal against a
//! loopback mock model. Each turn is a prompt, a `Bash` call whose ~1.3 KB output goes back
//! to the model, and an answer, so the context fills and auto-compaction runs about twice
//! in 1,000 turns. The mock decides each answer from the request: a summary request gets
//! a summary (which carries the first task's codename only if the request did), a prompt
//! gets the tool call, a tool result gets "done N.".
//!
//! Reported: peak RSS and RSS along the way, per-turn time (Enter to the answer on screen)
//! by stretch of 100 turns, whole and without the time the mock itself spent parsing the
//! requests and deciding (flat means no per-turn growth), the tokens before and after
//! each compaction (request sizes at chars/4), and whether a last question about the
//! first task's codename is still answered from the summaries.
//!
//! `cargo bench --bench long_session` (builds the release binary first:
//! `cargo build --release`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;
use serde_json::Value;
use support::anthropic::{system_text, text_turn, tool_turn};
use support::process::status_kib;
use support::pty::PtySession;
use support::{MockResponse, MockServer, RecordedRequest};

const CODENAME: &str = "PINEAPPLE-42";

#[derive(Default)]
struct Observed {
    summaries: usize,
    /// Whether each summary request carried the codename.
    codename_in_summary_request: Vec<bool>,
    last_request_chars: usize,
    /// (tokens before, tokens after) per compaction.
    compactions: Vec<(usize, Option<usize>)>,
}

fn main() {
    let turns: usize = std::env::var("BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    let binary = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/robota");
    if !binary.exists() {
        println!("long_session: build the release binary first (cargo build --release)");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let project = work.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let line = "0123456789 abcdefghij ABCDEFGHIJ the quick brown fox jumps\n";
    std::fs::write(project.join("big.txt"), line.repeat(22)).unwrap();

    let observed = Arc::new(Mutex::new(Observed::default()));
    let seen = observed.clone();
    let server = MockServer::start_responder(Arc::new(move |request: &RecordedRequest| {
        respond(request, &seen)
    }));

    let mut cmd = CommandBuilder::new(&binary);
    cmd.cwd(&project);
    cmd.env_clear();
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd.env("HOME", work.path());
    cmd.env("ROBOTA_HOME", work.path().join("robota-home"));
    cmd.env("TERM", "xterm-256color");
    cmd.env("ANTHROPIC_BASE_URL", server.base_url());
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-bench-key-0000000000000000");
    let pty = PtySession::spawn(cmd, 120, 40);
    let pid = pty.pid();
    pty.wait_for_text("Ask anything");

    let mut times = Vec::with_capacity(turns);
    let mut rss_marks = Vec::new();
    let mut pty = pty;
    for n in 1..=turns {
        let prompt = if n == 1 {
            format!("turn 1: the codename of this task is {CODENAME}; look at big.txt")
        } else {
            format!("turn {n}: look at big.txt again")
        };
        pty.type_text(&prompt);
        let mock_before = server.busy();
        let started = Instant::now();
        pty.send(b"\r");
        let marker = format!("done {n}.");
        pty.wait_for(&marker, Duration::from_secs(120), |s| s.contains(&marker));
        let took = started.elapsed();
        times.push((took, took.saturating_sub(server.busy() - mock_before)));
        if [1, 10, 100, 250, 500, 750, turns].contains(&n) {
            rss_marks.push((n, status_kib(pid, "VmRSS")));
        }
    }
    pty.type_text("what was the codename of the first task?");
    pty.send(b"\r");
    let screen = pty.wait_for("the last answer", Duration::from_secs(120), |s| {
        s.contains("The codename was") || s.contains("I do not know")
    });
    let remembered = screen.contains(&format!("The codename was {CODENAME}"));
    let peak = status_kib(pid, "VmHWM");
    pty.send(b"\x04");
    let _ = pty.wait_exit(Duration::from_secs(10));

    let observed = observed.lock().unwrap();
    println!("long session, {turns} turns in the full-screen UI:");
    println!(
        "  peak RSS {:.1} MiB (target ≤ 60 MiB); RSS at turn {}",
        peak as f64 / 1024.0,
        rss_marks
            .iter()
            .map(|(n, kib)| format!("{n}: {:.1} MiB", *kib as f64 / 1024.0))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut stretches = Vec::new();
    let mut from = 10.min(turns);
    while from < turns {
        let to = (from + 100).min(turns);
        let median = |pick: fn(&(Duration, Duration)) -> Duration| {
            let mut part: Vec<Duration> = times[from..to].iter().map(pick).collect();
            part.sort();
            part[part.len() / 2].as_secs_f64() * 1000.0
        };
        stretches.push(format!(
            "{}–{}: {:.1} ms ({:.1} without the mock's own parsing)",
            from + 1,
            to,
            median(|t| t.0),
            median(|t| t.1)
        ));
        from = to;
    }
    println!(
        "  per-turn time (Enter to answer on screen), median by stretch: {}",
        stretches.join("; ")
    );
    println!(
        "  compactions: {} — {}",
        observed.summaries,
        observed
            .compactions
            .iter()
            .map(|(before, after)| match after {
                Some(after) => format!("{}k → {}k tokens", before / 1000, after / 1000),
                None => format!("{}k → ?", before / 1000),
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "  the first task's codename reached each summary request: {:?}; the last question was answered from the summary: {}",
        observed.codename_in_summary_request, remembered
    );
}

/// What the mock model answers.
fn respond(request: &RecordedRequest, observed: &Mutex<Observed>) -> MockResponse {
    let body = &request.body;
    let chars = body.to_string().len();
    let mut seen = observed.lock().unwrap();
    if system_text(body).contains("summarizing conversations") {
        let carried = body.to_string().contains(CODENAME);
        seen.summaries += 1;
        seen.codename_in_summary_request.push(carried);
        let before = seen.last_request_chars / 4;
        seen.compactions.push((before, None));
        let summary = if carried {
            format!(
                "1. The user's first task had the codename {CODENAME}. 2. Every turn reads big.txt. 6. Current state: reading big.txt again."
            )
        } else {
            "1. The user reads big.txt every turn. 6. Current state: reading big.txt again."
                .to_string()
        };
        return text_turn(&summary);
    }
    if let Some((_, after @ None)) = seen.compactions.last_mut() {
        *after = Some(chars / 4);
    }
    seen.last_request_chars = chars;
    drop(seen);
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let prompt = messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| texts(&m["content"]))
        .find(|t| t.starts_with("turn ") || t.starts_with("what was the codename"))
        .unwrap_or_default();
    if prompt.starts_with("what was the codename") {
        return if body.to_string().contains(CODENAME) {
            text_turn(&format!("The codename was {CODENAME}."))
        } else {
            text_turn("I do not know.")
        };
    }
    let n: usize = prompt
        .strip_prefix("turn ")
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let answered_tool = last["content"]
        .as_array()
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"));
    if answered_tool {
        text_turn(&format!("done {n}."))
    } else {
        tool_turn(
            None,
            &[(
                &format!("toolu_{n:05}"),
                "Bash",
                serde_json::json!({"command": "cat big.txt", "description": "read big.txt"}),
            )],
        )
    }
}

fn texts(content: &Value) -> Vec<String> {
    match content {
        Value::String(s) => vec![s.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}
