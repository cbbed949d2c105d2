//! Replay-grade diagnostics end to end: the real `robota` binary with `--debug-log` (or
//! settings `diagnostics: true`) against the loopback mock Anthropic server, then
//! `robota session show --request N` and `robota session validate` on what it wrote; and
//! `robota session show` alone, which prints any session's conversation.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use support::project::{Project, json_result, project};
use support::{MockServer, anthropic};

/// A turn of three provider calls: two tool rounds (three read-only calls) and an answer.
fn multi_round_turn(p: &Project) -> MockServer {
    let notes = p.root.join("notes.txt");
    fs::write(&notes, "alpha\nbeta\n".repeat(300)).unwrap();
    let notes = notes.to_str().unwrap().to_string();
    MockServer::start(vec![
        anthropic::tool_turn(
            Some("Reading."),
            &[
                ("toolu_01", "Read", json!({"file_path": notes})),
                (
                    "toolu_02",
                    "Grep",
                    json!({"pattern": "beta", "output_mode": "count"}),
                ),
            ],
        ),
        anthropic::tool_turn(None, &[("toolu_01", "Glob", json!({"pattern": "*.txt"}))]),
        anthropic::text_turn("Both files are notes."),
    ])
}

fn session_id(out: &Output) -> String {
    let result = json_result(out);
    assert_eq!(out.status.code(), Some(0), "{result}");
    result["session_id"].as_str().unwrap().to_string()
}

fn diagnostics_of(p: &Project, id: &str) -> PathBuf {
    let log = p
        .session_logs()
        .into_iter()
        .find(|path| path.file_name().unwrap() == format!("{id}.jsonl").as_str())
        .expect("the session log");
    log.with_extension("diagnostics.jsonl")
}

