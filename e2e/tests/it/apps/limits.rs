//! The bridge's limits at their edges (REQUIREMENTS.md W5, U2): 60 calls a minute per
//! frame, then silence; a message of 64 KB passes and one byte more is
//! dropped; 256 KB of HTML and 64 KB of state pass, one byte more is refused.

use lattice_e2e::browser::Chrome;
use serde_json::json;

use super::{Apps, by_hand, until_logged};

const RATE: &str = r#"
(async () => {
  await handshake();
  let answered = 1;
  const pings = [];
  for (let i = 0; i < 60; i++) pings.push(call('ping', {}).then(() => { answered += 1; }));
  await Promise.race([Promise.all(pings), new Promise(r => setTimeout(r, 3000))]);
  log('answered ' + answered + ' of 61');
})();
"#;

const SIZE: &str = r#"
const sized = (bytes) => {
  const m = {jsonrpc: '2.0', id: 0, method: 'ping', params: {pad: ''}};
  m.id = next++;
  const base = JSON.stringify(m).length;
  m.params.pad = 'x'.repeat(bytes - base);
  if (JSON.stringify(m).length !== bytes) throw new Error('sizing');
  return m;
};
const send = (m) => new Promise((resolve) => {
  pending.set(m.id, {resolve: () => resolve('answered'), reject: () => resolve('answered')});
  parent.postMessage(m, '*');
  setTimeout(() => resolve('silent'), 2000);
});
(async () => {
  await handshake();
  log('64 KB ' + await send(sized(65536)));
  log('64 KB + 1 ' + await send(sized(65537)));
})();
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_calls_a_minute_then_silence() {
    let apps = Apps::start().await;
    apps.app("Chatty", &by_hand(RATE)).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    assert_eq!(until_logged(&w, "answered").await, "answered 60 of 61");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_of_64_kb_passes_and_one_byte_more_is_dropped() {
    let apps = Apps::start().await;
    apps.app("Large", &by_hand(SIZE)).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    assert_eq!(until_logged(&w, "64 KB answered").await, "64 KB answered");
    assert_eq!(until_logged(&w, "64 KB + 1").await, "64 KB + 1 silent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_of_256_kb_and_state_of_64_kb_at_the_edge() {
    let apps = Apps::start().await;
    let app = |html: String, state: serde_json::Value| json!({"kind": "app", "data": {"title": "Big", "summary": "At the limit.", "html": html, "state": state}});
    let page = |bytes: usize| {
        let shell = "<!doctype html><p></p>";
        format!("<!doctype html><p>{}</p>", "a".repeat(bytes - shell.len()))
    };
    // State of exactly 64 KB: {"s":"aaa…"}.
    let state = |bytes: usize| json!({"s": "a".repeat(bytes - 8)});
    assert_eq!(serde_json::to_vec(&state(65536)).unwrap().len(), 65536);
    let path = format!("/v1/threads/{}/artifacts", apps.th);
    let (status, body) = apps.bot.post(&path, app(page(256 * 1024), json!({}))).await.unwrap();
    assert_eq!(status, 200, "256 KB of HTML: {body}");
    let (status, body) = apps.bot.post(&path, app(page(256 * 1024 + 1), json!({}))).await.unwrap();
    assert_eq!((status, body["error"]["type"].as_str()), (413, Some("TooLarge")), "{body}");
    let (status, body) = apps.bot.post(&path, app(page(1000), state(65536))).await.unwrap();
    assert_eq!(status, 200, "64 KB of state: {body}");
    let (status, body) = apps.bot.post(&path, app(page(1000), state(65537))).await.unwrap();
    assert_eq!((status, body["error"]["type"].as_str()), (413, Some("TooLarge")), "{body}");
}
