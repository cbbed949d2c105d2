//! End to end: the real `robota acp` binary driven as an editor drives an ACP agent, over
//! real pipes (JSON-RPC 2.0 lines), against the loopback mock Anthropic server: sessions
//! opened, prompts answered with their stop reason, tool calls and their diffs streamed as
//! `session/update`s, permission questions answered by the test with their real effects on
//! disk counted, a cancel mid-turn, and a recorded session loaded back with its history.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::acp_peer::{AcpPeer, chunk_text};
use support::project::{Project, project};
use support::{MockServer, anthropic};

const BUGGY: &str = "    return a - b";
const FIXED: &str = "    return a + b";

fn edit_call(p: &Project) -> Value {
    json!({
        "file_path": p.root.join("calc.py"),
        "old_string": BUGGY,
        "new_string": FIXED,
    })
}

/// Edit wants the file read first: a Read, then the Edit, in one answer.
fn read_then_edit(p: &Project, preface: Option<&str>) -> support::MockResponse {
    anthropic::tool_turn(
        preface,
        &[
            (
                "toolu_read",
                "Read",
                json!({"file_path": p.root.join("calc.py")}),
            ),
            ("toolu_edit", "Edit", edit_call(p)),
        ],
    )
}

fn calc(p: &Project) -> String {
    std::fs::read_to_string(p.root.join("calc.py")).unwrap()
}

#[test]
fn initialize_advertises_load_session_and_prompt_and_mcp_capabilities() {
    let p = project();
    let server = MockServer::start(vec![]);
    let mut acp = AcpPeer::start(&p, &server, &[]);
    let init = acp.initialize();
    assert_eq!(init["protocolVersion"], 1, "{init}");
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true, "{init}");
    assert_eq!(
        caps["promptCapabilities"]["embeddedContext"], true,
        "{init}"
    );
    assert_eq!(caps["mcpCapabilities"]["http"], true, "{init}");
    assert_eq!(init["agentInfo"]["name"], "robota");
    assert_eq!(init["authMethods"], json!([]), "{init}");
    let auth = acp.request("authenticate", json!({"methodId": "none"}));
    acp.result(auth);
    // An unknown method is an error, not a hang.
    let list = acp.request("session/list", json!({}));
    assert!(acp.response(list).get("error").is_some());
    assert_eq!(acp.finish(), Some(0));
    assert!(server.requests().is_empty());
}

