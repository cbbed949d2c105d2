//! The narrow allow rules "Yes, don't ask again" offers for a Bash command: one per
//! command that needs approval (at most five), each the command's name and, when it has
//! one, its subcommand, as a prefix rule (`Bash(git push *)`, `Bash(npm run build *)`).
//! Opaque commands get none: no rule could allow them.

use crate::rules::basename;
use crate::shell::{self, Word};

use super::tree::{self, CommandNode};

/// Tools whose second word picks a script to run (`npm run build`).
const SCRIPT_RUNNERS: &[&str] = &["npm", "yarn", "pnpm", "bun"];

pub(crate) fn suggested_rules(command: &str) -> Vec<String> {
    let script = shell::parse(command);
    if !script.opaque.is_empty() {
        return Vec::new();
    }
    let nodes: Vec<CommandNode> = script
        .commands
        .into_iter()
        .filter(|c| !c.words.is_empty())
        .map(|c| tree::build(c.words, c.stdin_fed, 0))
        .collect();
    let mut opaque = false;
    for node in &nodes {
        node.walk(&mut |n| opaque |= !n.opaque.is_empty());
    }
    if opaque {
        return Vec::new();
    }
    let needing: Vec<&CommandNode> = nodes.iter().filter(|n| !super::read_only(n)).collect();
    let chosen = if needing.is_empty() {
        nodes.iter().collect()
    } else {
        needing
    };
    let mut rules: Vec<String> = Vec::new();
    for node in chosen {
        let Some(rule) = rule_for(innermost(node)) else {
            continue;
        };
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    rules.truncate(5);
    rules
}

/// The command a chain of plain wrappers finally runs.
fn innermost(node: &CommandNode) -> &CommandNode {
    match node.wraps.and_then(|i| node.runs.get(i)) {
        Some(child) if node.name().is_some_and(|n| basename(&n) != "xargs") => innermost(child),
        _ => node,
    }
}

/// Commands whose second word names what they do.
const SUBCOMMAND_TOOLS: &[&str] = &[
    "git",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "npx",
    "cargo",
    "go",
    "rustup",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "terraform",
    "gh",
    "glab",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "make",
    "just",
    "mvn",
    "gradle",
    "dotnet",
    "brew",
    "apt",
    "apt-get",
    "systemctl",
    "bundle",
    "rails",
    "rake",
    "mix",
    "composer",
    "swift",
    "flutter",
    "dart",
    "nx",
    "turbo",
];

fn rule_for(node: &CommandNode) -> Option<String> {
    let literal: Vec<String> = node.words.iter().map_while(Word::as_literal).collect();
    let name = literal.first()?;
    let subcommand = |i: usize| {
        literal
            .get(i)
            .filter(|w| !w.starts_with('-') && !w.contains('/'))
    };
    let mut prefix = vec![name.clone()];
    // Only tools built of subcommands keep their second word (`git push`, `npm run
    // build`); for the rest it is an operand (`touch notes.txt` → `Bash(touch *)`).
    let has_subcommands = SUBCOMMAND_TOOLS.contains(&basename(name));
    if has_subcommands && let Some(second) = subcommand(1) {
        prefix.push(second.clone());
        if SCRIPT_RUNNERS.contains(&basename(name))
            && second == "run"
            && let Some(third) = subcommand(2)
        {
            prefix.push(third.clone());
        }
    }
    let prefix = prefix.join(" ");
    Some(if node.words.len() == 1 {
        format!("Bash({prefix})")
    } else {
        format!("Bash({prefix} *)")
    })
}
