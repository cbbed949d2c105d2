//! What a session's system prompt is built from, kept for the whole session so the prompt
//! can be rebuilt when the user changes what goes into it: `/language` (the settings
//! `language` key, saved in the user settings) and `/memory` (a context file edited in
//! `$EDITOR`). Also which files `/memory` offers to edit.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::assembly::Discovery;
use super::commands::CommandError;
use super::context_files::{self, ContextFile};
use super::paths::ProjectPaths;
use super::settings::local_rules::SettingsWriteError;
use super::settings::setup_save::{set_user_setting, user_settings_path};
use super::system_prompt::{self, PromptParts};
use robota_core::permission::PathDenial;

/// The parts of a session's system prompt that do not change while it runs, and the
/// response language, which `/language` changes.
#[derive(Debug)]
pub struct Instructions {
    /// The project and the homes (`~/.claude/CLAUDE.md`, `~` imports, `$ROBOTA_HOME`).
    pub paths: ProjectPaths,
    /// Today's date as the prompt states it (`2026-11-26`).
    pub date: String,
    /// `--system-prompt`: replaces the built-in text.
    pub replace: Option<String>,
    /// `--append-system-prompt` (and the structured-output instruction).
    pub append: Option<String>,
    /// Files deny rules protect: never loaded or imported into the prompt.
    pub read_denial: Option<PathDenial>,
    /// Which context files are read: all, the project's only, or none.
    pub discovery: Discovery,
    /// Nobody can answer a question before the task ends (the prompt says so).
    pub unattended: bool,
    language: Mutex<Option<String>>,
}

/// A system prompt and the context files it holds.
#[derive(Debug, Clone)]
pub(crate) struct BuiltPrompt {
    pub prompt: String,
    pub files: Vec<ContextFile>,
}

/// A file `/memory` can open: where it is, what it is for, and whether it exists yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    /// `project`, `local` or `user`.
    pub scope: &'static str,
    /// The file (`AGENTS.md`, `CLAUDE.md`, `CLAUDE.local.md` …).
    pub path: PathBuf,
    /// Whether the file is there yet (`/memory` creates it when not).
    pub exists: bool,
}

impl Instructions {
    /// The instructions of a session in `paths`, dated `date`, answering in `language`.
    pub(crate) fn new(paths: ProjectPaths, date: String, language: Option<String>) -> Self {
        Instructions {
            paths,
            date,
            replace: None,
            append: None,
            read_denial: None,
            discovery: Discovery::Full,
            unattended: false,
            language: Mutex::new(language.filter(|l| !l.trim().is_empty())),
        }
    }

    /// Reads the context files afresh and builds the prompt for `model`.
    pub(crate) fn build(&self, model: &str) -> BuiltPrompt {
        let denial = self.read_denial.as_ref();
        let files = match self.discovery {
            Discovery::Full => context_files::load(
                &self.paths.cwd,
                self.paths.home(),
                &self.paths.robota_home,
                denial,
            ),
            Discovery::ProjectContextFiles => context_files::load_project(&self.paths.cwd, denial),
            Discovery::Nothing => Vec::new(),
        };
        let language = self.language();
        let prompt = system_prompt::build(&PromptParts {
            cwd: &self.paths.cwd,
            model,
            date: &self.date,
            replace: self.replace.as_deref(),
            append: self.append.as_deref(),
            context_files: &files,
            language: language.as_deref(),
            unattended: self.unattended,
        });
        BuiltPrompt { prompt, files }
    }

