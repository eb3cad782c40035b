//! The host's own confirmation (REQUIREMENTS.md W6): a modal dialog outside every
//! frame, showing as text exactly what an app asks to send or open.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Document, HtmlDialogElement, HtmlElement};

fn element(doc: &Document, tag: &str, id: &str) -> HtmlElement {
    let el: HtmlElement = doc.create_element(tag).expect("an element").unchecked_into();
    if !id.is_empty() {
        el.set_id(id);
    }
    el
}

/// Shows the dialog; true when the person confirms.
pub async fn ask(title: &str, lead: &str, shown: &str, confirm_label: &str) -> bool {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return false };
    if let Some(old) = doc.get_element_by_id("lattice-confirm") {
        old.remove();
    }
    let dialog: HtmlDialogElement = element(&doc, "dialog", "lattice-confirm").unchecked_into();
    let _ = dialog.set_attribute("aria-labelledby", "lattice-confirm-title");
    let _ = dialog.set_attribute("aria-describedby", "lattice-confirm-lead");
    let heading = element(&doc, "h2", "lattice-confirm-title");
    heading.set_text_content(Some(title));
    let lead_el = element(&doc, "p", "lattice-confirm-lead");
    lead_el.set_text_content(Some(lead));
    let pre = element(&doc, "pre", "lattice-confirm-text");
    pre.set_text_content(Some(shown));
    let actions = element(&doc, "div", "");
    actions.set_class_name("form-actions");
    let cancel = element(&doc, "button", "lattice-confirm-cancel");
    cancel.set_text_content(Some("Cancel"));
    let _ = cancel.set_attribute("type", "button");
    let ok = element(&doc, "button", "lattice-confirm-ok");
    ok.set_text_content(Some(confirm_label));
    ok.set_class_name("primary");
    let _ = ok.set_attribute("type", "button");
    for child in [&heading, &lead_el, &pre] {
        let _ = dialog.append_child(child);
    }
    let _ = actions.append_child(&cancel);
    let _ = actions.append_child(&ok);
    let _ = dialog.append_child(&actions);
    if let Some(body) = doc.body() {
        let _ = body.append_child(&dialog);
    }
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let answer = |value: bool, resolve: js_sys::Function, dialog: HtmlDialogElement| {
            Closure::<dyn Fn()>::new(move || {
                dialog.close();
                let _ = resolve.call1(&wasm_bindgen::JsValue::NULL, &value.into());
            })
        };
        let yes = answer(true, resolve.clone(), dialog.clone());
        let no = answer(false, resolve.clone(), dialog.clone());
        let escape = answer(false, resolve, dialog.clone());
        ok.set_onclick(Some(yes.as_ref().unchecked_ref()));
        cancel.set_onclick(Some(no.as_ref().unchecked_ref()));
        let _ = dialog.add_event_listener_with_callback("cancel", escape.as_ref().unchecked_ref());
        yes.forget();
        no.forget();
        escape.forget();
    });
    let _ = dialog.show_modal();
    // The safer choice has the focus.
    let _ = cancel.focus();
    let confirmed = JsFuture::from(promise).await.ok().and_then(|v| v.as_bool()).unwrap_or(false);
    dialog.remove();
    confirmed
}
