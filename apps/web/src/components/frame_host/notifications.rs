//! What the host tells a running app unasked: a new version of it, an
//! update still being written, its run cancelled, and that it is about to
//! go (`ui/resource-teardown`).

use std::cell::RefCell;

use serde_json::{Value, json};

use super::frames::{AppInfo, FRAMES, app_result, send, with_frame};

/// Keeps the frame's idea of its artifact current (new versions, state).
/// A new version an agent made (`update_app`) is a tool call on this app:
/// the app is told its input and result, as for the call that made it.
pub fn update(id: u64, info: AppInfo) {
    let newer_by_agent = with_frame(id, |f| {
        let newer = info.version > f.app.version && info.updated_by_agent && f.initialized;
        f.app.version = info.version;
        f.app.state = info.state.clone();
        newer
    })
    .unwrap_or(false);
    if newer_by_agent {
        send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": {"id": info.id, "state": info.state}}}));
        send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": app_result(&info)}));
    }
}

/// What runs once a teardown is over, taken by whichever comes first: the
/// app's answer or the wait running out.
type Once = std::rc::Rc<RefCell<Option<Box<dyn FnOnce()>>>>;

/// Asks the app to wind down (`ui/resource-teardown`); `done` runs on its
/// answer, or after `wait_ms` without one.
pub fn teardown(id: u64, wait_ms: i32, done: impl FnOnce() + 'static) {
    let done: Once = std::rc::Rc::new(RefCell::new(Some(Box::new(done))));
    let initialized = with_frame(id, |f| f.initialized).unwrap_or(false);
    if initialized {
        let request_id = with_frame(id, |f| {
            let rid = json!(format!("host-{}", f.next_id));
            f.next_id += 1;
            rid
        });
        if let Some(rid) = request_id {
            let on_answer = done.clone();
            with_frame(id, |f| {
                f.teardown = Some((
                    rid.clone(),
                    Box::new(move || {
                        if let Some(d) = on_answer.borrow_mut().take() {
                            d();
                        }
                    }),
                ))
            });
            send(id, &json!({"jsonrpc": "2.0", "id": rid, "method": "ui/resource-teardown", "params": {"reason": "the app is no longer shown"}}));
        }
    }
    leptos::task::spawn_local(async move {
        crate::data::stream::sleep(if initialized { wait_ms } else { 0 }).await;
        if let Some(d) = done.borrow_mut().take() {
            d();
        }
    });
}

/// Tells the apps a run made that the run was cancelled.
pub fn run_cancelled(run: &str) {
    let ids: Vec<u64> =
        FRAMES.with(|f| f.borrow().iter().filter(|fr| fr.initialized && fr.app.run.as_deref() == Some(run)).map(|fr| fr.id).collect());
    for id in ids {
        send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-cancelled", "params": {"reason": "the run was cancelled"}}));
    }
}

/// Hands the arguments of an `update_app` still being written to the app
/// it updates.
pub fn tool_input_partial(app: &str, arguments: &Value) {
    let ids: Vec<u64> = FRAMES.with(|f| f.borrow().iter().filter(|fr| fr.initialized && fr.app.id == app).map(|fr| fr.id).collect());
    for id in ids {
        send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-input-partial", "params": {"arguments": arguments}}));
    }
}