#[test]
fn an_edit_asked_and_allowed_streams_its_diff_and_changes_the_file() {
    let p = project();
    let server = MockServer::start(vec![
        read_then_edit(&p, Some("Fixing.")),
        anthropic::text_turn("Fixed the sign."),
    ]);
    let mut acp = AcpPeer::start(&p, &server, &[]);
    acp.initialize();
    let session = acp.new_session(&p.root);
    let commands = acp.until("available commands", |v| {
        v["params"]["update"]["sessionUpdate"] == "available_commands_update"
    });
    let names: Vec<&str> = commands["params"]["update"]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"model") && names.contains(&"compact"),
        "{names:?}"
    );

    let prompt = acp.prompt(&session, "fix add");
    let ask = acp.incoming("session/request_permission");
    let params = &ask["params"];
    assert_eq!(params["sessionId"], session.as_str());
    assert_eq!(params["toolCall"]["toolCallId"], "toolu_edit");
    assert_eq!(params["toolCall"]["kind"], "edit");
    let diff = &params["toolCall"]["content"][0];
    assert_eq!(diff["type"], "diff", "{ask}");
    assert_eq!(diff["path"], p.root.join("calc.py").to_str().unwrap());
    assert!(diff["oldText"].as_str().unwrap().contains(BUGGY), "{diff}");
    assert!(diff["newText"].as_str().unwrap().contains(FIXED), "{diff}");
    let options: Vec<&str> = params["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["allow_once", "allow_always", "reject_once"]);
    // Nothing is written while the question waits.
    assert!(calc(&p).contains(BUGGY));
    acp.respond(
        &ask["id"],
        json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}),
    );

    let done = acp.result(prompt);
    assert_eq!(done["stopReason"], "end_turn", "{done}");
    assert!(calc(&p).contains(FIXED), "{}", calc(&p));

    let updates = acp.updates();
    assert_eq!(
        chunk_text(&updates, "agent_message_chunk"),
        "Fixing.Fixed the sign."
    );
    let call = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "toolu_edit")
        .unwrap();
    assert_eq!(call["toolCallId"], "toolu_edit");
    assert_eq!(call["kind"], "edit");
    // `pending` is the schema's default, so it may be left out.
    assert_eq!(call["status"].as_str().unwrap_or("pending"), "pending");
    assert_eq!(
        call["locations"][0]["path"],
        p.root.join("calc.py").to_str().unwrap()
    );
    let statuses: Vec<&str> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == "toolu_edit")
        .filter_map(|u| u["status"].as_str())
        .collect();
    assert_eq!(statuses, ["in_progress", "completed"]);
    let finished = updates
        .iter()
        .rfind(|u| u["status"] == "completed" && u["toolCallId"] == "toolu_edit")
        .unwrap();
    assert_eq!(finished["content"][0]["type"], "diff", "{finished}");
    assert!(
        finished["content"][0]["newText"]
            .as_str()
            .unwrap()
            .contains(FIXED)
    );
    assert_eq!(acp.finish(), Some(0));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_rejected_command_does_not_run_and_its_call_fails() {
    let p = project();
    let victim = p.root.join("test_calc.sh");
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_rm",
                "Bash",
                json!({"command": format!("rm {}", victim.display())}),
            )],
        ),
        anthropic::text_turn("Not removed."),
    ]);
    let mut acp = AcpPeer::start(&p, &server, &[]);
    acp.initialize();
    let session = acp.new_session(&p.root);
    let prompt = acp.prompt(&session, "clean up");
    let ask = acp.incoming("session/request_permission");
    assert_eq!(ask["params"]["toolCall"]["kind"], "execute");
    acp.respond(
        &ask["id"],
        json!({"outcome": {"outcome": "selected", "optionId": "reject_once"}}),
    );
    assert_eq!(acp.result(prompt)["stopReason"], "end_turn");
    assert!(victim.exists(), "a rejected rm ran");
    let updates = acp.updates();
    let failed = updates
        .iter()
        .find(|u| u["toolCallId"] == "toolu_rm" && u["status"] == "failed");
    assert!(failed.is_some(), "{updates:#?}");
    assert!(
        !updates
            .iter()
            .any(|u| u["toolCallId"] == "toolu_rm" && u["status"] == "in_progress")
    );
    // The model was told it was refused.
    let second = server.requests()[1].body.to_string();
    assert!(second.contains("toolu_rm"), "{second}");
    assert_eq!(acp.finish(), Some(0));
}

#[test]
fn allow_always_saves_the_rule_and_the_next_such_call_is_not_asked() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("toolu_1", "Bash", json!({"command": "touch one.txt"}))],
        ),
        anthropic::text_turn("one"),
        anthropic::tool_turn(
            None,
            &[("toolu_2", "Bash", json!({"command": "touch two.txt"}))],
        ),
        anthropic::text_turn("two"),
    ]);
    let mut acp = AcpPeer::start(&p, &server, &[]);
    acp.initialize();
    let session = acp.new_session(&p.root);
    let first = acp.prompt(&session, "make one");
    let ask = acp.incoming("session/request_permission");
    acp.respond(
        &ask["id"],
        json!({"outcome": {"outcome": "selected", "optionId": "allow_always"}}),
    );
    assert_eq!(acp.result(first)["stopReason"], "end_turn");
    assert!(p.root.join("one.txt").exists());
    let saved = std::fs::read_to_string(p.root.join(".robota/settings.local.json")).unwrap();
    assert!(saved.contains("Bash(touch"), "{saved}");

    let second = acp.prompt(&session, "make two");
    assert_eq!(acp.result(second)["stopReason"], "end_turn");
    assert!(p.root.join("two.txt").exists());
    let asked = acp
        .seen
        .iter()
        .filter(|v| v["method"] == "session/request_permission")
        .count();
    assert_eq!(asked, 1, "the saved rule did not cover the second call");
    assert_eq!(acp.finish(), Some(0));
}

