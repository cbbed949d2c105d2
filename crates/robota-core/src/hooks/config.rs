//! Hook configuration: the `hooks` object of (merged) settings and the `{"hooks": {…}}`
//! shape of a plugin's `hooks/hooks.json`, parsed into matcher groups of handlers. Unknown
//! fields are ignored; a bad entry is skipped with a warning that names the event and the
//! index, and everything else still loads. Plugin handlers remember their plugin root and
//! data directory so `${CLAUDE_PLUGIN_ROOT}` / `${CLAUDE_PLUGIN_DATA}` expand and
//! `CLAUDE_PLUGIN_ROOT` / `CLAUDE_PLUGIN_DATA` are set when they run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::matcher::Matcher;
use super::{HookEvent, KNOWN_UNSUPPORTED_EVENTS};

/// Default time a `command` or `http` handler may take (DESIGN §8).
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// Default for `prompt` handlers (Claude Code's).
pub const DEFAULT_PROMPT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default for `agent` handlers (Claude Code's).
pub const DEFAULT_AGENT_TIMEOUT: Duration = Duration::from_secs(60);

/// What a handler does.
#[derive(Debug, Clone, PartialEq)]
pub enum HandlerKind {
    /// A shell command run with `sh -c`, the event JSON on stdin; with `args` (the exec
    /// form, `"command": "node", "args": [...]`) the program runs directly with them.
    Command {
        /// The command line, or the program when `args` is given.
        command: String,
        /// The program's arguments (the exec form); `None` runs `command` with `sh -c`.
        args: Option<Vec<String>>,
    },
    /// The event JSON POSTed to a URL; the response body is read like stdout.
    Http {
        /// Where the event JSON is POSTed.
        url: String,
        /// Request headers, values as written (`$VAR` expanded from `allowed_env_vars`).
        headers: Vec<(String, String)>,
        /// Environment variables that may be expanded in header values.
        allowed_env_vars: Vec<String>,
    },
    /// A model asked about the event (`$ARGUMENTS` = the event JSON).
    Prompt {
        /// What to ask, `$ARGUMENTS` standing for the event JSON.
        prompt: String,
        /// The model to ask; `None`: the one the runner uses by default.
        model: Option<String>,
    },
    /// Like `Prompt`; Claude Code runs a subagent, robota asks the model once.
    Agent {
        /// What to ask, `$ARGUMENTS` standing for the event JSON.
        prompt: String,
        /// The model to ask; `None`: the one the runner uses by default.
        model: Option<String>,
    },
    /// A callback registered by the program driving robota (the Claude Agent SDK's
    /// `hookCallbackIds`), asked through the `HookCallbacks` the runner was given; its
    /// answer is read as a command's JSON output. Never read from settings files.
    Callback {
        /// The id the program registered the callback under.
        id: String,
    },
}

/// One configured handler.
#[derive(Debug, Clone, PartialEq)]
pub struct HookHandler {
    /// What it runs.
    pub kind: HandlerKind,
    /// `None` = the kind's default.
    pub timeout: Option<Duration>,
    /// A permission rule (`Bash(git commit:*)`) the tool call must match for the handler
    /// to run; tool events only.
    pub condition: Option<String>,
    /// `async` / `asyncRewake`: run in the background; its output decides nothing.
    pub background: bool,
    /// `statusMessage`: what clients show while it runs.
    pub status_message: Option<String>,
    /// The plugin directory, for plugin hooks.
    pub plugin_root: Option<PathBuf>,
    /// The plugin's persistent data directory (`CLAUDE_PLUGIN_DATA`), for plugin hooks.
    pub plugin_data: Option<PathBuf>,
}

impl HookHandler {
    /// The timeout that applies.
    pub fn effective_timeout(&self) -> Duration {
        self.timeout.unwrap_or(match self.kind {
            HandlerKind::Command { .. }
            | HandlerKind::Http { .. }
            | HandlerKind::Callback { .. } => DEFAULT_COMMAND_TIMEOUT,
            HandlerKind::Prompt { .. } => DEFAULT_PROMPT_TIMEOUT,
            HandlerKind::Agent { .. } => DEFAULT_AGENT_TIMEOUT,
        })
    }

    /// A short label: the command, the URL, or the prompt's start.
    pub fn label(&self) -> String {
        match &self.kind {
            HandlerKind::Command {
                command,
                args: None,
            } => command.clone(),
            HandlerKind::Command {
                command,
                args: Some(args),
            } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            HandlerKind::Http { url, .. } => url.clone(),
            HandlerKind::Callback { id } => format!("callback {id}"),
            HandlerKind::Prompt { prompt, .. } | HandlerKind::Agent { prompt, .. } => {
                let short: String = prompt.chars().take(60).collect();
                if short.len() < prompt.len() {
                    format!("{short}…")
                } else {
                    short
                }
            }
        }
    }

    /// The handler's `type` as settings write it (`command`, `http`…).
    pub(crate) fn type_name(&self) -> &'static str {
        match self.kind {
            HandlerKind::Command { .. } => "command",
            HandlerKind::Http { .. } => "http",
            HandlerKind::Prompt { .. } => "prompt",
            HandlerKind::Agent { .. } => "agent",
            HandlerKind::Callback { .. } => "callback",
        }
    }
}

