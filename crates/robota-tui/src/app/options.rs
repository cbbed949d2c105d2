//! How the app was asked to start, and the settings it reads itself: what stays in the
//! scrollback on leaving (`exitTranscript`), how a finished turn is announced while the
//! terminal is unfocused (`notifications`), and the `statusLine` command.

use std::path::PathBuf;

use robota_sdk::settings::model::{FlagOrName, SettingsModel, StatusLineSection};

/// How the app was asked to start.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// `robota "prompt"`: sent as soon as the session is open.
    pub prompt: Option<String>,
    /// `robota --resume` without an id: open the session picker first.
    pub pick_session: bool,
    /// Where prompt history is kept (one file per project).
    pub history_path: Option<PathBuf>,
    /// The working directory: the project the session opens in and `@` completes from.
    pub cwd: PathBuf,
    /// What is printed to the normal screen on leaving (setting `exitTranscript`).
    pub exit_transcript: ExitTranscript,
    /// How the user hears about a finished turn or a waiting question while the terminal
    /// is not focused (setting `notifications`).
    pub notifications: Notifications,
    /// The `statusLine` setting (a command whose first output line is the status line).
    pub status_line: Option<StatusLineSection>,
    /// Vim key bindings in the composer (setting `editorMode` is `"vim"`).
    pub vim: bool,
}

/// How robota gets the user's attention when the terminal is not focused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Notifications {
    /// OSC 9: a desktop notification in terminals that show them (iTerm2, kitty, WezTerm,
    /// Windows Terminal, ghostty…).
    #[default]
    Osc9,
    /// The terminal bell.
    Bell,
    /// No notification.
    Off,
}

impl Notifications {
    /// `notifications` (`true`/`"osc9"`, `"bell"`, `false`/`"off"`), or Claude Code's
    /// `preferredNotifChannel` (`iterm2`, `terminal_bell`, `notifications_disabled`).
    pub fn from_settings(settings: &SettingsModel) -> Notifications {
        let value = settings.notifications.clone().or_else(|| {
            settings
                .preferred_notif_channel
                .clone()
                .map(FlagOrName::Name)
        });
        match value {
            Some(FlagOrName::Flag(false)) => Notifications::Off,
            Some(FlagOrName::Name(s)) => match s.as_str() {
                "bell" | "terminal_bell" => Notifications::Bell,
                "off" | "none" | "notifications_disabled" => Notifications::Off,
                _ => Notifications::Osc9,
            },
            _ => Notifications::Osc9,
        }
    }

    /// The bytes that ask the terminal to notify with `message`.
    pub fn sequence(self, message: &str) -> Option<String> {
        let clean: String = message.chars().filter(|c| !c.is_control()).collect();
        match self {
            Notifications::Osc9 => Some(format!("\x1b]9;{clean}\x07")),
            Notifications::Bell => Some("\x07".to_string()),
            Notifications::Off => None,
        }
    }
}

/// What stays in the terminal's scrollback when robota leaves its full-screen view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ExitTranscript {
    /// The last answer (the default).
    #[default]
    LastAnswer,
    /// Every prompt and answer of the session.
    Conversation,
    /// Nothing: the scrollback is left as it was before robota started.
    Nothing,
}

impl ExitTranscript {
    /// The setting's value: `"last"` (or absent), `"conversation"`/`true`, `"none"`/`false`.
    pub fn from_setting(value: Option<&FlagOrName>) -> ExitTranscript {
        match value {
            Some(FlagOrName::Flag(true)) => ExitTranscript::Conversation,
            Some(FlagOrName::Flag(false)) => ExitTranscript::Nothing,
            Some(FlagOrName::Name(s)) if s == "conversation" || s == "all" => {
                ExitTranscript::Conversation
            }
            Some(FlagOrName::Name(s)) if s == "none" || s == "off" => ExitTranscript::Nothing,
            _ => ExitTranscript::LastAnswer,
        }
    }
}
