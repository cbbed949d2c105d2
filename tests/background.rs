//! End to end: background sessions (issue 28) with the real binary against the loopback
//! mock provider. `robota --bg` returns at once with the session's id while the session
//! edits a file with no terminal attached; `robota ps --json` follows its state (running,
//! idle, stopped, failed); `robota logs` prints the transcript; `robota send` queues a
//! second prompt that the session answers; `robota stop` leaves no process of its group;
//! `robota rm` removes it (and its conversation log with `--purge`); a supervisor killed
//! with SIGKILL shows as failed.

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::time::Instant;

use serde_json::json;
use support::background::{ps, robota, wait_for};
#[cfg(target_os = "linux")]
use support::process::group_members;
use support::project::{Project, output_text, project};
use support::{MockServer, anthropic};

/// Runs `robota ARGS`, which must fail; returns what it printed.
fn refused(p: &Project, server: &MockServer, args: &[&str]) -> String {
    let out = p.command(server, args).output().unwrap();
    assert!(!out.status.success(), "robota {args:?} succeeded");
    output_text(&out)
}

/// Whether process `pid` exists.
fn alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn a_background_session_works_without_a_terminal_takes_messages_and_stops_clean() {
    let p = project();
    let file = p.root.join("notes.txt");
    let path = file.display().to_string();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "w1",
                "Write",
                json!({"file_path": path, "content": "written in the background\n"}),
            )],
        ),
        anthropic::text_turn("The notes are written."),
        anthropic::text_turn("Second answer."),
    ]);
    let started = Instant::now();
    let id = robota(
        &p,
        &server,
        &[
            "--bg",
            "write the notes",
            "--permission-mode",
            "acceptEdits",
            "--name",
            "notes",
        ],
    );
    let id = id.trim().to_string();
    assert_eq!(id.len(), 36, "a session id: {id:?}");
    println!("--bg returned after {:?}", started.elapsed());

    let idle = wait_for(&p, &server, &id, "idle", 1);
    assert_eq!(idle["name"], "notes");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "written in the background\n"
    );
    let transcript = robota(&p, &server, &["logs", &id]);
    for expected in ["> write the notes", "● Write(", "The notes are written."] {
        assert!(
            transcript.contains(expected),
            "{expected:?} in:\n{transcript}"
        );
    }

    let sent = robota(&p, &server, &["send", "notes", "one more thing"]);
    assert!(sent.contains(&id), "{sent}");
    wait_for(&p, &server, &id, "idle", 2);
    let third = server.requests()[2].body.to_string();
    assert!(third.contains("one more thing"), "{third}");
    let transcript = robota(&p, &server, &["logs", &id[..8]]);
    assert!(transcript.contains("Second answer."), "{transcript}");

    let pid = idle["pid"].as_i64().unwrap() as i32;
    assert!(alive(pid));
    // Only the user may drive it.
    let socket = p.home.join("background").join(&id).join("control.sock");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&socket).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "{socket:?}");
    let stopped = robota(&p, &server, &["stop", &id]);
    assert!(stopped.contains("Stopped"), "{stopped}");
    wait_for(&p, &server, &id, "stopped", 2);
    #[cfg(target_os = "linux")]
    assert_eq!(
        group_members(pid),
        Vec::<i32>::new(),
        "the session's group is gone"
    );
    // A stopped session's log can be followed: it prints and returns.
    let followed = robota(&p, &server, &["logs", "-f", &id]);
    assert!(followed.contains("Second answer."), "{followed}");

    let late = refused(&p, &server, &["send", &id, "too late"]);
    assert!(late.contains("is stopped"), "{late}");
    // `rm` keeps the conversation for --resume; `--purge` would not.
    robota(&p, &server, &["rm", &id]);
    assert!(ps(&p, &server).is_empty());
    assert_eq!(p.session_logs().len(), 1, "the conversation stays");
}

#[test]
fn a_killed_background_session_shows_as_failed_and_can_be_removed() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("Hello from the background.")]);
    let id = robota(&p, &server, &["--bg", "say hello"]);
    let id = id.trim().to_string();
    let idle = wait_for(&p, &server, &id, "idle", 1);
    let pid = idle["pid"].as_i64().unwrap() as i32;
    // SAFETY: SIGKILL to the supervisor this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let failed = wait_for(&p, &server, &id, "failed", 1);
    assert!(
        failed["reason"]
            .as_str()
            .unwrap()
            .contains("process is gone"),
        "{failed}"
    );
    let table = robota(&p, &server, &["ps"]);
    assert!(
        table.contains("failed") && table.contains(&id[..8]),
        "{table}"
    );
    // A reader that went away before the table was written is no error.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = p
        .command(&server, &["ps"])
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", output_text(&out));
    assert!(
        !output_text(&out).contains("panicked"),
        "{}",
        output_text(&out)
    );
    let missing = refused(&p, &server, &["rm", "nope"]);
    assert!(
        missing.contains("no background session \"nope\""),
        "{missing}"
    );
    assert_eq!(p.session_logs().len(), 1);
    let purged = robota(&p, &server, &["rm", "--purge", &id]);
    assert!(purged.contains("conversation log"), "{purged}");
    assert!(ps(&p, &server).is_empty());
    assert_eq!(
        p.session_logs(),
        Vec::<std::path::PathBuf>::new(),
        "--purge removes it"
    );
}

#[test]
fn a_worktree_session_writes_beside_the_repository_and_rm_removes_the_worktree_not_the_branch() {
    let p = project();
    let worktree = p.root.with_file_name("repo-feature");
    let file = worktree.join("notes.txt");
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "w1",
                "Write",
                json!({"file_path": file.display().to_string(), "content": "on the branch\n"}),
            )],
        ),
        anthropic::text_turn("Written on the branch."),
    ]);
    let id = robota(
        &p,
        &server,
        &[
            "--bg",
            "-w=feature",
            "write",
            "--permission-mode",
            "acceptEdits",
        ],
    );
    let id = id.trim().to_string();
    let idle = wait_for(&p, &server, &id, "idle", 1);
    assert_eq!(idle["branch"], "robota/feature");
    assert_eq!(idle["worktree"], worktree.display().to_string());
    assert_eq!(idle["cwd"], worktree.display().to_string());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "on the branch\n");
    assert!(
        !p.root.join("notes.txt").exists(),
        "the repository is untouched"
    );
    let table = robota(&p, &server, &["ps"]);
    assert!(
        table.contains("worktree on branch robota/feature"),
        "{table}"
    );

    robota(&p, &server, &["stop", &id]);
    let dirty = refused(&p, &server, &["rm", &id]);
    assert!(dirty.contains("has uncommitted changes"), "{dirty}");
    assert!(file.exists(), "a refused rm keeps the work");
    robota(&p, &server, &["rm", "--force", &id]);
    assert!(!worktree.exists());
    let branch = std::process::Command::new("git")
        .args(["rev-parse", "--verify", "-q", "robota/feature"])
        .current_dir(&p.root)
        .output()
        .unwrap();
    assert!(branch.status.success(), "the branch stays");

    let bad = refused(&p, &server, &["--bg", "-w=a..b", "x"]);
    assert!(bad.contains("does not make a branch name"), "{bad}");
}
