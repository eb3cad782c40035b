//! A verified token's claims, as the provider's configuration maps them:
//! its tenant, lattice user id, groups and the role they give. The sign-in
//! and a bearer token map by this one function, so a person is the same
//! person by either door.

use lattice_core::{Error, TenantId, TenantRole, UserId};
use serde_json::Value;

use crate::config::{GROUP_MAX, Settings, Tenancy, cut, field_message};
use crate::verify::Object;

/// The most groups a token may name.
pub(crate) const GROUPS_MAX: usize = 256;
/// User ids with this prefix are API keys' (lattice-log): a provider's
/// person never gets one, or a key's holder could be impersonated.
const RESERVED_USER_PREFIX: &str = "key_";
const SUBJECT_MAX: usize = 255;
const NAME_MAX: usize = 512;
const EMAIL_MAX: usize = 320;
const SID_MAX: usize = 256;

/// Who a token names, mapped.
#[derive(Debug)]
pub(crate) struct Person {
    pub tenant: TenantId,
    pub user: UserId,
    pub subject: Option<String>,
    pub name: Option<String>,
    pub email: Option<String>,
    pub groups: Vec<String>,
    pub role: TenantRole,
    pub sid: Option<String>,
}

fn refused(reason: impl Into<String>) -> Error {
    Error::unauthorized(lattice_core::Code::TokenInvalid, reason)
}

pub(crate) fn person(settings: &Settings, claims: &Object) -> Result<Person, Error> {
    let provider = &settings.name;
    let tenant = match &settings.tenancy {
        Tenancy::Fixed(tenant) => tenant.clone(),
        Tenancy::Claim(claim) => match claims.get(claim) {
            Some(Value::String(value)) => TenantId::parse("tenant", value)
                .map_err(|e| refused(format!("the token's {claim} {:?} is not a tenant id: {}", cut(value, 64), field_message(&e))))?,
            Some(_) => return Err(refused(format!("the token's {claim} claim (provider {provider}'s tenant) is not a string"))),
            None => return Err(refused(format!("the token has no {claim} claim (provider {provider}'s tenant)"))),
        },
    };

    let claim = &settings.user_claim;
    let user = match claims.get(claim) {
        Some(Value::String(value)) => {
            if value.get(..RESERVED_USER_PREFIX.len()).is_some_and(|p| p.eq_ignore_ascii_case(RESERVED_USER_PREFIX)) {
                return Err(refused(format!(
                    "the user id {:?} is refused: the prefix {RESERVED_USER_PREFIX} is reserved for API keys",
                    cut(value, 64)
                )));
            }
            UserId::parse("user", value)
                .map_err(|e| refused(format!("the token's {claim} {:?} is not a lattice user id: {}", cut(value, 64), field_message(&e))))?
        }
        Some(_) => return Err(refused(format!("the token's {claim} claim (the user id) is not a string"))),
        None => return Err(refused(format!("the token has no {claim} claim (provider {provider}'s user id)"))),
    };

    let groups = groups(claims, &settings.groups_claim)?;
    let role = settings.rules.tenant_role(&tenant, &groups);

    let subject = match claims.get("sub") {
        None => None,
        Some(Value::String(sub)) if !sub.is_empty() && sub.len() <= SUBJECT_MAX => Some(sub.clone()),
        Some(_) => return Err(refused(format!("the token's sub is not a string of 1 to {SUBJECT_MAX} bytes"))),
    };
    let text = |name: &str, max: usize| claims.get(name).and_then(Value::as_str).filter(|s| !s.is_empty() && s.len() <= max).map(str::to_owned);
    // An address the provider says it has not verified is not the person's
    // to be known by.
    let email = text("email", EMAIL_MAX).filter(|_| claims.get("email_verified") != Some(&Value::Bool(false)));
    Ok(Person { tenant, user, subject, name: text("name", NAME_MAX), email, groups, role, sid: text("sid", SID_MAX) })
}

/// The groups claim: absent is no group; otherwise an array of at most
/// [`GROUPS_MAX`] strings of at most [`GROUP_MAX`] bytes each.
fn groups(claims: &Object, claim: &str) -> Result<Vec<String>, Error> {
    let not_strings = || refused(format!("the token's {claim} claim (the groups) is not an array of strings"));
    match claims.get(claim) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(groups)) if groups.len() > GROUPS_MAX => {
            Err(refused(format!("the token's {claim} claim holds {} groups, over the limit {GROUPS_MAX}", groups.len())))
        }
        Some(Value::Array(groups)) => groups
            .iter()
            .map(|g| match g {
                Value::String(g) if g.len() > GROUP_MAX => {
                    Err(refused(format!("a group in the token's {claim} claim is {} bytes, over the limit {GROUP_MAX}", g.len())))
                }
                Value::String(g) => Ok(g.clone()),
                _ => Err(not_strings()),
            })
            .collect(),
        Some(_) => Err(not_strings()),
    }
}
