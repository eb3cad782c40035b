//! The MCP exporter (REQUIREMENTS.md M): lattice's agent toolset and its forms,
//! dashboards and apps for outside agents and MCP hosts, over rmcp.
//!
//! Every call acts as the caller's principal through the log's one write
//! path, so a dashboard shown over MCP, a form sent from another host's view
//! and a change an app makes are the same commands, with the same checks and
//! switches, as in lattice's own chat. The server declares the MCP Apps
//! extension; views are `ui://` resources (`views`), results carry
//! `structuredContent`, a Markdown fallback (`fallback`) and the artifact's
//! receipt (id, version, digest).

mod app_calls;
mod calls;
mod completion;
mod elicited;
mod fallback;
mod flips;
mod form_answers;
pub mod http;
mod listing;
mod logging;
mod rounds;
mod scope;
mod sessions;
pub mod stdio;
mod subscriptions;
mod tell;
mod tool_errors;
mod views;

use std::sync::Arc;

use lattice_log::{Authenticated, LogService};
use rmcp::ErrorData as McpError;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, ExtensionCapabilities, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, MetaObject, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use serde_json::{Value, json};

pub use listing::{FORM_SUBMISSIONS, SUBMIT_FORM};
pub use views::{APP_VIEWS, DASHBOARD_VIEW, FORM_VIEW, UI_MIME};

/// The exporter for one MCP session.
#[derive(Clone)]
pub struct Exporter {
    log: LogService,
    /// The caller over stdio (one token for the process); over HTTP each
    /// request carries its own.
    fixed: Option<Arc<Authenticated>>,
    /// Apps' tool calls: the same decisions, audit rows and state writes
    /// as lattice's chat host.
    apps: lattice_app_calls::AppCalls,
    /// The vendored MCP Apps SDK, inlined into apps that ask for it.
    sdk: Option<Arc<str>>,
    /// Switch flips, told to the sessions of the tenants they concern.
    flips: flips::Flips,
    /// The resources this session follows (`subscriptions`).
    subscriptions: subscriptions::Subscriptions,
    /// The level its client asked to hear log messages at (`logging`).
    level: logging::Level,
}

impl Exporter {
    /// `apps` decides and carries out apps' tool calls: the one the chat
    /// host's API uses, where both run in one process.
    pub fn over_http(log: LogService, apps: lattice_app_calls::AppCalls) -> Self {
        let flips = flips::Flips::new(log.clone());
        Self { apps, log, fixed: None, sdk: None, flips, subscriptions: Default::default(), level: Default::default() }
    }

    /// This exporter for a new session: the same parts, none of another
    /// session's subscriptions or log level.
    pub fn for_a_session(&self) -> Self {
        Self { subscriptions: Default::default(), level: Default::default(), ..self.clone() }
    }

    /// The exporter for one caller, whatever the requests carry (stdio).
    pub fn acting_as(mut self, who: Authenticated) -> Self {
        self.fixed = Some(Arc::new(who));
        self
    }

    /// Inlines `sdk` where an app has `<script data-lattice-sdk="ext-apps">`.
    pub fn with_sdk(mut self, sdk: Option<Arc<str>>) -> Self {
        self.sdk = sdk;
        self
    }

    /// The caller of a request. Over HTTP `/mcp`'s front verified its token
    /// and asked whether a sign-out ended it (src/http.rs); over stdio the
    /// token was verified once, when the process started, and nothing is in
    /// front: each request asks here, so a sign-out ends a stdio caller's
    /// requests as it ends an HTTP caller's.
    async fn caller(&self, context: &RequestContext<RoleServer>) -> Result<Authenticated, McpError> {
        let who = self.caller_in(&context.extensions)?;
        if self.fixed.is_some() {
            self.log.still_signed_in(&who).await.map_err(|e| McpError::invalid_request(e.to_string(), None))?;
        }
        Ok(who)
    }

    fn caller_in(&self, extensions: &rmcp::model::Extensions) -> Result<Authenticated, McpError> {
        if let Some(who) = &self.fixed {
            return Ok((**who).clone());
        }
        // Verified once, in front of `/mcp` (src/http.rs).
        extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<Authenticated>())
            .cloned()
            .ok_or_else(|| McpError::invalid_request("a bearer token is needed", None))
    }
}

/// `_meta` from a JSON object.
pub(crate) fn meta(value: Value) -> MetaObject {
    let mut m = MetaObject::new();
    if let Value::Object(map) = value {
        for (k, v) in map {
            m.insert(k, v);
        }
    }
    m
}

/// The `_meta` that links a tool or a result to its view, under both keys
/// hosts read.
pub(crate) fn view_meta(uri: &str) -> MetaObject {
    meta(json!({"ui": {"resourceUri": uri}, "ui/resourceUri": uri}))
}

