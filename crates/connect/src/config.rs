//! A connected server as the operator configures it (`[mcp_servers.<name>]`
//! in lattice.toml, docs/CONFIGURATION.md): where it is, how lattice proves
//! itself to it, which tenants may use it, the bounds on each call and the
//! policy that decides them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use lattice_core::Decision;
use lattice_ui::app_domains::Domains;
use serde::{Deserialize, Serialize};

/// One server, as configured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Its Streamable HTTP endpoint (`https://…/mcp`). Only this address is
    /// contacted: no redirect is followed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Or a program lattice starts and speaks to over stdio (the embedded
    /// default's way): the program, then its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// The environment variable that holds the bearer token sent to an
    /// HTTP server (a secret, never written in the file itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_env: Option<String>,
    /// Or the file that holds it (a mounted secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_file: Option<PathBuf>,
    /// The tenants it is offered to; none listed: every tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenants: Option<Vec<String>>,
    /// Whether its address may be a loopback, private or link-local one
    /// (a server beside lattice). Off, such an address is refused, however
    /// the name resolves.
    #[serde(default)]
    pub allow_internal: bool,
    /// How long one call (or read of an app) may take.
    #[serde(default = "defaults::timeout_secs")]
    pub timeout_secs: u64,
    /// The largest answer taken from it, in bytes, refused while it arrives.
    #[serde(default = "defaults::max_result_bytes")]
    pub max_result_bytes: usize,
    /// How many of its tools one run may call.
    #[serde(default = "defaults::calls_per_run")]
    pub calls_per_run: usize,
    /// What the agent's calls of its tools get.
    #[serde(default)]
    pub policy: PolicyConfig,
    /// What calls made from its apps get (`mcp-app:<name>`), before
    /// `policy`: a tool it leaves out is decided by `policy`.
    #[serde(default)]
    pub app_policy: OverlayConfig,
    /// The environment a stdio server starts with: nothing of lattice's,
    /// only these (and `PATH`, `HOME`, `TMPDIR` and `LANG`, its own).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, Secretish>,
    /// The headers sent to an HTTP server, besides its bearer token.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, Secretish>,
    /// Bounds on a stdio server's process.
    #[serde(default)]
    pub limits: ProcessLimits,
    /// Whose a session (and a stdio server's process) is: one tenant's
    /// (`tenant`, the default) or one person's (`person`); never shared
    /// across tenants.
    #[serde(default)]
    pub isolation: Isolation,
    /// How many sessions of it may run at once, in all.
    #[serde(default = "defaults::max_sessions")]
    pub max_sessions: usize,
    /// How many of them one tenant may hold.
    #[serde(default = "defaults::max_sessions_per_tenant")]
    pub max_sessions_per_tenant: usize,
    /// How long a session nobody uses lives (its process ends with it).
    #[serde(default = "defaults::idle_secs")]
    pub idle_secs: u64,
    /// Each person signs in to this (HTTP) server with their own account
    /// (OAuth 2.1, as the MCP authorization specification describes it):
    /// its sessions are each person's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sign_in: Option<SignInConfig>,
    /// The origins its apps may reach, of those they declare
    /// (`_meta.ui.csp`), by kind: `connect`, `resource`, `frame`, `base`.
    /// None, the default: no network, as for lattice's own apps (docs/MCP.md,
    /// "The domains an app declares").
    #[serde(default, skip_serializing_if = "Domains::is_empty")]
    pub app_domains: Domains,
}

/// How people sign in to a server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignInConfig {
    /// The scopes asked for; none: those the server's metadata names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// A client registered for lattice at the server's authorization
    /// server; none: lattice's Client ID Metadata Document where the
    /// authorization server takes one, else dynamic registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// That client's secret, in a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_file: Option<PathBuf>,
}

impl SignInConfig {
    pub(crate) fn client_secret(&self) -> Result<Option<String>, crate::error::CallError> {
        self.client_secret_file
            .as_ref()
            .map(|f| {
                std::fs::read_to_string(f)
                    .map(|s| s.trim().to_owned())
                    .map_err(|e| crate::error::CallError::SignIn(format!("cannot read {}: {e}", f.display())))
            })
            .transpose()
    }
}

