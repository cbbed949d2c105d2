//! `robota session validate <id>` and `robota session show <id> --request N`: reading a
//! session's diagnostics log (see `session::diagnostics`) — what it lacks, and a request
//! exactly as it went to the provider.

use std::io::Write;
use std::path::Path;

use crate::session::diagnostics::read::DiagnosticsLog;
use crate::session::store::SessionStore;

use super::args::SessionCommand;
use super::headless;

pub fn run(cwd: &Path, robota_home: &Path, command: &SessionCommand) -> u8 {
    let id = match command {
        SessionCommand::Validate { id } | SessionCommand::Show { id, .. } => id,
    };
    let store = SessionStore::new(robota_home.to_path_buf());
    let log = match store
        .find(cwd, id)
        .map_err(|e| e.to_string())
        .and_then(|found| DiagnosticsLog::load(&found.path))
    {
        Ok(log) => log,
        Err(e) => {
            eprintln!("Error: {e}");
            return headless::EXIT_ERROR;
        }
    };
    match command {
        SessionCommand::Validate { .. } => validate(&log),
        SessionCommand::Show {
            request, envelope, ..
        } => show(&log, *request, *envelope),
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
