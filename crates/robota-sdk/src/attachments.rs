//! `@path` in a prompt attaches the file, as in Claude Code: each mention (at the start or
//! after whitespace; `@"a b.txt"` for names with spaces; trailing punctuation is not part
//! of the path) of an existing file is read through the session's Read tool — numbered
//! lines, binary files refused, and the read recorded so Edit may change the file next —
//! and its content follows the prompt in the same message. A directory mention lists the
//! directory. A mention of a path that does not exist is reported and nothing is sent for
//! it; a file a Read deny rule protects is never attached. Mentions inside code fences and
//! e-mail addresses are left alone. An image file mentioned is attached as the image.
//!
//! Also what a paste names: a pasted or dropped path to an image file
//! ([`pasted_image_path`]) becomes the image ([`load_image`]).

use std::path::{Path, PathBuf};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use robota_core::image::{ImageError, has_image_extension, image_from_bytes, sniff_media_type};
use robota_core::message::ImageSource;
use robota_core::permission::{CallFacts, PermissionPolicy, Verdict};
use robota_core::{Block, RiskClass, ToolContext, ToolRegistry};
use robota_tools::resolve_path;

/// At most this many mentions of one prompt are attached.
const MAX_ATTACHMENTS: usize = 20;
/// A directory listing shows at most this many entries.
const MAX_LISTING: usize = 200;
/// Characters that end a sentence rather than a path.
const TRAILING: &[char] = &[',', '.', ';', ':', '!', '?', ')', ']', '}', '\'', '"'];

/// One `@` mention as typed and the path it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mention {
    pub typed: String,
    pub path: PathBuf,
}

/// The mentions in `text` whose paths exist, and the ones that look like paths but do not.
pub(crate) fn mentions(text: &str, cwd: &Path) -> (Vec<Mention>, Vec<String>) {
    let mut found: Vec<Mention> = Vec::new();
    let mut missing = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        for typed in line_mentions(line) {
            let existing = candidates(&typed)
                .into_iter()
                .map(|c| (resolve_path(cwd, &c), c))
                .find(|(path, _)| path.exists());
            match existing {
                Some((path, typed)) if !found.iter().any(|m| m.path == path) => {
                    found.push(Mention { typed, path });
                }
                Some(_) => {}
                None if typed.contains(['/', '.']) => missing.push(typed),
                None => {}
            }
        }
    }
    found.truncate(MAX_ATTACHMENTS);
    (found, missing)
}

/// The raw mentions of one line (without the `@`).
fn line_mentions(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    let mut before: Option<char> = None;
    while let Some(at) = rest.find('@') {
        let prev = rest[..at]
            .chars()
            .next_back()
            .or(if at == 0 { before } else { None });
        let after = &rest[at + 1..];
        let starts = prev.is_none_or(char::is_whitespace);
        if starts {
            if let Some(quoted) = after.strip_prefix('"')
                && let Some(end) = quoted.find('"')
            {
                out.push(quoted[..end].to_string());
                rest = &quoted[end + 1..];
                before = Some('"');
                continue;
            }
            let end = after.find(char::is_whitespace).unwrap_or(after.len());
            if end > 0 {
                out.push(after[..end].to_string());
            }
            before = after[..end].chars().next_back().or(Some('@'));
            rest = &after[end..];
        } else {
            before = Some('@');
            rest = after;
        }
    }
    out
}

/// The mention as typed, then with trailing punctuation removed step by step.
fn candidates(typed: &str) -> Vec<String> {
    let mut out = vec![typed.to_string()];
    let mut trimmed = typed;
    while let Some(shorter) = trimmed.strip_suffix(TRAILING) {
        if shorter.is_empty() {
            break;
        }
        out.push(shorter.to_string());
        trimmed = shorter;
    }
    out
}

/// What attaching the mentions of a prompt gave: the blocks to send after its text, and
/// a line for the user about each mention that was not attached.
#[derive(Debug, Default)]
pub(crate) struct Attached {
    pub blocks: Vec<Block>,
    pub warnings: Vec<String>,
    /// What was attached, as the user would name it (`calc.py (12 lines)`).
    pub shown: Vec<String>,
}

