//! axe-core (from npm, injected into the page) finds no violation on a
//! thread with a form and a dashboard, nor on the console, nor on what waits
//! for the person (`/waiting`), in light and in dark (REQUIREMENTS.md W8),
//! nor on them at a phone's size, the side list unfolded by the keyboard.

use lattice_e2e::UpProcess;
use lattice_e2e::browser::Chrome;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_axe_violation_in_light_or_dark() {
    let up = UpProcess::start().await;
    let (demo, _, th) = super::demo_thread(&up).await;
    demo.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "dashboard", "data": super::every_panel("art_none")})).await;
    // A thread whose first item is a dashboard, with headings in its text.
    let (_, alone) = super::workspace_with_thread(&demo, "Dashboards").await;
    let mut dashboard = super::every_panel("art_none");
    dashboard["panels"][4]["markdown"] = json!("# Notes\n\nThe database was restarted.\n\n## Since\n\n- all well");
    demo.ok("POST", &format!("/v1/threads/{alone}/artifacts"), json!({"kind": "dashboard", "data": dashboard})).await;
    let chrome = Chrome::launch().await;
    let mut found = Vec::new();
    for scheme in ["light", "dark"] {
        let w = chrome.window(&up.base, &demo.token, scheme, &format!("/t/{th}")).await;
        w.until("() => !!document.querySelector('form.schema-form') && !!document.querySelector('.dashboard .panels')", "the form and the dashboard")
            .await;
        // The figures open too, so their tables are checked.
        let _: bool = w.eval("() => { document.querySelectorAll('details').forEach(d => d.open = true); return true; }").await;
        found.extend(w.axe().await.into_iter().map(|v| (scheme, "thread", v)));
        // The chat in colour-blind mode.
        w.page.locator("#cvd").check(None).await.unwrap();
        found.extend(w.axe().await.into_iter().map(|v| (scheme, "thread, colour-blind", v)));

        let w = chrome.window(&up.base, &demo.token, scheme, &format!("/t/{alone}")).await;
        w.until("() => !!document.querySelector('.dashboard .panels h3')", "the dashboard alone").await;
        found.extend(w.axe().await.into_iter().map(|v| (scheme, "thread with a dashboard first", v)));

        let w = chrome.window(&up.base, &demo.token, scheme, "/admin").await;
        w.until("() => !!document.querySelector('section.level')", "the console").await;
        found.extend(w.axe().await.into_iter().map(|v| (scheme, "console", v)));

        // What waits for the demo's person: the demo's form.
        let w = chrome.window(&up.base, &demo.token, scheme, "/waiting").await;
        w.until("() => !!document.querySelector('.waiting-item')", "the inbox").await;
        found.extend(w.axe().await.into_iter().map(|v| (scheme, "waiting for you", v)));
    }
    // On a phone (390 × 844): the thread with its side list folded, then
    // unfolded by the keyboard alone, the inbox and the console.
    let w = super::small_screens::phone(&chrome, &up.base, &demo.token, &format!("/t/{th}")).await;
    w.until("() => !!document.querySelector('form.schema-form') && !!document.querySelector('.side-toggle')", "the thread on a phone").await;
    found.extend(w.axe().await.into_iter().map(|v| ("phone", "thread, side list folded", v)));
    let _: bool =
        w.eval("() => { document.querySelector('.side-toggle').focus(); return document.activeElement.classList.contains('side-toggle') }").await;
    w.press("Enter").await;
    w.until(
        "() => document.querySelector('.side-toggle').getAttribute('aria-expanded') === 'true' \
             && document.getElementById('side-nav').getBoundingClientRect().height > 0",
        "the side list unfolded by Enter",
    )
    .await;
    found.extend(w.axe().await.into_iter().map(|v| ("phone", "thread, side list open", v)));
    for (path, ready) in
        [("/waiting", "() => !!document.querySelector('.waiting-item')"), ("/admin", "() => !!document.querySelector('section.level')")]
    {
        let w = super::small_screens::phone(&chrome, &up.base, &demo.token, path).await;
        w.until(ready, path).await;
        found.extend(w.axe().await.into_iter().map(|v| ("phone", path, v)));
    }
    assert!(found.is_empty(), "axe-core violations: {found:#?}");
}
