//! The append-only JSONL session log: one file per session under
//! `$ROBOTA_HOME/projects/<project>/<session-id>.jsonl`, a `session` header line, then
//! message lines in Claude Code's transcript shape (so hooks reading `transcript_path` work)
//! and `event` lines for everything else. Each line is redacted, written with one
//! `write_all` and flushed, so a crash loses at most the line being written.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde_json::{Map, Value, json};
use thiserror::Error;

use crate::core::{Message, MessageState, Role, TodoItem};
use crate::session::redact::redact;
use crate::session::replay::{ReplayedSession, compact_summary_message};

/// Bytes at the end of a log file that the session list reads. The log re-appends the
/// session's name whenever its last `rename` line would fall out of half this window, so a
/// listing that reads only headers and tails still sees every name.
pub(crate) const TAIL_WINDOW: u64 = 64 * 1024;
const NAME_REAPPEND_AFTER: u64 = TAIL_WINDOW / 2;

/// Keys an event's own fields may not overwrite.
const RESERVED_EVENT_KEYS: [&str; 4] = ["type", "event", "sessionId", "timestamp"];

/// What went wrong reading or writing a session log; every variant names the file.
#[derive(Debug, Error)]
pub enum LogError {
    #[error("session log {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("session log {} already exists", path.display())]
    AlreadyExists { path: PathBuf },
    #[error("session log {} has no valid session header: {reason}", path.display())]
    InvalidHeader { path: PathBuf, reason: String },
    #[error("session id {id:?} cannot name a log file (use letters, digits, '-', '_', '.')")]
    InvalidSessionId { id: String },
    #[error("session log {}: cannot serialise a line: {source}", path.display())]
    Serialize {
        path: PathBuf,
        source: serde_json::Error,
    },
}

