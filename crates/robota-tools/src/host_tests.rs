//! Read, Edit and Write through a host's files: an in-memory stand-in for an editor's
//! buffers that counts what it is asked.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::json;

use super::*;
use crate::edit::EditTool;
use crate::read::ReadTool;
use crate::test_support::{assert_error_contains, assert_ok, call};
use crate::write::WriteTool;

#[derive(Default)]
struct Buffers {
    texts: Mutex<HashMap<PathBuf, String>>,
    asked: Mutex<Vec<String>>,
}

#[async_trait]
impl HostFiles for Buffers {
    async fn read_text(&self, path: &Path) -> Result<String, HostError> {
        self.asked
            .lock()
            .unwrap()
            .push(format!("read {}", path.display()));
        self.texts
            .lock()
            .unwrap()
            .get(path)
            .cloned()
            .ok_or_else(|| HostError::Files("no such buffer".into()))
    }

    async fn write_text(&self, path: &Path, text: &str) -> Result<(), HostError> {
        self.asked
            .lock()
            .unwrap()
            .push(format!("write {}", path.display()));
        self.texts
            .lock()
            .unwrap()
            .insert(path.to_path_buf(), text.to_string());
        Ok(())
    }
}

fn host(buffers: &Arc<Buffers>) -> ToolHost {
    let files: Arc<dyn HostFiles> = buffers.clone();
    ToolHost {
        reads: Some(files.clone()),
        writes: Some(files),
        terminal: None,
    }
}

#[tokio::test]
async fn read_edit_and_write_go_through_the_buffers_and_leave_the_disk_alone() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "disk\n").unwrap();
    let buffers = Arc::new(Buffers::default());
    buffers
        .texts
        .lock()
        .unwrap()
        .insert(file.clone(), "buffer one\n".to_string());
    let tracker = FileReadTracker::new();
    let read = ReadTool::new(tracker.clone()).on_host(host(&buffers));
    let edit = EditTool::new(tracker.clone()).on_host(host(&buffers));
    let write = WriteTool::new(tracker).on_host(host(&buffers));

    let out = call(&read, dir.path(), json!({"file_path": "a.txt"})).await;
    assert_eq!(assert_ok(&out), "     1\tbuffer one");
    let input = json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"});
    assert_ok(&call(&edit, dir.path(), input).await);
    assert_eq!(buffers.texts.lock().unwrap()[&file], "buffer two\n");
    // What Edit wrote counts as read: Write may replace it without a new Read.
    let input = json!({"file_path": "a.txt", "content": "final\n"});
    assert_ok(&call(&write, dir.path(), input).await);
    assert_eq!(buffers.texts.lock().unwrap()[&file], "final\n");
    // A new file is created through the editor too.
    let input = json!({"file_path": "new.txt", "content": "fresh\n"});
    assert_ok(&call(&write, dir.path(), input).await);
    assert_eq!(
        buffers.texts.lock().unwrap()[&dir.path().join("new.txt")],
        "fresh\n"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "disk\n");
    assert!(!dir.path().join("new.txt").exists());
}

#[tokio::test]
async fn what_the_path_is_on_disk_is_still_checked_before_the_host_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let buffers = Arc::new(Buffers::default());
    let tracker = FileReadTracker::new();
    let read = ReadTool::new(tracker.clone()).on_host(host(&buffers));
    let write = WriteTool::new(tracker).on_host(host(&buffers));
    let out = call(&read, dir.path(), json!({"file_path": "."})).await;
    assert_error_contains(&out, "is a directory");
    let out = call(&read, dir.path(), json!({"file_path": "/dev/null"})).await;
    assert_error_contains(&out, "is not a regular file");
    let input = json!({"file_path": ".", "content": "x"});
    assert_error_contains(&call(&write, dir.path(), input).await, "is a directory");
    assert!(buffers.asked.lock().unwrap().is_empty());
    // Neither on disk nor in the editor: the usual message for a missing file.
    let out = call(&read, dir.path(), json!({"file_path": "gone.txt"})).await;
    assert_error_contains(&out, "File does not exist");
}

#[tokio::test]
async fn binary_buffers_are_refused_and_unread_ones_are_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let blob = dir.path().join("blob");
    let other = dir.path().join("other.txt");
    std::fs::write(&other, "x\n").unwrap();
    let buffers = Arc::new(Buffers::default());
    {
        let mut texts = buffers.texts.lock().unwrap();
        texts.insert(blob.clone(), "a\0b".to_string());
        texts.insert(other.clone(), "in the editor\n".to_string());
    }
    let tracker = FileReadTracker::new();
    let read = ReadTool::new(tracker.clone()).on_host(host(&buffers));
    let write = WriteTool::new(tracker.clone()).on_host(host(&buffers));
    let out = call(&read, dir.path(), json!({"file_path": "blob"})).await;
    assert_error_contains(&out, "binary file");
    assert!(tracker.stamp(&blob).is_none());
    let input = json!({"file_path": "other.txt", "content": "replaced\n"});
    assert_error_contains(&call(&write, dir.path(), input).await, "has not been read");
    let asked = buffers.asked.lock().unwrap().clone();
    assert!(asked.iter().all(|a| a.starts_with("read ")), "{asked:?}");
}
