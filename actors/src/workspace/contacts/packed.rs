//! A contact as the workspace holds it in memory: every text field in one allocation,
//! tags in a boxed slice, custom fields only when there are some. A [`Contact`] costs
//! about 420 bytes in place plus one allocation per text field; this costs about 100
//! bytes and one allocation. The stored form stays [`Contact`]: records are packed as
//! they are loaded or written, and unpacked to be changed or answered.

use std::collections::BTreeMap;

use crate::clock::Timestamp;
use crate::domain::contact::{Channel, Contact, FieldValue};
use crate::ids::{ContactId, StageId, TagId};

/// The text fields, most often present first: the header stops after the last present one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Source,
    FirstName,
    LastName,
    Email,
    Phone,
    CountryCode,
    ChanAUsername,
    ChanCUsername,
    ChanEUsername,
    ChanDPhone,
    AssignedToUserId,
    Language,
    DoNotContactReason,
}

/// Header byte of an absent field.
const ABSENT: u8 = 0;
/// Header byte of a field too long for one byte; its length follows in [`LONG_GROUPS`]
/// 7-bit groups, low first.
const LONG: u8 = 0x7f;
const LONG_GROUPS: usize = 10;

#[derive(Debug, Clone, PartialEq)]
pub struct PackedContact {
    pub id: ContactId,
    /// A header, then the present fields' text back to back. The header is one byte with
    /// the number of entries, then one entry per field up to the last present one:
    /// [`ABSENT`], the length plus one (up to 125 bytes), or [`LONG`] and the length. Every
    /// header byte is below 0x80, so the whole is ASCII followed by UTF-8: a `str`.
    text: Box<str>,
    pub tag_ids: Box<[TagId]>,
    pub stage_id: Option<StageId>,
    /// Boxed: 8 bytes in place rather than 24, for a map most contacts do not have.
    #[allow(clippy::box_collection)]
    custom_fields: Option<Box<BTreeMap<String, FieldValue>>>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub channel: Channel,
    pub do_not_contact: bool,
}

impl PackedContact {
    pub fn pack(c: Contact) -> Self {
        let fields = [
            Some(c.source.as_str()),
            c.first_name.as_deref(),
            c.last_name.as_deref(),
            c.email.as_deref(),
            c.phone.as_deref(),
            c.country_code.as_deref(),
            c.chan_a_username.as_deref(),
            c.chan_c_username.as_deref(),
            c.chan_e_username.as_deref(),
            c.chan_d_phone.as_deref(),
            c.assigned_to_user_id.as_deref(),
            c.language.as_deref(),
            c.do_not_contact_reason.as_deref(),
        ];
        let entries = fields
            .iter()
            .rposition(Option::is_some)
            .map_or(0, |i| i + 1);
        let body: usize = fields.iter().flatten().map(|f| f.len()).sum();
        let mut text = String::with_capacity(1 + entries + body);
        text.push(char::from(entries as u8));
        for field in &fields[..entries] {
            match field {
                None => text.push(char::from(ABSENT)),
                Some(f) if f.len() < usize::from(LONG - 1) => {
                    text.push(char::from(f.len() as u8 + 1))
                }
                Some(f) => {
                    text.push(char::from(LONG));
                    let mut len = f.len() as u128;
                    for _ in 0..LONG_GROUPS {
                        text.push(char::from((len & 0x7f) as u8));
                        len >>= 7;
                    }
                }
            }
        }
        for f in fields.iter().flatten() {
            text.push_str(f);
        }
        Self {
            id: c.id,
            text: text.into_boxed_str(),
            tag_ids: c.tag_ids.into_boxed_slice(),
            stage_id: c.stage_id,
            custom_fields: (!c.custom_fields.is_empty()).then(|| Box::new(c.custom_fields)),
            created_at: c.created_at,
            updated_at: c.updated_at,
            channel: c.channel,
            do_not_contact: c.do_not_contact,
        }
    }

