//! PreSkillShellCommand hooks around the `` !`command` `` lines of custom commands and
//! skills: what they read, and how deny, defer and exit 2 stop a line before it runs.

use serde_json::{Value, json};

use crate::project::{HookProject, content_text, json_result, stderr, tool_results};
use crate::support::{MockServer, anthropic};

/// A user command `/mark` whose one shell line creates `marked.txt` (pre-approved).
fn mark_command(p: &HookProject) {
    let dir = p.user_home.join(".claude/commands");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mark.md"),
        "---\ndescription: Marks the project\nallowed-tools: Bash(touch:*)\n---\nMarked: !`touch marked.txt`\n",
    )
    .unwrap();
}

#[test]
fn a_denying_pre_skill_shell_command_hook_stops_the_line_before_it_runs() {
    let p = HookProject::new();
    mark_command(&p);
    let input = p.path("skill-shell-input.json");
    let hook = p.script(
        "deny.sh",
        &format!(
            "#!/bin/sh\ncat > {}\necho '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreSkillShellCommand\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"no shell in commands\"}}}}'\n",
            input.display()
        ),
    );
    p.settings(json!({"PreSkillShellCommand": [{"matcher": "mark", "hooks": [{"type": "command", "command": hook}]}]}));
    let server = MockServer::start(vec![anthropic::text_turn("never")]);
    let out = p.run(&server, &["-p", "/mark", "--output-format", "json"]);
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(1), "{result}");
    assert!(!p.path("marked.txt").exists(), "the line did not run");
    assert!(server.requests().is_empty(), "nothing reached the model");
    assert!(
        result.to_string().contains("no shell in commands"),
        "{result}"
    );
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&input).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PreSkillShellCommand");
    assert_eq!(input["skill_name"], "mark");
    assert_eq!(input["command"], "touch marked.txt");
    assert_eq!(input["tool_input"]["command"], "touch marked.txt");
}

#[test]
fn an_allowing_hook_lets_the_line_run_and_exit_2_stops_it() {
    let p = HookProject::new();
    mark_command(&p);
    p.settings(
        json!({"PreSkillShellCommand": [{"hooks": [{"type": "command", "command": "exit 0"}]}]}),
    );
    let server = MockServer::start(vec![anthropic::text_turn("Marked.")]);
    let out = p.run(&server, &["-p", "/mark"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(p.path("marked.txt").exists(), "the line ran");

    std::fs::remove_file(p.path("marked.txt")).unwrap();
    p.settings(json!({"PreSkillShellCommand": [{"hooks": [{"type": "command", "command": "echo 'not today' >&2; exit 2"}]}]}));
    let out = p.run(&server, &["-p", "/mark"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!p.path("marked.txt").exists());
    assert!(stderr(&out).contains("not today"), "{}", stderr(&out));
}

#[test]
fn a_deferring_hook_stops_a_skill_the_model_invoked() {
    let p = HookProject::new();
    let dir = p.user_home.join(".claude/skills/stamp");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\ndescription: Stamps the project\nallowed-tools: Bash(touch:*)\n---\nStamped: !`touch stamped.txt`\n",
    )
    .unwrap();
    p.settings(json!({"PreSkillShellCommand": [{"matcher": "stamp", "hooks": [{"type": "command",
        "command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreSkillShellCommand\",\"permissionDecision\":\"defer\",\"permissionDecisionReason\":\"a person decides\"}}'"}]}]}));
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("toolu_s", "Skill", json!({"skill": "stamp"}))]),
        anthropic::text_turn("Could not stamp."),
    ]);
    let out = p.run(&server, &["-p", "stamp it"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!p.path("stamped.txt").exists());
    let result = &tool_results(&server.requests()[1].body)[0];
    assert_eq!(result["is_error"], true);
    assert!(
        content_text(&result["content"]).contains("a person decides"),
        "{result}"
    );
}
