//! Resuming large session logs (issue 27): generated 25 MB and 100 MB logs (turns of a
//! prompt, a `Read` call, a 10 KB result and an answer, written through the real
//! `SessionLog`), with 9 compaction boundaries spread through them and with none.
//!
//! Reported per log, each the median of `BENCH_RUNS` (default 5) runs:
//! - `-p`: the real release binary, `robota -c -p next` against a loopback mock: the time
//!   from spawn to the mock receiving the first request, and the process's peak RSS
//!   (`wait4` rusage). A log without boundaries is put back as generated before each run
//!   (a resume records its cut as a boundary, which would make later runs cheap);
//! - UI (logs with boundaries): `robota -c` in a 120×40 pseudo-terminal, the time until the
//!   newest answer is on screen and its peak RSS (`VmHWM`);
//! - UI, then: Home (the top of the transcript), until the newest answer before the last
//!   boundary is on screen — the first page of older history read off the UI thread and
//!   drawn above — and the peak RSS after;
//! - library: the old whole-file `replay` against the new `resume`, each alone in a fresh
//!   process (time and peak RSS), the before and after of the read itself; for logs with
//!   boundaries also a resume followed by its first page of older history (2,000
//!   messages, what one scroll to the top reads), and by every page back to the start.
//!
//! Goal: a 100 MB log with boundaries opens (first request; first frame) in ≤ 150 ms with
//! ≤ 40 MiB; a 100 MB log without boundaries resumes at all.
//!
//! `cargo bench --bench resume_large` (`BENCH_SIZES_MB=25` for a quicker run,
//! `BENCH_BOUNDARIES=9` for the logs with boundaries only).

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;
use support::big_log::grow;
use support::process::status_kib;
use support::pty::PtySession;
use support::{MockServer, RecordedRequest, anthropic};

const WINDOW: u64 = 200_000;
const RESULT_BYTES: usize = 10_000;
/// Messages the UI reads per scroll to the top of a resumed transcript.
const OLDER_PAGE: usize = 2_000;

