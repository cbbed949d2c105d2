//! Images in the UI: a pasted (or dropped — terminals paste the path) image file becomes
//! `[Image #1]` in the composer and the transcript, and the request carries the image
//! block with the file's base64; a path to a file too big stays text with a notice; Ctrl+V
//! reads the clipboard's image through the platform tool (a stand-in `xclip` here), and
//! says so when the clipboard holds none.

use std::time::Duration;

use base64::Engine as _;

use crate::support::MockServer;
use crate::support::anthropic::text_turn;
use crate::support::project::project;
use crate::{exit_cleanly, start, start_with};

/// A valid 1×1 PNG (one red pixel).
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// The image blocks of the last user message of request `n` (1-based).
fn sent_images(server: &MockServer, n: usize) -> Vec<serde_json::Value> {
    assert!(
        server.wait_for_requests(n, Duration::from_secs(20)),
        "request {n} never came"
    );
    let body = &server.requests()[n - 1].body;
    let last = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap();
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "image")
        .cloned()
        .collect()
}

#[test]
fn a_pasted_image_path_is_sent_as_an_image_block_and_shown_as_a_placeholder() {
    let project = project();
    let shot = project.root.join("screen shot.png");
    std::fs::write(&shot, PNG).unwrap();
    let mut big = PNG.to_vec();
    big.resize(5 * 1024 * 1024 + 1, 0);
    std::fs::write(project.root.join("huge.png"), &big).unwrap();
    let server = MockServer::start(vec![text_turn("It is one red pixel.")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");

    // Too big: a notice, and the path stays as typed text (nothing lost).
    pty.paste(&project.root.join("huge.png").display().to_string());
    let screen = pty.wait_for_text("Image not attached");
    assert!(screen.contains("huge.png"), "{screen}");
    pty.send(b"\x03"); // Ctrl+C clears the composer.

    // A dropped file: quoted, as terminals paste paths with spaces.
    pty.paste(&format!("'{}'", shot.display()));
    pty.wait_for_text("[Image #1]");
    pty.type_text(" what is this?");
    pty.send(b"\r");
    let screen = pty.wait_for_text("It is one red pixel.");
    assert!(screen.contains("> [Image #1] what is this?"), "{screen}");

    let images = sent_images(&server, 1);
    assert_eq!(images.len(), 1);
    let mut image = images[0].clone();
    image.as_object_mut().unwrap().remove("cache_control");
    assert_eq!(
        image,
        serde_json::json!({"type": "image", "source": {"type": "base64",
            "media_type": "image/png",
            "data": base64::engine::general_purpose::STANDARD.encode(PNG)}})
    );
    // The prompt names the image by its placeholder, not by the pasted path.
    let prompt = crate::last_user_text(&server, 1);
    assert!(prompt.contains("[Image #1] what is this?"), "{prompt}");
    assert!(!prompt.contains("screen shot.png"), "{prompt}");
    exit_cleanly(&mut pty);
}

#[test]
fn ctrl_v_pastes_the_clipboards_image_through_the_platform_tool() {
    let project = project();
    let clip = project.user_home.join("clipboard.png");
    // A stand-in xclip: prints the clipboard file when there is one, else fails as xclip
    // does when the clipboard has no image/png target.
    let (_, path) = crate::stand_in_program(
        &project,
        "xclip",
        &format!(
            "#!/bin/sh\necho \"$@\" >> '{log}'\n[ -f '{clip}' ] && exec cat '{clip}'\nexit 1\n",
            log = project.user_home.join("xclip.log").display(),
            clip = clip.display()
        ),
    );
    let server = MockServer::start(vec![text_turn("Pasted pixel seen.")]);
    let mut pty = start_with(&project, &server, &[], |cmd| {
        cmd.env("PATH", &path);
        cmd.env("DISPLAY", ":99");
    });
    pty.wait_for_text("Ask anything");

    pty.send(b"\x16"); // Ctrl+V, nothing on the clipboard
    let screen = pty.wait_for_text("No image pasted");
    assert!(
        screen.contains("xclip: the clipboard holds no image"),
        "{screen}"
    );

    std::fs::write(&clip, PNG).unwrap();
    pty.send(b"\x16");
    pty.wait_for_text("[Image #1]");
    pty.type_text(" and this?");
    pty.send(b"\r");
    pty.wait_for_text("Pasted pixel seen.");
    let images = sent_images(&server, 1);
    assert_eq!(images.len(), 1);
    assert_eq!(
        images[0]["source"]["data"],
        base64::engine::general_purpose::STANDARD.encode(PNG)
    );
    let calls = std::fs::read_to_string(project.user_home.join("xclip.log")).unwrap();
    assert_eq!(
        calls.lines().next(),
        Some("-selection clipboard -t image/png -o")
    );
    exit_cleanly(&mut pty);
}

#[test]
fn a_pasted_path_to_a_text_file_stays_text() {
    let project = project();
    let server = MockServer::start(vec![text_turn("ok")]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.paste(&project.root.join("calc.py").display().to_string());
    let screen = pty.wait_for_text("calc.py");
    assert!(!screen.contains("[Image #"), "{screen}");
    pty.send(b"\x03"); // Ctrl+C clears the composer.
    exit_cleanly(&mut pty);
}

#[test]
fn a_queued_prompt_taken_back_keeps_its_image_and_up_recalls_it_with_the_image() {
    let project = project();
    let shot = project.root.join("shot.png");
    std::fs::write(&shot, PNG).unwrap();
    let server = MockServer::start(vec![
        crate::support::anthropic::text_turn_held("Busy for a while.", 4),
        text_turn("It is one red pixel."),
        text_turn("Still one red pixel."),
    ]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("first");
    pty.send(b"\r");
    pty.wait_for_text("Busy");
    pty.paste(&shot.display().to_string());
    pty.wait_for_text("[Image #1]");
    pty.type_text(" what is this?");
    pty.send(b"\r");
    pty.wait_for_text("queued:");
    // Backspace on the empty composer takes it back, the image with it.
    pty.send(b"\x7f");
    pty.wait_for("the queue emptied", Duration::from_secs(10), |s| {
        !s.contains("queued:") && s.contains("> [Image #1] what is this?")
    });
    server.release_held();
    crate::wait_for_answer(&pty, "Busy for a while.");
    pty.send(b"\r");
    crate::wait_for_answer(&pty, "It is one red pixel.");
    let encoded = base64::engine::general_purpose::STANDARD.encode(PNG);
    let images = sent_images(&server, 2);
    assert_eq!(images.len(), 1, "the taken-back prompt lost its image");
    assert_eq!(images[0]["source"]["data"], encoded.as_str());
    // Up recalls the prompt, and the image comes back with it.
    pty.send(b"\x1b[A");
    pty.wait_for_text("> [Image #1] what is this?");
    pty.send(b"\r");
    crate::wait_for_answer(&pty, "Still one red pixel.");
    let images = sent_images(&server, 3);
    assert_eq!(images.len(), 1, "the recalled prompt lost its image");
    assert_eq!(images[0]["source"]["data"], encoded.as_str());
    exit_cleanly(&mut pty);
}
