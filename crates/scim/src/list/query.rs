//! The parameters of a list (RFC 7644 §3.4.2): from a query string, or
//! from a SearchRequest body (§3.4.3), to one [`ListQuery`].

use serde_json::{Map, Value};

use super::sort::Sort;
use crate::error::{ScimError, excerpt};
use crate::filter::Filter;
use crate::limits::{MAX_PAGE, MAX_PARAMETER_BYTES, MAX_START_INDEX};
use crate::resource::Projection;
use crate::schema::ResourceType;

pub const SEARCH_REQUEST_URN: &str = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";

/// What a list asks for. `start_index` is 1-based; `count` is at most
/// [`MAX_PAGE`], and is [`MAX_PAGE`] when not given.
#[derive(Debug, Clone, PartialEq)]
pub struct ListQuery {
    pub filter: Option<Filter>,
    pub start_index: u64,
    pub count: usize,
    pub sort: Option<Sort>,
    pub projection: Projection,
}

impl Default for ListQuery {
    fn default() -> Self {
        ListQuery { filter: None, start_index: 1, count: MAX_PAGE, sort: None, projection: Projection::default() }
    }
}

/// The parameters, each once, whichever the case of its name.
#[derive(Default)]
struct Raw {
    filter: Option<String>,
    start_index: Option<Value>,
    count: Option<Value>,
    sort_by: Option<String>,
    sort_order: Option<String>,
    attributes: Vec<String>,
    excluded_attributes: Vec<String>,
}

impl ListQuery {
    /// From the query string's pairs, already percent-decoded. Parameters
    /// other than RFC 7644's are left to the route.
    pub fn from_query<'a>(resource_type: ResourceType, params: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self, ScimError> {
        let mut raw = Raw::default();
        let mut seen: Vec<&'static str> = Vec::new();
        for (name, value) in params {
            let Some(name) = ["filter", "startIndex", "count", "sortBy", "sortOrder", "attributes", "excludedAttributes"]
                .into_iter()
                .find(|known| known.eq_ignore_ascii_case(name))
            else {
                continue;
            };
            if seen.contains(&name) {
                return Err(ScimError::invalid_value(format!("{name} is given twice")));
            }
            seen.push(name);
            let text = value.to_string();
            match name {
                "filter" => raw.filter = Some(text),
                "startIndex" => raw.start_index = Some(Value::String(text)),
                "count" => raw.count = Some(Value::String(text)),
                "sortBy" => raw.sort_by = Some(text),
                "sortOrder" => raw.sort_order = Some(text),
                "attributes" => raw.attributes = split_paths(name, value)?,
                _ => raw.excluded_attributes = split_paths(name, value)?,
            }
        }
        raw.read(resource_type)
    }

    /// From the body of a `POST …/.search`.
    pub fn from_search_request(resource_type: ResourceType, body: &Value) -> Result<Self, ScimError> {
        let Value::Object(fields) = body else { return Err(ScimError::invalid_syntax("the body is not a JSON object")) };
        let field = |name: &str| fields.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v);
        let lists_search = match field("schemas") {
            Some(Value::Array(urns)) => urns.iter().any(|u| u.as_str().is_some_and(|u| u.eq_ignore_ascii_case(SEARCH_REQUEST_URN))),
            _ => false,
        };
        if !lists_search {
            return Err(ScimError::invalid_syntax(format!("schemas: must be a list holding {SEARCH_REQUEST_URN:?}")));
        }
        let string = |name: &str| -> Result<Option<String>, ScimError> {
            match field(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(ScimError::invalid_value(format!("{name}: expected a string"))),
            }
        };
        let raw = Raw {
            filter: string("filter")?,
            start_index: field("startIndex").filter(|v| !v.is_null()).cloned(),
            count: field("count").filter(|v| !v.is_null()).cloned(),
            sort_by: string("sortBy")?,
            sort_order: string("sortOrder")?,
            attributes: paths(fields, "attributes")?,
            excluded_attributes: paths(fields, "excludedAttributes")?,
        };
        raw.read(resource_type)
    }

    /// The range of the filtered, sorted results this page holds.
    pub fn window(&self, total: usize) -> std::ops::Range<usize> {
        let start = usize::try_from(self.start_index.saturating_sub(1)).unwrap_or(usize::MAX).min(total);
        start..start.saturating_add(self.count).min(total)
    }
}

impl Raw {
    fn read(self, resource_type: ResourceType) -> Result<ListQuery, ScimError> {
        let filter = self.filter.map(|text| Filter::parse(resource_type, &text)).transpose()?;
        // RFC 7644 §3.4.2.4: below 1 reads as 1, a negative count as 0.
        let start_index = match self.start_index {
            None => 1,
            Some(v) => integer("startIndex", &v)?.clamp(1, MAX_START_INDEX as i64) as u64,
        };
        let count = match self.count {
            None => MAX_PAGE,
            Some(v) => integer("count", &v)?.clamp(0, MAX_PAGE as i64) as usize,
        };
        let sort = match self.sort_by {
            None => None,
            Some(by) => Some(Sort::parse(resource_type, &by, self.sort_order.as_deref())?),
        };
        let projection = Projection::from_lists(resource_type, &self.attributes, &self.excluded_attributes)?;
        Ok(ListQuery { filter, start_index, count, sort, projection })
    }
}

fn integer(name: &str, value: &Value) -> Result<i64, ScimError> {
    let parsed = match value {
        Value::String(s) => s.trim().parse::<i64>().ok(),
        Value::Number(n) => n.as_i64(),
        _ => None,
    };
    let shown = match value {
        Value::String(s) => excerpt(s),
        other => excerpt(&other.to_string()),
    };
    parsed.ok_or_else(|| ScimError::invalid_value(format!("{name}: {shown} is not an integer")))
}

fn split_paths(name: &str, text: &str) -> Result<Vec<String>, ScimError> {
    if text.len() > MAX_PARAMETER_BYTES {
        return Err(ScimError::invalid_value(format!("{name}: {} bytes, over the limit {MAX_PARAMETER_BYTES}", text.len())));
    }
    Ok(text.split(',').map(str::trim).filter(|p| !p.is_empty()).map(String::from).collect())
}

/// A SearchRequest's list of paths (or, leniently, one comma-separated string).
fn paths(fields: &Map<String, Value>, name: &str) -> Result<Vec<String>, ScimError> {
    match fields.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(text)) => split_paths(name, text),
        Some(Value::Array(items)) => {
            let texts: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
            let texts = texts.ok_or_else(|| ScimError::invalid_value(format!("{name}: expected a list of strings")))?;
            split_paths(name, &texts.join(","))
        }
        Some(_) => Err(ScimError::invalid_value(format!("{name}: expected a list of strings"))),
    }
}
