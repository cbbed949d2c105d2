//! `/copy [n]`: what to copy from the last answer — the whole text, or its fenced code block
//! n counted from 1 (found with pulldown-cmark, so fences inside other blocks count and a
//! fence in inline code does not) — and how it reaches a clipboard: inside tmux through
//! `tmux load-buffer -w` (tmux's buffer and, through tmux, the terminal's clipboard); on a
//! local machine through its clipboard tool (wl-copy, xclip, xsel, pbcopy); else — over SSH,
//! or with no tool — the OSC 52 sequence that asks the terminal itself, wrapped for tmux's
//! passthrough inside tmux. The programs run off the UI loop (`helpers.rs`), each killed at
//! its deadline; one that hangs ends the copy with nothing copied. Writing the sequence to
//! the terminal is the app's job; the message says which way the text went.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use robota_core::helper_program::{HelperError, HelperIo, deadline, describe, run_helper};
use tokio::process::Command;

const ESC: char = '\x1b';
const BEL: char = '\x07';

/// Why `/copy` has nothing to copy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CopyError {
    /// `/copy` before any answer arrived.
    #[error("there is no answer to copy yet")]
    NoAnswer,
    /// `/copy 0`.
    #[error("code blocks are counted from 1")]
    BlockZero,
    /// `/copy N` when the last answer has no code block.
    #[error("the last answer has no code blocks")]
    NoCodeBlocks,
    /// `/copy N` past the last answer's code blocks.
    #[error(
        "the last answer has only {count} code block{}",
        if *count == 1 { "" } else { "s" }
    )]
    TooFewBlocks {
        /// The code blocks the last answer has.
        count: usize,
    },
}

