//! Contacts: the people a workspace talks to. Parsing turns raw input into checked values
//! (names trimmed, emails lowercased, a leading `@` dropped from usernames, country codes
//! from ISO 3166-1); rules that need the workspace's state (custom fields, stages, tags)
//! are applied by the workspace actor.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::error::Checks;
use super::money::exact_double;
use super::tag::TagName;
use super::{text, DomainError, FieldError, Patch};
use crate::clock::Timestamp;
use crate::ids::{ContactId, FunnelId, NoteId, StageId, TagId};

pub const MAX_TAGS_PER_REQUEST: usize = 100;
pub const MAX_NOTE: usize = 10_000;
pub const MAX_DNC_REASON: usize = 200;
pub const MAX_QUERY: usize = 200;

/// Where a contact came from or can be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    ChanA,
    ChanB,
    ChanC,
    ChanD,
    ChanE,
    Email,
    Widget,
    Api,
    Voice,
    Sms,
}

impl Channel {
    /// Every channel, for lookups that go through each (a contact's conversations).
    pub const ALL: [Channel; 10] = [
        Channel::ChanA,
        Channel::ChanB,
        Channel::ChanC,
        Channel::ChanD,
        Channel::ChanE,
        Channel::Email,
        Channel::Widget,
        Channel::Api,
        Channel::Voice,
        Channel::Sms,
    ];

    pub fn parse(raw: &str) -> Result<Self, String> {
        serde_json::from_value(Value::String(raw.to_string())).map_err(|_| {
            "must be one of chan_a, chan_b, chan_c, chan_d, chan_e, email, widget, api, voice, sms"
                .to_string()
        })
    }
}

/// A stored custom field value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FieldValue {
    Text(String),
    Number(f64),
    Bool(bool),
    /// `YYYY-MM-DD`.
    Date(String),
    /// multi_select: the chosen options.
    Choices(Vec<String>),
}

impl FieldValue {
    pub fn to_json(&self) -> Value {
        match self {
            FieldValue::Text(s) | FieldValue::Date(s) => Value::String(s.clone()),
            // Whole numbers go back as integers: a client that sent 42 gets 42, not 42.0.
            FieldValue::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => Value::from(*n as i64),
            FieldValue::Number(n) => serde_json::Number::from_f64(*n)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            FieldValue::Bool(b) => Value::Bool(*b),
            FieldValue::Choices(c) => Value::from(c.clone()),
        }
    }
}

