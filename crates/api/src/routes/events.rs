//! The live stream (REQUIREMENTS.md L7): a thread's or a workspace's envelopes from a
//! sequence number, as Server-Sent Events (each event's id is its sequence
//! number, so `Last-Event-ID` resumes exactly) or as one JSON page.

use std::convert::Infallible;
use std::task::Poll;
use std::time::Duration;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use futures_util::stream::{self, Stream};
use lattice_core::{Error, ThreadId};
use lattice_log::{Authenticated, Follow, Live, LiveEvents};
use serde::Deserialize;

use super::path_id;
use crate::error::ApiResult;
use crate::extract::{Caller, Query};
use crate::guard::StreamPermit;
use crate::state::AppState;
use lattice_wire::{AppEventBody, Appended, ErrorBody, EventPage};

const PAGE: i64 = 500;
/// Bytes in one write of the live stream, after which it writes what it has
/// (a backlog of large artifacts is not gathered whole in memory).
pub const WRITE_BYTES: usize = 64 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    #[serde(default)]
    after: Option<i64>,
    #[serde(default)]
    format: Option<String>,
}

/// A thread's events after `after` (SSE, or `?format=json` for one page).
#[utoipa::path(get, path = "/v1/threads/{th}/events", responses((status = 200, body = EventPage), (status = 404, body = ErrorBody)),
    params(("th" = String, Path), ("after" = Option<i64>, Query), ("format" = Option<String>, Query)), security(("bearer" = [])))]
pub async fn thread(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(th): Path<String>,
    headers: HeaderMap,
    Query(q): Query<EventsQuery>,
) -> ApiResult<Response> {
    let follow = Follow::Thread(path_id(ThreadId::parse, &th)?);
    respond(state, who, follow, &headers, q).await
}

/// A workspace's events after `after` (SSE, or `?format=json`).
#[utoipa::path(get, path = "/v1/workspaces/{ws}/events", responses((status = 200, body = EventPage), (status = 404, body = ErrorBody)),
    params(("ws" = String, Path), ("after" = Option<i64>, Query), ("format" = Option<String>, Query)), security(("bearer" = [])))]
pub async fn workspace(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(ws): Path<String>,
    headers: HeaderMap,
    Query(q): Query<EventsQuery>,
) -> ApiResult<Response> {
    respond(state, who, Follow::Workspace(ws), &headers, q).await
}

async fn respond(state: AppState, who: Authenticated, follow: Follow, headers: &HeaderMap, q: EventsQuery) -> ApiResult<Response> {
    // A reconnecting EventSource says where it stopped; that wins over the URL.
    let last_event_id = headers
        .get("last-event-id")
        .map(|v| v.to_str().ok().and_then(|s| s.trim().parse::<i64>().ok()))
        .map(|v| v.ok_or_else(|| Error::malformed(lattice_core::Code::MalformedQuery, "Last-Event-ID is not a sequence number")))
        .transpose()?;
    let after = last_event_id.or(q.after).unwrap_or(0).max(0);
    match q.format.as_deref() {
        Some("json") => {
            let events = state.log.events(&who, &follow, after, PAGE).await?;
            let next_after = events.last().map_or(after, |e| e.seq);
            Ok(Json(EventPage { events, next_after }).into_response())
        }
        None | Some("sse") => {
            // Refused with a status before a stream starts: what the caller
            // may not see, and a caller with too many streams open.
            let live = state.log.follow(&who, follow, after).await?;
            let permit = state.guard.open_stream(who.principal())?;
            let sse = Sse::new(follow_stream(live, permit, state.shutdown.clone())).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)));
            Ok(in_one_write(sse.into_response()))
        }
        Some(other) => Err(Error::field("format", "enum", format!("{other:?} is not json or sse")).into()),
    }
}

/// Events the stream has ready together, sent as one piece of at most
/// [`WRITE_BYTES`] (and the event that crosses it). A backlog is then a
/// few writes, which the page reads at once: sent one event a piece, the
/// HTTP server flushes after sixteen, and the page could start drawing a
/// thread before its last events (a paused form's among them) arrived.
fn in_one_write(response: Response) -> Response {
    let (parts, body) = response.into_parts();
    let mut events = body.into_data_stream();
    let mut failed = None;
    let mut ended = false;
    let pieces = stream::poll_fn(move |cx| {
        if let Some(e) = failed.take() {
            return Poll::Ready(Some(Err(e)));
        }
        let mut piece = Vec::new();
        while !ended && piece.len() < WRITE_BYTES {
            match events.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(event))) => piece.extend_from_slice(&event),
                Poll::Ready(Some(Err(e))) if piece.is_empty() => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Err(e))) => {
                    failed = Some(e);
                    break;
                }
                Poll::Ready(None) => ended = true,
                Poll::Pending => break,
            }
        }
        match (piece.is_empty(), ended) {
            (false, _) => Poll::Ready(Some(Ok::<_, axum::Error>(Bytes::from(piece)))),
            (true, true) => Poll::Ready(None),
            (true, false) => Poll::Pending,
        }
    });
    Response::from_parts(parts, Body::from_stream(pieces))
}

/// The live stream's events, each envelope with its sequence number as its
/// id; what the log does not keep (a model's text as it is written) has no
/// id, so a reconnect resumes after the last kept envelope. Ends when
/// access is lost, the database fails, or the server stops.
fn follow_stream(
    live: LiveEvents,
    permit: StreamPermit,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    stream::unfold((live, permit, shutdown), |(mut live, permit, mut shutdown)| async move {
        if *shutdown.borrow() {
            return None;
        }
        let delivered = tokio::select! {
            next = live.next() => next?,
            _ = shutdown.changed() => return None,
        };
        let event = match delivered {
            Live::Committed(d) => Event::default().id(d.seq.to_string()).event(&d.event_type).data(&d.json),
            Live::Passing(p) => Event::default().event(p.name).data(&p.json),
            Live::AccessLost => access_lost(),
        };
        Some((Ok(event), (live, permit, shutdown)))
    })
}

/// The last event of a stream whose reader lost the right to read what it
/// follows: a reconnect is refused as any read is, so a client stops
/// instead of retrying.
pub fn access_lost() -> Event {
    Event::default().event(ACCESS_LOST).data(r#"{"reason":"You no longer have access to this thread"}"#)
}

/// The name of [`access_lost`]'s event.
pub const ACCESS_LOST: &str = "access_lost";

/// Appends an application's event to the workspace's log; the bridge
/// publishes it as `lattice.<tenant>.<ws>.<namespace>.<name>`.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/events", request_body = AppEventBody,
    responses((status = 200, body = Appended), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)),
    params(("ws" = String, Path)), security(("bearer" = [])))]
pub async fn append(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(ws): Path<String>,
    crate::extract::Body(req): crate::extract::Body<AppEventBody>,
) -> ApiResult<Json<Appended>> {
    let workspace = path_id(lattice_core::WorkspaceId::parse, &ws)?;
    let done =
        state.log.execute(&who, lattice_core::Command::AppEvent { workspace, namespace: req.namespace, name: req.name, data: req.data }).await?;
    Ok(Json(Appended { seq: done.seq, id: done.envelope_id }))
}
