//! `.claude-plugin/marketplace.json`, as Claude Code reads it: the marketplace's `name`
//! (required), its `owner`, and `plugins[]`, each with a `name` and a `source` — a relative
//! path (`"./plugins/x"`, from the marketplace root), `{source: "github", repo, ref?, sha?}`,
//! `{source: "url", url, ref?, sha?}` (a git URL) or `{source: "git-subdir", url, path,
//! ref?, sha?}`; other source kinds (`npm`, `archive`, …) parse but cannot be installed yet.
//! `strict` (default true) says whether the plugin's own `plugin.json` is authoritative;
//! with `false` the entry is the whole definition. Unknown keys are ignored; a wrong one is
//! an error naming the field (`plugins[3].source.repo`).

use serde_json::{Map, Value};

use super::error::FormatError;

/// Where one plugin of a marketplace comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// A folder of the marketplace (`./plugins/x`; `./` is the marketplace itself).
    Relative(String),
    /// A git repository and, for `git-subdir`, the folder of it that is the plugin.
    Git {
        /// The repository's clone URL (`github` sources become a GitHub URL).
        url: String,
        /// The branch or tag to check out (`ref`); `None`: the default branch.
        git_ref: Option<String>,
        /// The commit to check out (`sha`), when pinned.
        sha: Option<String>,
        /// For `git-subdir`, the plugin's folder inside the repository (`path`).
        subdir: Option<String>,
    },
    /// A kind robota cannot fetch (`npm`, `archive`, `command`, …).
    Unsupported(String),
}

/// One entry of `plugins[]`.
#[derive(Debug, Clone, PartialEq)]
pub struct MarketplaceEntry {
    /// The plugin's name, unique in the marketplace.
    pub name: String,
    /// Where the plugin's files come from.
    pub source: PluginSource,
    /// The version the entry states, if any.
    pub version: Option<String>,
    /// The entry's one-line description, if any.
    pub description: Option<String>,
    /// `false`: the entry is the plugin's whole definition.
    pub strict: bool,
    /// The entry as written (its component paths make a manifest when `strict` is false).
    pub raw: Map<String, Value>,
}

/// A parsed marketplace.
#[derive(Debug, Clone, PartialEq)]
pub struct Marketplace {
    /// The marketplace's name: the part after `@` in plugin ids.
    pub name: String,
    /// Its owner's name (`owner.name`, or `owner` when it is a string).
    pub owner: Option<String>,
    /// Its description (`description`, or `metadata.description`).
    pub description: Option<String>,
    /// Its plugins, in file order.
    pub plugins: Vec<MarketplaceEntry>,
}

impl Marketplace {
    /// Parses the text of a `marketplace.json`; `Err` names the field that is wrong.
    pub fn parse(text: &str) -> Result<Marketplace, FormatError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let value: Value = serde_json::from_str(text)?;
        let obj = value
            .as_object()
            .ok_or_else(|| FormatError::top("expected a JSON object"))?;
        let name = required_name(obj, "name")?;
        let owner = obj.get("owner").and_then(|o| match o {
            Value::Object(o) => o.get("name").and_then(Value::as_str).map(str::to_string),
            Value::String(s) => Some(s.clone()),
            _ => None,
        });
        let description = text_field(obj, "description").or_else(|| {
            obj.get("metadata")
                .and_then(Value::as_object)
                .and_then(|m| text_field(m, "description"))
        });
        let entries = match obj.get("plugins") {
            Some(Value::Array(items)) => items,
            None => return Err(FormatError::top("missing \"plugins\"")),
            Some(_) => return Err(FormatError::top("\"plugins\" must be a list")),
        };
        let mut plugins = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let entry = parse_entry(entry).map_err(|e| e.within(&format!("plugins[{i}]")))?;
            plugins.push(entry);
        }
        Ok(Marketplace {
            name,
            owner,
            description,
            plugins,
        })
    }

    /// The entry of that plugin name.
    pub fn find(&self, name: &str) -> Option<&MarketplaceEntry> {
        self.plugins.iter().find(|p| p.name == name)
    }

    /// Every plugin name, in file order.
    pub fn names(&self) -> Vec<&str> {
        self.plugins.iter().map(|p| p.name.as_str()).collect()
    }
}

