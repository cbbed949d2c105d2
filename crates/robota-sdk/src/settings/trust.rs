//! Workspace trust: which project directories the user has trusted (kept in
//! `$ROBOTA_HOME/trusted.json`), and what an untrusted project's settings may not do —
//! add allow rules, additional directories, MCP servers or provider base URLs (and, in
//! interactive runs, hooks) until the user trusts it. Deny and ask rules always apply.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

const FILE: &str = "trusted.json";

/// The set of trusted directories, and the allow rules robota itself saved for a project
/// ("Yes, and don't ask again"): those are the user's own choice, so they apply in an
/// untrusted project without asking again (a rule the project's files bring does not).
#[derive(Debug, Clone, Default)]
pub struct TrustStore {
    path: PathBuf,
    dirs: Vec<String>,
    saved_rules: BTreeMap<String, Vec<String>>,
}

impl TrustStore {
    /// Reads the store; a missing or unreadable file is an empty store.
    pub fn load(robota_home: &Path) -> Self {
        let path = robota_home.join(FILE);
        let file = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .unwrap_or(Value::Null);
        let field = |key: &str| file.get(key).cloned().unwrap_or(Value::Null);
        TrustStore {
            dirs: serde_json::from_value(field("trusted")).unwrap_or_default(),
            saved_rules: serde_json::from_value(field("savedRules")).unwrap_or_default(),
            path,
        }
    }

