//! Access taken away, from outside (R1, docs/ACCESS.md): a person holds a
//! thread's SSE stream, an AG-UI run's stream and an MCP session's stream
//! open; when they are removed from the workspace, demoted below what the
//! thread needs, or signed out, every one
//! of them ends within a second, the two live streams with
//! `event: access_lost`, and what they send afterwards is refused.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use lattice_e2e::{Client, UpProcess};
use serde_json::{Value, json};

/// An open response and the events it has said so far.
struct Open {
    events: lattice_e2e::sse::Events,
    said: Vec<lattice_e2e::sse::Event>,
}

impl Open {
    fn of(response: reqwest::Response) -> Self {
        assert!(response.status().is_success(), "{}", response.status());
        Self { events: lattice_e2e::sse::events(response), said: Vec::new() }
    }

    /// Whether an event named `name`, or whose data holds it, was said.
    fn has_said(&self, name: &str) -> bool {
        self.said.iter().any(|e| lattice_e2e::sse::says(e, name))
    }

    /// Reads until an event named `name` (or holding it) has been said.
    async fn until(&mut self, name: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.has_said(name) {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.events.next()).await {
                Ok(Some(Ok(event))) => self.said.push(event),
                other => {
                    panic!("the stream ended or stalled before saying {name:?} ({:?}): {:?}", self.said, other.map(|o| o.map(|r| r.map(|_| ()))))
                }
            }
        }
    }

    /// Reads to the end, which must come within `within`.
    async fn ends_within(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.events.next()).await {
                Ok(Some(Ok(event))) => self.said.push(event),
                Ok(Some(Err(_)) | None) => return,
                Err(_) => panic!("the stream was still open {within:?} after the change; it said {:?}", self.said),
            }
        }
    }
}

/// Bob's three surfaces on a thread of the workspace: its live stream, an
/// AG-UI run whose model writes slowly, and an MCP session's stream.
struct Surfaces {
    sse: Open,
    agui: Open,
    mcp: Open,
    session: String,
}

const MCP_ACCEPT: &str = "application/json, text/event-stream";

/// `message` posted to `/mcp` in `session`, as `who`.
async fn in_session(who: &Client, session: &str, message: &Value) -> reqwest::Response {
    who.http
        .post(format!("{}/mcp", who.base))
        .bearer_auth(&who.token)
        .header("accept", MCP_ACCEPT)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-06-18")
        .json(message)
        .send()
        .await
        .unwrap()
}

async fn open_surfaces(up: &UpProcess, bob: &Client, th: &str) -> Surfaces {
    let http = &bob.http;
    let sse =
        http.get(format!("{}/v1/threads/{th}/events", up.base)).bearer_auth(&bob.token).header("accept", "text/event-stream").send().await.unwrap();
    let mut sse = Open::of(sse);
    let input = json!({"threadId": th, "runId": "r1", "messages": [{"id": "m1", "role": "user", "content": "tell me slowly"}],
        "tools": [], "context": [], "state": {}, "forwardedProps": {"model": "slow"}});
    let agui = http.post(format!("{}/v1/agui/threads/{th}", up.base)).bearer_auth(&bob.token).json(&input).send().await.unwrap();
    let mut agui = Open::of(agui);
    agui.until("TEXT_MESSAGE_CONTENT").await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "revocation", "version": "1"}}});
    let r = http.post(format!("{}/mcp", up.base)).bearer_auth(&bob.token).header("accept", MCP_ACCEPT).json(&init).send().await.unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let session = r.headers().get("mcp-session-id").expect("a session id").to_str().unwrap().to_owned();
    drop(r.bytes().await);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = in_session(bob, &session, &initialized).await;
    assert!(r.status().is_success(), "{}", r.status());
    let mcp = http
        .get(format!("{}/mcp", up.base))
        .bearer_auth(&bob.token)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    let mcp = Open::of(mcp);
    // The thread's stream is live: a message reaches it.
    sse.until("run_started").await;
    Surfaces { sse, agui, mcp, session }
}

async fn ends_everything(s: &mut Surfaces, changed: Instant) {
    for (name, open) in [("SSE", &mut s.sse), ("AG-UI", &mut s.agui), ("MCP", &mut s.mcp)] {
        open.ends_within(Duration::from_secs(1).saturating_sub(changed.elapsed()).max(Duration::from_millis(50))).await;
        println!("{name} ended {:?} after the change", changed.elapsed());
    }
    assert!(changed.elapsed() < Duration::from_millis(1100), "every surface ended within a second: {:?}", changed.elapsed());
    let named = |open: &Open, name: &str| open.said.iter().any(|e| e.event == name);
    assert!(named(&s.sse, "access_lost"), "the thread's stream says why it ends: {:?}", s.sse.said);
    assert!(named(&s.agui, "access_lost") && s.agui.has_said("\"AccessLost\""), "so does AG-UI's: {:?}", s.agui.said);
}