impl LogError {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        LogError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The first line of every log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionHeader {
    pub session_id: String,
    pub cwd: PathBuf,
    /// RFC 3339.
    pub created: String,
    /// The robota version that created the log.
    pub version: String,
    pub model: String,
    pub provider: String,
    pub forked_from: Option<String>,
}

impl SessionHeader {
    /// A header for a session created now by this version of robota.
    pub fn new(session_id: &str, cwd: &Path, model: &str, provider: &str) -> Self {
        SessionHeader {
            session_id: session_id.to_string(),
            cwd: cwd.to_path_buf(),
            created: now_rfc3339(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            model: model.to_string(),
            provider: provider.to_string(),
            forked_from: None,
        }
    }

    /// The header as its JSON line (without the newline).
    pub fn to_line(&self) -> Value {
        let mut line = Map::new();
        line.insert("type".into(), "session".into());
        line.insert("sessionId".into(), self.session_id.clone().into());
        line.insert("cwd".into(), self.cwd.to_string_lossy().into_owned().into());
        line.insert("created".into(), self.created.clone().into());
        line.insert("version".into(), self.version.clone().into());
        line.insert("model".into(), self.model.clone().into());
        line.insert("provider".into(), self.provider.clone().into());
        if let Some(source) = &self.forked_from {
            line.insert("forkedFrom".into(), source.clone().into());
        }
        Value::Object(line)
    }

    /// Reads a header line; the error says what is wrong with it.
    pub fn from_line(line: &Value) -> Result<SessionHeader, String> {
        if line.get("type").and_then(Value::as_str) != Some("session") {
            return Err("the first line is not of type \"session\"".into());
        }
        let text = |key: &str| line.get(key).and_then(Value::as_str).map(str::to_string);
        let session_id = text("sessionId").filter(|id| !id.is_empty());
        let Some(session_id) = session_id else {
            return Err("the header has no sessionId".into());
        };
        let Some(cwd) = text("cwd") else {
            return Err("the header has no cwd".into());
        };
        Ok(SessionHeader {
            session_id,
            cwd: PathBuf::from(cwd),
            created: text("created").unwrap_or_default(),
            version: text("version").unwrap_or_default(),
            model: text("model").unwrap_or_default(),
            provider: text("provider").unwrap_or_default(),
            forked_from: text("forkedFrom"),
        })
    }
}

/// Assistant extras written inside `message` next to the content.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageExtra {
    pub model: Option<String>,
    pub stop_reason: Option<String>,
}

/// An open session log. `Send + Sync`: share it behind an `Arc`; each append is one small
/// synchronous write under a mutex.
#[derive(Debug)]
pub struct SessionLog {
    path: PathBuf,
    session_id: String,
    cwd: String,
    state: Mutex<WriterState>,
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
}

impl SessionLog {
    /// Creates `<home>/projects/<project>/<session-id>.jsonl` and writes the header. Fails
    /// if the file exists.
    pub fn create(home: &Path, header: &SessionHeader) -> Result<SessionLog, LogError> {
        check_session_id(&header.session_id)?;
        let dir = project_dir(home, &header.cwd);
        create_private_dir(&dir)?;
        let path = dir.join(format!("{}.jsonl", header.session_id));
        let file = create_private_file(&path)?;
        let log = SessionLog::with_file(path, header, file, None, 0, None);
        let written = log.write_line(&mut log.lock(), header.to_line());
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
            .map_err(|e| LogError::io(path, e))?;
        let broken_line = !ends_with_newline(&mut file).map_err(|e| LogError::io(path, e))?;
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
            }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Appends a user or assistant message in Claude Code's transcript shape.
    pub fn append_message(&self, message: &Message, extra: MessageExtra) -> Result<(), LogError> {
        let content = serde_json::to_value(&message.content).map_err(|e| self.ser_error(e))?;
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let mut body = Map::new();
        body.insert("role".into(), role.into());
        body.insert("content".into(), content);
        if let Some(model) = extra.model {
            body.insert("model".into(), model.into());
        }
        if let Some(stop_reason) = extra.stop_reason {
            body.insert("stop_reason".into(), stop_reason.into());
        }
        if let Some(usage) = &message.usage {
            let usage = serde_json::to_value(usage).map_err(|e| self.ser_error(e))?;
            body.insert("usage".into(), usage);
        }

        let mut state = self.lock();
        let seq = state.message_lines + 1;
        let mut line = Map::new();
        line.insert("type".into(), role.into());
        line.insert("uuid".into(), message.id.clone().into());
        line.insert("parentUuid".into(), state.last_uuid.clone().into());
        line.insert("sessionId".into(), self.session_id.clone().into());
        line.insert("timestamp".into(), now_rfc3339().into());
        line.insert("cwd".into(), self.cwd.clone().into());
        line.insert("seq".into(), seq.into());
        line.insert("message".into(), Value::Object(body));
        if message.state == MessageState::Interrupted {
            line.insert("state".into(), "interrupted".into());
        }
        self.write_line(&mut state, Value::Object(line))?;
        state.message_lines = seq;
        state.last_uuid = Some(message.id.clone());
        Ok(())
    }

    /// Appends `{"type":"event","event":kind,"sessionId","timestamp",…fields}`. Fields
    /// named like the four leading keys are dropped.
    pub fn append_event(&self, kind: &str, fields: Map<String, Value>) -> Result<(), LogError> {
        let renamed_to = match (kind, fields.get("name")) {
            ("rename", Some(Value::String(name))) => Some(name.clone()),
            _ => None,
        };
        let mut state = self.lock();
        if let Some(name) = renamed_to {
            // This line is the newest mention of the name.
            state.name = Some(name);
            state.bytes_since_name = 0;
        }
        self.write_line(&mut state, self.event_line(kind, fields))
    }

    pub fn append_rename(&self, name: &str) -> Result<(), LogError> {
        self.append_event("rename", fields(json!({ "name": name })))
    }

    pub fn append_mode(&self, mode: &str) -> Result<(), LogError> {
        self.append_event("mode", fields(json!({ "mode": mode })))
    }

    pub fn append_model(&self, model: &str) -> Result<(), LogError> {
        self.append_event("model", fields(json!({ "model": model })))
    }

    pub fn append_todos(&self, todos: &[TodoItem]) -> Result<(), LogError> {
        let todos = serde_json::to_value(todos).map_err(|e| self.ser_error(e))?;
        self.append_event("todos", fields(json!({ "todos": todos })))
    }

