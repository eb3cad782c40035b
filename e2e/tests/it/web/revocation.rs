//! Taking access away, as people see it: an admin removes a member from
//! the console's People panel; the member's open thread says at once that
//! they no longer have access, and stops following it.

use std::time::{Duration, Instant};

use lattice_e2e::browser::Chrome;
use lattice_e2e::{Client, UpProcess};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_removed_in_the_console_loses_the_open_thread_at_once() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "t-people", "user": "ana"})).await;
    let (ws, th) = super::workspace_with_thread(&ana, "People").await;
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "bob", "role": "editor"})).await;
    ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": "Before the change"})).await;
    let bob = Client::sign_in_as(&up.base, json!({"tenant": "t-people", "user": "bob"})).await;
    let chrome = Chrome::launch().await;
    let thread = chrome.window(&up.base, &bob.token, "light", &format!("/t/{th}")).await;
    thread.until("() => /Before the change/.test(document.body.textContent)", "the thread, read").await;
    thread.until("() => !!document.querySelector('#composer-text')", "the composer for an editor").await;

    let console = chrome.window(&up.base, &ana.token, "light", "/admin").await;
    console.until("() => !!document.querySelector('table.members select[aria-label=\"Role of bob\"]')", "bob in the People panel").await;
    let role: String = console.eval("() => document.querySelector('table.members select[aria-label=\"Role of bob\"]').value").await;
    assert_eq!(role, "editor");
    console.page.locator("table.members tr:has(th:text-is('bob')) button:text-is('Remove')").click(None).await.unwrap();
    console.until("() => !!document.querySelector('#lattice-confirm[open]')", "the confirmation").await;
    let asked: String = console.eval("() => document.getElementById('lattice-confirm').textContent").await;
    assert!(asked.contains("Remove bob?"), "{asked}");
    let removed = Instant::now();
    console.page.locator("#lattice-confirm-ok").click(None).await.unwrap();
    thread
        .until_within(
            "() => /You no longer have access to this thread/.test(document.body.textContent)",
            "the thread says access is gone",
            Duration::from_secs(2),
        )
        .await;
    println!("bob's thread said access was gone {} ms after the removal was confirmed", removed.elapsed().as_millis());
    console.until("() => /bob was removed/.test(document.body.textContent)", "the console says it").await;
    console.until("() => !document.querySelector('table.members select[aria-label=\"Role of bob\"]')", "bob gone from the panel").await;
    let (status, _) = bob.get(&format!("/v1/threads/{th}")).await.unwrap();
    assert_eq!(status, 404);
    // A later message reaches the thread's readers (ana's page shows it),
    // and not his.
    let hers = chrome.window(&up.base, &ana.token, "light", &format!("/t/{th}")).await;
    hers.until("() => /Before the change/.test(document.body.textContent)", "ana's thread").await;
    ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": "After the change"})).await;
    hers.until("() => /After the change/.test(document.body.textContent)", "the later message, live").await;
    let leaked: bool = thread.eval("() => /After the change/.test(document.body.textContent)").await;
    assert!(!leaked, "a message after the removal reached the removed member's page");
    let members = ana.ok("GET", &format!("/v1/workspaces/{ws}/members"), Value::Null).await;
    assert_eq!(members, json!([{"user": "ana", "role": "admin"}]));
}
