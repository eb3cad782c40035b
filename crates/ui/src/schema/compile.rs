//! Compiling a FormSchema: every keyword is looked up in a table; anything
//! not in it is refused where it stands.

use lattice_core::{Error, FieldError};
use serde_json::{Map, Value};

use super::format::Format;
use super::{ACCEPT_MAX, CompiledForm, FileRule, Property, Types, is_integer, is_media_range, limits};

/// Keywords allowed at the root of a FormSchema.
pub fn root_keywords() -> &'static [&'static str] {
    &["$schema", "type", "title", "description", "properties", "required", "additionalProperties"]
}

/// Keywords allowed in a property's schema.
pub fn property_keywords() -> &'static [&'static str] {
    &[
        "type",
        "enum",
        "const",
        "default",
        "title",
        "description",
        "examples",
        "minLength",
        "maxLength",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "items",
        "accept",
        "maxSize",
    ]
}

/// Why a keyword the table leaves out is refused, where there is more to
/// say than "keyword not allowed".
fn refusal(keyword: &str) -> &'static str {
    match keyword {
        "$ref" | "$defs" | "definitions" | "$dynamicRef" | "$anchor" | "$id" => "keyword not allowed: a form is one self-contained schema",
        "properties"
        | "patternProperties"
        | "additionalProperties"
        | "propertyNames"
        | "dependentSchemas"
        | "dependentRequired"
        | "unevaluatedProperties"
        | "required"
        | "minProperties"
        | "maxProperties" => "keyword not allowed: nested objects are not allowed",
        "pattern" => "keyword not allowed: patterns are not allowed (use format or enum)",
        "if" | "then" | "else" | "allOf" | "anyOf" | "oneOf" | "not" => "keyword not allowed: no conditional or combined schemas",
        "prefixItems" | "contains" | "minContains" | "maxContains" | "unevaluatedItems" => "keyword not allowed: arrays hold enumerated strings only",
        _ => "keyword not allowed",
    }
}

const SCHEMA_URI: &str = "https://json-schema.org/draft/2020-12/schema";

/// Compiles a FormSchema, or refuses it with every fault found.
pub fn compile(schema: &Value) -> Result<CompiledForm, Error> {
    let size = serde_json::to_vec(schema).map(|v| v.len()).unwrap_or(usize::MAX);
    if size > limits::SCHEMA_BYTES {
        return Err(Error::too_large(lattice_core::Code::DocumentTooLarge, limits::SCHEMA_BYTES as u64, size as u64));
    }
    let mut c = Compiler::default();
    let form = c.root(schema);
    Error::invalid(c.errors).map(|()| form)
}

#[derive(Default)]
struct Compiler {
    errors: Vec<FieldError>,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

impl Compiler {
    fn fail(&mut self, path: &str, keyword: &str, message: impl Into<String>) {
        self.errors.push(FieldError::new(path, keyword, message));
    }

    fn root(&mut self, schema: &Value) -> CompiledForm {
        let Some(map) = schema.as_object() else {
            self.fail("", "type", "a form's schema must be a JSON object");
            return CompiledForm::new(None, None, Vec::new());
        };
        for key in map.keys() {
            if !root_keywords().contains(&key.as_str()) {
                let message = match key.as_str() {
                    "properties" | "required" => "keyword not allowed",
                    other if property_keywords().contains(&other) => "keyword not allowed at the root: a form's root is an object of properties",
                    other => refusal(other),
                };
                self.fail(key, key, message);
            }
        }
        if let Some(v) = map.get("$schema")
            && v.as_str() != Some(SCHEMA_URI)
        {
            self.fail("$schema", "$schema", format!("only JSON Schema 2020-12 ({SCHEMA_URI}) is allowed"));
        }
        if let Some(t) = map.get("type")
            && t.as_str() != Some("object")
        {
            self.fail("type", "type", "a form's root must be of type \"object\"");
        }
        if let Some(v) = map.get("additionalProperties")
            && v != &Value::Bool(false)
        {
            self.fail("additionalProperties", "additionalProperties", "only false is allowed: values carry only the form's properties");
        }
        let title = self.text(map, "", "title");
        let description = self.text(map, "", "description");
        let properties = match map.get("properties") {
            None => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => {
                self.fail("properties", "properties", "must be an object");
                Map::new()
            }
        };
        if properties.len() > limits::PROPERTIES {
            self.fail("properties", "maxProperties", format!("{} properties exceed the limit {}", properties.len(), limits::PROPERTIES));
        }
        let required = self.required(map, &properties);
        let mut compiled = Vec::with_capacity(properties.len());
        for (name, schema) in &properties {
            let path = format!("properties.{name}");
            if name.is_empty() || name.len() > 64 {
                self.fail(&path, "propertyName", "a property name has 1 to 64 bytes");
            }
            let mut property = self.property(&path, name, schema);
            property.required = required.contains(name);
            compiled.push(property);
        }
        CompiledForm::new(title, description, compiled)
    }