/// A contact as stored. Tags are kept as tag ids, so a rename reaches every contact at
/// once; the workspace renders names when it answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contact {
    pub id: ContactId,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub phone: Option<String>,
    pub chan_d_phone: Option<String>,
    pub email: Option<String>,
    pub chan_a_username: Option<String>,
    pub chan_c_username: Option<String>,
    pub chan_e_username: Option<String>,
    pub country_code: Option<String>,
    pub channel: Channel,
    pub source: String,
    pub tag_ids: Vec<TagId>,
    pub stage_id: Option<StageId>,
    pub assigned_to_user_id: Option<String>,
    pub language: Option<String>,
    pub custom_fields: BTreeMap<String, FieldValue>,
    pub do_not_contact: bool,
    pub do_not_contact_reason: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Contact {
    /// A contact with no details yet: what creating one starts from.
    pub fn blank(id: ContactId, channel: Channel, source: String, now: Timestamp) -> Contact {
        Contact {
            id,
            first_name: None,
            last_name: None,
            phone: None,
            chan_d_phone: None,
            email: None,
            chan_a_username: None,
            chan_c_username: None,
            chan_e_username: None,
            country_code: None,
            channel,
            source,
            tag_ids: Vec::new(),
            stage_id: None,
            assigned_to_user_id: None,
            language: None,
            custom_fields: BTreeMap::new(),
            do_not_contact: false,
            do_not_contact_reason: None,
            created_at: now,
            updated_at: now,
        }
    }

    /// Every contact detail of the contact as text (its name and each part, phones, email,
    /// usernames), to withhold where an event's kept fields quote them.
    pub fn details(&self) -> Vec<String> {
        let parts = [
            &self.first_name,
            &self.last_name,
            &self.phone,
            &self.chan_d_phone,
            &self.email,
            &self.chan_a_username,
            &self.chan_c_username,
            &self.chan_e_username,
        ];
        self.name()
            .into_iter()
            .chain(parts.into_iter().flatten().cloned())
            .collect()
    }

    /// First and last name joined; null when both are empty.
    pub fn name(&self) -> Option<String> {
        let parts: Vec<&str> = [&self.first_name, &self.last_name]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    }

    /// Sets the scalar fields a patch names; returns whether anything was named.
    pub fn apply(&mut self, f: ContactFields) {
        let ContactFields {
            first_name,
            last_name,
            email,
            phone,
            chan_d_phone,
            chan_a_username,
            chan_c_username,
            chan_e_username,
            country_code,
            custom_fields: _,
        } = f;
        self.first_name = first_name.apply_to(self.first_name.take());
        self.last_name = last_name.apply_to(self.last_name.take());
        self.email = email.apply_to(self.email.take());
        self.phone = phone.apply_to(self.phone.take());
        self.chan_d_phone = chan_d_phone.apply_to(self.chan_d_phone.take());
        self.chan_a_username = chan_a_username.apply_to(self.chan_a_username.take());
        self.chan_c_username = chan_c_username.apply_to(self.chan_c_username.take());
        self.chan_e_username = chan_e_username.apply_to(self.chan_e_username.take());
        self.country_code = country_code.apply_to(self.country_code.take());
    }

    /// The channel identities this contact can be reached on.
    pub fn channels(&self) -> Vec<ChannelIdentity> {
        let mut out = Vec::new();
        let mut add = |channel, value: &Option<String>| {
            if let Some(v) = value {
                out.push(ChannelIdentity {
                    channel,
                    identifier: v.clone(),
                });
            }
        };
        add(Channel::Sms, &self.phone);
        add(Channel::Voice, &self.phone);
        add(Channel::ChanD, &self.chan_d_phone);
        add(Channel::Email, &self.email);
        add(Channel::ChanA, &self.chan_a_username);
        add(Channel::ChanC, &self.chan_c_username);
        add(Channel::ChanE, &self.chan_e_username);
        out
    }
}

/// One way to reach a contact: GET /contacts/{id}/channels.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ChannelIdentity {
    pub channel: Channel,
    /// The phone number, email address or username on that channel.
    pub identifier: String,
}

/// The stage a contact is in, as shown.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct StageRef {
    pub funnel_id: FunnelId,
    pub stage_id: StageId,
    pub stage_name: String,
}

/// A contact as answered: tags by name, the stage resolved, custom fields as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ContactView {
    pub id: ContactId,
    pub name: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub phone: Option<String>,
    pub chan_d_phone: Option<String>,
    pub email: Option<String>,
    pub chan_a_username: Option<String>,
    pub chan_c_username: Option<String>,
    pub chan_e_username: Option<String>,
    pub country_code: Option<String>,
    pub channel: Channel,
    pub source: String,
    pub tags: Vec<String>,
    pub stage: Option<StageRef>,
    pub assigned_to_user_id: Option<String>,
    pub language: Option<String>,
    #[schema(value_type = Object)]
    pub custom_fields: Map<String, Value>,
    pub do_not_contact: bool,
    pub do_not_contact_reason: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// Body of POST /contacts and POST /contacts/upsert.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactInput {
    #[serde(default)]
    pub first_name: Option<String>,
    #[serde(default)]
    pub last_name: Option<String>,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub phone: Option<String>,
    #[serde(default)]
    pub chan_d_phone: Option<String>,
    #[serde(default)]
    pub chan_a_username: Option<String>,
    #[serde(default)]
    pub chan_c_username: Option<String>,
    #[serde(default)]
    pub chan_e_username: Option<String>,
    #[serde(default)]
    pub country_code: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub custom_fields: Option<Map<String, Value>>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    #[serde(default)]
    pub stage_id: Option<StageId>,
    #[serde(default)]
    pub assigned_to_user_id: Option<String>,
}

