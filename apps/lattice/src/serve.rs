//! Wiring: builds the log service from the configuration and serves it.

use std::time::Duration;

use anyhow::Context;
use std::sync::Arc;

use lattice_agent::openai::OpenAiModel;
use lattice_agent::{Budget, Models, Runner};
use lattice_api::AppState;
use lattice_bridge::{Bridge, BridgeConfig};
use lattice_log::{Authenticator, Db, LogReader, LogService, Trusted};
use tokio::net::TcpListener;

use crate::config::Config;
use crate::probes::health_routes;
use crate::schema::Behind;
use crate::signals::interrupted;

pub async fn migrate(config: &Config) -> anyhow::Result<()> {
    let db = Db::connect(&config.database_url, 2).await?;
    db.migrate().await?;
    tracing::info!("migrations applied");
    db.close().await;
    Ok(())
}

/// The log service with the UI model's kinds and checks registered, and
/// the trust its in-process parts (the runner, the demo's seed) act with.
pub(crate) async fn start_log_trusted(config: &Config, behind: Behind) -> anyhow::Result<(LogService, Trusted)> {
    let db = crate::schema::open(config, config.db_max_connections, behind).await?;
    let auth = Authenticator::new(&config.secret()?, Duration::from_secs(config.token_ttl_secs))?;
    let mut builder = LogService::builder(db, auth)
        .connected(config.connections()?.connected().clone())
        .file_limits(config.file_limits())
        .session_limits(config.session_limits());
    if let Some(providers) = config.identity()? {
        let rules = providers.rules();
        builder = builder.identity(Arc::new(providers), rules);
    }
    for kind in lattice_ui::kinds() {
        builder = builder.kind(kind);
    }
    for (command, check) in lattice_ui::checks() {
        builder = builder.check(command, check);
    }
    let (log, trusted) = builder.start_trusted();
    config.server_keeper().attach(trusted.clone());
    Ok((log, trusted))
}

/// The one place apps' calls are decided, for the chat host and MCP alike;
/// a connected server's app's calls go back to its server.
fn app_calls(config: &Config, log: &LogService) -> anyhow::Result<lattice_app_calls::AppCalls> {
    Ok(lattice_app_calls::AppCalls::new(log.clone(), config.app_tools()?).with_connections(config.connections()?))
}

/// The log service alone, for the services that run no agent.
async fn start_log(config: &Config, behind: Behind) -> anyhow::Result<LogService> {
    Ok(start_log_trusted(config, behind).await?.0)
}

/// The models: the scripted ones, and the configured OpenAI-compatible one.
fn models(config: &Config) -> anyhow::Result<Models> {
    let mut models = Models::scripted();
    if let Some(base) = &config.model_base_url {
        let name = config.model_name.clone().context("LATTICE_MODEL_NAME is needed with LATTICE_MODEL_BASE_URL")?;
        let model = OpenAiModel::new(base, config.model_api_key.clone(), &name, Duration::from_secs(config.model_timeout_secs))?
            .with_retries(config.model_retries, Duration::from_millis(500));
        models = models.with(name, Arc::new(model), true);
    }
    Ok(models)
}

async fn start_runner(config: &Config, trusted: &Trusted) -> anyhow::Result<Runner> {
    let budget =
        Budget { model_calls: config.run_max_model_calls, tokens: config.run_max_tokens, wall_time: Duration::from_secs(config.run_max_seconds) };
    let runner = Runner::new(trusted.clone(), models(config)?).with_budget(budget).with_connections(config.connections()?);
    let resumed = runner.recover().await?;
    if resumed > 0 {
        tracing::info!(runs = resumed, "driving runs that a stop interrupted");
    }
    // Replicas share the runs: a crashed one's are taken over here.
    runner.watch_orphans();
    // A connected server's key turned off ends its sessions there.
    runner.end_sessions_when_switched_off();
    Ok(runner)
}

fn bridge_config(config: &Config, url: &str) -> BridgeConfig {
    BridgeConfig {
        nats_url: url.to_owned(),
        user: config.nats_user.clone(),
        password: config.nats_password.clone(),
        ca_file: config.nats_ca_file.clone(),
        stream_replicas: config.nats_stream_replicas,
        name: config.bridge_name.clone(),
    }
}

/// The bridge in this process, when NATS is configured, until `stop`;
/// its readiness joins the service's.
fn spawn_bridge(config: &Config, log: &LogService, stop: tokio::sync::watch::Receiver<bool>) -> Option<lattice_api::state::Readiness> {
    let url = config.nats_url.as_ref()?;
    // Chains minted under the key the log service checks them with.
    let bridge = Bridge::new(LogReader::of(log), bridge_config(config, url)).with_chains(log.authenticator().chains().clone());
    let readiness = bridge_readiness(bridge.status());
    tokio::spawn(async move {
        if let Err(e) = bridge.run(stop).await {
            tracing::error!(error = %e, "the bridge stopped");
        }
    });
    Some(readiness)
}

