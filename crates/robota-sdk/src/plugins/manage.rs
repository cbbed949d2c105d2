//! The plugin manager's operations, shared by `robota plugin …` and the `/plugin …`
//! slash command: one typed [`PluginAction`] (parsed from the slash command's words, or
//! built by the CLI from its arguments) and one [`perform`] that carries it out and
//! returns the text to show. Changes take effect in the next session.

use std::fmt::Write;

use serde_json::Value;

use super::error::PluginError;
use super::install::{self, resolve_id};
use super::known;
use super::store::{PluginStore, Scope, set_enabled};
use crate::paths::ProjectPaths;
use crate::settings::{LoadOptions, Settings, SettingsError};

/// One operation of the plugin manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginAction {
    /// What is installed from marketplaces, with version and whether it is on.
    List,
    /// Installs a plugin from a marketplace into the plugin cache and enables it.
    Install {
        /// The plugin: `name@marketplace`, or a bare name one marketplace lists.
        id: String,
        /// Which settings file's `enabledPlugins` it changes.
        scope: Scope,
    },
    /// Removes an installed plugin (its data folder is kept) and its `enabledPlugins`
    /// entry.
    Uninstall {
        /// The plugin: `name@marketplace`, or a bare name one marketplace lists.
        id: String,
        /// Which settings file's `enabledPlugins` it changes.
        scope: Scope,
    },
    /// Turns an installed plugin on.
    Enable {
        /// The plugin: `name@marketplace`, or a bare name one marketplace lists.
        id: String,
        /// Which settings file's `enabledPlugins` it changes.
        scope: Scope,
    },
    /// Turns an installed plugin off (it stays installed).
    Disable {
        /// The plugin: `name@marketplace`, or a bare name one marketplace lists.
        id: String,
        /// Which settings file's `enabledPlugins` it changes.
        scope: Scope,
    },
    /// Refreshes the plugin's marketplace, then installs the version it now lists.
    Update {
        /// The plugin: `name@marketplace`, or a bare name one marketplace lists.
        id: String,
    },
    /// Adds a marketplace.
    MarketplaceAdd {
        /// A folder, a `marketplace.json` file, a git URL or a GitHub `owner/repo`.
        source: String,
    },
    /// The added marketplaces and where each comes from.
    MarketplaceList,
    /// Forgets a marketplace (plugins installed from it stay installed).
    MarketplaceRemove {
        /// The marketplace's name.
        name: String,
    },
    /// Refreshes a marketplace's listing (pulls its clone or downloads its file again).
    MarketplaceUpdate {
        /// The marketplace's name; `None`: every added marketplace.
        name: Option<String>,
    },
}

/// The usage line of `/plugin`.
pub(crate) const USAGE: &str = "Usage: /plugin [list] | install <name@marketplace> [--scope user|project|local] | uninstall|enable|disable <name@marketplace> [--scope …] | update <name@marketplace> | marketplace add <folder|git URL|owner/repo> | marketplace list | marketplace remove <name> | marketplace update [name]";

/// Parses the words after `/plugin`.
pub(crate) fn parse_words(args: &str) -> Result<PluginAction, PluginError> {
    let mut words: Vec<&str> = args.split_whitespace().collect();
    let mut scope = Scope::User;
    if let Some(i) = words
        .iter()
        .position(|w| *w == "--scope" || w.starts_with("--scope="))
    {
        let value = match words[i].strip_prefix("--scope=") {
            Some(v) => v.to_string(),
            None if i + 1 < words.len() => words.remove(i + 1).to_string(),
            None => return Err(PluginError::Usage),
        };
        scope = Scope::parse(&value)?;
        words.remove(i);
    }
    let one = |rest: &[&str]| match rest {
        [x] => Ok(x.to_string()),
        _ => Err(PluginError::Usage),
    };
    Ok(match words.as_slice() {
        [] | ["list"] => PluginAction::List,
        ["install" | "i", rest @ ..] => PluginAction::Install {
            id: one(rest)?,
            scope,
        },
        ["uninstall" | "remove", rest @ ..] => PluginAction::Uninstall {
            id: one(rest)?,
            scope,
        },
        ["enable", rest @ ..] => PluginAction::Enable {
            id: one(rest)?,
            scope,
        },
        ["disable", rest @ ..] => PluginAction::Disable {
            id: one(rest)?,
            scope,
        },
        ["update", rest @ ..] => PluginAction::Update { id: one(rest)? },
        ["marketplace", "add", rest @ ..] => PluginAction::MarketplaceAdd { source: one(rest)? },
        ["marketplace", "list"] | ["marketplace"] => PluginAction::MarketplaceList,
        ["marketplace", "remove" | "rm", rest @ ..] => {
            PluginAction::MarketplaceRemove { name: one(rest)? }
        }
        ["marketplace", "update"] => PluginAction::MarketplaceUpdate { name: None },
        ["marketplace", "update", name] => PluginAction::MarketplaceUpdate {
            name: Some(name.to_string()),
        },
        _ => return Err(PluginError::Usage),
    })
}

