//! What custom commands, skills and subagents cost (issue 10's figures):
//! - discovering 200 skills, 200 commands and 50 agents from a project's `.claude/`;
//! - the bytes the `Skill` tool's listing adds to every request with 50 skills;
//! - a keystroke in the slash popup with 500 commands: the key handled, the list
//!   filtered, the composer and popup drawn into a 100×30 buffer (target ≤ 2 ms).
//!
//! `cargo bench --bench definitions`. Prints medians and worst cases over repeated runs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use robota::sdk::agents::AgentCatalog;
use robota::sdk::commands::{
    CommandRegistry, DefinitionKind, DefinitionRoots, Origin, PromptCommand,
};
use robota::sdk::skills::listing;
use robota::tui::completion::{CompletionItem, FileIndexer, PromptInput, command_items};
use robota::tui::composer::Composer;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn median(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (samples[samples.len() / 2], samples[samples.len() - 1])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    for i in 0..200 {
        write(
            &project.join(format!(".claude/skills/skill-{i}/SKILL.md")),
            &format!(
                "---\nname: skill-{i}\ndescription: Does task number {i} the way this team does it, with the checks it needs\nallowed-tools: Bash(make:*), Read\n---\n# Skill {i}\n\nStep one.\nStep two.\n"
            ),
        );
        write(
            &project.join(format!(".claude/commands/group-{}/command-{i}.md", i % 10)),
            &format!(
                "---\ndescription: Command {i}\nargument-hint: <target>\n---\nRun command {i} on $ARGUMENTS.\n"
            ),
        );
    }
    for i in 0..50 {
        write(
            &project.join(format!(".claude/agents/agent-{i}.md")),
            &format!(
                "---\nname: agent-{i}\ndescription: Agent {i}\ntools: Read, Grep\n---\nYou are agent {i}.\n"
            ),
        );
    }
    let roots = DefinitionRoots::new(&robota::sdk::ProjectPaths::new(
        &project,
        None,
        dir.path().join("robota-home"),
    ));
    let mut discovery = Vec::new();
    let mut registry = CommandRegistry::default();
    for _ in 0..20 {
        let start = Instant::now();
        registry = CommandRegistry::discover(&roots, true);
        let agents = AgentCatalog::discover(&roots);
        discovery.push(start.elapsed());
        assert_eq!(agents.agents.len(), 53);
    }
    assert_eq!(registry.prompts().len(), 400);
    let (med, worst) = median(discovery);
    println!(
        "discovery of 200 skills + 200 commands + 50 agents: median {:.2} ms, worst {:.2} ms",
        ms(med),
        ms(worst)
    );

    let fifty: Vec<Arc<PromptCommand>> = (0..50)
        .map(|i| {
            Arc::new(PromptCommand::from_text(
                &format!("---\ndescription: Creates release notes for component {i} from the git log since the last tag, grouped by change type\n---\nbody"),
                format!("release-notes-{i}"),
                DefinitionKind::Skill,
                Origin::Project,
                project.join(format!(".claude/skills/release-notes-{i}/SKILL.md")),
            ))
        })
        .collect();
    let text = listing(fifty.iter());
    println!(
        "Skill tool listing with 50 skills (~110-character descriptions): {} bytes",
        text.len()
    );

    let mut items: Vec<CompletionItem> = command_items(registry.entries());
    let extra = 500usize.saturating_sub(items.len());
    items.extend((0..extra).map(|i| CompletionItem::new(format!("extra-{i}"), "filler")));
    items.truncate(500);
    let indexer = FileIndexer::new(&project);
    let mut input = PromptInput::new(Composer::default(), items, indexer);
    let area = Rect::new(0, 0, 100, 30);
    let mut buffer = Buffer::empty(area);
    let mut keystrokes = Vec::new();
    for _ in 0..50 {
        for c in "/skill-1".chars() {
            let start = Instant::now();
            input.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
            let composer = Rect::new(0, 27, 100, 3);
            input.render(composer, &mut buffer);
            input.render_popup(composer, &mut buffer);
            keystrokes.push(start.elapsed());
        }
        for _ in 0.."/skill-1".len() {
            input.handle_key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
        }
    }
    let (med, worst) = median(keystrokes);
    println!(
        "slash popup keystroke with 500 commands (handle + filter + draw): median {:.3} ms, worst {:.3} ms",
        ms(med),
        ms(worst)
    );
}
