//! End to end: the real `robota` binary in print mode against the loopback mock server.
//! The model writes a Makefile whose recipe deletes a canary file, then runs `make` — which
//! a rule allows. robota must not run it unasked: the makefile changed during the session
//! (print mode turns the question into a denial), in every mode a rule could let it
//! through. A Makefile that was there before the session still runs under the same rule.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::json;
use support::project::{json_result, project};
use support::{MockServer, anthropic};

const PLANTED: &str = "all:\n\trm -f canary\n";

fn run_make(mode: &str, rules: &[&str], write_first: bool) -> (bool, serde_json::Value) {
    let p = project();
    let canary = p.root.join("canary");
    std::fs::write(&canary, "x").unwrap();
    let makefile = p.root.join("Makefile");
    if !write_first {
        std::fs::write(&makefile, PLANTED).unwrap();
    }
    let mut turns = Vec::new();
    if write_first {
        turns.push(anthropic::tool_turn(
            None,
            &[(
                "toolu_w",
                "Write",
                json!({"file_path": makefile.to_str().unwrap(), "content": PLANTED}),
            )],
        ));
    }
    turns.push(anthropic::tool_turn(
        None,
        &[("toolu_m", "Bash", json!({"command": "make -s"}))],
    ));
    turns.push(anthropic::text_turn("Built."));
    let server = MockServer::start(turns);
    let mut args = vec![
        "-p",
        "build it",
        "--output-format",
        "json",
        "--permission-mode",
        mode,
    ];
    args.extend_from_slice(rules);
    let out = p.run(&server, &args);
    let result = json_result(&out);
    assert_eq!(
        std::fs::read_to_string(&makefile).unwrap(),
        PLANTED,
        "{result}"
    );
    (canary.exists(), result)
}

#[test]
fn make_does_not_run_a_makefile_written_during_the_session_in_any_mode() {
    let cases: [(&str, &[&str]); 3] = [
        ("default", &["--allowedTools", "Write,Bash(make:*)"]),
        ("acceptEdits", &["--allowedTools", "Bash(make:*)"]),
        ("bypassPermissions", &["--disallowedTools", "Bash(rm *)"]),
    ];
    for (mode, rules) in cases {
        let (kept, result) = run_make(mode, rules, true);
        assert!(kept, "{mode}: the planted makefile ran: {result}");
        // In bypass under a rule naming `rm`, where the kernel confines Bash, the line may
        // run, without the right to remove files (issue 24's item 10); elsewhere, and
        // without the kernel, it is refused.
        let kernel_stands_in =
            mode == "bypassPermissions" && robota::tools::sandbox::support().missing.is_none();
        if !kernel_stands_in {
            assert_eq!(
                result["permission_denials"][0]["tool_name"], "Bash",
                "{mode}: {result}"
            );
        }
    }
}

#[test]
fn a_makefile_from_before_the_session_still_runs_under_the_rule() {
    let (kept, result) = run_make("default", &["--allowedTools", "Bash(make:*)"], false);
    assert!(!kept, "make did not run the makefile: {result}");
    assert_eq!(result["permission_denials"], json!([]), "{result}");
}
