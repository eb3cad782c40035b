//! The switches, pushed: a flip shows on the thread's page without a
//! reload. The stream beats while it lives; three beats unheard and what it
//! governs is off (a stream that broke unseen fails closed), on again once
//! it speaks.

use leptos::prelude::*;
use serde_json::Value;

use super::ctx::Switches;
use crate::data::{api_client, stream};

/// Follows the switches of the thread's workspace into `switches`, and
/// sets `deaf` while the stream has been quiet for three of its beats.
pub(super) fn follow(workspace: Memo<Option<String>>, switches: RwSignal<Option<Switches>>, deaf: RwSignal<bool>) {
    let switch_stream = StoredValue::new(None::<stream::Handle>);
    let heard = StoredValue::new((js_sys::Date::now(), 5000.0_f64));
    Effect::new(move |_| {
        if let Some(h) = switch_stream.get_value() {
            h.close();
        }
        let Some(ws) = workspace.get() else { return };
        let url = format!("/v1/integrations/effective/stream?workspace={}", api_client::query(&ws));
        let handle = stream::follow(
            move |_| url.clone(),
            move |event| {
                let every = match event.name.as_str() {
                    "heartbeat" => lattice_core::json::from_str::<Value>(&event.data).ok().and_then(|v| v.get("every_ms").and_then(Value::as_f64)),
                    _ => {
                        if let Ok(map) = lattice_core::json::from_str::<Switches>(&event.data) {
                            switches.set(Some(map));
                        }
                        None
                    }
                };
                heard.update_value(|(at, beat)| {
                    *at = js_sys::Date::now();
                    *beat = every.unwrap_or(*beat);
                });
                if deaf.get_untracked() {
                    deaf.set(false);
                }
            },
            move |_| switches.set(None),
        );
        switch_stream.set_value(Some(handle));
    });
    let watching = StoredValue::new(true);
    leptos::task::spawn_local(async move {
        while watching.try_get_value().unwrap_or(false) {
            stream::sleep(250).await;
            let Some((at, beat)) = heard.try_get_value() else { break };
            let quiet = js_sys::Date::now() - at > 3.0 * beat;
            if deaf.try_get_untracked() != Some(quiet) {
                deaf.try_set(quiet);
            }
        }
    });
    on_cleanup(move || {
        watching.try_set_value(false);
        if let Some(h) = switch_stream.try_get_value().flatten() {
            h.close();
        }
    });
}
