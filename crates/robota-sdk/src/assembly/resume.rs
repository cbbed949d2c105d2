//! The session-log stage: a new log, or a continued, resumed or forked one with the
//! history, todos, checkpoints, name, mode and model it left (and where its older history
//! is, for display); `resume_at` cuts the history back; old logs are cleaned up; the checkpoint store follows the log.

use std::path::PathBuf;

use robota_core::Message;
use robota_core::TodoItem;
use robota_core::permission::PermissionMode;
use robota_session::Session;
use robota_session::log::{LogEvent, MessageExtra, SessionHeader, SessionLog};
use robota_session::replay::{self, OlderHistory, ReplayedSession};
use robota_session::store::SessionStore;
use robota_tools::TodoList;

use super::{AssemblyError, ChosenProvider, ProjectOptions, ProjectPaths, env_flag};
use crate::checkpoint::Checkpointer;
use crate::settings::Settings;

/// Which earlier session to continue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeFrom {
    /// The session with this id or name.
    Query(String),
    /// The latest session in the directory.
    Latest,
}

/// What the log stage opened and what a resumed session brings back.
pub(super) struct Opened {
    pub(super) session_id: String,
    pub(super) log: Option<SessionLog>,
    pub(super) history: Vec<Message>,
    pub(super) checkpoints: Vec<robota_session::replay::CheckpointRecord>,
    pub(super) name: Option<String>,
    pub(super) todos: Vec<TodoItem>,
    pub(super) resumed_mode: Option<PermissionMode>,
    pub(super) resumed_model: Option<String>,
    /// `startup` or `resume`, for the SessionStart hooks.
    pub(super) start_source: &'static str,
    /// What the resumed log's answers used, by model (empty for a new session).
    pub(super) usage: std::collections::BTreeMap<String, robota_core::Usage>,
    /// The part of a resumed log before its history, for a transcript that shows it.
    pub(super) older: Option<OlderHistory>,
}

/// Opens the session's log: resumed (or forked) when the options say so, else new.
pub(super) fn open(
    paths: &ProjectPaths,
    settings: &Settings,
    options: &ProjectOptions,
    chosen: &ChosenProvider,
    todos: &TodoList,
    warnings: &mut Vec<String>,
) -> Result<Opened, AssemblyError> {
    if options.resume_at.is_some() && options.resume.is_none() {
        return Err(AssemblyError::Invalid(
            "resuming at a message needs a session to resume".to_string(),
        ));
    }
    let store = SessionStore::new(paths.robota_home.clone());
    let mut opened = match &options.resume {
        Some(from) => resumed(&store, from, paths, options, chosen, todos, warnings)?,
        None => fresh(paths, options, chosen)?,
    };
    opened.log = match opened.log.take() {
        Some(log) if options.diagnostics_log || settings.diagnostics() => {
            Some(log.with_diagnostics()?)
        }
        log => log,
    };
    if let Some(at) = &options.resume_at {
        rewind_to(&mut opened, at, warnings)?;
    }
    clean_up_old_sessions(
        &store,
        settings,
        opened.log.as_ref().map(|l| l.path().to_path_buf()),
        options.interactive,
    );
    Ok(opened)
}

fn fresh(
    paths: &ProjectPaths,
    options: &ProjectOptions,
    chosen: &ChosenProvider,
) -> Result<Opened, AssemblyError> {
    let id = new_session_id(options)?;
    let log = if options.no_log {
        None
    } else {
        let mut header = SessionHeader::new(&id, &paths.cwd, &chosen.model, chosen.provider.name());
        header.git_branch = crate::system_prompt::checked_out_branch(&paths.cwd);
        Some(SessionLog::create(&paths.robota_home, &header)?)
    };
    Ok(Opened {
        session_id: id,
        log,
        history: options.history.clone(),
        checkpoints: Vec::new(),
        name: None,
        todos: Vec::new(),
        resumed_mode: None,
        resumed_model: None,
        start_source: "startup",
        usage: Default::default(),
        older: None,
    })
}

