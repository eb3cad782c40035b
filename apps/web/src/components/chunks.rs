//! What a first load does without: forms (their controls and the
//! validator), dashboards (charts and markdown) and the mini-app host are
//! each compiled into a WebAssembly chunk of their own (`cargo xtask web`
//! splits the module at the `#[lazy]` functions here, and at the pages'
//! own, such as the admin console's in `pages/console/page.rs`), fetched
//! the first time a page shows one.

use lattice_ui::dashboard::{Dashboard, Panel};
use leptos::prelude::*;
use serde_json::Value;
use wasm_bindgen::JsCast;

use super::app_frame::AppFrame;
use super::dashboard::DashboardView;
use super::frame_host::AppInfo;
use super::schema_form::{FormProps, schema_form};

/// The dashboard is read from its JSON here, so its types' decoding is
/// the chunk's, not the first load's. One being written (`writing`) shows
/// the panels whole so far and leaves out the one still arriving.
#[lazy]
fn dashboard_view(id: String, data: Value, writing: bool, on_action: Callback<String>) -> AnyView {
    let data = if writing { whole_panels(data) } else { data };
    match lattice_core::json::from_value::<Dashboard>(data) {
        Ok(dashboard) => view! { <DashboardView id dashboard on_action/> }.into_any(),
        Err(_) if writing => ().into_any(),
        Err(_) => view! { <p class="refusal">"This dashboard can't be shown."</p> }.into_any(),
    }
}

fn whole_panels(mut data: Value) -> Value {
    if let Some(panels) = data.get_mut("panels").and_then(Value::as_array_mut) {
        panels.retain(|p| lattice_core::json::from_value::<Panel>(p.clone()).is_ok());
    }
    data
}

/// The props travel in a `SendWrapper`: the chunk's future is held by a
/// `Suspense`, which asks for `Send`, and the page has one thread.
#[lazy]
fn form_view(props: send_wrapper::SendWrapper<FormProps>) -> AnyView {
    schema_form(props.take())
}

#[lazy]
fn app_frame_view(
    title: Signal<String>,
    summary: Signal<String>,
    run: Option<String>,
    version: Signal<u64>,
    stopped: Signal<Option<String>>,
    app: Signal<Option<AppInfo>>,
) -> AnyView {
    view! { <AppFrame title summary run version stopped app/> }.into_any()
}

/// The view a chunk holds, with a line saying what comes while it loads
/// (`what`: "the console"). The chunk is fetched once the page has painted:
/// compiling it must not hold back the form beside it from taking the focus.
pub fn when_loaded(what: &'static str, view: impl Future<Output = AnyView> + Send + 'static) -> AnyView {
    loaded(what, Box::pin(view))
}

/// [`when_loaded`] of the chunk's future boxed: the code that waits for
/// it is the first load's once, not once for each chunk.
fn loaded(what: &'static str, view: std::pin::Pin<Box<dyn Future<Output = AnyView> + Send>>) -> AnyView {
    let painted = send_wrapper::SendWrapper::new(after_paint());
    view! {
        <Suspense fallback=move || view! { <p class="loading">{format!("Loading {what}…")}</p> }>
            {Suspend::new(async move {
                painted.await;
                forms_first().await;
                view.await
            })}
        </Suspense>
    }
    .into_any()
}

/// Resolves after the next frame is painted (and its callbacks have run).
async fn after_paint() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let Some(window) = web_sys::window() else {
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
            return;
        };
        let later = wasm_bindgen::closure::Closure::once_into_js(move || {
            if let Some(window) = web_sys::window() {
                let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
            }
        });
        let _ = window.request_animation_frame(later.unchecked_ref());
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// [`DashboardView`] of a dashboard's JSON, loaded with the first
/// dashboard shown.
#[component]
pub fn LazyDashboard(id: String, data: Value, writing: bool, #[prop(into)] on_action: Callback<String>) -> impl IntoView {
    when_loaded("the dashboard", dashboard_view(id, data, writing, on_action))
}

/// Starts fetching the forms' chunk (once; later calls do nothing), for
/// a thread that may draw a form. The load is polled once here, so its
/// fetch is sent before the caller goes on (reading the rest of the
/// events, drawing them); a task sees it to the end.
pub fn fetch_forms() {
    if FORMS_ASKED.replace(true) {
        return;
    }
    let mut load = Box::pin(__preload_form_view());
    let mut now = std::task::Context::from_waker(std::task::Waker::noop());
    if load.as_mut().poll(&mut now).is_pending() {
        leptos::task::spawn_local(load);
    }
}

thread_local!(static FORMS_ASKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });

/// Once the forms' chunk is in, if it was asked for: the other chunks
/// wait for it, so a paused form is not slowed by a dashboard's compiling.
async fn forms_first() {
    if FORMS_ASKED.get() {
        __preload_form_view().await;
    }
}

/// A form, drawn once the forms' chunk is loaded (with the first form
/// shown). At once, not after the paint: here the chunk is what takes the
/// focus.
pub fn lazy_form(props: FormProps) -> impl IntoView {
    let form = form_view(send_wrapper::SendWrapper::new(props));
    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading the form…"</p> }>
            {Suspend::new(form)}
        </Suspense>
    }
}

/// [`AppFrame`], loaded with the first mini app shown.
#[component]
pub fn LazyAppFrame(
    title: Signal<String>,
    summary: Signal<String>,
    run: Option<String>,
    version: Signal<u64>,
    #[prop(into)] stopped: Signal<Option<String>>,
    #[prop(into)] app: Signal<Option<AppInfo>>,
) -> impl IntoView {
    when_loaded("the app", app_frame_view(title, summary, run, version, stopped, app))
}
