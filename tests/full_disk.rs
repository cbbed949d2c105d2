//! A full disk under `ROBOTA_HOME` is told, never a success over a log that stopped (issue
//! 9): a 64 KiB tmpfs is mounted as `ROBOTA_HOME`, a first session is written, the rest of
//! the space is filled; resuming it warns that the disk is full, and a prompt too long for
//! the log's last page must end in an error naming the log. Mounting needs root (or CAP_SYS_ADMIN); where `mount` is refused the test
//! skips through `support::skip` (a failure under `ROBOTA_REQUIRE_REAL`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use support::project::{json_result, project};
use support::{MockServer, anthropic};

/// Unmounts the tmpfs when the test ends, however it ends.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_is_reported_as_an_error_with_the_log_named() {
    let p = project();
    std::fs::create_dir_all(&p.home).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&p.home)
        .output();
    let refused = match mounted {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        Err(e) => Some(format!("mount could not run: {e}")),
    };
    if let Some(why) = refused {
        let how = "run the test as root or with CAP_SYS_ADMIN, as .ci/run does";
        support::skip::skip(
            "tmpfs",
            &format!("mounting a tmpfs was refused ({why}); {how}"),
        );
        return;
    }
    let _guard = Mounted(p.home.clone());
    let server = MockServer::start(vec![
        anthropic::text_turn("first answer"),
        anthropic::text_turn("short answer"),
        anthropic::text_turn("second answer"),
    ]);
    let out = p.run(&server, &["-p", "hello"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Fill what is left.
    let mut fill = std::fs::File::create(p.home.join("fill")).unwrap();
    let block = vec![0u8; 4096];
    while fill.write_all(&block).is_ok() {}
    drop(fill);

    // A short prompt still fits in the log's last page: it is answered, and the user is
    // told that the log is about to stop being written.
    let out = p.run(&server, &["-c", "-p", "short"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("short answer"));
    assert!(
        stderr.contains("is full") && stderr.contains(".jsonl"),
        "{stderr}"
    );

    // A prompt longer than the free room left in the log's last page.
    let long = format!("again {}", "and again ".repeat(2_000));
    let out = p.run(&server, &["-c", "-p", &long, "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let result = json_result(&out);
    assert_eq!(result["is_error"], true, "{result}");
    let text = format!("{result} {}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains("could not be written") && text.contains(".jsonl"),
        "{text}"
    );
    assert!(text.contains("No space left on device"), "{text}");
}
