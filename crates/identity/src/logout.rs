//! OpenID Connect Back-Channel Logout 1.0: a provider tells lattice that a
//! person signed out, with a logout token it signs. The token passes the
//! one verifier (signature, issuer, audience = the client id, iat within
//! the skew), then the rules of the spec's 2.6, and its `jti` is kept so
//! that the same token sent again is refused while it could still verify.

use lattice_core::Error;
use serde::Serialize;
use serde_json::Value;

use crate::config::cut;
use crate::provider::Provider;
use crate::verify::{BACKCHANNEL_LOGOUT_EVENT, Expect, Kind};

/// A logout token is taken this long after its `iat` (plus the skew): it
/// is sent as the person signs out, and a replay window must end.
pub(crate) const LOGOUT_MAX_AGE_SECS: i64 = 300;
const ID_MAX: usize = 256;

/// Who a provider signed out: its subject, its session, or both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogoutNotice {
    /// The configured provider's name.
    pub provider: String,
    /// The person's `sub` at the provider.
    pub subject: Option<String>,
    /// The provider's session (`sid`), as the sign-in's ID token named it.
    pub sid: Option<String>,
}

fn refused(reason: impl Into<String>) -> Error {
    Error::unauthorized(lattice_core::Code::TokenInvalid, reason)
}

pub(crate) async fn verify_logout(provider: &Provider, token: &str) -> Result<LogoutNotice, Error> {
    let settings = &provider.settings;
    let expect = Expect { kind: Kind::Logout, audiences: vec![settings.client_id.as_str()] };
    let verified = provider.verify(token, &expect).await?;
    let claims = &verified.claims;

    let now = provider.clock.now_secs();
    let skew = settings.skew_secs;
    if now - verified.iat > LOGOUT_MAX_AGE_SECS + skew {
        return Err(refused(format!(
            "the logout token was issued {} s ago: one is taken for {LOGOUT_MAX_AGE_SECS} s (and the clock skew of {skew} s)",
            now - verified.iat
        )));
    }
    match claims.get("events").and_then(Value::as_object).and_then(|events| events.get(BACKCHANNEL_LOGOUT_EVENT)) {
        Some(Value::Object(_)) => {}
        Some(_) => return Err(refused(format!("the logout token's event {BACKCHANNEL_LOGOUT_EVENT} is not a JSON object"))),
        None => return Err(refused(format!("the logout token's events do not hold {BACKCHANNEL_LOGOUT_EVENT}"))),
    }
    let id = |name: &str| -> Result<Option<String>, Error> {
        match claims.get(name) {
            None => Ok(None),
            Some(Value::String(v)) if !v.is_empty() && v.len() <= ID_MAX => Ok(Some(v.clone())),
            Some(_) => Err(refused(format!("the logout token's {name} is not a string of 1 to {ID_MAX} bytes"))),
        }
    };
    let (subject, sid) = (id("sub")?, id("sid")?);
    if subject.is_none() && sid.is_none() {
        return Err(refused("the logout token names neither sub nor sid"));
    }
    let Some(jti) = id("jti")? else {
        return Err(refused("the logout token has no jti"));
    };

    // It could verify again until its age or its exp ends it, whichever is first.
    let mut until = verified.iat.saturating_add(LOGOUT_MAX_AGE_SECS);
    if let Some(exp) = verified.exp {
        until = until.min(exp);
    }
    let until_ms = until.saturating_add(skew).saturating_mul(1000);
    if !provider.replays.first_use(&jti, until_ms, provider.clock.now_ms()) {
        tracing::info!(provider = %settings.name, "a logout token was sent again and refused");
        return Err(refused(format!("the logout token {:?} was taken already", cut(&jti, 64))));
    }
    Ok(LogoutNotice { provider: settings.name.clone(), subject, sid })
}
