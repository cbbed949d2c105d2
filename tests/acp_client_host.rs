//! End to end: the real `robota acp` binary with an editor (this test, over real pipes)
//! that offers its file system and terminal, answering robota's `fs/*` and `terminal/*`
//! requests by hand, so the edges are exact: an edit of a buffer that changed since the
//! model read it is refused and never written; a command past its timeout is killed in
//! the editor's terminal and the model is told; without the capabilities nothing is asked
//! of the editor and the disk is used.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::json;
use support::acp_peer::AcpPeer;
use support::project::{project, result_text, tool_results};
use support::{MockServer, anthropic};

/// The text and error flag of the tool result for `id` the model was sent.
fn sent_result(server: &MockServer, id: &str) -> (String, bool) {
    server
        .requests()
        .iter()
        .flat_map(|r| tool_results(&r.body))
        .find(|b| b["tool_use_id"] == id)
        .map(|b| (result_text(&b), b["is_error"] == true))
        .unwrap_or_else(|| panic!("no result for {id}"))
}

#[test]
fn an_edit_of_a_buffer_changed_since_the_read_is_refused_and_never_written() {
    let p = project();
    let calc = p.root.join("calc.py");
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("toolu_read", "Read", json!({"file_path": calc}))]),
        anthropic::tool_turn(
            None,
            &[(
                "toolu_edit",
                "Edit",
                json!({"file_path": calc, "old_string": "one", "new_string": "three"}),
            )],
        ),
        anthropic::text_turn("Stale."),
    ]);
    let mut peer = AcpPeer::start(&p, &server, &["--permission-mode", "acceptEdits"]);
    peer.initialize_offering(json!({"fs": {"readTextFile": true, "writeTextFile": true}}));
    let session = peer.new_session(&p.root);
    let prompt = peer.prompt(&session, "edit it");
    let mut reads = 0;
    let response = peer.serve_until(prompt, |method, params| match method {
        "fs/read_text_file" => {
            assert_eq!(params["path"], json!(calc));
            reads += 1;
            // The user types in the buffer after the model read it.
            let text = if reads == 1 { "one\n" } else { "one two\n" };
            Some(json!({"content": text}))
        }
        "session/request_permission" => {
            Some(json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}))
        }
        _ => Some(json!({})),
    });
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let (read, _) = sent_result(&server, "toolu_read");
    assert_eq!(read, "     1\tone");
    let (edit, failed) = sent_result(&server, "toolu_edit");
    assert!(failed && edit.contains("modified since read"), "{edit}");
    let asked = peer.requests_received();
    assert!(asked.iter().all(|m| m != "fs/write_text_file"), "{asked:?}");
    assert!(reads >= 2, "{asked:?}");
    assert!(
        std::fs::read_to_string(&calc)
            .unwrap()
            .contains("return a - b")
    );
    assert_eq!(peer.finish(), Some(0));
}

#[test]
fn a_command_past_its_timeout_is_killed_in_the_editors_terminal() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_sleep",
                "Bash",
                json!({"command": "sleep 30", "timeout": 500}),
            )],
        ),
        anthropic::text_turn("Too slow."),
    ]);
    let mut peer = AcpPeer::start(&p, &server, &["--permission-mode", "bypassPermissions"]);
    peer.initialize_offering(json!({"terminal": true}));
    let session = peer.new_session(&p.root);
    let prompt = peer.prompt(&session, "sleep");
    let mut killed = false;
    let response = peer.serve_until(prompt, |method, params| match method {
        "terminal/create" => {
            assert_eq!(params["command"], "bash");
            assert_eq!(params["cwd"], json!(p.root));
            assert_eq!(params["args"][3], "sleep 30");
            Some(json!({"terminalId": "t-1"}))
        }
        // The command never ends by itself: robota must stop waiting and kill it.
        "terminal/wait_for_exit" => None,
        "terminal/kill" => {
            assert_eq!(params["terminalId"], "t-1");
            killed = true;
            Some(json!({}))
        }
        "terminal/output" => Some(json!({"output": "partial output\n", "truncated": false})),
        _ => Some(json!({})),
    });
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(killed);
    let (text, failed) = sent_result(&server, "toolu_sleep");
    assert!(failed, "{text}");
    assert_eq!(text, "partial output\nCommand timed out after 500ms");
    let asked = peer.requests_received();
    let terminal: Vec<&str> = asked
        .iter()
        .map(String::as_str)
        .filter(|m| m.starts_with("terminal/"))
        .collect();
    assert_eq!(
        terminal,
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/output",
            "terminal/release"
        ]
    );
    let finished = peer
        .updates()
        .into_iter()
        .find(|u| u["toolCallId"] == "toolu_sleep" && u["status"] == "failed")
        .unwrap();
    assert_eq!(
        finished["content"][0],
        json!({"type": "terminal", "terminalId": "t-1"})
    );
    assert_eq!(peer.finish(), Some(0));
}

