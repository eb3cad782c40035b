//! SchemaForm (REQUIREMENTS.md W2): a FormSchema drawn with native, labelled controls.
//!
//! Values are checked here with the same compiled validator the server
//! runs; the server's verdict still counts, and its refusals are put under
//! their field the same way. A failed send announces its errors and moves
//! the focus to the first.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use lattice_core::{Code, Error};
use lattice_ui::hints::{FieldHints, UiHints, Widget, widget_of};
use lattice_ui::schema::{CompiledForm, Property, Types};
use leptos::prelude::*;
use serde_json::{Value, json};
use wasm_bindgen::JsCast;

use crate::data::request::Failure;
use crate::data::uploads;

fn is_integer(p: &Property) -> bool {
    p.types.is_some_and(|t| t.contains(Types::INTEGER) && !t.contains(Types::NUMBER))
}

/// One field as drawn.
#[derive(Clone)]
struct Field {
    name: String,
    label: String,
    help: Option<String>,
    placeholder: Option<String>,
    required: bool,
    control: Widget,
    choices: Vec<Value>,
    /// What a choice is shown as, by its value, where the form says.
    labels: std::collections::BTreeMap<String, String>,
    property: Property,
    /// What the control holds: a string as typed, a bool, or the chosen
    /// choices' indexes.
    raw: RwSignal<Value>,
    error: RwSignal<Option<String>>,
    /// A file field's upload under way: the file's name and the share sent.
    progress: RwSignal<Option<(String, f64)>>,
    /// The thread a file field's files are uploaded to.
    thread: Rc<str>,
}

impl Field {
    fn dom_id(&self, form: &str) -> String {
        format!("{form}-{}", self.name)
    }

    /// The element the focus goes to when this field is refused.
    fn focus_id(&self, form: &str) -> String {
        match self.control {
            Widget::Radio | Widget::Checkboxes => format!("{}-0", self.dom_id(form)),
            _ => self.dom_id(form),
        }
    }

    /// The value to send, or `None` when the field is left empty.
    fn value(&self) -> Result<Option<Value>, String> {
        let raw = self.raw.get_untracked();
        Ok(match self.control {
            Widget::Checkbox => Some(raw),
            Widget::Checkboxes => {
                let chosen: Vec<Value> =
                    raw.as_array().into_iter().flatten().filter_map(Value::as_u64).filter_map(|i| self.choices.get(i as usize).cloned()).collect();
                (!chosen.is_empty() || self.required).then(|| Value::Array(chosen))
            }
            Widget::Select | Widget::Radio => raw.as_u64().and_then(|i| self.choices.get(i as usize).cloned()),
            Widget::File => {
                if self.progress.get_untracked().is_some() {
                    return Err("wait until the upload is done".into());
                }
                // Raw holds the uploaded files' references; the form takes their ids.
                let ids: Vec<Value> = raw.as_array().into_iter().flatten().filter_map(|r| r.get("id").cloned()).collect();
                match self.property.file.as_ref().is_some_and(|f| f.many) {
                    true => (!ids.is_empty()).then_some(Value::Array(ids)),
                    false => ids.into_iter().next(),
                }
            }
            Widget::Number => {
                let integer = is_integer(&self.property);
                let s = raw.as_str().unwrap_or_default().trim().to_owned();
                if s.is_empty() {
                    None
                } else if integer {
                    Some(json!(s.parse::<i64>().map_err(|_| "must be a whole number".to_owned())?))
                } else {
                    let n = crate::data::text::number_in(&s).ok_or("must be a number")?;
                    Some(serde_json::Number::from_f64(n).map(Value::Number).ok_or("must be a finite number")?)
                }
            }
            Widget::Datetime => {
                let s = raw.as_str().unwrap_or_default();
                if s.is_empty() {
                    None
                } else {
                    // The control gives local time; the form wants RFC 3339.
                    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_str(s));
                    if date.get_time().is_nan() {
                        return Err("must be a date and a time".into());
                    }
                    Some(Value::String(date.to_iso_string().into()))
                }
            }
            _ => {
                let s = raw.as_str().unwrap_or_default();
                (!s.is_empty()).then(|| Value::String(s.to_owned()))
            }
        })
    }
}

