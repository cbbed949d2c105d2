//! Checkpoints and rewind (DESIGN §15, issue 9). Every user prompt opens a checkpoint: a
//! snapshot of the project's files taken just before the turn runs, recorded in the
//! session log as a `checkpoint` line naming the prompt's message id; when the turn ends a
//! second snapshot gives the files it changed (`checkpoint_files`). `/rewind` (and Esc Esc
//! in the TUI) lists the prompts with their time and changed files and puts back the code,
//! the conversation, or both, or summarises from a prompt on.
//!
//! Why our own store rather than a private git object store: a snapshot must cover what
//! Bash changes too (`rm`, `mv`, generators, formatters), so it covers every tracked and
//! untracked-but-not-ignored file, in git and non-git directories alike. `git add -A` into
//! a private `GIT_DIR` would do that with its stat cache, but it hashes and stores every
//! file whatever its size (a 2 GB dataset in the tree would be copied on the first turn)
//! and offers no way to say "this one is too large" — the files above the cap must be
//! *recorded* as not restorable, not silently stored or skipped. So `store.rs` walks the
//! tree with the `ignore` crate (the `.gitignore` rules ripgrep uses, in-process: no
//! process start per turn), keeps a stat cache so an unchanged file is never read again,
//! stores contents and per-directory trees by SHA-256 under
//! `$ROBOTA_HOME/checkpoints/<project>/objects/`, and enters large or unreadable files as
//! unstored. The first snapshot of a project reads every file; it is taken in the
//! background when the session starts, so the first turn does not wait for it. An
//! unchanged 10k-file project costs one walk and no writes per snapshot (see
//! `benches/sessions.rs`).
//!
//! Restoring code to prompt P puts back, as they were before P ran, exactly the files the
//! turns from P on changed (each turn's start and end snapshots say which): files the user
//! changed between turns are left alone. The log is never rewritten; a rewind of the
//! conversation is one `rewind` line (see `session::rewind`).

mod file_meta;
mod restore;
mod store;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use robota_core::Message;
use robota_session::replay::{CheckpointEnd, CheckpointRecord};

pub use restore::{ChangedFile, changed_files};
pub(crate) use restore::{RestoreReport, restore_paths};
pub(crate) use store::write_atomically;
pub use store::{Entry, MAX_FILE_BYTES, Snapshot, SnapshotStore};

/// Why a snapshot could not be taken, compared or put back.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckpointError {
    /// The store or the project's files could not be read or written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The blocking task the work ran on ended without an answer.
    #[error("checkpoint task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Where the checkpoints of the project at `cwd` are stored.
pub(crate) fn store_dir(robota_home: &Path, cwd: &Path) -> PathBuf {
    robota_home
        .join("checkpoints")
        .join(robota_session::log::project_dir_name(cwd))
}

/// A project's snapshot store, shared by a session and its background work. Each
/// operation runs on a blocking thread; they take turns on the store.
#[derive(Debug, Clone)]
pub(crate) struct Checkpointer {
    store: Arc<Mutex<SnapshotStore>>,
}

impl Checkpointer {
    /// Checkpoints of `work_tree` kept in `store_dir`.
    pub fn new(store_dir: PathBuf, work_tree: PathBuf) -> Self {
        Checkpointer {
            store: Arc::new(Mutex::new(SnapshotStore::new(store_dir, work_tree))),
        }
    }

