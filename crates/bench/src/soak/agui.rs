//! An AG-UI front end: every few seconds a run over
//! `POST /v1/agui/threads/{th}`, read to its `RUN_FINISHED`; an ask_form's
//! interrupt is resumed with the form's answer and read to the end too.
//! A stream cut before its end (its replica killed) reconnects as
//! docs/AGUI.md says (`forwardedProps.reconnect`), which counts as
//! recovered when it then ends.

use std::sync::Arc;
use std::time::Instant;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::client::{Api, Exchange, Request};
use super::scene::Scene;
use super::stats::Outcome;
use crate::rng::Rng;

pub async fn drive(api: Api, scene: Arc<Scene>, mut stop: watch::Receiver<bool>) {
    let mut rng = Rng::new(7);
    for n in 0u64.. {
        if !super::pause::pause(rng.millis(3_000, 6_000), &mut stop).await {
            return;
        }
        let person = rng.pick(&scene.agui);
        let threads = scene.threads_of(person.tenant);
        let th = &rng.pick(&threads).id;
        let model = if n % 2 == 0 { "scripted:ask_form" } else { "scripted:dashboard" };
        let start = Instant::now();
        let input = json!({
            "threadId": th, "runId": format!("soak-{n}"), "tools": [], "context": [], "state": {},
            "messages": [{"id": format!("u{n}"), "role": "user", "content": "Soak: over AG-UI."}],
            "forwardedProps": {"model": model},
        });
        let ended = match run(&api, th, &person.token, input).await {
            Ok((outcome, retried)) if outcome["type"] == "interrupt" => {
                let interrupt = outcome["interrupts"][0]["id"].clone();
                let resume = json!({
                    "threadId": th, "runId": format!("soak-{n}-resume"), "tools": [], "context": [], "state": {}, "messages": [],
                    "forwardedProps": {},
                    "resume": [{"interruptId": interrupt, "status": "resolved", "payload": super::people::incident_answer()}],
                });
                match run(&api, th, &person.token, resume).await {
                    Ok((outcome, again)) if outcome["type"] == "success" => Ok(retried || again),
                    Ok((outcome, _)) if outcome["interrupts"][0]["id"] == interrupt => Err(Some(asked_again(&api, &person.token, &interrupt).await)),
                    Ok((outcome, _)) => Err(Some(format!("the resumed run ended {outcome}"))),
                    Err(why) => Err(why),
                }
            }
            Ok((outcome, retried)) if outcome["type"] == "success" => Ok(retried),
            // A reconnect reports the thread's latest run, which may be another's.
            Ok((_, true)) => Ok(true),
            Ok((outcome, false)) => Err(Some(format!("RUN_FINISHED {outcome}"))),
            Err(why) => Err(why),
        };
        match ended {
            Ok(retried) => api.stats.record("agui", start.elapsed(), if retried { Outcome::Recovered } else { Outcome::Ok }),
            Err(Some(why)) => api.stats.record("agui", start.elapsed(), Outcome::Failed(why)),
            // Refused at the door: counted there.
            Err(None) => {}
        }
    }
}

/// The resumed stream ended at once with the interrupt it had just
/// answered: the person would be asked the same form again. Whether the
/// run itself went on (looked up for 10 s, uncounted) says where the fault
/// lies: in what the stream replayed, not in the answer.
async fn asked_again(api: &Api, token: &str, interrupt: &Value) -> String {
    let run = interrupt.as_str().and_then(|i| i.split_once(':')).map_or("", |(run, _)| run);
    let path = format!("/v1/runs/{run}");
    let mut status = Value::Null;
    for _ in 0..20 {
        if let Exchange::Answered { body, .. } = api.exchange(&Request::get(&path, token)).await {
            status = serde_json::from_str::<Value>(&body).map(|v| v["status"].clone()).unwrap_or_default();
            if status == "finished" {
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    format!("the resume's stream ended at once with the interrupt it had just answered (the run itself: {status})")
}

/// One AG-UI request read to its `RUN_FINISHED`: its outcome, and whether
/// it took a retry or a reconnect; why not, `None` when the refusal was
/// counted already.
async fn run(api: &Api, th: &str, token: &str, input: Value) -> Result<(Value, bool), Option<String>> {
    let path = format!("/v1/agui/threads/{th}");
    let mut input = input;
    let mut retried = false;
    for reconnects in 0..3 {
        let Some((answer, again)) = api.open("agui", Request::post(&path, token, &input).streamed()).await else {
            return Err(None);
        };
        retried |= again;
        let mut events = std::pin::pin!(answer.bytes_stream().eventsource());
        while let Some(Ok(event)) = events.next().await {
            let Ok(event) = serde_json::from_str::<Value>(&event.data) else { continue };
            match event["type"].as_str() {
                Some("RUN_FINISHED") => return Ok((event["outcome"].clone(), retried || reconnects > 0)),
                Some("RUN_ERROR") => return Err(Some(format!("RUN_ERROR {} {}", event["code"], event["message"]))),
                _ => {}
            }
        }
        // Cut before its end: what a client does then (docs/AGUI.md).
        input = json!({"threadId": th, "runId": input["runId"], "messages": [], "forwardedProps": {"reconnect": true}});
    }
    Err(Some("the stream ended before RUN_FINISHED, three times".into()))
}
