//! A tool of the embedding program: `SaveNote` appends a line to `notes.txt` in the
//! working directory, and the model is told to use it. The program allows it by rule
//! (`allow("SaveNote")`), since a tool that changes files needs approval otherwise.
//!
//! ```text
//! ANTHROPIC_API_KEY=sk-ant-… cargo run --example custom_tool -- "Note that the build is green"
//! ```
//!
//! `ANTHROPIC_BASE_URL` points it at another server; `ROBOTA_MODEL` picks the model.

use std::error::Error;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use robota::core::{Provider, RiskClass, Tool, ToolContext, ToolOutput};
use robota::providers::{AnthropicConfig, AnthropicProvider};
use robota::sdk::{QueryAnswer, QueryOptions, SessionBuilder, query};
use serde_json::{Value, json};

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

/// Appends the model's notes to `notes.txt` in the session's directory and counts them.
#[derive(Default)]
pub struct SaveNote {
    /// How many notes were saved.
    pub saved: AtomicUsize,
}

#[async_trait]
impl Tool for SaveNote {
    fn name(&self) -> &str {
        "SaveNote"
    }

    fn description(&self) -> &str {
        "Saves a short note for the user in notes.txt."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"note": {"type": "string", "description": "The note, one line"}},
            "required": ["note"]
        })
    }

    fn risk(&self) -> RiskClass {
        RiskClass::Edit
    }

    fn primary_argument(&self, _input: &Value) -> Option<String> {
        None
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let Some(note) = input.get("note").and_then(Value::as_str) else {
            return ToolOutput::error("`note` (a string) is required");
        };
        let path = ctx.cwd.join("notes.txt");
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| writeln!(file, "{}", note.replace('\n', " ")));
        match written {
            Ok(()) => {
                let count = self.saved.fetch_add(1, Ordering::SeqCst) + 1;
                ToolOutput::ok(format!("saved note {count} to {}", path.display()))
            }
            Err(e) => ToolOutput::error(format!("cannot write {}: {e}", path.display())),
        }
    }
}

/// Asks `prompt` in `cwd` with `tool` offered and allowed (`allowed: false` leaves it
/// needing approval, which a query without a permission callback refuses).
pub async fn run(
    provider: Arc<dyn Provider>,
    model: &str,
    cwd: &Path,
    prompt: &str,
    tool: Arc<SaveNote>,
    allowed: bool,
) -> Result<QueryAnswer, Box<dyn Error>> {
    let mut session = SessionBuilder::new(provider, model, cwd)
        .max_turns(5)
        .append_system_prompt("When the user asks you to note something, save it with SaveNote.")
        .tool(tool);
    if allowed {
        session = session.allow("SaveNote");
    }
    Ok(query(session, prompt, QueryOptions::new()).await?)
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
        "Note that the embedding example ran.".to_string()
    } else {
        prompt
    };
    let cwd = std::env::current_dir()?;
    let tool = Arc::new(SaveNote::default());
    let answer = run(
        provider(&key, base_url.as_deref())?,
        &model,
        &cwd,
        &prompt,
        tool.clone(),
        true,
    )
    .await?;
    println!("{}", answer.text);
    eprintln!(
        "{} note(s) saved to notes.txt",
        tool.saved.load(Ordering::SeqCst)
    );
    Ok(())
}
