//! The rule of `support::skip`, driven for real: each case runs this binary's own `probe`
//! test (which skips for want of a made-up component) in a child process, with
//! `ROBOTA_REQUIRE_REAL`, `ROBOTA_MAY_LACK` and `ROBOTA_SKIP_LOG` set as the case needs,
//! and reads the child's exit status, its output and the skip log file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::Path;
use std::process::Command;

const COMPONENT: &str = "probe-component";
/// A reason over two lines: a skip line is one line.
const REASON: &str = "it is missing on purpose\n    (nothing to install)";
const JOINED: &str = "it is missing on purpose (nothing to install)";
const LINE: &str =
    "SKIP skip_rule::probe: probe-component: it is missing on purpose (nothing to install)\n";

/// Not a test by itself: the cases below run it in a child process.
#[test]
#[ignore = "run by the other tests of this file in a child process"]
fn probe() {
    support::skip::skip(COMPONENT, REASON);
}

/// Runs `probe` with `env` (and the skip log at `log`); whether it passed, and its output.
fn run_probe(log: &Path, env: &[(&str, &str)]) -> (bool, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["probe", "--exact", "--ignored", "--nocapture"])
        .env_remove("ROBOTA_REQUIRE_REAL")
        .env_remove("ROBOTA_MAY_LACK")
        .env("ROBOTA_SKIP_LOG", log)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text.into_owned())
}

fn read(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

#[test]
fn without_the_switch_a_missing_component_skips_and_each_skip_appends_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("skips.log");
    let (passed, output) = run_probe(&log, &[]);
    assert!(passed, "{output}");
    assert!(output.contains(LINE), "the line is not printed: {output}");
    assert_eq!(read(&log), LINE);
    let (passed, output) = run_probe(&log, &[("ROBOTA_REQUIRE_REAL", "0")]);
    assert!(passed, "{output}");
    assert_eq!(read(&log), LINE.repeat(2));
}

#[test]
fn under_the_switch_a_missing_component_fails_the_test_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("skips.log");
    let others = ("ROBOTA_MAY_LACK", "llama.cpp,tmpfs probe");
    let (passed, output) = run_probe(&log, &[("ROBOTA_REQUIRE_REAL", "1"), others]);
    assert!(!passed, "the probe passed: {output}");
    assert!(
        output.contains(&format!("{COMPONENT} is missing: {JOINED}")),
        "{output}"
    );
    assert!(output.contains("ROBOTA_MAY_LACK"), "{output}");
    assert_eq!(read(&log), "", "a failure is not a skip");
}

#[test]
fn under_the_switch_a_component_ci_may_lack_still_skips() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("skips.log");
    let listed = ("ROBOTA_MAY_LACK", "llama.cpp, probe-component");
    let (passed, output) = run_probe(&log, &[("ROBOTA_REQUIRE_REAL", "1"), listed]);
    assert!(passed, "{output}");
    assert_eq!(read(&log), LINE);
}
