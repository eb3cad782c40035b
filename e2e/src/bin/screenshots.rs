//! `cargo xtask screenshots`: pictures of the chat host for the docs
//! (docs/screenshots/), taken in headless Chromium from a running
//! `lattice up`: the demo's thread, its form, a dashboard, an app, the
//! console, what waits for the demo's person (`/waiting`), in light and
//! dark; the thread, the inbox and the console on a phone. With `trace`: one trace instead, the
//! answer to the demo's form on the multi-process stack, drawn from the
//! spans its services exported over OTLP (`docs/screenshots/trace.png`).

use std::path::Path;
use std::time::Duration;

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Client, UpProcess};
use playwright_rs::protocol::{BrowserContextOptions, ScreenshotOptions, ScreenshotType, Viewport};
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
    if std::env::args().nth(1).as_deref() == Some("trace") {
        return trace().await;
    }
    let up = UpProcess::start().await;
    let root = Client::sign_in_as(&up.base, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    root.ok("PUT", "/v1/integrations/deployment/ui:dashboards", json!({"state": "off", "reason": "incident 42: a dashboard shows stale figures"}))
        .await;
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
        w.until(
            "() => !!document.querySelector('.dashboard .panels') && !!document.querySelector('.app-frame iframe')",
            "the demo's dashboard and app",
        )
        .await;
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
        w.until("() => !!document.querySelector('.dashboard .panels') && !!document.querySelector('.app-frame iframe')", "the dashboard and the app")
            .await;
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
        // What waits for the demo's person: the demo's form.
        let w = chrome.window(&up.base, &demo.token, scheme, "/waiting").await;
        w.until("() => !!document.querySelector('.waiting-item')", "the inbox").await;
        shoot(&w, &format!("waiting-{scheme}.png")).await;
    }
    // On a phone (390 × 844): the thread, the inbox and the console, as the window shows them.
    let phones = [
        (format!("/t/{th}"), &demo, "thread-mobile.png", "() => !!document.querySelector('form.schema-form')"),
        ("/waiting".to_owned(), &demo, "waiting-mobile.png", "() => !!document.querySelector('.waiting-item')"),
        ("/admin".to_owned(), &root, "console-mobile.png", "() => !!document.querySelector('section.level')"),
    ];
    for (path, who, file, ready) in phones {
        let options = BrowserContextOptions::builder().color_scheme("light".to_owned()).viewport(Viewport { width: 390, height: 844 }).build();
        let page = chrome.browser.new_context_with_options(options).await.unwrap().new_page().await.unwrap();
        page.goto(&format!("{}{path}#token={}", up.base, who.token), None).await.unwrap();
        let w = Window { page, base: up.base.clone() };
        w.until(ready, file).await;
        tokio::time::sleep(Duration::from_millis(800)).await;
        let png = w.page.screenshot(ScreenshotOptions::builder().screenshot_type(ScreenshotType::Png).build()).await.expect("a phone's picture");
        let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/screenshots").join(file);
        std::fs::write(&out, png).unwrap();
        println!("wrote {}", out.display());
    }
}

