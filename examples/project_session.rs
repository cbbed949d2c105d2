//! The session robota's command line builds, in an embedding program: the project's
//! `.claude/settings.json` (permissions, hooks, environment), its commands, skills and
//! agents, `.mcp.json` servers once the directory is trusted, plugins, and the session log
//! under `$ROBOTA_HOME` — everything `robota -p` reads, from the directory alone. Only the
//! provider comes from the program.
//!
//! ```text
//! cd my-project
//! ANTHROPIC_API_KEY=sk-ant-… cargo run --example project_session -- "/greet Ana"
//! ```
//!
//! A prompt `/name args` runs the project's custom command. `ANTHROPIC_BASE_URL` points
//! it at another server (a proxy, a local mock); `ROBOTA_MODEL` picks the model (default
//! `claude-sonnet-4-6`). Calls that would need approval are denied (nobody is asked), as in
//! `robota -p`; the project's allow rules let theirs run.

use std::error::Error;
use std::sync::Arc;

use robota::core::Provider;
use robota::providers::{AnthropicConfig, AnthropicProvider};
use robota::sdk::{
    ProjectOptions, ProjectPaths, ProjectSession, ProviderSource, SessionEvent, TurnEnd,
};

/// What one prompt came to: the answer's text, how it ended, and the session's id.
pub struct Answer {
    pub text: String,
    pub end: TurnEnd,
    pub session_id: String,
}

/// Runs `prompt` in the session the command line would build in `paths.cwd`, printing the
/// answer as it streams in.
pub async fn run(
    provider: Arc<dyn Provider>,
    model: &str,
    paths: ProjectPaths,
    prompt: &str,
) -> Result<Answer, Box<dyn Error>> {
    let options = ProjectOptions {
        model: Some(model.to_string()),
        ..ProjectOptions::default()
    };
    let project = ProjectSession::assemble(paths, options, ProviderSource::Given(provider))?;
    for warning in &project.warnings {
        eprintln!("warning: {warning}");
    }
    let mut session = project.start();
    let session_id = session.state().session_id.clone();
    let mut events = session.events().ok_or("the event stream was taken")?;
    let id = session.submit(prompt);
    let mut text = String::new();
    let mut end = TurnEnd::Success;
    while let Some(event) = events.recv().await {
        match event {
            SessionEvent::TextDelta(delta) => {
                print!("{delta}");
                text.push_str(&delta);
            }
            SessionEvent::SubmissionEnded { id: ended, outcome } if ended == id => {
                end = outcome.end;
                break;
            }
            _ => {}
        }
    }
    println!();
    session.close().await;
    Ok(Answer {
        text,
        end,
        session_id,
    })
}

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

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // Sandboxed commands reach allowed domains through a relay that is this program
    // started again: it must dispatch first thing.
    #[cfg(unix)]
    robota::tools::sandbox::relay::run_if_requested();
    let key = std::env::var("ANTHROPIC_API_KEY").map_err(|_| "set ANTHROPIC_API_KEY")?;
    let base_url = std::env::var("ANTHROPIC_BASE_URL").ok();
    let model = std::env::var("ROBOTA_MODEL").unwrap_or_else(|_| "claude-sonnet-4-6".into());
    let prompt = std::env::args()
        .nth(1)
        .ok_or("usage: project_session \"<prompt or /command args>\"")?;
    let provider = provider(&key, base_url.as_deref())?;
    let paths = ProjectPaths::from_env(std::env::current_dir()?);
    let answer = run(provider, &model, paths, &prompt).await?;
    if answer.end != TurnEnd::Success {
        return Err(format!("the prompt ended with {:?}", answer.end).into());
    }
    Ok(())
}
