//! Subagent definitions: the built-in `general-purpose`, `Explore` and `Plan`, and Claude
//! Code's Markdown agents (`.robota/agents`, `.claude/agents` in the project, then the
//! user's) — frontmatter `name`, `description`, `tools` (a list or a comma string; `Task`
//! means `Agent`), `disallowedTools`, `model` (`sonnet`/`opus`/`haiku`/`inherit` or an id),
//! `maxTurns`; the body is the subagent's system prompt. Identity is the `name`; a file
//! without `name` or `description` is skipped, as Claude Code does. A custom definition
//! replaces a built-in of the same name; the project's win over the user's.

use std::path::{Path, PathBuf};

use crate::commands::{DefinitionRoots, Origin};
use crate::frontmatter::Document;

/// One kind of subagent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    /// The name the `Agent` tool's `subagent_type` picks it by.
    pub name: String,
    /// When to use it, as the model reads it in the `Agent` tool's description.
    pub description: String,
    /// The tools it may use (`None`: every tool of its parent but `Agent`).
    pub tools: Option<Vec<String>>,
    /// Tools taken away from what `tools` allows (`disallowedTools`).
    pub disallowed_tools: Vec<String>,
    /// An alias or id; `None` or `inherit`: the parent's model.
    pub model: Option<String>,
    /// At most this many rounds of tool calls.
    pub max_turns: Option<u32>,
    /// Its system prompt (the environment and context files follow it).
    pub prompt: String,
    /// `built-in`, `project`, `user`, `plugin:x`.
    pub source: String,
    /// The Markdown file it was read from; `None` for a built-in.
    pub path: Option<PathBuf>,
}

/// The read-only tools `Explore` and `Plan` get.
const READ_ONLY_TOOLS: &[&str] = &["Glob", "Grep", "Read", "WebFetch", "WebSearch"];

fn builtin(
    name: &str,
    description: &str,
    tools: Option<&[&str]>,
    model: Option<&str>,
    prompt: &str,
) -> AgentDefinition {
    AgentDefinition {
        name: name.to_string(),
        description: description.to_string(),
        tools: tools.map(|t| t.iter().map(|s| s.to_string()).collect()),
        disallowed_tools: Vec::new(),
        model: model.map(str::to_string),
        max_turns: None,
        prompt: prompt.to_string(),
        source: "built-in".to_string(),
        path: None,
    }
}

/// The built-in agents, as Claude Code ships them.
pub fn builtins() -> Vec<AgentDefinition> {
    vec![
        builtin(
            "general-purpose",
            "General-purpose agent for researching complex questions, searching for code, and executing multi-step tasks. Use it when a search or a task needs several rounds of looking around.",
            None,
            None,
            "You are an agent working for another agent. Do the task you are given completely, using the tools you have; do not ask questions back.",
        ),
        builtin(
            "Explore",
            "Fast read-only agent for exploring a codebase: finding files by pattern, searching code for keywords, answering questions about how the code works. Say how thorough it should be (quick, medium, very thorough).",
            Some(READ_ONLY_TOOLS),
            Some("haiku"),
            "You are a fast, read-only code explorer working for another agent. Search and read to answer the question you are given; never change anything. Report file paths with line numbers.",
        ),
        builtin(
            "Plan",
            "Read-only software architect agent: explores the code and designs an implementation plan (steps, files to change, trade-offs) without changing anything.",
            Some(READ_ONLY_TOOLS),
            None,
            "You are a read-only planning agent working for another agent. Explore the code as needed and return a concrete implementation plan: the steps, the files to change and why, and the risks. Never change anything.",
        ),
    ]
}

/// What discovery found: the definitions (built-ins replaced by custom ones of the same
/// name) and the files that could not be used.
#[derive(Debug, Default, Clone)]
pub struct AgentCatalog {
    /// The usable definitions: the built-ins not replaced, then the custom ones.
    pub agents: Vec<AgentDefinition>,
    /// One line per file that could not be used: its path and why.
    pub warnings: Vec<String>,
}

impl AgentCatalog {
    /// Drops the definitions whose file `denied` says may not be read, with a warning for
    /// each.
    pub fn leave_out(&mut self, denied: impl Fn(&Path) -> bool) {
        let warnings = &mut self.warnings;
        self.agents.retain(|agent| match &agent.path {
            Some(path) if denied(path) => {
                warnings.push(format!(
                    "{}: left out, a Read deny rule covers it (or where it links to)",
                    path.display()
                ));
                false
            }
            _ => true,
        });
    }

    /// The built-ins and the definitions under `roots`.
    pub fn discover(roots: &DefinitionRoots) -> AgentCatalog {
        let mut catalog = AgentCatalog::default();
        let mut custom: Vec<AgentDefinition> = Vec::new();
        for (folder, origin) in roots.folders("agents") {
            for definition in read_folder(&folder, &origin, &mut catalog.warnings) {
                if !custom.iter().any(|d| d.name == definition.name) {
                    custom.push(definition);
                }
            }
        }
        let mut agents: Vec<AgentDefinition> = builtins()
            .into_iter()
            .filter(|b| !custom.iter().any(|c| c.name == b.name))
            .collect();
        agents.extend(custom);
        catalog.agents = agents;
        catalog
    }