#[test]
fn cancel_mid_turn_ends_the_prompt_with_cancelled_and_the_session_goes_on() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn_held("I am in the middle of a long answer", 4),
        anthropic::text_turn("after the cancel"),
    ]);
    let mut acp = AcpPeer::start(&p, &server, &[]);
    acp.initialize();
    let session = acp.new_session(&p.root);
    let prompt = acp.prompt(&session, "tell me a story");
    assert!(server.wait_for_requests(1, Duration::from_secs(20)));
    acp.notify("session/cancel", json!({"sessionId": session}));
    assert_eq!(acp.result(prompt)["stopReason"], "cancelled");
    server.release_held();
    let next = acp.prompt(&session, "go on");
    assert_eq!(acp.result(next)["stopReason"], "end_turn");
    assert!(chunk_text(&acp.updates(), "agent_message_chunk").ends_with("after the cancel"));
    assert_eq!(acp.finish(), Some(0));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_loaded_session_replays_its_history_and_continues_it() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            Some("Reading."),
            &[(
                "toolu_read",
                "Read",
                json!({"file_path": p.root.join("calc.py")}),
            )],
        ),
        anthropic::text_turn("It subtracts."),
        anthropic::text_turn("Still subtracts."),
    ]);
    let mut acp = AcpPeer::start(&p, &server, &[]);
    acp.initialize();
    let session = acp.new_session(&p.root);
    let prompt = acp.prompt(&session, "what does add do?");
    assert_eq!(acp.result(prompt)["stopReason"], "end_turn");
    assert_eq!(acp.finish(), Some(0));

    // A new process, as an editor reopening a thread.
    let mut acp = AcpPeer::start(&p, &server, &[]);
    acp.initialize();
    let load = acp.request(
        "session/load",
        json!({"sessionId": session, "cwd": p.root, "mcpServers": []}),
    );
    let loaded = acp.result(load);
    assert_eq!(loaded["modes"]["currentModeId"], "default", "{loaded}");
    // Everything replayed came before the answer.
    let replayed = acp.updates();
    assert_eq!(
        chunk_text(&replayed, "user_message_chunk"),
        "what does add do?"
    );
    assert_eq!(
        chunk_text(&replayed, "agent_message_chunk"),
        "Reading.It subtracts."
    );
    let call = replayed
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .unwrap();
    assert_eq!(call["toolCallId"], "toolu_read");
    assert_eq!(call["kind"], "read");
    let result = replayed
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == "toolu_read")
        .unwrap();
    assert_eq!(result["status"], "completed");
    assert!(
        result["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("return a - b")
    );

    // Loaded again in the same connection: the new copy replaces the old one, whose end
    // must not touch it.
    let again = acp.request(
        "session/load",
        json!({"sessionId": session, "cwd": p.root, "mcpServers": []}),
    );
    acp.result(again);
    let next = acp.prompt(&session, "and now?");
    assert_eq!(acp.result(next)["stopReason"], "end_turn");
    let last = &server.requests()[2].body;
    let messages = last["messages"].as_array().unwrap();
    assert!(messages.len() >= 5, "{last}");
    assert!(messages[0].to_string().contains("what does add do?"));
    assert_eq!(acp.finish(), Some(0));

    let mut acp = AcpPeer::start(&p, &server, &[]);
    acp.initialize();
    let missing = acp.request(
        "session/load",
        json!({"sessionId": "00000000-0000-4000-8000-000000000000", "cwd": p.root, "mcpServers": []}),
    );
    let error = acp.response(missing);
    assert!(error["error"]["message"].as_str().is_some(), "{error}");
    assert_eq!(acp.finish(), Some(0));
}