/// A matcher and the handlers it selects.
#[derive(Debug, Clone, PartialEq)]
pub struct MatcherGroup {
    /// Which queries (tool names, sources…) the group's handlers run for.
    pub matcher: Matcher,
    /// The handlers, in configuration order.
    pub handlers: Vec<HookHandler>,
}

/// Every configured hook, by event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookConfig {
    groups: BTreeMap<HookEvent, Vec<MatcherGroup>>,
}

impl HookConfig {
    /// Reads a settings object: its `hooks` map, unless `disableAllHooks` is true.
    pub fn from_settings(settings: &Value) -> (HookConfig, Vec<String>) {
        if settings.get("disableAllHooks").and_then(Value::as_bool) == Some(true) {
            return (HookConfig::default(), Vec::new());
        }
        match settings.get("hooks") {
            Some(hooks) => HookConfig::from_hooks(hooks, None),
            None => (HookConfig::default(), Vec::new()),
        }
    }

    /// Reads a plugin's `hooks/hooks.json` (`{"description"?, "hooks": {…}}`).
    pub fn from_plugin_file(file: &Value, plugin_root: &Path) -> (HookConfig, Vec<String>) {
        match file.get("hooks") {
            Some(hooks) => HookConfig::from_hooks(hooks, Some(plugin_root)),
            None => (
                HookConfig::default(),
                vec!["plugin hooks file has no \"hooks\" object".to_string()],
            ),
        }
    }

    /// Gives every handler its plugin's data directory: `${CLAUDE_PLUGIN_DATA}` (and
    /// `$CLAUDE_PLUGIN_DATA`) in commands, URLs and prompts becomes `dir`, and
    /// `CLAUDE_PLUGIN_DATA` is set when they run.
    pub fn set_plugin_data(&mut self, dir: &Path) {
        let text = dir.to_string_lossy();
        let expand = |s: &mut String| {
            if s.contains("$CLAUDE_PLUGIN_DATA") || s.contains("${CLAUDE_PLUGIN_DATA}") {
                *s = s
                    .replace("${CLAUDE_PLUGIN_DATA}", &text)
                    .replace("$CLAUDE_PLUGIN_DATA", &text);
            }
        };
        for handler in self
            .groups
            .values_mut()
            .flatten()
            .flat_map(|g| &mut g.handlers)
        {
            match &mut handler.kind {
                HandlerKind::Command { command, args } => {
                    expand(command);
                    args.iter_mut().flatten().for_each(expand);
                }
                HandlerKind::Http { url, .. } => expand(url),
                HandlerKind::Prompt { prompt, .. } | HandlerKind::Agent { prompt, .. } => {
                    expand(prompt)
                }
                HandlerKind::Callback { .. } => {}
            }
            handler.plugin_data = Some(dir.to_path_buf());
        }
    }

    /// Reads a `hooks` map `{Event: [{matcher?, hooks: [handler…]}]}`.
    pub fn from_hooks(hooks: &Value, plugin_root: Option<&Path>) -> (HookConfig, Vec<String>) {
        let mut config = HookConfig::default();
        let mut warnings = Vec::new();
        let Some(map) = hooks.as_object() else {
            if !hooks.is_null() {
                warnings.push("hooks: expected an object of events".to_string());
            }
            return (config, warnings);
        };
        for (name, groups) in map {
            let Some(event) = HookEvent::parse(name) else {
                if KNOWN_UNSUPPORTED_EVENTS.contains(&name.as_str()) {
                    tracing::info!("hooks.{name}: robota does not fire this event; ignored");
                } else {
                    warnings.push(format!("hooks.{name}: unknown hook event; ignored"));
                }
                continue;
            };
            let Some(groups) = groups.as_array() else {
                warnings.push(format!("hooks.{name}: expected an array of matcher groups"));
                continue;
            };
            for (index, group) in groups.iter().enumerate() {
                let at = format!("hooks.{name}[{index}]");
                if let Some(group) = parse_group(group, &at, plugin_root, &mut warnings) {
                    config.groups.entry(event).or_default().push(group);
                }
            }
        }
        (config, warnings)
    }

