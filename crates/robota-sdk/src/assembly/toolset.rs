//! The tools stage: the built-in tools (with the language servers beside the file tools
//! and the `LSP` tool, see `lsp`), web tools and the structured-output tool, the
//! plugins and the MCP servers they and the settings name, which tools `--tools` and
//! whole-tool deny rules leave; then the hooks of the settings and plugins, and the
//! commands, skills and agents of the project, the user and the plugins.

use std::sync::Arc;

use robota_core::hooks::HookConfig;
use robota_core::permission::PathDenial;
use robota_core::{ServerTool, Tool, ToolRegistry};
use robota_tools::{BashTool, StructuredSlot, TodoList};

use super::permissions::Rules;
use super::{AssemblyError, Discovery, ProjectOptions, ProjectPaths};
use crate::agents::AgentCatalog;
use crate::commands::{CommandRegistry, DefinitionRoots};
use crate::mcp::{McpManager, McpSources};
use crate::plugins::{PluginSet, PluginSources};
use crate::settings::Settings;
use crate::settings::trust::TrustStore;

/// The tools a session offers and what was found beside them.
pub(super) struct Toolset {
    pub(super) registry: ToolRegistry,
    pub(super) todos: TodoList,
    pub(super) bash: Option<Arc<BashTool>>,
    pub(super) structured: Option<StructuredSlot>,
    pub(super) mcp: Option<Arc<McpManager>>,
    /// The session's language servers (none started yet).
    pub(super) lsp: Option<Arc<robota_lsp::LspManager>>,
    plugins: PluginSet,
    has_search_backend: bool,
}

/// The commands, skills and agents found for the session.
pub(super) struct Definitions {
    pub(super) commands: CommandRegistry,
    /// `None`: no `Agent` tool (nothing discovered and no agents of the program).
    pub(super) agents: Option<AgentCatalog>,
    /// The plugins loaded, as `system/init` lists them.
    pub(super) plugin_list: Vec<serde_json::Value>,
}

impl Toolset {
    pub(super) fn assemble(
        paths: &ProjectPaths,
        settings: &Settings,
        options: &ProjectOptions,
        rules: &Rules,
        warnings: &mut Vec<String>,
    ) -> Result<Toolset, AssemblyError> {
        let todos = TodoList::new();
        let defaults = robota_tools::default_tool_set(&paths.cwd, todos.clone(), &options.host);
        let plugins = plugins(paths, settings, options, warnings);
        let lsp = super::lsp::language_servers(paths, settings, options, &plugins, warnings);
        let mut tools = match &lsp {
            Some(lsp) => super::lsp::with_lsp(defaults.tools, lsp),
            None => defaults.tools,
        };
        tools.push(robota_tools::web_fetch_tool(&settings.values.web_fetch));
        tools.push(Arc::new(robota_tools::ExitPlanModeTool));
        let search_tool = robota_tools::web_search_tool(settings.values.web_search.as_ref())
            .unwrap_or_else(|error| {
                warnings.push(format!("WebSearch is not offered: {error}"));
                None
            });
        let has_search_backend = search_tool.is_some();
        tools.extend(search_tool);
        let structured = structured_output(options, &mut tools)?;
        tools.extend(options.program_tools.iter().cloned());
        let mut registry = ToolRegistry::new(tools);
        if let Some(chosen) = &options.tools {
            warn_unknown_tools(chosen, &registry, warnings);
        }
        let program_tools: Vec<String> = options
            .program_tools
            .iter()
            .map(|t| t.name().to_string())
            .collect();
        let mut chosen = options.tools.clone();
        if let Some(chosen) = &mut chosen {
            chosen.extend(program_tools);
        }
        let mcp = mcp_servers(paths, settings, options, &plugins, warnings)?;
        if let Some(mcp) = &mcp {
            registry.add_source(mcp.clone());
            mcp.wait_only_for_offered(|server| offers_server(server, chosen.as_deref(), rules));
        }
        retain_chosen(&mut registry, chosen, rules);
        Ok(Toolset {
            registry,
            todos,
            bash: Some(defaults.bash),
            structured,
            mcp,
            lsp,
            plugins,
            has_search_backend,
        })
    }

