//! The access suite (issue 42): every `/v1` route of the OpenAPI document
//! against every kind of caller, each answer computed from the one policy
//! (`lattice_core::policy`: `thread_role`, `allows`, `archives`), never
//! written by hand per cell.
//!
//! The table below holds one entry per (method, path) of the document,
//! saying what the route is as far as access goes: the `Action` it needs
//! and what it acts on, or which rule of its own it follows where the
//! policy has no say (a token, the caller's own things, a level's admins).
//! A route of the document without an entry fails the suite, and so does
//! an entry whose route is gone.
//!
//! For each entry and each principal: no role on the target → 404, byte for
//! byte what a made-up id of the same shape answers; a role the policy
//! refuses → 403 `Forbidden`; a role it allows → an answer that is not an
//! access answer (2xx, or 409/422/423 from the body or the state). Another
//! tenant → 404 as for a missing id; a signed-out token → 401. Every case
//! (an entry on one target) gets a fresh App and fixture, and its refused
//! callers go before its allowed ones, so one caller's success never
//! changes another's answer.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use lattice_core::policy::{self, Action};
use lattice_core::{Role, TenantRole};
use lattice_ui::app_policy::{GET_STATE, SET_STATE, SUBMIT};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::App;

/// Cells where the server disagrees with the policy and the fix lies outside
/// the files this suite owns: (method, path, case, target, principal, why). Each is
/// reported, never silently passed: a cell listed here that agrees with the
/// policy again fails the suite, so that the list only ever shrinks.
const KNOWN_GAPS: &[(&str, &str, &str, &str, &str, &str)] = &[
    // None: a cell that disagrees with the policy goes here, with why, until
    // the server is fixed (and a listed gap that agrees fails the suite).
];

// ---------------------------------------------------------------------------
// The principals.

/// One kind of caller, and what it holds once the fixture is built: the
/// inputs of `policy::thread_role`.
#[derive(Debug, Clone, Copy)]
struct Who {
    /// What the reports call it.
    name: &'static str,
    user: &'static str,
    tenant: &'static str,
    tenant_role: TenantRole,
    agent: bool,
    /// Its role in the workspace (after the fixture's changes).
    member: Option<Role>,
    /// How it is listed on the open thread, and on the restricted one.
    open: Option<Role>,
    restricted: Option<Role>,
    /// Its token was issued before a sign-out.
    signed_out: bool,
}

const fn who(name: &'static str, user: &'static str, member: Option<Role>, open: Option<Role>, restricted: Option<Role>) -> Who {
    Who { name, user, tenant: "t1", tenant_role: TenantRole::Member, agent: false, member, open, restricted, signed_out: false }
}

const OWNER: usize = 0;

/// The maker of the second workspace, W2 (t1), the only principal in it
/// besides the tenant admin.
const OTHER_WS_ADMIN: &str = "owa";

const PRINCIPALS: [Who; 16] = [
    // The workspace's creator: its admin, and as the restricted thread's
    // starter listed on it as editor.
    who("workspace admin", "ada", Some(Role::Admin), None, Some(Role::Editor)),
    // Listed on the restricted thread as editor too.
    who("editor", "eve", Some(Role::Editor), None, Some(Role::Editor)),
    who("respondent", "rob", Some(Role::Respondent), None, None),
    who("viewer", "vic", Some(Role::Viewer), None, None),
    // Added as admin, then as viewer.
    who("demoted admin", "dan", Some(Role::Viewer), None, None),
    // Was an editor listed on the restricted thread, then removed.
    who("removed member", "rem", None, None, None),
    who("listed viewer", "liv", None, None, Some(Role::Viewer)),
    who("listed respondent", "lea", None, None, Some(Role::Respondent)),
    who("unlisted editor", "ued", Some(Role::Editor), None, None),
    // Outside the workspace; the open thread shared with it read-only.
    who("outsider with a share", "out", None, Some(Role::Viewer), None),
    Who { agent: true, ..who("agent", "bot", Some(Role::Editor), None, None) },
    Who { tenant_role: TenantRole::TenantAdmin, ..who("tenant admin", "tad", None, None, None) },
    Who { tenant: "t2", tenant_role: TenantRole::TenantAdmin, ..who("other tenant's admin", "mal", None, None, None) },
    // A plain member of another tenant, named as t1's editor (listed on
    // the restricted thread): a name is no way in.
    Who { tenant: "t2", ..who("other tenant's member", "eve", None, None, None) },
    // Of the same tenant, in nothing of W: it made the second workspace
    // (W2), whose things the body probes name.
    who("member of another workspace", OTHER_WS_ADMIN, None, None, None),
    // Was an editor; signed out everywhere, then uses its old token.
    Who { signed_out: true, ..who("signed out", "sox", Some(Role::Editor), None, None) },
];

/// Fixture people who are no principal: the one the member and listing
/// routes remove and others sign out (user, workspace role, listing on the
/// open thread, listing on the restricted one), and the agent that makes
/// the apps.
const ZED: (&str, Role, Role, Role) = ("zed", Role::Viewer, Role::Respondent, Role::Viewer);
const MAKER: &str = "maker";

impl Who {
    fn principal(&self) -> lattice_core::Principal {
        lattice_testkit::principal(self.tenant, self.user, self.tenant_role, self.agent)
    }

    /// Its role on a thread of the workspace, by the policy; another
    /// tenant sees nothing of this one.
    fn on_thread(&self, which: Which) -> Option<Role> {
        if self.tenant != "t1" {
            return None;
        }
        let restricted = which == Which::Restricted;
        policy::thread_role(self.tenant_role, self.member, restricted, if restricted { self.restricted } else { self.open })
    }

    /// Its role in the workspace: a tenant admin is admin of every one of
    /// its tenant's.
    fn in_workspace(&self) -> Option<Role> {
        if self.tenant != "t1" {
            return None;
        }
        if self.tenant_role == TenantRole::TenantAdmin { Some(Role::Admin) } else { self.member }
    }

    /// Its role towards the switches that govern the workspace: its
    /// workspace role, or a reader's when it is listed on one of its
    /// threads (docs/ACCESS.md: they govern what the thread shows).
    fn on_switches(&self) -> Option<Role> {
        self.in_workspace().or_else(|| (self.tenant == "t1" && (self.open.is_some() || self.restricted.is_some())).then_some(Role::Viewer))
    }
}

// ---------------------------------------------------------------------------
// The table.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Open,
    Restricted,
}

/// What a route acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum On {
    /// Nothing of the workspace: the caller itself, or a route needing no token.
    Nothing,
    Thread(Which),
    /// An owner's dashboard in the thread.
    Artifact(Which),
    /// An agent's app in the thread (mini apps on).
    App(Which),
    /// An owner's run in the thread, paused on an ask_form.
    Run(Which),
    Workspace,
    /// The switches that govern the workspace.
    Switches,
    /// Another person of the caller's tenant.
    Person,
    /// The tenant t1's level of the switch.
    TenantLevel,
    /// The deployment's level of the switch.
    DeploymentLevel,
    /// The owner's confirmation of an app's call.
    Confirmation,
    /// An API key of the workspace (its admin made it).
    Key,
    /// A SCIM token of tenant t1 (its admin issued it).
    ScimToken,
}

impl On {
    fn which(self) -> Which {
        match self {
            On::Thread(w) | On::Artifact(w) | On::App(w) | On::Run(w) => w,
            _ => Which::Open,
        }
    }
}

/// How a route is decided.
#[derive(Debug, Clone, Copy)]
enum Rule {
    /// `policy::allows(role on the target, action)`.
    Needs(Action),
    /// `policy::archives(role, authored)`: the artifact is the owner's.
    Archives,
    /// [`Rule::Needs`] for a person's session; an agent's token is refused
    /// before anything is looked up (lattice_app_calls::AppCalls::host_capability:
    /// an agent's views get their capability in an MCP tool result), so its
    /// refusal must tell nothing either: byte for byte a missing id's.
    PeopleOnly(Action),
    /// No token needed.
    NoToken,
    /// Any valid token: the caller's own things.
    Token,
    /// Signing another person out: a tenant admin, for its own tenant's
    /// person of that name (another tenant's is out of reach).
    TenantAdminOfCaller,
    /// The tenant level's admins: its tenant admin; another tenant's level
    /// is as missing (a SCIM token: anyone else is refused blind).
    TenantLevelAdmin,
    /// The deployment level's admins: a deployment admin.
    DeploymentAdmin,
    /// Only the caller who was asked (person or agent alike).
    Asker,
    /// Only the owner, whose resumable upload it is; to anyone else it is
    /// as missing.
    Uploader,
    /// Any valid token (the caller's own list), and what it lists of the
    /// target thread follows `policy::allows(role there, action)`: the
    /// owner's form there and its run's ask_form request, or neither.
    Lists(Action),
    /// A provider's sign-in route where no provider is configured: as
    /// missing to everyone, token or not.
    NoProvider,
    /// A sign-in's one-time code nobody was given: 401 to everyone.
    NoSuchCode,
    /// A redirect to the chat, token or not.
    Redirect,
    /// A connected server nobody here signs in to: as missing to every
    /// valid token.
    NoServer,
    /// A tenant admin (a person), in its own tenant.
    TenantAdmin,
    /// Any valid token of a person; an agent's refused before anything is
    /// looked up.
    PersonToken,
}

