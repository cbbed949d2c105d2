//! One-shot query: the embedding program creates a provider, asks one question and prints
//! the answer as it streams in, then its cost.
//!
//! ```text
//! ANTHROPIC_API_KEY=sk-ant-… cargo run --example one_shot -- "Which files are here?"
//! ```
//!
//! `ANTHROPIC_BASE_URL` points it at another server (a proxy, a local mock);
//! `ROBOTA_MODEL` picks the model (default `claude-sonnet-4-6`).

use std::error::Error;
use std::path::Path;
use std::sync::{Arc, Mutex};

use robota::core::Provider;
use robota::providers::{AnthropicConfig, AnthropicProvider};
use robota::sdk::{QueryAnswer, QueryOptions, SessionBuilder, query};

/// An Anthropic provider from the key and, when given, another base URL.
pub fn provider(
    api_key: &str,
    base_url: Option<&str>,
) -> Result<Arc<dyn Provider>, Box<dyn Error>> {
    let mut config = AnthropicConfig::new(api_key);
    if let Some(url) = base_url {
        config.base_url = url.to_string();
    }
    Ok(Arc::new(AnthropicProvider::new(config)?))
}

/// Asks `prompt` in `cwd`, printing each piece of the answer as it arrives. Returns the
/// answer and the text that was streamed.
pub async fn run(
    provider: Arc<dyn Provider>,
    model: &str,
    cwd: &Path,
    prompt: &str,
) -> Result<(QueryAnswer, String), Box<dyn Error>> {
    let streamed = Arc::new(Mutex::new(String::new()));
    let sink = streamed.clone();
    let session = SessionBuilder::new(provider, model, cwd).max_turns(10);
    let options = QueryOptions::new()
        .on_text_delta(move |delta| {
            print!("{delta}");
            if let Ok(mut text) = sink.lock() {
                text.push_str(delta);
            }
        })
        .on_compact(|c| eprintln!("[compacted: {} → {} tokens]", c.pre_tokens, c.post_tokens));
    let answer = query(session, prompt, options).await?;
    println!();
    let streamed = streamed.lock().map(|t| t.clone()).unwrap_or_default();
    Ok((answer, streamed))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // Sandboxed commands reach allowed domains through a relay that is this program
    // started again: it must dispatch first thing.
    #[cfg(unix)]
    robota::tools::sandbox::relay::run_if_requested();
    let key = std::env::var("ANTHROPIC_API_KEY").map_err(|_| "set ANTHROPIC_API_KEY")?;
    let base_url = std::env::var("ANTHROPIC_BASE_URL").ok();
    let model = std::env::var("ROBOTA_MODEL").unwrap_or_else(|_| "claude-sonnet-4-6".into());
    let prompt = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let prompt = if prompt.is_empty() {
        "Which files are in this directory?".to_string()
    } else {
        prompt
    };
    let cwd = std::env::current_dir()?;
    let (answer, _) = run(provider(&key, base_url.as_deref())?, &model, &cwd, &prompt).await?;
    match answer.cost_usd {
        Some(cost) => eprintln!(
            "{} provider calls, {} tokens out, ${cost:.4}",
            answer.turns, answer.usage.output_tokens
        ),
        None => eprintln!(
            "{} provider calls, {} tokens out",
            answer.turns, answer.usage.output_tokens
        ),
    }
    Ok(())
}
