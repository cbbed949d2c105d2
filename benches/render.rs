//! Frame time with a 100k-line transcript while a long answer streams (DESIGN §12:
//! ≤ 4 ms per frame).
//!
//! `cargo bench --bench render`. Builds a transcript of ~100,000 rows at 120 columns
//! (prompts, markdown answers with code and tables, tool calls with previews and diffs),
//! then streams a 2,000-line answer in 8-byte deltas, drawing a 120×50 frame into a
//! ratatui buffer after every delta. Prints the median, p99 and worst frame, plus the
//! one-off costs: building, the first frame, a resize to 80 columns, the first scroll
//! after it (the only time every cell is measured), and a frame scrolled to the middle.

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use robota::core::ToolDisplay;
use robota::sdk::{SessionEvent, Submission, SubmissionId};
use robota::tui::markdown::highlight;
use robota::tui::theme::Theme;
use robota::tui::transcript::Transcript;
use serde_json::json;

const WIDTH: u16 = 120;
const HEIGHT: u16 = 50;
const TARGET_ROWS: usize = 100_000;

fn answer(i: usize) -> String {
    format!(
        "Here is what I found in **module {i}**: the function `run_{i}` handles the request, \
         then hands it to the scheduler, which is why the test fails.\n\n\
         1. read the config\n2. validate it\n   - check the paths\n   - check the limits\n3. start\n\n\
         ```rust\nfn run_{i}(cfg: &Config) -> Result<()> {{\n    let plan = cfg.plan()?;\n    plan.execute()\n}}\n```\n\n\
         | file | lines |\n|---|---:|\n| src/a.rs | {i} |\n| src/b.rs | 42 |\n\nDone.\n"
    )
}

fn add_turn(t: &mut Transcript, i: usize) {
    t.apply(&SessionEvent::SubmissionStarted {
        id: SubmissionId(1),
        submission: Submission::Prompt(format!("question number {i}: why does it fail?")),
    });
    t.apply(&SessionEvent::TextDelta(answer(i)));
    t.apply(&SessionEvent::ToolStarted {
        id: format!("t{i}"),
        name: "Bash".into(),
        input: json!({"command": format!("cargo test -p crate_{i}")}),
    });
    t.apply(&SessionEvent::ToolFinished {
        id: format!("t{i}"),
        name: "Bash".into(),
        input: json!({"command": format!("cargo test -p crate_{i}")}),
        content: (0..12).map(|k| format!("test case_{k} ... ok\n")).collect(),
        is_error: false,
        display: None,
        duration: Duration::from_millis(30),
    });
    t.apply(&SessionEvent::ToolFinished {
        id: format!("e{i}"),
        name: "Edit".into(),
        input: json!({"file_path": format!("src/m{i}.rs")}),
        content: "updated".into(),
        is_error: false,
        display: Some(ToolDisplay::FileDiff {
            file_path: format!("src/m{i}.rs"),
            before: Some("a\nb\nc\nd\n".into()),
            after: "a\nB\nc\nd\ne\n".into(),
        }),
        duration: Duration::from_millis(2),
    });
}

/// A transcript of about `TARGET_ROWS` rows at `WIDTH`, not laid out yet.
fn build() -> Transcript {
    let mut sample = Transcript::new(Theme::new(true));
    for i in 0..10 {
        add_turn(&mut sample, i);
    }
    let rows_per_turn = sample.total_height(WIDTH).div_ceil(10);
    let mut t = Transcript::new(Theme::new(true));
    for i in 0..TARGET_ROWS.div_ceil(rows_per_turn) {
        add_turn(&mut t, i);
    }
    t
}

fn stream_text(lines: usize) -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.lines().count() < lines {
        out.push_str(&answer(100_000 + i));
        out.push('\n');
        i += 1;
    }
    out
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    highlight::load_blocking();
    let started = Instant::now();
    let mut t = build();
    let built = started.elapsed();
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let mut buf = Buffer::empty(area);

    let first = Instant::now();
    t.render(area, &mut buf);
    let first_frame = first.elapsed();
    let rows = t.total_height(WIDTH);

    t.apply(&SessionEvent::SubmissionStarted {
        id: SubmissionId(1),
        submission: Submission::Prompt("explain everything in detail".to_string()),
    });
    let text = stream_text(2_000);
    let bytes = text.as_bytes();
    let mut frames = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let mut end = (start + 8).min(bytes.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let delta = SessionEvent::TextDelta(text[start..end].to_string());
        start = end;
        let frame = Instant::now();
        t.apply(&delta);
        t.render(area, &mut buf);
        frames.push(frame.elapsed());
    }
    let mut worst: Vec<(Duration, usize)> = frames.iter().copied().zip(0..).collect();
    worst.sort();
    let worst: Vec<String> = worst
        .iter()
        .rev()
        .take(5)
        .map(|(d, i)| format!("#{i} {:.2} ms", ms(*d)))
        .collect();
    let streamed_rows = t.total_height(WIDTH);
    frames.sort();

    let resize = Instant::now();
    let narrow = Rect::new(0, 0, 80, HEIGHT);
    let mut narrow_buf = Buffer::empty(narrow);
    t.render(narrow, &mut narrow_buf);
    let resize_frame = resize.elapsed();

    let scroll_after_resize = Instant::now();
    t.scroll_up(10);
    t.render(narrow, &mut narrow_buf);
    let first_scroll = scroll_after_resize.elapsed();

    t.render(area, &mut buf);
    t.scroll_to_top();
    t.scroll_down(streamed_rows / 2);
    let middle = Instant::now();
    t.render(area, &mut buf);
    let middle_frame = middle.elapsed();

    println!(
        "transcript: {} cells, {rows} rows at {WIDTH} columns (built in {:.0} ms)",
        t.len(),
        ms(built)
    );
    println!(
        "first frame (as after a resume; following needs no heights): {:.1} ms",
        ms(first_frame)
    );
    println!(
        "streaming a {}-line answer in {} deltas, one {WIDTH}x{HEIGHT} frame per delta:",
        text.lines().count(),
        frames.len()
    );
    println!(
        "  median {:.3} ms   p99 {:.3} ms   worst {:.3} ms   ({} rows at the end)",
        ms(percentile(&frames, 0.5)),
        ms(percentile(&frames, 0.99)),
        ms(percentile(&frames, 1.0)),
        streamed_rows
    );
    println!("  slowest frames: {}", worst.join(", "));
    println!(
        "resize to 80 columns (frame at the end): {:.1} ms",
        ms(resize_frame)
    );
    println!(
        "first scroll up after the resize (measures every cell): {:.1} ms",
        ms(first_scroll)
    );
    println!("frame scrolled to the middle: {:.3} ms", ms(middle_frame));
}
