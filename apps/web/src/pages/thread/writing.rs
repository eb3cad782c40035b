//! What the agent is writing now, drawn as it arrives.

use lattice_ui::tool_names::{ASK_FORM, CREATE_FORM, SHOW_DASHBOARD, UPDATE_DASHBOARD};
use leptos::prelude::*;
use serde_json::{Value, json};

use crate::components::chunks::LazyDashboard;
use crate::data::thread_fold::Thread;

/// What the agent is writing now: its text as it comes, and the form or
/// dashboard it is putting together. The text is one live region kept busy
/// while it grows, so a screen reader reads the reply once, whole, rather
/// than every few characters.
#[component]
pub(super) fn Writing(state: RwSignal<Thread>) -> impl IntoView {
    let runs = Memo::new(move |_| state.with(|t| t.writing.iter().map(|(run, w)| (run.clone(), w.clone())).collect::<Vec<_>>()));
    move || {
        runs.get()
            .into_iter()
            .map(|(run, w)| {
                let tools = w.tools.iter().map(|(id, name, args)| being_written(id, name, args)).collect_view();
                let text = (!w.text.is_empty()).then(|| {
                    view! {
                        <article class="message agent writing" data-run=run.clone() aria-live="polite" aria-busy=if w.done { "false" } else { "true" }>
                            <p class="meta"><strong>"agent"</strong>" is writing…"</p>
                            <p class="text">{w.text.clone()}</p>
                        </article>
                    }
                });
                view! { <div class="writing-run">{text}{tools}</div> }
            })
            .collect_view()
    }
}

/// A tool call while its arguments arrive: the form's title and fields, or
/// the dashboard's panels that are whole so far. Nothing is validated yet.
fn being_written(id: &str, name: &str, args: &Value) -> AnyView {
    let title = args.get("title").and_then(Value::as_str).unwrap_or_default().to_owned();
    match name {
        ASK_FORM | CREATE_FORM => {
            let fields: Vec<String> = args
                .pointer("/schema/properties")
                .and_then(Value::as_object)
                .map(|p| p.iter().map(|(k, v)| v.get("title").and_then(Value::as_str).unwrap_or(k).to_owned()).collect())
                .unwrap_or_default();
            view! {
                <section class="request form-request writing" aria-busy="true" data-tool-call=id.to_owned()>
                    <h2>{title}</h2>
                    <p class="muted">"The agent is writing this form…"</p>
                    <ul class="fields-so-far">{fields.into_iter().map(|f| view! { <li>{f}</li> }).collect_view()}</ul>
                </section>
            }
            .into_any()
        }
        SHOW_DASHBOARD | UPDATE_DASHBOARD => {
            let panels = args.get("panels").cloned().unwrap_or_else(|| json!([]));
            let data = json!({"title": title, "as_of": "", "panels": panels});
            view! {
                <div class="writing" aria-busy="true" data-tool-call=id.to_owned()>
                    <LazyDashboard id=format!("writing-{id}") data writing=true on_action=move |_: String| {}/>
                </div>
            }
            .into_any()
        }
        _ => view! {
            <p class="run writing" aria-busy="true" data-tool-call=id.to_owned()>{format!("The agent is preparing {name}: {title}")}</p>
        }
        .into_any(),
    }
}
