//! The pickers the app opens and what their choices do: Ctrl+R over the prompt history,
//! the session picker (`--resume`, `/resume`) and switching sessions, the model picker
//! (`/model`), and rewind's pickers handed on to `rewind.rs`.

use std::time::SystemTime;

use robota_core::models;

use super::{App, Start};
use crate::app::launcher::OpenTarget;
use crate::app::picker::{Picker, PickerItem, PickerOverlay, PickerPurpose, age_label};
use crate::composer::{HistoryEntry, PromptHistory};
use crate::transcript::NoticeKind;

impl App {
    /// Ctrl+R: a picker over the prompts of this project (newest first), then those of
    /// the other projects; the chosen one goes into the composer.
    pub fn open_history_search(&mut self) {
        let mut entries: Vec<(HistoryEntry, &'static str)> = Vec::new();
        let here = self.input.composer().history();
        entries.extend(
            (0..here.len())
                .filter_map(|back| here.get_back(back).cloned())
                .map(|e| (e, "this project")),
        );
        let this_file = self.options.history_path.clone();
        if let Some(dir) = this_file.as_deref().and_then(std::path::Path::parent) {
            let mut others: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| Some(path.as_path()) != this_file.as_deref())
                .collect();
            others.sort();
            for path in others {
                if let Ok(history) = PromptHistory::load(&path) {
                    entries.extend(
                        (0..history.len())
                            .filter_map(|back| history.get_back(back).cloned())
                            .map(|e| (e, "another project")),
                    );
                }
            }
        }
        if entries.is_empty() {
            self.notice(NoticeKind::Info, "No prompts in the history yet.");
            return;
        }
        let items = entries
            .iter()
            .enumerate()
            .map(|(index, (entry, place))| PickerItem {
                id: index.to_string(),
                title: entry.display.replace('\n', " ⏎ "),
                detail: (*place).to_string(),
            })
            .collect();
        self.history_search = entries.into_iter().map(|(entry, _)| entry).collect();
        self.layers.push(PickerOverlay {
            picker: Picker::new("Search the prompt history", items, self.theme.color),
            purpose: PickerPurpose::History,
        });
    }

    pub(super) fn open_session_picker(&mut self) {
        let now = SystemTime::now();
        let items: Vec<PickerItem> = self
            .launcher
            .sessions()
            .into_iter()
            .map(|s| PickerItem {
                detail: format!(
                    "{}{} · {} message{}",
                    s.git_branch.map(|b| format!("{b} · ")).unwrap_or_default(),
                    age_label(s.modified, now),
                    s.messages,
                    if s.messages == 1 { "" } else { "s" }
                ),
                id: s.id,
                title: s.title,
            })
            .collect();
        if items.is_empty() {
            self.notice(
                NoticeKind::Info,
                "No earlier sessions in this directory to resume.",
            );
            return;
        }
        self.layers.push(PickerOverlay {
            picker: Picker::new("Resume a session", items, self.theme.color),
            purpose: PickerPurpose::Session,
        });
    }

    pub(super) fn open_model_picker(&mut self) {
        let mut ids = self.launcher.models();
        if !ids.contains(&self.status.model) {
            ids.insert(0, self.status.model.clone());
        }
        let items: Vec<PickerItem> = ids
            .into_iter()
            .map(|id| {
                let info = models::lookup(&id);
                let current = if id == self.status.model {
                    " · current"
                } else {
                    ""
                };
                PickerItem {
                    title: id.clone(),
                    detail: format!("{}K context{current}", info.context_window / 1000),
                    id,
                }
            })
            .collect();
        self.layers.push(PickerOverlay {
            picker: Picker::new("Choose a model", items, self.theme.color),
            purpose: PickerPurpose::Model,
        });
    }

    /// A picker's choice.
    pub fn picked(&mut self, purpose: PickerPurpose, id: String) {
        match purpose {
            PickerPurpose::Model => self.submit(format!("/model {id}")),
            PickerPurpose::Session => self.resume(id),
            PickerPurpose::RewindPoint => self.rewind_point_picked(id),
            PickerPurpose::RewindAction => self.rewind_action_picked(&id),
            PickerPurpose::History => {
                let chosen = id
                    .parse::<usize>()
                    .ok()
                    .and_then(|index| self.history_search.get(index).cloned());
                if let Some(entry) = chosen {
                    self.input.composer_mut().recall(&entry);
                    self.input.refresh_completion();
                }
                self.history_search.clear();
            }
        }
    }

    /// A picker was closed without a choice; at start that means a new session.
    pub fn picker_cancelled(&mut self) {
        if self.start != Start::Running {
            self.open(OpenTarget::FromArgs);
        }
    }

    /// Switches to session `id`. The old session is handed to `closing` by the loop.
    pub(super) fn resume(&mut self, id: String) {
        if self.is_busy() {
            self.notice(
                NoticeKind::Warning,
                "/resume cannot run while a turn is in progress",
            );
            return;
        }
        let old = self.take_session();
        self.closing.extend(old);
        self.open(OpenTarget::Resume(id));
    }
}
