//! One running language server: its process (a process group of its own, stopped with
//! the session), the `initialize` handshake under a deadline, the documents it was told
//! about (open, changed), the diagnostics it published for each, and requests with a
//! deadline. The last lines it wrote to stderr are kept for `/lsp`.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lsp_types::{Diagnostic, PublishDiagnosticsParams, Url};
use robota_core::credentials::ChildEnv;
use robota_core::process_group::{ProcessGroup, StopPolicy, spawn_in_new_group};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::watch;

use crate::LspError;
use crate::config::LspServerConfig;
use crate::rpc::{Connection, Handlers};

/// Lines of the server's stderr kept.
const STDERR_TAIL: usize = 8;

/// A file's diagnostics as last published, with the count of publications so far (so a
/// waiter knows a fresh one from the one it already saw).
#[derive(Debug, Clone, Default)]
struct Published {
    generation: u64,
    version: Option<i32>,
    diagnostics: Vec<Diagnostic>,
}

/// The diagnostics a server published, by document.
#[derive(Default)]
struct DiagnosticStore {
    by_uri: Mutex<HashMap<Url, Published>>,
    /// Bumped on every publication.
    changed: Option<watch::Sender<u64>>,
}

impl DiagnosticStore {
    fn publish(&self, params: PublishDiagnosticsParams) {
        let Ok(mut by_uri) = self.by_uri.lock() else {
            return;
        };
        let entry = by_uri.entry(params.uri).or_default();
        entry.generation += 1;
        entry.version = params.version;
        entry.diagnostics = params.diagnostics;
        drop(by_uri);
        if let Some(changed) = &self.changed {
            changed.send_modify(|n| *n += 1);
        }
    }

    fn generation(&self, uri: &Url) -> u64 {
        self.by_uri
            .lock()
            .ok()
            .and_then(|m| m.get(uri).map(|p| p.generation))
            .unwrap_or(0)
    }

    /// The diagnostics of `uri` if published after `generation` and not for an older
    /// version than `version`.
    fn fresh(&self, uri: &Url, generation: u64, version: i32) -> Option<Vec<Diagnostic>> {
        let by_uri = self.by_uri.lock().ok()?;
        let published = by_uri.get(uri)?;
        let current =
            published.generation > generation && published.version.is_none_or(|v| v >= version);
        current.then(|| published.diagnostics.clone())
    }
}

/// A document as the server last saw it.
struct OpenDocument {
    version: i32,
    text: String,
    /// The diagnostics generation when this text was sent: what is published after it is
    /// about this text.
    sent_at: u64,
}

/// What [`Server::sync_document`] is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sync {
    /// A background open after a Read: nothing if the file is open already (a newer
    /// change must not be undone), and nobody waits for diagnostics.
    OpenOnly,
    /// An edit: the file's diagnostics are wanted even when the server already has this
    /// text (a background open may have sent it first).
    Edited,
}

/// A started, initialized server.
pub(crate) struct Server {
    /// The workspace root it was started for.
    pub root: PathBuf,
    connection: Connection,
    child: tokio::sync::Mutex<Child>,
    group: Mutex<Option<ProcessGroup>>,
    documents: tokio::sync::Mutex<HashMap<Url, OpenDocument>>,
    diagnostics: Arc<DiagnosticStore>,
    diagnostics_changed: watch::Receiver<u64>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The process id, for `/lsp` and memory figures.
    pub pid: Option<u32>,
}