/// A value of a server's environment or of a header: written in the file,
/// or read, at start, from a file (a mounted secret) or from one named
/// variable of lattice's own environment (and nothing else of it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Secretish {
    Value(String),
    File { file: PathBuf },
    Env { env: String },
}

impl Secretish {
    /// The value, read now.
    pub fn read(&self) -> Result<String, String> {
        match self {
            Self::Value(v) => Ok(v.clone()),
            Self::File { file } => std::fs::read_to_string(file)
                .map(|v| v.trim_end_matches(['\n', '\r']).to_owned())
                .map_err(|e| format!("cannot read {}: {e}", file.display())),
            Self::Env { env } => std::env::var(env).map_err(|_| format!("the environment variable {env} is not set")),
        }
    }
}

/// Whose a server's session is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    #[default]
    Tenant,
    Person,
}

/// What a stdio server's process may use: set as its limits before it
/// runs (`setrlimit`), and its folder watched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessLimits {
    /// The memory it may write (its data segment, heap and private
    /// mappings: `RLIMIT_DATA`), in MiB.
    #[serde(default = "defaults::memory_mb")]
    pub memory_mb: u64,
    /// The processes its user may run (`RLIMIT_NPROC`, which does not
    /// bind root), and the processes its session may hold (counted every
    /// 2 s, whoever runs lattice: past it, the whole group is stopped).
    #[serde(default = "defaults::processes")]
    pub processes: u64,
    #[serde(default = "defaults::open_files")]
    pub open_files: u64,
    /// Seconds of CPU it may use in all.
    #[serde(default = "defaults::cpu_secs")]
    pub cpu_secs: u64,
    /// The bytes its folder (its home) may hold, and one file may be.
    #[serde(default = "defaults::disk_mb")]
    pub disk_mb: u64,
}

impl Default for ProcessLimits {
    fn default() -> Self {
        Self {
            memory_mb: defaults::memory_mb(),
            processes: defaults::processes(),
            open_files: defaults::open_files(),
            cpu_secs: defaults::cpu_secs(),
            disk_mb: defaults::disk_mb(),
        }
    }
}

/// A server's policy: a decision per tool, and one for the rest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// What a tool not listed gets. Asking is the default: a person sees
    /// each call of a server nobody decided about.
    #[serde(default = "defaults::ask")]
    pub default: Decision,
    #[serde(default)]
    pub tools: BTreeMap<String, Decision>,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        Self { default: Decision::Ask, tools: BTreeMap::new() }
    }
}

/// The overlay for calls made from a server's apps.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverlayConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Decision>,
    #[serde(default)]
    pub tools: BTreeMap<String, Decision>,
}

mod defaults {
    use lattice_core::Decision;

    pub fn timeout_secs() -> u64 {
        30
    }
    pub fn max_result_bytes() -> usize {
        1024 * 1024
    }
    pub fn calls_per_run() -> usize {
        20
    }
    pub fn ask() -> Decision {
        Decision::Ask
    }
    pub fn max_sessions() -> usize {
        64
    }
    pub fn max_sessions_per_tenant() -> usize {
        8
    }
    pub fn idle_secs() -> u64 {
        600
    }
    pub fn memory_mb() -> u64 {
        4096
    }
    pub fn processes() -> u64 {
        256
    }
    pub fn open_files() -> u64 {
        1024
    }
    pub fn cpu_secs() -> u64 {
        3600
    }
    pub fn disk_mb() -> u64 {
        256
    }
}

/// The longest a call may be allowed to take, whatever is configured.
pub const TIMEOUT_MAX: Duration = Duration::from_secs(300);
/// The largest answer that may be configured.
pub const RESULT_MAX_BYTES: usize = 16 * 1024 * 1024;

