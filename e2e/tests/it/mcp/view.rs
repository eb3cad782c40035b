//! lattice's generated form view in another MCP Apps host (REQUIREMENTS.md M3, M4): a
//! page with the official MCP client and ext-apps' `AppBridge`
//! (`e2e/mcp/host.mjs`, bundled here with esbuild), on its own origin, calls
//! ask_form on lattice's `/mcp` and shows the view in a sandboxed frame; a
//! person fills it in; the submission lands as the MCP caller's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use lattice_agent::tools::CREATE_APP;
use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Client, UpProcess};
use lattice_ui::asks::ASK_FORM;
use serde_json::{Value, json};

/// The host page's script: host.mjs and its npm imports in one file.
fn bundle_host() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    let modules = root.join("apps/web/node_modules");
    let esbuild = modules.join(".bin/esbuild");
    assert!(esbuild.exists(), "esbuild and ext-apps are in apps/web/node_modules: `cargo xtask test` installs them (npm ci)");
    // A file of each call's own: the suites bundle at the same time, and
    // one writing where another reads hands that one half a script.
    static BUNDLES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = BUNDLES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!("lattice-mcp-host-{}-{n}.js", std::process::id()));
    let status = std::process::Command::new(esbuild)
        .arg(root.join("e2e/mcp/host.mjs"))
        .args(["--bundle", "--format=iife", "--platform=browser", "--log-level=warning"])
        .arg(format!("--outfile={}", out.display()))
        .env("NODE_PATH", &modules)
        .status()
        .expect("running esbuild");
    assert!(status.success(), "esbuild could not bundle e2e/mcp/host.mjs");
    out
}