fn main() {
    if let Ok(path) = std::env::var("RESUME_BENCH_READ") {
        read_in_this_process(Path::new(&path));
        return;
    }
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_robota"));
    let runs: usize = env_or("BENCH_RUNS", 5);
    let sizes: Vec<u64> = std::env::var("BENCH_SIZES_MB")
        .unwrap_or_else(|_| "25,100".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    println!(
        "resume_large: {runs} runs each, medians; binary {}",
        binary.display()
    );
    let boundary_counts: Vec<usize> = std::env::var("BENCH_BOUNDARIES")
        .unwrap_or_else(|_| "9,0".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    for size in sizes {
        for &boundaries in &boundary_counts {
            bench_log(&binary, size, boundaries, runs);
        }
    }
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The child of the library figures: reads the log the old or the new way (or resumes it
/// and reads its older history: the first page the UI loads, or every page), then exits.
fn read_in_this_process(path: &Path) {
    let way = std::env::var("RESUME_BENCH_WAY").unwrap_or_default();
    let messages = match way.as_str() {
        "replay" => robota::session::replay::replay(path)
            .unwrap()
            .messages
            .len(),
        "older-page" | "older-all" => {
            let resumed = robota::session::replay::resume(path, WINDOW).unwrap();
            let mut next = resumed.older;
            let mut read = 0;
            while let Some(older) = next {
                let page = older.read_page(OLDER_PAGE).unwrap();
                read += page.messages.len();
                next = page.rest.filter(|_| way == "older-all");
            }
            read
        }
        _ => robota::session::replay::resume(path, WINDOW)
            .unwrap()
            .messages
            .len(),
    };
    assert!(messages > 0);
}

/// A project, its `ROBOTA_HOME`, a mock that notes when each request arrives.
struct Bench {
    _work: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
    server: MockServer,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Bench {
    fn new() -> Bench {
        let work = tempfile::tempdir().unwrap();
        let project = work.path().join("project");
        let home = work.path().join("robota-home");
        std::fs::create_dir_all(&project).unwrap();
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let seen = arrivals.clone();
        let server = MockServer::start_responder(Arc::new(move |_: &RecordedRequest| {
            seen.lock().unwrap().push(Instant::now());
            anthropic::text_turn("ok")
        }));
        Bench {
            _work: work,
            project,
            home,
            server,
            arrivals,
        }
    }

    fn command(&self, binary: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(binary);
        cmd.args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self._work.path())
            .env("ROBOTA_HOME", &self.home)
            .env("ANTHROPIC_BASE_URL", self.server.base_url())
            .env("ANTHROPIC_API_KEY", "sk-ant-bench-key-0000000000000000")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    }

    fn log(&self) -> PathBuf {
        let projects = std::fs::read_dir(self.home.join("projects")).unwrap();
        let dir = projects.flatten().next().unwrap().path();
        let mut logs = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path());
        logs.find(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .unwrap()
    }
}

fn bench_log(binary: &Path, size_mb: u64, boundaries: usize, runs: usize) {
    let bench = Bench::new();
    let status = bench.command(binary, &["-p", "seed"]).status().unwrap();
    assert!(status.success());
    let log = bench.log();
    let (firsts, peaks) = first_requests(binary, &bench, None, runs);
    report("-p first request, tiny log", &firsts, &peaks);
    let generated = Instant::now();
    let grown = grow(&log, size_mb * 1_000_000, boundaries, RESULT_BYTES);
    let pristine = log.with_extension("pristine");
    std::fs::copy(&log, &pristine).unwrap();
    println!(
        "\n{:.1} MB log, {} turns, {boundaries} boundaries (generated in {:.1} s)",
        grown.bytes as f64 / 1e6,
        grown.turns,
        generated.elapsed().as_secs_f64()
    );
    library_figures(&log, runs, boundaries > 0);
    let (firsts, peaks) = first_requests(binary, &bench, Some((&pristine, &log)), runs);
    report("-p first request", &firsts, &peaks);
    if boundaries > 0 {
        std::fs::copy(&pristine, &log).unwrap();
        let newest = format!("answer-{:06}", grown.turns - 1);
        let newest_older = format!("answer-{:06}", grown.first_live_turn - 1);
        ui_figures(binary, &bench, (&newest, &newest_older), runs);
    }
}

/// `robota -c -p next`, `runs` times (the log put back from `restore.0` to `restore.1`
/// first): the times from spawn to the first request, and the peak RSS of each run.
fn first_requests(
    binary: &Path,
    bench: &Bench,
    restore: Option<(&Path, &Path)>,
    runs: usize,
) -> (Vec<Duration>, Vec<u64>) {
    let mut firsts = Vec::new();
    let mut peaks = Vec::new();
    for _ in 0..runs {
        if let Some((pristine, log)) = restore {
            std::fs::copy(pristine, log).unwrap();
        }
        let before = bench.arrivals.lock().unwrap().len();
        let started = Instant::now();
        let child = bench
            .command(binary, &["-c", "-p", "next"])
            .spawn()
            .unwrap();
        let (ok, peak_kib) = wait_with_peak(child);
        let arrivals = bench.arrivals.lock().unwrap();
        match arrivals.get(before) {
            Some(at) if ok => firsts.push(*at - started),
            _ => println!("  -p run failed (exit not 0 or no request)"),
        }
        peaks.push(peak_kib);
    }
    (firsts, peaks)
}

/// The old whole-file `replay` and the new `resume`, each in a fresh process; with
/// `older`, also a resume and then its first page of older history, or all of it.
fn library_figures(log: &Path, runs: usize, older: bool) {
    let exe = std::env::current_exe().unwrap();
    let ways: &[&str] = if older {
        &["replay", "resume", "older-page", "older-all"]
    } else {
        &["replay", "resume"]
    };
    for way in ways {
        let mut times = Vec::new();
        let mut peaks = Vec::new();
        for _ in 0..runs {
            let started = Instant::now();
            let child = Command::new(&exe)
                .env("RESUME_BENCH_READ", log)
                .env("RESUME_BENCH_WAY", way)
                .spawn()
                .unwrap();
            let (ok, peak) = wait_with_peak(child);
            assert!(ok, "{way} failed");
            times.push(started.elapsed());
            peaks.push(peak);
        }
        let label = match *way {
            "replay" => "library replay (before)",
            "resume" => "library resume (after)",
            "older-page" => "resume + 1st older page",
            _ => "resume + all older pages",
        };
        report(label, &times, &peaks);
    }
}

/// `robota -c` in a pseudo-terminal: time until the newest answer is on screen, and peak
/// RSS; then Home (the top: older history is read off the UI thread) until the newest
/// older answer is on screen, and the peak RSS after.
fn ui_figures(binary: &Path, bench: &Bench, (newest, newest_older): (&str, &str), runs: usize) {
    let mut times = Vec::new();
    let mut peaks = Vec::new();
    let mut older_times = Vec::new();
    let mut older_peaks = Vec::new();
    for _ in 0..runs {
        let mut cmd = CommandBuilder::new(binary);
        cmd.arg("-c");
        cmd.cwd(&bench.project);
        cmd.env_clear();
        cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
        cmd.env("HOME", bench._work.path());
        cmd.env("ROBOTA_HOME", &bench.home);
        cmd.env("TERM", "xterm-256color");
        cmd.env("ANTHROPIC_BASE_URL", bench.server.base_url());
        cmd.env("ANTHROPIC_API_KEY", "sk-ant-bench-key-0000000000000000");
        let started = Instant::now();
        let mut pty = PtySession::spawn(cmd, 120, 40);
        pty.wait_for_text(newest);
        times.push(started.elapsed());
        peaks.push(status_kib(pty.pid(), "VmHWM"));
        let asked = Instant::now();
        pty.send(b"\x1b[H");
        pty.wait_for_text(newest_older);
        older_times.push(asked.elapsed());
        older_peaks.push(status_kib(pty.pid(), "VmHWM"));
        drop(pty);
    }
    report("UI newest answer on screen", &times, &peaks);
    report("UI Home → older page shown", &older_times, &older_peaks);
}

/// Waits for `child`: whether it exited 0, and no peak RSS (not read: Windows).
#[cfg(not(unix))]
fn wait_with_peak(mut child: Child) -> (bool, u64) {
    (child.wait().is_ok_and(|s| s.success()), 0)
}

/// Waits for `child` with `wait4`: whether it exited 0, and its peak RSS in KiB.
#[cfg(unix)]
fn wait_with_peak(child: Child) -> (bool, u64) {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child by pid; `status` and `usage` are live locals the call
    // writes into. The `Child` is dropped after, without being waited for again.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert!(pid > 0, "wait4 failed");
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    (ok, usage.ru_maxrss as u64)
}

fn median<T: Ord + Copy + Default>(mut samples: Vec<T>) -> T {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn report(what: &str, times: &[Duration], peaks_kib: &[u64]) {
    println!(
        "  {what:<28} {:>8.1} ms   peak RSS {:>6.1} MiB",
        median(times.to_vec()).as_secs_f64() * 1000.0,
        median(peaks_kib.to_vec()) as f64 / 1024.0
    );
}
