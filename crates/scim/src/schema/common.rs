//! The common attributes of every resource (RFC 7643 §3.1): not part of any
//! schema's `attributes`, but read, written and filtered like them.

use super::{AttrType, Attribute, Mutability, Returned, Uniqueness};

pub static ID: Attribute = Attribute {
    case_exact: true,
    mutability: Mutability::ReadOnly,
    returned: Returned::Always,
    uniqueness: Uniqueness::Server,
    ..Attribute::string("id", "The identifier lattice issued for the resource")
};

/// The client's own identifier: case-exact, kept as sent (Entra ID and
/// Okta both set it, and find resources by it).
pub static EXTERNAL_ID: Attribute =
    Attribute { case_exact: true, ..Attribute::string("externalId", "The provisioning client's identifier for the resource") };

static META_SUB: [Attribute; 5] = [
    Attribute { case_exact: true, mutability: Mutability::ReadOnly, ..Attribute::string("resourceType", "User or Group") },
    Attribute { kind: AttrType::DateTime, mutability: Mutability::ReadOnly, ..Attribute::string("created", "When the resource was created") },
    Attribute {
        kind: AttrType::DateTime,
        mutability: Mutability::ReadOnly,
        ..Attribute::string("lastModified", "When the resource was last changed")
    },
    Attribute { mutability: Mutability::ReadOnly, ..Attribute::reference("location", "The URI of the resource", &["uri"]) },
    Attribute { case_exact: true, mutability: Mutability::ReadOnly, ..Attribute::string("version", "The resource's weak ETag") },
];

pub static META: Attribute = Attribute { mutability: Mutability::ReadOnly, ..Attribute::complex("meta", "The resource's metadata", &META_SUB) };

/// `schemas` is written by lattice (from what the document holds) and read
/// by filters only: RFC 7644's `schemas eq "urn:…:enterprise:2.0:User"`.
pub static SCHEMAS: Attribute = Attribute {
    multi_valued: true,
    case_exact: true,
    mutability: Mutability::ReadOnly,
    returned: Returned::Always,
    ..Attribute::reference("schemas", "The URNs of the schemas the resource carries", &["uri"])
};

/// In the order a rendered resource lists them.
pub static COMMON_ATTRIBUTES: [&Attribute; 4] = [&SCHEMAS, &ID, &EXTERNAL_ID, &META];
