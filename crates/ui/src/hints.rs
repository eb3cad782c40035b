//! UI hints (REQUIREMENTS.md U3): how a property is shown, and nothing else. A hint
//! names a component of the kit; it never carries a colour, a class, HTML or
//! a URL.

use std::collections::BTreeMap;

use lattice_core::{Error, FieldError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::schema::{CompiledForm, Format, Types};

/// The kit's form components a property may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Widget {
    Text,
    Textarea,
    Number,
    Select,
    Radio,
    Checkbox,
    Checkboxes,
    Date,
    Time,
    Datetime,
    Email,
    Url,
    // A file input (one file, or several): uploads, then holds their ids.
    File,
}

/// How one field is shown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldHints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widget: Option<Widget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// What a choice is shown as, by its value (a server's titled enum,
    /// as elicitation has them): the value is what is sent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// A titled group of fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Section {
    pub title: String,
    pub properties: Vec<String>,
}

/// A form's `ui` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UiHints {
    /// Field names in the order they are shown; the rest follow in schema order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<Section>,
    /// The send button's label (default "Send").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_label: Option<String>,
    /// Per field: widget, placeholder, help.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, FieldHints>,
}

const HINT_CHARS: usize = 300;
const LABEL_CHARS: usize = 60;

impl UiHints {
    /// Checks the hints against the compiled form they describe.
    pub fn check(&self, form: &CompiledForm) -> Result<(), Error> {
        let mut errors = Vec::new();
        let known = |name: &str| form.property(name).is_some();
        for (i, name) in self.order.iter().enumerate() {
            if !known(name) {
                errors.push(FieldError::new(format!("order.{i}"), "order", format!("{name:?} is not a property of the form")));
            }
        }
        for (s, section) in self.sections.iter().enumerate() {
            plain_text(&mut errors, &format!("sections.{s}.title"), &section.title, LABEL_CHARS * 2);
            if let Err(e) = lattice_core::name::check(&format!("sections.{s}.title"), &section.title) {
                errors.push(e);
            }
            for (i, name) in section.properties.iter().enumerate() {
                if !known(name) {
                    errors.push(FieldError::new(
                        format!("sections.{s}.properties.{i}"),
                        "sections",
                        format!("{name:?} is not a property of the form"),
                    ));
                }
            }
        }
        if let Some(label) = &self.submit_label {
            plain_text(&mut errors, "submit_label", label, LABEL_CHARS);
            if let Err(e) = lattice_core::name::check("submit_label", label) {
                errors.push(e);
            }
        }
        for (name, hints) in &self.fields {
            let path = format!("fields.{name}");
            let Some(property) = form.property(name) else {
                errors.push(FieldError::new(&path, "fields", format!("{name:?} is not a property of the form")));
                continue;
            };
            if let Some(p) = &hints.placeholder {
                plain_text(&mut errors, &format!("{path}.placeholder"), p, HINT_CHARS);
            }
            if let Some(h) = &hints.help {
                plain_text(&mut errors, &format!("{path}.help"), h, HINT_CHARS);
            }
            if let Some(widget) = hints.widget
                && let Err(why) = fits(widget, property)
            {
                errors.push(FieldError::new(format!("{path}.widget"), "widget", why));
            }
            let choices = property.item_choices.as_ref().or(property.choices.as_ref());
            for (value, label) in &hints.labels {
                let at = format!("{path}.labels.{value}");
                if !choices.is_some_and(|c| c.iter().any(|c| c.as_str() == Some(value))) {
                    errors.push(FieldError::new(&at, "labels", format!("{value:?} is not one of the field's choices")));
                }
                plain_text(&mut errors, &at, label, LABEL_CHARS);
            }
        }
        Error::invalid(errors)
    }
}

/// Choices up to this many show as radios; more, as a select.
pub const RADIO_CHOICES: usize = 5;
/// Text that may run longer than this many characters gets a textarea.
pub const LINE_CHARS: u64 = 200;

/// The widget a property is drawn with: its hint's, or the kit's choice
/// from the schema. Every renderer draws what this says (the chat's
/// SchemaForm, and the MCP form view, which is sent the result).
pub fn widget_of(p: &crate::schema::Property, hint: Option<Widget>) -> Widget {
    if let Some(widget) = hint {
        return widget;
    }
    let types = p.types.unwrap_or_default();
    if p.file.is_some() {
        Widget::File
    } else if p.item_choices.is_some() {
        Widget::Checkboxes
    } else if let Some(choices) = &p.choices {
        if choices.len() <= RADIO_CHOICES { Widget::Radio } else { Widget::Select }
    } else if types.contains(Types::BOOLEAN) {
        Widget::Checkbox
    } else if types.contains(Types::NUMBER) || types.contains(Types::INTEGER) {
        Widget::Number
    } else {
        match p.format {
            Some(Format::Date) => Widget::Date,
            Some(Format::Time) => Widget::Time,
            Some(Format::DateTime) => Widget::Datetime,
            Some(Format::Email) => Widget::Email,
            Some(Format::Uri) => Widget::Url,
            Some(Format::File) => Widget::File,
            None if p.max_length.is_none_or(|m| m > LINE_CHARS) => Widget::Textarea,
            None => Widget::Text,
        }
    }
}

