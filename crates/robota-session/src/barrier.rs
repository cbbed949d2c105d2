//! A turn's effect barrier: what must be done before the turn's first side effect — a
//! hook run or a tool call — while the model is already being asked. The SDK holds a
//! turn's effects until the checkpoint of the files as they were before the prompt is
//! taken, so the snapshot costs the turn nothing when the model takes longer than the walk.

use tokio::sync::watch;

/// Awaited before each side effect of a turn; open once its opener says so (or is gone).
#[derive(Debug, Clone)]
pub struct EffectBarrier(watch::Receiver<bool>);

/// Opens its barrier (dropping it does too: a failed checkpoint must not hold a turn).
#[derive(Debug)]
pub struct BarrierOpener(watch::Sender<bool>);

impl EffectBarrier {
    /// A closed barrier and what opens it.
    pub fn new() -> (BarrierOpener, EffectBarrier) {
        let (tx, rx) = watch::channel(false);
        (BarrierOpener(tx), EffectBarrier(rx))
    }

    /// Returns once the barrier is open.
    pub async fn passed(&self) {
        let mut rx = self.0.clone();
        let _ = rx.wait_for(|open| *open).await;
    }
}

impl BarrierOpener {
    /// Opens the barrier: the turn waiting on it goes on with its hooks and tool calls.
    pub fn open(self) {
        let _ = self.0.send(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn effects_wait_until_the_barrier_opens_or_its_opener_is_gone() {
        let (opener, barrier) = EffectBarrier::new();
        let waiting = tokio::spawn({
            let barrier = barrier.clone();
            async move { barrier.passed().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        opener.open();
        waiting.await.unwrap();
        barrier.passed().await;

        let (opener, barrier) = EffectBarrier::new();
        drop(opener);
        barrier.passed().await;
    }
}
