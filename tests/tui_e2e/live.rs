//! Commands that take a while: a `!command` shows as a live cell with its last lines and
//! Esc stops it (its process is gone); the model's Bash call shows its last lines too, and
//! Ctrl+B sends it to the background (the model gets the job's id and log file while the
//! command goes on; the status line counts the job); a prompt sent with Tab during a turn
//! reaches the model's next call in the same turn, while one queued with Enter waits for
//! the turn's end. The commands wait on fifos the tests control, so nothing is timed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::MockServer;
use crate::support::anthropic::{text_turn, tool_turn};
use crate::support::project::{project, result_text, tool_results};
use crate::{exit_cleanly, last_user_text, start};

/// A fifo in `dir` a command can block on until [`release`] writes to it.
fn fifo(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap();
    assert!(made.success());
    path
}

/// Lets the command blocked reading `fifo` go on (opening for writing waits for it).
fn release(fifo: &Path) {
    let path = fifo.to_path_buf();
    std::thread::spawn(move || std::fs::write(path, "go\n").unwrap());
}

/// Pids of the processes whose command line is exactly `argv`.
fn processes(argv: &[&str]) -> Vec<u32> {
    let wanted: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| !stat.contains(") Z"));
            alive && std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == wanted)
        })
        .collect()
}

/// Waits (bounded) until no process runs `argv`.
fn gone(argv: &[&str]) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes(argv).is_empty() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

#[test]
fn a_running_bang_command_is_live_and_esc_stops_it() {
    let project = project();
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    let argv = ["sleep", "30.417"];
    pty.type_text("!sleep 30.417");
    pty.send(b"\r");
    let screen = pty.wait_for_text("Running… (esc to stop)");
    assert!(screen.contains("!sleep 30.417"), "{screen}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes(&argv).is_empty() {
        assert!(Instant::now() < deadline, "sleep never started");
        std::thread::yield_now();
    }
    pty.send(b"\x1b");
    let screen = pty.wait_for_text("Command interrupted by user");
    assert!(!screen.contains("Running…"), "{screen}");
    assert!(gone(&argv), "the command still runs after Esc");
    assert!(server.requests().is_empty());
    exit_cleanly(&mut pty);
}

#[test]
fn a_bang_command_shows_the_tail_of_its_output_while_it_runs() {
    let project = project();
    let gate = fifo(&project.root, "gate");
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("!for i in 1 2 3 4 5 6 7; do echo row$i; done; read x < gate; echo all-done");
    pty.send(b"\r");
    let screen = pty.wait_for("the last five rows", Duration::from_secs(20), |s| {
        s.contains("row7") && s.contains("Running…")
    });
    for row in ["row3", "row4", "row5", "row6", "row7"] {
        assert!(screen.contains(row), "{row}: {screen}");
    }
    assert!(!screen.contains("row2"), "more than five lines: {screen}");
    release(&gate);
    let screen = pty.wait_for("the finished cell", Duration::from_secs(20), |s| {
        s.contains("all-done") && !s.contains("Running…")
    });
    assert!(
        screen.contains("row1"),
        "the whole output at the end: {screen}"
    );
    exit_cleanly(&mut pty);
}

#[test]
fn a_model_bash_call_shows_its_tail_while_it_runs() {
    let project = project();
    let gate = fifo(&project.root, "gate");
    let command = "for i in 1 2 3 4 5 6; do echo step$i; done; read x < gate; echo finished-now";
    let server = MockServer::start(vec![
        tool_turn(None, &[("b1", "Bash", json!({"command": command}))]),
        text_turn("All steps ran."),
    ]);
    let mut pty = start(&project, &server, &["--dangerously-skip-permissions"]);
    pty.wait_for_text("Ask anything");
    pty.type_text("run the steps");
    pty.send(b"\r");
    let screen = pty.wait_for(
        "the tail of the running call",
        Duration::from_secs(20),
        |s| s.contains("step6") && s.contains("ctrl+b to run in background"),
    );
    assert!(screen.contains("step2"), "{screen}");
    assert!(!screen.contains("step1"), "more than five lines: {screen}");
    assert_eq!(server.requests().len(), 1);
    release(&gate);
    pty.wait_for_text("All steps ran.");
    let results = tool_results(&server.requests()[1].body);
    assert!(
        result_text(&results[0]).contains("finished-now"),
        "{results:?}"
    );
    exit_cleanly(&mut pty);
}