type Build = fn(&Ids, &Who, Which) -> (String, Option<Value>);

/// A request whose body (or query) names an id besides its path target:
/// built from the ids of the path (the fixture's) and the ids of the body.
type Probe = fn(&Ids, &Ids, &Who, Which) -> (String, Option<Value>);

/// Where the hidden object a body probe names lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hidden {
    /// On the restricted thread (probed from a case on the open one).
    Restricted,
    /// In the second workspace W2 (of tenant t1).
    W2,
}

impl Hidden {
    /// Whether `w` sees the hidden object at all.
    fn seen_by(self, w: &Who) -> bool {
        match self {
            Hidden::Restricted => w.on_thread(Which::Restricted).is_some(),
            Hidden::W2 => w.tenant == "t1" && (w.user == OTHER_WS_ADMIN || w.tenant_role == TenantRole::TenantAdmin),
        }
    }
}

#[derive(Clone, Copy)]
struct Case {
    what: &'static str,
    on: On,
    rule: Rule,
    build: Build,
    /// The body's id, replaced alone: a hidden object's vs a made-up one,
    /// the path target the fixture's.
    probe: Option<(Probe, &'static [Hidden])>,
}

struct Entry {
    method: &'static str,
    path: &'static str,
    cases: Vec<Case>,
}

fn entry(method: &'static str, path: &'static str, cases: Vec<Case>) -> Entry {
    Entry { method, path, cases }
}

fn one(what: &'static str, on: On, rule: Rule, build: Build) -> Vec<Case> {
    vec![Case { what, on, rule, build, probe: None }]
}

/// The cases, each also probed with its body's id replaced alone.
fn probed(cases: Vec<Case>, probe: Probe, hides: &'static [Hidden]) -> Vec<Case> {
    cases.into_iter().map(|c| Case { probe: Some((probe, hides)), ..c }).collect()
}

/// The same case on the open and on the restricted thread.
fn both(what: &'static str, on: fn(Which) -> On, rule: Rule, build: Build) -> Vec<Case> {
    vec![Case { what, on: on(Which::Open), rule, build, probe: None }, Case { what, on: on(Which::Restricted), rule, build, probe: None }]
}

fn dashboard() -> Value {
    json!({"title": "D", "as_of": "2026-11-29T12:00:00Z", "panels": []})
}

/// An app's call of `tool`, with the capability bound to this caller and
/// the body's app (as its host was given it, maybe before the caller lost
/// access): the path's own, or, probed, another.
fn app_call(ids: &Ids, body: &Ids, w: &Who, which: Which, tool: &str, arguments: Value) -> (String, Option<Value>) {
    let capability = lattice_testkit::authenticator().capability(&w.principal(), body.app(which));
    (format!("/v1/artifacts/{}/calls", ids.app(which)), Some(json!({"tool": tool, "arguments": arguments, "capability": capability})))
}

/// An AG-UI run on the path's thread, its input naming the body's.
fn agui(ids: &Ids, body: &Ids, which: Which) -> (String, Option<Value>) {
    let input = json!({"threadId": body.thread(which), "runId": "agui-1", "messages": [{"id": "m1", "role": "user", "content": "show the dashboard"}],
    "forwardedProps": {"model": "scripted:dashboard"}});
    (format!("/v1/agui/threads/{}", ids.thread(which)), Some(input))
}

/// A key of the body's workspace.
fn key_probe(_: &Ids, body: &Ids, _: &Who, _: Which) -> (String, Option<Value>) {
    ("/v1/api-keys".into(), Some(json!({"name": "ci", "role": "editor", "workspace": body.ws})))
}

fn table() -> Vec<Entry> {
    use Action::*;
    use Rule::*;
    vec![
        entry(
            "POST",
            "/v1/dev/token",
            one("mint a token", On::Nothing, NoToken, |_, _, _| ("/v1/dev/token".into(), Some(json!({"tenant": "t1", "user": "newcomer"})))),
        ),
        entry("GET", "/v1/me", one("who am I", On::Nothing, Token, |_, _, _| ("/v1/me".into(), None))),
        entry("GET", "/v1/auth/providers", one("the providers to sign in with", On::Nothing, NoToken, |_, _, _| ("/v1/auth/providers".into(), None))),
        entry(
            "GET",
            "/v1/auth/oidc/{name}/start",
            one("begin a sign-in", On::Nothing, NoProvider, |_, _, _| ("/v1/auth/oidc/corp/start".into(), None)),
        ),
        entry(
            "GET",
            "/v1/auth/oidc/{name}/callback",
            // Always a redirect to the chat, which says why a sign-in failed.
            one("come back from the provider", On::Nothing, Redirect, |_, _, _| ("/v1/auth/oidc/corp/callback?code=c&state=s".into(), None)),
        ),
        entry(
            "POST",
            "/v1/auth/oidc/{name}/backchannel-logout",
            one("the provider signs someone out", On::Nothing, NoProvider, |_, _, _| ("/v1/auth/oidc/corp/backchannel-logout".into(), None)),
        ),
        entry(
            "POST",
            "/v1/auth/session",
            one("trade a sign-in's code", On::Nothing, NoSuchCode, |_, _, _| ("/v1/auth/session".into(), Some(json!({"code": "never-given"})))),
        ),
        // Allowed: a token that is no sign-in's is refused by the state (409).
        entry("POST", "/v1/auth/renew", one("renew my sign-in", On::Nothing, Token, |_, _, _| ("/v1/auth/renew".into(), None))),
        entry("POST", "/v1/auth/sign-out", one("sign my sign-in out", On::Nothing, Token, |_, _, _| ("/v1/auth/sign-out".into(), None))),
        entry("GET", "/v1/api-keys", one("the keys I may see", On::Nothing, PersonToken, |_, _, _| ("/v1/api-keys".into(), None))),
        entry(
            "POST",
            "/v1/api-keys",
            vec![
                Case {
                    what: "a key of the workspace",
                    on: On::Workspace,
                    rule: PeopleOnly(ManageMembers),
                    build: |ids, _, _| ("/v1/api-keys".into(), Some(json!({"name": "ci", "role": "editor", "workspace": ids.ws}))),
                    probe: Some((key_probe, &[Hidden::W2])),
                },
                Case {
                    what: "a key of the whole tenant",
                    on: On::Nothing,
                    rule: TenantAdmin,
                    build: |_, _, _| ("/v1/api-keys".into(), Some(json!({"name": "ci", "role": "member"}))),
                    probe: None,
                },
            ],
        ),
        entry(
            "DELETE",
            "/v1/api-keys/{id}",
            one("revoke a key of the workspace", On::Key, PeopleOnly(ManageMembers), |ids, _, _| (format!("/v1/api-keys/{}", ids.key), None)),
        ),
        entry("GET", "/v1/scim-tokens", one("the tenant's SCIM tokens", On::Nothing, TenantAdmin, |_, _, _| ("/v1/scim-tokens".into(), None))),
        entry("POST", "/v1/scim-tokens", one("issue a SCIM token", On::Nothing, TenantAdmin, |_, _, _| ("/v1/scim-tokens".into(), None))),
        entry(
            "DELETE",
            "/v1/scim-tokens/{id}",
            one("revoke the tenant's SCIM token", On::ScimToken, TenantLevelAdmin, |ids, _, _| (format!("/v1/scim-tokens/{}", ids.scim_token), None)),
        ),
        entry("GET", "/v1/me/waiting", both("what waits for my answer", On::Run, Lists(Submit), |_, _, _| ("/v1/me/waiting".into(), None))),
        entry("GET", "/v1/me/connections", one("the servers I sign in to", On::Nothing, Token, |_, _, _| ("/v1/me/connections".into(), None))),
        entry(
            "POST",
            "/v1/me/connections/{server}",
            one("begin my sign-in to a server", On::Nothing, NoServer, |_, _, _| ("/v1/me/connections/notes".into(), Some(json!({})))),
        ),
        entry(
            "DELETE",
            "/v1/me/connections/{server}",
            one("end my sign-in to a server", On::Nothing, NoServer, |_, _, _| ("/v1/me/connections/notes".into(), None)),
        ),
        entry(
            "GET",
            "/v1/connections/callback",
            // Always a redirect to the chat's page, which finishes it.
            one("come back from a server's sign-in", On::Nothing, Redirect, |_, _, _| ("/v1/connections/callback?code=c&state=s".into(), None)),
        ),
        entry(
            "POST",
            "/v1/connections/finish",
            // A state nobody began: 409 to every valid token.
            one("finish my sign-in to a server", On::Nothing, Token, |_, _, _| {
                ("/v1/connections/finish".into(), Some(json!({"state": "never-begun", "code": "c"})))
            }),
        ),
        entry(
            "GET",
            "/v1/mcp-client-metadata.json",
            one("lattice as a client of servers' sign-ins", On::Nothing, NoToken, |_, _, _| ("/v1/mcp-client-metadata.json".into(), None)),
        ),
        entry("GET", "/v1/me/waiting/stream", one("follow it (SSE)", On::Nothing, Token, |_, _, _| ("/v1/me/waiting/stream".into(), None))),
        entry("GET", "/v1/workspaces", one("my workspaces", On::Nothing, Token, |_, _, _| ("/v1/workspaces".into(), None))),
        entry(
            "POST",
            "/v1/workspaces",
            one("a workspace of my own", On::Nothing, Token, |_, _, _| ("/v1/workspaces".into(), Some(json!({"name": "Mine"})))),
        ),
        entry(
            "GET",
            "/v1/workspaces/{ws}/members",
            one("list the members", On::Workspace, Needs(ManageMembers), |ids, _, _| (format!("/v1/workspaces/{}/members", ids.ws), None)),
        ),
        entry(
            "POST",
            "/v1/workspaces/{ws}/members",
            one("add a member", On::Workspace, Needs(ManageMembers), |ids, _, _| {
                (format!("/v1/workspaces/{}/members", ids.ws), Some(json!({"user": "newbie", "role": "viewer"})))
            }),
        ),
        entry(
            "DELETE",
            "/v1/workspaces/{ws}/members/{user}",
            one("remove a member", On::Workspace, Needs(ManageMembers), |ids, _, _| (format!("/v1/workspaces/{}/members/{}", ids.ws, ZED.0), None)),
        ),
        entry(
            "POST",
            "/v1/people/{user}/sign-out",
            vec![
                Case {
                    what: "sign another person out",
                    on: On::Person,
                    rule: TenantAdminOfCaller,
                    build: |_, _, _| (format!("/v1/people/{}/sign-out", ZED.0), None),
                    probe: None,
                },
                Case {
                    what: "sign oneself out",
                    on: On::Nothing,
                    rule: Token,
                    build: |_, w, _| (format!("/v1/people/{}/sign-out", w.user), None),
                    probe: None,
                },
            ],
        ),
        entry(
            "GET",
            "/v1/workspaces/{ws}/threads",
            one("list the workspace's threads", On::Workspace, Needs(Read), |ids, _, _| (format!("/v1/workspaces/{}/threads", ids.ws), None)),
        ),
        entry(
            "POST",
            "/v1/workspaces/{ws}/threads",
            one("start a thread", On::Workspace, Needs(StartThread), |ids, _, _| {
                (format!("/v1/workspaces/{}/threads", ids.ws), Some(json!({"title": "New"})))
            }),
        ),
        entry(
            "GET",
            "/v1/workspaces/{ws}/events",
            one("follow the workspace (SSE)", On::Workspace, Needs(Read), |ids, _, _| (format!("/v1/workspaces/{}/events", ids.ws), None)),
        ),
        entry(
            "POST",
            "/v1/workspaces/{ws}/events",
            one("publish an app event", On::Workspace, Needs(PublishEvent), |ids, _, _| {
                (format!("/v1/workspaces/{}/events", ids.ws), Some(json!({"namespace": "ops", "name": "ping", "data": {}})))
            }),
        ),
        entry("GET", "/v1/threads", one("the threads listed for me", On::Nothing, Token, |_, _, _| ("/v1/threads".into(), None))),
        entry(
            "GET",
            "/v1/threads/{th}",
            both("read the thread", On::Thread, Needs(Read), |ids, _, which| (format!("/v1/threads/{}", ids.thread(which)), None)),
        ),
        entry(
            "GET",
            "/v1/threads/{th}/members",
            both("list who is listed", On::Thread, Needs(ManageListings), |ids, _, which| {
                (format!("/v1/threads/{}/members", ids.thread(which)), None)
            }),
        ),
        entry(
            "POST",
            "/v1/threads/{th}/members",
            both("list someone on the thread", On::Thread, Needs(ManageListings), |ids, _, which| {
                (format!("/v1/threads/{}/members", ids.thread(which)), Some(json!({"user": "newbie", "role": "viewer"})))
            }),
        ),
        entry(
            "DELETE",
            "/v1/threads/{th}/members/{user}",
            both("take a listing off", On::Thread, Needs(ManageListings), |ids, _, which| {
                (format!("/v1/threads/{}/members/{}", ids.thread(which), ZED.0), None)
            }),
        ),
        entry(
            "PUT",
            "/v1/threads/{th}/read",
            probed(
                both("mark the thread read", On::Thread, Needs(Read), |ids, _, which| {
                    (format!("/v1/threads/{}/read", ids.thread(which)), Some(json!({"seq": 1})))
                }),
                // The seq of an envelope of a thread the caller does not see.
                |ids, body, _, which| (format!("/v1/threads/{}/read", ids.thread(which)), Some(json!({"seq": body.seq(which)}))),
                &[Hidden::Restricted, Hidden::W2],
            ),
        ),
        entry(
            "POST",
            "/v1/threads/{th}/messages",
            both("post a message", On::Thread, Needs(Post), |ids, _, which| {
                (format!("/v1/threads/{}/messages", ids.thread(which)), Some(json!({"text": "hi"})))
            }),
        ),
        entry(
            "POST",
            "/v1/threads/{th}/files",
            both("upload a file", On::Thread, Needs(Submit), |ids, _, which| {
                (format!("/v1/threads/{}/files?name=note.txt", ids.thread(which)), Some(json!("a note")))
            }),
        ),
        entry(
            "POST",
            "/v1/threads/{th}/uploads",
            both("begin a resumable upload", On::Thread, Needs(Submit), |ids, _, which| {
                (format!("/v1/threads/{}/uploads", ids.thread(which)), Some(json!({"name": "note.txt", "size": 4})))
            }),
        ),
        entry(
            "GET",
            "/v1/uploads/{id}",
            both("where a resumable upload stands", On::Thread, Uploader, |ids, _, which| (format!("/v1/uploads/{}", ids.upload(which)), None)),
        ),
        entry(
            "PUT",
            "/v1/uploads/{id}",
            // Its first bytes (`"a"`, three): then 409 (it holds them); never the whole.
            both("a part of a resumable upload", On::Thread, Uploader, |ids, _, which| {
                (format!("/v1/uploads/{}?offset=0", ids.upload(which)), Some(json!("a")))
            }),
        ),
        entry(
            "GET",
            "/v1/workspaces/{ws}/checkpoints",
            one("the workspace's signed checkpoints", On::Workspace, Needs(Read), |ids, _, _| {
                (format!("/v1/workspaces/{}/checkpoints", ids.ws), None)
            }),
        ),
        entry(
            "GET",
            "/v1/workspaces/{ws}/checkpoints/latest",
            // Nothing sealed here (no sealer runs in this suite): 409, allowed.
            one("the workspace's newest checkpoint", On::Workspace, Needs(Read), |ids, _, _| {
                (format!("/v1/workspaces/{}/checkpoints/latest", ids.ws), None)
            }),
        ),
        entry("GET", "/v1/checkpoint-key", one("the seal's public key", On::Nothing, NoToken, |_, _, _| ("/v1/checkpoint-key".into(), None))),
        entry(
            "GET",
            "/v1/receipts/{seq}",
            // Not sealed here (no sealer runs in this suite): 409, allowed.
            both("an envelope's receipt", On::Thread, Needs(Read), |ids, _, which| (format!("/v1/receipts/{}", ids.seq(which)), None)),
        ),
        entry(
            "GET",
            "/v1/files/{id}",
            both("read a file's reference", On::Thread, Needs(Read), |ids, _, which| (format!("/v1/files/{}", ids.file(which)), None)),
        ),
        entry(
            "POST",
            "/v1/files/{id}/link",
            both("a link to a file's bytes", On::Thread, Needs(Read), |ids, _, which| {
                (format!("/v1/files/{}/link", ids.file(which)), Some(json!({})))
            }),
        ),
        entry(
            "GET",
            "/v1/files/{id}/thumbnail",
            both("a preview of an image", On::Thread, Needs(Read), |ids, _, which| (format!("/v1/files/{}/thumbnail", ids.file(which)), None)),
        ),
        entry(
            "POST",
            "/v1/files/{id}/erase",
            both("erase a file's bytes", On::Thread, Needs(Administer), |ids, _, which| {
                (format!("/v1/files/{}/erase", ids.file(which)), Some(json!({"reason": "asked to"})))
            }),
        ),
        entry(
            "GET",
            "/v1/threads/{th}/artifacts",
            both("list the artifacts", On::Thread, Needs(Read), |ids, _, which| (format!("/v1/threads/{}/artifacts", ids.thread(which)), None)),
        ),
        entry(
            "POST",
            "/v1/threads/{th}/artifacts",
            [
                both("create a dashboard", On::Thread, Needs(Author), |ids, _, which| {
                    (format!("/v1/threads/{}/artifacts", ids.thread(which)), Some(json!({"kind": "dashboard", "data": dashboard()})))
                }),
                probed(
                    both("submit to the owner's form", On::Thread, Needs(Submit), |ids, _, which| {
                        let data = json!({"form_id": ids.form(which), "form_version": 1, "values": {"ok": true}});
                        (format!("/v1/threads/{}/artifacts", ids.thread(which)), Some(json!({"kind": "submission", "data": data})))
                    }),
                    // A form of a thread the caller does not see.
                    |ids, body, _, which| {
                        let data = json!({"form_id": body.form(which), "form_version": 1, "values": {"ok": true}});
                        (format!("/v1/threads/{}/artifacts", ids.thread(which)), Some(json!({"kind": "submission", "data": data})))
                    },
                    &[Hidden::Restricted, Hidden::W2],
                ),
            ]
            .concat(),
        ),
        entry(
            "GET",
            "/v1/threads/{th}/events",
            both("follow the thread (SSE)", On::Thread, Needs(Read), |ids, _, which| (format!("/v1/threads/{}/events", ids.thread(which)), None)),
        ),
        entry(
            "POST",
            "/v1/threads/{th}/runs",
            both("start an agent turn", On::Thread, Needs(Run), |ids, _, which| {
                (format!("/v1/threads/{}/runs", ids.thread(which)), Some(json!({"prompt": "go", "model": "scripted:dashboard"})))
            }),
        ),
        entry(
            "GET",
            "/v1/threads/{th}/offers",
            both("list what connected servers offer", On::Thread, Needs(Run), |ids, _, which| {
                (format!("/v1/threads/{}/offers", ids.thread(which)), None)
            }),
        ),
        entry(
            "POST",
            "/v1/threads/{th}/offers/complete",
            both("complete a server's prompt argument", On::Thread, Needs(Run), |ids, _, which| {
                let asked = json!({"server": "none", "prompt": "p", "argument": "a", "value": ""});
                (format!("/v1/threads/{}/offers/complete", ids.thread(which)), Some(asked))
            }),
        ),
        entry("GET", "/v1/runs/{run}", both("read the run", On::Run, Needs(Read), |ids, _, which| (format!("/v1/runs/{}", ids.run(which)), None))),
        entry(
            "POST",
            "/v1/runs/{run}/answers",
            both("answer its ask_form", On::Run, Needs(Submit), |ids, _, which| {
                let answer = json!({"date": "2026-11-29", "severity": "high"});
                (format!("/v1/runs/{}/answers", ids.run(which)), Some(json!({"tool_call_id": ASK_FORM_CALL, "answer": answer})))
            }),
        ),
        entry(
            "POST",
            "/v1/runs/{run}/cancel",
            both("cancel the run", On::Run, Needs(Run), |ids, _, which| (format!("/v1/runs/{}/cancel", ids.run(which)), None)),
        ),
        entry(
            "POST",
            "/v1/agui/threads/{th}",
            probed(
                both("start an AG-UI run (SSE)", On::Thread, Needs(Run), |ids, _, which| agui(ids, ids, which)),
                // The input's threadId: a thread the caller does not see.
                |ids, body, _, which| agui(ids, body, which),
                &[Hidden::Restricted, Hidden::W2],
            ),
        ),
        entry(
            "GET",
            "/v1/artifacts/{id}",
            both("read the dashboard", On::Artifact, Needs(Read), |ids, _, which| (format!("/v1/artifacts/{}", ids.dashboard(which)), None)),
        ),
        entry(
            "PATCH",
            "/v1/artifacts/{id}",
            both("edit the dashboard", On::Artifact, Needs(Author), |ids, _, which| {
                let patch = json!({"expected_version": 1, "patch": [{"op": "replace", "path": "/title", "value": "E"}]});
                (format!("/v1/artifacts/{}", ids.dashboard(which)), Some(patch))
            }),
        ),
        entry(
            "POST",
            "/v1/artifacts/{id}/archive",
            both("archive the owner's dashboard", On::Artifact, Archives, |ids, _, which| {
                (format!("/v1/artifacts/{}/archive", ids.dashboard(which)), Some(json!({})))
            }),
        ),
        entry(
            "PUT",
            "/v1/artifacts/{id}/context",
            both("tell the agent what the app shows", On::App, Needs(TellContext), |ids, _, which| {
                (format!("/v1/artifacts/{}/context", ids.app(which)), Some(json!({"text": "the count is 1"})))
            }),
        ),
        entry(
            "POST",
            "/v1/artifacts/{id}/capability",
            both("the app's capability for the chat host", On::App, PeopleOnly(Read), |ids, _, which| {
                (format!("/v1/artifacts/{}/capability", ids.app(which)), None)
            }),
        ),
        entry(
            "GET",
            "/v1/artifacts/{id}/calls",
            both("the app's calls (audit)", On::App, Needs(Administer), |ids, _, which| (format!("/v1/artifacts/{}/calls", ids.app(which)), None)),
        ),
        entry(
            "POST",
            "/v1/artifacts/{id}/calls",
            [
                probed(
                    both("the app reads its state", On::App, Needs(Read), |ids, who, which| app_call(ids, ids, who, which, GET_STATE, json!({}))),
                    // A capability bound to an app the caller does not see.
                    |ids, body, who, which| app_call(ids, body, who, which, GET_STATE, json!({})),
                    &[Hidden::Restricted],
                ),
                // Changing an app (its state, its submissions) is changing an
                // artifact: lattice_ui::checks::writes_to_apps.
                both("the app sets its state", On::App, Needs(Author), |ids, who, which| {
                    app_call(ids, ids, who, which, SET_STATE, json!({"patch": [{"op": "replace", "path": "/count", "value": 2}]}))
                }),
                both("the app submits", On::App, Needs(Author), |ids, who, which| {
                    app_call(ids, ids, who, which, SUBMIT, json!({"values": {"rating": 5}}))
                }),
            ]
            .concat(),
        ),
        entry(
            "POST",
            "/v1/app-calls/{confirmation}",
            one("confirm the owner's app call", On::Confirmation, Asker, |ids, _, _| {
                (format!("/v1/app-calls/{}", ids.confirmation), Some(json!({"accept": true})))
            }),
        ),
        entry(
            "GET",
            "/v1/integrations/effective",
            one("the workspace's effective switches", On::Switches, Needs(Read), |ids, _, _| {
                (format!("/v1/integrations/effective?workspace={}", ids.ws), None)
            }),
        ),
        entry(
            "GET",
            "/v1/integrations/effective/stream",
            one("follow them (SSE)", On::Switches, Needs(Read), |ids, _, _| {
                (format!("/v1/integrations/effective/stream?workspace={}", ids.ws), None)
            }),
        ),
        entry(
            "GET",
            "/v1/integrations/audit",
            vec![
                Case {
                    what: "the workspace's switch audit",
                    on: On::Workspace,
                    rule: Needs(Administer),
                    build: |ids, _, _| (format!("/v1/integrations/audit?workspace={}", ids.ws), None),
                    probe: None,
                },
                Case {
                    what: "the audit of what I administer",
                    on: On::Nothing,
                    rule: Token,
                    build: |_, _, _| ("/v1/integrations/audit".into(), None),
                    probe: None,
                },
            ],
        ),
        entry(
            "GET",
            "/v1/integrations/levels",
            one("the levels I administer", On::Nothing, Token, |_, _, _| ("/v1/integrations/levels".into(), None)),
        ),
        entry(
            "GET",
            "/v1/integrations/servers",
            one("the connected servers and their calls where I administer", On::Nothing, Token, |_, _, _| ("/v1/integrations/servers".into(), None)),
        ),
        entry(
            "GET",
            "/v1/integrations/levels/stream",
            one("follow them (SSE)", On::Nothing, Token, |_, _, _| ("/v1/integrations/levels/stream".into(), None)),
        ),
        entry(
            "PUT",
            "/v1/integrations/{level}/{key}",
            vec![
                Case {
                    what: "set the workspace's switch",
                    on: On::Workspace,
                    rule: Needs(Administer),
                    build: |ids, _, _| (format!("/v1/integrations/workspace:{}/ui:forms", ids.ws), Some(json!({"state": "on", "reason": "suite"}))),
                    probe: None,
                },
                Case {
                    what: "set the tenant's switch",
                    on: On::TenantLevel,
                    rule: TenantLevelAdmin,
                    build: |ids, _, _| (format!("/v1/integrations/tenant:{}/ui:forms", ids.tenant), Some(json!({"state": "on", "reason": "suite"}))),
                    probe: None,
                },
                Case {
                    what: "set the deployment's switch",
                    on: On::DeploymentLevel,
                    rule: DeploymentAdmin,
                    build: |_, _, _| ("/v1/integrations/deployment/ui:forms".into(), Some(json!({"state": "on", "reason": "suite"}))),
                    probe: None,
                },
            ],
        ),
    ]
}

// ---------------------------------------------------------------------------
// What the policy expects.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// 401: the token was ended by a sign-out.
    Unauthorized,
    /// 404, byte for byte what a made-up id of the same shape answers.
    Missing,
    /// 403 `Forbidden`.
    Forbidden,
    /// 403 `Forbidden` before anything is looked up: byte for byte what a
    /// made-up id answers, so it tells nothing.
    ForbiddenBlind,
    /// Neither 401, 403 nor 404.
    Allowed,
    /// 303 to the chat, whoever asks: a provider's callback, which tells
    /// the chat why a sign-in failed rather than answering an error.
    Redirected,
}

