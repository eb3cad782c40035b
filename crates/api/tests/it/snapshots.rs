//! Every `/v1` response and error body, as a client reads it: each success
//! parses as its `lattice-wire` type and writes back to the same JSON (no
//! field the type does not know), and the whole walk, with ids, times,
//! digests and tokens redacted, matches `tests/snapshots/v1.txt` on both
//! backends. A renamed or dropped field fails here. Rewrite the snapshot
//! with `UPDATE_EXPECT=1` and review the diff.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use lattice_ui::app_policy::{GET_STATE, SUBMIT};
use lattice_wire as wire;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::{App, Reply};

/// The walk's record: each call, its status and its redacted body.
#[derive(Default)]
struct Walk(String);

impl Walk {
    /// A success, parsed as `T` and written back unchanged.
    fn ok<T: DeserializeOwned + Serialize>(&mut self, call: &str, reply: &Reply) -> T {
        assert!(reply.status.is_success(), "{call}: {} {}", reply.status, reply.body);
        let typed: T = serde_json::from_value(reply.body.clone()).unwrap_or_else(|e| panic!("{call}: {e}: {}", reply.body));
        assert_eq!(serde_json::to_value(&typed).unwrap(), reply.body, "{call}: the wire type drops or renames a field");
        self.record(call, reply);
        typed
    }

    /// A refusal: the typed error body, with the status of its type.
    fn refused(&mut self, call: &str, reply: &Reply, status: StatusCode) {
        assert_eq!(reply.status, status, "{call}: {}", reply.body);
        let typed: wire::ErrorBody = serde_json::from_value(reply.body.clone()).unwrap_or_else(|e| panic!("{call}: {e}: {}", reply.body));
        assert_eq!(serde_json::to_value(&typed).unwrap(), reply.body, "{call}: the error body drops or renames a field");
        self.record(call, reply);
    }

    fn record(&mut self, call: &str, reply: &Reply) {
        let body = serde_json::to_string_pretty(&redact(reply.body.clone())).unwrap();
        self.0.push_str(&format!("### {call}\n{}\n{body}\n\n", reply.status.as_u16()));
    }
}

/// Ids, times, digests, tokens and envelope ids: what differs run to run.
fn redact(value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(redact_text(&s)),
        Value::Array(items) => Value::Array(items.into_iter().map(redact).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, redact(v))).collect()),
        other => other,
    }
}

