//! Forms that capture leads: a named list of typed fields, and submissions whose values
//! are checked against them.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::contact::phone;
use super::error::Checks;
use super::{text, DomainError};
use crate::clock::Timestamp;
use crate::ids::{ContactId, FormId, SubmissionId};

pub const MAX_NAME: usize = 200;
pub const MAX_FIELDS: usize = 100;
pub const MAX_LABEL: usize = 200;
pub const MAX_OPTIONS: usize = 200;
pub const MAX_OPTION: usize = 200;
pub const MAX_TEXT_VALUE: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FormFieldType {
    Text,
    Email,
    Phone,
    Number,
    Select,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FormField {
    pub key: String,
    pub label: String,
    #[serde(rename = "type")]
    pub kind: FormFieldType,
    pub required: bool,
    /// The choices of a select field; empty for the others.
    pub options: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Form {
    pub id: FormId,
    pub name: String,
    pub fields: Vec<FormField>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A field as sent.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FormFieldInput {
    #[schema(pattern = "^[a-z0-9_]{1,64}$")]
    pub key: String,
    #[schema(min_length = 1, max_length = 200, pattern = "\\S")]
    pub label: String,
    #[serde(rename = "type")]
    pub kind: FormFieldType,
    #[serde(default)]
    pub required: bool,
    /// 1-200 choices for a select field; not allowed on the others.
    #[serde(default)]
    #[schema(max_items = 200)]
    pub options: Option<Vec<String>>,
}

/// Body of POST /forms (both fields required) and PATCH /forms/{id} (either).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FormInput {
    #[serde(default)]
    #[schema(min_length = 1, max_length = 200, pattern = "\\S")]
    pub name: Option<String>,
    /// 1-100 fields with unique keys; a PATCH replaces the whole list.
    #[serde(default)]
    #[schema(min_items = 1, max_items = 100)]
    pub fields: Option<Vec<FormFieldInput>>,
}

/// A form's name and fields, checked; None where a PATCH leaves them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FormChange {
    pub name: Option<String>,
    pub fields: Option<Vec<FormField>>,
}

fn key(raw: &str) -> Result<String, String> {
    let ok = (1..=64).contains(&raw.len())
        && raw
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(raw.to_string())
    } else {
        Err("must be 1-64 of a-z, 0-9 and _".into())
    }
}

fn fields(checks: &mut Checks, input: Vec<FormFieldInput>) -> Vec<FormField> {
    if input.is_empty() || input.len() > MAX_FIELDS {
        checks.fail("fields", format!("must hold 1 to {MAX_FIELDS} fields"));
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (i, f) in input.into_iter().enumerate() {
        let at = |name: &str| format!("fields[{i}].{name}");
        let k = checks.take(at("key"), key(&f.key));
        if let Some(k) = &k {
            if !seen.insert(k.clone()) {
                checks.fail(at("key"), "is used by another field");
            }
        }
        let label = checks.take(at("label"), text::name(&f.label, MAX_LABEL));
        let options = match (f.kind, f.options) {
            (FormFieldType::Select, Some(options)) => {
                if options.is_empty() || options.len() > MAX_OPTIONS {
                    checks.fail(
                        at("options"),
                        format!("must hold 1 to {MAX_OPTIONS} choices"),
                    );
                }
                let mut kept: Vec<String> = Vec::new();
                for (j, o) in options.iter().enumerate() {
                    let path = format!("fields[{i}].options[{j}]");
                    if let Some(o) = checks.take(path.clone(), text::name(o, MAX_OPTION)) {
                        if kept.contains(&o) {
                            checks.fail(path, "is listed twice");
                        }
                        kept.push(o);
                    }
                }
                kept
            }
            (FormFieldType::Select, None) => {
                checks.fail(at("options"), "a select field needs its choices");
                Vec::new()
            }
            (_, Some(_)) => {
                checks.fail(at("options"), "only a select field has choices");
                Vec::new()
            }
            (_, None) => Vec::new(),
        };
        if let (Some(key), Some(label)) = (k, label) {
            out.push(FormField {
                key,
                label,
                kind: f.kind,
                required: f.required,
                options,
            });
        }
    }
    out
}

impl FormChange {
    pub fn parse(input: FormInput, creating: bool) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        if creating && input.name.is_none() {
            checks.fail("name", "is required");
        }
        if creating && input.fields.is_none() {
            checks.fail("fields", "is required");
        }
        if !creating && input.name.is_none() && input.fields.is_none() {
            checks.fail("", "send name or fields");
        }
        let name = input
            .name
            .and_then(|n| checks.take("name", text::name(&n, MAX_NAME)));
        let fields = input.fields.map(|f| fields(&mut checks, f));
        checks.finish()?;
        Ok(Self { name, fields })
    }
}