/// Body of PATCH /contacts/{id}: omitted keeps, null clears.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactPatchInput {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub first_name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub last_name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub email: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub phone: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub chan_d_phone: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub chan_a_username: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub chan_c_username: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub chan_e_username: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub country_code: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub custom_fields: Option<Map<String, Value>>,
    /// Refused: set on create or upsert only.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub source: Patch<Value>,
    /// Refused: use POST/DELETE /contacts/{id}/tags.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub tags: Patch<Value>,
    /// Refused: use PUT /contacts/{id}/stage.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub stage_id: Patch<Value>,
    /// Refused: use PUT /contacts/{id}/assignee.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub assigned_to_user_id: Patch<Value>,
}

/// The checked scalar fields of a create, upsert or patch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContactFields {
    pub first_name: Patch<String>,
    pub last_name: Patch<String>,
    pub email: Patch<String>,
    pub phone: Patch<String>,
    pub chan_d_phone: Patch<String>,
    pub chan_a_username: Patch<String>,
    pub chan_c_username: Patch<String>,
    pub chan_e_username: Patch<String>,
    pub country_code: Patch<String>,
    /// Checked against the workspace's fields by the actor.
    pub custom_fields: Option<Map<String, Value>>,
}

impl ContactFields {
    pub fn has_identifier(&self) -> bool {
        [
            &self.phone,
            &self.chan_d_phone,
            &self.email,
            &self.chan_a_username,
            &self.chan_c_username,
            &self.chan_e_username,
        ]
        .iter()
        .any(|f| matches!(f, Patch::Set(_)))
    }

    /// Whether the fields say who the contact is: a name or a way to reach them.
    pub fn names_someone(&self) -> bool {
        self.has_identifier()
            || [&self.first_name, &self.last_name]
                .iter()
                .any(|f| matches!(f, Patch::Set(_)))
    }

    pub fn is_empty(&self) -> bool {
        self.custom_fields.is_none()
            && [
                &self.first_name,
                &self.last_name,
                &self.email,
                &self.phone,
                &self.chan_d_phone,
                &self.chan_a_username,
                &self.chan_c_username,
                &self.chan_e_username,
                &self.country_code,
            ]
            .iter()
            .all(|f| f.is_keep())
    }
}

/// A checked create or upsert.
#[derive(Debug, Clone, PartialEq)]
pub struct NewContact {
    pub fields: ContactFields,
    pub source: String,
    pub tags: Vec<TagName>,
    pub stage_id: Option<StageId>,
    pub assigned_to_user_id: Option<String>,
}

fn set(raw: Option<String>) -> Patch<String> {
    raw.map(Patch::Set).unwrap_or(Patch::Keep)
}

/// Checks every field of a patch-shaped input, recording errors by path.
fn check_fields(checks: &mut Checks, raw: RawFields) -> ContactFields {
    let mut field =
        |path: &str, value: Patch<String>, parse: fn(&str) -> Result<String, String>| match value
            .try_map(|v| parse(&v))
        {
            Ok(p) => p,
            Err(message) => {
                checks.fail(path, message);
                Patch::Keep
            }
        };
    ContactFields {
        first_name: field("first_name", raw.first_name, person_name),
        last_name: field("last_name", raw.last_name, person_name),
        email: field("email", raw.email, text::email),
        phone: field("phone", raw.phone, phone),
        chan_d_phone: field("chan_d_phone", raw.chan_d_phone, phone),
        chan_a_username: field("chan_a_username", raw.chan_a_username, username),
        chan_c_username: field("chan_c_username", raw.chan_c_username, username),
        chan_e_username: field("chan_e_username", raw.chan_e_username, username),
        country_code: field("country_code", raw.country_code, country_code),
        custom_fields: raw.custom_fields,
    }
}

