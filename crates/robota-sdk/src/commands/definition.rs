//! Commands written as Markdown: Claude Code's custom commands (`.claude/commands/**/*.md`)
//! and skills (`.claude/skills/<name>/SKILL.md`) — one [`PromptCommand`] each, a prompt
//! template with its frontmatter (description, argument hint, the tools it pre-approves,
//! a model for its turn, whether the model may invoke it) — and where they are found
//! (`discover`): the project's and the user's folders of robota and of Claude Code.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::frontmatter::Document;
use crate::paths::ProjectPaths;

/// At most this many definition files are read from one folder tree.
const MAX_FILES_PER_TREE: usize = 2_000;
/// Folders deeper than this under a commands folder are not read.
const MAX_DEPTH: usize = 6;
/// A definition file larger than this is skipped with a warning.
const MAX_FILE_BYTES: u64 = 512 * 1024;

/// What kind of file a command comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefinitionKind {
    /// `commands/<name>.md`.
    Command,
    /// `skills/<name>/SKILL.md`: its folder's files are the model's to read, and the
    /// model may invoke it through the `Skill` tool.
    Skill,
}

/// Whose folder it was found in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A project folder (`.claude/` or `.robota/` in the working directory or a parent).
    Project,
    /// The user's folders (`~/.claude/` or `$ROBOTA_HOME`).
    User,
    /// A plugin's folder, by plugin name (commands are then `/plugin:name`).
    Plugin(String),
}

impl Origin {
    /// How listings name it: `project`, `user` or `plugin:<name>`.
    pub fn label(&self) -> String {
        match self {
            Origin::Project => "project".to_string(),
            Origin::User => "user".to_string(),
            Origin::Plugin(name) => format!("plugin:{name}"),
        }
    }
}

/// One Markdown command or skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptCommand {
    /// The name typed after `/` (`frontend:component` for a file in a subfolder).
    pub name: String,
    /// What it does, from the frontmatter (or the first paragraph when there is none).
    pub description: String,
    /// The frontmatter's `argument-hint` (empty when absent), shown in completion.
    pub argument_hint: String,
    /// Whether it is a command file or a skill folder.
    pub kind: DefinitionKind,
    /// Whose folder it was found in.
    pub origin: Origin,
    /// The `.md` file (or `SKILL.md`).
    pub path: PathBuf,
    /// The prompt template: the file's text after the frontmatter.
    pub body: String,
    /// Permission rules granted while the command's turn runs (`allowed-tools`).
    pub allowed_tools: Vec<String>,
    /// The model for the command's turn (an alias or an id).
    pub model: Option<String>,
    /// The model may not invoke it through the `Skill` tool.
    pub disable_model_invocation: bool,
    /// The user may invoke it with `/name` (skills can opt out).
    pub user_invocable: bool,
    /// `context: fork`: it runs as a subagent of this type (default `general-purpose`).
    pub fork_agent: Option<String>,
}

impl PromptCommand {
    /// Reads one definition file; `name` is the command name it gets from its place.
    pub fn from_text(
        text: &str,
        name: String,
        kind: DefinitionKind,
        origin: Origin,
        path: PathBuf,
    ) -> PromptCommand {
        let doc = Document::parse(text);
        let description = doc
            .text("description")
            .or_else(|| doc.first_paragraph())
            .unwrap_or_default();
        let description = match doc.text("when_to_use") {
            Some(when) => format!("{description} {when}"),
            None => description,
        };
        let fork_agent = (doc.text("context").as_deref() == Some("fork")).then(|| {
            doc.text("agent")
                .unwrap_or_else(|| "general-purpose".to_string())
        });
        PromptCommand {
            name,
            description,
            argument_hint: doc.text("argument-hint").unwrap_or_default(),
            kind,
            origin,
            path,
            allowed_tools: doc.list("allowed-tools"),
            model: doc.text("model"),
            disable_model_invocation: doc.flag("disable-model-invocation", false),
            user_invocable: doc.flag("user-invocable", true),
            fork_agent,
            body: doc.body,
        }
    }

    /// The skill's folder (its other files are the model's to read).
    pub(crate) fn skill_dir(&self) -> Option<&Path> {
        match self.kind {
            DefinitionKind::Skill => self.path.parent(),
            DefinitionKind::Command => None,
        }
    }

    /// Where it comes from, as listings show it (`project`, `user skill`, `plugin:x`).
    pub(crate) fn source_label(&self) -> String {
        match self.kind {
            DefinitionKind::Command => self.origin.label(),
            DefinitionKind::Skill => format!("{} skill", self.origin.label()),
        }
    }
}

/// The folders definitions are read from.
#[derive(Debug, Clone)]
pub struct DefinitionRoots {
    /// The project's directories, nearest first: the working directory and its parents up
    /// to the repository root (only the working directory outside a repository).
    pub project_dirs: Vec<PathBuf>,
    /// The user's home (`~/.claude/…`).
    pub home: Option<PathBuf>,
    /// `$ROBOTA_HOME` (`~/.robota/…`).
    pub robota_home: PathBuf,
}

