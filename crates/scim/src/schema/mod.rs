//! The schemas lattice serves (RFC 7643 §2, §4, §8.7.1), as static data: the
//! attribute definitions every other module reads (types, mutability,
//! returned, caseExact, canonical values, bounds). What is declared here is
//! what lattice keeps and reads back; anything else a client sends is not
//! stored.

mod attribute;
mod common;
mod enterprise;
mod group;
mod lookup;
mod resource_type;
mod urns;
mod user;

pub use attribute::{AttrType, Attribute, Mutability, Returned, Schema, Uniqueness};
pub use common::{COMMON_ATTRIBUTES, EXTERNAL_ID, ID, META, SCHEMAS};
pub use enterprise::ENTERPRISE_USER;
pub use group::GROUP;
pub use resource_type::ResourceType;
pub use urns::{ENTERPRISE_USER_URN, GROUP_URN, USER_URN};
pub use user::USER;

pub(crate) use lookup::{Found, Resolution, find_attribute, find_sub_attribute, is_attr_name, resolve_key, resolve_path};

/// Every schema `/Schemas` publishes.
pub const ALL_SCHEMAS: [&Schema; 3] = [&USER, &ENTERPRISE_USER, &GROUP];
