//! When and after how long a failed provider call is re-sent: the `RetryPolicy` (the
//! official Anthropic SDKs' rules — server `retry-after-ms` / `retry-after` when sane, else
//! exponential backoff with jitter — and `x-should-retry`), parsing of `retry-after`
//! values, and `RetryLoop`, which an adapter drives between attempts to emit the
//! `Retrying` / `AttemptDiscarded` events and sleep cancellably.

use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use robota_core::{ProviderError, StreamEvent, StreamSink};

/// How often and how patiently a provider call is retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Re-sends after the first attempt (so at most `max_retries + 1` attempts).
    pub max_retries: u32,
    /// First backoff step; doubled per retry.
    pub base_delay: Duration,
    /// Cap of the exponential backoff.
    pub max_delay: Duration,
    /// A server-requested delay is honoured only up to this; longer ones fall back to backoff.
    pub max_server_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_server_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `retry_index` (0 for the first retry).
    pub fn delay_for(&self, retry_index: u32, err: &ProviderError) -> Duration {
        if let Some(server) = err.retry_after
            && !server.is_zero()
            && server <= self.max_server_delay
        {
            return server;
        }
        let factor = 2u32.saturating_pow(retry_index.min(31));
        let backoff = self.base_delay.saturating_mul(factor).min(self.max_delay);
        let jitter = 1.0 - 0.25 * rand::random::<f64>();
        backoff.mul_f64(jitter)
    }

    /// Whether a failure after `retries_done` retries is worth another attempt.
    /// `server_says` is the response's `x-should-retry` header, which overrides the kind.
    pub fn should_retry(
        &self,
        retries_done: u32,
        err: &ProviderError,
        server_says: Option<bool>,
    ) -> bool {
        if retries_done >= self.max_retries || err.kind == robota_core::ProviderErrorKind::Cancelled
        {
            return false;
        }
        server_says.unwrap_or_else(|| err.is_retryable())
    }
}

/// Parses a `retry-after-ms` header value (milliseconds, possibly fractional).
pub fn parse_retry_after_ms(value: &str) -> Option<Duration> {
    let ms: f64 = value.trim().parse().ok()?;
    (ms.is_finite() && ms >= 0.0).then(|| Duration::from_secs_f64(ms / 1000.0))
}

/// Parses a `retry-after` header value: seconds (possibly fractional) or an HTTP date,
/// which is turned into the time left from `now` (zero when already past).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = jiff::fmt::rfc2822::DateTimeParser::new()
        .parse_timestamp(value)
        .ok()?;
    let at = SystemTime::from(at);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// One failed attempt, as an adapter reports it to the `RetryLoop`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AttemptFailure {
    pub error: ProviderError,
    /// Something of this attempt already reached the event sink (so it must be discarded).
    pub streamed: bool,
    /// The server's `x-should-retry` header, when it sent one.
    pub server_says_retry: Option<bool>,
}

impl AttemptFailure {
    pub(crate) fn new(error: ProviderError, streamed: bool) -> Self {
        AttemptFailure {
            error,
            streamed,
            server_says_retry: None,
        }
    }
}

impl From<ProviderError> for AttemptFailure {
    fn from(error: ProviderError) -> Self {
        AttemptFailure::new(error, false)
    }
}

/// Retry bookkeeping for one provider call.
#[derive(Debug)]
pub(crate) struct RetryLoop<'a> {
    policy: &'a RetryPolicy,
    retries_done: u32,
}

impl<'a> RetryLoop<'a> {
    pub(crate) fn new(policy: &'a RetryPolicy) -> Self {
        RetryLoop {
            policy,
            retries_done: 0,
        }
    }