fn expect(case: &Case, w: &Who) -> Expect {
    use Expect::*;
    match case.rule {
        Rule::NoToken => return Allowed,
        Rule::Redirect => return Redirected,
        Rule::NoProvider => return Missing,
        Rule::NoSuchCode => return Unauthorized,
        _ => {}
    }
    if w.signed_out {
        return Unauthorized;
    }
    let decide = |role: Option<Role>, ok: &dyn Fn(Role) -> bool| match role {
        None => Missing,
        Some(role) if ok(role) => Allowed,
        Some(_) => Forbidden,
    };
    let role = match case.on {
        On::Thread(which) | On::Artifact(which) | On::App(which) | On::Run(which) => w.on_thread(which),
        On::Workspace => w.in_workspace(),
        On::Switches => w.on_switches(),
        On::Key => w.in_workspace(),
        _ => None,
    };
    match case.rule {
        Rule::NoToken | Rule::Redirect | Rule::NoProvider | Rule::NoSuchCode => unreachable!(),
        Rule::NoServer => Missing,
        Rule::TenantAdmin if w.tenant_role == TenantRole::TenantAdmin && !w.agent => Allowed,
        Rule::TenantAdmin => Forbidden,
        Rule::Token | Rule::Lists(_) => Allowed,
        Rule::PersonToken if w.agent => Forbidden,
        Rule::PersonToken => Allowed,
        Rule::Needs(action) => decide(role, &|r| policy::allows(r, action)),
        Rule::Archives => decide(role, &|r| policy::archives(r, false)),
        Rule::PeopleOnly(_) if w.agent => ForbiddenBlind,
        // A key is there only for whoever may list it (a tenant admin, an
        // admin of its workspace): for anyone else, as one never issued.
        Rule::PeopleOnly(action) if matches!(case.on, On::Key) => match decide(role, &|r| policy::allows(r, action)) {
            _ if w.tenant_role == TenantRole::TenantAdmin && w.tenant == "t1" => Allowed,
            Forbidden => Missing,
            other => other,
        },
        Rule::PeopleOnly(action) => decide(role, &|r| policy::allows(r, action)),
        Rule::TenantAdminOfCaller => {
            if w.tenant_role == TenantRole::TenantAdmin {
                Allowed
            } else {
                Forbidden
            }
        }
        // A tenant's SCIM token: anyone but a tenant admin is refused before
        // anything is looked up, so the refusal tells nothing: byte for
        // byte a made-up id's, whatever its tenant.
        Rule::TenantLevelAdmin if matches!(case.on, On::ScimToken) && w.tenant_role != TenantRole::TenantAdmin => ForbiddenBlind,
        Rule::TenantLevelAdmin if w.tenant != "t1" => Missing,
        Rule::TenantLevelAdmin => {
            if w.tenant_role == TenantRole::TenantAdmin {
                Allowed
            } else {
                Forbidden
            }
        }
        Rule::DeploymentAdmin => {
            if w.tenant_role == TenantRole::DeploymentAdmin {
                Allowed
            } else {
                Forbidden
            }
        }
        Rule::Asker | Rule::Uploader => {
            let owner = &PRINCIPALS[OWNER];
            if (w.tenant, w.user, w.agent) == (owner.tenant, owner.user, owner.agent) { Allowed } else { Missing }
        }
    }
}

