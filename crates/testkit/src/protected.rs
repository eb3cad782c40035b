//! A remote MCP server protected by OAuth, as the MCP authorization spec
//! (2025-11-25) has one, for the tests of lattice's MCP client:
//! `e2e/mcp/protected-server.mjs`, the official MCP SDK's server over
//! Streamable HTTP, run as its own process on a loopback port. It takes only
//! JWT access tokens the OpenID provider of the tests ([`crate::idp`])
//! issued for it (`aud` = its `/mcp` URL, the RFC 8707 `resource` a client
//! asks for), answers 401 with a `WWW-Authenticate` naming its protected
//! resource metadata (RFC 9728) and 403 `insufficient_scope` when a token
//! lacks a scope (its `write_note` tool needs `notes:write`: step-up).
//! Its sessions keep notes of their own and belong to the person who opened
//! them. [`ProtectedServer::seen`] tells what it saw, by the tokens' `sub`.
//!
//! The provider must know the server's URL before the server starts (it is
//! the resource's indicator) and the server must know the provider's
//! issuer: take a port first ([`free_port`]), name the resource with it,
//! start the provider, then the server on that port.
//!
//! Its node modules come from `npm ci` in `e2e/` (`cargo xtask test` runs
//! it); without them, starting fails and says so.

use crate::node_script::{self, Started, lock};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// The scope every request needs.
pub const READ_SCOPE: &str = "notes:read";
/// The scope `write_note` needs besides.
pub const WRITE_SCOPE: &str = "notes:write";

/// How the server starts.
#[derive(Clone, Debug)]
pub struct ProtectedSetup {
    issuer: String,
    port: u16,
    audience: Option<String>,
    scopes_supported: Vec<String>,
    required_scope: String,
    name: String,
}

impl ProtectedSetup {
    /// Tokens of `issuer` (exactly as its discovery document spells it), a
    /// free port, `aud` its own `/mcp` URL, the scopes `notes:read` and
    /// `notes:write`, `notes:read` required.
    pub fn new(issuer: &str) -> Self {
        Self {
            issuer: issuer.to_owned(),
            port: 0,
            audience: None,
            scopes_supported: vec![READ_SCOPE.into(), WRITE_SCOPE.into()],
            required_scope: READ_SCOPE.into(),
            name: "notes".into(),
        }
    }

    /// A fixed port ([`free_port`]) instead of a free one.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// The `aud` its tokens must have, instead of its own `/mcp` URL.
    pub fn audience(mut self, audience: &str) -> Self {
        self.audience = Some(audience.to_owned());
        self
    }

    /// The scopes its metadata lists.
    pub fn scopes_supported(mut self, scopes: &[&str]) -> Self {
        self.scopes_supported = scopes.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    /// The scope every request needs (403 `insufficient_scope` without it).
    pub fn required_scope(mut self, scope: &str) -> Self {
        self.required_scope = scope.to_owned();
        self
    }

    /// Its name as an MCP server and in its metadata (`resource_name`).
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.to_owned();
        self
    }
}

/// A port free now on 127.0.0.1, for a server whose URL must be known
/// before it starts (the provider's resource). Another process could take
/// it in between; on loopback, in a test, that is rare.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    listener.local_addr().expect("a bound address").port()
}

/// The `/mcp` URL a server on `port` has: the resource indicator to give the
/// provider before it starts.
pub fn url_on(port: u16) -> String {
    format!("http://127.0.0.1:{port}/mcp")
}

/// A running server; stopped when dropped.
pub struct ProtectedServer {
    url: String,
    origin: String,
    http: reqwest::Client,
    log: Arc<Mutex<String>>,
    config: PathBuf,
    child: tokio::process::Child,
}

impl ProtectedServer {
    /// A server on a free port trusting `issuer`'s tokens for its own `/mcp`
    /// URL, listing `scopes_supported` and requiring `required_scope`.
    pub async fn start(issuer: &str, scopes_supported: &[&str], required_scope: &str) -> ProtectedServer {
        Self::start_with(ProtectedSetup::new(issuer).scopes_supported(scopes_supported).required_scope(required_scope)).await
    }

    /// Writes the server's configuration to a temp file and starts `node
    /// e2e/mcp/protected-server.mjs` on it, returning once it says it is
    /// ready (it has read the provider's discovery document by then).
    pub async fn start_with(setup: ProtectedSetup) -> ProtectedServer {
        let root = node_script::repository();
        for module in ["@modelcontextprotocol/sdk", "jose", "zod"] {
            let manifest = root.join("e2e/node_modules").join(module).join("package.json");
            assert!(manifest.exists(), "{module} is not installed in e2e/node_modules: run `npm ci` in e2e/ (`cargo xtask test` does)");
        }
        let config = std::env::temp_dir().join(format!("lattice-protected-mcp-{}.json", ulid::Ulid::generate()));
        let mut document = json!({
            "port": setup.port, "issuer": setup.issuer, "scopes_supported": setup.scopes_supported,
            "required_scope": setup.required_scope, "name": setup.name,
        });
        if let Some(audience) = &setup.audience {
            document["audience"] = audience.as_str().into();
        }
        std::fs::write(&config, document.to_string()).unwrap_or_else(|e| panic!("writing {}: {e}", config.display()));

        let Started { child, log, address: url } =
            node_script::start("e2e/mcp/protected-server.mjs", &config, "the protected MCP server", "is `npm ci` done in e2e/? is the provider up?")
                .await;
        let origin = url.strip_suffix("/mcp").unwrap_or(&url).to_owned();
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(10)).build().expect("an HTTP client");
        ProtectedServer { url, origin, http, log, config, child }
    }

    /// Its MCP endpoint, `http://127.0.0.1:PORT/mcp`: the resource's
    /// indicator, and the `aud` its tokens need unless set otherwise.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Where its protected resource metadata is, as its 401s name it.
    pub fn metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.origin)
    }

    /// What it saw (`GET /_test/seen`): `{"subjects": {SUB: {"requests",
    /// "tokens" (distinct), "scopes", "client_ids"}}, "refused":
    /// {"missing_token", "invalid_token", "insufficient_scope",
    /// "session_of_another"}, "sessions": {ID: {"sub", "notes"}}}`.
    /// Only verified tokens count under `subjects`.
    pub async fn seen(&self) -> Value {
        let url = format!("{}/_test/seen", self.origin);
        let response = self.http.get(&url).send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
        assert!(response.status().is_success(), "{url}: {}", response.status());
        response.json().await.unwrap_or_else(|e| panic!("{url}: {e}"))
    }

    /// What it logged: each request's method, path, JSON-RPC method, `sub`
    /// and status (never a token).
    pub fn log(&self) -> String {
        lock(&self.log).clone()
    }
}

impl Drop for ProtectedServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_file(&self.config);
        if std::thread::panicking() {
            eprintln!("the protected MCP server's log:\n{}", self.log());
        }
    }
}