    /// Decides what follows a failed attempt. `Ok(())`: the caller should try again (the
    /// discard and retry notices were emitted and the delay slept). `Err`: give up with this
    /// error — the failure itself, or `Cancelled` when `cancel` fired while waiting.
    pub async fn after_failure(
        &mut self,
        failure: AttemptFailure,
        events: StreamSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<(), ProviderError> {
        let AttemptFailure {
            error,
            streamed,
            server_says_retry,
        } = failure;
        if cancel.is_cancelled() {
            return Err(ProviderError::cancelled());
        }
        if !self
            .policy
            .should_retry(self.retries_done, &error, server_says_retry)
        {
            tracing::debug!(kind = ?error.kind, status = ?error.status, retries = self.retries_done, "provider call failed: {}", error.message);
            return Err(error);
        }
        let delay = self.policy.delay_for(self.retries_done, &error);
        self.retries_done += 1;
        tracing::debug!(
            attempt = self.retries_done,
            ?delay,
            kind = ?error.kind,
            "retrying provider call: {}",
            error.message
        );
        if streamed {
            events(StreamEvent::AttemptDiscarded);
        }
        events(StreamEvent::Retrying {
            attempt: self.retries_done,
            max_attempts: self.policy.max_retries,
            delay,
            error: error.retry_reason(),
            status: error.status,
        });
        tokio::select! {
            _ = cancel.cancelled() => Err(ProviderError::cancelled()),
            _ = tokio::time::sleep(delay) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use robota_core::ProviderErrorKind;

    fn err(kind: ProviderErrorKind) -> ProviderError {
        ProviderError::new(kind, "boom")
    }

    #[test]
    fn backoff_doubles_with_jitter_and_caps() {
        let p = RetryPolicy::default();
        let e = err(ProviderErrorKind::Overloaded);
        for (n, full) in [
            (0, 500),
            (1, 1000),
            (2, 2000),
            (3, 4000),
            (4, 8000),
            (9, 8000),
        ] {
            let d = p.delay_for(n, &e);
            let full = Duration::from_millis(full);
            assert!(d <= full && d >= full.mul_f64(0.75), "retry {n}: {d:?}");
        }
    }

    #[test]
    fn server_delay_is_honoured_only_when_sane() {
        let p = RetryPolicy::default();
        let with = |d: Duration| err(ProviderErrorKind::RateLimited).with_retry_after(Some(d));
        assert_eq!(
            p.delay_for(3, &with(Duration::from_secs(20))),
            Duration::from_secs(20)
        );
        // Zero and over-long server delays fall back to backoff.
        assert!(p.delay_for(0, &with(Duration::ZERO)) <= Duration::from_millis(500));
        assert!(p.delay_for(0, &with(Duration::from_secs(3600))) <= Duration::from_millis(500));
    }

    #[test]
    fn retry_decision_follows_kind_header_and_budget() {
        let p = RetryPolicy::default();
        assert!(p.should_retry(0, &err(ProviderErrorKind::StreamCut), None));
        assert!(!p.should_retry(0, &err(ProviderErrorKind::Auth), None));
        assert!(!p.should_retry(0, &err(ProviderErrorKind::Overloaded), Some(false)));
        assert!(p.should_retry(0, &err(ProviderErrorKind::InvalidRequest), Some(true)));
        assert!(!p.should_retry(4, &err(ProviderErrorKind::Overloaded), None));
        assert!(!p.should_retry(0, &ProviderError::cancelled(), Some(true)));
    }

    #[test]
    fn retry_after_parses_seconds_ms_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_732_283_050); // 13:44:10 GMT
        assert_eq!(
            parse_retry_after("1.5", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Fri, 22 Nov 2024 13:44:20 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Fri, 22 Nov 2024 13:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(
            parse_retry_after_ms("250"),
            Some(Duration::from_millis(250))
        );
    }

    fn fast_policy(max_retries: u32) -> RetryPolicy {
        RetryPolicy {
            max_retries,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
            max_server_delay: Duration::from_secs(60),
        }
    }

    #[tokio::test]
    async fn loop_emits_discard_then_retrying_and_gives_up_after_budget() {
        let policy = fast_policy(1);
        let seen = Mutex::new(Vec::new());
        let sink = |e: StreamEvent| seen.lock().unwrap().push(e);
        let cancel = CancellationToken::new();
        let mut retry = RetryLoop::new(&policy);
        let cut = AttemptFailure::new(err(ProviderErrorKind::StreamCut).with_status(200), true);
        assert!(
            retry
                .after_failure(cut.clone(), &sink, &cancel)
                .await
                .is_ok()
        );
        let last = retry.after_failure(cut, &sink, &cancel).await;
        assert_eq!(last.unwrap_err().kind, ProviderErrorKind::StreamCut);
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0], StreamEvent::AttemptDiscarded);
        assert!(matches!(
            seen[1],
            StreamEvent::Retrying {
                attempt: 1,
                max_attempts: 1,
                status: Some(200),
                ..
            }
        ));
    }

    #[tokio::test]
    async fn loop_sleep_is_cancellable() {
        let policy = RetryPolicy {
            base_delay: Duration::from_secs(3600),
            max_delay: Duration::from_secs(3600),
            ..RetryPolicy::default()
        };
        let cancel = CancellationToken::new();
        let sink = |e: StreamEvent| {
            if matches!(e, StreamEvent::Retrying { .. }) {
                cancel.cancel();
            }
        };
        let mut retry = RetryLoop::new(&policy);
        let failure = AttemptFailure::from(err(ProviderErrorKind::Overloaded));
        let result = tokio::time::timeout(
            Duration::from_secs(10),
            retry.after_failure(failure, &sink, &cancel),
        )
        .await
        .expect("cancel must end the wait");
        assert_eq!(result.unwrap_err().kind, ProviderErrorKind::Cancelled);
    }
}
