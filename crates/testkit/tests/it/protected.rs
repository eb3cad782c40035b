//! The OAuth-protected MCP server of the tests, end to end with the real
//! OpenID provider: the provider issues a JWT access token for the server's
//! resource (code flow with PKCE and RFC 8707's `resource`), the server
//! challenges a request without one as the MCP authorization spec says,
//! serves its protected resource metadata, answers MCP over Streamable HTTP
//! with one, refuses a tool that needs more scope with 403
//! insufficient_scope (and takes it after a step-up), keeps its sessions
//! apart, and refuses tokens for another audience and forged ones.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use lattice_testkit::idp::{Account, Client, Idp, IdpSetup, KeyAlg, Resource};
use lattice_testkit::protected::{ProtectedServer, ProtectedSetup, free_port, url_on};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const SECRET: &str = "lattice-client-secret-lattice-client-secret";
const CALLBACK: &str = "http://127.0.0.1:9/v1/auth/oidc/test/callback";
/// A resource the provider also issues tokens for, that is not this server.
const OTHER: &str = "http://127.0.0.1:9/other/mcp";

/// The provider (knowing the server's URL as a resource) and the server.
async fn start() -> (Idp, ProtectedServer) {
    let port = free_port();
    let setup = IdpSetup::new()
        .key(KeyAlg::Rs256)
        .client(Client::confidential("lattice", SECRET).redirect_uri(CALLBACK))
        .account(Account::new("alice", "alice-password").username("alice.liddell"))
        .account(Account::new("bob", "bob-password"))
        .resource(Resource::new(&url_on(port)).scopes(&["notes:read", "notes:write"]))
        .resource(Resource::new(OTHER).scopes(&["notes:read", "notes:write"]));
    let idp = Idp::start(setup).await;
    let server = ProtectedServer::start_with(ProtectedSetup::new(idp.issuer()).port(port)).await;
    assert_eq!(server.url(), url_on(port));
    (idp, server)
}

/// An access token for `resource` with `scope`, as lattice gets one: the
/// code flow with PKCE and `resource` at both endpoints, in `browser`.
async fn access_token(idp: &Idp, browser: &lattice_testkit::idp::Agent, who: (&str, &str), scope: &str, resource: &str) -> String {
    let verifier = format!("{}{}", ulid::Ulid::generate(), ulid::Ulid::generate());
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let mut authorize = url::Url::parse(&format!("{}/auth", idp.issuer())).unwrap();
    authorize.query_pairs_mut().extend_pairs([
        ("client_id", "lattice"),
        ("response_type", "code"),
        ("redirect_uri", CALLBACK),
        ("scope", scope),
        ("state", "s"),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
        ("resource", resource),
    ]);
    let location = browser.sign_in(authorize.as_str(), who.0, who.1).await.unwrap_or_else(|e| panic!("{e}\n{}", idp.log()));
    let code = url::Url::parse(&location).unwrap().query_pairs().find(|(n, _)| n == "code").map(|(_, v)| v.into_owned());
    let code = code.unwrap_or_else(|| panic!("no code: {location}"));
    let form =
        [("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", CALLBACK), ("code_verifier", &verifier), ("resource", resource)];
    let response = reqwest::Client::new()
        .post(format!("{}/token", idp.issuer()))
        .basic_auth("lattice", Some(SECRET))
        .form(&form)
        .send()
        .await
        .expect("the token endpoint");
    let tokens: Value = response.json().await.unwrap();
    tokens["access_token"].as_str().unwrap_or_else(|| panic!("no access token: {tokens}")).to_owned()
}

/// A JWT's claims, unverified (the server verifies).
fn claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("a JWT");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("base64url")).expect("JSON claims")
}

/// An answer of the server: its status, headers and the JSON-RPC message
/// (from a JSON body or the SSE stream's `data:` lines).
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    message: Value,
}

impl Answer {
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
    }
}

/// A POST to the server's /mcp as a Streamable HTTP client sends one.
async fn post(server: &ProtectedServer, token: Option<&str>, session: Option<&str>, body: Value) -> Answer {
    let mut request = reqwest::Client::new()
        .post(server.url())
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.expect("the MCP server answers");
    let (status, headers) = (response.status(), response.headers().clone());
    let sse = headers.get("content-type").and_then(|v| v.to_str().ok()).is_some_and(|t| t.starts_with("text/event-stream"));
    let text = response.text().await.unwrap();
    let message = if sse {
        let data = text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).filter(|d| !d.is_empty());
        let messages: Vec<Value> = data.map(|d| serde_json::from_str(d).expect("JSON in the stream")).collect();
        messages.into_iter().find(|m| m.get("id") == body.get("id")).unwrap_or(Value::Null)
    } else {
        serde_json::from_str(&text).unwrap_or(Value::Null)
    };
    Answer { status, headers, message }
}

