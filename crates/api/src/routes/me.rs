//! The caller's own inbox: what waits for their answer (`GET
//! /v1/me/waiting`), and the same list followed live (`GET
//! /v1/me/waiting/stream`). The log decides what is listed
//! (`LogService::waiting`, by the one policy); this file names the tool
//! whose requests are forms (`ask_form`) and writes the bodies.

use std::convert::Infallible;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use lattice_agent::tools::{ASK_FORM, switch_of};
use lattice_log::{AskingTool, WaitingNext, WaitingStream};
use serde::Deserialize;
use serde_json::Value;

use super::events::ACCESS_LOST;
use crate::error::ApiResult;
use crate::extract::{Caller, Query};
use crate::guard::StreamPermit;
use crate::state::AppState;
use lattice_wire::{ErrorBody, WAITING_LIMIT, WaitingItem, WaitingThread, WaitingWorkspace, Waits};

/// No query parameters: any is refused (`Malformed`), never ignored.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoQuery {}

/// The name of each list event of the stream.
pub const WAITING_EVENT: &str = "waiting";

/// The requests that are forms a person fills: a run's `ask_form`, and a
/// connected server's question (asked of the person its run acts for),
/// each needing the switch its answer needs (`ui:forms`).
fn tools() -> Vec<AskingTool> {
    vec![
        AskingTool { name: ASK_FORM.to_owned(), switch: switch_of(ASK_FORM) },
        AskingTool { name: lattice_core::run::ELICITATION.to_owned(), switch: Some(lattice_core::SwitchKey::Forms) },
    ]
}

/// What waits for the signed-in person's answer: every open ask_form
/// request of a paused run, and every form taking submissions they have
/// not answered (a `once` form: nobody has), in every thread of their
/// tenant where they may answer (respondent or above there; a restricted
/// thread only where listed or admin) and forms are on; soonest
/// `closes_at` first, those without one last, then the newest. At most
/// [`WAITING_LIMIT`] items: the first in that order, the rest cut.
#[utoipa::path(get, path = "/v1/me/waiting", responses((status = 200, body = Vec<WaitingItem>), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn waiting(State(state): State<AppState>, Caller(who): Caller, Query(_none): Query<NoQuery>) -> ApiResult<Json<Vec<WaitingItem>>> {
    let items = state.log.waiting(&who, &tools(), WAITING_LIMIT).await?;
    Ok(Json(items.into_iter().map(as_wire).collect()))
}

/// The same list followed live (SSE): a `waiting` event with the whole
/// list at once, and again whenever it changes (a form made, changed,
/// closed or archived, an answer, a run paused, answered or expired, a
/// deadline passed, a switch flipped, the caller added to or removed from a
/// workspace or a thread): within a second of the commit, from any replica.
/// A sign-out ends it with `access_lost`, as every stream; comments keep it
/// alive every 15 s.
#[utoipa::path(get, path = "/v1/me/waiting/stream", responses((status = 200, description = "text/event-stream"), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn waiting_stream(
    State(state): State<AppState>,
    Caller(who): Caller,
    Query(_none): Query<NoQuery>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    // Refused with a status before the stream starts: a caller with too
    // many streams open, a database that fails the first read.
    let permit = state.guard.open_stream(who.principal())?;
    let mut live = state.log.follow_waiting(&who, tools(), WAITING_LIMIT).await?;
    let first = live.next().await?;
    let context = (live, first, permit, state.shutdown.clone());
    let events = stream::unfold(context, |(mut live, mut pending, permit, mut shutdown): (WaitingStream, _, StreamPermit, _)| async move {
        if *shutdown.borrow() {
            return None;
        }
        let next = match pending.take() {
            Some(next) => next,
            None => tokio::select! {
                next = live.next() => next.ok()??,
                _ = shutdown.changed() => return None,
            },
        };
        let event = match next {
            WaitingNext::List(items) => {
                let items: Vec<WaitingItem> = items.into_iter().map(as_wire).collect();
                Event::default().event(WAITING_EVENT).data(serde_json::to_string(&items).expect("the list serializes"))
            }
            WaitingNext::SignedOut => Event::default().event(ACCESS_LOST).data(r#"{"reason":"You were signed out"}"#),
        };
        Some((Ok(event), (live, None, permit, shutdown)))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

fn as_wire(item: lattice_log::WaitingItem) -> WaitingItem {
    let (waits, title) = match item.waits {
        lattice_log::Waits::Artifact { id, version, .. } => (Waits::Form { id, version }, item.title),
        lattice_log::Waits::Request { run, tool_call_id, args, tool_name } => {
            // An ask_form's arguments carry its title (crates/agent's tool).
            let title = args.get("title").and_then(Value::as_str).map_or(tool_name, str::to_owned);
            (Waits::AskForm { run, tool_call_id }, title)
        }
    };
    WaitingItem {
        waits,
        title,
        thread: WaitingThread { id: item.thread, title: item.thread_title },
        workspace: WaitingWorkspace { id: item.workspace, name: item.workspace_name },
        asked_by: item.asked_by,
        asked_by_agent: item.asked_by_agent,
        asked_at: lattice_log::rfc3339(item.asked_at),
        closes_at: item.closes_at.map(lattice_log::rfc3339),
    }
}
