//! Every bound this crate checks, in one place. Each refusal names the
//! limit it met, so these numbers are what a client reads in a `detail`.

/// The bytes of a `filter` (a query parameter or a SearchRequest field).
pub const MAX_FILTER_BYTES: usize = 4096;
/// Levels of `(`, `not (` and `[` one inside the other in a filter.
pub const MAX_FILTER_DEPTH: usize = 16;
/// Comparisons and `pr` tests in one filter.
pub const MAX_FILTER_TERMS: usize = 64;

/// The bytes of one string value (a name, an email, a `$ref`).
pub const MAX_STRING_BYTES: usize = 2048;
/// Values of one multi-valued attribute of a user (emails, phoneNumbers…).
pub const MAX_VALUES: usize = 64;
/// Members of one group: an IdP pushes a whole department as one group.
pub const MAX_MEMBERS: usize = 10_000;

/// A stored user, as compact JSON.
pub const MAX_USER_BYTES: usize = 64 * 1024;
/// A stored group, as compact JSON: room for [`MAX_MEMBERS`] members of
/// about 300 bytes each.
pub const MAX_GROUP_BYTES: usize = 4 * 1024 * 1024;
/// What a route should accept as a request body before parsing it: the
/// largest document and room for the envelope around it.
pub const MAX_REQUEST_BYTES: usize = MAX_GROUP_BYTES + 64 * 1024;

/// Operations in one PatchOp message.
pub const MAX_PATCH_OPERATIONS: usize = 1000;
/// The bytes of one PATCH `path` (it can carry a value filter).
pub const MAX_PATH_BYTES: usize = MAX_FILTER_BYTES;

/// The most resources one list response carries (`filter.maxResults`).
pub const MAX_PAGE: usize = 200;
/// Paths in `attributes` or `excludedAttributes`.
pub const MAX_PROJECTION_PATHS: usize = 64;
/// The bytes of `attributes`, `excludedAttributes` or `sortBy`.
pub const MAX_PARAMETER_BYTES: usize = 4096;
/// The largest `startIndex`: past the end of any tenant, and far from overflow.
pub const MAX_START_INDEX: u64 = i32::MAX as u64;
