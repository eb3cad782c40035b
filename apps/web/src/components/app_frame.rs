//! AppFrame (REQUIREMENTS.md W4, I3): a mini app running in the two frames, with the
//! host's label, run, version and summary outside them and a border the app
//! can't cover. Off (the switch) or archived, the label and summary stay and
//! nothing runs; before the frame goes, the app is told
//! (`ui/resource-teardown`).

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::frame_host::{self, AppInfo};

#[component]
pub fn AppFrame(
    title: Signal<String>,
    summary: Signal<String>,
    run: Option<String>,
    version: Signal<u64>,
    /// Why it is not running, if it isn't (switch off, archived).
    #[prop(into)]
    stopped: Signal<Option<String>>,
    /// What the frame runs; `None` until known.
    #[prop(into)]
    app: Signal<Option<AppInfo>>,
) -> impl IntoView {
    // Whether the frame is on the page: it goes only after the app was told.
    let shown = RwSignal::new(false);
    let sandbox = RwSignal::new(None::<String>);
    let frame_id = StoredValue::new(None::<u64>);
    leptos::task::spawn_local(async move {
        sandbox.set(crate::data::page_config::config().await.map(|c| c.sandbox));
    });
    // A memo, so a new version of the app's state doesn't reload the frame.
    let run_it = Memo::new(move |_| stopped.get().is_none() && app.with(Option::is_some));
    Effect::new(move |_| {
        if run_it.get() {
            if !shown.get_untracked() {
                shown.set(true);
            }
        } else if shown.get_untracked() {
            match frame_id.get_value() {
                Some(id) => frame_host::teardown(id, 300, move || shown.set(false)),
                None => shown.set(false),
            }
        }
    });
    // New versions and state reach the running frame without a reload.
    Effect::new(move |_| {
        if let (Some(id), Some(a)) = (frame_id.get_value(), app.get()) {
            frame_host::update(id, a);
        }
    });
    let theme = expect_context::<crate::data::theme::Theme>();
    Effect::new(move |_| {
        let _ = (theme.scheme.get(), theme.cvd.get());
        frame_host::context_changed();
    });
    let iframe_ref = NodeRef::<leptos::html::Iframe>::new();
    Effect::new(move |_| {
        if let Some(el) = iframe_ref.get() {
            let el: web_sys::HtmlIFrameElement = el.unchecked_into();
            if frame_id.get_value().is_none()
                && let Some(info) = app.get_untracked()
            {
                frame_id.set_value(Some(frame_host::register(el, info)));
            }
        }
    });
    on_cleanup(move || {
        if let Some(id) = frame_id.try_get_value().flatten() {
            frame_host::unregister(id);
        }
    });
    let frame = move || {
        let src = sandbox.get()?;
        shown.get().then(|| {
            view! {
                <div class="app-frame">
                    <iframe node_ref=iframe_ref src=src title=move || format!("Mini app: {}", title.get())
                        sandbox="allow-scripts allow-same-origin" referrerpolicy="no-referrer"></iframe>
                </div>
            }
        })
    };
    let frame = move || {
        let view = frame();
        if view.is_none() {
            // The frame is gone: a new one registers afresh.
            if let Some(id) = frame_id.get_value() {
                frame_host::unregister(id);
                frame_id.set_value(None);
            }
        }
        view
    };
    view! {
        <section class="app-card" aria-label=move || title.get()>
            <h2>{move || title.get()}</h2>
            <p class="app-label">
                "Made by the agent. Runs sandboxed and can't reach the network. "
                <span class="app-provenance">{run.map(|r| format!("Run {r}, ")).unwrap_or_default()} "version " {move || version.get()}</span>
            </p>
            <p class="app-summary">{move || summary.get()}</p>
            <p class="app-note">{move || stopped.get()}</p>
            {frame}
        </section>
    }
}