/// The text `/copy` copies: the whole `answer`, or its fenced code block `block` (from 1).
/// `Err` says why there is nothing to copy.
pub fn copy_text(answer: &str, block: Option<usize>) -> Result<String, CopyError> {
    let answer = answer.trim();
    if answer.is_empty() {
        return Err(CopyError::NoAnswer);
    }
    let Some(n) = block else {
        return Ok(answer.to_string());
    };
    if n == 0 {
        return Err(CopyError::BlockZero);
    }
    let blocks = fenced_code_blocks(answer);
    match blocks.len() {
        0 => Err(CopyError::NoCodeBlocks),
        count if n > count => Err(CopyError::TooFewBlocks { count }),
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

/// A clipboard tool gets this long to take the text and exit (it runs off the loop, which
/// goes on meanwhile).
const TOOL_TIMEOUT: Duration = Duration::from_secs(5);

/// What the environment offers for copying.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClipboardPlace {
    pub(crate) tmux: bool,
    /// A remote shell: a clipboard tool here would fill the remote machine's clipboard.
    pub ssh: bool,
    pub(crate) wayland: bool,
    pub(crate) x11: bool,
    pub(crate) macos: bool,
}

impl ClipboardPlace {
    /// Reads the environment: `TMUX`, the `SSH_*` variables, `WAYLAND_DISPLAY`, `DISPLAY`,
    /// and whether this is macOS.
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
    pub fn programs(self) -> Vec<(&'static str, &'static [&'static str])> {
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
/// the way, and the message for the user (a warning when nothing was copied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub(crate) terminal_bytes: Option<String>,
    /// What to tell the user: where the text went, or why it did not.
    pub message: String,
    /// Whether the text reached a clipboard (else `message` is a warning).
    pub copied: bool,
}

/// What became of the text given to a clipboard program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    /// It took the text and exited 0.
    Taken,
    /// It is missing, failed, or did not take it all: the next way is tried.
    Refused,
    /// It was still running at this deadline and was killed.
    Stuck(Duration),
}

/// Puts `text` on a clipboard the best way `place` offers; `run` feeds a program the text
/// (`feed_program` for real). A program that hangs ends the attempt: nothing is copied.
pub async fn deliver(
    text: &str,
    place: ClipboardPlace,
    run: impl AsyncFn(&str, &[&str], &str) -> Feed,
) -> Delivery {
    let chars = text.chars().count();
    for (program, args) in place.programs() {
        match run(program, args, text).await {
            Feed::Taken => {
                let how = if program == "tmux" {
                    "to tmux's buffer (and through tmux to the terminal's clipboard)".to_string()
                } else {
                    format!("to the clipboard with {program}")
                };
                return Delivery {
                    terminal_bytes: None,
                    message: format!("Copied {chars} characters {how}"),
                    copied: true,
                };
            }
            Feed::Refused => {}
            Feed::Stuck(deadline) => {
                return Delivery {
                    terminal_bytes: None,
                    message: format!(
                        "The clipboard program ({program}) did not finish in {}; it was stopped and nothing was copied",
                        describe(deadline)
                    ),
                    copied: false,
                };
            }
        }
    }
    through_terminal(text, place)
}

/// The text as an OSC 52 sequence for the terminal (through tmux's passthrough inside
/// tmux): the way when no clipboard program takes it.
pub fn through_terminal(text: &str, place: ClipboardPlace) -> Delivery {
    let route = if place.tmux {
        "OSC 52 through tmux's passthrough"
    } else {
        "OSC 52"
    };
    Delivery {
        terminal_bytes: Some(osc52_sequence(text, place.tmux)),
        message: format!(
            "Copied {} characters through the terminal ({route}); a terminal that does not allow clipboard writes ignores it",
            text.chars().count()
        ),
        copied: true,
    }
}

/// Runs `program args…` with `text` on its stdin, killed (with everything it started)
/// when it has not exited by the helper deadline. A missing program is refused.
pub async fn feed_program(program: &str, args: &[&str], text: &str) -> Feed {
    let mut command = Command::new(program);
    command.args(args);
    let io = HelperIo {
        input: Some(text.as_bytes().to_vec()),
        output_limit: 0,
        deadline: deadline(TOOL_TIMEOUT),
    };
    match run_helper(command, io).await {
        Ok(out) if out.success() && out.input_taken => Feed::Taken,
        Ok(_) => Feed::Refused,
        Err(HelperError::TimedOut(deadline)) => Feed::Stuck(deadline),
        Err(_) => Feed::Refused,
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
            copy_text(ANSWER, Some(3)).unwrap_err().to_string(),
            "the last answer has only 2 code blocks"
        );
        assert_eq!(
            copy_text("```\nx\n```", Some(2)).unwrap_err().to_string(),
            "the last answer has only 1 code block"
        );
        assert_eq!(
            copy_text("no code here", Some(1)).unwrap_err().to_string(),
            "the last answer has no code blocks"
        );
        assert_eq!(
            copy_text(ANSWER, Some(0)).unwrap_err().to_string(),
            "code blocks are counted from 1"
        );
        assert_eq!(
            copy_text("  \n", None).unwrap_err().to_string(),
            "there is no answer to copy yet"
        );
    }

    #[tokio::test]
    async fn copy_goes_through_tmux_then_a_local_tool_then_osc_52() {
        let tried = std::sync::Mutex::new(Vec::new());
        let works = |ok: &'static [&'static str]| {
            let tried = &tried;
            async move |program: &str, _: &[&str], text: &str| {
                assert_eq!(text, "hi 한");
                tried.lock().unwrap().push(program.to_string());
                if ok.contains(&program) {
                    Feed::Taken
                } else {
                    Feed::Refused
                }
            }
        };
        let local_x11 = ClipboardPlace {
            x11: true,
            ..Default::default()
        };
        let d = deliver("hi 한", local_x11, works(&["xsel"])).await;
        assert_eq!(d.terminal_bytes, None);
        assert_eq!(d.message, "Copied 4 characters to the clipboard with xsel");
        assert_eq!(*tried.lock().unwrap(), ["xclip", "xsel"]);

        tried.lock().unwrap().clear();
        let tmux_over_ssh = ClipboardPlace {
            tmux: true,
            ssh: true,
            x11: true,
            ..Default::default()
        };
        let d = deliver("hi 한", tmux_over_ssh, works(&["tmux"])).await;
        assert!(d.message.contains("tmux's buffer"), "{}", d.message);
        // Over SSH a local tool would fill the remote clipboard: OSC 52 instead.
        tried.lock().unwrap().clear();
        let d = deliver("hi 한", tmux_over_ssh, works(&[])).await;
        assert_eq!(*tried.lock().unwrap(), ["tmux"]);
        assert_eq!(d.terminal_bytes, Some(osc52_sequence("hi 한", true)));
        assert!(d.message.contains("passthrough"), "{}", d.message);
        let d = deliver("hi 한", ClipboardPlace::default(), works(&[])).await;
        assert_eq!(d.terminal_bytes, Some(osc52_sequence("hi 한", false)));
    }

    #[tokio::test]
    async fn a_hung_program_ends_the_copy_and_says_so() {
        let stuck = async |_: &str, _: &[&str], _: &str| Feed::Stuck(Duration::from_secs(5));
        let place = ClipboardPlace {
            x11: true,
            ..Default::default()
        };
        let d = deliver("x", place, stuck).await;
        assert!(!d.copied);
        assert_eq!(d.terminal_bytes, None, "no OSC 52 either");
        assert_eq!(
            d.message,
            "The clipboard program (xclip) did not finish in 5 s; it was stopped and nothing was copied"
        );
    }

    #[tokio::test]
    async fn a_missing_or_failing_program_is_not_a_delivery() {
        assert_eq!(
            feed_program("robota-no-such-clipboard-tool", &[], "x").await,
            Feed::Refused
        );
        assert_eq!(feed_program("false", &[], "x").await, Feed::Refused);
        assert_eq!(feed_program("cat", &[], "x").await, Feed::Taken);
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
