//! Frame time for pathological input (issue 27, item 6: each frame under 16 ms): a
//! 100 KB single-line code block streamed in, a 1 MB minified file returned by Read, and a
//! markdown table 5,000 columns wide. Each case is applied to a fresh transcript and drawn
//! into a 120×50 ratatui buffer; the streamed case draws after every 4 KB delta. Prints
//! the first frame, the median and the worst frame of each case, and the frames drawn
//! scrolled to the middle of the content.
//!
//! `cargo bench --bench pathological`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use robota::sdk::{SessionEvent, Submission, SubmissionId};
use robota::tui::markdown::highlight;
use robota::tui::theme::Theme;
use robota::tui::transcript::Transcript;
use serde_json::json;

const WIDTH: u16 = 120;
const HEIGHT: u16 = 50;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn prompt(t: &mut Transcript, text: &str) {
    t.apply(&SessionEvent::SubmissionStarted {
        id: SubmissionId(1),
        submission: Submission::Prompt(text.to_string()),
    });
}

/// One line of minified JavaScript, `bytes` long.
fn minified(bytes: usize) -> String {
    let unit = "function a(b,c){return b.map(d=>d*c).filter(e=>e>1e3&&\"x\"!==e)};var f=[1,2,3];";
    unit.repeat(bytes / unit.len() + 1)[..bytes].to_string()
}

/// A markdown table of 3 rows whose cells add up to about `columns` characters a row.
fn wide_table(columns: usize) -> String {
    let cells = columns / 10;
    let row = |word: &str| {
        let mut line = String::from("|");
        for i in 0..cells {
            line.push_str(&format!(" {word}{i:04} |"));
        }
        line.push('\n');
        line
    };
    let mut table = row("head");
    table.push('|');
    table.push_str(&"---|".repeat(cells));
    table.push('\n');
    table.push_str(&row("cell"));
    table.push_str(&row("more"));
    table
}

/// Draws `t` once at the bottom and once scrolled to the middle; returns both times.
fn frames(t: &mut Transcript, area: Rect, buf: &mut Buffer) -> (Duration, Duration) {
    let bottom = Instant::now();
    t.render(area, buf);
    let bottom = bottom.elapsed();
    let rows = t.total_height(area.width);
    t.scroll_up(rows / 2);
    let middle = Instant::now();
    t.render(area, buf);
    let middle = middle.elapsed();
    t.scroll_to_bottom();
    (bottom, middle)
}

fn report(case: &str, mut times: Vec<Duration>, middle: Duration) {
    let first = times.first().copied().unwrap_or_default();
    times.sort();
    let median = times[times.len() / 2];
    let worst = times.last().copied().unwrap_or_default();
    println!(
        "{case:<42} frames {:>4}  first {:>7.2} ms  median {:>7.2} ms  worst {:>7.2} ms  scrolled {:>7.2} ms",
        times.len(),
        ms(first),
        ms(median),
        ms(worst),
        ms(middle)
    );
}

fn main() {
    highlight::load_blocking();
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let mut buf = Buffer::empty(area);

    // A 100 KB code block on one line, streamed in 4 KB deltas.
    let mut t = Transcript::new(Theme::new(true));
    prompt(&mut t, "print the bundle");
    let text = format!("```js\n{}\n```\n", minified(100 * 1024));
    let mut times = Vec::new();
    for chunk in text.as_bytes().chunks(4096) {
        t.apply(&SessionEvent::TextDelta(
            String::from_utf8_lossy(chunk).into_owned(),
        ));
        let frame = Instant::now();
        t.render(area, &mut buf);
        times.push(frame.elapsed());
    }
    let (_, middle) = frames(&mut t, area, &mut buf);
    report("100 KB single-line code block (streamed)", times, middle);

    // A Read of a 1 MB minified file.
    let mut t = Transcript::new(Theme::new(true));
    prompt(&mut t, "read the bundle");
    let input = json!({"file_path": "dist/app.min.js"});
    t.apply(&SessionEvent::ToolStarted {
        id: "r1".into(),
        name: "Read".into(),
        input: input.clone(),
    });
    let applied = Instant::now();
    t.apply(&SessionEvent::ToolFinished {
        id: "r1".into(),
        name: "Read".into(),
        input,
        content: format!("     1\t{}\n", minified(1024 * 1024)),
        is_error: false,
        display: None,
        duration: Duration::from_millis(3),
    });
    let applied = applied.elapsed();
    let (bottom, middle) = frames(&mut t, area, &mut buf);
    report(
        "1 MB minified file read",
        vec![applied + bottom, bottom],
        middle,
    );

    // A table 5,000 columns wide, in an answer.
    let mut t = Transcript::new(Theme::new(true));
    prompt(&mut t, "tabulate everything");
    let applied = Instant::now();
    t.apply(&SessionEvent::TextDelta(format!(
        "Here it is:\n\n{}\nDone.\n",
        wide_table(5_000)
    )));
    let applied = applied.elapsed();
    let (bottom, middle) = frames(&mut t, area, &mut buf);
    report("5,000-column table", vec![applied + bottom, bottom], middle);
}
