//! Signing in the way companies do, as people see it (R6): the chat's
//! sign-in page offers the company's provider; a person signs in on the
//! provider's own pages (oidc-provider, a real process) and lands in their
//! tenant with the role their group gives; another person of another group
//! gets another role; signing out at the provider ends their session in
//! lattice within a second (back-channel logout).

use std::time::{Duration, Instant};

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::identity::WithProvider;
use serde_json::Value;

/// `LATTICE_E2E_SHOTS=DIR` keeps what the person saw, for the docs.
async fn keep(w: &Window, name: &str) {
    if let Some(dir) = std::env::var_os("LATTICE_E2E_SHOTS") {
        super::streaming::shot(w, &std::path::Path::new(&dir).join(format!("sign-in-{name}.png"))).await;
    }
}

/// Who the chat is signed in as: `/v1/me` with the page's own token.
const ME: &str = "async () => { const t = localStorage.getItem('lattice.token'); if (!t) return null; \
    const r = await fetch('/v1/me', {headers: {authorization: 'Bearer ' + t}}); return r.ok ? await r.json() : {status: r.status}; }";

/// A person signs in from the chat's sign-in page through the provider's
/// own login and consent pages, and lands back in the chat.
async fn sign_in(chrome: &Chrome, lattice: &WithProvider, login: &str, password: &str, shots: bool) -> Window {
    let w = chrome.signed_out_window(&lattice.portal, &format!("{}/", lattice.portal)).await;
    w.until("() => [...document.querySelectorAll('button, a')].some(b => b.textContent.trim() === 'Sign in with Corp')", "the provider's button")
        .await;
    if shots {
        keep(&w, "1-chat").await;
    }
    w.page.locator("text=Sign in with Corp").click(None).await.expect("the provider's button");
    let issuer = lattice.idp.issuer().to_owned();
    w.until(&format!("() => location.href.startsWith('{issuer}') && !!document.querySelector('input[name=login]')"), "the provider's login page")
        .await;
    w.page.locator("input[name=login]").fill(login, None).await.unwrap();
    w.page.locator("input[name=password]").fill(password, None).await.unwrap();
    if shots {
        keep(&w, "2-provider").await;
    }
    w.page.locator("button[type=submit]").first().click(None).await.unwrap();
    // The provider asks once to share the person's details with lattice.
    let portal = lattice.portal.clone();
    let consent_or_back = format!("() => location.href.startsWith('{portal}') || /Authorize|Continue/i.test(document.body.innerText)");
    w.until(&consent_or_back, "the consent page, or the chat").await;
    let on_provider: bool = w.eval(&format!("() => location.href.startsWith('{issuer}')")).await;
    if on_provider {
        w.page.locator("button[type=submit]").first().click(None).await.unwrap();
    }
    w.until(
        &format!("() => location.href.startsWith('{portal}') && !location.hash.includes('signin=') && !!localStorage.getItem('lattice.token')"),
        "back in the chat, signed in",
    )
    .await;
    w
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_sign_in_with_their_company_account_and_the_provider_signs_them_out() {
    let lattice = WithProvider::start(&[]).await;
    let chrome = Chrome::launch().await;

    // Ada, in the admins' group: a tenant admin of acme.
    let ada = sign_in(&chrome, &lattice, "ada", "ada-password", true).await;
    let me: Value = ada.eval(ME).await;
    assert_eq!((&me["tenant"], &me["user"], &me["role"]), (&"acme".into(), &"ada".into(), &"tenant_admin".into()), "{me}");
    ada.until("() => /Admin console/.test(document.body.textContent)", "the console offered to an admin").await;
    keep(&ada, "3-signed-in").await;

    // Bob, in staff: a member.
    let bob = sign_in(&chrome, &lattice, "bob", "bob-password", false).await;
    let me: Value = bob.eval(ME).await;
    assert_eq!((&me["tenant"], &me["user"], &me["role"]), (&"acme".into(), &"bob".into(), &"member".into()), "{me}");

    // Ada makes a workspace and thread for Bob, who opens it.
    let ada_token: String = ada.eval("() => localStorage.getItem('lattice.token')").await;
    let admin = lattice_e2e::Client { http: lattice_e2e::http(), base: lattice.portal.clone(), token: ada_token };
    let (ws, th) = super::workspace_with_thread(&admin, "Incidents").await;
    admin.ok("POST", &format!("/v1/workspaces/{ws}/members"), serde_json::json!({"user": "bob", "role": "editor"})).await;
    admin.ok("POST", &format!("/v1/threads/{th}/messages"), serde_json::json!({"text": "Before Bob signs out"})).await;
    bob.page.goto(&format!("{}/t/{th}", lattice.portal), None).await.unwrap();
    bob.until("() => /Before Bob signs out/.test(document.body.textContent)", "Bob reads the thread").await;
    let bob_token: String = bob.eval("() => localStorage.getItem('lattice.token')").await;

    // Bob signs out at the provider, in a tab of the same browser: the
    // provider tells lattice (back-channel logout), and his open thread
    // loses its access at once; his token is refused.
    let provider_tab = bob.page.context().expect("the page's browser context").new_page().await.unwrap();
    provider_tab.goto(&format!("{}/session/end?client_id=lattice", lattice.idp.issuer()), None).await.unwrap();
    provider_tab.locator("button[type=submit]").first().click(None).await.expect("the provider's sign-out");
    let signed_out = Instant::now();
    let http = lattice_e2e::http();
    loop {
        let r = http.get(format!("{}/v1/me", lattice.portal)).bearer_auth(&bob_token).send().await.unwrap();
        if r.status() == 401 {
            break;
        }
        assert!(
            signed_out.elapsed() < Duration::from_secs(1),
            "Bob's token still works {:?} after he signed out at the provider",
            signed_out.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!("Bob's token was refused {} ms after he signed out at the provider", signed_out.elapsed().as_millis());
    bob.until_within(
        "() => /You no longer have access|Sign in with Corp/.test(document.body.textContent)",
        "Bob's page says he is signed out",
        Duration::from_secs(2),
    )
    .await;
    keep(&bob, "4-signed-out").await;
    // Ada stays signed in.
    let me: Value = ada.eval(ME).await;
    assert_eq!(me["user"], "ada", "{me}");
}
