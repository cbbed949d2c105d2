//! `/copy [n]`: what to copy from the last answer — the whole text, or its fenced code block
//! n counted from 1 (found with pulldown-cmark, so fences inside other blocks count and a
//! fence in inline code does not) — and the OSC 52 sequence that puts text on the
//! terminal's clipboard, wrapped for tmux's passthrough inside tmux. Writing the sequence
//! to the terminal is the app's job.

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

/// The escape sequence that sets the system clipboard to `text` (OSC 52), wrapped in tmux's
/// passthrough when `$TMUX` is set.
pub fn osc52(text: &str) -> String {
    let in_tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
    osc52_sequence(text, in_tmux)
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
