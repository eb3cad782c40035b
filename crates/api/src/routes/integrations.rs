//! The Integrations switch: effective values, setting a level, the audit.

use std::collections::BTreeMap;

use std::convert::Infallible;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use lattice_core::{Command, Error, Level, SwitchKey, SwitchState};
use serde::Deserialize;

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Query};
use crate::state::AppState;
use lattice_wire::{AuditEntry, ConnectedServer, EffectiveValue, ErrorBody, KeyView, LevelView, Posted, ServerCall, SetSwitch};
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceQuery {
    workspace: String,
}

/// Each key's effective value in a workspace, and why.
#[utoipa::path(get, path = "/v1/integrations/effective", responses((status = 200, body = BTreeMap<String, EffectiveValue>)),
    params(("workspace" = String, Query)), security(("bearer" = [])))]
pub async fn effective(
    State(state): State<AppState>,
    Caller(who): Caller,
    Query(q): Query<WorkspaceQuery>,
) -> ApiResult<Json<BTreeMap<String, EffectiveValue>>> {
    let map = state.log.effective(&who, &q.workspace).await?;
    Ok(Json(map.into_iter().map(|(k, e)| (k.as_str().to_owned(), EffectiveValue { enabled: e.enabled, because: e.because })).collect()))
}

/// The effective values as a live stream (SSE): an `effective` event at
/// once, and again whenever a switch change alters them. How an open chat
/// learns of a flip without polling (I4).
#[utoipa::path(get, path = "/v1/integrations/effective/stream", responses((status = 200, description = "text/event-stream")),
    params(("workspace" = String, Query)), security(("bearer" = [])))]
pub async fn effective_stream(
    State(state): State<AppState>,
    Caller(who): Caller,
    Query(q): Query<WorkspaceQuery>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    // Woken by switch changes only, never by the log's other commits; it
    // listens before it reads, so no change falls between the two.
    let mut changes = state.log.switch_changes();
    changes.mark_unchanged();
    let first = state.log.effective(&who, &q.workspace).await?;
    let permit = state.guard.open_stream(who.principal())?;
    // A heartbeat, which a chat that stops hearing turns governed UI off
    // by: a stream that broke unseen fails closed. The first goes right
    // after the values, so the chat knows the beat at once.
    let every = state.switch_heartbeat;
    let mut beat = tokio::time::interval(every);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let context = (state, who, q.workspace, changes, Some(first.clone()), first, permit, beat);
    let events = stream::unfold(context, move |(state, who, ws, mut changes, mut pending, mut last, permit, mut beat)| async move {
        loop {
            if let Some(map) = pending.take() {
                let body = serde_json::to_string(&as_wire(&map)).expect("effective values serialize");
                let event = Event::default().event("effective").data(body);
                return Some((Ok(event), (state, who, ws, changes, None, last, permit, beat)));
            }
            let mut shutdown = state.shutdown.clone();
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return None },
                _ = beat.tick() => {
                    let event = Event::default().event("heartbeat").data(format!("{{\"every_ms\":{}}}", every.as_millis()));
                    return Some((Ok(event), (state, who, ws, changes, None, last, permit, beat)));
                }
                _ = shutdown.changed() => return None,
            }
            // Access may be gone (removed from the workspace): the stream ends.
            let Ok(now) = state.log.effective(&who, &ws).await else { return None };
            if now != last {
                last = now.clone();
                pending = Some(now);
            }
        }
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

fn as_wire(map: &std::collections::BTreeMap<SwitchKey, lattice_core::Effective>) -> BTreeMap<String, EffectiveValue> {
    map.iter().map(|(k, e)| (k.as_str().to_owned(), EffectiveValue { enabled: e.enabled, because: e.because.clone() })).collect()
}

/// Sets one level's state for one key, with a reason (an admin of that level).
#[utoipa::path(put, path = "/v1/integrations/{level}/{key}", request_body = SetSwitch,
    responses((status = 200, body = Posted), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)),
    params(("level" = String, Path, description = "deployment | tenant:{id} | workspace:{id}"), ("key" = String, Path)),
    security(("bearer" = [])))]