/// A name usable as a folder and in `name@marketplace`.
fn required_name(obj: &Map<String, Value>, key: &str) -> Result<String, FormatError> {
    let name = match obj.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(Value::String(_)) | None | Some(Value::Null) => {
            return Err(FormatError::top(format!("missing \"{key}\"")));
        }
        Some(_) => return Err(FormatError::top(format!("\"{key}\" must be a string"))),
    };
    let bad = name.contains(['/', '\\', ' ', ':', '@']) || name.starts_with('.');
    if bad {
        return Err(FormatError::top(format!(
            "\"{key}\" {name:?} may not contain spaces, slashes, colons or @, nor start with a dot"
        )));
    }
    Ok(name)
}

fn text_field(obj: &Map<String, Value>, key: &str) -> Option<String> {
    match obj.get(key) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// One `plugins[]` entry; the error's field path is the one after `plugins[i]`.
fn parse_entry(entry: &Value) -> Result<MarketplaceEntry, FormatError> {
    let obj = entry
        .as_object()
        .ok_or_else(|| FormatError::top("expected an object"))?;
    let name = required_name(obj, "name").map_err(|e| e.within(".name"))?;
    let source = match obj.get("source") {
        None | Some(Value::Null) => {
            return Err(FormatError::field(format!(" ({name}).source"), "missing"));
        }
        Some(v) => parse_source(v).map_err(|e| e.within(&format!(" ({name}).source")))?,
    };
    let strict = match obj.get("strict") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(FormatError::field(
                format!(" ({name}).strict"),
                "must be true or false",
            ));
        }
    };
    Ok(MarketplaceEntry {
        version: text_field(obj, "version"),
        description: text_field(obj, "description"),
        name,
        source,
        strict,
        raw: obj.clone(),
    })
}

fn parse_source(value: &Value) -> Result<PluginSource, FormatError> {
    let obj = match value {
        Value::String(path) => return relative(path).map(PluginSource::Relative),
        Value::Object(obj) => obj,
        _ => return Err(FormatError::top("must be a relative path or an object")),
    };
    let text = |key: &str| -> Result<Option<String>, FormatError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
            Some(_) => Err(FormatError::field(
                format!(".{key}"),
                "must be a non-empty string",
            )),
        }
    };
    let required =
        |key: &str| text(key)?.ok_or_else(|| FormatError::field(format!(".{key}"), "missing"));
    let kind = required("source")?;
    let git_ref = text("ref")?;
    let sha = text("sha")?;
    match kind.as_str() {
        "github" => {
            let repo = required("repo")?;
            if repo.split('/').count() != 2 || repo.split('/').any(str::is_empty) {
                return Err(FormatError::field(
                    ".repo",
                    format!("{repo:?} is not owner/repo"),
                ));
            }
            Ok(PluginSource::Git {
                url: github_url(&repo),
                git_ref,
                sha,
                subdir: None,
            })
        }
        "url" | "git" => Ok(PluginSource::Git {
            url: required("url")?,
            git_ref,
            sha,
            subdir: None,
        }),
        "git-subdir" => {
            let path = required("path")?;
            let path = relative(&path).map_err(|e| e.within(".path"))?;
            Ok(PluginSource::Git {
                url: required("url")?,
                git_ref,
                sha,
                subdir: Some(path),
            })
        }
        other => Ok(PluginSource::Unsupported(other.to_string())),
    }
}

