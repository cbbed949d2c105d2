//! Making room when a turn no longer fits its window (the engine refused the next call, or
//! the provider said the prompt is too long): oversized tool results are cut to their head
//! and tail first, then what came before the turn — or, when the turn itself is most of the
//! window, everything before its last round — is summarised. A turn ends with "too long"
//! only when nothing is left to drop.

use robota_core::context::{AUTO_COMPACT_THRESHOLD, ContextTracker, chars_to_tokens};
use robota_core::{Block, Message, Role};
use tokio_util::sync::CancellationToken;

use super::{Cause, CompactError, Compactor};
use crate::update::{CompactReason, CompactTrigger, SessionUpdate};

/// A tool result longer than this share of the window (at four characters a token) is cut.
const RESULT_SHARE: f64 = 0.1;

/// Below this many characters a tool result is never cut.
const MIN_RESULT_CAP: usize = 8_000;

/// A turn whose own messages fill more than this share of the window is summarised up to
/// its last round, not only up to its prompt.
const TURN_SHARE: f64 = 0.5;

/// The longest a tool result may stay in a conversation on a window of `window` tokens.
pub fn result_cap_chars(window: u64) -> usize {
    ((window as f64 * RESULT_SHARE) as usize * 4).max(MIN_RESULT_CAP)
}

/// Cuts every tool result longer than `cap` characters to its head and tail, with a marker
/// saying how much was cut; returns how many were cut.
pub fn cut_oversized_results(history: &mut [Message], cap: usize) -> usize {
    let mut cut = 0;
    for message in history.iter_mut() {
        for block in &mut message.content {
            if let Block::ToolResult { content, .. } = block
                && content.text.len() > cap
            {
                content.text = head_and_tail(&content.text, cap);
                cut += 1;
            }
        }
    }
    cut
}

/// Room the cut marker takes, so a cut result is no longer than the cap.
const MARKER_ROOM: usize = 200;

/// The head and tail of `text` (at character boundaries) around a marker, `cap` bytes in all.
fn head_and_tail(text: &str, cap: usize) -> String {
    let half = cap.saturating_sub(MARKER_ROOM) / 2;
    let head_end = boundary_at_or_before(text, half);
    let tail_start = boundary_at_or_before(text, text.len() - half);
    let removed = &text[head_end..tail_start];
    format!(
        "{}\n\n[… {} characters (about {} tokens) of this tool result were cut here to fit the context window …]\n\n{}",
        &text[..head_end],
        removed.chars().count(),
        chars_to_tokens(removed.len()),
        &text[tail_start..]
    )
}

fn boundary_at_or_before(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Where the kept part of a turn that ran out of room starts: the turn's prompt, unless the
/// turn alone fills most of the window (then its last round: the last assistant message and
/// what followed it). Zero: nothing before it to summarise.
pub fn keep_from(history: &[Message], turn_start: usize, window: u64) -> usize {
    let turn_start = turn_start.min(history.len());
    let turn_tokens = ContextTracker::default().estimate(&history[turn_start..]);
    let turn_is_small = (turn_tokens as f64) < window as f64 * TURN_SHARE;
    if turn_start > 0 && turn_is_small {
        return turn_start;
    }
    history
        .iter()
        .rposition(|m| m.role == Role::Assistant)
        .map_or(turn_start, |last| last.max(turn_start))
}

/// What a turn that ran out of room hands to [`make_room`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct RoomRequest {
    /// Where the unfinished turn starts in the history.
    pub turn_start: usize,
    /// Why there is no room.
    pub reason: CompactReason,
}

/// What [`make_room`] did.
pub(crate) enum Room {
    /// The turn can go on; it now starts at `turn_start`, and SessionStart(`compact`) hooks
    /// gave `contexts` for the next prompt.
    Made {
        /// Where the unfinished turn starts now.
        turn_start: usize,
        /// Context for the next prompt.
        contexts: Vec<String>,
    },
    /// Nothing was left to drop.
    Nothing,
}