struct RawFields {
    first_name: Patch<String>,
    last_name: Patch<String>,
    email: Patch<String>,
    phone: Patch<String>,
    chan_d_phone: Patch<String>,
    chan_a_username: Patch<String>,
    chan_c_username: Patch<String>,
    chan_e_username: Patch<String>,
    country_code: Patch<String>,
    custom_fields: Option<Map<String, Value>>,
}

impl NewContact {
    pub fn parse(input: ContactInput) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let fields = check_fields(
            &mut checks,
            RawFields {
                first_name: set(input.first_name),
                last_name: set(input.last_name),
                email: set(input.email),
                phone: set(input.phone),
                chan_d_phone: set(input.chan_d_phone),
                chan_a_username: set(input.chan_a_username),
                chan_c_username: set(input.chan_c_username),
                chan_e_username: set(input.chan_e_username),
                country_code: set(input.country_code),
                custom_fields: input.custom_fields,
            },
        );
        let source = match input.source {
            None => "api".to_string(),
            Some(s) => checks
                .take("source", text::bounded(&s, 1, 50).map(|_| s))
                .unwrap_or_default(),
        };
        let raw_tags = input.tags.unwrap_or_default();
        let tags = tag_names(&mut checks, "tags", &raw_tags, 0);
        let assigned_to_user_id = input.assigned_to_user_id;
        checks.finish()?;
        Ok(Self {
            fields,
            source,
            tags,
            stage_id: input.stage_id,
            assigned_to_user_id,
        })
    }
}

impl NewContact {
    /// A create: a contact with neither a name nor a way to reach them is refused (an upsert
    /// already needs an identifier to match on).
    pub fn parse_create(input: ContactInput) -> Result<Self, DomainError> {
        let new = Self::parse(input)?;
        if !new.fields.names_someone() {
            return Err(DomainError::invalid(
                "",
                "send at least one of first_name, last_name, phone, email, chan_d_phone, chan_a_username, chan_c_username, chan_e_username",
            ));
        }
        Ok(new)
    }
}

/// Parses a PATCH body; the create-only fields are refused with a pointer to their route.
pub fn parse_patch(input: ContactPatchInput) -> Result<ContactFields, DomainError> {
    let mut checks = Checks::new();
    for (path, value, hint) in [
        ("source", &input.source, "is set on create or upsert only"),
        (
            "tags",
            &input.tags,
            "is set on create or upsert only; use POST or DELETE /contacts/{id}/tags",
        ),
        (
            "stage_id",
            &input.stage_id,
            "is set on create or upsert only; use PUT /contacts/{id}/stage",
        ),
        (
            "assigned_to_user_id",
            &input.assigned_to_user_id,
            "is set on create or upsert only; use PUT /contacts/{id}/assignee",
        ),
    ] {
        if !value.is_keep() {
            checks.fail(path, hint);
        }
    }
    let fields = check_fields(
        &mut checks,
        RawFields {
            first_name: input.first_name,
            last_name: input.last_name,
            email: input.email,
            phone: input.phone,
            chan_d_phone: input.chan_d_phone,
            chan_a_username: input.chan_a_username,
            chan_c_username: input.chan_c_username,
            chan_e_username: input.chan_e_username,
            country_code: input.country_code,
            custom_fields: input.custom_fields,
        },
    );
    checks.finish()?;
    Ok(fields)
}

/// `min` to 100 tag names of 1-80 characters.
pub fn tag_names(checks: &mut Checks, path: &str, raw: &[String], min: usize) -> Vec<TagName> {
    if raw.len() < min || raw.len() > MAX_TAGS_PER_REQUEST {
        checks.fail(
            path,
            format!("must hold {min} to {MAX_TAGS_PER_REQUEST} tag names"),
        );
        return Vec::new();
    }
    raw.iter()
        .enumerate()
        .filter_map(|(i, t)| checks.take(format!("{path}[{i}]"), TagName::parse(t)))
        .collect()
}

pub fn person_name(raw: &str) -> Result<String, String> {
    text::name(raw, 100)
}

