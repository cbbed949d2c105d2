//! The full-screen UI's commands that reach outside the conversation: `/memory` (an
//! instruction file opened in the user's editor, with the terminal handed over while it
//! runs — awaited as a tokio child, not waited for on a thread; the session reads the file
//! again afterwards), `/reset` (the user settings moved aside, then leave), and the
//! terminal part of `/doctor`'s report.

use std::path::{Path, PathBuf};

use tokio::process::Command;

use super::clipboard::ClipboardPlace;
use super::state::App;
use crate::transcript::NoticeKind;

/// The editor `/memory` runs: `$VISUAL`, else `$EDITOR`, else `vi`.
pub fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Why `/memory`'s editor did not run to a clean end; each names the editor command.
#[derive(Debug, thiserror::Error)]
pub enum EditorError {
    #[error("{editor} could not start: {source}")]
    Start {
        editor: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{editor} ended with {status}")]
    Failed {
        editor: String,
        status: std::process::ExitStatus,
    },
}

/// Runs the editor on `path` with the terminal (the caller has handed it over) until it
/// ends — awaited, so no runtime thread blocks meanwhile; no deadline, the user closes it.
/// The command may carry arguments (`code --wait`).
pub async fn run_editor(path: &Path) -> Result<(), EditorError> {
    let editor = editor_command();
    let status = match Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(path)
        .status()
        .await
    {
        Ok(status) => status,
        Err(source) => return Err(EditorError::Start { editor, source }),
    };
    if status.success() {
        Ok(())
    } else {
        Err(EditorError::Failed { editor, status })
    }
}

impl App {
    /// `/memory [project|local|user]`: asks the loop to open that instruction file in the
    /// editor.
    pub(super) fn open_memory(&mut self, args: &str) {
        let Some(instructions) = self.instructions() else {
            self.notice(NoticeKind::Warning, "/memory needs a session to be open.");
            return;
        };
        match instructions.memory_file(args) {
            Ok(file) => {
                if let Some(dir) = file.path.parent()
                    && let Err(e) = std::fs::create_dir_all(dir)
                {
                    self.notice(
                        NoticeKind::Warning,
                        format!("{} cannot be created: {e}", dir.display()),
                    );
                    return;
                }
                self.editor_request = Some(file.path);
            }
            Err(problem) => self.notice(NoticeKind::Warning, problem.to_string()),
        }
    }

    /// The file the loop should open in the editor now, if `/memory` asked for one.
    pub fn take_editor_request(&mut self) -> Option<PathBuf> {
        self.editor_request.take()
    }

    /// The editor closed: the session reads its instruction files again.
    pub fn editor_closed(&mut self, path: &Path, result: Result<(), EditorError>) {
        match result {
            Ok(()) => {
                if let Some(live) = &self.live {
                    live.handle.reload_instructions();
                }
                let what = if path.is_file() {
                    "robota follows it from your next prompt"
                } else {
                    "it was not saved, so nothing changed"
                };
                self.notice(
                    NoticeKind::Info,
                    format!("Edited {} — {what}.", path.display()),
                );
            }
            Err(e) => self.notice(
                NoticeKind::Warning,
                format!("{e}; set $EDITOR to the editor to use."),
            ),
        }
    }

    /// `/reset`: says what it would do; `/reset confirm` moves the user settings file to
    /// `settings.json.bak` (nothing is deleted) and leaves.
    pub(super) fn reset_settings(&mut self, args: &str) {
        let Some(instructions) = self.instructions() else {
            self.notice(NoticeKind::Warning, "/reset needs a session to be open.");
            return;
        };
        let settings = instructions.user_settings();
        let backup = settings.with_extension("json.bak");
        if args.trim() != "confirm" {
            let what = if settings.is_file() {
                format!(
                    "/reset moves {} (your provider, model, keys and preferences) to {} and leaves robota; the next start asks for a provider again. Type /reset confirm to go on.",
                    settings.display(),
                    backup.display()
                )
            } else {
                format!(
                    "There is nothing to reset: {} does not exist.",
                    settings.display()
                )
            };
            self.notice(NoticeKind::Info, what);
            return;
        }
        if !settings.is_file() {
            self.notice(
                NoticeKind::Info,
                format!(
                    "There is nothing to reset: {} does not exist.",
                    settings.display()
                ),
            );
            return;
        }
        match std::fs::rename(&settings, &backup) {
            Ok(()) => {
                self.farewell = Some(format!(
                    "Your settings were moved to {}. robota asks for a provider at its next start.",
                    backup.display()
                ));
                self.quit = true;
            }
            Err(e) => self.notice(
                NoticeKind::Warning,
                format!("{} was not moved: {e}", settings.display()),
            ),
        }
    }

    /// `/doctor`'s terminal section, added under the session's report.
    pub(super) fn doctor_terminal_report(&self) -> String {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let mut lines = vec!["Terminal:".to_string()];
        let term = env("TERM");
        lines.push(match &term {
            Some(term) if term != "dumb" => format!("✓ TERM={term}"),
            _ => "✗ TERM is unset or dumb: colours and keys may not work; run robota in a real terminal".to_string(),
        });
        let truecolor = env("COLORTERM").is_some_and(|c| c == "truecolor" || c == "24bit");
        lines.push(if truecolor {
            "✓ 24-bit colour (COLORTERM)".to_string()
        } else {
            "! No COLORTERM=truecolor: colours are approximated to 256".to_string()
        });
        let (width, height) = crossterm::terminal::size().unwrap_or((self.width, 0));
        lines.push(if width >= 60 && height >= 15 {
            format!("✓ Size {width}×{height}")
        } else {
            format!("! Size {width}×{height}: at least 60×15 shows diffs and popups whole")
        });
        let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .find_map(|name| env(name))
            .unwrap_or_default();
        lines.push(if locale.to_uppercase().replace('-', "").contains("UTF8") {
            format!("✓ UTF-8 locale ({locale})")
        } else {
            "! The locale is not UTF-8 (LANG): some characters may show as ?".to_string()
        });
        let place = ClipboardPlace::from_env();
        lines.push(if place.ssh {
            "✓ Over SSH: /copy reaches your own machine's clipboard through the terminal (OSC 52)"
                .to_string()
        } else if place.wayland || place.x11 || place.macos {
            "✓ /copy uses the system clipboard".to_string()
        } else {
            "! No display: /copy goes through the terminal (OSC 52), which some terminals ignore"
                .to_string()
        });
        if place.tmux {
            lines.push(
                "! Inside tmux: set `set -g allow-passthrough on` for notifications and `set -g set-clipboard on` for /copy".to_string(),
            );
        }
        lines.join("\n")
    }
}
