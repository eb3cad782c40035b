//! "Waiting for you" (`/waiting`, issue 44): a respondent signs in and
//! lands on the forms that wait for their answer, across workspaces, the
//! soonest to close first, with who asked, where and when it closes, and
//! their count in the side list; an answer takes one off live, and so does
//! their removal from a workspace, within a second.

use std::time::{Duration, Instant};

use lattice_core::clock::{Clock, SystemClock};
use lattice_e2e::browser::Chrome;
use lattice_e2e::{Client, UpProcess};
use serde_json::{Value, json};

/// The time `hours` from now, as RFC 3339 in UTC: on the wall clock, as
/// the lattice process under test reads it.
fn in_hours(hours: i64) -> String {
    lattice_log::rfc3339(SystemClock.now_ms() + hours * 3_600_000)
}

/// A per-person form in `th`, closing at `closes_at`: its id.
async fn form(admin: &Client, th: &str, title: &str, closes_at: &str) -> String {
    let data = json!({"title": title, "schema": {"type": "object", "properties": {"ok": {"type": "boolean", "title": "OK?"}}},
                      "submissions": "per_person", "closes_at": closes_at});
    admin.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "form", "data": data})).await["id"].as_str().unwrap().to_owned()
}

/// The inbox's items as the page shows them (what is only for a screen
/// reader left out): title, when it closes, who asked, where, the link and
/// the deadline's value.
const ITEMS: &str = "() => { const shown = (e) => { const c = e.cloneNode(true); c.querySelectorAll('.sr').forEach(s => s.remove()); return c.textContent }; \
     return [...document.querySelectorAll('.waiting-item')].map(i => [shown(i.querySelector('.waiting-title')), \
     shown(i.querySelector('.closes')), shown(i.querySelector('.asked-by')), shown(i.querySelector('.where')), \
     i.querySelector('.waiting-title a').getAttribute('href'), i.querySelector('.closes time').getAttribute('datetime')]) }";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_respondent_sees_what_waits_in_two_workspaces_soonest_first_and_live() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "t-wait", "user": "ana", "role": "tenant_admin"})).await;
    let (kitchen, lunch_th) = super::workspace_with_thread(&ana, "Kitchen").await;
    let (garden, rota_th) = super::workspace_with_thread(&ana, "Garden").await;
    for ws in [&kitchen, &garden] {
        ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "rita", "role": "respondent"})).await;
    }
    // The later deadline made first: the order is the deadline's, not the making's.
    let lunch_closes = in_hours(48);
    form(&ana, &lunch_th, "Lunch order", &lunch_closes).await;
    let rota_closes = in_hours(3);
    let rota = form(&ana, &rota_th, "Watering rota", &rota_closes).await;
    let rita = Client::sign_in_as(&up.base, json!({"tenant": "t-wait", "user": "rita"})).await;

    // Rita signs in (a sign-in link to the first page) and lands on what waits.
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &rita.token, "light", "/").await;
    w.until("() => location.pathname === '/waiting'", "the respondent landed on /waiting").await;
    w.until("() => document.querySelectorAll('.waiting-item').length === 2", "both forms").await;
    let items: Vec<Vec<String>> = w.eval(ITEMS).await;
    assert_eq!(items[0][0], "Watering rota", "the soonest deadline first: {items:?}");
    assert_eq!(items[1][0], "Lunch order", "{items:?}");
    assert_eq!(items[0][1], "Closes in 3 hours", "{items:?}");
    assert_eq!(items[1][1], "Closes in 2 days", "{items:?}");
    for (item, (place, th, closes)) in
        items.iter().zip([("Garden / Garden", &rota_th, &rota_closes), ("Kitchen / Kitchen", &lunch_th, &lunch_closes)])
    {
        assert_eq!(item[2], "ana", "who asked: {items:?}");
        assert_eq!(item[3], place, "where: {items:?}");
        assert_eq!(item[4], format!("/t/{th}"), "a link to the thread: {items:?}");
        let same: bool = w.eval(&format!("() => Date.parse({}) === Date.parse({})", json!(item[5]), json!(closes))).await;
        assert!(same, "the deadline's exact value kept: {item:?} against {closes}");
    }
    // The count in the side list, and the threads where a form waits marked.
    w.until("() => document.querySelector('.side-waiting .count')?.textContent === '2 waiting'", "the count in the side list").await;
    for th in [&lunch_th, &rota_th] {
        w.until(&format!("() => /form waiting/.test(document.querySelector(\"nav a[href='/t/{th}']\")?.textContent ?? '')"), "the thread marked")
            .await;
    }

    // Answering one takes it off, live.
    let answer = json!({"form_id": rota, "form_version": 1, "values": {"ok": true}});
    let answered = Instant::now();
    rita.ok("POST", &format!("/v1/threads/{rota_th}/artifacts"), json!({"kind": "submission", "data": answer})).await;
    w.until_within("() => document.querySelectorAll('.waiting-item').length === 1", "the answered form gone", Duration::from_secs(1)).await;
    println!("the inbox dropped an answered form {} ms after the answer was sent", answered.elapsed().as_millis());
    let items: Vec<Vec<String>> = w.eval(ITEMS).await;
    assert_eq!(items[0][0], "Lunch order", "{items:?}");
    w.until("() => document.querySelector('.side-waiting .count')?.textContent === '1 waiting'", "the count down to one").await;
    w.until(&format!("() => !/form waiting/.test(document.querySelector(\"nav a[href='/t/{rota_th}']\").textContent)"), "the mark gone").await;

    // Removed from the kitchen, rita no longer sees its form: within a second.
    let removed = Instant::now();
    let r = ana.http.delete(format!("{}/v1/workspaces/{kitchen}/members/rita", up.base)).bearer_auth(&ana.token).send().await.unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    w.until_within(
        "() => document.querySelectorAll('.waiting-item').length === 0 && /Nothing waits for your answer/.test(document.querySelector('main').textContent)",
        "the kitchen's form gone from the inbox",
        Duration::from_secs(1),
    )
    .await;
    println!("the inbox dropped a removed workspace's form {} ms after the removal", removed.elapsed().as_millis());
    w.until("() => !document.querySelector('.side-waiting .count')", "no count once nothing waits").await;
    let left = rita.ok("GET", "/v1/me/waiting", Value::Null).await;
    assert_eq!(left, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn someone_who_writes_lands_on_their_workspaces() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "t-land", "user": "ana", "role": "tenant_admin"})).await;
    let (ws, th) = super::workspace_with_thread(&ana, "Desk").await;
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "ed", "role": "editor"})).await;
    form(&ana, &th, "Chairs", &in_hours(5)).await;
    // And a thread of another workspace shared with him to read.
    let (_, other) = super::workspace_with_thread(&ana, "Board").await;
    ana.ok("POST", &format!("/v1/threads/{other}/members"), json!({"user": "ed", "role": "viewer"})).await;
    let ed = Client::sign_in_as(&up.base, json!({"tenant": "t-land", "user": "ed"})).await;
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &ed.token, "light", "/").await;
    // The first page has read both his workspaces and what is shared with him.
    w.until(
        &format!("() => !!document.querySelector(\"main a[href='/w/{ws}']\") && !!document.querySelector(\"main .shared a[href='/t/{other}']\")"),
        "the workspaces and the shared thread",
    )
    .await;
    // An editor's form waits too: counted beside, not landed on.
    w.until("() => document.querySelector('.side-waiting .count')?.textContent === '1 waiting'", "the count").await;
    let path: String = w.eval("() => location.pathname").await;
    assert_eq!(path, "/");
}
