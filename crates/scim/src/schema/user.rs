//! The core User schema as lattice keeps it: the attributes Entra ID's and
//! Okta's default SCIM mappings send (names, titles, locale, work emails,
//! phones and addresses) and the tester fills. Left out, so not stored:
//! `password` (lattice signs people in through their provider), `ims`,
//! `photos`, `entitlements`, `roles` and `x509Certificates`.

use super::{Attribute, Mutability, Schema, USER_URN, Uniqueness};

static NAME_SUB: [Attribute; 6] = [
    Attribute::string("formatted", "The full name, formatted for display"),
    Attribute::string("familyName", "The family name"),
    Attribute::string("givenName", "The given name"),
    Attribute::string("middleName", "The middle names"),
    Attribute::string("honorificPrefix", "The honorific prefix, e.g. Ms."),
    Attribute::string("honorificSuffix", "The honorific suffix, e.g. III"),
];

static EMAIL_SUB: [Attribute; 4] = [
    Attribute::string("value", "The email address"),
    Attribute::string("display", "A label for display"),
    Attribute { canonical_values: &["work", "home", "other"], ..Attribute::string("type", "The kind of address") },
    Attribute::boolean("primary", "Whether this is the preferred address; at most one is"),
];

static PHONE_SUB: [Attribute; 4] = [
    Attribute::string("value", "The phone number"),
    Attribute::string("display", "A label for display"),
    Attribute { canonical_values: &["work", "home", "mobile", "fax", "pager", "other"], ..Attribute::string("type", "The kind of number") },
    Attribute::boolean("primary", "Whether this is the preferred number; at most one is"),
];

static ADDRESS_SUB: [Attribute; 8] = [
    Attribute::string("formatted", "The full address, formatted for display"),
    Attribute::string("streetAddress", "The street"),
    Attribute::string("locality", "The city"),
    Attribute::string("region", "The state or region"),
    Attribute::string("postalCode", "The postal code"),
    Attribute::string("country", "The country"),
    Attribute { canonical_values: &["work", "home", "other"], ..Attribute::string("type", "The kind of address") },
    Attribute::boolean("primary", "Whether this is the preferred address; at most one is"),
];

/// Filled in by lattice from the groups' `members`; a client cannot write it.
static GROUPS_SUB: [Attribute; 4] = [
    Attribute { case_exact: true, mutability: Mutability::ReadOnly, ..Attribute::string("value", "The group's id") },
    Attribute { mutability: Mutability::ReadOnly, ..Attribute::reference("$ref", "The group's URI", &["Group"]) },
    Attribute { mutability: Mutability::ReadOnly, ..Attribute::string("display", "The group's displayName") },
    Attribute {
        mutability: Mutability::ReadOnly,
        canonical_values: &["direct", "indirect"],
        ..Attribute::string("type", "direct: the user is a member of the group itself")
    },
];

static USER_ATTRIBUTES: [Attribute; 15] = [
    Attribute {
        required: true,
        uniqueness: Uniqueness::Server,
        ..Attribute::string("userName", "The unique name of the user in the tenant, compared case-insensitively")
    },
    Attribute::complex("name", "The components of the user's name", &NAME_SUB),
    Attribute::string("displayName", "The name to show for the user"),
    Attribute::string("nickName", "The casual name of the user"),
    Attribute::reference("profileUrl", "A URI of the user's profile", &["external"]),
    Attribute::string("title", "The user's title, e.g. Vice President"),
    Attribute::string("userType", "The relation to the organization, e.g. Employee"),
    Attribute::string("preferredLanguage", "The preferred language, e.g. en-US"),
    Attribute::string("locale", "The locale for dates, numbers and currency, e.g. en-US"),
    Attribute::string("timezone", "The time zone, e.g. Europe/Paris"),
    Attribute::boolean("active", "Whether the user may sign in; unassigned reads as true"),
    Attribute { multi_valued: true, ..Attribute::complex("emails", "Email addresses", &EMAIL_SUB) },
    Attribute { multi_valued: true, ..Attribute::complex("phoneNumbers", "Phone numbers", &PHONE_SUB) },
    Attribute { multi_valued: true, ..Attribute::complex("addresses", "Postal addresses", &ADDRESS_SUB) },
    Attribute {
        multi_valued: true,
        mutability: Mutability::ReadOnly,
        max_values: crate::limits::MAX_MEMBERS,
        ..Attribute::complex("groups", "The groups the user is a member of", &GROUPS_SUB)
    },
];

pub static USER: Schema = Schema { id: USER_URN, name: "User", description: "User Account", attributes: &USER_ATTRIBUTES };
