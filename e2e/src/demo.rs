//! The demo's thread on the multi-process stack, as the acceptance suite
//! and the docs' pictures meet it: its workspace and thread, a rule's
//! consumer of the answers to it, and a person sending its paused form.

use serde_json::{Value, json};

use crate::Client;
use crate::browser::Window;
use crate::stack::Stack;

pub struct Demo {
    /// The demo tenant's admin.
    pub demo: Client,
    pub ws: String,
    pub th: String,
}

impl Demo {
    pub async fn on(stack: &Stack) -> Self {
        let demo = Client::sign_in_as(&stack.portal, json!({"tenant": "demo", "user": "demo", "role": "tenant_admin"})).await;
        let ws = demo.ok("GET", "/v1/workspaces", Value::Null).await[0]["id"].as_str().expect("the demo workspace").to_owned();
        let th = demo.ok("GET", &format!("/v1/workspaces/{ws}/threads"), Value::Null).await[0]["id"].as_str().expect("the demo thread").to_owned();
        Self { demo, ws, th }
    }

    /// A rule's consumer of the workspace's `ui.form_submitted`: the
    /// `rules` user may read everything and publish nothing under `ui`.
    pub async fn answers(&self, stack: &Stack) -> async_nats::Subscriber {
        let rules = async_nats::ConnectOptions::with_user_and_password("rules".into(), crate::stack::NATS_USERS[1].1.into());
        let nats = rules.connect(&stack.nats_url).await.expect("NATS as the rules user");
        nats.subscribe(format!("lattice.demo.{}.ui.form_submitted", self.ws)).await.expect("a subscription")
    }
}

/// In the demo's thread open in `w`: waits for the paused form, fills it
/// (the date, severity high, the API affected, the note) and sends it.
pub async fn send_the_paused_form(w: &Window, date: &str, note: &str) {
    let prefix = "req-call_ask_form_1";
    w.until(&format!("() => !!document.getElementById('{prefix}-date')"), "the paused form").await;
    w.page.locator(format!("#{prefix}-date")).fill(date, None).await.unwrap();
    w.page.locator(format!("#{prefix}-severity-2")).check(None).await.unwrap();
    w.page.locator(format!("#{prefix}-affected-0")).check(None).await.unwrap();
    w.page.locator(format!("#{prefix}-note")).fill(note, None).await.unwrap();
    w.page.get_by_text("Send report", true).click(None).await.unwrap();
}
