//! The ask_form round trip through the page, with the keyboard only: the
//! paused form takes the focus, a refusal shows under its field and takes
//! the focus, the answer resumes the run and its message appears.

use lattice_e2e::UpProcess;
use lattice_e2e::browser::Chrome;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_form_round_trip_with_the_keyboard() {
    let up = UpProcess::start().await;
    let (demo, _, th) = super::demo_thread(&up).await;
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &demo.token, "light", &format!("/t/{th}")).await;

    let prefix = "req-call_ask_form_1";
    w.until(&format!("() => !!document.getElementById('{prefix}-date')"), "the paused form").await;
    // The paused form took the focus once, on its first field.
    w.until(&format!("() => document.activeElement && document.activeElement.id === '{prefix}-date'"), "the focus on the form's first field").await;

    // Every field is labelled, the required ones in words.
    let labels: Vec<String> =
        w.eval("() => [...document.querySelectorAll('form.schema-form label, form.schema-form legend')].map(l => l.textContent)").await;
    assert!(labels.iter().any(|l| l == "When did it start? (required)"), "{labels:?}");
    assert!(labels.iter().any(|l| l == "Severity (required)"), "{labels:?}");
    assert!(labels.iter().any(|l| l == "What happened?"), "{labels:?}");

    // Date by keyboard; severity left out; one checkbox; a note.
    w.type_text("11292026").await;
    assert_eq!(w.eval::<String>(&format!("() => document.getElementById('{prefix}-date').value")).await, "2026-11-29");
    // Tab walks the date's month, day and year before it leaves the control.
    for _ in 0..4 {
        if w.focused().await != format!("{prefix}-date") {
            break;
        }
        w.press("Tab").await;
    }
    assert_eq!(w.focused().await, format!("{prefix}-severity-0"), "the radios (none chosen yet)");
    w.press("Tab").await; // past the group, to "API"
    assert_eq!(w.focused().await, format!("{prefix}-affected-0"));
    w.press("Space").await;
    w.press("Tab").await;
    w.press("Tab").await;
    w.press("Tab").await; // the note
    assert_eq!(w.focused().await, format!("{prefix}-note"));
    w.type_text("The API answers 502.").await;
    w.press("Tab").await;
    let button: String = w.eval("() => document.activeElement.textContent").await;
    assert_eq!(button, "Send report", "the send button is named by submit_label");
    w.press("Enter").await;

    // The refusal: under the field, announced, and the focus on it.
    w.until(&format!("() => document.getElementById('{prefix}-severity-error').textContent.length > 0"), "the severity refusal").await;
    let error: String = w.eval(&format!("() => document.getElementById('{prefix}-severity-error').textContent")).await;
    assert_eq!(error, "Is required");
    let alert: String = w.eval(&format!("() => document.querySelector('#{prefix} [role=alert]').textContent")).await;
    assert!(alert.contains("Severity"), "the alert names the field: {alert}");
    assert_eq!(w.focused().await, format!("{prefix}-severity-0"), "the focus moves to the first refused field");
    let described: String =
        w.eval(&format!("() => document.getElementById('{prefix}-severity-0').closest('fieldset').getAttribute('aria-describedby')")).await;
    assert!(described.contains(&format!("{prefix}-severity-error")), "the refusal describes its field: {described}");
    let sent_events = demo.all_events(&th).await.iter().filter(|e| e["type"] == "deferred_answered").count();
    assert_eq!(sent_events, 0, "a refused form sends nothing");

    // Arrow keys choose within the radio group: low -> medium -> high.
    w.press("ArrowRight").await;
    w.press("ArrowRight").await;
    for _ in 0..5 {
        w.press("Tab").await;
    }
    assert_eq!(w.eval::<String>("() => document.activeElement.textContent").await, "Send report");
    w.press("Enter").await;

    // The run resumes as the person who answered, and its message appears.
    w.until(
        "() => [...document.querySelectorAll('.message.agent .text')].some(m => m.textContent.includes('Thanks, I have the report'))",
        "the agent's reply",
    )
    .await;
    w.until(
        "() => document.querySelector('.answered') && document.querySelector('.answered').textContent === 'Already answered by demo.'",
        "the answered request",
    )
    .await;
    let run = demo.all_events(&th).await.into_iter().find(|e| e["type"] == "deferred_answered").expect("the answer is in the log");
    let answer = &run["payload"]["answer"];
    assert_eq!(answer["date"], "2026-11-29");
    assert_eq!(answer["severity"], "high");
    assert_eq!(answer["affected"], serde_json::json!(["API"]));
    assert_eq!(answer["note"], "The API answers 502.");
    assert_eq!(run["actor"]["user"], "demo");
    w.until("() => document.querySelector('.run-status')?.textContent === 'The agent has finished.'", "the run's status: finished").await;
}

/// A thread's page fetches the forms' chunk as it boots, beside the main
/// module, not after its events have named a form; the page draws the form
/// from that one fetch. Other pages leave the chunk alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_threads_page_fetches_the_forms_chunk_as_it_boots() {
    let up = UpProcess::start().await;
    let (demo, _, th) = super::demo_thread(&up).await;
    let chrome = Chrome::launch().await;
    let fetched = "() => performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)";

    let w = chrome.window(&up.base, &demo.token, "light", &format!("/t/{th}")).await;
    w.until("() => !!document.getElementById('req-call_ask_form_1-date')", "the paused form").await;
    let paths: Vec<String> = w.eval(fetched).await;
    let at = |what: &dyn Fn(&str) -> bool| paths.iter().position(|p| what(p));
    let chunk = at(&|p| p.starts_with("/assets/form_view-")).unwrap_or_else(|| panic!("the forms' chunk was fetched: {paths:?}"));
    // The page's first reads of the server (the events' stream, still
    // open, is not listed until it ends).
    let record = at(&|p| p == format!("/v1/threads/{th}")).unwrap_or_else(|| panic!("the thread was read: {paths:?}"));
    let me = at(&|p| p == "/v1/me").unwrap_or_else(|| panic!("the viewer was read: {paths:?}"));
    assert!(chunk < record && chunk < me, "the chunk is asked for before the page reads the server: {paths:?}");
    assert_eq!(paths.iter().filter(|p| p.starts_with("/assets/form_view-")).count(), 1, "fetched once: {paths:?}");
    assert!(!paths.iter().any(|p| p == "/favicon.ico"), "the page's icon is in the page: {paths:?}");

    let home = chrome.window(&up.base, &demo.token, "light", "/").await;
    home.until("() => document.querySelectorAll('ul.list li a').length > 0", "the workspaces").await;
    let paths: Vec<String> = home.eval(fetched).await;
    assert!(paths.iter().any(|p| p.starts_with("/assets/web-")), "{paths:?}");
    assert!(!paths.iter().any(|p| p.starts_with("/assets/form_view-")), "no form on the page, no forms' chunk: {paths:?}");
}