pub async fn set(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path((level, key)): Path<(String, String)>,
    Body(req): Body<SetSwitch>,
) -> ApiResult<Json<Posted>> {
    let level = Level::parse(&level).map_err(|_| Error::NotFound)?;
    let key = SwitchKey::parse(&key).ok_or(Error::NotFound)?;
    // A server not offered to the caller's tenant is, for them, no key at
    // all: the same 404 as a name nobody configured (a deployment admin
    // sees every server).
    let p = who.principal();
    if let SwitchKey::Server(server) = key
        && p.role != lattice_core::TenantRole::DeploymentAdmin
        && !state.runner.connections().connected().offers(server, &p.tenant)
    {
        return Err(Error::NotFound.into());
    }
    let state_value =
        SwitchState::parse(&req.state).ok_or_else(|| Error::field("state", "enum", format!("{:?} is not on, off or unset", req.state)))?;
    let done = state.log.execute(&who, Command::SetSwitch { level, key, state: state_value, reason: req.reason }).await?;
    Ok(Json(Posted { seq: done.seq }))
}

/// Every level the caller administers, each key's state there and its
/// effective value: what the admin console lists (REQUIREMENTS.md W7).
#[utoipa::path(get, path = "/v1/integrations/levels", responses((status = 200, body = Vec<LevelView>)),
    security(("bearer" = [])))]
pub async fn levels(State(state): State<AppState>, Caller(who): Caller) -> ApiResult<Json<Vec<LevelView>>> {
    Ok(Json(levels_view(state.log.switch_levels(&who).await?)))
}

/// The levels as the console follows them (SSE): a `levels` event at once,
/// and again whenever a switch change alters what the caller sees (the
/// levels, or the audit trail of the levels it administers: a flip to the
/// state a level already had is news too), from whichever service, replica
/// or terminal made it.
#[utoipa::path(get, path = "/v1/integrations/levels/stream", responses((status = 200, description = "text/event-stream")),
    security(("bearer" = [])))]
pub async fn levels_stream(State(state): State<AppState>, Caller(who): Caller) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let mut changes = state.log.switch_changes();
    changes.mark_unchanged();
    let first = levels_view(state.log.switch_levels(&who).await?);
    let audited = last_audited(&state, &who).await?;
    let permit = state.guard.open_stream(who.principal())?;
    let context = (state, who, changes, Some(first.clone()), (first, audited), permit);
    let events = stream::unfold(context, move |(state, who, mut changes, mut pending, mut last, permit)| async move {
        loop {
            if let Some(levels) = pending.take() {
                let body = serde_json::to_string(&levels).expect("levels serialize");
                return Some((Ok(Event::default().event("levels").data(body)), (state, who, changes, None, last, permit)));
            }
            let mut shutdown = state.shutdown.clone();
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return None },
                _ = shutdown.changed() => return None,
            }
            // A burst of flips (everything off at a level) is read once:
            // a console costs at most a read every 100 ms, however often
            // switches change anywhere.
            tokio::time::sleep(Duration::from_millis(100)).await;
            changes.mark_unchanged();
            let Ok(now) = state.log.switch_levels(&who).await else { return None };
            let Ok(audited) = last_audited(&state, &who).await else { return None };
            let now = (levels_view(now), audited);
            if now != last {
                pending = Some(now.0.clone());
                last = now;
            }
        }
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// The sequence number of the last switch change the caller may audit.
async fn last_audited(state: &AppState, who: &lattice_log::Authenticated) -> Result<i64, Error> {
    state.log.last_audited(who).await
}

fn levels_view(levels: Vec<lattice_log::LevelStates>) -> Vec<LevelView> {
    levels
        .into_iter()
        .map(|l| LevelView {
            level: l.level,
            name: l.name,
            workspaces: l.workspaces,
            keys: l
                .keys
                .into_iter()
                .map(|k| KeyView {
                    key: k.key,
                    state: k.state,
                    effective: EffectiveValue { enabled: k.effective.enabled, because: k.effective.because },
                })
                .collect(),
        })
        .collect()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    tenant: Option<String>,
    workspace: Option<String>,
}

/// The switch changes the caller administers, oldest first.
#[utoipa::path(get, path = "/v1/integrations/audit", responses((status = 200, body = Vec<AuditEntry>)),
    params(("tenant" = Option<String>, Query), ("workspace" = Option<String>, Query)), security(("bearer" = [])))]
