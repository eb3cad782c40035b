//! One connected server: its client session (rmcp), made when first needed
//! and made again after it failed, its tools (listed again a minute after
//! they were last listed), and each request bounded in time and in the
//! bytes of its answer.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lattice_core::ServerKey;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam, ClientRequest, PaginatedRequestParams,
    ReadResourceRequestParams, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::address::{Guarded, is_internal};
use crate::asking::{Asker, InFlight, Pausable};
use crate::config::{Isolation, ServerConfig};
use crate::error::CallError;
use crate::host::{APP_MIME, Host, Stale};
use crate::process::{self, ProcessGuard};
use crate::sign_in::{Owner, SignIns, Target};
use rmcp::transport::auth::AuthClient;

/// How long a listing of tools is used before it is asked for again.
const TOOLS_FRESH: Duration = Duration::from_secs(60);
/// The most tools taken from one server, and pages read to find them.
pub const TOOLS_MAX: usize = 128;
const PAGES_MAX: usize = 8;

/// The most of a server's `instructions` the model is given.
pub const INSTRUCTIONS_MAX_CHARS: usize = 4096;

type Session = RunningService<RoleClient, Host>;

/// A tool of the server, as it listed it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// `_meta.ui.resourceUri`: the app the tool shows, if any.
    pub app: Option<String>,
    /// `_meta.ui.visibility`: whether the model may call it (`["app"]`
    /// alone: only its apps may), and whether its apps may (`["model"]`
    /// alone: only the model may). Unset: both.
    pub for_model: bool,
    pub for_app: bool,
}

/// Whom a request to a server is made for: its session is that tenant's,
/// or that person's (`isolation`), never another tenant's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Behalf<'a> {
    pub tenant: &'a str,
    pub user: &'a str,
}

impl<'a> Behalf<'a> {
    /// For a principal: the person it is (or acts for, a run's agent), in
    /// its tenant.
    pub fn of(p: &'a lattice_core::Principal) -> Self {
        Self { tenant: p.tenant.as_str(), user: p.user.as_str() }
    }
}

/// A session and what lives as long as it: a stdio server's process.
struct Held {
    session: Arc<Session>,
    tenant: String,
    used: Instant,
    _process: Option<ProcessGuard>,
}

pub struct Server {
    key: ServerKey,
    config: ServerConfig,
    /// How people sign in to it, where its table asks for that.
    sign_ins: Option<SignIns>,
    /// Where its processes' folders are.
    homes: PathBuf,
    /// Its sessions, by owner (a tenant, or a person of one).
    sessions: Mutex<HashMap<String, Held>>,
    tools: Mutex<HashMap<String, Listed>>,
    /// The owners whose listing the server said changed (`Host`).
    stale: Stale,
}

/// One `tools/call`, sent with its id kept while it is under way, so that
/// the server's questions on its stream find it (`asking`); dropped
/// unanswered (its time ran out, its run ended), the server is told it is
/// cancelled.
async fn asking_call(session: &Session, params: CallToolRequestParams, call: InFlight) -> Result<CallToolResult, CallError> {
    let calls = session.service().calls.clone();
    let gate = calls.gate().await;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = session.peer().send_request_with_option(request, PeerRequestOptions::no_options()).await.map_err(|e| CallError::from_service(&e))?;
    let _kept = calls.keep(handle.id.clone(), call);
    drop(gate);
    let mut unanswered = Unanswered { peer: Some(handle.peer.clone()), id: handle.id.clone() };
    let answered = handle.await_response().await;
    unanswered.peer = None;
    match answered.map_err(|e| CallError::from_service(&e))? {
        ServerResult::CallToolResult(result) => Ok(result),
        _ => Err(CallError::Malformed("an answer of another kind".into())),
    }
}

/// A call dropped before its answer: the server is told to stop.
struct Unanswered {
    peer: Option<rmcp::Peer<RoleClient>>,
    id: rmcp::model::RequestId,
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        let (Some(peer), Ok(runtime)) = (self.peer.take(), tokio::runtime::Handle::try_current()) else { return };
        let id = self.id.clone();
        runtime.spawn(async move {
            let cancelled = CancelledNotificationParam::new(Some(id), Some("lattice stopped waiting for the call".into()));
            let _ = peer.notify_cancelled(cancelled).await;
        });
    }
}

/// A listing of tools, and when it was made.
type Listed = (Instant, Arc<Vec<ServerTool>>);

