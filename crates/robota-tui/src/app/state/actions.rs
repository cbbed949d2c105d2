//! What the composer's actions do: prompts sent or queued (with their images), steering,
//! taking a queued prompt back, interrupting, `!` commands, the permission mode, the slash
//! commands only this client runs (`/vim`, `/copy`, pickers, leaving), terminal
//! notifications, and what stays in the scrollback on leaving.

use robota_sdk::Submission;
use robota_sdk::commands::CommandScope;

use super::App;
use crate::app::clipboard;
use crate::app::options::ExitTranscript;
use crate::transcript::{Cell, NoticeKind};

impl App {
    /// Sends typed text to the session (which runs it now or queues it); commands only
    /// an interactive client can run (pickers, clipboard, leaving) run here.
    pub fn submit(&mut self, text: String) {
        if text.trim().is_empty() {
            return;
        }
        let images = self.input.composer_mut().take_submitted_images();
        if !images.is_empty() {
            if let Some(live) = &self.live {
                let id = live
                    .handle
                    .submit(Submission::with_images(text, images.clone()));
                self.queued_images.push((id, images));
            }
            return;
        }
        match Submission::parse(&text) {
            Submission::Command { spec, args } if spec.scope == CommandScope::Client => {
                self.run_client_command(spec.name, &args);
            }
            Submission::Command { spec, args } if spec.name == "model" && args.is_empty() => {
                self.open_model_picker();
            }
            submission => {
                if let Some(live) = &self.live {
                    live.handle.submit(submission);
                }
            }
        }
    }

    /// Tab while a turn runs: the prompt goes with the model's next call.
    pub fn steer(&mut self, text: String) {
        if text.trim().is_empty() {
            return;
        }
        if let Some(live) = &self.live {
            live.handle.steer(text);
        }
    }

    /// Backspace on an empty composer takes the newest queued submission back into it.
    pub fn unqueue(&mut self) -> bool {
        match (&self.live, self.queued()) {
            (Some(live), Some(_)) => {
                live.handle.take_back_queued();
                true
            }
            _ => false,
        }
    }

    /// Gives text back to the user: into an empty composer, or after what is typed.
    /// Interrupts the running turn.
    pub fn interrupt(&mut self) {
        if let Some(live) = &self.live {
            live.handle.abort();
        }
    }

    /// Ctrl+B: the Bash commands running now go on in the background; whether one ran.
    pub fn send_to_background(&mut self) -> bool {
        self.live
            .as_ref()
            .is_some_and(|live| live.handle.send_to_background())
    }

    /// Background jobs still running, for the status line.
    pub fn running_background_jobs(&self) -> usize {
        self.live
            .as_ref()
            .map_or(0, |live| live.handle.running_background_jobs())
    }

    /// `!command`.
    pub fn run_shell(&mut self, command: String) {
        if let Some(live) = &self.live {
            live.handle.run_shell(command);
        }
    }

    /// Cycles the permission mode (Shift+Tab).
    pub fn cycle_mode(&mut self) {
        if let Some(live) = &self.live {
            live.handle.cycle_mode();
        }
    }

    /// A command of the app's own: pickers, the clipboard, leaving.
    fn run_client_command(&mut self, name: &str, args: &str) {
        match name {
            "exit" => self.quit = true,
            "bg" => self.move_to_background(args),
            "resume" if args.is_empty() => self.open_session_picker(),
            "resume" => self.resume(args.to_string()),
            "copy" => self.copy(args),
            "memory" => self.open_memory(args),
            "vim" => self.toggle_vim(),
            "reset" => self.reset_settings(args),
            other => self.notice(
                NoticeKind::Warning,
                format!("/{other} is not available here"),
            ),
        }
    }

    /// `/bg [prompt]`: leaves, asking the caller to go on with this session in the
    /// background (with `prompt` as its next prompt, if given).
    fn move_to_background(&mut self, prompt: &str) {
        let refusal = if self.is_attached() {
            Some("This session already runs in the background: Ctrl+B d detaches from it")
        } else if self.is_busy() {
            Some("/bg cannot run while a turn is in progress: wait for it, or press Esc first")
        } else if self.session_id().is_none() {
            Some("/bg needs an open session")
        } else {
            None
        };
        match refusal {
            Some(why) => self.notice(NoticeKind::Warning, why),
            None => {
                self.background_prompt = Some(prompt.trim().to_string());
                self.quit = true;
            }
        }
    }

    /// `/vim`: vim key bindings on or off in the composer, saved as `editorMode` in the
    /// user settings so the next start has them too.
    fn toggle_vim(&mut self) {
        let on = !self.input.composer().vim_enabled();
        self.input.composer_mut().set_vim(on);
        let value = if on { "vim" } else { "normal" };
        let saved = match self.instructions() {
            Some(instructions) => robota_sdk::settings::setup_save::set_user_setting(
                &instructions.paths.robota_home,
                "editorMode",
                Some(serde_json::Value::String(value.into())),
            )
            .map(|_| ())
            .map_err(|e| e.to_string()),
            None => Err("no session is open".to_string()),
        };
        let state = if on {
            "Vim mode on: Esc for normal mode, i to insert."
        } else {
            "Vim mode off."
        };
        match saved {
            Ok(()) => self.notice(NoticeKind::Info, state),
            Err(e) => self.notice(
                NoticeKind::Warning,
                format!("{state} It was not saved in your settings: {e}"),
            ),
        }
    }

    fn copy(&mut self, args: &str) {
        let block = match args.trim() {
            "" => None,
            n => match n.parse::<usize>() {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    self.notice(NoticeKind::Warning, "Usage: /copy [code block number]");
                    return;
                }
            },
        };
        if self.last_answer.is_empty() {
            self.notice(NoticeKind::Warning, "There is no answer to copy yet.");
            return;
        }
        match clipboard::copy_text(&self.last_answer, block) {
            Ok(text) => self.start_copy(text),
            Err(e) => self.notice(NoticeKind::Warning, e.to_string()),
        }
    }

    /// Gets the user's attention (OSC 9 or the bell) when the terminal is not focused.
    pub(super) fn notify(&mut self, message: &str) {
        if !self.focused
            && let Some(sequence) = self.options.notifications.sequence(message)
        {
            self.outbox.push(sequence);
        }
    }

    /// The text left in the scrollback on leaving, as `exit_transcript` asks.
    pub fn exit_transcript(&self) -> Option<String> {
        let text = match self.options.exit_transcript {
            ExitTranscript::Nothing => return None,
            ExitTranscript::LastAnswer => self.last_answer.trim().to_string(),
            ExitTranscript::Conversation => {
                let parts: Vec<String> = self
                    .transcript
                    .cells()
                    .filter_map(|cell| match cell {
                        Cell::UserPrompt(prompt) => Some(format!("> {}", prompt.trim())),
                        Cell::Assistant(answer) => Some(answer.source().trim().to_string()),
                        _ => None,
                    })
                    .filter(|part| !part.is_empty())
                    .collect();
                parts.join("\n\n")
            }
        };
        (!text.is_empty()).then_some(text)
    }
}