/// The person a submission is from.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmissionContactInput {
    /// Split at the first space into first_name and last_name.
    #[serde(default)]
    #[schema(max_length = 200)]
    pub name: Option<String>,
    #[serde(default)]
    #[schema(
        min_length = 3,
        max_length = 50,
        pattern = r"^[ +().-]*[0-9][ +().-]*[0-9][ +().-]*[0-9][0-9 +().-]*$"
    )]
    pub phone: Option<String>,
    #[serde(default)]
    pub email: Option<String>,
}

/// Body of POST /forms/{id}/submissions.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmissionInput {
    /// Needs a phone or an email.
    pub contact: SubmissionContactInput,
    /// One value per field key: text, email and phone as strings, number as a JSON
    /// number, select one of the options.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub values: serde_json::Map<String, Value>,
}

/// The submitter, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Submitter {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub phone: Option<String>,
    pub email: Option<String>,
}

impl Submitter {
    pub fn parse(input: SubmissionContactInput) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let phone_v = input
            .phone
            .as_deref()
            .and_then(|p| checks.take("contact.phone", phone(p)));
        let email = input
            .email
            .as_deref()
            .and_then(|e| checks.take("contact.email", text::email(e)));
        let name = input
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .and_then(|n| checks.take("contact.name", text::name(n, MAX_NAME)));
        if input.phone.is_none() && input.email.is_none() {
            checks.fail("contact", "needs a phone or an email");
        }
        let (first_name, last_name) = match name.as_deref().map(|n| n.split_once(' ')) {
            Some(Some((first, last))) => (Some(first.to_string()), Some(last.trim().to_string())),
            Some(None) => (name.clone(), None),
            None => (None, None),
        };
        // The name becomes the contact's first and last names, each held to their limit;
        // the error names the field that was sent.
        for (part, which) in [(&first_name, "first"), (&last_name, "last")] {
            if let Some(Err(e)) = part.as_deref().map(super::contact::person_name) {
                checks.fail("contact.name", format!("its {which} name {e}"));
            }
        }
        checks.finish()?;
        Ok(Self {
            first_name,
            last_name,
            phone: phone_v,
            email,
        })
    }
}

