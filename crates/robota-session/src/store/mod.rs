//! The session store: every session log under `$ROBOTA_HOME/projects/`, listed for the
//! picker from each file's head (header, first prompt) and tail (name, message count) only,
//! found by id, name or id prefix, and forked into a new id. All calls do blocking file
//! I/O; from async code run them in `spawn_blocking`.

use std::cmp::Reverse;
use std::fs::{self, File};
use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;
use thiserror::Error;

use crate::diagnostics;
use crate::error::{LogAction, LogError};
use crate::line::{LogEvent, LogLine, MessageLine, SessionHeader};
use crate::log::{
    TAIL_WINDOW, check_session_id, create_private_dir, create_private_file, project_dir,
};
use robota_core::{Block, Role};

/// Bytes at the start of a log read for the header and the first prompt.
const HEAD_WINDOW: u64 = 64 * 1024;
/// The first prompt is cut to this many characters in a summary.
const FIRST_PROMPT_CHARS: usize = 500;
/// Ambiguity errors name at most this many candidates.
const MAX_LISTED_CANDIDATES: usize = 10;

/// One session as the picker shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// The session's id (its log's file name without `.jsonl`).
    pub id: String,
    /// The log file.
    pub path: PathBuf,
    /// The directory the session was started in.
    pub cwd: PathBuf,
    /// The name of the last `rename` event, if any.
    pub name: Option<String>,
    /// The first prompt, cut to 500 characters.
    pub first_prompt: Option<String>,
    /// When the session began, RFC 3339, from the header.
    pub created: String,
    /// The log file's modification time.
    pub modified: SystemTime,
    /// User and assistant messages ever written to the log.
    pub message_count: usize,
    /// The git branch the session began on, when the log says.
    pub git_branch: Option<String>,
}

/// Why `SessionStore::find` found no single session.
#[derive(Debug, Error)]
pub enum FindError {
    /// No session's id, name or id prefix matches `query`.
    #[error("no session matches {query:?} (searched {})", searched.display())]
    NotFound {
        /// What was looked for.
        query: String,
        /// The directory holding the projects' logs.
        searched: PathBuf,
    },
    /// The log of that id exists and cannot be read as a session; nothing was changed.
    #[error("session log {} cannot be resumed: {reason}", path.display())]
    Damaged {
        /// The log file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Several sessions' ids start with `query`.
    #[error(
        "{query:?} matches several sessions: {}; give more of the id",
        candidates.join(", ")
    )]
    Ambiguous {
        /// The id prefix looked for.
        query: String,
        /// The ids it matches, at most ten.
        candidates: Vec<String>,
    },
}

/// The session logs under one `$ROBOTA_HOME`.
#[derive(Debug, Clone)]
pub struct SessionStore {
    home: PathBuf,
}

impl SessionStore {
    /// The store of the logs under `home` (`$ROBOTA_HOME`).
    pub fn new(home: PathBuf) -> Self {
        SessionStore { home }
    }

    /// The `$ROBOTA_HOME` directory.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Where the logs of sessions started in `cwd` live.
    pub fn project_dir(&self, cwd: &Path) -> PathBuf {
        project_dir(&self.home, cwd)
    }

    /// Sessions of the project at `cwd`, newest first. Unreadable files are left out.
    pub fn list(&self, cwd: &Path) -> Vec<SessionSummary> {
        summaries_in(&self.project_dir(cwd))
    }

    /// The most recently modified session of the project at `cwd`; among sessions modified
    /// at the same instant (file-system clocks are coarse: `/clear` creates the next session
    /// within the same tick), the one created last.
    pub fn latest(&self, cwd: &Path) -> Option<SessionSummary> {
        let mut logs = log_files(&self.project_dir(cwd));
        logs.sort_by_key(|(_, modified)| Reverse(*modified));
        let mut best: Option<SessionSummary> = None;
        for (path, modified) in &logs {
            if best.as_ref().is_some_and(|b| *modified < b.modified) {
                break;
            }
            if let Some(summary) = summarize(path)
                && best.as_ref().is_none_or(|b| summary.created > b.created)
            {
                best = Some(summary);
            }
        }
        best
    }

