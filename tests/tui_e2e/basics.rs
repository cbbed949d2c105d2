//! Typing (including Korean, key by key and pasted), watching the answer stream, Shift+Tab,
//! Ctrl+C twice, and leaving with the terminal restored.

use std::time::Duration;

use crate::support::MockServer;
use crate::support::anthropic::text_turn;
use crate::support::project::project;
use crate::{exit_cleanly, last_user_text, start, start_with};

#[test]
fn a_prompt_streams_its_answer_and_exit_restores_the_terminal() {
    let project = project();
    let server = MockServer::start(vec![text_turn("Hello from the **mock** model.")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("say hello");
    pty.send(b"\r");
    let screen = pty.wait_for_text("Hello from the mock model.");
    assert!(screen.contains("> say hello"), "{screen}");
    assert!(
        screen.contains("claude-sonnet"),
        "status line shows the model: {screen}"
    );
    exit_cleanly(&mut pty);
    let raw = String::from_utf8_lossy(&pty.raw()).into_owned();
    let entered = raw.find("\x1b[?1049h").expect("alternate screen entered");
    let left = raw.rfind("\x1b[?1049l").expect("alternate screen left");
    assert!(left > entered);
    for mode_off in ["\x1b[?2004l", "\x1b[?1000l", "\x1b[?1004l", "\x1b[<1u"] {
        assert!(
            raw[entered..].contains(mode_off),
            "{mode_off:?} not restored"
        );
    }
}

#[test]
fn korean_typed_key_by_key_and_pasted_reaches_the_model_whole() {
    let project = project();
    let server = MockServer::start(vec![text_turn("네, 알겠습니다."), text_turn("좋아요")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("안녕하세요 세계");
    pty.wait_for_text("안녕하세요 세계");
    pty.send(b"\r");
    pty.wait_for_text("네, 알겠습니다.");
    assert_eq!(last_user_text(&server, 1), "안녕하세요 세계");

    pty.paste("붙여넣은 한국어\r\n두 번째 줄");
    pty.wait_for_text("두 번째 줄");
    pty.send(b"\r");
    pty.wait_for_text("좋아요");
    assert_eq!(last_user_text(&server, 2), "붙여넣은 한국어\n두 번째 줄");
    exit_cleanly(&mut pty);
}

#[test]
fn shift_tab_cycles_the_mode_shown_in_the_status_line() {
    let project = project();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("· default ·");
    pty.send(b"\x1b[Z");
    pty.wait_for_text("acceptEdits");
    pty.send(b"\x1b[Z");
    pty.wait_for_text("plan");
    exit_cleanly(&mut pty);
}

#[test]
fn ctrl_c_clears_the_composer_then_asks_then_exits() {
    let project = project();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("draft");
    pty.wait_for_text("> draft");
    pty.send(b"\x03");
    pty.wait_for_text("Ask anything");
    pty.send(b"\x03");
    pty.wait_for_text("Press Ctrl+C again to exit");
    pty.send(b"\x03");
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(0));
}

#[test]
fn the_ctrl_c_hint_expires_and_a_late_second_press_does_not_exit() {
    let project = project();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.send(b"\x03");
    pty.wait_for_text("Press Ctrl+C again to exit");
    pty.wait_for("the hint to expire", Duration::from_secs(10), |s| {
        !s.contains("Press Ctrl+C again to exit")
    });
    // The window closed with the hint: this press asks again instead of exiting.
    pty.send(b"\x03");
    pty.wait_for_text("Press Ctrl+C again to exit");
    pty.send(b"\x03");
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(0));
}

#[test]
fn a_bang_command_runs_in_the_shell_and_its_output_is_shown() {
    let project = project();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("!echo shell-says-hi; exit 3");
    pty.send(b"\r");
    let screen = pty.wait_for_text("shell-says-hi");
    pty.wait_for_text("Exit code 3");
    assert!(screen.contains("echo shell-says-hi"), "{screen}");
    assert!(
        server.requests().is_empty(),
        "no model call for a ! command"
    );
    exit_cleanly(&mut pty);
}

#[test]
fn esc_stops_a_running_bang_command() {
    let project = project();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("!sleep 30; touch should-not-exist");
    pty.send(b"\r");
    // It runs as a submission: the spinner says so, and Esc interrupts it.
    pty.wait_for_text("esc to interrupt");
    pty.send(b"\x1b");
    pty.wait_for_text("Command interrupted by user");
    assert!(!project.root.join("should-not-exist").exists());
    pty.wait_for("the spinner to stop", Duration::from_secs(10), |s| {
        !s.contains("esc to interrupt")
    });
    exit_cleanly(&mut pty);
}

#[test]
fn copy_uses_the_local_clipboard_tool_when_there_is_one_and_says_so() {
    let project = project();
    let copied = project.user_home.join("copied.txt");
    let (_, path) = crate::stand_in_program(
        &project,
        "xclip",
        &format!(
            "#!/bin/sh\n[ \"$1 $2\" = \"-selection clipboard\" ] || exit 3\ncat > {}\n",
            copied.display()
        ),
    );
    let server = MockServer::start(vec![text_turn("Run this:\n\n```sh\ncargo test\n```\n")]);
    let mut pty = start_with(&project, &server, &[], |cmd| {
        cmd.env("PATH", &path);
        cmd.env("DISPLAY", ":99");
    });
    pty.wait_for_text("Ask anything");
    pty.type_text("how do I test");
    pty.send(b"\r");
    crate::wait_for_answer(&pty, "cargo test");
    pty.type_text("/copy 1");
    pty.send(b"\r");
    pty.wait_for_text("with xclip");
    assert_eq!(std::fs::read_to_string(&copied).unwrap(), "cargo test");
    let raw = String::from_utf8_lossy(&pty.raw()).into_owned();
    assert!(
        !raw.contains("\x1b]52;"),
        "OSC 52 sent although xclip took it"
    );
    exit_cleanly(&mut pty);
}

#[test]
fn export_without_a_file_puts_the_whole_session_on_the_clipboard_and_writes_nothing() {
    let project = project();
    let copied = project.user_home.join("copied.txt");
    let (_, path) = crate::stand_in_program(
        &project,
        "xclip",
        &format!("#!/bin/sh\ncat > {}\n", copied.display()),
    );
    let server = MockServer::start(vec![text_turn("The answer is 42.")]);
    let mut pty = start_with(&project, &server, &[], |cmd| {
        cmd.env("PATH", &path);
        cmd.env("DISPLAY", ":99");
    });
    pty.wait_for_text("Ask anything");
    let before: Vec<_> = std::fs::read_dir(&project.root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    pty.type_text("what is the answer");
    pty.send(b"\r");
    crate::wait_for_answer(&pty, "The answer is 42.");
    pty.type_text("/export");
    pty.send(b"\r");
    pty.wait_for_text("with xclip");
    let text = std::fs::read_to_string(&copied).unwrap();
    assert!(text.contains("## You\n\nwhat is the answer"), "{text}");
    assert!(text.contains("## robota\n\nThe answer is 42."), "{text}");
    assert!(
        !pty.contents().contains("## You"),
        "the transcript was not meant for the screen"
    );
    let after: Vec<_> = std::fs::read_dir(&project.root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(before, after, "/export wrote a file unasked");
    exit_cleanly(&mut pty);
}

#[test]
fn copy_puts_the_last_answer_on_the_clipboard_with_osc_52() {
    let project = project();
    let server = MockServer::start(vec![text_turn("Run this:\n\n```sh\ncargo test\n```\n")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("how do I test");
    pty.send(b"\r");
    crate::wait_for_answer(&pty, "cargo test");
    pty.type_text("/copy 1");
    pty.send(b"\r");
    pty.wait_for_text("Copied 10 characters through the terminal (OSC 52)");
    let raw = String::from_utf8_lossy(&pty.raw()).into_owned();
    // base64("cargo test") = Y2FyZ28gdGVzdA==
    assert!(
        raw.contains("\x1b]52;c;Y2FyZ28gdGVzdA==\x07"),
        "no OSC 52 sequence"
    );
    exit_cleanly(&mut pty);
}

/// What robota printed after leaving the alternate screen (what stays in the scrollback).
fn after_leaving(raw: &[u8]) -> String {
    let raw = String::from_utf8_lossy(raw).into_owned();
    let at = raw
        .rfind("\x1b[?1049l")
        .expect("the alternate screen was left");
    raw[at..].to_string()
}

#[test]
fn leaving_prints_the_last_answer_to_the_scrollback() {
    let project = project();
    let server = MockServer::start(vec![text_turn("The answer is 42.")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("what is it");
    pty.send(b"\r");
    pty.wait_for_text("The answer is 42.");
    exit_cleanly(&mut pty);
    let after = after_leaving(&pty.raw());
    assert!(after.contains("The answer is 42."), "{after:?}");
    assert!(after.contains("robota --resume"), "{after:?}");
    assert!(!after.contains("> what is it"), "{after:?}");
}

#[test]
fn exit_transcript_conversation_prints_every_prompt_and_answer() {
    let project = project();
    std::fs::create_dir_all(&project.home).unwrap();
    std::fs::write(
        project.home.join("settings.json"),
        r#"{"exitTranscript": "conversation"}"#,
    )
    .unwrap();
    let server = MockServer::start(vec![text_turn("first answer"), text_turn("second answer")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("first question");
    pty.send(b"\r");
    pty.wait_for_text("first answer");
    pty.type_text("second question");
    pty.send(b"\r");
    pty.wait_for_text("second answer");
    exit_cleanly(&mut pty);
    let after = after_leaving(&pty.raw());
    let order: Vec<usize> = [
        "> first question",
        "first answer",
        "> second question",
        "second answer",
    ]
    .iter()
    .map(|needle| {
        after
            .find(needle)
            .unwrap_or_else(|| panic!("{needle}: {after:?}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{after:?}");
}

#[test]
fn a_new_session_opens_with_a_welcome_header_and_a_resumed_one_without() {
    let project = project();
    let server = MockServer::start(vec![text_turn("hello")]);
    let mut pty = start(&project, &server, &[]);
    // The first frame comes before the session is open; the header with it.
    let screen = pty.wait_for_text("/help lists commands");
    assert!(
        screen.contains(&format!("robota {}", env!("CARGO_PKG_VERSION"))),
        "{screen}"
    );
    assert!(
        screen.contains("model: claude-sonnet-4-6 (anthropic)"),
        "{screen}"
    );
    pty.type_text("hi");
    pty.send(b"\r");
    pty.wait_for_text("hello");
    exit_cleanly(&mut pty);

    let mut pty = start(&project, &server, &["-c"]);
    let screen = pty.wait_for_text("hello");
    assert!(!screen.contains("/help lists commands"), "{screen}");
    exit_cleanly(&mut pty);
}

#[test]
fn a_finished_turn_notifies_with_osc_9_only_while_the_terminal_is_unfocused() {
    let project = project();
    let server = MockServer::start(vec![text_turn("first done"), text_turn("second done")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("/help lists commands");
    pty.send(b"\x1b[O"); // focus out
    pty.type_text("first");
    pty.send(b"\r");
    pty.wait_for_text("first done");
    pty.wait_for_raw(b"\x1b]9;robota finished", Duration::from_secs(10));
    pty.send(b"\x1b[I"); // focus in
    pty.type_text("second");
    pty.send(b"\r");
    pty.wait_for_text("second done");
    exit_cleanly(&mut pty);
    let raw = String::from_utf8_lossy(&pty.raw()).into_owned();
    assert_eq!(raw.matches("\x1b]9;").count(), 1, "notified while focused");
}

#[test]
fn a_status_line_command_shows_its_first_line_with_the_session_facts() {
    let project = project();
    std::fs::create_dir_all(&project.home).unwrap();
    let command = "python3 -c 'import json,sys; d=json.load(sys.stdin); print(\"STATUS\", d[\"model\"][\"id\"], d[\"permission_mode\"]); print(\"second line\")'";
    std::fs::write(
        project.home.join("settings.json"),
        serde_json::json!({"statusLine": {"type": "command", "command": command}}).to_string(),
    )
    .unwrap();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    let screen = pty.wait_for_text("STATUS claude-sonnet-4-6 default");
    assert!(!screen.contains("second line"), "{screen}");
    exit_cleanly(&mut pty);
}

#[test]
fn the_status_line_command_runs_without_robotas_key() {
    let project = project();
    std::fs::create_dir_all(&project.home).unwrap();
    let command = "echo \"STATUS key=${ANTHROPIC_API_KEY:-withheld} home=${ROBOTA_HOME:+set}\"";
    std::fs::write(
        project.home.join("settings.json"),
        serde_json::json!({"statusLine": {"type": "command", "command": command}}).to_string(),
    )
    .unwrap();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("STATUS key=withheld home=set");
    exit_cleanly(&mut pty);
}

#[test]
fn question_mark_on_an_empty_composer_opens_the_key_sheet_and_help_lists_keys_too() {
    let project = project();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("/help lists commands");
    pty.send(b"?");
    let sheet = pty.wait_for_text("cycle the permission mode");
    assert!(sheet.contains("Keys (any key closes)"), "{sheet}");
    pty.send(b"x");
    let screen = pty.wait_for("the sheet to close", Duration::from_secs(10), |s| {
        !s.contains("Keys (any key closes)")
    });
    assert!(
        !screen.contains("> x"),
        "the closing key was typed: {screen}"
    );
    // Typed after text, ? is just a character.
    pty.type_text("why?");
    pty.wait_for_text("> why?");
    pty.send(b"\x03");
    pty.type_text("/help");
    pty.send(b"\r");
    // The keys follow the commands (the screen shows the end of the output).
    let help = pty.wait_for_text("this sheet (empty composer)");
    assert!(help.contains("Keys:"), "{help}");
    assert!(help.contains("Shift+Tab"), "{help}");
    exit_cleanly(&mut pty);
}

#[test]
fn ctrl_r_searches_the_prompt_history_of_this_project_then_the_others() {
    let project = project();
    let history = project.home.join("history");
    std::fs::create_dir_all(&history).unwrap();
    std::fs::write(
        history.join("-some-other-project.jsonl"),
        "{\"display\":\"question from elsewhere\",\"timestamp\":1}\n",
    )
    .unwrap();
    let server = MockServer::start(vec![text_turn("one"), text_turn("two")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("/help lists commands");
    for prompt in ["alpha question", "beta question"] {
        pty.type_text(prompt);
        pty.send(b"\r");
    }
    pty.wait_for_text("two");
    pty.send(b"\x12"); // Ctrl+R
    let picker = pty.wait_for_text("Search the prompt history");
    assert!(picker.contains("beta question"), "{picker}");
    assert!(picker.contains("question from elsewhere"), "{picker}");
    assert!(
        picker.find("beta question") < picker.find("alpha question"),
        "newest first: {picker}"
    );
    pty.type_text("alph");
    pty.wait_for("the filter", Duration::from_secs(10), |s| {
        !s.contains("beta question")
    });
    pty.send(b"\r");
    pty.wait_for_text("> alpha question");
    assert_eq!(
        server.requests().len(),
        2,
        "recalling a prompt does not send it"
    );
    exit_cleanly_after_clearing(&mut pty);
}

/// Clears the composer (Ctrl+C) and leaves (Ctrl+D).
fn exit_cleanly_after_clearing(pty: &mut crate::support::pty::PtySession) {
    pty.send(b"\x03");
    pty.wait_for_text("Ask anything");
    exit_cleanly(pty);
}

#[test]
fn commands_show_the_line_that_was_typed_with_its_arguments() {
    let project = project();
    let commands = project.user_home.join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(commands.join("greet.md"), "Greet $ARGUMENTS warmly.\n").unwrap();
    let server = MockServer::start(vec![text_turn("안녕하세요, 민수!")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("/greet 민수");
    pty.send(b"\r");
    crate::wait_for_answer(&pty, "안녕하세요, 민수!");
    let screen = pty.contents();
    let echo = screen
        .find("> /greet 민수")
        .expect("the custom command's line is shown");
    let answer = screen.find("안녕하세요, 민수!").unwrap();
    assert!(echo < answer, "{screen}");
    assert!(last_user_text(&server, 1).contains("Greet 민수 warmly."));
    pty.type_text("/mode plan");
    pty.send(b"\r");
    let screen = pty.wait_for_text("Permission mode set to plan.");
    let heading = screen
        .find("/mode plan")
        .expect("the heading keeps the argument");
    assert!(
        heading < screen.find("Permission mode set to plan.").unwrap(),
        "{screen}"
    );
    exit_cleanly(&mut pty);
}

#[test]
fn an_at_mention_says_on_screen_what_it_attached() {
    let project = project();
    let lines = std::fs::read_to_string(project.root.join("calc.py"))
        .unwrap()
        .trim_end()
        .lines()
        .count();
    let server = MockServer::start(vec![text_turn("It subtracts.")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("what does @calc.py do");
    pty.send(b"\r");
    crate::wait_for_answer(&pty, "It subtracts.");
    let screen = pty.contents();
    let attached = format!("Attached calc.py ({lines} lines)");
    let shown = screen.find(&attached).unwrap_or_else(|| panic!("{screen}"));
    assert!(shown < screen.find("It subtracts.").unwrap(), "{screen}");
    exit_cleanly(&mut pty);
}
