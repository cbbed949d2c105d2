//! The built-in session commands run against a session: `/help`, `/clear`, `/model`,
//! `/mode`, `/context` (a bar and a table by category, and the auto-compact threshold),
//! `/cost`, `/rename`. `/compact` runs in the session's driver (it is a provider call).

use std::fmt::Write;

use robota_core::models;
use robota_core::permission::PermissionMode;
use robota_session::Session;
use robota_session::conversation::ContextUsage;

use super::{CommandEntry, CommandError, CommandRegistry, CommandScope};

/// What running a command produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CommandEffect {
    Output(String),
}

/// Runs a built-in command; `Err` says why it failed.
pub(crate) fn execute(
    session: &mut Session,
    registry: &CommandRegistry,
    name: &str,
    args: &str,
) -> Result<CommandEffect, CommandError> {
    let output = match name {
        "help" => help_text(registry),
        "clear" => {
            session
                .clear()
                .map_err(|e| CommandError::ClearedWithoutLog(e.into()))?;
            "Conversation cleared.".to_string()
        }
        "model" if args.is_empty() => format!("Model: {}", session.config().model),
        "model" => {
            let model = models::resolve(args, session.provider_name(), &session.config().model);
            let info = models::lookup(&model);
            session.set_model(model.clone(), info.context_window);
            let provider = session.provider_name();
            if models::foreign_to(&model, provider) {
                format!(
                    "Model set to {model}. Warning: {model} is not one of the {provider} provider's known models; requests to it may fail."
                )
            } else {
                format!("Model set to {model}.")
            }
        }
        "mode" | "permissions" if args.is_empty() => {
            format!("Permission mode: {}", session.mode())
        }
        "mode" | "permissions" => {
            let mode = parse_mode(args)?;
            if let Some(refusal) = session.mode_refusal(mode) {
                return Err(CommandError::ModeRefused(refusal.to_string()));
            }
            session.set_mode(mode);
            mode_set(mode)
        }
        "context" => context_report(
            &session.context_usage(),
            session.compaction().auto_threshold,
        ),
        "cost" => cost_report(session),
        "rename" if args.is_empty() => return Err(CommandError::usage("/rename <name>", None)),
        "rename" => {
            session.rename(args.to_string());
            format!("Session renamed to {args}.")
        }
        "export" => super::export::export(session, args)?,
        _ => return Err(CommandError::ClientOnly(name.to_string())),
    };
    Ok(CommandEffect::Output(output))
}

/// The mode `/mode ARG` names, or an error listing the modes.
pub(crate) fn parse_mode(args: &str) -> Result<PermissionMode, CommandError> {
    PermissionMode::parse(args).ok_or_else(|| CommandError::UnknownMode(args.to_string()))
}

pub(crate) fn mode_set(mode: PermissionMode) -> String {
    format!("Permission mode set to {mode}.")
}

