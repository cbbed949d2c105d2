//! Checkpoints and `/rewind` end to end (issue 9): the real binary in a temp git repository
//! against the loopback mock model, each prompt its own `-p` run resumed with `-c` (so
//! every rewind happens after a resume). Turns change files with Write, Edit and Bash
//! (`rm`, `mv`); rewinding the code puts them back byte for byte, rewinding the
//! conversation changes what the next request carries, and the log keeps everything.

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};
use support::project::{Project, log_lines, project};
use support::{MockServer, anthropic};

/// Runs `robota -c -p <prompt>` (or without `-c` for the first), allowing every tool.
fn prompt(p: &Project, server: &MockServer, text: &str, resume: bool) -> String {
    let mut args = Vec::new();
    if resume {
        args.push("-c");
    }
    args.extend(["-p", text, "--dangerously-skip-permissions"]);
    let out = p.run(server, &args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The message ids the log's checkpoint lines name, in order.
fn checkpoint_ids(p: &Project) -> Vec<String> {
    let logs = p.session_logs();
    assert_eq!(logs.len(), 1, "{logs:?}");
    log_lines(&logs[0])
        .iter()
        .filter(|l| l["event"] == "checkpoint")
        .map(|l| l["message"].as_str().unwrap().to_string())
        .collect()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn messages(request: &Value) -> Vec<Value> {
    request["messages"].as_array().unwrap().clone()
}

fn last_user_text(request: &Value) -> String {
    let messages = messages(request);
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    last["content"].to_string()
}

#[test]
fn write_edit_and_bash_changes_rewind_as_code_conversation_or_both() {
    let p = project();
    let root = p.root.clone();
    let calc = root.join("calc.py");
    let script = root.join("test_calc.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let calc_before = read(&calc);
    let script_before = read(&script);
    let hello = root.join("notes/hello.txt");
    let server = MockServer::start(vec![
        // 1: Write a new file (in a new directory).
        anthropic::tool_turn(
            None,
            &[(
                "t1",
                "Write",
                json!({"file_path": hello, "content": "hello\n"}),
            )],
        ),
        anthropic::text_turn("wrote it"),
        // 2: Read then Edit.
        anthropic::tool_turn(None, &[("t2", "Read", json!({"file_path": calc}))]),
        anthropic::tool_turn(
            None,
            &[(
                "t3",
                "Edit",
                json!({"file_path": calc, "old_string": "a - b", "new_string": "a + b"}),
            )],
        ),
        anthropic::text_turn("fixed add"),
        // 3: Bash rm and mv.
        anthropic::tool_turn(
            None,
            &[(
                "t4",
                "Bash",
                json!({"command": "rm test_calc.sh && mv calc.py calc2.py"}),
            )],
        ),
        anthropic::text_turn("tidied up"),
        anthropic::text_turn("next answer"),
        anthropic::text_turn("again answer"),
    ]);
    prompt(&p, &server, "write a greeting", false);
    prompt(&p, &server, "fix add", true);
    let calc_edited = read(&calc);
    assert_eq!(
        String::from_utf8_lossy(&calc_edited),
        "def add(a, b):\n    return a + b\n\n# TODO: more operations\n"
    );
    prompt(&p, &server, "tidy up", true);
    assert!(!script.exists() && !calc.exists() && root.join("calc2.py").exists());
    let ids = checkpoint_ids(&p);
    assert_eq!(ids.len(), 3, "{ids:?}");

    // The log says which files each turn changed.
    let lines = log_lines(&p.session_logs()[0]);
    let files: Vec<Value> = lines
        .iter()
        .filter(|l| l["event"] == "checkpoint_files")
        .map(|l| l["files"].clone())
        .collect();
    assert_eq!(
        files,
        vec![
            json!(["notes/hello.txt"]),
            json!(["calc.py"]),
            json!(["calc.py", "calc2.py", "test_calc.sh"])
        ]
    );
    // The listing shows them, newest first.
    let listing = prompt(&p, &server, "/rewind", true);
    let tidy = listing.find("tidy up").unwrap();
    let fix = listing.find("fix add").unwrap();
    assert!(tidy < fix, "{listing}");
    assert!(listing.contains("(3 files changed)"), "{listing}");
    assert!(listing.contains(&ids[2]), "{listing}");

    // Code only, to before "tidy up": the rm and mv are undone, the edit stays.
    let out = prompt(&p, &server, &format!("/rewind {} code", ids[2]), true);
    assert!(
        out.contains("Restored 2 files: calc.py, test_calc.sh. Removed calc2.py."),
        "{out}"
    );
    assert_eq!(read(&calc), calc_edited);
    assert_eq!(read(&script), script_before);
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert!(!root.join("calc2.py").exists());
    assert_eq!(read(&hello), b"hello\n");

    // Conversation only, to before "fix add": the files stay as they are, and the next
    // request carries the first turn and the new prompt, nothing of turns 2 and 3.
    let out = prompt(
        &p,
        &server,
        &format!("/rewind {} conversation", ids[1]),
        true,
    );
    assert!(out.contains("Rewound the conversation"), "{out}");
    assert_eq!(read(&calc), calc_edited);
    prompt(&p, &server, "next", true);
    let requests: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(requests.len(), 8);
    let fix_request = messages(&requests[2]);
    let next_request = messages(&requests[7]);
    assert_eq!(
        next_request[..next_request.len() - 1],
        fix_request[..fix_request.len() - 1],
        "the rewound history differs from turn 1's"
    );
    assert!(last_user_text(&requests[7]).contains("next"));
    let sent = requests[7].to_string();
    assert!(
        !sent.contains("fix add") && !sent.contains("tidy up"),
        "{sent}"
    );

    // Both, to before the first prompt: every file as it was, an empty conversation.
    let out = prompt(&p, &server, &format!("/rewind {} both", ids[0]), true);
    assert!(
        out.contains("Rewound the code and the conversation"),
        "{out}"
    );
    assert_eq!(read(&calc), calc_before);
    assert_eq!(read(&script), script_before);
    assert!(!hello.exists() && !root.join("notes").exists());
    assert!(!root.join("calc2.py").exists());
    prompt(&p, &server, "again", true);
    let requests: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    let again = messages(&requests[8]);
    assert_eq!(again.len(), 1, "{again:?}");
    assert!(last_user_text(&requests[8]).contains("again"));

    // Nothing was rewritten: every prompt is still in the log, with two rewind lines.
    let text = std::fs::read_to_string(&p.session_logs()[0]).unwrap();
    for said in ["write a greeting", "fix add", "tidy up", "next", "again"] {
        assert!(text.contains(said), "{said}");
    }
    let rewinds = log_lines(&p.session_logs()[0])
        .into_iter()
        .filter(|l| l["event"] == "rewind")
        .count();
    assert_eq!(rewinds, 2);
}

#[test]
fn a_big_binary_file_is_reported_not_restorable_and_the_rest_comes_back() {
    let p = project();
    let big = p.root.join("big.bin");
    let bytes: Vec<u8> = (0..9 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&big, &bytes).unwrap();
    let small = p.root.join("calc.py");
    let small_before = read(&small);
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("t1", "Bash", json!({"command": "rm big.bin calc.py"}))],
        ),
        anthropic::text_turn("removed"),
    ]);
    prompt(&p, &server, "clean up", false);
    assert!(!big.exists() && !small.exists());
    let ids = checkpoint_ids(&p);
    let lines = log_lines(&p.session_logs()[0]);
    let end = lines
        .iter()
        .find(|l| l["event"] == "checkpoint_files")
        .unwrap();
    assert_eq!(end["not_restorable"], json!(["big.bin"]));
    let out = prompt(&p, &server, &format!("/rewind {} code", ids[0]), true);
    assert_eq!(read(&small), small_before);
    assert!(!big.exists());
    assert!(
        out.contains("Not restorable: big.bin (9 MB is above the checkpoint limit of 8 MB)"),
        "{out}"
    );
}

