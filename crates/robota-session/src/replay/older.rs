//! Older history on demand: the messages of a log before the history a resume built (what
//! compactions summarised away, or what did not fit the window), read page by page from
//! the newest back, for a transcript that shows them when the user scrolls up. Display
//! only: the history sent to the model does not change.
//!
//! A page is found by walking line starts backwards from where the part already shown
//! begins (the resume's backward scan), until it holds the messages asked for and starts
//! at a prompt; only its bytes are read and parsed, through the builder every replay uses,
//! so a page costs its own size whatever the file's. A compaction boundary inside it
//! becomes the summary message a resumed history starts with, placed after what it
//! summarised. A log cut short or rewritten since the resume is an error, never a panic.

use std::fs::File;
use std::io;
use std::path::PathBuf;

use super::build::{Builder, Compactions, LinePlace};
use super::parse_header;
use super::tail::{first_line, is_message_line, read_range, walk_back};
use crate::error::{LogAction, LogError};
use crate::line::LogLine;
use robota_core::{Block, Message};

/// Bytes of a line enough to tell its kind.
const PREFIX: usize = 64;
/// Bytes a page holds at most (it always holds at least one message line).
const PAGE_BYTES: u64 = 32 * 1024 * 1024;

/// The part of a session log before what is already shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OlderHistory {
    /// The log file.
    pub log: PathBuf,
    /// The byte where the part already shown begins (a line start): older history is
    /// everything before it.
    pub until: u64,
    /// Message lines the log holds before `until` (rewound ones included).
    pub messages: usize,
}

/// One page of older history.
#[derive(Debug, Clone, PartialEq)]
pub struct OlderPage {
    /// The page's messages, oldest first; each compaction boundary in it is a summary
    /// message (opening with `CONTEXT_SUMMARY_PREFIX`) after the messages it summarised.
    pub messages: Vec<Message>,
    /// What is older still (`None`: the page reached the log's first line).
    pub rest: Option<OlderHistory>,
    /// One per skipped line, as a replay gives them.
    pub warnings: Vec<String>,
}

impl OlderHistory {
    /// Reads the newest page: about `limit` message lines ending just before `until`,
    /// starting at a prompt when one is near. Fails when the log cannot be read or no
    /// longer holds what the resume read (cut short, rewritten).
    pub fn read_page(&self, limit: usize) -> Result<OlderPage, LogError> {
        let path = &self.log;
        let read_error = |e| LogError::io(path, LogAction::Read, e);
        let file = File::open(path).map_err(read_error)?;
        let len = file.metadata().map_err(read_error)?.len();
        let (header_line, body_start) = first_line(&file, len).map_err(read_error)?;
        let header = parse_header(path, &header_line)?;
        self.check_unchanged(&file, len, body_start)?;
        let mut scan = PageScan {
            file: &file,
            until: self.until,
            limit: limit.max(1),
            messages: 0,
        };
        let from = walk_back(&file, body_start, self.until, |start, end| {
            scan.judge(start, end)
        })
        .map_err(read_error)?
        .unwrap_or(body_start)
        .min(self.until);
        let counted = scan.messages;
        let bytes = read_range(&file, from, self.until).map_err(read_error)?;
        let mut builder = Builder::new(header, Compactions::Show).continue_partial();
        let mut offset = from;
        for raw in bytes.split(|b| *b == b'\n') {
            builder.feed(raw, LinePlace::Offset(offset));
            offset += raw.len() as u64 + 1;
        }
        let (messages, warnings) = builder.into_messages();
        let rest = (from > body_start).then(|| OlderHistory {
            log: self.log.clone(),
            until: from,
            messages: self.messages.saturating_sub(counted),
        });
        Ok(OlderPage {
            messages,
            rest,
            warnings,
        })
    }

    /// Fails unless the log still reaches `until` with a line starting there.
    fn check_unchanged(&self, file: &File, len: u64, body_start: u64) -> Result<(), LogError> {
        let changed = |detail: String| LogError::Changed {
            path: self.log.clone(),
            detail,
        };
        if len < self.until {
            return Err(changed(format!(
                "it is {len} bytes now, shorter than the {} read before",
                self.until
            )));
        }
        if self.until > body_start {
            let before = read_range(file, self.until - 1, self.until)
                .map_err(|e| LogError::io(&self.log, LogAction::Read, e))?;
            if before != b"\n" {
                return Err(changed(format!("no line starts at byte {}", self.until)));
            }
        }
        Ok(())
    }
}

/// The backward walk that finds where a page starts.
struct PageScan<'a> {
    file: &'a File,
    until: u64,
    limit: usize,
    /// Message lines passed so far.
    messages: usize,
}

impl PageScan<'_> {
    /// Judges the line `start..end`: `Some` is where the page starts. Once the page is
    /// full it starts at the next prompt, or where it is a quarter over full.
    fn judge(&mut self, start: u64, end: u64) -> io::Result<Option<u64>> {
        let prefix = read_range(self.file, start, end.min(start + PREFIX as u64))?;
        if !is_message_line(&prefix) {
            return Ok(None);
        }
        self.messages += 1;
        let bytes = self.until - start;
        if self.messages < self.limit && bytes < PAGE_BYTES {
            return Ok(None);
        }
        let overdue = self.messages > self.limit + self.limit / 4 || bytes >= 2 * PAGE_BYTES;
        if overdue
            || (prefix.starts_with(br#"{"type":"user""#) && is_prompt(self.file, start, end)?)
        {
            return Ok(Some(start));
        }
        Ok(None)
    }
}

/// Whether the user line `start..end` is a prompt (it answers no tool call).
fn is_prompt(file: &File, start: u64, end: u64) -> io::Result<bool> {
    let line = read_range(file, start, end)?;
    Ok(match LogLine::from_slice(line.trim_ascii_end()) {
        Ok(LogLine::User(line)) => !line
            .message
            .content
            .iter()
            .any(|block| matches!(block, Block::ToolResult { .. })),
        _ => false,
    })
}

#[cfg(test)]
mod tests;