/// `/help`: every command with its argument hint and description, by who runs it.
pub(crate) fn help_text(registry: &CommandRegistry) -> String {
    let entries = registry.entries();
    let mut groups: Vec<(String, Vec<&CommandEntry>)> = vec![
        ("Commands:".to_string(), Vec::new()),
        ("In the full-screen UI:".to_string(), Vec::new()),
    ];
    for entry in &entries {
        let index = match (entry.source.as_str(), entry.scope) {
            ("built-in", CommandScope::Session) => 0,
            ("built-in", CommandScope::Client) => 1,
            (source, _) => {
                let title = format!("From {source} files:");
                match groups.iter().position(|(t, _)| *t == title) {
                    Some(i) => i,
                    None => {
                        groups.push((title, Vec::new()));
                        groups.len() - 1
                    }
                }
            }
        };
        groups[index].1.push(entry);
    }
    let mut out = String::new();
    for (title, group) in groups.iter().filter(|(_, g)| !g.is_empty()) {
        let _ = writeln!(out, "{title}");
        for c in group {
            let usage = format!("/{} {}", c.name, c.argument_hint);
            let _ = writeln!(out, "  {:<28} {}", usage.trim_end(), c.description);
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// Cells of the `/context` bar.
pub(crate) const CONTEXT_BAR_CELLS: usize = 40;

/// `/context`: the total, a bar of [`CONTEXT_BAR_CELLS`] cells with one character per
/// category, a table of tokens and share of the window per category, and where automatic
/// compaction starts (`threshold`, a share of the window; `None`: off).
fn context_report(usage: &ContextUsage, threshold: Option<f64>) -> String {
    let categories = [
        ('█', "System prompt", usage.system_prompt),
        ('▓', "Tools", usage.tools),
        ('▒', "Messages", usage.messages),
        ('░', "Free space", usage.free()),
    ];
    let window = usage.window.max(1);
    let share = |tokens: u64| tokens as f64 * 100.0 / window as f64;
    let mut out = format!(
        "Context: {} of {} tokens ({:.0}%)\n",
        grouped(usage.used()),
        grouped(usage.window),
        share(usage.used())
    );
    let cells = bar_cells(&categories.map(|(_, _, tokens)| tokens), CONTEXT_BAR_CELLS);
    for ((symbol, _, _), n) in categories.iter().zip(cells) {
        out.extend(std::iter::repeat_n(*symbol, n));
    }
    out.push('\n');
    let number_width = categories
        .iter()
        .map(|(_, _, tokens)| grouped(*tokens).len())
        .max()
        .unwrap_or(0);
    for (symbol, name, tokens) in categories {
        let _ = writeln!(
            out,
            "{symbol} {name:<13} {:>number_width$} tokens {:>5.1}%",
            grouped(tokens),
            share(tokens)
        );
    }
    match threshold {
        Some(t) => {
            let _ = write!(
                out,
                "Auto-compact at {:.1}% ({} tokens); /compact [focus] compacts now",
                t * 100.0,
                grouped((t * usage.window as f64) as u64)
            );
        }
        None => out.push_str("Auto-compact: off; /compact [focus] compacts now"),
    }
    out
}

/// Splits `cells` among the amounts in proportion (largest remainders first); an amount
/// above zero gets at least one cell, taken from the largest share.
fn bar_cells(amounts: &[u64], cells: usize) -> Vec<usize> {
    let total: u64 = amounts.iter().sum();
    if total == 0 {
        return vec![0; amounts.len()];
    }
    let exact: Vec<f64> = amounts
        .iter()
        .map(|a| *a as f64 * cells as f64 / total as f64)
        .collect();
    let mut counts: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
    let mut by_remainder: Vec<usize> = (0..amounts.len()).collect();
    by_remainder.sort_by(|a, b| {
        (exact[*b] - exact[*b].floor()).total_cmp(&(exact[*a] - exact[*a].floor()))
    });
    let missing = cells.saturating_sub(counts.iter().sum());
    for &i in by_remainder.iter().take(missing) {
        counts[i] += 1;
    }
    for i in 0..amounts.len() {
        if amounts[i] > 0 && counts[i] == 0 {
            let largest = (0..counts.len()).max_by_key(|j| counts[*j]).unwrap_or(i);
            if counts[largest] > 1 {
                counts[largest] -= 1;
                counts[i] = 1;
            }
        }
    }
    counts
}

/// `1234567` → `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn cost_report(session: &Session) -> String {
    let mut out = String::new();
    let mut total = Some(0.0);
    for (model, usage) in session.usage_by_model() {
        let cost = models::lookup(&model).price.map(|p| p.cost(&usage));
        total = total.zip(cost).map(|(a, b)| a + b);
        let _ = writeln!(
            out,
            "{model}: {} input, {} output, {} cache read, {} cache write tokens — {}",
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens,
            cost.map_or("cost unknown".to_string(), |c| format!("${c:.4}"))
        );
    }
    match total {
        _ if out.is_empty() => "No API usage yet.".to_string(),
        Some(t) => format!("{out}Total: ${t:.4}"),
        None => format!("{out}Total: unknown (a model's price is not known)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use robota_core::permission::PermissionPolicy;
    use robota_core::{
        AssistantTurn, Message, Provider, ProviderError, ProviderRequest, StreamSink, ToolRegistry,
    };
    use robota_session::SessionConfig;
    use tokio_util::sync::CancellationToken;

    /// A provider that is never called.
    struct Unused;

    #[async_trait::async_trait]
    impl Provider for Unused {
        fn name(&self) -> &str {
            "unused"
        }
        async fn stream(
            &self,
            _request: &ProviderRequest,
            _events: StreamSink<'_>,
            _cancel: &CancellationToken,
        ) -> Result<AssistantTurn, ProviderError> {
            unreachable!("the tests never run a turn")
        }
    }

    fn session_with_history(history: Vec<Message>) -> Session {
        let cwd = std::env::temp_dir();
        let config = SessionConfig {
            session_id: "s".into(),
            cwd: cwd.clone(),
            model: "m".into(),
            system_prompt: "s".repeat(4_000),
            max_tokens: 1000,
            thinking_budget: None,
            max_rounds: None,
            context_window: 20_000,
            env: Vec::new(),
            interactive: true,
            server_tools: Vec::new(),
        };
        let tools = ToolRegistry::new(robota_tools::default_tools(&cwd));
        Session::new(
            config,
            Arc::new(Unused),
            tools,
            PermissionPolicy::default(),
            None,
        )
        .with_history(history, None)
    }

    #[test]
    fn context_report_shows_a_bar_and_each_category() {
        let usage = ContextUsage {
            system_prompt: 3_000,
            tools: 5_000,
            messages: 12_000,
            window: 200_000,
        };
        let expected = [
            "Context: 20,000 of 200,000 tokens (10%)",
            &format!("█▓▒▒{}", "░".repeat(36)),
            "█ System prompt   3,000 tokens   1.5%",
            "▓ Tools           5,000 tokens   2.5%",
            "▒ Messages       12,000 tokens   6.0%",
            "░ Free space    180,000 tokens  90.0%",
            "Auto-compact at 83.5% (167,000 tokens); /compact [focus] compacts now",
        ]
        .join("\n");
        assert_eq!(context_report(&usage, Some(0.835)), expected);
        assert!(
            context_report(&usage, None)
                .ends_with("\nAuto-compact: off; /compact [focus] compacts now")
        );
    }

    #[test]
    fn context_of_a_session_with_history() {
        let history = vec![
            Message::user_text("a".repeat(8_000)),
            Message::new(
                robota_core::Role::Assistant,
                vec![robota_core::Block::text("b".repeat(3_984))],
            ),
        ];
        let mut session = session_with_history(history);
        let usage = session.context_usage();
        assert_eq!(usage.system_prompt, 1_000);
        assert!(usage.tools > 500, "seven tool schemas: {}", usage.tools);
        // (8,000 + 16) + (3,984 + 16) characters of messages.
        assert_eq!(usage.messages, 3_004);
        assert_eq!(usage.used(), session.context_estimate());
        let Ok(CommandEffect::Output(report)) =
            execute(&mut session, &CommandRegistry::default(), "context", "")
        else {
            panic!("/context runs");
        };
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines.len(), 7, "{report}");
        assert!(lines[6].starts_with("Auto-compact at 83.5% "), "{report}");
        assert!(lines[0].starts_with("Context: "), "{report}");
        assert_eq!(lines[1].chars().count(), CONTEXT_BAR_CELLS);
        assert!(
            lines[4] == "▒ Messages       3,004 tokens  15.0%",
            "{report}"
        );
        for symbol in ['█', '▓', '▒', '░'] {
            assert!(lines[1].contains(symbol), "{report}");
        }
    }

    #[test]
    fn bar_cells_add_up_and_keep_small_shares_visible() {
        assert_eq!(bar_cells(&[1, 0, 2, 997], 40), [1, 0, 1, 38]);
        assert_eq!(bar_cells(&[1, 1, 1, 1], 40), [10, 10, 10, 10]);
        assert_eq!(bar_cells(&[0, 0, 0, 0], 40), [0, 0, 0, 0]);
        let over = bar_cells(&[50, 50, 150, 0], 40);
        assert_eq!(over.iter().sum::<usize>(), 40);
        assert_eq!(over[3], 0);
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(999), "999");
    }
}
