//! The marketplaces a user added (`robota plugin marketplace add|list|remove|update`):
//! a local folder or `marketplace.json` file (read in place), a git URL (`#ref` picks a
//! branch or tag) or a GitHub `owner/repo[@ref]` (cloned into
//! `$ROBOTA_HOME/plugins/marketplaces/<name>/`), or an `http(s)` URL of a `marketplace.json`
//! (downloaded there), recorded in `known_marketplaces.json`;
//! and the `extraKnownMarketplaces` of settings, added on first use. A clone goes to a
//! staging folder first, so a failed one or a malformed `marketplace.json` leaves nothing.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::error::PluginError;
use super::git;
use super::marketplace::{Marketplace, github_url};
use super::store::{PluginStore, now_text, staging_name};
use crate::settings::Settings;

/// A marketplace opened for reading: its parsed file and the folder its relative plugin
/// sources start from.
pub(crate) struct OpenMarketplace {
    pub marketplace: Marketplace,
    pub root: PathBuf,
    /// Its `source` record (`{source: "github", repo}`, …).
    pub source: Value,
}

/// Where a marketplace comes from, as the user typed it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    Directory(PathBuf),
    File(PathBuf),
    Git {
        url: String,
        git_ref: Option<String>,
        record: Value,
    },
    /// An `http(s)` URL of a `marketplace.json` (downloaded; its plugins must come from
    /// git or GitHub, as it brings no folders).
    Url(String),
}

/// Reads `<root>/.claude-plugin/marketplace.json` (or the file itself); errors name it.
fn read_marketplace(file: &Path) -> Result<Marketplace, PluginError> {
    let text = std::fs::read_to_string(file).map_err(|e| PluginError::io("read", file, e))?;
    parse_marketplace(&text, &file.display().to_string())
}

/// Parses a `marketplace.json` read from `at` (a file or URL, which errors name).
fn parse_marketplace(text: &str, at: &str) -> Result<Marketplace, PluginError> {
    Marketplace::parse(text).map_err(|source| PluginError::Marketplace {
        at: at.to_string(),
        source,
    })
}

fn manifest_in(root: &Path) -> PathBuf {
    root.join(".claude-plugin").join("marketplace.json")
}

/// The marketplace root of a `marketplace.json` file: the folder holding its
/// `.claude-plugin/`, else the file's own folder.
fn root_of_file(file: &Path) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new("/"));
    if parent.file_name().is_some_and(|n| n == ".claude-plugin") {
        parent.parent().unwrap_or(parent).to_path_buf()
    } else {
        parent.to_path_buf()
    }
}

