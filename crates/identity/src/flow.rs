//! A person's sign-in: the authorization code flow with PKCE (S256) and a
//! nonce, driven by `openidconnect`'s client over [`crate::http::Http`];
//! the ID token it brings back is verified by the crate's one verifier, not
//! the library's, so a sign-in and a bearer token are held to the same
//! rules. And the way out: the provider's end-session URL (RP-initiated
//! logout).

use std::fmt;

use lattice_core::{Error, TenantId, TenantRole, UserId};
use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreErrorResponseType};
use openidconnect::{
    AuthType, AuthorizationCode, ClientId, ClientSecret, CsrfToken, LogoutRequest, Nonce, PkceCodeChallenge, PkceCodeVerifier, PostLogoutRedirectUrl,
    RedirectUrl, RequestTokenError, Scope, StandardErrorResponse, TokenResponse,
};
use serde::Serialize;

use crate::claims;
use crate::config::cut;
use crate::discovery::Discovered;
use crate::http::HttpError;
use crate::provider::Provider;
use crate::verify::{Expect, Kind};

const CODE_MAX: usize = 4096;
const NONCE_MAX: usize = 256;
const URL_MAX: usize = 2048;

/// A sign-in begun: where to send the person, and what the callback needs
/// back (kept server side: the verifier and nonce never reach the browser
/// but inside the provider's URL as a hash and a value it echoes).
#[derive(Clone, PartialEq, Eq)]
pub struct Begun {
    /// The provider's authorization endpoint with every parameter.
    pub authorize_url: String,
    /// The `state` the callback must bring back.
    pub state: String,
    /// The `nonce` the ID token must hold.
    pub nonce: String,
    /// The PKCE verifier the code is exchanged with. Secret.
    pub pkce_verifier: String,
}

impl fmt::Debug for Begun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Begun")
            .field("authorize_url", &self.authorize_url)
            .field("state", &self.state)
            .field("nonce", &self.nonce)
            .field("pkce_verifier", &"[redacted]")
            .finish()
    }
}

/// A person signed in by a provider, mapped by its configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignedIn {
    /// The configured provider's name.
    pub provider: String,
    pub tenant: TenantId,
    pub user: UserId,
    /// The person's `sub` at the provider (what a back-channel logout names).
    pub subject: String,
    pub name: Option<String>,
    /// The person's address, unless the provider says it is unverified.
    pub email: Option<String>,
    pub groups: Vec<String>,
    /// The tenant role the groups give by this provider's rules.
    pub role: TenantRole,
    /// The provider's session id (`sid`), for back-channel logout.
    pub provider_sid: Option<String>,
    /// The ID token's `iat`, in ms.
    pub issued_ms: i64,
}

fn refused(reason: impl Into<String>) -> Error {
    Error::unauthorized(lattice_core::Code::SignInFailed, reason)
}

fn redirect_url(redirect_uri: &str, what: &str) -> Result<RedirectUrl, Error> {
    if redirect_uri.len() > URL_MAX {
        return Err(Error::malformed(
            lattice_core::Code::InvalidRedirectUri,
            format!("the {what} is {} bytes, over the limit {URL_MAX}", redirect_uri.len()),
        ));
    }
    RedirectUrl::new(redirect_uri.to_owned())
        .map_err(|e| Error::malformed(lattice_core::Code::InvalidRedirectUri, format!("the {what} is not an absolute URL: {e}")))
}

/// `openidconnect`'s client for what discovery said, with the redirect
/// URI of this sign-in.
fn client(
    provider: &Provider,
    discovered: &Discovered,
    redirect: RedirectUrl,
) -> CoreClient<
    openidconnect::EndpointSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointMaybeSet,
    openidconnect::EndpointMaybeSet,
> {
    let settings = &provider.settings;
    let secret = settings.client_secret.as_ref().map(|s| ClientSecret::new(s.expose().to_owned()));
    let client =
        CoreClient::from_provider_metadata(discovered.metadata.clone(), ClientId::new(settings.client_id.clone()), secret).set_redirect_uri(redirect);
    if discovered.secret_in_body { client.set_auth_type(AuthType::RequestBody) } else { client }
}

