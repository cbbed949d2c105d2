//! `robota session show <id>` (the conversation as Markdown), and with `--request N` or as
//! `robota session validate <id>` the session's diagnostics log (see
//! `session::diagnostics`): a request exactly as it went to the provider, what the log lacks.

use std::io::Write;
use std::path::Path;

use crate::sdk::commands::markdown_transcript;
use crate::session::diagnostics::read::DiagnosticsLog;
use crate::session::replay;
use crate::session::store::SessionStore;

use super::args::SessionCommand;
use super::headless;

pub fn run(cwd: &Path, robota_home: &Path, command: &SessionCommand) -> u8 {
    let id = match command {
        SessionCommand::Validate { id } | SessionCommand::Show { id, .. } => id,
    };
    let store = SessionStore::new(robota_home.to_path_buf());
    let found = match store.find(cwd, id) {
        Ok(found) => found,
        Err(e) => return fail(&e.to_string()),
    };
    let (request, envelope) = match command {
        SessionCommand::Show { request: None, .. } => return show_conversation(&found.path),
        SessionCommand::Show {
            request, envelope, ..
        } => (*request, *envelope),
        SessionCommand::Validate { .. } => (None, false),
    };
    let log = match DiagnosticsLog::load(&found.path) {
        Ok(log) => log,
        Err(e) => return fail(&e.to_string()),
    };
    match request {
        Some(n) => show(&log, n, envelope),
        None => validate(&log),
    }
}

fn fail(message: &str) -> u8 {
    eprintln!("Error: {message}");
    headless::EXIT_ERROR
}

/// The session's conversation (since its last compaction) as `/export` writes it.
fn show_conversation(path: &Path) -> u8 {
    let replayed = match replay::replay(path) {
        Ok(replayed) => replayed,
        Err(e) => return fail(&e.to_string()),
    };
    for warning in &replayed.warnings {
        eprintln!("robota: warning: {warning}");
    }
    let model = replayed.model.as_deref().unwrap_or(&replayed.header.model);
    let text = markdown_transcript(
        replayed.name.as_deref(),
        &replayed.header.session_id,
        model,
        &replayed.messages,
    );
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => headless::EXIT_OK,
        Err(_) => headless::EXIT_ERROR,
    }
}

fn validate(log: &DiagnosticsLog) -> u8 {
    let problems = log.validate();
    let counts: Vec<String> = log
        .counts()
        .iter()
        .map(|(kind, n)| format!("{n} {kind}"))
        .collect();
    if problems.is_empty() {
        println!("OK: {}", counts.join(", "));
        return headless::EXIT_OK;
    }
    for problem in &problems {
        println!("{problem}");
    }
    println!("{} problem(s) in {}", problems.len(), counts.join(", "));
    headless::EXIT_ERROR
}

fn show(log: &DiagnosticsLog, n: u64, envelope: bool) -> u8 {
    let request = match log.request(n) {
        Ok(request) => request,
        Err(e) => {
            eprintln!("Error: {e}");
            return headless::EXIT_ERROR;
        }
    };
    if request.redacted && !envelope {
        eprintln!(
            "Note: credentials were redacted from request {n}; those bytes differ from what was sent."
        );
    }
    let text = if envelope {
        request.envelope
    } else {
        request.body
    };
    match text {
        Ok(text) => {
            // The bytes exactly as recorded: no newline is added.
            let mut out = std::io::stdout().lock();
            if out
                .write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .is_err()
            {
                return headless::EXIT_ERROR;
            }
            headless::EXIT_OK
        }
        Err(e) => {
            eprintln!("Error: request {n} cannot be rebuilt: {e}");
            headless::EXIT_ERROR
        }
    }
}