// ---------------------------------------------------------------------------
// The fixture.

/// The ids a request names: the fixture's, or made-up ones of the same shape.
#[derive(Debug, Clone)]
struct Ids {
    ws: String,
    open: String,
    restricted: String,
    dashboards: [String; 2],
    forms: [String; 2],
    apps: [String; 2],
    runs: [String; 2],
    files: [String; 2],
    uploads: [String; 2],
    /// An envelope of each thread (a message), by its seq.
    seqs: [i64; 2],
    confirmation: String,
    tenant: String,
    key: String,
    scim_token: String,
    /// The second workspace (W2), a thread of it, its form and an
    /// envelope's seq: OTHER_WS_ADMIN's.
    ws2: String,
    thread2: String,
    form2: String,
    seq2: i64,
}

fn index(which: Which) -> usize {
    if which == Which::Open { 0 } else { 1 }
}

impl Ids {
    fn missing() -> Self {
        let art = || "art_doesnotexist0000000000000000".to_owned();
        let run = || "run_doesnotexist0000000000000000".to_owned();
        Ids {
            ws: "ws_doesnotexist00000000000000000".into(),
            open: "th_doesnotexist00000000000000000".into(),
            restricted: "th_doesnotexist00000000000000000".into(),
            dashboards: [art(), art()],
            forms: [art(), art()],
            apps: [art(), art()],
            runs: [run(), run()],
            files: ["fil_doesnotexist000000000000000".into(), "fil_doesnotexist000000000000000".into()],
            uploads: ["fil_doesnotexist000000000000000".into(), "fil_doesnotexist000000000000000".into()],
            seqs: [999_999_999, 999_999_999],
            confirmation: "01JZZZZZZZZZZZZZZZZZZZZZZZ".into(),
            tenant: "tdoesnotexist".into(),
            key: "key_doesnotexist0000000000000000".into(),
            scim_token: "scim_doesnotexist000000000000000".into(),
            ws2: "ws_doesnotexist00000000000000000".into(),
            thread2: "th_doesnotexist00000000000000000".into(),
            form2: art(),
            seq2: 999_999_999,
        }
    }

