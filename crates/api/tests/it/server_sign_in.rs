//! Each person's own sign-in to a remote MCP server (R7), against a real
//! authorization server (oidc-provider, npm, as a process) and a server
//! that takes only its tokens: a run's call pauses on "Connect notes", the
//! person signs in through the API's routes and the provider's own pages,
//! the call goes on as them; another person is asked separately; a sign-in
//! begun by one person and brought back by another binds nothing; a call
//! that needs more scope asks again (step-up); disconnecting, and being
//! signed out everywhere, stop the calls at once. No token is ever in what
//! the log keeps in the clear.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::StatusCode;
use lattice_agent::{ChatMessage, Model, ModelError, ModelReply, ModelRequest, Models};
use lattice_core::{TenantRole, ToolCall};
use lattice_testkit::idp::{Account, Client, Idp, IdpSetup, Resource};
use lattice_testkit::protected::{ProtectedServer, ProtectedSetup, free_port, url_on};
use serde_json::{Value, json};

use crate::{App, PORTAL, error_type};

const SECRET: &str = "lattice's client secret at the notes provider";

/// Calls `notes__<tool>` once it is offered; until then, while the person
/// has not signed in, the call that asks them to; then says what the
/// server answered.
struct UsesNotes {
    tool: &'static str,
    arguments: Value,
}

#[async_trait::async_trait]
impl Model for UsesNotes {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        let answered = |id: &str| request.messages.iter().any(|m| matches!(m, ChatMessage::Tool { tool_call_id, .. } if tool_call_id == id));
        let offered = |name: &str| request.tools.iter().any(|t| t.name == name);
        let tool = format!("notes__{}", self.tool);
        let call = |id: &str, name: &str, arguments: Value| ModelReply {
            text: None,
            tool_calls: vec![ToolCall { id: id.into(), name: name.into(), arguments }],
            tokens: None,
        };
        if offered(&tool) && !answered("call") {
            return Ok(call("call", &tool, self.arguments.clone()));
        }
        if offered("notes__lattice_sign_in") && !answered("connect") {
            return Ok(call("connect", "notes__lattice_sign_in", json!({})));
        }
        let said: Vec<String> =
            request.messages.iter().filter_map(|m| if let ChatMessage::Tool { content, .. } = m { Some(content.clone()) } else { None }).collect();
        Ok(ModelReply { text: Some(said.join("\n")), tool_calls: vec![], tokens: None })
    }
}

/// The provider (lattice a confidential client of it, sending people back
/// to the portal's callback) and the notes server, which takes only its
/// tokens for its own URL.
async fn world() -> (Idp, ProtectedServer) {
    let port = free_port();
    let client = Client::confidential("lattice", SECRET).redirect_uri(&format!("{PORTAL}{}", lattice_api::routes::connections::CALLBACK_PATH));
    let setup = IdpSetup::new()
        .client(client)
        .account(Account::new("alice", "alice-password"))
        .account(Account::new("bob", "bob-password"))
        .resource(Resource::new(&url_on(port)).scopes(&["notes:read", "notes:write"]));
    let idp = Idp::start(setup).await;
    let server = ProtectedServer::start_with(ProtectedSetup::new(idp.issuer()).port(port)).await;
    (idp, server)
}

fn servers(server: &ProtectedServer) -> BTreeMap<String, lattice_connect::ServerConfig> {
    servers_with(server, "allow")
}

fn servers_with(server: &ProtectedServer, policy: &str) -> BTreeMap<String, lattice_connect::ServerConfig> {
    let secret = std::env::temp_dir().join(format!("lattice-notes-secret-{}", ulid::Ulid::generate()));
    std::fs::write(&secret, SECRET).unwrap();
    let config = serde_json::from_value(json!({
        "url": server.url(),
        "allow_internal": true,
        "timeout_secs": 10,
        "policy": {"default": policy},
        "sign_in": {"scopes": ["notes:read"], "client_id": "lattice", "client_secret_file": secret},
    }))
    .unwrap();
    BTreeMap::from([("notes".to_owned(), config)])
}

