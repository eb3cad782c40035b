//! On a phone (390 × 844, issue 44): nothing scrolls sideways on a thread
//! (with a form, a dashboard and a long message), on "Waiting for you" or
//! on the console; the composer is in view; the side list folds away
//! behind its button and folds again once a link in it is followed; and
//! no time is shown on any of them as the server wrote it.

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Client, UpProcess};
use playwright_rs::protocol::{BrowserContextOptions, Viewport};
use serde_json::json;

/// A window the size of a phone, signed in with `token`, at `path`.
pub async fn phone(chrome: &Chrome, base: &str, token: &str, path: &str) -> Window {
    let options = BrowserContextOptions::builder().color_scheme("light".to_owned()).viewport(Viewport { width: 390, height: 844 }).build();
    let context = chrome.browser.new_context_with_options(options).await.expect("a browser context");
    let page = context.new_page().await.expect("a page");
    page.goto(&format!("{base}{path}#token={token}"), None).await.expect("opening the chat host");
    Window { page, base: base.to_owned() }
}

/// How far the page scrolls sideways (0: not at all), and what sticks out.
const SIDEWAYS: &str = "() => { const s = document.scrollingElement; const over = s.scrollWidth - s.clientWidth; \
     const out = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > s.clientWidth + 0.5) \
     .slice(0, 5).map(e => e.tagName + '.' + e.className); return [over, out.join(' ')] }";

async fn no_sideways_scroll(w: &Window, what: &str) {
    let (over, out): (i64, String) = w.eval(SIDEWAYS).await;
    assert!(over <= 0, "{what} scrolls sideways by {over} px at 390 × 844: {out}");
}

/// No time on screen as the server wrote it (`2026-12-04T22:51`).
async fn no_iso_time(w: &Window, what: &str) {
    let shown: String = w.eval("() => document.body.innerText").await;
    let iso: bool = w.eval(r"() => /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(document.body.innerText)").await;
    assert!(!iso, "a time in ISO form on {what}: {shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_390_by_844_nothing_scrolls_sideways_and_the_side_list_folds_away() {
    // Thirty messages in a row: no write rate in the way.
    let up = UpProcess::start_with(&[("LATTICE_RATE_WRITES_PER_SEC", "0")]).await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "t-phone", "user": "ana", "role": "tenant_admin"})).await;
    let (ws, th) = super::workspace_with_thread(&ana, "A thread with a rather long title for a small screen").await;
    let other = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Another"})).await["id"].as_str().unwrap().to_owned();
    ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": format!("A word without a break: {}", "x".repeat(120))})).await;
    ana.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "dashboard", "data": super::every_panel("art_none")})).await;
    let form = json!({"title": "Shift preference", "schema": {"type": "object", "properties": {
        "shift": {"title": "Shift", "enum": ["early", "late"]}, "note": {"type": "string", "title": "Anything else"}}}, "submissions": "per_person"});
    ana.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "form", "data": form})).await;
    for i in 1..=30 {
        ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": format!("Message {i}")})).await;
    }
    let chrome = Chrome::launch().await;

    // The thread.
    let w = phone(&chrome, &up.base, &ana.token, &format!("/t/{th}")).await;
    w.until(
        "() => document.querySelectorAll('.timeline .message').length === 31 && !!document.querySelector('.dashboard .panels svg') \
         && !!document.querySelector('form.schema-form') && !!document.querySelector('#composer-text')",
        "the thread with its dashboard and form",
    )
    .await;
    no_sideways_scroll(&w, "the thread").await;
    no_iso_time(&w, "the thread").await;
    w.until(
        "() => { const r = document.getElementById('composer-text').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight }",
        "the composer in view",
    )
    .await;

    // The side list is folded away, behind its button.
    let folded: (bool, bool, String) = w
        .eval(
            "() => { const b = document.querySelector('.side-toggle'); const n = document.getElementById('side-nav'); \
             return [b.getBoundingClientRect().height > 0, n.getBoundingClientRect().height === 0, b.getAttribute('aria-expanded')] }",
        )
        .await;
    assert_eq!(folded, (true, true, "false".to_owned()), "the button shown, the list folded");
    w.page.locator(".side-toggle").click(None).await.unwrap();
    w.until(&format!("() => document.querySelector(\"#side-nav a[href='/t/{other}']\")?.getBoundingClientRect().height > 0"), "the list unfolded")
        .await;
    let expanded: String = w.eval("() => document.querySelector('.side-toggle').getAttribute('aria-expanded')").await;
    assert_eq!(expanded, "true");
    no_sideways_scroll(&w, "the thread with the side list open").await;
    w.page.locator(format!("#side-nav a[href='/t/{other}']")).click(None).await.unwrap();
    w.until("() => document.querySelector('h1').textContent === 'Another'", "the other thread").await;
    w.until("() => document.getElementById('side-nav').getBoundingClientRect().height === 0", "the list folded again").await;

    // What waits for her (the form above).
    let w = phone(&chrome, &up.base, &ana.token, "/waiting").await;
    w.until("() => document.querySelectorAll('.waiting-item').length === 1", "the inbox").await;
    no_sideways_scroll(&w, "the inbox").await;
    no_iso_time(&w, "the inbox").await;

    // The console, with a flip's audit row.
    ana.ok(
        "PUT",
        &format!("/v1/integrations/workspace:{ws}/ui:dashboards"),
        json!({"state": "on", "reason": "Keep dashboards on for the phone test"}),
    )
    .await;
    let w = phone(&chrome, &up.base, &ana.token, "/admin").await;
    w.until("() => !!document.querySelector('section.level') && !!document.querySelector('table.audit tbody tr')", "the console and its audit trail")
        .await;
    no_sideways_scroll(&w, "the console").await;
    no_iso_time(&w, "the console").await;
}
