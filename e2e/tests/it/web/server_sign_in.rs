//! Each person signs in to a connected MCP server with their own account,
//! through the page (R7, docs/MCP.md "Signing in to a server"): a real
//! authorization server (oidc-provider, npm, a process of its own) and a
//! server that takes only its tokens (`e2e/mcp/protected-server.mjs`), in
//! front of `lattice up`. A run's call pauses on "Connect notes"; Alice
//! clicks it, signs in on the provider's own pages in Chromium, comes back
//! through the callback and the connections page to her thread, and the
//! card answers by itself: the run finishes and the server saw her. Bob,
//! in another browser, is asked on his own. On her connected accounts
//! page she disconnects, and her next run asks again.

use std::path::Path;
use std::time::{Duration, Instant};

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Client, UpProcess};
use lattice_testkit::idp::{Account, Client as IdpClient, Idp, IdpSetup, Resource};
use lattice_testkit::protected::{ProtectedServer, ProtectedSetup, free_port, url_on};
use serde_json::{Value, json};

/// lattice's client secret at the provider, in a file lattice reads.
const SECRET: &str = "lattice's client secret at the notes provider";

/// The route the provider sends a person back to (the API's
/// `routes::connections::CALLBACK_PATH`; the API crate is not a
/// dependency of the suites).
const CALLBACK_PATH: &str = "/v1/connections/callback";

/// The call a run makes while its person has not connected notes: the
/// model is offered only this tool of the server until they have.
const SIGN_IN_CALL: &str = "notes__lattice_sign_in";

/// `LATTICE_E2E_SHOTS=DIR` keeps what the person saw, for the docs.
async fn keep(w: &Window, name: &str) {
    if let Some(dir) = std::env::var_os("LATTICE_E2E_SHOTS") {
        super::streaming::shot(w, &Path::new(&dir).join(format!("connect-{name}.png"))).await;
    }
}

/// The provider (lattice a confidential client of it, its callback on
/// the portal), the notes server on a port the provider knows as its
/// resource, and lattice connected to it with `sign_in`. The provider must
/// know both lattice's callback and the server's URL before it starts, so
/// both ports are taken first.
struct World {
    up: UpProcess,
    idp: Idp,
    notes: ProtectedServer,
    secret: std::path::PathBuf,
}

impl World {
    async fn start() -> Self {
        let lattice_port = free_port();
        let portal = format!("http://127.0.0.1:{lattice_port}");
        let notes_port = free_port();
        let idp = Idp::start(
            IdpSetup::new()
                .client(IdpClient::confidential("lattice", SECRET).redirect_uri(&format!("{portal}{CALLBACK_PATH}")))
                .account(Account::new("alice", "alice-password"))
                .account(Account::new("bob", "bob-password"))
                .resource(Resource::new(&url_on(notes_port)).scopes(&["notes:read", "notes:write"])),
        )
        .await;
        let notes = ProtectedServer::start_with(ProtectedSetup::new(idp.issuer()).port(notes_port)).await;
        let secret = std::env::temp_dir().join(format!("lattice-e2e-notes-secret-{lattice_port}"));
        std::fs::write(&secret, SECRET).expect("the client secret's file");
        let config = format!(
            r#"[mcp_servers.notes]
url = {url:?}
allow_internal = true
timeout_secs = 10
policy = {{ default = "allow" }}
sign_in = {{ scopes = ["notes:read"], client_id = "lattice", client_secret_file = {secret:?} }}
"#,
            url = notes.url(),
            secret = secret.display().to_string(),
        );
        // The portal's origin is where the browser is and where the
        // callback sends people back to: the address lattice listens on.
        let addr = format!("127.0.0.1:{lattice_port}");
        let up = UpProcess::start_configured(&config, &[("LATTICE_HTTP_ADDR", addr.as_str()), ("LATTICE_PORTAL_ORIGIN", portal.as_str())]).await;
        assert_eq!(up.base, portal);
        Self { up, idp, notes, secret }
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.secret);
    }
}

/// Starts a run that calls the server (the sign-in call, as a model does
/// before the person has connected) and waits until it pauses or ends.
async fn run(who: &Client, th: &str) -> (String, Value) {
    let body = json!({"prompt": format!("tool={SIGN_IN_CALL}"), "model": "scripted:call"});
    let id = who.ok("POST", &format!("/v1/threads/{th}/runs"), body).await["run_id"].as_str().expect("a run id").to_owned();
    let settled = until_run(who, &id, &["paused", "finished", "failed"]).await;
    (id, settled)
}

/// The run once its status is one of `statuses` (20 s at most).
async fn until_run(who: &Client, run: &str, statuses: &[&str]) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = who.ok("GET", &format!("/v1/runs/{run}"), Value::Null).await;
        if statuses.iter().any(|s| now["status"] == *s) {
            return now;
        }
        assert!(Instant::now() < deadline, "run {run} is still {} after 20 s, not {statuses:?}: {now}", now["status"]);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether `who` is connected to notes, as `/v1/me/connections` says.
async fn connected(who: &Client) -> bool {
    let listed = who.ok("GET", "/v1/me/connections", Value::Null).await;
    let notes = listed.as_array().and_then(|l| l.iter().find(|c| c["server"] == "notes")).unwrap_or_else(|| panic!("notes listed: {listed}"));
    notes["connected"].as_bool().expect("connected is a boolean")
}

/// The card that asks the viewer to connect notes, with its button.
const CARD: &str = "section.request.sign-in[aria-label='Connect notes']";