    /// The ids a body probe names: made-up ones but where `h` puts the
    /// hidden objects (read through [`Which::Open`] for the restricted
    /// thread's; through either for W2's).
    fn hidden(&self, h: Hidden) -> Self {
        let missing = Ids::missing();
        match h {
            Hidden::Restricted => Ids {
                ws: self.ws.clone(),
                open: self.restricted.clone(),
                forms: [self.forms[1].clone(), self.forms[1].clone()],
                apps: [self.apps[1].clone(), self.apps[1].clone()],
                seqs: [self.seqs[1], self.seqs[1]],
                ..missing
            },
            Hidden::W2 => Ids {
                ws: self.ws2.clone(),
                open: self.thread2.clone(),
                restricted: self.thread2.clone(),
                forms: [self.form2.clone(), self.form2.clone()],
                seqs: [self.seq2, self.seq2],
                ..missing
            },
        }
    }

    fn thread(&self, which: Which) -> &str {
        if which == Which::Open { &self.open } else { &self.restricted }
    }
    fn file(&self, which: Which) -> &str {
        &self.files[index(which)]
    }

    fn upload(&self, which: Which) -> &str {
        &self.uploads[index(which)]
    }

    fn seq(&self, which: Which) -> i64 {
        self.seqs[index(which)]
    }