/// Reads every file and directory `text` mentions.
pub(crate) async fn attach(
    text: &str,
    cwd: &Path,
    tools: &ToolRegistry,
    policy: &PermissionPolicy,
    env: &[(String, String)],
) -> Attached {
    let mut attached = Attached::default();
    if !text.contains('@') {
        return attached;
    }
    let (found, missing) = mentions(text, cwd);
    for typed in missing {
        attached.warnings.push(format!(
            "@{typed}: no such file or directory (not attached)"
        ));
    }
    for mention in found {
        let shown = mention.path.display().to_string();
        let facts = CallFacts::new("Read", RiskClass::Read, Some(&shown), cwd);
        if let Verdict::Deny { reason } = policy.evaluate(&facts) {
            attached
                .warnings
                .push(format!("@{}: not attached ({reason})", mention.typed));
            continue;
        }
        if mention.path.is_dir() {
            attached.blocks.push(Block::text(listing(&mention.path)));
            attached
                .shown
                .push(format!("{} (directory listing)", mention.typed));
            continue;
        }
        let Some(read) = tools.get("Read") else {
            attached.warnings.push(format!(
                "@{}: not attached (the Read tool is not available in this session)",
                mention.typed
            ));
            continue;
        };
        let ctx = ToolContext {
            cwd: cwd.to_path_buf(),
            cancel: CancellationToken::new(),
            tool_use_id: String::new(),
            env: env.to_vec(),
            read_denial: None,
            progress: Default::default(),
        };
        let output = read.call(json!({ "file_path": shown }), &ctx).await;
        if output.is_error {
            attached.warnings.push(format!(
                "@{}: not attached: {}",
                mention.typed, output.content
            ));
            continue;
        }
        attached.blocks.push(Block::text(format!(
            "<attached-file path=\"{shown}\">\n{}\n</attached-file>",
            output.content.trim_end()
        )));
        let what = if output.images.is_empty() {
            format!("{} lines", output.content.trim_end().lines().count())
        } else {
            "image".to_string()
        };
        attached.shown.push(format!("{} ({what})", mention.typed));
        // An image file comes as the image itself.
        let images = output.images.into_iter();
        attached
            .blocks
            .extend(images.map(|source| Block::Image { source }));
    }
    attached
}

/// The file a paste names when the whole paste is one path to an image — what a terminal
/// pastes for a dropped file: plain, quoted, with `\ `-escaped spaces, `~/…` or a
/// `file://` URL. The file must exist and be named like an image or start like one.
pub fn pasted_image_path(text: &str, cwd: &Path) -> Option<PathBuf> {
    let text = text.trim();
    if text.is_empty() || text.contains('\n') || text.len() > 4096 {
        return None;
    }
    let unquoted = ['\'', '"']
        .iter()
        .find_map(|q| text.strip_prefix(*q).and_then(|t| t.strip_suffix(*q)))
        .map(str::to_string)
        .unwrap_or_else(|| text.replace("\\ ", " "));
    let named = match unquoted.strip_prefix("file://") {
        Some(url) => percent_decoded(url)?,
        None => unquoted,
    };
    let path = resolve_path(cwd, &named);
    if !path.is_file() {
        return None;
    }
    let starts_like_image = || {
        let mut head = [0u8; 16];
        std::fs::File::open(&path)
            .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
            .is_ok_and(|n| sniff_media_type(&head[..n]).is_some())
    };
    (has_image_extension(&path) || starts_like_image()).then_some(path)
}

/// Why a file cannot be attached as an image.
#[derive(Debug, thiserror::Error)]
pub enum LoadImageError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The io error.
        #[source]
        source: std::io::Error,
    },
    /// Not an image, or too large.
    #[error("{}: {problem}", path.display())]
    NotSendable {
        /// The file.
        path: PathBuf,
        /// Why the provider cannot be sent it.
        problem: ImageError,
    },
}

