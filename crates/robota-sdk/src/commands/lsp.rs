//! `/lsp`: the session's language servers — those it may start, and for each one started
//! its workspace root, state (starting, running, crashed, failed), process, restarts and
//! last error.

use robota_lsp::LspManager;

/// The report `/lsp` prints.
pub(crate) fn lsp_report(lsp: Option<&LspManager>) -> String {
    let Some(lsp) = lsp else {
        return "No language servers: none is configured (`lspServers` in settings or a plugin) or found on PATH, or `lsp.enabled` is false.".to_string();
    };
    let mut out = format!(
        "Language servers this session may start: {}\n",
        lsp.server_names().join(", ")
    );
    let status = lsp.status();
    if status.is_empty() {
        out.push_str("None started yet: each starts on the first file of its language.");
        return out;
    }
    for server in status {
        out.push_str(&format!(
            "{} for {}: {}",
            server.name,
            server.root.display(),
            server.state
        ));
        if let Some(pid) = server.pid {
            out.push_str(&format!(" (pid {pid})"));
        }
        if server.restarts > 0 {
            out.push_str(&format!(", restarted {} time(s)", server.restarts));
        }
        if let Some(error) = &server.last_error {
            out.push_str(&format!("\n  last error: {error}"));
        }
        out.push('\n');
    }
    out.trim_end().to_string()
}
