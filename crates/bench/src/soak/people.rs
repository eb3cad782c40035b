//! A person in the chat: every second or so they post a message, read the
//! thread's latest page, answer the thread's form, or start an agent's run
//! and see it through: answering its ask_form, or using the app it made
//! (its state read and changed, its count submitted and confirmed).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::client::{Api, Request};
use super::scene::Scene;
use crate::rng::Rng;

const DISHES: [&str; 3] = ["soup", "salad", "pasta"];

/// How long a person waits for a run before calling it stuck: longer than
/// a replica's runs take to be picked up by the other when it dies.
const RUN_PATIENCE: Duration = Duration::from_secs(90);

pub async fn act(api: Api, scene: Arc<Scene>, who: usize, mut stop: watch::Receiver<bool>) {
    let mut rng = Rng::new(who as u64 + 1);
    let mut n = 0u64;
    loop {
        if !super::pause::pause(rng.millis(350, 1050), &mut stop).await {
            return;
        }
        n += 1;
        let me = &scene.people[who];
        let threads = scene.threads_of(me.tenant);
        let thread = *rng.pick(&threads);
        let (th, token) = (thread.id.as_str(), me.token.as_str());
        let person = Person { api: &api, scene: &scene, token };
        match rng.below(100) {
            0..45 => person.message(th, &format!("{} says hello, #{n}", me.user)).await,
            45..60 => person.read(th).await,
            60..85 => person.submit(th, &thread.form, DISHES[rng.below(DISHES.len() as u64) as usize]).await,
            85..91 => person.run(th, "scripted:ask_form").await,
            91..96 => person.run(th, "scripted:dashboard").await,
            _ => person.run(th, "scripted:app").await,
        }
    }
}

struct Person<'a> {
    api: &'a Api,
    scene: &'a Scene,
    token: &'a str,
}

impl Person<'_> {
    /// A call whose answer may name a log position: the highest seen is
    /// where new streams start.
    async fn call(&self, kind: &'static str, request: Request<'_>) -> Option<Value> {
        let answer = self.api.call(kind, request).await?;
        if let Some(seq) = answer["seq"].as_i64() {
            self.scene.latest.fetch_max(seq, Ordering::Relaxed);
        }
        Some(answer)
    }

    async fn message(&self, th: &str, text: &str) {
        self.call("message", Request::post(&format!("/v1/threads/{th}/messages"), self.token, &json!({"text": text}))).await;
    }

    async fn read(&self, th: &str) {
        let after = (self.scene.latest.load(Ordering::Relaxed) - 100).max(0);
        self.call("read", Request::get(&format!("/v1/threads/{th}/events?format=json&after={after}"), self.token)).await;
    }

    async fn submit(&self, th: &str, form: &str, dish: &str) {
        let nonce = ulid::Ulid::generate().to_string();
        let body = json!({"kind": "submission", "data": {"form_id": form, "form_version": 1, "values": {"dish": dish, "note": "for the soak"}, "nonce": nonce}});
        self.call("submit", Request::post(&format!("/v1/threads/{th}/artifacts"), self.token, &body)).await;
    }

    /// Starts a run of `model` and sees it to its end.
    async fn run(&self, th: &str, model: &str) {
        let before = self.scene.latest.load(Ordering::Relaxed);
        let body = json!({"prompt": "Soak: show me what you do.", "model": model});
        let Some(started) = self.call("run", Request::post(&format!("/v1/threads/{th}/runs"), self.token, &body)).await else { return };
        let Some(run) = started["run_id"].as_str() else { return self.api.stats.fail("run", format!("no run_id in {started}")) };
        self.api.stats.add("runs started", 1);
        let Some(mut state) = self.settled(run).await else { return };
        if state["status"] == "paused" {
            let Some(request) = state["requests"].as_array().and_then(|r| r.iter().find(|r| r["answered_by"].is_null())).cloned() else {
                return self.api.stats.fail("run", "paused with no open request".into());
            };
            let answer = json!({"tool_call_id": request["tool_call_id"], "answer": incident_answer()});
            if self.call("answer", Request::post(&format!("/v1/runs/{run}/answers"), self.token, &answer)).await.is_none() {
                return;
            }
            let Some(after) = self.settled(run).await else { return };
            state = after;
        }
        match state["status"].as_str() {
            Some("finished") => self.api.stats.add("runs finished", 1),
            other => return self.api.stats.fail("run", format!("a {model} run ended {other:?}")),
        }
        if model == "scripted:app" {
            self.use_app(th, run, before).await;
        }
    }

    /// Polls the run until it is no longer running: its state, or `None`
    /// when it did not settle (counted).
    async fn settled(&self, run: &str) -> Option<Value> {
        let start = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let state = self.call("run_get", Request::get(&format!("/v1/runs/{run}"), self.token)).await?;
            if state["status"] != "running" {
                return Some(state);
            }
            if start.elapsed() > RUN_PATIENCE {
                self.api.stats.fail("run", format!("still running after {} s", RUN_PATIENCE.as_secs()));
                return None;
            }
        }
    }

    /// The app `run` made (found among the thread's events since `before`):
    /// its state read, a count set, and the count submitted and confirmed.
    async fn use_app(&self, th: &str, run: &str, before: i64) {
        let Some(page) = self.call("read", Request::get(&format!("/v1/threads/{th}/events?format=json&after={before}"), self.token)).await else {
            return;
        };
        let made = page["events"].as_array().and_then(|events| {
            events.iter().find(|e| e["type"] == "artifact_created" && e["payload"]["kind"] == "app" && e["actor"]["run"] == run).cloned()
        });
        let Some(app) = made.as_ref().and_then(|e| e["payload"]["id"].as_str()) else {
            return self.api.stats.fail("app_call", "the finished app run's app is not among the thread's events".into());
        };
        let path = format!("/v1/artifacts/{app}/capability");
        let Some(capability) = self.call("app_call", Request::new(Method::POST, &path, self.token, None)).await else { return };
        let capability = capability["capability"].clone();
        let calls = format!("/v1/artifacts/{app}/calls");
        let mut confirmation = None;
        for (tool, arguments) in [
            ("get_state", json!({})),
            ("set_state", json!({"patch": [{"op": "add", "path": "/count", "value": 3}]})),
            ("submit", json!({"values": {"count": 3}})),
        ] {
            let body = json!({"tool": tool, "arguments": arguments, "capability": capability});
            let Some(outcome) = self.call("app_call", Request::post(&calls, self.token, &body)).await else { return };
            match outcome["status"].as_str() {
                Some("done") => {}
                Some("confirm") => confirmation = outcome["confirmation"].as_str().map(str::to_owned),
                _ => return self.api.stats.fail("app_call", format!("{tool}: {outcome}")),
            }
        }
        let Some(confirmation) = confirmation else { return self.api.stats.fail("app_call", "submit asked for no confirmation".into()) };
        let accept = json!({"accept": true});
        if let Some(outcome) = self.call("app_call", Request::post(&format!("/v1/app-calls/{confirmation}"), self.token, &accept)).await
            && outcome["status"] != "done"
        {
            self.api.stats.fail("app_call", format!("the confirmed submit: {outcome}"));
        }
    }
}

/// An answer to `scripted:ask_form`'s incident form.
pub fn incident_answer() -> Value {
    json!({"date": "2026-12-05", "severity": "high", "affected": ["API"], "note": "seen in the soak"})
}
