//! Session logs grown to a chosen size through the real `SessionLog` (every line exactly as
//! robota writes it): turns of a prompt, a `Read` call, its result of a chosen size and an
//! answer with usage, with compaction boundaries spread evenly through the file or none.

use std::path::Path;

use robota::core::{Block, Message, Role, Usage};
use robota::session::log::{MessageExtra, SessionLog};
use robota::session::replay::replay;

/// What a grown log holds.
pub struct Grown {
    /// Turns written.
    pub turns: usize,
    /// The number of the first turn after the last boundary (0 without boundaries).
    pub first_live_turn: usize,
    /// The log's size.
    pub bytes: u64,
}

/// The prompt of turn `n`: a marker a request can be searched for.
pub fn prompt(n: usize) -> String {
    format!("prompt-{n:06}")
}

/// The summary of boundary `k`.
pub fn summary(k: usize) -> String {
    format!("summary-{k:03} of the turns so far")
}

/// Bytes of turns after the last boundary of a grown log (the live part of the 9.5 MB log
/// issue 27 measured).
pub const LIVE_BYTES: u64 = 240_000;

/// Appends turns to the log at `path` (a real session's, not open elsewhere) until it is
/// `target` bytes, with `boundaries` compaction boundaries evenly spread through all but
/// the last [`LIVE_BYTES`] of them.
pub fn grow(path: &Path, target: u64, boundaries: usize, result_bytes: usize) -> Grown {
    let log = SessionLog::open_append(path, &replay(path).unwrap()).unwrap();
    let start = std::fs::metadata(path).unwrap().len();
    let step = target.saturating_sub(start + LIVE_BYTES) / (boundaries.max(1) as u64);
    let mut next_boundary = start + step;
    let (mut turns, mut written_boundaries, mut first_live_turn) = (0, 0, 0);
    let mut size = start;
    while size < target {
        write_turn(&log, turns, result_bytes);
        turns += 1;
        size = std::fs::metadata(path).unwrap().len();
        if written_boundaries < boundaries && size >= next_boundary {
            log.append_compact_boundary(&summary(written_boundaries))
                .unwrap();
            written_boundaries += 1;
            next_boundary += step;
            first_live_turn = turns;
        }
    }
    Grown {
        turns,
        first_live_turn,
        bytes: std::fs::metadata(path).unwrap().len(),
    }
}

fn write_turn(log: &SessionLog, n: usize, result_bytes: usize) {
    log.append_message(&Message::user_text(prompt(n)), MessageExtra::default())
        .unwrap();
    let id = format!("toolu_{n:06}");
    let call = Message::new(
        Role::Assistant,
        vec![Block::ToolUse {
            id: id.clone(),
            name: "Read".into(),
            input: serde_json::json!({"file_path": "calc.py"}),
        }],
    );
    log.append_message(&call, MessageExtra::default()).unwrap();
    let line = "def add(a, b):\n    return a - b\n";
    let content = line.repeat(result_bytes / line.len() + 1);
    let result = Message::new(
        Role::User,
        vec![Block::ToolResult {
            tool_use_id: id,
            content: content.into(),
            is_error: false,
        }],
    );
    log.append_message(&result, MessageExtra::default())
        .unwrap();
    let mut answer = Message::new(Role::Assistant, vec![Block::text(format!("answer-{n:06}"))]);
    answer.usage = Some(Usage {
        input_tokens: 100,
        output_tokens: 10,
        ..Usage::default()
    });
    let extra = MessageExtra {
        model: Some("claude-sonnet-4-5".into()),
        stop_reason: Some("end_turn".into()),
    };
    log.append_message(&answer, extra).unwrap();
}
