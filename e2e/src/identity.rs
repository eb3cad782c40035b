//! `lattice up` signing people in with a real OpenID provider
//! (oidc-provider, `lattice_testkit::idp`): the provider knows lattice's
//! client (its callback, its back-channel logout, where signing out lands)
//! and lattice's MCP resource; lattice is configured with the provider as
//! `corp`, binding tenant `acme`, its `lattice-admins` group giving the
//! tenant admin role. Ada is in that group, Bob in `staff`.

use std::path::PathBuf;

use lattice_testkit::idp::{Account, Client, Idp, IdpSetup, Resource};

use crate::{UpProcess, free_port};

/// The client's secret at the provider, in a file lattice reads.
const SECRET: &str = "the test provider's client secret for lattice";

pub struct WithProvider {
    pub up: UpProcess,
    pub idp: Idp,
    /// The portal's origin, as the provider knows it.
    pub portal: String,
    secret: PathBuf,
}

impl WithProvider {
    /// lattice and its provider, with extra environment for lattice.
    pub async fn start(env: &[(&str, &str)]) -> Self {
        let port = free_port();
        let portal = format!("http://127.0.0.1:{port}");
        let client = Client::confidential("lattice", SECRET)
            .redirect_uri(&format!("{portal}/v1/auth/oidc/corp/callback"))
            .post_logout_redirect_uri(&format!("{portal}/"))
            .backchannel_logout_uri(&format!("{portal}/v1/auth/oidc/corp/backchannel-logout"));
        let idp = Idp::start(
            IdpSetup::new()
                .client(client)
                .account(Account::new("ada", "ada-password").name("Ada Lovelace").email("ada@acme.example").groups(&["lattice-admins"]))
                .account(Account::new("bob", "bob-password").name("Bob Stone").email("bob@acme.example").groups(&["staff"]))
                .resource(Resource::new(&format!("{portal}/mcp")).scopes(&["mcp"])),
        )
        .await;
        let secret = std::env::temp_dir().join(format!("lattice-e2e-oidc-secret-{port}"));
        std::fs::write(&secret, SECRET).expect("the client secret's file");
        let config = format!(
            r#"[oidc_providers.corp]
issuer = "{issuer}"
client_id = "lattice"
client_secret_file = "{secret}"
title = "Corp"
tenant = "acme"
scopes = ["openid", "profile", "email", "groups"]

[oidc_providers.corp.roles]
lattice-admins = "tenant_admin"
"#,
            issuer = idp.issuer(),
            secret = secret.display(),
        );
        let addr = format!("127.0.0.1:{port}");
        let mut all = vec![("LATTICE_HTTP_ADDR", addr.as_str()), ("LATTICE_PORTAL_ORIGIN", portal.as_str()), ("LATTICE_MCP_SCOPES", "mcp")];
        all.extend_from_slice(env);
        let up = UpProcess::start_configured(&config, &all).await;
        Self { up, idp, portal, secret }
    }
}

impl Drop for WithProvider {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.secret);
    }
}
