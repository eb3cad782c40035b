//! Governance as a person meets it in the chat: what the kill switch
//! governs fails closed when the switch stops being heard, and a sign-in
//! link never replaces a session without asking (and is ignored in
//! production).

use std::time::{Duration, Instant};

use lattice_e2e::browser::Chrome;
use lattice_e2e::{Client, UpProcess};
use serde_json::{Value, json};

const APP: &str = "<!doctype html><p id=log>running</p>";

/// Freezes the process (SIGSTOP): its connections stay open and say
/// nothing, as a stream that broke without closing does.
fn freeze(pid: u32, on: bool) {
    unsafe {
        libc::kill(pid as i32, if on { libc::SIGSTOP } else { libc::SIGCONT });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_stop_and_forms_wait_while_the_switch_cannot_be_heard() {
    let up = UpProcess::start_with(&[("LATTICE_SWITCH_HEARTBEAT_MS", "300")]).await;
    let root = Client::sign_in_as(&up.base, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    root.ok("PUT", "/v1/integrations/deployment/ui:mini-apps", json!({"state": "on", "reason": "the suite"})).await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "acme", "user": "ana", "role": "tenant_admin"})).await;
    let (ws, th) = super::workspace_with_thread(&ana, "Quiet").await;
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "bot", "role": "editor"})).await;
    let bot = Client::sign_in_as(&up.base, json!({"tenant": "acme", "user": "bot", "agent": true})).await;
    bot.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "app", "data": {"title": "Runs", "summary": "s", "html": APP}})).await;
    ana.ok(
        "POST",
        &format!("/v1/threads/{th}/artifacts"),
        json!({"kind": "form", "data": {"title": "Report",
        "schema": {"type": "object", "properties": {"note": {"type": "string"}}}, "submissions": "many"}}),
    )
    .await;

    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &ana.token, "light", &format!("/t/{th}")).await;
    w.until("() => !!document.querySelector('.app-frame iframe')", "the app running").await;
    let send = "() => { const b = [...document.querySelectorAll('form.schema-form button')].find((b) => b.textContent.trim() === 'Send'); \
        return !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true'; }";
    w.until(send, "the form open").await;

    // The switch stream goes quiet: after three beats unheard, the app is
    // torn down and the form waits, saying why.
    let frozen = Instant::now();
    freeze(up.pid(), true);
    w.until_within("() => !document.querySelector('.app-frame iframe')", "the app torn down", Duration::from_secs(3)).await;
    let torn = frozen.elapsed();
    let page: String = w.eval("() => document.body.textContent").await;
    assert!(page.contains("cannot hear the kill switch"), "the reason is shown");
    assert!(!w.eval::<bool>(send).await, "the form cannot be sent while the switch is unheard");
    freeze(up.pid(), false);
    println!("the switch unheard (beats of 300 ms): the app torn down {} ms after the stream went quiet", torn.as_millis());
    // Heard again: governed UI comes back by itself.
    w.until("() => !!document.querySelector('.app-frame iframe')", "the app running again").await;
    w.until(send, "the form open again").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_link_asks_before_it_replaces_a_session() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let bob = Client::sign_in(&up.base, "acme", "bob").await;
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &ana.token, "light", "/").await;
    let me = "() => localStorage.getItem('lattice.token')";
    w.until(&format!("() => ({me})() === {:?}", ana.token), "ana signed in by her link").await;

    // bob's link while ana is signed in (opened as a new page load): asked
    // first; declining keeps ana.
    w.page.goto("about:blank", None).await.unwrap();
    w.page.goto(&format!("{}/#token={}", up.base, bob.token), None).await.unwrap();
    w.until("() => !!document.querySelector('dialog#lattice-confirm[open]')", "the question").await;
    let shown: String = w.eval("() => document.getElementById('lattice-confirm-text').textContent").await;
    assert_eq!(shown, "bob (acme)");
    let lead: String = w.eval("() => document.getElementById('lattice-confirm-lead').textContent").await;
    assert!(lead.contains("ana (acme)"), "{lead}");
    w.page.locator("#lattice-confirm-cancel").click(None).await.unwrap();
    w.until("() => !document.querySelector('dialog#lattice-confirm[open]')", "the question put away").await;
    assert_eq!(w.eval::<String>(me).await, ana.token, "declined: still ana");
    assert!(!w.eval::<String>("() => location.href").await.contains("token="), "the link left the address at once");
    // Asked again, and this time switched.
    w.page.goto("about:blank", None).await.unwrap();
    w.page.goto(&format!("{}/#token={}", up.base, bob.token), None).await.unwrap();
    w.until("() => !!document.querySelector('dialog#lattice-confirm[open]')", "the question again").await;
    w.page.locator("#lattice-confirm-ok").click(None).await.unwrap();
    w.until(&format!("() => ({me})() === {:?}", bob.token), "bob signed in").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn production_takes_no_sign_in_links() {
    let up = UpProcess::start_with(&[("LATTICE_PROFILE", "production")]).await;
    let token = String::from_utf8(
        std::process::Command::new(lattice_e2e::binary())
            .args(["token", "--tenant", "acme", "--user", "ana"])
            .env("LATTICE_AUTH_SECRET", lattice_e2e::SECRET)
            .env("LATTICE_PROFILE", "production")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_owned();
    let http = lattice_e2e::http();
    let config: Value = http.get(format!("{}/config.json", up.base)).send().await.unwrap().json().await.unwrap();
    assert_eq!(config["link_sign_in"], false);
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &token, "light", "/").await;
    // A claim that nothing is kept: only a window shows it (no event says "not stored").
    tokio::time::sleep(Duration::from_millis(800)).await;
    let kept: Option<String> = w.eval("() => localStorage.getItem('lattice.token')").await;
    assert_eq!(kept, None, "a link signed someone in, in production");
    assert!(!w.eval::<String>("() => location.href").await.contains("token="), "the link left the address");
}
