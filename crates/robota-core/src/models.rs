//! The model table: context window, maximum output and price per million tokens of the
//! models we know; unknown models fall back to 200K context and an unknown price.

use super::message::Usage;

/// Prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Per million uncached prompt tokens.
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
    /// Per million prompt tokens read from the cache.
    pub cache_read: f64,
    /// Per million prompt tokens written to the cache.
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
    /// Tokens the model's context window holds.
    pub context_window: u64,
    /// Most output tokens one answer may have.
    pub max_output: u32,
    /// `None`: the price is unknown and cost is shown as unknown, never guessed.
    pub price: Option<Price>,
}

/// What [`lookup`] gives for a model not in the table: 200K context, 16K output, price
/// unknown.
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

/// OpenAI and Google bill cached input at a lower rate and cache writes not at all.
const fn cached(input: f64, output: f64, cache_read: f64) -> Price {
    Price {
        input,
        output,
        cache_read,
        cache_write: 0.0,
    }
}

const fn model(context_window: u64, max_output: u32, price: Price) -> ModelInfo {
    ModelInfo {
        context_window,
        max_output,
        price: Some(price),
    }
}

/// (id prefix, info); the longest matching prefix wins, so dated ids (`…-20250929`) and
/// suffixed ids (`…-preview`) match their family. Prices are list prices per million
/// tokens for prompts within the standard context tier.
const TABLE: &[(&str, ModelInfo)] = &[
    // Anthropic
    (
        "claude-opus-4-6",
        model(200_000, 128_000, anthropic(5.0, 25.0)),
    ),
    (
        "claude-opus-4-5",
        model(200_000, 64_000, anthropic(5.0, 25.0)),
    ),
    (
        "claude-opus-4-1",
        model(200_000, 32_000, anthropic(15.0, 75.0)),
    ),
    (
        "claude-opus-4",
        model(200_000, 32_000, anthropic(15.0, 75.0)),
    ),
    (
        "claude-sonnet-4",
        model(200_000, 64_000, anthropic(3.0, 15.0)),
    ),
    (
        "claude-haiku-4-5",
        model(200_000, 64_000, anthropic(1.0, 5.0)),
    ),
    (
        "claude-3-7-sonnet",
        model(200_000, 64_000, anthropic(3.0, 15.0)),
    ),
    (
        "claude-3-5-haiku",
        model(200_000, 8_192, anthropic(0.8, 4.0)),
    ),
    // OpenAI
    (
        "gpt-5.4-mini",
        model(400_000, 128_000, cached(0.75, 4.5, 0.075)),
    ),
    (
        "gpt-5.4",
        model(1_050_000, 128_000, cached(2.5, 15.0, 0.25)),
    ),
    (
        "gpt-5.2",
        model(400_000, 128_000, cached(1.75, 14.0, 0.175)),
    ),
    (
        "gpt-5.1-codex-mini",
        model(400_000, 128_000, cached(0.25, 2.0, 0.025)),
    ),
    (
        "gpt-5-mini",
        model(400_000, 128_000, cached(0.25, 2.0, 0.025)),
    ),
    (
        "gpt-5-nano",
        model(400_000, 128_000, cached(0.05, 0.4, 0.005)),
    ),
    ("gpt-5", model(400_000, 128_000, cached(1.25, 10.0, 0.125))),
    (
        "gpt-4.1-mini",
        model(1_047_576, 32_768, cached(0.4, 1.6, 0.1)),
    ),
    (
        "gpt-4.1-nano",
        model(1_047_576, 32_768, cached(0.1, 0.4, 0.025)),
    ),
    ("gpt-4.1", model(1_047_576, 32_768, cached(2.0, 8.0, 0.5))),
    (
        "gpt-4o-mini",
        model(128_000, 16_384, cached(0.15, 0.6, 0.075)),
    ),
    ("gpt-4o", model(128_000, 16_384, cached(2.5, 10.0, 1.25))),
    ("o4-mini", model(200_000, 100_000, cached(1.1, 4.4, 0.275))),
    ("o3-mini", model(200_000, 100_000, cached(1.1, 4.4, 0.55))),
    ("o3", model(200_000, 100_000, cached(2.0, 8.0, 0.5))),
    (
        "codex-mini",
        model(200_000, 100_000, cached(1.5, 6.0, 0.375)),
    ),
    // Google
    (
        "gemini-3-pro",
        model(1_048_576, 65_536, cached(2.0, 12.0, 0.2)),
    ),
    (
        "gemini-3-flash",
        model(1_048_576, 65_536, cached(0.5, 3.0, 0.05)),
    ),
    (
        "gemini-2.5-pro",
        model(1_048_576, 65_536, cached(1.25, 10.0, 0.125)),
    ),
    (
        "gemini-2.5-flash-lite",
        model(1_048_576, 65_536, cached(0.1, 0.4, 0.01)),
    ),
    (
        "gemini-2.5-flash",
        model(1_048_576, 65_536, cached(0.3, 2.5, 0.03)),
    ),
    (
        "gemini-2.0-flash",
        model(1_048_576, 8_192, cached(0.1, 0.4, 0.025)),
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

/// The models offered when setting up a provider of settings type `provider` (`anthropic`,
/// `openai`, `google`; aliases as the provider profile accepts them), the zero-config
/// default first. OpenAI-compatible servers name their own models: none are offered.
pub fn default_models(provider: &str) -> Vec<&'static str> {
    match provider {
        "anthropic" => vec!["claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5"],
        "openai" => vec!["gpt-5.4", "gpt-5.4-mini", "gpt-5-mini"],
        "google" | "gemini" => vec![
            "gemini-2.5-pro",
            "gemini-2.5-flash",
            "gemini-3-pro-preview",
            "gemini-3-flash-preview",
        ],
        _ => Vec::new(),
    }
}

/// Claude Code's model aliases as the provider's own models: `opus` the most capable,
/// `sonnet` the everyday one, `haiku` the small fast one; `inherit` (agent definitions) and
/// any alias a provider has no table for (an OpenAI-compatible server names its own
/// models) are `current`. Anything else is a model id and stays as written.
pub fn resolve(requested: &str, provider: &str, current: &str) -> String {
    let requested = requested.trim();
    let family = match requested.to_ascii_lowercase().as_str() {
        "inherit" | "default" | "" => return current.to_string(),
        "opus" => 0,
        "sonnet" => 1,
        "haiku" => 2,
        _ => return requested.to_string(),
    };
    let table: [&str; 3] = match provider {
        "anthropic" => ["claude-opus-4-6", "claude-sonnet-4-6", "claude-haiku-4-5"],
        "openai" => ["gpt-5.4", "gpt-5.4", "gpt-5.4-mini"],
        "google" | "gemini" => ["gemini-2.5-pro", "gemini-2.5-pro", "gemini-2.5-flash"],
        _ => return current.to_string(),
    };
    table[family].to_string()
}

/// The id prefixes of the models of provider `provider` (empty: a provider that names its
/// own, such as an OpenAI-compatible server).
fn families(provider: &str) -> &'static [&'static str] {
    match provider {
        "anthropic" => &["claude-"],
        "openai" => &["gpt-", "o1", "o3", "o4", "chatgpt-", "codex"],
        "google" | "gemini" => &["gemini-", "gemma-"],
        _ => &[],
    }
}