fn initial(p: &Property, control: Widget, choices: &[Value]) -> Value {
    let default = p.default.as_ref().or(p.constant.as_ref());
    match control {
        Widget::Checkbox => Value::Bool(default.and_then(Value::as_bool).unwrap_or(false)),
        Widget::Checkboxes => Value::Array(
            default.and_then(Value::as_array).into_iter().flatten().filter_map(|d| choices.iter().position(|c| c == d)).map(|i| json!(i)).collect(),
        ),
        Widget::Select | Widget::Radio => default.and_then(|d| choices.iter().position(|c| c == d)).map_or(Value::Null, |i| json!(i)),
        Widget::File => json!([]),
        _ => match default {
            Some(Value::String(s)) => Value::String(s.clone()),
            Some(Value::Number(n)) => Value::String(n.to_string()),
            _ => Value::String(String::new()),
        },
    }
}

/// Fields in the order shown, grouped: the fields of no section first,
/// then each section's.
fn layout(form: &CompiledForm, hints: &UiHints) -> Vec<(Option<String>, Vec<String>)> {
    let mut ordered: Vec<String> = hints.order.iter().filter(|n| form.property(n).is_some()).cloned().collect();
    for p in &form.properties {
        if !ordered.contains(&p.name) {
            ordered.push(p.name.clone());
        }
    }
    let position = |n: &String| ordered.iter().position(|o| o == n).unwrap_or(usize::MAX);
    let in_section = |n: &String| hints.sections.iter().any(|s| s.properties.contains(n));
    let mut groups = vec![(None, ordered.iter().filter(|n| !in_section(n)).cloned().collect::<Vec<_>>())];
    for s in &hints.sections {
        let mut names: Vec<String> = s.properties.iter().filter(|n| form.property(n).is_some()).cloned().collect();
        names.sort_by_key(position);
        groups.push((Some(s.title.clone()), names));
    }
    groups.retain(|(_, names)| !names.is_empty());
    groups
}

/// The field a server or client error path names: `values.severity`,
/// `answer.tags.2` and `severity` all name `severity`.
fn field_of<'a>(path: &'a str, fields: &[Field]) -> Option<&'a str> {
    let rest = path.strip_prefix("values.").or_else(|| path.strip_prefix("answer.")).unwrap_or(path);
    let name = rest.split('.').next()?;
    fields.iter().any(|f| f.name == name).then_some(name)
}

/// Sends a form's checked values; a refusal is shown under its field.
pub type Sender = Rc<dyn Fn(Value) -> Pin<Box<dyn Future<Output = Result<(), Failure>>>>>;

/// A form as the thread asks for it drawn.
pub struct FormProps {
    /// A prefix for element ids, unique in the page.
    pub id: String,
    /// The id of the heading that names the form.
    pub labelled_by: String,
    pub schema: Value,
    pub hints: UiHints,
    pub on_send: Sender,
    /// Asked as the form is drawn: whether it takes the focus (a paused
    /// ask_form, the first time it is drawn).
    pub take_focus: Option<Rc<dyn Fn() -> bool>>,
    /// Clear the fields after a send (a form that takes many).
    pub reset_after_send: bool,
    /// The thread the form is in: where its file fields upload.
    pub thread: String,
}

