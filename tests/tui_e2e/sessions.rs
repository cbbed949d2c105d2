//! Sessions in the UI: resuming through the picker, `robota "prompt"`, the `/model`
//! picker, the first-run setup screen, and the workspace-trust question.

use std::time::Duration;

use serde_json::json;

use crate::support::MockServer;
use crate::support::anthropic::{text_turn, tool_turn};
use crate::support::project::project;
use crate::{exit_cleanly, last_user_text, start, start_with};

#[test]
fn resume_without_an_id_opens_the_picker_and_replays_the_chosen_session() {
    let project = project();
    let server = MockServer::start(vec![
        text_turn("The first answer."),
        text_turn("The second answer."),
    ]);
    let out = project.run(&server, &["-p", "remember the number 42"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut pty = start(&project, &server, &["--resume"]);
    let picker = pty.wait_for_text("Resume a session");
    assert!(picker.contains("remember the number 42"), "{picker}");
    // The project is a git repository on `main`: the session's row names the branch.
    assert!(picker.contains("main · "), "{picker}");
    pty.send(b"\r");
    let screen = pty.wait_for_text("The first answer.");
    assert!(screen.contains("> remember the number 42"), "{screen}");
    pty.type_text("and now?");
    pty.send(b"\r");
    pty.wait_for_text("The second answer.");
    assert!(server.wait_for_requests(2, Duration::from_secs(10)));
    let messages = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(messages, 3, "the resumed history was sent along");
    exit_cleanly(&mut pty);
}

#[test]
fn slash_resume_switches_to_another_session() {
    let project = project();
    let server = MockServer::start(vec![text_turn("Old answer.")]);
    let out = project.run(&server, &["-p", "an older session"]);
    assert!(out.status.success());
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("/resume");
    pty.send(b"\r");
    let picker = pty.wait_for_text("Resume a session");
    // One prompt and its answer: two messages, not "turns".
    assert!(picker.contains("· 2 messages"), "{picker}");
    pty.type_text("older");
    pty.send(b"\r");
    pty.wait_for_text("Old answer.");
    exit_cleanly(&mut pty);
}

#[test]
fn a_prompt_on_the_command_line_is_sent_at_start() {
    let project = project();
    let server = MockServer::start(vec![text_turn("Started with your prompt.")]);
    let mut pty = start(&project, &server, &["explain calc.py"]);
    pty.wait_for_text("Started with your prompt.");
    assert_eq!(last_user_text(&server, 1), "explain calc.py");
    exit_cleanly(&mut pty);
}

#[test]
fn the_model_picker_changes_the_model_of_the_next_request() {
    let project = project();
    let server = MockServer::start(vec![text_turn("From haiku.")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("/model");
    pty.send(b"\r");
    pty.wait_for_text("Choose a model");
    pty.type_text("haiku");
    pty.wait_for_text("claude-haiku");
    pty.send(b"\r");
    pty.wait_for(
        "the status line to show haiku",
        Duration::from_secs(10),
        |s| s.lines().last().is_some_and(|l| l.contains("claude-haiku")),
    );
    pty.type_text("hi");
    pty.send(b"\r");
    pty.wait_for_text("From haiku.");
    let model = server.requests()[0].body["model"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(model.starts_with("claude-haiku"), "{model}");
    exit_cleanly(&mut pty);
}

#[test]
fn setup_refuses_a_key_variable_that_is_not_set_and_saves_nothing() {
    let project = project();
    let server = MockServer::start(vec![]);
    let mut pty = start_with(&project, &server, &[], |cmd| {
        cmd.env_remove("ANTHROPIC_API_KEY");
    });
    pty.wait_for_text("Anthropic");
    pty.send(b"\r");
    pty.wait_for_text("API key");
    pty.send(b"\t"); // the name of a variable instead of a key
    pty.wait_for_text("ANTHROPIC_API_KEY");
    pty.send(b"\r");
    // Refused at once, on the key step: the model step never comes.
    let screen = pty.wait_for_text("is not set in this environment");
    assert!(screen.contains("step 2 of 3"), "{screen}");
    assert!(!screen.contains("claude-sonnet-4-6"), "{screen}");
    assert!(
        !project.home.join("settings.json").exists(),
        "a profile without a usable key was saved"
    );
    // Ctrl+C leaves the whole setup from any step.
    pty.send(b"\x03");
    assert!(pty.wait_exit(Duration::from_secs(10)).is_some());
}

#[test]
fn a_saved_profile_whose_key_variable_is_unset_reopens_setup_with_the_reason() {
    let project = project();
    std::fs::create_dir_all(&project.home).unwrap();
    std::fs::write(
        project.home.join("settings.json"),
        json!({"currentProvider": "anthropic", "providers": {"anthropic": {"type": "anthropic", "apiKey": "$ENV:ROBOTA_TEST_UNSET_KEY", "model": "claude-sonnet-4-6"}}}).to_string(),
    )
    .unwrap();
    let server = MockServer::start(vec![]);
    let mut pty = start_with(&project, &server, &[], |cmd| {
        cmd.env_remove("ANTHROPIC_API_KEY");
    });
    let screen = pty.wait_for_text("no API key for Anthropic");
    assert!(screen.contains("Anthropic"), "{screen}");
    pty.send(b"\x03");
    assert!(pty.wait_exit(Duration::from_secs(10)).is_some());
}

#[test]
fn first_run_without_a_provider_opens_setup_and_saves_the_choice() {
    let project = project();
    let server = MockServer::start(vec![text_turn("Set up and answering.")]);
    let mut pty = start_with(&project, &server, &[], |cmd| {
        cmd.env_remove("ANTHROPIC_API_KEY");
    });
    let setup = pty.wait_for_text("Anthropic");
    assert!(
        !setup.contains("· default"),
        "no status line before a session: {setup}"
    );
    pty.send(b"\r");
    pty.wait_for_text("API key");
    let key = "sk-ant-typed-in-setup-1234567890";
    pty.paste(key);
    let masked = pty.wait_for_text("7890");
    assert!(
        !masked.contains("typed-in-setup"),
        "the key is masked: {masked}"
    );
    pty.send(b"\r");
    pty.wait_for_text("claude-sonnet-4-6");
    pty.send(b"\r");
    pty.wait_for_text("Ask anything");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.home.join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(saved["currentProvider"], "anthropic");
    assert_eq!(saved["providers"]["anthropic"]["apiKey"], key);
    pty.type_text("hello");
    pty.send(b"\r");
    pty.wait_for_text("Set up and answering.");
    assert_eq!(server.requests()[0].header("x-api-key"), Some(key));
    exit_cleanly(&mut pty);
}

fn project_with_allow_rule() -> crate::support::project::Project {
    let project = project();
    std::fs::create_dir_all(project.root.join(".claude")).unwrap();
    std::fs::write(
        project.root.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Bash(touch *)"]}}).to_string(),
    )
    .unwrap();
    project
}

fn echo_turns() -> MockServer {
    MockServer::start(vec![
        tool_turn(
            None,
            &[("b1", "Bash", json!({"command": "touch trusted-run.txt"}))],
        ),
        text_turn("Echo done."),
    ])
}

#[test]
fn trusting_a_folder_applies_its_allow_rules_and_is_remembered() {
    let project = project_with_allow_rule();
    let server = echo_turns();
    let mut pty = start(&project, &server, &[]);
    let question = pty.wait_for_text("trust");
    assert!(question.contains("permissions.allow"), "{question}");
    pty.send(b"1");
    pty.wait_for_text("Ask anything");
    pty.type_text("echo something");
    pty.send(b"\r");
    let screen = pty.wait_for_text("Echo done.");
    assert!(!screen.contains("Do you want to proceed?"), "{screen}");
    assert!(
        project.root.join("trusted-run.txt").exists(),
        "the allowed command ran"
    );
    exit_cleanly(&mut pty);

    // The answer is remembered: the next start asks nothing.
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    let screen = pty.wait_for_text("Ask anything");
    assert!(!screen.contains("trust this folder"), "{screen}");
    exit_cleanly(&mut pty);
}

#[test]
fn declining_trust_keeps_the_allow_rules_held_back() {
    let project = project_with_allow_rule();
    let server = echo_turns();
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("trust this folder");
    pty.send(b"2");
    pty.wait_for_text("Ask anything");
    pty.type_text("echo something");
    pty.send(b"\r");
    pty.wait_for_text("Do you want to proceed?");
    pty.send(b"1");
    pty.wait_for_text("Echo done.");
    exit_cleanly(&mut pty);
}

#[test]
fn a_project_setting_only_risky_env_keys_gets_the_trust_question_and_declined_they_do_not_apply() {
    let project = project();
    std::fs::create_dir_all(project.root.join(".claude")).unwrap();
    std::fs::write(
        project.root.join("evil.sh"),
        format!("echo ran > {}/bash-env-ran\n", project.root.display()),
    )
    .unwrap();
    std::fs::write(
        project.root.join(".claude/settings.json"),
        json!({"env": {"BASH_ENV": project.root.join("evil.sh").display().to_string()}})
            .to_string(),
    )
    .unwrap();
    let server = MockServer::start(vec![
        tool_turn(None, &[("b1", "Bash", json!({"command": "true"}))]),
        text_turn("Ran true."),
    ]);
    let mut pty = start(&project, &server, &[]);
    let question = pty.wait_for_text("trust this folder");
    assert!(question.contains("env.BASH_ENV"), "{question}");
    pty.send(b"2");
    pty.wait_for_text("Ask anything");
    pty.type_text("run true");
    pty.send(b"\r");
    pty.wait_for_text("Ran true.");
    assert!(
        !project.root.join("bash-env-ran").exists(),
        "the held-back BASH_ENV ran"
    );
    exit_cleanly(&mut pty);
}

#[test]
fn a_rule_saved_with_dont_ask_again_needs_no_trust_question_next_time() {
    let project = project();
    let touch = || {
        tool_turn(
            None,
            &[("b1", "Bash", json!({"command": "touch saved-rule.txt"}))],
        )
    };
    let server = MockServer::start(vec![
        touch(),
        text_turn("First done."),
        touch(),
        text_turn("Second done."),
    ]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("touch it");
    pty.send(b"\r");
    pty.wait_for_text("Do you want to proceed?");
    pty.send(b"2");
    pty.wait_for_text("First done.");
    exit_cleanly(&mut pty);
    std::fs::remove_file(project.root.join("saved-rule.txt")).unwrap();

    // Next start: no trust question for the rule robota saved, and it applies.
    let mut pty = start(&project, &server, &[]);
    let screen = pty.wait_for_text("Ask anything");
    assert!(!screen.contains("trust this folder"), "{screen}");
    pty.type_text("touch it again");
    pty.send(b"\r");
    let screen = pty.wait_for_text("Second done.");
    assert!(!screen.contains("Do you want to proceed?"), "{screen}");
    assert!(project.root.join("saved-rule.txt").exists());
    exit_cleanly(&mut pty);

    // Nor a warning in -p; a rule the project's files bring is still held back.
    let local = project.root.join(".robota/settings.local.json");
    let out = project.run(&server, &["config"]);
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("held back"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let mut settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    settings["permissions"]["allow"]
        .as_array_mut()
        .unwrap()
        .push(json!("Bash(curl *)"));
    std::fs::write(&local, settings.to_string()).unwrap();
    let out = project.run(&server, &["config"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("held back until trusted: permissions.allow"),
        "{text}"
    );
    assert!(
        text.contains("Bash(touch *)"),
        "the saved rule stays: {text}"
    );
    assert!(
        !text.contains("curl"),
        "the project's own rule applied: {text}"
    );
}

#[test]
fn closing_the_start_picker_opens_a_new_session() {
    let project = project();
    let server = MockServer::start(vec![text_turn("Old."), text_turn("Fresh start.")]);
    let out = project.run(&server, &["-p", "an old prompt"]);
    assert!(out.status.success());
    let mut pty = start(&project, &server, &["--resume"]);
    pty.wait_for_text("Resume a session");
    pty.send(b"\x1b");
    let screen = pty.wait_for_text("Ask anything");
    assert!(!screen.contains("an old prompt"), "{screen}");
    pty.type_text("new");
    pty.send(b"\r");
    pty.wait_for_text("Fresh start.");
    let messages = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(messages, 1, "a new session has no history");
    exit_cleanly(&mut pty);
}

#[test]
fn resume_with_no_earlier_session_says_so_in_the_new_one() {
    let project = project();
    let server = MockServer::start(vec![text_turn("Fresh.")]);
    let mut pty = start(&project, &server, &["--resume"]);
    let screen = pty.wait_for_text("No earlier sessions in this directory to resume");
    assert!(screen.contains("this is a new session"), "{screen}");
    assert!(screen.contains("Ask anything"), "{screen}");
    pty.type_text("hi");
    pty.send(b"\r");
    pty.wait_for_text("Fresh.");
    exit_cleanly(&mut pty);
}

#[test]
fn rename_without_a_name_shows_its_usage() {
    let project = project();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    // Typed out in full, Enter runs it (a completion of `/ren` would wait for the name).
    pty.type_text("/rename");
    pty.send(b"\r");
    pty.wait_for_text("Usage: /rename <name>");
    assert!(server.requests().is_empty());
    exit_cleanly(&mut pty);
}

#[test]
fn a_command_on_the_command_line_runs_then_the_next_prompt_is_answered() {
    let project = project();
    let server = MockServer::start(vec![text_turn("Answered after help.")]);
    let mut pty = start(&project, &server, &["/help"]);
    pty.wait_for_text("Keys:");
    // The command ended: the spinner stops, so the next prompt is sent, not queued.
    pty.wait_for("the spinner to stop", Duration::from_secs(10), |s| {
        !s.contains("esc to interrupt")
    });
    pty.type_text("hi");
    pty.send(b"\r");
    let screen = pty.wait_for_text("Answered after help.");
    assert!(!screen.contains("queued:"), "{screen}");
    assert_eq!(server.requests().len(), 1, "/help called no model");
    assert_eq!(last_user_text(&server, 1), "hi");
    exit_cleanly(&mut pty);
}

#[test]
fn an_unknown_command_says_so_and_reaches_no_model() {
    let project = project();
    let server = MockServer::start(vec![text_turn("A path is a prompt.")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("/compcat");
    pty.send(b"\r");
    pty.wait_for_text("Unknown command: /compcat");
    assert!(server.requests().is_empty());
    pty.type_text("/usr/bin/env is broken");
    pty.send(b"\r");
    pty.wait_for_text("A path is a prompt.");
    assert_eq!(last_user_text(&server, 1), "/usr/bin/env is broken");
    exit_cleanly(&mut pty);
}

#[test]
fn a_projects_mcp_json_brings_the_trust_question_and_trusted_its_servers_start() {
    let project = project();
    let started = project.root.join("server-started");
    std::fs::write(
        project.root.join(".mcp.json"),
        serde_json::json!({"mcpServers": {"probe": {
            "command": "sh", "args": ["-c", format!("touch {}", started.display())]
        }}})
        .to_string(),
    )
    .unwrap();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    let question = pty.wait_for_text("trust this folder");
    assert!(question.contains(".mcp.json: probe"), "{question}");
    assert!(!started.exists(), "no server starts before the answer");
    pty.send(b"1");
    pty.wait_for_text("Ask anything");
    pty.wait_for(
        "the trusted server to start",
        Duration::from_secs(10),
        |_| started.exists(),
    );
    exit_cleanly(&mut pty);
}

#[test]
fn a_resumed_session_redraws_edits_as_diffs_and_background_commands_as_jobs() {
    let project = project();
    let lines: Vec<String> = (1..=30).map(|n| format!("line {n}")).collect();
    std::fs::write(project.root.join("notes.txt"), lines.join("\n") + "\n").unwrap();
    let server = MockServer::start(vec![
        tool_turn(None, &[("r1", "Read", json!({"file_path": "notes.txt"}))]),
        tool_turn(
            None,
            &[(
                "e1",
                "Edit",
                json!({"file_path": "notes.txt", "old_string": "line 20\n", "new_string": "twenty\n"}),
            )],
        ),
        tool_turn(
            None,
            &[(
                "b1",
                "Bash",
                json!({"command": "echo started", "run_in_background": true}),
            )],
        ),
        text_turn("Edited and started."),
    ]);
    let args = ["-p", "edit it", "--allowedTools", "Read,Edit,Bash"];
    let out = project.run(&server, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(project.root.join("notes.txt"))
            .unwrap()
            .contains("twenty")
    );

    let mut pty = start(&project, &server, &["--continue"]);
    let screen = pty.wait_for_text("Edited and started.");
    // The edit as the diff it was live: its summary and its rows at the file's numbers.
    assert!(
        screen.contains("Updated notes.txt with 1 addition and 1 removal"),
        "{screen}"
    );
    assert!(screen.contains("@@ -17,7 +17,7 @@"), "{screen}");
    assert!(screen.contains("20    - line 20"), "{screen}");
    assert!(screen.contains("   20 + twenty"), "{screen}");
    assert!(
        !screen.contains("cat -n"),
        "the model's text is not redrawn: {screen}"
    );
    assert!(
        screen.contains("Running in the background as bash_1"),
        "{screen}"
    );
    assert!(!screen.contains("Read that file"), "{screen}");
    exit_cleanly(&mut pty);
}