impl ServerConfig {
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs).min(TIMEOUT_MAX)
    }

    /// What is wrong with it, in words an operator acts on.
    pub fn check(&self, name: &str) -> Result<(), String> {
        lattice_core::ServerKey::check_name(name)?;
        match (&self.url, self.command.is_empty()) {
            (Some(_), false) => return Err(format!("mcp server {name}: give url or command, not both")),
            (None, true) => return Err(format!("mcp server {name}: give its url (Streamable HTTP) or its command (stdio)")),
            (Some(url), true) => {
                let parsed = url::Url::parse(url).map_err(|e| format!("mcp server {name}: url {url:?}: {e}"))?;
                if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
                    return Err(format!("mcp server {name}: url {url:?} is not an http(s) address"));
                }
                if !parsed.username().is_empty() || parsed.password().is_some() {
                    return Err(format!("mcp server {name}: put credentials in bearer_token_env or bearer_token_file, not in the url"));
                }
            }
            (None, false) => {}
        }
        if self.bearer_token_env.is_some() && self.bearer_token_file.is_some() {
            return Err(format!("mcp server {name}: give bearer_token_env or bearer_token_file, not both"));
        }
        if self.timeout_secs == 0 || Duration::from_secs(self.timeout_secs) > TIMEOUT_MAX {
            return Err(format!("mcp server {name}: timeout_secs must be 1 to {}", TIMEOUT_MAX.as_secs()));
        }
        if self.max_result_bytes == 0 || self.max_result_bytes > RESULT_MAX_BYTES {
            return Err(format!("mcp server {name}: max_result_bytes must be 1 to {RESULT_MAX_BYTES}"));
        }
        for var in self.env.keys() {
            if var.is_empty() || var.contains(['=', '\0']) {
                return Err(format!("mcp server {name}: env {var:?} is not a variable's name"));
            }
        }
        if !self.env.is_empty() && self.url.is_some() {
            return Err(format!("mcp server {name}: env is for a stdio server (command); an HTTP server gets headers"));
        }
        for header in self.headers.keys() {
            if reqwest::header::HeaderName::from_bytes(header.as_bytes()).is_err() {
                return Err(format!("mcp server {name}: headers {header:?} is not a header's name"));
            }
        }
        for value in self.env.values().chain(self.headers.values()) {
            value.read().map_err(|e| format!("mcp server {name}: {e}"))?;
        }
        if self.sign_in.is_some() {
            if self.url.is_none() {
                return Err(format!("mcp server {name}: sign_in is for an HTTP server (url): a stdio server's secrets go in env"));
            }
            if self.bearer_token_env.is_some() || self.bearer_token_file.is_some() {
                return Err(format!("mcp server {name}: give sign_in (each person's own) or a bearer token (the deployment's), not both"));
            }
        }
        if let Some(sign_in) = &self.sign_in {
            if sign_in.client_secret_file.is_some() && sign_in.client_id.is_none() {
                return Err(format!("mcp server {name}: sign_in.client_secret_file is the secret of sign_in.client_id: give both"));
            }
            if sign_in.client_id.as_ref().is_some_and(|id| id.is_empty() || id.len() > 2048) {
                return Err(format!("mcp server {name}: sign_in.client_id must be 1 to 2048 bytes"));
            }
            if let Some(bad) = sign_in.scopes.iter().find(|s| !crate::scopes::scope_is_valid(s)) {
                return Err(format!(
                    "mcp server {name}: sign_in.scopes {bad:?} is not a scope (RFC 6749 §3.3: printable ASCII but space, quote and backslash)"
                ));
            }
            // Read now, as env and headers are: a missing secret is said at start.
            sign_in.client_secret().map_err(|e| format!("mcp server {name}: sign_in.client_secret_file: {e}"))?;
        }
        if self.max_sessions == 0 || self.max_sessions_per_tenant == 0 || self.max_sessions_per_tenant > self.max_sessions {
            return Err(format!("mcp server {name}: max_sessions and max_sessions_per_tenant must be at least 1, the second at most the first"));
        }
        if self.idle_secs == 0 {
            return Err(format!("mcp server {name}: idle_secs must be at least 1"));
        }
        if let Some(tenants) = &self.tenants {
            for tenant in tenants {
                lattice_core::TenantId::parse("tenants", tenant).map_err(|_| format!("mcp server {name}: {tenant:?} is not a tenant id"))?;
            }
        }
        Ok(())
    }

    /// Its transport (`http` or `stdio`) and what may be shown of where it
    /// is: the URL's host, or the program's name (never its arguments or
    /// its token).
    pub fn shown(&self) -> (&'static str, String) {
        match &self.url {
            Some(url) => ("http", url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default()),
            None => ("stdio", self.command.first().map(|c| c.rsplit('/').next().unwrap_or(c).to_owned()).unwrap_or_default()),
        }
    }

    /// The bearer token, read from where the configuration says.
    pub fn bearer_token(&self) -> Result<Option<String>, String> {
        if let Some(var) = &self.bearer_token_env {
            return std::env::var(var).map(Some).map_err(|_| format!("the environment variable {var} holds no token"));
        }
        if let Some(path) = &self.bearer_token_file {
            let token = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            return Ok(Some(token.trim().to_owned()));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(url: &str) -> ServerConfig {
        serde_json::from_value(serde_json::json!({"url": url})).unwrap()
    }

    #[test]
    fn defaults_and_checks() {
        let config = http("https://mcp.example.com/mcp");
        assert_eq!((config.timeout_secs, config.max_result_bytes, config.calls_per_run), (30, 1024 * 1024, 20));
        assert_eq!(config.policy.default, Decision::Ask);
        assert!(config.check("budget").is_ok());
        assert!(http("ftp://x/").check("budget").unwrap_err().contains("not an http(s) address"));
        assert!(http("https://u:p@x/").check("budget").unwrap_err().contains("credentials"));
        assert!(http("https://x/").check("Budget").unwrap_err().contains("not a server name"));
        let neither: ServerConfig = serde_json::from_value(serde_json::json!({})).unwrap();
        assert!(neither.check("a").unwrap_err().contains("url (Streamable HTTP) or its command"));
        let both: ServerConfig = serde_json::from_value(serde_json::json!({"url": "https://x/", "command": ["x"]})).unwrap();
        assert!(both.check("a").unwrap_err().contains("not both"));
        let slow: ServerConfig = serde_json::from_value(serde_json::json!({"url": "https://x/", "timeout_secs": 301})).unwrap();
        assert!(slow.check("a").is_err());
        let unknown = serde_json::from_value::<ServerConfig>(serde_json::json!({"url": "https://x/", "tls": false}));
        assert!(unknown.is_err(), "an unknown key is an error, not ignored");
    }

    #[test]
    fn a_sign_in_table_is_checked_at_start() {
        let with = |sign_in: serde_json::Value| -> Result<(), String> {
            serde_json::from_value::<ServerConfig>(serde_json::json!({"url": "https://x/", "sign_in": sign_in})).unwrap().check("notes")
        };
        assert_eq!(with(serde_json::json!({})), Ok(()));
        assert_eq!(with(serde_json::json!({"scopes": ["notes:read", "openid"]})), Ok(()));
        assert!(with(serde_json::json!({"client_secret_file": "/x"})).unwrap_err().contains("give both"));
        assert!(with(serde_json::json!({"scopes": ["notes read"]})).unwrap_err().contains("is not a scope"));
        assert!(with(serde_json::json!({"scopes": ["a\"b"]})).unwrap_err().contains("is not a scope"));
        let missing = with(serde_json::json!({"client_id": "lattice", "client_secret_file": "/nonexistent/lattice-secret"})).unwrap_err();
        assert!(missing.contains("sign_in.client_secret_file") && missing.contains("/nonexistent/lattice-secret"), "{missing}");
        let stdio = serde_json::from_value::<ServerConfig>(serde_json::json!({"command": ["x"], "sign_in": {}})).unwrap();
        assert!(stdio.check("notes").unwrap_err().contains("for an HTTP server"));
    }
}