const RESTART: &str = "It loads in sessions started from now on.";

/// Carries out `action`; `Ok` is the report, `Err` says what went wrong (and that nothing
/// was changed where that is so).
pub fn perform(places: &ProjectPaths, action: &PluginAction) -> Result<String, PluginError> {
    let store = PluginStore::new(&places.robota_home);
    let settings_path = |scope: Scope| scope.settings_path(&places.robota_home, &places.cwd);
    match action {
        PluginAction::List => list(places, &store),
        PluginAction::MarketplaceAdd { source } => {
            let open = known::add(&store, source, &places.cwd)?;
            let m = &open.marketplace;
            Ok(format!(
                "Added marketplace {} ({}) with {} plugin{}: {}\nInstall one with /plugin install <name>@{}",
                m.name,
                known::describe_source(&open.source),
                m.plugins.len(),
                if m.plugins.len() == 1 { "" } else { "s" },
                preview(&m.names()),
                m.name
            ))
        }
        PluginAction::MarketplaceList => marketplace_list(places, &store),
        PluginAction::MarketplaceRemove { name } => {
            let left = known::remove(&store, name)?;
            let mut out = format!("Removed marketplace {name}.");
            if !left.is_empty() {
                let _ = write!(
                    out,
                    "\nStill installed from it (uninstall them to remove them): {}",
                    left.join(", ")
                );
            }
            Ok(out)
        }
        PluginAction::MarketplaceUpdate { name } => {
            let lines = known::update(&store, name.as_deref())?;
            Ok(if lines.is_empty() {
                "No marketplaces to update.".to_string()
            } else {
                format!("Updated marketplaces:\n  {}", lines.join("\n  "))
            })
        }
        PluginAction::Install { id, scope } => {
            let (name, marketplace) = resolve_id(&store, id)?;
            let settings = load_settings(places).ok();
            let done =
                install::install(&store, &name, &marketplace, settings.as_ref(), &places.cwd)?;
            let path = settings_path(*scope);
            set_enabled(&path, &done.id, Some(true), *scope).map_err(|e| {
                PluginError::NotEnabled {
                    id: done.id.clone(),
                    source: Box::new(e.into()),
                }
            })?;
            let mut out = format!(
                "Installed {} {} into {}\nIt adds: {}",
                done.id,
                done.version,
                done.path.display(),
                done.plugin.summary()
            );
            describe_runs(&mut out, &done.plugin);
            let _ = write!(out, "\nEnabled in {}. {RESTART}", path.display());
            Ok(out)
        }
        PluginAction::Uninstall { id, scope } => {
            let (name, marketplace) = resolve_id(&store, id)?;
            let id = format!("{name}@{marketplace}");
            let data = install::uninstall(&store, &id)?;
            let path = settings_path(*scope);
            let mut out = format!("Uninstalled {id}.");
            if let Err(e) = set_enabled(&path, &id, None, *scope) {
                let _ = write!(out, "\nIts entry in enabledPlugins was left: {e}");
            }
            if data.exists() {
                let _ = write!(out, "\nIts data was kept in {}", data.display());
            }
            Ok(out)
        }
        PluginAction::Enable { id, scope } | PluginAction::Disable { id, scope } => {
            let on = matches!(action, PluginAction::Enable { .. });
            let (name, marketplace) = resolve_id(&store, id)?;
            let id = format!("{name}@{marketplace}");
            if store.record(&id)?.is_none() {
                return Err(PluginError::NotInstalledYet(id));
            }
            let path = settings_path(*scope);
            set_enabled(&path, &id, Some(on), *scope)?;
            Ok(format!(
                "{} {id} in {}. {RESTART}",
                if on { "Enabled" } else { "Disabled" },
                path.display()
            ))
        }
        PluginAction::Update { id } => {
            let (name, marketplace) = resolve_id(&store, id)?;
            let id = format!("{name}@{marketplace}");
            let before = store
                .record(&id)?
                .ok_or_else(|| PluginError::NotInstalledYet(id.clone()))?;
            let mut out = String::new();
            for line in known::update(&store, Some(&marketplace))? {
                let _ = writeln!(out, "Marketplace {line}");
            }
            let settings = load_settings(places).ok();
            let done =
                install::install(&store, &name, &marketplace, settings.as_ref(), &places.cwd)?;
            let old = before
                .get("version")
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            let _ = write!(
                out,
                "Updated {id}: {old} → {} ({}). {RESTART}",
                done.version,
                done.path.display()
            );
            Ok(out)
        }
    }
}