impl Server {
    pub fn new(key: ServerKey, config: ServerConfig, homes: PathBuf, sign_ins: Option<SignIns>) -> Self {
        Self { key, config, homes, sign_ins, sessions: Mutex::new(HashMap::new()), tools: Mutex::new(HashMap::new()), stale: Stale::default() }
    }

    /// The session `behalf` uses: its tenant's, or its own (always its
    /// own where each person signs in).
    fn owner(&self, behalf: Behalf<'_>) -> String {
        match (self.config.isolation, &self.config.sign_in) {
            (Isolation::Tenant, None) => format!("t:{}", behalf.tenant),
            _ => format!("p:{}/{}", behalf.tenant, behalf.user),
        }
    }

    /// Whose its sessions are: `tenant`, or `person` (as every server
    /// people sign in to has).
    pub fn isolation(&self) -> &'static str {
        match (self.config.isolation, &self.config.sign_in) {
            (Isolation::Tenant, None) => "tenant",
            _ => "person",
        }
    }

    /// Whether each person signs in to it.
    pub fn signs_in(&self) -> bool {
        self.config.sign_in.is_some()
    }

    fn sign_in_target(&self) -> Result<Target<'_>, CallError> {
        match (&self.sign_ins, &self.config.sign_in, &self.config.url) {
            (Some(sign_ins), Some(config), Some(url)) => {
                Ok(Target { sign_ins, config, server: self.name(), url, allow_internal: self.config.allow_internal })
            }
            _ => Err(CallError::SignIn(format!("{} takes no person's sign-in", self.name()))),
        }
    }

    /// Begins `behalf`'s sign-in to it: the address they open at its
    /// authorization server.
    /// `more`: scopes a call was refused for (step-up).
    pub async fn begin_sign_in(&self, behalf: Behalf<'_>, more: &[String]) -> Result<String, CallError> {
        let owner = Owner { tenant: behalf.tenant.to_owned(), user: behalf.user.to_owned() };
        let target = self.sign_in_target()?;
        // The sign-in asks the server itself as a session would, through the
        // same guard and headers.
        let http = self.http_client(target.url)?;
        crate::sign_in::begin(&target, &owner, more, &http, self.config.timeout()).await
    }

    /// Forgets `behalf`'s sign-in to it and ends their session.
    pub async fn disconnect(&self, behalf: Behalf<'_>) -> Result<(), CallError> {
        let sign_ins = self.sign_in_target()?.sign_ins;
        let owner = Owner { tenant: behalf.tenant.to_owned(), user: behalf.user.to_owned() };
        sign_ins.keeper.clear(&owner, self.name()).await.map_err(CallError::SignIn)?;
        self.end_session_of(behalf).await;
        Ok(())
    }

    /// Ends `behalf`'s session (their sign-in changed).
    pub async fn end_session_of(&self, behalf: Behalf<'_>) {
        let owner = self.owner(behalf);
        self.sessions.lock().await.remove(&owner);
        self.tools.lock().await.remove(&owner);
    }

    pub(crate) async fn finish_sign_in(&self, owner: &Owner, kept: &str, state: &str, code: &str, issuer: Option<&str>) -> Result<(), CallError> {
        crate::sign_in::finish(&self.sign_in_target()?, owner, kept, state, code, issuer).await?;
        self.end_session_of(Behalf { tenant: &owner.tenant, user: &owner.user }).await;
        Ok(())
    }

    /// How many sessions it holds now (tests of the bounds).
    pub async fn sessions(&self) -> usize {
        self.sessions.lock().await.len()
    }

    /// Ends every session of it (its key turned off): their processes end.
    pub async fn end_sessions(&self) {
        self.sessions.lock().await.clear();
        self.tools.lock().await.clear();
    }

    /// The tenants it holds sessions for now.
    pub async fn session_tenants(&self) -> Vec<String> {
        let mut tenants: Vec<String> = self.sessions.lock().await.values().map(|h| h.tenant.clone()).collect();
        tenants.sort();
        tenants.dedup();
        tenants
    }

    /// Ends `tenant`'s sessions of it (its key turned off there).
    pub async fn end_sessions_of(&self, tenant: &str) {
        self.sessions.lock().await.retain(|_, h| h.tenant != tenant);
        let (person, of_tenant) = (format!("p:{tenant}/"), format!("t:{tenant}"));
        self.tools.lock().await.retain(|owner, _| owner != &of_tenant && !owner.starts_with(&person));
    }

    pub fn key(&self) -> ServerKey {
        self.key
    }

    pub fn name(&self) -> &'static str {
        self.key.name()
    }

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Its tools as `behalf`'s session lists them, listed at most a minute
    /// ago.
    pub async fn tools(&self, behalf: Behalf<'_>) -> Result<Arc<Vec<ServerTool>>, CallError> {
        let owner = self.owner(behalf);
        let stale = self.stale.take(&owner);
        if let Some((at, tools)) = self.tools.lock().await.get(&owner)
            && at.elapsed() < TOOLS_FRESH
            && !stale
        {
            return Ok(tools.clone());
        }
        let listed = Arc::new(self.bounded(behalf, |session| async move { list(&session).await }).await?);
        let mut kept = self.tools.lock().await;
        // Bounded as the sessions are: one listing per owner at most.
        kept.retain(|_, (at, _)| at.elapsed() < TOOLS_FRESH);
        kept.insert(owner, (Instant::now(), listed.clone()));
        Ok(listed)
    }

    /// What the server said of itself when `behalf`'s session began
    /// (`instructions`), at most [`INSTRUCTIONS_MAX_CHARS`]: words of the
    /// server's, for the model to read as data.
    pub async fn instructions(&self, behalf: Behalf<'_>) -> Result<Option<String>, CallError> {
        self.bounded(behalf, |session| async move {
            let said = session.peer_info().and_then(|info| info.instructions.clone()).filter(|s| !s.trim().is_empty());
            Ok(said.map(|s| s.chars().take(INSTRUCTIONS_MAX_CHARS).collect()))
        })
        .await
    }

    /// Calls `tool` with `arguments` in `behalf`'s session: the result as
    /// the server sent it (a `CallToolResult`), within the configured time
    /// and size.
    pub async fn call(&self, behalf: Behalf<'_>, tool: &str, arguments: Value) -> Result<Value, CallError> {
        self.call_asking(behalf, tool, arguments, None).await
    }

    /// Calls a tool in `behalf`'s session; what the server asks meanwhile
    /// (`elicitation/create`) goes to `asker`, and the call's time bound
    /// stops while it is asked. With no asker, a question is refused.
    pub async fn call_asking(&self, behalf: Behalf<'_>, tool: &str, arguments: Value, asker: Option<Arc<dyn Asker>>) -> Result<Value, CallError> {
        let Value::Object(arguments) = arguments else { return Err(CallError::Arguments) };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let clock = Pausable::new(self.config.timeout());
        let call = InFlight { asker, clock: clock.clone() };
        let result = self.bounded_on(behalf, clock, |session| async move { asking_call(&session, params, call).await }).await?;
        let value = serde_json::to_value(result).map_err(|e| CallError::Malformed(e.to_string()))?;
        self.fits(&value)?;
        Ok(value)
    }

    /// Reads an app's document (`resources/read` of its `ui://` URI) in
    /// `behalf`'s session.
    pub async fn read_app(&self, behalf: Behalf<'_>, uri: &str) -> Result<AppDocument, CallError> {
        if !uri.starts_with("ui://") {
            return Err(CallError::Malformed(format!("{uri:?} is not a ui:// resource")));
        }
        let params = ReadResourceRequestParams::new(uri.to_owned());
        let read = self
            .bounded(behalf, |session| async move { session.peer().read_resource(params).await.map_err(|e| CallError::from_service(&e)) })
            .await?;
        let value = serde_json::to_value(read).map_err(|e| CallError::Malformed(e.to_string()))?;
        self.fits(&value)?;
        AppDocument::from_read(uri, &value)
    }

    /// Runs `request` on the session within the server's time bound; a
    /// session that failed is dropped, to be made again by the next request.
    pub(crate) async fn bounded<T, F, Fut>(&self, behalf: Behalf<'_>, request: F) -> Result<T, CallError>
    where
        F: FnOnce(Arc<Session>) -> Fut,
        Fut: Future<Output = Result<T, CallError>>,
    {
        self.bounded_on(behalf, Pausable::new(self.config.timeout()), request).await
    }

    /// As [`Server::bounded`], on a bound that stops while a person is
    /// asked (the call's questions pause it).
    async fn bounded_on<T, F, Fut>(&self, behalf: Behalf<'_>, clock: Arc<Pausable>, request: F) -> Result<T, CallError>
    where
        F: FnOnce(Arc<Session>) -> Fut,
        Fut: Future<Output = Result<T, CallError>>,
    {
        let timeout = self.config.timeout();
        let owner = self.owner(behalf);
        let outcome = tokio::select! {
            outcome = async {
                let session = self.session(&owner, behalf).await?;
                request(session).await
            } => outcome,
            () = clock.expired() => Err(CallError::Timeout(timeout)),
        };
        if matches!(outcome, Err(CallError::Timeout(_) | CallError::Unreachable(_) | CallError::Closed { .. } | CallError::NeedsSignIn { .. })) {
            self.sessions.lock().await.remove(&owner);
            self.tools.lock().await.remove(&owner);
        }
        outcome.map_err(|e| match e {
            CallError::Closed { .. } => CallError::Closed { limit: self.config.max_result_bytes },
            other => other.of_server(self.name()),
        })
    }

    pub(crate) fn fits(&self, value: &Value) -> Result<(), CallError> {
        let size = lattice_core::document::size(value);
        if size > self.config.max_result_bytes {
            return Err(CallError::TooLarge { limit: self.config.max_result_bytes });
        }
        Ok(())
    }

    /// `owner`'s session, made if it has none: within the bounds on how
    /// many run at once (in all, and of one tenant); sessions idle past
    /// `idle_secs` end first.
    async fn session(&self, owner: &str, behalf: Behalf<'_>) -> Result<Arc<Session>, CallError> {
        let tenant = behalf.tenant;
        let mut held = self.sessions.lock().await;
        let idle = Duration::from_secs(self.config.idle_secs);
        held.retain(|_, h| h.used.elapsed() < idle && !h.session.is_closed());
        // A mark that its tools changed lives no longer than its session.
        self.stale.keep(|o| held.contains_key(o));
        if let Some(h) = held.get_mut(owner) {
            h.used = Instant::now();
            return Ok(h.session.clone());
        }
        if held.len() >= self.config.max_sessions {
            return Err(CallError::Busy(format!("{} sessions of {} run already, its bound (max_sessions)", held.len(), self.name())));
        }
        let of_tenant = held.values().filter(|h| h.tenant == tenant).count();
        if of_tenant >= self.config.max_sessions_per_tenant {
            return Err(CallError::Busy(format!(
                "the tenant holds {of_tenant} sessions of {} already, its bound (max_sessions_per_tenant)",
                self.name()
            )));
        }
        let (session, process) = self.connect(owner, behalf).await?;
        let session = Arc::new(session);
        held.insert(owner.to_owned(), Held { session: session.clone(), tenant: tenant.to_owned(), used: Instant::now(), _process: process });
        Ok(session)
    }

    async fn connect(&self, owner: &str, behalf: Behalf<'_>) -> Result<(Session, Option<ProcessGuard>), CallError> {
        let host = Host::new(self.stale.clone(), owner);
        let limit = self.config.max_result_bytes;
        if let Some(url) = &self.config.url {
            let http = self.http_client(url)?;
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone())
                .max_json_response_size(limit)
                .max_sse_event_size(limit)
                .max_error_response_size(4096);
            if let Some(token) = self.config.bearer_token().map_err(CallError::Unreachable)? {
                config = config.auth_header(token);
            }
            if self.config.sign_in.is_some() {
                // The person's own sign-in, refreshed as its authorization
                // server says; none (or none that holds): they must sign in.
                let person = Owner { tenant: behalf.tenant.to_owned(), user: behalf.user.to_owned() };
                let manager = crate::sign_in::authorized(&self.sign_in_target()?, &person).await?;
                let transport = StreamableHttpClientTransport::with_client(AuthClient::new(http, manager), config);
                return match host.serve(transport).await {
                    Ok(session) => Ok((session, None)),
                    Err(e) => match CallError::unauthorized(&e) {
                        Some(needs) => {
                            tracing::info!(server = self.name(), "a person's sign-in to the server no longer holds");
                            Err(needs.of_server(self.name()))
                        }
                        None => Err(handshake_failed(&e)),
                    },
                };
            }
            let transport = StreamableHttpClientTransport::with_client(http, config);
            return Ok((host.serve(transport).await.map_err(|e| handshake_failed(&e))?, None));
        }
        let env = self.config.env.iter().map(|(k, v)| v.read().map(|v| (k.clone(), v))).collect::<Result<_, _>>().map_err(CallError::Unreachable)?;
        let home = process::home_of(&self.homes, self.name(), owner);
        let spawned = process::spawn(self.name(), &self.config.command, &env, &self.config.limits, &home)?;
        let transport = AsyncRwTransport::new_client(spawned.stdout, spawned.stdin).with_max_line_length(limit);
        let session = host.serve(transport).await.map_err(|e| handshake_failed(&e))?;
        Ok((session, Some(spawned.guard)))
    }

    fn http_client(&self, url: &str) -> Result<reqwest::Client, CallError> {
        // The process's TLS provider, if nothing installed one first (the
        // model client does the same).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &self.config.headers {
            let value = value.read().map_err(CallError::Unreachable)?;
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|e| CallError::Unreachable(e.to_string()))?;
            let mut value = reqwest::header::HeaderValue::from_str(&value)
                .map_err(|_| CallError::Unreachable(format!("header {name}'s value is not a header's")))?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(self.config.timeout())
            .default_headers(headers);
        if !self.config.allow_internal {
            let parsed = url::Url::parse(url).map_err(|e| CallError::Unreachable(e.to_string()))?;
            let literal = match parsed.host() {
                Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
                Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
                _ => None,
            };
            if literal.is_some_and(is_internal) {
                return Err(CallError::Unreachable(format!("{url} is an internal address, and this server may not use one (allow_internal)")));
            }
            builder = builder.dns_resolver(Arc::new(Guarded));
        }
        builder.build().map_err(|e| CallError::Unreachable(e.to_string()))
    }
}

