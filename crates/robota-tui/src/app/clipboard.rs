//! `/copy [n]`: what to copy from the last answer — the whole text, or its fenced code block
//! n counted from 1 (found with pulldown-cmark, so fences inside other blocks count and a
//! fence in inline code does not) — and how it reaches a clipboard: inside tmux through
//! `tmux load-buffer -w` (tmux's buffer and, through tmux, the terminal's clipboard); on a
//! local machine through its clipboard tool (wl-copy, xclip, xsel, pbcopy); else — over SSH,
//! or with no tool — the OSC 52 sequence that asks the terminal itself, wrapped for tmux's
//! passthrough inside tmux. Writing the sequence to the terminal is the app's job; the
//! message says which way the text went.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

const ESC: char = '\x1b';
const BEL: char = '\x07';

/// The text `/copy` copies: the whole `answer`, or its fenced code block `block` (from 1).
/// `Err` says why there is nothing to copy.
pub fn copy_text(answer: &str, block: Option<usize>) -> Result<String, String> {
    let answer = answer.trim();
    if answer.is_empty() {
        return Err("there is no answer to copy yet".to_string());
    }
    let Some(n) = block else {
        return Ok(answer.to_string());
    };
    if n == 0 {
        return Err("code blocks are counted from 1".to_string());
    }
    let blocks = fenced_code_blocks(answer);
    match blocks.len() {
        0 => Err("the last answer has no code blocks".to_string()),
        count if n > count => Err(format!(
            "the last answer has only {count} code block{}",
            if count == 1 { "" } else { "s" }
        )),
        _ => Ok(blocks.into_iter().nth(n - 1).unwrap_or_default()),
    }
}

/// The contents of every fenced code block, in order, without the final newline.
fn fenced_code_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut open: Option<String> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => open = Some(String::new()),
            Event::Text(text) => {
                if let Some(code) = open.as_mut() {
                    code.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(mut code) = open.take() {
                    if code.ends_with('\n') {
                        code.pop();
                    }
                    blocks.push(code);
                }
            }
            _ => {}
        }
    }
    blocks
}

/// A clipboard tool gets this long to take the text and exit.
const TOOL_TIMEOUT: Duration = Duration::from_secs(2);

/// What the environment offers for copying.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClipboardPlace {
    pub tmux: bool,
    /// A remote shell: a clipboard tool here would fill the remote machine's clipboard.
    pub ssh: bool,
    pub wayland: bool,
    pub x11: bool,
    pub macos: bool,
}

impl ClipboardPlace {
    pub fn from_env() -> Self {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        ClipboardPlace {
            tmux: set("TMUX"),
            ssh: set("SSH_CONNECTION") || set("SSH_TTY") || set("SSH_CLIENT"),
            wayland: set("WAYLAND_DISPLAY"),
            x11: set("DISPLAY"),
            macos: cfg!(target_os = "macos"),
        }
    }