fn resumed(
    store: &SessionStore,
    from: &ResumeFrom,
    paths: &ProjectPaths,
    options: &ProjectOptions,
    chosen: &ChosenProvider,
    todos: &TodoList,
    warnings: &mut Vec<String>,
) -> Result<Opened, AssemblyError> {
    let summary = match from {
        ResumeFrom::Query(q) => store.find(&paths.cwd, q)?,
        ResumeFrom::Latest => store.latest(&paths.cwd).ok_or_else(|| {
            AssemblyError::Invalid(format!(
                "no previous session to continue in {}",
                paths.cwd.display()
            ))
        })?,
    };
    let window = robota_core::models::lookup(options.model.as_deref().unwrap_or(&chosen.model))
        .context_window;
    let replayed = replay::resume(&summary.path, window)?;
    warnings.extend(replayed.warnings.iter().cloned());
    let resumed_todos = replayed.todos.clone().unwrap_or_default();
    if replayed.todos.is_some() {
        todos.replace(resumed_todos.clone());
    }
    let (session_id, log, older) = if options.fork {
        let id = new_session_id(options)?;
        let path = store.fork(&summary.path, &id, &paths.cwd)?;
        let forked = replay::resume(&path, window)?;
        let log = SessionLog::open_append(&path, &forked)?;
        answer_in_log(&log, &forked, warnings);
        record_dropped(&log, &forked, warnings);
        (id, log, forked.older)
    } else {
        let log = SessionLog::open_append(&summary.path, &replayed)?;
        answer_in_log(&log, &replayed, warnings);
        record_dropped(&log, &replayed, warnings);
        let id = replayed.header.session_id.clone();
        (id, log, replayed.older.clone())
    };
    warn_if_full(&log, warnings);
    Ok(Opened {
        session_id,
        log: Some(log),
        resumed_mode: replayed.mode.as_deref().and_then(PermissionMode::parse),
        history: replayed.messages,
        checkpoints: replayed.checkpoints,
        name: replayed.name,
        todos: resumed_todos,
        resumed_model: replayed.model,
        start_source: "resume",
        usage: replayed.usage_by_model,
        older,
    })
}

/// Below this much free room, a resumed log is about to stop being written.
const LOW_ROOM: u64 = 1024 * 1024;

/// Tells the user, at the start, that the disk under a resumed log is full: its next lines
/// may not be written (a new session would not even start its log).
fn warn_if_full(log: &SessionLog, warnings: &mut Vec<String>) {
    if let Some(room) = log.room_left().filter(|room| *room < LOW_ROOM) {
        warnings.push(format!(
            "the disk holding the session log {} is full ({room} bytes free): this session's next lines may not be written, so it may not resume; free disk space",
            log.path().display()
        ));
    }
}

/// The new session's id: the one asked for (a UUID, since it names the log; any text
/// when there is none), unless a fork without a resume asked for it, else a fresh one.
fn new_session_id(options: &ProjectOptions) -> Result<String, AssemblyError> {
    match &options.session_id {
        Some(id) if options.no_log && options.resume.is_none() => Ok(id.clone()),
        Some(id) if !options.fork || options.resume.is_some() => uuid::Uuid::parse_str(id)
            .map(|u| u.to_string())
            .map_err(|_| {
                AssemblyError::Invalid(format!("--session-id must be a UUID, got {id:?}"))
            }),
        _ => Ok(uuid::Uuid::new_v4().to_string()),
    }
}

/// The history as of message `at` (inclusive), recorded in the log as a rewind line so
/// later resumes see the same; calls it leaves unanswered are answered "not run".
fn rewind_to(
    opened: &mut Opened,
    at: &str,
    warnings: &mut Vec<String>,
) -> Result<(), AssemblyError> {
    let history = &mut opened.history;
    let Some(index) = history.iter().position(|m| m.id == at) else {
        return Err(AssemblyError::Invalid(format!(
            "--resume-session-at {at}: session {} has no such message",
            opened.session_id
        )));
    };
    history.truncate(index + 1);
    let answers = robota_session::repair::answer_orphan_tool_calls(history);
    if let Some(log) = &opened.log {
        // The kept message is the next line's parent: the chain branches at `at`.
        let recorded = log
            .append_rewind(at, false, Some(at.to_string()))
            .and_then(|()| match &answers {
                Some(answers) => log.append_message(answers, MessageExtra::default()),
                None => Ok(()),
            });
        if let Err(e) = recorded {
            warnings.push(format!(
                "could not record the rewind in the session log: {e}"
            ));
        }
    }
    Ok(())
}

