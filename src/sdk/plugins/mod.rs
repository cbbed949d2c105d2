//! Plugins in Claude Code's layout: a folder with `.claude-plugin/plugin.json` (the
//! manifest), `commands/`, `agents/`, `skills/`, `hooks/hooks.json` and `.mcp.json`, or the
//! custom paths its manifest names (`manifest`, `load`); and where a session finds them
//! (`discover`): `--plugin-dir`, `$ROBOTA_HOME/plugins/`, and the plugins the user installed
//! with Claude Code (`~/.claude/plugins/installed_plugins.json`) that `enabledPlugins`
//! turns on. What a plugin adds joins the session under its name: `/plugin:command`,
//! `plugin:agent`, `mcp__plugin_<plugin>_<server>__<tool>`, hooks after the settings' hooks.

pub mod discover;
pub mod load;
pub mod manifest;

pub use discover::{PluginSet, PluginSources, discover};
pub use load::{Plugin, load_plugin};
pub use manifest::Manifest;