impl DefinitionRoots {
    /// The roots for a session: its working directory and the parents up to the project
    /// root (the working directory alone outside a repository), the home folder and
    /// `$ROBOTA_HOME`.
    pub fn new(paths: &ProjectPaths) -> DefinitionRoots {
        let project_dirs = match &paths.project_root {
            Some(root) => paths
                .cwd
                .ancestors()
                .take_while(|dir| dir.starts_with(root))
                .map(Path::to_path_buf)
                .collect(),
            None => vec![paths.cwd.clone()],
        };
        DefinitionRoots {
            project_dirs,
            home: paths.home.clone(),
            robota_home: paths.robota_home.clone(),
        }
    }

    /// `(folder, origin)` pairs for `kind` (`commands`, `skills`, `agents`), highest
    /// priority first: project before user, robota's folder before Claude Code's.
    pub fn folders(&self, kind: &str) -> Vec<(PathBuf, Origin)> {
        let mut folders = Vec::new();
        for dir in &self.project_dirs {
            folders.push((dir.join(".robota").join(kind), Origin::Project));
            folders.push((dir.join(".claude").join(kind), Origin::Project));
            if kind == "skills" {
                folders.push((dir.join(".agents").join(kind), Origin::Project));
            }
        }
        folders.push((self.robota_home.join(kind), Origin::User));
        if let Some(home) = &self.home {
            folders.push((home.join(".claude").join(kind), Origin::User));
        }
        folders
    }
}

/// What discovery found: the commands by name (the first found of a name wins) and what
/// could not be read.
#[derive(Debug, Default)]
pub(crate) struct Discovered {
    pub commands: Vec<Arc<PromptCommand>>,
    pub warnings: Vec<String>,
}

/// Finds every custom command and skill under `roots`. On a name clash a skill wins over
/// a command (as in Claude Code), and otherwise the higher-priority folder wins.
pub(crate) fn discover(roots: &DefinitionRoots) -> Discovered {
    let mut found = Discovered::default();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut add = |command: PromptCommand, found: &mut Discovered| match by_name.get(&command.name)
    {
        Some(&i) => {
            let kept = &found.commands[i];
            if kept.kind == DefinitionKind::Command && command.kind == DefinitionKind::Skill {
                found.commands[i] = Arc::new(command);
            }
        }
        None => {
            by_name.insert(command.name.clone(), found.commands.len());
            found.commands.push(Arc::new(command));
        }
    };
    for (folder, origin) in roots.folders("skills") {
        for command in read_skills(&folder, &origin, &mut found.warnings) {
            add(command, &mut found);
        }
    }
    for (folder, origin) in roots.folders("commands") {
        for command in read_commands(&folder, &origin, &mut found.warnings) {
            add(command, &mut found);
        }
    }
    found
}

/// The skills of a `skills` folder: `<name>/SKILL.md` for each subfolder.
pub fn read_skills(
    folder: &Path,
    origin: &Origin,
    warnings: &mut Vec<String>,
) -> Vec<PromptCommand> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .take(MAX_FILES_PER_TREE)
        .collect();
    dirs.sort();
    dirs.into_iter()
        .filter_map(|dir| {
            let file = dir.join("SKILL.md");
            let text = read_definition(&file, warnings)?;
            let name = dir.file_name()?.to_string_lossy().to_string();
            let name = qualified(origin, name);
            Some(PromptCommand::from_text(
                &text,
                name,
                DefinitionKind::Skill,
                origin.clone(),
                file,
            ))
        })
        .collect()
}

/// The commands of a `commands` folder: every `.md` file, subfolders naming a namespace
/// (`frontend/component.md` is `/frontend:component`).
pub fn read_commands(
    folder: &Path,
    origin: &Origin,
    warnings: &mut Vec<String>,
) -> Vec<PromptCommand> {
    let mut files = Vec::new();
    collect_markdown(folder, 0, &mut files);
    files.sort();
    files
        .into_iter()
        .filter_map(|file| {
            let relative = file.strip_prefix(folder).ok()?.with_extension("");
            let name = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect::<Vec<_>>()
                .join(":");
            read_command_file(&file, name, origin, warnings)
        })
        .collect()
}

/// One command file named `name` (without its plugin's namespace).
pub(crate) fn read_command_file(
    file: &Path,
    name: String,
    origin: &Origin,
    warnings: &mut Vec<String>,
) -> Option<PromptCommand> {
    let text = read_definition(file, warnings)?;
    Some(PromptCommand::from_text(
        &text,
        qualified(origin, name),
        DefinitionKind::Command,
        origin.clone(),
        file.to_path_buf(),
    ))
}