/// A script: whether the page shows `count` Connect cards still waiting
/// for the viewer (their "Connect notes" button shown).
fn cards_waiting(count: usize) -> String {
    format!("() => [...document.querySelectorAll(\"{CARD} button\")].filter(b => b.textContent.trim() === 'Connect notes').length === {count}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_person_connects_a_server_with_their_own_account_from_the_chat() {
    let world = World::start().await;
    let (base, issuer) = (world.up.base.clone(), world.idp.issuer().to_owned());
    let alice = Client::sign_in_as(&base, json!({"tenant": "acme", "user": "alice"})).await;
    let bob = Client::sign_in_as(&base, json!({"tenant": "acme", "user": "bob"})).await;
    let (_, th) = super::workspace_with_thread(&alice, "Notes").await;
    let (_, bobs_th) = super::workspace_with_thread(&bob, "Bob's notes").await;
    assert!(!connected(&alice).await, "nobody is connected at first");

    // Not connected: the run's call pauses, asking Alice to sign in.
    let (id, paused) = run(&alice, &th).await;
    assert_eq!(paused["status"], "paused", "{paused}");
    assert_eq!(paused["requests"][0]["tool_name"], SIGN_IN_CALL, "{paused}");

    // Her thread shows the card, with the button for her.
    let chrome = Chrome::launch().await;
    let w = chrome.window(&base, &alice.token, "light", &format!("/t/{th}")).await;
    w.until(&cards_waiting(1), "the Connect notes card, for Alice").await;
    let needs: String = w.eval(&format!("() => document.querySelector(\"{CARD}\").textContent")).await;
    assert!(needs.contains("The agent needs an account on the notes server"), "{needs}");
    keep(&w, "card").await;

    // The button takes her to the provider's own sign-in page.
    w.page.locator(format!("{CARD} button.primary")).click(None).await.expect("the Connect notes button");
    w.until(&format!("() => location.href.startsWith('{issuer}') && !!document.querySelector('input[name=login]')"), "the provider's login page")
        .await;
    w.page.locator("input[name=login]").fill("alice", None).await.unwrap();
    w.page.locator("input[name=password]").fill("alice-password", None).await.unwrap();
    w.page.locator("button[type=submit]").first().click(None).await.expect("the provider's sign-in button");

    // The provider asks once whether lattice may act for her at the
    // server; then its callback, through the connections page (which
    // finishes the sign-in with her token), brings her back to her thread.
    let consent_or_back = format!("() => location.href.startsWith('{base}/') || !!document.querySelector('input[name=prompt][value=consent]')");
    w.until(&consent_or_back, "the provider's consent page, or lattice").await;
    if w.eval::<bool>(&format!("() => location.href.startsWith('{issuer}')")).await {
        w.page.locator("button[type=submit]").first().click(None).await.expect("the provider's consent button");
    }
    w.until(&format!("() => location.pathname === '/t/{th}' && !location.hash"), "back in her thread").await;

    // Back there, the card finds notes connected and answers by itself:
    // the call goes on as her, and the run finishes.
    w.until(&format!("() => /Answered by alice/.test(document.querySelector(\"{CARD}\").textContent)"), "the card answered for her").await;
    let finished = until_run(&alice, &id, &["finished", "failed"]).await;
    assert_eq!(finished["status"], "finished", "{finished}");
    assert!(connected(&alice).await);
    w.until("() => /The agent has finished/.test(document.querySelector('.run-status').textContent)", "the run finished, on the page").await;
    let seen = world.notes.seen().await;
    assert!(seen["subjects"]["alice"]["requests"].as_u64().unwrap_or(0) > 0, "the server saw Alice's own token: {seen}");
    assert_eq!(seen["subjects"]["alice"]["scopes"], json!(["notes:read"]), "{seen}");
    assert!(seen["subjects"].get("bob").is_none(), "{seen}");

    // Bob, in his own browser, is asked on his own: Alice's sign-in is
    // hers, not the tenant's.
    let (_, his) = run(&bob, &bobs_th).await;
    assert_eq!(his["status"], "paused", "{his}");
    assert_eq!(his["requests"][0]["tool_name"], SIGN_IN_CALL, "{his}");
    assert!(!connected(&bob).await);
    let b = chrome.window(&base, &bob.token, "light", &format!("/t/{bobs_th}")).await;
    b.until(&cards_waiting(1), "Bob's own Connect notes card").await;

    // Her connected accounts: notes, connected; disconnecting says so.
    w.page.goto(&format!("{base}/settings/connections"), None).await.expect("the connected accounts page");
    let row = "li[data-server=notes]";
    w.until(&format!("() => /Connected since/.test(document.querySelector('{row}')?.textContent ?? '')"), "notes listed as connected").await;
    keep(&w, "settings").await;
    w.page.locator(format!("{row} button")).click(None).await.expect("the Disconnect button");
    w.until(
        &format!("() => {{ const r = document.querySelector('{row}'); return !!r && /Not connected/.test(r.textContent) && r.querySelector('button').textContent === 'Connect' }}"),
        "notes listed as not connected",
    )
    .await;
    let said: String = w.eval("() => document.querySelector('p.status').textContent").await;
    assert_eq!(said, "Disconnected from notes.");
    assert!(!connected(&alice).await);

    // Her next run, in the same thread, asks her again: its card waits
    // for her though the model used the same call id as the answered one.
    let (_, again) = run(&alice, &th).await;
    assert_eq!(again["status"], "paused", "{again}");
    assert_eq!(again["requests"][0]["tool_name"], SIGN_IN_CALL, "{again}");
    w.page.goto(&format!("{base}/t/{th}"), None).await.expect("her thread");
    w.until(&cards_waiting(1), "a new Connect notes card for her next run").await;
}
