//! End to end: compaction never leaves a session stuck. The real `robota` binary in print
//! mode against the loopback mock Anthropic server (claude-sonnet-4-5, a 200,000-token
//! window), which records every request: at 99 % of the window auto-compaction and
//! `/compact` both succeed; a tool result too large for the next call (a skill's
//! instructions) is cut to its head and tail mid-turn and the turn goes on; a session whose
//! log holds a 190,000-token tool result compacts, automatically or by `/compact`; a summary
//! request the provider calls "prompt is too long" is made again in stages. Every request
//! sent — summary requests and the ones after them — fits the window.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::process::Output;

use serde_json::{Value, json};
use support::project::{Project, project, stream_json_run, tool_results};
use support::{MockServer, RecordedRequest, anthropic};

const WINDOW_TOKENS: usize = 200_000;
const SUMMARY_OPENING: &str = "This session is being continued from a previous conversation";

/// A request's size at four characters a token: what the window must hold.
fn assert_fits(requests: &[RecordedRequest]) {
    for (i, request) in requests.iter().enumerate() {
        let tokens = request.raw_body.len() / 4;
        assert!(
            tokens < WINDOW_TOKENS * 95 / 100,
            "request {i} is {tokens} tokens"
        );
    }
}

fn is_summary_request(request: &RecordedRequest) -> bool {
    anthropic::system_text(&request.body).contains("summarizing conversations")
}

/// Every text of every message of a recorded request, in order.
fn texts(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        match &message["content"] {
            Value::String(s) => out.push(s.clone()),
            Value::Array(blocks) => out.extend(
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str().map(str::to_string)),
            ),
            _ => {}
        }
    }
    out
}