/// A handshake that failed, said in at most a line: what the operator
/// reads in the console (the whole of it goes to the service's log).
fn handshake_failed(e: &dyn std::fmt::Display) -> CallError {
    let detail = e.to_string();
    tracing::info!(error = %detail, "a connected server's handshake failed");
    let short: String = detail.chars().take(200).collect();
    CallError::Unreachable(format!("the handshake failed: {short}"))
}

async fn list(session: &Session) -> Result<Vec<ServerTool>, CallError> {
    let mut tools = Vec::new();
    let mut cursor = None;
    for _ in 0..PAGES_MAX {
        let params = cursor.take().map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
        let page = session.peer().list_tools(params).await.map_err(|e| CallError::from_service(&e))?;
        for tool in page.tools {
            let value = serde_json::to_value(&tool).map_err(|e| CallError::Malformed(e.to_string()))?;
            tools.push(ServerTool::from_listed(&value));
            if tools.len() >= TOOLS_MAX {
                return Ok(tools);
            }
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    Ok(tools)
}

impl ServerTool {
    fn from_listed(tool: &Value) -> Self {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
        let ui = tool.pointer("/_meta/ui");
        let app = ui
            .and_then(|ui| ui.get("resourceUri"))
            .or_else(|| tool.pointer("/_meta/ui~1resourceUri"))
            .and_then(Value::as_str)
            .filter(|uri| uri.starts_with("ui://"))
            .map(str::to_owned);
        let visibility = ui.and_then(|ui| ui.get("visibility")).and_then(Value::as_array);
        let for_model = visibility.is_none_or(|v| v.iter().any(|x| x == "model"));
        let for_app = visibility.is_none_or(|v| v.iter().any(|x| x == "app"));
        Self {
            name: text(tool.get("name")),
            description: text(tool.get("description")),
            input_schema: tool.get("inputSchema").cloned().unwrap_or_else(|| json!({"type": "object"})),
            app,
            for_model,
            for_app,
        }
    }
}

/// An app's document as its server gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct AppDocument {
    pub uri: String,
    pub html: String,
    /// `_meta.ui` of the content: its CSP wishes, border, domain.
    pub ui: Value,
}

impl AppDocument {
    fn from_read(uri: &str, read: &Value) -> Result<Self, CallError> {
        let contents = read.get("contents").and_then(Value::as_array).ok_or_else(|| CallError::Malformed("no contents".into()))?;
        let content = contents
            .iter()
            .find(|c| c.get("mimeType").and_then(Value::as_str).is_some_and(|m| m.replace(' ', "").eq_ignore_ascii_case(APP_MIME)))
            .ok_or_else(|| CallError::Malformed(format!("{uri} has no {APP_MIME} content")))?;
        let html = content.get("text").and_then(Value::as_str).ok_or_else(|| CallError::Malformed(format!("{uri} is not text")))?;
        Ok(Self { uri: uri.to_owned(), html: html.to_owned(), ui: content.pointer("/_meta/ui").cloned().unwrap_or(Value::Null) })
    }
}