    /// Anthropic's own web search stands in without a search backend (never advertised
    /// where it cannot work, and not when the user removed WebSearch).
    pub(super) fn server_tools(
        &self,
        provider: &str,
        rules: &Rules,
        options: &ProjectOptions,
    ) -> Vec<ServerTool> {
        let chosen = options
            .tools
            .as_ref()
            .is_none_or(|c| c.iter().any(|n| n == "WebSearch"));
        if !self.has_search_backend
            && provider == "anthropic"
            && !rules.removes_tool("WebSearch")
            && chosen
        {
            vec![ServerTool::web_search()]
        } else {
            Vec::new()
        }
    }

    /// The settings' hooks, with the plugins' unless `disableAllHooks` is set or managed
    /// policy allows its own hooks only.
    pub(super) fn hooks(&self, settings: &Settings, warnings: &mut Vec<String>) -> HookConfig {
        if settings.values.disable_all_hooks == Some(true) {
            return HookConfig::default();
        }
        let (mut hooks, hook_warnings) = match &settings.values.hooks {
            Some(map) => HookConfig::from_hooks(&serde_json::Value::Object(map.clone()), None),
            None => (HookConfig::default(), Vec::new()),
        };
        warnings.extend(hook_warnings);
        if settings.managed_hooks_only().is_some() {
            return hooks;
        }
        for plugin in &self.plugins.plugins {
            hooks.merge(plugin.hooks.clone());
        }
        hooks
    }

    /// The commands, skills and agents of the project, the user, the plugins and the
    /// program (its own agents).
    pub(super) fn definitions(
        &mut self,
        paths: &ProjectPaths,
        options: &ProjectOptions,
        read_denial: Option<&PathDenial>,
        warnings: &mut Vec<String>,
    ) -> Definitions {
        if options.discovery != Discovery::Full {
            return program_definitions(options, warnings);
        }
        let trusted = TrustStore::load(&paths.robota_home).is_trusted(&paths.cwd);
        let roots = DefinitionRoots::new(paths);
        let plugins = std::mem::take(&mut self.plugins.plugins);
        let plugin_list = plugins
            .iter()
            .map(|p| serde_json::json!({"name": p.name, "path": p.root}))
            .collect();
        let mut commands = CommandRegistry::discover(&roots, trusted);
        let mut agents = AgentCatalog::discover(&roots);
        for plugin in plugins {
            commands.add_plugin_commands(plugin.commands);
            agents.add_plugin_agents(plugin.agents);
        }
        // A definition file is read as the Read tool would: one a deny rule covers, as
        // named or where its symlinks lead (`~/.ssh/id_rsa`), never reaches the model.
        if let Some(denial) = read_denial {
            commands.leave_out(|path| denial.denies(path));
            agents.leave_out(|path| denial.denies(path));
        }
        warnings.extend(commands.warnings.iter().cloned());
        warnings.extend(agents.warnings.iter().cloned());
        if let Some(program_agents) = &options.program_agents {
            let before = agents.warnings.len();
            agents.add_program_agents(program_agents);
            warnings.extend(agents.warnings[before..].iter().cloned());
        }
        Definitions {
            commands,
            agents: Some(agents),
            plugin_list,
        }
    }
}

/// The definitions of a session that discovers nothing on disk: the built-in commands,
/// and the subagents the program defines, if any (only then an `Agent` tool).
fn program_definitions(options: &ProjectOptions, warnings: &mut Vec<String>) -> Definitions {
    let agents = options.program_agents.as_ref().map(|program_agents| {
        let mut agents = AgentCatalog::default();
        agents.add_program_agents(program_agents);
        warnings.extend(agents.warnings.iter().cloned());
        agents
    });
    Definitions {
        commands: CommandRegistry::default(),
        agents,
        plugin_list: Vec::new(),
    }
}

/// `--json-schema`: the structured-output tool and the slot its answer lands in.
fn structured_output(
    options: &ProjectOptions,
    tools: &mut Vec<Arc<dyn Tool>>,
) -> Result<Option<StructuredSlot>, AssemblyError> {
    let Some(schema) = &options.json_schema else {
        return Ok(None);
    };
    let slot = StructuredSlot::default();
    let tool = robota_tools::StructuredOutputTool::new(schema, slot.clone())
        .map_err(AssemblyError::JsonSchema)?;
    tools.push(Arc::new(tool));
    Ok(Some(slot))
}