/// The sealer in this process (docs/SEAL.md), until `stop`; it ends once
/// it has stepped down.
fn spawn_sealer(config: &Config, log: &LogService, stop: tokio::sync::watch::Receiver<bool>) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let sealer = lattice_log::Sealer::new(LogReader::of(log), crate::seal::key(config)?);
    Ok(tokio::spawn(sealer.run(stop)))
}

pub async fn log(config: Config) -> anyhow::Result<()> {
    tracing::info!(config = %config.printable(), "lattice serve log");
    let (log, trusted) = start_log_trusted(&config, Behind::Wait).await?;
    let runner = start_runner(&config, &trusted).await?;
    // The local stack (`just up`, compose) has the demo too; production never.
    if config.seed_demo && config.profile != crate::config::Profile::Production {
        crate::demo::seed(&trusted, &runner).await?;
    }
    serve_http(&config, log, runner, false).await
}

/// `lattice serve bridge`: follows the log from its checkpoint into NATS.
pub async fn bridge(config: Config) -> anyhow::Result<()> {
    tracing::info!(config = %config.printable(), "lattice serve bridge");
    let url = config.nats_url.clone().context("lattice serve bridge needs LATTICE_NATS_URL")?;
    let db = crate::schema::open(&config, 4, Behind::Wait).await?;
    let listener = TcpListener::bind(config.http_addr).await.with_context(|| format!("listening on {}", config.http_addr))?;
    // Another process commits: look often while the log moves, every 50 ms when idle.
    let reader = LogReader::open(db.clone(), Duration::from_millis(50));
    // The chains it mints, the log service checks: the same key, from the
    // deployment's token secret (docs/BRIDGE.md, Chains).
    let chains = lattice_log::chain::ChainKey::derive(&config.secret()?);
    let bridge = Bridge::new(reader, bridge_config(&config, &url)).with_chains(chains);
    // Health and readiness for orchestrators (the bridge serves nothing
    // else): ready while it publishes, and says why not otherwise.
    let probes = health_routes(db, Some(bridge_readiness(bridge.status())));
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let mut stopped = stop.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, probes)
            .with_graceful_shutdown(async move {
                let _ = stopped.changed().await;
            })
            .await;
    });
    tokio::spawn(async move {
        shutdown_signal(Duration::from_secs(10)).await;
        let _ = stop_tx.send(true);
    });
    println!("lattice bridge is following the log into {url}");
    bridge.run(stop).await?;
    Ok(())
}

/// Readiness as the bridge's status says.
fn bridge_readiness(status: Arc<lattice_bridge::BridgeStatus>) -> lattice_api::state::Readiness {
    Arc::new(move || status.ready().map_err(|why| format!("the bridge is not publishing: {why}")))
}

pub async fn up(config: Config) -> anyhow::Result<()> {
    tracing::info!(config = %config.printable(), "lattice up");
    let (log, trusted) = start_log_trusted(&config, Behind::Migrate).await?;
    let runner = start_runner(&config, &trusted).await?;
    if config.seed_demo && config.profile != crate::config::Profile::Production {
        crate::demo::seed(&trusted, &runner).await?;
    }
    serve_http(&config, log, runner, true).await
}