    /// The hooks a driving program registers (the Agent SDK's `initialize.hooks`):
    /// `{Event: [{matcher?, hookCallbackIds: [id…], timeout?}]}`, each id a `Callback`
    /// handler.
    pub fn from_callbacks(hooks: &Value) -> (HookConfig, Vec<String>) {
        let mut config = HookConfig::default();
        let mut warnings = Vec::new();
        for (name, groups) in hooks.as_object().into_iter().flatten() {
            let Some(event) = HookEvent::parse(name) else {
                warnings.push(format!("hooks.{name}: robota does not fire this event"));
                continue;
            };
            for (index, group) in groups.as_array().into_iter().flatten().enumerate() {
                let at = format!("hooks.{name}[{index}]");
                let matcher = Matcher::parse(group.get("matcher").and_then(Value::as_str));
                let (matcher, timeout) = match (matcher, parse_timeout(group.get("timeout"))) {
                    (Ok(m), Ok(t)) => (m, t),
                    (Err(e), _) => {
                        warnings.push(format!("{at}: {e}; group skipped"));
                        continue;
                    }
                    (_, Err(e)) => {
                        warnings.push(format!("{at}: {e}; group skipped"));
                        continue;
                    }
                };
                let handlers = group
                    .get("hookCallbackIds")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|id| HookHandler {
                        kind: HandlerKind::Callback { id: id.to_string() },
                        timeout,
                        condition: None,
                        background: false,
                        status_message: None,
                        plugin_root: None,
                        plugin_data: None,
                    })
                    .collect();
                config
                    .groups
                    .entry(event)
                    .or_default()
                    .push(MatcherGroup { matcher, handlers });
            }
        }
        (config, warnings)
    }

    /// Adds another source's hooks after these (settings layers, plugins).
    pub fn merge(&mut self, other: HookConfig) {
        for (event, groups) in other.groups {
            self.groups.entry(event).or_default().extend(groups);
        }
    }

    /// The matcher groups configured for `event`, in configuration order.
    pub fn groups(&self, event: HookEvent) -> &[MatcherGroup] {
        self.groups.get(&event).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Whether any handler is configured for the event.
    pub fn has(&self, event: HookEvent) -> bool {
        self.groups(event).iter().any(|g| !g.handlers.is_empty())
    }

    /// Whether no handler is configured for any event.
    pub fn is_empty(&self) -> bool {
        !HookEvent::ALL.into_iter().any(|e| self.has(e))
    }

    /// Number of handlers configured in all.
    pub fn handler_count(&self) -> usize {
        self.groups
            .values()
            .flatten()
            .map(|g| g.handlers.len())
            .sum()
    }
}

fn parse_group(
    group: &Value,
    at: &str,
    plugin_root: Option<&Path>,
    warnings: &mut Vec<String>,
) -> Option<MatcherGroup> {
    let Some(obj) = group.as_object() else {
        warnings.push(format!("{at}: expected an object with \"hooks\"; skipped"));
        return None;
    };
    let matcher_text = match obj.get("matcher") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => {
            warnings.push(format!("{at}: \"matcher\" must be a string; group skipped"));
            return None;
        }
    };
    let matcher = match Matcher::parse(matcher_text) {
        Ok(m) => m,
        Err(err) => {
            warnings.push(format!("{at}: {err}; group skipped"));
            return None;
        }
    };
    let Some(list) = obj.get("hooks").and_then(Value::as_array) else {
        warnings.push(format!(
            "{at}: \"hooks\" must be an array of handlers; skipped"
        ));
        return None;
    };
    let handlers = list
        .iter()
        .enumerate()
        .filter_map(|(i, h)| {
            let at = format!("{at}.hooks[{i}]");
            parse_handler(h, plugin_root)
                .map_err(|e| warnings.push(format!("{at}: {e}; skipped")))
                .ok()
        })
        .collect();
    Some(MatcherGroup { matcher, handlers })
}