fn warn_unknown_tools(chosen: &[String], registry: &ToolRegistry, warnings: &mut Vec<String>) {
    let known = registry.names();
    let unknown: Vec<&str> = chosen
        .iter()
        .filter(|n| !known.contains(n) && !n.starts_with("mcp__"))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        warnings.push(format!("--tools: no such tool: {}", unknown.join(", ")));
    }
}

/// Whether the session can offer any tool of the MCP server `server` (its name as tool
/// names spell it): `--tools`, when given, names one of them, and no whole-tool deny rule
/// removes them all (`mcp__server`, a glob such as `mcp__*`).
fn offers_server(server: &str, chosen: Option<&[String]>, rules: &Rules) -> bool {
    let prefix = format!("mcp__{server}__");
    chosen.is_none_or(|c| c.iter().any(|n| n.starts_with(&prefix)))
        && !rules.removes_tool(&format!("mcp__{server}"))
}

/// Keeps the tools `--tools` chose that no whole-tool deny rule removes (the
/// structured-output tool always stays). MCP tools, which connect later, are judged by
/// name when they arrive.
fn retain_chosen(registry: &mut ToolRegistry, chosen: Option<Vec<String>>, rules: &Rules) {
    let removed = rules.whole_tool_denials();
    registry.retain(move |name| {
        name == robota_tools::STRUCTURED_OUTPUT_TOOL
            || (!removed.removes(name)
                && chosen.as_ref().is_none_or(|c| c.iter().any(|n| n == name)))
    });
}

fn plugins(
    paths: &ProjectPaths,
    settings: &Settings,
    options: &ProjectOptions,
    warnings: &mut Vec<String>,
) -> PluginSet {
    if options.discovery != Discovery::Full {
        return PluginSet::default();
    }
    let plugins = crate::plugins::discover(&PluginSources {
        paths,
        settings,
        plugin_dirs: &options.plugin_dirs,
        interactive: options.interactive,
    });
    warnings.extend(plugins.warnings.iter().cloned());
    if !plugins.held_back.is_empty() {
        warnings.push(format!(
            "this directory is not trusted, so plugins it turns on were held back: {} (run `robota trust` to trust it)",
            plugins.held_back.join(", ")
        ));
    }
    plugins
}

/// The MCP servers of the settings, `.mcp.json`, the options and the plugins; connected
/// once the whole session is assembled.
fn mcp_servers(
    paths: &ProjectPaths,
    settings: &Settings,
    options: &ProjectOptions,
    plugins: &PluginSet,
    warnings: &mut Vec<String>,
) -> Result<Option<Arc<McpManager>>, AssemblyError> {
    let mut servers = crate::mcp::collect(&McpSources {
        paths,
        settings,
        flag_configs: &options.mcp_configs,
        strict: options.strict_mcp_config || options.discovery != Discovery::Full,
    })?;
    if !options.strict_mcp_config {
        for plugin in &plugins.plugins {
            let source = format!("plugin {}", plugin.name);
            for (name, entry) in &plugin.mcp_servers {
                servers.add(name, entry, &source);
            }
        }
        // A plugin's servers answer to the allow and deny lists too.
        servers.hold_back_refused(settings);
    }
    warnings.extend(servers.held_back.iter().cloned());
    for waiting in &servers.untrusted {
        warnings.push(format!(
            "the MCP servers of {waiting} were not started: this directory is not trusted (run `robota trust` to trust it)"
        ));
    }
    let none = servers.servers.is_empty() && servers.untrusted.is_empty();
    Ok((!none).then(|| {
        McpManager::new(
            servers.servers,
            paths.cwd.clone(),
            session_env(settings, options),
            options.sdk_mcp.clone(),
            servers.untrusted,
        )
    }))
}

/// The environment of the processes the session starts: the settings' `env`, then the
/// options'.
pub(super) fn session_env(settings: &Settings, options: &ProjectOptions) -> Vec<(String, String)> {
    let mut env = settings.env();
    env.extend(options.env.iter().cloned());
    env
}
