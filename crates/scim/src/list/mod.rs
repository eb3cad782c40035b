//! Lists (RFC 7644 §3.4.2): the query, sorting, and the ListResponse.

mod query;
mod sort;
#[cfg(test)]
mod tests;

pub use query::{ListQuery, SEARCH_REQUEST_URN};
pub use sort::Sort;

use serde_json::{Map, Value};

use crate::schema::ResourceType;

pub const LIST_RESPONSE_URN: &str = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

/// `{"schemas":[…ListResponse],"totalResults":…,"startIndex":…,"itemsPerPage":…,"Resources":[…]}`.
pub fn list_response(total_results: usize, start_index: u64, resources: Vec<Value>) -> Value {
    let mut out = Map::new();
    out.insert("schemas".into(), Value::from(vec![LIST_RESPONSE_URN]));
    out.insert("totalResults".into(), Value::from(total_results));
    out.insert("startIndex".into(), Value::from(start_index));
    out.insert("itemsPerPage".into(), Value::from(resources.len()));
    out.insert("Resources".into(), Value::Array(resources));
    Value::Object(out)
}

impl ListQuery {
    /// The whole list in memory: `resources` rendered in full (the default
    /// projection), kept if the filter matches, sorted, paged, projected.
    /// A route that narrowed them in SQL (`Filter::narrowing_eq`) passes
    /// those it found; the filter is applied here all the same.
    pub fn respond(&self, resource_type: ResourceType, mut resources: Vec<Value>) -> Value {
        if let Some(filter) = &self.filter {
            resources.retain(|r| filter.matches(r));
        }
        if let Some(sort) = &self.sort {
            sort.sort(&mut resources);
        }
        let total = resources.len();
        let window = self.window(total);
        let page: Vec<Value> =
            resources.into_iter().skip(window.start).take(window.len()).map(|r| self.projection.project(resource_type, r)).collect();
        list_response(total, self.start_index, page)
    }
}