/// The models: each run names the one it uses.
fn models() -> Models {
    Models::default().with("whoami", Arc::new(UsesNotes { tool: "whoami", arguments: json!({}) }), true).with(
        "write",
        Arc::new(UsesNotes { tool: "write_note", arguments: json!({"text": "buy milk"}) }),
        false,
    )
}

/// Starts a run with `model` in `thread` and waits until it pauses or ends.
async fn start_run(app: &App, token: &str, thread: &str, model: &str) -> (String, Value) {
    let started = app.post(&format!("/v1/threads/{thread}/runs"), token, json!({"prompt": "Who am I to the notes server?", "model": model})).await;
    assert_eq!(started.status, StatusCode::OK, "{:?}", started.body);
    let id = started.body["run_id"].as_str().unwrap().to_owned();
    let settled = settled(app, token, &id).await;
    (id, settled)
}

async fn settled(app: &App, token: &str, run: &str) -> Value {
    lattice_testkit::eventually(&format!("run {run} to settle"), async || {
        Some(app.get(&format!("/v1/runs/{run}"), token).await.body)
            .filter(|now| matches!(now["status"].as_str(), Some("paused" | "finished" | "failed")))
    })
    .await
}

async fn answer(app: &App, token: &str, run: &str, tool_call_id: &str, approved: bool) -> Value {
    let body = json!({"tool_call_id": tool_call_id, "answer": {"approved": approved}});
    let answered = app.post(&format!("/v1/runs/{run}/answers"), token, body).await;
    assert_eq!(answered.status, StatusCode::OK, "{:?}", answered.body);
    settled(app, token, run).await
}

/// What the run's pause asks of its person, from the thread's events.
async fn sign_in_asked(app: &App, token: &str, thread: &str, run: &str) -> Value {
    let events = app.get(&format!("/v1/threads/{thread}/events?format=json"), token).await.body;
    let list = events.as_array().or(events["events"].as_array()).cloned().unwrap_or_default();
    let paused = list.iter().rev().find(|e| e["type"] == "run_paused" && e["payload"]["run_id"] == run).unwrap_or_else(|| panic!("{events}"));
    paused["payload"]["requests"][0]["sign_in"].clone()
}

/// Begins `login`'s sign-in to notes through the API, signs in at the
/// provider, and follows the callback: the fragment the chat's page gets.
async fn signed_in_at_provider(app: &App, idp: &Idp, token: &str, login: (&str, &str), scope: Option<&str>) -> BTreeMap<String, String> {
    let body = scope.map(|s| json!({"scope": s})).unwrap_or(json!({}));
    let begun = app.post("/v1/me/connections/notes", token, body).await;
    assert_eq!(begun.status, StatusCode::OK, "{:?}", begun.body);
    let url = begun.body["url"].as_str().unwrap().to_owned();
    let query: BTreeMap<String, String> = url::Url::parse(&url).unwrap().query_pairs().into_owned().collect();
    assert!(url.starts_with(idp.issuer()), "{url}");
    assert_eq!(query["code_challenge_method"], "S256", "{url}");
    assert_eq!(query["client_id"], "lattice");
    assert!(query["resource"].ends_with("/mcp") && query["resource"].starts_with("http://127.0.0.1:"), "RFC 8707: {url}");
    assert!(query["scope"].split(' ').any(|s| s == "notes:read"), "{url}");
    if let Some(scope) = scope {
        assert!(query["scope"].split(' ').any(|s| s == scope), "step-up asks for {scope}: {url}");
    }
    let back = idp.agent().sign_in(&url, login.0, login.1).await.unwrap_or_else(|e| panic!("{e}\n{}", idp.log()));
    let callback = back.strip_prefix(PORTAL).unwrap_or_else(|| panic!("back to the portal: {back}"));
    let landed = app.send("GET", callback, None, None).await;
    assert_eq!(landed.status, StatusCode::SEE_OTHER);
    let chat = landed.location.unwrap();
    let fragment = chat.strip_prefix(&format!("{PORTAL}/settings/connections#")).unwrap_or_else(|| panic!("to the chat's page: {chat}"));
    url::form_urlencoded::parse(fragment.as_bytes()).into_owned().collect()
}