    fn required(&mut self, map: &Map<String, Value>, properties: &Map<String, Value>) -> Vec<String> {
        let Some(value) = map.get("required") else { return Vec::new() };
        let Some(items) = value.as_array() else {
            self.fail("required", "required", "must be an array of property names");
            return Vec::new();
        };
        let mut names = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item.as_str() {
                Some(name) if !properties.contains_key(name) => {
                    self.fail(&format!("required.{i}"), "required", format!("{name:?} is not a property of this form"))
                }
                Some(name) if names.iter().any(|n| n == name) => self.fail(&format!("required.{i}"), "required", format!("{name:?} is listed twice")),
                Some(name) => names.push(name.to_owned()),
                None => self.fail(&format!("required.{i}"), "required", "must be a property name"),
            }
        }
        names
    }

    fn text(&mut self, map: &Map<String, Value>, path: &str, key: &str) -> Option<String> {
        match map.get(key)? {
            // A title is a name a person reads: the one rule for names.
            Value::String(s) if key == "title" && s.chars().any(lattice_core::name::hidden) => {
                let message = lattice_core::name::check(key, s).err().map(|e| e.message).unwrap_or_default();
                self.fail(&join(path, key), "pattern", message);
                None
            }
            Value::String(s) if s.chars().count() <= limits::TEXT_CHARS => Some(s.clone()),
            Value::String(s) => {
                self.fail(&join(path, key), key, format!("{} characters exceed the limit {}", s.chars().count(), limits::TEXT_CHARS));
                None
            }
            _ => {
                self.fail(&join(path, key), key, "must be a string");
                None
            }
        }
    }

