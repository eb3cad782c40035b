//! A rule on NATS: a durable pull consumer of the `LATTICE` stream as the
//! `rules` user of infra/nats/nats.conf, acknowledging each message. It
//! keeps, per `Nats-Msg-Id`, the stream positions that carried it (so a
//! redelivery is not mistaken for a duplicate in the stream, and a
//! duplicate in the stream is seen), and times each envelope from its
//! commit (`at`) to its delivery here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream::{self, consumer};
use futures_util::StreamExt;
use lattice_core::clock::{Clock, SystemClock};
use serde_json::Value;
use tokio::sync::watch;

use super::stats::{Outcome, Stats};

#[derive(Default)]
pub struct Heard {
    /// Each `Nats-Msg-Id` with the stream sequence numbers it came at.
    pub by_id: HashMap<String, Vec<u64>>,
    /// Messages without a `Nats-Msg-Id`.
    pub without_id: u64,
    pub deliveries: u64,
    pub redeliveries: u64,
}

pub async fn consume(nats_url: String, password: &'static str, stats: Arc<Stats>, heard: Arc<Mutex<Heard>>, mut stop: watch::Receiver<bool>) {
    let nats =
        async_nats::ConnectOptions::with_user_and_password("rules".into(), password.into()).connect(&nats_url).await.expect("NATS as the rules user");
    let js = jetstream::new(nats);
    let stream = loop {
        match js.get_stream(lattice_bridge::STREAM).await {
            Ok(stream) => break stream,
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    };
    let config = consumer::pull::Config {
        durable_name: Some("soak-rule".into()),
        filter_subject: "lattice.>".into(),
        ack_policy: consumer::AckPolicy::Explicit,
        ..Default::default()
    };
    let consumer = stream.get_or_create_consumer("soak-rule", config).await.expect("the rules user makes its consumer");
    let mut messages = consumer.messages().await.expect("pulling");
    loop {
        let message = tokio::select! {
            m = messages.next() => m,
            _ = stop.changed() => return,
        };
        let Some(message) = message else { return };
        let Ok(message) = message else {
            stats.add("rule: pull errors", 1);
            continue;
        };
        let (position, delivered) = message.info().map(|i| (i.stream_sequence, i.delivered)).unwrap_or((0, 1));
        let id = message.headers.as_ref().and_then(|h| h.get("Nats-Msg-Id")).map(|v| v.as_str().to_owned());
        if let Some(lag) =
            serde_json::from_slice::<Value>(&message.payload).ok().and_then(|p| p["at"].as_str().and_then(unix_ms)).map(|at| now_ms() - at)
        {
            stats.record("rule", Duration::from_millis(lag.max(0) as u64), Outcome::Ok);
        }
        {
            let mut heard = heard.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            heard.deliveries += 1;
            if delivered > 1 {
                heard.redeliveries += 1;
            }
            match id {
                Some(id) => {
                    let positions = heard.by_id.entry(id).or_default();
                    if !positions.contains(&position) {
                        positions.push(position);
                    }
                }
                None => heard.without_id += 1,
            }
        }
        if message.ack().await.is_err() {
            stats.add("rule: acks not sent", 1);
        }
    }
}

/// The wall clock: the stack under soak stamps `at` with its own, in
/// another process, so delivery is timed against the same wall.
fn now_ms() -> i64 {
    SystemClock.now_ms()
}

/// `2026-12-05T11:52:03.123Z` as milliseconds since the epoch (what
/// envelopes carry: UTC, milliseconds).
fn unix_ms(at: &str) -> Option<i64> {
    let n = |range: std::ops::Range<usize>| at.get(range)?.parse::<i64>().ok();
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    let ms = if at.as_bytes().get(19) == Some(&b'.') { n(20..23).unwrap_or(0) } else { 0 };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + hh) * 60 + mm) * 60_000 + ss * 1000 + ms)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_an_envelopes_time() {
        assert_eq!(super::unix_ms("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(super::unix_ms("2026-12-05T11:52:03.123Z"), Some(1_796_471_523_123));
    }
}
