//! The ask_form round trip on the multi-process stack (REQUIREMENTS.md X2): the demo's
//! paused form, answered by a person in Chromium through the edge; the run
//! resumes in `lattice serve log`; `lattice serve bridge` publishes
//! `ui.form_submitted` with the answer, which a consumer on NATS receives;
//! and the message is in the trace of the click's request (OTLP on).

use std::time::Duration;

use futures_util::StreamExt;
use lattice_e2e::browser::Chrome;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_answers_the_demo_form_and_nats_hears_it() {
    let received = std::sync::Arc::new(std::sync::Mutex::new(lattice_e2e::otlp::Received::default()));
    let endpoint = lattice_e2e::otlp::receiver(received.clone()).await;
    let stack = tokio::task::spawn_blocking(move || {
        lattice_e2e::stack::Stack::temporary_with(&[("LATTICE_OTLP_ENDPOINT", endpoint.as_str()), ("OTEL_BSP_SCHEDULE_DELAY", "100")])
    })
    .await
    .unwrap()
    .expect("the stack");
    let demo = lattice_e2e::demo::Demo::on(&stack).await;
    let mut heard = demo.answers(&stack).await;

    let chrome = Chrome::launch().await;
    let w = chrome.window(&stack.portal, &demo.demo.token, "light", &format!("/t/{}", demo.th)).await;
    lattice_e2e::demo::send_the_paused_form(&w, "2026-11-29", "Down since ten.").await;

    w.until(
        "() => [...document.querySelectorAll('.message.agent .text')].some(m => m.textContent.includes('Thanks, I have the report'))",
        "the resumed run's reply",
    )
    .await;
    let message = tokio::time::timeout(Duration::from_secs(10), heard.next()).await.expect("ui.form_submitted within 10 s").unwrap();
    let body: Value = serde_json::from_slice(&message.payload).unwrap();
    assert_eq!(body["values"]["severity"], "high", "{body}");
    assert_eq!(body["values"]["note"], "Down since ten.");
    assert!(message.headers.as_ref().and_then(|h| h.get("Nats-Msg-Id")).is_some(), "deduplicated by the envelope id");
    println!("ui.form_submitted on {}: {body}", message.subject);

    // One trace from the click's request (the answer, through the edge) to the message.
    let traceparent = message.headers.as_ref().and_then(|h| h.get("traceparent")).map(|v| v.as_str().to_owned()).expect("the message's traceparent");
    let trace = traceparent.split('-').nth(1).unwrap().to_owned();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let spans: Vec<lattice_e2e::otlp::Span> = received.lock().unwrap().spans.iter().filter(|s| s.trace == trace).cloned().collect();
        // Server spans are named by route template: the edge's is its
        // pass-through's, the request's path is on it.
        let edge = spans.iter().find(|s| s.service == "lattice-edge" && s.name == "POST /v1/{*rest}");
        let log = spans.iter().find(|s| s.service == "lattice-log" && s.name == "POST /v1/runs/{run}/answers");
        if let (Some(edge), Some(_)) = (edge, log.filter(|_| spans.iter().any(|s| s.service == "lattice-bridge"))) {
            let path = edge.attributes.get("url.path").cloned().unwrap_or_default();
            assert!(path.starts_with("/v1/runs/") && path.ends_with("/answers"), "{edge:?}");
            println!("the click's trace {trace}: {}", spans.iter().map(|s| format!("{} {}", s.service, s.name)).collect::<Vec<_>>().join(" -> "));
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the answer's request and the publish in one trace: {spans:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(stack);
}
