//! Images end to end (issue 12, feature 3): the real binary over real HTTP against the
//! loopback mock. A stream-json user message with an image block reaches each of the four
//! wire formats in that format's own shape; Read of a PNG answers with an image inside the
//! tool result (Anthropic) or beside it (the others); a resumed session sends the image
//! again; an image that is not one, or too big, gets a clear error and no request.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::process::Output;

use base64::Engine as _;
use serde_json::{Value, json};
use support::project::{Project, project, stream_json_lines};
use support::{MockResponse, MockServer, anthropic, gemini, openai_chat, openai_responses};

/// A valid 1×1 PNG (one red pixel).
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

fn png_base64() -> String {
    base64::engine::general_purpose::STANDARD.encode(PNG)
}

/// Builds a turn of tool calls (`(id, name, input)`), optionally after some text.
type ToolTurn = fn(Option<&str>, &[(&str, &str, Value)]) -> MockResponse;

/// One wire format: how to script it and how its settings profile selects it.
struct Wire {
    name: &'static str,
    text_turn: fn(&str) -> MockResponse,
    tool_turn: ToolTurn,
    /// The settings profile pointing at the mock (None: Anthropic from the environment).
    profile: fn(&str) -> Option<Value>,
}

fn wires() -> Vec<Wire> {
    vec![
        Wire {
            name: "anthropic",
            text_turn: anthropic::text_turn,
            tool_turn: anthropic::tool_turn,
            profile: |_| None,
        },
        Wire {
            name: "openai",
            text_turn: openai_responses::text_turn,
            tool_turn: openai_responses::tool_turn,
            profile: |base| {
                Some(json!({"type": "openai", "model": "gpt-5.4",
                    "apiKey": "sk-test-profile-key-1234567890", "baseURL": format!("{base}/v1")}))
            },
        },
        Wire {
            name: "openai-compatible",
            text_turn: openai_chat::text_turn,
            tool_turn: openai_chat::tool_turn,
            profile: |base| {
                Some(json!({"type": "openai-compatible", "model": "local-vision",
                    "baseURL": format!("{base}/v1")}))
            },
        },
        Wire {
            name: "google",
            text_turn: gemini::text_turn,
            tool_turn: gemini::tool_turn,
            profile: |base| {
                Some(json!({"type": "google", "model": "gemini-2.5-pro",
                    "apiKey": "AIzaSyA1234567890abcdefghijklmnopqrstu", "baseURL": base}))
            },
        },
    ]
}

/// Writes the wire's settings profile into the project's `ROBOTA_HOME`.
fn select(p: &Project, wire: &Wire, server: &MockServer) {
    if let Some(profile) = (wire.profile)(&server.base_url()) {
        std::fs::create_dir_all(&p.home).unwrap();
        let settings = json!({"currentProvider": "t", "providers": {"t": profile}});
        std::fs::write(p.home.join("settings.json"), settings.to_string()).unwrap();
    }
}

fn user_with_image(text: &str, media_type: &str, data: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": text},
        {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}},
    ]}})
}

fn results(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "result")
        .collect()
}

/// The last user turn of a request body, in the wire's own shape.
fn last_user_turn(wire: &str, body: &Value) -> Value {
    let list = match wire {
        "google" => &body["contents"],
        "openai" => &body["input"],
        _ => &body["messages"],
    };
    list.as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap()
}

/// The image of `data` in the exact shape `wire` sends a user's image.
fn wire_image(wire: &str, data: &str) -> Value {
    match wire {
        "anthropic" => {
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}})
        }
        "openai" => {
            json!({"type": "input_image", "image_url": format!("data:image/png;base64,{data}")})
        }
        "openai-compatible" => {
            json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}})
        }
        _ => json!({"inlineData": {"mimeType": "image/png", "data": data}}),
    }
}

/// Where `image` is among `parts` (Anthropic's cache breakpoint on a block ignored).
fn image_at(parts: &[Value], image: &Value) -> Option<usize> {
    parts.iter().position(|p| {
        let mut p = p.clone();
        if let Some(o) = p.as_object_mut() {
            o.remove("cache_control");
        }
        &p == image
    })
}