    /// Finds one session by exact id, then exact name (latest rename wins; the newest
    /// session if several share it), then unique id prefix — each in this project first,
    /// then in all projects.
    pub fn find(&self, cwd: &Path, query: &str) -> Result<SessionSummary, FindError> {
        let not_found = || FindError::NotFound {
            query: query.to_string(),
            searched: self.home.join("projects"),
        };
        if query.is_empty() {
            return Err(not_found());
        }
        let here = self.project_dir(cwd);
        let mut dirs = vec![here.clone()];
        dirs.extend(self.project_dirs().into_iter().filter(|dir| *dir != here));

        if check_session_id(query).is_ok() {
            let mut damaged = None;
            for path in dirs.iter().map(|dir| dir.join(format!("{query}.jsonl"))) {
                if fs::symlink_metadata(&path).is_err() {
                    continue;
                }
                match read_summary(&path) {
                    Ok(found) => return Ok(found),
                    Err(e) => {
                        damaged.get_or_insert(FindError::Damaged {
                            path,
                            reason: e.to_string(),
                        });
                    }
                }
            }
            if let Some(damaged) = damaged {
                return Err(damaged);
            }
        }

        let scopes = [&dirs[..1], &dirs[..]];
        for scope in scopes {
            let named = scope
                .iter()
                .flat_map(|dir| summaries_in(dir))
                .filter(|summary| summary.name.as_deref() == Some(query))
                .max_by_key(|summary| summary.modified);
            if let Some(found) = named {
                return Ok(found);
            }
        }

        for scope in scopes {
            let mut candidates: Vec<(String, PathBuf)> = scope
                .iter()
                .flat_map(|dir| log_files(dir))
                .filter_map(|(path, _)| Some((session_id_of(&path)?, path)))
                .filter(|(id, _)| id.starts_with(query))
                .collect();
            candidates.sort();
            match candidates.len() {
                0 => continue,
                1 => {
                    if let Some(found) = summarize(&candidates[0].1) {
                        return Ok(found);
                    }
                }
                count => {
                    let mut listed: Vec<String> = candidates
                        .into_iter()
                        .take(MAX_LISTED_CANDIDATES)
                        .map(|(id, _)| id)
                        .collect();
                    if count > MAX_LISTED_CANDIDATES {
                        listed.push(format!("and {} more", count - MAX_LISTED_CANDIDATES));
                    }
                    return Err(FindError::Ambiguous {
                        query: query.to_string(),
                        candidates: listed,
                    });
                }
            }
        }
        Err(not_found())
    }

    /// Copies the log at `source` into a new session `new_id` of the project at `cwd`: a
    /// new header (created now, `forkedFrom` the source id) and every later line with its
    /// `sessionId` rewritten — lines of kinds this version does not know are copied as they
    /// are. Unreadable lines of the source are dropped. Streams line by line: a fork of a
    /// large log holds one line of it at a time.
    pub fn fork(&self, source: &Path, new_id: &str, cwd: &Path) -> Result<PathBuf, LogError> {
        check_session_id(new_id)?;
        let read_error = |e| LogError::io(source, LogAction::Read, e);
        let mut reader = io::BufReader::new(File::open(source).map_err(read_error)?);
        let mut line = Vec::new();
        reader.read_until(b'\n', &mut line).map_err(read_error)?;
        let old = SessionHeader::parse(line.trim_ascii_end()).map_err(|reason| {
            LogError::InvalidHeader {
                path: source.to_path_buf(),
                reason,
            }
        })?;
        let mut header = SessionHeader::new(new_id, cwd, &old.model, &old.provider);
        header.forked_from = Some(old.session_id);
        header.git_branch = old.git_branch;

        let dir = self.project_dir(cwd);
        create_private_dir(&dir)?;
        let target = dir.join(format!("{new_id}.jsonl"));
        let file = create_private_file(&target)?;
        let mut out = io::BufWriter::new(file);
        let copied = copy_forked(&mut reader, &mut out, &header, source, &target).and_then(|()| {
            out.flush()
                .map_err(|e| LogError::io(&target, LogAction::Write, e))
        });
        if let Err(e) = copied {
            // Best effort: a half-written fork is worse than none.
            let _ = fs::remove_file(&target);
            return Err(e);
        }
        Ok(target)
    }

    /// Removes the logs of every project last written more than `max_age` ago
    /// (`cleanupPeriodDays`), except `keep` (the session being opened) and logs another
    /// process has open; returns how many were removed.
    pub fn remove_older_than(&self, max_age: std::time::Duration, keep: Option<&Path>) -> usize {
        let Some(cutoff) = SystemTime::now().checked_sub(max_age) else {
            return 0;
        };
        let mut removed = 0;
        for dir in self.project_dirs() {
            for (path, modified) in log_files(&dir) {
                if modified >= cutoff || keep == Some(path.as_path()) || in_use(&path) {
                    continue;
                }
                match remove_log(&path) {
                    Ok(()) => removed += 1,
                    Err(e) => {
                        tracing::warn!(path = %path.display(), error = %e, "cannot remove an old session log")
                    }
                }
            }
        }
        removed
    }

