//! Tests of the session store: listing, finding, forking and cleaning up logs.

use super::*;
use crate::log::{MessageExtra, SessionLog};
use crate::replay::replay;
use robota_core::{Message, Role};
use std::time::Duration;

const HERE: &str = "/work/here";
const THERE: &str = "/work/there";

/// A session with one prompt, an answer and a tool result; its mtime set to `age_secs`
/// seconds after the epoch so ordering needs no sleeping.
fn session(home: &Path, cwd: &str, id: &str, prompt: &str, age_secs: u64) -> SessionLog {
    let header = SessionHeader::new(id, Path::new(cwd), "m", "p");
    let log = SessionLog::create(home, &header).unwrap();
    let result = Message::new(
        Role::User,
        vec![Block::ToolResult {
            tool_use_id: "t".into(),
            content: "out".into(),
            is_error: false,
        }],
    );
    log.append_message(&result, MessageExtra::default())
        .unwrap();
    log.append_message(&Message::user_text(prompt), MessageExtra::default())
        .unwrap();
    let answer = Message::new(Role::Assistant, vec![Block::text("ok")]);
    log.append_message(&answer, MessageExtra::default())
        .unwrap();
    set_age(log.path(), age_secs);
    log
}

fn set_age(path: &Path, secs: u64) {
    let file = File::options().append(true).open(path).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + secs))
        .unwrap();
}

fn ids(summaries: &[SessionSummary]) -> Vec<&str> {
    summaries.iter().map(|s| s.id.as_str()).collect()
}

#[test]
fn list_is_newest_first_with_name_prompt_and_count() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().to_path_buf());
    session(home.path(), HERE, "old", "first task", 10);
    let named = session(home.path(), HERE, "new", "  second task\n", 30);
    named.append_rename("temp").unwrap();
    named.append_rename("release prep").unwrap();
    set_age(named.path(), 30);
    session(home.path(), HERE, "mid", "third", 20);
    session(home.path(), THERE, "elsewhere", "x", 40);
    let dir = store.project_dir(Path::new(HERE));
    fs::write(dir.join("broken.jsonl"), "{\"type\":\"user\"}\n").unwrap();
    fs::write(dir.join("notes.txt"), "ignored").unwrap();

    let list = store.list(Path::new(HERE));
    assert_eq!(ids(&list), vec!["new", "mid", "old"]);
    assert_eq!(list[0].name.as_deref(), Some("release prep"));
    assert_eq!(list[0].first_prompt.as_deref(), Some("second task"));
    assert_eq!(list[0].message_count, 3);
    assert_eq!(list[0].cwd, Path::new(HERE));
    assert_eq!(list[0].path, dir.join("new.jsonl"));
    assert!(!list[0].created.is_empty());
    assert_eq!(list[1].name, None);
    assert_eq!(store.latest(Path::new(HERE)).unwrap().id, "new");
    assert!(store.latest(Path::new("/nowhere")).is_none());
    assert!(store.list(Path::new("/nowhere")).is_empty());
}

#[test]
fn a_large_log_is_summarised_from_its_head_and_tail() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().to_path_buf());
    let log = session(home.path(), HERE, "big", "the first prompt", 0);
    log.append_rename("early name").unwrap();
    let filler = "f".repeat(4_000);
    for i in 0..100 {
        if i == 30 {
            // Neither in the head window nor, without its repeats, in the tail one.
            log.append_rename("long haul").unwrap();
        }
        log.append_message(&Message::user_text(filler.clone()), MessageExtra::default())
            .unwrap();
    }
    // A crash mid-line at the end must not hide anything either.
    File::options()
        .append(true)
        .open(log.path())
        .unwrap()
        .write_all(b"{\"type\":\"event\",\"event\":\"rena")
        .unwrap();
    assert!(fs::metadata(log.path()).unwrap().len() > 3 * TAIL_WINDOW);
    let summary = &store.list(Path::new(HERE))[0];
    assert_eq!(summary.name.as_deref(), Some("long haul"));
    assert_eq!(summary.first_prompt.as_deref(), Some("the first prompt"));
    assert_eq!(summary.message_count, 103);
}

#[test]
fn find_by_id_name_and_prefix_here_then_everywhere() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().to_path_buf());
    let here = Path::new(HERE);
    session(home.path(), HERE, "abc111", "a", 10);
    session(home.path(), HERE, "abc222", "b", 20);
    let renamed = session(home.path(), HERE, "def333", "c", 30);
    renamed.append_rename("old name").unwrap();
    renamed.append_rename("bugfix").unwrap();
    session(home.path(), THERE, "abc999", "d", 40);
    session(home.path(), THERE, "xyz444", "e", 50)
        .append_rename("far away")
        .unwrap();

    assert_eq!(store.find(here, "abc222").unwrap().id, "abc222");
    assert_eq!(store.find(here, "bugfix").unwrap().id, "def333");
    assert_eq!(store.find(here, "de").unwrap().id, "def333");
    assert_eq!(store.find(here, "abc9").unwrap().id, "abc999");
    assert_eq!(
        store.find(here, "xyz444").unwrap().path.parent(),
        Some(store.project_dir(Path::new(THERE)).as_path())
    );
    assert_eq!(store.find(here, "far away").unwrap().id, "xyz444");

    match store.find(here, "abc").unwrap_err() {
        FindError::Ambiguous { candidates, .. } => {
            assert_eq!(candidates, vec!["abc111", "abc222"]);
        }
        other => panic!("{other}"),
    }
    let there = Path::new(THERE);
    assert_eq!(store.find(there, "abc").unwrap().id, "abc999");
    let err = store.find(Path::new("/third"), "abc").unwrap_err();
    assert!(err.to_string().contains("abc111, abc222, abc999"), "{err}");

    for missing in ["old name", "nope", ""] {
        let err = store.find(here, missing).unwrap_err();
        assert!(matches!(err, FindError::NotFound { .. }), "{missing:?}");
        assert!(err.to_string().contains("projects"), "{err}");
    }
}

