//! Long sessions (issue 9): what a checkpoint costs per turn, how long a big log takes to
//! resume, and how long the session picker's listing takes.
//!
//! `cargo bench --bench sessions`. Three figures, each the median of several runs (wall
//! time; the machine may be shared):
//! - checkpoint per turn on a 10,000-file project (100 directories of 100 files, plus an
//!   ignored build directory): the snapshot at the turn's start (taken while the model is
//!   asked; the turn's hooks and tool calls wait for it) plus the one at its end and the
//!   diff between them (which the turn waits for), when nothing changed (target ≤ 50 ms)
//!   and when the turn changed one file; the first (cold) snapshot is shown too;
//! - resume of a 25 MiB, 20,000-line log: `replay` (the history to send), then the
//!   transcript built from it and the first 120×40 frame drawn (target ≤ 200 ms);
//! - listing 1,000 sessions of a project for the picker (target ≤ 100 ms).

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use robota::core::{Block, Message, Role};
use robota::sdk::checkpoint::SnapshotStore;
use robota::session::log::{MessageExtra, SessionHeader, SessionLog};
use robota::session::replay::replay;
use robota::session::store::SessionStore;
use robota::tui::theme::Theme;
use robota::tui::transcript::Transcript;
use serde_json::json;

const RUNS: usize = 15;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// 100 directories of 100 small files, written a minute in the past (as a project is
/// between turns), and an ignored `target/`.
fn generate_project(root: &Path) -> usize {
    let past = SystemTime::now() - Duration::from_secs(60);
    let mut files = 0;
    for d in 0..100 {
        let dir = root.join(format!("src/module_{:02}/part_{}", d / 10, d % 10));
        fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let path = dir.join(format!("file_{f:03}.rs"));
            fs::write(
                &path,
                format!("// file {d}/{f}\npub fn f_{f}() -> u32 {{ {d} }}\n").repeat(8),
            )
            .unwrap();
            fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(past)
                .unwrap();
            files += 1;
        }
    }
    fs::create_dir_all(root.join("target/debug")).unwrap();
    for i in 0..2_000 {
        fs::write(root.join(format!("target/debug/obj_{i}.o")), "x").unwrap();
    }
    fs::write(root.join(".gitignore"), "target/\n").unwrap();
    files
}

fn checkpoints() {
    let temp = tempfile::tempdir().unwrap();
    let project = temp.path().join("project");
    let files = generate_project(&project);
    let mut store = SnapshotStore::new(temp.path().join("store"), project.clone());
    let started = Instant::now();
    let first = store.snapshot().unwrap();
    let cold = started.elapsed();
    assert_eq!(store.read_snapshot(&first.id).unwrap().len(), files + 1);

    // A turn: the start snapshot (taken while the model is asked: the turn's hooks and
    // tool calls wait for it, its request does not), then the end snapshot and the diff,
    // which the turn's end waits for.
    let turn = |store: &mut SnapshotStore, change: Option<usize>| {
        let started = Instant::now();
        let start = store.snapshot().unwrap();
        let start_took = started.elapsed();
        if let Some(i) = change {
            fs::write(
                project.join("src/module_03/part_4/file_007.rs"),
                format!("edit {i}\n"),
            )
            .unwrap();
        }
        let ended = Instant::now();
        let end = store.snapshot().unwrap();
        let changed = store.changed_between(&start.id, &end.id).unwrap();
        assert_eq!(changed.len(), usize::from(change.is_some()));
        (start_took, ended.elapsed())
    };
    let unchanged: Vec<(Duration, Duration)> = (0..RUNS).map(|_| turn(&mut store, None)).collect();
    let one_change: Vec<(Duration, Duration)> =
        (0..RUNS).map(|i| turn(&mut store, Some(i))).collect();
    let total = |v: &[(Duration, Duration)]| v.iter().map(|(a, b)| *a + *b).collect::<Vec<_>>();
    let end_only = |v: &[(Duration, Duration)]| v.iter().map(|(_, b)| *b).collect::<Vec<_>>();
    println!(
        "checkpoint, {files} files (+2,000 ignored): first snapshot {:.1} ms; per turn, nothing changed: both snapshots median {:.1} ms (worst {:.1} ms), of which the turn waits for the end snapshot and diff only: median {:.1} ms (target ≤ 50 ms; the start snapshot overlaps the model's first request); one file changed: both median {:.1} ms, end {:.1} ms",
        ms(cold),
        ms(median(total(&unchanged))),
        ms(*total(&unchanged).iter().max().unwrap()),
        ms(median(end_only(&unchanged))),
        ms(median(total(&one_change))),
        ms(median(end_only(&one_change))),
    );
}