    /// Removes the log of session `id` of project `cwd`, with its diagnostics; returns
    /// its path (`None`: it had none).
    pub fn remove(&self, cwd: &Path, id: &str) -> Result<Option<PathBuf>, LogError> {
        check_session_id(id)?;
        let path = self.project_dir(cwd).join(format!("{id}.jsonl"));
        match remove_log(&path) {
            Ok(()) => Ok(Some(path)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(LogError::io(&path, LogAction::Remove, e)),
        }
    }

    fn project_dirs(&self) -> Vec<PathBuf> {
        let Ok(entries) = fs::read_dir(self.home.join("projects")) else {
            return Vec::new();
        };
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
            .map(|entry| entry.path())
            .collect();
        dirs.sort();
        dirs
    }
}

/// Writes `header` and then every line `reader` has left, `sessionId` rewritten to the
/// header's; unreadable lines are dropped.
fn copy_forked(
    reader: &mut impl BufRead,
    out: &mut impl Write,
    header: &SessionHeader,
    source: &Path,
    target: &Path,
) -> Result<(), LogError> {
    let serialise_error = |e| LogError::Serialize {
        path: source.to_path_buf(),
        source: e,
    };
    let write_error = |e| LogError::io(target, LogAction::Write, e);
    serde_json::to_writer(&mut *out, &LogLine::Session(header.clone())).map_err(serialise_error)?;
    out.write_all(b"\n").map_err(write_error)?;
    let mut raw = Vec::new();
    loop {
        raw.clear();
        let read = reader.read_until(b'\n', &mut raw);
        if read.map_err(|e| LogError::io(source, LogAction::Read, e))? == 0 {
            return Ok(());
        }
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(Value::Object(mut line)) = serde_json::from_slice::<Value>(&raw) else {
            tracing::warn!(source = %source.display(), "fork drops an unreadable line");
            continue;
        };
        if line.contains_key("sessionId") {
            line.insert("sessionId".into(), header.session_id.clone().into());
        }
        serde_json::to_writer(&mut *out, &line).map_err(serialise_error)?;
        out.write_all(b"\n").map_err(write_error)?;
    }
}

/// Removes a session log and its diagnostics (absent unless they were on).
fn remove_log(path: &Path) -> std::io::Result<()> {
    fs::remove_file(path)?;
    let _ = fs::remove_file(diagnostics::diagnostics_path(path));
    let _ = fs::remove_dir_all(diagnostics::payloads::payload_dir(path));
    Ok(())
}

/// Whether another process holds the log open for writing (its writer lock).
fn in_use(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    // `flock(LOCK_SH | LOCK_NB)` on Unix; the probe lock goes with the file.
    file.try_lock_shared().is_err()
}

/// `<id>` of `<dir>/<id>.jsonl`.
fn session_id_of(path: &Path) -> Option<String> {
    if path.extension()? != "jsonl" {
        return None;
    }
    Some(path.file_stem()?.to_str()?.to_string())
}

/// The `.jsonl` files directly in `dir` with their modification times.
fn log_files(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "jsonl"))
        .filter(|entry| !diagnostics::is_diagnostics_path(&entry.path()))
        .filter_map(|entry| {
            let meta = entry.metadata().ok()?;
            meta.is_file().then(|| {
                (
                    entry.path(),
                    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                )
            })
        })
        .collect()
}

/// Summaries of the logs in `dir`, newest first.
fn summaries_in(dir: &Path) -> Vec<SessionSummary> {
    let mut summaries: Vec<SessionSummary> = log_files(dir)
        .iter()
        .filter_map(|(path, _)| summarize(path))
        .collect();
    summaries.sort_by(|a, b| (b.modified, &b.created, &b.id).cmp(&(a.modified, &a.created, &a.id)));
    summaries
}

/// Reads a log's head and tail into its summary; `None` if it cannot be read or has no
/// valid header.
fn summarize(path: &Path) -> Option<SessionSummary> {
    match read_summary(path) {
        Ok(summary) => Some(summary),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read session log");
            None
        }
    }
}

