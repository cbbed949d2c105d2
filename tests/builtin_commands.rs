//! End to end: the built-in commands that reach outside the conversation — `/language`
//! (saved in the user settings, in the system prompt of every later request), `/doctor`
//! (a real connection to the provider's address), `/tasks` (background Bash jobs and a
//! running subagent listed and stopped: the job's process really dies, the subagent's
//! turn really ends while its parent's goes on), `/model` with a model the provider does not
//! know (accepted, with a warning) — with the real binary against the loopback mock
//! Anthropic server.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::anthropic::system_text;
use support::project::{project, result_text, tool_results};
use support::sdk_peer::Peer;
use support::{MockServer, anthropic};

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn language_is_saved_and_every_later_request_asks_for_it() {
    let p = project();
    std::fs::create_dir_all(&p.home).unwrap();
    std::fs::write(p.home.join("settings.json"), r#"{"cleanupPeriodDays": 40}"#).unwrap();
    let server = MockServer::start(vec![anthropic::text_turn("Bonjour.")]);
    let out = p.run(&server, &["-p", "/language French"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stdout(&out).contains("Answers will be written in French"),
        "{out:?}"
    );
    assert!(server.requests().is_empty(), "/language asks no model");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(p.home.join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        saved,
        json!({"cleanupPeriodDays": 40, "language": "French"})
    );

    let out = p.run(&server, &["-p", "hello"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let system = system_text(&server.requests()[0].body);
    assert!(
        system.contains("Always write your answers to the user in French"),
        "{system}"
    );

    // Within one session the prompt changes from the next request on.
    let server = MockServer::start(vec![
        anthropic::text_turn("one"),
        anthropic::text_turn("two"),
    ]);
    let mut peer = Peer::start(&p, &server, true);
    peer.user("first");
    peer.result();
    peer.user("/language default");
    peer.result();
    peer.user("second");
    peer.result();
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
    let requests = server.requests();
    assert!(system_text(&requests[0].body).contains("in French"));
    assert!(!system_text(&requests[1].body).contains("Response language"));
}

#[test]
fn doctor_connects_to_the_provider_and_names_what_to_fix() {
    let p = project();
    let server = MockServer::start(vec![]);
    let out = p.run(&server, &["-p", "/doctor"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report = stdout(&out);
    assert!(
        report.contains("✓ API key from ANTHROPIC_API_KEY"),
        "{report}"
    );
    assert!(
        report.contains(&format!("✓ {} answers", server.base_url())),
        "{report}"
    );
    assert!(report.contains("✓ git version"), "{report}");
    assert!(report.contains("Session log"), "{report}");
    assert!(
        report.contains("✓ WebSearch runs at the provider"),
        "{report}"
    );
    assert!(server.requests().is_empty(), "/doctor asks no model");

    // A webSearch block that cannot work is said at start-up and in the report.
    let block = r#"{"webSearch": {"provider": "searxng"}}"#;
    let out = p.run(&server, &["-p", "/doctor", "--settings", block]);
    let report = stdout(&out);
    let expected =
        "WebSearch is not offered: webSearch with provider \"searxng\" needs webSearch.baseURL";
    assert!(report.contains(expected), "{report}");
    assert!(stderr(&out).contains(expected), "{}", stderr(&out));

    let mut cmd = p.command(&server, &["-p", "/doctor"]);
    cmd.env("ANTHROPIC_BASE_URL", support::refused_url());
    let out = cmd.output().unwrap();
    let report = stdout(&out);
    assert!(report.contains("cannot be reached"), "{report}");
    assert!(report.contains("(set by ANTHROPIC_BASE_URL)"), "{report}");
    assert!(report.contains("1 problem(s) to fix"), "{report}");
}

/// Whether process `pid` still runs (a zombie has ended).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_until(what: &str, limit: Duration, done: impl Fn() -> bool) {
    let end = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn tasks_lists_a_background_job_and_stopping_it_kills_its_processes() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_bg",
                "Bash",
                json!({"command": "sleep 300 & echo $! > job.pid; wait", "run_in_background": true}),
            )],
        ),
        anthropic::text_turn("Started it."),
    ]);
    let mut peer = Peer::start_with(
        &p,
        &server,
        &["-p", "--permission-mode", "bypassPermissions"],
    );
    peer.user("start the job");
    peer.result();
    let pid_file = p.root.join("job.pid");
    wait_until("the job's pid", Duration::from_secs(10), || {
        std::fs::read_to_string(&pid_file).is_ok_and(|s| s.trim().parse::<i32>().is_ok())
    });
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid));

    peer.user("/tasks");
    let listed = peer.result();
    let report = listed["result"].as_str().unwrap();
    assert!(report.contains("bash_1"), "{report}");
    assert!(report.contains("running"), "{report}");
    assert!(report.contains("sleep 300"), "{report}");

    peer.user("/tasks stop bash_7");
    let missing = peer.result();
    assert_eq!(missing["is_error"], true, "{missing}");
    assert!(alive(pid), "a wrong id stops nothing");

    peer.user("/tasks stop bash_1");
    let stopped = peer.result();
    assert_eq!(stopped["result"], "Stopped background job bash_1.");
    wait_until("the job's sleep to die", Duration::from_secs(10), || {
        !alive(pid)
    });
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
}

#[test]
fn tasks_stops_one_running_subagent_and_its_parent_goes_on() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_agent",
                "Agent",
                json!({"description": "survey the code", "prompt": "Look at everything.", "subagent_type": "general-purpose"}),
            )],
        ),
        // The subagent's answer starts and then hangs until it is stopped.
        anthropic::text_turn_held("I am still looking", 2),
        anthropic::text_turn("The survey was stopped; moving on."),
    ]);
    let mut peer = Peer::start(&p, &server, true);
    peer.user("survey the code with a subagent");
    assert!(server.wait_for_requests(2, Duration::from_secs(20)));
    peer.user("/tasks");
    let listed = peer.until("the /tasks result", |v| {
        v["type"] == "result"
            && v["result"]
                .as_str()
                .is_some_and(|r| r.contains("Subagents:"))
    });
    let report = listed["result"].as_str().unwrap().to_string();
    assert!(
        report.contains("survey the code (general-purpose)"),
        "{report}"
    );
    let id = report
        .lines()
        .skip_while(|l| !l.starts_with("Subagents:"))
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string();
    peer.user(&format!("/tasks stop {id}"));
    let answer = peer.until("the turn's result", |v| {
        v["type"] == "result" && v["result"] == "The survey was stopped; moving on."
    });
    assert_eq!(answer["subtype"], "success", "{answer}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let results = tool_results(&requests[2].body);
    let text = result_text(&results[0]);
    assert!(text.contains("The user stopped this subagent"), "{text}");
    let (code, _) = peer.finish();
    assert_eq!(code, Some(0));
}

#[test]
fn model_warns_about_a_model_the_provider_does_not_know_and_still_uses_it() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("from gpt-4o")]);
    let out = p.run(&server, &["-p", "/model gpt-4o"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = stdout(&out);
    assert!(said.contains("Model set to gpt-4o."), "{said}");
    assert!(
        said.contains("gpt-4o is not one of the anthropic provider's known models"),
        "{said}"
    );
    let out = p.run(&server, &["-p", "/model claude-opus-4-6"]);
    let said = stdout(&out);
    assert!(said.contains("Model set to claude-opus-4-6."), "{said}");
    assert!(!said.contains("Warning"), "{said}");
    // Accepted: the next turn asks for it.
    let out = support::project::stream_json_run(&p, &server, &[], &["/model gpt-4o", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(server.requests()[0].body["model"], "gpt-4o");
}
