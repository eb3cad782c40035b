//! JSON types as a set, as a schema's `type` keyword names them.

use serde_json::Value;

/// JSON types as a set: the `type` keyword's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Types(u8);

impl Types {
    pub const STRING: Types = Types(1);
    pub const NUMBER: Types = Types(2);
    pub const INTEGER: Types = Types(4);
    pub const BOOLEAN: Types = Types(8);
    pub const ARRAY: Types = Types(16);

    pub fn contains(self, other: Types) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn union(self, other: Types) -> Types {
        Types(self.0 | other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether a value of this JSON type is allowed. `number` admits
    /// integers; `integer` admits numbers with no fractional part (1.0).
    #[inline]
    pub fn admits(self, value: &Value) -> bool {
        match value {
            Value::String(_) => self.contains(Self::STRING),
            Value::Bool(_) => self.contains(Self::BOOLEAN),
            Value::Array(_) => self.contains(Self::ARRAY),
            Value::Number(n) => self.contains(Self::NUMBER) || (self.contains(Self::INTEGER) && is_integer(n)),
            Value::Null | Value::Object(_) => false,
        }
    }

    pub fn names(self) -> Vec<&'static str> {
        [(Self::STRING, "string"), (Self::NUMBER, "number"), (Self::INTEGER, "integer"), (Self::BOOLEAN, "boolean"), (Self::ARRAY, "array")]
            .into_iter()
            .filter(|(t, _)| self.contains(*t))
            .map(|(_, n)| n)
            .collect()
    }
}

pub(crate) fn is_integer(n: &serde_json::Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}
