//! Helper programs that never finish do not hold the UI: keys typed while a stand-in
//! clipboard program hangs after `/copy` show at once, the UI says when the program missed
//! its deadline (`ROBOTA_HELPER_TIMEOUT_MS`), and the program is gone afterwards; a
//! status-line command that forks is killed at its deadline with everything it started.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::MockServer;
use crate::support::anthropic::text_turn;
use crate::support::process::process_gone;
use crate::support::project::project;
use crate::{exit_cleanly, start_with};

/// The pids written to `file`, once it holds `count` of them (bounded wait).
fn pids_in(file: &Path, count: usize) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let pids: Vec<u32> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect();
        if pids.len() >= count {
            return pids;
        }
        assert!(
            Instant::now() < deadline,
            "{} never held {count} pids",
            file.display()
        );
        std::thread::yield_now();
    }
}

/// Waits (bounded) until every process in `pids` is gone.
fn all_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !pids.iter().all(|&pid| process_gone(pid)) {
        assert!(
            Instant::now() < deadline,
            "{pids:?} outlived their deadline"
        );
        std::thread::yield_now();
    }
}

#[test]
fn copy_with_a_clipboard_program_that_never_exits_blocks_nothing() {
    let project = project();
    let pid_file = project.user_home.join("xclip.pid");
    // Takes the text, then never exits.
    let (_, path) = crate::stand_in_program(
        &project,
        "xclip",
        &format!(
            "#!/bin/sh\necho $$ > '{}'\ncat > /dev/null\nexec sleep 1000\n",
            pid_file.display()
        ),
    );
    let server = MockServer::start(vec![text_turn("Run this:\n\n```sh\ncargo test\n```\n")]);
    let mut pty = start_with(&project, &server, &[], |cmd| {
        cmd.env("PATH", &path);
        cmd.env("DISPLAY", ":99");
        cmd.env("ROBOTA_HELPER_TIMEOUT_MS", "3000");
    });
    pty.wait_for_text("Ask anything");
    pty.type_text("how do I test");
    pty.send(b"\r");
    crate::wait_for_answer(&pty, "cargo test");
    pty.type_text("/copy 1");
    pty.send(b"\r");
    let xclip = pids_in(&pid_file, 1)[0];

    let typed = Instant::now();
    pty.type_text("zq");
    let screen = pty.wait_for_text("zq");
    eprintln!("the key showed after {:?}", typed.elapsed());
    // The copy has not ended (no word of it yet) and the program still runs: the key did
    // not wait for it.
    assert!(!screen.contains("did not finish"), "{screen}");
    assert!(!screen.contains("Copied"), "{screen}");
    assert!(!process_gone(xclip), "xclip ended before the key showed");

    let screen = pty.wait_for_text("(xclip) did not finish in 3 s");
    assert!(screen.contains("nothing was copied"), "{screen}");
    all_gone(&[xclip]);
    let raw = String::from_utf8_lossy(&pty.raw()).into_owned();
    assert!(!raw.contains("\x1b]52;"), "OSC 52 sent after all");
    pty.send(b"\x03"); // Ctrl+C clears the composer.
    exit_cleanly(&mut pty);
}

#[test]
fn a_status_line_command_is_killed_with_its_children_at_its_deadline() {
    let project = project();
    std::fs::create_dir_all(&project.home).unwrap();
    let pids = project.user_home.join("status.pids");
    let once = project.user_home.join("status.ran");
    // The first run starts two sleeps and waits for them; later runs end at once.
    let command = format!(
        "[ -e '{once}' ] && exit 0; touch '{once}'; sleep 1000 & echo $! >> '{pids}'; sleep 1000 & echo $! >> '{pids}'; echo $$ >> '{pids}'; wait",
        once = once.display(),
        pids = pids.display()
    );
    std::fs::write(
        project.home.join("settings.json"),
        serde_json::json!({"statusLine": {"type": "command", "command": command}}).to_string(),
    )
    .unwrap();
    let server = MockServer::start(vec![]);
    let mut pty = start_with(&project, &server, &[], |cmd| {
        cmd.env("ROBOTA_HELPER_TIMEOUT_MS", "4000");
    });
    let started = pids_in(&pids, 3);
    assert!(
        started.iter().all(|&pid| !process_gone(pid)),
        "the command runs"
    );
    pty.wait_for_text("status-line command did not finish");
    all_gone(&started);
    exit_cleanly(&mut pty);
}