/// Makes room for the unfinished turn to go on: cuts oversized tool results, then
/// summarises what can be.
pub(crate) async fn make_room(
    compactor: &Compactor<'_>,
    history: &mut Vec<Message>,
    tracker: &mut ContextTracker,
    request: RoomRequest,
    cancel: &CancellationToken,
) -> Result<Room, CompactError> {
    let window = compactor.window;
    let cut_results = cut_oversized_results(history, result_cap_chars(window));
    if cut_results > 0 {
        tracker.reset_reported();
        (compactor.sink)(SessionUpdate::Notice(format!(
            "Cut {cut_results} oversized tool result(s) to their head and tail ({}).",
            request.reason.describe()
        )));
        let fits = (tracker.estimate(history) as f64) < AUTO_COMPACT_THRESHOLD * window as f64;
        if fits {
            return Ok(Room::Made {
                turn_start: request.turn_start,
                contexts: Vec::new(),
            });
        }
    }
    let keep_from = keep_from(history, request.turn_start, window);
    if keep_from == 0 {
        return Ok(if cut_results > 0 {
            Room::Made {
                turn_start: request.turn_start,
                contexts: Vec::new(),
            }
        } else {
            Room::Nothing
        });
    }
    let cause = Cause {
        trigger: CompactTrigger::Auto,
        reason: request.reason,
        cut_results,
    };
    let done = compactor
        .run(history, tracker, cause, "", keep_from, cancel)
        .await?;
    // The summary comes first; the kept part of the turn follows it.
    Ok(Room::Made {
        turn_start: 1,
        contexts: done.contexts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(text: String) -> Message {
        Message::new(
            Role::User,
            vec![Block::ToolResult {
                tool_use_id: "t".into(),
                content: text.into(),
                is_error: false,
            }],
        )
    }

    fn call() -> Message {
        Message::new(
            Role::Assistant,
            vec![Block::ToolUse {
                id: "t".into(),
                name: "Skill".into(),
                input: json!({}),
            }],
        )
    }

    #[test]
    fn an_oversized_result_keeps_its_head_and_tail_and_says_how_much_was_cut() {
        let big = format!("HEAD{}é{}TAIL", "a".repeat(400_000), "b".repeat(400_000));
        let mut history = vec![Message::user_text("go"), call(), result(big.clone())];
        let cap = result_cap_chars(200_000);
        assert_eq!(cap, 80_000);
        assert_eq!(cut_oversized_results(&mut history, cap), 1);
        let text = history[2].content[0].char_len();
        assert!(text <= 80_000, "{text}");
        let Block::ToolResult { content, .. } = &history[2].content[0] else {
            panic!()
        };
        assert!(content.text.starts_with("HEAD") && content.text.ends_with("TAIL"));
        assert!(
            content
                .text
                .contains("[… 720209 characters (about 180053 tokens)")
        );
        assert_eq!(
            cut_oversized_results(&mut history, cap),
            0,
            "once is enough"
        );
    }

    #[test]
    fn a_small_turn_keeps_from_its_prompt_a_huge_one_from_its_last_round() {
        let earlier = vec![Message::user_text("earlier"), call(), result("r".into())];
        let mut history = earlier.clone();
        history.extend([Message::user_text("now"), call(), result("x".repeat(100))]);
        assert_eq!(keep_from(&history, 3, 200_000), 3);
        let mut huge = earlier;
        huge.extend([
            Message::user_text("now"),
            call(),
            result("x".repeat(500_000)),
        ]);
        assert_eq!(keep_from(&huge, 3, 200_000), 4);
        let first = vec![
            Message::user_text("now"),
            call(),
            result("x".repeat(500_000)),
        ];
        assert_eq!(keep_from(&first, 0, 200_000), 1);
        assert_eq!(keep_from(&[Message::user_text("now")], 0, 200_000), 0);
    }
}
