//! `install.sh ARCHIVE`, for real: the script installs a release archive (as
//! `scripts/release.sh` packs one: `robota` and the README in a `.tar.gz`, its SHA-256 in
//! `ARCHIVE.sha256`) only when the archive matches its sum, and installs nothing when it
//! does not or the sum is missing. The archive's `robota` is a stand-in script that prints
//! a version, so the test needs no release build.

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sha2::{Digest, Sha256};

/// Packs a stand-in `robota` into `dir/robota-test.tar.gz` and writes its `.sha256`.
fn archive(dir: &Path) -> PathBuf {
    let stage = dir.join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    let binary = stage.join("robota");
    std::fs::write(&binary, "#!/bin/sh\necho 'robota 9.9.9-archive'\n").unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(stage.join("README.md"), "robota\n").unwrap();
    let archive = dir.join("robota-test.tar.gz");
    let status = Command::new("tar")
        .arg("-C")
        .arg(&stage)
        .arg("-czf")
        .arg(&archive)
        .args(["robota", "README.md"])
        .status()
        .unwrap();
    assert!(status.success());
    let digest = Sha256::digest(std::fs::read(&archive).unwrap());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::write(
        dir.join("robota-test.tar.gz.sha256"),
        format!("{hex}  robota-test.tar.gz\n"),
    )
    .unwrap();
    archive
}

fn install(archive: &Path, bin_dir: &Path) -> Output {
    Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh"))
        .arg(archive)
        .env("ROBOTA_BIN_DIR", bin_dir)
        .output()
        .unwrap()
}

#[test]
fn a_checked_archive_is_installed_and_a_tampered_or_unsummed_one_is_not() {
    for program in ["tar", "bash", "sha256sum"] {
        if Command::new(program).arg("--version").output().is_err() {
            support::skip::skip(program, &format!("{program} is not installed"));
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let archive = archive(dir.path());
    let bin = dir.path().join("bin");
    let out = install(&archive, &bin);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout.contains("installed robota 9.9.9-archive"),
        "{stdout}"
    );
    let installed = Command::new(bin.join("robota")).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&installed.stdout),
        "robota 9.9.9-archive\n"
    );

    // One byte changed after the sum was taken: refused, nothing installed.
    let mut bytes = std::fs::read(&archive).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&archive, bytes).unwrap();
    let other_bin = dir.path().join("other-bin");
    let out = install(&archive, &other_bin);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("does not match") && stderr.contains("nothing was installed"),
        "{stderr}"
    );
    assert!(!other_bin.join("robota").exists());

    // No sum beside it: refused too.
    std::fs::remove_file(dir.path().join("robota-test.tar.gz.sha256")).unwrap();
    let out = install(&archive, &other_bin);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains(".sha256 is missing"), "{stderr}");
    assert!(!other_bin.join("robota").exists());
}
