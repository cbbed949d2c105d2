//! Rewind in the full-screen UI: Esc Esc on an empty composer (or `/rewind`) asks the
//! session for its prompts; they come back as `SessionEvent::RewindPoints` and open a
//! picker (newest first, with the time and the files each turn changed); the chosen prompt
//! opens a second picker of what to do (code and conversation, conversation, code,
//! summarise from here, never mind), sent back with `InteractiveSession::rewind`. When
//! `SessionEvent::Rewound` arrives the transcript is redrawn from the new history and the
//! prompt goes back into the composer. The session does the work; this only draws.

use std::time::{Duration, Instant, SystemTime};

use super::picker::{Picker, PickerItem, PickerOverlay, PickerPurpose, age_label};
use super::state::App;
use crate::transcript::NoticeKind;
use robota_sdk::checkpoint::{RewindAction, RewindPoint, Rewound, rewound_text};

/// A second Esc within this time opens rewind.
pub const DOUBLE_ESC_WINDOW: Duration = Duration::from_millis(1000);

/// The hint the first Esc shows.
pub const ESC_AGAIN_HINT: &str = "Press Esc again to rewind";

/// The id of "never mind" in the action picker.
const CANCEL: &str = "cancel";

/// The rewind picker's rows for `points` (newest first), as of `now`.
pub fn point_items(points: &[RewindPoint], now: SystemTime) -> Vec<PickerItem> {
    points
        .iter()
        .map(|point| {
            let when = point
                .timestamp
                .as_deref()
                .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                .map(|t| age_label(SystemTime::from(t), now));
            let files = match point.files_changed.len() {
                _ if !point.has_checkpoint => "no checkpoint".to_string(),
                0 => "no files changed".to_string(),
                1 => format!("changed {}", point.files_changed[0]),
                n => format!("{n} files changed"),
            };
            let detail = match when {
                Some(when) => format!("{when} · {files}"),
                None => files,
            };
            PickerItem {
                id: point.message_id.clone(),
                title: point.prompt.replace('\n', " ⏎ "),
                detail,
            }
        })
        .collect()
}

/// The action picker's rows for `point`.
pub fn action_items(point: Option<&RewindPoint>) -> Vec<PickerItem> {
    let code_detail = match point {
        Some(p) if !p.has_checkpoint => "no checkpoint for this prompt".to_string(),
        Some(p) if !p.not_restorable.is_empty() => {
            format!("{} not restorable", p.not_restorable.join(", "))
        }
        _ => String::new(),
    };
    let mut items: Vec<PickerItem> = RewindAction::ALL
        .iter()
        .map(|action| PickerItem {
            id: action.as_str().to_string(),
            title: action.label().to_string(),
            detail: if action.restores_code() {
                code_detail.clone()
            } else {
                String::new()
            },
        })
        .collect();
    items.push(PickerItem {
        id: CANCEL.to_string(),
        title: "Never mind".to_string(),
        detail: String::new(),
    });
    items
}

impl App {
    /// Esc on an idle, empty composer: the first shows a hint, a second within
    /// [`DOUBLE_ESC_WINDOW`] opens rewind.
    pub fn esc_on_empty(&mut self, now: Instant) {
        match self.esc_at.take() {
            Some(at) if now.duration_since(at) < DOUBLE_ESC_WINDOW => {
                self.hint = None;
                self.open_rewind();
            }
            _ => {
                self.esc_at = Some(now);
                self.hint = Some(ESC_AGAIN_HINT.to_string());
            }
        }
    }

    /// Asks the session for its prompts (the picker opens when they arrive).
    pub fn open_rewind(&mut self) {
        if let Some(live) = &self.live {
            live.handle.list_rewind_points();
        }
    }

    /// The session's prompts arrived: the picker of prompts.
    pub(super) fn show_rewind_points(&mut self, points: Vec<RewindPoint>) {
        if points.is_empty() {
            self.notice(NoticeKind::Info, "No prompts to rewind to yet.");
            return;
        }
        let items = point_items(&points, SystemTime::now());
        self.rewind_points = points;
        self.layers.push(PickerOverlay {
            picker: Picker::new("Rewind to before a prompt", items, self.theme.color),
            purpose: PickerPurpose::RewindPoint,
        });
    }

    /// A prompt was chosen: the picker of what to do.
    pub(super) fn rewind_point_picked(&mut self, message_id: String) {
        let point = self
            .rewind_points
            .iter()
            .find(|p| p.message_id == message_id);
        let title = match point {
            Some(p) => format!(
                "Rewind to before “{}”",
                p.prompt.lines().next().unwrap_or_default()
            ),
            None => "Rewind".to_string(),
        };
        let items = action_items(point);
        self.rewind_target = Some(message_id);
        self.layers.push(PickerOverlay {
            picker: Picker::new(title, items, self.theme.color),
            purpose: PickerPurpose::RewindAction,
        });
    }

    /// What to do was chosen.
    pub(super) fn rewind_action_picked(&mut self, action: &str) {
        let target = self.rewind_target.take();
        self.rewind_points.clear();
        let (Some(target), Some(action)) = (target, RewindAction::parse(action)) else {
            return;
        };
        if let Some(live) = &self.live {
            live.handle.rewind(&target, action);
        }
    }

    /// The session rewound: the transcript shows the new conversation, the prompt is
    /// back in the composer, a notice says what happened to the files.
    pub(super) fn show_rewound(&mut self, rewound: Rewound) {
        if let Some(history) = &rewound.history {
            self.transcript.clear();
            self.transcript.replay(history);
            // A rewind never reaches before the resumed history (its prompts are the
            // session's), so the older history is where it was.
            let older = self.live.as_ref().and_then(|l| l.older_history.clone());
            self.transcript.set_older_history(older);
        }
        let kind = if rewound.not_restorable.is_empty() {
            NoticeKind::Info
        } else {
            NoticeKind::Warning
        };
        self.notice(kind, rewound_text(&rewound));
        if let Some(prompt) = &rewound.prompt {
            let composer = self.input.composer_mut();
            composer.set_text(prompt);
            self.input.refresh_completion();
        }
        self.transcript.scroll_to_bottom();
    }
}