    /// Adds the agents a driving program defines (the Agent SDK's `agents`:
    /// `{name: {description, prompt, tools?, model?}}`), replacing any of the same name;
    /// an entry without a description or prompt is skipped with a warning.
    pub(crate) fn add_program_agents(
        &mut self,
        agents: &serde_json::Map<String, serde_json::Value>,
    ) {
        for (name, value) in agents {
            let text = |key: &str| value.get(key).and_then(serde_json::Value::as_str);
            let (Some(description), Some(prompt)) = (text("description"), text("prompt")) else {
                self.warnings.push(format!(
                    "agent {name:?} from the program has no description or prompt; skipped"
                ));
                continue;
            };
            let tools = value
                .get("tools")
                .and_then(serde_json::Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(serde_json::Value::as_str)
                        .map(|t| {
                            if t == "Task" {
                                "Agent".to_string()
                            } else {
                                t.to_string()
                            }
                        })
                        .collect()
                });
            let definition = AgentDefinition {
                name: name.clone(),
                description: description.to_string(),
                tools,
                disallowed_tools: Vec::new(),
                model: text("model").map(str::to_string),
                max_turns: None,
                prompt: prompt.to_string(),
                source: "sdk".to_string(),
                path: None,
            };
            self.agents.retain(|a| a.name != *name);
            self.agents.push(definition);
        }
    }

    /// Adds a plugin's agents (named `plugin:agent`) after the others; a name already
    /// defined keeps its first definition.
    pub(crate) fn add_plugin_agents(&mut self, agents: Vec<AgentDefinition>) {
        for agent in agents {
            if self.find(&agent.name).is_none() {
                self.agents.push(agent);
            }
        }
    }

    /// The definition named `name` (exact match), if any.
    pub fn find(&self, name: &str) -> Option<&AgentDefinition> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// The names of all definitions, in catalog order.
    pub fn names(&self) -> Vec<&str> {
        self.agents.iter().map(|a| a.name.as_str()).collect()
    }
}

/// The definitions of one `agents` folder (subfolders included).
pub(crate) fn read_folder(
    folder: &Path,
    origin: &Origin,
    warnings: &mut Vec<String>,
) -> Vec<AgentDefinition> {
    let mut files = Vec::new();
    crate::commands::definition::collect_markdown(folder, 0, &mut files);
    files.sort();
    files
        .into_iter()
        .filter_map(|file| {
            let text = match std::fs::read_to_string(&file) {
                Ok(text) => text,
                Err(e) => {
                    warnings.push(format!("{}: cannot read: {e}", file.display()));
                    return None;
                }
            };
            parse(&text, origin, &file)
        })
        .collect()
}

/// One definition file; `None` without a `name` and a `description`.
pub fn parse(text: &str, origin: &Origin, path: &Path) -> Option<AgentDefinition> {
    let doc = Document::parse(text);
    let name = doc.text("name")?;
    let description = doc.text("description")?;
    let tools = doc.fields.contains_key("tools").then(|| {
        doc.list("tools")
            .into_iter()
            .map(|t| if t == "Task" { "Agent".to_string() } else { t })
            .collect()
    });
    Some(AgentDefinition {
        name,
        description,
        tools,
        disallowed_tools: doc.list("disallowedTools"),
        model: doc.text("model"),
        max_turns: doc.text("maxTurns").and_then(|n| n.parse().ok()),
        prompt: doc.body.trim().to_string(),
        source: origin.label(),
        path: Some(path.to_path_buf()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_definitions_replace_builtins_and_bad_files_are_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("p");
        let agents = project.join(".claude/agents");
        std::fs::create_dir_all(agents.join("sub")).unwrap();
        std::fs::write(
            agents.join("reviewer.md"),
            "---\nname: code-reviewer\ndescription: Reviews diffs\ntools: Read, Grep, Task\nmodel: inherit\nmaxTurns: 7\n---\nYou review code.\n",
        )
        .unwrap();
        std::fs::write(
            agents.join("sub/explore.md"),
            "---\nname: Explore\ndescription: My explorer\n---\nExplore my way.",
        )
        .unwrap();
        std::fs::write(agents.join("broken.md"), "no frontmatter at all").unwrap();
        let roots = DefinitionRoots::new(&crate::paths::ProjectPaths::new(
            &project,
            None,
            tmp.path().join("rh"),
        ));
        let catalog = AgentCatalog::discover(&roots);
        assert_eq!(
            catalog.names(),
            ["general-purpose", "Plan", "code-reviewer", "Explore"]
        );
        let reviewer = catalog.find("code-reviewer").unwrap();
        assert_eq!(
            reviewer.tools.as_deref(),
            Some(&["Read".to_string(), "Grep".into(), "Agent".into()][..])
        );
        assert_eq!(reviewer.max_turns, Some(7));
        assert_eq!(reviewer.prompt, "You review code.");
        assert_eq!(catalog.find("Explore").unwrap().source, "project");
    }
}