fn parse_origin(source: &str, cwd: &Path) -> Result<Origin, PluginError> {
    let source = source.trim();
    let expanded = match source.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(rest))
            .unwrap_or_else(|| PathBuf::from(source)),
        None => PathBuf::from(source),
    };
    let local = cwd.join(&expanded);
    if local.is_dir() {
        return Ok(Origin::Directory(absolute(&local)));
    }
    if local.is_file() {
        return Ok(Origin::File(absolute(&local)));
    }
    if git::looks_like_git_url(source) {
        let (url, git_ref) = match source.split_once('#') {
            Some((url, r)) if !r.is_empty() => (url.to_string(), Some(r.to_string())),
            _ => (source.to_string(), None),
        };
        let record = json!({"source": "git", "url": url});
        return Ok(Origin::Git {
            url,
            git_ref,
            record,
        });
    }
    if source.starts_with("http://") || source.starts_with("https://") {
        return Ok(Origin::Url(source.to_string()));
    }
    let (repo, git_ref) = match source.split_once('@') {
        Some((repo, r)) => (repo, Some(r.to_string())),
        None => (source, None),
    };
    let parts: Vec<&str> = repo.split('/').collect();
    let shorthand = parts.len() == 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        });
    if shorthand {
        return Ok(Origin::Git {
            url: github_url(repo),
            git_ref,
            record: json!({"source": "github", "repo": repo}),
        });
    }
    Err(PluginError::UnknownSource(source.to_string()))
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `marketplace add`: returns the marketplace added.
pub fn add(store: &PluginStore, source: &str, cwd: &Path) -> Result<OpenMarketplace, PluginError> {
    let origin = parse_origin(source, cwd)?;
    let mut known = store.known()?;
    let check_new = |name: &str, known: &Map<String, Value>| match known.get(name) {
        Some(_) => Err(PluginError::MarketplaceExists(name.to_string())),
        None => Ok(()),
    };
    let (open, location) = match origin {
        Origin::Directory(dir) => {
            let marketplace = read_marketplace(&manifest_in(&dir))?;
            check_new(&marketplace.name, &known)?;
            let source = json!({"source": "directory", "path": dir});
            (
                OpenMarketplace {
                    marketplace,
                    root: dir.clone(),
                    source,
                },
                dir,
            )
        }
        Origin::File(file) => {
            let marketplace = read_marketplace(&file)?;
            check_new(&marketplace.name, &known)?;
            let source = json!({"source": "file", "path": file});
            let root = root_of_file(&file);
            (
                OpenMarketplace {
                    marketplace,
                    root,
                    source,
                },
                file,
            )
        }
        Origin::Git {
            url,
            git_ref,
            mut record,
        } => {
            let dir = store.marketplaces_dir();
            std::fs::create_dir_all(&dir).map_err(|e| PluginError::io("create", &dir, e))?;
            let staging = dir.join(staging_name("clone"));
            let result = git::clone(&url, &staging, git_ref.as_deref(), None)
                .and_then(|()| read_marketplace(&manifest_in(&staging)))
                .and_then(|m| check_new(&m.name, &known).map(|()| m));
            let marketplace = match result {
                Ok(m) => m,
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&staging);
                    return Err(e);
                }
            };
            let dest = dir.join(&marketplace.name);
            let moved = remove_stale(&dest).and_then(|()| std::fs::rename(&staging, &dest));
            if let Err(e) = moved {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(PluginError::io("move the clone to", dest, e));
            }
            if let (Some(r), Some(obj)) = (git_ref, record.as_object_mut()) {
                obj.insert("ref".into(), json!(r));
            }
            let open = OpenMarketplace {
                marketplace,
                root: dest.clone(),
                source: record,
            };
            (open, dest)
        }
        Origin::Url(url) => {
            let text = download(&url)?;
            let marketplace = parse_marketplace(&text, &url)?;
            check_new(&marketplace.name, &known)?;
            let dest = store.marketplaces_dir().join(&marketplace.name);
            if let Err(source) = remove_stale(&dest).and_then(|()| save_download(&dest, &text)) {
                return Err(PluginError::SaveDownload { url, dest, source });
            }
            let source = json!({"source": "url", "url": url});
            let open = OpenMarketplace {
                marketplace,
                root: dest.clone(),
                source,
            };
            (open, dest)
        }
    };
    known.insert(
        open.marketplace.name.clone(),
        json!({"source": open.source, "installLocation": location, "lastUpdated": now_text()}),
    );
    store.save_known(known)?;
    Ok(open)
}

/// The most a downloaded `marketplace.json` may weigh.
const MAX_DOWNLOAD_BYTES: usize = 16 * 1024 * 1024;

