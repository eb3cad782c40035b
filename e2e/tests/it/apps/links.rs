//! An app that follows its own in-page links (`<a href="#section">`, as a
//! long page has) keeps its host: the page scrolls to the section, and its
//! tool calls after the click are answered.

use lattice_e2e::browser::Chrome;

use super::{Apps, On, app_log, by_hand, until_logged};

const APP: &str = r##"
document.body.insertAdjacentHTML('beforeend',
  '<p><a id="jump" href="#end">To the end</a></p>' +
  '<div style="height: 3000px">A long page.</div><h2 id="end">The end</h2><p><a id="top" href="#">To the top</a></p>');
const answer = async (what, tool, args) => {
  await new Promise(r => setTimeout(r, 300));
  log('scrolled ' + what + ' ' + window.scrollY);
  const r = await call('tools/call', {name: tool, arguments: args});
  log(what + ' ' + JSON.stringify(r.structuredContent.state || r.structuredContent.version));
};
document.getElementById('jump').addEventListener('click', () => answer('after', 'get_state', {}));
document.getElementById('top').addEventListener('click', () => answer('again', 'set_state', {patch: [{op: 'replace', path: '/count', value: 2}]}));
(async () => {
  await handshake();
  const before = await call('tools/call', {name: 'get_state', arguments: {}});
  log('before ' + JSON.stringify(before.structuredContent.state));
})();
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_that_follows_its_in_page_links_keeps_its_host() {
    let apps = Apps::start_on(On::Up).await;
    apps.app("Long page", &by_hand(APP)).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    assert_eq!(until_logged(&w, "before").await, "before {\"count\":1}");
    // A person's click, not a script's.
    let app = w.page.frame_locator(".app-frame iframe").frame_locator("iframe");
    app.locator("#jump").click(None).await.unwrap();
    assert_eq!(until_logged(&w, "after").await, "after {\"count\":1}", "the call after the click: {}", app_log(&w).await);
    let scrolled = until_logged(&w, "scrolled after").await;
    assert!(scrolled.split(' ').nth(2).and_then(|y| y.parse::<f64>().ok()).is_some_and(|y| y > 1000.0), "{scrolled}");
    app.locator("#top").click(None).await.unwrap();
    assert_eq!(until_logged(&w, "again").await, "again 2", "{}", app_log(&w).await);
    assert_eq!(until_logged(&w, "scrolled again").await, "scrolled again 0");
}
