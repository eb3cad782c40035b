//! The browser the suites and the web benchmark drive: what it runs
//! beside the page under test is only what the page asks for.

use std::path::Path;

use lattice_e2e::browser::{Chrome, DISABLED_FEATURES};

/// Full Chromium builds browser UI for each window (the address bar's
/// popups, WebUI pages in a renderer of their own); a browser context is a
/// window, and the harness opens one for every navigation it times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_holds_the_page_and_no_browser_ui() {
    let chrome = Chrome::launch().await;
    let context = chrome.browser.new_context().await.expect("a browser context");
    let page = context.new_page().await.expect("a page");
    page.goto("data:text/html,<p>hi</p>", None).await.expect("a page to show");
    let session = chrome.browser.new_browser_cdp_session().await.expect("the browser's DevTools session");
    let targets = session.send("Target.getTargets", None).await.expect("the browser's targets");
    // Playwright's driver hands back the DevTools reply as its `result`.
    let targets: Vec<(String, String)> = targets["result"]["targetInfos"]
        .as_array()
        .unwrap_or_else(|| panic!("the targets in {targets}"))
        .iter()
        .map(|t| (t["type"].as_str().unwrap_or("").to_owned(), t["url"].as_str().unwrap_or("").to_owned()))
        .collect();
    assert!(targets.iter().any(|(kind, url)| kind == "page" && url.starts_with("data:")), "the page is a target: {targets:?}");
    let ui: Vec<_> = targets.iter().filter(|(kind, _)| kind != "page").collect();
    assert!(ui.is_empty(), "nothing but the page runs in the window: {ui:?}");
}

/// Chromium keeps the last `--disable-features`, ours: it must still turn
/// off every feature Playwright's own turns off.
#[test]
fn the_disabled_features_keep_playwrights_own() {
    let bundle = Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/playwright-core/lib/coreBundle.js");
    let bundle = std::fs::read_to_string(&bundle).expect("Playwright's driver: `cargo xtask test` installs it (npm ci in e2e/)");
    let start = bundle.find("disabledFeatures = [").expect("playwright-core lists the features it turns off in `disabledFeatures`");
    let list = &bundle[start..];
    let list = &list[..list.find("].filter(Boolean)").expect("the end of `disabledFeatures`")];
    let theirs: Vec<&str> =
        list.lines().map(str::trim).filter(|line| line.starts_with('"')).map(|line| line.trim_end_matches(',').trim_matches('"')).collect();
    assert!(theirs.len() >= 10, "Playwright's list read whole: {theirs:?}");
    let missing: Vec<_> = theirs.iter().filter(|f| !DISABLED_FEATURES.contains(f)).collect();
    assert!(missing.is_empty(), "features Playwright turns off that `browser::DISABLED_FEATURES` would turn back on: {missing:?}");
}
