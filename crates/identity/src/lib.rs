//! Sign-in with a company's OpenID Connect providers (REQUIREMENTS.md R6):
//! lattice as a relying party. [`Providers`] is the entry point: made from
//! the `[oidc_providers.<name>]` configuration ([`ProviderConfig`]) without
//! touching the network, it begins and finishes a person's sign-in (the
//! authorization code flow with PKCE and a nonce), verifies back-channel
//! logout tokens, names the provider's end-session URL, and implements
//! `lattice_core::identity::TokenIssuers`, so the log service takes a
//! provider's bearer tokens without knowing OpenID Connect.
//!
//! Every token a provider signs (ID, access, logout) passes one verifier
//! (`verify.rs`): an allow-list of public-key algorithms (never `none`,
//! never HMAC), the provider's published keys only, and every claim checked
//! by the deployment's clock within a bounded skew.
//!
//! Absences: no SQL and no HTTP server; no secret (client secret, token,
//! code, PKCE verifier) in a log line, an error or a `Debug`; no redirect
//! followed and no response read past its bound; no key taken from a
//! token's own header.

mod alg;
mod claims;
mod config;
mod discovery;
mod flow;
mod http;
mod jwks;
mod logout;
mod provider;
mod providers;
mod replays;
mod verify;

pub use config::{DEFAULT_ALGORITHMS, DEFAULT_CLOCK_SKEW_SECS, MAX_CLOCK_SKEW_SECS, ProviderConfig, WorkspaceRoleConfig};
pub use flow::{Begun, SignedIn};
pub use logout::LogoutNotice;
pub use providers::{ProviderInfo, Providers, ProvidersOptions};
