//! Installing a plugin from a marketplace (`name@marketplace`): its folder — a relative
//! path of the marketplace, or a git repository (or a folder of one) cloned with the
//! system `git` — is copied to a staging folder, checked by loading it, and only then
//! moved to `cache/<marketplace>/<plugin>/<version>/` and recorded in
//! `installed_plugins.json`; a failure at any step leaves nothing behind. Nothing of the
//! plugin runs at install time. With `strict: false` the marketplace entry is the whole
//! definition, so its fields are written as the copy's `plugin.json` (also when a strict
//! entry's plugin has no manifest); a strict entry only adds the keys the plugin's own
//! manifest leaves out. Uninstall and update work on the same records.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::error::{FormatError, PluginError};
use super::git;
use super::known::{self, OpenMarketplace};
use super::load::{Plugin, load_plugin};
use super::marketplace::{MarketplaceEntry, PluginSource};
use super::store::{PluginStore, copy_tree, now_text, staging_name};
use crate::settings::Settings;

/// `name@marketplace` split; a bare name is looked up in every known marketplace.
pub(crate) fn resolve_id(store: &PluginStore, id: &str) -> Result<(String, String), PluginError> {
    if let Some((name, marketplace)) = id.split_once('@') {
        if name.is_empty() || marketplace.is_empty() {
            return Err(PluginError::BadId(id.to_string()));
        }
        return Ok((name.to_string(), marketplace.to_string()));
    }
    let installed: Vec<String> = store
        .installed()?
        .keys()
        .filter(|k| k.split_once('@').is_some_and(|(n, _)| n == id))
        .cloned()
        .collect();
    let mut found = installed;
    if found.is_empty() {
        for name in store.known()?.keys() {
            let has = known::open(store, name, None, Path::new("/"))
                .is_ok_and(|m| m.marketplace.find(id).is_some());
            if has {
                found.push(format!("{id}@{name}"));
            }
        }
    }
    match found.as_slice() {
        [one] => resolve_id(store, one),
        [] => Err(PluginError::NoSuchPlugin(id.to_string())),
        many => Err(PluginError::Ambiguous {
            id: id.to_string(),
            candidates: many.to_vec(),
        }),
    }
}

/// A plugin installed: where and what it adds.
pub struct Installed {
    /// `name@marketplace`.
    pub id: String,
    /// The version installed: the plugin's, else the marketplace entry's, else the
    /// commit's first 12 characters, else `unknown`.
    pub version: String,
    /// Its folder in the plugin cache (`cache/<marketplace>/<name>/<version>/`).
    pub path: PathBuf,
    /// The plugin as loaded from that folder.
    pub plugin: Plugin,
}