/// A log's summary from its head and tail; the error says what is wrong with the file
/// (a directory in its place, empty, no header, unreadable).
fn read_summary(path: &Path) -> io::Result<SessionSummary> {
    let damaged = |reason: String| io::Error::new(io::ErrorKind::InvalidData, reason);
    if fs::metadata(path)?.is_dir() {
        return Err(damaged("a directory is in its place".to_string()));
    }
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    let len = meta.len();
    if len == 0 {
        return Err(damaged("the file is empty".to_string()));
    }
    let head = read_window(&mut file, 0, HEAD_WINDOW.min(len))?;
    let head_lines = complete_lines(&head, 0);
    let header = match head_lines.first() {
        None => return Err(damaged("its session header is cut short".to_string())),
        Some(line) => SessionHeader::parse(line).map_err(|reason| {
            damaged(format!("its first line is not a session header: {reason}"))
        })?,
    };
    let body = &head_lines[1..];
    let first_prompt = body.iter().find_map(|line| first_prompt_of(line));

    let tail_start = len.saturating_sub(TAIL_WINDOW).max(head.len() as u64);
    let tail = read_window(&mut file, tail_start, len - tail_start)?;
    let tail_lines = complete_lines(&tail, tail_start);

    let name = latest_rename(&tail_lines)
        .or_else(|| latest_rename(body))
        .flatten();
    let message_count = tail_lines
        .iter()
        .rev()
        .chain(body.iter().rev())
        .find(|line| is_message_line(line))
        .and_then(|line| message_line(line))
        .and_then(|(line, _)| line.seq)
        .map(|seq| seq as usize)
        .unwrap_or_else(|| {
            let in_head = body.iter().filter(|line| is_message_line(line)).count();
            in_head
                + tail_lines
                    .iter()
                    .filter(|line| is_message_line(line))
                    .count()
        });

    Ok(SessionSummary {
        id: header.session_id,
        path: path.to_path_buf(),
        cwd: header.cwd,
        name,
        first_prompt,
        created: header.created,
        modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        message_count,
        git_branch: header.git_branch,
    })
}

fn read_window(file: &mut File, start: u64, len: u64) -> io::Result<Vec<u8>> {
    let mut buffer = Vec::with_capacity(len as usize);
    file.seek(SeekFrom::Start(start))?;
    Read::by_ref(file).take(len).read_to_end(&mut buffer)?;
    Ok(buffer)
}

/// The whole lines of a window that starts at byte `start` of the file: a first line cut
/// by the window start and a last line cut by the window end (or never terminated, as a
/// crash leaves it) are dropped.
fn complete_lines(window: &[u8], start: u64) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = window.split(|b| *b == b'\n').collect();
    // The last piece is either empty (window ends at a newline) or cut short.
    lines.pop();
    if start > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    lines
        .into_iter()
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .collect()
}

/// Whether a line starts as every message line robota writes does (a cheap test before
/// parsing; the writer puts `type` first).
fn is_message_line(line: &[u8]) -> bool {
    line.starts_with(br#"{"type":"user""#) || line.starts_with(br#"{"type":"assistant""#)
}

/// A `user` or `assistant` line with the role its type gives.
fn message_line(line: &[u8]) -> Option<(MessageLine, Role)> {
    match LogLine::from_slice(line).ok()? {
        LogLine::User(line) => Some((line, Role::User)),
        LogLine::Assistant(line) => Some((line, Role::Assistant)),
        _ => None,
    }
}

/// The last `rename` among `lines`: `Some(None)` when it cleared the name.
fn latest_rename(lines: &[&[u8]]) -> Option<Option<String>> {
    lines
        .iter()
        .rev()
        .filter(|line| line.starts_with(br#"{"type":"event","event":"rename""#))
        .find_map(|line| match LogLine::from_slice(line) {
            Ok(LogLine::Event(event)) => match event.event {
                LogEvent::Rename { name } => Some(Some(name).filter(|name| !name.is_empty())),
                _ => None,
            },
            _ => None,
        })
}

/// The text the user typed, if `line` is a user message that has some.
fn first_prompt_of(line: &[u8]) -> Option<String> {
    if !line.starts_with(br#"{"type":"user""#) {
        return None;
    }
    let (line, role) = message_line(line)?;
    let message = line.into_message(role);
    message.content.iter().find_map(|block| match block {
        Block::Text { text, .. } if !text.trim().is_empty() => {
            Some(text.trim().chars().take(FIRST_PROMPT_CHARS).collect())
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests;