pub(crate) async fn begin(provider: &Provider, redirect_uri: &str) -> Result<Begun, Error> {
    let redirect = redirect_url(redirect_uri, "redirect_uri")?;
    let discovered = provider.discovered().await?;
    let client = client(provider, &discovered, redirect);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let request = client
        .authorize_url(CoreAuthenticationFlow::AuthorizationCode, CsrfToken::new_random, Nonce::new_random)
        .add_scopes(provider.settings.scopes.iter().map(|s| Scope::new(s.clone())))
        .set_pkce_challenge(challenge);
    let (url, state, nonce) = request.url();
    Ok(Begun {
        authorize_url: url.to_string(),
        state: state.secret().clone(),
        nonce: nonce.secret().clone(),
        pkce_verifier: verifier.secret().clone(),
    })
}

pub(crate) async fn finish(provider: &Provider, code: &str, pkce_verifier: &str, nonce: &str, redirect_uri: &str) -> Result<SignedIn, Error> {
    let settings = &provider.settings;
    let name = &settings.name;
    if code.is_empty() || code.len() > CODE_MAX {
        return Err(refused(format!("the authorization code must be 1 to {CODE_MAX} bytes")));
    }
    // RFC 7636 4.1: 43 to 128 unreserved characters.
    if !(43..=128).contains(&pkce_verifier.len()) || !pkce_verifier.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b)) {
        return Err(refused("the PKCE verifier is not 43 to 128 unreserved characters"));
    }
    if nonce.is_empty() || nonce.len() > NONCE_MAX {
        return Err(refused(format!("the nonce must be 1 to {NONCE_MAX} bytes")));
    }
    let redirect = redirect_url(redirect_uri, "redirect_uri")?;
    let discovered = provider.discovered().await?;
    let client = client(provider, &discovered, redirect);
    let request = client
        .exchange_code(AuthorizationCode::new(code.to_owned()))
        .map_err(|e| Error::unavailable(format!("provider {name} cannot exchange a code: {e}")))?
        .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier.to_owned()));
    let response = request.request_async(&provider.http).await.map_err(|e| token_error(name, e))?;
    let Some(id_token) = response.id_token() else {
        return Err(refused(format!("provider {name}'s token response holds no ID token")));
    };
    let id_token = id_token.to_string();
    let expect = Expect { kind: Kind::IdToken { nonce }, audiences: vec![settings.client_id.as_str()] };
    let verified = provider.verify(&id_token, &expect).await?;
    let person = claims::person(settings, &verified.claims)?;
    let Some(subject) = person.subject else {
        return Err(refused("the ID token has no sub"));
    };
    Ok(SignedIn {
        provider: name.clone(),
        tenant: person.tenant,
        user: person.user,
        subject,
        name: person.name,
        email: person.email,
        groups: person.groups,
        role: person.role,
        provider_sid: person.sid,
        issued_ms: verified.iat.saturating_mul(1000),
    })
}

/// What the token endpoint's failure says, without its body (a body may
/// hold tokens) or the request (which holds the code, the verifier and the
/// client secret).
fn token_error(name: &str, e: RequestTokenError<HttpError, StandardErrorResponse<CoreErrorResponseType>>) -> Error {
    let e = match e {
        RequestTokenError::ServerResponse(answer) => {
            return refused(format!("provider {name} refused the code: {}", cut(answer.error().as_ref(), 64)));
        }
        RequestTokenError::Request(e) => format!("provider {name}'s token endpoint did not answer: {e}"),
        RequestTokenError::Parse(e, _body) => format!("provider {name}'s token response is not readable (at {})", cut(&e.path().to_string(), 64)),
        RequestTokenError::Other(why) => format!("provider {name}'s token endpoint: {}", cut(&why, 200)),
    };
    tracing::warn!(provider = name, error = %e, "a code exchange failed");
    Error::unavailable(e)
}

pub(crate) async fn end_session_url(provider: &Provider, post_logout_redirect_uri: &str) -> Option<String> {
    let name = &provider.settings.name;
    let discovered = match provider.discovered().await {
        Ok(discovered) => discovered,
        Err(e) => {
            tracing::warn!(provider = %name, error = %e, "no end-session URL: discovery failed");
            return None;
        }
    };
    let endpoint = discovered.metadata.additional_metadata().end_session_endpoint.clone()?;
    let after = match PostLogoutRedirectUrl::new(post_logout_redirect_uri.to_owned()) {
        Ok(after) if post_logout_redirect_uri.len() <= URL_MAX => after,
        _ => {
            tracing::warn!(provider = %name, "no end-session URL: the post-logout redirect URI is not an absolute URL");
            return None;
        }
    };
    let request = LogoutRequest::from(endpoint).set_client_id(ClientId::new(provider.settings.client_id.clone())).set_post_logout_redirect_uri(after);
    Some(request.http_get_url().to_string())
}
