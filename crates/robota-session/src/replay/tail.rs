//! Resume that costs what is live, not the whole file: the log is read from its end back
//! to the last compaction boundary (line starts found block by block, each line judged by
//! its first bytes), and only that part is parsed into the history. The state the lines
//! before it set comes from the `resume_state` line written after the boundary, or — in
//! logs without one — from one streaming pass that parses only state lines.
//!
//! A live part larger than the model's window could ever hold (a log never compacted) is
//! never refused: the scan stops at a byte budget, the history keeps the newest whole
//! turns that fit half the window, led by a notice that older history was left out, and
//! [`DroppedHistory`] tells the caller to record that as a boundary so the next resume
//! starts there.

use std::fs::File;
use std::io;
use std::path::Path;

use super::build::{Builder, Compactions, LinePlace};
use super::{OlderHistory, ReplayedSession, parse_header, prefix};
use crate::error::{LogAction, LogError};
use crate::line::{LogEvent, LogLine, compact_summary_message};
use robota_core::context::ContextTracker;
use robota_core::{Block, Message, Role};

/// Bytes read backwards at a time.
const BLOCK: u64 = 64 * 1024;
/// Bytes of a line enough to tell its kind.
const PREFIX: usize = 64;
/// The longest header line read.
const HEADER_LIMIT: u64 = 1024 * 1024;
/// Log bytes per token of window the scan may take: a log line holds its text JSON-escaped
/// with its metadata, so a live part this large could not fit the window anyway.
const BYTES_PER_WINDOW_TOKEN: u64 = 8;

const BOUNDARY: &[u8] = br#"{"type":"event","event":"compact_boundary""#;
const RESUME_STATE: &[u8] = br#"{"type":"event","event":"resume_state""#;

/// Older history a resume left out of the conversation: it did not fit the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedHistory {
    /// Bytes of the log before the part the history was built from.
    pub bytes: u64,
    /// The log's size.
    pub log_bytes: u64,
    /// Messages of the log kept after the notice that leads the history (`messages[0]`),
    /// the appended answers to its last calls included; record a `compact_boundary` with
    /// the notice as its summary, its id, and this many kept.
    pub kept: usize,
    /// The notice's text, the boundary's summary.
    pub summary: String,
}

/// Reads a session log for a resume with a model whose window is `window_tokens`: the
/// same session [`super::replay`] gives, read from the last compaction boundary on. When
/// the live part would not fit the window, the newest turns that fit half of it are kept
/// and [`ReplayedSession::dropped`] says what was left out.
pub fn resume(path: &Path, window_tokens: u64) -> Result<ReplayedSession, LogError> {
    let read_error = |e| LogError::io(path, LogAction::Read, e);
    let file = File::open(path).map_err(read_error)?;
    let len = file.metadata().map_err(read_error)?.len();
    let (header_line, body_start) = first_line(&file, len).map_err(read_error)?;
    let header = parse_header(path, &header_line)?;
    let limit = window_tokens
        .saturating_mul(BYTES_PER_WINDOW_TOKEN)
        .max(BLOCK);
    let start = StartScan::new(len, limit)
        .run(&file, body_start)
        .map_err(read_error)?;
    let segment = read_range(&file, start, len).map_err(read_error)?;
    if start <= body_start {
        let mut builder = Builder::new(header, Compactions::Apply);
        for (index, raw) in segment.split(|b| *b == b'\n').enumerate() {
            builder.feed(raw, LinePlace::Number(index + 2));
        }
        return Ok(builder.finish());
    }
    let builder = if has_resume_state(&segment) {
        Builder::new(header, Compactions::Apply)
    } else {
        prefix::state_before(&file, header, body_start, start).map_err(read_error)?
    };
    let mut builder = builder.continue_partial();
    let mut offset = start;
    for raw in segment.split(|b| *b == b'\n') {
        builder.feed(raw, LinePlace::Offset(offset));
        offset += raw.len() as u64 + 1;
    }
    let dropped = builder
        .is_partial()
        .then(|| drop_older(builder.messages_mut(), start, len, window_tokens));
    let mut session = builder.finish();
    // The results answering the last calls are appended to the log before the boundary;
    // results filling gaps earlier are not (every replay adds them again).
    let appended = usize::from(session.unanswered_calls.is_some());
    session.dropped = dropped.map(|dropped| DroppedHistory {
        kept: dropped.kept + appended,
        ..dropped
    });
    session.older = Some(older_part(path, &segment, start, &session));
    Ok(session)
}