    /// The language answers are written in, if one was chosen.
    pub(crate) fn language(&self) -> Option<String> {
        self.language.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// `/language <lang>`: saves `language` in the user settings (`None` removes it) and
    /// uses it from the next prompt built. Returns the settings file written.
    pub(crate) fn set_language(
        &self,
        language: Option<String>,
    ) -> Result<PathBuf, SettingsWriteError> {
        let value = language.clone().map(serde_json::Value::String);
        let path = set_user_setting(&self.paths.robota_home, "language", value)?;
        if let Ok(mut current) = self.language.lock() {
            *current = language;
        }
        Ok(path)
    }

    /// The files `/memory` offers: the project's instructions (its `CLAUDE.md` or
    /// `AGENTS.md`, whichever exists, else a new `AGENTS.md`), the personal untracked
    /// `CLAUDE.local.md`, and the user's own (`$ROBOTA_HOME/AGENTS.md`, or
    /// `~/.claude/CLAUDE.md` when only that exists).
    pub(crate) fn memory_files(&self) -> Vec<MemoryFile> {
        let pick = |candidates: Vec<PathBuf>| -> MemoryFile {
            let existing = candidates.iter().find(|p| p.is_file()).cloned();
            let path = existing
                .clone()
                .or_else(|| candidates.first().cloned())
                .unwrap_or_default();
            MemoryFile {
                scope: "",
                exists: existing.is_some(),
                path,
            }
        };
        let project = pick(vec![
            self.paths.cwd.join("AGENTS.md"),
            self.paths.cwd.join("CLAUDE.md"),
        ]);
        let local = pick(vec![self.paths.cwd.join("CLAUDE.local.md")]);
        let mut user_candidates = vec![self.paths.robota_home.join("AGENTS.md")];
        if let Some(home) = &self.paths.home {
            user_candidates.push(home.join(".claude/CLAUDE.md"));
        }
        let user = pick(user_candidates);
        vec![
            MemoryFile {
                scope: "project",
                ..project
            },
            MemoryFile {
                scope: "local",
                ..local
            },
            MemoryFile {
                scope: "user",
                ..user
            },
        ]
    }

    /// The file `/memory [scope]` opens: `project` when no scope is named.
    pub fn memory_file(&self, scope: &str) -> Result<MemoryFile, CommandError> {
        let scope = match scope.trim() {
            "" => "project",
            s => s,
        };
        self.memory_files()
            .into_iter()
            .find(|f| f.scope == scope)
            .ok_or_else(|| CommandError::usage("/memory [project|local|user]", Some(scope)))
    }

    /// The user settings file `/language` writes.
    pub fn user_settings(&self) -> PathBuf {
        user_settings_path(&self.paths.robota_home)
    }

    /// Where context files are looked for (the working directory).
    pub fn cwd(&self) -> &Path {
        &self.paths.cwd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instructions(dir: &Path) -> Instructions {
        let cwd = dir.join("project");
        std::fs::create_dir_all(&cwd).unwrap();
        let paths = ProjectPaths::new(cwd, Some(dir.join("home")), dir.join("robota"));
        Instructions::new(paths, "2026-11-26".into(), None)
    }

    #[test]
    fn the_language_is_saved_and_reaches_the_next_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let i = instructions(dir.path());
        std::fs::create_dir_all(dir.path().join("robota")).unwrap();
        std::fs::write(
            dir.path().join("robota/settings.json"),
            r#"{"model": "opus"}"#,
        )
        .unwrap();
        assert!(!i.build("m").prompt.contains("Response language"));
        let path = i.set_language(Some("Korean".into())).unwrap();
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(saved["language"], "Korean");
        assert_eq!(saved["model"], "opus", "the rest of the file is kept");
        let prompt = i.build("m").prompt;
        assert!(
            prompt
                .trim_end()
                .ends_with("Code, identifiers and commands stay as they are.")
        );
        assert!(prompt.contains("in Korean"));
        i.set_language(None).unwrap();
        assert!(!i.build("m").prompt.contains("Response language"));
        let saved = std::fs::read_to_string(&path).unwrap();
        assert!(!saved.contains("language"), "{saved}");
    }

    #[test]
    fn a_malformed_settings_file_is_left_alone_and_the_language_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let i = instructions(dir.path());
        std::fs::create_dir_all(dir.path().join("robota")).unwrap();
        let file = dir.path().join("robota/settings.json");
        std::fs::write(&file, "{ broken").unwrap();
        let err = i.set_language(Some("French".into())).unwrap_err();
        assert!(
            matches!(&err, SettingsWriteError::Malformed { path, .. } if path == &file),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ broken");
        assert_eq!(i.language(), None);
    }

    #[test]
    fn memory_files_prefer_what_exists_and_an_edit_is_read_on_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let i = instructions(dir.path());
        let project = i.memory_file("").unwrap();
        assert_eq!(project.path, i.paths.cwd.join("AGENTS.md"));
        assert!(!project.exists);
        std::fs::write(i.paths.cwd.join("CLAUDE.md"), "Use tabs.\n").unwrap();
        let project = i.memory_file("project").unwrap();
        assert_eq!(project.path, i.paths.cwd.join("CLAUDE.md"));
        assert!(project.exists);
        assert!(i.build("m").prompt.contains("Use tabs."));
        std::fs::write(&project.path, "Use spaces.\n").unwrap();
        let rebuilt = i.build("m");
        assert!(rebuilt.prompt.contains("Use spaces."));
        assert!(!rebuilt.prompt.contains("Use tabs."));
        assert_eq!(
            i.memory_file("user").unwrap().path,
            dir.path().join("robota/AGENTS.md")
        );
        assert_eq!(
            i.memory_file("team").unwrap_err().to_string(),
            "Usage: /memory [project|local|user] (not \"team\")"
        );
    }
}
