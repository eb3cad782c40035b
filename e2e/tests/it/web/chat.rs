//! The chat reads as a chat (issue 44): the conversations listed beside the
//! one open, the composer at the bottom of the window, a long thread opened
//! at its newest message and kept there as messages arrive (a reader who
//! scrolled up is left where they are and told "New messages"), Enter to
//! send, drafts kept per thread, a person's messages told from the agent's
//! at a glance, a thread with something new marked unread until its end
//! is seen, and times as people read them.

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Client, UpProcess};
use playwright_rs::protocol::BrowserContextOptions;
use serde_json::json;

/// Whether the element `selector` names (the last of them) is whole in the window.
fn in_view(selector: &str) -> String {
    format!(
        "() => {{ const all = document.querySelectorAll({s}); const e = all[all.length - 1]; if (!e) return false; \
         const r = e.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight }}",
        s = json!(selector)
    )
}

/// The last message, whole in the window above the composer.
const NEWEST_ABOVE_THE_COMPOSER: &str = "() => { const m = [...document.querySelectorAll('.timeline .message')].pop(); \
     const c = document.querySelector('.dock'); if (!m || !c) return false; const r = m.getBoundingClientRect(); \
     return r.top >= 0 && r.bottom <= c.getBoundingClientRect().top + 1 }";

async fn messages(w: &Window, n: usize) {
    w.until(&format!("() => document.querySelectorAll('.timeline .message').length === {n}"), &format!("{n} messages")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_thread_opens_at_its_newest_message_with_the_composer_in_view() {
    // Two hundred messages in a row: no write rate in the way.
    let up = UpProcess::start_with(&[("LATTICE_RATE_WRITES_PER_SEC", "0")]).await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "t-chat", "user": "ana", "role": "tenant_admin"})).await;
    let (_, th) = super::workspace_with_thread(&ana, "A long thread").await;
    for i in 1..=200 {
        ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": format!("Message number {i}")})).await;
    }
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &ana.token, "light", &format!("/t/{th}")).await;
    messages(&w, 200).await;
    // The composer is in view without scrolling, and so is the newest message.
    w.until(&in_view("#composer-text"), "the composer in view").await;
    w.until(NEWEST_ABOVE_THE_COMPOSER, "the newest message in view on open").await;
    let last: String = w.eval("() => [...document.querySelectorAll('.timeline .message .text')].pop().textContent").await;
    assert_eq!(last, "Message number 200");

    // A new message arrives: the reader at the end stays there.
    ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": "Message number 201"})).await;
    messages(&w, 201).await;
    w.until(NEWEST_ABOVE_THE_COMPOSER, "the newest message in view after it arrived").await;
    w.until(&in_view("#composer-text"), "the composer still in view").await;
    let pill: bool = w.eval("() => !!document.querySelector('.new-pill')").await;
    assert!(!pill, "no pill for a reader who sees the newest");

    // A reader who scrolled up is not moved, and is told.
    let _: bool = w.eval("() => { window.scrollTo(0, 400); return true }").await;
    w.until("() => Math.abs(window.scrollY - 400) < 2", "scrolled up").await;
    ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": "Message number 202"})).await;
    messages(&w, 202).await;
    w.until(&in_view(".new-pill"), "the New messages pill").await;
    let y: f64 = w.eval("() => window.scrollY").await;
    assert!((y - 400.0).abs() < 2.0, "the reader was moved to {y}");
    let said: String = w.eval("() => document.querySelector('.new-pill').textContent").await;
    assert!(said.starts_with("New messages"), "{said}");
    // The pill takes them down, and goes.
    w.page.locator(".new-pill").click(None).await.unwrap();
    w.until(NEWEST_ABOVE_THE_COMPOSER, "the newest message after the pill").await;
    w.until("() => !document.querySelector('.new-pill')", "the pill gone").await;
}

