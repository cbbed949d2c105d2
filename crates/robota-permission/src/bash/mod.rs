//! The decision for a Bash call. The command line is parsed into every simple command it
//! would run (`tree` adds what wrappers and `find -exec` run, `opacity` what cannot be
//! read statically), with the files each reads and writes (`readonly`). Then:
//!
//! 1. deny — a deny rule surely matching any command (or a file rule surely matching a
//!    file it touches) denies the whole line;
//! 2. ask — a deny rule that *might* match, anything opaque while a deny or ask rule
//!    exists for Bash (in every mode), or an ask rule that matches or might;
//! 3. allow — a whole-tool `Bash` allow rule allows the line (as in Claude Code: whatever
//!    it writes or runs, once no deny or ask rule and no protected file stopped it above;
//!    in plan mode its writes are still refused);
//!    otherwise every command allowed by an allow rule, by the read-only set (its files
//!    inside the working directories) or by `acceptEdits` (simple file commands inside
//!    them), and every file written allowed as an Edit of that path would be;
//! 4. the mode: bypass allows, plan denies, the others ask.

mod analysis;
mod file_args;
mod getopt;
mod git_config;
mod git_globals;
mod git_history;
mod kernel_guard;
mod opacity;
mod programs;
mod readonly;
mod session_files;
mod suggest;
mod tree;
mod wrappers;

use crate::DENIED_BY_RULE;
use crate::pattern::Pattern;
use crate::rules::{Compiled, PermissionRule, RuleList, basename};
use crate::shell::{Piece, Word};
use crate::targets::Certainty;
use crate::{CallFacts, PermissionMode, PermissionPolicy, Verdict, parameter_matches};

use analysis::{Access, Analysis};
use file_args::FileUse;
use tree::CommandNode;

pub use kernel_guard::REMOVING_PROGRAMS;
pub(super) use suggest::suggested_rules;

/// The Bash line of `call` as every judgement of it reads it: its text, the path context
/// and its analysis, in which a file changed this session that the line runs (a makefile,
/// a script) makes it opaque.
fn read_line<'p>(
    policy: &'p PermissionPolicy,
    call: &CallFacts<'p>,
) -> (&'p str, crate::paths::PathContext<'p>, Analysis) {
    let command = call
        .argument
        .or_else(|| call.input_str("command"))
        .unwrap_or("");
    let ctx = policy.path_context(call);
    let mut analysis = Analysis::of(command, call.shell_dir.unwrap_or(call.cwd), &ctx);
    if let Some(start) = policy.session_start {
        analysis.check_session_files(start);
    }
    (command, ctx, analysis)
}

pub(super) fn evaluate(policy: &PermissionPolicy, call: &CallFacts<'_>) -> Verdict {
    let (command, ctx, analysis) = read_line(policy, call);
    let line = JudgedLine::new(policy, call, command, analysis, ctx);
    // 1. Deny, 2. ask, 3. allow, 4. the mode.
    if let Some(verdict) = line.sure_denial().or_else(|| line.asked()) {
        return verdict;
    }
    let (commands_allowed, writes_allowed) = line.allowed();
    if commands_allowed && writes_allowed {
        return Verdict::Allow;
    }
    match policy.mode {
        PermissionMode::BypassPermissions => Verdict::Allow,
        PermissionMode::Plan => Verdict::Deny {
            reason: "plan mode is read-only".to_string(),
        },
        mode => Verdict::Ask {
            reason: if writes_allowed {
                format!("Bash needs approval in {mode} mode")
            } else {
                "the command writes files that need approval".to_string()
            },
        },
    }
}