/// Serves the host page and its script on a loopback port of its own.
async fn serve_host(script: PathBuf) -> String {
    let js = std::fs::read_to_string(script).unwrap();
    let page = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>An MCP Apps host</title></head>\
                <body><h1>Host</h1><script src=\"/host.js\"></script></body></html>";
    let app = axum::Router::new()
        .route("/", axum::routing::get(move || async move { axum::response::Html(page) }))
        .route("/host.js", axum::routing::get(move || async move { ([("content-type", "text/javascript")], js) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    origin
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_form_view_in_an_app_bridge_host_sends_as_the_caller() {
    let script = tokio::task::spawn_blocking(bundle_host).await.unwrap();
    let host = serve_host(script).await;
    let up = UpProcess::start_with(&[("LATTICE_MCP_ALLOWED_ORIGINS", host.as_str())]).await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Incidents"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Outage"})).await["id"].as_str().unwrap().to_owned();

    let chrome = Chrome::launch().await;
    // A person two hours ahead of UTC: a date and time they pick is theirs.
    let options = playwright_rs::protocol::BrowserContextOptions::builder().timezone_id("Africa/Cairo".into()).build();
    let context = chrome.browser.new_context_with_options(options).await.unwrap();
    if std::env::var_os("LATTICE_E2E_CONSOLE").is_some() {
        context
            .on_console(|m| async move {
                eprintln!("[console] {}", m.text());
                Ok(())
            })
            .await
            .unwrap();
    }
    let page = context.new_page().await.unwrap();
    page.goto(&format!("{host}/"), None).await.unwrap();
    let w = Window { page, base: host.clone() };
    let args = json!({"title": "Report the outage", "thread": th, "schema": {"type": "object",
        "properties": {"severity": {"title": "Severity", "enum": ["low", "high"]}, "note": {"title": "Note", "type": "string", "maxLength": 200},
            "region": {"title": "Region", "enum": ["eu", "us", "ap", "sa", "af"]},
            "since": {"title": "Since", "type": "string", "format": "date-time"}},
        "required": ["severity"]}});
    let call = json!({"mcp": format!("{}/mcp", up.base), "token": ana.token, "tool": ASK_FORM, "args": args});
    let shown: Value = w.eval(&format!("async () => await window.showTool({call})")).await;
    assert_eq!(shown["status"], "pending", "{shown}");
    let form_id = shown["receipt"]["id"].as_str().unwrap().to_owned();

    let events: Value = w.eval("() => window.hostEvents").await;
    let resource = &events[0]["resource"];
    assert_eq!(resource["uri"], "ui://lattice/views/form");
    assert_eq!(resource["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(resource["csp"], json!({"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []}));
    assert!(events.as_array().unwrap().iter().any(|e| e == "initialized"), "the view completed ui/initialize: {events}");

    // The person answers in the view: a refusal first (nothing chosen), then the answer.
    let view = w.page.frame_locator("iframe");
    let send = view.get_by_text("Send", true);
    let status = view.locator("#status");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while send.is_disabled().await.unwrap() {
        assert!(std::time::Instant::now() < deadline, "the view never enabled Send");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    send.click(None).await.unwrap();
    let refused = wait_text(&status, |t| t.contains("severity")).await;
    assert!(refused.contains("Is required") || refused.contains("required"), "{refused}");
    assert_eq!(view.locator("#status").get_attribute("role").await.unwrap().as_deref(), Some("alert"));
    // Drawn as lattice resolved them, as the chat draws them: five choices
    // as radios, a short text as one line.
    assert_eq!(view.locator("input[type=radio][name=region]").count().await.unwrap(), 5);
    assert_eq!(view.locator("input#f-note").count().await.unwrap(), 1);
    view.get_by_label("high", true).check(None).await.unwrap();
    view.get_by_label("Note", false).fill("The API is down <b>since</b> 10:00", None).await.unwrap();
    view.locator("input#f-since").fill("2026-11-30T10:00", None).await.unwrap();
    send.click(None).await.unwrap();
    let sent = wait_text(&status, |t| t.starts_with("Sent.")).await;
    assert!(sent.contains("sub_"), "{sent}");

    // The submission is ana's, through the same command as in lattice's chat.
    let subs = ana.ok("GET", &format!("/v1/threads/{th}/artifacts?kind=submission"), Value::Null).await;
    let sub = subs.as_array().unwrap().iter().find(|s| s["data"]["form_id"] == form_id.as_str()).expect("a submission to the form");
    assert_eq!(sub["author"], "ana");
    // 10:00 in Cairo (UTC+2) is 08:00 UTC: local time, as the chat reads it.
    assert_eq!(sub["data"]["values"], json!({"severity": "high", "note": "The API is down <b>since</b> 10:00", "since": "2026-11-30T08:00:00.000Z"}));

    // The view drew every value as text, never as markup, and told the host its size.
    let markup: bool = w.eval("() => document.querySelector('iframe').contentDocument === null").await;
    assert!(markup, "the view's frame is cross-origin to the host (sandboxed)");
    let bold = view.locator("b").count().await.unwrap();
    assert_eq!(bold, 0);
    let events: Value = w.eval("() => window.hostEvents").await;
    assert!(events.as_array().unwrap().iter().any(|e| e["size"]["height"].as_f64().is_some_and(|h| h > 100.0)), "size-changed: {events}");
    let _: Value = w.eval("async () => { await window.teardown(); return true; }").await;
    let events: Value = w.eval("() => window.hostEvents").await;
    assert!(events.as_array().unwrap().iter().any(|e| e == "torn down"), "{events}");
}

async fn wait_text(locator: &playwright_rs::protocol::Locator, ok: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let text = locator.text_content().await.unwrap().unwrap_or_default();
        if ok(&text) {
            return text;
        }
        assert!(std::time::Instant::now() < deadline, "waited for the view's status; it says {text:?}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// An app by hand (raw JSON-RPC): initializes, then logs what the host tells it.
const APP: &str = r#"<!doctype html><html><head><meta charset="utf-8"></head><body><h1>Counter by hand</h1><pre id="log"></pre><script>
const log = (s) => { document.getElementById('log').textContent += s + '\n'; };
addEventListener('message', (e) => {
  const m = e.data; if (!m || m.jsonrpc !== '2.0') return;
  if (m.id === 1 && m.result) { log('initialized ' + m.result.protocolVersion); parent.postMessage({jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {}}, '*'); }
  if (m.method === 'ui/notifications/tool-input') log('input ' + m.params.arguments.title);
  if (m.method === 'ui/notifications/tool-result') log('result ' + m.params.structuredContent.receipt.id);
});
parent.postMessage({jsonrpc: '2.0', id: 1, method: 'ui/initialize', params: {protocolVersion: '2026-01-26', appInfo: {name: 'by-hand', version: '1'}, appCapabilities: {}}}, '*');
</script></body></html>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_shows_create_apps_declared_view_and_it_becomes_the_app() {
    let script = tokio::task::spawn_blocking(bundle_host).await.unwrap();
    let host = serve_host(script).await;
    let up = UpProcess::start_with(&[("LATTICE_MCP_ALLOWED_ORIGINS", host.as_str()), ("LATTICE_SEED_DEMO", "false")]).await;
    let root = Client::sign_in_as(&up.base, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    root.ok("PUT", "/v1/integrations/deployment/ui:mini-apps", json!({"state": "on", "reason": "the view suite"})).await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Apps"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Apps"})).await["id"].as_str().unwrap().to_owned();
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "bot", "role": "editor"})).await;
    let bot = Client::sign_in_as(&up.base, json!({"tenant": "acme", "user": "bot", "agent": true})).await;

    let chrome = Chrome::launch().await;
    let context = chrome.browser.new_context().await.unwrap();
    if std::env::var_os("LATTICE_E2E_CONSOLE").is_some() {
        context
            .on_console(|m| async move {
                eprintln!("[console] {}", m.text());
                Ok(())
            })
            .await
            .unwrap();
    }
    let page = context.new_page().await.unwrap();
    page.goto(&format!("{host}/"), None).await.unwrap();
    let w = Window { page, base: host.clone() };
    let args = json!({"title": "Counter", "summary": "Counts.", "html": APP, "thread": th});
    let call = json!({"mcp": format!("{}/mcp", up.base), "token": bot.token, "tool": CREATE_APP, "args": args});
    let shown: Value = w
        .eval(&format!(
            "async () => await Promise.race([window.showTool({call}), new Promise((_, no) => setTimeout(() => no(new Error('showTool: ' + JSON.stringify(window.hostEvents))), 20000))])"
        ))
        .await;
    let app = shown["receipt"]["id"].as_str().expect("the app's receipt").to_owned();
    let events: Value = w.eval("() => window.hostEvents").await;
    assert_eq!(events[0]["resource"]["uri"], "ui://lattice/views/app", "the view create_app declares");

    // The view became the app, which initialized with the host and was handed its input and result.
    let log = w.page.frame_locator("iframe").locator("#log");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let text = loop {
        let text = log.text_content().await.ok().flatten().unwrap_or_default();
        if text.contains("result ") || std::time::Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(text.lines().collect::<Vec<_>>(), ["initialized 2026-01-26", "input Counter", format!("result {app}").as_str()], "{text}");
    let heading = w.page.frame_locator("iframe").locator("h1").text_content().await.unwrap().unwrap_or_default();
    assert_eq!(heading, "Counter by hand");
}