#[test]
fn rewind_refuses_unknown_prompts_and_actions_and_changes_nothing() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("hi")]);
    prompt(&p, &server, "hello", false);
    let before = std::fs::read_to_string(&p.session_logs()[0]).unwrap();
    let out = p.run(&server, &["-c", "-p", "/rewind nope code"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not in this session's conversation"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = checkpoint_ids(&p).remove(0);
    let out = p.run(&server, &["-c", "-p", &format!("/rewind {id} sideways")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Unknown rewind action"));
    let after = std::fs::read_to_string(&p.session_logs()[0]).unwrap();
    assert!(!after[before.len()..].contains("\"rewind\""));
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn summarize_from_here_keeps_what_came_before_and_summarises_the_rest() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("first answer"),
        anthropic::text_turn("second answer"),
        anthropic::text_turn("third answer"),
        anthropic::text_turn("<summary>The user asked twice about the parser.</summary>"),
        anthropic::text_turn("fourth answer"),
    ]);
    prompt(&p, &server, "first question", false);
    prompt(&p, &server, "second question", true);
    prompt(&p, &server, "third question", true);
    let ids = checkpoint_ids(&p);
    let rewind = format!("/rewind {} summarize", ids[1]);
    let out = p.run(
        &server,
        &[
            "-c",
            "-p",
            &rewind,
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    );
    let out = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.contains("Summarized the conversation"), "{out}");
    // Like /compact, the summary ends with a compact_boundary (the TUI's Compacted).
    let boundaries = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "system" && v["subtype"] == "compact_boundary")
        .count();
    assert_eq!(boundaries, 1, "{out}");
    prompt(&p, &server, "fourth question", true);
    let requests: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(requests.len(), 5);
    // The summary call read the turns from the chosen prompt on, not the first.
    let summary_request = requests[3].to_string();
    assert!(summary_request.contains("second question"));
    assert!(summary_request.contains("third answer"));
    assert!(
        !summary_request.contains("first question"),
        "{summary_request}"
    );
    let next = messages(&requests[4]);
    let texts: Vec<String> = next.iter().map(|m| m["content"].to_string()).collect();
    assert_eq!(next.len(), 4, "{texts:?}");
    assert!(texts[0].contains("first question") && texts[1].contains("first answer"));
    assert!(texts[2].contains("The user asked twice about the parser."));
    assert!(texts[3].contains("fourth question"));
    assert!(!requests[4].to_string().contains("second question"));
}

#[test]
fn a_file_bash_overwrites_in_the_first_round_of_a_new_session_is_restorable() {
    // The first prompt of a fresh process: its checkpoint races the session's background
    // first snapshot, and the turn's very first provider answer runs Bash. The start
    // snapshot must hold the file as it was before the command ran.
    let p = project();
    let calc = p.root.join("calc.py");
    let before = read(&calc);
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "t1",
                "Bash",
                json!({"command": "printf 'clobbered\\n' > calc.py && rm -f test_calc.sh"}),
            )],
        ),
        anthropic::text_turn("done"),
    ]);
    prompt(&p, &server, "clobber it", false);
    assert_eq!(read(&calc), b"clobbered\n");
    assert!(!p.root.join("test_calc.sh").exists());
    let ids = checkpoint_ids(&p);
    assert_eq!(ids.len(), 1, "{ids:?}");
    let out = prompt(&p, &server, &format!("/rewind {} code", ids[0]), true);
    assert!(out.contains("Restored 2 files"), "{out}");
    assert_eq!(read(&calc), before);
    assert!(p.root.join("test_calc.sh").exists());
}
