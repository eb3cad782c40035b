//! A compiled property's keywords lowered to what the hot path walks: its
//! rules, in the order that refuses cheapest, and its typed check.

use super::compiled::{CompiledForm, Hot, Property};
use super::rules::{Fast, Rule};
use super::types::Types;

impl CompiledForm {
    pub(crate) fn new(title: Option<String>, description: Option<String>, mut properties: Vec<Property>) -> Self {
        for p in &mut properties {
            p.rules = rules_of(p);
        }
        let mut by_name: Vec<(String, usize)> = properties.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect();
        by_name.sort_unstable();
        let required_count = properties.iter().filter(|p| p.required).count();
        let hot = properties.iter().map(|p| Hot { name: p.name.as_str().into(), required: p.required, check: Fast::of(p) }).collect();
        Self { title, description, properties, by_name, required_count, hot }
    }
}

impl Fast {
    pub(crate) fn of(p: &Property) -> Self {
        let plain = p.constant.is_none()
            && p.minimum.is_none()
            && p.maximum.is_none()
            && p.exclusive_minimum.is_none()
            && p.exclusive_maximum.is_none()
            && p.multiple_of.is_none();
        match p.types {
            Some(t)
                if t == Types::STRING
                    && plain
                    && p.min_items.is_none()
                    && p.max_items.is_none()
                    && !p.unique_items
                    && p.item_choices.is_none()
                    && (p.choices.is_none() || p.string_choices.is_some()) =>
            {
                Fast::Text {
                    choices: p.string_choices.as_ref().map(|c| c.iter().map(|s| s.as_str().into()).collect()),
                    min: p.min_length,
                    max: p.max_length,
                    format: p.format,
                }
            }
            Some(t) if t == Types::ARRAY && plain && p.choices.is_none() && p.item_choices.is_some() => Fast::Choices {
                choices: p.item_choices.iter().flatten().filter_map(|v| v.as_str()).map(Into::into).collect(),
                unique: p.unique_items,
                min: p.min_items,
                max: p.max_items,
            },
            Some(t) if t == Types::BOOLEAN && plain && p.choices.is_none() => Fast::Boolean,
            _ => Fast::Rules(p.rules.clone()),
        }
    }
}

pub(crate) fn rules_of(p: &Property) -> Box<[Rule]> {
    let mut rules = Vec::new();
    if let Some(t) = p.types {
        rules.push(Rule::Type(t));
    }
    match (&p.string_choices, &p.choices) {
        (Some(strings), _) => rules.push(Rule::StringEnum(strings.iter().map(|s| s.as_str().into()).collect())),
        (None, Some(values)) => rules.push(Rule::Enum(values.clone().into())),
        (None, None) => {}
    }
    if let Some(c) = &p.constant {
        rules.push(Rule::Const(c.clone()));
    }
    rules.extend(p.max_length.map(Rule::MaxLength));
    rules.extend(p.min_length.map(Rule::MinLength));
    rules.extend(p.format.map(Rule::Format));
    rules.extend(p.minimum.map(Rule::Minimum));
    rules.extend(p.maximum.map(Rule::Maximum));
    rules.extend(p.exclusive_minimum.map(Rule::ExclusiveMinimum));
    rules.extend(p.exclusive_maximum.map(Rule::ExclusiveMaximum));
    rules.extend(p.multiple_of.map(Rule::MultipleOf));
    rules.extend(p.min_items.map(Rule::MinItems));
    rules.extend(p.max_items.map(Rule::MaxItems));
    let item_choices = p.item_choices.as_ref().map(|items| items.iter().filter_map(|v| v.as_str()).map(Into::into).collect());
    match (item_choices, p.unique_items) {
        (Some(choices), true) => rules.push(Rule::UniqueItemEnum(choices)),
        (Some(choices), false) => rules.push(Rule::ItemEnum(choices)),
        (None, true) => rules.push(Rule::UniqueItems),
        (None, false) => {}
    }
    if p.file.as_ref().is_some_and(|f| f.many) {
        rules.push(Rule::FileItems);
    }
    rules.into()
}
