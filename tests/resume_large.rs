//! End to end: resuming a large session log costs its live part. A log with compaction
//! boundaries resumes with exactly the history after the last one (what the mock receives
//! is checked), while `/export` still shows the older turns and a rewind to a live message
//! works; a log far larger than the context window with no boundary at all resumes with its
//! newest turns behind a notice, records that as a boundary, and the next resume (and a
//! fork) starts there without a new notice.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::Value;
use support::big_log::{grow, prompt, summary};
use support::project::{Project, log_lines, project};
use support::{MockServer, anthropic};

/// The `prompt-NNNNNN` markers a request's messages carry, in order.
fn prompts_sent(body: &Value) -> Vec<String> {
    let text = body["messages"].to_string();
    let mut found = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("prompt-") {
        let marker = &rest[at..(at + 13).min(rest.len())];
        if marker[7..].bytes().all(|b| b.is_ascii_digit()) && marker.len() == 13 {
            found.push(marker.to_string());
        }
        rest = &rest[at + 7..];
    }
    found
}

/// Runs `robota -p seed` so the project has a session log, and returns its path.
fn seeded(p: &Project, server: &MockServer) -> std::path::PathBuf {
    let out = p.run(server, &["-p", "seed"]);
    assert!(
        out.status.success(),
        "{}",
        support::project::output_text(&out)
    );
    p.session_logs().pop().unwrap()
}

fn success(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        support::project::output_text(out)
    );
}

#[test]
fn a_log_with_boundaries_resumes_with_exactly_its_live_history() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("seeded"),
        anthropic::text_turn("resumed"),
        anthropic::text_turn("rewound"),
    ]);
    let log = seeded(&p, &server);
    let grown = grow(&log, 600_000, 3, 2_000);
    assert!(grown.first_live_turn > 0 && grown.first_live_turn < grown.turns);

    success(&p.run(&server, &["-c", "-p", "next"]));
    let request = &server.requests()[1].body;
    let live: Vec<String> = (grown.first_live_turn..grown.turns).map(prompt).collect();
    assert_eq!(prompts_sent(request), live);
    let sent = request["messages"].to_string();
    assert!(
        sent.contains(&summary(2)),
        "the last summary leads the history"
    );
    assert!(
        !sent.contains(&summary(1)) && !sent.contains("seed"),
        "{sent:.300}"
    );
    assert!(sent.contains("next"));

    // Older turns are still there when asked for: the export reads the whole log.
    let out = p.run(&server, &["-c", "-p", "/export"]);
    success(&out);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("seed") && shown.contains(&prompt(0)),
        "{shown:.300}"
    );

    // A rewind to a live message works from the resumed history.
    let answer = format!("answer-{:06}", grown.first_live_turn);
    let at = log_lines(&log)
        .into_iter()
        .find(|l| l["type"] == "assistant" && l["message"]["content"].to_string().contains(&answer))
        .unwrap()["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    success(&p.run(&server, &["-c", "--resume-session-at", &at, "-p", "again"]));
    let request = &server.requests()[2].body;
    assert_eq!(prompts_sent(request), vec![prompt(grown.first_live_turn)]);
    let sent = request["messages"].to_string();
    assert!(sent.contains(&summary(2)) && sent.contains("again") && !sent.contains("next"));
}

#[test]
fn a_log_too_large_for_the_window_resumes_its_newest_turns_behind_a_notice() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("seeded"),
        anthropic::text_turn("resumed"),
        anthropic::text_turn("again"),
        anthropic::text_turn("forked"),
    ]);
    let log = seeded(&p, &server);
    let grown = grow(&log, 3_000_000, 0, 4_000);

    let out = p.run(&server, &["-c", "-p", "next"]);
    success(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("more than the context window holds: the newest"),
        "{stderr}"
    );
    let request = &server.requests()[1].body;
    let sent = prompts_sent(request);
    let newest = prompt(grown.turns - 1);
    assert_eq!(sent.last(), Some(&newest));
    assert!(sent.len() > 10 && !sent.contains(&prompt(0)), "{sent:?}");
    let text = request["messages"].to_string();
    assert!(text.contains("did not fit the context window") && text.contains("next"));
    // What was sent (about half the 200K window by chars/4, its JSON escaping aside)
    // leaves the window room to work and to compact.
    assert!(text.len() / 4 < 120_000, "{} chars sent", text.len());
    let boundaries: Vec<Value> = log_lines(&log)
        .into_iter()
        .filter(|l| l["event"] == "compact_boundary")
        .collect();
    assert_eq!(boundaries.len(), 1);
    assert_eq!(boundaries[0]["trigger"], "resume");

    // The next resume starts at that boundary: the same history, no second notice.
    let out = p.run(&server, &["-c", "-p", "again"]);
    success(&out);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("context window holds"));
    let request = &server.requests()[2].body;
    assert_eq!(prompts_sent(request), sent);
    let text = request["messages"].to_string();
    assert_eq!(text.matches("did not fit the context window").count(), 1);
    assert!(text.contains("next") && text.contains("again"));

    // A fork of it (copied line by line) resumes the same way.
    success(&p.run(&server, &["-c", "--fork-session", "-p", "forked"]));
    let request = &server.requests()[3].body;
    assert_eq!(prompts_sent(request), sent);
    assert!(request["messages"].to_string().contains("forked"));
    assert_eq!(p.session_logs().len(), 2);
}
