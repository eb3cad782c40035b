//! The client the official MCP conformance suite tests
//! (`@modelcontextprotocol/conformance`, `client` scenarios): lattice's own
//! MCP client, `lattice-connect`, as the runner uses it, against the
//! suite's server at the URL it appends to the command. The scenario is
//! `MCP_CONFORMANCE_SCENARIO`; what a scenario gives besides
//! (a pre-registered client's id and secret) is `MCP_CONFORMANCE_CONTEXT`.
//!
//! It lists the server's tools and calls each, as a person's run would. A
//! server that asks for a sign-in (`auth/*`) is answered as the chat
//! answers a person: `begin_sign_in` gives the authorization server's
//! address, which a browser here follows up to the redirect back to
//! lattice (not followed: the `code`, `state` and `iss` are read from its
//! `Location`), `finish_sign_in` takes them, and the call is made again.
//! A call refused for want of scope asks the scope it names (step-up).
//! Every request, discovery and token exchange is lattice-connect's (rmcp's
//! client): nothing of OAuth is done here but the person's browser.
//!
//! `e2e/tests/it/mcp/client_conformance.rs` runs the suite with it.

use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use lattice_connect::{Behalf, CallError, Connections, Keeper, Owner, ServerConfig, SignIns};
use serde_json::{Value, json};

/// The server's name in lattice.
const SERVER: &str = "conformance";
/// Where the authorization server sends the person back (lattice's
/// callback; nothing listens here: the browser stops at the redirect).
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// lattice's Client ID Metadata Document, as the suite expects it: an
/// authorization server that takes such documents is given this address.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// The most sign-ins one run asks of its person: a server that keeps
/// refusing after as many is not asked again (the suite's
/// `auth/scope-retry-limit`).
const SIGN_INS_MAX: usize = 3;
/// The most redirects the person's browser follows before lattice's.
const HOPS_MAX: usize = 5;

/// What the log keeps for lattice, kept here in memory for one run.
#[derive(Default)]
struct MemoryKeeper {
    kept: Mutex<HashMap<(Owner, String), String>>,
    begun: Mutex<HashMap<String, (Owner, String, String)>>,
}

#[async_trait::async_trait]
impl Keeper for MemoryKeeper {
    async fn load(&self, owner: &Owner, server: &str) -> Result<Option<String>, String> {
        Ok(self.kept.lock().unwrap().get(&(owner.clone(), server.to_owned())).cloned())
    }

    async fn save(&self, owner: &Owner, server: &str, value: &str) -> Result<(), String> {
        self.kept.lock().unwrap().insert((owner.clone(), server.to_owned()), value.to_owned());
        Ok(())
    }

    async fn clear(&self, owner: &Owner, server: &str) -> Result<(), String> {
        self.kept.lock().unwrap().remove(&(owner.clone(), server.to_owned()));
        Ok(())
    }

    async fn begin(&self, state: &str, owner: &Owner, server: &str, value: &str) -> Result<(), String> {
        self.begun.lock().unwrap().insert(state.to_owned(), (owner.clone(), server.to_owned(), value.to_owned()));
        Ok(())
    }

    async fn attempt(&self, state: &str) -> Result<Option<(Owner, String, String)>, String> {
        Ok(self.begun.lock().unwrap().get(state).cloned())
    }

    async fn finish(&self, state: &str) -> Result<(), String> {
        self.begun.lock().unwrap().remove(state).map(drop).ok_or_else(|| "this sign-in was finished already".to_owned())
    }
}

/// The arguments a scenario's tool is called with (others get none).
fn arguments(tool: &str) -> Value {
    match tool {
        "add_numbers" => json!({"a": 2, "b": 3}),
        _ => json!({}),
    }
}

/// Where a pre-registered client's secret is kept for the run.
fn secret_file() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("lattice-conformance-secret-{}", std::process::id()))
}

/// The server's table, as an operator would write it for this scenario.
fn config(url: &str, scenario: &str, context: &Value) -> Result<ServerConfig, String> {
    let mut table = json!({"url": url, "allow_internal": true, "timeout_secs": 20, "policy": {"default": "allow"}});
    if scenario.starts_with("auth/") {
        let mut sign_in = json!({});
        if let (Some(id), Some(secret)) = (context["client_id"].as_str(), context["client_secret"].as_str()) {
            // A client registered for lattice beforehand: its secret in a
            // file, as a deployment mounts it.
            let file = secret_file();
            std::fs::write(&file, secret).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
            sign_in = json!({"client_id": id, "client_secret_file": file});
        }
        table["sign_in"] = sign_in;
    }
    serde_json::from_value(table).map_err(|e| e.to_string())
}