/// A plugin's commands are namespaced by the plugin's name.
fn qualified(origin: &Origin, name: String) -> String {
    match origin {
        Origin::Plugin(plugin) => format!("{plugin}:{name}"),
        _ => name,
    }
}

/// Every `.md` file under `dir` (hidden entries skipped), at most [`MAX_DEPTH`] folders
/// deep and [`MAX_FILES_PER_TREE`] files.
pub(crate) fn collect_markdown(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    if depth > MAX_DEPTH || files.len() >= MAX_FILES_PER_TREE {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if hidden {
            continue;
        }
        if path.is_dir() {
            collect_markdown(&path, depth + 1, files);
        } else if path.extension().is_some_and(|e| e == "md") && files.len() < MAX_FILES_PER_TREE {
            files.push(path);
        }
    }
}

/// A definition file's text; a missing file is skipped quietly (a skill folder without
/// SKILL.md), unreadable, oversized or non-UTF-8 files are warned about.
fn read_definition(file: &Path, warnings: &mut Vec<String>) -> Option<String> {
    if !file.exists() {
        return None;
    }
    match read_text_capped(file, MAX_FILE_BYTES) {
        Ok(text) => Some(text),
        Err(e) => {
            warnings.push(format!("{}: skipped, {e}", file.display()));
            None
        }
    }
}

/// Why a definition or plugin file's text could not be read (the caller names the file).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TextFileError {
    #[error("cannot read: {0}")]
    Read(#[from] std::io::Error),
    #[error("larger than {} KiB", limit / 1024)]
    TooLarge { limit: u64 },
    #[error("not UTF-8 text")]
    NotUtf8,
}

/// A UTF-8 text file of at most `limit` bytes; the error says what is wrong with it.
pub(crate) fn read_text_capped(path: &Path, limit: u64) -> Result<String, TextFileError> {
    let meta = std::fs::metadata(path)?;
    if meta.len() > limit {
        return Err(TextFileError::TooLarge { limit });
    }
    let bytes = std::fs::read(path)?;
    String::from_utf8(bytes).map_err(|_| TextFileError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn project_user_subfolders_and_skill_precedence() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("repo");
        let home = tmp.path().join("home");
        let robota_home = tmp.path().join("rhome");
        std::fs::create_dir_all(project.join(".git")).unwrap();
        write(
            &project.join(".claude/commands/review.md"),
            "---\ndescription: Project review\nargument-hint: <file>\n---\nReview $ARGUMENTS",
        );
        write(
            &project.join(".claude/commands/frontend/component.md"),
            "Make a component named $0.\n",
        );
        write(&home.join(".claude/commands/review.md"), "user review");
        write(&home.join(".claude/commands/mine.md"), "# Mine\nmy own");
        write(
            &project.join(".claude/skills/deploy/SKILL.md"),
            "---\nname: deploy\ndescription: Deploys\nallowed-tools: Bash(make deploy:*)\n---\nRun make deploy.",
        );
        write(
            &project.join(".claude/commands/deploy.md"),
            "old deploy command",
        );
        write(
            &project.join(".claude/skills/empty/README.md"),
            "no skill file",
        );
        std::fs::write(project.join(".claude/commands/bin.md"), [0xff, 0xfe]).unwrap();
        let roots = DefinitionRoots::new(&ProjectPaths::new(
            &project,
            Some(home.clone()),
            &robota_home,
        ));
        let found = discover(&roots);
        let get = |n: &str| found.commands.iter().find(|c| c.name == n).cloned();
        let review = get("review").unwrap();
        assert_eq!(review.description, "Project review");
        assert_eq!(review.argument_hint, "<file>");
        assert_eq!(review.origin, Origin::Project);
        assert_eq!(
            get("frontend:component").unwrap().description,
            "Make a component named $0."
        );
        assert_eq!(get("mine").unwrap().source_label(), "user");
        let deploy = get("deploy").unwrap();
        assert_eq!(deploy.kind, DefinitionKind::Skill);
        assert_eq!(deploy.allowed_tools, ["Bash(make deploy:*)"]);
        assert_eq!(
            deploy.skill_dir(),
            Some(project.join(".claude/skills/deploy").as_path())
        );
        assert!(get("empty").is_none());
        assert!(get("bin").is_none());
        assert!(
            found.warnings.iter().any(|w| w.contains("not UTF-8")),
            "{:?}",
            found.warnings
        );
    }

    #[test]
    fn fork_and_invocation_flags() {
        let c = PromptCommand::from_text(
            "---\ncontext: fork\nagent: Explore\ndisable-model-invocation: true\nuser-invocable: no\nmodel: haiku\n---\nx",
            "s".into(),
            DefinitionKind::Skill,
            Origin::User,
            PathBuf::from("/x/s/SKILL.md"),
        );
        assert_eq!(c.fork_agent.as_deref(), Some("Explore"));
        assert!(c.disable_model_invocation);
        assert!(!c.user_invocable);
        assert_eq!(c.model.as_deref(), Some("haiku"));
    }
}