#[test]
fn without_the_capabilities_the_editor_is_never_asked_and_the_disk_is_used() {
    let p = project();
    let calc = p.root.join("calc.py");
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                ("toolu_read", "Read", json!({"file_path": calc})),
                (
                    "toolu_edit",
                    "Edit",
                    json!({"file_path": calc, "old_string": "return a - b", "new_string": "return a + b"}),
                ),
                ("toolu_echo", "Bash", json!({"command": "echo local"})),
            ],
        ),
        anthropic::text_turn("Done."),
    ]);
    let mut peer = AcpPeer::start(&p, &server, &["--permission-mode", "bypassPermissions"]);
    peer.initialize();
    let session = peer.new_session(&p.root);
    let prompt = peer.prompt(&session, "fix and echo");
    let response = peer.serve_until(prompt, |_, _| Some(json!({})));
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(sent_result(&server, "toolu_echo").0, "local");
    assert!(
        std::fs::read_to_string(&calc)
            .unwrap()
            .contains("return a + b")
    );
    let asked: Vec<String> = peer.requests_received();
    assert!(
        asked
            .iter()
            .all(|m| !m.starts_with("fs/") && !m.starts_with("terminal/")),
        "{asked:?}"
    );
    assert_eq!(peer.finish(), Some(0));
}

#[test]
fn a_cancel_kills_the_command_in_the_editors_terminal() {
    let p = project();
    let server = MockServer::start(vec![anthropic::tool_turn(
        None,
        &[("toolu_wait", "Bash", json!({"command": "sleep 30"}))],
    )]);
    let mut peer = AcpPeer::start(&p, &server, &["--permission-mode", "bypassPermissions"]);
    peer.initialize_offering(json!({"terminal": true}));
    let session = peer.new_session(&p.root);
    let prompt = peer.prompt(&session, "wait");
    let create = peer.incoming("terminal/create");
    peer.respond(&create["id"], json!({"terminalId": "t-9"}));
    peer.incoming("terminal/wait_for_exit");
    peer.notify("session/cancel", json!({"sessionId": session}));
    let mut killed = 0;
    let response = peer.serve_until(prompt, |method, _| match method {
        "terminal/wait_for_exit" => None,
        "terminal/kill" => {
            killed += 1;
            Some(json!({}))
        }
        "terminal/output" => Some(json!({"output": "", "truncated": false})),
        _ => Some(json!({})),
    });
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    assert_eq!(killed, 1);
    // The terminal is released after the kill, once its output is read.
    let asked = peer.requests_received();
    let terminal: Vec<&str> = asked
        .iter()
        .map(String::as_str)
        .filter(|m| m.starts_with("terminal/"))
        .collect();
    assert_eq!(
        terminal,
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/output",
            "terminal/release"
        ]
    );
    assert_eq!(server.requests().len(), 1);
    assert_eq!(peer.finish(), Some(0));
}