/// Whether `model` is plainly not one of `provider`'s models (`gpt-4o` on Anthropic); a
/// provider that names its own models knows them all.
pub fn foreign_to(model: &str, provider: &str) -> bool {
    let families = families(provider);
    !families.is_empty() && !families.iter().any(|f| model.starts_with(f))
}

/// Whether `model` is one of the aliases [`resolve`] knows.
pub fn is_alias(model: &str) -> bool {
    matches!(
        model.trim().to_ascii_lowercase().as_str(),
        "opus" | "sonnet" | "haiku" | "inherit"
    )
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
        assert_eq!(lookup("gpt-5.4-mini").price.map(|p| p.input), Some(0.75));
        assert_eq!(lookup("gpt-5.4").context_window, 1_050_000);
        assert_eq!(lookup("gpt-5-codex").price.map(|p| p.output), Some(10.0));
        assert_eq!(
            lookup("gemini-2.5-flash-lite").price.map(|p| p.input),
            Some(0.1)
        );
        assert_eq!(lookup("gemini-3-pro-preview").max_output, 65_536);
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

    #[test]
    fn offered_models_are_known_and_start_with_the_zero_config_default() {
        assert_eq!(default_models("anthropic")[0], "claude-sonnet-4-6");
        assert_eq!(default_models("openai")[0], "gpt-5.4");
        assert_eq!(default_models("google")[0], "gemini-2.5-pro");
        assert_eq!(default_models("gemini"), default_models("google"));
        assert!(default_models("openai-compatible").is_empty());
        for provider in ["anthropic", "openai", "google"] {
            for model in default_models(provider) {
                assert_ne!(lookup(model), FALLBACK, "{model} is not in the table");
            }
        }
    }

    #[test]
    fn a_model_of_another_provider_is_foreign() {
        assert!(foreign_to("gpt-4o", "anthropic"));
        assert!(!foreign_to("claude-opus-4-6", "anthropic"));
        assert!(foreign_to("claude-opus-4-6", "google"));
        assert!(!foreign_to("o3-mini", "openai"));
        assert!(!foreign_to("anything", "openai-compatible"));
    }

    #[test]
    fn aliases_resolve_per_provider_and_ids_stay() {
        assert_eq!(resolve("opus", "anthropic", "x"), "claude-opus-4-6");
        assert_eq!(resolve("Sonnet", "anthropic", "x"), "claude-sonnet-4-6");
        assert_eq!(resolve("haiku", "openai", "x"), "gpt-5.4-mini");
        assert_eq!(resolve("haiku", "google", "x"), "gemini-2.5-flash");
        assert_eq!(resolve("opus", "openai-compatible", "qwen"), "qwen");
        assert_eq!(resolve("inherit", "anthropic", "cur"), "cur");
        assert_eq!(
            resolve("claude-opus-4-1", "anthropic", "x"),
            "claude-opus-4-1"
        );
        assert!(is_alias("haiku") && !is_alias("gpt-5.4"));
        for alias in ["opus", "sonnet", "haiku"] {
            for provider in ["anthropic", "openai", "google"] {
                let id = resolve(alias, provider, "x");
                assert!(lookup(&id).price.is_some(), "{alias} on {provider} -> {id}");
            }
        }
    }
}
