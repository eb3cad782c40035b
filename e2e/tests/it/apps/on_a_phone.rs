//! An app on a phone (390 × 844, issue 44): its frame fits the width and
//! answers a tap, and pinned it sits along the bottom of the window with
//! the composer above it, nothing scrolling sideways.

use lattice_e2e::browser::Window;
use serde_json::{Value, json};

use super::{Apps, by_hand, until_logged};
use crate::web::small_screens::phone;

const TAPPED: &str = r#"
const b = document.createElement('button'); b.id = 'tap'; b.textContent = 'Tap'; b.onclick = () => log('tapped');
document.body.append(b);
handshake().then(() => log('ready'));
"#;

/// `selector`'s box in the window: left, top, right, bottom.
async fn rect(w: &Window, selector: &str) -> (f64, f64, f64, f64) {
    w.eval(&format!(
        "() => {{ const r = document.querySelector({}).getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom] }}",
        json!(selector)
    ))
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_fits_a_phone_answers_a_tap_and_pinned_sits_at_the_bottom_under_the_composer() {
    let apps = Apps::start().await;
    for n in 0..12 {
        apps.ana.ok("POST", &format!("/v1/threads/{}/messages", apps.th), json!({"text": format!("Message {n}")})).await;
    }
    apps.app("Tapper", &by_hand(TAPPED)).await;
    let chrome = lattice_e2e::browser::Chrome::launch().await;
    let w = phone(&chrome, &apps.base, &apps.ana.token, &format!("/t/{}", apps.th)).await;
    until_logged(&w, "ready").await;
    let (width, height): (f64, f64) = w.eval("() => [document.documentElement.clientWidth, innerHeight]").await;

    // The frame is as wide as the window lets it be, and a tap in it is heard.
    let frame = rect(&w, ".app-frame iframe").await;
    assert!(frame.0 >= 0.0 && frame.2 <= width + 0.5, "the app's frame within the width {width}: {frame:?}");
    assert!(frame.2 - frame.0 >= width * 0.75, "the app's frame uses the width: {frame:?}");
    w.page.frame_locator(".app-frame iframe").frame_locator("iframe").locator("#tap").click(None).await.expect("a tap on the app's button");
    until_logged(&w, "tapped").await;

    // Pinned: along the bottom, the composer above it, both in view.
    let _: Value = w.eval("() => { document.querySelector('li.item:has(.app-frame) .pin').click(); return null }").await;
    w.until("() => document.querySelector('li.item:has(.app-frame)').classList.contains('pinned')", "the app pinned").await;
    let pinned = rect(&w, "li.item.pinned").await;
    assert!(pinned.0 >= 0.0 && pinned.2 <= width + 0.5, "the pinned app within the width: {pinned:?}");
    assert!(pinned.3 <= height + 0.5 && pinned.1 >= height / 2.0, "the pinned app along the bottom of {height}: {pinned:?}");
    let composer = rect(&w, "#composer-text").await;
    assert!(composer.1 >= 0.0 && composer.3 <= pinned.1 + 0.5, "the composer in view, above the pinned app: {composer:?} over {pinned:?}");
    println!("at {width} × {height}: the frame {frame:?}, pinned {pinned:?}, the composer {composer:?}");
    let over: f64 = w.eval("() => document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth").await;
    assert!(over <= 0.0, "the thread scrolls sideways by {over} px with an app pinned");
    // The pinned app still answers.
    w.page.frame_locator(".app-frame iframe").frame_locator("iframe").locator("#tap").click(None).await.expect("a tap on the pinned app");
    for _ in 0..400 {
        if super::app_log(&w).await.lines().filter(|l| *l == "tapped").count() == 2 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("the pinned app never heard the second tap: {}", super::app_log(&w).await);
}