/// Every property's widget, by name: what a form's view is sent.
pub fn widgets(form: &CompiledForm, ui: Option<&UiHints>) -> BTreeMap<String, Widget> {
    let hint = |name: &str| ui.and_then(|ui| ui.fields.get(name)).and_then(|f| f.widget);
    form.properties.iter().map(|p| (p.name.clone(), widget_of(p, hint(&p.name)))).collect()
}

/// Whether a widget can show and edit the property's values.
fn fits(widget: Widget, p: &crate::schema::Property) -> Result<(), String> {
    let types = p.types.unwrap_or_default();
    let is = |t: Types| types.contains(t);
    let ok = match widget {
        Widget::Text | Widget::Textarea => is(Types::STRING) && p.format.is_none(),
        Widget::Number => is(Types::NUMBER) || is(Types::INTEGER),
        Widget::Select | Widget::Radio => p.choices.is_some(),
        Widget::Checkbox => is(Types::BOOLEAN),
        Widget::Checkboxes => is(Types::ARRAY) && p.item_choices.is_some(),
        Widget::Date => p.format == Some(Format::Date),
        Widget::Time => p.format == Some(Format::Time),
        Widget::Datetime => p.format == Some(Format::DateTime),
        Widget::Email => p.format == Some(Format::Email),
        Widget::Url => p.format == Some(Format::Uri),
        Widget::File => p.file.is_some(),
    };
    if ok {
        Ok(())
    } else {
        let name = serde_json::to_value(widget).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        Err(format!("widget {name:?} cannot show property {:?}", p.name))
    }
}

/// Hints are plain words: no markup, no addresses.
fn plain_text(errors: &mut Vec<FieldError>, path: &str, text: &str, max: usize) {
    let lower = text.to_ascii_lowercase();
    if text.chars().count() > max {
        errors.push(FieldError::new(path, "maxLength", format!("{} characters exceed the limit {max}", text.chars().count())));
    } else if text.contains('<') || text.contains('>') {
        errors.push(FieldError::new(path, "plainText", "a hint is plain text: no HTML"));
    } else if lower.contains("://") || lower.contains("www.") || lower.contains("javascript:") || lower.contains("data:") {
        errors.push(FieldError::new(path, "plainText", "a hint carries no URL"));
    }
}

#[cfg(test)]
mod widget_tests {
    use super::*;
    use serde_json::json;

    fn widget(schema: serde_json::Value, hint: Option<Widget>) -> Widget {
        let form = crate::schema::compile(&json!({"type": "object", "properties": {"x": schema}})).unwrap();
        widget_of(form.property("x").unwrap(), hint)
    }

    #[test]
    fn choices_show_as_radios_up_to_five_then_a_select() {
        assert_eq!(widget(json!({"type": "string", "enum": ["a", "b", "c", "d", "e"]}), None), Widget::Radio);
        assert_eq!(widget(json!({"type": "string", "enum": ["a", "b", "c", "d", "e", "f"]}), None), Widget::Select);
        assert_eq!(widget(json!({"type": "array", "items": {"enum": ["a"]}, "uniqueItems": true}), None), Widget::Checkboxes);
        assert_eq!(widget(json!({"type": "string", "enum": ["a"]}), Some(Widget::Select)), Widget::Select);
    }

    /// A label names one of its field's choices, in at most 60
    /// characters of plain text.
    #[test]
    fn a_label_is_for_one_of_the_fields_choices() {
        let form = crate::schema::compile(&json!({"type": "object", "properties": {
            "x": {"type": "string", "enum": ["a", "b"]}, "y": {"type": "string"}}}))
        .unwrap();
        let with = |field: &str, value: &str, label: &str| UiHints {
            fields: [(field.to_owned(), FieldHints { labels: [(value.to_owned(), label.to_owned())].into(), ..FieldHints::default() })].into(),
            ..UiHints::default()
        };
        with("x", "b", "Bravo").check(&form).unwrap();
        for (hints, at) in [
            (with("x", "c", "Charlie"), "fields.x.labels.c"),
            (with("y", "a", "Alpha"), "fields.y.labels.a"),
            (with("x", "a", &"A".repeat(61)), "fields.x.labels.a"),
        ] {
            let refused = format!("{:?}", hints.check(&form).unwrap_err());
            assert!(refused.contains(at), "{refused}");
        }
    }

    #[test]
    fn text_gets_a_line_up_to_200_characters() {
        assert_eq!(widget(json!({"type": "string", "maxLength": 200}), None), Widget::Text);
        assert_eq!(widget(json!({"type": "string", "maxLength": 201}), None), Widget::Textarea);
        assert_eq!(widget(json!({"type": "string"}), None), Widget::Textarea);
        assert_eq!(widget(json!({"type": "string", "format": "date-time"}), None), Widget::Datetime);
        assert_eq!(widget(json!({"type": "integer"}), None), Widget::Number);
        assert_eq!(widget(json!({"type": "boolean"}), None), Widget::Checkbox);
    }
}
