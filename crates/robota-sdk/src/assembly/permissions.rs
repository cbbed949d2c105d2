//! The permission stage: the mode (options, `permissions.defaultMode`, a resumed
//! session's), the allow/ask/deny rules of the settings and the options, and the policy
//! with its sandbox and protected paths.

use std::path::{Path, PathBuf};

use robota_core::permission::{
    PermissionMode, PermissionPolicy, PermissionRule, RuleList, SandboxPolicy, SandboxSettings,
};

use super::{AssemblyError, ProjectOptions, ProjectPaths};
use crate::settings::Settings;

/// The mode and rules the settings and options give, before a resumed session's mode is
/// known.
pub(super) struct Rules {
    mode: PermissionMode,
    allow: Vec<PermissionRule>,
    ask: Vec<PermissionRule>,
    deny: Vec<PermissionRule>,
}

impl Rules {
    pub(super) fn gather(
        settings: &Settings,
        options: &ProjectOptions,
        warnings: &mut Vec<String>,
    ) -> Result<Rules, AssemblyError> {
        let mode = match (options.permission_mode, settings.managed_default_mode()) {
            // Managed policy's mode is not the flags' to change.
            (Some(asked), Some((managed, file))) if asked.as_str() != managed => {
                warnings.push(format!(
                    "--permission-mode {asked} was not used: managed settings {file} set permissions.defaultMode to {managed}"
                ));
                settings_mode(settings)?
            }
            (Some(mode), _) => mode,
            (None, _) => settings_mode(settings)?,
        };
        if mode == PermissionMode::BypassPermissions
            && let Some(refusal) = settings.bypass_refusal()
        {
            return Err(AssemblyError::Invalid(refusal));
        }
        // Managed policy may keep the command line's rules out too.
        let rules_from_flags = settings.managed_permission_rules_only().is_none();
        let from_settings = |list: RuleList| -> Vec<PermissionRule> {
            settings
                .rules(list)
                .iter()
                .filter_map(|(rule, _, base)| {
                    PermissionRule::parse(rule).map(|r| r.with_base(base.clone()))
                })
                .collect()
        };
        let mut allow = from_settings(RuleList::Allow);
        let mut deny = from_settings(RuleList::Deny);
        if rules_from_flags {
            allow.extend(
                options
                    .allow
                    .iter()
                    .flat_map(|a| PermissionRule::parse_list(a)),
            );
            deny.extend(
                options
                    .deny
                    .iter()
                    .flat_map(|d| PermissionRule::parse_list(d)),
            );
        }
        Ok(Rules {
            mode,
            allow,
            ask: from_settings(RuleList::Ask),
            deny,
        })
    }

    /// Whether a deny rule removes the whole tool `name` (`Bash`, not `Bash(rm:*)`).
    pub(super) fn removes_tool(&self, name: &str) -> bool {
        self.whole_tool_denials().removes(name)
    }

    /// The deny rules that remove whole tools, for judging tools that arrive later (MCP).
    pub(super) fn whole_tool_denials(&self) -> WholeToolDenials {
        WholeToolDenials(
            self.deny
                .iter()
                .filter(|r| r.specifier.is_none())
                .cloned()
                .collect(),
        )
    }

    /// The mode the session runs in once a resumed session's is known: the resumed mode
    /// when the options name none, except bypass, which is never restored silently.
    pub(super) fn mode_after_resume(
        &self,
        options: &ProjectOptions,
        resumed: Option<PermissionMode>,
    ) -> PermissionMode {
        match resumed {
            Some(m)
                if options.permission_mode.is_none() && m != PermissionMode::BypassPermissions =>
            {
                m
            }
            _ => self.mode,
        }
    }

    pub(super) fn into_policy(
        self,
        mode: PermissionMode,
        settings: &Settings,
        paths: &ProjectPaths,
        options: &ProjectOptions,
        warnings: &mut Vec<String>,
    ) -> PermissionPolicy {
        PermissionPolicy {
            mode,
            allow: self.allow,
            ask: self.ask,
            deny: self.deny,
            home: paths.home.clone(),
            additional_dirs: settings
                .values
                .permissions
                .additional_directories
                .iter()
                .map(PathBuf::from)
                .chain(options.add_dirs.iter().cloned())
                .collect(),
            session_start: Some(std::time::SystemTime::now()),
            sandbox: sandbox_policy(settings, paths, warnings),
            protected: crate::settings::protected::protected_paths(
                paths.home(),
                Some(&paths.robota_home),
            ),
            ..PermissionPolicy::default()
        }
    }
}

/// Deny rules without a specifier: each removes a whole tool.
pub(super) struct WholeToolDenials(Vec<PermissionRule>);

impl WholeToolDenials {
    pub(super) fn removes(&self, name: &str) -> bool {
        self.0.iter().any(|r| r.names_tool(name, RuleList::Deny))
    }
}

/// `permissions.defaultMode`, or the default mode.
fn settings_mode(settings: &Settings) -> Result<PermissionMode, AssemblyError> {
    let Some(m) = settings.values.permissions.default_mode.as_deref() else {
        return Ok(PermissionMode::Default);
    };
    PermissionMode::parse(m).ok_or_else(|| {
        AssemblyError::Invalid(format!(
            "unknown permissions.defaultMode {m:?} in {}",
            settings
                .source_of("/permissions/defaultMode")
                .unwrap_or("settings")
        ))
    })
}

/// The Bash sandbox's settings and whether this machine runs it (checked only when the
/// settings do not turn it off; a machine without support is reported once, here).
fn sandbox_policy(
    settings: &Settings,
    paths: &ProjectPaths,
    warnings: &mut Vec<String>,
) -> SandboxPolicy {
    let section = settings.values.sandbox.clone().unwrap_or_default();
    let (sandbox, notes) = SandboxSettings::from_section(&section, &paths.cwd, paths.home());
    warnings.extend(notes);
    // Checked whatever `sandbox.enabled` says: outside the sandbox (bypass mode, excluded
    // commands) the filesystem-only confinement still guards the deny rules and the
    // protected files.
    let support = robota_tools::sandbox::support();
    if let Some(missing) = &support.missing {
        warnings.push(format!(
            "the Bash sandbox is not available on this machine ({missing}); commands are checked by the permission rules only"
        ));
    }
    SandboxPolicy {
        available: sandbox.enabled != Some(false) && support.available(),
        files_guard: section.file_guard != Some(false)
            && support.available()
            && support.backend == robota_tools::sandbox::Backend::Landlock,
        settings: sandbox,
        protected: sandbox_protected(&paths.robota_home, paths.home()),
    }
}

/// What a confined command may never write outside the working directories: robota's
/// home (settings, `trusted.json`, sessions; its files besides, for a project inside it),
/// the user's settings files, Claude Code's user file (`mcpServers`) and git's user config.
fn sandbox_protected(robota_home: &Path, user_home: Option<&Path>) -> Vec<PathBuf> {
    let mut protected = vec![
        robota_home.to_path_buf(),
        robota_home.join("settings.json"),
        robota_home.join("trusted.json"),
    ];
    if let Some(home) = user_home {
        protected.push(home.join(".claude/settings.json"));
        protected.push(home.join(".claude/settings.local.json"));
        protected.push(home.join(".claude.json"));
        protected.push(home.join(".gitconfig"));
        protected.push(home.join(".config/git"));
    }
    protected
}