    /// Records a compaction. Returns the summary message exactly as `replay` will rebuild
    /// it (same id), to put at the head of the live history.
    pub fn append_compact_boundary(&self, summary: &str) -> Result<Message, LogError> {
        let message = compact_summary_message(summary, &uuid::Uuid::new_v4().to_string());
        let event = json!({ "summary": summary, "uuid": message.id });
        self.append_event("compact_boundary", fields(event))?;
        Ok(message)
    }

    fn event_line(&self, kind: &str, fields: Map<String, Value>) -> Value {
        let mut line = Map::new();
        line.insert("type".into(), "event".into());
        line.insert("event".into(), kind.into());
        line.insert("sessionId".into(), self.session_id.clone().into());
        line.insert("timestamp".into(), now_rfc3339().into());
        for (key, value) in fields {
            if !RESERVED_EVENT_KEYS.contains(&key.as_str()) {
                line.insert(key, value);
            }
        }
        Value::Object(line)
    }

    /// Redacts, serialises and writes one line with a single `write_all`, then re-appends
    /// the session name if its last mention is about to leave the tail window.
    fn write_line(&self, state: &mut WriterState, mut line: Value) -> Result<(), LogError> {
        redact(&mut line);
        let mut bytes = Vec::with_capacity(256);
        if state.broken_line {
            bytes.push(b'\n');
        }
        serde_json::to_writer(&mut bytes, &line).map_err(|e| self.ser_error(e))?;
        bytes.push(b'\n');
        self.write_bytes(state, &bytes)?;
        state.bytes_since_name = state.bytes_since_name.saturating_add(bytes.len() as u64);

        if state.bytes_since_name >= NAME_REAPPEND_AFTER
            && let Some(name) = state.name.clone()
        {
            let mut again = self.event_line("rename", fields(json!({ "name": name })));
            redact(&mut again);
            let mut bytes = serde_json::to_vec(&again).map_err(|e| self.ser_error(e))?;
            bytes.push(b'\n');
            self.write_bytes(state, &bytes)?;
            state.bytes_since_name = 0;
        }
        Ok(())
    }

