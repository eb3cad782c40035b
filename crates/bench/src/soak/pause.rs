//! The pause between a simulated actor's steps, cut short when the soak stops.

use std::time::Duration;

use tokio::sync::watch;

/// Waits `pause` unless the soak stops first: whether it goes on.
pub(super) async fn pause(pause: Duration, stop: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(pause) => {}
        _ = stop.changed() => {}
    }
    !*stop.borrow()
}
