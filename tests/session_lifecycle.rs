//! End to end: what happens to session logs between runs. Two robota processes on one
//! session (the second is refused naming the first, or forks); a damaged log reported by
//! file and fault and left as it was; logs older than `cleanupPeriodDays` removed at start,
//! never the one being resumed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::fs::File;
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use support::project::project;
use support::{MockServer, anthropic};

#[test]
fn a_second_process_on_a_running_session_is_refused_or_forks() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("first"),
        anthropic::text_turn_held("a long answer that is still streaming", 4),
        anthropic::text_turn("from the fork"),
    ]);
    // A session to continue, then a run continuing it that is mid-answer.
    assert!(p.run(&server, &["-p", "start"]).status.success());
    let mut running = p
        .command(&server, &["-c", "-p", "go on at length"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(server.wait_for_requests(2, Duration::from_secs(20)));

    let second = p.run(&server, &["-c", "-p", "me too"]);
    assert_eq!(second.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains(&format!("another robota process (pid {})", running.id())),
        "{stderr}"
    );
    assert!(stderr.contains("--fork-session"), "{stderr}");
    assert_eq!(
        server.requests().len(),
        2,
        "the refused run reached the model"
    );

    let forked = p.run(&server, &["-c", "--fork-session", "-p", "me too"]);
    assert!(
        forked.status.success(),
        "{}",
        String::from_utf8_lossy(&forked.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&forked.stdout).trim(),
        "from the fork"
    );

    server.release_held();
    let first = running.wait().unwrap();
    assert!(first.success());
    // The original log holds its own turns only; the fork's went to a new log.
    let logs = p.session_logs();
    assert_eq!(logs.len(), 2, "{logs:?}");
    let with_me_too: Vec<_> = logs
        .iter()
        .filter(|l| std::fs::read_to_string(l).unwrap().contains("me too"))
        .collect();
    assert_eq!(with_me_too.len(), 1);
    let fork = std::fs::read_to_string(with_me_too[0]).unwrap();
    assert!(fork.contains("forkedFrom"), "{fork}");
}

/// The session id of a log path (`<id>.jsonl`).
fn id_of(path: &std::path::Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

fn make_old(path: &std::path::Path) {
    File::options()
        .append(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000))
        .unwrap();
}

#[test]
fn logs_older_than_cleanup_period_days_go_at_start_but_not_the_resumed_one() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("a"),
        anthropic::text_turn("b"),
        anthropic::text_turn("resumed"),
    ]);
    std::fs::create_dir_all(&p.home).unwrap();
    std::fs::write(p.home.join("settings.json"), r#"{"cleanupPeriodDays": 7}"#).unwrap();
    assert!(p.run(&server, &["-p", "one"]).status.success());
    assert!(p.run(&server, &["-p", "two"]).status.success());
    let logs = p.session_logs();
    assert_eq!(logs.len(), 2);
    for log in &logs {
        make_old(log);
    }
    let (resumed, other) = (&logs[0], &logs[1]);
    let out = p.run(&server, &["-r", &id_of(resumed), "-p", "three"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(resumed.exists(), "the resumed session was removed");
    assert!(!other.exists(), "an old session was kept");
}

#[test]
fn a_damaged_log_is_reported_by_file_and_fault_and_left_as_it_was() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("a")]);
    assert!(p.run(&server, &["-p", "one"]).status.success());
    let log = p.session_logs().remove(0);
    std::fs::write(&log, "").unwrap();
    let out = p.run(&server, &["-r", &id_of(&log), "-p", "again"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&log.display().to_string()), "{stderr}");
    assert!(stderr.contains("the file is empty"), "{stderr}");
    assert!(!stderr.contains("no session matches"), "{stderr}");
    assert_eq!(
        std::fs::metadata(&log).unwrap().len(),
        0,
        "the log was changed"
    );
    assert_eq!(server.requests().len(), 1);
}

/// The user texts of a request's messages, in order.
fn user_texts(body: &serde_json::Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect()
}