/// 3-50 characters of digits and the usual separators (`+ - ( ) .` and spaces), with at
/// least three digits. E.164 (`+15550100`) is recommended, not required.
pub fn phone(raw: &str) -> Result<String, String> {
    let v = raw.trim();
    text::bounded(v, 3, 50)?;
    let allowed = v
        .chars()
        .all(|c| c.is_ascii_digit() || " +-().".contains(c));
    let digits = v.chars().filter(char::is_ascii_digit).count();
    if !allowed || digits < 3 {
        return Err("must be a phone number (digits, optionally with + - ( ) . and spaces)".into());
    }
    Ok(v.to_string())
}

/// The form phone numbers are matched in: digits only.
pub fn phone_key(phone: &str) -> String {
    phone.chars().filter(char::is_ascii_digit).collect()
}

/// Up to 100 characters, a leading `@` removed.
pub fn username(raw: &str) -> Result<String, String> {
    let v = raw.trim();
    let v = v.strip_prefix('@').unwrap_or(v).trim();
    text::bounded(v, 1, 100)?;
    if v.chars().any(char::is_whitespace) {
        return Err("must not contain spaces".into());
    }
    Ok(text::nfc(v))
}

/// The form usernames are matched in: without the `@`, lower case, NFC (so that `é`
/// typed as one character or as `e` and an accent is one username).
pub fn handle_key(handle: &str) -> String {
    let v = handle.trim();
    text::nfc(&v.strip_prefix('@').unwrap_or(v).to_lowercase())
}

/// A two-letter ISO 3166-1 code, accepted in any case, stored upper case.
pub fn country_code(raw: &str) -> Result<String, String> {
    let up = raw.trim().to_ascii_uppercase();
    if up.len() == 2 && ISO_3166_ALPHA2.split(' ').any(|c| c == up) {
        Ok(up)
    } else {
        Err("must be a two-letter ISO 3166-1 country code, like US or DE".into())
    }
}

/// Every known ISO 3166-1 alpha-2 code (upper case).
pub fn known_countries() -> impl Iterator<Item = &'static str> {
    ISO_3166_ALPHA2.split(' ')
}

const ISO_3166_ALPHA2: &str = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW";