    /// Takes a first snapshot in the background (a project's first reads every file), so
    /// the first turn finds the stat cache warm. Needs a tokio runtime.
    pub fn prepare(&self) {
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = this.with_store(SnapshotStore::snapshot) {
                tracing::warn!("checkpoint: {e}");
            }
        });
    }

    fn with_store<T>(
        &self,
        work: impl FnOnce(&mut SnapshotStore) -> std::io::Result<T>,
    ) -> Result<T, CheckpointError> {
        let mut store = self
            .store
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Ok(work(&mut store)?)
    }

    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut SnapshotStore) -> std::io::Result<T> + Send + 'static,
    ) -> Result<T, CheckpointError> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.with_store(work)).await?
    }

    /// A snapshot of the files now.
    pub async fn snapshot(&self) -> Result<Snapshot, CheckpointError> {
        self.blocking(SnapshotStore::snapshot).await
    }

    /// The end of a turn that started at snapshot `start`: the files now and which
    /// changed.
    pub(crate) async fn turn_end(&self, start: String) -> Result<CheckpointEnd, CheckpointError> {
        self.blocking(move |store| {
            let end = store.snapshot()?;
            let changed = store.changed_between(&start, &end.id)?;
            Ok(CheckpointEnd {
                snapshot: end.id,
                not_restorable: changed
                    .iter()
                    .filter(|c| !c.restorable)
                    .map(|c| c.path.clone())
                    .collect(),
                files: changed.into_iter().map(|c| c.path).collect(),
            })
        })
        .await
    }

    /// Puts back the files the turns of `records` changed as they were before the first
    /// of them ran. A turn that has no end (robota stopped during it) counts what differs
    /// between its start and now.
    pub async fn restore(
        &self,
        records: Vec<CheckpointRecord>,
    ) -> Result<RestoreReport, CheckpointError> {
        let Some(first) = records.first() else {
            return Ok(RestoreReport::default());
        };
        let target = first.snapshot.clone();
        self.blocking(move |store| {
            let mut paths: BTreeSet<String> = BTreeSet::new();
            let mut now: Option<String> = None;
            for record in &records {
                match &record.end {
                    Some(end) => paths.extend(end.files.iter().cloned()),
                    None => {
                        let current = match &now {
                            Some(id) => id,
                            None => now.insert(store.snapshot()?.id),
                        };
                        let changed = store.changed_between(&record.snapshot, current)?;
                        paths.extend(changed.into_iter().map(|c| c.path));
                    }
                }
            }
            let target = store.read_snapshot(&target)?;
            let paths: Vec<String> = paths.into_iter().collect();
            Ok(restore_paths(store, &target, &paths))
        })
        .await
    }
}

/// A prompt of the session that can be rewound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindPoint {
    /// The prompt's message id (what [`RewindAction`]s name).
    pub message_id: String,
    /// The prompt as typed.
    pub prompt: String,
    /// When it was submitted (RFC 3339), if a checkpoint recorded it.
    pub timestamp: Option<String>,
    /// The files its turn changed.
    pub files_changed: Vec<String>,
    /// Of those, the ones that cannot be put back (too large, unreadable).
    pub not_restorable: Vec<String>,
    /// Whether the code can be put back as it was before this prompt.
    pub has_checkpoint: bool,
}

/// What a rewind puts back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewindAction {
    /// The files and the conversation as they were before the prompt.
    CodeAndConversation,
    /// The conversation only (the prompt goes back to the composer).
    Conversation,
    /// The files only.
    Code,
    /// The prompt and what followed are replaced by a summary of them.
    Summarize,
}

impl RewindAction {
    /// Every action, in the order a picker offers them.
    pub const ALL: [RewindAction; 4] = [
        RewindAction::CodeAndConversation,
        RewindAction::Conversation,
        RewindAction::Code,
        RewindAction::Summarize,
    ];

    /// The word `/rewind <id> <action>` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            RewindAction::CodeAndConversation => "both",
            RewindAction::Conversation => "conversation",
            RewindAction::Code => "code",
            RewindAction::Summarize => "summarize",
        }
    }

    /// The action a word names (`both`/`all`, `conversation`/`chat`, `code`/`files`,
    /// `summarize`/`summary`); `None` for any other word.
    pub fn parse(word: &str) -> Option<RewindAction> {
        match word {
            "both" | "all" => Some(RewindAction::CodeAndConversation),
            "conversation" | "chat" => Some(RewindAction::Conversation),
            "code" | "files" => Some(RewindAction::Code),
            "summarize" | "summarise" | "summary" => Some(RewindAction::Summarize),
            _ => None,
        }
    }

    /// How a picker offers it.
    pub fn label(self) -> &'static str {
        match self {
            RewindAction::CodeAndConversation => "Restore code and conversation",
            RewindAction::Conversation => "Restore conversation",
            RewindAction::Code => "Restore code",
            RewindAction::Summarize => "Summarize from here",
        }
    }

    /// Whether it puts files back (both and code do; conversation and summarize leave
    /// the files as they are).
    pub fn restores_code(self) -> bool {
        matches!(self, RewindAction::CodeAndConversation | RewindAction::Code)
    }
}