/// Whether `th` is unread for `who`, as the server's list says.
async fn unread(who: &Client, ws: &str, th: &str) -> bool {
    let threads = who.ok("GET", &format!("/v1/workspaces/{ws}/threads"), json!(null)).await;
    threads.as_array().unwrap().iter().find(|t| t["id"] == th).expect("listed")["unread"].as_bool().expect("a list says unread")
}

/// Until `th`'s unread mark for `who` is `wanted` (within 5 s).
async fn until_unread(who: &Client, ws: &str, th: &str, wanted: bool, what: &str) {
    for _ in 0..100 {
        if unread(who, ws, th).await == wanted {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{what}: unread stayed {}", !wanted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_with_something_new_is_marked_unread_until_its_end_is_seen() {
    let up = UpProcess::start_with(&[("LATTICE_RATE_WRITES_PER_SEC", "0")]).await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "t-unread", "user": "ana", "role": "tenant_admin"})).await;
    let bob = Client::sign_in_as(&up.base, json!({"tenant": "t-unread", "user": "bob", "role": "member"})).await;
    let (ws, first) = super::workspace_with_thread(&ana, "Planning").await;
    let second = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Retro"})).await["id"].as_str().unwrap().to_owned();
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "bob", "role": "editor"})).await;
    for i in 1..=60 {
        bob.ok("POST", &format!("/v1/threads/{first}/messages"), json!({"text": format!("Note {i}")})).await;
    }
    bob.ok("POST", &format!("/v1/threads/{second}/messages"), json!({"text": "Are we on for Friday?"})).await;
    assert!(unread(&ana, &ws, &first).await && unread(&ana, &ws, &second).await, "both new to ana");

    // Opened at its newest message, the first thread is read; the other,
    // not opened, is marked in the side list, in words for a screen reader.
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &ana.token, "light", &format!("/t/{first}")).await;
    messages(&w, 60).await;
    until_unread(&ana, &ws, &first, false, "the thread opened at its end").await;
    let side = "nav[aria-label='Conversations']";
    let mark = |th: &str| format!("() => document.querySelector(\"{side} a[href='/t/{th}']\")?.classList.contains('unread')");
    w.until(&mark(&second), "the other thread marked unread").await;
    let said: String = w.eval(&format!("() => document.querySelector(\"{side} a[href='/t/{second}']\").textContent")).await;
    assert_eq!(said, "Retro, unread");
    assert!(!w.eval::<bool>(&mark(&first)).await, "the thread in view is not marked");

    // A reader scrolled up has not seen what arrives below: still unread
    // until the pill takes them down.
    let _: bool = w.eval("() => { window.scrollTo(0, 0); return true }").await;
    w.until("() => window.scrollY === 0", "scrolled up").await;
    bob.ok("POST", &format!("/v1/threads/{first}/messages"), json!({"text": "One more thing"})).await;
    messages(&w, 61).await;
    w.until(&in_view(".new-pill"), "the New messages pill").await;
    // A claim that nothing is marked read: only a window shows it.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(unread(&ana, &ws, &first).await, "read while scrolled up");
    w.page.locator(".new-pill").click(None).await.unwrap();
    until_unread(&ana, &ws, &first, false, "the pill took her to the end").await;

    // Opening the other reads it; left, it is no longer marked.
    w.page.locator(format!("{side} a[href='/t/{second}']")).click(None).await.unwrap();
    messages(&w, 1).await;
    until_unread(&ana, &ws, &second, false, "the other thread opened").await;
    w.page.locator(format!("{side} a[href='/t/{first}']")).click(None).await.unwrap();
    messages(&w, 61).await;
    w.until(&format!("() => !!document.querySelector(\"{side} a[href='/t/{second}']\")"), "the list read again").await;
    assert!(!w.eval::<bool>(&mark(&second)).await, "read, so not marked");

    // Something new elsewhere is marked when she comes back to the page.
    bob.ok("POST", &format!("/v1/threads/{second}/messages"), json!({"text": "Friday it is"})).await;
    let _: bool = w.eval("() => { window.dispatchEvent(new Event('focus')); return true }").await;
    w.until(&mark(&second), "marked again, read on coming back").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_side_list_enter_to_send_drafts_and_whose_message_is_whose() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "t-side", "user": "ana", "role": "tenant_admin"})).await;
    let (ws, first) = super::workspace_with_thread(&ana, "Planning").await;
    let second = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Retro"})).await["id"].as_str().unwrap().to_owned();
    let (other_ws, _) = super::workspace_with_thread(&ana, "Ops").await;
    // The agent's message, as the agent writes one.
    let agent = Client::sign_in_as(&up.base, json!({"tenant": "t-side", "user": "helper", "role": "tenant_admin", "agent": true})).await;
    ana.ok("POST", &format!("/v1/threads/{first}/messages"), json!({"text": "What is left for Friday?"})).await;
    agent.ok("POST", &format!("/v1/threads/{first}/messages"), json!({"text": "Two reviews and the release notes."})).await;

    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &ana.token, "light", &format!("/t/{first}")).await;
    messages(&w, 2).await;
    // Every workspace and its threads, beside the conversation; the open one marked.
    let side = "nav[aria-label='Conversations']";
    for href in [format!("/w/{ws}"), format!("/w/{other_ws}"), format!("/t/{first}"), format!("/t/{second}")] {
        w.until(&format!("() => !!document.querySelector(\"{side} a[href='{href}']\")"), &format!("{href} in the side list")).await;
    }
    let current: String = w.eval(&format!("() => document.querySelector(\"{side} a[aria-current='page']\").getAttribute('href')")).await;
    assert_eq!(current, format!("/t/{first}"));

    // A person's message and the agent's differ by place and colour, not only a word.
    let looks: Vec<String> = w
        .eval(
            "() => ['.message.person', '.message.agent'].map(s => { const e = document.querySelector(s); const r = e.getBoundingClientRect(); \
             return `${Math.round(r.left)}|${Math.round(r.right)}|${getComputedStyle(e).backgroundColor}` })",
        )
        .await;
    let [person, agent] = [&looks[0], &looks[1]].map(|l| l.split('|').map(str::to_owned).collect::<Vec<_>>());
    assert!(person[0].parse::<i32>().unwrap() > agent[0].parse::<i32>().unwrap(), "the person's message sits to the right: {looks:?}");
    assert_ne!(person[2], agent[2], "told apart by their background: {looks:?}");

    // Shift+Enter breaks the line, Enter sends.
    w.page.locator("#composer-text").click(None).await.unwrap();
    w.type_text("Line one").await;
    w.press("Shift+Enter").await;
    w.type_text("line two").await;
    w.press("Enter").await;
    messages(&w, 3).await;
    let sent: String = w.eval("() => [...document.querySelectorAll('.timeline .message .text')].pop().textContent").await;
    assert_eq!(sent, "Line one\nline two");
    w.until("() => document.getElementById('composer-text').value === ''", "the composer emptied").await;

    // A draft stays with its thread while the person looks at another.
    w.type_text("Half a thought").await;
    w.page.locator(format!("{side} a[href='/t/{second}']")).click(None).await.unwrap();
    w.until("() => document.querySelector('h1').textContent === 'Retro'", "the other thread").await;
    w.until("() => document.getElementById('composer-text').value === ''", "the other thread's own, empty, draft").await;
    w.page.locator(format!("{side} a[href='/t/{first}']")).click(None).await.unwrap();
    w.until("() => document.querySelector('h1').textContent === 'Planning'", "back").await;
    w.until("() => document.getElementById('composer-text').value === 'Half a thought'", "the draft kept").await;

    // An empty thread says what to do.
    w.page.locator(format!("{side} a[href='/t/{second}']")).click(None).await.unwrap();
    w.until("() => /Write the first message/.test(document.querySelector('.empty')?.textContent ?? '')", "the empty thread's words").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_time_is_shown_as_the_server_wrote_it() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "t-times", "user": "ana", "role": "tenant_admin"})).await;
    let (_, th) = super::workspace_with_thread(&ana, "Times").await;
    ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": "Now"})).await;
    ana.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "dashboard", "data": super::every_panel("art_none")})).await;
    // And one of long ago, shown with its date.
    let mut old = super::every_panel("art_none");
    old["as_of"] = json!("2025-06-01T12:00:00Z");
    ana.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "dashboard", "data": old})).await;
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &ana.token, "light", &format!("/t/{th}")).await;
    w.until(
        "() => !!document.querySelector('.message time') && document.querySelectorAll('.as-of time').length === 2",
        "a message's time and the dashboards'",
    )
    .await;
    let iso = r"/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/";
    let shown: String = w.eval("() => document.body.innerText").await;
    let iso_on_screen: bool = w.eval(&format!("() => {iso}.test(document.body.innerText)")).await;
    assert!(!iso_on_screen, "a time in ISO form on screen: {shown}");
    // Each time: its value in `datetime`, relative or dated on screen,
    // the exact date and time on hover and in words for a screen reader.
    let times: Vec<Vec<String>> = w
        .eval(
            "() => [...document.querySelectorAll('time')].map(t => [t.getAttribute('datetime'), t.querySelector('[aria-hidden]').textContent, \
             t.getAttribute('title'), t.querySelector('.sr').textContent])",
        )
        .await;
    assert!(times.len() >= 2, "{times:?}");
    for t in &times {
        let [datetime, short, title, spoken] = [&t[0], &t[1], &t[2], &t[3]];
        assert!(datetime.contains('T'), "the machine's value kept: {t:?}");
        assert!(!short.is_empty() && !title.is_empty() && title == spoken, "{t:?}");
        assert!(spoken.contains(&datetime[..4]), "the exact date to a screen reader: {t:?}");
    }
    assert!(times[0][1].contains("now") || times[0][1].contains("ago"), "a message just written is said relatively: {times:?}");
    assert!(times.iter().any(|t| t[0] == "2026-11-29T12:00:00Z"), "the dashboard's as_of: {times:?}");

    // In the person's own language and time zone: noon in UTC is nine in
    // the evening in Tokyo, written as Germans write dates.
    let options = BrowserContextOptions::builder().locale("de-DE".to_owned()).timezone_id("Asia/Tokyo".to_owned()).build();
    let page = chrome.browser.new_context_with_options(options).await.unwrap().new_page().await.unwrap();
    page.goto(&format!("{}/t/{th}#token={}", up.base, ana.token), None).await.unwrap();
    let w = Window { page, base: up.base.clone() };
    w.until("() => !!document.querySelector('.message time') && document.querySelectorAll('.as-of time').length === 2", "the times, in German").await;
    let iso_on_screen: bool = w.eval(&format!("() => {iso}.test(document.body.innerText)")).await;
    assert!(!iso_on_screen, "a time in ISO form on screen");
    let as_of: Vec<String> = w
        .eval(
            "() => { const t = document.querySelector(\"time[datetime='2025-06-01T12:00:00Z']\"); \
             return [t.querySelector('[aria-hidden]').textContent, t.getAttribute('title')] }",
        )
        .await;
    assert_eq!(as_of[0], "01.06.2025, 21:00", "{as_of:?}");
    assert!(as_of[1].contains("1. Juni 2025") && as_of[1].contains("21:00:00"), "the exact time, in German, in Tokyo: {as_of:?}");
    let said: String = w.eval("() => document.querySelector('.message time [aria-hidden]').textContent").await;
    assert!(said == "jetzt" || said.starts_with("vor "), "a message just written, said relatively in German: {said}");
    // And a dashboard's figures, as Germans write numbers, shares and euros.
    let table: Vec<Vec<String>> = w.eval(super::TABLE_CELLS).await;
    assert_eq!(table[..2], [["/v1/search", "840 ms", "1,2 %", "1.234,50 €"], ["/v1/export", "1.200 ms", "7 %", "99,00 €"]]);
}