/// Checks custom field values against the workspace's definitions. `null` removes a value.
pub fn custom_values(
    input: &Map<String, Value>,
    definition: impl Fn(&str) -> Option<crate::domain::custom_field::CustomField>,
) -> Result<Vec<(String, Option<FieldValue>)>, Vec<FieldError>> {
    use crate::domain::custom_field::FieldType;
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (key, value) in input {
        let path = format!("custom_fields.{key}");
        let Some(def) = definition(key) else {
            errors.push(FieldError::new(
                path,
                "is not a custom field of this workspace",
            ));
            continue;
        };
        if def.archived {
            errors.push(FieldError::new(path, "is archived and takes no new values"));
            continue;
        }
        if value.is_null() {
            out.push((key.clone(), None));
            continue;
        }
        let options = def.options.clone().unwrap_or_default();
        let parsed: Result<FieldValue, String> = match def.field_type {
            FieldType::Text => string(value, 1_000).map(FieldValue::Text),
            FieldType::Textarea => string(value, 10_000).map(FieldValue::Text),
            FieldType::Number => match value {
                Value::Number(n) => exact_double(n).map(FieldValue::Number).ok_or_else(|| {
                    "must be a number with at most 15-17 significant digits \
                     (it would not be kept as written)"
                        .to_string()
                }),
                _ => Err("must be a number".to_string()),
            },
            FieldType::Boolean => value
                .as_bool()
                .map(FieldValue::Bool)
                .ok_or_else(|| "must be true or false".to_string()),
            FieldType::Date => value
                .as_str()
                .filter(|s| {
                    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() && s.len() == 10
                })
                .map(|s| FieldValue::Date(s.to_string()))
                .ok_or_else(|| "must be a date like 2026-01-31".to_string()),
            FieldType::Url => string(value, 2_048).and_then(|s| match url::Url::parse(&s) {
                Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {
                    Ok(FieldValue::Text(s))
                }
                _ => Err("must be an http or https URL".to_string()),
            }),
            FieldType::Select => match value.as_str().map(text::nfc) {
                Some(s) if options.contains(&s) => Ok(FieldValue::Text(s)),
                _ => Err(format!("must be one of: {}", options.join(", "))),
            },
            FieldType::MultiSelect => match value.as_array() {
                Some(items) => {
                    let mut chosen: Vec<String> = Vec::new();
                    let mut bad = None;
                    for item in items {
                        match item.as_str().map(text::nfc) {
                            Some(s) if options.contains(&s) => {
                                if !chosen.contains(&s) {
                                    chosen.push(s);
                                }
                            }
                            _ => bad = Some(item.to_string()),
                        }
                    }
                    match bad {
                        None => Ok(FieldValue::Choices(chosen)),
                        Some(b) => Err(format!(
                            "{b} is not an option; options are: {}",
                            options.join(", ")
                        )),
                    }
                }
                None => Err("must be an array of options".to_string()),
            },
        };
        match parsed {
            Ok(v) => out.push((key.clone(), Some(v))),
            Err(message) => errors.push(FieldError::new(path, message)),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn string(value: &Value, max: usize) -> Result<String, String> {
    let s = value
        .as_str()
        .ok_or_else(|| "must be a string".to_string())?;
    text::bounded(s, 0, max)?;
    Ok(s.to_string())
}

/// Body of POST /contacts/{id}/notes.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewNoteInput {
    #[schema(min_length = 1, max_length = 10_000, pattern = "\\S")]
    pub body: String,
}

pub fn note_body(input: NewNoteInput) -> Result<String, DomainError> {
    text::bounded(&input.body, 1, MAX_NOTE).map_err(|m| DomainError::invalid("body", m))?;
    if input.body.trim().is_empty() {
        return Err(DomainError::invalid("body", "must not be blank"));
    }
    // Stored in NFC like names, so that search finds its words however they were typed.
    Ok(text::nfc(&input.body))
}

/// An internal note on a contact; customers never see notes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Note {
    pub id: NoteId,
    pub contact_id: ContactId,
    pub body: String,
    pub created_at: Timestamp,
}

/// Body of PUT /contacts/{id}/dnc.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DncInput {
    pub do_not_contact: bool,
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Dnc {
    pub do_not_contact: bool,
    pub reason: Option<String>,
}

impl Dnc {
    pub fn parse(input: DncInput) -> Result<Self, DomainError> {
        let reason = text::optional(input.reason, MAX_DNC_REASON)
            .map_err(|m| DomainError::invalid("reason", m))?;
        Ok(Self {
            do_not_contact: input.do_not_contact,
            reason,
        })
    }
}

/// Body of POST and DELETE /contacts/{id}/tags.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactTagsInput {
    /// Tag names, 1 to 80 characters each; new names join the workspace's list.
    #[schema(min_items = 1, max_items = 100)]
    pub tags: Vec<String>,
}

pub fn parse_tags(input: ContactTagsInput) -> Result<Vec<TagName>, DomainError> {
    let mut checks = Checks::new();
    let tags = tag_names(&mut checks, "tags", &input.tags, 1);
    checks.finish()?;
    Ok(tags)
}

/// Body of PUT /contacts/{id}/stage.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StageInput {
    pub stage_id: StageId,
    #[serde(default)]
    pub funnel_id: Option<FunnelId>,
}

/// Body of PUT /contacts/{id}/assignee and PUT /conversations/{id}/assignee.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AssigneeInput {
    /// A member of the workspace; null or omitted unassigns.
    #[serde(default)]
    pub user_id: Option<String>,
}

/// Body of POST /contacts/merge.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeInput {
    pub primary_contact_id: u64,
    pub secondary_contact_id: u64,
}

/// The filters of GET /contacts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContactFilter {
    /// Search words (already tokenized); each must match.
    pub words: Vec<String>,
    pub phone: Option<String>,
    pub email: Option<String>,
    pub tag: Option<String>,
    pub stage_id: Option<StageId>,
    pub assigned_to_user_id: Option<String>,
    pub channel: Option<Channel>,
    pub updated_since: Option<DateTime<Utc>>,
}