/// The parts list of a user turn (Gemini's `parts`, everyone else's `content`).
fn parts(wire: &str, turn: &Value) -> Vec<Value> {
    let key = if wire == "google" { "parts" } else { "content" };
    turn[key].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_stream_json_image_reaches_every_wire_in_its_own_shape() {
    let data = png_base64();
    for wire in wires() {
        let p = project();
        let server = MockServer::start(vec![(wire.text_turn)("A red pixel.")]);
        select(&p, &wire, &server);
        // Labelled JPEG, but the bytes are a PNG: the label is corrected, not refused.
        let out = stream_json_lines(
            &p,
            &server,
            &[],
            &[user_with_image("what is this?", "image/jpeg", &data)],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{}: {stderr}", wire.name);
        let result = &results(&out)[0];
        assert_eq!(result["result"], "A red pixel.", "{}: {result}", wire.name);
        let body = &server.requests()[0].body;
        let turn = last_user_turn(wire.name, body);
        let parts = parts(wire.name, &turn);
        let image = wire_image(wire.name, &data);
        let text_at = parts
            .iter()
            .position(|p| p.to_string().contains("what is this?"))
            .unwrap_or_else(|| panic!("{}: no prompt text in {turn}", wire.name));
        let found = image_at(&parts, &image)
            .unwrap_or_else(|| panic!("{}: {image} not in {turn}", wire.name));
        assert!(found > text_at, "{}: image before text", wire.name);
    }
}

#[test]
fn read_of_a_png_sends_the_image_with_the_tool_result_on_every_wire() {
    let data = png_base64();
    for wire in wires() {
        let p = project();
        std::fs::write(p.root.join("pixel.png"), PNG).unwrap();
        let server = MockServer::start(vec![
            (wire.tool_turn)(
                None,
                &[("call_1", "Read", json!({"file_path": "pixel.png"}))],
            ),
            (wire.text_turn)("It is red."),
        ]);
        select(&p, &wire, &server);
        let out = p
            .command(
                &server,
                &["-p", "look at pixel.png", "--output-format", "json"],
            )
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{}: {stderr}", wire.name);
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{}", wire.name);
        let body = &requests[1].body;
        let image = wire_image(wire.name, &data);
        match wire.name {
            "anthropic" => {
                // Inside the tool_result, as Claude Code sends it.
                let turn = last_user_turn(wire.name, body);
                let result = &turn["content"][0];
                assert_eq!(result["type"], "tool_result", "{turn}");
                assert_eq!(result["tool_use_id"], "call_1");
                let content = result["content"].as_array().expect("array content");
                assert_eq!(content[0]["type"], "text");
                assert!(
                    content[0]["text"]
                        .as_str()
                        .unwrap()
                        .contains("image/png, 70 bytes")
                );
                assert_eq!(content[1], image, "{turn}");
            }
            "google" => {
                let turn = last_user_turn(wire.name, body);
                let parts = parts(wire.name, &turn);
                assert!(parts[0]["functionResponse"].is_object(), "{turn}");
                assert_eq!(parts[1], image, "{turn}");
            }
            "openai" => {
                let input = body["input"].as_array().unwrap();
                let output = input
                    .iter()
                    .position(|i| i["type"] == "function_call_output")
                    .unwrap();
                assert!(
                    input[output]["output"]
                        .as_str()
                        .unwrap()
                        .contains("[Image: ")
                );
                // Function output is text: the image follows as the user's.
                assert_eq!(input[output + 1]["role"], "user", "{body}");
                assert_eq!(input[output + 1]["content"][0], image, "{body}");
            }
            _ => {
                let messages = body["messages"].as_array().unwrap();
                let tool = messages.iter().position(|m| m["role"] == "tool").unwrap();
                assert!(
                    messages[tool]["content"]
                        .as_str()
                        .unwrap()
                        .contains("[Image: ")
                );
                assert_eq!(messages[tool + 1]["role"], "user", "{body}");
                assert_eq!(messages[tool + 1]["content"][0], image, "{body}");
            }
        }
    }
}

#[test]
fn a_resumed_session_sends_the_image_again() {
    let data = png_base64();
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("A red pixel."),
        anthropic::text_turn("Still red."),
    ]);
    let out = stream_json_lines(
        &p,
        &server,
        &[],
        &[user_with_image("what is this?", "image/png", &data)],
    );
    assert_eq!(out.status.code(), Some(0));
    let id = results(&out)[0]["session_id"].as_str().unwrap().to_string();
    // The log holds the image inline, in Claude Code's shape.
    let log = std::fs::read_to_string(&p.session_logs()[0]).unwrap();
    assert!(log.contains(&format!("\"data\":\"{data}\"")), "{log}");
    let out = p
        .command(&server, &["-p", "and now?", "--resume", &id])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let second = &server.requests()[1].body;
    let first_user = second["messages"][0]["content"].as_array().unwrap();
    assert!(
        image_at(first_user, &wire_image("anthropic", &data)).is_some(),
        "{second}"
    );
}

#[test]
fn an_image_that_is_not_one_or_too_big_is_refused_with_a_reason_and_nothing_is_sent() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("fine")]);
    let not_png = base64::engine::general_purpose::STANDARD.encode(b"just some text");
    let mut big = PNG.to_vec();
    big.resize(5 * 1024 * 1024 + 1, 0);
    let big = base64::engine::general_purpose::STANDARD.encode(&big);
    let out = stream_json_lines(
        &p,
        &server,
        &[],
        &[
            user_with_image("first", "image/png", &not_png),
            user_with_image("second", "image/png", &big),
            user_with_image("third", "image/png", "%%%not base64"),
            json!({"type": "user", "message": {"role": "user", "content": "plain text still runs"}}),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let results = results(&out);
    assert_eq!(results.len(), 4, "{stderr}");
    let reason = |r: &Value| {
        r["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(results[0]["is_error"], true);
    assert!(
        reason(&results[0]).contains("image 1: image data is not a PNG, JPEG, GIF or WebP"),
        "{}",
        results[0]
    );
    assert!(
        reason(&results[1]).contains("images over 5 MB are not sent"),
        "{}",
        results[1]
    );
    assert!(
        reason(&results[2]).contains("not valid base64"),
        "{}",
        results[2]
    );
    assert!(stderr.contains("The user message was not sent"), "{stderr}");
    assert_eq!(results[3]["result"], "fine");
    // Only the plain message reached the model.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(!String::from_utf8_lossy(&requests[0].raw_body).contains("\"image\""));
}