async fn serve_http(config: &Config, log: LogService, runner: Runner, with_index: bool) -> anyhow::Result<()> {
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let stop_signal = shutdown.clone();
    // `lattice up` runs the bridge in-process whenever NATS is configured.
    let readiness = if with_index { spawn_bridge(config, &log, shutdown.clone()) } else { None };
    // Every replica seals behind its commits; one at a time holds the lead.
    let sealer = spawn_sealer(config, &log, shutdown.clone())?;
    let guard = Arc::new(lattice_api::guard::Guard::new(config.limits()));
    // One place decides apps' calls, for the chat host and MCP alike.
    let apps = app_calls(config, &log)?;
    let state = AppState {
        log: log.clone(),
        runner,
        apps: apps.clone(),
        dev_sign_in: config.dev_sign_in(),
        identity: config.identity()?,
        portal_origin: config.portal_origin(),
        max_body_bytes: config.max_body_bytes,
        guard: guard.clone(),
        readiness,
        switch_heartbeat: Duration::from_millis(config.switch_heartbeat_ms),
        shutdown,
    };
    let downloads = lattice_api::downloads(state.clone());
    let mut app = lattice_api::router(state).merge(mcp_routes(config, &log, apps, guard)?);
    if with_index {
        app = app.merge(portal(config)?);
        spawn_apps_origin(config, stop_signal.clone(), Some(downloads)).await?;
    } else {
        // Behind the edge, whose apps origin passes `/files/{id}` here; the
        // portal's origin (the edge's) passes `/v1` only.
        app = app.merge(downloads);
    }
    serve_until_signal(config, app, stop, "the chat at /, the API under /v1, OpenAPI at /openapi.json").await?;
    // The sealer steps down (a write) before the pool closes: the process
    // started next leads at once, not when this one's lead runs out.
    if tokio::time::timeout(Duration::from_secs(5), sealer).await.is_err() {
        tracing::warn!("the sealer did not step down within 5 s: the next sealer leads when its lead runs out");
    }
    // Every request has finished: nothing is left half-written. Closing the
    // pool checkpoints SQLite's WAL.
    log.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on SIGINT or SIGTERM; a second signal, or the grace period
/// running out, ends the process.
async fn shutdown_signal(grace: Duration) {
    interrupted().await;
    tracing::info!(grace_secs = grace.as_secs(), "shutting down: finishing in-flight requests");
    tokio::spawn(async move {
        tokio::time::sleep(grace).await;
        tracing::warn!("grace period over; exiting");
        std::process::exit(1);
    });
}

/// The portal's own routes: the chat host's files and `/config.json`.
fn portal(config: &Config) -> anyhow::Result<axum::Router> {
    let portal =
        lattice_edge::PortalConfig { apps_origin: config.apps_origin.clone(), link_sign_in: config.profile != crate::config::Profile::Production };
    Ok(lattice_edge::portal_router(&config.web_dir(), portal))
}

/// The apps origin on its own listener (LATTICE_APPS_ADDR), until `stop`.
/// The apps origin: the sandbox proxy, and where the log is in this
/// process, files' downloads (`lattice_api::downloads`).
async fn spawn_apps_origin(config: &Config, mut stop: tokio::sync::watch::Receiver<bool>, downloads: Option<axum::Router>) -> anyhow::Result<()> {
    let mut router = lattice_edge::apps_router(lattice_edge::AppsOrigin {
        portal_origin: config.portal_origin(),
        sdk_dir: Some(lattice_edge::sdk_dir_of(&config.web_dir())),
        allowances: config.app_allowances()?,
    });
    if let Some(downloads) = downloads {
        router = router.merge(downloads);
    }
    let listener = TcpListener::bind(config.apps_addr).await.with_context(|| format!("listening on {} (the apps origin)", config.apps_addr))?;
    println!("the apps origin is on http://{} (the sandbox proxy only)", listener.local_addr()?);
    tokio::spawn(async move {
        // A clone of the router per connection, not its route table built
        // again (which serving a bare `Router` does).
        let served = axum::serve(without_delay(listener), router.into_make_service()).with_graceful_shutdown(async move {
            let _ = stop.changed().await;
        });
        if let Err(e) = served.await {
            tracing::error!(error = %e, "the apps origin stopped");
        }
    });
    Ok(())
}

/// `lattice serve edge`: the portal (the chat host, `/v1` passed to the log
/// service) and the apps origin.
pub async fn edge(config: Config) -> anyhow::Result<()> {
    tracing::info!(config = %config.printable(), "lattice serve edge");
    let upstream = config.log_url.clone().context("lattice serve edge needs LATTICE_LOG_URL (the log service)")?;
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    // What the edge tells the services of the name and scheme a request
    // came by is its own word, or the trusted proxy's in front of it.
    let trusted = config.trusted_proxies()?;
    // Files' downloads are the log service's, on the apps origin.
    let downloads = lattice_edge::downloads_router_behind(&upstream, trusted.clone());
    spawn_apps_origin(&config, shutdown.clone(), Some(downloads)).await?;
    let mut app = lattice_edge::upstream_router_behind(&upstream, trusted.clone())
        .merge(portal(&config)?)
        .route("/healthz", axum::routing::get(|| async { "ok" }));
    let mut what = format!("the chat at /, /v1 passed to {upstream}");
    if let Some(mcp) = &config.mcp_url {
        app = app.merge(lattice_edge::mcp_router_behind(mcp, trusted));
        what.push_str(&format!(", /mcp to {mcp}"));
    }
    serve_until_signal(&config, app, stop, &what).await
}

/// Serves `app` on LATTICE_HTTP_ADDR until SIGINT or SIGTERM, then tells
/// `stop` (live streams end) and lets in-flight requests finish.
async fn serve_until_signal(config: &Config, app: axum::Router, stop: tokio::sync::watch::Sender<bool>, what: &str) -> anyhow::Result<()> {
    // Every service answers only for its configured Host names.
    let hosts = config.allowed_hosts();
    let app = app
        .layer(axum::middleware::from_fn(move |req, next| hosts.clone().check(req, next)))
        .layer(axum::middleware::from_fn(crate::observe::observe));
    let listener = TcpListener::bind(config.http_addr).await.with_context(|| format!("listening on {}", config.http_addr))?;
    println!("lattice is listening on http://{} ({what})", listener.local_addr()?);
    let grace = Duration::from_secs(config.shutdown_grace_secs);
    // Each request knows its peer: forwarded headers count from the
    // trusted proxies only (LATTICE_TRUSTED_PROXIES).
    axum::serve(without_delay(listener), app.into_make_service_with_connect_info::<std::net::SocketAddr>())
        .with_graceful_shutdown(async move {
            shutdown_signal(grace).await;
            let _ = stop.send(true);
        })
        .await
        .context("serving HTTP")
}

/// The listener with Nagle's algorithm off on each connection (axum leaves
/// it on): an answer written in pieces, a stream's events above all, goes
/// out as it is written instead of waiting for the peer's acknowledgement.
/// (The listener's type is named, not hidden, so that axum can tell each
/// request its peer through it.)
fn without_delay(listener: TcpListener) -> axum::serve::TapIo<TcpListener, fn(&mut tokio::net::TcpStream)> {
    fn no_delay(tcp: &mut tokio::net::TcpStream) {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY not set");
        }
    }
    axum::serve::ListenerExt::tap_io(listener, no_delay as fn(&mut tokio::net::TcpStream))
}

