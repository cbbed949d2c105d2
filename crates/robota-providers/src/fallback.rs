//! `--fallback-model`: a provider that, when the main model answers "overloaded" after its
//! retries, sends the same request to the fallback model, and keeps using the fallback for
//! the rest of the run. What the main model streamed before failing is discarded.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use robota_core::{
    AssistantTurn, Provider, ProviderError, ProviderErrorKind, ProviderRequest, StreamEvent,
    StreamSink,
};

/// Wraps the main provider; after the first `Overloaded` failure it sends this and every
/// later request to the fallback model through the same provider. Its name is the inner
/// provider's.
pub struct FallbackProvider {
    inner: Arc<dyn Provider>,
    fallback: String,
    /// The main model was overloaded once: every later request goes to the fallback.
    switched: AtomicBool,
}

impl FallbackProvider {
    /// Wraps `inner`, switching to the model named `fallback` when the main model is
    /// overloaded.
    pub fn new(inner: Arc<dyn Provider>, fallback: impl Into<String>) -> Self {
        FallbackProvider {
            inner,
            fallback: fallback.into(),
            switched: AtomicBool::new(false),
        }
    }

    async fn to_fallback(
        &self,
        request: &ProviderRequest,
        events: StreamSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssistantTurn, ProviderError> {
        let mut request = request.clone();
        request.model = self.fallback.clone();
        self.inner.stream(&request, events, cancel).await
    }
}

#[async_trait]
impl Provider for FallbackProvider {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn stream(
        &self,
        request: &ProviderRequest,
        events: StreamSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssistantTurn, ProviderError> {
        if self.switched.load(Ordering::Relaxed) {
            return self.to_fallback(request, events, cancel).await;
        }
        match self.inner.stream(request, events, cancel).await {
            Err(error) if error.kind == ProviderErrorKind::Overloaded => {
                self.switched.store(true, Ordering::Relaxed);
                events(StreamEvent::AttemptDiscarded);
                events(StreamEvent::Retrying {
                    attempt: 1,
                    max_attempts: 1,
                    delay: Duration::ZERO,
                    error: format!(
                        "{} is overloaded ({}); switching to the fallback model {}",
                        request.model, error.message, self.fallback
                    ),
                    status: error.status,
                });
                self.to_fallback(request, events, cancel).await
            }
            other => other,
        }
    }
}
