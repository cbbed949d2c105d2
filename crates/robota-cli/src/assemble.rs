//! The command line's part of putting a session together: its flags become the SDK's
//! [`ProjectOptions`] and its provider choice (profiles, keys, `--fallback-model`); the SDK
//! assembles the session (`robota_sdk::assembly`).

use std::path::PathBuf;

use crate::core::ProviderFactory;
use crate::core::permission::PermissionMode;
use crate::sdk::assembly::{
    ChosenProvider, Discovery, ProviderChoiceError, ProviderSource, ResumeFrom, Thinking,
};
use crate::sdk::settings::{Scope, SettingsError};
use crate::sdk::{AssemblyError, ProjectOptions, ProjectPaths, ProjectSession};

use super::args::Args;
use super::provider_setup::{self, ProviderSetupError};

/// An assembled session and the facts clients print about it.
pub type Assembled = ProjectSession;

/// Why the flags do not give a session; the message names the flag or file to fix.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // each variant's message is its documentation
pub enum AssembleError {
    #[error("cannot read the working directory: {0}")]
    WorkingDirectory(#[source] std::io::Error),
    /// `--setting-sources` names no source.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(
        "unknown --permission-mode {given:?}; choose one of: {modes}",
        modes = PermissionMode::ALL.map(|m| m.as_str()).join(", ")
    )]
    PermissionMode { given: String },
    #[error("--resume needs a session id or name in print mode (the picker is interactive)")]
    ResumeWithoutId,
    #[error("--resume-session-at needs --resume or --continue")]
    ResumeAtWithoutResume,
    #[error("--thinking {0:?}: use adaptive, enabled or disabled")]
    Thinking(String),
    #[error("{flag} {}: {source}", path.display())]
    PromptFile {
        flag: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The SDK could not put the session together.
    #[error(transparent)]
    Assembly(#[from] AssemblyError),
}

impl AssembleError {
    /// The provider choice's own error, when that is what failed.
    pub fn provider_setup(&self) -> Option<&ProviderSetupError> {
        match self {
            AssembleError::Assembly(AssemblyError::Provider(chosen)) => chosen.downcast_ref(),
            _ => None,
        }
    }
}

/// The session the flags describe, in the process's working directory; `interactive`
/// both holds an untrusted project's settings back and asks the user about permissions.
pub fn assemble(
    args: &Args,
    interactive: bool,
    providers: &'static dyn ProviderFactory,
) -> Result<Assembled, AssembleError> {
    let cwd = std::env::current_dir().map_err(AssembleError::WorkingDirectory)?;
    assemble_in(
        args,
        cwd,
        options(args, interactive, interactive)?,
        providers,
    )
}

/// The session the flags and `options` describe, in `cwd` (an ACP client names the
/// directory of each session it opens).
pub fn assemble_in(
    args: &Args,
    cwd: PathBuf,
    options: ProjectOptions,
    providers: &'static dyn ProviderFactory,
) -> Result<Assembled, AssembleError> {
    let provider = ProviderSource::Chosen(Box::new(chooser(args, providers)));
    let mut assembled = ProjectSession::assemble(ProjectPaths::from_env(cwd), options, provider)?;
    let mut warnings = args.accepted.notes();
    warnings.append(&mut assembled.warnings);
    assembled.warnings = warnings;
    Ok(assembled)
}

/// The SDK options the flags ask for: settings loaded for an `interactive` run (trust
/// hold-back) while the session may still ask a client (`asks_client`) about
/// permissions (a protocol driver that forwards questions over its pipe).
pub fn options(
    args: &Args,
    interactive: bool,
    asks_client: bool,
) -> Result<ProjectOptions, AssembleError> {
    Ok(ProjectOptions {
        setting_sources: args
            .setting_sources
            .as_deref()
            .map(Scope::parse_sources)
            .transpose()?,
        extra_settings: args.settings.clone(),
        interactive,
        ask_permissions: asks_client,
        model: args.model.clone(),
        permission_mode: permission_mode(args)?,
        allow: args.allowed_tools.clone(),
        deny: args.disallowed_tools.clone(),
        tools: chosen_tools(args.tools.as_deref()),
        json_schema: args.json_schema.clone(),
        plugin_dirs: if args.safe_mode {
            Vec::new()
        } else {
            args.plugin_dir.clone()
        },
        mcp_configs: if args.safe_mode {
            Vec::new()
        } else {
            args.mcp_config.clone()
        },
        strict_mcp_config: args.strict_mcp_config || args.safe_mode,
        discovery: if args.safe_mode {
            Discovery::ProjectContextFiles
        } else {
            Discovery::Full
        },
        safe_mode: args.safe_mode,
        resume: resume_from(args)?,
        fork: args.fork_session,
        resume_at: args.resume_session_at.clone(),
        session_id: args.session_id.clone(),
        no_log: args.no_session_persistence,
        diagnostics_log: args.debug_log,
        system_prompt: match &args.system_prompt_file {
            Some(path) => Some(read_prompt_file(path, "--system-prompt-file")?),
            None => args.system_prompt.clone(),
        },
        append_system_prompt: appended_prompt(args)?,
        add_dirs: args.add_dir.clone(),
        thinking: thinking(args)?,
        max_turns: args.max_turns,
        name: args.name.clone(),
        ..ProjectOptions::default()
    })
}

/// Chooses the provider from `--provider`, `--model`, the settings and the environment,
/// behind `--fallback-model` when one is named.
fn chooser(
    args: &Args,
    providers: &'static dyn ProviderFactory,
) -> impl FnOnce(&crate::sdk::settings::Settings) -> Result<ChosenProvider, ProviderChoiceError>
+ Send
+ 'static {
    let provider_flag = args.provider.clone();
    let model_flag = args.model.clone();
    let fallback = args.fallback_model.clone();
    move |settings| {
        let choice = provider_setup::choose(
            settings,
            provider_flag.as_deref(),
            model_flag.as_deref(),
            providers,
        )?;
        let mut provider = choice.provider;
        if let Some(fallback) = fallback {
            if fallback == choice.model {
                return Err(ProviderSetupError::FallbackIsMain(fallback).into());
            }
            provider = providers.with_fallback(provider, fallback);
        }
        Ok(ChosenProvider {
            provider,
            model: choice.model,
            api_key_source: choice.api_key_source,
            endpoint: choice.endpoint,
            notice: choice.notice,
        })
    }
}