pub async fn audit(State(state): State<AppState>, Caller(who): Caller, Query(q): Query<AuditQuery>) -> ApiResult<Json<Vec<AuditEntry>>> {
    let rows = state.log.audit(&who, q.tenant.as_deref(), q.workspace.as_deref()).await?;
    Ok(Json(rows.into_iter().map(|r| AuditEntry { seq: r.seq, at: r.at, actor: r.actor, change: r.change }).collect()))
}

/// The most calls listed per server, and workspaces read for them.
const SERVER_CALLS_LISTED: usize = 50;
const WORKSPACES_READ: usize = 100;

/// The MCP servers connected for the caller's tenant (every one, for a
/// deployment admin), each with whether it answers now and its recent
/// calls in the workspaces the caller administers: what the console lists
/// beside the servers' switch keys.
#[utoipa::path(get, path = "/v1/integrations/servers", responses((status = 200, body = Vec<ConnectedServer>)),
    security(("bearer" = [])))]
pub async fn servers(State(state): State<AppState>, Caller(who): Caller) -> ApiResult<Json<Vec<ConnectedServer>>> {
    let p = who.principal();
    let connections = state.runner.connections();
    let mut rows: Vec<(String, lattice_core::Envelope)> = Vec::new();
    let administered = state.log.workspaces(&who).await?.into_iter().filter(|w| w.role == lattice_core::Role::Admin).take(WORKSPACES_READ);
    for ws in administered {
        for name in [lattice_agent::servers::AUDIT_NAME, lattice_app_calls::AUDIT_NAME] {
            for row in state.log.audit_records(&who, &ws.id, name, SERVER_CALLS_LISTED as i64).await? {
                rows.push((ws.name.clone(), row));
            }
        }
    }
    rows.sort_by_key(|(_, e)| std::cmp::Reverse(e.seq));
    let mut out = Vec::new();
    let everyone = p.role == lattice_core::TenantRole::DeploymentAdmin;
    for server in connections.all().filter(|s| everyone || connections.connected().offers(s.key(), &p.tenant)) {
        // Listed in the admin's tenant's session (a deployment admin's own).
        let listed = tokio::time::timeout(std::time::Duration::from_secs(3), server.tools(lattice_agent::servers::behalf(&who))).await;
        let (tools, unreachable) = match listed {
            Ok(Ok(tools)) => (Some(tools.len()), None),
            // The admin's own sign-in is missing: not a fault of the server's.
            Ok(Err(lattice_connect::CallError::NeedsSignIn { .. })) => (None, None),
            Ok(Err(e)) => (None, Some(e.to_string())),
            Err(_) => (None, Some("it did not answer within 3 s".to_owned())),
        };
        let calls = rows
            .iter()
            .filter_map(|(workspace, e)| {
                let lattice_core::event::Event::AuditRecorded(audit) = &e.event else { return None };
                (audit.data.get("server").and_then(Value::as_str) == Some(server.name())).then(|| ServerCall {
                    seq: e.seq,
                    at: e.at.clone(),
                    actor: e.actor.name().to_owned(),
                    workspace: workspace.clone(),
                    tool: audit.data.get("tool").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    decision: audit.data.get("decision").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    caller: if audit.name == lattice_app_calls::AUDIT_NAME { "app" } else { "agent" }.to_owned(),
                    failed: audit.data.get("failed").and_then(Value::as_str).map(str::to_owned),
                })
            })
            .take(SERVER_CALLS_LISTED)
            .collect();
        let (transport, address) = server.config().shown();
        // The operator's allowance for its apps, each kind that allows something.
        let allowed = &server.config().app_domains;
        let app_domains = [("connect", &allowed.connect), ("resource", &allowed.resource), ("frame", &allowed.frame), ("base", &allowed.base)]
            .into_iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(kind, list)| (kind.to_owned(), list.clone()))
            .collect();
        let connected_people = if server.signs_in() { state.log.server_connection_count(&who, server.name()).await.ok() } else { None };
        out.push(ConnectedServer {
            name: server.name().to_owned(),
            key: server.key().as_str().to_owned(),
            transport: transport.to_owned(),
            address,
            tools,
            unreachable,
            sign_in: server.signs_in(),
            isolation: server.isolation().to_owned(),
            connected_people,
            app_domains,
            calls,
        });
    }
    Ok(Json(out))
}