#[test]
fn resume_session_at_continues_from_that_message_and_the_log_remembers() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("A1"),
        anthropic::text_turn("A2"),
        anthropic::text_turn("A3"),
        anthropic::text_turn("A4"),
    ]);
    let out = p.run(
        &server,
        &["-p", "one", "--output-format", "stream-json", "--verbose"],
    );
    assert!(out.status.success());
    let first_answer: serde_json::Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "assistant")
        .unwrap();
    let at = first_answer["uuid"].as_str().unwrap().to_string();
    assert!(p.run(&server, &["-c", "-p", "two"]).status.success());
    let out = p.run(&server, &["-c", "--resume-session-at", &at, "-p", "three"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(p.run(&server, &["-c", "-p", "four"]).status.success());
    let requests = server.requests();
    let third = user_texts(&requests[2].body).join(" ");
    assert!(third.contains("one") && third.contains("three"), "{third}");
    assert!(
        !third.contains("two"),
        "the rewound message was sent: {third}"
    );
    let fourth = user_texts(&requests[3].body).join(" ");
    assert!(
        !fourth.contains("two"),
        "a later resume forgot the rewind: {fourth}"
    );
    assert!(
        fourth.contains("three") && fourth.contains("four"),
        "{fourth}"
    );
    // The log's parentUuid chain branches at the rewound-to message: prompt "three" names
    // it as its parent, not the answer to "two" that was written last before it.
    let logs = p.session_logs();
    let lines = support::project::log_lines(&logs[0]);
    let three = lines
        .iter()
        .find(|l| l["type"] == "user" && l["message"]["content"].to_string().contains("three"))
        .unwrap();
    assert_eq!(three["parentUuid"], at.as_str(), "{three}");

    let bad = p.run(&server, &["-c", "--resume-session-at", "nope", "-p", "x"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("has no such message"));
    let alone = p.run(&server, &["--resume-session-at", &at, "-p", "x"]);
    assert_eq!(alone.status.code(), Some(1));
    assert_eq!(server.requests().len(), 4);
}

#[test]
fn export_gives_the_whole_session_as_markdown_and_writes_only_the_file_named() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("t1", "Read", serde_json::json!({"file_path": "calc.py"}))],
        ),
        anthropic::text_turn("add subtracts"),
        anthropic::text_turn("Summary: calc.py's add subtracts."),
    ]);
    assert!(
        p.run(&server, &["-p", "what does calc.py do?"])
            .status
            .success()
    );
    // A compaction summarises the history sent; the export still has all of it.
    assert!(p.run(&server, &["-c", "-p", "/compact"]).status.success());
    assert_eq!(server.requests().len(), 3);
    // With no file named, the transcript is the output: nothing is written unasked.
    let before: Vec<_> = std::fs::read_dir(&p.root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    let out = p.run(&server, &["-c", "-p", "/export"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("## You\n\nwhat does calc.py do?"), "{shown}");
    assert!(shown.contains("## robota\n\nadd subtracts"), "{shown}");
    let after: Vec<_> = std::fs::read_dir(&p.root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(before, after, "/export wrote a file unasked");
    // A directory that does not exist is an error that says so.
    let out = p.run(&server, &["-c", "-p", "/export notes/session.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write"));
    std::fs::create_dir_all(p.root.join("notes")).unwrap();
    let out = p.run(&server, &["-c", "-p", "/export notes/session.md"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("notes/session.md"));
    let text = std::fs::read_to_string(p.root.join("notes/session.md")).unwrap();
    assert!(text.contains("## You\n\nwhat does calc.py do?"), "{text}");
    assert!(text.contains("**Read**"), "{text}");
    assert!(text.contains("return a - b"), "{text}");
    assert!(text.contains("## robota\n\nadd subtracts"), "{text}");
    assert_eq!(server.requests().len(), 3, "/export calls no model");
}

#[test]
fn cost_after_a_resume_counts_what_the_earlier_runs_used() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn_with_input_tokens("first", 1_234),
        anthropic::text_turn_with_input_tokens("second", 2_000),
    ]);
    assert!(p.run(&server, &["-p", "one"]).status.success());
    assert!(p.run(&server, &["-c", "-p", "two"]).status.success());
    let out = p.run(&server, &["-c", "-p", "/cost"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(!report.contains("No API usage yet"), "{report}");
    assert!(report.contains("3234 input"), "{report}");
    assert!(report.contains("Total: $"), "{report}");
}