/// What is wrong with one configured hook handler (or a group's `timeout`); the warning
/// that skips it names where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum HookConfigError {
    #[error("expected a handler object")]
    NotAnObject,
    #[error("\"{key}\" must be a string")]
    NotAString { key: &'static str },
    #[error("missing \"{key}\"")]
    Missing { key: &'static str },
    #[error("\"args\" must be a list of strings")]
    ArgsNotStrings,
    #[error("hook type {0:?} is not supported")]
    UnsupportedType(String),
    #[error("\"timeout\" must be a positive number of seconds")]
    BadTimeout,
}

fn parse_handler(
    value: &Value,
    plugin_root: Option<&Path>,
) -> Result<HookHandler, HookConfigError> {
    let obj = value.as_object().ok_or(HookConfigError::NotAnObject)?;
    let text = |key: &'static str| -> Result<Option<String>, HookConfigError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(expand_plugin_root(s, plugin_root))),
            Some(_) => Err(HookConfigError::NotAString { key }),
        }
    };
    let required = |key: &'static str| -> Result<String, HookConfigError> {
        text(key)?
            .filter(|s| !s.trim().is_empty())
            .ok_or(HookConfigError::Missing { key })
    };
    let kind_name = match obj.get("type") {
        Some(Value::String(t)) => t.as_str(),
        None if obj.contains_key("command") => "command",
        None => return Err(HookConfigError::Missing { key: "type" }),
        Some(_) => return Err(HookConfigError::NotAString { key: "type" }),
    };
    let kind = match kind_name {
        "command" => HandlerKind::Command {
            command: required("command")?,
            args: match obj.get("args") {
                None | Some(Value::Null) => None,
                Some(Value::Array(items)) => Some(
                    items
                        .iter()
                        .map(|item| match item {
                            Value::String(s) => Ok(expand_plugin_root(s, plugin_root)),
                            Value::Number(n) => Ok(n.to_string()),
                            _ => Err(HookConfigError::ArgsNotStrings),
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
                Some(_) => return Err(HookConfigError::ArgsNotStrings),
            },
        },
        "http" => HandlerKind::Http {
            url: required("url")?,
            headers: obj
                .get("headers")
                .and_then(Value::as_object)
                .map(|h| {
                    h.iter()
                        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                        .collect()
                })
                .unwrap_or_default(),
            allowed_env_vars: obj
                .get("allowedEnvVars")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        },
        "prompt" => HandlerKind::Prompt {
            prompt: required("prompt")?,
            model: text("model")?,
        },
        "agent" => HandlerKind::Agent {
            prompt: required("prompt")?,
            model: text("model")?,
        },
        other => return Err(HookConfigError::UnsupportedType(other.to_string())),
    };
    let timeout = parse_timeout(obj.get("timeout"))?;
    let flag = |key: &str| obj.get(key).and_then(Value::as_bool) == Some(true);
    Ok(HookHandler {
        kind,
        timeout,
        condition: text("if")?.filter(|s| !s.trim().is_empty()),
        background: flag("async") || flag("asyncRewake"),
        status_message: text("statusMessage")?,
        plugin_root: plugin_root.map(Path::to_path_buf),
        plugin_data: None,
    })
}

/// A handler's or group's `timeout`: positive seconds (capped at a day).
fn parse_timeout(value: Option<&Value>) -> Result<Option<Duration>, HookConfigError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(secs) if secs > 0.0 && secs.is_finite() => {
                Ok(Some(Duration::from_secs_f64(secs.min(24.0 * 3600.0))))
            }
            _ => Err(HookConfigError::BadTimeout),
        },
    }
}