/// GETs `url` (30 s at most) on a thread of its own, so it works inside and outside an
/// async runtime; the body must be UTF-8 and at most [`MAX_DOWNLOAD_BYTES`].
fn download(url: &str) -> Result<String, PluginError> {
    let url = url.to_string();
    let fetch = move || -> Result<String, PluginError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| PluginError::DownloadSetup(e.into()))?;
        runtime.block_on(async {
            let client = robota_core::http_client::client_builder()
                .timeout(std::time::Duration::from_secs(30))
                .build()
                .map_err(|e| PluginError::DownloadSetup(e.into()))?;
            let failed = |source| PluginError::Request {
                url: url.clone(),
                source,
            };
            let response = client.get(&url).send().await.map_err(failed)?;
            let status = response.status();
            if !status.is_success() {
                return Err(PluginError::HttpStatus {
                    url: url.clone(),
                    status,
                });
            }
            let body = response.bytes().await.map_err(failed)?;
            if body.len() > MAX_DOWNLOAD_BYTES {
                return Err(PluginError::TooLarge {
                    url: url.clone(),
                    limit: MAX_DOWNLOAD_BYTES,
                });
            }
            String::from_utf8(body.to_vec()).map_err(|_| PluginError::NotText(url.clone()))
        })
    };
    std::thread::spawn(fetch)
        .join()
        .map_err(|_| PluginError::DownloadStopped)?
}

/// Writes a downloaded marketplace as `<dest>/.claude-plugin/marketplace.json`.
fn save_download(dest: &Path, text: &str) -> std::io::Result<()> {
    let file = manifest_in(dest);
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(file, text)
}

/// A folder left by an earlier marketplace of the same name that is no longer known.
fn remove_stale(dest: &Path) -> std::io::Result<()> {
    if dest.exists() {
        std::fs::remove_dir_all(dest)?;
    }
    Ok(())
}

/// Opens the known marketplace `name`; one only declared in settings
/// (`extraKnownMarketplaces`) is added first.
pub fn open(
    store: &PluginStore,
    name: &str,
    settings: Option<&Settings>,
    cwd: &Path,
) -> Result<OpenMarketplace, PluginError> {
    let known = store.known()?;
    let Some(record) = known.get(name) else {
        let declared = settings.map(declared);
        let source = declared.as_ref().and_then(|d| {
            d.sources
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, s)| s.clone())
        });
        if let Some(source) = source {
            let open = add(store, &source, cwd)?;
            if open.marketplace.name != name {
                return Err(PluginError::DeclaredUnderOtherName {
                    declared: name.to_string(),
                    actual: open.marketplace.name,
                });
            }
            return Ok(open);
        }
        let mut names: Vec<String> = known.keys().cloned().collect();
        if let Some(d) = &declared {
            names.extend(d.sources.iter().map(|(n, _)| n.clone()));
            if d.held_back.iter().any(|n| n == name) {
                return Err(PluginError::DeclaredButUntrusted(name.to_string()));
            }
        }
        return Err(PluginError::NoMarketplace {
            name: name.to_string(),
            known: names,
            suggest_add: true,
        });
    };
    let location = record
        .get("installLocation")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .ok_or_else(|| PluginError::NoInstallLocation {
            file: store.known_path(),
            name: name.to_string(),
        })?;
    let source = record.get("source").cloned().unwrap_or(Value::Null);
    let (file, root) = if location.is_file() {
        (location.clone(), root_of_file(&location))
    } else {
        (manifest_in(&location), location)
    };
    let marketplace = read_marketplace(&file)?;
    Ok(OpenMarketplace {
        marketplace,
        root,
        source,
    })
}

/// The marketplaces declared in settings (`extraKnownMarketplaces`, the highest file's
/// entry winning whole), as a source each. A project's declarations count only once the
/// directory is trusted, as in Claude Code; until then they come back in `held_back`.
pub(crate) struct Declared {
    pub sources: Vec<(String, String)>,
    pub held_back: Vec<String>,
}

pub fn declared(settings: &Settings) -> Declared {
    let mut found = Map::new();
    let mut held_back = Vec::new();
    for layer in &settings.layers {
        let Some(map) = layer
            .value
            .get("extraKnownMarketplaces")
            .and_then(Value::as_object)
        else {
            continue;
        };
        for (name, entry) in map {
            if layer.scope.is_project() && !settings.trusted {
                held_back.push(name.clone());
            } else {
                found.insert(name.clone(), entry.clone());
            }
        }
    }
    held_back.retain(|n| !found.contains_key(n));
    let sources = found
        .iter()
        .filter_map(|(name, entry)| declared_source(entry).map(|s| (name.clone(), s)))
        .collect();
    Declared { sources, held_back }
}