/// The part of the log before the history a resume built: before where the reading
/// started, or before the first message kept when older turns were left out.
fn older_part(path: &Path, segment: &[u8], start: u64, session: &ReplayedSession) -> OlderHistory {
    let first_kept = session.dropped.as_ref().and(session.messages.get(1));
    let until = first_kept
        .and_then(|message| line_of(segment, &message.id))
        .map_or(start, |at| start + at as u64);
    let live = &segment[usize::try_from(until - start)
        .unwrap_or(0)
        .min(segment.len())..];
    let live_lines = live
        .split(|b| *b == b'\n')
        .filter(|line| is_message_line(&line[..line.len().min(PREFIX)]))
        .count();
    OlderHistory {
        log: path.to_path_buf(),
        until,
        messages: session.message_lines.saturating_sub(live_lines),
    }
}

/// Where in `segment` the message line of `id` starts (robota writes a message line's
/// `uuid` right after its `type`, so only the head of each line is searched).
fn line_of(segment: &[u8], id: &str) -> Option<usize> {
    let needle = format!(r#""uuid":"{id}""#);
    let mut offset = 0;
    for line in segment.split(|b| *b == b'\n') {
        let head = &line[..line.len().min(needle.len() + PREFIX)];
        if is_message_line(head) && head.windows(needle.len()).any(|w| w == needle.as_bytes()) {
            return Some(offset);
        }
        offset += line.len() + 1;
    }
    None
}

/// Keeps the newest whole turns of `messages` that fit half the window, led by the notice
/// that older history was left out.
fn drop_older(messages: &mut Vec<Message>, start: u64, len: u64, window: u64) -> DroppedHistory {
    let budget = window / 2;
    let mut from = next_prompt(messages, 0).unwrap_or(messages.len());
    let tracker = ContextTracker::default();
    while tracker.estimate(&messages[from..]) > budget {
        match next_prompt(messages, from + 1) {
            Some(next) => from = next,
            None => break,
        }
    }
    messages.drain(..from);
    let summary = format!(
        "The earlier part of this session ({} of its {} log) did not fit the context window \
         when the session was resumed, so it was left out; the newest turns follow. The log \
         keeps all of it.",
        human_bytes(start),
        human_bytes(len)
    );
    let notice = compact_summary_message(&summary, &uuid::Uuid::new_v4().to_string());
    messages.insert(0, notice);
    DroppedHistory {
        bytes: start,
        log_bytes: len,
        kept: messages.len() - 1,
        summary,
    }
}

/// The index of the first prompt (a user message that answers no tool call) at or after
/// `from`: a history cut there starts with a whole turn.
fn next_prompt(messages: &[Message], from: usize) -> Option<usize> {
    (from..messages.len()).find(|&i| {
        let message = &messages[i];
        message.role == Role::User
            && !message
                .content
                .iter()
                .any(|block| matches!(block, Block::ToolResult { .. }))
    })
}

/// A size as the user reads it: `12.3 MB`, `456 KB`.
pub fn human_bytes(bytes: u64) -> String {
    if bytes >= 1_000_000 {
        format!("{:.1} MB", bytes as f64 / 1e6)
    } else {
        format!("{} KB", bytes.div_ceil(1000))
    }
}

/// Whether a part of the log holds a `resume_state` line (the state before it is there).
fn has_resume_state(segment: &[u8]) -> bool {
    segment
        .split(|b| *b == b'\n')
        .any(|line| line.starts_with(RESUME_STATE))
}

/// The first line (without its newline) and where the next begins.
pub(super) fn first_line(file: &File, len: u64) -> io::Result<(Vec<u8>, u64)> {
    let head = read_range(file, 0, len.min(HEADER_LIMIT))?;
    Ok(match head.iter().position(|b| *b == b'\n') {
        Some(end) => (head[..end].to_vec(), end as u64 + 1),
        None => (head, len),
    })
}

/// Bytes `from..to` of the file.
pub(super) fn read_range(file: &File, from: u64, to: u64) -> io::Result<Vec<u8>> {
    let mut bytes = vec![0; to.saturating_sub(from) as usize];
    #[cfg(unix)]
    std::os::unix::fs::FileExt::read_exact_at(file, &mut bytes, from)?;
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek};
        let mut file = file;
        file.seek(io::SeekFrom::Start(from))?;
        file.read_exact(&mut bytes)?;
    }
    Ok(bytes)
}

