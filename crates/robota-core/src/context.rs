//! Context-window accounting: the token estimate (chars/4 blended with what the provider
//! last reported) and the thresholds the engine and session act on (DESIGN §4).

use super::message::{Message, Usage};

/// Above this share of the window, the remaining tool results of a round are skipped.
pub const TOOL_RESULT_GUARD: f64 = 0.80;
/// Above this share, auto-compaction runs before the next user turn.
pub const AUTO_COMPACT_THRESHOLD: f64 = 0.835;
/// Above this share, a round is refused.
pub const HARD_LIMIT: f64 = 0.95;

/// Rough token count of a text: one token per four characters, rounded up.
pub fn chars_to_tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// Tracks the context a conversation occupies.
#[derive(Debug, Clone, Default)]
pub struct ContextTracker {
    /// Tokens of the fixed prefix (system prompt and tool schemas), estimated.
    pub prefix_tokens: u64,
    /// Prompt + output tokens the provider reported for the last call, and how many
    /// history messages that call covered (its answer included).
    reported: Option<(u64, usize)>,
}

impl ContextTracker {
    /// A tracker for a conversation whose fixed prefix (system prompt and tool schemas) is
    /// `prefix_chars` characters long; no provider figures yet.
    pub fn new(prefix_chars: usize) -> Self {
        ContextTracker {
            prefix_tokens: chars_to_tokens(prefix_chars),
            reported: None,
        }
    }

    /// Records a provider's usage for the call whose answer is `history[covered - 1]`.
    pub fn record_usage(&mut self, usage: &Usage, covered: usize) {
        let tokens = usage.prompt_tokens() + usage.output_tokens;
        if tokens > 0 {
            self.reported = Some((tokens, covered));
        }
    }

    /// Forgets provider figures (after compaction or a history rewrite).
    pub fn reset_reported(&mut self) {
        self.reported = None;
    }

    /// max(last reported + later messages at chars/4, whole history at chars/4 + prefix).
    pub fn estimate(&self, history: &[Message]) -> u64 {
        let whole = self.prefix_tokens
            + chars_to_tokens(history.iter().map(Message::char_len).sum::<usize>());
        match self.reported {
            Some((tokens, covered)) if covered <= history.len() => {
                let later: usize = history[covered..].iter().map(Message::char_len).sum();
                whole.max(tokens + chars_to_tokens(later))
            }
            _ => whole,
        }
    }
}

/// A snapshot for display: used tokens against the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextState {
    /// The estimated tokens of the next request (system prompt, tools, conversation).
    pub used_tokens: u64,
    /// The model's context window in tokens.
    pub window: u64,
}

impl ContextState {
    /// How full the window is, 0.0 to 1.0 (and past 1.0 when over).
    pub fn fraction(&self) -> f64 {
        if self.window == 0 {
            0.0
        } else {
            self.used_tokens as f64 / self.window as f64
        }
    }

    /// [`fraction`](Self::fraction) as a whole percentage, at most 100.
    pub fn percent(&self) -> u8 {
        (self.fraction() * 100.0).round().clamp(0.0, 100.0) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_uses_the_larger_of_reported_and_chars() {
        let history = vec![Message::user_text("a".repeat(400))];
        let mut t = ContextTracker::new(40);
        assert_eq!(t.estimate(&history), 10 + 100 + 4);
        t.record_usage(
            &Usage {
                input_tokens: 500,
                output_tokens: 20,
                ..Usage::default()
            },
            1,
        );
        assert_eq!(t.estimate(&history), 520);
        let mut longer = history.clone();
        longer.push(Message::user_text("b".repeat(4000)));
        assert_eq!(t.estimate(&longer), 520 + 1004);
    }

    #[test]
    fn state_percent_rounds_and_clamps() {
        let s = ContextState {
            used_tokens: 150,
            window: 100,
        };
        assert_eq!(s.percent(), 100);
        let s = ContextState {
            used_tokens: 1,
            window: 0,
        };
        assert_eq!(s.percent(), 0);
    }
}
