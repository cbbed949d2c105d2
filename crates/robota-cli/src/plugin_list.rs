//! `robota plugin …`. `list`: the plugins a session in this directory loads — name,
//! version, where it was found, its folder and what it adds — then the plugins installed
//! from marketplaces (version, enabled or not), what could not be loaded and what an
//! untrusted project held back. The other subcommands (install, marketplace add, …) are
//! the SDK's plugin manager, as `/plugin …` runs it.

use std::path::PathBuf;

use crate::sdk::paths::ProjectPaths;
use crate::sdk::plugins::{PluginAction, PluginError, PluginSources, Scope, discover, perform};
use crate::sdk::settings::{LoadOptions, Settings};

use super::args::{Args, MarketplaceCommand, PluginCommand};
use super::headless;

pub fn run(paths: &ProjectPaths, args: &Args, plugin_dirs: &[PathBuf]) -> u8 {
    let settings = match Settings::load(&LoadOptions {
        paths,
        extra: args.settings.as_deref(),
        interactive: true,
    }) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("Error: {e}");
            return headless::EXIT_ERROR;
        }
    };
    let set = discover(&PluginSources {
        paths,
        settings: &settings,
        plugin_dirs,
        interactive: true,
    });
    if set.plugins.is_empty() {
        println!("No plugins.");
    }
    for plugin in &set.plugins {
        let version = plugin
            .version
            .as_deref()
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        println!("{}{version}  ({})", plugin.name, plugin.source);
        println!("  {}", plugin.root.display());
        if let Some(description) = &plugin.description {
            println!("  {description}");
        }
        println!("  adds: {}", plugin.summary());
        let mut names: Vec<String> = plugin
            .commands
            .iter()
            .map(|c| format!("/{}", c.name))
            .chain(plugin.agents.iter().map(|a| format!("agent {}", a.name)))
            .chain(plugin.mcp_servers.iter().map(|(n, _)| format!("mcp {n}")))
            .collect();
        names.sort();
        if !names.is_empty() {
            println!("  {}", names.join(", "));
        }
    }
    let store = crate::sdk::plugins::store::PluginStore::new(&paths.robota_home);
    if store.installed().map_or(true, |m| !m.is_empty()) {
        match perform(paths, &PluginAction::List) {
            Ok(text) => println!("\n{text}"),
            Err(e) => eprintln!("warning: {e}"),
        }
    }
    for warning in &set.warnings {
        eprintln!("warning: {warning}");
    }
    if !set.held_back.is_empty() {
        eprintln!(
            "this directory is not trusted, so plugins it turns on were held back: {} (run `robota trust` to trust it)",
            set.held_back.join(", ")
        );
    }
    headless::EXIT_OK
}

/// Every `robota plugin` subcommand but `list`: prints the manager's report, or the error
/// on stderr with exit code 1.
pub fn manage(paths: &ProjectPaths, command: &PluginCommand) -> u8 {
    let action = match to_action(command) {
        Ok(action) => action,
        Err(e) => {
            eprintln!("Error: {e}");
            return headless::EXIT_ERROR;
        }
    };
    match perform(paths, &action) {
        Ok(text) => {
            println!("{text}");
            headless::EXIT_OK
        }
        Err(e) => {
            eprintln!("Error: {e}");
            headless::EXIT_ERROR
        }
    }
}

fn to_action(command: &PluginCommand) -> Result<PluginAction, PluginError> {
    Ok(match command {
        PluginCommand::List { .. } => PluginAction::List,
        PluginCommand::Install { plugin, scope } => PluginAction::Install {
            id: plugin.clone(),
            scope: Scope::parse(scope)?,
        },
        PluginCommand::Uninstall { plugin, scope } => PluginAction::Uninstall {
            id: plugin.clone(),
            scope: Scope::parse(scope)?,
        },
        PluginCommand::Enable { plugin, scope } => PluginAction::Enable {
            id: plugin.clone(),
            scope: Scope::parse(scope)?,
        },
        PluginCommand::Disable { plugin, scope } => PluginAction::Disable {
            id: plugin.clone(),
            scope: Scope::parse(scope)?,
        },
        PluginCommand::Update { plugin } => PluginAction::Update { id: plugin.clone() },
        PluginCommand::Marketplace { command } => match command {
            MarketplaceCommand::Add { source } => PluginAction::MarketplaceAdd {
                source: source.clone(),
            },
            MarketplaceCommand::List => PluginAction::MarketplaceList,
            MarketplaceCommand::Remove { name } => {
                PluginAction::MarketplaceRemove { name: name.clone() }
            }
            MarketplaceCommand::Update { name } => {
                PluginAction::MarketplaceUpdate { name: name.clone() }
            }
        },
    })
}