struct Person<'a> {
    connections: &'a Connections,
    owner: Owner,
    browser: reqwest::Client,
    sign_ins: usize,
}

impl Person<'_> {
    fn behalf(&self) -> Behalf<'_> {
        Behalf { tenant: &self.owner.tenant, user: &self.owner.user }
    }

    /// Signs in to the server as the chat's person does, asking for
    /// `scope` besides (what a refused call named).
    async fn sign_in(&mut self, scope: Option<&str>) -> Result<(), String> {
        if self.sign_ins >= SIGN_INS_MAX {
            return Err(format!("the server still asks for a sign-in after {SIGN_INS_MAX}: not asked again"));
        }
        self.sign_ins += 1;
        let server = self.connections.get(SERVER).ok_or("no server")?;
        let more: Vec<String> = scope.map(|s| s.split_whitespace().map(str::to_owned).collect()).unwrap_or_default();
        let mut at = server.begin_sign_in(self.behalf(), &more).await.map_err(|e| e.to_string())?;
        eprintln!("sign-in {}: {at}", self.sign_ins);
        for _ in 0..HOPS_MAX {
            let answer = self.browser.get(&at).send().await.map_err(|e| format!("the browser: {e}"))?;
            let location = answer
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| format!("{at} answered {} without a redirect", answer.status()))?;
            let next = url::Url::parse(&at).and_then(|base| base.join(location)).map_err(|e| e.to_string())?;
            if !next.as_str().starts_with(REDIRECT_URI) {
                at = next.into();
                continue;
            }
            let query: BTreeMap<String, String> = next.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
            if let Some(error) = query.get("error") {
                return Err(format!("the authorization server refused: {error}"));
            }
            let (code, state) = query.get("code").zip(query.get("state")).ok_or_else(|| format!("no code and state in {next}"))?;
            let issuer = query.get("iss").map(String::as_str);
            self.connections.finish_sign_in(&self.owner, state, code, issuer).await.map_err(|e| e.to_string())?;
            return Ok(());
        }
        Err(format!("more than {HOPS_MAX} redirects before lattice's"))
    }
}

async fn run(url: &str, scenario: &str, context: &Value) -> Result<(), String> {
    let servers = BTreeMap::from([(SERVER.to_owned(), config(url, scenario, context)?)]);
    let sign_ins = SignIns {
        keeper: Arc::new(MemoryKeeper::default()),
        redirect_uri: REDIRECT_URI.to_owned(),
        client_metadata_url: Some(CLIENT_METADATA_URL.to_owned()),
    };
    let homes = std::env::temp_dir().join(format!("lattice-conformance-{}", std::process::id()));
    let connections = Connections::configure_with(&servers, homes, Some(sign_ins))?;
    let browser = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().map_err(|e| e.to_string())?;
    let mut person = Person { connections: &connections, owner: Owner { tenant: "acme".into(), user: "ana".into() }, browser, sign_ins: 0 };
    let server = connections.get(SERVER).ok_or("no server")?.clone();

    let tools = loop {
        match server.tools(person.behalf()).await {
            Err(CallError::NeedsSignIn { scope, .. }) => person.sign_in(scope.as_deref()).await?,
            other => break other.map_err(|e| format!("listing tools: {e}"))?,
        }
    };
    eprintln!("tools: {:?}", tools.iter().map(|t| &t.name).collect::<Vec<_>>());
    for tool in tools.iter() {
        let result = loop {
            match server.call(person.behalf(), &tool.name, arguments(&tool.name)).await {
                Err(CallError::NeedsSignIn { scope, .. }) => person.sign_in(scope.as_deref()).await?,
                other => break other.map_err(|e| format!("calling {}: {e}", tool.name))?,
            }
        };
        println!("{}: {result}", tool.name);
    }
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: conformance-client <server-url> (MCP_CONFORMANCE_SCENARIO names the scenario)");
        return ExitCode::FAILURE;
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT").ok().and_then(|c| serde_json::from_str(&c).ok()).unwrap_or(Value::Null);
    let outcome = run(&url, &scenario, &context).await;
    let _ = std::fs::remove_file(secret_file());
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client ({scenario}): {e}");
            ExitCode::FAILURE
        }
    }
}