async fn finish(app: &App, token: &str, back: &BTreeMap<String, String>) -> crate::Reply {
    let body = json!({"state": back["state"], "code": back["code"], "iss": back.get("iss")});
    app.post("/v1/connections/finish", token, body).await
}

async fn connected(app: &App, token: &str) -> bool {
    let listed = app.get("/v1/me/connections", token).await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    let notes = listed.body.as_array().unwrap().iter().find(|c| c["server"] == "notes").cloned().unwrap_or_else(|| panic!("{:?}", listed.body));
    notes["connected"].as_bool().unwrap()
}

lattice_testkit::both_backends! {
    async fn each_person_signs_in_to_a_server_with_their_own_account(backend: Backend) {
        let (idp, server) = world().await;
        let app = App::signing_in(backend, &servers(&server), models()).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let bob = app.token("t1", "bob", TenantRole::Member, false).await;
        let (_, thread) = app.workspace_with_thread(&alice).await;
        let (_, bobs_thread) = app.workspace_with_thread(&bob).await;
        assert!(!connected(&app, &alice).await);

        // Not signed in: the model is offered the call that asks, and the
        // run pauses on it, naming the server.
        let (id, paused) = start_run(&app, &alice, &thread, "whoami").await;
        assert_eq!(paused["status"], "paused", "{paused}");
        assert_eq!(paused["requests"][0]["tool_name"], "notes__lattice_sign_in");
        assert_eq!(sign_in_asked(&app, &alice, &thread, &id).await, json!({"server": "notes"}));

        // A sign-in Alice began, brought back by Bob: refused exactly as one
        // that does not exist (nothing tells him it does), and used up.
        let hers = signed_in_at_provider(&app, &idp, &alice, ("alice", "alice-password"), None).await;
        let stolen = finish(&app, &bob, &hers).await;
        let never = app.post("/v1/connections/finish", &bob, json!({"state": "never-begun", "code": "x"})).await;
        assert_eq!((stolen.status, &stolen.body), (never.status, &never.body));
        assert_eq!(stolen.status, StatusCode::CONFLICT, "{:?}", stolen.body);
        assert!(!connected(&app, &bob).await);
        let late = finish(&app, &alice, &hers).await;
        assert_eq!(error_type(&late), "InvalidState", "{:?}", late.body);

        // Her own: the run goes on, as her, with the token meant for it.
        let hers = signed_in_at_provider(&app, &idp, &alice, ("alice", "alice-password"), None).await;
        let done = finish(&app, &alice, &hers).await;
        assert_eq!(done.status, StatusCode::OK, "{:?}", done.body);
        assert_eq!(done.body["server"], "notes");
        assert!(connected(&app, &alice).await);
        let again = finish(&app, &alice, &hers).await;
        assert_eq!(error_type(&again), "InvalidState", "a code is used once: {:?}", again.body);
        let finished = answer(&app, &alice, &id, "connect", true).await;
        assert_eq!(finished["status"], "finished", "{finished}");
        let seen = server.seen().await;
        assert!(seen["subjects"]["alice"]["requests"].as_u64().unwrap() > 0, "{seen}");
        assert_eq!(seen["subjects"]["alice"]["scopes"], json!(["notes:read"]), "{seen}");
        assert!(seen["subjects"].get("bob").is_none(), "{seen}");

        // Bob is asked on his own, though Alice is signed in.
        let (_, his) = start_run(&app, &bob, &bobs_thread, "whoami").await;
        assert_eq!(his["status"], "paused", "{his}");
        assert_eq!(his["requests"][0]["tool_name"], "notes__lattice_sign_in");

        // A call that needs more than she granted asks again, for that
        // scope; signed in for it, the same call goes on.
        let (id, paused) = start_run(&app, &alice, &thread, "write").await;
        assert_eq!(paused["status"], "paused", "{paused}");
        assert_eq!(paused["requests"][0]["tool_name"], "notes__write_note");
        let asked = sign_in_asked(&app, &alice, &thread, &id).await;
        assert_eq!(asked["server"], "notes");
        let scope = asked["scope"].as_str().unwrap_or_else(|| panic!("the scope the server wants: {asked}"));
        assert!(scope.split(' ').any(|s| s == "notes:write"), "{asked}");
        let more = signed_in_at_provider(&app, &idp, &alice, ("alice", "alice-password"), Some("notes:write")).await;
        assert_eq!(finish(&app, &alice, &more).await.status, StatusCode::OK);
        let finished = answer(&app, &alice, &id, "call", true).await;
        assert_eq!(finished["status"], "finished", "{finished}");
        let seen = server.seen().await;
        let written: u64 = seen["sessions"].as_object().unwrap().values().filter(|s| s["sub"] == "alice").filter_map(|s| s["notes"].as_u64()).sum();
        assert_eq!(written, 1, "the note was written in her session: {seen}");

        // Disconnected: the next call asks again at once; ending it twice is NotFound.
        let ended = app.send("DELETE", "/v1/me/connections/notes", Some(&alice), None).await;
        assert_eq!(ended.status, StatusCode::NO_CONTENT, "{:?}", ended.body);
        assert!(!connected(&app, &alice).await);
        let again = app.send("DELETE", "/v1/me/connections/notes", Some(&alice), None).await;
        assert_eq!(again.status, StatusCode::NOT_FOUND);
        let (_, paused) = start_run(&app, &alice, &thread, "whoami").await;
        assert_eq!(paused["requests"][0]["tool_name"], "notes__lattice_sign_in", "{paused}");

        // Signed out everywhere: her sign-ins to servers go with the rest.
        let hers = signed_in_at_provider(&app, &idp, &alice, ("alice", "alice-password"), None).await;
        assert_eq!(finish(&app, &alice, &hers).await.status, StatusCode::OK);
        let admin = app.token("t1", "ada", TenantRole::TenantAdmin, false).await;
        let out = app.post("/v1/people/alice/sign-out", &admin, json!({})).await;
        assert!(out.status.is_success(), "{:?}", out.body);
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        assert!(!connected(&app, &alice).await);

        // What the log shows in the clear holds no token.
        let events = app.get(&format!("/v1/threads/{thread}/events?format=json"), &alice).await.body.to_string();
        assert!(!events.contains("eyJ"), "a JWT in the thread's events");
    }
}