/// A log of `lines` message lines of about `bytes` bytes in all: prompts, answers, tool
/// calls and their (large) results. The filler is sized from a probe log without it (the
/// lines' JSON envelope), so the log really is `bytes` long.
fn write_log(home: &Path, cwd: &Path, lines: usize, bytes: usize) -> std::path::PathBuf {
    let probe = tempfile::tempdir().unwrap();
    let probe_lines = 400;
    let envelope = fs::metadata(write_log_with(probe.path(), cwd, probe_lines, 0))
        .unwrap()
        .len() as usize
        / probe_lines;
    // Half the lines (tool results and answers) carry the filler.
    let filler = (bytes / lines).saturating_sub(envelope) * 2;
    write_log_with(home, cwd, lines, filler)
}

/// [`write_log`] with `filler` bytes of text in every tool result and answer.
fn write_log_with(home: &Path, cwd: &Path, lines: usize, filler: usize) -> std::path::PathBuf {
    let header = SessionHeader::new("bench-resume", cwd, "claude-sonnet-4-6", "anthropic");
    let log = SessionLog::create(home, &header).unwrap();
    let filler = |i: usize| {
        let unit = format!("line {i}: ");
        let mut text = unit.repeat(filler / unit.len() + 1);
        text.truncate(filler);
        text
    };
    let mut i = 0;
    while i < lines {
        let prompt = Message::user_text(format!("Prompt {i}: look at module {i}"));
        let call = Message::new(
            Role::Assistant,
            vec![
                Block::text(format!("Reading module {i}.")),
                Block::ToolUse {
                    id: format!("toolu_{i}"),
                    name: "Read".into(),
                    input: json!({"file_path": format!("/p/src/m{i}.rs")}),
                },
            ],
        );
        let result = Message::new(
            Role::User,
            vec![Block::ToolResult {
                tool_use_id: format!("toolu_{i}"),
                content: filler(i).into(),
                is_error: false,
            }],
        );
        let answer = Message::new(
            Role::Assistant,
            vec![Block::text(format!(
                "Module {i} does **this**:\n\n- one\n- two\n\n```rust\nfn m{i}() {{}}\n```\n{}",
                filler(i + 1)
            ))],
        );
        for m in [&prompt, &call, &result, &answer] {
            log.append_message(m, MessageExtra::default()).unwrap();
        }
        i += 4;
    }
    log.path().to_path_buf()
}

fn resume() {
    let temp = tempfile::tempdir().unwrap();
    let cwd = Path::new("/bench/project");
    let path = write_log(temp.path(), cwd, 20_000, 25 * 1024 * 1024);
    let size = fs::metadata(&path).unwrap().len();
    let wanted = 25.0 * 1024.0 * 1024.0;
    assert!(
        (size as f64 - wanted).abs() < wanted * 0.03,
        "the generated log is {size} bytes, not 25 MiB"
    );
    let line_count = fs::read_to_string(&path).unwrap().lines().count();
    let mut replays = Vec::new();
    let mut frames = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let replayed = replay(&path).unwrap();
        replays.push(started.elapsed());
        let mut transcript = Transcript::new(Theme::new(true));
        transcript.replay(&replayed.messages);
        let area = Rect::new(0, 0, 120, 40);
        let mut buf = Buffer::empty(area);
        transcript.render(area, &mut buf);
        frames.push(started.elapsed());
        assert_eq!(replayed.messages.len(), 20_000);
    }
    println!(
        "resume of a {:.1} MiB, {line_count}-line log: replay median {:.1} ms; replay + transcript + first 120x40 frame median {:.1} ms (target ≤ 200 ms)",
        size as f64 / (1024.0 * 1024.0),
        ms(median(replays)),
        ms(median(frames)),
    );
}

fn listing() {
    let temp = tempfile::tempdir().unwrap();
    let cwd = Path::new("/bench/project");
    for s in 0..1_000 {
        let header = SessionHeader::new(&format!("session-{s:04}"), cwd, "m", "anthropic");
        let log = SessionLog::create(temp.path(), &header).unwrap();
        for t in 0..10 {
            log.append_message(
                &Message::user_text(format!(
                    "prompt {t} of session {s}: {}",
                    "words ".repeat(40)
                )),
                MessageExtra::default(),
            )
            .unwrap();
            log.append_message(
                &Message::new(Role::Assistant, vec![Block::text("answer ".repeat(100))]),
                MessageExtra::default(),
            )
            .unwrap();
        }
        if s % 3 == 0 {
            log.append_rename(&format!("named {s}")).unwrap();
        }
    }
    let store = SessionStore::new(temp.path().to_path_buf());
    let samples: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let list = store.list(cwd);
            let took = started.elapsed();
            assert_eq!(list.len(), 1_000);
            took
        })
        .collect();
    println!(
        "listing 1,000 sessions for the picker: median {:.1} ms (target ≤ 100 ms)",
        ms(median(samples))
    );
}

fn main() {
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let run = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    if run("checkpoint") {
        checkpoints();
    }
    if run("resume") {
        resume();
    }
    if run("listing") {
        listing();
    }
}
