//! The shape every schema is declared in: an attribute's definition and
//! its characteristics (RFC 7643 §2, §7), and a schema of them.

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