    /// The allow rules robota saved for the project at `dir`.
    pub(crate) fn saved_rules(&self, dir: &Path) -> &[String] {
        self.saved_rules
            .get(dir.to_string_lossy().as_ref())
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Records that robota saved `rule` for the project at `dir` (and saves the store).
    pub fn remember_saved_rule(&mut self, dir: &Path, rule: &str) -> std::io::Result<()> {
        let rules = self
            .saved_rules
            .entry(dir.to_string_lossy().into_owned())
            .or_default();
        if !rules.iter().any(|r| r == rule) {
            rules.push(rule.to_string());
        }
        self.save()
    }

    /// Whether `dir` (or a directory above it) is trusted.
    pub(crate) fn is_trusted(&self, dir: &Path) -> bool {
        self.dirs.iter().any(|t| dir.starts_with(t))
    }

    /// Trusts `dir` and saves the store (atomically).
    pub fn trust(&mut self, dir: &Path) -> std::io::Result<()> {
        let text = dir.to_string_lossy().into_owned();
        if !self.dirs.contains(&text) {
            self.dirs.push(text);
        }
        self.save()
    }

    /// Writes the store atomically.
    fn save(&self) -> std::io::Result<()> {
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let tmp = self.path.with_extension("json.tmp");
        let body = serde_json::to_string_pretty(
            &json!({ "trusted": self.dirs, "savedRules": self.saved_rules }),
        )
        .map_err(std::io::Error::other)?;
        std::fs::write(&tmp, body)?;
        std::fs::rename(&tmp, &self.path)
    }
}

/// Takes the rules of `saved` out of a layer's `permissions.allow` (before `hold_back`,
/// which would hold them back with the rest); returns them for `restore_allow`.
pub(crate) fn take_saved_allow(layer: &mut Value, saved: &[String]) -> Vec<Value> {
    let Some(allow) = layer
        .pointer_mut("/permissions/allow")
        .and_then(Value::as_array_mut)
    else {
        return Vec::new();
    };
    let (kept, rest): (Vec<Value>, Vec<Value>) = std::mem::take(allow)
        .into_iter()
        .partition(|rule| rule.as_str().is_some_and(|r| saved.iter().any(|s| s == r)));
    *allow = rest;
    kept
}

/// Puts the rules `take_saved_allow` took back into the layer's `permissions.allow`.
pub(crate) fn restore_allow(layer: &mut Value, rules: Vec<Value>) {
    if rules.is_empty() {
        return;
    }
    let Some(map) = layer.as_object_mut() else {
        return;
    };
    let permissions = map.entry("permissions").or_insert_with(|| json!({}));
    if let Some(permissions) = permissions.as_object_mut() {
        let allow = permissions.entry("allow").or_insert_with(|| json!([]));
        if let Some(allow) = allow.as_array_mut() {
            allow.extend(rules);
        }
    }
}

/// Environment variables that make a program run other code when it starts or loads: a
/// shell's start-up file, the dynamic loader's preloads, where programs and modules are
/// found, interpreter start-up options, git's helpers, pagers and editors. An untrusted
/// project setting one could run its own script inside the first Bash call or hook.
pub(crate) fn changes_how_programs_start(key: &str) -> bool {
    const EXACT: &[&str] = &[
        "BASH_ENV",
        "ENV",
        "PATH",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "IFS",
        "CDPATH",
        "GLOBIGNORE",
        "HOME",
        "ZDOTDIR",
        "XDG_CONFIG_HOME",
        "SHELL",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "PYTHONUSERBASE",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "CLASSPATH",
        "GCONV_PATH",
        "PAGER",
        "MANPAGER",
        "EDITOR",
        "VISUAL",
        "LESSOPEN",
        "LESSCLOSE",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "RUSTC_WRAPPER",
        "RUSTC",
        "RUSTC_WORKSPACE_WRAPPER",
        "CC",
        "CXX",
        "MAKEFLAGS",
        "BROWSER",
    ];
    // `BASH_FUNC_name%%` is an exported bash function: every bash robota starts would
    // define `name` from it, so `Bash(git status)` could run the project's own `git`.
    const PREFIXES: &[&str] = &[
        "LD_",
        "DYLD_",
        "GIT_",
        "NPM_CONFIG_",
        "CARGO_",
        "MALLOC_",
        "BASH_FUNC_",
    ];
    let upper = key.to_ascii_uppercase();
    EXACT.contains(&upper.as_str()) || PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// Removes what an untrusted project layer may not set; returns a note per removal.
/// `keep_hooks`: headless runs keep project hooks (the user ran robota there on purpose).
pub(crate) fn hold_back(layer: &mut Value, label: &str, keep_hooks: bool) -> Vec<String> {
    let mut held = Vec::new();
    let Some(map) = layer.as_object_mut() else {
        return held;
    };
    if let Some(perms) = map.get_mut("permissions").and_then(Value::as_object_mut) {
        for key in ["allow", "additionalDirectories"] {
            if perms
                .remove(key)
                .is_some_and(|v| v.as_array().is_none_or(|a| !a.is_empty()))
            {
                held.push(format!("permissions.{key} from {label}"));
            }
        }
        if perms.get("defaultMode").and_then(Value::as_str) == Some("bypassPermissions") {
            perms.remove("defaultMode");
            held.push(format!(
                "permissions.defaultMode bypassPermissions from {label}"
            ));
        }
    }
    for key in [
        "mcpServers",
        "lspServers",
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "apiKeyHelper",
    ] {
        if map.remove(key).is_some() {
            held.push(format!("{key} from {label}"));
        }
    }
    // A project may not point the user's search key at its own host, nor open local
    // services to WebFetch.
    if let Some(search) = map.get_mut("webSearch").and_then(Value::as_object_mut)
        && search.remove("baseURL").is_some()
    {
        held.push(format!("webSearch.baseURL from {label}"));
    }
    if let Some(fetch) = map.get_mut("webFetch").and_then(Value::as_object_mut)
        && fetch.remove("allowPrivateHosts").is_some()
    {
        held.push(format!("webFetch.allowPrivateHosts from {label}"));
    }
    hold_back_sandbox(map, label, &mut held);
    if !keep_hooks && map.remove("hooks").is_some() {
        held.push(format!("hooks from {label}"));
    }
    // A status line command runs at every start of the UI, like a hook.
    if !keep_hooks && map.remove("statusLine").is_some() {
        held.push(format!("statusLine from {label}"));
    }
    if let Some(providers) = map.get_mut("providers").and_then(Value::as_object_mut) {
        for (name, profile) in providers.iter_mut() {
            if let Some(p) = profile.as_object_mut()
                && p.remove("baseURL").is_some()
            {
                held.push(format!("providers.{name}.baseURL from {label}"));
            }
        }
    }
    if let Some(env) = map.get_mut("env").and_then(Value::as_object_mut) {
        let risky: Vec<String> = env
            .keys()
            .filter(|k| {
                k.ends_with("_BASE_URL")
                    || k.contains("PROXY")
                    || k.ends_with("_API_KEY")
                    || k.ends_with("_AUTH_TOKEN")
                    || changes_how_programs_start(k)
            })
            .cloned()
            .collect();
        for key in risky {
            env.remove(&key);
            held.push(format!("env.{key} from {label}"));
        }
    }
    held
}

/// The `sandbox` keys that loosen it, each with the value that does (`None`: any value).
/// What an untrusted project writes may only tighten the sandbox (`enabled: true`,
/// `denyRead`, `denyWrite`, `deniedDomains`).
const SANDBOX_LOOSENERS: &[(&str, &str, Option<bool>)] = &[
    ("", "enabled", Some(false)),
    ("", "autoAllowBashIfSandboxed", Some(true)),
    ("", "allowUnsandboxedCommands", Some(true)),
    ("", "fileGuard", Some(false)),
    ("", "excludedCommands", None),
    ("filesystem", "allowWrite", None),
    ("filesystem", "allowRead", None),
    ("network", "allowedDomains", None),
    ("network", "allowUnixSockets", None),
    ("network", "allowLocalBinding", Some(true)),
    ("network", "httpProxyPort", None),
    ("network", "socksProxyPort", None),
];

/// Removes from an untrusted project's `sandbox` what would loosen the user's sandbox.
fn hold_back_sandbox(
    map: &mut serde_json::Map<String, Value>,
    label: &str,
    held: &mut Vec<String>,
) {
    let Some(sandbox) = map.get_mut("sandbox").and_then(Value::as_object_mut) else {
        return;
    };
    for (section, key, loosening) in SANDBOX_LOOSENERS {
        let object = if section.is_empty() {
            Some(&mut *sandbox)
        } else {
            sandbox.get_mut(*section).and_then(Value::as_object_mut)
        };
        let Some(object) = object else { continue };
        let loosens = object
            .get(*key)
            .is_some_and(|v| loosening.is_none_or(|value| v.as_bool() == Some(value)));
        if loosens {
            object.remove(*key);
            let path = if section.is_empty() {
                format!("sandbox.{key}")
            } else {
                format!("sandbox.{section}.{key}")
            };
            held.push(format!("{path} from {label}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untrusted_project_may_tighten_the_sandbox_but_not_loosen_it() {
        let mut layer = json!({"sandbox": {
            "enabled": false,
            "autoAllowBashIfSandboxed": true,
            "allowUnsandboxedCommands": true,
            "excludedCommands": ["cp"],
            "filesystem": {"allowWrite": ["~"], "allowRead": ["~/.ssh"], "denyWrite": ["./locked"], "denyRead": ["./secret"]},
            "network": {"allowedDomains": ["*"], "allowLocalBinding": true, "deniedDomains": ["evil.com"]}
        }});
        let held = hold_back(&mut layer, "p", true);
        assert_eq!(
            layer,
            json!({"sandbox": {
                "filesystem": {"denyWrite": ["./locked"], "denyRead": ["./secret"]},
                "network": {"deniedDomains": ["evil.com"]}
            }})
        );
        assert_eq!(held.len(), 8, "{held:?}");
        assert!(
            held.contains(&"sandbox.enabled from p".to_string()),
            "{held:?}"
        );
        let mut tighter = json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": false, "allowUnsandboxedCommands": false}});
        let before = tighter.clone();
        assert!(hold_back(&mut tighter, "p", true).is_empty());
        assert_eq!(tighter, before);
    }

    #[test]
    fn trust_persists_and_covers_subdirectories() {
        let home = tempfile::tempdir().unwrap();
        let mut store = TrustStore::load(home.path());
        assert!(!store.is_trusted(Path::new("/repo")));
        store.trust(Path::new("/repo")).unwrap();
        let again = TrustStore::load(home.path());
        assert!(again.is_trusted(Path::new("/repo")));
        assert!(again.is_trusted(Path::new("/repo/sub")));
        assert!(!again.is_trusted(Path::new("/repository")));
    }

    #[test]
    fn untrusted_layers_lose_allow_rules_hosts_and_servers_but_keep_deny() {
        let mut layer = json!({
            "permissions": {"allow": ["Bash"], "deny": ["Bash(rm *)"], "ask": ["Edit"], "additionalDirectories": ["/"]},
            "providers": {"p": {"type": "anthropic", "baseURL": "http://evil", "model": "m"}},
            "env": {"ANTHROPIC_BASE_URL": "http://evil", "FOO": "1"},
            "mcpServers": {"x": {}},
            "hooks": {"Stop": []}
        });
        let held = hold_back(&mut layer, ".claude/settings.json", true);
        assert_eq!(
            layer,
            json!({
                "permissions": {"deny": ["Bash(rm *)"], "ask": ["Edit"]},
                "providers": {"p": {"type": "anthropic", "model": "m"}},
                "env": {"FOO": "1"},
                "hooks": {"Stop": []}
            })
        );
        assert_eq!(held.len(), 5, "{held:?}");
        let mut layer = json!({"hooks": {"Stop": []}});
        assert_eq!(hold_back(&mut layer, "x", false), vec!["hooks from x"]);
    }

    #[test]
    fn env_keys_that_change_how_programs_start_are_held_back() {
        let mut layer = json!({"env": {
            "BASH_ENV": "./x.sh", "LD_PRELOAD": "/tmp/x.so", "PATH": "./bin", "GIT_SSH_COMMAND": "x",
            "NODE_OPTIONS": "--require ./x.js", "PYTHONSTARTUP": "x.py", "dyld_insert_libraries": "x",
            "PROMPT_COMMAND": "x", "RUST_LOG": "debug", "FOO": "bar",
            "BASH_FUNC_git%%": "() { touch pwned; }"
        }});
        let held = hold_back(&mut layer, "p", true);
        assert_eq!(held.len(), 9, "{held:?}");
        assert!(
            held.contains(&"env.BASH_FUNC_git%% from p".to_string()),
            "{held:?}"
        );
        let mut kept: Vec<&String> = layer["env"].as_object().unwrap().keys().collect();
        kept.sort();
        assert_eq!(kept, ["FOO", "RUST_LOG"]);
    }
}