    fn property(&mut self, path: &str, name: &str, schema: &Value) -> Property {
        let mut p = Property {
            name: name.to_owned(),
            title: None,
            description: None,
            required: false,
            types: None,
            choices: None,
            constant: None,
            default: None,
            min_length: None,
            max_length: None,
            format: None,
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
            multiple_of: None,
            min_items: None,
            max_items: None,
            unique_items: false,
            item_choices: None,
            file: None,
            string_choices: None,
            rules: Box::default(),
        };
        let Some(map) = schema.as_object() else {
            self.fail(path, "type", "a property's schema must be a JSON object");
            return p;
        };
        for key in map.keys() {
            if !property_keywords().contains(&key.as_str()) {
                self.fail(&join(path, key), key, refusal(key));
            }
        }
        p.title = self.text(map, path, "title");
        p.description = self.text(map, path, "description");
        p.types = map.get("type").and_then(|t| self.types(&join(path, "type"), t));
        p.choices = map.get("enum").and_then(|v| self.choices(&join(path, "enum"), "enum", v));
        p.string_choices = p.choices.as_ref().and_then(|c| c.iter().map(|v| v.as_str().map(str::to_owned)).collect::<Option<Vec<String>>>());
        if let Some(v) = map.get("const") {
            if is_scalar(v) {
                p.constant = Some(v.clone());
            } else {
                self.fail(&join(path, "const"), "const", "must be a string, a number or a boolean");
            }
        }
        p.default = map.get("default").cloned();
        if let Some(v) = map.get("examples")
            && !v.is_array()
        {
            self.fail(&join(path, "examples"), "examples", "must be an array");
        }
        p.min_length = self.count(map, path, "minLength");
        p.max_length = self.count(map, path, "maxLength");
        p.min_items = self.count(map, path, "minItems");
        p.max_items = self.count(map, path, "maxItems");
        p.minimum = self.number(map, path, "minimum");
        p.maximum = self.number(map, path, "maximum");
        p.exclusive_minimum = self.number(map, path, "exclusiveMinimum");
        p.exclusive_maximum = self.number(map, path, "exclusiveMaximum");
        p.multiple_of = self.number(map, path, "multipleOf");
        if p.multiple_of.is_some_and(|m| m <= 0.0) {
            self.fail(&join(path, "multipleOf"), "multipleOf", "must be greater than 0");
        }
        match map.get("uniqueItems") {
            None => {}
            Some(Value::Bool(b)) => p.unique_items = *b,
            Some(_) => self.fail(&join(path, "uniqueItems"), "uniqueItems", "must be true or false"),
        }
        if let Some(v) = map.get("format") {
            let at = join(path, "format");
            match v.as_str() {
                Some("password") => self.fail(&at, "format", "format \"password\" is refused: a form never asks for a password"),
                Some(name) => match Format::parse(name) {
                    Some(f) => p.format = Some(f),
                    None => self.fail(&at, "format", format!("format {name:?} is not one of date, time, date-time, email, uri, file")),
                },
                None => self.fail(&at, "format", "must be a string"),
            }
        }
        let items_path = join(path, "items");
        match map.get("items") {
            Some(items) if is_file_schema(items) => {
                if p.types != Some(Types::ARRAY) {
                    self.fail(&join(path, "type"), "type", "several files are an array: \"type\": \"array\"");
                }
                let items = items.as_object().expect("a file schema is an object");
                for key in items.keys() {
                    if !matches!(key.as_str(), "type" | "format" | "title" | "accept" | "maxSize") {
                        self.fail(&join(&items_path, key), key, "keyword not allowed: a file's items take type, format, accept and maxSize");
                    }
                }
                if items.get("type").is_some_and(|t| t.as_str() != Some("string")) {
                    self.fail(&join(&items_path, "type"), "type", "a file is of type \"string\" (its id)");
                }
                let mut rule = self.file_rule(&items_path, items);
                rule.many = true;
                p.file = Some(rule);
            }
            Some(items) => p.item_choices = self.items(&items_path, items),
            None => {}
        }
        if p.format == Some(Format::File) {
            if p.types != Some(Types::STRING) {
                self.fail(&join(path, "type"), "type", "a file field is of type \"string\" (its value the file's id)");
            }
            if p.choices.is_some() || p.constant.is_some() || p.default.is_some() {
                self.fail(path, "format", "a file field has no enum, const or default: its value is a file a person uploads");
            }
            p.file = Some(self.file_rule(path, map));
        } else if p.file.is_none() {
            for key in ["accept", "maxSize"] {
                if map.contains_key(key) {
                    self.fail(&join(path, key), key, "only a file field (\"format\": \"file\") takes this keyword");
                }
            }
        }
        p
    }

    /// A file field's `accept` and `maxSize`, where they stand: on the
    /// field, or on its `items` for several files.
    fn file_rule(&mut self, path: &str, map: &Map<String, Value>) -> FileRule {
        let mut rule = FileRule::default();
        if let Some(v) = map.get("accept") {
            let at = join(path, "accept");
            match v.as_array() {
                Some(items) if !items.is_empty() && items.len() <= ACCEPT_MAX => {
                    for (i, item) in items.iter().enumerate() {
                        match item.as_str() {
                            Some(s) if is_media_range(s) => rule.accept.push(s.to_owned()),
                            _ => self.fail(&format!("{at}.{i}"), "accept", "must be a media type such as image/png, or a range such as image/*"),
                        }
                    }
                }
                _ => self.fail(&at, "accept", format!("must be an array of 1 to {ACCEPT_MAX} media types")),
            }
        }
        rule.max_size = self.count(map, path, "maxSize");
        if rule.max_size == Some(0) {
            self.fail(&join(path, "maxSize"), "maxSize", "must be at least 1 byte");
        }
        rule
    }

