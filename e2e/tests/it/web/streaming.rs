//! A real model's reply as the chat shows it, against a local
//! OpenAI-compatible server that streams (made here: no model is reachable
//! from the tests): text appearing while it is written, a form taking shape
//! while its arguments arrive, a busy service asked again, and a run
//! cancelled from the page.

use std::time::Duration;

use lattice_agent::tools::SHOW_DASHBOARD;
use lattice_e2e::browser::Chrome;
use lattice_e2e::model::{ModelService, Reply, arguments, text, tool_call};
use lattice_e2e::{Client, UpProcess};
use serde_json::{Value, json};

async fn start_run(alice: &Client, th: &str, prompt: &str) -> String {
    alice.ok("POST", &format!("/v1/threads/{th}/runs"), json!({"prompt": prompt})).await["run_id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_and_a_form_appear_while_the_model_writes_them() {
    let model = ModelService::default();
    let base_url = model.clone().start().await;
    let up = UpProcess::start_with(&[("LATTICE_MODEL_BASE_URL", base_url.as_str()), ("LATTICE_MODEL_NAME", "streaming-test")]).await;
    let alice = Client::sign_in_as(&up.base, json!({"tenant": "t-stream", "user": "alice"})).await;
    let (_, th) = super::workspace_with_thread(&alice, "Streaming").await;
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &alice.token, "light", &format!("/t/{th}")).await;
    w.until("() => document.querySelector('h1') && document.querySelector('h1').textContent === 'Streaming'", "the thread").await;

    // A busy service first, then the reply in twelve pieces, 250 ms apart.
    let pieces = ["Error ", "rates ", "rose ", "to ", "1.5 % ", "at ", "10:05 ", "and ", "fell ", "back ", "by ", "10:20."];
    let whole = pieces.concat();
    model.then(Reply::Busy);
    model.then(Reply::Stream { chunks: pieces.iter().map(|p| text(p)).collect(), pause: Duration::from_millis(250) });
    let run = start_run(&alice, &th, "How are the error rates?").await;

    // Part of it shows before the rest is written, in a live region kept busy.
    w.until_within(
        "() => { const t = document.querySelector('.message.agent.writing .text'); return !!t && t.textContent.length > 0 }",
        "the reply while it is written",
        Duration::from_secs(15),
    )
    .await;
    let partial: String = w.eval("() => document.querySelector('.message.agent.writing .text').textContent").await;
    assert!(whole.starts_with(&partial) && partial.len() < whole.len(), "{partial:?} is the start of {whole:?}");
    let region: Vec<String> = w
        .eval(
            "() => { const a = document.querySelector('.message.agent.writing'); return [a.getAttribute('aria-live'), a.getAttribute('aria-busy')] }",
        )
        .await;
    assert_eq!(region, ["polite", "true"], "announced once, whole, not every few characters");
    let status: String = w.eval("() => document.querySelector('.run-status').textContent").await;
    assert_eq!(status, "The agent is writing…");
    if let Some(dir) = std::env::var_os("LATTICE_E2E_SHOTS") {
        w.until("() => document.querySelector('.message.agent.writing .text').textContent.length > 20", "a few words").await;
        shot(&w, &std::path::Path::new(&dir).join("streaming.png")).await;
    }

    // Then the reply as it was kept, and the writing gone.
    let kept = format!("() => [...document.querySelectorAll('.message.agent:not(.writing) .text')].some(t => t.textContent === {})", json!(whole));
    w.until_within(&kept, "the finished reply", Duration::from_secs(15)).await;
    w.until("() => !document.querySelector('.writing')", "no reply being written").await;
    let events = alice.all_events(&th).await;
    assert!(events.iter().all(|e| e["type"] != "delta"), "the log keeps no delta");
    let replies: Vec<&Value> = events.iter().filter(|e| e["type"] == "message_posted" && e["actor"]["kind"] == "agent").collect();
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0]["payload"]["text"], whole.as_str(), "the deltas add up to the message kept");
    let finished = events.iter().find(|e| e["type"] == "run_finished" && e["payload"]["run_id"] == run.as_str());
    assert!(finished.is_some(), "a 429 then success finishes the run");
    assert_eq!(model.asked.lock().unwrap().len(), 2, "asked again once after the 429");

    // A form takes shape while its arguments arrive: title first, then its
    // fields one by one; no refusal for what is still arriving.
    let form = [
        r#"{"title": "Incident rep"#,
        r#"ort", "schema": {"type": "object", "properties": {"severity": {"type": "string", "title": "Sev"#,
        r#"erity", "enum": ["low", "high"]}, "no"#,
        r#"te": {"type": "string", "title": "Note"}}, "required": ["severity"]}}"#,
    ];
    let chunks = form.iter().enumerate().map(|(i, p)| arguments(i == 0, p)).collect();
    model.then(Reply::Stream { chunks, pause: Duration::from_millis(700) });
    start_run(&alice, &th, "Ask me for the incident").await;
    w.until_within(
        "() => { const h = document.querySelector('.form-request.writing h2'); return !!h && h.textContent.startsWith('Incident rep') }",
        "the form's title while it is written",
        Duration::from_secs(15),
    )
    .await;
    let fields_then: usize = w.eval("() => document.querySelectorAll('.form-request.writing .fields-so-far li').length").await;
    w.until(
        "() => [...document.querySelectorAll('.form-request.writing .fields-so-far li')].map(l => l.textContent).join(',') === 'Severity,Note'",
        "both fields as they arrive",
    )
    .await;
    assert!(fields_then < 2, "the fields came after the title ({fields_then} at first)");
    let refusals: usize = w.eval("() => document.querySelectorAll('.writing .refusal, .writing [role=alert]').length").await;
    assert_eq!(refusals, 0, "nothing is refused while it arrives");
    // Finished, it is the form a person answers.
    w.until("() => !!document.querySelector('.form-request:not(.writing) form.schema-form')", "the form to answer").await;
    w.until("() => !document.querySelector('.writing')", "no form being written").await;

    // A dashboard takes shape panel by panel: the first shows while the
    // second is still being written.
    let dashboard = [
        r#"{"title": "Error rates", "panels": [{"type": "metric", "label": "Errors", "value": 1.5, "unit": "%"}, {"type": "met"#,
        r#"ric", "label": "Requests per minute", "value": 1200}]}"#,
    ];
    let chunks = dashboard.iter().enumerate().map(|(i, p)| tool_call("call_dash", SHOW_DASHBOARD, i == 0, p)).collect();
    model.then(Reply::Stream { chunks, pause: Duration::from_millis(1500) });
    start_run(&alice, &th, "Show me the error rates").await;
    w.until_within(
        "() => document.querySelectorAll('.writing .dashboard .panel').length === 1",
        "the first panel while the second is written",
        Duration::from_secs(15),
    )
    .await;
    let shown: String = w.eval("() => document.querySelector('.writing .dashboard').textContent").await;
    assert!(shown.contains("Error rates") && shown.contains("Errors") && !shown.contains("Requests per minute"), "{shown}");
    w.until(
        "() => [...document.querySelectorAll('.dashboard')].some(d => !d.closest('.writing') && d.querySelectorAll('.panel').length === 2)",
        "the dashboard made",
    )
    .await;
    w.until("() => !document.querySelector('.writing')", "no dashboard being written").await;
    w.until("() => [...document.querySelectorAll('.run .badge')].pop().textContent === 'finished'", "the dashboard's run finished").await;

    // A run cancelled from the page: its model call is dropped.
    model.then(Reply::Stream { chunks: (0..40).map(|_| text("slow ")).collect(), pause: Duration::from_millis(500) });
    let run = start_run(&alice, &th, "Take your time").await;
    w.until_within("() => !!document.querySelector('.message.agent.writing')", "the slow reply", Duration::from_secs(15)).await;
    let cancel =
        "() => { const b = [...document.querySelectorAll('.run')].pop().querySelector('button'); b.click(); return b.textContent }".to_string();
    assert_eq!(w.eval::<String>(&cancel).await, "Cancel");
    w.until("() => [...document.querySelectorAll('.run .badge')].pop().textContent === 'cancelled'", "the run cancelled").await;
    w.until("() => !document.querySelector('.writing')", "nothing written any more").await;
    let run_state = alice.ok("GET", &format!("/v1/runs/{run}"), Value::Null).await;
    assert_eq!(run_state["status"], "failed");
    let failed = alice.all_events(&th).await.into_iter().find(|e| e["type"] == "run_failed" && e["payload"]["run_id"] == run.as_str()).unwrap();
    assert_eq!(failed["payload"]["failure"], "cancelled");
    assert_eq!(failed["actor"]["user"], "alice", "cancelled by the person, in the log");
}

/// The window as a person sees it, for the docs (`LATTICE_E2E_SHOTS`).
pub async fn shot(w: &lattice_e2e::browser::Window, path: &std::path::Path) {
    use playwright_rs::protocol::{ScreenshotOptions, ScreenshotType};
    let options = ScreenshotOptions::builder().screenshot_type(ScreenshotType::Png).full_page(false).build();
    let png = w.page.screenshot(options).await.expect("a screenshot");
    std::fs::write(path, png).expect("the screenshot written");
}
