//! An interactive loop: each line read is submitted to one long-lived session (a prompt,
//! or a slash command such as `/context`), and every event it causes is printed as it
//! arrives. Tool calls that need approval are asked about on the same input (`y` allows).
//!
//! ```text
//! ANTHROPIC_API_KEY=sk-ant-… cargo run --example interactive_loop
//! ```
//!
//! `ANTHROPIC_BASE_URL` points it at another server; `ROBOTA_MODEL` picks the model.

use std::error::Error;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;

use robota::core::Provider;
use robota::providers::{AnthropicConfig, AnthropicProvider};
use robota::sdk::{Outcome, PermissionAnswer, SessionBuilder, SessionEvent};

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

/// Submits each line of `input` in turn to a session in `cwd` and writes its events to
/// `out` until the submission ends; permission questions read their answer from the next
/// line. Returns how each submission ended.
pub async fn run(
    provider: Arc<dyn Provider>,
    model: &str,
    cwd: &Path,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<Vec<Outcome>, Box<dyn Error>> {
    let mut session = SessionBuilder::new(provider, model, cwd)
        .ask_permissions(true)
        .start()?;
    let mut events = session.events().ok_or("the event stream was taken")?;
    writeln!(
        out,
        "session {} ({} commands; /help lists them)",
        session.id(),
        session.list_commands().len()
    )?;
    let mut outcomes = Vec::new();
    let mut line = String::new();
    loop {
        write!(out, "> ")?;
        out.flush()?;
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let id = session.submit(text);
        while let Some(event) = events.recv().await {
            match event {
                SessionEvent::TextDelta(delta) => write!(out, "{delta}")?,
                SessionEvent::ToolStarted { name, input, .. } => {
                    writeln!(out, "\n[tool] {name} {input}")?;
                }
                SessionEvent::ToolFinished {
                    name,
                    content,
                    is_error,
                    ..
                } => {
                    let first = content.lines().next().unwrap_or("");
                    let status = if is_error { "failed" } else { "done" };
                    writeln!(out, "[{status}] {name}: {first}")?;
                }
                SessionEvent::PermissionRequest(mut request) => {
                    write!(
                        out,
                        "\n[ask] {} {} ({}) allow? [y/N] ",
                        request.tool_name, request.input, request.reason
                    )?;
                    out.flush()?;
                    let mut answer = String::new();
                    input.read_line(&mut answer)?;
                    request.respond(match answer.trim() {
                        "y" | "yes" => PermissionAnswer::Allow,
                        _ => PermissionAnswer::Deny(Some("the user said no".into())),
                    });
                }
                SessionEvent::PermissionDenied {
                    tool_name, reason, ..
                } => {
                    writeln!(out, "[denied] {tool_name}: {reason}")?;
                }
                SessionEvent::CommandOutput { output, .. } => writeln!(out, "{output}")?,
                SessionEvent::Warning(warning) => writeln!(out, "[warning] {warning}")?,
                SessionEvent::SubmissionEnded { id: ended, outcome } if ended == id => {
                    writeln!(
                        out,
                        "\n[end {id}: {:?}, {} provider calls]",
                        outcome.end, outcome.rounds
                    )?;
                    outcomes.push(outcome);
                    break;
                }
                _ => {}
            }
        }
    }
    let state = session.state();
    writeln!(
        out,
        "\n{} tokens in, {} out",
        state.usage.input_tokens, state.usage.output_tokens
    )?;
    session.close().await;
    Ok(outcomes)
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
    let cwd = std::env::current_dir()?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout();
    run(
        provider(&key, base_url.as_deref())?,
        &model,
        &cwd,
        &mut input,
        &mut out,
    )
    .await?;
    Ok(())
}
