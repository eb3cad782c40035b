//! The schemas lattice serves (RFC 7643 §2, §4, §8.7.1), as static data: the
//! attribute definitions every other module reads (types, mutability,
//! returned, caseExact, canonical values, bounds). What is declared here is
//! what lattice keeps and reads back; anything else a client sends is not
//! stored.

mod common;
mod enterprise;
mod group;
mod lookup;
mod user;

pub use common::{COMMON_ATTRIBUTES, EXTERNAL_ID, ID, META, SCHEMAS};
pub use enterprise::ENTERPRISE_USER;
pub use group::GROUP;
pub use user::USER;

pub(crate) use lookup::{Found, Resolution, find_attribute, find_sub_attribute, is_attr_name, resolve_key, resolve_path};

use crate::limits::{MAX_GROUP_BYTES, MAX_USER_BYTES};

pub const USER_URN: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
pub const GROUP_URN: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";
pub const ENTERPRISE_USER_URN: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/// An attribute's data type (RFC 7643 §2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrType {
    String,
    Boolean,
    Decimal,
    Integer,
    DateTime,
    Binary,
    Reference,
    Complex,
}

impl AttrType {
    pub fn as_str(self) -> &'static str {
        match self {
            AttrType::String => "string",
            AttrType::Boolean => "boolean",
            AttrType::Decimal => "decimal",
            AttrType::Integer => "integer",
            AttrType::DateTime => "dateTime",
            AttrType::Binary => "binary",
            AttrType::Reference => "reference",
            AttrType::Complex => "complex",
        }
    }
}

/// RFC 7643 §7 `mutability`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutability {
    ReadOnly,
    ReadWrite,
    Immutable,
    WriteOnly,
}

impl Mutability {
    pub fn as_str(self) -> &'static str {
        match self {
            Mutability::ReadOnly => "readOnly",
            Mutability::ReadWrite => "readWrite",
            Mutability::Immutable => "immutable",
            Mutability::WriteOnly => "writeOnly",
        }
    }
}

/// RFC 7643 §7 `returned`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Returned {
    Always,
    Never,
    Default,
    Request,
}

impl Returned {
    pub fn as_str(self) -> &'static str {
        match self {
            Returned::Always => "always",
            Returned::Never => "never",
            Returned::Default => "default",
            Returned::Request => "request",
        }
    }
}

/// RFC 7643 §7 `uniqueness`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uniqueness {
    None,
    Server,
    Global,
}

impl Uniqueness {
    pub fn as_str(self) -> &'static str {
        match self {
            Uniqueness::None => "none",
            Uniqueness::Server => "server",
            Uniqueness::Global => "global",
        }
    }
}

/// One attribute definition. Sub-attributes are one level deep, as RFC 7643
/// §2.3.8 allows, so no walk over a document goes deeper than two levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attribute {
    pub name: &'static str,
    pub kind: AttrType,
    pub multi_valued: bool,
    pub description: &'static str,
    pub required: bool,
    pub case_exact: bool,
    pub mutability: Mutability,
    pub returned: Returned,
    pub uniqueness: Uniqueness,
    /// Declared values: a string attribute with some accepts only these
    /// (compared case-insensitively, stored in the spelling declared here).
    pub canonical_values: &'static [&'static str],
    pub reference_types: &'static [&'static str],
    pub sub_attributes: &'static [Attribute],
    /// How many values a multi-valued attribute keeps.
    pub max_values: usize,
}

impl Attribute {
    /// A single-valued, optional, readWrite string: the most common shape;
    /// the definitions override what differs.
    pub const fn string(name: &'static str, description: &'static str) -> Self {
        Attribute {
            name,
            kind: AttrType::String,
            multi_valued: false,
            description,
            required: false,
            case_exact: false,
            mutability: Mutability::ReadWrite,
            returned: Returned::Default,
            uniqueness: Uniqueness::None,
            canonical_values: &[],
            reference_types: &[],
            sub_attributes: &[],
            max_values: crate::limits::MAX_VALUES,
        }
    }

    pub const fn complex(name: &'static str, description: &'static str, sub_attributes: &'static [Attribute]) -> Self {
        Attribute { kind: AttrType::Complex, sub_attributes, ..Attribute::string(name, description) }
    }

    pub const fn boolean(name: &'static str, description: &'static str) -> Self {
        Attribute { kind: AttrType::Boolean, ..Attribute::string(name, description) }
    }

    pub const fn reference(name: &'static str, description: &'static str, reference_types: &'static [&'static str]) -> Self {
        Attribute { kind: AttrType::Reference, case_exact: true, reference_types, ..Attribute::string(name, description) }
    }

    pub fn is_complex(&self) -> bool {
        self.kind == AttrType::Complex
    }

    /// The sub-attribute a comparison on a complex attribute means
    /// (`emails co "x"` is `emails.value co "x"`, RFC 7644 §3.4.2.2).
    pub fn value_sub_attribute(&self) -> Option<&'static Attribute> {
        self.sub_attributes.iter().find(|sub| sub.name == "value")
    }
}

/// A schema: its URN, its name and its attributes (RFC 7643 §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schema {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub attributes: &'static [Attribute],
}

/// The resource types lattice serves at `/Users` and `/Groups`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceType {
    User,
    Group,
}

impl ResourceType {
    pub const ALL: [ResourceType; 2] = [ResourceType::User, ResourceType::Group];

    /// The resource type's `id` and `name`, and `meta.resourceType`.
    pub fn name(self) -> &'static str {
        match self {
            ResourceType::User => "User",
            ResourceType::Group => "Group",
        }
    }

    /// The endpoint under the base URL, e.g. `/Users`.
    pub fn endpoint(self) -> &'static str {
        match self {
            ResourceType::User => "/Users",
            ResourceType::Group => "/Groups",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            ResourceType::User => "A person of the tenant",
            ResourceType::Group => "A group of people; its membership can grant roles in lattice",
        }
    }

    /// The core schema.
    pub fn schema(self) -> &'static Schema {
        match self {
            ResourceType::User => &USER,
            ResourceType::Group => &GROUP,
        }
    }

    /// The extension schemas a resource of this type may carry.
    pub fn extensions(self) -> &'static [&'static Schema] {
        static USER_EXTENSIONS: [&Schema; 1] = [&ENTERPRISE_USER];
        match self {
            ResourceType::User => &USER_EXTENSIONS,
            ResourceType::Group => &[],
        }
    }

    /// The largest stored document, as compact JSON.
    pub fn max_document_bytes(self) -> usize {
        match self {
            ResourceType::User => MAX_USER_BYTES,
            ResourceType::Group => MAX_GROUP_BYTES,
        }
    }

    /// By `id`/`name`, case-insensitively (`/ResourceTypes/{id}`).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// The schema (core or extension) with this URN, case-insensitively.
    pub fn schema_by_urn(self, urn: &str) -> Option<&'static Schema> {
        std::iter::once(self.schema()).chain(self.extensions().iter().copied()).find(|s| s.id.eq_ignore_ascii_case(urn))
    }

    /// The extension with this URN, case-insensitively.
    pub fn extension_by_urn(self, urn: &str) -> Option<&'static Schema> {
        self.extensions().iter().copied().find(|s| s.id.eq_ignore_ascii_case(urn))
    }
}

/// Every schema `/Schemas` publishes.
pub const ALL_SCHEMAS: [&Schema; 3] = [&USER, &ENTERPRISE_USER, &GROUP];