pub fn schema_form(props: FormProps) -> AnyView {
    let FormProps { id, labelled_by, schema, hints, on_send, take_focus, reset_after_send, thread } = props;
    let thread: Rc<str> = thread.into();
    let compiled = match lattice_ui::compile(&schema) {
        Ok(c) => c,
        Err(e) => return view! { <p class="refusal" role="alert">"This form can't be shown: " {e.to_string()}</p> }.into_any(),
    };
    let description = compiled.description.clone();
    let groups = layout(&compiled, &hints);
    let field_hints = |name: &str| hints.fields.get(name).cloned().unwrap_or_else(FieldHints::default);
    let mut fields: Vec<Field> = Vec::new();
    for (_, names) in &groups {
        for name in names {
            let p = compiled.property(name).expect("laid out from the form").clone();
            let h = field_hints(name);
            let control = widget_of(&p, h.widget);
            let choices = p.item_choices.clone().or_else(|| p.choices.clone()).unwrap_or_default();
            fields.push(Field {
                name: name.clone(),
                label: p.title.clone().unwrap_or_else(|| name.clone()),
                help: h.help.or_else(|| p.description.clone()),
                placeholder: h.placeholder,
                labels: h.labels,
                required: p.required,
                control,
                raw: RwSignal::new(initial(&p, control, &choices)),
                error: RwSignal::new(None),
                progress: RwSignal::new(None),
                thread: thread.clone(),
                choices,
                property: p,
            });
        }
    }
    let submit_label = hints.submit_label.clone().unwrap_or_else(|| "Send".into());
    let summary = RwSignal::new(String::new());
    // The refusal's stable code, shown beside its words.
    let refused_code = RwSignal::new(None::<&'static str>);
    let status = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let form_id = id.clone();

    let show_errors = {
        let fields = fields.clone();
        let form_id = form_id.clone();
        move |errors: Vec<(String, String)>, general: Vec<String>| {
            for f in &fields {
                f.error.set(errors.iter().find(|(n, _)| *n == f.name).map(|(_, m)| m.clone()));
            }
            let refused: Vec<&Field> = fields.iter().filter(|f| f.error.get_untracked().is_some()).collect();
            let mut words = general;
            if !refused.is_empty() {
                let names: Vec<&str> = refused.iter().map(|f| f.label.as_str()).collect();
                words.push(format!(
                    "{} {} to be fixed: {}.",
                    refused.len(),
                    if refused.len() == 1 { "field needs" } else { "fields need" },
                    names.join(", ")
                ));
                focus(&refused[0].focus_id(&form_id));
            }
            summary.set(words.join(" "));
        }
    };

    let submit = {
        let fields = fields.clone();
        let show_errors = show_errors.clone();
        move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            if busy.get_untracked() {
                return;
            }
            status.set(String::new());
            let mut values = serde_json::Map::new();
            let mut errors = Vec::new();
            for f in &fields {
                match f.value() {
                    Ok(Some(v)) => {
                        values.insert(f.name.clone(), v);
                    }
                    Ok(None) => {}
                    Err(message) => errors.push((f.name.clone(), message)),
                }
            }
            let values = Value::Object(values);
            if errors.is_empty()
                && let Err(e) = compiled.validate(&values)
            {
                errors = refusals(&e, &fields).0;
            }
            if !errors.is_empty() {
                show_errors(errors, vec![]);
                return;
            }
            show_errors(vec![], vec![]);
            refused_code.set(None);
            busy.set(true);
            let send = on_send.clone();
            let fields = fields.clone();
            let show_errors = show_errors.clone();
            leptos::task::spawn_local(async move {
                match send(values).await {
                    Ok(()) => {
                        status.set("Sent.".into());
                        if reset_after_send {
                            for f in &fields {
                                f.raw.set(initial(&f.property, f.control, &f.choices));
                            }
                        }
                    }
                    Err(failure) => {
                        refused_code.set(failure.error().map(|e| e.code().as_str()));
                        let (errors, general) = match failure.error() {
                            Some(e) => refusals(e, &fields),
                            None => (vec![], vec![failure.message()]),
                        };
                        show_errors(errors, general);
                    }
                }
                busy.set(false);
            });
        }
    };

    if take_focus.is_some_and(|take| take()) {
        // Once the form is in the page: right after the task that drew it
        // (the chunk's view is mounted there), else at the next frame.
        if let Some(id) = fields.first().map(|f| f.focus_id(&form_id)) {
            queue_microtask(move || {
                if !focus(&id) {
                    request_animation_frame(move || {
                        focus(&id);
                    });
                }
            });
        }
    }
    let groups_view = groups
        .into_iter()
        .map(|(title, names)| {
            let items = names.iter().filter_map(|n| fields.iter().find(|f| f.name == *n).cloned()).map(|f| field_view(f, &form_id)).collect_view();
            match title {
                Some(t) => view! { <fieldset class="section"><legend>{t}</legend>{items}</fieldset> }.into_any(),
                None => items.into_any(),
            }
        })
        .collect_view();
    view! {
        <form class="schema-form" novalidate=true on:submit=submit aria-labelledby=labelled_by id=form_id.clone()>
            {description.map(|d| view! { <p class="form-description">{d}</p> })}
            {groups_view}
            <div class="form-errors" role="alert">
                {move || summary.get()}
                {move || refused_code.get().map(|code| view! { " " <code class="error-code">{code}</code> })}
            </div>
            <div class="form-actions">
                <button type="submit" class="primary" aria-disabled=move || busy.get().to_string()>{submit_label}</button>
                <span class="form-status" role="status">{move || status.get()}</span>
            </div>
        </form>
    }
    .into_any()
}