    fn dashboard(&self, which: Which) -> &str {
        &self.dashboards[index(which)]
    }
    fn form(&self, which: Which) -> &str {
        &self.forms[index(which)]
    }
    fn app(&self, which: Which) -> &str {
        &self.apps[index(which)]
    }
    fn run(&self, which: Which) -> &str {
        &self.runs[index(which)]
    }
}

/// The scripted ask_form model's one request.
const ASK_FORM_CALL: &str = "call_ask_form_1";

/// One answer, as bytes (a live stream's body is not read).
struct Answer {
    status: StatusCode,
    bytes: Bytes,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&self.bytes).into()))
    }

    fn error_type(&self) -> String {
        self.json()["error"]["type"].as_str().unwrap_or("<no typed error>").to_owned()
    }
}

/// The App, counting the requests made of it.
struct Http {
    app: App,
    sent: Arc<AtomicUsize>,
}

impl Http {
    async fn send(&self, method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> Answer {
        self.sent.fetch_add(1, Ordering::Relaxed);
        let mut req = Request::builder().method(method).uri(path);
        if let Some(token) = token {
            req = req.header("authorization", format!("Bearer {token}"));
        }
        let req = match body {
            Some(b) => req.header("content-type", "application/json").body(Body::from(b.to_string())),
            None => req.body(Body::empty()),
        }
        .unwrap();
        let res = self.app.router.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let stream = res.headers().get("content-type").and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/event-stream"));
        if stream {
            // A live stream that started: its status is the answer; dropping
            // it closes it.
            return Answer { status, bytes: Bytes::new() };
        }
        let bytes = tokio::time::timeout(Duration::from_secs(10), res.into_body().collect())
            .await
            .unwrap_or_else(|_| panic!("{method} {path}: the body did not end"))
            .unwrap()
            .to_bytes();
        Answer { status, bytes }
    }

    /// A fixture step that must succeed.
    async fn ok(&self, method: &str, path: &str, token: &str, body: Option<Value>) -> Value {
        let got = self.send(method, path, Some(token), body.as_ref()).await;
        assert_eq!(got.status, StatusCode::OK, "fixture: {method} {path}: {}", got.json());
        got.json()
    }

    async fn token(&self, tenant: &str, user: &str, role: TenantRole, agent: bool) -> String {
        let body = json!({"tenant": tenant, "user": user, "role": role.as_str(), "agent": agent});
        let got = self.send("POST", "/v1/dev/token", None, Some(&body)).await;
        assert_eq!(got.status, StatusCode::OK, "{}", got.json());
        got.json()["token"].as_str().unwrap().to_owned()
    }
}

/// What a case's fixture needs beyond the workspace, its two threads, its
/// people, two dashboards and two forms.
#[derive(Debug, Clone, Copy, Default)]
struct Needs {
    apps: bool,
    runs: bool,
    confirmation: bool,
    key: bool,
    scim_token: bool,
}

fn needs(on: On) -> Needs {
    match on {
        On::App(_) => Needs { apps: true, ..Needs::default() },
        On::Run(_) => Needs { runs: true, ..Needs::default() },
        On::Confirmation => Needs { apps: true, confirmation: true, ..Needs::default() },
        On::Key => Needs { key: true, ..Needs::default() },
        On::ScimToken => Needs { scim_token: true, ..Needs::default() },
        _ => Needs::default(),
    }
}

struct Fixture {
    http: Http,
    ids: Ids,
    /// One token per principal, in [`PRINCIPALS`]' order.
    tokens: Vec<String>,
    /// ZED's token (the person signed out by others).
    zed: String,
}

async fn fixture(backend: lattice_log::Backend, needs: Needs, sent: Arc<AtomicUsize>) -> Fixture {
    let http = Http { app: App::new(backend).await, sent };
    let mut tokens = Vec::new();
    for w in &PRINCIPALS {
        tokens.push(http.token(w.tenant, w.user, w.tenant_role, w.agent).await);
    }
    let owner = tokens[OWNER].clone();
    let token_of = |user: &str| tokens[PRINCIPALS.iter().position(|w| w.user == user).unwrap()].clone();
    let zed = http.token("t1", ZED.0, TenantRole::Member, false).await;
    let maker = http.token("t1", MAKER, TenantRole::Member, true).await;

    let ws = http.ok("POST", "/v1/workspaces", &owner, Some(json!({"name": "W"}))).await["id"].as_str().unwrap().to_owned();
    let thread = |title: &str, restricted: bool| {
        let (http, owner, ws) = (&http, &owner, &ws);
        let body = json!({"title": title, "restricted": restricted});
        async move { http.ok("POST", &format!("/v1/workspaces/{ws}/threads"), owner, Some(body)).await["id"].as_str().unwrap().to_owned() }
    };
    let open = thread("Open", false).await;
    let restricted = thread("Salaries", true).await;
    let add = |user: &str, role: Role| {
        let (http, owner, ws) = (&http, &owner, &ws);
        let body = json!({"user": user, "role": role.as_str()});
        async move { http.ok("POST", &format!("/v1/workspaces/{ws}/members"), owner, Some(body)).await }
    };
    let list = |th: &str, user: &str, role: Role| {
        let (http, owner) = (&http, &owner);
        let (path, body) = (format!("/v1/threads/{th}/members"), json!({"user": user, "role": role.as_str()}));
        async move { http.ok("POST", &path, owner, Some(body)).await }
    };
    // The history behind the principals' roles.
    add("dan", Role::Admin).await;
    add("rem", Role::Editor).await;
    list(&restricted, "rem", Role::Editor).await;
    for w in PRINCIPALS.iter().skip(1) {
        if let Some(role) = w.member {
            add(w.user, role).await;
        }
        if let Some(role) = w.open {
            list(&open, w.user, role).await;
        }
        if let Some(role) = w.restricted {
            list(&restricted, w.user, role).await;
        }
    }
    add(ZED.0, ZED.1).await;
    list(&open, ZED.0, ZED.2).await;
    list(&restricted, ZED.0, ZED.3).await;
    add(MAKER, Role::Editor).await;
    list(&restricted, MAKER, Role::Editor).await;
    http.ok("DELETE", &format!("/v1/workspaces/{ws}/members/rem"), &owner, None).await;
    for w in PRINCIPALS.iter().filter(|w| w.signed_out) {
        let token = token_of(w.user);
        http.ok("POST", &format!("/v1/people/{}/sign-out", w.user), &token, None).await;
    }

    let mut ids = Ids { ws: ws.clone(), open: open.clone(), restricted: restricted.clone(), tenant: "t1".into(), ..Ids::missing() };
    for (i, th) in [&open, &restricted].into_iter().enumerate() {
        let path = format!("/v1/threads/{th}/artifacts");
        ids.dashboards[i] =
            http.ok("POST", &path, &owner, Some(json!({"kind": "dashboard", "data": dashboard()}))).await["id"].as_str().unwrap().to_owned();
        let form = json!({"title": "F", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}, "submissions": "per_person"});
        ids.forms[i] = http.ok("POST", &path, &owner, Some(json!({"kind": "form", "data": form}))).await["id"].as_str().unwrap().to_owned();
        let posted = http.ok("POST", &format!("/v1/threads/{th}/messages"), &owner, Some(json!({"text": "sealed"}))).await;
        ids.seqs[i] = posted["seq"].as_i64().expect("a message's post answers its seq");
        ids.files[i] =
            http.ok("POST", &format!("/v1/threads/{th}/files?name=a.txt"), &owner, Some(json!("a line"))).await["id"].as_str().unwrap().to_owned();
        // 64 bytes: the suite's parts (three bytes) never finish it.
        let upload = json!({"name": "b.txt", "size": 64});
        ids.uploads[i] = http.ok("POST", &format!("/v1/threads/{th}/uploads"), &owner, Some(upload)).await["id"].as_str().unwrap().to_owned();
    }
    if needs.apps {
        let root = http.token("ops", "root", TenantRole::DeploymentAdmin, false).await;
        http.ok("PUT", "/v1/integrations/deployment/ui:mini-apps", &root, Some(json!({"state": "on", "reason": "suite"}))).await;
        for (i, th) in [&open, &restricted].into_iter().enumerate() {
            let app = json!({"kind": "app", "data": {"title": "Counter", "summary": "s", "html": "<p>c</p>", "state": {"count": 1}}});
            ids.apps[i] = http.ok("POST", &format!("/v1/threads/{th}/artifacts"), &maker, Some(app)).await["id"].as_str().unwrap().to_owned();
        }
    }
    if needs.confirmation {
        let capability = http.ok("POST", &format!("/v1/artifacts/{}/capability", ids.apps[0]), &owner, None).await["capability"].clone();
        let call = json!({"tool": SUBMIT, "arguments": {"values": {"rating": 5}}, "capability": capability});
        let asked = http.ok("POST", &format!("/v1/artifacts/{}/calls", ids.apps[0]), &owner, Some(call)).await;
        assert_eq!(asked["status"], "confirm", "{asked}");
        ids.confirmation = asked["confirmation"].as_str().unwrap().to_owned();
    }
    if needs.scim_token {
        let tad = token_of("tad");
        ids.scim_token = http.ok("POST", "/v1/scim-tokens", &tad, None).await["id"].as_str().unwrap().to_owned();
    }
    if needs.runs {
        for (i, th) in [&open, &restricted].into_iter().enumerate() {
            let started = http
                .ok("POST", &format!("/v1/threads/{th}/runs"), &owner, Some(json!({"prompt": "Report an incident", "model": "scripted:ask_form"})))
                .await;
            ids.runs[i] = started["run_id"].as_str().unwrap().to_owned();
        }
        for run in &ids.runs {
            let got = lattice_testkit::eventually(&format!("run {run} to pause"), async || {
                Some(http.ok("GET", &format!("/v1/runs/{run}"), &owner, None).await).filter(|got| got["status"] == "paused")
            })
            .await;
            assert_eq!(got["requests"][0]["tool_call_id"], ASK_FORM_CALL, "{got}");
        }
    }