fn lines(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn robota(p: &Project, server: &MockServer, args: &[&str]) -> Output {
    p.run(server, args)
}

/// `robota -p <prompt> --output-format json --debug-log`; the session's id.
fn debug_run(p: &Project, server: &MockServer, prompt: &str) -> String {
    session_id(&robota(
        p,
        server,
        &["-p", prompt, "--output-format", "json", "--debug-log"],
    ))
}

#[test]
fn every_request_of_a_multi_round_tool_turn_is_rebuilt_byte_for_byte() {
    let p = project();
    let server = multi_round_turn(&p);
    let id = debug_run(&p, &server, "look at the notes");
    let sent = server.requests();
    assert_eq!(sent.len(), 3);

    for (i, request) in sent.iter().enumerate() {
        let n = (i + 1).to_string();
        let shown = robota(&p, &server, &["session", "show", &id, "--request", &n]);
        assert_eq!(shown.status.code(), Some(0), "{shown:?}");
        assert!(
            shown.stdout == request.raw_body,
            "request {n} differs from what the server received:\n{}\nvs\n{}",
            String::from_utf8_lossy(&shown.stdout),
            String::from_utf8_lossy(&request.raw_body)
        );
        let envelope = robota(
            &p,
            &server,
            &["session", "show", &id, "--request", &n, "--envelope"],
        );
        let envelope: Value = serde_json::from_slice(&envelope.stdout).unwrap();
        assert_eq!(envelope["provider"], "anthropic");
        assert_eq!(
            envelope["messages"].as_array().unwrap().len(),
            request.body["messages"].as_array().unwrap().len()
        );
    }
    let missing = robota(&p, &server, &["session", "show", &id, "--request", "4"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no request 4"));

    let validate = robota(&p, &server, &["session", "validate", &id]);
    let report = String::from_utf8_lossy(&validate.stdout);
    assert_eq!(validate.status.code(), Some(0), "{report}");
    assert!(report.starts_with("OK: "), "{report}");

    let diagnostics = lines(&diagnostics_of(&p, &id));
    let kinds: BTreeSet<&str> = diagnostics
        .iter()
        .map(|l| l["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        BTreeSet::from([
            "history_mutation",
            "provider_request",
            "provider_response",
            "session_init",
            "tool_execution_request",
            "tool_execution_result",
        ])
    );
    // Tool requests and results carry the provider's ids (toolu_01 comes twice).
    let ids = |kind: &str| -> Vec<&str> {
        diagnostics
            .iter()
            .filter(|l| l["type"] == kind)
            .map(|l| l["tool_use_id"].as_str().unwrap())
            .collect()
    };
    assert_eq!(
        ids("tool_execution_request"),
        ["toolu_01", "toolu_02", "toolu_01"]
    );
    assert_eq!(ids("tool_execution_result").len(), 3);
    // Each later request is stored as what it adds to the one before: it keeps the
    // earlier pieces and appends only the new ones.
    let requests: Vec<&Value> = diagnostics
        .iter()
        .filter(|l| l["type"] == "provider_request")
        .collect();
    assert_eq!(requests[0]["body"]["base"], Value::Null);
    for (i, request) in requests.iter().enumerate().skip(1) {
        assert_eq!(request["body"]["base"], i as u64);
        assert!(request["body"]["keep"].as_u64().unwrap() >= 3, "{request}");
        assert!(
            request["envelope"]["keep"].as_u64().unwrap() >= 3,
            "{request}"
        );
    }
    // The Read result (300 lines of notes) is stored in few payloads, though four lines
    // (the tool result, the history, requests 2 and 3 and their envelopes) carry it.
    let payloads = diagnostics_of(&p, &id)
        .with_extension("")
        .with_extension("payloads");
    let with_notes: Vec<String> = fs::read_dir(&payloads)
        .unwrap()
        .flatten()
        .map(|f| fs::read_to_string(f.path()).unwrap())
        .filter(|text| text.matches("beta").count() >= 300)
        .collect();
    assert!(!with_notes.is_empty());
    assert!(
        with_notes.len() <= 4,
        "{} payloads hold the notes",
        with_notes.len()
    );
}

#[test]
fn validate_finds_a_removed_response_a_removed_tool_result_and_a_deleted_payload() {
    let p = project();
    let server = multi_round_turn(&p);
    let id = debug_run(&p, &server, "look at the notes");
    let path = diagnostics_of(&p, &id);
    let original = fs::read_to_string(&path).unwrap();
    let validate = || {
        let out = robota(&p, &server, &["session", "validate", &id]);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    assert_eq!(validate().0, Some(0), "{}", validate().1);
    let without = |pred: &dyn Fn(&Value) -> bool| -> String {
        let mut removed = 0;
        let kept: Vec<&str> = original
            .lines()
            .filter(|l| {
                let drop = removed == 0 && pred(&serde_json::from_str(l).unwrap());
                removed += usize::from(drop);
                !drop
            })
            .collect();
        assert_eq!(removed, 1);
        kept.join("\n") + "\n"
    };

    fs::write(
        &path,
        without(&|l| l["type"] == "provider_response" && l["n"] == 2),
    )
    .unwrap();
    let (code, report) = validate();
    assert_eq!(code, Some(1), "{report}");
    assert!(report.contains("provider request 2 (line"), "{report}");
    assert!(report.contains("has no response"), "{report}");
    assert!(report.contains("1 problem(s)"), "{report}");

    fs::write(
        &path,
        without(&|l| l["type"] == "tool_execution_result" && l["tool_use_id"] == "toolu_02"),
    )
    .unwrap();
    let (code, report) = validate();
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains("tool request toolu_02 (Grep, line"),
        "{report}"
    );
    assert!(report.contains("1 problem(s)"), "{report}");

    fs::write(&path, &original).unwrap();
    assert_eq!(validate().0, Some(0));
    let payloads = path.with_extension("").with_extension("payloads");
    let victim = fs::read_dir(&payloads)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let hash = victim.file_stem().unwrap().to_str().unwrap().to_string();
    fs::remove_file(&victim).unwrap();
    let (code, report) = validate();
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains(&format!("payload {hash} is missing")),
        "{report}"
    );
}

/// The text of a diagnostics line with the payloads it refers to.
fn with_payloads(line: &Value, payloads: &Path) -> String {
    fn walk(value: &Value, payloads: &Path, out: &mut String) {
        match value {
            Value::Object(map) => {
                if let Some(hash) = map.get("$payload").and_then(Value::as_str) {
                    out.push_str(
                        &fs::read_to_string(payloads.join(format!("{hash}.json"))).unwrap(),
                    );
                }
                map.values().for_each(|v| walk(v, payloads, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, payloads, out)),
            _ => {}
        }
    }
    let mut out = line.to_string();
    walk(line, payloads, &mut out);
    out
}

#[test]
fn secrets_are_redacted_in_every_line_type_of_both_files_and_the_payloads() {
    const SECRET: &str = "sk-ant-api03-SECRETSECRET123456";
    let p = project();
    let notes = p.root.join("deploy.txt");
    fs::write(&notes, format!("deploy key {SECRET}\n")).unwrap();
    let notes = notes.to_str().unwrap().to_string();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                ("toolu_01", "Read", json!({"file_path": notes})),
                (
                    "toolu_02",
                    "Grep",
                    json!({"pattern": SECRET, "output_mode": "count"}),
                ),
            ],
        ),
        anthropic::text_turn(&format!("The deploy key is {SECRET}.")),
    ]);
    // On from the user's settings this time, not the flag.
    fs::create_dir_all(&p.home).unwrap();
    fs::write(p.home.join("settings.json"), r#"{"diagnostics": true}"#).unwrap();
    let out = robota(
        &p,
        &server,
        &[
            "-p",
            &format!("check the deploy key {SECRET}"),
            "--output-format",
            "json",
            "--append-system-prompt",
            &format!("The staging token is {SECRET}."),
        ],
    );
    let id = session_id(&out);
    assert_eq!(server.requests().len(), 2);
    let path = diagnostics_of(&p, &id);
    let payloads = path.with_extension("").with_extension("payloads");
    let diagnostics = lines(&path);
    let mut redacted_kinds = BTreeSet::new();
    for line in &diagnostics {
        let text = with_payloads(line, &payloads);
        assert!(!text.contains(SECRET), "a secret in {line}");
        // The answer streams the key split over several deltas: no piece of it survives.
        for piece in ["SECRETSECRET", "ECRET123456", "api03-SECR"] {
            assert!(!text.contains(piece), "a piece of a secret in {line}");
        }
        assert!(!text.contains("sk-ant-test-key"), "the API key in {line}");
        if text.contains("[REDACTED]") {
            redacted_kinds.insert(line["type"].as_str().unwrap().to_string());
        }
    }
    // Every line type carried a secret, and every one had it replaced.
    assert_eq!(
        redacted_kinds,
        BTreeSet::from([
            "history_mutation".to_string(),
            "provider_request".to_string(),
            "provider_response".to_string(),
            "session_init".to_string(),
            "tool_execution_request".to_string(),
            "tool_execution_result".to_string(),
        ])
    );
    let first = diagnostics
        .iter()
        .find(|l| l["type"] == "provider_request")
        .unwrap();
    assert_eq!(first["headers"]["x-api-key"], "[REDACTED]");
    assert_eq!(first["redacted"], true);
    // Nothing of it anywhere on disk: the session log, the diagnostics, the payloads.
    let dir = path.parent().unwrap();
    let mut files = vec![dir.join(format!("{id}.jsonl")), path.clone()];
    files.extend(fs::read_dir(&payloads).unwrap().flatten().map(|f| f.path()));
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        assert!(!text.contains(SECRET), "{}", file.display());
        assert!(!text.contains("sk-ant-test-key"), "{}", file.display());
    }
    let validate = robota(&p, &server, &["session", "validate", &id]);
    assert_eq!(validate.status.code(), Some(0));
    // Shown, the redacted request says it is not the bytes that were sent.
    let shown = robota(&p, &server, &["session", "show", &id, "--request", "2"]);
    assert_eq!(shown.status.code(), Some(0));
    let body = String::from_utf8_lossy(&shown.stdout);
    assert!(
        !body.contains(SECRET) && body.contains("[REDACTED]"),
        "{body}"
    );
    assert!(String::from_utf8_lossy(&shown.stderr).contains("credentials were redacted"));
}

