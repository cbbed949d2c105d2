//! The append-only JSONL session log: one file per session under
//! `$ROBOTA_HOME/projects/<project>/<session-id>.jsonl`, a `session` header line, then
//! message lines in Claude Code's transcript shape (so hooks reading `transcript_path` work)
//! and `event` lines for everything else — all [`LogLine`]s (see `session::line`). Each line
//! is redacted, written with one `write_all` and flushed, so a crash loses at most the line
//! being written. Also where logs live (`project_dir`) and how their files are created.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::diagnostics::Diagnostics;
use crate::redact::redact;
use crate::replay::ReplayedSession;
use robota_core::{Message, TodoItem, Usage};

pub use crate::error::{LogAction, LogError};
use crate::line::{EventLine, LinePlace, MessageLine, ResumeState, compact_summary_message};
pub use crate::line::{LogEvent, LogLine, MessageExtra, SessionHeader, now_rfc3339};

/// Bytes at the end of a log file that the session list reads. The log re-appends the
/// session's name whenever its last `rename` line would fall out of half this window, so a
/// listing that reads only headers and tails still sees every name.
pub(crate) const TAIL_WINDOW: u64 = 64 * 1024;
const NAME_REAPPEND_AFTER: u64 = TAIL_WINDOW / 2;

/// An open session log. `Send + Sync`: share it behind an `Arc`; each append is one small
/// synchronous write under a mutex.
#[derive(Debug)]
pub struct SessionLog {
    path: PathBuf,
    session_id: String,
    cwd: String,
    state: Mutex<WriterState>,
    /// The replay-grade diagnostics log beside this one, when diagnostics are on.
    diagnostics: Option<Arc<Diagnostics>>,
    /// The header's model: answers whose line names none count under it.
    header_model: String,
}

/// What the writer carries for the `resume_state` line besides the chain and the name.
#[derive(Debug, Default)]
struct CarriedState {
    mode: Option<String>,
    model: Option<String>,
    todos: Option<Vec<TodoItem>>,
    usage_by_model: BTreeMap<String, Usage>,
}

impl CarriedState {
    /// Follows an event the log writes.
    fn follow(&mut self, event: &LogEvent) {
        match event {
            LogEvent::Mode { mode } => self.mode = Some(mode.clone()),
            LogEvent::Model { model } => self.model = Some(model.clone()),
            LogEvent::Todos { todos } => self.todos = Some(todos.clone()),
            _ => {}
        }
    }
}

#[derive(Debug)]
struct WriterState {
    file: File,
    last_uuid: Option<String>,
    /// Message lines written so far (before and after compaction); each carries its `seq`.
    message_lines: usize,
    /// The session's current name, re-appended so it stays in the file's tail.
    name: Option<String>,
    bytes_since_name: u64,
    /// A write failed part way: start the next line on a fresh line.
    broken_line: bool,
    /// Mode, model, todos and usage as the lines so far set them, for the `resume_state`
    /// line after each compaction boundary.
    carried: CarriedState,
    /// The first failed write not yet reported to a client.
    unreported_failure: Option<String>,
}

impl SessionLog {
    /// Creates `<home>/projects/<project>/<session-id>.jsonl` and writes the header. Fails
    /// if the file exists.
    pub fn create(home: &Path, header: &SessionHeader) -> Result<SessionLog, LogError> {
        Self::create_in(&project_dir(home, &header.cwd), header)
    }