/// The image in the file at `path`, or why it cannot be sent (not an image, too large).
pub fn load_image(path: &Path) -> Result<ImageSource, LoadImageError> {
    let bytes = std::fs::read(path).map_err(|source| LoadImageError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    image_from_bytes(&bytes).map_err(|problem| LoadImageError::NotSendable {
        path: path.to_path_buf(),
        problem,
    })
}

/// `%XX` escapes of a `file://` URL's path decoded; `None` when they are not UTF-8.
fn percent_decoded(url: &str) -> Option<String> {
    let path = url.strip_prefix("localhost").unwrap_or(url);
    percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .ok()
        .map(|text| text.into_owned())
}

/// A directory's entries, folders marked with `/`.
fn listing(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    if e.path().is_dir() {
                        format!("{name}/")
                    } else {
                        name
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let total = names.len();
    names.truncate(MAX_LISTING);
    let mut text = format!("<attached-directory path=\"{}\">\n", dir.display());
    for name in &names {
        text.push_str(name);
        text.push('\n');
    }
    if total > MAX_LISTING {
        text.push_str(&format!("… and {} more\n", total - MAX_LISTING));
    }
    text.push_str("</attached-directory>");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_and_dropped_image_paths_are_recognised_in_the_shapes_terminals_paste() {
        use robota_core::image::fixtures::PNG_1X1;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("my shot.png"), PNG_1X1).unwrap();
        std::fs::write(dir.path().join("noext"), PNG_1X1).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "hello").unwrap();
        let cwd = dir.path();
        let shot = dir.path().join("my shot.png");
        let abs = shot.display().to_string();
        for pasted in [
            format!("'{abs}'"),
            format!("\"{abs}\"  "),
            abs.replace(' ', "\\ "),
            format!("file://{}", abs.replace(' ', "%20")),
            "'my shot.png'".to_string(),
        ] {
            assert_eq!(
                pasted_image_path(&pasted, cwd),
                Some(shot.clone()),
                "{pasted}"
            );
        }
        // Judged by contents when the name says nothing.
        assert_eq!(pasted_image_path("noext", cwd), Some(cwd.join("noext")));
        // Text, a text file, a missing image, two lines: an ordinary paste.
        for pasted in [
            "notes.txt",
            "gone.png",
            "hello world",
            &format!("{abs}\n{abs}"),
        ] {
            assert_eq!(pasted_image_path(pasted, cwd), None, "{pasted}");
        }
        let image = load_image(&shot).unwrap();
        assert_eq!(image.media_type, "image/png");
        std::fs::write(dir.path().join("fake.png"), "not an image").unwrap();
        let fake = pasted_image_path("fake.png", cwd).unwrap();
        let err = load_image(&fake).unwrap_err();
        assert!(
            matches!(
                &err,
                LoadImageError::NotSendable {
                    problem: ImageError::NotAnImage,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("not a PNG, JPEG"), "{err}");
    }

    #[test]
    fn mentions_are_found_where_users_type_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(dir.path().join("b c.txt"), "x").unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let (found, missing) = mentions(
            "look at @a.rs, and @\"b c.txt\" in @src/ — mail me@a.rs @nobody @gone.rs\n```\n@a.rs\n```\n@a.rs again",
            dir.path(),
        );
        let typed: Vec<&str> = found.iter().map(|m| m.typed.as_str()).collect();
        assert_eq!(typed, ["a.rs", "b c.txt", "src/"]);
        assert_eq!(found[0].path, dir.path().join("a.rs"));
        assert_eq!(missing, ["gone.rs"]);
    }

    #[tokio::test]
    async fn files_are_read_denied_ones_held_and_directories_listed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").unwrap();
        std::fs::create_dir(dir.path().join("secrets")).unwrap();
        std::fs::write(dir.path().join("secrets/key"), "TOPSECRET").unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("d/one"), "").unwrap();
        let tools = ToolRegistry::new(robota_tools::default_tools(dir.path()));
        let mut policy = PermissionPolicy::new(robota_core::permission::PermissionMode::Default);
        policy.deny = robota_core::permission::PermissionRule::parse_list("Read(./secrets/**)");
        let attached = attach(
            "see @a.txt and @secrets/key and @d and @missing.txt",
            dir.path(),
            &tools,
            &policy,
            &[],
        )
        .await;
        let texts: Vec<String> = attached
            .blocks
            .iter()
            .map(|b| match b {
                Block::Text { text, .. } => text.clone(),
                _ => String::new(),
            })
            .collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(
            texts[0].contains("1\talpha")
                || texts[0].contains("1→alpha")
                || texts[0].contains("alpha")
        );
        assert!(texts[0].starts_with("<attached-file path="));
        assert_eq!(
            texts[1],
            format!(
                "<attached-directory path=\"{}\">\none\n</attached-directory>",
                dir.path().join("d").display()
            )
        );
        assert!(texts.iter().all(|t| !t.contains("TOPSECRET")));
        assert_eq!(attached.warnings.len(), 2, "{:?}", attached.warnings);
        assert!(attached.warnings[0].starts_with("@missing.txt"));
        assert!(attached.warnings[1].starts_with("@secrets/key: not attached"));
    }
}