#[test]
fn without_debug_log_there_is_no_diagnostics_file() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("hi")]);
    let out = robota(&p, &server, &["-p", "hello", "--output-format", "json"]);
    let id = session_id(&out);
    let path = diagnostics_of(&p, &id);
    assert!(!path.exists());
    assert!(!path.with_extension("").with_extension("payloads").exists());
    let validate = robota(&p, &server, &["session", "validate", &id]);
    assert_eq!(validate.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&validate.stderr).contains("--debug-log"));
}

#[test]
fn a_retried_call_records_each_attempt_and_a_resumed_session_numbers_on() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::error_status(529, "overloaded_error", "Overloaded", None),
        anthropic::text_turn("first answer"),
        anthropic::text_turn("second answer"),
    ]);
    let id = debug_run(&p, &server, "one");
    let out = robota(
        &p,
        &server,
        &["-p", "two", "-c", "--output-format", "json", "--debug-log"],
    );
    assert_eq!(session_id(&out), id);
    let sent = server.requests();
    assert_eq!(sent.len(), 3);

    let diagnostics = lines(&diagnostics_of(&p, &id));
    let of =
        |kind: &str| -> Vec<&Value> { diagnostics.iter().filter(|l| l["type"] == kind).collect() };
    let requests = of("provider_request");
    let attempts: Vec<(u64, u64)> = requests
        .iter()
        .map(|r| (r["n"].as_u64().unwrap(), r["attempt"].as_u64().unwrap()))
        .collect();
    assert_eq!(attempts, [(1, 1), (2, 2), (3, 1)]);
    let responses = of("provider_response");
    assert_eq!(responses[0]["status"], 529);
    assert_eq!(responses[0]["ok"], false);
    assert_eq!(responses[0]["error"]["kind"], "overloaded");
    assert!(
        responses[0]["body"]
            .as_str()
            .unwrap()
            .contains("Overloaded")
    );
    assert_eq!(responses[1]["ok"], true);
    let payloads = diagnostics_of(&p, &id)
        .with_extension("")
        .with_extension("payloads");
    let stream = match &responses[1]["stream"] {
        Value::String(text) => text.clone(),
        reference => {
            let hash = reference["$payload"].as_str().unwrap();
            let file = fs::read(payloads.join(format!("{hash}.json"))).unwrap();
            serde_json::from_slice::<String>(&file).unwrap()
        }
    };
    assert!(stream.contains("event: message_stop"), "{stream}");
    assert!(stream.contains(r#""text":"firs""#), "{stream}");
    // The resumed run starts a new chain of pieces but goes on numbering.
    assert_eq!(requests[2]["body"]["base"], Value::Null);
    for (i, request) in sent.iter().enumerate() {
        let n = (i + 1).to_string();
        let shown = robota(&p, &server, &["session", "show", &id, "--request", &n]);
        assert!(shown.stdout == request.raw_body, "request {n}");
    }
    let validate = robota(&p, &server, &["session", "validate", &id]);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&validate.stdout)
    );
}

