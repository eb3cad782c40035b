//! The URNs of the schemas lattice serves (RFC 7643 §8.7.1).

pub const USER_URN: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
pub const GROUP_URN: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";
pub const ENTERPRISE_USER_URN: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