/// A refusal's messages: per field where the path names one, the rest for
/// the whole form.
fn refusals(e: &Error, fields: &[Field]) -> (Vec<(String, String)>, Vec<String>) {
    let mut per_field = Vec::new();
    let mut general = Vec::new();
    match e {
        Error::ValidationFailed { errors, .. } => {
            for fe in errors {
                match field_of(&fe.path, fields) {
                    Some(name) if !per_field.iter().any(|(n, _): &(String, String)| n == name) => {
                        per_field.push((name.to_owned(), crate::data::text::capitalize(&fe.message)));
                    }
                    Some(_) => {}
                    None => general.push(fe.to_string()),
                }
            }
        }
        // Branched on by code, never by the English.
        Error::InvalidState { code: Code::AlreadyAnswered, answered_by: Some(who), .. } => general.push(format!("Already answered by {who}.")),
        Error::InvalidState { code: Code::FormClosed, .. } => general.push("This form is closed: it takes no more answers.".into()),
        Error::Conflict { code: Code::FormChanged | Code::VersionConflict, reason, .. } => general.push(format!("{reason}.")),
        other => general.push(other.to_string()),
    }
    (per_field, general)
}

/// Moves the focus to the element `id`; `false` if it is not in the page.
pub fn focus(id: &str) -> bool {
    match web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id(id)).map(|el| el.dyn_into::<web_sys::HtmlElement>()) {
        Some(Ok(el)) => el.focus().is_ok(),
        _ => false,
    }
}