/// The backward scan for where a resume starts reading.
struct StartScan {
    len: u64,
    /// Bytes from the end the history may be built from.
    limit: u64,
    /// The start of the line last judged (the earliest so far).
    earliest: Option<u64>,
    /// Message lines still to pass for a boundary that keeps messages before it.
    need: Option<usize>,
}

impl StartScan {
    fn new(len: u64, limit: u64) -> Self {
        StartScan {
            len,
            limit,
            earliest: None,
            need: None,
        }
    }

    /// Walks the line starts from the end down to `floor` (the first line after the
    /// header) and returns the offset to read from.
    fn run(mut self, file: &File, floor: u64) -> io::Result<u64> {
        let len = self.len;
        let found = walk_back(file, floor, len, |start, end| self.judge(file, start, end))?;
        Ok(found.unwrap_or(floor))
    }

    /// Judges the line `start..end`: `Some` is where the resume starts.
    fn judge(&mut self, file: &File, start: u64, end: u64) -> io::Result<Option<u64>> {
        if self.len - start > self.limit {
            return Ok(Some(self.earliest.unwrap_or(start)));
        }
        self.earliest = Some(start);
        let prefix = read_range(file, start, end.min(start + PREFIX as u64))?;
        if prefix.starts_with(BOUNDARY) {
            match boundary_kept(file, start, end)? {
                Some(0) => return Ok(Some(start)),
                Some(kept) => self.need = Some(kept),
                None => {}
            }
        } else if is_message_line(&prefix)
            && let Some(need) = &mut self.need
        {
            *need -= 1;
            if *need == 0 {
                return Ok(Some(start));
            }
        }
        Ok(None)
    }
}

/// Calls `judge(start, end)` for each line of `floor..to` (`floor` a line start, `to` just
/// after a newline or the end of the file), newest first, reading the file backwards block
/// by block; `end` is the next line's start. Stops at the first `Some` the judge returns.
pub(super) fn walk_back(
    file: &File,
    floor: u64,
    to: u64,
    mut judge: impl FnMut(u64, u64) -> io::Result<Option<u64>>,
) -> io::Result<Option<u64>> {
    let mut pos = to;
    let mut end = to;
    while pos > floor {
        let from = pos.saturating_sub(BLOCK).max(floor);
        let block = read_range(file, from, pos)?;
        for (i, _) in block.iter().enumerate().rev().filter(|(_, b)| **b == b'\n') {
            let start = from + i as u64 + 1;
            if start >= to {
                continue;
            }
            if let Some(found) = judge(start, end)? {
                return Ok(Some(found));
            }
            end = start;
        }
        pos = from;
    }
    if floor < to {
        return judge(floor, end);
    }
    Ok(None)
}

/// Whether a line starts as the message lines robota writes do.
pub(super) fn is_message_line(prefix: &[u8]) -> bool {
    prefix.starts_with(br#"{"type":"user""#) || prefix.starts_with(br#"{"type":"assistant""#)
}

/// The `kept` of the boundary line `start..end`; `None` when it does not read as one.
fn boundary_kept(file: &File, start: u64, end: u64) -> io::Result<Option<usize>> {
    let line = read_range(file, start, end)?;
    Ok(match LogLine::from_slice(line.trim_ascii_end()) {
        Ok(LogLine::Event(line)) => match line.event {
            LogEvent::CompactBoundary { kept, .. } => Some(kept),
            _ => None,
        },
        _ => None,
    })
}

#[cfg(test)]
pub(super) mod tests;
