//! The state-only pass over the part of a log before where a resume starts, for logs that
//! carry no `resume_state` line there: one streaming read in which only the lines that set
//! state (answers, for their usage; renames, modes, models, todo lists) are parsed, every
//! other line is skipped by its first bytes without being held, so memory stays flat
//! however large the file.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};

use super::build::{Builder, LinePlace};
use crate::line::SessionHeader;

/// Bytes of a line enough to tell whether it sets state.
const PREFIX: usize = 64;
/// The read buffer.
const BUFFER: usize = 256 * 1024;

/// The first bytes of the lines that set state.
const STATE_LINES: [&[u8]; 6] = [
    br#"{"type":"assistant""#,
    br#"{"type":"event","event":"rename""#,
    br#"{"type":"event","event":"mode""#,
    br#"{"type":"event","event":"model""#,
    br#"{"type":"event","event":"todos""#,
    br#"{"type":"event","event":"resume_state""#,
];

/// The state set by the lines in bytes `from..to` of the log whose header is `header`.
pub(super) fn state_before(
    file: &File,
    header: SessionHeader,
    from: u64,
    to: u64,
) -> io::Result<Builder> {
    let mut reader = file;
    reader.seek(SeekFrom::Start(from))?;
    let mut reader = BufReader::with_capacity(BUFFER, reader.take(to.saturating_sub(from)));
    let mut builder = Builder::state_only(header);
    let mut line = Vec::new();
    let mut offset = from;
    loop {
        line.clear();
        let (read, state) = next_line(&mut reader, &mut line)?;
        if read == 0 {
            return Ok(builder);
        }
        if state {
            builder.feed(&line, LinePlace::Offset(offset));
        }
        offset += read;
    }
}

/// Reads the next line's first bytes into `line`, then the rest of it when it sets state
/// (else skips the rest). Returns the bytes consumed (0 at the end) and whether the line
/// was read whole.
fn next_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<(u64, bool)> {
    let mut read = 0;
    while line.len() < PREFIX {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok((read, false));
        }
        let want = (PREFIX - line.len()).min(buffer.len());
        if let Some(newline) = buffer[..want].iter().position(|b| *b == b'\n') {
            line.extend_from_slice(&buffer[..newline]);
            reader.consume(newline + 1);
            return Ok((read + newline as u64 + 1, sets_state(line)));
        }
        line.extend_from_slice(&buffer[..want]);
        reader.consume(want);
        read += want as u64;
    }
    if sets_state(line) {
        read += reader.read_until(b'\n', line)? as u64;
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        return Ok((read, true));
    }
    Ok((read + skip_line(reader)?, false))
}

/// Skips to just after the next newline; returns the bytes skipped.
fn skip_line(reader: &mut impl BufRead) -> io::Result<u64> {
    let mut skipped = 0;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(skipped);
        }
        match buffer.iter().position(|b| *b == b'\n') {
            Some(newline) => {
                reader.consume(newline + 1);
                return Ok(skipped + newline as u64 + 1);
            }
            None => {
                let len = buffer.len();
                reader.consume(len);
                skipped += len as u64;
            }
        }
    }
}

fn sets_state(line: &[u8]) -> bool {
    STATE_LINES.iter().any(|prefix| line.starts_with(prefix))
}
