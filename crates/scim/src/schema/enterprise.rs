//! The Enterprise User extension (RFC 7643 §4.3), which Entra ID and Okta
//! send for department, cost center and manager.

use super::{Attribute, ENTERPRISE_USER_URN, Schema};

/// `displayName` is readWrite here, where RFC 7643 makes it readOnly: Okta
/// maps the manager's name into it, and lattice keeps what it is sent
/// rather than looking the manager up.
static MANAGER_SUB: [Attribute; 3] = [
    Attribute { case_exact: true, ..Attribute::string("value", "The manager's id") },
    Attribute::reference("$ref", "The manager's URI", &["User"]),
    Attribute::string("displayName", "The manager's name"),
];

static ENTERPRISE_ATTRIBUTES: [Attribute; 6] = [
    Attribute::string("employeeNumber", "The employee number in the organization"),
    Attribute::string("costCenter", "The cost center"),
    Attribute::string("organization", "The organization"),
    Attribute::string("division", "The division"),
    Attribute::string("department", "The department"),
    Attribute::complex("manager", "The user's manager", &MANAGER_SUB),
];

pub static ENTERPRISE_USER: Schema =
    Schema { id: ENTERPRISE_USER_URN, name: "EnterpriseUser", description: "Enterprise User", attributes: &ENTERPRISE_ATTRIBUTES };