    fn write_bytes(&self, state: &mut WriterState, bytes: &[u8]) -> Result<(), LogError> {
        let written = state
            .file
            .write_all(bytes)
            .and_then(|()| state.file.flush());
        state.broken_line = written.is_err();
        written.map_err(|e| LogError::io(&self.path, e))
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

/// `value` as an event's field map (empty unless it is an object).
/// The fields of a JSON object (empty for anything else), for `append_event`.
pub fn fields(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The current time, RFC 3339 with milliseconds, as Claude Code writes it.
pub fn now_rfc3339() -> String {
    format!("{:.3}", jiff::Timestamp::now())
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
pub(crate) fn create_private_dir(dir: &Path) -> Result<(), LogError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| LogError::io(dir, e))
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
        _ => LogError::io(path, e),
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
mod tests {
    use super::*;
    use crate::core::Block;
    use crate::session::replay::replay;

    fn header(id: &str) -> SessionHeader {
        SessionHeader::new(id, Path::new("/home/u/my_repo"), "m", "anthropic")
    }

    fn lines(log: &SessionLog) -> Vec<Value> {
        let text = fs::read_to_string(log.path()).unwrap();
        assert!(text.ends_with('\n'));
        text.lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    #[test]
    fn create_writes_the_header_under_the_project_dir_and_refuses_to_overwrite() {
        let home = tempfile::tempdir().unwrap();
        let mut h = header("abc-1");
        h.forked_from = Some("parent".into());
        let log = SessionLog::create(home.path(), &h).unwrap();
        assert_eq!(
            log.path(),
            home.path().join("projects/-home-u-my-repo/abc-1.jsonl")
        );
        let first = &lines(&log)[0];
        assert_eq!(first["type"], "session");
        assert_eq!(first["sessionId"], "abc-1");
        assert_eq!(first["cwd"], "/home/u/my_repo");
        assert_eq!(first["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(first["forkedFrom"], "parent");
        let created = first["created"].as_str().unwrap();
        assert!(created.parse::<jiff::Timestamp>().is_ok(), "{created}");
        assert!(created.ends_with('Z') && created.len() == 24, "{created}");
        assert_eq!(SessionHeader::from_line(first).unwrap(), h);

        let again = SessionLog::create(home.path(), &h).unwrap_err();
        assert!(matches!(again, LogError::AlreadyExists { .. }));
        assert!(again.to_string().contains("abc-1.jsonl"), "{again}");
        for bad in ["", "../x", "a/b", ".hidden"] {
            let err = SessionLog::create(home.path(), &header(bad)).unwrap_err();
            assert!(matches!(err, LogError::InvalidSessionId { .. }), "{bad:?}");
        }
    }

    #[test]
    fn the_log_can_be_shared_between_tasks() {
        fn shareable<T: Send + Sync + 'static>(_: &T) {}
        let home = tempfile::tempdir().unwrap();
        let log = std::sync::Arc::new(SessionLog::create(home.path(), &header("t")).unwrap());
        shareable(&log);
        let writers: Vec<_> = (0..4)
            .map(|i| {
                let log = log.clone();
                std::thread::spawn(move || {
                    for j in 0..50 {
                        let m = Message::user_text(format!("{i}-{j}"));
                        log.append_message(&m, MessageExtra::default()).unwrap();
                    }
                })
            })
            .collect();
        writers.into_iter().for_each(|w| w.join().unwrap());
        let all = lines(&log);
        assert_eq!(all.len(), 201);
        let seqs: Vec<u64> = all[1..]
            .iter()
            .map(|l| l["seq"].as_u64().unwrap())
            .collect();
        assert_eq!(seqs, (1..=200).collect::<Vec<u64>>());
        for pair in all[1..].windows(2) {
            assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
        }
    }

    #[cfg(unix)]
    #[test]
    fn files_are_0600_and_directories_0700() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let log = SessionLog::create(home.path(), &header("p")).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(log.path()), 0o600);
        assert_eq!(mode(log.path().parent().unwrap()), 0o700);
        assert_eq!(mode(&home.path().join("projects")), 0o700);
    }

    #[test]
    fn project_dir_names_follow_claude_code() {
        assert_eq!(
            project_dir_name(Path::new("/home/user/work/my-repo")),
            "-home-user-work-my-repo"
        );
        assert_eq!(project_dir_name(Path::new("/a b/c_d.e/한")), "-a-b-c-d-e--");
        let deep = format!("/{}", "segment/".repeat(60));
        let name = project_dir_name(Path::new(&deep));
        assert_eq!(name.len(), MAX_PROJECT_DIR_NAME + 17);
        assert_ne!(name, project_dir_name(Path::new(&format!("{deep}x"))));
        let home = tempfile::tempdir().unwrap();
        let log = SessionLog::create(
            home.path(),
            &SessionHeader::new("d", Path::new(&deep), "m", "p"),
        );
        assert!(log.is_ok(), "{log:?}");
    }

    #[test]
    fn message_lines_have_claude_codes_shape_and_chain() {
        let home = tempfile::tempdir().unwrap();
        let log = SessionLog::create(home.path(), &header("s")).unwrap();
        let ask = Message::user_text("hi");
        let mut answer = Message::new(Role::Assistant, vec![Block::text("hello")]);
        answer.state = MessageState::Interrupted;
        log.append_message(&ask, MessageExtra::default()).unwrap();
        let extra = MessageExtra {
            model: Some("m".into()),
            stop_reason: Some("end_turn".into()),
        };
        log.append_message(&answer, extra).unwrap();
        let all = lines(&log);
        assert_eq!(all[1]["type"], "user");
        assert_eq!(all[1]["uuid"], ask.id.as_str());
        assert_eq!(all[1]["parentUuid"], Value::Null);
        assert_eq!(all[1]["sessionId"], "s");
        assert_eq!(all[1]["cwd"], "/home/u/my_repo");
        assert_eq!(
            all[1]["message"],
            json!({"role":"user","content":[{"type":"text","text":"hi"}]})
        );
        assert!(all[1].get("state").is_none());
        assert_eq!(all[2]["parentUuid"], ask.id.as_str());
        assert_eq!(all[2]["message"]["model"], "m");
        assert_eq!(all[2]["message"]["stop_reason"], "end_turn");
        assert_eq!(all[2]["state"], "interrupted");
    }

    /// ralph-wiggum's stop hook: `grep '"role":"assistant"' | tail -1`, then
    /// `.message.content[] | select(.type=="text") | .text`.
    #[test]
    fn a_stop_hook_greps_the_last_assistant_text() {
        let home = tempfile::tempdir().unwrap();
        let log = SessionLog::create(home.path(), &header("r")).unwrap();
        for text in [
            "first answer",
            "said \"role\":\"assistant\" inside",
            "last answer",
        ] {
            let ask = Message::user_text(format!("user quoting \"role\":\"assistant\" {text}"));
            log.append_message(&ask, MessageExtra::default()).unwrap();
            let answer = Message::new(
                Role::Assistant,
                vec![
                    Block::Thinking {
                        thinking: "hm".into(),
                        signature: String::new(),
                    },
                    Block::text(text),
                ],
            );
            log.append_message(&answer, MessageExtra::default())
                .unwrap();
            log.append_event("usage", Map::new()).unwrap();
        }
        let out = std::process::Command::new("grep")
            .arg(r#""role":"assistant""#)
            .arg(log.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(stdout.lines().count(), 3, "{stdout}");
        let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        let texts: Vec<&str> = last["message"]["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|block| block["type"] == "text")
            .map(|block| block["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts, vec!["last answer"]);
    }

    #[test]
    fn events_carry_their_fields_and_cannot_overwrite_the_leading_keys() {
        let home = tempfile::tempdir().unwrap();
        let log = SessionLog::create(home.path(), &header("e")).unwrap();
        let mut f = Map::new();
        f.insert("tool".into(), "Bash".into());
        f.insert("decision".into(), "deny".into());
        f.insert("type".into(), "user".into());
        f.insert("sessionId".into(), "other".into());
        log.append_event("permission", f).unwrap();
        let event = &lines(&log)[1];
        assert_eq!(event["type"], "event");
        assert_eq!(event["event"], "permission");
        assert_eq!(event["sessionId"], "e");
        assert_eq!(event["tool"], "Bash");
        assert_eq!(event["decision"], "deny");
    }

    #[test]
    fn secrets_are_redacted_in_messages_and_events_and_nothing_else_changes() {
        let home = tempfile::tempdir().unwrap();
        let log = SessionLog::create(home.path(), &header("x")).unwrap();
        let call = Message::new(
            Role::Assistant,
            vec![Block::ToolUse {
                id: "t1".into(),
                name: "WebFetch".into(),
                input: json!({"url": "https://a", "headers": {"Authorization": "Bearer abc"}}),
            }],
        );
        log.append_message(&call, MessageExtra::default()).unwrap();
        let mut f = Map::new();
        f.insert(
            "config".into(),
            json!({"env": {"OPENAI_API_KEY": "x"}, "n": 1}),
        );
        f.insert(
            "message".into(),
            "key sk-ant-api03-abcdef123456 failed".into(),
        );
        log.append_event("error", f).unwrap();
        let all = lines(&log);
        assert_eq!(
            all[1]["message"]["content"][0],
            json!({"type":"tool_use","id":"t1","name":"WebFetch",
                   "input":{"url":"https://a","headers":{"Authorization":"[REDACTED]"}}})
        );
        assert_eq!(
            all[2]["config"],
            json!({"env": {"OPENAI_API_KEY": "[REDACTED]"}, "n": 1})
        );
        assert_eq!(all[2]["message"], "key [REDACTED] failed");
    }

    #[test]
    fn the_name_is_repeated_so_it_stays_in_the_tail_window() {
        let home = tempfile::tempdir().unwrap();
        let log = SessionLog::create(home.path(), &header("n")).unwrap();
        log.append_rename("my work").unwrap();
        let big = "z".repeat(10_000);
        for _ in 0..40 {
            log.append_message(&Message::user_text(big.clone()), MessageExtra::default())
                .unwrap();
        }
        let text = fs::read_to_string(log.path()).unwrap();
        let last_rename = text.rfind(r#""event":"rename""#).unwrap();
        assert!(text.len() - last_rename < NAME_REAPPEND_AFTER as usize + 11_000);
        assert!(text.matches(r#""name":"my work""#).count() > 5);
        assert_eq!(replay(log.path()).unwrap().name.as_deref(), Some("my work"));
    }
}
