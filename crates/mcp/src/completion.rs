//! `completion/complete`: the ids a resource template's `{id}` takes, as
//! the caller would type them: the artifacts of their most recent thread
//! that the template reads (an app for `ui://lattice/apps/{id}`, a form for
//! `lattice://artifacts/{id}/submissions`, any for
//! `lattice://artifacts/{id}`), newest first, those beginning with what was
//! typed; and `lattice://threads/{thread}`'s `{thread}` to the threads
//! the caller can read in its tenant, newest first. lattice has no prompts:
//! a prompt's arguments, and any other template or argument, complete to
//! nothing.

use lattice_log::{Authenticated, LogService};
use rmcp::model::{CompletionInfo, Reference};

use crate::scope::Scope;

/// The kind of artifact a template's `{id}` names (`Some(None)`: any);
/// `None` for a template that is not lattice's.
fn kind_of(template: &str) -> Option<Option<&'static str>> {
    match template {
        t if t == format!("{}{{id}}", crate::views::APP_VIEWS) => Some(Some("app")),
        "lattice://artifacts/{id}/submissions" => Some(Some("form")),
        "lattice://artifacts/{id}" => Some(None),
        _ => None,
    }
}

pub async fn complete(log: &LogService, who: &Authenticated, reference: &Reference, argument: &str, typed: &str) -> CompletionInfo {
    let nothing = CompletionInfo::with_all_values(Vec::new()).unwrap_or_default();
    let Reference::Resource(template) = reference else { return nothing };
    if template.uri == "lattice://threads/{thread}" && argument == "thread" {
        let limit = CompletionInfo::MAX_VALUES as i64 + 1;
        let Ok(found) = log.readable_threads(who, typed, limit).await else { return nothing };
        let has_more = found.len() > CompletionInfo::MAX_VALUES;
        let values: Vec<String> = found.into_iter().take(CompletionInfo::MAX_VALUES).map(|(thread, _)| thread.to_string()).collect();
        return CompletionInfo::with_pagination(values, None, has_more).unwrap_or_default();
    }
    let Some(kind) = kind_of(&template.uri).filter(|_| argument == "id") else { return nothing };
    let Ok(Scope { here: Some((thread, _)) }) = Scope::find(log, who, None).await else { return nothing };
    let Ok(mut found) = log.artifacts(who, &thread, kind, None).await else { return nothing };
    found.retain(|a| !a.archived && a.id.starts_with(typed));
    found.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| b.id.cmp(&a.id)));
    let total = found.len();
    let values: Vec<String> = found.into_iter().take(CompletionInfo::MAX_VALUES).map(|a| a.id).collect();
    // At most `MAX_VALUES`, so never refused.
    let has_more = total > values.len();
    CompletionInfo::with_pagination(values, u32::try_from(total).ok(), has_more).unwrap_or_default()
}