lattice_testkit::both_backends! {
    async fn a_sign_in_is_begun_only_for_an_offered_server_that_takes_one(backend: Backend) {
        let (_idp, server) = world().await;
        let app = App::signing_in(backend, &servers(&server), models()).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let unknown = app.post("/v1/me/connections/nowhere", &alice, json!({})).await;
        assert_eq!(unknown.status, StatusCode::NOT_FOUND);
        let bad = app.post("/v1/me/connections/notes", &alice, json!({"scope": "notes:read \"quoted\""})).await;
        assert_eq!(error_type(&bad), "ValidationFailed", "{:?}", bad.body);
        let many = app.post("/v1/me/connections/notes", &alice, json!({"scope": vec!["s"; 33].join(" ")})).await;
        assert_eq!(error_type(&many), "ValidationFailed", "{:?}", many.body);
        let extra = app.post("/v1/me/connections/notes", &alice, json!({"return_to": "https://evil.example"})).await;
        assert_eq!(error_type(&extra), "ValidationFailed", "{:?}", extra.body);
        let unknown_state = app.post("/v1/connections/finish", &alice, json!({"state": "nope", "code": "x"})).await;
        assert_eq!(error_type(&unknown_state), "InvalidState", "{:?}", unknown_state.body);
        let long = app.post("/v1/connections/finish", &alice, json!({"state": "s".repeat(2049), "code": "x"})).await;
        assert_eq!(error_type(&long), "ValidationFailed", "{:?}", long.body);
        let anonymous = app.send("GET", "/v1/me/connections", None, None).await;
        assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);

        // Turned off for the tenant: no sign-in begins.
        let ops = app.token("t1", "olga", TenantRole::DeploymentAdmin, false).await;
        let off = app.send_put("/v1/integrations/deployment/mcp:notes", &ops, json!({"state": "off", "reason": "review"})).await;
        assert_eq!(off.status, StatusCode::OK, "{:?}", off.body);
        let refused = app.post("/v1/me/connections/notes", &alice, json!({})).await;
        assert_eq!(error_type(&refused), "NotEnabled", "{:?}", refused.body);
    }
}

