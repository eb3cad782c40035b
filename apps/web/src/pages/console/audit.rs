//! The audit trail of switch changes.

use lattice_wire::AuditEntry;
use leptos::prelude::*;

use crate::components::time::time;

/// Audit rows a page shows.
const PAGE: usize = 20;

/// The trail, newest first: filtered by level, key, actor and time, a page
/// at a time, and exported (what the filters keep) as CSV.
#[component]
pub(super) fn AuditTrail(rows: RwSignal<Vec<AuditEntry>>) -> impl IntoView {
    let level = RwSignal::new(String::new());
    let key = RwSignal::new(String::new());
    let actor = RwSignal::new(String::new());
    let since = RwSignal::new(String::new());
    let until = RwSignal::new(String::new());
    let page = RwSignal::new(0usize);
    let kept = Memo::new(move |_| {
        let (level, key, actor, since, until) = (level.get(), key.get(), actor.get().to_lowercase(), since.get(), until.get());
        rows.get()
            .into_iter()
            .filter(|r| level.is_empty() || r.change.level == level)
            .filter(|r| key.is_empty() || r.change.key == key)
            .filter(|r| actor.is_empty() || r.actor.to_lowercase().contains(&actor))
            // Times are RFC 3339 in UTC: a date compares as their prefix.
            .filter(|r| since.is_empty() || r.at.as_str() >= since.as_str())
            .filter(|r| until.is_empty() || r.at.get(..until.len()).is_some_and(|d| d <= until.as_str()))
            .collect::<Vec<_>>()
    });
    // A filter that changes starts again at the first page.
    Effect::new(move |_| {
        let _ = (level.get(), key.get(), actor.get(), since.get(), until.get());
        page.set(0);
    });
    let levels = Memo::new(move |_| {
        let mut seen: Vec<String> = rows.get().into_iter().map(|r| r.change.level).collect();
        seen.sort();
        seen.dedup();
        seen
    });
    let csv = move || {
        let text = lattice_wire::audit_csv(&kept.get());
        format!("data:text/csv;charset=utf-8,{}", String::from(js_sys::encode_uri_component(&text)))
    };
    let text_filter = |id: &'static str, label: &'static str, hint: &'static str, value: RwSignal<String>| {
        view! {
            <label for=id>{label}</label>
            <input id=id placeholder=hint prop:value=move || value.get() on:input=move |ev| value.set(event_target_value(&ev))/>
        }
    };
    view! {
        <section aria-labelledby="audit-title">
            <h2 id="audit-title">"Audit trail"</h2>
            <form class="audit-filters" aria-label="Filter the audit trail" on:submit=|ev: leptos::ev::SubmitEvent| ev.prevent_default()>
                <label for="audit-level">"Level"</label>
                <select id="audit-level" on:change=move |ev| level.set(event_target_value(&ev))>
                    <option value="">"any"</option>
                    {move || levels.get().into_iter().map(|l| view! { <option value=l.clone()>{l.clone()}</option> }).collect_view()}
                </select>
                <label for="audit-key">"Key"</label>
                <select id="audit-key" on:change=move |ev| key.set(event_target_value(&ev))>
                    <option value="">"any"</option>
                    {lattice_core::SwitchKey::ALL.into_iter().map(|k| k.as_str()).map(|k| view! { <option value=k>{k}</option> }).collect_view()}
                </select>
                {text_filter("audit-actor", "Who", "a name, or part of one", actor)}
                {text_filter("audit-since", "From", "2026-11-30", since)}
                {text_filter("audit-until", "To", "2026-11-30", until)}
                <a id="audit-csv" href=csv download="lattice-switch-audit.csv">"Download as CSV"</a>
            </form>
            {move || {
                let all = kept.get();
                if all.is_empty() {
                    let said = if rows.get().is_empty() { "No switch has been changed yet." } else { "No change matches these filters." };
                    return view! { <p id="audit-empty">{said}</p> }.into_any();
                }
                let first = page.get() * PAGE;
                let shown: Vec<AuditEntry> = all.iter().skip(first).take(PAGE).cloned().collect();
                let status = format!("Changes {} to {} of {}", first + 1, first + shown.len(), all.len());
                let (at_first, at_last) = (first == 0, first + PAGE >= all.len());
                view! {
                    <div class="table-scroll" role="region" aria-label="The audit trail's changes" tabindex="0">
                    <table class="audit">
                        <thead><tr><th scope="col">"When"</th><th scope="col">"Who"</th><th scope="col">"Level"</th><th scope="col">"Key"</th><th scope="col">"Change"</th><th scope="col">"Reason"</th></tr></thead>
                        <tbody>
                            {shown.into_iter().map(|r| view! {
                                <tr><td>{time(r.at)}</td><td>{r.actor}</td><td>{r.change.level}</td><td>{r.change.key}</td><td>{format!("{} → {}", r.change.old, r.change.new)}</td><td>{r.change.reason}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    </div>
                    <nav class="pager" aria-label="Audit pages">
                        <button type="button" id="audit-previous" disabled=at_first on:click=move |_| page.update(|p| *p = p.saturating_sub(1))>"Previous"</button>
                        <span id="audit-status" role="status">{status}</span>
                        <button type="button" id="audit-next" disabled=at_last on:click=move |_| page.update(|p| *p += 1)>"Next"</button>
                    </nav>
                }.into_any()
            }}
        </section>
    }
}