impl Form {
    /// The submitted values checked against the fields: unknown keys, missing required
    /// fields and values of the wrong kind answer 422 at `values.<key>`.
    pub fn check_values(
        &self,
        values: serde_json::Map<String, Value>,
    ) -> Result<BTreeMap<String, SubmittedValue>, DomainError> {
        let mut checks = Checks::new();
        for k in values.keys() {
            if !self.fields.iter().any(|f| &f.key == k) {
                checks.fail(format!("values.{k}"), "is not a field of this form");
            }
        }
        let mut out = BTreeMap::new();
        for f in &self.fields {
            let path = format!("values.{}", f.key);
            let Some(v) = values.get(&f.key).filter(|v| !v.is_null()) else {
                if f.required {
                    checks.fail(path, "is required");
                }
                continue;
            };
            let checked = match (f.kind, v) {
                (FormFieldType::Number, Value::Number(n)) => Ok(SubmittedValue::Number(n.clone())),
                (FormFieldType::Number, _) => Err("must be a number".to_string()),
                (_, Value::String(s)) => match f.kind {
                    FormFieldType::Email => text::email(s).map(SubmittedValue::Text),
                    FormFieldType::Phone => phone(s).map(SubmittedValue::Text),
                    FormFieldType::Select if f.options.contains(s) => {
                        Ok(SubmittedValue::Text(s.clone()))
                    }
                    FormFieldType::Select => {
                        Err(format!("must be one of {}", f.options.join(", ")))
                    }
                    // A required field is not answered by blanks.
                    _ if f.required && s.trim().is_empty() => Err("is required".to_string()),
                    _ => {
                        text::bounded(s, 0, MAX_TEXT_VALUE).map(|_| SubmittedValue::Text(s.clone()))
                    }
                },
                _ => Err("must be a string".to_string()),
            };
            if let Some(v) = checks.take(path, checked) {
                out.insert(f.key.clone(), v);
            }
        }
        checks.finish()?;
        Ok(out)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Submission {
    pub id: SubmissionId,
    pub form_id: FormId,
    pub contact_id: ContactId,
    /// Content in webhooks (form.submitted carries them as `fields`).
    #[schema(value_type = Object)]
    pub values: BTreeMap<String, SubmittedValue>,
    pub created_at: Timestamp,
}

/// A submitted value: a text, or a number exactly as it was sent. In JSON it is the plain
/// string or number; in the store (bincode, which cannot read a free-form JSON value back)
/// it is tagged, the number kept as its JSON text so that it reads back unchanged.
#[derive(Debug, Clone, PartialEq)]
pub enum SubmittedValue {
    Text(String),
    Number(serde_json::Number),
}

/// The stored form of a [`SubmittedValue`].
#[derive(Serialize, Deserialize)]
enum StoredValue {
    Text(String),
    Number(String),
}

impl Serialize for SubmittedValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (s.is_human_readable(), self) {
            (true, SubmittedValue::Text(t)) => s.serialize_str(t),
            (true, SubmittedValue::Number(n)) => n.serialize(s),
            (false, SubmittedValue::Text(t)) => StoredValue::Text(t.clone()).serialize(s),
            (false, SubmittedValue::Number(n)) => StoredValue::Number(n.to_string()).serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SubmittedValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        if d.is_human_readable() {
            return match Value::deserialize(d)? {
                Value::String(t) => Ok(SubmittedValue::Text(t)),
                Value::Number(n) => Ok(SubmittedValue::Number(n)),
                _ => Err(D::Error::custom(
                    "a submitted value is a string or a number",
                )),
            };
        }
        match StoredValue::deserialize(d)? {
            StoredValue::Text(t) => Ok(SubmittedValue::Text(t)),
            StoredValue::Number(n) => n
                .parse()
                .map(SubmittedValue::Number)
                .map_err(|_| D::Error::custom(format!("a stored number reads {n:?}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(v: Value, creating: bool) -> Result<FormChange, DomainError> {
        FormChange::parse(serde_json::from_value(v).unwrap(), creating)
    }

    fn paths(e: DomainError) -> Vec<String> {
        match e {
            DomainError::Validation(e) => e.into_iter().map(|e| e.path).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn keys_are_unique_and_plain_and_only_selects_have_options() {
        let bad = json!({"name": "Intake", "fields": [
            {"key": "Name", "label": "Name", "type": "text"},
            {"key": "size", "label": "Size", "type": "select"},
            {"key": "size", "label": "Again", "type": "text", "options": ["a"]},
            {"key": "pick", "label": "Pick", "type": "select", "options": ["a", "a"]}
        ]});
        assert_eq!(
            paths(parsed(bad, true).unwrap_err()),
            [
                "fields[0].key",
                "fields[1].options",
                "fields[2].key",
                "fields[2].options",
                "fields[3].options[1]"
            ]
        );
        assert_eq!(
            paths(parsed(json!({}), true).unwrap_err()),
            ["name", "fields"]
        );
        assert_eq!(paths(parsed(json!({}), false).unwrap_err()), [""]);
    }

    #[test]
    fn values_follow_the_field_types() {
        let form = Form {
            id: FormId(1),
            name: "f".into(),
            fields: parsed(
                json!({"name": "f", "fields": [
                    {"key": "email", "label": "E", "type": "email", "required": true},
                    {"key": "age", "label": "A", "type": "number"},
                    {"key": "size", "label": "S", "type": "select", "options": ["S", "M"]}
                ]}),
                true,
            )
            .unwrap()
            .fields
            .unwrap(),
            created_at: Timestamp(chrono::Utc::now()),
            updated_at: Timestamp(chrono::Utc::now()),
        };
        let values = |v: Value| v.as_object().unwrap().clone();
        let ok = form
            .check_values(values(
                json!({"email": "A@Example.com", "age": 4, "size": "M"}),
            ))
            .unwrap();
        assert_eq!(ok["email"], SubmittedValue::Text("a@example.com".into()));
        let bad = form
            .check_values(values(json!({"age": "4", "size": "XL", "colour": "red"})))
            .unwrap_err();
        assert_eq!(
            paths(bad),
            ["values.colour", "values.email", "values.age", "values.size"]
        );
    }

    #[test]
    fn a_submission_reads_back_from_the_store_and_shows_plain_values_in_json() {
        let s = Submission {
            id: SubmissionId(3),
            form_id: FormId(1),
            contact_id: ContactId(2),
            values: BTreeMap::from([
                ("name".to_string(), SubmittedValue::Text("Ann".into())),
                ("age".to_string(), SubmittedValue::Number(42.into())),
                (
                    "big".to_string(),
                    serde_json::from_str("12345678901234567890.125")
                        .map(SubmittedValue::Number)
                        .unwrap(),
                ),
                ("neg".to_string(), SubmittedValue::Number((-7).into())),
            ]),
            created_at: Timestamp(
                chrono::DateTime::from_timestamp_millis(1_795_000_000_123).unwrap(),
            ),
        };
        let stored = crate::store::encode(&s).unwrap();
        assert_eq!(crate::store::decode::<Submission>(&stored).unwrap(), s);
        let shown = serde_json::to_value(&s).unwrap();
        assert_eq!(
            shown["values"].to_string(),
            r#"{"age":42,"big":12345678901234567890.125,"name":"Ann","neg":-7}"#
        );
        let back: Submission = serde_json::from_value(shown).unwrap();
        assert_eq!(back.values, s.values);
    }

    #[test]
    fn a_submitter_needs_a_phone_or_an_email_and_the_name_splits_once() {
        assert!(Submitter::parse(SubmissionContactInput::default()).is_err());
        let s = Submitter::parse(SubmissionContactInput {
            name: Some("Mary Ann Lee".into()),
            phone: None,
            email: Some("mary@example.com".into()),
        })
        .unwrap();
        assert_eq!(s.first_name.as_deref(), Some("Mary"));
        assert_eq!(s.last_name.as_deref(), Some("Ann Lee"));
    }
}
