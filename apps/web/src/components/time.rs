//! A time on screen ([`crate::data::times`]): short and relative where it
//! is recent, the exact date and time on hover and to a screen reader, the
//! machine-readable value in `datetime`.

use leptos::prelude::*;

use crate::data::times;

pub fn time(at: String) -> impl IntoView {
    let exact = times::shown(&at).exact;
    let (datetime, title) = (at.clone(), exact.clone());
    view! {
        <time datetime=datetime title=title>
            <span aria-hidden="true">{move || times::shown(&at).short}</span>
            <span class="sr">{exact}</span>
        </time>
    }
}