impl Server {
    /// Starts `config`'s program in `root` and initializes it, failing when it does not
    /// answer `initialize` within its startup timeout.
    pub(crate) async fn start(
        config: &LspServerConfig,
        root: &Path,
        env: &[(String, String)],
    ) -> Result<Server, LspError> {
        let mut command = Command::new(&config.command);
        let session = env.iter().map(|(k, v)| (OsStr::new(k), OsStr::new(v)));
        let own = config
            .env
            .iter()
            .map(|(k, v)| (OsStr::new(k), OsStr::new(v)));
        let project_dir = std::iter::once((OsStr::new("CLAUDE_PROJECT_DIR"), root.as_os_str()));
        ChildEnv::new(session.chain(own).chain(project_dir)).apply(&mut command);
        command
            .args(&config.args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let (mut child, group) =
            spawn_in_new_group(&mut command).map_err(|source| LspError::Spawn {
                command: config.command.clone(),
                source,
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(LspError::Protocol("the server has no stdio pipes".into()));
        };
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(pipe) = child.stderr.take() {
            tokio::spawn(keep_tail(pipe, stderr.clone()));
        }
        let (changed_tx, diagnostics_changed) = watch::channel(0);
        let diagnostics = Arc::new(DiagnosticStore {
            changed: Some(changed_tx),
            ..DiagnosticStore::default()
        });
        let handlers = handlers(diagnostics.clone(), config.settings.clone(), root);
        let server = Server {
            root: root.to_path_buf(),
            connection: Connection::start(stdout, stdin, handlers),
            pid: child.id(),
            child: tokio::sync::Mutex::new(child),
            group: Mutex::new(group),
            documents: tokio::sync::Mutex::default(),
            diagnostics,
            diagnostics_changed,
            stderr,
        };
        match server.initialize(config).await {
            Ok(()) => Ok(server),
            Err(error) => {
                server.stop().await;
                Err(error)
            }
        }
    }

    async fn initialize(&self, config: &LspServerConfig) -> Result<(), LspError> {
        let root_uri = Url::from_directory_path(&self.root).ok();
        let name = self
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let params = json!({
            "processId": std::process::id(),
            "rootUri": root_uri,
            "rootPath": self.root,
            "workspaceFolders": [{"uri": root_uri, "name": name}],
            "initializationOptions": crate::typescript::initialization_options(
                config,
                &self.root,
                std::env::var_os("PATH").as_deref(),
            ),
            "capabilities": client_capabilities(),
            "clientInfo": {"name": "robota", "version": env!("CARGO_PKG_VERSION")},
        });
        self.connection
            .request("initialize", params, config.startup_timeout())
            .await?;
        self.connection.notify("initialized", json!({}));
        if let Some(settings) = &config.settings {
            self.connection.notify(
                "workspace/didChangeConfiguration",
                json!({"settings": settings}),
            );
        }
        Ok(())
    }

    /// Whether the server's process is gone (its output ended).
    pub(crate) fn is_dead(&self) -> bool {
        self.connection.is_closed()
    }

    /// The last lines the server wrote to stderr.
    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Tells the server `path` now holds `text` (opening it the first time), and returns
    /// what [`Server::fresh_diagnostics`] needs to tell the diagnostics of this text from
    /// older ones; `None` when `sync` asks for nothing to wait on (see [`Sync`]).
    pub(crate) async fn sync_document(
        &self,
        path: &Path,
        language: &str,
        text: &str,
        sync: Sync,
    ) -> Result<Option<(Url, u64, i32)>, LspError> {
        let uri = file_uri(path)?;
        let mut documents = self.documents.lock().await;
        let generation = self.diagnostics.generation(&uri);
        let version = match documents.get_mut(&uri) {
            Some(_) if sync == Sync::OpenOnly => return Ok(None),
            Some(open) if open.text == text => return Ok(Some((uri, open.sent_at, open.version))),
            Some(open) => {
                open.version += 1;
                open.text = text.to_string();
                open.sent_at = generation;
                self.connection.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": open.version},
                           "contentChanges": [{"text": text}]}),
                );
                open.version
            }
            None => {
                self.connection.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": language,
                           "version": 1, "text": text}}),
                );
                documents.insert(
                    uri.clone(),
                    OpenDocument {
                        version: 1,
                        text: text.to_string(),
                        sent_at: generation,
                    },
                );
                1
            }
        };
        self.connection.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": uri}, "text": text}),
        );
        Ok(Some((uri, generation, version)))
    }

    /// Waits, at most `wait`, for diagnostics of `uri` published after `generation` for
    /// `version` or later; `None` when none came in time.
    pub(crate) async fn fresh_diagnostics(
        &self,
        uri: &Url,
        generation: u64,
        version: i32,
        wait: Duration,
    ) -> Option<Vec<Diagnostic>> {
        let mut changed = self.diagnostics_changed.clone();
        let waiting = async {
            loop {
                if let Some(found) = self.diagnostics.fresh(uri, generation, version) {
                    return Some(found);
                }
                if changed.changed().await.is_err() {
                    return None;
                }
            }
        };
        tokio::time::timeout(wait, waiting).await.ok().flatten()
    }

    /// Sends a request and waits for its answer, at most `deadline`.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
        deadline: Duration,
    ) -> Result<Value, LspError> {
        self.connection.request(method, params, deadline).await
    }

    /// Asks the server to shut down (briefly), then stops its process group.
    pub(crate) async fn shutdown(&self) {
        if !self.is_dead() {
            let _ = self
                .connection
                .request("shutdown", Value::Null, Duration::from_millis(500))
                .await;
            self.connection.notify("exit", Value::Null);
        }
        self.stop().await;
    }

    async fn stop(&self) {
        let group = self.group.lock().ok().and_then(|mut g| g.take());
        let mut child = self.child.lock().await;
        match group {
            Some(group) => {
                group
                    .stop(
                        &mut child,
                        StopPolicy::TermThenKill(Duration::from_millis(300)),
                    )
                    .await
            }
            None => {
                let _ = child.kill().await;
            }
        }
    }
}