/// Replaces `${CLAUDE_PLUGIN_ROOT}` (and `$CLAUDE_PLUGIN_ROOT`) with the plugin directory.
fn expand_plugin_root(text: &str, plugin_root: Option<&Path>) -> String {
    match plugin_root {
        Some(root) => {
            let root = root.to_string_lossy();
            text.replace("${CLAUDE_PLUGIN_ROOT}", &root)
                .replace("$CLAUDE_PLUGIN_ROOT", &root)
        }
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_hooks_parse_with_defaults_and_unknown_fields_ignored() {
        let settings = json!({
            "permissions": {"allow": ["Read"]},
            "hooks": {
                "PreToolUse": [{
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": "check.sh", "timeout": 30, "extra": 1}],
                    "unknownGroupField": true
                }],
                "Stop": [{"hooks": [{"type": "prompt", "prompt": "done? $ARGUMENTS"}]}],
                "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "http", "url": "http://127.0.0.1:9/h", "headers": {"X-A": "b"}}]}]
            }
        });
        let (config, warnings) = HookConfig::from_settings(&settings);
        assert!(warnings.is_empty(), "{warnings:?}");
        let pre = config.groups(HookEvent::PreToolUse);
        assert_eq!(pre.len(), 1);
        assert!(pre[0].matcher.matches("Bash"));
        assert_eq!(pre[0].handlers[0].timeout, Some(Duration::from_secs(30)));
        let stop = &config.groups(HookEvent::Stop)[0].handlers[0];
        assert_eq!(stop.effective_timeout(), DEFAULT_PROMPT_TIMEOUT);
        assert_eq!(stop.type_name(), "prompt");
        let post = &config.groups(HookEvent::PostToolUse)[0].handlers[0];
        assert_eq!(post.effective_timeout(), DEFAULT_COMMAND_TIMEOUT);
        assert!(matches!(&post.kind, HandlerKind::Http { headers, .. } if headers.len() == 1));
        assert_eq!(config.handler_count(), 3);
    }

    #[test]
    fn bad_entries_warn_with_event_and_index_and_the_rest_loads() {
        let hooks = json!({
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command"}, {"type": "command", "command": "ok.sh"}]},
                "not an object",
                {"matcher": "Bash(", "hooks": []},
                {"matcher": "Read"}
            ],
            "Stop": {"hooks": []},
            "PreToolUseTypo": [],
            "Setup": [{"hooks": [{"type": "command", "command": "x"}]}],
            "PostToolUse": [{"hooks": [{"type": "mcp_tool", "server": "s"}, {"type": "command", "command": "x", "timeout": "soon"}]}]
        });
        let (config, warnings) = HookConfig::from_hooks(&hooks, None);
        let joined = warnings.join("\n");
        assert!(
            joined.contains("hooks.PreToolUse[0].hooks[0]: missing \"command\""),
            "{joined}"
        );
        assert!(joined.contains("hooks.PreToolUse[1]:"), "{joined}");
        assert!(
            joined.contains("hooks.PreToolUse[2]: invalid matcher regex"),
            "{joined}"
        );
        assert!(
            joined.contains("hooks.PreToolUse[3]: \"hooks\" must be an array"),
            "{joined}"
        );
        assert!(joined.contains("hooks.Stop: expected an array"), "{joined}");
        assert!(
            joined.contains("hooks.PreToolUseTypo: unknown hook event"),
            "{joined}"
        );
        assert!(
            !joined.contains("Setup"),
            "known events robota does not fire are quiet"
        );
        assert!(joined.contains("hooks.PostToolUse[0].hooks[0]: hook type \"mcp_tool\""));
        assert!(joined.contains("hooks.PostToolUse[0].hooks[1]: \"timeout\""));
        assert_eq!(config.groups(HookEvent::PreToolUse).len(), 1);
        assert_eq!(config.groups(HookEvent::PreToolUse)[0].handlers.len(), 1);
        assert!(!config.has(HookEvent::PostToolUse));
    }

    #[test]
    fn plugin_files_expand_the_plugin_root_and_merge_after_settings() {
        let file = json!({
            "description": "d",
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}/hooks/stop.sh\""}]}]}
        });
        let root = Path::new("/opt/plugins/p");
        let (plugin, warnings) = HookConfig::from_plugin_file(&file, root);
        assert!(warnings.is_empty());
        let handler = &plugin.groups(HookEvent::Stop)[0].handlers[0];
        assert_eq!(
            handler.kind,
            HandlerKind::Command {
                command: "\"/opt/plugins/p/hooks/stop.sh\"".into(),
                args: None,
            }
        );
        assert_eq!(handler.plugin_root.as_deref(), Some(root));
        let (mut config, _) = HookConfig::from_hooks(
            &json!({"Stop": [{"hooks": [{"type": "command", "command": "first"}]}]}),
            None,
        );
        config.merge(plugin);
        assert_eq!(config.groups(HookEvent::Stop).len(), 2);
        assert_eq!(
            config.groups(HookEvent::Stop)[0].handlers[0].label(),
            "first"
        );
    }

    #[test]
    fn disable_all_hooks_turns_everything_off() {
        let settings = json!({"disableAllHooks": true, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}});
        let (config, _) = HookConfig::from_settings(&settings);
        assert!(config.is_empty());
    }
}