/// Hooks and MCP servers run programs: say which before the plugin is used.
fn describe_runs(out: &mut String, plugin: &super::Plugin) {
    if !plugin.hooks.is_empty() {
        let events: Vec<&str> = robota_core::hooks::HookEvent::ALL
            .into_iter()
            .filter(|e| plugin.hooks.has(*e))
            .map(|e| e.as_str())
            .collect();
        let _ = write!(out, "\nIts hooks run commands on: {}", events.join(", "));
    }
    for (name, entry) in &plugin.mcp_servers {
        let what = entry
            .get("command")
            .or_else(|| entry.get("url"))
            .and_then(Value::as_str)
            .unwrap_or("?");
        let _ = write!(out, "\nMCP server {name}: {what}");
    }
}

fn preview(names: &[&str]) -> String {
    const SHOWN: usize = 20;
    let mut text = names
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        let _ = write!(text, ", … ({} in all)", names.len());
    }
    text
}

fn load_settings(places: &ProjectPaths) -> Result<Settings, SettingsError> {
    Settings::load(&LoadOptions {
        paths: places,
        extra: None,
        interactive: true,
    })
}

fn enabled_state(settings: Option<&Settings>, id: &str) -> &'static str {
    match settings.and_then(|s| s.values.enabled_plugins.get(id)) {
        Some(true) => "enabled",
        Some(false) => "disabled",
        None => "not enabled",
    }
}

/// The plugins installed from marketplaces: `name@marketplace version  enabled  path`.
fn list(places: &ProjectPaths, store: &PluginStore) -> Result<String, PluginError> {
    let installed = store.installed()?;
    if installed.is_empty() {
        return Ok("No plugins installed from marketplaces.".to_string());
    }
    let settings = load_settings(places);
    let mut out = String::from("Installed plugins:");
    for (id, entry) in &installed {
        let record = match entry {
            Value::Array(items) => items.last().cloned().unwrap_or(Value::Null),
            other => other.clone(),
        };
        let field = |k: &str| {
            record
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string()
        };
        let _ = write!(
            out,
            "\n  {id} {}  {}\n    {}",
            field("version"),
            enabled_state(settings.as_ref().ok(), id),
            field("installPath")
        );
    }
    if let Err(e) = settings {
        let _ = write!(out, "\n(whether each is enabled is unknown: {e})");
    }
    Ok(out)
}

fn marketplace_list(places: &ProjectPaths, store: &PluginStore) -> Result<String, PluginError> {
    let known_map = store.known()?;
    let mut out = String::new();
    for (name, record) in &known_map {
        let source = record
            .get("source")
            .map(known::describe_source)
            .unwrap_or_default();
        let location = record
            .get("installLocation")
            .and_then(Value::as_str)
            .unwrap_or("?");
        let count = known::open(store, name, None, &places.cwd)
            .map(|m| format!("{} plugins", m.marketplace.plugins.len()))
            .unwrap_or_else(|e| format!("unreadable: {e}"));
        let _ = writeln!(out, "{name}  ({source})  {count}\n  {location}");
    }
    if let Ok(settings) = load_settings(places) {
        let declared = known::declared(&settings);
        for (name, source) in declared.sources {
            if !known_map.contains_key(&name) {
                let _ = writeln!(
                    out,
                    "{name}  ({source})  declared in settings (extraKnownMarketplaces); added on first install"
                );
            }
        }
        for name in declared.held_back {
            let _ = writeln!(
                out,
                "{name}  declared by this project's settings, held back until the directory is trusted (`robota trust`)"
            );
        }
    }
    if out.is_empty() {
        out.push_str(
            "No marketplaces. Add one with /plugin marketplace add <folder|git URL|owner/repo>",
        );
    }
    Ok(out.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_words_parse_into_actions() {
        assert_eq!(parse_words("").unwrap(), PluginAction::List);
        assert_eq!(
            parse_words("install a@m --scope project").unwrap(),
            PluginAction::Install {
                id: "a@m".into(),
                scope: Scope::Project
            }
        );
        assert_eq!(
            parse_words("disable --scope=local a@m").unwrap(),
            PluginAction::Disable {
                id: "a@m".into(),
                scope: Scope::Local
            }
        );
        assert_eq!(
            parse_words("marketplace add ./m").unwrap(),
            PluginAction::MarketplaceAdd {
                source: "./m".into()
            }
        );
        assert_eq!(
            parse_words("marketplace update").unwrap(),
            PluginAction::MarketplaceUpdate { name: None }
        );
        assert!(matches!(parse_words("install"), Err(PluginError::Usage)));
        assert!(
            parse_words("install")
                .unwrap_err()
                .to_string()
                .starts_with("Usage")
        );
        assert!(matches!(
            parse_words("install a --scope team"),
            Err(PluginError::UnknownScope(scope)) if scope == "team"
        ));
        assert!(parse_words("frobnicate").is_err());
    }
}