/// The tool turn of `multi_round_turn` on another wire: requests are rebuilt byte for
/// byte whatever the provider's body looks like.
fn rebuilt_on_other_wire(
    p: &Project,
    server: &MockServer,
    key_env: &str,
    url_env: &str,
    key: &str,
) {
    let out = p
        .command(
            server,
            &[
                "-p",
                "look at the notes",
                "--output-format",
                "json",
                "--debug-log",
            ],
        )
        .env_remove("ANTHROPIC_API_KEY")
        .env(key_env, key)
        .env(url_env, server.base_url())
        .output()
        .unwrap();
    let id = session_id(&out);
    let sent = server.requests();
    assert_eq!(sent.len(), 3);
    for (i, request) in sent.iter().enumerate() {
        let n = (i + 1).to_string();
        let shown = robota(p, server, &["session", "show", &id, "--request", &n]);
        assert!(
            shown.stdout == request.raw_body,
            "{key_env}: request {n} differs:\n{}\nvs\n{}",
            String::from_utf8_lossy(&shown.stdout),
            String::from_utf8_lossy(&request.raw_body)
        );
    }
    let validate = robota(p, server, &["session", "validate", &id]);
    assert_eq!(validate.status.code(), Some(0), "{validate:?}");
    let text = fs::read_to_string(diagnostics_of(p, &id)).unwrap();
    assert!(!text.contains(key), "{key_env} leaked");
}

