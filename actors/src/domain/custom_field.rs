//! Custom contact fields: a key (lower_snake_case, derived from the label when omitted),
//! a type, and options for the select types.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::Checks;
use super::{text, DomainError};
use crate::clock::Timestamp;
use crate::ids::CustomFieldId;

pub const MAX_KEY: usize = 64;
pub const MAX_OPTIONS: usize = 200;
pub const MAX_OPTION_LEN: usize = 200;

/// Field names of the contact record itself; a custom field may not shadow them.
pub const BUILT_IN_CONTACT_FIELDS: &[&str] = &[
    "id",
    "object",
    "name",
    "first_name",
    "last_name",
    "phone",
    "chan_d_phone",
    "email",
    "chan_a_username",
    "chan_c_username",
    "chan_e_username",
    "country_code",
    "channel",
    "source",
    "tags",
    "stage",
    "stage_id",
    "assigned_to_user_id",
    "language",
    "custom_fields",
    "do_not_contact",
    "do_not_contact_reason",
    "notes",
    "created_at",
    "updated_at",
];

/// A custom field key: lower_snake_case, starting with a letter, up to 64 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(transparent)]
pub struct FieldKey(String);

impl FieldKey {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let well_formed = raw.len() <= MAX_KEY
            && raw.starts_with(|c: char| c.is_ascii_lowercase())
            && raw.split('_').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            });
        if !well_formed {
            return Err(format!(
                "must be lower_snake_case, start with a letter and be at most {MAX_KEY} characters"
            ));
        }
        if BUILT_IN_CONTACT_FIELDS.contains(&raw) {
            return Err(format!("`{raw}` is a built-in contact field"));
        }
        Ok(Self(raw.to_string()))
    }

    /// The key a label implies: ASCII letters and digits kept (lowercased), every other run
    /// of characters becomes one `_`, leading non-letters dropped, cut to 64.
    pub fn derive(label: &str) -> Result<Self, String> {
        let mut key = String::new();
        for c in label.chars() {
            if c.is_ascii_alphanumeric() {
                if key.is_empty() && !c.is_ascii_alphabetic() {
                    continue;
                }
                key.push(c.to_ascii_lowercase());
            } else if !key.is_empty() && !key.ends_with('_') {
                key.push('_');
            }
        }
        key.truncate(MAX_KEY);
        let key = key.trim_end_matches('_');
        if key.is_empty() {
            return Err("cannot be derived from this label; send a key".into());
        }
        Self::parse(key)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    #[default]
    Text,
    Textarea,
    Number,
    Boolean,
    Date,
    Select,
    MultiSelect,
    Url,
}

impl FieldType {
    pub fn parse(raw: &str) -> Result<Self, String> {
        serde_json::from_value(serde_json::Value::String(raw.to_string())).map_err(|_| {
            "must be one of text, textarea, number, boolean, date, select, multi_select, url"
                .to_string()
        })
    }

