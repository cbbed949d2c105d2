//! End to end: the real `robota -p` in bypass mode with `--disallowedTools "Bash(rm *)"`,
//! against the loopback mock model, which asks its Bash tool to run adversarial command
//! lines. None may run (the file survives and every call is reported as denied), while an
//! ordinary command still runs; and `--allowedTools` rules are honoured with compound
//! commands in default mode.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use support::{MockServer, anthropic};

fn run(dir: &std::path::Path, server: &MockServer, args: &[&str]) -> Output {
    let home = dir.join("robota-home");
    Command::new(env!("CARGO_BIN_EXE_robota"))
        .args(args)
        .current_dir(dir.join("repo"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("ROBOTA_HOME", &home)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-test-key-0000000000000000")
        .env("ROBOTA_RETRY_BASE_MS", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn result(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

const ATTACKS: &[&str] = &[
    "r'm' -f victim",
    "sh -c 'rm -f victim'",
    "x=rm; $x -f victim",
    "echo 'rm -f victim' | bash",
    "eval \"$(echo rm) -f victim\"",
    "find . -name victim -exec rm {} \\;",
    "bash <<EOF\nrm -f victim\nEOF",
    "$'\\x72\\x6d' -f victim",
    "ls && /bin/rm -f victim",
    "timeout 5 rm -f victim",
];

#[test]
fn adversarial_commands_never_run_in_bypass_mode_and_ordinary_ones_do() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("victim"), "precious").unwrap();
    let mut calls: Vec<(String, &str, Value)> = ATTACKS
        .iter()
        .enumerate()
        .map(|(i, cmd)| (format!("toolu_{i:02}"), "Bash", json!({"command": cmd})))
        .collect();
    calls.push((
        "toolu_ok".to_string(),
        "Bash",
        json!({"command": "echo fine > made.txt"}),
    ));
    let borrowed: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, name, input)| (id.as_str(), *name, input.clone()))
        .collect();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &borrowed),
        anthropic::text_turn("done"),
    ]);
    let out = run(
        dir.path(),
        &server,
        &[
            "-p",
            "clean up",
            "--output-format",
            "json",
            "--dangerously-skip-permissions",
            "--disallowedTools",
            "Bash(rm *)",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("victim")).unwrap(),
        "precious"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("made.txt")).unwrap(),
        "fine\n"
    );
    let denials = result(&out)["permission_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let denied: Vec<&str> = denials
        .iter()
        .filter_map(|d| d["tool_use_id"].as_str())
        .collect();
    assert_eq!(denied.len(), ATTACKS.len(), "{denials:#?}");
    assert!(!denied.contains(&"toolu_ok"));
}

#[test]
fn allowed_tools_cover_every_part_of_a_compound_command_in_default_mode() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                ("toolu_a", "Bash", json!({"command": "touch a && ls"})),
                ("toolu_b", "Bash", json!({"command": "touch b && mkdir c"})),
            ],
        ),
        anthropic::text_turn("done"),
    ]);
    let out = run(
        dir.path(),
        &server,
        &[
            "-p",
            "go",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash(touch *)",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(repo.join("a").exists(), "touch + read-only ls is allowed");
    assert!(
        !repo.join("b").exists(),
        "mkdir is not allowed, so nothing of the line runs"
    );
    let denials = result(&out)["permission_denials"].clone();
    assert_eq!(denials.as_array().map(Vec::len), Some(1));
    assert_eq!(denials[0]["tool_use_id"], "toolu_b");
}

#[test]
fn an_allowed_command_still_asks_when_its_paths_leave_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("inside.txt"), "x").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "keep me").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "keep me too").unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                ("toolu_in", "Bash", json!({"command": "rm inside.txt"})),
                ("toolu_up", "Bash", json!({"command": "rm ../outside.txt"})),
                (
                    "toolu_home",
                    "Bash",
                    json!({"command": "rm -f ~/notes.txt"}),
                ),
                (
                    "toolu_var",
                    "Bash",
                    json!({"command": "rm -f \"$HOME/notes.txt\""}),
                ),
            ],
        ),
        anthropic::text_turn("done"),
    ]);
    let out = run(
        dir.path(),
        &server,
        &[
            "-p",
            "go",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash(rm:*)",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(!repo.join("inside.txt").exists(), "rm inside is allowed");
    assert!(dir.path().join("outside.txt").exists(), "../ left the repo");
    assert!(dir.path().join("notes.txt").exists(), "~ left the repo");
    let denials = result(&out)["permission_denials"].clone();
    let ids: Vec<&str> = denials
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_up", "toolu_home", "toolu_var"]);
}