    /// Creates the log of another session in this log's directory (`/clear` starts one),
    /// with diagnostics when this one has them.
    pub fn create_beside(&self, header: &SessionHeader) -> Result<SessionLog, LogError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let log = Self::create_in(dir, header)?;
        if self.diagnostics.is_some() {
            return log.with_diagnostics();
        }
        Ok(log)
    }

    /// Turns on replay-grade diagnostics: `<id>.diagnostics.jsonl` beside this log
    /// (appended to when it exists) and its `<id>.payloads/` directory.
    pub fn with_diagnostics(mut self) -> Result<SessionLog, LogError> {
        self.diagnostics = Some(Arc::new(Diagnostics::open(&self.path)?));
        Ok(self)
    }

    /// The diagnostics log, when diagnostics are on.
    pub fn diagnostics(&self) -> Option<&Arc<Diagnostics>> {
        self.diagnostics.as_ref()
    }

    fn create_in(dir: &Path, header: &SessionHeader) -> Result<SessionLog, LogError> {
        check_session_id(&header.session_id)?;
        Self::create_file(&dir.join(format!("{}.jsonl", header.session_id)), header)
    }

    /// Creates a log at `path` (a subagent's transcript beside its session's log) and
    /// writes the header. Fails if the file exists.
    pub fn create_file(path: &Path, header: &SessionHeader) -> Result<SessionLog, LogError> {
        let path = path.to_path_buf();
        create_private_dir(path.parent().unwrap_or(Path::new(".")))?;
        let file = create_private_file(&path)?;
        lock_writer(&file, &path)?;
        let log = SessionLog::with_file(path, header, file, None, 0, None);
        let written = log.write_line(&mut log.lock(), &LogLine::Session(header.clone()));
        if let Err(e) = written {
            // Best effort: a log without its header could never be resumed.
            let _ = fs::remove_file(&log.path);
            return Err(e);
        }
        Ok(log)
    }

    /// Continues an existing log after `replay`: the `parentUuid` chain, message numbering
    /// and name carry on. A truncated last line is closed so the next line starts fresh.
    pub fn open_append(path: &Path, replayed: &ReplayedSession) -> Result<SessionLog, LogError> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| LogError::io(path, LogAction::Open, e))?;
        lock_writer(&file, path)?;
        let broken_line =
            !ends_with_newline(&mut file).map_err(|e| LogError::io(path, LogAction::Read, e))?;
        let log = SessionLog::with_file(
            path.to_path_buf(),
            &replayed.header,
            file,
            replayed.last_uuid.clone(),
            replayed.message_lines,
            replayed.name.clone(),
        );
        let mut state = log.lock();
        state.broken_line = broken_line;
        state.carried = CarriedState {
            mode: replayed.mode.clone(),
            model: replayed.model.clone(),
            todos: replayed.todos.clone(),
            usage_by_model: replayed.usage_by_model.clone(),
        };
        // The last rename may lie anywhere in the file: repeat it with the next line.
        state.bytes_since_name = NAME_REAPPEND_AFTER;
        drop(state);
        Ok(log)
    }

    fn with_file(
        path: PathBuf,
        header: &SessionHeader,
        file: File,
        last_uuid: Option<String>,
        message_lines: usize,
        name: Option<String>,
    ) -> SessionLog {
        SessionLog {
            path,
            session_id: header.session_id.clone(),
            cwd: header.cwd.to_string_lossy().into_owned(),
            state: Mutex::new(WriterState {
                file,
                last_uuid,
                message_lines,
                name,
                bytes_since_name: 0,
                broken_line: false,
                unreported_failure: None,
                carried: CarriedState::default(),
            }),
            diagnostics: None,
            header_model: header.model.clone(),
        }
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The id of the session written to this log (the header's `sessionId`).
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The bytes the log's filesystem still gives an unprivileged writer, when the system
    /// says (`statvfs`). A resumed log whose disk is full goes on appending into its last
    /// page for a while, then stops: the caller warns while it still can.
    pub fn room_left(&self) -> Option<u64> {
        #[cfg(unix)]
        {
            let stats = rustix::fs::statvfs(&self.path).ok()?;
            Some(stats.f_bavail.saturating_mul(stats.f_frsize))
        }
        #[cfg(not(unix))]
        None
    }

    /// Appends a user or assistant message in Claude Code's transcript shape.
    pub fn append_message(&self, message: &Message, extra: MessageExtra) -> Result<(), LogError> {
        let mut state = self.lock();
        let seq = state.message_lines + 1;
        let place = LinePlace {
            session_id: &self.session_id,
            cwd: &self.cwd,
            parent_uuid: state.last_uuid.as_deref(),
            seq: seq as u64,
        };
        let line = MessageLine::new(message, extra, place).into_log_line();
        self.write_line(&mut state, &line)?;
        if let (LogLine::Assistant(line), Some(usage)) = (&line, &message.usage) {
            let model = line.message.model.as_deref().unwrap_or(&self.header_model);
            let totals = state.carried.usage_by_model.entry(model.to_string());
            totals.or_default().add(usage);
        }
        state.message_lines = seq;
        state.last_uuid = Some(message.id.clone());
        drop(state);
        if let Some(diagnostics) = &self.diagnostics {
            diagnostics.history_append(message);
        }
        Ok(())
    }

    /// Appends an event line, stamped with the session id and the time.
    pub fn append_event(&self, event: LogEvent) -> Result<(), LogError> {
        let mut state = self.lock();
        if let LogEvent::Rename { name } = &event {
            // This line is the newest mention of the name.
            state.name = Some(name.clone());
            state.bytes_since_name = 0;
        }
        state.carried.follow(&event);
        let boundary = matches!(event, LogEvent::CompactBoundary { .. });
        let line = LogLine::Event(EventLine::new(&self.session_id, event));
        self.write_line(&mut state, &line)?;
        if boundary {
            let snapshot = LogEvent::ResumeState(Self::resume_state(&state));
            let line = LogLine::Event(EventLine::new(&self.session_id, snapshot));
            self.write_line(&mut state, &line)?;
        }
        Ok(())
    }

    /// The state a resume starting after the current end of the log begins from.
    fn resume_state(state: &WriterState) -> ResumeState {
        ResumeState {
            name: state.name.clone().filter(|name| !name.is_empty()),
            mode: state.carried.mode.clone(),
            model: state.carried.model.clone(),
            todos: state.carried.todos.clone(),
            usage_by_model: state.carried.usage_by_model.clone(),
            message_lines: state.message_lines,
            last_uuid: state.last_uuid.clone(),
        }
    }

    /// Records a rewind (see [`LogEvent::Rewind`]); the next message line's `parentUuid` is
    /// `parent`, the last message kept, so the chain branches there as Claude Code's does.
    pub fn append_rewind(
        &self,
        to: &str,
        before: bool,
        parent: Option<String>,
    ) -> Result<(), LogError> {
        self.append_event(LogEvent::Rewind {
            to: to.to_string(),
            before,
        })?;
        if let Some(diagnostics) = &self.diagnostics {
            diagnostics.history_rewind(to, before);
        }
        self.lock().last_uuid = parent;
        Ok(())
    }

    /// Appends a `rename` event; an empty `name` clears the name.
    pub fn append_rename(&self, name: &str) -> Result<(), LogError> {
        self.append_event(LogEvent::Rename {
            name: name.to_string(),
        })
    }

    /// Appends a `mode` event: the permission mode is now `mode`.
    pub fn append_mode(&self, mode: &str) -> Result<(), LogError> {
        self.append_event(LogEvent::Mode {
            mode: mode.to_string(),
        })
    }

    /// Appends a `model` event: later requests ask for `model`.
    pub fn append_model(&self, model: &str) -> Result<(), LogError> {
        self.append_event(LogEvent::Model {
            model: model.to_string(),
        })
    }

    /// Appends a `todos` event with TodoWrite's list as it stands.
    pub fn append_todos(&self, todos: &[TodoItem]) -> Result<(), LogError> {
        self.append_event(LogEvent::Todos {
            todos: todos.to_vec(),
        })
    }

    /// Records a compaction. Returns the summary message exactly as `replay` will rebuild
    /// it (same id), to put at the head of the live history.
    pub fn append_compact_boundary(&self, summary: &str) -> Result<Message, LogError> {
        let message = compact_summary_message(summary, &uuid::Uuid::new_v4().to_string());
        self.append_event(LogEvent::CompactBoundary {
            summary: summary.to_string(),
            uuid: Some(message.id.clone()),
            trigger: None,
            pre_tokens: None,
            post_tokens: None,
            kept: 0,
        })?;
        if let Some(diagnostics) = &self.diagnostics {
            diagnostics.history_compact(&message);
        }
        Ok(message)
    }

    /// Redacts, serialises and writes one line with a single `write_all`, then re-appends
    /// the session name if its last mention is about to leave the tail window.
    fn write_line(&self, state: &mut WriterState, line: &LogLine) -> Result<(), LogError> {
        let mut bytes = Vec::with_capacity(256);
        if state.broken_line {
            bytes.push(b'\n');
        }
        self.serialise_line(&mut bytes, line)?;
        self.write_bytes(state, &bytes)?;
        state.bytes_since_name = state.bytes_since_name.saturating_add(bytes.len() as u64);

        if state.bytes_since_name >= NAME_REAPPEND_AFTER
            && let Some(name) = state.name.clone()
        {
            let again = LogLine::Event(EventLine::new(&self.session_id, LogEvent::Rename { name }));
            let mut bytes = Vec::with_capacity(128);
            self.serialise_line(&mut bytes, &again)?;
            self.write_bytes(state, &bytes)?;
            state.bytes_since_name = 0;
        }
        Ok(())
    }

    /// `line`, redacted, as JSON and a newline at the end of `out`.
    fn serialise_line(&self, out: &mut Vec<u8>, line: &LogLine) -> Result<(), LogError> {
        let mut value = serde_json::to_value(line).map_err(|e| self.ser_error(e))?;
        redact(&mut value);
        serde_json::to_writer(&mut *out, &value).map_err(|e| self.ser_error(e))?;
        out.push(b'\n');
        Ok(())
    }

    fn write_bytes(&self, state: &mut WriterState, bytes: &[u8]) -> Result<(), LogError> {
        let written = state
            .file
            .write_all(bytes)
            .and_then(|()| state.file.flush());
        state.broken_line = written.is_err();
        written.map_err(|e| {
            let error = LogError::io(&self.path, LogAction::Write, e);
            if state.unreported_failure.is_none() {
                state.unreported_failure = Some(error.to_string());
            }
            error
        })
    }

    /// The first write that failed since the last call, as a message naming the file and
    /// what failed; a client must be told (the conversation goes on in memory).
    pub fn take_failure(&self) -> Option<String> {
        self.lock().unreported_failure.take()
    }

    fn lock(&self) -> MutexGuard<'_, WriterState> {
        // A panic while holding the lock cannot leave the file in a state worse than a
        // failed write, which `broken_line` already covers.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn ser_error(&self, source: serde_json::Error) -> LogError {
        LogError::Serialize {
            path: self.path.clone(),
            source,
        }
    }
}