#[test]
fn ctrl_b_sends_the_running_bash_call_to_the_background() {
    let project = project();
    let gate = fifo(&project.root, "gate");
    // What it prints is not in the command's text (shown in the call's header).
    let command = "echo started-$((40+2)); read x < gate; echo job-finished";
    let server = MockServer::start(vec![
        tool_turn(None, &[("b1", "Bash", json!({"command": command}))]),
        text_turn("It runs in the background."),
    ]);
    let mut pty = start(&project, &server, &["--dangerously-skip-permissions"]);
    pty.wait_for_text("Ask anything");
    pty.type_text("start the job");
    pty.send(b"\r");
    pty.wait_for_text("started-42");
    pty.send(b"\x02");
    let screen = pty.wait_for("the answer and the job", Duration::from_secs(20), |s| {
        s.contains("It runs in the background.") && s.contains("1 background job")
    });
    assert!(
        !screen.contains("esc to interrupt"),
        "the turn ended: {screen}"
    );
    // The cell says where the command went, not the text meant for the model.
    assert!(
        screen.contains("Running in the background as bash_1"),
        "{screen}"
    );
    assert!(!screen.contains("Read that file"), "{screen}");
    let results = tool_results(&server.requests()[1].body);
    let text = result_text(&results[0]);
    assert!(text.contains("ID: bash_1"), "{text}");
    assert_ne!(results[0]["is_error"], json!(true), "{results:?}");
    let log = text
        .split_whitespace()
        .find(|word| word.ends_with(".log;"))
        .map(|word| PathBuf::from(word.trim_end_matches(';')))
        .unwrap_or_else(|| panic!("no log file in {text}"));
    let so_far = std::fs::read_to_string(&log).unwrap();
    assert!(so_far.contains("started-42"), "{so_far:?}");
    assert!(!so_far.contains("exit code"), "it still runs: {so_far:?}");
    release(&gate);
    pty.wait_for("the job counted no more", Duration::from_secs(20), |s| {
        !s.contains("background job")
    });
    let done = std::fs::read_to_string(&log).unwrap();
    assert!(done.contains("job-finished"), "{done:?}");
    assert!(done.ends_with("[exit code: 0]\n"), "{done:?}");
    assert!(!done.contains("__ROBOTA_CWD_"), "{done:?}");
    exit_cleanly(&mut pty);
}

#[test]
fn tab_sends_a_prompt_into_the_turn_and_enter_queues_it_after() {
    let project = project();
    let gate = fifo(&project.root, "gate");
    let server = MockServer::start(vec![
        tool_turn(
            None,
            &[(
                "b1",
                "Bash",
                json!({"command": "read x < gate; echo read-it"}),
            )],
        ),
        text_turn("Noted the steer."),
        text_turn("Answer to the queued one."),
    ]);
    let mut pty = start(&project, &server, &["--dangerously-skip-permissions"]);
    pty.wait_for_text("Ask anything");
    pty.type_text("wait on the gate");
    pty.send(b"\r");
    pty.wait_for_text("ctrl+b to run in background");
    pty.type_text("queued for later");
    pty.wait_for_text("↵ queue · ⇥ send now");
    pty.send(b"\r");
    pty.wait_for_text("queued: queued for later");
    pty.type_text("steer this turn");
    pty.send(b"\t");
    pty.wait_for_text("sending now: steer this turn");
    release(&gate);
    pty.wait_for_text("Answer to the queued one.");
    // The steered text went with the tool result, in the same turn.
    let second = &server.requests()[1].body;
    let results = tool_results(second);
    assert!(result_text(&results[0]).contains("read-it"), "{results:?}");
    assert_eq!(last_user_text(&server, 2), "steer this turn");
    assert!(!second.to_string().contains("queued for later"));
    // The queued one came after the turn.
    assert_eq!(last_user_text(&server, 3), "queued for later");
    assert_eq!(server.requests().len(), 3);
    // It is in the session log with the tool result, for --resume.
    let logged = project.session_logs().iter().any(|log| {
        std::fs::read_to_string(log)
            .unwrap()
            .contains("steer this turn")
    });
    assert!(logged, "the steered text is not in the session log");
    exit_cleanly(&mut pty);
}