#[test]
fn requests_to_gemini_and_openai_are_rebuilt_byte_for_byte_too() {
    use support::{gemini, openai_responses};
    let read = |p: &Project| {
        let notes = p.root.join("notes.txt");
        fs::write(&notes, "alpha\nbeta\n".repeat(300)).unwrap();
        json!({"file_path": notes.to_str().unwrap()})
    };
    let p = project();
    let input = read(&p);
    let server = MockServer::start(vec![
        gemini::tool_turn(Some("Reading."), &[("g1", "Read", input)]),
        gemini::tool_turn(None, &[("g2", "Glob", json!({"pattern": "*.txt"}))]),
        gemini::text_turn("Notes."),
    ]);
    rebuilt_on_other_wire(
        &p,
        &server,
        "GEMINI_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "AIzaSyA1234567890abcdefghijklmnopqrstu",
    );

    let p = project();
    let input = read(&p);
    let server = MockServer::start(vec![
        openai_responses::tool_turn(Some("Reading."), &[("call_1", "Read", input)]),
        openai_responses::tool_turn(None, &[("call_2", "Glob", json!({"pattern": "*.txt"}))]),
        openai_responses::text_turn("Notes."),
    ]);
    rebuilt_on_other_wire(
        &p,
        &server,
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "sk-proj-1234567890abcdefghijKLMN",
    );
}

#[test]
fn after_clear_the_new_session_and_its_subagent_record_diagnostics_too() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_gp",
                "Agent",
                json!({"description": "look", "prompt": "Look.", "subagent_type": "general-purpose"}),
            )],
        ),
        anthropic::text_turn("CHILD"),
        anthropic::text_turn("done"),
    ]);
    let out =
        support::project::stream_json_run(&p, &server, &["--debug-log"], &["/clear", "delegate"]);
    assert_eq!(out.status.code(), Some(0));
    let sent = server.requests();
    assert_eq!(sent.len(), 3);
    let logs: Vec<PathBuf> = p
        .session_logs()
        .into_iter()
        .filter(|path| !path.to_str().unwrap().ends_with(".diagnostics.jsonl"))
        .collect();
    assert_eq!(logs.len(), 2, "{logs:?}");
    // The session /clear started holds the parent's two requests...
    let (new, old): (Vec<&PathBuf>, Vec<&PathBuf>) = logs
        .iter()
        .partition(|log| log.with_extension("").join("subagents").is_dir());
    let new_id = new[0].file_stem().unwrap().to_str().unwrap();
    let requests = |path: &Path| -> usize {
        lines(path)
            .iter()
            .filter(|l| l["type"] == "provider_request")
            .count()
    };
    assert_eq!(requests(&new[0].with_extension("diagnostics.jsonl")), 2);
    for (n, sent_index) in [("1", 0), ("2", 2)] {
        let shown = robota(&p, &server, &["session", "show", new_id, "--request", n]);
        assert!(shown.stdout == sent[sent_index].raw_body, "request {n}");
    }
    // ...the subagent's own diagnostics beside its transcript hold the one between...
    let subagents = new[0].with_extension("").join("subagents");
    let child: Vec<PathBuf> = fs::read_dir(&subagents)
        .unwrap()
        .flatten()
        .map(|f| f.path())
        .filter(|f| f.to_str().unwrap().ends_with(".diagnostics.jsonl"))
        .collect();
    assert_eq!(child.len(), 1, "{subagents:?}");
    let child_lines = lines(&child[0]);
    assert_eq!(requests(&child[0]), 1);
    assert!(child_lines.iter().any(|l| l["type"] == "session_init"));
    // ...and the cleared session's diagnostics exist, without requests.
    assert_eq!(requests(&old[0].with_extension("diagnostics.jsonl")), 0);
    let validate = robota(&p, &server, &["session", "validate", new_id]);
    assert_eq!(validate.status.code(), Some(0), "{validate:?}");
}

