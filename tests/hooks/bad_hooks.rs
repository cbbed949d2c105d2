//! Hooks that misbehave — hang, print garbage, exit 1, are missing — each give a visible,
//! non-fatal notice and the turn goes on.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::project::{HookProject, content_text, json_result, stderr, tool_results};
use crate::support::{MockServer, anthropic};

#[test]
fn hanging_garbage_failing_and_missing_hooks_are_notices_and_the_tool_runs() {
    let p = HookProject::new();
    let hang = p.script("hang.sh", "#!/bin/sh\nsleep 60\n");
    let garbage = p.script("garbage.sh", "#!/bin/sh\nprintf '{oops this is not json'\n");
    let fails = p.script("fails.sh", "#!/bin/sh\necho 'lint crashed' >&2\nexit 1\n");
    let missing = p.path(".claude/hooks/does-not-exist.sh");
    p.settings(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": hang, "timeout": 1},
        {"type": "command", "command": garbage},
        {"type": "command", "command": fails},
        {"type": "command", "command": missing.to_string_lossy()}
    ]}]}));
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_1",
                "Bash",
                json!({"command": "touch ran.txt && echo ran"}),
            )],
        ),
        anthropic::text_turn("all good"),
    ]);
    let started = Instant::now();
    let out = p.run(
        &server,
        &[
            "-p",
            "go",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash",
        ],
    );
    let elapsed = started.elapsed();
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(0), "{result}");
    assert_eq!(result["result"], "all good");
    assert!(p.path("ran.txt").exists(), "the tool still ran");
    assert!(content_text(&tool_results(&server.requests()[1].body)[0]["content"]).contains("ran"));
    assert!(
        elapsed < Duration::from_secs(30),
        "the hanging hook was killed at its timeout ({elapsed:?})"
    );

    let err = stderr(&out);
    assert!(err.contains("hang.sh` timed out"), "{err}");
    assert!(err.contains("garbage.sh` printed invalid JSON"), "{err}");
    assert!(
        err.contains("non-blocking status code 1") && err.contains("lint crashed"),
        "{err}"
    );
    assert!(err.contains("status code 127"), "{err}");

    let hooks = p.hook_lines();
    let outcome = |name: &str| {
        hooks
            .iter()
            .find(|h| h["command"].as_str().unwrap().ends_with(name))
            .map(|h| h["outcome"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(outcome("hang.sh"), "timeout");
    assert_eq!(outcome("garbage.sh"), "success");
    assert_eq!(outcome("fails.sh"), "error");
    assert_eq!(outcome("does-not-exist.sh"), "error");
    assert!(hooks.iter().any(|h| {
        h["notice"]
            .as_str()
            .is_some_and(|n| n.contains("invalid JSON"))
    }));
}

#[test]
fn malformed_hook_entries_warn_and_the_rest_still_runs() {
    let p = HookProject::new();
    p.settings(json!({
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command"}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo '{\"systemMessage\":\"second group ran\"}'"}]}
        ],
        "NotAnEvent": []
    }));
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("toolu_1", "Bash", json!({"command": "echo hi"}))]),
        anthropic::text_turn("ok"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "go",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash",
        ],
    );
    json_result(&out);
    let err = stderr(&out);
    assert!(
        err.contains("hooks.PreToolUse[0].hooks[0]: missing \"command\""),
        "{err}"
    );
    assert!(
        err.contains("hooks.NotAnEvent: unknown hook event"),
        "{err}"
    );
    assert!(err.contains("second group ran"), "{err}");
}