/// `extraKnownMarketplaces.<name>` (`{source: {source, repo|url|path, ref?}}`) as
/// something `add` takes.
fn declared_source(entry: &Value) -> Option<String> {
    let source = entry.get("source")?;
    let field = |k: &str| source.get(k).and_then(Value::as_str).map(str::to_string);
    match source.get("source").and_then(Value::as_str)? {
        "github" => field("repo").map(|r| match field("ref") {
            Some(git_ref) => format!("{r}@{git_ref}"),
            None => r,
        }),
        "git" | "url" => field("url"),
        "directory" | "file" => field("path"),
        _ => None,
    }
}

/// `marketplace remove`: forgets it and deletes its clone; returns the plugins from it
/// that stay installed.
pub fn remove(store: &PluginStore, name: &str) -> Result<Vec<String>, PluginError> {
    let mut known = store.known()?;
    let Some(record) = known.remove(name) else {
        return Err(no_marketplace(name, &known));
    };
    store.save_known(known)?;
    let location = record
        .get("installLocation")
        .and_then(Value::as_str)
        .map(PathBuf::from);
    if let Some(dir) = location.filter(|d| d.starts_with(store.marketplaces_dir())) {
        std::fs::remove_dir_all(&dir).map_err(|e| PluginError::io("delete", &dir, e))?;
    }
    let suffix = format!("@{name}");
    Ok(store
        .installed()?
        .keys()
        .filter(|id| id.ends_with(&suffix))
        .cloned()
        .collect())
}

fn no_marketplace(name: &str, known: &Map<String, Value>) -> PluginError {
    PluginError::NoMarketplace {
        name: name.to_string(),
        known: known.keys().cloned().collect(),
        suggest_add: false,
    }
}

/// `marketplace update [name]`: pulls each cloned marketplace and re-reads every one;
/// returns a line per marketplace.
pub fn update(store: &PluginStore, name: Option<&str>) -> Result<Vec<String>, PluginError> {
    let mut known = store.known()?;
    let names: Vec<String> = match name {
        Some(n) if known.contains_key(n) => vec![n.to_string()],
        Some(n) => return Err(no_marketplace(n, &known)),
        None => known.keys().cloned().collect(),
    };
    let mut lines = Vec::new();
    for name in names {
        let Some(record) = known.get_mut(&name).and_then(Value::as_object_mut) else {
            continue;
        };
        let location = record
            .get("installLocation")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .unwrap_or_default();
        let url = record
            .get("source")
            .filter(|s| s.get("source").and_then(Value::as_str) == Some("url"))
            .and_then(|s| s.get("url"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let cloned = location.starts_with(store.marketplaces_dir());
        let pulled = match url {
            Some(url) => download(&url).and_then(|text| {
                parse_marketplace(&text, &url)?;
                save_download(&location, &text)
                    .map_err(|e| PluginError::io("write", manifest_in(&location), e))
            }),
            None if cloned => git::pull(&location),
            None => Ok(()),
        };
        let file = if location.is_file() {
            location.clone()
        } else {
            manifest_in(&location)
        };
        match pulled.and_then(|()| read_marketplace(&file)) {
            Ok(m) => {
                record.insert("lastUpdated".into(), json!(now_text()));
                lines.push(format!("{name}: {} plugins", m.plugins.len()));
            }
            Err(e) => lines.push(format!("{name}: not updated: {e}")),
        }
    }
    store.save_known(known)?;
    Ok(lines)
}

/// A short text for a `source` record: `github o/r`, `git URL`, `directory PATH`.
pub(crate) fn describe_source(source: &Value) -> String {
    let field = |k: &str| source.get(k).and_then(Value::as_str).unwrap_or("");
    match field("source") {
        "github" => format!("github {}", field("repo")),
        "git" => format!("git {}", field("url")),
        "url" => format!("url {}", field("url")),
        kind => format!("{kind} {}", field("path")),
    }
}
