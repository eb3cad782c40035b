//! Configuration (REQUIREMENTS.md O3): defaults < `lattice.toml` (or `--config FILE`)
//! < environment (`LATTICE_…`). Every key is documented here and in
//! docs/CONFIGURATION.md; `lattice config` prints the values in force.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// One process, SQLite, dev sign-in: `lattice up`.
    Embedded,
    /// Separate services on one machine, dev sign-in.
    Local,
    /// No dev sign-in; a token secret must be configured.
    Production,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `embedded`, `local` or `production` (LATTICE_PROFILE).
    pub profile: Profile,
    /// `sqlite://PATH` or `postgres://…` (LATTICE_DATABASE_URL).
    pub database_url: String,
    /// Connections in the database pool (LATTICE_DB_MAX_CONNECTIONS).
    pub db_max_connections: u32,
    /// Where the portal and `/v1` listen (LATTICE_HTTP_ADDR).
    pub http_addr: SocketAddr,
    /// Where the apps origin listens (LATTICE_APPS_ADDR).
    pub apps_addr: SocketAddr,
    /// The apps origin as browsers reach it (LATTICE_APPS_ORIGIN).
    pub apps_origin: String,
    /// NATS, when the bridge should publish (LATTICE_NATS_URL); unset in the
    /// embedded default.
    pub nats_url: Option<String>,
    /// The HS256 token secret, at least 32 bytes (LATTICE_AUTH_SECRET).
    /// Required in production; elsewhere one is made and kept in
    /// `DATA_DIR/auth-secret`.
    pub auth_secret: Option<String>,
    /// How long minted tokens last, in seconds (LATTICE_TOKEN_TTL_SECS).
    pub token_ttl_secs: u64,
    /// Local state: the SQLite file's default home and the dev secret
    /// (LATTICE_DATA_DIR).
    pub data_dir: PathBuf,
    /// The largest request body, in bytes (LATTICE_MAX_BODY_BYTES).
    pub max_body_bytes: usize,
    /// `text` or `json` log lines (LATTICE_LOG_FORMAT).
    pub log_format: LogFormat,
    /// A tracing filter such as `info` or `lattice_log=debug` (LATTICE_LOG).
    pub log: String,
    /// Seconds that in-flight requests get to finish on shutdown
    /// (LATTICE_SHUTDOWN_GRACE_SECS).
    pub shutdown_grace_secs: u64,
    /// An OpenAI-compatible API root such as `https://host/v1`
    /// (LATTICE_MODEL_BASE_URL); unset: only the scripted models.
    pub model_base_url: Option<String>,
    /// Its API key (LATTICE_MODEL_API_KEY).
    pub model_api_key: Option<String>,
    /// The model to ask (LATTICE_MODEL_NAME); runs that name no model use it.
    pub model_name: Option<String>,
    /// Seconds the model service may stay silent: before its answer
    /// starts, and between two parts of a streamed answer
    /// (LATTICE_MODEL_TIMEOUT_SECS).
    pub model_timeout_secs: u64,
    /// How many times a model call that met a 429 or a 5xx is made again,
    /// after the service's Retry-After or a jittered backoff from 0.5 s
    /// (LATTICE_MODEL_RETRIES).
    pub model_retries: u32,
    /// Model calls one run may make (LATTICE_RUN_MAX_MODEL_CALLS).
    pub run_max_model_calls: usize,
    /// Tokens one run's model calls may use, as the service counts them
    /// (LATTICE_RUN_MAX_TOKENS).
    pub run_max_tokens: u64,
    /// Seconds one run may spend running; waiting for a person does not
    /// count (LATTICE_RUN_MAX_SECONDS).
    pub run_max_seconds: u64,
    /// Seed the demo workspace in `lattice up` (LATTICE_SEED_DEMO).
    pub seed_demo: bool,
    /// The NATS user the bridge connects as (LATTICE_NATS_USER).
    pub nats_user: Option<String>,
    /// Its password (LATTICE_NATS_PASSWORD).
    pub nats_password: Option<String>,
    /// The CA file that signs the NATS server's certificate (`tls://` URLs;
    /// without it the system's roots).
    pub nats_ca_file: Option<PathBuf>,
    /// The bridge's checkpoint name (LATTICE_BRIDGE_NAME).
    pub bridge_name: String,
    /// The copies of the LATTICE stream the bridge asks for when it creates
    /// it (LATTICE_NATS_STREAM_REPLICAS): 3 on a three-server cluster.
    pub nats_stream_replicas: usize,
    /// The chat host's built files (LATTICE_WEB_DIR); unset: `web/` in the
    /// folder above the binary's (`target/web` for `target/debug/lattice`).
    pub web_dir: Option<PathBuf>,
    /// The portal's origin as browsers reach it (LATTICE_PORTAL_ORIGIN);
    /// unset: `http://` and LATTICE_HTTP_ADDR. The sandbox proxy talks to
    /// this origin only.
    pub portal_origin: Option<String>,
    /// Where `lattice serve edge` finds the log service (LATTICE_LOG_URL).
    pub log_url: Option<String>,
    /// Where `lattice serve edge` finds `lattice serve mcp`
    /// (LATTICE_MCP_URL); unset: the edge serves no `/mcp`.
    pub mcp_url: Option<String>,
    /// What an app may call without asking, per tool: `allow`, `deny` or
    /// `ask`, and per app (LATTICE_APP_TOOL_POLICY, e.g.
    /// `get_state=allow,submit=ask,acme:art_01…:submit=deny`).
    pub app_tool_policy: String,
    /// The Host names the portal, `/v1` and `/mcp` answer for,
    /// comma-separated, ports ignored (LATTICE_ALLOWED_HOSTS); others get
    /// 421, a guard against DNS rebinding. Unset: the listen address,
    /// `localhost`, `127.0.0.1` and `::1`.
    pub allowed_hosts: Option<String>,
    /// Older name for more allowed hosts, kept working: its names are
    /// allowed as well (LATTICE_MCP_ALLOWED_HOSTS).
    pub mcp_allowed_hosts: Option<String>,
    /// Lets dev sign-in (`POST /v1/dev/token`, outside production) answer
    /// on a listener that is not loopback (LATTICE_DEV_SIGN_IN_REMOTE).
    pub dev_sign_in_remote: bool,
    /// Writes one caller (a token's tenant and user) may make per second,
    /// sustained; 0: no limit (LATTICE_RATE_WRITES_PER_SEC).
    pub rate_writes_per_sec: u32,
    /// Writes one caller may make at once before that rate applies
    /// (LATTICE_RATE_WRITE_BURST).
    pub rate_write_burst: u32,
    /// Live streams one caller may hold open at once
    /// (LATTICE_MAX_STREAMS_PER_CALLER).
    pub max_streams_per_caller: usize,
    /// Milliseconds between the switch stream's heartbeats; a chat that
    /// hears none for three of them turns apps off and forms read-only
    /// until it hears again (LATTICE_SWITCH_HEARTBEAT_MS).
    pub switch_heartbeat_ms: u64,
    /// Seconds a request may take to answer; a live stream's start counts,
    /// not its life (LATTICE_REQUEST_TIMEOUT_SECS).
    pub request_timeout_secs: u64,
    /// Browser origins whose pages may call `/mcp` (CORS), comma-separated
    /// (LATTICE_MCP_ALLOWED_ORIGINS, e.g. `https://host.example`); unset:
    /// none, and a request from any browser origin but the server's own
    /// is refused.
    pub mcp_allowed_origins: Option<String>,
    /// The OAuth authorization servers that issue tokens for `/mcp`,
    /// comma-separated (LATTICE_MCP_AUTHORIZATION_SERVERS): named in its
    /// protected-resource metadata (RFC 9728) for MCP clients to find.
    pub mcp_authorization_servers: Option<String>,
    /// The scopes an MCP client asks the authorization servers for to reach
    /// `/mcp`, comma-separated (LATTICE_MCP_SCOPES, e.g. `mcp` or
    /// `api://lattice/mcp`): named in its protected-resource metadata.
    pub mcp_scopes: Option<String>,
    /// The proxies whose `X-Forwarded-Host` and `X-Forwarded-Proto` are
    /// believed, as IP addresses and CIDR blocks, comma-separated
    /// (LATTICE_TRUSTED_PROXIES, e.g. `10.0.0.0/8`): the edge, for the
    /// services behind it; a TLS-terminating ingress, for the edge. Unset:
    /// nobody's, and a request is taken by its own Host and plain HTTP.
    pub trusted_proxies: Option<String>,
    /// Where OpenTelemetry traces and metrics go over OTLP/HTTP
    /// (LATTICE_OTLP_ENDPOINT, e.g. `http://otel-collector:4318`); unset:
    /// none are recorded.
    pub otlp_endpoint: Option<String>,
    /// The MCP servers lattice's agent may call and whose apps the chat
    /// shows, by name (`[mcp_servers.<name>]`, docs/MCP.md "Connecting a
    /// server"): each governed by its switch key `mcp:<name>`.
    #[serde(default)]
    pub mcp_servers: std::collections::BTreeMap<String, lattice_connect::ServerConfig>,
    /// The largest file one upload may be (LATTICE_FILE_MAX_BYTES).
    pub file_max_bytes: u64,
    /// The bytes of files one tenant may hold (LATTICE_FILE_QUOTA_BYTES).
    pub file_quota_bytes: u64,
    /// The files one tenant may hold (LATTICE_FILE_QUOTA_FILES).
    pub file_quota_files: u64,
    /// The company identity providers people sign in with, by name
    /// (`[oidc_providers.<name>]`, or inline in LATTICE_OIDC_PROVIDERS;
    /// docs/IDENTITY.md): each an OpenID Connect issuer, lattice's client
    /// there, the tenant it signs people into, and how its groups become
    /// roles.
    #[serde(default)]
    pub oidc_providers: std::collections::BTreeMap<String, lattice_identity::ProviderConfig>,
    /// How long a sign-in session's token lasts (LATTICE_SESSION_TOKEN_TTL_SECS):
    /// the chat renews it while the person is active, so it is also how
    /// long an inactive person stays signed in.
    pub session_token_ttl_secs: u64,
    /// How long a sign-in session lasts however active its person
    /// (LATTICE_SESSION_MAX_AGE_SECS); then they sign in again.
    pub session_max_age_secs: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            profile: Profile::Embedded,
            database_url: "sqlite://data/lattice.db".into(),
            db_max_connections: 16,
            http_addr: "127.0.0.1:8080".parse().expect("a literal address"),
            apps_addr: "127.0.0.1:8081".parse().expect("a literal address"),
            // Another site than the portal's (127.0.0.1): the browser keeps
            // a busy app out of the chat's process, and no cookie of the
            // portal's site reaches the apps origin.
            apps_origin: "http://localhost:8081".into(),
            nats_url: None,
            auth_secret: None,
            token_ttl_secs: 7 * 24 * 3600,
            data_dir: "data".into(),
            max_body_bytes: 1024 * 1024,
            log_format: LogFormat::Text,
            log: "info".into(),
            shutdown_grace_secs: 20,
            model_base_url: None,
            model_api_key: None,
            model_name: None,
            model_timeout_secs: 60,
            model_retries: 4,
            run_max_model_calls: 24,
            run_max_tokens: 200_000,
            run_max_seconds: 600,
            seed_demo: true,
            nats_user: None,
            nats_password: None,
            nats_ca_file: None,
            bridge_name: "bridge".into(),
            nats_stream_replicas: 1,
            web_dir: None,
            portal_origin: None,
            log_url: None,
            mcp_url: None,
            app_tool_policy: "get_state=allow,set_state=allow,submit=ask".into(),
            allowed_hosts: None,
            mcp_allowed_hosts: None,
            dev_sign_in_remote: false,
            rate_writes_per_sec: 20,
            rate_write_burst: 100,
            max_streams_per_caller: 32,
            request_timeout_secs: 30,
            switch_heartbeat_ms: 5000,
            mcp_allowed_origins: None,
            mcp_authorization_servers: None,
            mcp_scopes: None,
            trusted_proxies: None,
            otlp_endpoint: None,
            mcp_servers: Default::default(),
            file_max_bytes: lattice_log::FileLimits::default().max_bytes,
            file_quota_bytes: lattice_log::FileLimits::default().quota_bytes,
            file_quota_files: lattice_log::FileLimits::default().quota_files,
            oidc_providers: Default::default(),
            session_token_ttl_secs: lattice_log::SessionLimits::default().token_ttl.as_secs(),
            session_max_age_secs: lattice_log::SessionLimits::default().max_age.as_secs(),
        }
    }
}

