//! SCIM 2.0 (RFC 7643, RFC 7644) as data: what lattice serves at
//! `/scim/v2` for Entra ID, Okta and any other provisioning client. The
//! schemas lattice keeps ([`schema`]) and the discovery documents that
//! publish them ([`discovery`]); request bodies to stored documents and
//! stored documents to responses ([`resource`]); filters ([`filter`]),
//! PATCH ([`patch`]), lists ([`list`]) and the error response ([`error`]).
//! The routes and the database are the callers': this crate reads what
//! they were sent and says what to store and what to answer.
//!
//! Absences: no I/O and no clock (times come in as arguments); nothing a
//! client sends is stored unless a schema here declares it, and nothing is
//! stored that does not read back as sent (names in their canonical case,
//! declared values in their declared spelling, the quirks below read as
//! what they mean); no input panics or costs without bound:
//! every bound is in [`limits`], and each refusal names the one it met.
//!
//! Decisions a route inherits:
//! - Attributes lattice does not keep (`password`, `roles`, a custom
//!   extension's) are dropped from bodies and PATCH operations, not
//!   refused, and listed in `ignored` for the route to log: a provider's
//!   mapping of one such attribute must not stop every person's
//!   provisioning. Filters naming one are refused (`invalidFilter`).
//! - Versions are weak ETags of the stored content ([`resource::version_of`]);
//!   sorting is done in memory ([`list::ListQuery::respond`]).
//! - Provider quirks accepted: `op` in any case; `"True"`/`"False"` for
//!   booleans; the manager as a bare id; PATCH without a path whose keys are
//!   paths (`"name.givenName"`); `add`/`replace` on `emails[type eq "work"].value`
//!   with no work email makes one; `remove` on `members` with a value
//!   removes those members; readOnly members (`id`) in a PATCH value ignored.
//!
//! A route, in short (the store is the route's):
//!
//! ```
//! use lattice_scim::{ListQuery, Projection, ResourceMeta, ResourceType, patch, resource};
//! use serde_json::json;
//!
//! let base_url = "https://lattice.example/scim/v2";
//! // POST /Users
//! let body = json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "bjensen", "password": "not kept"});
//! let created = resource::normalize_create(ResourceType::User, &body)?;
//! assert_eq!(created.ignored, ["password"]);
//! let unique = resource::unique_key(ResourceType::User, &created.document); // Some("bjensen"): 409 `uniqueness` if taken
//! # assert_eq!(unique.as_deref(), Some("bjensen"));
//! let meta = ResourceMeta { id: "u-1", created_ms: 1_700_000_000_000, last_modified_ms: 1_700_000_000_000, base_url };
//! let answer = resource::render(ResourceType::User, &created.document, &meta, &Projection::default());
//! // 201, with `ETag: {answer.meta.version}` and `Location: {answer.meta.location}`.
//! assert_eq!(answer["meta"]["location"], "https://lattice.example/scim/v2/Users/u-1");
//!
//! // GET /Users?filter=userName eq "BJENSEN"&startIndex=1&count=10
//! let query = ListQuery::from_query(ResourceType::User, [("filter", "userName eq \"BJENSEN\""), ("startIndex", "1"), ("count", "10")])?;
//! let pushed = query.filter.as_ref().and_then(|f| f.narrowing_eq()); // userName, case-insensitive: WHERE user_name_folded = 'bjensen'
//! # assert_eq!(pushed.map(|p| (p.attribute, p.value, p.case_exact)), Some(("userName", "BJENSEN", false)));
//! let found = vec![resource::render(ResourceType::User, &created.document, &meta, &Projection::default())];
//! let list = query.respond(ResourceType::User, found);
//! assert_eq!(list["totalResults"], 1);
//!
//! // PATCH /Groups/g-1, as Entra ID removes a member
//! let group = resource::normalize_create(ResourceType::Group, &json!({
//!     "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "Tour Guides",
//!     "members": [{"value": "u-1"}, {"value": "u-2"}]
//! }))?.document;
//! resource::check_if_match(None, &resource::version_of(&group))?; // 412 when If-Match is stale
//! let body = json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
//!     "Operations": [{"op": "Remove", "path": "members", "value": [{"value": "u-1"}]}]});
//! let patched = patch::apply_body(ResourceType::Group, &group, &body)?;
//! assert!(patched.changed);
//! assert_eq!(resource::member_ids(&patched.document).collect::<Vec<_>>(), ["u-2"]);
//! # Ok::<(), lattice_scim::ScimError>(())
//! ```

pub mod discovery;
pub mod error;
pub mod filter;
pub mod limits;
pub mod list;
pub mod patch;
pub mod resource;
pub mod schema;

mod datetime;
#[cfg(test)]
mod robustness;
mod value;

pub use error::{ScimError, ScimType};
pub use filter::{Filter, SimpleEq};
pub use list::{ListQuery, list_response};
pub use patch::{PatchRequest, Patched};
pub use resource::{Normalized, Projection, ResourceMeta};
pub use schema::ResourceType;

/// The media type of every SCIM request and response body (RFC 7644 §8.1).
pub const CONTENT_TYPE: &str = "application/scim+json";
