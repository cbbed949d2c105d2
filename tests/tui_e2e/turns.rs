//! Turn control in the UI: approving an Edit in the popup (with its diff), denying a Bash
//! call with feedback for the model, Esc interrupting a stream, a prompt queued while a
//! turn runs, and a resize re-wrapping the streamed answer.

use std::time::Duration;

use serde_json::json;

use crate::support::MockServer;
use crate::support::anthropic::{text_turn, text_turn_held, tool_turn};
use crate::support::project::{project, result_text, tool_results};
use crate::{exit_cleanly, last_user_text, start, start_sized};

#[test]
fn approving_an_edit_in_the_popup_changes_the_file() {
    let project = project();
    let server = MockServer::start(vec![
        tool_turn(None, &[("r1", "Read", json!({"file_path": "calc.py"}))]),
        tool_turn(
            Some("Fixing the sign."),
            &[(
                "e1",
                "Edit",
                json!({"file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}),
            )],
        ),
        text_turn("Fixed the addition."),
    ]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("fix add");
    pty.send(b"\r");
    // The popup's last line: the whole popup is on screen (not half a frame).
    let popup = pty.wait_for_text("what to do instead");
    assert!(
        popup.contains("-     return a - b") || popup.contains("- return a - b"),
        "{popup}"
    );
    assert!(popup.contains("return a + b"), "{popup}");
    assert!(popup.contains("1. Yes"), "{popup}");
    pty.send(b"1");
    pty.wait_for_text("Fixed the addition.");
    let calc = std::fs::read_to_string(project.root.join("calc.py")).unwrap();
    assert!(calc.contains("return a + b"), "{calc}");
    exit_cleanly(&mut pty);
}

#[test]
fn denying_bash_with_feedback_sends_the_feedback_to_the_model() {
    let project = project();
    let server = MockServer::start(vec![
        tool_turn(None, &[("b1", "Bash", json!({"command": "rm -rf build"}))]),
        text_turn("Understood, I will move it to the trash."),
    ]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("clean up");
    pty.send(b"\r");
    let popup = pty.wait_for_text("Do you want to proceed?");
    assert!(popup.contains("rm -rf build"), "{popup}");
    pty.send(b"3");
    pty.wait_for_text("Tell robota what to do instead");
    pty.type_text("use trash instead");
    pty.send(b"\r");
    pty.wait_for_text("Understood, I will move it to the trash.");
    // The feedback stays visible in the transcript.
    pty.wait_for_text("Refused Bash: use trash instead");
    assert!(server.wait_for_requests(2, Duration::from_secs(10)));
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["is_error"], true);
    assert!(
        result_text(&results[0]).contains("use trash instead"),
        "{:?}",
        results[0]
    );
    exit_cleanly(&mut pty);
}

#[test]
fn esc_on_the_permission_popup_refuses_and_stops_the_turn() {
    let project = project();
    let server = MockServer::start(vec![
        tool_turn(
            None,
            &[("b1", "Bash", json!({"command": "touch made.txt"}))],
        ),
        text_turn("this answer must never be asked for"),
    ]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("make a file");
    pty.send(b"\r");
    pty.wait_for_text("Do you want to proceed?");
    pty.send(b"\x1b");
    pty.wait_for_text("Interrupted");
    pty.wait_for("the turn to end", Duration::from_secs(10), |s| {
        !s.contains("esc to interrupt")
    });
    assert!(!project.root.join("made.txt").exists());
    assert_eq!(server.requests().len(), 1, "the turn went on after Esc");
    exit_cleanly(&mut pty);
}

#[test]
fn esc_interrupts_a_streaming_answer_and_keeps_what_arrived() {
    let project = project();
    let server = MockServer::start(vec![text_turn_held(
        "First part of the answer. Second part never arrives.",
        4,
    )]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("long answer please");
    pty.send(b"\r");
    pty.wait_for_text("esc to interrupt");
    pty.wait_for_text("First part");
    pty.send(b"\x1b");
    let screen = pty.wait_for_text("Interrupted");
    assert!(screen.contains("First part"), "{screen}");
    assert!(!screen.contains("esc to interrupt"), "{screen}");
    server.release_held();
    exit_cleanly(&mut pty);
}

#[test]
fn a_prompt_entered_while_busy_is_queued_then_sent() {
    let project = project();
    let server = MockServer::start(vec![
        text_turn_held("Working on the first one.", 4),
        text_turn("Second answer."),
    ]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("first");
    pty.send(b"\r");
    pty.wait_for_text("Working");
    pty.type_text("second");
    pty.send(b"\r");
    let screen = pty.wait_for_text("queued: second");
    assert_eq!(server.requests().len(), 1, "{screen}");
    server.release_held();
    pty.wait_for_text("Second answer.");
    assert_eq!(last_user_text(&server, 2), "second");
    exit_cleanly(&mut pty);
}

#[test]
fn backspace_on_an_empty_composer_takes_the_queued_prompt_back() {
    let project = project();
    let server = MockServer::start(vec![text_turn_held("Busy for a while.", 4)]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("first");
    pty.send(b"\r");
    pty.wait_for_text("Busy");
    pty.type_text("later");
    pty.send(b"\r");
    pty.wait_for_text("queued: later");
    pty.send(b"\x7f");
    pty.wait_for("the queue emptied", Duration::from_secs(10), |s| {
        !s.contains("queued:") && s.contains("> later")
    });
    pty.send(b"\x1b");
    pty.wait_for_text("Interrupted");
    server.release_held();
    pty.send(b"\x03");
    pty.send(b"\x04");
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(0));
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_resize_mid_stream_rewraps_the_answer_to_the_new_width() {
    let project = project();
    let sentence = "The quick brown fox jumps over the lazy dog again and again until the end.";
    let server = MockServer::start(vec![text_turn_held(&format!("{sentence} {sentence}"), 5)]);
    let mut pty = start_sized(&project, &server, &[], 100, 24);
    pty.wait_for_text("Ask anything");
    pty.type_text("fox");
    pty.send(b"\r");
    pty.wait_for_text("quick brown");
    pty.resize(40, 24);
    let screen = pty.wait_for("text wrapped at 40 columns", Duration::from_secs(10), |s| {
        s.contains("Ask anything") && s.lines().all(|l| l.chars().count() <= 40)
    });
    server.release_held();
    let screen_after = pty.wait_for("the whole answer", Duration::from_secs(10), |s| {
        s.matches("end.").count() == 2
    });
    let rows: Vec<&str> = screen_after.lines().filter(|l| l.contains("fox")).collect();
    assert!(rows.len() >= 2, "{screen}\n---\n{screen_after}");
    for row in screen_after.lines() {
        assert!(row.trim_end().chars().count() <= 40, "{row:?}");
    }
    exit_cleanly(&mut pty);
}

#[test]
fn dont_ask_again_saves_the_exact_rule_and_the_next_call_runs_unasked() {
    let project = project();
    let server = MockServer::start(vec![
        tool_turn(None, &[("b1", "Bash", json!({"command": "touch one.txt"}))]),
        tool_turn(None, &[("b2", "Bash", json!({"command": "touch two.txt"}))]),
        text_turn("Both files made."),
    ]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("make files");
    pty.send(b"\r");
    let popup = pty.wait_for_text("don't ask again");
    assert!(popup.contains("Bash(touch *)"), "{popup}");
    pty.send(b"2");
    let screen = pty.wait_for_text("Both files made.");
    assert_eq!(
        screen.matches("Do you want to proceed?").count(),
        0,
        "{screen}"
    );
    assert!(project.root.join("one.txt").exists() && project.root.join("two.txt").exists());
    let local: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.root.join(".robota/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(local["permissions"]["allow"], json!(["Bash(touch *)"]));
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain", "-uall"])
        .current_dir(&project.root)
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains("one.txt") && !status.contains("settings.local.json"),
        "the saved rule stays out of git, as Claude Code's local file does: {status}"
    );
    exit_cleanly(&mut pty);
}

#[test]
fn a_one_by_one_terminal_grown_to_full_size_draws_the_whole_screen() {
    let project = project();
    let server = MockServer::start(vec![text_turn("Plenty of room now.")]);
    let mut pty = start_sized(&project, &server, &[], 1, 1);
    pty.resize(80, 24);
    pty.wait_for_text("Ask anything");
    pty.type_text("hi");
    pty.send(b"\r");
    pty.wait_for_text("Plenty of room now.");
    pty.resize(20, 5);
    pty.resize(1, 1);
    pty.resize(60, 20);
    pty.wait_for_text("Plenty of room now.");
    exit_cleanly(&mut pty);
}

#[test]
fn approving_a_plan_leaves_plan_mode_and_the_edit_that_follows_applies() {
    let project = project();
    let server = MockServer::start(vec![
        tool_turn(None, &[("r1", "Read", json!({"file_path": "calc.py"}))]),
        tool_turn(
            None,
            &[(
                "p1",
                "ExitPlanMode",
                json!({"plan": "1. Change `a - b` to `a + b` in calc.py\n2. Run the test"}),
            )],
        ),
        tool_turn(
            None,
            &[(
                "e1",
                "Edit",
                json!({"file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}),
            )],
        ),
        text_turn("Fixed as planned."),
    ]);
    let mut pty = start(&project, &server, &["--permission-mode", "plan"]);
    pty.wait_for_text("/help lists commands");
    pty.type_text("fix add");
    pty.send(b"\r");
    let popup = pty.wait_for_text("Yes, and auto-accept edits");
    assert!(popup.contains("Here is robota's plan"), "{popup}");
    assert!(popup.contains("Change `a - b` to `a + b`"), "{popup}");
    pty.send(b"1");
    let screen = pty.wait_for_text("Fixed as planned.");
    assert!(!screen.contains("Do you want to proceed?"), "{screen}");
    let calc = std::fs::read_to_string(project.root.join("calc.py")).unwrap();
    assert!(calc.contains("return a + b"), "{calc}");
    // The model was told it was planning, and the approval reached it.
    let first = server.requests()[0].body["messages"].to_string();
    assert!(first.contains("Plan mode is active"), "{first}");
    let third = server.requests()[2].body["messages"].to_string();
    assert!(third.contains("approved your plan"), "{third}");
    exit_cleanly(&mut pty);
}

#[test]
fn rejecting_a_plan_with_feedback_keeps_planning() {
    let project = project();
    let server = MockServer::start(vec![
        tool_turn(
            None,
            &[(
                "p1",
                "ExitPlanMode",
                json!({"plan": "1. Rewrite everything"}),
            )],
        ),
        tool_turn(
            None,
            &[(
                "w1",
                "Write",
                json!({"file_path": "new.py", "content": "x = 1\n"}),
            )],
        ),
        text_turn("Still planning."),
    ]);
    let mut pty = start(&project, &server, &["--permission-mode", "plan"]);
    pty.wait_for_text("/help lists commands");
    pty.type_text("rewrite");
    pty.send(b"\r");
    pty.wait_for_text("No, keep planning");
    pty.send(b"3");
    pty.wait_for_text("Tell robota what to do instead");
    pty.type_text("smaller steps please");
    pty.send(b"\r");
    pty.wait_for_text("Still planning.");
    // Still in plan mode: the Write was refused, not asked about.
    assert!(!project.root.join("new.py").exists());
    let second = server.requests()[1].body["messages"].to_string();
    assert!(second.contains("smaller steps please"), "{second}");
    let third = server.requests()[2].body["messages"].to_string();
    assert!(third.contains("plan mode is read-only"), "{third}");
    exit_cleanly(&mut pty);
}

#[test]
fn a_subagents_permission_question_is_asked_in_the_popup_naming_it() {
    let project = project();
    let server = MockServer::start(vec![
        tool_turn(
            None,
            &[(
                "a1",
                "Agent",
                json!({"description": "make marker", "prompt": "Create marker.txt", "subagent_type": "general-purpose"}),
            )],
        ),
        tool_turn(
            None,
            &[("b1", "Bash", json!({"command": "touch marker.txt"}))],
        ),
        text_turn("SUBAGENT-DONE"),
        text_turn("The subagent made the marker."),
    ]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("delegate it");
    pty.send(b"\r");
    let popup = pty.wait_for_text("Do you want to proceed?");
    assert!(
        popup.contains("subagent general-purpose: make marker asks"),
        "{popup}"
    );
    assert!(popup.contains("touch marker.txt"), "{popup}");
    pty.send(b"1");
    pty.wait_for_text("The subagent made the marker.");
    assert!(project.root.join("marker.txt").exists());
    exit_cleanly(&mut pty);
}

#[test]
fn a_custom_command_is_offered_in_the_slash_popup_and_runs() {
    let project = project();
    let commands = project.root.join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("greet.md"),
        "---\ndescription: Greets someone by name\nargument-hint: <name>\n---\nSay hello to $ARGUMENTS.",
    )
    .unwrap();
    let server = MockServer::start(vec![text_turn("Hello, Ada!")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("/gre");
    let popup = pty.wait_for_text("Greets someone by name");
    assert!(popup.contains("project"), "{popup}");
    pty.type_text("et Ada");
    pty.send(b"\r");
    pty.wait_for_text("Hello, Ada!");
    assert_eq!(last_user_text(&server, 1), "Say hello to Ada.");
    exit_cleanly(&mut pty);
}