/// What the kernel's confinement of the Bash line may grant or withhold beyond the
/// policy's paths (see `kernel_guard` and `git_config`).
pub(super) fn kernel_terms(policy: &PermissionPolicy, call: &CallFacts<'_>) -> crate::KernelTerms {
    let (_, _, analysis) = read_line(policy, call);
    let deny: Vec<&PermissionRule> = policy
        .deny
        .iter()
        .filter(|r| r.applies_to("Bash", RuleList::Deny))
        .collect();
    // Opaque code, or a copy of a denied program, under a rule naming a removing program.
    let no_removal = deny.iter().any(|r| kernel_guard::names_removing_program(r))
        && (!analysis.opaque.is_empty()
            || names_denied_program(&analysis, deny.into_iter()).is_some());
    crate::KernelTerms {
        no_removal,
        git_config_writable: git_config::only_config_writers(&analysis),
    }
}

/// A Bash line as the rules see it: its analysis, the deny and ask rules naming Bash, and
/// how the deny rules match its commands and files.
struct JudgedLine<'a> {
    policy: &'a PermissionPolicy,
    call: &'a CallFacts<'a>,
    command: &'a str,
    analysis: Analysis,
    ctx: crate::paths::PathContext<'a>,
    texts: MatchTexts,
    deny: Vec<&'a PermissionRule>,
    ask: Vec<&'a PermissionRule>,
    denied_commands: Vec<(&'a PermissionRule, Option<Certainty>)>,
    /// For each file access (by index), the deny rule catching it.
    denied_files: Vec<Option<(&'a PermissionRule, Certainty)>>,
    /// The kernel confines the call (the sandbox or the filesystem-only confinement).
    kernel_confines: bool,
    /// The kernel stands in for every Bash rule (`kernel_guard`): opaque code runs.
    kernel_stands_in: bool,
}

impl<'a> JudgedLine<'a> {
    fn new(
        policy: &'a PermissionPolicy,
        call: &'a CallFacts<'a>,
        command: &'a str,
        analysis: Analysis,
        ctx: crate::paths::PathContext<'a>,
    ) -> Self {
        let texts = MatchTexts::of(&analysis);
        let deny: Vec<&PermissionRule> = policy
            .deny
            .iter()
            .filter(|r| r.applies_to("Bash", RuleList::Deny))
            .collect();
        let ask: Vec<&PermissionRule> = policy
            .ask
            .iter()
            .filter(|r| r.applies_to("Bash", RuleList::Ask))
            .collect();
        let denied_commands = deny
            .iter()
            .map(|rule| (*rule, command_rule_match(rule, call, &texts)))
            .collect();
        let denied_files = analysis
            .accesses
            .iter()
            .map(|access| file_rule(&policy.deny, access, &ctx, RuleList::Deny))
            .collect();
        let kernel_confines =
            policy.confinement(command, call.input) != crate::Confinement::Unconfined;
        let kernel_stands_in = kernel_guard::kernel_stands_in(
            // Withholding the remove rights is the Landlock backend's (Linux).
            policy.sandbox.files_guard && kernel_confines,
            &deny,
            &ask,
        );
        JudgedLine {
            policy,
            call,
            command,
            analysis,
            ctx,
            texts,
            deny,
            ask,
            denied_commands,
            denied_files,
            kernel_confines,
            kernel_stands_in,
        }
    }

    /// The deny rules that surely catch a command or a file of the line.
    fn sure_denial(&self) -> Option<Verdict> {
        if let Some((rule, _)) = self
            .denied_commands
            .iter()
            .find(|(_, c)| *c == Some(Certainty::Sure))
        {
            return Some(Verdict::Deny {
                reason: format!("{DENIED_BY_RULE} {rule}"),
            });
        }
        for (access, hit) in self.analysis.accesses.iter().zip(&self.denied_files) {
            if let Some((rule, Certainty::Sure)) = hit {
                return Some(Verdict::Deny {
                    reason: format!("{DENIED_BY_RULE} {rule} ({})", access.target.describe()),
                });
            }
        }
        let start_dir = self.call.shell_dir.unwrap_or(self.call.cwd);
        git_history::reached(&self.analysis, &self.policy.git_tracked_denied, start_dir).map(
            |(sub, path)| {
                let shown = path.strip_prefix(start_dir).unwrap_or(&path).display();
                Verdict::Deny {
                    reason: format!(
                        "git {sub} can print {shown} from git's history or index, and a Read deny rule denies that file: limit the command to other paths (`-- src/`) or exclude it (`':!{shown}'`)"
                    ),
                }
            },
        )
    }

    /// What asks: the protected files first (in every mode), then the rules.
    fn asked(&self) -> Option<Verdict> {
        for access in self
            .analysis
            .accesses
            .iter()
            .filter(|a| a.use_ == FileUse::Write)
        {
            if let Some(verdict) = self.policy.guard_write(&access.target, "Edit", &self.ctx) {
                return Some(verdict);
            }
        }
        if let Some(verdict) = git_config::config_writes(
            &self.analysis,
            self.policy,
            self.call.shell_dir.unwrap_or(self.call.cwd),
            &self.ctx,
        ) {
            return Some(verdict);
        }
        if !self.analysis.opaque.is_empty()
            && let Some(word) = self.policy.protected.named_in(self.command)
        {
            return Some(Verdict::Ask {
                reason: format!(
                    "the command names {word}, which is protected, and cannot be checked before it runs"
                ),
            });
        }
        if let Some((rule, _)) = self.denied_commands.iter().find(|(_, c)| c.is_some()) {
            return Some(Verdict::Ask {
                reason: format!("the command might run what rule {rule} denies"),
            });
        }
        for (access, hit) in self.analysis.accesses.iter().zip(&self.denied_files) {
            if let Some((rule, certainty)) = hit
                && !(self.kernel_confines
                    && *certainty == Certainty::Possible
                    && kernel_guard::hidden_by_kernel(rule))
            {
                return Some(Verdict::Ask {
                    reason: format!(
                        "{} might be what rule {rule} denies",
                        access.target.describe()
                    ),
                });
            }
        }
        if let Some(reason) = self.analysis.opaque.first()
            && (!self.kernel_stands_in
                || kernel_guard::text_names_program(self.command, &self.deny))
            && (!self.deny.is_empty() || !self.ask.is_empty())
        {
            return Some(Verdict::Ask {
                reason: format!(
                    "the command cannot be checked against the rules before it runs: {reason}"
                ),
            });
        }
        if let Some(rule) =
            names_denied_program(&self.analysis, self.deny.iter().chain(&self.ask).copied())
            && !self.kernel_stands_in
        {
            return Some(Verdict::Ask {
                reason: format!("the command copies or links a program that rule {rule} names"),
            });
        }
        for rule in &self.ask {
            if command_rule_match(rule, self.call, &self.texts).is_some() {
                return Some(Verdict::Ask {
                    reason: format!("rule {rule} asks"),
                });
            }
        }
        for access in &self.analysis.accesses {
            if let Some((rule, _)) = file_rule(&self.policy.ask, access, &self.ctx, RuleList::Ask) {
                return Some(Verdict::Ask {
                    reason: format!("rule {rule} asks ({})", access.target.describe()),
                });
            }
        }
        None
    }

    /// Whether allow rules, read-only commands or the mode allow every command of the
    /// line, and whether every file its redirections write is allowed.
    fn allowed(&self) -> (bool, bool) {
        let policy = self.policy;
        let ctx = &self.ctx;
        let analysis = &self.analysis;
        let bare_allow = policy
            .allow
            .iter()
            .any(|r| r.specifier.is_none() && r.names_tool("Bash", RuleList::Allow));
        // Plan mode stays read-only: there the rule allows commands, never their writes.
        if bare_allow && policy.mode != PermissionMode::Plan {
            return (true, true);
        }
        let allow: Vec<&Pattern> = policy
            .allow
            .iter()
            .filter_map(|r| match r.compiled() {
                Compiled::Command(p) if r.names_tool("Bash", RuleList::Allow) => {
                    Some(&p.as_written)
                }
                _ => None,
            })
            .collect();
        let file_allowed = |access: &Access| {
            access.target.inside(ctx.working_dirs())
                && match access.use_ {
                    FileUse::Read => true,
                    FileUse::Write => matches!(
                        policy.mode,
                        PermissionMode::AcceptEdits | PermissionMode::BypassPermissions
                    ),
                }
                || file_rule(&policy.allow, access, ctx, RuleList::Allow).is_some()
        };
        // A command an allow rule names still asks when a file it names may lie outside the
        // working directories (`Bash(rm:*)` and `rm ~/notes.txt`), unless a file rule allows it.
        let stays_inside = |access: &Access| {
            access.target.inside(ctx.working_dirs())
                || file_rule(&policy.allow, access, ctx, RuleList::Allow).is_some()
        };
        let commands_allowed = analysis.opaque.is_empty()
            && analysis.commands.iter().all(|command| {
                let tree = &command.tree;
                let accesses = &analysis.accesses[command.accesses.clone()];
                let by_rule = command.safe_assignments
                    && (bare_allow
                        || (allowed_by_rule(tree, &allow) && accesses.iter().all(stays_inside)));
                let reads_allowed = accesses
                    .iter()
                    .filter(|a| a.use_ == FileUse::Read)
                    .all(file_allowed);
                let writes_files = accesses
                    .iter()
                    .any(|a| a.use_ == FileUse::Write && !a.redirect);
                let read_only = read_only(tree) && reads_allowed && !writes_files;
                let simple_edit = policy.mode == PermissionMode::AcceptEdits
                    && accept_edits(tree)
                    && accesses.iter().all(file_allowed);
                by_rule || read_only || simple_edit
            });
        let writes_allowed = analysis
            .accesses
            .iter()
            .filter(|a| a.use_ == FileUse::Write && a.redirect)
            .all(file_allowed);
        (commands_allowed, writes_allowed)
    }
}

/// Every command node of the line with its three match texts.
struct MatchTexts {
    /// (as written, name reduced to its basename, look-alike-folded)
    nodes: Vec<(Vec<Piece>, Vec<Piece>, Vec<Piece>)>,
}

impl MatchTexts {
    fn of(analysis: &Analysis) -> Self {
        let mut nodes = Vec::new();
        for command in &analysis.commands {
            command.tree.walk(&mut |node| {
                if !node.words.is_empty() {
                    nodes.push(texts_of(node));
                }
            });
        }
        MatchTexts { nodes }
    }
}

fn texts_of(node: &CommandNode) -> (Vec<Piece>, Vec<Piece>, Vec<Piece>) {
    let Some((name, args)) = node.words.split_first() else {
        return Default::default();
    };
    let rest: Vec<Piece> = args
        .iter()
        .flat_map(|w| std::iter::once(Piece::Lit(' ')).chain(w.pieces.iter().copied()))
        .collect();
    let by_name: Vec<Piece> = match name.as_literal() {
        Some(full) => basename(&full).chars().map(Piece::Lit).collect(),
        None => {
            let last_slash = name.pieces.iter().rposition(|p| *p == Piece::Lit('/'));
            name.pieces[last_slash.map_or(0, |i| i + 1)..].to_vec()
        }
    };
    let fold = |p: Piece, lower: bool| match p {
        Piece::Lit(c) if !c.is_ascii() || c.is_ascii_control() => Piece::Any,
        Piece::Lit(c) if lower => Piece::Lit(c.to_ascii_lowercase()),
        other => other,
    };
    let written: Vec<Piece> = name
        .pieces
        .iter()
        .copied()
        .chain(rest.iter().copied())
        .collect();
    let folded: Vec<Piece> = by_name
        .iter()
        .map(|p| fold(*p, true))
        .chain(rest.iter().map(|p| fold(*p, false)))
        .collect();
    let by_name: Vec<Piece> = by_name.into_iter().chain(rest).collect();
    (written, by_name, folded)
}

/// How a Bash-naming deny/ask rule matches the line: surely (some command surely matches)
/// or possibly.
fn command_rule_match(
    rule: &PermissionRule,
    call: &CallFacts<'_>,
    texts: &MatchTexts,
) -> Option<Certainty> {
    match rule.compiled() {
        Compiled::Bare => Some(Certainty::Sure),
        Compiled::Parameter { key, value } => {
            parameter_matches(call.input, key, value).then_some(Certainty::Sure)
        }
        Compiled::Command(patterns) => {
            if texts
                .nodes
                .iter()
                .any(|(_, by_name, _)| patterns.by_name.surely(by_name))
            {
                Some(Certainty::Sure)
            } else if texts.nodes.iter().any(|(_, by_name, folded)| {
                patterns.by_name.possibly(by_name) || patterns.folded.possibly(folded)
            }) {
                Some(Certainty::Possible)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The first rule of `rules` catching a file access (deny/ask: surely or possibly).
fn file_rule<'r>(
    rules: &'r [PermissionRule],
    access: &Access,
    ctx: &crate::paths::PathContext<'_>,
    list: RuleList,
) -> Option<(&'r PermissionRule, Certainty)> {
    let tool = match access.use_ {
        FileUse::Read => "Read",
        FileUse::Write => "Edit",
    };
    let mut possible = None;
    for rule in rules
        .iter()
        .filter(|r| r.specifier.is_some() && r.applies_to(tool, list))
    {
        match access.target.rule_match(rule, ctx, list) {
            Some(Certainty::Sure) => return Some((rule, Certainty::Sure)),
            Some(Certainty::Possible) => {
                possible.get_or_insert((rule, Certainty::Possible));
            }
            None => {}
        }
    }
    if list == RuleList::Allow {
        None
    } else {
        possible
    }
}

/// An allow rule matches the command, or the one command it merely wraps.
fn allowed_by_rule(node: &CommandNode, allow: &[&Pattern]) -> bool {
    if !node.opaque.is_empty() || node.words.is_empty() {
        return false;
    }
    let (written, _, _) = texts_of(node);
    allow.iter().any(|p| p.surely(&written))
        || node
            .wraps
            .and_then(|i| node.runs.get(i))
            .is_some_and(|child| allowed_by_rule(child, allow))
}

/// The command and everything it runs only read.
fn read_only(node: &CommandNode) -> bool {
    let Some(name) = node.name() else {
        return node.words.is_empty();
    };
    node.opaque.is_empty()
        && readonly::own_read_only(basename(&name), &node.words)
        && node.runs.iter().all(read_only)
}

/// The command is one of the simple file commands `acceptEdits` runs, or read-only.
fn accept_edits(node: &CommandNode) -> bool {
    node.opaque.is_empty()
        && node
            .name()
            .is_some_and(|n| readonly::ACCEPT_EDITS.contains(&basename(&n)))
        || read_only(node)
}

/// `cp /bin/rm ./x`, `ln -s /bin/rm x`: a program a rule names, put under another name.
fn names_denied_program<'r>(
    analysis: &Analysis,
    rules: impl Iterator<Item = &'r PermissionRule>,
) -> Option<&'r PermissionRule> {
    const COPIERS: &[&str] = &["cp", "ln", "install", "mv", "rsync", "cat", "dd", "tee"];
    let mut names: Vec<Vec<Piece>> = Vec::new();
    for command in &analysis.commands {
        command.tree.walk(&mut |node| {
            if node.name().is_some_and(|n| COPIERS.contains(&basename(&n))) {
                for word in &node.words[1..] {
                    let text = word.display();
                    let text = text.strip_prefix("if=").unwrap_or(&text);
                    if text.contains('/') {
                        names.push(Word::literal(basename(text)).pieces);
                    }
                }
            }
        });
    }
    if names.is_empty() {
        return None;
    }
    rules.into_iter().find(|rule| match rule.compiled() {
        Compiled::Command(p) => names
            .iter()
            .any(|n| p.folded.possibly(n) || p.by_name.possibly(n)),
        _ => false,
    })
}

#[cfg(test)]
mod tests;