impl Config {
    /// Reads the layers. A file given with `--config` must exist; the
    /// default `lattice.toml` is read only when present.
    pub fn load(file: Option<&Path>) -> anyhow::Result<Self> {
        let config = Self::read(file)?;
        config.validate()?;
        config.app_tools()?;
        config.trusted_proxies()?;
        config.connections()?;
        config.identity()?;
        Ok(config)
    }

    /// The layers read, nothing checked yet (`lattice doctor` checks them
    /// one by one).
    pub fn read(file: Option<&Path>) -> anyhow::Result<Self> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        match file {
            Some(path) => {
                if !path.exists() {
                    bail!("configuration file {} does not exist", path.display());
                }
                figment = figment.merge(Toml::file(path));
            }
            None => figment = figment.merge(Toml::file("lattice.toml")),
        }
        // Only this struct's keys are read from the environment, so another
        // LATTICE_ variable (a test's, a later version's) is not an error.
        let keys: Vec<String> = match serde_json::to_value(Config::default()) {
            Ok(serde_json::Value::Object(map)) => map.keys().cloned().collect(),
            _ => Vec::new(),
        };
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let config: Config = figment.merge(Env::prefixed("LATTICE_").only(&keys)).extract().context("reading the configuration")?;
        Ok(config)
    }

    /// What every service needs. Each service's own needs (the signing
    /// secret, the database) are checked where it starts: the edge uses
    /// neither and starts without them.
    pub fn validate(&self) -> anyhow::Result<()> {
        if let Some(secret) = &self.auth_secret
            && secret.len() < 32
        {
            bail!("LATTICE_AUTH_SECRET must be at least 32 bytes, it has {}", secret.len());
        }
        if self.profile == Profile::Production {
            let placeholder = |what: &str, value: &str| {
                is_placeholder(value).then(|| {
                    anyhow::anyhow!(
                        "{what} is a placeholder shipped with lattice: the production profile refuses it; make one (`openssl rand -hex 32`)"
                    )
                })
            };
            if let Some(e) = self.auth_secret.as_deref().and_then(|s| placeholder("LATTICE_AUTH_SECRET", s)) {
                return Err(e);
            }
            if let Some(e) = self.nats_password.as_deref().and_then(|s| placeholder("LATTICE_NATS_PASSWORD", s)) {
                return Err(e);
            }
            if let Some(e) = database_password(&self.database_url).and_then(|s| placeholder("the password in LATTICE_DATABASE_URL", s)) {
                return Err(e);
            }
        }
        self.app_allowances()?;
        Ok(())
    }

    /// What each connected server's apps may reach (`app_domains`),
    /// checked and normalised: one origin each, never a pattern, never
    /// the chat's or the apps origin. Only servers that allow something.
    pub fn app_allowances(&self) -> anyhow::Result<std::collections::BTreeMap<String, lattice_ui::app_domains::Domains>> {
        let own = [self.portal_origin(), self.apps_origin.clone()];
        let own: Vec<&str> = own.iter().map(String::as_str).collect();
        let mut out = std::collections::BTreeMap::new();
        for (name, server) in &self.mcp_servers {
            if server.app_domains.is_empty() {
                continue;
            }
            let allowed = server.app_domains.clone().allowance(&own).map_err(|e| anyhow::anyhow!("mcp_servers.{name}.app_domains: {e}"))?;
            out.insert(name.clone(), allowed);
        }
        Ok(out)
    }

    /// Where the chat host's files are.
    pub fn web_dir(&self) -> PathBuf {
        if let Some(dir) = &self.web_dir {
            return dir.clone();
        }
        let exe = std::env::current_exe().ok();
        let beside = exe.as_deref().and_then(Path::parent).and_then(Path::parent).map(|d| d.join("web"));
        beside.unwrap_or_else(|| PathBuf::from("target/web"))
    }

    /// The Host names every HTTP service answers for.
    pub fn allowed_hosts(&self) -> lattice_api::guard::AllowedHosts {
        let listed = |list: &Option<String>| -> Vec<String> {
            list.as_deref().unwrap_or_default().split(',').map(str::trim).filter(|h| !h.is_empty()).map(str::to_owned).collect()
        };
        let mut names = listed(&self.allowed_hosts);
        if self.allowed_hosts.is_none() {
            names.extend(["localhost".to_owned(), "127.0.0.1".to_owned(), "[::1]".to_owned()]);
            if !self.http_addr.ip().is_unspecified() {
                names.push(self.http_addr.to_string());
            }
        }
        names.extend(listed(&self.mcp_allowed_hosts));
        lattice_api::guard::AllowedHosts::new(names)
    }

    /// The per-caller limits.
    pub fn limits(&self) -> lattice_api::guard::Limits {
        lattice_api::guard::Limits {
            writes_per_sec: self.rate_writes_per_sec,
            write_burst: self.rate_write_burst,
            streams_per_caller: self.max_streams_per_caller,
            request_timeout: std::time::Duration::from_secs(self.request_timeout_secs),
        }
    }

    pub fn mcp_allowed_origins(&self) -> Vec<String> {
        let list = self.mcp_allowed_origins.as_deref().unwrap_or_default();
        list.split(',').map(str::trim).filter(|o| !o.is_empty()).map(str::to_owned).collect()
    }

    /// The proxies whose forwarded headers are believed.
    pub fn trusted_proxies(&self) -> anyhow::Result<lattice_edge::TrustedProxies> {
        lattice_edge::TrustedProxies::parse(self.trusted_proxies.as_deref().unwrap_or_default())
            .map_err(|e| anyhow::anyhow!("LATTICE_TRUSTED_PROXIES: {e}"))
    }

    pub fn portal_origin(&self) -> String {
        self.portal_origin.clone().unwrap_or_else(|| format!("http://{}", self.http_addr))
    }

    /// The app tool policy: per tool, and per app where one is named.
    /// The connected MCP servers, checked: made once per process, so that
    /// every part of it shares one session per server.
    pub fn connections(&self) -> anyhow::Result<lattice_connect::Connections> {
        static MADE: std::sync::OnceLock<lattice_connect::Connections> = std::sync::OnceLock::new();
        if let Some(made) = MADE.get() {
            return Ok(made.clone());
        }
        // Each stdio server's folder (its home) under the data folder.
        let homes = std::path::absolute(self.data_dir.join("mcp")).unwrap_or_else(|_| self.data_dir.join("mcp"));
        let portal = self.portal_origin();
        let portal = portal.trim_end_matches('/');
        let sign_ins = lattice_connect::SignIns {
            keeper: std::sync::Arc::new(self.server_keeper().clone()),
            redirect_uri: format!("{portal}{}", lattice_api::routes::connections::CALLBACK_PATH),
            // Authorization servers fetch the document: only over https.
            client_metadata_url: portal
                .starts_with("https://")
                .then(|| format!("{portal}{}", lattice_api::routes::connections::CLIENT_METADATA_PATH)),
        };
        let made = lattice_connect::Connections::configure_with(&self.mcp_servers, homes, Some(sign_ins))
            .map_err(|e| anyhow::anyhow!("mcp_servers: {e}"))?;
        Ok(MADE.get_or_init(|| made).clone())
    }

    /// Where people's sign-ins to connected servers are kept: given the
    /// log once it runs (`serve::start_log_trusted`).
    pub fn server_keeper(&self) -> &'static lattice_agent::sign_ins::LogKeeper {
        static KEEPER: std::sync::OnceLock<lattice_agent::sign_ins::LogKeeper> = std::sync::OnceLock::new();
        KEEPER.get_or_init(Default::default)
    }

    /// The identity providers, checked (no network: each is discovered at
    /// its first use): made once per process, so every part of it shares
    /// one key cache per provider. An `http://` issuer is taken outside the
    /// production profile only.
    pub fn identity(&self) -> anyhow::Result<Option<lattice_identity::Providers>> {
        static MADE: std::sync::OnceLock<Option<lattice_identity::Providers>> = std::sync::OnceLock::new();
        if let Some(made) = MADE.get() {
            return Ok(made.clone());
        }
        let made = if self.oidc_providers.is_empty() {
            None
        } else {
            let options = lattice_identity::ProvidersOptions {
                allow_http: self.profile != Profile::Production,
                mcp_audience: Some(format!("{}/mcp", self.portal_origin().trim_end_matches('/'))),
                clock: lattice_core::clock::system(),
                timeout: std::time::Duration::from_secs(10),
            };
            Some(lattice_identity::Providers::new(&self.oidc_providers, options).map_err(|e| anyhow::anyhow!("oidc_providers: {e}"))?)
        };
        Ok(MADE.get_or_init(|| made).clone())
    }

    /// How long sign-in sessions and their tokens last.
    pub fn session_limits(&self) -> lattice_log::SessionLimits {
        lattice_log::SessionLimits {
            token_ttl: std::time::Duration::from_secs(self.session_token_ttl_secs.clamp(60, 24 * 3600)),
            max_age: std::time::Duration::from_secs(self.session_max_age_secs.clamp(300, 90 * 24 * 3600)),
            ..Default::default()
        }
    }

    /// What files may hold.
    pub fn file_limits(&self) -> lattice_log::FileLimits {
        lattice_log::FileLimits { max_bytes: self.file_max_bytes, quota_bytes: self.file_quota_bytes, quota_files: self.file_quota_files }
    }

    pub fn app_tools(&self) -> anyhow::Result<lattice_ui::app_policy::AppToolPolicy> {
        lattice_ui::app_policy::AppToolPolicy::parse(&self.app_tool_policy).map_err(|e| anyhow::anyhow!("LATTICE_APP_TOOL_POLICY: {e}"))
    }

    /// Whether `POST /v1/dev/token` answers: outside production, on a
    /// loopback listener (or where LATTICE_DEV_SIGN_IN_REMOTE says so).
    pub fn dev_sign_in(&self) -> bool {
        self.profile != Profile::Production && (self.http_addr.ip().is_loopback() || self.dev_sign_in_remote)
    }

    /// The configured secret, or the data folder's (made on first use);
    /// production takes only a configured one.
    pub fn secret(&self) -> anyhow::Result<Vec<u8>> {
        if let Some(secret) = &self.auth_secret {
            return Ok(secret.as_bytes().to_vec());
        }
        if self.profile == Profile::Production {
            bail!("the production profile needs LATTICE_AUTH_SECRET (at least 32 bytes; `openssl rand -hex 32`)");
        }
        let path = self.data_dir.join("auth-secret");
        if let Ok(existing) = std::fs::read_to_string(&path) {
            return Ok(existing.trim().as_bytes().to_vec());
        }
        std::fs::create_dir_all(&self.data_dir).with_context(|| format!("creating {}", self.data_dir.display()))?;
        let secret = hex::encode(rand::random::<[u8; 32]>());
        write_private(&path, &secret).with_context(|| format!("writing {}", path.display()))?;
        Ok(secret.into_bytes())
    }

    /// The configuration as TOML, with the secret masked.
    pub fn printable(&self) -> String {
        let mut shown = self.clone();
        if shown.auth_secret.is_some() {
            shown.auth_secret = Some("********".into());
        }
        if shown.nats_password.is_some() {
            shown.nats_password = Some("********".into());
        }
        if shown.model_api_key.is_some() {
            shown.model_api_key = Some("********".into());
        }
        shown.database_url = mask_password(&shown.database_url);
        toml::to_string(&shown).unwrap_or_default()
    }
}

