//! `cargo xtask screenshots`: pictures of the chat host for the docs
//! (docs/screenshots/), taken in headless Chromium from a running
//! `lattice up`: the demo's thread, its form, a dashboard, an app, the
//! console, in light and dark.

use std::path::Path;
use std::time::Duration;

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Client, UpProcess};
use playwright_rs::protocol::{ScreenshotOptions, ScreenshotType};
use serde_json::{Value, json};

async fn shoot(w: &Window, file: &str) {
    tokio::time::sleep(Duration::from_millis(300)).await;
    let options = ScreenshotOptions::builder().screenshot_type(ScreenshotType::Png).full_page(true).build();
    let png = w.page.screenshot(options).await.expect("a screenshot");
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/screenshots").join(file);
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    std::fs::write(&out, png).unwrap();
    println!("wrote {}", out.display());
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let up = UpProcess::start().await;
    let root = Client::sign_in_as(&up.base, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    root.ok("PUT", "/v1/integrations/deployment/ui:dashboards", json!({"state": "off", "reason": "incident 42: a dashboard shows stale figures"})).await;
    root.ok("PUT", "/v1/integrations/deployment/ui:dashboards", json!({"state": "unset", "reason": "incident 42 resolved"})).await;
    let demo = Client::sign_in_as(&up.base, json!({"tenant": "demo", "user": "demo", "role": "tenant_admin"})).await;
    let ws = demo.ok("GET", "/v1/workspaces", Value::Null).await[0]["id"].as_str().unwrap().to_owned();
    let th = demo.ok("GET", &format!("/v1/workspaces/{ws}/threads"), Value::Null).await[0]["id"].as_str().unwrap().to_owned();
    // A second thread where the scripted agent shows a dashboard and makes an app.
    let other = demo.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Service health"})).await["id"].as_str().unwrap().to_owned();
    for model in ["scripted:dashboard", "scripted:app"] {
        demo.ok("POST", &format!("/v1/threads/{other}/runs"), json!({"prompt": "Show me.", "model": model})).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let chrome = Chrome::launch().await;
    for scheme in ["light", "dark"] {
        let w = chrome.window(&up.base, &demo.token, scheme, &format!("/t/{th}")).await;
        w.until("() => !!document.querySelector('form.schema-form')", "the form").await;
        // The demo's thread as a newcomer meets it: the dashboard, the app
        // running, the agent waiting on the form.
        w.until("() => !!document.querySelector('.dashboard .panels') && !!document.querySelector('.app-frame iframe')", "the demo's dashboard and app").await;
        let count = w.page.frame_locator(".app-frame iframe").frame_locator("iframe").locator("#count");
        count.wait_for(None).await.expect("the demo's app running");
        // Tall enough for the whole thread, so the frames are drawn too (a
        // full-page capture leaves them blank).
        let height: f64 = w.eval("() => document.documentElement.scrollHeight").await;
        let viewport = playwright_rs::protocol::Viewport { width: 1000, height: height as u32 + 40 };
        w.page.set_viewport_size(viewport).await.expect("a taller window");
        let _: bool = w.eval("() => { window.scrollTo(0, 0); return true; }").await;
        tokio::time::sleep(Duration::from_millis(800)).await;
        let options = ScreenshotOptions::builder().screenshot_type(ScreenshotType::Png).build();
        let png = w.page.screenshot(options).await.expect("the demo's picture");
        let out = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../docs/screenshots/demo-{scheme}.png"));
        std::fs::write(&out, png).unwrap();
        println!("wrote {}", out.display());
        let form = w.page.locator("form.schema-form");
        form.scroll_into_view_if_needed().await.unwrap();
        shoot(&w, &format!("form-{scheme}.png")).await;
        let w = chrome.window(&up.base, &demo.token, scheme, &format!("/t/{other}")).await;
        w.until("() => !!document.querySelector('.dashboard .panels') && !!document.querySelector('.app-frame iframe')", "the dashboard and the app").await;
        let count = w.page.frame_locator(".app-frame iframe").frame_locator("iframe").locator("#count");
        count.wait_for(None).await.expect("the app running");
        let _: bool = w.eval("() => { document.querySelectorAll('details.figures').forEach(d => d.open = true); return true; }").await;
        shoot(&w, &format!("dashboard-{scheme}.png")).await;
        // The app alone: a full-page capture leaves the frames blank.
        let card = w.page.locator(".app-card");
        card.scroll_into_view_if_needed().await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let png = card.screenshot(None).await.expect("the app's picture");
        let out = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../docs/screenshots/app-{scheme}.png"));
        std::fs::write(&out, png).unwrap();
        println!("wrote {}", out.display());
        // The console as a deployment admin sees it in an incident.
        let w = chrome.window(&up.base, &root.token, scheme, "/admin").await;
        w.until("() => !!document.querySelector('section.level') && !!document.getElementById('audit-status')", "the console").await;
        shoot(&w, &format!("console-{scheme}.png")).await;
    }
}