    fn types(&mut self, path: &str, value: &Value) -> Option<Types> {
        let one = |name: &str| match name {
            "string" => Ok(Types::STRING),
            "number" => Ok(Types::NUMBER),
            "integer" => Ok(Types::INTEGER),
            "boolean" => Ok(Types::BOOLEAN),
            "array" => Ok(Types::ARRAY),
            "object" => Err("nested objects are not allowed"),
            "null" => Err("type \"null\" is not allowed: leave an optional field out instead"),
            _ => Err("is not a JSON Schema type"),
        };
        let names: Vec<&Value> = match value {
            Value::Array(items) if !items.is_empty() => items.iter().collect(),
            Value::String(_) => vec![value],
            _ => {
                self.fail(path, "type", "must be a type name or a non-empty array of them");
                return None;
            }
        };
        let mut types = Types::default();
        for name in names {
            match name.as_str().map(one) {
                Some(Ok(t)) => types = types.union(t),
                Some(Err(why)) => self.fail(path, "type", format!("{name}: {why}")),
                None => self.fail(path, "type", "type names are strings"),
            }
        }
        Some(types)
    }

    fn choices(&mut self, path: &str, keyword: &str, value: &Value) -> Option<Vec<Value>> {
        let Some(items) = value.as_array() else {
            self.fail(path, keyword, "must be an array");
            return None;
        };
        if items.len() > limits::CHOICES {
            self.fail(path, keyword, format!("{} choices exceed the limit {}", items.len(), limits::CHOICES));
            return None;
        }
        if items.iter().any(|v| !is_scalar(v)) {
            self.fail(path, keyword, "choices must be strings, numbers or booleans");
            return None;
        }
        Some(items.clone())
    }

    fn count(&mut self, map: &Map<String, Value>, path: &str, key: &str) -> Option<u64> {
        let value = map.get(key)?;
        match value {
            Value::Number(n) if is_integer(n) && n.as_f64().is_some_and(|f| f >= 0.0) => {
                Some(n.as_u64().unwrap_or_else(|| n.as_f64().unwrap_or(0.0) as u64))
            }
            _ => {
                self.fail(&join(path, key), key, "must be a non-negative integer");
                None
            }
        }
    }

    fn number(&mut self, map: &Map<String, Value>, path: &str, key: &str) -> Option<f64> {
        match map.get(key)? {
            Value::Number(n) => n.as_f64(),
            _ => {
                self.fail(&join(path, key), key, "must be a number");
                None
            }
        }
    }

    /// A multi-choice array's items: enumerated strings, nothing else (files
    /// are [`is_file_schema`]'s).
    fn items(&mut self, path: &str, items: &Value) -> Option<Vec<Value>> {
        let Some(map) = items.as_object() else {
            self.fail(path, "items", "must be a schema of enumerated strings");
            return None;
        };
        for key in map.keys() {
            if !matches!(key.as_str(), "type" | "enum" | "title") {
                self.fail(&join(path, key), key, "keyword not allowed: arrays hold enumerated strings only");
            }
        }
        if let Some(t) = map.get("type")
            && t.as_str() != Some("string")
        {
            self.fail(&join(path, "type"), "type", "array items are strings");
        }
        let Some(choices) = map.get("enum").and_then(|v| self.choices(&join(path, "enum"), "enum", v)) else {
            if !map.contains_key("enum") {
                self.fail(&join(path, "enum"), "enum", "array items need an enum of strings (multi-choice)");
            }
            return None;
        };
        if choices.iter().any(|c| !c.is_string()) {
            self.fail(&join(path, "enum"), "enum", "array items are strings");
            return None;
        }
        Some(choices)
    }
}

/// Whether an `items` schema is a file field's: several files.
fn is_file_schema(items: &Value) -> bool {
    items.get("format").and_then(Value::as_str) == Some(Format::File.as_str())
}

fn is_scalar(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_))
}
