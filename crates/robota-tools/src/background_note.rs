//! What the model is told when a Bash command goes on in the background (started there, or
//! sent there by the user with Ctrl+B) and reading that text back: the result carries a
//! [`ToolDisplay::Background`] for clients, and a resumed transcript rebuilds the same
//! display from the logged text ([`parse_background_note`]).

use super::background_jobs::BackgroundJob;
use robota_core::{ToolDisplay, ToolOutput};

const STARTED: &str = "Command running in background with ID: ";
const SENT_BY_USER: &str =
    "The user sent this command to the background; it is still running with ID: ";
const OUTPUT_IS_IN: &str = " is written to ";
const READ_IT: &str = "; Read that file to check on it.";

/// How a command came to run in the background.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BackgroundStart {
    /// The model asked for it (`run_in_background`).
    Asked,
    /// The user sent the running command there.
    SentByUser,
}

/// The result of a call whose command goes on as `job`.
pub(crate) fn background_note(job: &BackgroundJob, start: BackgroundStart) -> ToolOutput {
    let output_file = job.output_path.display().to_string();
    let (opening, output) = match start {
        BackgroundStart::Asked => (STARTED, "Its output (stdout and stderr)"),
        BackgroundStart::SentByUser => (
            SENT_BY_USER,
            "Its output so far and from now on (stdout and stderr)",
        ),
    };
    let text = format!(
        "{opening}{}. {output}{OUTPUT_IS_IN}{output_file}{READ_IT} \
It ends with \"[exit code: N]\" once the command finishes. Background jobs are stopped when the session ends.",
        job.id
    );
    ToolOutput::ok(text).with_display(ToolDisplay::Background {
        job_id: job.id.clone(),
        output_file,
    })
}

/// The display of a result [`background_note`] wrote, from its text.
pub(crate) fn parse_background_note(text: &str) -> Option<ToolDisplay> {
    let rest = text
        .strip_prefix(STARTED)
        .or_else(|| text.strip_prefix(SENT_BY_USER))?;
    let (job_id, rest) = rest.split_once(". ")?;
    let (_, rest) = rest.split_once(OUTPUT_IS_IN)?;
    let (output_file, _) = rest.split_once(READ_IT)?;
    Some(ToolDisplay::Background {
        job_id: job_id.to_string(),
        output_file: output_file.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn both_notes_read_back_as_their_display() {
        let job = BackgroundJob {
            id: "bash_3".into(),
            command: "npm run dev".into(),
            output_path: PathBuf::from("/tmp/robota-jobs/bash_3. is written to .log"),
            exit_code: None,
        };
        for start in [BackgroundStart::Asked, BackgroundStart::SentByUser] {
            let out = background_note(&job, start);
            assert_eq!(
                parse_background_note(&out.content),
                out.display,
                "{start:?}"
            );
            assert!(out.display.is_some());
        }
        assert_eq!(parse_background_note("Command ran: ok"), None);
    }
}