impl ServerHandler for Exporter {
    // Logging is declared: `logging` says why, deprecated as it is.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let mut extensions = ExtensionCapabilities::new();
        let ui = json!({"mimeTypes": [UI_MIME]});
        extensions.insert("io.modelcontextprotocol/ui".into(), ui.as_object().cloned().unwrap_or_default());
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_completions()
                .enable_logging()
                .enable_extensions_with(extensions)
                .build(),
        )
        .with_server_info(Implementation::new("lattice", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "lattice puts forms, dashboards and sandboxed mini apps into a lattice chat thread. Tools act in the \
                 caller's most recent thread unless given `thread`. ask_form asks the person through the client's form \
                 elicitation when the client has it and the form is flat, and returns the answer; otherwise it returns \
                 at once with the form's id, and form_submissions waits for the answer.",
        )
    }

    /// Once a session is open, its toolset is watched: when a switch flip
    /// changes what the caller is offered, the session hears
    /// `notifications/tools/list_changed`.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let Ok(who) = self.caller_in(&context.extensions) else { return };
        tokio::spawn(listing::watch(self.log.clone(), self.flips.clone(), who, tell::Tell::Session(context.peer)));
    }

    async fn list_tools(&self, _request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListToolsResult, McpError> {
        let who = self.caller(&context).await?;
        let scope = scope::Scope::find(&self.log, &who, None).await.map_err(scope::refused)?;
        let enabled = scope.switches(&self.log, &who).await?;
        Ok(ListToolsResult::with_all_items(listing::tools(&enabled)))
    }

    /// A tool call joins the caller's trace: the W3C `traceparent` its
    /// `_meta` carries (SEP-414), else its HTTP request's header, is the
    /// parent of the call's span and is kept with every envelope it commits.
    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, McpError> {
        use tracing::Instrument;
        let traceparent = context.meta.get_traceparent().map(str::to_owned).or_else(|| http::request_traceparent(&context.extensions));
        let span = tracing::info_span!("mcp.tools/call", otel.name = %format!("tools/call {}", request.name), otel.kind = "server", mcp.tool = %request.name);
        if let Some(parent) = traceparent.as_deref().filter(|t| lattice_log::is_traceparent(t)) {
            lattice_telemetry::set_parent(&span, parent);
        }
        lattice_log::with_traceparent(traceparent, self.call_tool_traced(request, context).instrument(span)).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.caller(&context).await?;
        Ok(ListResourcesResult::with_all_items(views::listed()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.caller(&context).await?;
        Ok(ListResourceTemplatesResult::with_all_items(views::templates().into_iter().chain(subscriptions::templates()).collect()))
    }

    async fn read_resource(&self, request: ReadResourceRequestParams, context: RequestContext<RoleServer>) -> Result<ReadResourceResponse, McpError> {
        let who = self.caller(&context).await?;
        if let Some(read) = subscriptions::read(&self.log, &who, &request.uri).await {
            return Ok(ReadResourceResult::new(read?).into());
        }
        Ok(views::read(&self.log, &who, &request.uri, self.sdk.as_deref()).await?.into())
    }

    async fn complete(&self, request: CompleteRequestParams, context: RequestContext<RoleServer>) -> Result<CompleteResult, McpError> {
        let who = self.caller(&context).await?;
        let info = completion::complete(&self.log, &who, &request.r#ref, &request.argument.name, &request.argument.value).await;
        Ok(CompleteResult::new(info))
    }

    /// The level this session's client hears log messages at (`logging`).
    #[allow(deprecated)]
    async fn set_level(&self, request: rmcp::model::SetLevelRequestParams, context: RequestContext<RoleServer>) -> Result<(), McpError> {
        self.caller(&context).await?;
        self.level.set(request.level);
        Ok(())
    }

    async fn subscribe(&self, request: SubscribeRequestParams, context: RequestContext<RoleServer>) -> Result<(), McpError> {
        let who = self.caller(&context).await?;
        self.subscriptions.subscribe(&self.log, who, &request.uri, context.peer).await
    }

    async fn unsubscribe(&self, request: UnsubscribeRequestParams, context: RequestContext<RoleServer>) -> Result<(), McpError> {
        self.caller(&context).await?;
        self.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    /// What a `subscriptions/listen` may follow: the toolset, and lattice's
    /// artifact resources (`subscriptions::listenable`).
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.resource_subscriptions = requested.resource_subscriptions.as_deref().map(subscriptions::listenable);
        Some(accepted)
    }

    /// One `subscriptions/listen` stream (2026-07-28, in place of a
    /// session's): the toolset and the accepted resources followed as for
    /// a session, told on this stream, until the client ends it or may no
    /// longer read any of it.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let request = context.request_context();
        let who = self.caller(request).await?;
        let tell = tell::Tell::Listen(context.sink().clone(), request.peer.clone());
        let accepted = context.accepted();
        let uris = accepted.resource_subscriptions.as_deref().unwrap_or_default();
        // From where the log stood when the request came, before the client
        // was told it follows: nothing between the two goes untold.
        let from = http::request_position(&request.extensions).unwrap_or_else(|| self.log.horizon().current());
        let mut followers = subscriptions::listen(&self.log, &who, uris, from, &tell).await;
        if accepted.tools_list_changed == Some(true) {
            followers.spawn(listing::watch(self.log.clone(), self.flips.clone(), who, tell));
        }
        // With nothing followed the stream stays open, acknowledged, until the client ends it.
        let following = !followers.is_empty();
        let all_ended = async move { while followers.join_next().await.is_some() {} };
        tokio::select! {
            _ = context.cancelled() => {}
            _ = all_ended, if following => {}
        }
        Ok(())
    }
}

impl Exporter {
    /// A tool call, within its trace: the retry of one that asked
    /// (`rounds`), an app's call or an agent tool's.
    async fn call_tool_traced(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, McpError> {
        let who = self.caller(&context).await?;
        if let Some(sealed) = &request.request_state {
            return calls::retry(self, &who, &request, sealed, &context).await;
        }
        let args = request.arguments.clone().map(Value::Object).unwrap_or_else(|| json!({}));
        if listing::is_app_tool(&request.name) {
            return Ok(app_calls::call(self, &who, &request.name, &args, &context).await?.into());
        }
        calls::call(self, &who, &request.name, &args, &context).await
    }
}