#[cfg(unix)]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(contents.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    std::fs::write(path, contents)
}

/// The values of the secrets that ship in this repository's examples
/// (`.env.example`, `infra/k8s/overlays/dev/secrets.env.example`): known to
/// everyone, so never a production secret. A test keeps the list in step
/// with the files.
pub const PLACEHOLDERS: &[&str] = &[
    "change-me",
    "change-me-change-me-change-me-change-me",
    "change-me-bridge",
    "change-me-rules",
    "change-me-service",
    "dev-only",
    "dev-only-dev-only-dev-only-dev-only-32",
    "dev-only-bridge",
    "dev-only-rules",
    "dev-only-service",
];

/// Whether `value` is one of the shipped placeholders, or made like one.
pub fn is_placeholder(value: &str) -> bool {
    let lower = value.trim().to_ascii_lowercase();
    PLACEHOLDERS.contains(&lower.as_str()) || lower.starts_with("change-me") || lower.starts_with("dev-only")
}

/// The password in `postgres://user:password@host/db`.
fn database_password(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let (userinfo, _) = rest.split_once('@')?;
    userinfo.split_once(':').map(|(_, password)| password)
}

/// `postgres://user:secret@host/db` → `postgres://user:********@host/db`.
pub fn mask_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let Some((userinfo, host)) = rest.split_once('@') else { return url.to_owned() };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:********@{host}"),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key is a row of docs/CONFIGURATION.md's table, with its
    /// variable, and the table names no key that is gone: a key added to
    /// `Config` without its documentation fails here.
    #[test]
    fn every_key_is_documented_and_every_documented_key_exists() {
        let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/CONFIGURATION.md")).unwrap();
        let keys: Vec<String> = match serde_json::to_value(Config::default()).unwrap() {
            serde_json::Value::Object(map) => map.keys().cloned().collect(),
            other => panic!("the configuration is not a table: {other}"),
        };
        let rows: Vec<(String, String)> = doc
            .lines()
            .filter_map(|line| {
                let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(|c| c.trim().trim_matches('`')).collect();
                (cells.len() >= 2 && cells[1].starts_with("LATTICE_")).then(|| (cells[0].to_owned(), cells[1].to_owned()))
            })
            .collect();
        for key in &keys {
            let variable = format!("LATTICE_{}", key.to_uppercase());
            assert!(rows.contains(&(key.clone(), variable.clone())), "docs/CONFIGURATION.md has no row `{key}` | `{variable}`");
        }
        for (key, _) in &rows {
            assert!(keys.contains(key), "docs/CONFIGURATION.md documents `{key}`, which the configuration does not have");
        }
    }

    /// Every secret the repository's examples ship is refused in
    /// production, so copying an example into production fails at once.
    #[test]
    fn production_refuses_every_shipped_placeholder() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut seen = 0;
        for file in [".env.example", "infra/k8s/overlays/dev/secrets.env.example"] {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
                let Some((key, value)) = line.split_once('=') else { continue };
                let value = if key.contains("url") { database_password(value).unwrap_or(value) } else { value };
                assert!(is_placeholder(value), "{file}: {key}={value} is not known as a placeholder");
                // Refused wherever it is given: as the signing secret (when
                // long enough to be one) and as a password.
                if value.len() >= 32 {
                    let as_secret = Config { profile: Profile::Production, auth_secret: Some(value.to_owned()), ..Config::default() };
                    assert!(as_secret.validate().unwrap_err().to_string().contains("placeholder"), "{file}: {key}");
                }
                let as_password = Config { profile: Profile::Production, nats_password: Some(value.to_owned()), ..Config::default() };
                assert!(as_password.validate().unwrap_err().to_string().contains("placeholder"), "{file}: {key}");
                seen += 1;
            }
        }
        assert!(seen >= 10, "{seen} secrets read");
        // A real one passes; a short one does not; production needs one.
        let good = Config { profile: Profile::Production, auth_secret: Some("9f2c".repeat(16)), ..Config::default() };
        good.validate().unwrap();
        let short = Config { profile: Profile::Production, auth_secret: Some("short".into()), ..Config::default() };
        assert!(short.validate().unwrap_err().to_string().contains("at least 32 bytes"));
        let none = Config { profile: Profile::Production, ..Config::default() };
        none.validate().expect("a service that signs nothing (the edge) starts without a secret");
        assert!(none.secret().unwrap_err().to_string().contains("needs LATTICE_AUTH_SECRET"));
        let db =
            Config { profile: Profile::Production, database_url: "postgres://lattice:dev-only@postgres:5432/lattice".into(), ..Config::default() };
        assert!(db.validate().unwrap_err().to_string().contains("LATTICE_DATABASE_URL"));
    }

    /// The proxies are addresses and blocks, none by default, and a list
    /// that is neither stops the service at start; compose.yaml's services
    /// believe the address it gives the edge.
    #[test]
    fn trusted_proxies_are_addresses_and_blocks() {
        assert!(Config::default().trusted_proxies().unwrap().is_empty());
        let set = Config { trusted_proxies: Some("10.213.47.10, fd00::/8".into()), ..Config::default() }.trusted_proxies().unwrap();
        assert!(set.trusts("10.213.47.10".parse().unwrap()) && set.trusts("fd00::1".parse().unwrap()));
        assert!(!set.trusts("10.213.47.1".parse().unwrap()));
        let bad = Config { trusted_proxies: Some("edge".into()), ..Config::default() }.trusted_proxies().unwrap_err();
        assert!(bad.to_string().contains("LATTICE_TRUSTED_PROXIES"), "{bad}");

        let compose = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../compose.yaml")).unwrap();
        let value =
            |key: &str| compose.lines().find_map(|l| l.trim().strip_prefix(key)).map(str::trim).unwrap_or_else(|| panic!("compose.yaml sets {key}"));
        let trusted = lattice_edge::TrustedProxies::parse(value("LATTICE_TRUSTED_PROXIES:")).unwrap();
        assert!(trusted.trusts(value("ipv4_address:").parse().unwrap()), "the edge's address is believed");
    }

    /// A server's `app_domains` stops the start unless each entry is one
    /// origin, and never the chat's or the apps origin; what passes is
    /// written back normalised.
    #[test]
    fn an_apps_allowance_is_checked_at_start() {
        let with = |domains: serde_json::Value| -> Config {
            let server: lattice_connect::ServerConfig =
                serde_json::from_value(serde_json::json!({"command": ["node", "map.js"], "app_domains": domains})).unwrap();
            Config { mcp_servers: [("map".to_owned(), server)].into(), ..Config::default() }
        };
        let ok = with(serde_json::json!({"resource": ["HTTPS://Cesium.com:443/"]}));
        ok.validate().unwrap();
        assert_eq!(ok.app_allowances().unwrap()["map"].resource, ["https://cesium.com"]);
        for (bad, said) in [
            (serde_json::json!({"connect": ["*"]}), "mcp_servers.map.app_domains: connect: \"*\""),
            (serde_json::json!({"frame": ["https://*.example.com"]}), "is a pattern"),
            (serde_json::json!({"resource": ["http://localhost:8081"]}), "lattice's own origin"),
        ] {
            let refused = with(bad.clone()).validate().unwrap_err().to_string();
            assert!(refused.contains(said), "{bad}: {refused}");
        }
        let unknown = serde_json::from_value::<lattice_connect::ServerConfig>(serde_json::json!({"command": ["x"], "app_domains": {"script": []}}));
        assert!(unknown.is_err(), "an unknown kind is refused");
    }

    #[test]
    fn passwords_are_masked() {
        assert_eq!(mask_password("postgres://u:p@h:5432/d"), "postgres://u:********@h:5432/d");
        assert_eq!(mask_password("sqlite://data/x.db"), "sqlite://data/x.db");
    }
}