/// A path inside the marketplace: no `..`, not absolute.
fn relative(path: &str) -> Result<String, FormatError> {
    let p = std::path::Path::new(path);
    let inside = p.components().all(|c| {
        matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    });
    if path.trim().is_empty() || !inside {
        return Err(FormatError::top(format!(
            "{path:?} must be a relative path inside the marketplace (./…)"
        )));
    }
    Ok(path.to_string())
}

/// The clone URL of a GitHub `owner/repo`.
pub(crate) fn github_url(repo: &str) -> String {
    format!("https://github.com/{repo}.git")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_kind_strict_and_unknown_keys() {
        let m = Marketplace::parse(
            r#"{"$schema": "x", "name": "team", "owner": {"name": "Ann"},
                "metadata": {"description": "Team tools", "version": "2"},
                "plugins": [
                  {"name": "a", "source": "./plugins/a", "version": "1.0.0", "category": "x"},
                  {"name": "b", "source": {"source": "github", "repo": "o/b", "ref": "v2"}},
                  {"name": "c", "source": {"source": "url", "url": "file:///r/c.git", "sha": "abc"}},
                  {"name": "d", "source": {"source": "git-subdir", "url": "file:///r/m.git", "path": "plugins/d"}, "strict": false, "skills": ["./s"]},
                  {"name": "e", "source": {"source": "npm", "package": "@x/e"}}
                ]}"#,
        )
        .unwrap();
        assert_eq!(m.name, "team");
        assert_eq!(m.owner.as_deref(), Some("Ann"));
        assert_eq!(m.description.as_deref(), Some("Team tools"));
        assert_eq!(m.names(), ["a", "b", "c", "d", "e"]);
        assert_eq!(
            m.plugins[0].source,
            PluginSource::Relative("./plugins/a".into())
        );
        assert_eq!(m.plugins[0].version.as_deref(), Some("1.0.0"));
        assert_eq!(
            m.plugins[1].source,
            PluginSource::Git {
                url: "https://github.com/o/b.git".into(),
                git_ref: Some("v2".into()),
                sha: None,
                subdir: None
            }
        );
        assert!(
            matches!(&m.plugins[2].source, PluginSource::Git { sha: Some(s), .. } if s == "abc")
        );
        assert!(
            matches!(&m.plugins[3].source, PluginSource::Git { subdir: Some(s), .. } if s == "plugins/d")
        );
        assert!(m.plugins[0].strict && !m.plugins[3].strict);
        assert_eq!(m.plugins[4].source, PluginSource::Unsupported("npm".into()));
        assert!(m.find("d").is_some() && m.find("z").is_none());
    }

    #[test]
    fn errors_name_the_field() {
        let err = |text: &str| Marketplace::parse(text).unwrap_err().to_string();
        assert!(err("{nope").contains("invalid JSON"));
        assert_eq!(err(r#"{"plugins": []}"#), "missing \"name\"");
        assert!(err(r#"{"name": "a b", "plugins": []}"#).contains("spaces"));
        assert_eq!(err(r#"{"name": "m"}"#), "missing \"plugins\"");
        assert_eq!(
            err(r#"{"name": "m", "plugins": [{"name": "ok", "source": "./x"}, {"name": "p"}]}"#),
            "plugins[1] (p).source: missing"
        );
        assert_eq!(
            err(r#"{"name": "m", "plugins": [{"name": "p", "source": {"source": "github"}}]}"#),
            "plugins[0] (p).source.repo: missing"
        );
        assert!(
            err(r#"{"name": "m", "plugins": [{"name": "p", "source": "../up"}]}"#)
                .starts_with("plugins[0] (p).source: \"../up\" must be a relative path")
        );
        assert_eq!(
            err(r#"{"name": "m", "plugins": [{"source": "./x"}]}"#),
            "plugins[0].name: missing \"name\""
        );
        assert_eq!(
            err(r#"{"name": "m", "plugins": [{"name": "p", "source": "./x", "strict": "no"}]}"#),
            "plugins[0] (p).strict: must be true or false"
        );
    }
}