    // The server holds what the principals' model says it does.
    let listed = |v: Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|m| (m["user"].as_str().unwrap().to_owned(), m["role"].as_str().unwrap().to_owned()))
            .collect::<BTreeSet<_>>()
    };
    let model = |f: &dyn Fn(&Who) -> Option<Role>, extra: &[(&str, Role)]| {
        PRINCIPALS
            .iter()
            .filter(|w| w.tenant == "t1")
            .filter_map(|w| f(w).map(|r| (w.user.to_owned(), r.as_str().to_owned())))
            .chain(extra.iter().map(|(u, r)| (u.to_string(), r.as_str().to_owned())))
            .collect::<BTreeSet<_>>()
    };
    let members = listed(http.ok("GET", &format!("/v1/workspaces/{ws}/members"), &owner, None).await);
    assert_eq!(members, model(&|w| w.member, &[(ZED.0, ZED.1), (MAKER, Role::Editor)]), "the workspace's members");
    let on_open = listed(http.ok("GET", &format!("/v1/threads/{open}/members"), &owner, None).await);
    assert_eq!(on_open, model(&|w| w.open, &[(ZED.0, ZED.2)]), "the open thread's listings");
    let on_restricted = listed(http.ok("GET", &format!("/v1/threads/{restricted}/members"), &owner, None).await);
    assert_eq!(on_restricted, model(&|w| w.restricted, &[(ZED.0, ZED.3), (MAKER, Role::Editor)]), "the restricted thread's listings");
    // The second workspace, of another member of the tenant: a thread, a
    // form and an envelope in it.
    {
        let other = token_of(OTHER_WS_ADMIN);
        ids.ws2 = http.ok("POST", "/v1/workspaces", &other, Some(json!({"name": "W2"}))).await["id"].as_str().unwrap().to_owned();
        let body = json!({"title": "Elsewhere", "restricted": false});
        ids.thread2 = http.ok("POST", &format!("/v1/workspaces/{}/threads", ids.ws2), &other, Some(body)).await["id"].as_str().unwrap().to_owned();
        let form = json!({"title": "F2", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}, "submissions": "per_person"});
        let path = format!("/v1/threads/{}/artifacts", ids.thread2);
        ids.form2 = http.ok("POST", &path, &other, Some(json!({"kind": "form", "data": form}))).await["id"].as_str().unwrap().to_owned();
        let posted = http.ok("POST", &format!("/v1/threads/{}/messages", ids.thread2), &other, Some(json!({"text": "elsewhere"}))).await;
        ids.seq2 = posted["seq"].as_i64().expect("a message's post answers its seq");
    }
    // After the members are checked: a key of the workspace is its member.
    if needs.key {
        let key = json!({"name": "ci", "role": "viewer", "workspace": ws});
        ids.key = http.ok("POST", "/v1/api-keys", &owner, Some(key)).await["id"].as_str().unwrap().to_owned();
    }

    Fixture { http, ids, tokens, zed }
}

// ---------------------------------------------------------------------------
// The run.

/// Whether `path` (its query aside) is an instance of the template.
fn fits(template: &str, path: &str) -> bool {
    let path = path.split('?').next().unwrap_or(path);
    let (t, p): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    t.len() == p.len() && t.iter().zip(&p).all(|(t, p)| (t.starts_with('{') && t.ends_with('}') && !p.is_empty()) || t == p)
}

