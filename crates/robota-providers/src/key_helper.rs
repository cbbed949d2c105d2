//! `apiKeyHelper`: the API key comes from a command (`sh -c`) that prints it, as company
//! set-ups hand out short-lived keys. The command runs when the provider is made, again
//! after the key's time to live (`CLAUDE_CODE_API_KEY_HELPER_TTL_MS`) and again when the
//! server answers 401 — then the request is sent once more with the new key. The adapter
//! is rebuilt around each new key.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use robota_core::{
    AssistantTurn, Provider, ProviderError, ProviderErrorKind, ProviderRequest, StreamSink,
};

pub use robota_core::provider_factory::BuildWithKey;

/// The command and how long a key it printed is good for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyHelper {
    /// Shell text whose standard output (trimmed) is the key.
    pub command: String,
    /// Run it again after this long (`None`: only on a 401).
    pub ttl: Option<Duration>,
}

impl KeyHelper {
    /// Runs the command; `Err` says why it gave no key.
    pub fn fetch(&self) -> Result<String, ProviderError> {
        let failed = |why: String| {
            ProviderError::new(
                ProviderErrorKind::Auth,
                format!("apiKeyHelper `{}` {why}", self.command),
            )
        };
        let output = std::process::Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| failed(format!("could not start: {e}")))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(failed(format!(
                "failed ({}): {}",
                output.status,
                stderr.trim()
            )));
        }
        let key = String::from_utf8_lossy(&output.stdout).trim().to_string();
        if key.is_empty() {
            return Err(failed("printed no key".to_string()));
        }
        Ok(key)
    }
}

struct Current {
    provider: Arc<dyn Provider>,
    fetched: Instant,
}

/// A provider whose key comes from a [`KeyHelper`]; its name is the inner provider's.
pub struct KeyHelperProvider {
    helper: KeyHelper,
    build: BuildWithKey,
    name: String,
    current: tokio::sync::Mutex<Current>,
}

impl KeyHelperProvider {
    /// Runs the helper once and builds the adapter around its key.
    pub fn start(helper: KeyHelper, build: BuildWithKey) -> Result<Self, ProviderError> {
        let provider = build(helper.fetch()?)?;
        Ok(KeyHelperProvider {
            name: provider.name().to_string(),
            helper,
            build,
            current: tokio::sync::Mutex::new(Current {
                provider,
                fetched: Instant::now(),
            }),
        })
    }

    /// The adapter to use: rebuilt around a fresh key when `refresh` is set or the key's
    /// time is up.
    async fn provider(&self, refresh: bool) -> Result<Arc<dyn Provider>, ProviderError> {
        let mut current = self.current.lock().await;
        let expired = self
            .helper
            .ttl
            .is_some_and(|ttl| current.fetched.elapsed() >= ttl);
        if refresh || expired {
            let helper = self.helper.clone();
            let key = tokio::task::spawn_blocking(move || helper.fetch())
                .await
                .map_err(|e| {
                    ProviderError::new(
                        ProviderErrorKind::Auth,
                        format!("apiKeyHelper did not finish: {e}"),
                    )
                })??;
            *current = Current {
                provider: (self.build)(key)?,
                fetched: Instant::now(),
            };
        }
        Ok(current.provider.clone())
    }
}

#[async_trait]
impl Provider for KeyHelperProvider {
    fn name(&self) -> &str {
        &self.name
    }

    async fn stream(
        &self,
        request: &ProviderRequest,
        events: StreamSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssistantTurn, ProviderError> {
        let provider = self.provider(false).await?;
        match provider.stream(request, events, cancel).await {
            Err(e) if e.kind == ProviderErrorKind::Auth => {
                tracing::info!("the server refused the key (401): running apiKeyHelper again");
                let provider = self.provider(true).await?;
                provider.stream(request, events, cancel).await
            }
            other => other,
        }
    }
}
