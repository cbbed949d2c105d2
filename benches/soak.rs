//! The memory budget (issue 27): `BENCH_TURNS` (default 10,000) turns through one headless
//! session — the release binary as `robota -p --input-format stream-json --output-format
//! stream-json`, one user line per turn on stdin — against a loopback mock model. Each turn
//! is a prompt, a `Bash` call whose 5 KB output goes back to the model, and an answer, so
//! the context fills and auto-compaction runs about every 125 turns.
//!
//! Reported per 1,000 turns: peak RSS so far (`VmHWM` of `/proc/<pid>/status`), RSS at the
//! stretch's end, CPU per turn (`utime + stime` of `/proc/<pid>/stat`, the stretch's mean) and
//! the compactions in it; then RSS just before and just after the compactions (mean),
//! whether the budget held (≤ 40 MiB at every point, per-turn CPU flat within 10 %), and
//! the CPU trend (the last stretches against the first: growth, not the machine's noise).
//!
//! `cargo build --release && cargo bench --bench soak` (`BENCH_TURNS=2000` to shorten;
//! `SOAK_BINARY=path` measures another build).

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;

use serde_json::{Value, json};
use support::anthropic::{system_text, text_turn, tool_turn};
use support::process::status_kib;
use support::{MockResponse, MockServer, RecordedRequest};

const STRETCH: usize = 1_000;
const BUDGET_MIB: f64 = 40.0;

/// What one turn cost and what it did.
struct Turn {
    cpu_ms: f64,
    compacted: bool,
    rss_kib: u64,
}

fn main() {
    let turns: usize = std::env::var("BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let binary = release_binary();
    if !binary.exists() {
        println!(
            "soak: build the release binary first (cargo build --release): {}",
            binary.display()
        );
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let project = work.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let line = "0123456789 abcdefghij ABCDEFGHIJ the quick brown fox jumps over\n";
    std::fs::write(project.join("five_kb.txt"), line.repeat(80)).unwrap();
    let server = MockServer::start_responder(Arc::new(respond));

    let mut child = Command::new(&binary)
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            "Bash",
        ])
        .current_dir(&project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", work.path())
        .env("ROBOTA_HOME", work.path().join("robota-home"))
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-bench-key-0000000000000000")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());

    let started = std::time::Instant::now();
    let mut record = Vec::with_capacity(turns);
    let mut before_compaction = Vec::new();
    let mut after_compaction = Vec::new();
    for n in 1..=turns {
        let cpu_before = cpu_ticks(pid);
        let compacted = one_turn(&mut stdin, &mut stdout, n);
        let cpu_ms = (cpu_ticks(pid) - cpu_before) as f64 * 1000.0 / ticks_per_second();
        let rss_kib = status_kib(pid, "VmRSS");
        if compacted {
            if let Some(previous) = record.last().map(|t: &Turn| t.rss_kib) {
                before_compaction.push(previous);
            }
            after_compaction.push(rss_kib);
        }
        record.push(Turn {
            cpu_ms,
            compacted,
            rss_kib,
        });
        if n % STRETCH == 0 {
            eprintln!(
                "soak: {n} turns, {:.0} s, RSS {:.1} MiB",
                started.elapsed().as_secs_f64(),
                rss_kib as f64 / 1024.0
            );
        }
    }
    let peak_kib = status_kib(pid, "VmHWM");
    drop(stdin);
    finish(&mut child);
    report(&record, peak_kib, &before_compaction, &after_compaction);
    println!("  wall time {:.0} s", started.elapsed().as_secs_f64());
}

/// `SOAK_BINARY`, else the release binary of this target directory.
fn release_binary() -> PathBuf {
    if let Ok(path) = std::env::var("SOAK_BINARY") {
        return PathBuf::from(path);
    }
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("release/robota")
}

/// Sends turn `n` and reads up to its `result`; whether a compaction happened in it.
fn one_turn(stdin: &mut ChildStdin, stdout: &mut BufReader<ChildStdout>, n: usize) -> bool {
    let prompt = format!("turn {n}: look at five_kb.txt again");
    let line = json!({"type": "user", "message": {"role": "user", "content": prompt}});
    writeln!(stdin, "{line}").unwrap();
    stdin.flush().unwrap();
    let mut compacted = false;
    let mut text = String::new();
    loop {
        text.clear();
        let read = stdout.read_line(&mut text).unwrap();
        assert!(read > 0, "robota ended before turn {n}'s result");
        let Ok(message) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if message["subtype"] == "compact_boundary" {
            compacted = true;
        }
        if message["type"] == "result" {
            assert_eq!(message["is_error"], false, "turn {n}: {message}");
            assert_eq!(message["result"], format!("done {n}."), "turn {n}");
            return compacted;
        }
    }
}

fn finish(child: &mut Child) {
    let status = child.wait().unwrap();
    assert!(status.success(), "robota exited with {status}");
}

fn report(record: &[Turn], peak_kib: u64, before: &[u64], after: &[u64]) {
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "soak, {} turns through one `robota -p` stream-json session (5 KB tool result each):",
        record.len()
    );
    let mut means = Vec::new();
    let mut peak_so_far = 0;
    for (i, stretch) in record.chunks(STRETCH).enumerate() {
        // Clock ticks are 10 ms: only a stretch's mean says anything.
        let mean = stretch.iter().map(|t| t.cpu_ms).sum::<f64>() / stretch.len() as f64;
        means.push(mean);
        peak_so_far = stretch
            .iter()
            .map(|t| t.rss_kib)
            .fold(peak_so_far, u64::max);
        println!(
            "  turns {:>5}–{:>5}: max RSS {:.1} MiB, RSS at end {:.1} MiB, CPU/turn {:.2} ms, {} compactions",
            i * STRETCH + 1,
            i * STRETCH + stretch.len(),
            mib(peak_so_far),
            mib(stretch.last().map_or(0, |t| t.rss_kib)),
            mean,
            stretch.iter().filter(|t| t.compacted).count()
        );
    }
    let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len().max(1) as f64 / 1024.0;
    println!(
        "  RSS around a compaction (mean of {}): {:.1} MiB before → {:.1} MiB after",
        after.len(),
        mean(before),
        mean(after)
    );
    let (low, high) = means
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), m| (l.min(*m), h.max(*m)));
    let spread = if low > 0.0 {
        (high - low) / low * 100.0
    } else {
        0.0
    };
    println!(
        "  peak RSS (VmHWM) {:.1} MiB (budget ≤ {BUDGET_MIB} MiB: {}); CPU/turn by stretch within {:.0} % (goal ≤ 10 %)",
        mib(peak_kib),
        if mib(peak_kib) <= BUDGET_MIB {
            "held"
        } else {
            "exceeded"
        },
        spread
    );
    // The spread mixes growth with the machine's own noise; the trend says whether a late
    // turn costs more than an early one.
    let ends = (means.len() / 2).min(2);
    if ends > 0 {
        let average = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let first = average(&means[..ends]);
        let last = average(&means[means.len() - ends..]);
        println!(
            "  CPU/turn trend: the last {ends} stretches against the first {ends}: {:+.1} %",
            (last - first) / first * 100.0
        );
    }
}

