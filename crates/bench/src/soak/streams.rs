//! Live streams opened and closed, as chat tabs are: each follows a
//! thread over SSE for 5 to 40 seconds from a little before the log's
//! latest position, then closes; a stream the server ends first (its
//! replica killed) is opened again at once, as the chat host does.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use tokio::sync::watch;

use super::client::{Api, Request};
use super::scene::Scene;
use super::stats::Outcome;
use crate::rng::Rng;

pub async fn follow(api: Api, scene: Arc<Scene>, n: usize, mut stop: watch::Receiver<bool>) {
    let mut rng = Rng::new(1000 + n as u64);
    loop {
        if !super::pause::pause(rng.millis(300, 2000), &mut stop).await {
            return;
        }
        let person = rng.pick(&scene.people);
        let threads = scene.threads_of(person.tenant);
        let th = &rng.pick(&threads).id;
        let after = (scene.latest.load(Ordering::Relaxed) - 200).max(0);
        let path = format!("/v1/threads/{th}/events?after={after}");
        let start = Instant::now();
        let Some((answer, retried)) = api.open("sse_open", Request::get(&path, &person.token).streamed()).await else { continue };
        api.stats.record("sse_open", start.elapsed(), if retried { Outcome::Recovered } else { Outcome::Ok });
        let hold = tokio::time::sleep(rng.millis(5_000, 40_000));
        tokio::pin!(hold);
        let mut events = std::pin::pin!(answer.bytes_stream().eventsource());
        let mut got = 0u64;
        loop {
            tokio::select! {
                _ = &mut hold => break,
                _ = stop.changed() => break,
                event = events.next() => match event {
                    Some(Ok(event)) => {
                        got += 1;
                        if let Ok(envelope) = serde_json::from_str::<serde_json::Value>(&event.data)
                            && let Some(seq) = envelope["seq"].as_i64()
                        {
                            scene.latest.fetch_max(seq, Ordering::Relaxed);
                        }
                    }
                    // Ended by the other side: the chat opens it again.
                    Some(Err(_)) | None => {
                        api.stats.add("streams ended by the server", 1);
                        break;
                    }
                },
            }
        }
        api.stats.add("stream events", got);
        api.stats.add("streams opened", 1);
        if start.elapsed() < Duration::from_millis(100) {
            // A stream that ends at once would spin.
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}