/// Installs (or reinstalls) `name` from `marketplace`.
pub fn install(
    store: &PluginStore,
    name: &str,
    marketplace: &str,
    settings: Option<&Settings>,
    cwd: &Path,
) -> Result<Installed, PluginError> {
    let open = known::open(store, marketplace, settings, cwd)?;
    let entry = find_entry(&open, name)?;
    let cache = store.plugin_cache(marketplace, name);
    std::fs::create_dir_all(&cache).map_err(|e| PluginError::io("create", &cache, e))?;
    let staging = cache.join(staging_name("staging"));
    let result = stage(&open, entry, &staging);
    let (plugin, sha) = match result {
        Ok(done) => done,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            remove_if_empty(&cache);
            return Err(PluginError::InstallFailed {
                name: format!("{name}@{marketplace}"),
                source: Box::new(e),
            });
        }
    };
    let version = folder_safe(
        plugin
            .version
            .clone()
            .or_else(|| entry.version.clone())
            .or_else(|| sha.as_ref().map(|s| s.chars().take(12).collect()))
            .unwrap_or_else(|| "unknown".to_string()),
    );
    let dest = cache.join(&version);
    let moved = (if dest.exists() {
        std::fs::remove_dir_all(&dest)
    } else {
        Ok(())
    })
    .and_then(|()| std::fs::rename(&staging, &dest));
    if let Err(e) = moved {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(PluginError::io("move the plugin to", dest, e));
    }
    let id = format!("{name}@{marketplace}");
    let mut installed = store.installed()?;
    let installed_at = installed
        .get(&id)
        .and_then(|e| e.as_array()?.last()?.get("installedAt").cloned())
        .unwrap_or_else(|| json!(now_text()));
    let mut record = json!({
        "scope": "user",
        "installPath": dest,
        "version": version,
        "installedAt": installed_at,
        "lastUpdated": now_text(),
    });
    if let (Some(sha), Some(obj)) = (&sha, record.as_object_mut()) {
        obj.insert("gitCommitSha".into(), json!(sha));
    }
    let old = installed.insert(id.clone(), json!([record]));
    store.save_installed(installed)?;
    // An older version's folder goes once the new one is recorded.
    let old_path = old.as_ref().and_then(|e| {
        e.as_array()?
            .last()?
            .get("installPath")?
            .as_str()
            .map(PathBuf::from)
    });
    if let Some(old_path) = old_path.filter(|p| *p != dest && p.starts_with(&cache)) {
        let _ = std::fs::remove_dir_all(old_path);
    }
    let mut plugin = plugin;
    plugin.root = dest.clone();
    Ok(Installed {
        id,
        version,
        path: dest,
        plugin,
    })
}

fn find_entry<'a>(
    open: &'a OpenMarketplace,
    name: &str,
) -> Result<&'a MarketplaceEntry, PluginError> {
    open.marketplace
        .find(name)
        .ok_or_else(|| PluginError::NotInMarketplace {
            marketplace: open.marketplace.name.clone(),
            name: name.to_string(),
            names: open
                .marketplace
                .names()
                .into_iter()
                .map(str::to_string)
                .collect(),
        })
}

/// Fills `staging` with the plugin's files and checks that it loads; returns it and the
/// git commit it came from.
fn stage(
    open: &OpenMarketplace,
    entry: &MarketplaceEntry,
    staging: &Path,
) -> Result<(Plugin, Option<String>), PluginError> {
    let sha = match &entry.source {
        PluginSource::Relative(path) => {
            let from = open.root.join(path);
            if open.source.get("source").and_then(Value::as_str) == Some("url") {
                return Err(PluginError::RelativeFromUrl {
                    path: path.clone(),
                    marketplace: open.marketplace.name.clone(),
                });
            }
            if !from.is_dir() {
                return Err(PluginError::SourceNotFolder(from));
            }
            // A symlink may not lead the copy out of the marketplace.
            let inside = match (
                std::fs::canonicalize(&from),
                std::fs::canonicalize(&open.root),
            ) {
                (Ok(real), Ok(root)) => real.starts_with(root),
                _ => false,
            };
            if !inside {
                return Err(PluginError::SourceOutside {
                    from,
                    root: open.root.clone(),
                });
            }
            copy_tree(&from, staging).map_err(|e| PluginError::io("copy", &from, e))?;
            None
        }
        PluginSource::Git {
            url,
            git_ref,
            sha,
            subdir,
        } => {
            let clone = staging.with_extension("clone");
            let result = git::clone(url, &clone, git_ref.as_deref(), sha.as_deref())
                .and_then(|()| git::head(&clone))
                .and_then(|head| {
                    let from = match subdir {
                        Some(sub) => clone.join(sub),
                        None => clone.clone(),
                    };
                    if !from.is_dir() {
                        return Err(PluginError::NoSubfolder {
                            url: url.clone(),
                            subdir: subdir.as_deref().unwrap_or(".").to_string(),
                        });
                    }
                    if !stays_inside(&from, &clone) {
                        return Err(PluginError::SubfolderOutside {
                            from,
                            url: url.clone(),
                        });
                    }
                    copy_tree(&from, staging).map_err(|e| PluginError::io("copy", &from, e))?;
                    Ok(head)
                });
            let _ = std::fs::remove_dir_all(&clone);
            Some(result?)
        }
        PluginSource::Unsupported(kind) => {
            return Err(PluginError::UnsupportedSource(kind.clone()));
        }
    };
    let manifest = staging.join(".claude-plugin").join("plugin.json");
    if !entry.strict || !manifest.is_file() {
        write_manifest(&manifest, entry, Map::new())?;
    } else if MANIFEST_KEYS.iter().any(|k| entry.raw.contains_key(*k)) {
        // Strict: the plugin's own manifest wins; the entry adds what it leaves out.
        let text = std::fs::read_to_string(&manifest)
            .map_err(|e| PluginError::io("read", &manifest, e))?;
        let invalid = |source| PluginError::Manifest {
            path: manifest.clone(),
            source,
        };
        let own = serde_json::from_str::<Value>(text.trim_start_matches('\u{feff}'))
            .map_err(|e| invalid(FormatError::Json(e)))?;
        let own = own
            .as_object()
            .cloned()
            .ok_or_else(|| invalid(FormatError::top("expected a JSON object")))?;
        write_manifest(&manifest, entry, own)?;
    }
    let mut warnings = Vec::new();
    let plugin = load_plugin(staging, "install", &mut warnings)
        .ok_or_else(|| PluginError::DoesNotLoad(warnings))?;
    Ok((plugin, sha))
}

