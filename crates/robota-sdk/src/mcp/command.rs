//! `/mcp`: each server with its status, transport, tool count and last error (a server
//! that wants credentials says what to do), and `/mcp reconnect <name>`.

use std::fmt::Write;
use std::sync::Arc;

use super::error::McpError;
use super::manager::{McpManager, ServerReport, ServerStatus};
use crate::commands::CommandError;

/// Runs `/mcp [reconnect <name>]`; `Err` says what went wrong.
pub async fn run(manager: Option<&Arc<McpManager>>, args: &str) -> Result<String, CommandError> {
    let mut words = args.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (None, _, _) => Ok(match manager {
            Some(m) if !m.is_empty() => waiting_text(m) + &status_text(&m.reports()),
            Some(m) if !m.waiting_for_trust().is_empty() => waiting_text(m),
            _ => NO_SERVERS.to_string(),
        }),
        (Some("reconnect"), Some(name), None) => {
            let manager = manager
                .filter(|m| !m.is_empty())
                .ok_or(McpError::NoServers)?;
            let report = manager.reconnect(name).await?;
            Ok(format!("Reconnected {name}: {}", line(&report)))
        }
        (Some("reconnect"), _, _) => Err(CommandError::usage("/mcp reconnect <server name>", None)),
        (Some(other), _, _) => Err(CommandError::UnknownArgument {
            command: "mcp",
            given: other.to_string(),
            usage: "/mcp or /mcp reconnect <name>",
        }),
    }
}

pub(super) const NO_SERVERS: &str = "No MCP servers are configured. Add them to .mcp.json in the project, to \"mcpServers\" in a settings file or ~/.claude.json, or pass --mcp-config.";

/// The project's servers that were not started because the directory is not trusted.
fn waiting_text(manager: &McpManager) -> String {
    manager
        .waiting_for_trust()
        .iter()
        .map(|servers| format!("Not started until you trust this directory ({servers}): run `robota trust` and start robota again.\n"))
        .collect()
}

/// The listing `/mcp` prints.
pub(crate) fn status_text(reports: &[ServerReport]) -> String {
    let mut out = String::from("MCP servers:\n");
    for report in reports {
        let _ = writeln!(
            out,
            "  {} ({}): {}",
            report.name,
            report.transport,
            line(report)
        );
        if let Some(error) = &report.error {
            let _ = writeln!(out, "      last error: {error}");
        }
        if report.status == ServerStatus::NeedsAuth {
            let _ = writeln!(
                out,
                "      the server wants credentials: add an \"Authorization\" entry to its \"headers\" in {}, then /mcp reconnect {}",
                report.source, report.name
            );
        }
    }
    out.truncate(out.trim_end().len());
    out
}

fn line(report: &ServerReport) -> String {
    match report.status {
        ServerStatus::Connected => format!(
            "connected, {} tool{}",
            report.tools.len(),
            if report.tools.len() == 1 { "" } else { "s" }
        ),
        ServerStatus::Pending => "connecting…".to_string(),
        ServerStatus::Failed => "failed".to_string(),
        ServerStatus::NeedsAuth => "needs authentication".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(name: &str, status: ServerStatus, error: Option<&str>) -> ServerReport {
        ServerReport {
            name: name.into(),
            status,
            transport: "stdio",
            source: ".mcp.json".into(),
            tools: vec!["mcp__a__x".into(), "mcp__a__y".into()],
            error: error.map(String::from),
        }
    }

    #[test]
    fn the_listing_shows_status_tools_errors_and_what_to_do() {
        let text = status_text(&[
            report("a", ServerStatus::Connected, None),
            report("b", ServerStatus::Failed, Some("exited")),
            report("c", ServerStatus::NeedsAuth, Some("401")),
            report("d", ServerStatus::Pending, None),
        ]);
        assert!(text.contains("a (stdio): connected, 2 tools"), "{text}");
        assert!(
            text.contains("b (stdio): failed\n      last error: exited"),
            "{text}"
        );
        assert!(text.contains("c (stdio): needs authentication"), "{text}");
        assert!(text.contains("/mcp reconnect c"), "{text}");
        assert!(text.contains("d (stdio): connecting…"), "{text}");
    }

    #[tokio::test]
    async fn without_servers_and_with_bad_arguments() {
        assert!(run(None, "").await.unwrap().starts_with("No MCP servers"));
        let err = run(None, "reconnect x").await.unwrap_err();
        assert!(
            matches!(err, CommandError::Mcp(McpError::NoServers)),
            "{err}"
        );
        assert!(err.to_string().starts_with("No MCP servers"), "{err}");
        assert_eq!(
            run(None, "reconnect").await.unwrap_err().to_string(),
            "Usage: /mcp reconnect <server name>"
        );
        assert_eq!(
            run(None, "frobnicate").await.unwrap_err().to_string(),
            "Unknown /mcp argument \"frobnicate\"; use /mcp or /mcp reconnect <name>"
        );
    }
}
