//! Total markdown work for a long answer streamed in small deltas (DESIGN §12: linear in
//! the answer's length, not quadratic).
//!
//! `cargo bench --bench markdown`. For answers of 500, 1,000 and 5,000 source lines —
//! a realistic mix (headings, paragraphs, lists, code, tables, quotes), one 5,000-line
//! fenced code block, and one 5,000-item list — the text is pushed in 8-byte deltas and
//! rendered at 100 columns after every delta (one frame per delta, the worst case). It
//! prints the total time and the time per line; linear work shows as a flat per-line
//! figure. A naive renderer that re-parses the whole answer per delta is timed on the
//! small sizes for comparison.

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::time::{Duration, Instant};

use robota::tui::markdown::{StreamingMarkdown, highlight};
use robota::tui::theme::Theme;

const DELTA: usize = 8;
const WIDTH: u16 = 100;

/// One section of a typical answer: 25 source lines.
fn mixed_section(i: usize) -> String {
    format!(
        "## Step {i}\n\
         \n\
         This paragraph explains step {i} in **some** detail, with `inline code`, a [link](https://example.com/{i}) and enough words to wrap.\n\
         \n\
         - first point about {i}\n\
         - second point, 한국어와 日本語 included\n\
         - third point\n\
         \n\
         ```rust\n\
         fn step_{i}(x: u32) -> u32 {{\n\
         \x20   // double it\n\
         \x20   let y = x * 2;\n\
         \x20   y + {i}\n\
         }}\n\
         ```\n\
         \n\
         | key | value |\n\
         |-----|------:|\n\
         | a   | {i}   |\n\
         | b   | 42    |\n\
         \n\
         > A quoted remark on step {i}.\n\
         \n\
         Closing words.\n\
         \n"
    )
}

fn mixed(lines: usize) -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.lines().count() < lines {
        out.push_str(&mixed_section(i));
        i += 1;
    }
    out.lines().take(lines).map(|l| format!("{l}\n")).collect()
}

fn one_code_block(lines: usize) -> String {
    let mut out = String::from("```rust\n");
    for i in 0..lines.saturating_sub(2) {
        out.push_str(&format!(
            "    let value_{i} = compute({i}) + offset; // note {i}\n"
        ));
    }
    out.push_str("```\n");
    out
}

fn one_list(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("- item {i}: a tight list item with `code` and **bold**\n"))
        .collect()
}

fn deltas(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + DELTA).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// Streams `text` delta by delta, rendering after each; returns the elapsed time.
fn stream(text: &str) -> (Duration, usize) {
    let pieces = deltas(text);
    let start = Instant::now();
    let mut md = StreamingMarkdown::new(Theme::new(true));
    for piece in &pieces {
        md.push(piece);
        std::hint::black_box(md.render(WIDTH).len());
    }
    md.finish();
    let rows = md.render(WIDTH).len();
    (start.elapsed(), rows)
}

/// The quadratic baseline: re-render the whole source after every delta.
fn naive(text: &str) -> Duration {
    let pieces = deltas(text);
    let start = Instant::now();
    let mut source = String::new();
    for piece in &pieces {
        source.push_str(piece);
        let mut md = StreamingMarkdown::new(Theme::new(true));
        md.push(&source);
        std::hint::black_box(md.render(WIDTH).len());
    }
    start.elapsed()
}

fn best_of(runs: usize, f: impl Fn() -> (Duration, usize)) -> (Duration, usize) {
    (0..runs)
        .map(|_| f())
        .min_by_key(|(d, _)| *d)
        .unwrap_or((Duration::ZERO, 0))
}

fn main() {
    let started = Instant::now();
    highlight::load_blocking();
    println!(
        "syntax load: {:.1} ms (done once, off the first frame)",
        started.elapsed().as_secs_f64() * 1e3
    );
    for lang in ["rust", "python"] {
        let first = Instant::now();
        let mut h = highlight::LineHighlighter::new(lang, Default::default());
        if let Some(h) = &mut h {
            std::hint::black_box(h.line("fn main() { let x = \"s\"; } # x = 1"));
        }
        let first = first.elapsed();
        let again = Instant::now();
        if let Some(h) = &mut h {
            std::hint::black_box(h.line("fn other(y: u32) -> u32 { y * 2 } # y = 2"));
        }
        println!(
            "{lang}: first highlighted line {:.2} ms (regexes compile), next line {:.3} ms",
            first.as_secs_f64() * 1e3,
            again.elapsed().as_secs_f64() * 1e3
        );
    }
    println!("{DELTA}-byte deltas, a render at {WIDTH} columns after every delta\n");
    println!(
        "{:<14} {:>6} {:>9} {:>8} {:>11} {:>10} {:>8}",
        "answer", "lines", "bytes", "deltas", "total ms", "µs/line", "rows"
    );
    type Make = fn(usize) -> String;
    let cases: [(&str, Make); 3] = [
        ("mixed", mixed),
        ("one fence", one_code_block),
        ("one list", one_list),
    ];
    for (name, make) in cases {
        for lines in [500, 1_000, 5_000] {
            let text = make(lines);
            let (elapsed, rows) = best_of(3, || stream(&text));
            println!(
                "{name:<14} {lines:>6} {:>9} {:>8} {:>11.1} {:>10.2} {rows:>8}",
                text.len(),
                deltas(&text).len(),
                elapsed.as_secs_f64() * 1e3,
                elapsed.as_secs_f64() * 1e6 / lines as f64,
            );
        }
    }
    println!("\nnaive (re-render everything per delta), for contrast:");
    for lines in [500, 1_000] {
        let text = mixed(lines);
        let elapsed = naive(&text);
        println!(
            "{:<14} {lines:>6} {:>9} {:>8} {:>11.1} {:>10.2}",
            "mixed/naive",
            text.len(),
            deltas(&text).len(),
            elapsed.as_secs_f64() * 1e3,
            elapsed.as_secs_f64() * 1e6 / lines as f64,
        );
    }
}
