//! The core Group schema (RFC 7643 §4.2).

use super::{Attribute, GROUP_URN, Mutability, Schema};
use crate::limits::MAX_MEMBERS;

/// `value` is required: a member without an id says nothing lattice can
/// act on. `value`, `$ref` and `type` are immutable as in RFC 7643: a
/// member is added or removed whole, never re-pointed.
static MEMBER_SUB: [Attribute; 4] = [
    Attribute {
        required: true,
        case_exact: true,
        mutability: Mutability::Immutable,
        ..Attribute::string("value", "The member's id: a User's or a Group's")
    },
    Attribute { mutability: Mutability::Immutable, ..Attribute::reference("$ref", "The member's URI", &["User", "Group"]) },
    Attribute { mutability: Mutability::Immutable, canonical_values: &["User", "Group"], ..Attribute::string("type", "User or Group") },
    Attribute::string("display", "The member's name, as the client sent it"),
];

static GROUP_ATTRIBUTES: [Attribute; 2] = [
    Attribute { required: true, ..Attribute::string("displayName", "The group's name") },
    Attribute { multi_valued: true, max_values: MAX_MEMBERS, ..Attribute::complex("members", "The members of the group", &MEMBER_SUB) },
];

pub static GROUP: Schema = Schema { id: GROUP_URN, name: "Group", description: "Group", attributes: &GROUP_ATTRIBUTES };