/// `--dangerously-skip-permissions`, else `--permission-mode`; `None` leaves the mode to
/// the settings or a resumed session.
fn permission_mode(args: &Args) -> Result<Option<PermissionMode>, AssembleError> {
    if args.dangerously_skip_permissions {
        return Ok(Some(PermissionMode::BypassPermissions));
    }
    args.permission_mode
        .as_deref()
        .map(|m| {
            PermissionMode::parse(m).ok_or_else(|| AssembleError::PermissionMode {
                given: m.to_string(),
            })
        })
        .transpose()
}

fn resume_from(args: &Args) -> Result<Option<ResumeFrom>, AssembleError> {
    let from = match (&args.resume, args.continue_session) {
        (Some(q), _) if !q.is_empty() => Some(ResumeFrom::Query(q.clone())),
        (Some(_), _) => return Err(AssembleError::ResumeWithoutId),
        (None, true) => Some(ResumeFrom::Latest),
        (None, false) => None,
    };
    if args.resume_session_at.is_some() && from.is_none() {
        return Err(AssembleError::ResumeAtWithoutResume);
    }
    Ok(from)
}

/// `--append-system-prompt` and `--append-system-prompt-file`, the text first.
fn appended_prompt(args: &Args) -> Result<Option<String>, AssembleError> {
    let Some(path) = &args.append_system_prompt_file else {
        return Ok(args.append_system_prompt.clone());
    };
    let file = read_prompt_file(path, "--append-system-prompt-file")?;
    Ok(Some(match &args.append_system_prompt {
        Some(text) => format!("{text}\n\n{file}"),
        None => file,
    }))
}

/// `--thinking adaptive|enabled|disabled` and `--max-thinking-tokens`.
fn thinking(args: &Args) -> Result<Option<Thinking>, AssembleError> {
    match args.thinking.as_deref() {
        None => Ok(args.max_thinking_tokens.map(|n| Thinking::On(Some(n)))),
        Some("disabled") => Ok(Some(Thinking::Off)),
        Some("adaptive" | "enabled") => Ok(Some(Thinking::On(args.max_thinking_tokens))),
        Some(other) => Err(AssembleError::Thinking(other.to_string())),
    }
}

/// `--tools`: `None` keeps every tool; `""` none; `default` all; else the names listed
/// (comma- or space-separated).
fn chosen_tools(list: Option<&[String]>) -> Option<Vec<String>> {
    let list = list?;
    let names: Vec<String> = list
        .iter()
        .flat_map(|item| item.split([',', ' ']))
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    if names.iter().any(|n| n == "default") {
        return None;
    }
    Some(names)
}

fn read_prompt_file(path: &std::path::Path, flag: &'static str) -> Result<String, AssembleError> {
    std::fs::read_to_string(path).map_err(|source| AssembleError::PromptFile {
        flag,
        path: path.to_path_buf(),
        source,
    })
}
