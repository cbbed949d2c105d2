//! The model table: context window, maximum output and price per million tokens of the
//! models we know; unknown models fall back to 200K context and an unknown price.

use super::message::Usage;

/// Prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl Price {
    /// Cost of one call's usage.
    pub fn cost(&self, usage: &Usage) -> f64 {
        (usage.input_tokens as f64 * self.input
            + usage.output_tokens as f64 * self.output
            + usage.cache_read_input_tokens as f64 * self.cache_read
            + usage.cache_creation_input_tokens as f64 * self.cache_write)
            / 1_000_000.0
    }
}

/// What we know of a model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelInfo {
    pub context_window: u64,
    pub max_output: u32,
    /// `None`: the price is unknown and cost is shown as unknown, never guessed.
    pub price: Option<Price>,
}

pub const FALLBACK: ModelInfo = ModelInfo {
    context_window: 200_000,
    max_output: 16_384,
    price: None,
};

const fn anthropic(input: f64, output: f64) -> Price {
    Price {
        input,
        output,
        cache_read: input / 10.0,
        cache_write: input * 1.25,
    }
}

/// (id prefix, info); the longest matching prefix wins, so dated ids (`…-20250929`) match.
const TABLE: &[(&str, ModelInfo)] = &[
    (
        "claude-opus-4-6",
        ModelInfo {
            context_window: 200_000,
            max_output: 128_000,
            price: Some(anthropic(5.0, 25.0)),
        },
    ),
    (
        "claude-opus-4-5",
        ModelInfo {
            context_window: 200_000,
            max_output: 64_000,
            price: Some(anthropic(5.0, 25.0)),
        },
    ),
    (
        "claude-opus-4-1",
        ModelInfo {
            context_window: 200_000,
            max_output: 32_000,
            price: Some(anthropic(15.0, 75.0)),
        },
    ),
    (
        "claude-opus-4",
        ModelInfo {
            context_window: 200_000,
            max_output: 32_000,
            price: Some(anthropic(15.0, 75.0)),
        },
    ),
    (
        "claude-sonnet-4",
        ModelInfo {
            context_window: 200_000,
            max_output: 64_000,
            price: Some(anthropic(3.0, 15.0)),
        },
    ),
    (
        "claude-haiku-4-5",
        ModelInfo {
            context_window: 200_000,
            max_output: 64_000,
            price: Some(anthropic(1.0, 5.0)),
        },
    ),
    (
        "claude-3-7-sonnet",
        ModelInfo {
            context_window: 200_000,
            max_output: 64_000,
            price: Some(anthropic(3.0, 15.0)),
        },
    ),
    (
        "claude-3-5-haiku",
        ModelInfo {
            context_window: 200_000,
            max_output: 8_192,
            price: Some(anthropic(0.8, 4.0)),
        },
    ),
];

/// Looks a model up by id (longest known prefix), falling back to [`FALLBACK`].
pub fn lookup(model: &str) -> ModelInfo {
    TABLE
        .iter()
        .filter(|(prefix, _)| model.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, info)| *info)
        .unwrap_or(FALLBACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dated_ids_match_their_family_and_unknown_models_fall_back() {
        let m = lookup("claude-sonnet-4-5-20250929");
        assert_eq!(m.context_window, 200_000);
        assert_eq!(m.price.map(|p| p.input), Some(3.0));
        assert_eq!(
            lookup("claude-opus-4-1-20250805").price.map(|p| p.output),
            Some(75.0)
        );
        assert_eq!(lookup("my-local-model"), FALLBACK);
    }

    #[test]
    fn cost_counts_every_token_kind() {
        let p = anthropic(3.0, 15.0);
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_read_input_tokens: 1_000_000,
            cache_creation_input_tokens: 1_000_000,
        };
        assert!((p.cost(&u) - (3.0 + 15.0 + 0.3 + 3.75)).abs() < 1e-9);
    }
}