/// Appends the results replay gave the calls robota stopped during, so the log answers
/// every call from now on (a failed write is only a warning: the history in memory is
/// valid either way).
fn answer_in_log(log: &SessionLog, replayed: &ReplayedSession, warnings: &mut Vec<String>) {
    let Some(results) = &replayed.unanswered_calls else {
        return;
    };
    warnings.push(format!(
        "the session stopped while {} tool call(s) ran; they are marked as not run",
        results.content.len()
    ));
    if let Err(e) = log.append_message(results, MessageExtra::default()) {
        warnings.push(format!("could not record that in the session log: {e}"));
    }
}

/// Tells the user that the resumed log's older history did not fit the context window and
/// was left out, and records that as a compaction boundary (the notice its summary, the
/// history after it kept) so the next resume starts there and older versions replay the
/// same history.
fn record_dropped(log: &SessionLog, replayed: &ReplayedSession, warnings: &mut Vec<String>) {
    let (Some(dropped), Some(notice)) = (&replayed.dropped, replayed.messages.first()) else {
        return;
    };
    warnings.push(format!(
        "this session's log is {}, more than the context window holds: the newest {} messages were resumed and the {} before them left out of the conversation (the log keeps them; /export writes the whole session)",
        replay::human_bytes(dropped.log_bytes),
        dropped.kept,
        replay::human_bytes(dropped.bytes),
    ));
    let boundary = LogEvent::CompactBoundary {
        summary: dropped.summary.clone(),
        uuid: Some(notice.id.clone()),
        trigger: Some("resume".to_string()),
        pre_tokens: None,
        post_tokens: None,
        kept: dropped.kept,
    };
    if let Err(e) = log.append_event(boundary) {
        warnings.push(format!("could not record that in the session log: {e}"));
    }
}

/// Claude Code's default transcript retention.
const DEFAULT_CLEANUP_DAYS: f64 = 30.0;

/// Removes session logs older than `cleanupPeriodDays`, never the one being opened nor one
/// another process has open: in the TUI on a background thread (the first frame is not
/// delayed by it), headless before the run (a directory listing; a short run must not exit
/// half way through it).
fn clean_up_old_sessions(
    store: &SessionStore,
    settings: &Settings,
    keep: Option<PathBuf>,
    background: bool,
) {
    let days = settings
        .values
        .cleanup_period_days
        .map_or(DEFAULT_CLEANUP_DAYS, |d| d as f64);
    let max_age = std::time::Duration::from_secs_f64(days.min(1e6) * 86_400.0);
    let store = store.clone();
    let clean = move || {
        let removed = store.remove_older_than(max_age, keep.as_deref());
        if removed > 0 {
            tracing::info!("removed {removed} session log(s) older than {days} days");
        }
    };
    if !background {
        clean();
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("session-cleanup".into())
        .spawn(clean);
    if let Err(e) = spawned {
        tracing::warn!("cannot start the session clean-up: {e}");
    }
}

/// The project's checkpoint store, for a session with a log (unless
/// `ROBOTA_DISABLE_CHECKPOINTS` is set).
pub(super) fn checkpoints(paths: &ProjectPaths, session: &Session) -> Option<Checkpointer> {
    (session.log_path().is_some() && !env_flag("ROBOTA_DISABLE_CHECKPOINTS")).then(|| {
        Checkpointer::new(
            crate::checkpoint::store_dir(&paths.robota_home, &paths.cwd),
            paths.cwd.clone(),
        )
    })
}
