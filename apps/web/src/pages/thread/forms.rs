//! A form artifact: its body as the reader may use it (closed, switched
//! off, answered, or the form itself), and the submissions it has had.

use std::rc::Rc;

use lattice_ui::form::{Form, Submissions};
use leptos::prelude::*;
use serde_json::Value;

use super::ctx::Ctx;
use super::submit::submit;
use crate::components::chunks::lazy_form;
use crate::components::schema_form::{FormProps, Sender};
use crate::data::session::Session;
use crate::data::thread_fold::ArtifactView;

/// What a form offers its reader before anything else: nothing until the
/// reader's role is known, a note for a viewer (who can send no form).
pub(super) fn unsendable(ctx: Ctx) -> Option<AnyView> {
    match ctx.answering.get() {
        None => Some(view! { <p class="muted" aria-busy="true">"…"</p> }.into_any()),
        Some(false) => Some(view! { <p class="muted">"You can read this thread; answering its forms needs the respondent role."</p> }.into_any()),
        Some(true) => None,
    }
}

pub(super) fn form_artifact(ctx: Ctx, a: ArtifactView, first_version: u64) -> AnyView {
    let Ok(form) = lattice_core::json::from_value::<Form>(a.data.clone()) else {
        return view! { <p class="refusal">"This form can't be shown."</p> }.into_any();
    };
    let forms_off = ctx.off_because(lattice_core::SwitchKey::Forms);
    let session = expect_context::<Session>();
    let heading = format!("form-{}-title", a.id);
    let form_id = a.id.clone();
    let subs_of = a.id.clone();
    let submissions = Memo::new(move |_| {
        ctx.state.with(|t| {
            t.submissions_to(&subs_of)
                .into_iter()
                .map(|s| {
                    let values = s.data.get("values").cloned().unwrap_or(Value::Null);
                    // A file answer is shown by its files' names.
                    let files: Vec<lattice_core::FileRef> =
                        s.data.get("files").and_then(|f| serde_json::from_value(f.clone()).ok()).unwrap_or_default();
                    (s.author.clone(), named(values, &files))
                })
                .collect::<Vec<_>>()
        })
    });
    // Reactive on the viewer: the page shows before `/v1/me` answers.
    let mine = Memo::new(move |_| {
        let me = session.me.with(|m| m.as_ref().map(|m| m.user.clone()));
        submissions.with(|s| me.is_some_and(|me| s.iter().any(|(who, _)| *who == me)))
    });
    let policy = form.submissions;
    let version = a.version;
    let archived = a.archived;
    let closed = form.closed;
    let closes = form.closes_at.is_some().then(|| form.clone());
    let schema = form.schema.clone();
    let hints = form.ui.clone().unwrap_or_default();
    let heading_id = heading.clone();
    let body = move || {
        if archived {
            return view! { <p class="muted">"This form is archived."</p> }.into_any();
        }
        if closed {
            return view! { <p class="muted">"This form is closed."</p> }.into_any();
        }
        if closes.as_ref().is_some_and(|f| f.closed_at(js_sys::Date::now() as i64)) {
            return view! { <p class="muted">"This form closed at its deadline."</p> }.into_any();
        }
        if let Some(why) = forms_off.get() {
            return view! { <p class="refusal">"Forms are turned off here: " {why}</p> }.into_any();
        }
        if let Some(note) = unsendable(ctx) {
            return note;
        }
        let done = match policy {
            Submissions::Once => !submissions.with(Vec::is_empty),
            Submissions::PerPerson => mine.get(),
            Submissions::Many => false,
        };
        if done {
            return view! { <p class="answered">"Already answered."</p> }.into_any();
        }
        let thread = ctx.thread.get_value();
        let form_id = form_id.clone();
        let dom_id = format!("form-{form_id}");
        let on_send: Sender = Rc::new(move |values: Value| Box::pin(submit(thread.clone(), form_id.clone(), version, policy, values)));
        lazy_form(FormProps {
            id: dom_id,
            labelled_by: heading_id.clone(),
            schema: schema.clone(),
            hints: hints.clone(),
            on_send,
            take_focus: None,
            reset_after_send: policy == Submissions::Many,
            thread: ctx.thread.get_value(),
        })
        .into_any()
    };
    let list = move || {
        let subs = submissions.get();
        (!subs.is_empty()).then(|| {
            let count = subs.len();
            view! {
                <details class="submissions" open=true>
                    <summary>{format!("Submissions ({count})")}</summary>
                    <ul>
                        {subs.into_iter().map(|(who, values)| view! {
                            <li><strong>{who}</strong>": " {describe(&values)}</li>
                        }).collect_view()}
                    </ul>
                </details>
            }
        })
    };
    let labelled = heading.clone();
    view! {
        <section class="form-artifact" aria-labelledby=labelled data-version=version>
            <h2 id=heading>{form.title.clone()}</h2>
            {(version > first_version).then(|| view! {
                <p class="changed" role="status">{format!("This form changed: this is its new version ({version}). Check your answers before you send.")}</p>
            })}
            {body}
            {list}
        </section>
    }
    .into_any()
}

/// The values with each file id the submission's references name put as
/// that file's name.
fn named(mut values: Value, files: &[lattice_core::FileRef]) -> Value {
    if files.is_empty() {
        return values;
    }
    let name = |v: &mut Value| {
        if let Some(file) = v.as_str().and_then(|id| files.iter().find(|f| f.id == id)) {
            *v = Value::String(file.name.clone());
        }
    };
    for v in values.as_object_mut().into_iter().flat_map(|m| m.values_mut()) {
        match v {
            Value::Array(items) => items.iter_mut().for_each(name),
            other => name(other),
        }
    }
    values
}

/// Values as words: `severity: high; affected: API, Database`.
fn describe(values: &Value) -> String {
    let Some(map) = values.as_object() else { return String::new() };
    map.iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                Value::Array(a) => a.iter().map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned)).collect::<Vec<_>>().join(", "),
                other => other.to_string(),
            };
            format!("{k}: {v}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}