fn redact_text(s: &str) -> String {
    if s.starts_with("eyJ") && s.matches('.').count() == 2 {
        return "<token>".into();
    }
    if let Some(hex) = s.strip_prefix("sha256:")
        && hex.len() == 64
    {
        return "sha256:<digest>".into();
    }
    let time = s.len() == 24 && s.as_bytes()[4] == b'-' && s.as_bytes()[10] == b'T' && s.ends_with('Z');
    if time {
        return "<time>".into();
    }
    if s.len() == 26 && s.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()) {
        return "<ulid>".into();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    'scan: while !rest.is_empty() {
        for prefix in ["ws_", "th_", "art_", "run_", "sub_"] {
            if let Some(after) = rest.strip_prefix(prefix) {
                let id_len = after.bytes().take_while(|b| b.is_ascii_digit() || b.is_ascii_lowercase()).count();
                if id_len >= 20 {
                    out.push_str(prefix);
                    out.push('…');
                    rest = &after[id_len..];
                    continue 'scan;
                }
            }
        }
        let c = rest.chars().next().unwrap();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

lattice_testkit::both_backends! {
    async fn every_response_and_error_body_is_its_wire_type(backend: Backend) {
        let app = App::new(backend).await;
        let mut walk = Walk::default();
        let send = |method: &'static str, path: String, token: Option<String>, body: Option<Value>| {
            let app = &app;
            async move { app.send(method, &path, token.as_deref(), body.map(|b| b.to_string()).as_deref()).await }
        };

        // Signing in, and who the token says one is.
        let r = send("POST", "/v1/dev/token".into(), None, Some(json!({"tenant": "acme", "user": "ana", "role": "tenant_admin"}))).await;
        let ana = walk.ok::<wire::TokenResponse>("POST /v1/dev/token", &r).token;
        let r = send("GET", "/v1/me".into(), Some(ana.clone()), None).await;
        walk.ok::<wire::Me>("GET /v1/me", &r);
        let bob = app.token("acme", "bob", TenantRole::Member, false).await;
        let bot = app.token("acme", "bot", TenantRole::Member, true).await;

        // Workspaces, members, threads, messages.
        let r = send("POST", "/v1/workspaces".into(), Some(ana.clone()), Some(json!({"name": "Incidents"}))).await;
        let ws = walk.ok::<wire::Created>("POST /v1/workspaces", &r).id;
        let r = send("GET", "/v1/workspaces".into(), Some(ana.clone()), None).await;
        walk.ok::<Vec<wire::Workspace>>("GET /v1/workspaces", &r);
        let r = send("POST", format!("/v1/workspaces/{ws}/members"), Some(ana.clone()), Some(json!({"user": "bob", "role": "viewer"}))).await;
        walk.ok::<wire::Posted>("POST /v1/workspaces/{ws}/members", &r);
        let r = send("POST", format!("/v1/workspaces/{ws}/members"), Some(ana.clone()), Some(json!({"user": "bot", "role": "editor"}))).await;
        walk.ok::<wire::Posted>("POST /v1/workspaces/{ws}/members (an agent)", &r);
        let r = send("POST", format!("/v1/workspaces/{ws}/threads"), Some(ana.clone()), Some(json!({"title": "Outage"}))).await;
        let th = walk.ok::<wire::Created>("POST /v1/workspaces/{ws}/threads", &r).id;
        let r = send("GET", format!("/v1/workspaces/{ws}/threads"), Some(ana.clone()), None).await;
        walk.ok::<Vec<wire::Thread>>("GET /v1/workspaces/{ws}/threads", &r);
        let r = send("GET", format!("/v1/threads/{th}"), Some(ana.clone()), None).await;
        walk.ok::<wire::Thread>("GET /v1/threads/{th}", &r);
        let r = send("POST", format!("/v1/threads/{th}/members"), Some(ana.clone()), Some(json!({"user": "guest", "role": "respondent"}))).await;
        walk.ok::<wire::Posted>("POST /v1/threads/{th}/members", &r);
        let r = send("GET", "/v1/threads".to_owned(), Some(ana.clone()), None).await;
        walk.ok::<Vec<wire::Thread>>("GET /v1/threads", &r);
        let r = send("POST", format!("/v1/threads/{th}/messages"), Some(ana.clone()), Some(json!({"text": "The API is down"}))).await;
        walk.ok::<wire::Posted>("POST /v1/threads/{th}/messages", &r);
        let r = send("PUT", format!("/v1/threads/{th}/read"), Some(ana.clone()), Some(json!({"seq": 1}))).await;
        walk.ok::<wire::ReadMark>("PUT /v1/threads/{th}/read", &r);

        // Artifacts: made, read, listed, edited, archived.
        let form = json!({"kind": "form", "data": {"title": "Severity", "schema": {"type": "object",
            "properties": {"level": {"enum": ["low", "high"]}}, "required": ["level"]}}});
        let r = send("POST", format!("/v1/threads/{th}/artifacts"), Some(ana.clone()), Some(form)).await;
        let form_id = walk.ok::<wire::Versioned>("POST /v1/threads/{th}/artifacts", &r).id;
        let r = send("GET", format!("/v1/artifacts/{form_id}"), Some(ana.clone()), None).await;
        walk.ok::<wire::Artifact>("GET /v1/artifacts/{id}", &r);
        let patch = json!({"expected_version": 1, "patch": [{"op": "replace", "path": "/title", "value": "How bad?"}]});
        let r = send("PATCH", format!("/v1/artifacts/{form_id}"), Some(ana.clone()), Some(patch.clone())).await;
        walk.ok::<wire::Versioned>("PATCH /v1/artifacts/{id}", &r);
        let r = send("GET", format!("/v1/artifacts/{form_id}?version=1"), Some(ana.clone()), None).await;
        walk.ok::<wire::Artifact>("GET /v1/artifacts/{id}?version=1", &r);
        let r = send("GET", format!("/v1/threads/{th}/artifacts?kind=form"), Some(ana.clone()), None).await;
        walk.ok::<Vec<wire::Artifact>>("GET /v1/threads/{th}/artifacts?kind=form", &r);

        // The log, and an application's event.
        let r = send("POST", format!("/v1/workspaces/{ws}/events"), Some(ana.clone()), Some(json!({"namespace": "billing", "name": "paid", "data": {"cents": 1200}}))).await;
        walk.ok::<wire::Appended>("POST /v1/workspaces/{ws}/events", &r);
        let r = send("GET", format!("/v1/threads/{th}/events?format=json"), Some(ana.clone()), None).await;
        walk.ok::<wire::EventPage>("GET /v1/threads/{th}/events?format=json", &r);
        let r = send("GET", format!("/v1/workspaces/{ws}/events?format=json&after=3"), Some(ana.clone()), None).await;
        walk.ok::<wire::EventPage>("GET /v1/workspaces/{ws}/events?format=json&after=3", &r);

        // The switches.
        let r = send("PUT", format!("/v1/integrations/workspace:{ws}/ui:dashboards"), Some(ana.clone()), Some(json!({"state": "off", "reason": "incident"}))).await;
        walk.ok::<wire::Posted>("PUT /v1/integrations/{level}/{key}", &r);
        let r = send("GET", format!("/v1/integrations/effective?workspace={ws}"), Some(ana.clone()), None).await;
        walk.ok::<wire::Effective>("GET /v1/integrations/effective", &r);
        let r = send("GET", "/v1/integrations/levels".into(), Some(ana.clone()), None).await;
        walk.ok::<Vec<wire::LevelView>>("GET /v1/integrations/levels", &r);
        let r = send("GET", "/v1/integrations/audit".into(), Some(ana.clone()), None).await;
        walk.ok::<Vec<wire::AuditEntry>>("GET /v1/integrations/audit", &r);

        // A run that asks a form, answered.
        let r = send("POST", format!("/v1/threads/{th}/runs"), Some(ana.clone()), Some(json!({"prompt": "Report", "model": "scripted:ask_form"}))).await;
        let run = walk.ok::<wire::RunStarted>("POST /v1/threads/{th}/runs", &r).run_id;
        let paused = lattice_testkit::eventually("the run to pause", async || {
            Some(send("GET", format!("/v1/runs/{run}"), Some(ana.clone()), None).await).filter(|r| r.body["status"] == "paused")
        })
        .await;
        let request = walk.ok::<wire::Run>("GET /v1/runs/{run}", &paused).requests[0].clone();
        let r = send("GET", "/v1/me/waiting".into(), Some(ana.clone()), None).await;
        walk.ok::<Vec<wire::WaitingItem>>("GET /v1/me/waiting", &r);
        let answer = json!({"tool_call_id": request.tool_call_id, "answer": {"date": "2026-11-30", "severity": "high"}});
        let r = send("POST", format!("/v1/runs/{run}/answers"), Some(ana.clone()), Some(answer)).await;
        walk.ok::<wire::Answered>("POST /v1/runs/{run}/answers", &r);
        // The run goes on in the background: what it records comes before
        // the rest of the walk, so every sequence number is the same each time.
        lattice_testkit::until("the run to finish", async || send("GET", format!("/v1/runs/{run}"), Some(ana.clone()), None).await.body["status"] == "finished").await;

        // An app's calls: allowed, asked and confirmed, listed.
        // Mini apps are off until the deployment's admin turns them on.
        let root = app.token("acme", "root", TenantRole::DeploymentAdmin, false).await;
        let r = send("PUT", "/v1/integrations/deployment/ui:mini-apps".into(), Some(root), Some(json!({"state": "on", "reason": "a counter"}))).await;
        walk.ok::<wire::Posted>("PUT /v1/integrations/deployment/ui:mini-apps", &r);
        let made = json!({"kind": "app", "data": {"title": "Counter", "summary": "Counts", "html": "<p>c</p>", "state": {"count": 1}}});
        let r = send("POST", format!("/v1/threads/{th}/artifacts"), Some(bot.clone()), Some(made)).await;
        let app_id = walk.ok::<wire::Versioned>("POST /v1/threads/{th}/artifacts (an app, by an agent)", &r).id;
        let r = send("POST", format!("/v1/artifacts/{app_id}/capability"), Some(ana.clone()), None).await;
        let capability = walk.ok::<wire::AppCapability>("POST /v1/artifacts/{id}/capability", &r).capability;
        let r = send("POST", format!("/v1/artifacts/{app_id}/calls"), Some(ana.clone()), Some(json!({"tool": GET_STATE, "capability": capability}))).await;
        walk.ok::<wire::Outcome>("POST /v1/artifacts/{id}/calls (allowed)", &r);
        let r = send("POST", format!("/v1/artifacts/{app_id}/calls"), Some(ana.clone()), Some(json!({"tool": SUBMIT, "arguments": {"values": {"n": 2}}, "capability": capability}))).await;
        let wire::Outcome::Confirm { confirmation, .. } = walk.ok::<wire::Outcome>("POST /v1/artifacts/{id}/calls (to confirm)", &r) else {
            panic!("submit is asked: {}", r.body)
        };
        let r = send("POST", format!("/v1/app-calls/{confirmation}"), Some(ana.clone()), Some(json!({"accept": true}))).await;
        walk.ok::<wire::Outcome>("POST /v1/app-calls/{confirmation}", &r);
        let r = send("GET", format!("/v1/artifacts/{app_id}/calls"), Some(ana.clone()), None).await;
        walk.ok::<Vec<wire::CallRecord>>("GET /v1/artifacts/{id}/calls", &r);
        let r = send("POST", format!("/v1/artifacts/{form_id}/archive"), Some(ana.clone()), None).await;
        walk.ok::<wire::Archived>("POST /v1/artifacts/{id}/archive", &r);

        // Every refusal a request can meet here, one of each type.
        let r = send("POST", "/v1/workspaces".into(), Some(ana.clone()), None).await;
        walk.refused("POST /v1/workspaces without a body: Malformed", &r, StatusCode::BAD_REQUEST);
        let r = send("GET", "/v1/workspaces".into(), None, None).await;
        walk.refused("GET /v1/workspaces without a token: Unauthorized", &r, StatusCode::UNAUTHORIZED);
        let r = send("POST", format!("/v1/threads/{th}/messages"), Some(bob.clone()), Some(json!({"text": "hi"}))).await;
        walk.refused("POST /v1/threads/{th}/messages as a viewer: Forbidden", &r, StatusCode::FORBIDDEN);
        let r = send("GET", "/v1/artifacts/art_00000000000000000000000000".into(), Some(ana.clone()), None).await;
        walk.refused("GET /v1/artifacts/{id} of nothing: NotFound", &r, StatusCode::NOT_FOUND);
        let r = send("PATCH", format!("/v1/artifacts/{app_id}"), Some(bot.clone()), Some(json!({"expected_version": 99, "patch": []}))).await;
        walk.refused("PATCH /v1/artifacts/{id} at a stale version: Conflict", &r, StatusCode::CONFLICT);
        let r = send("PATCH", format!("/v1/artifacts/{form_id}"), Some(ana.clone()), Some(patch)).await;
        walk.refused("PATCH /v1/artifacts/{id} of an archived one: InvalidState", &r, StatusCode::CONFLICT);
        let huge = json!({"text": "x".repeat(2 * 1024 * 1024)});
        let r = send("POST", format!("/v1/threads/{th}/messages"), Some(ana.clone()), Some(huge)).await;
        walk.refused("POST /v1/threads/{th}/messages of 2 MiB: TooLarge", &r, StatusCode::PAYLOAD_TOO_LARGE);
        let r = send("POST", format!("/v1/threads/{th}/artifacts"), Some(ana.clone()), Some(json!({"kind": "form", "data": {"title": ""}}))).await;
        walk.refused("POST /v1/threads/{th}/artifacts of a bad form: ValidationFailed", &r, StatusCode::UNPROCESSABLE_ENTITY);
        let dashboard = json!({"kind": "dashboard", "data": {"title": "Load", "as_of": "2026-11-30T10:00:00Z", "panels": []}});
        let r = send("POST", format!("/v1/threads/{th}/artifacts"), Some(ana.clone()), Some(dashboard)).await;
        walk.refused("POST /v1/threads/{th}/artifacts of a dashboard while off: NotEnabled", &r, StatusCode::LOCKED);
        let r = send("DELETE", "/v1/workspaces".into(), Some(ana.clone()), None).await;
        walk.refused("DELETE /v1/workspaces: MethodNotAllowed", &r, StatusCode::METHOD_NOT_ALLOWED);

        expect_test::expect_file!["../snapshots/v1.txt"].assert_eq(walk.0.trim_end());
    }
}