/// What GET /contacts/lookup searches by.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LookupQuery {
    pub phone: Option<String>,
    pub email: Option<String>,
    pub handle: Option<String>,
    pub channel: Option<Channel>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_channel_is_in_all() {
        let names = "chan_a, chan_b, chan_c, chan_d, chan_e, email, widget, api, voice, sms";
        for name in names.split(", ") {
            let c = Channel::parse(name).unwrap();
            assert!(Channel::ALL.contains(&c), "{name}");
        }
        assert_eq!(Channel::ALL.len(), names.split(", ").count());
    }

    #[test]
    fn whole_numbers_render_as_integers() {
        assert_eq!(FieldValue::Number(42.0).to_json().to_string(), "42");
        assert_eq!(FieldValue::Number(-3.0).to_json().to_string(), "-3");
        assert_eq!(FieldValue::Number(4.25).to_json().to_string(), "4.25");
    }

    #[test]
    fn usernames_lose_a_leading_at() {
        assert_eq!(username("@ann_lee").unwrap(), "ann_lee");
        assert_eq!(username("ann").unwrap(), "ann");
        assert!(username("@").is_err());
        assert!(username(&"a".repeat(101)).is_err());
    }

    #[test]
    fn country_codes_are_iso_alpha_2() {
        assert_eq!(country_code("de").unwrap(), "DE");
        assert!(country_code("XX").is_err());
        assert!(country_code("DEU").is_err());
    }

    #[test]
    fn phones_are_3_to_50_characters_of_digits_and_separators() {
        assert!(phone("+1 (555) 010-0100").is_ok());
        assert!(phone("12").is_err());
        assert!(phone("call me").is_err());
        assert!(phone(&"1".repeat(51)).is_err());
        assert_eq!(phone_key("+1 (555) 010"), "1555010");
    }

    #[test]
    fn patch_refuses_create_only_fields_by_name() {
        let input: ContactPatchInput =
            serde_json::from_value(serde_json::json!({"tags": ["a"], "source": null})).unwrap();
        match parse_patch(input).unwrap_err() {
            DomainError::Validation(e) => {
                let paths: Vec<_> = e.iter().map(|e| e.path.as_str()).collect();
                assert_eq!(paths, ["source", "tags"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_created_contact_needs_a_name_or_a_way_to_reach_them() {
        let create = |v: Value| NewContact::parse_create(serde_json::from_value(v).unwrap());
        for empty in [
            serde_json::json!({}),
            serde_json::json!({"tags": ["vip"], "source": "import", "country_code": "DE"}),
        ] {
            assert_eq!(
                create(empty).unwrap_err(),
                DomainError::invalid(
                    "",
                    "send at least one of first_name, last_name, phone, email, chan_d_phone, chan_a_username, chan_c_username, chan_e_username"
                )
            );
        }
        for enough in [
            serde_json::json!({"first_name": "Ann"}),
            serde_json::json!({"last_name": "Lee"}),
            serde_json::json!({"chan_d_phone": "+15550100"}),
            serde_json::json!({"chan_e_username": "ann"}),
        ] {
            assert!(create(enough.clone()).is_ok(), "{enough}");
        }
    }

    #[test]
    fn person_names_are_nfc_and_visible() {
        assert_eq!(person_name("Rene\u{301}e").unwrap(), "Ren\u{e9}e");
        assert!(person_name("\u{200B}\u{FEFF}").is_err());
        assert!(person_name("Ann\u{0}").is_err());
    }

    #[test]
    fn names_are_first_and_last_joined() {
        let mut c = sample();
        assert_eq!(c.name(), None);
        c.first_name = Some("Ann".into());
        assert_eq!(c.name().as_deref(), Some("Ann"));
        c.last_name = Some("Lee".into());
        assert_eq!(c.name().as_deref(), Some("Ann Lee"));
    }

    pub(crate) fn sample() -> Contact {
        Contact::blank(
            ContactId(1),
            Channel::Api,
            "api".into(),
            Timestamp(Utc::now()),
        )
    }
}
