//! The resource types lattice serves (RFC 7643 §6): each one's endpoint,
//! schemas and bounds.

use super::{ENTERPRISE_USER, GROUP, Schema, USER};
use crate::limits::{MAX_GROUP_BYTES, MAX_USER_BYTES};

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