/// What the mock model answers: a summary request gets a summary, a prompt the `Bash`
/// call, a tool result "done N.".
fn respond(request: &RecordedRequest) -> MockResponse {
    let body = &request.body;
    if system_text(body).contains("summarizing conversations") {
        return text_turn(
            "1. The user reads five_kb.txt every turn. 6. Current state: reading it again.",
        );
    }
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let answered_tool = last["content"]
        .as_array()
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"));
    let n = turn_number(messages);
    if answered_tool {
        text_turn(&format!("done {n}."))
    } else {
        tool_turn(
            None,
            &[(
                &format!("toolu_{n:05}"),
                "Bash",
                json!({"command": "cat five_kb.txt", "description": "read five_kb.txt"}),
            )],
        )
    }
}

/// The number of the latest "turn N:" prompt in the request.
fn turn_number(messages: &[Value]) -> usize {
    messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| match &m["content"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        })
        .find_map(|t| {
            t.strip_prefix("turn ")
                .and_then(|rest| rest.split(':').next())
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// `utime + stime` of `/proc/<pid>/stat`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at ") ".
    let rest = stat.rsplit_once(") ").map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line: 11 and 12 counted from the state.
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

/// The clock ticks of `/proc/<pid>/stat` per second (the usual 100 where there is no
/// `sysconf`).
#[cfg(not(unix))]
fn ticks_per_second() -> f64 {
    100.0
}

#[cfg(unix)]
fn ticks_per_second() -> f64 {
    // SAFETY: sysconf reads a configuration value and has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as f64 } else { 100.0 }
}
