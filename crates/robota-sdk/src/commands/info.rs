//! What the informational built-ins print — `/agents`, `/skills`, `/status` — and the
//! prompt `/init` sends.

use std::fmt::Write;

use crate::agents::AgentCatalog;
use crate::errors::ProviderEndpoint;
use robota_session::Session;

use super::{CommandRegistry, DefinitionKind};

/// What `/init` asks of the model (the user's notes follow it).
pub(crate) const INIT_PROMPT: &str = "Study this repository and write an AGENTS.md file at its root for future coding agents (or improve the AGENTS.md or CLAUDE.md that exists, keeping what is still true). Include: the commands to build, test (all tests and a single test), lint and run it; the architecture in a few paragraphs (the big picture that needs several files to see, not a file listing); the conventions and rules the code follows that are not obvious. Be concise and specific to this repository; do not invent what you have not seen, and do not repeat generic advice. Read the README, the build files and any existing agent rule files (.cursorrules, .cursor/rules, .github/copilot-instructions.md) first.";

/// `/agents`: every subagent type with its source and description.
pub(crate) fn agents_report(catalog: Option<&AgentCatalog>) -> String {
    let Some(catalog) = catalog else {
        return "Subagents are not available in this session.".to_string();
    };
    let mut out = String::from("Subagents (the model starts them with the Agent tool):\n");
    for agent in &catalog.agents {
        let model = agent.model.as_deref().unwrap_or("inherit");
        let _ = writeln!(
            out,
            "  {:<24} [{}; model {model}] {}",
            agent.name,
            agent.source,
            first_line(&agent.description)
        );
    }
    out.push_str("Add your own as Markdown in .claude/agents/ or ~/.claude/agents/.");
    out
}

/// `/skills`: the skills, then the custom commands, with their sources.
pub(crate) fn skills_report(registry: &CommandRegistry) -> String {
    let mut out = String::new();
    for (kind, title) in [
        (DefinitionKind::Skill, "Skills"),
        (DefinitionKind::Command, "Custom commands"),
    ] {
        let mut items: Vec<_> = registry
            .prompts()
            .iter()
            .filter(|c| c.kind == kind)
            .collect();
        items.sort_by(|a, b| a.name.cmp(&b.name));
        let _ = writeln!(out, "{title}: {}", items.len());
        for c in items {
            let mut flags = Vec::new();
            if c.disable_model_invocation {
                flags.push("user only");
            }
            if !c.user_invocable {
                flags.push("model only");
            }
            if c.fork_agent.is_some() {
                flags.push("forks");
            }
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!(" ({})", flags.join(", "))
            };
            let _ = writeln!(
                out,
                "  /{:<24} [{}]{flags} {}",
                c.name,
                c.source_label(),
                first_line(&c.description)
            );
        }
    }
    if registry.prompts().is_empty() {
        out.push_str("Add skills as .claude/skills/<name>/SKILL.md and commands as .claude/commands/<name>.md.");
    }
    out.trim_end().to_string()
}

/// `/status`: who and where this session is.
pub(crate) fn status_report(
    session: &Session,
    endpoint: &ProviderEndpoint,
    registry: &CommandRegistry,
    agents: Option<&AgentCatalog>,
    mcp_servers: usize,
) -> String {
    let config = session.config();
    let mut out = String::new();
    let _ = writeln!(out, "robota {}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(out, "Session:     {}", config.session_id);
    if let Some(name) = session.name() {
        let _ = writeln!(out, "Name:        {name}");
    }
    let _ = writeln!(out, "Directory:   {}", config.cwd.display());
    let provider = if endpoint.provider.is_empty() {
        session.provider_name().to_string()
    } else {
        endpoint.provider.clone()
    };
    let _ = writeln!(out, "Provider:    {provider}");
    if !endpoint.base_url.is_empty() {
        let source = endpoint
            .base_url_source
            .as_deref()
            .map(|s| format!(" (from {s})"))
            .unwrap_or_default();
        let _ = writeln!(out, "Base URL:    {}{source}", endpoint.base_url);
    }
    if let Some(key) = &endpoint.key_source {
        let _ = writeln!(out, "API key:     from {key}");
    }
    let _ = writeln!(out, "Model:       {}", config.model);
    let policy = session.policy_handle();
    let (mode, dirs, rules) = match policy.lock() {
        Ok(p) => (
            p.mode,
            p.additional_dirs.clone(),
            (p.allow.len(), p.ask.len(), p.deny.len()),
        ),
        Err(_) => (session.mode(), Vec::new(), (0, 0, 0)),
    };
    let _ = writeln!(out, "Mode:        {mode}");
    let _ = writeln!(
        out,
        "Rules:       {} allow, {} ask, {} deny",
        rules.0, rules.1, rules.2
    );
    for dir in dirs {
        let _ = writeln!(out, "Also works in: {}", dir.display());
    }
    if let Some(log) = session.log_path() {
        let _ = writeln!(out, "Log:         {}", log.display());
    }
    let skills = registry
        .prompts()
        .iter()
        .filter(|c| c.kind == DefinitionKind::Skill)
        .count();
    let _ = writeln!(
        out,
        "Loaded:      {} custom commands, {skills} skills, {} subagent types, {mcp_servers} MCP servers",
        registry.prompts().len() - skills,
        agents.map_or(0, |a| a.agents.len()),
    );
    out.trim_end().to_string()
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut short: String = line.chars().take(100).collect();
    if line.chars().count() > 100 {
        short.push('…');
    }
    short
}