#[test]
fn a_damaged_log_is_reported_by_file_and_fault_and_left_as_it_was() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().to_path_buf());
    let dir = store.project_dir(Path::new(HERE));
    fs::create_dir_all(&dir).unwrap();
    let cases: [(&str, &[u8], &str); 3] = [
        ("empty-log", b"", "the file is empty"),
        (
            "cut-log",
            br#"{"type":"session","sessi"#,
            "header is cut short",
        ),
        ("garbage-log", b"hello world\n", "not a session header"),
    ];
    for (id, bytes, fault) in cases {
        let path = dir.join(format!("{id}.jsonl"));
        fs::write(&path, bytes).unwrap();
        let err = store.find(Path::new(HERE), id).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, FindError::Damaged { .. }), "{id}: {text}");
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains(fault), "{id}: {text}");
        assert_eq!(fs::read(&path).unwrap(), bytes, "{id} was changed");
    }
    fs::create_dir_all(dir.join("dir-log.jsonl")).unwrap();
    let err = store.find(Path::new(HERE), "dir-log").unwrap_err();
    assert!(
        err.to_string().contains("a directory is in its place"),
        "{err}"
    );
    // Only an id that names no file is "no session matches".
    let err = store.find(Path::new(HERE), "no-such-log").unwrap_err();
    assert!(matches!(err, FindError::NotFound { .. }), "{err}");
    // Damaged logs stay out of the picker's list.
    assert!(store.list(Path::new(HERE)).is_empty());
}

#[test]
fn old_logs_are_removed_except_the_kept_one_and_one_in_use() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().to_path_buf());
    // `session` dates every log in 1970; `fresh` is then written now.
    let old_here = session(home.path(), HERE, "old-here", "a", 1);
    let old_there = session(home.path(), THERE, "old-there", "b", 2);
    let kept = session(home.path(), HERE, "old-kept", "c", 3);
    let fresh = session(home.path(), HERE, "fresh", "d", 4);
    File::options()
        .append(true)
        .open(fresh.path())
        .unwrap()
        .set_modified(SystemTime::now())
        .unwrap();
    let paths: Vec<PathBuf> = [&old_here, &old_there, &kept]
        .iter()
        .map(|log| log.path().to_path_buf())
        .collect();
    // Closed logs can go; `fresh` stays open (its writer's lock) for the last check.
    drop((old_here, old_there, kept));
    let thirty_days = Duration::from_secs(30 * 24 * 3600);
    assert_eq!(store.remove_older_than(thirty_days, Some(&paths[2])), 2);
    assert!(!paths[0].exists() && !paths[1].exists());
    assert!(paths[2].exists(), "the session being opened was removed");
    assert!(fresh.path().exists(), "a recent session was removed");
    // A log another writer holds stays, however old.
    set_age(fresh.path(), 5);
    assert_eq!(store.remove_older_than(thirty_days, Some(&paths[2])), 0);
    assert!(fresh.path().exists(), "a log in use was removed");
    drop(fresh);
    assert_eq!(store.remove_older_than(thirty_days, Some(&paths[2])), 1);
}

#[test]
fn a_name_shared_by_two_sessions_finds_the_newest() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().to_path_buf());
    for (id, age) in [("one", 10), ("two", 20)] {
        let log = session(home.path(), HERE, id, "p", age);
        log.append_rename("same").unwrap();
        set_age(log.path(), age);
    }
    assert_eq!(store.find(Path::new(HERE), "same").unwrap().id, "two");
}

#[test]
fn fork_copies_into_a_new_id_with_rewritten_session_ids() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().to_path_buf());
    let source = session(home.path(), HERE, "orig", "task", 0);
    source.append_mode("plan").unwrap();
    File::options()
        .append(true)
        .open(source.path())
        .unwrap()
        .write_all(b"{\"type\":\"assis")
        .unwrap();

    let path = store.fork(source.path(), "copy", Path::new(THERE)).unwrap();
    assert_eq!(path, store.project_dir(Path::new(THERE)).join("copy.jsonl"));
    let forked = replay(&path).unwrap();
    let original = replay(source.path()).unwrap();
    assert_eq!(forked.header.session_id, "copy");
    assert_eq!(forked.header.forked_from.as_deref(), Some("orig"));
    assert_eq!(forked.header.cwd, Path::new(THERE));
    assert_eq!(forked.messages, original.messages);
    assert_eq!(forked.mode.as_deref(), Some("plan"));
    assert!(forked.warnings.is_empty(), "{:?}", forked.warnings);
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 5);
    for line in text.lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        assert_eq!(line["sessionId"], "copy");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let again = store.fork(source.path(), "copy", Path::new(THERE));
    assert!(matches!(again, Err(LogError::AlreadyExists { .. })));
    let bad = store.fork(source.path(), "../escape", Path::new(THERE));
    assert!(matches!(bad, Err(LogError::InvalidSessionId { .. })));
}