/// A person answers the demo's form through the edge of the multi-process
/// stack; the trace of that request, from the spans every service sent to
/// a local OTLP receiver, drawn as a timeline (Jaeger's view of it, where
/// Jaeger cannot run).
async fn trace() {
    use futures_util::StreamExt;
    use lattice_e2e::otlp::{Received, Span, receiver};
    let received = std::sync::Arc::new(std::sync::Mutex::new(Received::default()));
    let endpoint = receiver(received.clone()).await;
    let stack = tokio::task::spawn_blocking(move || {
        lattice_e2e::stack::Stack::temporary_with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()), ("OTEL_BSP_SCHEDULE_DELAY", "100")])
    })
    .await
    .unwrap()
    .expect("the stack");
    let demo = lattice_e2e::demo::Demo::on(&stack).await;
    let mut heard = demo.answers(&stack).await;
    let chrome = Chrome::launch().await;
    let w = chrome.window(&stack.portal, &demo.demo.token, "light", &format!("/t/{}", demo.th)).await;
    lattice_e2e::demo::send_the_paused_form(&w, "2026-12-01", "Down since ten.").await;
    let message = tokio::time::timeout(Duration::from_secs(10), heard.next()).await.expect("ui.form_submitted").unwrap();
    let traceparent = message.headers.as_ref().and_then(|h| h.get("traceparent")).map(|v| v.as_str().to_owned()).expect("a traceparent");
    let trace = traceparent.split('-').nth(1).unwrap().to_owned();
    // What the services still hold is exported within their batch delay.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut spans: Vec<Span> = received.lock().unwrap().spans.iter().filter(|s| s.trace == trace).cloned().collect();
    spans.sort_by_key(|s| s.start_ns);
    // As a tree: each span under its parent, siblings in the order they began.
    fn under(parent: &str, all: &[Span], into: &mut Vec<Span>) {
        for child in all.iter().filter(|s| s.parent == parent) {
            into.push(child.clone());
            under(&child.id, all, into);
        }
    }
    let mut tree = Vec::new();
    for root in spans.iter().filter(|s| !spans.iter().any(|p| p.id == s.parent)) {
        tree.push(root.clone());
        under(&root.id, &spans, &mut tree);
    }
    let spans = tree;
    assert!(spans.iter().any(|s| s.service == "lattice-bridge"), "the publish in the trace");

    let t0 = spans.iter().map(|s| s.start_ns).min().unwrap_or(0);
    let total = spans.iter().map(|s| s.end_ns).max().unwrap_or(t0).saturating_sub(t0).max(1);
    let depth = |span: &Span| {
        let mut depth = 0;
        let mut parent = span.parent.clone();
        while let Some(p) = spans.iter().find(|s| s.id == parent) {
            depth += 1;
            parent = p.parent.clone();
        }
        depth
    };
    let colour = |service: &str| match service {
        "lattice-edge" => "#3b6fd8",
        "lattice-log" => "#1f8a5b",
        "lattice-bridge" => "#b8621b",
        _ => "#7a4fc2",
    };
    let escape = |text: &str| text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let rows: String = spans
        .iter()
        .map(|s| {
            let left = (s.start_ns - t0) as f64 / total as f64 * 100.0;
            let width = ((s.end_ns.saturating_sub(s.start_ns)) as f64 / total as f64 * 100.0).max(0.3);
            let ms = s.end_ns.saturating_sub(s.start_ns) as f64 / 1e6;
            format!(
                "<tr><td class=name style=\"padding-left:{}px\"><b style=\"color:{}\">{}</b> {}</td><td class=lane><div class=bar style=\"left:{left:.2}%;width:{width:.2}%;background:{}\"></div></td><td class=ms>{ms:.2} ms</td></tr>",
                8 + 18 * depth(s),
                colour(&s.service),
                escape(s.service.trim_start_matches("lattice-")),
                escape(&s.name),
                colour(&s.service),
            )
        })
        .collect();
    let html = format!(
        "<!doctype html><meta charset=utf-8><style>body{{font:13px system-ui,sans-serif;margin:0;color:#16181d;background:#fff}}main{{padding:16px 20px}}h1{{font-size:16px;margin:0 0 4px}}p{{margin:0 0 14px;color:#555}}table{{border-collapse:collapse;width:100%}}td{{border-top:1px solid #e4e6eb;padding:5px 6px;white-space:nowrap}}td.name{{width:36%}}td.lane{{position:relative}}td.ms{{width:80px;text-align:right;color:#555;font-variant-numeric:tabular-nums}}.bar{{position:absolute;top:7px;height:12px;border-radius:2px}}</style>\
         <main><h1>Trace {trace}</h1><p>A person sends the demo's form in the chat: the edge, the log service (the answer, the run resumed), the bridge's publish of <code>ui.form_submitted</code> to NATS. {} spans, {:.1} ms, as the services exported them over OTLP.</p><table>{rows}</table></main>",
        spans.len(),
        total as f64 / 1e6
    );
    let page = chrome.browser.new_page().await.unwrap();
    page.set_viewport_size(playwright_rs::protocol::Viewport { width: 1200, height: 600 }).await.unwrap();
    page.set_content(&html, None).await.unwrap();
    let png = page.locator("main").screenshot(None).await.expect("the trace's picture");
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/screenshots/trace.png");
    std::fs::write(&out, png).unwrap();
    println!("wrote {} ({} spans of trace {trace})", out.display(), spans.len());
    for s in &spans {
        println!(
            "  {:>9.3} ms {:>9.3} ms  {} {}",
            (s.start_ns - t0) as f64 / 1e6,
            s.end_ns.saturating_sub(s.start_ns) as f64 / 1e6,
            s.service,
            s.name
        );
    }
}
