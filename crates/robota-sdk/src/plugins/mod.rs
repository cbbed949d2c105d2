//! Plugins in Claude Code's layout: a folder with `.claude-plugin/plugin.json` (the
//! manifest), `commands/`, `agents/`, `skills/`, `hooks/hooks.json` and `.mcp.json`, `.lsp.json`, or the
//! custom paths its manifest names (`manifest`, `load`); and where a session finds them
//! (`discover`): `--plugin-dir`, `$ROBOTA_HOME/plugins/`, and the plugins the user installed
//! with Claude Code (`~/.claude/plugins/installed_plugins.json`) that `enabledPlugins`
//! turns on. Marketplaces (`marketplace`, `known`), installing from them (`install`, `git`,
//! `store`) and the manager's operations (`manage`) keep robota's own copies under
//! `$ROBOTA_HOME/plugins/` in the same layout. What a plugin adds joins the session under its name: `/plugin:command`,
//! `plugin:agent`, `mcp__plugin_<plugin>_<server>__<tool>`, hooks after the settings' hooks.

pub mod discover;
pub mod error;
pub mod git;
pub mod install;
pub(crate) mod known;
pub mod load;
mod lsp_servers;
pub mod manage;
pub mod manifest;
pub mod marketplace;
pub mod store;

pub use discover::{PluginSet, PluginSources, discover};
pub use error::{FormatError, PluginError};
pub use load::{Plugin, load_plugin};
pub use manage::{PluginAction, perform};
pub use store::Scope;