/// `/mcp`: the MCP exporter, as configured, over streamable HTTP.
fn mcp_routes(
    config: &Config,
    log: &LogService,
    apps: lattice_app_calls::AppCalls,
    guard: Arc<lattice_api::guard::Guard>,
) -> anyhow::Result<axum::Router> {
    let mut authorization_servers: Vec<String> = config
        .mcp_authorization_servers
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    // The providers people sign in with issue tokens for `/mcp` too.
    for issuer in config.identity()?.map(|p| p.issuers()).unwrap_or_default() {
        if !authorization_servers.contains(&issuer) {
            authorization_servers.push(issuer);
        }
    }
    let trusted = config.trusted_proxies()?;
    let router = lattice_mcp::http::router(exporter(config, log, apps), guard, config.mcp_allowed_origins(), trusted.clone());
    let scopes = config.mcp_scopes.as_deref().unwrap_or_default().split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect();
    Ok(router.merge(lattice_mcp::http::protected_resource(authorization_servers, scopes, trusted)))
}

/// The exporter as configured: the app tool policy, and the vendored SDK
/// for apps that ask for it, when the chat host is built.
fn exporter(config: &Config, log: &LogService, apps: lattice_app_calls::AppCalls) -> lattice_mcp::Exporter {
    let sdk = std::fs::read_to_string(lattice_edge::sdk_dir_of(&config.web_dir()).join("ext-apps.js")).ok().map(Arc::<str>::from);
    lattice_mcp::Exporter::over_http(log.clone(), apps).with_sdk(sdk)
}

/// `lattice mcp --stdio`: the exporter over stdin and stdout, as one caller.
pub async fn mcp_stdio(config: Config, token: &str) -> anyhow::Result<()> {
    let log = start_log(&config, Behind::Refuse).await?;
    let who = log.authenticator().verify(token).map_err(|e| anyhow::anyhow!("LATTICE_TOKEN: {e}"))?;
    // A token a sign-out ended starts nothing (each request checks again).
    log.still_signed_in(&who).await.map_err(|e| anyhow::anyhow!("LATTICE_TOKEN: {e}"))?;
    let exporter = exporter(&config, &log, app_calls(&config, &log)?);
    lattice_mcp::stdio::serve(exporter, who).await.map_err(|e| anyhow::anyhow!("serving MCP over stdio: {e}"))?;
    log.close().await;
    Ok(())
}

/// `lattice serve mcp`: the MCP exporter over streamable HTTP at `/mcp`,
/// with health and readiness, on its own process.
pub async fn mcp(config: Config) -> anyhow::Result<()> {
    tracing::info!(config = %config.printable(), "lattice serve mcp");
    let log = start_log(&config, Behind::Wait).await?;
    let (stop, _shutdown) = tokio::sync::watch::channel(false);
    let guard = Arc::new(lattice_api::guard::Guard::new(config.limits()));
    let apps = app_calls(&config, &log)?;
    let app = mcp_routes(&config, &log, apps, guard)?.merge(health_routes(log.clone(), None));
    serve_until_signal(&config, app, stop, "MCP at /mcp").await?;
    log.close().await;
    Ok(())
}