    pub fn has_options(self) -> bool {
        matches!(self, FieldType::Select | FieldType::MultiSelect)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CustomField {
    pub id: CustomFieldId,
    pub key: FieldKey,
    pub label: String,
    #[serde(rename = "type")]
    pub field_type: FieldType,
    /// The allowed values of select and multi_select fields; null for other types.
    pub options: Option<Vec<String>>,
    pub description: Option<String>,
    pub ai_enabled: bool,
    pub show_in_table: bool,
    /// Archived fields stay readable but refuse new values on contacts.
    pub archived: bool,
    pub created_at: Timestamp,
}

/// Body of POST /custom-fields.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewCustomFieldInput {
    #[schema(min_length = 1, pattern = "\\S")]
    pub label: String,
    #[serde(default)]
    pub key: Option<String>,
    #[serde(default, rename = "type")]
    #[schema(value_type = Option<FieldType>)]
    pub field_type: Option<String>,
    /// Required for, and only allowed with, the select types.
    #[serde(default)]
    pub options: Option<Vec<String>>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub ai_enabled: Option<bool>,
    #[serde(default)]
    pub show_in_table: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewCustomField {
    pub key: FieldKey,
    pub label: String,
    pub field_type: FieldType,
    pub options: Option<Vec<String>>,
    pub description: Option<String>,
    pub ai_enabled: bool,
    pub show_in_table: bool,
}

impl NewCustomField {
    pub fn parse(input: NewCustomFieldInput) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let label = checks.take("label", text::name(&input.label, 200));
        let key = match (&input.key, &label) {
            (Some(k), _) => checks.take("key", FieldKey::parse(k)),
            (None, Some(label)) => checks.take("key", FieldKey::derive(label)),
            (None, None) => None,
        };
        let field_type = match &input.field_type {
            None => Some(FieldType::Text),
            Some(t) => checks.take("type", FieldType::parse(t)),
        };
        let options = match (field_type, input.options) {
            (Some(t), Some(options)) if t.has_options() => {
                Some(check_options(&mut checks, options))
            }
            (Some(t), None) if t.has_options() => {
                checks.fail("options", "is required for select and multi_select fields");
                None
            }
            (Some(_), Some(_)) => {
                checks.fail(
                    "options",
                    "is only allowed for select and multi_select fields",
                );
                None
            }
            _ => None,
        };
        let description = checks.take("description", text::optional(input.description, 500));
        checks.finish()?;
        match (key, label, field_type, description) {
            (Some(key), Some(label), Some(field_type), Some(description)) => Ok(Self {
                key,
                label,
                field_type,
                options,
                description,
                ai_enabled: input.ai_enabled.unwrap_or(true),
                show_in_table: input.show_in_table.unwrap_or(false),
            }),
            _ => Err(DomainError::Internal("custom field parse".into())),
        }
    }
}

/// Options in NFC (contact values are compared in NFC too), visible, unique.
fn check_options(checks: &mut Checks, options: Vec<String>) -> Vec<String> {
    if options.is_empty() || options.len() > MAX_OPTIONS {
        checks.fail("options", format!("must hold 1 to {MAX_OPTIONS} options"));
    }
    let mut seen = HashSet::new();
    let mut kept = Vec::with_capacity(options.len());
    for (i, raw) in options.iter().enumerate() {
        let path = format!("options[{i}]");
        let Some(option) = checks.take(
            path.clone(),
            text::visible(raw).and_then(|o| text::bounded(&o, 1, MAX_OPTION_LEN).map(|_| o)),
        ) else {
            continue;
        };
        if seen.insert(option.clone()) {
            kept.push(option);
        } else {
            checks.fail(path, format!("`{option}` is listed twice"));
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(label: &str) -> NewCustomFieldInput {
        NewCustomFieldInput {
            label: label.into(),
            ..Default::default()
        }
    }

    fn paths(err: DomainError) -> Vec<String> {
        match err {
            DomainError::Validation(e) => e.into_iter().map(|e| e.path).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn keys_are_derived_from_labels() {
        assert_eq!(
            FieldKey::derive("Shoe Size (EU)").unwrap().as_str(),
            "shoe_size_eu"
        );
        assert_eq!(
            FieldKey::derive("  2nd  Phone!").unwrap().as_str(),
            "nd_phone"
        );
        let long = FieldKey::derive(&"Ab ".repeat(40)).unwrap();
        assert_eq!(long.as_str().len(), 64);
        let cut_at_separator = FieldKey::derive(&format!("{} b", "a".repeat(63))).unwrap();
        assert_eq!(
            cut_at_separator.as_str(),
            "a".repeat(63),
            "no trailing underscore"
        );
        assert!(FieldKey::derive("!!!").is_err());
        assert!(FieldKey::derive("Email").is_err(), "email is built in");
    }

    #[test]
    fn explicit_keys_must_be_lower_snake_case() {
        for good in ["size", "shoe_size", "a1_b2"] {
            assert!(FieldKey::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "Size",
            "1size",
            "_size",
            "size_",
            "shoe__size",
            "shoe-size",
            "",
        ] {
            assert!(FieldKey::parse(bad).is_err(), "{bad}");
        }
        assert!(FieldKey::parse(&"a".repeat(65)).is_err());
        assert!(FieldKey::parse("phone").is_err());
    }

    #[test]
    fn defaults_are_text_ai_enabled_and_hidden_from_the_table() {
        let f = NewCustomField::parse(input("Favourite colour")).unwrap();
        assert_eq!(f.field_type, FieldType::Text);
        assert!(f.ai_enabled);
        assert!(!f.show_in_table);
        assert_eq!(f.key.as_str(), "favourite_colour");
    }

    #[test]
    fn options_are_required_for_select_types_and_refused_for_others() {
        let mut i = input("Size");
        i.field_type = Some("select".into());
        assert_eq!(
            paths(NewCustomField::parse(i.clone()).unwrap_err()),
            ["options"]
        );
        i.options = Some(vec!["S".into(), "M".into(), "S".into()]);
        assert_eq!(
            paths(NewCustomField::parse(i.clone()).unwrap_err()),
            ["options[2]"]
        );
        i.options = Some((0..201).map(|n| n.to_string()).collect());
        assert_eq!(paths(NewCustomField::parse(i).unwrap_err()), ["options"]);
        let mut t = input("Size");
        t.options = Some(vec!["S".into()]);
        assert_eq!(paths(NewCustomField::parse(t).unwrap_err()), ["options"]);
    }

    #[test]
    fn unknown_types_are_refused() {
        let mut i = input("Size");
        i.field_type = Some("color".into());
        assert_eq!(paths(NewCustomField::parse(i).unwrap_err()), ["type"]);
    }
}