/// The (method, path) pairs under `/v1` of the OpenAPI document.
async fn documented(http: &Http) -> BTreeSet<(String, String)> {
    let doc = http.send("GET", "/openapi.json", None, None).await;
    assert_eq!(doc.status, StatusCode::OK);
    let doc = doc.json();
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("the document has paths") {
        if !path.starts_with("/v1/") {
            continue;
        }
        for method in ["get", "put", "post", "delete", "options", "head", "patch", "trace"] {
            if item.get(method).is_some() {
                out.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    out
}

#[derive(Default)]
struct Tally {
    cells: usize,
    allowed: usize,
    allowed_2xx: usize,
    refused_404: usize,
    refused_403: usize,
    unauthorized: usize,
    /// Body probes: pairs (a hidden id in the body, a made-up one).
    probes: usize,
    failures: Vec<String>,
    gaps_seen: Vec<String>,
    /// Allowed cells that answered something else than 2xx (state, body).
    not_2xx: Vec<String>,
}

/// A gap's target: the case's, e.g. `Thread(Open)`; a body probe's adds
/// where its hidden object lives, e.g. `Thread(Open) body:W2`.
fn known_gap(method: &str, path: &str, what: &str, target: &str, who: &str) -> Option<&'static str> {
    KNOWN_GAPS.iter().find(|g| (g.0, g.1, g.2, g.3, g.4) == (method, path, what, target, who)).map(|g| g.5)
}

/// Records a cell's verdict against KNOWN_GAPS.
fn verdict(tally: &mut Tally, cell: String, wrong: Option<String>, gap: Option<&'static str>) {
    match (wrong, gap) {
        (Some(detail), None) => tally.failures.push(format!("{cell}: {detail}")),
        (Some(detail), Some(why)) => tally.gaps_seen.push(format!("{cell}: {detail} — known gap: {why}")),
        (None, Some(_)) => tally.failures.push(format!("{cell}: listed as a known gap but now agrees with the policy: take it off KNOWN_GAPS")),
        (None, None) => {}
    }
}

async fn run_case(backend: lattice_log::Backend, entry: &Entry, case: &Case, sent: Arc<AtomicUsize>, tally: &mut Tally) {
    let fx = fixture(backend, needs(case.on), sent).await;
    let which = case.on.which();
    let missing = Ids::missing();
    // The refused first: nobody's success changes what they are answered.
    let mut order: Vec<usize> = (0..PRINCIPALS.len()).collect();
    order.sort_by_key(|&i| expect(case, &PRINCIPALS[i]) == Expect::Allowed);
    let mut tenant_admin_signed_zed_out = false;
    for i in order {
        let w = &PRINCIPALS[i];
        let expected = expect(case, w);
        let (path, body) = (case.build)(&fx.ids, w, which);
        assert!(fits(entry.path, &path), "the table's request {path} is not an instance of {} {}", entry.method, entry.path);
        // The body's id alone: where the caller sees the path's target but
        // not the object the body names, a hidden object answers what a
        // made-up one does (before the cell, so that its answer is the
        // case's own).
        if let (Some((probe, hides)), Expect::Allowed | Expect::Forbidden | Expect::ForbiddenBlind) = (case.probe, expected) {
            for &h in hides.iter().filter(|h| !(h.seen_by(w) || (**h == Hidden::Restricted && which == Which::Restricted))) {
                let (path_h, body_h) = probe(&fx.ids, &fx.ids.hidden(h), w, which);
                let (path_m, body_m) = probe(&fx.ids, &missing, w, which);
                assert!(fits(entry.path, &path_h), "the table's probe {path_h} is not an instance of {} {}", entry.method, entry.path);
                let hidden = fx.http.send(entry.method, &path_h, Some(&fx.tokens[i]), body_h.as_ref()).await;
                let made_up = fx.http.send(entry.method, &path_m, Some(&fx.tokens[i]), body_m.as_ref()).await;
                tally.probes += 1;
                let wrong = ((hidden.status, &hidden.bytes) != (made_up.status, &made_up.bytes)).then(|| {
                    format!(
                        "a hidden id in the body answers {} {} ({}), a made-up one {} {} ({})",
                        hidden.status,
                        hidden.json(),
                        body_h.unwrap_or_default(),
                        made_up.status,
                        made_up.json(),
                        body_m.unwrap_or_default()
                    )
                });
                let target = format!("{:?} body:{h:?}", case.on);
                let cell = format!("{} {} [{}, {target}] as {}", entry.method, path_h, case.what, w.name);
                verdict(tally, cell, wrong, known_gap(entry.method, entry.path, case.what, &target, w.name));
            }
        }
        let got = fx.http.send(entry.method, &path, Some(&fx.tokens[i]), body.as_ref()).await;
        tally.cells += 1;
        let mut wrong = None;
        match expected {
            Expect::Unauthorized => {
                tally.unauthorized += 1;
                if (got.status, got.error_type().as_str()) != (StatusCode::UNAUTHORIZED, "Unauthorized") {
                    wrong = Some(String::new());
                }
            }
            Expect::Missing | Expect::ForbiddenBlind => {
                let (path_m, body_m) = (case.build)(&missing, w, which);
                let other = fx.http.send(entry.method, &path_m, Some(&fx.tokens[i]), body_m.as_ref()).await;
                let status = if expected == Expect::Missing { StatusCode::NOT_FOUND } else { StatusCode::FORBIDDEN };
                if expected == Expect::Missing {
                    tally.refused_404 += 1;
                } else {
                    tally.refused_403 += 1;
                }
                if got.status != status {
                    wrong = Some(String::new());
                } else if (got.status, &got.bytes) != (other.status, &other.bytes) {
                    wrong = Some(format!(" — not the answer for a made-up id ({path_m}: {} {})", other.status, other.json()));
                }
            }
            Expect::Forbidden => {
                tally.refused_403 += 1;
                if (got.status, got.error_type().as_str()) != (StatusCode::FORBIDDEN, "Forbidden") {
                    wrong = Some(String::new());
                }
            }
            Expect::Redirected => {
                tally.allowed += 1;
                if got.status != StatusCode::SEE_OTHER {
                    wrong = Some(String::new());
                }
            }
            Expect::Allowed => {
                tally.allowed += 1;
                let s = got.status;
                if s.is_success() {
                    tally.allowed_2xx += 1;
                } else if [StatusCode::CONFLICT, StatusCode::UNPROCESSABLE_ENTITY, StatusCode::LOCKED].contains(&s) {
                    tally.not_2xx.push(format!("{} {path} [{}, {:?}] as {}: {} {}", entry.method, case.what, case.on, w.name, s, got.json()));
                } else {
                    wrong = Some(String::new());
                }
            }
        }
        // A list of the caller's own: the target's form and request are
        // in it exactly where the policy lets the caller do the action.
        if let (None, Expect::Allowed, Rule::Lists(action)) = (&wrong, expected, case.rule) {
            let want = w.on_thread(which).is_some_and(|role| policy::allows(role, action));
            let list = got.json();
            let has = |kind: &str, key: &str, id: &str| {
                list.as_array().is_some_and(|items| items.iter().any(|i| i["waits"]["type"] == kind && i["waits"][key] == id))
            };
            let (form, request) = (has("form", "id", fx.ids.form(which)), has("ask_form", "run", fx.ids.run(which)));
            if (form, request) != (want, want) {
                wrong = Some(format!(" — lists the form: {form}, the request: {request}; the policy says {want}"));
            }
        }
        // Signing someone else out: a tenant admin signs out its own
        // tenant's person, never another tenant's of the same name.
        if matches!(case.rule, Rule::TenantAdminOfCaller) {
            tenant_admin_signed_zed_out |= expected == Expect::Allowed && w.tenant == "t1" && got.status.is_success();
            let me = fx.http.send("GET", "/v1/me", Some(&fx.zed), None).await;
            let want = if tenant_admin_signed_zed_out { StatusCode::UNAUTHORIZED } else { StatusCode::OK };
            if me.status != want {
                tally.failures.push(format!(
                    "{} {path} as {}: afterwards t1's {} answers {} on /v1/me, expected {want}",
                    entry.method, w.name, ZED.0, me.status
                ));
            }
        }
        let cell = format!("{} {} [{}, {:?}] as {}", entry.method, path, case.what, case.on, w.name);
        let wrong = wrong.map(|detail| format!("expected {expected:?}, got {} {}{detail}", got.status, got.json()));
        verdict(tally, cell, wrong, known_gap(entry.method, entry.path, case.what, &format!("{:?}", case.on), w.name));
    }
}

lattice_testkit::both_backends! {
    async fn every_route_against_every_caller(backend: Backend) {
        let started = Instant::now();
        let sent = Arc::new(AtomicUsize::new(0));
        let table = table();

        // Every (method, path) of the document has its entry, and every
        // entry its route.
        {
            let http = Http { app: App::new(backend).await, sent: sent.clone() };
            let routes = documented(&http).await;
            let entries: BTreeSet<(String, String)> = table.iter().map(|e| (e.method.to_owned(), e.path.to_owned())).collect();
            assert_eq!(entries.len(), table.len(), "one entry per (method, path)");
            let mut problems = Vec::new();
            for (method, path) in routes.difference(&entries) {
                problems.push(format!("a route added without an entry in the access suite: {method} {path}"));
            }
            for (method, path) in entries.difference(&routes) {
                problems.push(format!("an entry of the access suite whose route is gone: {method} {path}"));
            }
            assert!(problems.is_empty(), "{}", problems.join("\n"));
        }

        let mut tally = Tally::default();
        let cases: usize = table.iter().map(|e| e.cases.len()).sum();
        for entry in &table {
            for case in &entry.cases {
                run_case(backend, entry, case, sent.clone(), &mut tally).await;
            }
        }
        let elapsed = started.elapsed();
        println!(
            "access suite ({backend:?}): {} routes × {} principals = {}; {} cases (routes on each of their targets) × {} principals = {} cells: {} allowed ({} answered 2xx), {} refused 404, {} refused 403, {} unauthorized; {} body probes; {} requests in {:.1} s",
            table.len(), PRINCIPALS.len(), table.len() * PRINCIPALS.len(), cases, PRINCIPALS.len(), tally.cells, tally.allowed, tally.allowed_2xx, tally.refused_404, tally.refused_403,
            tally.unauthorized, tally.probes, sent.load(Ordering::Relaxed), elapsed.as_secs_f64()
        );
        for line in &tally.not_2xx {
            println!("  allowed, answered by its state or body: {line}");
        }
        for line in &tally.gaps_seen {
            println!("  KNOWN GAP {line}");
        }
        assert_eq!(tally.cells, cases * PRINCIPALS.len());
        // Every known gap names a cell that ran (and disagreed: one that
        // agrees is a failure above).
        assert_eq!(tally.gaps_seen.len(), KNOWN_GAPS.len(), "a known gap names no cell of the suite:\n{}", tally.gaps_seen.join("\n"));
        assert!(tally.failures.is_empty(), "{} cells disagree with the policy:\n{}", tally.failures.len(), tally.failures.join("\n"));
    }
}
