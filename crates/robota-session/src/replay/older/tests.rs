//! Tests of reading older history page by page.
use super::*;
use crate::line::CONTEXT_SUMMARY_PREFIX;
use crate::log::MessageExtra;
use crate::replay::tail::tests::{new_log, write_boundary, write_turn};
use crate::replay::{replay, resume, whole_history};
use robota_core::Role;
use std::path::Path;

const WINDOW: u64 = 200_000;

fn is_summary(message: &Message) -> bool {
    message.text().starts_with(CONTEXT_SUMMARY_PREFIX)
}

/// Every page from `older` back to the log's start, oldest first as one history.
fn all_pages(older: &OlderHistory, limit: usize) -> (Vec<Message>, usize) {
    let mut pages = Vec::new();
    let mut next = Some(older.clone());
    while let Some(older) = next {
        let page = older.read_page(limit).unwrap();
        assert!(page.warnings.is_empty(), "{:?}", page.warnings);
        if let Some(rest) = &page.rest {
            assert!(rest.until < older.until, "every page moves back");
        }
        next = page.rest;
        pages.push(page.messages);
    }
    let count = pages.len();
    (pages.into_iter().rev().flatten().collect(), count)
}

/// Two boundaries (after turn 19 and turn 39), then three live turns.
fn two_boundaries(home: &Path) -> std::path::PathBuf {
    let log = new_log(home);
    for n in 0..20 {
        write_turn(&log, n, 300);
    }
    log.append_compact_boundary("first").unwrap();
    for n in 20..40 {
        write_turn(&log, n, 300);
    }
    log.append_compact_boundary("second").unwrap();
    for n in 40..43 {
        write_turn(&log, n, 300);
    }
    log.path().to_path_buf()
}

#[test]
fn the_part_before_the_last_boundary_reads_back_with_its_summaries_between() {
    let home = tempfile::tempdir().unwrap();
    let path = two_boundaries(home.path());
    let resumed = resume(&path, WINDOW).unwrap();
    let older = resumed.older.clone().expect("there is older history");
    assert_eq!(older.messages, 160);
    let text = std::fs::read_to_string(&path).unwrap();
    let line_start = text
        .rfind(r#"{"type":"event","event":"compact_boundary""#)
        .unwrap();
    assert_eq!(
        older.until, line_start as u64,
        "it ends at the last boundary"
    );

    let page = older.read_page(10_000).unwrap();
    assert_eq!(page.rest, None);
    assert_eq!(page.messages.len(), 161);
    assert!(is_summary(&page.messages[80]) && page.messages[80].text().contains("first"));
    let every = whole_history(&path).unwrap();
    let without_summaries: Vec<&Message> =
        page.messages.iter().filter(|m| !is_summary(m)).collect();
    assert_eq!(without_summaries, every[..160].iter().collect::<Vec<_>>());
    assert!(!page.messages.iter().any(|m| m.text().contains("second")));
    // Display only: what the model is sent is the same as before.
    assert_eq!(resume(&path, WINDOW).unwrap().messages, resumed.messages);
}

#[test]
fn pages_start_at_prompts_and_together_make_the_whole_older_part() {
    let home = tempfile::tempdir().unwrap();
    let path = two_boundaries(home.path());
    let older = resume(&path, WINDOW).unwrap().older.unwrap();
    let whole = older.read_page(10_000).unwrap().messages;

    let page = older.read_page(30).unwrap();
    assert!(page.messages.len() >= 30, "{}", page.messages.len());
    assert!(page.messages.len() <= 38, "{}", page.messages.len());
    assert!(page.messages[0].text().starts_with("prompt "));
    assert_eq!(page.messages.last(), whole.last());
    let rest = page.rest.unwrap();
    assert_eq!(rest.messages, 160 - 32);

    let (joined, pages) = all_pages(&older, 30);
    assert_eq!(joined, whole);
    assert_eq!(pages, 5);
}

#[test]
fn a_boundary_that_keeps_messages_leaves_them_to_the_live_part() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    for n in 0..5 {
        write_turn(&log, n, 100);
    }
    let prompt = Message::user_text("the turn that overflowed");
    log.append_message(&prompt, MessageExtra::default())
        .unwrap();
    write_boundary(&log, "earlier work", "sum-1", "auto", 1);
    write_turn(&log, 6, 10);
    let resumed = resume(log.path(), WINDOW).unwrap();
    assert_eq!(resumed.messages[1], prompt);
    let older = resumed.older.unwrap();
    assert_eq!(older.messages, 20);
    let page = older.read_page(100).unwrap();
    assert_eq!(page.messages.len(), 20);
    assert!(!page.messages.contains(&prompt));
}

#[test]
fn history_left_out_for_the_window_reads_back_up_to_the_first_kept_message() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    for n in 0..200 {
        write_turn(&log, n, 1_000);
    }
    let path = log.path().to_path_buf();
    let resumed = resume(&path, 10_000).unwrap();
    let dropped = resumed.dropped.clone().unwrap();
    let older = resumed.older.clone().unwrap();
    assert_eq!(older.messages, 800 - dropped.kept);
    let (joined, _) = all_pages(&older, 100);
    let every = replay(&path).unwrap().messages;
    assert_eq!(joined, every[..800 - dropped.kept]);
    assert_eq!(every[800 - dropped.kept], resumed.messages[1]);
}

#[test]
fn a_log_that_fits_has_no_older_history() {
    let home = tempfile::tempdir().unwrap();
    let log = new_log(home.path());
    for n in 0..3 {
        write_turn(&log, n, 10);
    }
    assert_eq!(resume(log.path(), WINDOW).unwrap().older, None);
}

#[test]
fn a_log_cut_short_or_rewritten_since_the_resume_is_an_error() {
    let home = tempfile::tempdir().unwrap();
    let path = two_boundaries(home.path());
    let older = resume(&path, WINDOW).unwrap().older.unwrap();
    let bytes = std::fs::read(&path).unwrap();

    std::fs::write(&path, &bytes[..older.until as usize - 10]).unwrap();
    let error = older.read_page(100).unwrap_err();
    assert!(matches!(error, LogError::Changed { .. }), "{error}");
    assert!(error.to_string().contains("shorter than"), "{error}");

    let mut shifted = bytes.clone();
    let body = bytes.iter().position(|b| *b == b'\n').unwrap() + 1;
    shifted.insert(body + 5, b'x');
    std::fs::write(&path, &shifted).unwrap();
    let error = older.read_page(100).unwrap_err();
    assert!(
        error.to_string().contains("no line starts at byte"),
        "{error}"
    );

    std::fs::remove_file(&path).unwrap();
    let error = older.read_page(100).unwrap_err();
    assert!(matches!(error, LogError::Io { .. }), "{error}");
}

#[test]
fn a_corrupt_older_line_is_a_warning_and_the_rest_of_the_page_is_read() {
    let home = tempfile::tempdir().unwrap();
    let path = two_boundaries(home.path());
    let older = resume(&path, WINDOW).unwrap().older.unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let body = bytes.iter().position(|b| *b == b'\n').unwrap() + 1;
    // The first message line's opening brace: the line no longer parses.
    bytes[body] = b'#';
    std::fs::write(&path, &bytes).unwrap();
    let page = older.read_page(10_000).unwrap();
    assert_eq!(page.warnings.len(), 1, "{:?}", page.warnings);
    assert_eq!(page.messages.len(), 160);
    assert_eq!(page.messages[0].role, Role::Assistant);
}