fn field_view(f: Field, form: &str) -> AnyView {
    let id = f.dom_id(form);
    let help_id = format!("{id}-help");
    let error_id = format!("{id}-error");
    let described = match &f.help {
        Some(_) => format!("{help_id} {error_id}"),
        None => error_id.clone(),
    };
    let error = f.error;
    let invalid = move || error.get().is_some().then_some("true");
    let required_words = f.required.then(|| view! { <span class="required">" (required)"</span> });
    let help = f.help.clone().map(|h| view! { <p class="help" id=help_id.clone()>{h}</p> });
    let error_view = view! { <p class="field-error" id=error_id.clone()>{move || error.get()}</p> };
    let raw = f.raw;
    let text_value = move || raw.get().as_str().unwrap_or_default().to_owned();
    let set_text = move |ev: leptos::ev::Event| raw.set(Value::String(event_target_value(&ev)));
    let placeholder = f.placeholder.clone();
    let required = f.required.then_some("true");
    match f.control {
        Widget::Radio | Widget::Checkboxes => {
            let multiple = f.control == Widget::Checkboxes;
            let options = f
                .choices
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let option_id = format!("{id}-{i}");
                    let label = choice_label(c, &f.labels);
                    let checked = move || {
                        let v = raw.get();
                        if multiple { v.as_array().is_some_and(|a| a.contains(&json!(i))) } else { v.as_u64() == Some(i as u64) }
                    };
                    let change = move |ev: leptos::ev::Event| {
                        let on = event_target_checked(&ev);
                        raw.update(|v| {
                            if multiple {
                                let mut chosen: Vec<Value> = v.as_array().cloned().unwrap_or_default();
                                chosen.retain(|x| *x != json!(i));
                                if on {
                                    chosen.push(json!(i));
                                }
                                *v = Value::Array(chosen);
                            } else if on {
                                *v = json!(i);
                            }
                        });
                    };
                    let kind = if multiple { "checkbox" } else { "radio" };
                    let label_for = option_id.clone();
                    // A checkbox says it is refused itself; a radio group says so for its radios.
                    let each_invalid = move || (multiple && error.get().is_some()).then_some("true");
                    view! {
                        <label class="choice" for=label_for>
                            <input type=kind id=option_id name=id.clone() aria-invalid=each_invalid prop:checked=checked on:change=change/>
                            {label}
                        </label>
                    }
                })
                .collect_view();
            view! {
                <fieldset class="field group" role=(!multiple).then_some("radiogroup") aria-describedby=described
                    aria-invalid=move || if multiple { None } else { invalid() } aria-required=if multiple { None } else { required }>
                    <legend>{f.label.clone()}{required_words}</legend>
                    {help}
                    <div class="choices">{options}</div>
                    {error_view}
                </fieldset>
            }
            .into_any()
        }
        Widget::Checkbox => view! {
            <div class="field checkbox">
                <input type="checkbox" id=id.clone() aria-describedby=described aria-invalid=invalid
                    prop:checked=move || raw.get().as_bool().unwrap_or(false)
                    on:change=move |ev| raw.set(Value::Bool(event_target_checked(&ev)))/>
                <label for=id>{f.label.clone()}{required_words}</label>
                {help}
                {error_view}
            </div>
        }
        .into_any(),
        Widget::Select => {
            let options = f
                .choices
                .iter()
                .enumerate()
                .map(|(i, c)| view! { <option value=i.to_string() selected=move || raw.get().as_u64() == Some(i as u64)>{choice_label(c, &f.labels)}</option> })
                .collect_view();
            view! {
                <div class="field">
                    <label for=id.clone()>{f.label.clone()}{required_words}</label>
                    {help}
                    <select id=id aria-describedby=described aria-invalid=invalid aria-required=required
                        on:change=move |ev| {
                            let v = event_target_value(&ev);
                            raw.set(v.parse::<u64>().map_or(Value::Null, |i| json!(i)));
                        }>
                        <option value="" selected=move || raw.get().is_null()>"Choose…"</option>
                        {options}
                    </select>
                    {error_view}
                </div>
            }
            .into_any()
        }
        Widget::File => file_view(&f, id, described, required_words, help, error_view),
        Widget::Textarea => view! {
            <div class="field">
                <label for=id.clone()>{f.label.clone()}{required_words}</label>
                {help}
                <textarea id=id aria-describedby=described aria-invalid=invalid aria-required=required
                    placeholder=placeholder rows="4" maxlength=f.property.max_length.map(|m| m.to_string())
                    prop:value=text_value on:input=set_text></textarea>
                {error_view}
            </div>
        }
        .into_any(),
        control => {
            let (kind, step) = match control {
                Widget::Number => ("number", Some(step_of(&f.property, is_integer(&f.property)))),
                Widget::Date => ("date", None),
                Widget::Time => ("time", Some("1".to_owned())),
                Widget::Datetime => ("datetime-local", None),
                Widget::Email => ("email", None),
                Widget::Url => ("url", None),
                _ => ("text", None),
            };
            let (min, max) = match control {
                Widget::Number => (
                    f.property.minimum.or(f.property.exclusive_minimum).map(crate::data::text::number),
                    f.property.maximum.or(f.property.exclusive_maximum).map(crate::data::text::number),
                ),
                _ => (None, None),
            };
            view! {
                <div class="field">
                    <label for=id.clone()>{f.label.clone()}{required_words}</label>
                    {help}
                    <input type=kind id=id aria-describedby=described aria-invalid=invalid aria-required=required
                        placeholder=placeholder step=step min=min max=max
                        inputmode=matches!(control, Widget::Number).then_some("decimal")
                        prop:value=text_value on:input=set_text/>
                    {error_view}
                </div>
            }
            .into_any()
        }
    }
}