/// Whether `path`, symlinks resolved, is inside `root`.
fn stays_inside(path: &Path, root: &Path) -> bool {
    match (std::fs::canonicalize(path), std::fs::canonicalize(root)) {
        (Ok(real), Ok(root)) => real.starts_with(root),
        _ => false,
    }
}

/// Keys of a marketplace entry that are also `plugin.json` keys.
const MANIFEST_KEYS: &[&str] = &[
    "version",
    "description",
    "author",
    "homepage",
    "repository",
    "license",
    "keywords",
    "commands",
    "agents",
    "skills",
    "hooks",
    "mcpServers",
    "lspServers",
];

/// Writes `base` (the plugin's own manifest, or empty) with the entry's name and
/// manifest keys added where `base` has none.
fn write_manifest(
    path: &Path,
    entry: &MarketplaceEntry,
    mut manifest: Map<String, Value>,
) -> Result<(), PluginError> {
    manifest.entry("name").or_insert_with(|| json!(entry.name));
    for key in MANIFEST_KEYS {
        if let Some(v) = entry.raw.get(*key) {
            manifest.entry(*key).or_insert_with(|| v.clone());
        }
    }
    let text = serde_json::to_string_pretty(&Value::Object(manifest))
        .map_err(PluginError::ManifestText)?;
    path.parent()
        .map(std::fs::create_dir_all)
        .transpose()
        .and_then(|_| std::fs::write(path, text))
        .map_err(|e| PluginError::io("write", path, e))
}

/// A version usable as a folder name.
fn folder_safe(version: String) -> String {
    let cleaned: String = version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-+".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    if cleaned.trim_matches('.').is_empty() {
        "unknown".to_string()
    } else {
        cleaned
    }
}

fn remove_if_empty(dir: &Path) {
    let _ = std::fs::remove_dir(dir);
}

/// Uninstalls `id`: its record and its cached copies go; its data folder stays.
pub fn uninstall(store: &PluginStore, id: &str) -> Result<PathBuf, PluginError> {
    let mut installed = store.installed()?;
    if installed.remove(id).is_none() {
        return Err(PluginError::NotInstalled {
            id: id.to_string(),
            installed: installed.keys().cloned().collect(),
        });
    }
    store.save_installed(installed)?;
    if let Some((name, marketplace)) = id.split_once('@') {
        let cache = store.plugin_cache(marketplace, name);
        if cache.exists() {
            std::fs::remove_dir_all(&cache).map_err(|e| PluginError::io("delete", &cache, e))?;
        }
    }
    Ok(store.data_dir(id))
}