/// `file://` URI of a path.
pub(crate) fn file_uri(path: &Path) -> Result<Url, LspError> {
    Url::from_file_path(path).map_err(|()| LspError::NotAFile(path.to_path_buf()))
}

/// What robota answers and keeps of what the server sends unasked.
fn handlers(store: Arc<DiagnosticStore>, settings: Option<Value>, root: &Path) -> Handlers {
    let root_uri = Url::from_directory_path(root).ok();
    Handlers {
        on_notification: Box::new(move |method, params| {
            if method == "textDocument/publishDiagnostics"
                && let Ok(params) = serde_json::from_value::<PublishDiagnosticsParams>(params)
            {
                store.publish(params);
            }
        }),
        on_request: Box::new(move |method, params| match method {
            "workspace/configuration" => {
                let items = params["items"].as_array().map_or(0, Vec::len);
                let item = |i: usize| {
                    let section = params["items"][i]["section"].as_str().unwrap_or("");
                    section_of(settings.as_ref(), section)
                };
                Some(Value::Array((0..items).map(item).collect()))
            }
            "workspace/workspaceFolders" => Some(json!([{"uri": root_uri, "name": "root"}])),
            "window/workDoneProgress/create"
            | "client/registerCapability"
            | "client/unregisterCapability"
            | "window/showMessageRequest"
            | "workspace/diagnostic/refresh"
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/codeLens/refresh" => Some(Value::Null),
            _ => None,
        }),
    }
}

/// The part of `settings` a dotted `section` names (`python.analysis`), or null.
fn section_of(settings: Option<&Value>, section: &str) -> Value {
    let Some(mut value) = settings else {
        return Value::Null;
    };
    for key in section.split('.').filter(|k| !k.is_empty()) {
        match value.get(key) {
            Some(inner) => value = inner,
            None => return Value::Null,
        }
    }
    value.clone()
}

/// What robota can do with the server's answers.
fn client_capabilities() -> Value {
    json!({
        "workspace": {"configuration": true, "workspaceFolders": true,
                      "symbol": {"dynamicRegistration": false}},
        "textDocument": {
            "synchronization": {"didSave": true, "dynamicRegistration": false},
            "publishDiagnostics": {"relatedInformation": false, "versionSupport": true},
            "definition": {"linkSupport": true},
            "implementation": {"linkSupport": true},
            "references": {},
            "hover": {"contentFormat": ["plaintext", "markdown"]},
            "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
            "callHierarchy": {},
        },
        "window": {"workDoneProgress": true},
        "general": {"positionEncodings": ["utf-16"]},
    })
}

async fn keep_tail(pipe: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = BufReader::new(pipe).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
}