/// A file field: a native file input; each file chosen is uploaded at
/// once with a progress bar, checked against the field's rule as the
/// server typed it, and listed with its thumbnail (made by the server) and
/// a download link (on the apps origin).
fn file_view(
    f: &Field,
    id: String,
    described: String,
    required_words: Option<impl IntoView + 'static>,
    help: Option<impl IntoView + 'static>,
    error_view: impl IntoView + 'static,
) -> AnyView {
    let rule = f.property.file.clone().unwrap_or_default();
    let many = rule.many;
    let accept = (!rule.accept.is_empty()).then(|| rule.accept.join(","));
    let (raw, error, progress, thread) = (f.raw, f.error, f.progress, f.thread.clone());
    let invalid = move || error.get().is_some().then_some("true");
    let change = move |ev: leptos::ev::Event| {
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
        let Some(list) = input.files() else { return };
        let chosen: Vec<web_sys::File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
        // The same file may be chosen again after it is removed.
        input.set_value("");
        let (rule, thread) = (rule.clone(), thread.clone());
        leptos::task::spawn_local(async move {
            for file in chosen {
                let name = file.name();
                let size = file.size() as u64;
                if let Some(max) = rule.max_size.filter(|max| size > *max) {
                    error.set(Some(format!("{name} is {}: the limit is {}.", uploads::size(size), uploads::size(max))));
                    continue;
                }
                progress.set(Some((name.clone(), 0.0)));
                let told = name.clone();
                let sent = uploads::upload(&thread, &file, Rc::new(move |share| progress.set(Some((told.clone(), share))))).await;
                progress.set(None);
                match sent {
                    Ok(reference) => match rule.admits(&reference.media_type, reference.size) {
                        Ok(()) => {
                            error.set(None);
                            let reference = serde_json::to_value(reference).expect("a reference serializes");
                            raw.update(|v| match v.as_array_mut() {
                                Some(list) if many => list.push(reference),
                                _ => *v = json!([reference]),
                            });
                        }
                        Err((_, why)) => error.set(Some(format!("{name}: {why}."))),
                    },
                    Err(failure) => error.set(Some(format!("{name}: {}", failure.message()))),
                }
            }
        });
    };
    let list = move || {
        raw.get()
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| serde_json::from_value::<lattice_core::FileRef>(r.clone()).ok())
            .map(|r| attached_file(r, raw))
            .collect_view()
    };
    let bar = move || {
        progress.get().map(|(name, share)| {
            let percent = format!("{}%", (share * 100.0).round());
            view! {
                <div class="upload-progress">
                    <progress max="1" value=share.to_string() aria-label=format!("Uploading {name}")></progress>
                    <span class="muted">{percent}</span>
                </div>
            }
        })
    };
    view! {
        <div class="field file">
            <label for=id.clone()>{f.label.clone()}{required_words}</label>
            {help}
            <input type="file" id=id multiple=many accept=accept aria-describedby=described aria-invalid=invalid
                aria-required=f.required.then_some("true") on:change=change/>
            {bar}
            <ul class="attached-files">{list}</ul>
            {error_view}
        </div>
    }
    .into_any()
}

/// One uploaded file in a file field: its thumbnail when it has one, its
/// name, type and size, a download link and a way to take it out.
fn attached_file(file: lattice_core::FileRef, raw: RwSignal<Value>) -> impl IntoView {
    let thumbnail = RwSignal::new(None::<String>);
    let link = RwSignal::new(None::<String>);
    let id = file.id.clone();
    let previewable = lattice_core::file::previewable(&file.media_type);
    on_cleanup(move || {
        if let Some(url) = thumbnail.get_untracked() {
            let _ = web_sys::Url::revoke_object_url(&url);
        }
    });
    leptos::task::spawn_local(async move {
        if previewable && let Ok(url) = uploads::thumbnail(&id).await {
            thumbnail.set(Some(url));
        }
        if let Ok(url) = uploads::download_link(&id).await {
            link.set(Some(url));
        }
    });
    let name = file.name.clone();
    let remove = {
        let id = file.id.clone();
        move |_| raw.update(|v| v.as_array_mut().into_iter().for_each(|list| list.retain(|r| r.get("id").and_then(Value::as_str) != Some(&id))))
    };
    let alt = format!("Preview of {name}");
    view! {
        <li class="attached-file" data-file=file.id.clone()>
            {move || thumbnail.get().map(|src| view! { <img class="thumbnail" src=src alt=alt.clone()/> })}
            <span class="file-name">{name.clone()}</span>
            <span class="muted">{format!(" {}, {}", file.media_type, uploads::size(file.size))}</span>
            {move || link.get().map(|href| view! { <a class="download" href=href download="" rel="noopener noreferrer">"Download"</a> })}
            <button type="button" class="link" on:click=remove aria-label=format!("Remove {name}")>"Remove"</button>
        </li>
    }
}

fn step_of(p: &Property, integer: bool) -> String {
    match p.multiple_of {
        Some(m) => crate::data::text::number(m),
        None if integer => "1".into(),
        None => "any".into(),
    }
}

/// A choice as shown: its label where the form gives one, else itself.
fn choice_label(c: &Value, labels: &std::collections::BTreeMap<String, String>) -> String {
    match c {
        Value::String(s) => labels.get(s).cloned().unwrap_or_else(|| s.clone()),
        other => other.to_string(),
    }
}
