//! A connected server's questions (`elicitation/create`) asked in the
//! middle of a call: which call each belongs to, who answers it (the
//! [`Asker`] the caller gave the call: lattice's runner, for the person
//! its run acts for), and the call's time bound, which stops while a
//! person is asked (it bounds the server's own time; the person has their
//! own bound, the asker's).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::RequestId;
use rmcp::service::InboundStreamOrigin;
use serde_json::Value;
use tokio::sync::Notify;
use tokio::time::Instant;

/// What a server asks the person.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// A form: the server's `requestedSchema`, as it sent it.
    Form { message: String, requested: Value },
}

/// The person's word, as the server is told it.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Their values (a form's), checked against what was asked.
    Accept(Value),
    /// They said no.
    Decline,
    /// They did not answer: dismissed it, or their time, the call or the
    /// run ended first.
    Cancel,
}

/// Resolves when the server withdraws its question (it cancelled the
/// request, or the session ended).
pub type Withdrawn = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The person a call's questions are put to.
#[async_trait::async_trait]
pub trait Asker: Send + Sync {
    /// Puts the question to the person and waits for their word, within
    /// the asker's own bound, or until `withdrawn`.
    async fn ask(&self, question: Question, withdrawn: Withdrawn) -> Answer;
}

/// A call's time bound that stops while a person is asked: only the
/// server's own time counts against it.
pub(crate) struct Pausable {
    budget: Duration,
    state: std::sync::Mutex<Spent>,
    changed: Notify,
}

struct Spent {
    spent: Duration,
    /// When it last started counting; `None` while someone is asked.
    since: Option<Instant>,
    asking: usize,
}

impl Pausable {
    pub(crate) fn new(budget: Duration) -> Arc<Self> {
        Arc::new(Self {
            budget,
            state: std::sync::Mutex::new(Spent { spent: Duration::ZERO, since: Some(Instant::now()), asking: 0 }),
            changed: Notify::new(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Spent> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stops the bound until the guard is dropped.
    pub(crate) fn pause(self: &Arc<Self>) -> Paused {
        let mut state = self.state();
        state.asking += 1;
        if let Some(since) = state.since.take() {
            state.spent += since.elapsed();
        }
        drop(state);
        self.changed.notify_waiters();
        Paused(self.clone())
    }

    /// Resolves once the server's own time has used the budget.
    pub(crate) async fn expired(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let left = {
                let state = self.state();
                state.since.map(|since| self.budget.saturating_sub(state.spent + since.elapsed()))
            };
            match left {
                Some(left) if left.is_zero() => return,
                Some(left) => {
                    tokio::select! {
                        () = tokio::time::sleep(left) => {}
                        () = &mut changed => {}
                    }
                }
                None => changed.await,
            }
        }
    }
}

/// The bound stopped while it lives.
pub(crate) struct Paused(Arc<Pausable>);

impl Drop for Paused {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.asking -= 1;
        if state.asking == 0 {
            state.since = Some(Instant::now());
        }
        drop(state);
        self.0.changed.notify_waiters();
    }
}

/// A call under way on a session, and who its questions go to.
#[derive(Clone)]
pub(crate) struct InFlight {
    pub asker: Option<Arc<dyn Asker>>,
    pub clock: Arc<Pausable>,
}

/// The calls under way on one session, by their JSON-RPC id.
#[derive(Clone, Default)]
pub(crate) struct Calls(Arc<CallsInner>);

#[derive(Default)]
struct CallsInner {
    /// Held by a caller from before it sends its call until its id is
    /// kept, and by a question before it looks: a question that arrives
    /// at once finds its call.
    gate: tokio::sync::Mutex<()>,
    open: std::sync::Mutex<HashMap<RequestId, InFlight>>,
}

impl Calls {
    pub(crate) async fn gate(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.0.gate.lock().await
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, InFlight>> {
        self.0.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps a call under way until the guard is dropped.
    pub(crate) fn keep(&self, id: RequestId, call: InFlight) -> Kept {
        self.open().insert(id.clone(), call);
        Kept { calls: self.clone(), id }
    }

    /// The call a question belongs to: the one whose response stream it
    /// came on (Streamable HTTP says which), or, where the transport
    /// cannot say (stdio), the one call under way. None when it cannot be
    /// told: on the stream of no call, or beside two calls.
    pub(crate) async fn of(&self, origin: Option<&InboundStreamOrigin>) -> Option<InFlight> {
        let _gate = self.gate().await;
        let open = self.open();
        match origin {
            Some(InboundStreamOrigin::OutboundRequest(id)) => open.get(id).cloned(),
            Some(InboundStreamOrigin::Unassociated) => None,
            None if open.len() == 1 => open.values().next().cloned(),
            None => None,
        }
    }
}

/// A call kept under way.
pub(crate) struct Kept {
    calls: Calls,
    id: RequestId,
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.calls.open().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_bound_counts_only_the_servers_own_time() {
        // Tokio's paused clock would need its test-util feature in every
        // crate's build: the bound is short instead, and measured.
        let clock = Pausable::new(Duration::from_millis(300));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let asked = clock.pause();
        // Longer than the whole bound, while a person is asked.
        tokio::time::sleep(Duration::from_millis(400)).await;
        let expired = clock.expired();
        tokio::pin!(expired);
        assert!(tokio::time::timeout(Duration::from_millis(20), &mut expired).await.is_err(), "expired while a person was asked");
        drop(asked);
        let started = Instant::now();
        expired.await;
        // What was left of the server's own time, not the whole bound again.
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(150) && took < Duration::from_millis(300), "{took:?}");
    }
}