#[test]
fn the_compaction_summary_call_is_recorded_and_rebuilt_too() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("first answer"),
        anthropic::text_turn("The summary of it all."),
    ]);
    let id = debug_run(&p, &server, "hello");
    let compacted = robota(&p, &server, &["-c", "-p", "/compact", "--debug-log"]);
    assert_eq!(compacted.status.code(), Some(0), "{compacted:?}");
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    let summary_request = &sent[1];
    assert!(
        anthropic::system_text(&summary_request.body).contains("summarizing conversations"),
        "the second call is the summary"
    );
    let diagnostics = lines(&diagnostics_of(&p, &id));
    let requests = diagnostics
        .iter()
        .filter(|l| l["type"] == "provider_request")
        .count();
    let responses = diagnostics
        .iter()
        .filter(|l| l["type"] == "provider_response")
        .count();
    assert_eq!((requests, responses), (2, 2), "{diagnostics:#?}");
    let shown = robota(&p, &server, &["session", "show", &id, "--request", "2"]);
    assert_eq!(shown.status.code(), Some(0), "{shown:?}");
    assert!(
        shown.stdout == summary_request.raw_body,
        "rebuilt byte for byte"
    );
    let valid = robota(&p, &server, &["session", "validate", &id]);
    assert_eq!(valid.status.code(), Some(0), "{valid:?}");
}

#[test]
fn a_prompt_hooks_model_call_is_recorded_too() {
    let p = project();
    fs::create_dir_all(&p.home).unwrap();
    fs::write(
        p.home.join("settings.json"),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Is it done? $ARGUMENTS"}]}]}})
            .to_string(),
    )
    .unwrap();
    let server = MockServer::start(vec![
        anthropic::text_turn("Done."),
        anthropic::text_turn("{\"ok\": true}"),
    ]);
    let id = debug_run(&p, &server, "finish it");
    let sent = server.requests();
    assert_eq!(sent.len(), 2, "the turn and the hook's question");
    let shown = robota(&p, &server, &["session", "show", &id, "--request", "2"]);
    assert_eq!(shown.status.code(), Some(0), "{shown:?}");
    assert!(
        shown.stdout == sent[1].raw_body,
        "the hook's call rebuilt byte for byte"
    );
    let valid = robota(&p, &server, &["session", "validate", &id]);
    assert_eq!(valid.status.code(), Some(0), "{valid:?}");
}

#[test]
fn session_show_without_a_request_prints_the_conversation() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("The bug is in add.")]);
    let id = session_id(&robota(
        &p,
        &server,
        &["-p", "name the bug", "--output-format", "json"],
    ));
    let shown = robota(&p, &server, &["session", "show", &id]);
    let text = String::from_utf8_lossy(&shown.stdout).to_string();
    assert_eq!(
        shown.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    assert!(text.contains(&format!("- Session: `{id}`")), "{text}");
    assert!(
        text.contains("## You\n\nname the bug") && text.contains("## robota\n\nThe bug is in add."),
        "{text}"
    );
    // --envelope still needs a request to show.
    let envelope = robota(&p, &server, &["session", "show", &id, "--envelope"]);
    assert_eq!(envelope.status.code(), Some(2));
}