/// `initialize` and `notifications/initialized`: a new session's id.
async fn open_session(server: &ProtectedServer, token: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "lattice-test", "version": "1"}}});
    let answer = post(server, Some(token), None, initialize).await;
    assert_eq!(answer.status, 200, "{}\n{}", answer.message, server.log());
    assert_eq!(answer.message["result"]["serverInfo"]["name"], "notes", "{}", answer.message);
    let session = answer.header("mcp-session-id").to_owned();
    assert!(!session.is_empty(), "initialize names a session");
    let initialized = post(server, Some(token), Some(&session), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(initialized.status, 202);
    session
}

async fn call(server: &ProtectedServer, token: &str, session: &str, tool: &str, arguments: Value) -> Answer {
    post(
        server,
        Some(token),
        Some(session),
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}),
    )
    .await
}

/// A tool's structured result, after checking the call succeeded.
fn structured(answer: &Answer) -> Value {
    assert_eq!(answer.status, 200, "{}", answer.message);
    let result = &answer.message["result"];
    assert_ne!(result["isError"], true, "{result}");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().expect("a text content")).expect("JSON text");
    assert_eq!(text, result["structuredContent"], "the text and the structured content agree");
    result["structuredContent"].clone()
}

#[tokio::test]
async fn an_oauth_protected_mcp_server_takes_only_its_own_tokens() {
    let (idp, server) = start().await;
    let metadata_url = format!("{}/.well-known/oauth-protected-resource/mcp", server.origin());
    assert_eq!(server.metadata_url(), metadata_url);

    // Without a token: 401 and where to learn how to get one.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "lattice-test", "version": "1"}}});
    let refused = post(&server, None, None, initialize.clone()).await;
    assert_eq!(refused.status, 401);
    assert_eq!(refused.header("www-authenticate"), format!(r#"Bearer resource_metadata="{metadata_url}", scope="notes:read""#));

    // The protected resource metadata (RFC 9728), at both addresses.
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let document: Value = reqwest::get(format!("{}{path}", server.origin())).await.unwrap().json().await.unwrap();
        assert_eq!(document["resource"], server.url(), "{path}: {document}");
        assert_eq!(document["authorization_servers"], json!([idp.issuer()]));
        assert_eq!(document["scopes_supported"], json!(["notes:read", "notes:write"]));
        assert_eq!(document["bearer_methods_supported"], json!(["header"]));
    }

    // The provider issues a JWT access token for the server's resource.
    let alice_browser = idp.agent();
    let alice = access_token(&idp, &alice_browser, ("alice", "alice-password"), "openid notes:read", server.url()).await;
    let header = jsonwebtoken::decode_header(&alice).unwrap();
    assert_eq!(header.typ.as_deref(), Some("at+jwt"));
    let alice_claims = claims(&alice);
    assert_eq!(alice_claims["aud"], server.url());
    assert_eq!(alice_claims["iss"], idp.issuer());
    assert_eq!(alice_claims["scope"], "notes:read");

    // With it: a session, and the tools see who the token names.
    let session = open_session(&server, &alice).await;
    let listed = post(&server, Some(&alice), Some(&session), json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    let mut tools: Vec<&str> = listed.message["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    tools.sort_unstable();
    assert_eq!(tools, ["add_note", "list_notes", "whoami", "write_note"]);
    let whoami = structured(&call(&server, &alice, &session, "whoami", json!({})).await);
    assert_eq!(whoami["sub"], "alice");
    assert_eq!(whoami["preferred_username"], "alice.liddell");
    assert_eq!(whoami["scope"], "notes:read");
    assert_eq!(whoami["client_id"], "lattice");

    // Notes are the session's own: another session of the same person has none.
    assert_eq!(structured(&call(&server, &alice, &session, "add_note", json!({"text": "first"})).await)["count"], 1);
    assert_eq!(structured(&call(&server, &alice, &session, "list_notes", json!({})).await)["notes"], json!(["first"]));
    let second = open_session(&server, &alice).await;
    assert_ne!(second, session);
    assert_eq!(structured(&call(&server, &alice, &second, "list_notes", json!({})).await)["notes"], json!([]));

    // write_note needs notes:write: 403 insufficient_scope, naming the scopes to ask for (step-up).
    let write = call(&server, &alice, &session, "write_note", json!({"text": "second"})).await;
    assert_eq!(write.status, 403);
    assert_eq!(
        write.header("www-authenticate"),
        format!(
            r#"Bearer error="insufficient_scope", scope="notes:read notes:write", resource_metadata="{metadata_url}", error_description="write_note needs the notes:write scope""#
        )
    );
    let stepped = access_token(&idp, &alice_browser, ("alice", ""), "openid notes:read notes:write", server.url()).await;
    assert_eq!(claims(&stepped)["scope"], "notes:read notes:write");
    assert_eq!(structured(&call(&server, &stepped, &session, "write_note", json!({"text": "second"})).await)["count"], 2);
    assert_eq!(structured(&call(&server, &stepped, &session, "list_notes", json!({})).await)["notes"], json!(["first", "second"]));

    // A session is its person's: Bob's token does not reach Alice's session.
    let bob = access_token(&idp, &idp.agent(), ("bob", "bob-password"), "openid notes:read", server.url()).await;
    assert_eq!(call(&server, &bob, &session, "list_notes", json!({})).await.status, 404);
    let bobs = open_session(&server, &bob).await;
    assert_eq!(structured(&call(&server, &bob, &bobs, "whoami", json!({})).await)["sub"], "bob");
    assert_eq!(structured(&call(&server, &bob, &bobs, "list_notes", json!({})).await)["notes"], json!([]));

    // A real token of the same provider, for another resource: 401 invalid_token.
    let elsewhere = access_token(&idp, &alice_browser, ("alice", ""), "openid notes:read", OTHER).await;
    assert_eq!(claims(&elsewhere)["aud"], OTHER);
    for answer in [post(&server, Some(&elsewhere), None, initialize.clone()).await, call(&server, &elsewhere, &session, "whoami", json!({})).await] {
        assert_eq!(answer.status, 401);
        let challenge = answer.header("www-authenticate");
        let expected = format!(r#"Bearer error="invalid_token", resource_metadata="{metadata_url}", scope="notes:read", error_description="#);
        assert!(challenge.starts_with(&expected), "{challenge}");
        assert!(challenge.contains("aud"), "{challenge}");
    }

    // Tokens the provider did not issue for it: forged with its key but
    // expired, of another issuer, an ID token's type, without notes:read;
    // with an HMAC of its public key; unsigned.
    let forge = |changes: Value, typ: &str| {
        let mut claims = idp.claims("alice", server.url());
        claims["scope"] = "notes:read".into();
        for (name, value) in changes.as_object().unwrap() {
            claims[name] = value.clone();
        }
        idp.forge(json!({"typ": typ}), claims)
    };
    let valid = forge(json!({}), "at+jwt");
    assert_eq!(structured(&call(&server, &valid, &session, "whoami", json!({})).await)["sub"], "alice", "a well-made token is taken");
    for (what, token) in [
        ("expired", forge(json!({"exp": 1}), "at+jwt")),
        ("another issuer", forge(json!({"iss": "http://127.0.0.1:9"}), "at+jwt")),
        ("not an access token", forge(json!({}), "JWT")),
        ("HMAC", idp.forge_with_secret(idp.public_key_pem().as_bytes(), json!({"typ": "at+jwt"}), idp.claims("alice", server.url()))),
        ("unsigned", idp.forge_unsigned(json!({"typ": "at+jwt"}), idp.claims("alice", server.url()))),
        ("not a JWT", "not-a-jwt".to_owned()),
    ] {
        let answer = call(&server, &token, &session, "whoami", json!({})).await;
        assert_eq!(answer.status, 401, "{what}");
        assert!(answer.header("www-authenticate").starts_with(r#"Bearer error="invalid_token""#), "{what}: {}", answer.header("www-authenticate"));
    }
    let unscoped = forge(json!({"scope": "openid"}), "at+jwt");
    let answer = call(&server, &unscoped, &session, "whoami", json!({})).await;
    assert_eq!(answer.status, 403);
    assert_eq!(
        answer.header("www-authenticate"),
        format!(
            r#"Bearer error="insufficient_scope", scope="notes:read", resource_metadata="{metadata_url}", error_description="needs the notes:read scope""#
        )
    );

    // What the server saw, by the tokens' sub; its log never holds a token.
    let seen = server.seen().await;
    eprintln!("seen: {seen:#}");
    assert_eq!(seen["subjects"]["alice"]["tokens"], 4, "notes:read, the step-up, the forged valid one, the forged unscoped one: {seen}");
    assert_eq!(seen["subjects"]["alice"]["scopes"], json!(["notes:read", "notes:write", "openid"]));
    assert_eq!(seen["subjects"]["bob"]["tokens"], 1);
    assert_eq!(seen["subjects"]["bob"]["client_ids"], json!(["lattice"]));
    assert_eq!(seen["refused"], json!({"missing_token": 1, "invalid_token": 8, "insufficient_scope": 2, "session_of_another": 1}));
    assert_eq!(seen["sessions"][&session], json!({"sub": "alice", "notes": 2}));
    assert_eq!(seen["sessions"][&bobs], json!({"sub": "bob", "notes": 0}));
    let log = server.log();
    assert!(log.contains("POST /mcp sub=alice rpc=tools/call:whoami -> 200"), "{log}");
    for token in [&alice, &stepped, &bob, &elsewhere] {
        assert!(!log.contains(token.as_str()), "the log holds a token");
    }
}