    /// The programs to try, in order, each with its arguments.
    fn programs(self) -> Vec<(&'static str, &'static [&'static str])> {
        let mut programs: Vec<(&'static str, &'static [&'static str])> = Vec::new();
        if self.tmux {
            programs.push(("tmux", &["load-buffer", "-w", "-"]));
        }
        if self.ssh {
            return programs;
        }
        if self.wayland {
            programs.push(("wl-copy", &[]));
        }
        if self.x11 {
            programs.push(("xclip", &["-selection", "clipboard"]));
            programs.push(("xsel", &["--clipboard", "--input"]));
        }
        if self.macos {
            programs.push(("pbcopy", &[]));
        }
        programs
    }
}

/// How `/copy` delivered the text: the bytes to write to the terminal (OSC 52), if that is
/// the way, and the message for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub terminal_bytes: Option<String>,
    pub message: String,
}

/// Puts `text` on a clipboard the best way `place` offers; `run` feeds a program the text
/// and says whether it succeeded (`feed_program` for real).
pub fn deliver(
    text: &str,
    place: ClipboardPlace,
    run: impl Fn(&str, &[&str], &str) -> bool,
) -> Delivery {
    let chars = text.chars().count();
    for (program, args) in place.programs() {
        if run(program, args, text) {
            let how = if program == "tmux" {
                "to tmux's buffer (and through tmux to the terminal's clipboard)".to_string()
            } else {
                format!("to the clipboard with {program}")
            };
            return Delivery {
                terminal_bytes: None,
                message: format!("Copied {chars} characters {how}"),
            };
        }
    }
    let route = if place.tmux {
        "OSC 52 through tmux's passthrough"
    } else {
        "OSC 52"
    };
    Delivery {
        terminal_bytes: Some(osc52_sequence(text, place.tmux)),
        message: format!(
            "Copied {chars} characters through the terminal ({route}); a terminal that does not allow clipboard writes ignores it"
        ),
    }
}

/// Runs `program args…` with `text` on its stdin; true when it exits 0 in time. A missing
/// program is simply false.
pub fn feed_program(program: &str, args: &[&str], text: &str) -> bool {
    let Ok(mut child) = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    let written = child
        .stdin
        .take()
        .is_some_and(|mut stdin| stdin.write_all(text.as_bytes()).is_ok());
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return written && status.success(),
            Ok(None) if started.elapsed() < TOOL_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// `ESC ] 52 ; c ; <base64> BEL`; inside tmux, `ESC P tmux; <sequence, ESC doubled> ESC \`.
pub fn osc52_sequence(text: &str, in_tmux: bool) -> String {
    let sequence = format!("{ESC}]52;c;{}{BEL}", STANDARD.encode(text));
    if !in_tmux {
        return sequence;
    }
    let doubled = sequence.replace(ESC, "\x1b\x1b");
    format!("{ESC}Ptmux;{doubled}{ESC}\\")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANSWER: &str = "Two ways:\n\n```rust\nfn a() {}\n```\n\nInline `code` is not a block.\n\n- in a list:\n\n  ```sh\n  cargo test\n  echo 한국어\n  ```\n\n    indented code is not fenced\n";

    /// The payload of an OSC 52 sequence, decoded.
    fn decode(sequence: &str) -> String {
        let payload = sequence
            .strip_prefix("\x1b]52;c;")
            .and_then(|s| s.strip_suffix('\x07'))
            .unwrap();
        String::from_utf8(STANDARD.decode(payload).unwrap()).unwrap()
    }

    #[test]
    fn the_whole_answer_or_a_code_block() {
        assert_eq!(copy_text(ANSWER, None).unwrap(), ANSWER.trim());
        assert_eq!(copy_text(ANSWER, Some(1)).unwrap(), "fn a() {}");
        assert_eq!(
            copy_text(ANSWER, Some(2)).unwrap(),
            "cargo test\necho 한국어"
        );
    }

    #[test]
    fn clear_errors_when_there_is_nothing_to_copy() {
        assert_eq!(
            copy_text(ANSWER, Some(3)).unwrap_err(),
            "the last answer has only 2 code blocks"
        );
        assert_eq!(
            copy_text("```\nx\n```", Some(2)).unwrap_err(),
            "the last answer has only 1 code block"
        );
        assert_eq!(
            copy_text("no code here", Some(1)).unwrap_err(),
            "the last answer has no code blocks"
        );
        assert_eq!(
            copy_text(ANSWER, Some(0)).unwrap_err(),
            "code blocks are counted from 1"
        );
        assert_eq!(
            copy_text("  \n", None).unwrap_err(),
            "there is no answer to copy yet"
        );
    }

    #[test]
    fn copy_goes_through_tmux_then_a_local_tool_then_osc_52() {
        let tried = std::cell::RefCell::new(Vec::new());
        let works = |ok: &'static [&'static str]| {
            let tried = &tried;
            move |program: &str, _: &[&str], text: &str| {
                assert_eq!(text, "hi 한");
                tried.borrow_mut().push(program.to_string());
                ok.contains(&program)
            }
        };
        let local_x11 = ClipboardPlace {
            x11: true,
            ..Default::default()
        };
        let d = deliver("hi 한", local_x11, works(&["xsel"]));
        assert_eq!(d.terminal_bytes, None);
        assert_eq!(d.message, "Copied 4 characters to the clipboard with xsel");
        assert_eq!(*tried.borrow(), ["xclip", "xsel"]);

        tried.borrow_mut().clear();
        let tmux_over_ssh = ClipboardPlace {
            tmux: true,
            ssh: true,
            x11: true,
            ..Default::default()
        };
        let d = deliver("hi 한", tmux_over_ssh, works(&["tmux"]));
        assert!(d.message.contains("tmux's buffer"), "{}", d.message);
        // Over SSH a local tool would fill the remote clipboard: OSC 52 instead.
        tried.borrow_mut().clear();
        let d = deliver("hi 한", tmux_over_ssh, works(&[]));
        assert_eq!(*tried.borrow(), ["tmux"]);
        assert_eq!(d.terminal_bytes, Some(osc52_sequence("hi 한", true)));
        assert!(d.message.contains("passthrough"), "{}", d.message);
        let d = deliver("hi 한", ClipboardPlace::default(), works(&[]));
        assert_eq!(d.terminal_bytes, Some(osc52_sequence("hi 한", false)));
    }

    #[test]
    fn a_missing_or_failing_program_is_not_a_delivery() {
        assert!(!feed_program("robota-no-such-clipboard-tool", &[], "x"));
        assert!(!feed_program("false", &[], "x"));
        assert!(feed_program("cat", &[], "x"));
    }

    #[test]
    fn osc52_round_trips_text() {
        for text in [
            "",
            "a",
            "ab",
            "abc",
            "hello, 세계 🌍\n\ttabs",
            "\x1b[31mred\x1b[0m",
        ] {
            let sequence = osc52_sequence(text, false);
            assert_eq!(decode(&sequence), text);
        }
        assert_eq!(osc52_sequence("hi", false), "\x1b]52;c;aGk=\x07");
    }

    #[test]
    fn tmux_gets_the_passthrough_with_escapes_doubled() {
        assert_eq!(
            osc52_sequence("hi", true),
            "\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\"
        );
    }
}
