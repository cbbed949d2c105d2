//! `robota plugin list`: the plugins a session in this directory loads — name, version,
//! where it was found, its folder and what it adds — then what could not be loaded and
//! what an untrusted project held back.

use std::path::{Path, PathBuf};

use crate::sdk::plugins::{PluginSources, discover};
use crate::sdk::settings::{LoadOptions, Settings};

use super::args::Args;
use super::{headless, paths};

pub fn run(cwd: &Path, robota_home: &Path, args: &Args, plugin_dirs: &[PathBuf]) -> u8 {
    let user_home = paths::home_dir();
    let settings = match Settings::load(&LoadOptions {
        cwd,
        home: user_home.as_deref(),
        robota_home,
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
        cwd,
        home: user_home.as_deref(),
        robota_home,
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