/// Makes this process the log's one writer: an exclusive advisory lock on the file, held
/// until the file is closed (the kernel drops it when the process dies, however it dies).
/// A log another process holds is refused, naming that process where Linux tells it.
///
/// A lock held a moment longer is waited for (up to [`LOCK_GRACE`]): a child this process
/// forked keeps a closed log's descriptor, and with it the lock, until it execs.
fn lock_writer(file: &File, path: &Path) -> Result<(), LogError> {
    let deadline = std::time::Instant::now() + LOCK_GRACE;
    loop {
        // `flock(LOCK_EX | LOCK_NB)` on Unix, `LockFileEx` on Windows.
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(error)) => {
                // A file system without locks: write as before rather than refuse the
                // session.
                tracing::warn!(path = %path.display(), %error, "session log cannot be locked");
                return Ok(());
            }
        }
        if std::time::Instant::now() >= deadline {
            return Err(LogError::InUse {
                path: path.to_path_buf(),
                holder: lock_holder(file),
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// How long a held log lock is waited for before the log counts as in use.
const LOCK_GRACE: std::time::Duration = std::time::Duration::from_millis(1000);

/// The pid holding a `flock` on `file`: none known (no `/proc/locks`).
#[cfg(not(unix))]
fn lock_holder(_file: &File) -> Option<u32> {
    None
}

/// The pid holding a `flock` on `file`, from `/proc/locks` (Linux), matched by inode.
#[cfg(unix)]
fn lock_holder(file: &File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let inode = file.metadata().ok()?.ino();
    let locks = fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        // `1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF`
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (kind, pid, device_inode) = (fields.get(1)?, fields.get(4)?, fields.get(5)?);
        let lock_inode: u64 = device_inode.rsplit(':').next()?.parse().ok()?;
        (*kind == "FLOCK" && lock_inode == inode)
            .then(|| pid.parse().ok())
            .flatten()
    })
}

/// Longest project directory name kept as is; longer ones are cut and given a hash of the
/// whole name, since file systems refuse names over 255 bytes.
const MAX_PROJECT_DIR_NAME: usize = 200;

/// The directory name of a project: the cwd with every character other than an ASCII
/// letter, digit or '-' replaced by '-' (`/home/u/my_repo` → `-home-u-my-repo`).
pub fn project_dir_name(cwd: &Path) -> String {
    let name: String = cwd
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if name.len() <= MAX_PROJECT_DIR_NAME {
        return name;
    }
    // FNV-1a: stable across builds and platforms, unlike std's hasher.
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{}-{hash:016x}", &name[..MAX_PROJECT_DIR_NAME])
}

/// `<home>/projects/<project_dir_name(cwd)>`.
pub fn project_dir(home: &Path, cwd: &Path) -> PathBuf {
    home.join("projects").join(project_dir_name(cwd))
}

pub(crate) fn check_session_id(id: &str) -> Result<(), LogError> {
    let valid_chars = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if id.is_empty() || !valid_chars || id.starts_with('.') {
        return Err(LogError::InvalidSessionId { id: id.to_string() });
    }
    Ok(())
}

/// Creates `dir` and its missing parents with mode 0700.
pub fn create_private_dir(dir: &Path) -> Result<(), LogError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| LogError::io(dir, LogAction::CreateDir, e))
}

/// Creates a new file with mode 0600, failing if it exists.
pub(crate) fn create_private_file(path: &Path) -> Result<File, LogError> {
    let mut options = OpenOptions::new();
    options.create_new(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path).map_err(|e| match e.kind() {
        io::ErrorKind::AlreadyExists => LogError::AlreadyExists {
            path: path.to_path_buf(),
        },
        _ => LogError::io(path, LogAction::Create, e),
    })
}

/// Whether the file is empty or its last byte is a newline.
fn ends_with_newline(file: &mut File) -> io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests;