    pub fn unpack(&self) -> Contact {
        let owned = |f| self.field(f).map(str::to_string);
        Contact {
            id: self.id,
            first_name: owned(Field::FirstName),
            last_name: owned(Field::LastName),
            phone: owned(Field::Phone),
            chan_d_phone: owned(Field::ChanDPhone),
            email: owned(Field::Email),
            chan_a_username: owned(Field::ChanAUsername),
            chan_c_username: owned(Field::ChanCUsername),
            chan_e_username: owned(Field::ChanEUsername),
            country_code: owned(Field::CountryCode),
            channel: self.channel,
            source: owned(Field::Source).unwrap_or_default(),
            tag_ids: self.tag_ids.to_vec(),
            stage_id: self.stage_id,
            assigned_to_user_id: owned(Field::AssignedToUserId),
            language: owned(Field::Language),
            custom_fields: self.custom_fields.as_deref().cloned().unwrap_or_default(),
            do_not_contact: self.do_not_contact,
            do_not_contact_reason: owned(Field::DoNotContactReason),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }

    /// The text of one field, read through the header.
    fn field(&self, wanted: Field) -> Option<&str> {
        let header = self.text.as_bytes();
        let entries = usize::from(*header.first()?);
        let mut at = 1;
        let mut before = 0;
        let mut found = None;
        for index in 0..entries {
            let len = match *header.get(at)? {
                ABSENT => {
                    at += 1;
                    None
                }
                LONG => {
                    let groups = header.get(at + 1..at + 1 + LONG_GROUPS)?;
                    at += 1 + LONG_GROUPS;
                    let len = groups
                        .iter()
                        .rev()
                        .fold(0u128, |len, g| len << 7 | u128::from(*g));
                    Some(usize::try_from(len).ok()?)
                }
                short => {
                    at += 1;
                    Some(usize::from(short - 1))
                }
            };
            if index == wanted as usize {
                found = len.map(|len| (before, len));
            }
            before += len.unwrap_or(0);
        }
        let (start, len) = found?;
        self.text.get(at + start..at + start + len)
    }

    pub fn first_name(&self) -> Option<&str> {
        self.field(Field::FirstName)
    }

    pub fn last_name(&self) -> Option<&str> {
        self.field(Field::LastName)
    }

    pub fn email(&self) -> Option<&str> {
        self.field(Field::Email)
    }

    pub fn phone(&self) -> Option<&str> {
        self.field(Field::Phone)
    }

    pub fn chan_d_phone(&self) -> Option<&str> {
        self.field(Field::ChanDPhone)
    }

    /// The username on `channel` (chan_a, chan_c and chan_e have them).
    pub fn username(&self, channel: Channel) -> Option<&str> {
        match channel {
            Channel::ChanA => self.field(Field::ChanAUsername),
            Channel::ChanC => self.field(Field::ChanCUsername),
            Channel::ChanE => self.field(Field::ChanEUsername),
            _ => None,
        }
    }

    pub fn assigned_to_user_id(&self) -> Option<&str> {
        self.field(Field::AssignedToUserId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Contact {
        let now = Timestamp(chrono::Utc::now());
        Contact::blank(ContactId(1), Channel::Api, "api".into(), now)
    }

    fn full() -> Contact {
        let mut c = sample();
        c.id = ContactId(48_213);
        c.first_name = Some("Ann".into());
        c.last_name = Some("Lee-Ødegård".into());
        c.phone = Some("+1 555 010 0199".into());
        c.chan_d_phone = Some("+15550100200".into());
        c.email = Some("ann.lee@example.com".into());
        c.chan_a_username = Some("ann_lee".into());
        c.chan_c_username = Some("annlee88".into());
        c.chan_e_username = Some("ann.lee".into());
        c.country_code = Some("US".into());
        c.channel = Channel::ChanA;
        c.source = "widget".into();
        c.tag_ids = vec![TagId(17), TagId(42)];
        c.stage_id = Some(StageId(31));
        c.assigned_to_user_id = Some("usr_7hq2m4".into());
        c.language = Some("en".into());
        c.custom_fields
            .insert("plan".into(), FieldValue::Text("gold".into()));
        c.do_not_contact = true;
        c.do_not_contact_reason = Some("asked not to be contacted by phone".into());
        c
    }

    #[test]
    fn packing_keeps_every_field() {
        let mut sparse = sample();
        sparse.email = Some("a@x.io".into());
        let mut empty_texts = full();
        empty_texts.source = String::new();
        empty_texts.assigned_to_user_id = Some(String::new());
        let mut long = full();
        long.do_not_contact_reason = Some("é".repeat(200));
        long.first_name = Some("n".repeat(125));
        long.last_name = Some("n".repeat(126));
        long.language = Some("x".repeat(70_000));
        for c in [sample(), sparse, full(), empty_texts, long] {
            let packed = PackedContact::pack(c.clone());
            assert_eq!(packed.unpack(), c);
        }
    }

    #[test]
    fn the_header_stops_after_the_last_present_field() {
        let mut c = sample();
        c.first_name = Some("Ann".into());
        let packed = PackedContact::pack(c);
        // Count, source and first name entries, then "api" and "Ann".
        assert_eq!(packed.text.len(), 3 + 3 + 3);
        assert_eq!(packed.first_name(), Some("Ann"));
        assert_eq!(packed.email(), None);
    }

    #[test]
    fn a_packed_contact_is_small() {
        assert!(std::mem::size_of::<PackedContact>() <= 96);
        let packed = PackedContact::pack(full());
        assert_eq!(packed.username(Channel::ChanC), Some("annlee88"));
        assert_eq!(packed.username(Channel::Sms), None);
        assert_eq!(packed.chan_d_phone(), Some("+15550100200"));
        assert_eq!(packed.assigned_to_user_id(), Some("usr_7hq2m4"));
    }
}