#[test]
fn modes_switch_the_permission_mode_but_never_to_bypass_unless_started_in_it() {
    let p = project();
    let server = MockServer::start(vec![read_then_edit(&p, None), anthropic::text_turn("done")]);
    let mut acp = AcpPeer::start(&p, &server, &[]);
    acp.initialize();
    let new = acp.request("session/new", json!({"cwd": p.root, "mcpServers": []}));
    let opened = acp.result(new);
    let session = opened["sessionId"].as_str().unwrap().to_string();
    let modes: Vec<&str> = opened["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["default", "acceptEdits", "plan"]);
    let model = &opened["configOptions"][0];
    assert_eq!(model["id"], "model");
    assert_eq!(model["category"], "model");
    assert!(
        model["currentValue"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{opened}"
    );

    let bypass = acp.request(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "bypassPermissions"}),
    );
    assert!(acp.response(bypass).get("error").is_some());
    let accept = acp.request(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "acceptEdits"}),
    );
    acp.result(accept);
    let prompt = acp.prompt(&session, "fix add");
    assert_eq!(acp.result(prompt)["stopReason"], "end_turn");
    assert!(calc(&p).contains(FIXED));
    assert!(
        !acp.seen
            .iter()
            .any(|v| v["method"] == "session/request_permission"),
        "acceptEdits still asked"
    );
    assert!(acp.updates().iter().any(
        |u| u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] == "acceptEdits"
    ));

    let set_model = acp.request(
        "session/set_config_option",
        json!({"sessionId": session, "configId": "model", "value": "claude-opus-4-6"}),
    );
    let options = acp.result(set_model);
    assert_eq!(
        options["configOptions"][0]["currentValue"],
        "claude-opus-4-6"
    );
    assert_eq!(acp.finish(), Some(0));
}

#[test]
fn todo_write_is_sent_as_the_plan() {
    let p = project();
    let todos = json!({"todos": [
        {"content": "Fix add", "status": "in_progress", "activeForm": "Fixing add"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]});
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("toolu_todo", "TodoWrite", todos)]),
        anthropic::text_turn("planned"),
    ]);
    let mut acp = AcpPeer::start(&p, &server, &[]);
    acp.initialize();
    let session = acp.new_session(&p.root);
    let prompt = acp.prompt(&session, "plan it");
    assert_eq!(acp.result(prompt)["stopReason"], "end_turn");
    let plan = acp
        .updates()
        .into_iter()
        .find(|u| u["sessionUpdate"] == "plan")
        .expect("a plan update");
    assert_eq!(
        plan["entries"],
        json!([
            {"content": "Fix add", "priority": "medium", "status": "in_progress"},
            {"content": "Run the tests", "priority": "medium", "status": "pending"},
        ])
    );
    assert_eq!(acp.finish(), Some(0));
}

#[test]
fn an_image_in_a_prompt_reaches_the_model_and_a_broken_one_is_refused() {
    const PNG: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
        0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8,
        0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00,
        0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    let data = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, PNG);
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("A red pixel.")]);
    let mut acp = AcpPeer::start(&p, &server, &[]);
    let init = acp.initialize();
    assert_eq!(
        init["agentCapabilities"]["promptCapabilities"]["image"], true,
        "{init}"
    );
    let session = acp.new_session(&p.root);
    let broken = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [
            {"type": "image", "mimeType": "image/png", "data": "aGVsbG8="}]}),
    );
    let refused = acp.response(broken)["error"].clone();
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("image 1: image data is not a PNG"),
        "{refused}"
    );
    let prompt = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [
            {"type": "text", "text": "what is this?"},
            {"type": "image", "mimeType": "image/png", "data": data}]}),
    );
    assert_eq!(acp.result(prompt)["stopReason"], "end_turn");
    assert_eq!(acp.finish(), Some(0));
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "the broken prompt sent nothing");
    let content = requests[0].body["messages"][0]["content"]
        .as_array()
        .unwrap()
        .clone();
    let image = content.iter().find(|b| b["type"] == "image").unwrap();
    assert_eq!(image["source"]["data"], data.as_str());
    assert_eq!(image["source"]["media_type"], "image/png");
}