/// A model that writes one piece a second for half a minute.
async fn slow_model() -> String {
    let model = lattice_e2e::model::ModelService::default();
    let base_url = model.clone().start().await;
    model.then(lattice_e2e::model::Reply::Stream {
        chunks: (0..30).map(|i| lattice_e2e::model::text(&format!("piece {i} "))).collect(),
        pause: Duration::from_secs(1),
    });
    base_url
}

async fn workspace_with_bob(up: &UpProcess) -> (Client, Client, String, String) {
    workspace_with(up, "editor", false).await
}

/// Alice's workspace with Bob in it as `role`, and a thread (restricted to
/// its listed people and the admins, or open).
async fn workspace_with(up: &UpProcess, role: &str, restricted: bool) -> (Client, Client, String, String) {
    let alice = Client::sign_in_as(&up.base, json!({"tenant": "t-rev", "user": "alice"})).await;
    let bob = Client::sign_in_as(&up.base, json!({"tenant": "t-rev", "user": "bob"})).await;
    let ws = alice.ok("POST", "/v1/workspaces", json!({"name": "Ops"})).await["id"].as_str().unwrap().to_owned();
    alice.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "bob", "role": role})).await;
    let thread = json!({"title": "Incident", "restricted": restricted});
    let th = alice.ok("POST", &format!("/v1/workspaces/{ws}/threads"), thread).await["id"].as_str().unwrap().to_owned();
    (alice, bob, ws, th)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_a_member_ends_every_surface_they_hold_within_a_second() {
    let model = slow_model().await;
    let up = UpProcess::start_with(&[("LATTICE_MODEL_BASE_URL", model.as_str()), ("LATTICE_MODEL_NAME", "slow")]).await;
    let (alice, bob, ws, th) = workspace_with_bob(&up).await;
    let mut surfaces = open_surfaces(&up, &bob, &th).await;

    let removed = alice.http.delete(format!("{}/v1/workspaces/{ws}/members/bob", up.base)).bearer_auth(&alice.token).send().await.unwrap();
    let changed = Instant::now();
    assert_eq!(removed.status(), 200);
    ends_everything(&mut surfaces, changed).await;

    // Every read of the thread is now as for a missing id.
    let (status, _) = bob.get(&format!("/v1/threads/{th}")).await.unwrap();
    assert_eq!(status, 404);
    let again = bob
        .http
        .get(format!("{}/v1/threads/{th}/events", up.base))
        .bearer_auth(&bob.token)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);
    // The change is in the log, for whoever administers the workspace.
    let events = alice.ok("GET", &format!("/v1/workspaces/{ws}/events?format=json"), Value::Null).await;
    let removal = events["events"].as_array().unwrap().iter().find(|e| e["type"] == "member_removed").expect("the removal is in the log");
    assert_eq!(removal["payload"]["user"], "bob");
    assert_eq!(removal["actor"]["user"], "alice");
    let members = alice.ok("GET", &format!("/v1/workspaces/{ws}/members"), Value::Null).await;
    assert_eq!(members, json!([{"user": "alice", "role": "admin"}]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demoting_an_admin_ends_the_surfaces_of_a_thread_they_no_longer_see() {
    let model = slow_model().await;
    let up = UpProcess::start_with(&[("LATTICE_MODEL_BASE_URL", model.as_str()), ("LATTICE_MODEL_NAME", "slow")]).await;
    // A restricted thread Bob reads as an admin, and is not listed on.
    let (alice, bob, ws, th) = workspace_with(&up, "admin", true).await;
    let mut surfaces = open_surfaces(&up, &bob, &th).await;

    alice.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "bob", "role": "viewer"})).await;
    let changed = Instant::now();
    ends_everything(&mut surfaces, changed).await;
    let (status, _) = bob.get(&format!("/v1/threads/{th}")).await.unwrap();
    assert_eq!(status, 404, "a viewer not listed on a restricted thread does not see it");
    let (status, list) = bob.get("/v1/workspaces").await.unwrap();
    assert_eq!((status, list[0]["role"].clone()), (200, json!("viewer")), "he is still a member, as a viewer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_out_everywhere_ends_every_surface_and_every_token() {
    let model = slow_model().await;
    let up = UpProcess::start_with(&[("LATTICE_MODEL_BASE_URL", model.as_str()), ("LATTICE_MODEL_NAME", "slow")]).await;
    let (_alice, bob, _ws, th) = workspace_with_bob(&up).await;
    let mut surfaces = open_surfaces(&up, &bob, &th).await;

    let (status, _) = bob.post("/v1/people/bob/sign-out", Value::Null).await.unwrap();
    let changed = Instant::now();
    assert_eq!(status, 200);
    ends_everything(&mut surfaces, changed).await;

    // The token and the MCP session it opened are refused everywhere.
    let (status, body) = bob.get("/v1/workspaces").await.unwrap();
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"]["type"], "Unauthorized");
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let r = in_session(&bob, &surfaces.session, &ping).await;
    assert_eq!(r.status(), 401);
    assert!(r.headers().contains_key("www-authenticate"));
    // Signing in again gives a token that works, and no old session.
    let fresh = Client::sign_in_as(&up.base, json!({"tenant": "t-rev", "user": "bob"})).await;
    let (status, _) = fresh.get("/v1/workspaces").await.unwrap();
    assert_eq!(status, 200);
    let r = in_session(&fresh, &surfaces.session, &ping).await;
    assert_eq!(r.status(), 404, "the session ended with the sign-out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scim_deactivation_ends_every_surface_and_every_token() {
    let model = slow_model().await;
    let up = UpProcess::start_with(&[("LATTICE_MODEL_BASE_URL", model.as_str()), ("LATTICE_MODEL_NAME", "slow")]).await;
    // The company's SCIM client provisions Bob; he signs in as himself.
    let root = Client::sign_in_as(&up.base, json!({"tenant": "t-rev", "user": "root", "role": "tenant_admin"})).await;
    let scim = root.ok("POST", "/v1/scim-tokens", Value::Null).await["token"].as_str().unwrap().to_owned();
    let scim_request = |method: reqwest::Method, path: &str, body: Value| {
        root.http
            .request(method, format!("{}/scim/v2{path}", up.base))
            .bearer_auth(&scim)
            .header("content-type", "application/scim+json")
            .body(body.to_string())
            .send()
    };
    let user = json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "bob", "displayName": "Bob", "active": true});
    let made = scim_request(reqwest::Method::POST, "/Users", user).await.unwrap();
    assert_eq!(made.status(), 201, "{}", made.text().await.unwrap());
    let (_alice, bob, _ws, th) = workspace_with_bob(&up).await;
    let mut surfaces = open_surfaces(&up, &bob, &th).await;

    let off =
        json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "Replace", "path": "active", "value": "False"}]});
    let patched = scim_request(reqwest::Method::PATCH, "/Users/bob", off).await.unwrap();
    let changed = Instant::now();
    assert_eq!(patched.status(), 200, "{}", patched.text().await.unwrap());
    ends_everything(&mut surfaces, changed).await;

    // Every token of his is refused, a new one too, until he is active again.
    let (status, body) = bob.get("/v1/workspaces").await.unwrap();
    assert_eq!(status, 401, "{body}");
    assert!(body["error"]["reason"].as_str().unwrap().contains("deactivated"), "{body}");
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    assert_eq!(in_session(&bob, &surfaces.session, &ping).await.status(), 401);
    let fresh = Client::sign_in_as(&up.base, json!({"tenant": "t-rev", "user": "bob"})).await;
    assert_eq!(fresh.get("/v1/workspaces").await.unwrap().0, 401, "a deactivated person's new token is refused too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_signs_a_person_out_from_a_terminal() {
    let up = UpProcess::start().await;
    let (_alice, bob, _ws, th) = workspace_with_bob(&up).await;
    let sse = bob
        .http
        .get(format!("{}/v1/threads/{th}/events", up.base))
        .bearer_auth(&bob.token)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    let mut sse = Open::of(sse);
    sse.until("thread_created").await;

    let started = Instant::now();
    let out = std::process::Command::new(lattice_e2e::binary())
        .args(["sign-out", "--tenant", "t-rev", "--user", "bob"])
        .env("LATTICE_PROFILE", "local")
        .env("LATTICE_DATABASE_URL", up.database_url())
        .env("LATTICE_AUTH_SECRET", lattice_e2e::SECRET)
        .env("LATTICE_LOG", "warn")
        .env("USER", "oncall")
        .output()
        .expect("running lattice");
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && said.contains("bob of t-rev is signed out everywhere") && said.contains("by cli:oncall"), "{said}");
    // Another process committed it: the server hears of it by its own
    // look at the log, and ends the stream within a second of that.
    sse.ends_within(Duration::from_secs(1)).await;
    assert!(sse.said.iter().any(|e| e.event == "access_lost"), "{:?}", sse.said);
    println!("the stream ended {:?} after the command started", started.elapsed());
    let mut status = 0;
    for _ in 0..20 {
        status = bob.get("/v1/workspaces").await.unwrap().0;
        if status == 401 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, 401, "the token is refused once the sign-out is known");
}