fn stdout_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn boundary(out: &Output) -> Value {
    stdout_lines(out)
        .into_iter()
        .find(|l| l["subtype"] == "compact_boundary")
        .unwrap_or_else(|| panic!("no compact_boundary: {}", stderr(out)))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stream_args(prompt: &str) -> Vec<&str> {
    vec![
        "-c",
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
    ]
}

/// A skill whose instructions are about 125,000 tokens (500,000 characters; skills are
/// read up to 512 KiB).
fn big_skill(p: &Project) {
    let dir = p.user_home.join(".claude/skills/big");
    std::fs::create_dir_all(&dir).unwrap();
    let mut body = String::from("---\ndescription: A very long manual\n---\nMANUAL-START\n");
    let mut n = 0;
    while body.len() < 500_000 {
        body.push_str(&format!("step {n}: check the gauges, then the valves\n"));
        n += 1;
    }
    body.push_str("MANUAL-END\n");
    std::fs::write(dir.join("SKILL.md"), body).unwrap();
}

/// Makes the logged skill result about 190,000 tokens (760,000 characters), as a log
/// written by another tool or an older version can hold.
fn inflate_logged_result(p: &Project) {
    let logs = p.session_logs();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let text = std::fs::read_to_string(&logs[0]).unwrap();
    assert_eq!(text.matches("MANUAL-END").count(), 1, "one logged result");
    let filler = "more steps follow. ".repeat(13_700);
    std::fs::write(
        &logs[0],
        text.replace("MANUAL-END", &format!("{filler}MANUAL-END")),
    )
    .unwrap();
}

fn skill_turn_script() -> Vec<support::MockResponse> {
    vec![
        anthropic::tool_turn(None, &[("toolu_1", "Skill", json!({"skill": "big"}))]),
        anthropic::text_turn("Manual read."),
    ]
}

#[test]
fn a_huge_tool_result_is_cut_mid_turn_and_a_session_holding_190k_compacts() {
    let p = project();
    big_skill(&p);
    let mut script = vec![
        anthropic::text_turn("Earlier work done."),
        anthropic::tool_turn_with_input_tokens(
            &[("toolu_1", "Skill", json!({"skill": "big"}))],
            110_000,
        ),
        anthropic::text_turn("Manual read."),
    ];
    script.extend([
        anthropic::text_turn("Summary: the user loaded the big manual."),
        anthropic::text_turn("Going on."),
    ]);
    let server = MockServer::start(script);
    assert_eq!(
        p.run(&server, &["-p", "earlier work"]).status.code(),
        Some(0)
    );

    // 110k tokens and a 125k-token result do not fit the next call: the result is cut to
    // its head and tail and the turn goes on.
    let out = p.run(&server, &["-c", "-p", "load the big manual"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Manual read.");
    assert!(
        stderr(&out).contains("Cut 1 oversized tool result(s) to their head and tail"),
        "{}",
        stderr(&out)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let result = tool_results(&requests[2].body)[0]["content"].to_string();
    assert!(result.contains("MANUAL-START"), "the head stays");
    assert!(result.contains("MANUAL-END"), "the tail stays");
    assert!(
        result.contains("characters (about") && result.contains("were cut here"),
        "the marker says how much was cut"
    );

    // A log holding a 190k-token result is past the threshold on resume: the next turn
    // compacts first, and both its requests fit.
    inflate_logged_result(&p);
    let out = p.run(&server, &stream_args("go on"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    assert!(is_summary_request(&requests[3]));
    let meta = &boundary(&out)["compact_metadata"];
    assert_eq!(meta["trigger"], "auto");
    assert_eq!(meta["reason"], "threshold");
    assert!(meta["pre_tokens"].as_u64().unwrap() > 190_000, "{meta}");
    assert!(meta["post_tokens"].as_u64().unwrap() < 20_000, "{meta}");
    let sent = texts(&requests[4].body);
    assert!(sent[0].starts_with(SUMMARY_OPENING), "{sent:?}");
    assert_eq!(sent.last().unwrap(), "go on");
    assert_fits(&requests);
}

#[test]
fn compact_with_a_190k_token_tool_result_succeeds_and_the_next_request_fits() {
    let p = project();
    big_skill(&p);
    let mut script = skill_turn_script();
    script.extend([
        anthropic::text_turn("Summary: the manual was read."),
        anthropic::text_turn("Next done."),
    ]);
    let server = MockServer::start(script);
    let first = p.run(&server, &["-p", "load the big manual"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    inflate_logged_result(&p);
    let out = p.run(&server, &stream_args("/compact"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let meta = &boundary(&out)["compact_metadata"];
    assert_eq!(meta["trigger"], "manual");
    assert_eq!(meta["reason"], "requested");
    assert!(meta["pre_tokens"].as_u64().unwrap() > 190_000, "{meta}");
    let next = p.run(&server, &["-c", "-p", "next"]);
    assert_eq!(next.status.code(), Some(0), "{}", stderr(&next));
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(is_summary_request(&requests[2]));
    assert!(texts(&requests[3].body)[0].starts_with(SUMMARY_OPENING));
    assert_fits(&requests);
}

#[test]
fn at_99_percent_of_the_window_compact_succeeds_and_the_next_request_fits() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn_with_input_tokens("Long work done.", 198_000),
        anthropic::text_turn("Summary of the long work."),
        anthropic::text_turn("Next done."),
    ]);
    let first = p.run(&server, &["-p", "long work"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let out = p.run(&server, &stream_args("/compact"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let meta = &boundary(&out)["compact_metadata"];
    assert!(meta["pre_tokens"].as_u64().unwrap() >= 198_000, "{meta}");
    let next = p.run(&server, &["-c", "-p", "next"]);
    assert_eq!(next.status.code(), Some(0), "{}", stderr(&next));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(is_summary_request(&requests[1]));
    assert_eq!(texts(&requests[2].body).len(), 2, "the summary, then next");
    assert_fits(&requests);
}

#[test]
fn a_summary_request_called_too_long_is_made_again_in_stages() {
    let p = project();
    let notes = format!("first task, with notes: {}", "n".repeat(20_000));
    let server = MockServer::start(vec![
        // 99 % of the window.
        anthropic::text_turn_with_input_tokens("Noted.", 198_000),
        anthropic::error_status(
            400,
            "invalid_request_error",
            "prompt is too long: 201000 tokens > 200000 maximum",
            None,
        ),
        anthropic::text_turn("Part one: the user gave notes."),
        anthropic::text_turn("The user gave notes; the model noted them."),
        anthropic::text_turn("Second done."),
    ]);
    let out = stream_json_run(&p, &server, &[], &[&notes, "second task"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    assert!(requests[1..4].iter().all(is_summary_request));
    let second_stage = texts(&requests[3].body).join("\n");
    assert!(
        second_stage.contains("summarised in parts")
            && second_stage.contains("Part one: the user gave notes."),
        "{second_stage}"
    );
    assert!(
        requests[2].raw_body.len() < requests[1].raw_body.len(),
        "the stages are smaller than the refused request"
    );
    let sent = texts(&requests[4].body);
    assert!(sent[0].starts_with(SUMMARY_OPENING));
    assert!(sent[0].contains("The user gave notes; the model noted them."));
    assert_eq!(sent.last().unwrap(), "second task");
    let meta = &boundary(&out)["compact_metadata"];
    assert_eq!(meta["reason"], "threshold");
    assert_eq!(meta["stages"], 2);
    let result = stdout_lines(&out).pop().unwrap();
    assert_eq!(result["result"], "Second done.", "{result}");
    assert_fits(&requests);
}
