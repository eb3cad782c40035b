//! Waiting for an event in a test: poll what the test expects until it
//! holds, with a deadline that fails the test naming what never came. A
//! test waits for this, never for a fixed time: a fixed sleep is too long
//! on a fast machine and too short on a loaded one.

use std::time::Duration;

/// How long a test waits for what it expects before it fails.
pub const PATIENCE: Duration = Duration::from_secs(15);

/// How often the probe is asked again.
const POLL: Duration = Duration::from_millis(10);

/// `probe`'s first `Some`, asked until [`PATIENCE`] has passed; then the
/// test fails, saying it waited for `what`.
pub async fn eventually<T>(what: &str, probe: impl AsyncFnMut() -> Option<T>) -> T {
    eventually_within(PATIENCE, what, probe).await
}

/// [`eventually`] with a deadline of its own: for a test whose claim is
/// that something happens within `within`.
pub async fn eventually_within<T>(within: Duration, what: &str, mut probe: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(tokio::time::Instant::now() < deadline, "waited {within:?} for {what}");
        tokio::time::sleep(POLL).await;
    }
}

/// Until `holds` answers true (within [`PATIENCE`]).
pub async fn until(what: &str, mut holds: impl AsyncFnMut() -> bool) {
    eventually(what, async || holds().await.then_some(())).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn it_returns_what_the_probe_found_once_it_finds_it() {
        let mut asked = 0;
        let found = eventually("the third ask", async || {
            asked += 1;
            (asked == 3).then_some(asked * 10)
        })
        .await;
        assert_eq!(found, 30);
    }

    #[tokio::test]
    #[should_panic(expected = "waited 50ms for what never comes")]
    async fn it_fails_naming_what_never_came() {
        eventually_within(Duration::from_millis(50), "what never comes", async || None::<()>).await;
    }
}
