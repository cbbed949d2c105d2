//! The rule of `support::skip`, driven with the values the environment would give it and a
//! real skip log file: without the switch a missing component skips and each skip appends
//! its line; with it the test fails naming the component, unless the component is one the
//! machine may lack.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::ffi::OsStr;
use std::path::Path;

use support::skip::SkipRule;

const TEST: &str = "skip_rule::probe";
const COMPONENT: &str = "probe-component";
/// A reason over two lines: a skip line is one line.
const REASON: &str = "it is missing on purpose\n    (nothing to install)";
const JOINED: &str = "it is missing on purpose (nothing to install)";
const LINE: &str =
    "SKIP skip_rule::probe: probe-component: it is missing on purpose (nothing to install)\n";

fn rule(require_real: Option<&str>, may_lack: Option<&str>, log: &Path) -> SkipRule {
    SkipRule::from_values(require_real, may_lack, Some(OsStr::new(log)))
}

fn read(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

#[test]
fn without_the_switch_a_missing_component_skips_and_each_skip_appends_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("skips.log");
    for switch in [None, Some(""), Some("0")] {
        let line = rule(switch, None, &log).apply(TEST, COMPONENT, REASON);
        assert_eq!(line.as_deref(), Ok(LINE), "switch {switch:?}");
    }
    assert_eq!(read(&log), LINE.repeat(3));
}

#[test]
fn under_the_switch_a_missing_component_fails_the_test_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("skips.log");
    let others = Some("llama.cpp,tmpfs probe");
    let failure = rule(Some("1"), others, &log)
        .apply(TEST, COMPONENT, REASON)
        .unwrap_err();
    assert!(
        failure.contains(&format!("{COMPONENT} is missing: {JOINED}")),
        "{failure}"
    );
    assert!(failure.contains("ROBOTA_MAY_LACK"), "{failure}");
    assert_eq!(read(&log), "", "a failure is not a skip");
}

#[test]
fn under_the_switch_a_component_ci_may_lack_still_skips() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("skips.log");
    let listed = Some("llama.cpp, probe-component");
    let line = rule(Some("1"), listed, &log).apply(TEST, COMPONENT, REASON);
    assert_eq!(line.as_deref(), Ok(LINE));
    assert_eq!(read(&log), LINE);
}

#[test]
fn a_skip_log_that_cannot_be_written_fails_the_test() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("no-such-dir").join("skips.log");
    let failure = rule(None, None, &log)
        .apply(TEST, COMPONENT, REASON)
        .unwrap_err();
    assert!(
        failure.contains("cannot append to ROBOTA_SKIP_LOG"),
        "{failure}"
    );
}