lattice_testkit::both_backends! {
    async fn a_call_put_to_the_person_waits_again_for_a_sign_in_then_is_put_again(backend: Backend) {
        let (idp, server) = world().await;
        let app = App::signing_in(backend, &servers_with(&server, "ask"), models()).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (_, thread) = app.workspace_with_thread(&alice).await;

        // Connected first; then the call itself is put to her, as the policy says.
        let (id, paused) = start_run(&app, &alice, &thread, "whoami").await;
        assert_eq!(paused["requests"][0]["tool_name"], "notes__lattice_sign_in", "{paused}");
        assert_eq!(paused["requests"][0]["sign_in"], json!({"server": "notes"}), "the run's view says it is a sign-in: {paused}");
        let hers = signed_in_at_provider(&app, &idp, &alice, ("alice", "alice-password"), None).await;
        assert_eq!(finish(&app, &alice, &hers).await.status, StatusCode::OK);
        let asked = answer(&app, &alice, &id, "connect", true).await;
        assert_eq!(asked["status"], "paused", "{asked}");
        assert_eq!(asked["requests"].as_array().map(|r| r.iter().filter(|r| r["answered_by"].is_null()).count()), Some(1), "{asked}");
        let open = asked["requests"].as_array().unwrap().iter().find(|r| r["answered_by"].is_null()).unwrap().clone();
        assert_eq!((open["tool_name"].clone(), open.get("sign_in").cloned()), (json!("notes__whoami"), None), "{asked}");
        assert_eq!(answer(&app, &alice, &id, "call", true).await["status"], "finished");

        // Approved, the call needs more scope: the same call waits again,
        // for the sign-in, then is put to her again, then is made.
        let (id, paused) = start_run(&app, &alice, &thread, "write").await;
        assert_eq!((paused["requests"][0]["tool_name"].clone(), paused["requests"][0].get("sign_in").cloned()), (json!("notes__write_note"), None));
        let again = answer(&app, &alice, &id, "call", true).await;
        assert_eq!(again["status"], "paused", "{again}");
        let request = &again["requests"][0];
        assert!(request["answered_by"].is_null(), "the request begins anew: {again}");
        assert_eq!(request["sign_in"]["server"], "notes", "{again}");
        assert!(request["sign_in"]["scope"].as_str().is_some_and(|s| s.split(' ').any(|s| s == "notes:write")), "{again}");
        let more = signed_in_at_provider(&app, &idp, &alice, ("alice", "alice-password"), Some("notes:write")).await;
        assert_eq!(finish(&app, &alice, &more).await.status, StatusCode::OK);
        let put_again = answer(&app, &alice, &id, "call", true).await;
        assert_eq!(put_again["status"], "paused", "a word on the sign-in is not one on the call: {put_again}");
        assert!(put_again["requests"][0].get("sign_in").is_none(), "{put_again}");
        assert_eq!(answer(&app, &alice, &id, "call", true).await["status"], "finished");
        let seen = server.seen().await;
        let written: u64 = seen["sessions"].as_object().unwrap().values().filter(|s| s["sub"] == "alice").filter_map(|s| s["notes"].as_u64()).sum();
        assert_eq!(written, 1, "{seen}");
    }
}
