//! A thread's states as a person meets them (issue 44): loading does not
//! move what is on the page, a thread that cannot be shown says what
//! happened and what to try, and a stream that dropped says it is
//! reconnecting, then shows what arrived meanwhile.

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Client, UpProcess};
use playwright_rs::protocol::BrowserContextOptions;
use serde_json::json;

/// Adds up the page's layout shifts not caused by the person (the
/// Cumulative Layout Shift of Web Vitals) into `window.__shifted`.
const WATCH_SHIFTS: &str = "window.__shifted = 0; new PerformanceObserver((list) => { for (const e of list.getEntries()) \
     if (!e.hadRecentInput) window.__shifted += e.value; }).observe({ type: 'layout-shift', buffered: true });";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loading_does_not_jump_a_refusal_says_what_to_try_and_a_dropped_stream_says_it_reconnects() {
    let mut up = UpProcess::start().await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "t-states", "user": "ana", "role": "tenant_admin"})).await;
    let (_, th) = super::workspace_with_thread(&ana, "States").await;
    for text in ["One", "Two", "Three"] {
        ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({ "text": text })).await;
    }
    let other = Client::sign_in_as(&up.base, json!({"tenant": "t-elsewhere", "user": "olga", "role": "tenant_admin"})).await;
    let (_, hidden) = super::workspace_with_thread(&other, "Not hers").await;

    let chrome = Chrome::launch().await;
    let context = chrome.browser.new_context_with_options(BrowserContextOptions::builder().color_scheme("light".to_owned()).build()).await.unwrap();
    context.add_init_script(WATCH_SHIFTS).await.unwrap();
    let page = context.new_page().await.unwrap();
    page.goto(&format!("{}/t/{th}#token={}", up.base, ana.token), None).await.unwrap();
    let w = Window { page, base: up.base.clone() };

    // Loaded (the messages, the side list, the composer), nothing moved
    // on the way more than Web Vitals call good (0.1).
    w.until("() => document.querySelectorAll('.timeline .message').length === 3", "the messages").await;
    w.until(&format!("() => !!document.querySelector(\"nav a[href='/t/{th}']\")"), "the side list").await;
    w.until("() => !!document.getElementById('composer-text')", "the composer").await;
    // Layout shift is measured over a window after the load, as Web Vitals does.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let shifted: f64 = w.eval("() => window.__shifted").await;
    println!("layout shift while a thread loads: {shifted:.4}");
    assert!(shifted < 0.1, "the page jumped while loading: {shifted}");

    // The server goes away (its connections cut): the page says it is
    // reconnecting, and once the server is back shows what was written
    // meanwhile.
    up.kill();
    w.until("() => /Reconnecting to the thread/.test(document.querySelector('.reconnecting')?.textContent ?? '')", "said to be reconnecting").await;
    let up = up.start_again().await;
    ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": "Written while away"})).await;
    w.until("() => !document.querySelector('.reconnecting')", "reconnected").await;
    w.until("() => [...document.querySelectorAll('.timeline .message .text')].pop()?.textContent === 'Written while away'", "what was missed").await;
    let count: usize = w.eval("() => document.querySelectorAll('.timeline .message').length").await;
    assert_eq!(count, 4, "nothing lost, nothing repeated");

    // A thread she may not see: what happened, and what to try.
    w.page.goto(&format!("{}/t/{hidden}", up.base), None).await.unwrap();
    w.until("() => !!document.querySelector('.refusal')", "the refusal").await;
    let heading: String = w.eval("() => document.querySelector('h1').textContent").await;
    assert_eq!(heading, "This thread can't be shown");
    let said: String = w.eval("() => document.querySelector('.refusal').textContent").await;
    assert!(said.contains("not found") && said.contains("Reload the page to try again"), "{said}");
    assert_eq!(w.eval::<String>("() => document.querySelector('.refusal').getAttribute('role')").await, "alert");
}