/// What a rewind did.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewound {
    /// The prompt rewound to (a [`RewindPoint`]'s `message_id`).
    pub message_id: String,
    /// What was put back.
    pub action: RewindAction,
    /// The prompt, to put back in the composer (when the conversation was rewound).
    pub prompt: Option<String>,
    /// Files written back as they were.
    pub restored: Vec<String>,
    /// Files removed: the prompt's turn created them.
    pub removed: Vec<String>,
    /// Files left as they are, each with the reason.
    pub not_restorable: Vec<(String, String)>,
    /// The conversation now, when it changed (clients redraw their transcript from it).
    pub history: Option<Vec<Message>>,
}

/// The points of `history` with what `checkpoints` recorded of them, newest first.
pub fn rewind_points(history: &[Message], checkpoints: &[CheckpointRecord]) -> Vec<RewindPoint> {
    let mut points: Vec<RewindPoint> = history
        .iter()
        .filter_map(|message| {
            let prompt = robota_session::rewind::prompt_text(message)?;
            let record = checkpoints.iter().rev().find(|r| r.message == message.id);
            let end = record.and_then(|r| r.end.as_ref());
            Some(RewindPoint {
                message_id: message.id.clone(),
                prompt,
                timestamp: record.map(|r| r.timestamp.clone()),
                files_changed: end.map(|e| e.files.clone()).unwrap_or_default(),
                not_restorable: end.map(|e| e.not_restorable.clone()).unwrap_or_default(),
                has_checkpoint: record.is_some(),
            })
        })
        .collect();
    points.reverse();
    points
}

/// The checkpoints from prompt `message_id`'s on, oldest first (`None`: it has none).
pub(crate) fn records_from(
    checkpoints: &[CheckpointRecord],
    message_id: &str,
) -> Option<Vec<CheckpointRecord>> {
    let at = checkpoints.iter().rposition(|r| r.message == message_id)?;
    Some(checkpoints[at..].to_vec())
}

/// `/rewind` without arguments in a text client: the points, newest first.
pub(crate) fn points_text(points: &[RewindPoint]) -> String {
    if points.is_empty() {
        return "No prompts to rewind to yet.".to_string();
    }
    let mut out =
        String::from("Prompts (newest first); /rewind <id> [both|conversation|code|summarize]:\n");
    for point in points {
        let first_line = point.prompt.lines().next().unwrap_or_default();
        let files = match point.files_changed.len() {
            0 => "no files changed".to_string(),
            1 => "1 file changed".to_string(),
            n => format!("{n} files changed"),
        };
        out.push_str(&format!(
            "  {}  {}  {first_line}  ({files})\n",
            point.message_id,
            point.timestamp.as_deref().unwrap_or("-"),
        ));
    }
    out.truncate(out.trim_end().len());
    out
}

/// ` Restored a.txt.` / ` Removed 2 files: a, b.`; nothing for no files.
fn files_sentence(verb: &str, files: &[String]) -> String {
    match files {
        [] => String::new(),
        [one] => format!(" {verb} {one}."),
        many => format!(" {verb} {} files: {}.", many.len(), many.join(", ")),
    }
}

/// What a rewind did, in a sentence or a few lines.
pub fn rewound_text(rewound: &Rewound) -> String {
    let mut out = match rewound.action {
        RewindAction::CodeAndConversation => "Rewound the code and the conversation.",
        RewindAction::Conversation => "Rewound the conversation.",
        RewindAction::Code => "Rewound the code.",
        RewindAction::Summarize => "Summarized the conversation from that prompt on.",
    }
    .to_string();
    if rewound.action.restores_code() {
        match (rewound.restored.as_slice(), rewound.removed.as_slice()) {
            ([], []) => out.push_str(" No files needed restoring."),
            (restored, removed) => {
                out.push_str(&files_sentence("Restored", restored));
                out.push_str(&files_sentence("Removed", removed));
            }
        }
    }
    for (path, reason) in &rewound.not_restorable {
        out.push_str(&format!("\nNot restorable: {path} ({reason})"));
    }
    out
}
