//! The prompt stage: the system prompt (built-in or replaced, appended to, with the
//! context files the deny rules let through), compaction, the answer limit and the
//! thinking budget of the chosen model.

use robota_core::ServerTool;
use robota_core::models;
use robota_core::permission::PermissionPolicy;
use robota_session::SessionConfig;
use robota_session::compact::CompactionConfig;

use super::{AssemblyError, ProjectOptions, ProjectPaths, env_flag};
use crate::context_files;
use crate::instructions::{BuiltPrompt, Instructions};
use crate::settings::Settings;

/// The thinking budget of [`Thinking::On`] without a budget (at most half the answer
/// limit).
const DEFAULT_THINKING_BUDGET: u32 = 16_000;

/// Answers are capped at this many tokens unless the model allows fewer.
const DEFAULT_MAX_TOKENS: u32 = 32_000;

/// Extended thinking, as asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Thinking {
    /// No thinking.
    Off,
    /// Thinking with this budget in tokens, or the default budget.
    On(Option<u32>),
}

/// What the prompt stage decided.
pub(super) struct Built {
    pub(super) instructions: Instructions,
    pub(super) compaction: CompactionConfig,
    system_prompt: String,
    model: String,
    max_tokens: u32,
    thinking_budget: Option<u32>,
    context_window: u64,
}

pub(super) fn build(
    paths: &ProjectPaths,
    settings: &Settings,
    options: &ProjectOptions,
    policy: &PermissionPolicy,
    model: &str,
    structured: bool,
) -> Result<Built, AssemblyError> {
    let mut instructions = Instructions::new(
        paths.clone(),
        jiff::Zoned::now().date().to_string(),
        settings.values.language.clone(),
    );
    instructions.replace = options.system_prompt.clone();
    instructions.append = appended(options.append_system_prompt.clone(), structured);
    instructions.read_denial = policy.read_denial(&paths.cwd);
    instructions.discovery = options.discovery;
    instructions.unattended = !options.ask_permissions;
    let BuiltPrompt { prompt, files } = instructions.build(model);
    let compaction = CompactionConfig {
        auto_threshold: if env_flag("DISABLE_AUTO_COMPACT") {
            None
        } else {
            settings.auto_compact_threshold()?
        },
        instructions: context_files::compact_instructions(&files),
    };
    let info = models::lookup(model);
    let max_tokens = options
        .max_tokens
        .unwrap_or_else(|| info.max_output.min(DEFAULT_MAX_TOKENS));
    Ok(Built {
        instructions,
        compaction,
        system_prompt: prompt,
        model: model.to_string(),
        thinking_budget: thinking_budget(options.thinking, model, max_tokens)?,
        max_tokens,
        context_window: info.context_window,
    })
}

impl Built {
    /// The session's configuration.
    pub(super) fn config(
        &self,
        session_id: String,
        paths: &ProjectPaths,
        settings: &Settings,
        options: &ProjectOptions,
        server_tools: Vec<ServerTool>,
    ) -> SessionConfig {
        SessionConfig {
            session_id,
            cwd: paths.cwd.clone(),
            model: self.model.clone(),
            system_prompt: self.system_prompt.clone(),
            max_tokens: self.max_tokens,
            thinking_budget: self.thinking_budget,
            max_rounds: options.max_turns,
            context_window: self.context_window,
            env: super::toolset::session_env(settings, options),
            interactive: options.ask_permissions,
            server_tools,
        }
    }
}

/// The appended text, with the structured-output instruction when `--json-schema` is on.
fn appended(append: Option<String>, structured: bool) -> Option<String> {
    match (append, structured) {
        (Some(text), true) => Some(format!(
            "{text}\n\n{}",
            robota_tools::STRUCTURED_OUTPUT_INSTRUCTION
        )),
        (None, true) => Some(robota_tools::STRUCTURED_OUTPUT_INSTRUCTION.to_string()),
        (append, false) => append,
    }
}

fn thinking_budget(
    thinking: Option<Thinking>,
    model: &str,
    max_tokens: u32,
) -> Result<Option<u32>, AssemblyError> {
    let asked = match thinking {
        None | Some(Thinking::Off) => None,
        Some(Thinking::On(budget)) => {
            Some(budget.unwrap_or(DEFAULT_THINKING_BUDGET.min(max_tokens / 2)))
        }
    };
    match asked {
        None | Some(0) => Ok(None),
        Some(n) if n >= max_tokens => Err(AssemblyError::Invalid(format!(
            "--max-thinking-tokens {n}: must be below the answer limit of {model} ({max_tokens})"
        ))),
        Some(n) => Ok(Some(n)),
    }
}
